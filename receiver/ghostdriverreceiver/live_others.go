//go:build !linux

// The live sources need Linux eBPF; elsewhere only replay works (internal/graph says so
// at Start).

package ghostdriverreceiver

import (
	"go.uber.org/zap"

	"github.com/ghostdriver/ghostdriver/internal/graph"
)

func cudaSourceFields(*graph.Graph) []zap.Field { return nil }

func defaultLiveConfig() LiveConfig {
	return LiveConfig{DRMMajors: []uint32{226}, RingBufferSize: 8 << 20, PollInterval: 10_000_000, MountTracefs: true, CUDA: defaultCUDAConfig()}
}
