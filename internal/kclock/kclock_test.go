//go:build linux

package kclock

import (
	"testing"
	"time"
)

func TestOffsetFromSamplesPicksSmallestRoundTrip(t *testing.T) {
	samples := []Sample{
		{Mono1: 1000, Real: 1_700_000_000_000_002_000, Mono2: 5000},   // rtt 4000
		{Mono1: 10000, Real: 1_700_000_000_000_010_600, Mono2: 10200}, // rtt 200: wins
		{Mono1: 20000, Real: 1_700_000_000_000_021_000, Mono2: 21000}, // rtt 1000
		{Mono1: 30000, Real: 1, Mono2: 29000},                         // negative: ignored
	}
	off, rtt := OffsetFromSamples(samples)
	if rtt != 200 {
		t.Fatalf("rtt = %d, want 200", rtt)
	}
	// midpoint of the winner: 10100 → offset = real − 10100
	if want := int64(1_700_000_000_000_010_600 - 10100); off != want {
		t.Fatalf("offset = %d, want %d", off, want)
	}
}

// The second reading is the Go runtime's own wall clock (time.Now), not this package's.
func TestClockAgreesWithTimeNow(t *testing.T) {
	off, rtt := SampleOffset()
	if rtt <= 0 || rtt > int64(time.Millisecond) {
		t.Fatalf("round trip %d ns", rtt)
	}
	for name, wall := range map[string]int64{"offset": MonoNow() + off, "Clock": New().WallNanos(MonoNow())} {
		if d := time.Now().UnixNano() - wall; d < -int64(time.Millisecond) || d > int64(time.Millisecond) {
			t.Fatalf("%s: mono converted differs from time.Now by %v", name, time.Duration(d))
		}
	}
}

// A Clock whose period has ended re-samples at its next conversion: a wrong offset (as
// after an NTP step) is replaced by the true one.
func TestClockResamplesAfterPeriod(t *testing.T) {
	c := New()
	c.offset.Store(c.offset.Load() + int64(time.Hour))
	if d := c.WallNanos(MonoNow()) - time.Now().UnixNano(); d < int64(59*time.Minute) {
		t.Fatalf("re-sampled before its period: off by %v, want the planted hour", time.Duration(d))
	}
	c.next.Store(MonoNow() - 1)
	if d := c.WallNanos(MonoNow()) - time.Now().UnixNano(); d < -int64(time.Millisecond) || d > int64(time.Millisecond) {
		t.Fatalf("not re-sampled after its period: off by %v", time.Duration(d))
	}
}
