// When the collector wants each process's GPU timeline on: always, off, or a duty cycle
// (on for OnFor at the start of every Every), the same for every process so that
// processes' windows line up. The receiver's live.cuda.timeline and `ghostdriver cuda
// --timeline` both come here.
package cupti

import (
	"fmt"
	"time"
)

// Mode is what the timeline does.
type Mode string

const (
	ModeOff  Mode = "off"  // every process's library stays dormant (or goes off again)
	ModeOn   Mode = "on"   // always on
	ModeDuty Mode = "duty" // on for OnFor of every Every
)

// Policy says when the timeline is on.
type Policy struct {
	Mode  Mode
	OnFor time.Duration // ModeDuty: how long it is on in each period
	Every time.Duration // ModeDuty: the period
	// Retry is how often a process whose library backed off (another profiler held CUPTI)
	// or failed is asked again while the timeline stays on (default 10 s); in duty mode
	// every period asks again.
	Retry time.Duration
}

// Validate names what is wrong with p.
func (p Policy) Validate() error {
	switch p.Mode {
	case ModeOff, ModeOn:
		return nil
	case ModeDuty:
		if p.OnFor <= 0 || p.Every <= 0 || p.OnFor >= p.Every {
			return fmt.Errorf("timeline duty cycle needs 0 < on_for < every, got on_for %v every %v", p.OnFor, p.Every)
		}
		if p.OnFor < 200*time.Millisecond {
			return fmt.Errorf("timeline on_for %v is shorter than 200ms: CUPTI's start alone takes longer", p.OnFor)
		}
		return nil
	default:
		return fmt.Errorf("timeline mode must be %q, %q or %q, got %q", ModeOff, ModeOn, ModeDuty, p.Mode)
	}
}

// On says whether the timeline is wanted on at wall time now.
func (p Policy) On(now time.Time) bool {
	switch p.Mode {
	case ModeOn:
		return true
	case ModeDuty:
		return time.Duration(now.UnixNano())%p.Every < p.OnFor
	}
	return false
}

// Cycle is the number of the duty period (or Retry period) now falls in: a new value
// means a backed-off library is asked again.
func (p Policy) Cycle(now time.Time) int64 {
	d := p.Every
	if p.Mode != ModeDuty {
		d = p.Retry
		if d <= 0 {
			d = 10 * time.Second
		}
	}
	return now.UnixNano() / int64(d)
}
