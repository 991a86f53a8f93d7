// The points of a job's critical path (docs/stages.md: t0 … tf), which the table's rows
// say they measure. internal/assemble uses this type as its own (assemble.Point).

package eventdef

// Point is one timestamp on a job's critical path.
type Point uint8

const (
	PointIoctlEnter   Point = iota // t0: submit ioctl entry
	PointBOValidEnd                // t1: buffer-object validation done
	PointQueued                    // tq: job queued to the scheduler
	PointIoctlExit                 // tx: submit ioctl exit
	PointDepsResolved              // td: the last dependency the scheduler waits for is resolved
	PointRun                       // tr: scheduler handed the job to the ring
	PointEmitted                   // te: ring emission done (hardware fence emitted / run_job returned)
	PointHWStart                   // ts: hardware started (inferred: max(te, previous job's hw done on the ring))
	PointHWDone                    // th: hardware fence signalled
	PointFinished                  // tf: scheduler's finished fence signalled
	PointCount
)

var pointNames = [PointCount]string{"ioctl_enter", "bo_validation_end", "queued", "ioctl_exit",
	"dependencies_resolved", "run", "emitted", "hw_start", "hw_done", "finished"}

// pointShort are the names docs/stages.md gives the points.
var pointShort = [PointCount]string{"t0", "t1", "tq", "tx", "td", "tr", "te", "ts", "th", "tf"}

func (p Point) String() string {
	if p < PointCount {
		return pointNames[p]
	}
	return "point?"
}

// Short is the point's name in docs/stages.md (t0 … tf).
func (p Point) Short() string {
	if p < PointCount {
		return pointShort[p]
	}
	return "t?"
}
