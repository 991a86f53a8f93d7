// The reorder ring on its own: whatever the arrival order, what it releases is the
// arrivals sorted by (time, CPU), ties in arrival order (the oracle: a stable sort of the
// arrivals), across wrap-around, growth and out-of-order arrivals moved a few places or
// across the whole buffer.

package assemble

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ghostdriver/ghostdriver/internal/event"
)

func TestReorderRingReleasesStableSorted(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name    string
		batch   int // events a batch; a batch's times are [k·1000, k·1000+1000)
		shuffle func(evs []event.Event)
	}{
		{"sorted", 300, func([]event.Event) {}},
		{"a few places late", 700, func(evs []event.Event) {
			for i := 1; i < len(evs); i++ {
				if rng.IntN(3) == 0 {
					j := max(0, i-1-rng.IntN(4))
					evs[j], evs[i] = evs[i], evs[j]
				}
			}
		}},
		{"any order", 500, func(evs []event.Event) { rng.Shuffle(len(evs), func(i, j int) { evs[i], evs[j] = evs[j], evs[i] }) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r reorder
			var got, want []event.Event
			seq := uint64(0)
			for k := int64(0); k < 12; k++ {
				batch := make([]event.Event, tc.batch)
				for i := range batch {
					seq++
					// Few distinct times and CPUs: many ties, which must keep arrival order.
					batch[i] = event.Event{Time: k*1000 + rng.Int64N(100)*10, CPU: int32(rng.IntN(3)), JobID: seq}
				}
				slices.SortStableFunc(batch, func(a, b event.Event) int { return cmp.Compare(a.Time, b.Time) })
				tc.shuffle(batch)
				for i := range batch {
					batch[i].JobID = uint64(k)<<32 | uint64(i) // arrival order
					r.push(&batch[i])
				}
				want = append(want, batch...)
				// Release all but the last batch's second half: the ring keeps wrapping.
				r.release(k*1000+500, func(e *event.Event) { got = append(got, *e) })
			}
			r.release(1<<62, func(e *event.Event) { got = append(got, *e) })
			slices.SortStableFunc(want, func(a, b event.Event) int {
				return cmp.Or(cmp.Compare(a.Time, b.Time), cmp.Compare(a.CPU, b.CPU))
			})
			if len(got) != len(want) {
				t.Fatalf("released %d events, pushed %d", len(got), len(want))
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("event %d: got time %d cpu %d arrival %x, want time %d cpu %d arrival %x",
						i, got[i].Time, got[i].CPU, got[i].JobID, want[i].Time, want[i].CPU, want[i].JobID)
				}
			}
			if r.len() != 0 {
				t.Fatalf("%d events left", r.len())
			}
		})
	}
}
