package probe

import (
	"math"
	"time"

	"golang.org/x/sys/unix"
)

// BPF timestamps are CLOCK_MONOTONIC (bpf_ktime_get_ns). Wall time = mono + offset,
// where offset = realtime − monotonic is sampled as the midpoint of a mono/real/mono
// triple; of several triples the one with the smallest mono round trip wins (the
// least disturbed by preemption). Re-synced periodically, so NTP slew and steps reach
// the conversion within one resync interval.

const (
	clockSamples      = 8
	clockResyncPeriod = 5 * time.Second
)

type clockSample struct {
	mono1, real, mono2 int64
}

// offsetFromSamples returns the offset of the sample with the smallest round trip,
// and that round trip.
func offsetFromSamples(samples []clockSample) (offset, rtt int64) {
	rtt = math.MaxInt64
	for _, s := range samples {
		d := s.mono2 - s.mono1
		if d < 0 || d >= rtt {
			continue
		}
		rtt = d
		offset = s.real - (s.mono1 + d/2)
	}
	return offset, rtt
}

func clockNanos(id int32) int64 {
	var ts unix.Timespec
	_ = unix.ClockGettime(id, &ts)
	return ts.Nano()
}

func monoNow() int64 { return clockNanos(unix.CLOCK_MONOTONIC) }

// sampleClockOffset measures realtime − monotonic now.
func sampleClockOffset() (offset, rtt int64) {
	var s [clockSamples]clockSample
	for i := range s {
		s[i].mono1 = clockNanos(unix.CLOCK_MONOTONIC)
		s[i].real = clockNanos(unix.CLOCK_REALTIME)
		s[i].mono2 = clockNanos(unix.CLOCK_MONOTONIC)
	}
	return offsetFromSamples(s[:])
}
