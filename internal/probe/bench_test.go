//go:build linux

package probe

import (
	"context"
	"os"
	"runtime"
	"syscall"
	"testing"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/ghostdriver/ghostdriver/internal/event"
)

// BenchmarkIoctl measures ioctl(TCGETS) on /dev/null: bare, with the hooks attached
// and the filter missing (default major 226), and with the filter matching (major 1,
// records emitted and drained). Reports the programs' own ns/run from BPF stats.
func BenchmarkIoctl(b *testing.B) {
	requireRoot(b)
	f, err := os.Open("/dev/null")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	fd := f.Fd()
	loop := func(b *testing.B) {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			_, _, _ = syscall.Syscall(syscall.SYS_IOCTL, fd, uintptr(unix.TCGETS), 0)
		}
		b.StopTimer()
	}
	b.Run("bare", loop)
	for _, c := range []struct {
		name   string
		majors []uint32
	}{{"filter_miss", []uint32{226}}, {"filter_hit", []uint32{1}}} {
		b.Run(c.name, func(b *testing.B) {
			stats, err := ebpf.EnableStats(uint32(unix.BPF_STATS_RUN_TIME))
			if err != nil {
				b.Fatal(err)
			}
			defer stats.Close()
			cfg := DefaultConfig()
			cfg.DRMMajors = c.majors
			l, rep, err := Open(cfg, nil)
			if err != nil {
				b.Fatalf("%v\n%s", err, rep)
			}
			defer l.Close()
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { l.Run(ctx, &discardSink{}); close(done) }()
			var progs []*ebpf.Program
			for _, p := range l.objs.progs {
				if info, _ := p.Info(); info != nil && (contains(info.Name, "sys_enter") || contains(info.Name, "sys_exit")) {
					progs = append(progs, p)
				}
			}
			before := make([]*ebpf.ProgramStats, len(progs))
			for i, p := range progs {
				before[i], _ = p.Stats()
			}
			loop(b)
			for i, p := range progs {
				after, _ := p.Stats()
				info, _ := p.Info()
				if n := after.RunCount - before[i].RunCount; n > 0 {
					b.ReportMetric(float64(after.Runtime-before[i].Runtime)/float64(n), info.Name+"_ns/run")
				}
			}
			cancel()
			<-done
			if st := l.Stats(); st.Lost > 0 {
				b.Logf("lost %d records", st.Lost)
			}
		})
	}
}

type discardSink struct{}

func (discardSink) Consume([]event.Event) {}
func (discardSink) Watermark(int64)       {}
