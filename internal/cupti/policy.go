// When the collector wants each process's GPU timeline on: always, off, or a duty cycle
// (on for OnFor at the start of every Every), the same for every process so that
// processes' windows line up. The receiver's live.cuda.timeline and `ghostdriver cuda
// --timeline` both come here. A library that backed off for another profiler asks again
// by itself (GHOSTDRIVER_CUPTI_RETRY_MS, cuptilib): the policy only says on or off.

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
