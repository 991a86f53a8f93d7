//go:build linux

// Package kclock converts the kernel's BPF timestamps (CLOCK_MONOTONIC, bpf_ktime_get_ns)
// to wall time: wall = mono + offset, where offset = realtime − monotonic is sampled as the
// midpoint of a mono/real/mono triple; of several triples the one with the smallest mono
// round trip wins (the least disturbed by preemption). Re-sampled periodically, so NTP slew
// and steps reach the conversion within one period. One definition for every live source
// (the DRM probe re-samples on its reader's loop; the CUDA branch uses Clock).
package kclock

import (
	"math"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

const (
	// Samples is how many triples one offset measurement takes.
	Samples = 8
	// ResyncPeriod is how often the offset is measured again.
	ResyncPeriod = 5 * time.Second
)

// Sample is one mono/real/mono triple.
type Sample struct {
	Mono1, Real, Mono2 int64
}

// OffsetFromSamples returns the offset of the sample with the smallest round trip, and
// that round trip; samples whose monotonic readings go backwards are ignored.
func OffsetFromSamples(samples []Sample) (offset, rtt int64) {
	rtt = math.MaxInt64
	for _, s := range samples {
		d := s.Mono2 - s.Mono1
		if d < 0 || d >= rtt {
			continue
		}
		rtt = d
		offset = s.Real - (s.Mono1 + d/2)
	}
	return offset, rtt
}

func clockNanos(id int32) int64 {
	var ts unix.Timespec
	_ = unix.ClockGettime(id, &ts)
	return ts.Nano()
}

// MonoNow is CLOCK_MONOTONIC now, the clock of bpf_ktime_get_ns.
func MonoNow() int64 { return clockNanos(unix.CLOCK_MONOTONIC) }

// SampleOffset measures realtime − monotonic now.
func SampleOffset() (offset, rtt int64) {
	var s [Samples]Sample
	for i := range s {
		s[i].Mono1 = clockNanos(unix.CLOCK_MONOTONIC)
		s[i].Real = clockNanos(unix.CLOCK_REALTIME)
		s[i].Mono2 = clockNanos(unix.CLOCK_MONOTONIC)
	}
	return OffsetFromSamples(s[:])
}

// Clock is an event.Clock whose offset is re-sampled lazily, at most every ResyncPeriod,
// by the first conversion after the period ends. Safe for concurrent use.
type Clock struct {
	offset atomic.Int64
	next   atomic.Int64 // monotonic time of the next re-sample
}

// New returns a Clock with a fresh offset.
func New() *Clock {
	c := &Clock{}
	c.resample()
	return c
}

func (c *Clock) resample() {
	off, _ := SampleOffset()
	c.offset.Store(off)
	c.next.Store(MonoNow() + int64(ResyncPeriod))
}

// WallNanos converts a CLOCK_MONOTONIC time to Unix nanoseconds.
func (c *Clock) WallNanos(t int64) int64 {
	if MonoNow() >= c.next.Load() {
		c.resample()
	}
	return t + c.offset.Load()
}
