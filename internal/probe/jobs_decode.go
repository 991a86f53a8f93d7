// Decoding of the jobs record mode's samples (bpf/include/jobrec.h): a job record becomes
// the events the per-event hooks would have sent for the job (same kinds, hook names,
// times, CPUs and threads, fence keys and ids), so that live jobs mode, live events mode
// and a replayed capture go through the same assembler; a names record fills the ring
// and device names of later records of its scheduler.

package probe

import (
	"sync/atomic"
	"unsafe"

	"github.com/ghostdriver/ghostdriver/internal/event"
)

// jobRecordSize and jobNamesRecordSize are sizeof(struct job_record) and
// sizeof(struct job_names_record).
const (
	jobRecordSize      = int(unsafe.Sizeof(jobsJobRecord{}))
	jobNamesRecordSize = int(unsafe.Sizeof(jobsJobNamesRecord{}))
)

// A sample's size says what it is: these constant divisions do not compile when two
// sizes are equal.
const (
	_ = 1 / (jobRecordSize - recordSize)
	_ = 1 / (jobRecordSize - fenceRecordSize)
	_ = 1 / (jobRecordSize - ioctlExitRecordSize)
	_ = 1 / (jobRecordSize - ioctlEnterRecordSize)
	_ = 1 / (jobRecordSize - rawRecordSize)
	_ = 1 / (jobNamesRecordSize - recordSize)
	_ = 1 / (jobNamesRecordSize - fenceRecordSize)
	_ = 1 / (jobNamesRecordSize - ioctlExitRecordSize)
	_ = 1 / (jobNamesRecordSize - ioctlEnterRecordSize)
	_ = 1 / (jobNamesRecordSize - rawRecordSize)
	_ = 1 / (jobNamesRecordSize - jobRecordSize)
)

// jobNamesMagic is JOB_NAMES_MAGIC.
const jobNamesMagic = 0x6a6e616d

// schedNames are a scheduler's ring and device names (its names record).
type schedNames struct{ ring, dev string }

// jobDecoder decodes the jobs mode's samples and hands every other sample to the
// per-event decoder.
type jobDecoder struct {
	d     *decoder
	names map[uint64]schedNames
	// counts of what was decoded, for the log; evicted also for Stats (other goroutine)
	jobs, partial, noKey, namesRecs uint64
	evicted                         atomic.Uint64
}

func newJobDecoder(d *decoder) *jobDecoder {
	return &jobDecoder{d: d, names: map[uint64]schedNames{}}
}

// decode appends the events of one sample to out. A sample the per-event decoder
// rejects is reported through bad (its name and error), as Live.Run does.
func (j *jobDecoder) decode(b []byte, out []event.Event, bad func(string, error)) []event.Event {
	switch len(b) {
	case jobRecordSize:
		return j.decodeJob(loadSample[jobsJobRecord](b), out)
	case jobNamesRecordSize:
		r := loadSample[jobsJobNamesRecord](b)
		if r.Magic == jobNamesMagic {
			j.names[r.Sched] = schedNames{ring: j.d.names.FromC(r.Ring[:]), dev: j.d.names.FromC(r.Dev[:])}
			j.namesRecs++
			return out
		}
	}
	out = append(out, event.Event{})
	if err := j.d.decode(b, &out[len(out)-1]); err != nil {
		bad(out[len(out)-1].Name, err)
		out = out[:len(out)-1]
	}
	return out
}

// decodeJob appends a job record's events in time order.
func (j *jobDecoder) decodeJob(r jobsJobRecord, out []event.Event) []event.Event {
	flags := jobsJobFlag(r.Flags)
	switch {
	case flags&jobsJobFlagJF_NO_KEY != 0:
		j.noKey++
	case flags&jobsJobFlagJF_NO_STATE != 0:
		j.partial++
	case flags&jobsJobFlagJF_EVICTED != 0:
		j.evicted.Add(1)
	default:
		j.jobs++
	}
	start := len(out)
	key := event.FenceKey{Context: r.FenceCtx, Seqno: r.FenceSeqno}
	hasKey := flags&jobsJobFlagJF_NO_KEY == 0
	for slot := 0; slot < int(jobsJobSlotJS_COUNT); slot++ {
		if r.Slots&(1<<slot) == 0 {
			continue
		}
		st := r.St[slot]
		info, ok := lookupHook(st.Hook)
		if !ok {
			continue
		}
		ev := eventHeader(info, st.Ts, st.Cpu, st.PidTgid)
		switch jobsJobSlot(slot) {
		case jobsJobSlotJS_QUEUE, jobsJobSlotJS_RUN:
			if hasKey {
				ev.Fence, ev.FenceWide = key, true
			}
			ev.JobID, ev.Entity, ev.ClientID = r.JobId, r.Entity, r.ClientId
			if n, ok := j.names[r.Sched]; ok {
				ev.Ring, ev.Device = n.ring, n.dev
			}
			if jobsJobSlot(slot) == jobsJobSlotJS_QUEUE {
				ev.Comm = j.d.names.FromC(r.Comm[:])
			} else if flags&jobsJobFlagJF_RUN_HW != 0 {
				ev.HWFence = event.FenceKey{Context: r.RunHwCtx, Seqno: r.RunHwSeqno}
			}
		case jobsJobSlotJS_HW_INIT:
			ev.Fence, ev.FenceWide = event.FenceKey{Context: r.HwInitCtx, Seqno: r.HwInitSeqno}, true
		case jobsJobSlotJS_HW_EMIT:
			ev.Fence, ev.FenceWide = event.FenceKey{Context: r.HwEmitCtx, Seqno: r.HwEmitSeqno}, true
		case jobsJobSlotJS_HW_SIGNAL:
			ev.Fence, ev.FenceWide = event.FenceKey{Context: r.HwSigCtx, Seqno: r.HwSigSeqno}, true
		case jobsJobSlotJS_SCHED_SIGNAL:
			// the scheduled fence: context one below the finished fence's, same seqno
			ev.Fence, ev.FenceWide = event.FenceKey{Context: r.FenceCtx - 1, Seqno: r.FenceSeqno}, true
		case jobsJobSlotJS_FIN_SIGNAL:
			ev.Fence, ev.FenceWide = key, true
		case jobsJobSlotJS_DONE:
			ev.Fence, ev.FenceWide = key, true
			ev.ClientID = r.ClientId
			if flags&jobsJobFlagJF_DONE_HW != 0 {
				ev.HWFence = event.FenceKey{Context: r.DoneHwCtx, Seqno: r.DoneHwSeqno}
			}
			if commonHook(st.Hook) == commonHookHOOK_DRM_SCHED_PROCESS_JOB {
				ev.FencePtr = r.DonePtr
			}
		}
		out = append(out, ev)
	}
	// time order, as the per-event records would have come (insertion sort: ≤ 8 events)
	evs := out[start:]
	for i := 1; i < len(evs); i++ {
		for k := i; k > 0 && before(&evs[k], &evs[k-1]); k-- {
			evs[k], evs[k-1] = evs[k-1], evs[k]
		}
	}
	return out
}

// before orders events by (time, CPU).
func before(a, b *event.Event) bool {
	return a.Time < b.Time || a.Time == b.Time && a.CPU < b.CPU
}
