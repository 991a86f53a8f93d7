// What each stage name means for the pictures: on which track it is drawn (the submitting
// thread or the ring) and which share of a ring's busy time it is counted in. The names
// are the stage span names of internal/assemble (Stage.String) and the README's stage
// table; a stage name not listed here (a stage added later) is drawn on its ring and
// counted as "other", never dropped.

package timeline

// Category is the share of the utilization breakdown a stage is counted in.
type Category int

const (
	CategoryOther     Category = iota // a stage this table does not know
	CategoryExecuting                 // the hardware runs the job
	CategoryFenceWait                 // waiting for other jobs' fences
	CategoryOverhead                  // driver work: ioctl, validation, scheduling, emission, signalling
	CategoryHWQueue                   // emitted, waiting for the hardware to reach it (earlier jobs on the ring)
)

// Categories in the order the report shows them (and attributes overlapping time: the
// first category active at an instant gets it).
var Categories = []Category{CategoryExecuting, CategoryFenceWait, CategoryOverhead, CategoryHWQueue, CategoryOther}

func (c Category) String() string {
	switch c {
	case CategoryExecuting:
		return "executing"
	case CategoryFenceWait:
		return "waiting on fences"
	case CategoryOverhead:
		return "driver overhead"
	case CategoryHWQueue:
		return "queued for the hardware"
	}
	return "other"
}

// stageInfo is one row of the stage table.
type stageInfo struct {
	onThread bool // drawn on the submitting thread's track (inside the submit ioctl)
	category Category
}

// stageTable: one row per stage name of internal/assemble.
var stageTable = map[string]stageInfo{
	"ioctl":            {onThread: true, category: CategoryOverhead}, // t0→tx
	"bo_validation":    {onThread: true, category: CategoryOverhead}, // t0→t1
	"fence_dependency": {category: CategoryFenceWait},                // tq→td
	"scheduler_queue":  {category: CategoryOverhead},                 // td→tr: entity order, credits, the worker
	"ring_emission":    {category: CategoryOverhead},                 // →te
	"dma_scheduling":   {category: CategoryHWQueue},                  // te→ts
	"execution":        {category: CategoryExecuting},                // ts→th
	"fence_signal":     {category: CategoryOverhead},                 // th→tf
}

// ExecutionStage is the stage drawn on a ring's hardware track and the target of the
// submit→execution flows.
const ExecutionStage = "execution"

// StageCategory is the category of a stage name (CategoryOther when not in the table).
func StageCategory(name string) Category { return stageTable[name].category }

// OnThread says whether a stage is drawn on the submitting thread's track.
func OnThread(name string) bool { return stageTable[name].onThread }

// Queued is when the job was queued to the scheduler: the start of its first ring-side
// stage, else the span's start.
func (j *Job) Queued() int64 {
	for _, s := range j.Stages {
		if !OnThread(s.Name) {
			return s.Start
		}
	}
	return j.Start
}
