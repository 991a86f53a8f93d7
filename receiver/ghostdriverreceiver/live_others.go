//go:build !linux

// The live sources need Linux eBPF; elsewhere only replay works (internal/graph says so
// at Start).

package ghostdriverreceiver

import (
	"go.uber.org/zap"

	"github.com/ghostdriver/ghostdriver/internal/graph"
)

func cudaSourceFields(*graph.Graph) []zap.Field { return nil }
