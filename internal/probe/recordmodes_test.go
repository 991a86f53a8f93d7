//go:build linux

package probe

// The two record modes on the host, without root or BPF: one synthetic hook sequence is
// written the way each mode's programs write it (events: bpf/sched.c and bpf/fence.c, one
// record per hook run; jobs: bpf/jobs.c, one job record per job), decoded by each mode's
// decoder (record.go, jobs_decode.go) and assembled. Both must give the same events and
// the same jobs. The writers below follow the C (the BPF_PROG_TEST_RUN tests check the C
// against them on a kernel: TestTestRunJobRecordEqualsEvents); this test checks the Go
// half of the seam, which a field added to one decoder and not the other breaks.

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ghostdriver/ghostdriver/internal/assemble"
	"github.com/ghostdriver/ghostdriver/internal/event"
)

// synthJob is a scheduler job as the kernel holds it: the drm_sched_job, its s_fence and
// its scheduler. jobID is 0 where the generation has no drm_sched_job.id, clientID 0
// where it has no drm_client_id.
type synthJob struct {
	ptr, entity, sfence, sched uint64
	jobID, clientID            uint64
	fin, hw                    event.FenceKey // finished fence; the hardware fence run_job creates
	ring, dev                  string
	parentSet                  bool // s_fence->parent is set (run_job has returned)
}

func (j *synthJob) scheduled() event.FenceKey {
	return event.FenceKey{Context: j.fin.Context - 1, Seqno: j.fin.Seqno}
}

// synthCall is one hook run: a scheduler hook on a job (dep: the dependency of an edge
// hook) or a dma_fence hook on a fence.
type synthCall struct {
	hook     commonHook
	ts       uint64
	cpu      uint32
	pidTgid  uint64
	comm     string
	job      *synthJob
	dep      event.FenceKey
	fence    event.FenceKey
	fencePtr uint64
	setHW    bool // run_job returned before this call: the job's s_fence->parent is set from here on
}

func setComm(dst *[16]int8, s string) { *dst = cstr16(s) }

// eventsWrite is what sched.c and fence.c send for the calls, in ring order.
func eventsWrite(calls []synthCall) [][]byte {
	var out [][]byte
	for _, c := range calls {
		if c.setHW {
			c.job.parentSet = true
		}
		switch c.hook {
		case commonHookHOOK_DMA_FENCE_INIT, commonHookHOOK_DMA_FENCE_EMIT, commonHookHOOK_DMA_FENCE_SIGNALED:
			r := commonFenceRecord{Ts: c.ts, PidTgid: c.pidTgid, Cpu: c.cpu, Hook: uint16(c.hook), Ptr: c.fencePtr,
				FenceCtx: c.fence.Context, FenceSeqno: c.fence.Seqno,
				Flags: uint8(commonRecordFlagRF_FENCE_WIDE | commonRecordFlagRF_HAS_FENCE)}
			out = append(out, sampleBytes(&r))
			continue
		}
		r := commonRecord{Ts: c.ts, PidTgid: c.pidTgid, Cpu: c.cpu, Hook: uint16(c.hook)}
		setComm(&r.Comm, c.comm)
		j := c.job
		fence := func() { // record_sched_fence
			r.FenceCtx, r.FenceSeqno = j.fin.Context, j.fin.Seqno
			r.Flags |= uint8(commonRecordFlagRF_FENCE_WIDE | commonRecordFlagRF_HAS_FENCE)
			if j.parentSet {
				r.HwCtx, r.HwSeqno = j.hw.Context, j.hw.Seqno
				r.Flags |= uint8(commonRecordFlagRF_HW_FENCE)
			}
			r.ClientId = j.clientID
		}
		switch c.hook {
		case commonHookHOOK_DRM_SCHED_PROCESS_JOB, commonHookHOOK_DRM_SCHED_JOB_DONE:
			r.Ptr = j.sfence
			fence()
		default: // record_sched_job
			r.Ptr, r.Entity, r.JobId = j.ptr, j.entity, j.jobID
			fence()
			setComm(&r.Ring, j.ring)
			setComm(&r.Dev, j.dev)
			if !c.dep.IsZero() {
				r.DepCtx, r.DepSeqno = c.dep.Context, c.dep.Seqno
				r.Flags |= uint8(commonRecordFlagRF_DEP_WIDE | commonRecordFlagRF_HAS_DEP)
			}
		}
		out = append(out, sampleBytes(&r))
	}
	return out
}

// jobsWrite is what jobs.c sends for the calls, in ring order, with the finished fence's
// signal attached (jobs_cfg[0] = 1): names records as schedulers are first seen, edges
// and watched fences' signals as they happen, a job's record when its finished fence
// signals.
func jobsWrite(calls []synthCall) [][]byte {
	var out [][]byte
	state := map[event.FenceKey]*jobsJobRecord{}
	running := map[uint32]event.FenceKey{} // thread → the job whose run window is open
	hwOf := map[event.FenceKey]event.FenceKey{}
	watched := map[event.FenceKey]bool{}
	seen := map[uint64]bool{}
	stamp := func(r *jobsJobRecord, slot jobsJobSlot, c synthCall) {
		r.St[slot].Ts, r.St[slot].PidTgid, r.St[slot].Cpu, r.St[slot].Hook = c.ts, c.pidTgid, c.cpu, uint16(c.hook)
		r.Slots |= 1 << slot
	}
	get := func(k event.FenceKey) *jobsJobRecord {
		if r, ok := state[k]; ok {
			return r
		}
		r := &jobsJobRecord{FenceCtx: k.Context, FenceSeqno: k.Seqno}
		state[k] = r
		return r
	}
	send := func(k event.FenceKey) {
		r := *state[k]
		delete(state, k)
		out = append(out, sampleBytes(&r))
	}
	for _, c := range calls {
		if c.setHW {
			c.job.parentSet = true
		}
		j := c.job
		tid := uint32(c.pidTgid)
		switch c.hook {
		case commonHookHOOK_DRM_SCHED_JOB, commonHookHOOK_DRM_SCHED_JOB_QUEUE, commonHookHOOK_DRM_RUN_JOB, commonHookHOOK_DRM_SCHED_JOB_RUN:
			run := c.hook == commonHookHOOK_DRM_RUN_JOB || c.hook == commonHookHOOK_DRM_SCHED_JOB_RUN
			r := get(j.fin)
			if !run || r.Slots&(1<<jobsJobSlotJS_QUEUE) == 0 { // job_ids
				r.JobPtr, r.Entity, r.JobId, r.ClientId, r.Sched = j.ptr, j.entity, j.jobID, j.clientID, j.sched
				if !seen[j.sched] {
					seen[j.sched] = true
					n := jobsJobNamesRecord{Ts: c.ts, Sched: j.sched, Magic: jobNamesMagic}
					setComm(&n.Ring, j.ring)
					setComm(&n.Dev, j.dev)
					out = append(out, sampleBytes(&n))
				}
			}
			if run && j.parentSet {
				r.RunHwCtx, r.RunHwSeqno = j.hw.Context, j.hw.Seqno
				r.Flags |= uint16(jobsJobFlagJF_RUN_HW)
			}
			if run {
				stamp(r, jobsJobSlotJS_RUN, c)
				running[tid] = j.fin
			} else {
				stamp(r, jobsJobSlotJS_QUEUE, c)
				setComm(&r.Comm, c.comm)
			}
		case commonHookHOOK_DRM_SCHED_PROCESS_JOB, commonHookHOOK_DRM_SCHED_JOB_DONE:
			r := get(j.fin)
			stamp(r, jobsJobSlotJS_DONE, c)
			r.DonePtr = j.sfence
			if j.parentSet {
				r.DoneHwCtx, r.DoneHwSeqno = j.hw.Context, j.hw.Seqno
				r.Flags |= uint16(jobsJobFlagJF_DONE_HW)
			}
			if r.Slots&(1<<jobsJobSlotJS_QUEUE) == 0 {
				r.ClientId = j.clientID
			}
		case commonHookHOOK_DRM_SCHED_JOB_WAIT_DEP, commonHookHOOK_DRM_SCHED_JOB_ADD_DEP, commonHookHOOK_DRM_SCHED_JOB_UNSCHEDULABLE:
			out = append(out, eventsWrite([]synthCall{c})...) // sched.c's record
			watched[c.dep] = true
		case commonHookHOOK_DMA_FENCE_INIT, commonHookHOOK_DMA_FENCE_EMIT:
			k, ok := running[tid]
			r := state[k]
			if !ok || r == nil {
				continue
			}
			if c.hook == commonHookHOOK_DMA_FENCE_EMIT {
				stamp(r, jobsJobSlotJS_HW_EMIT, c)
				r.HwEmitCtx, r.HwEmitSeqno = c.fence.Context, c.fence.Seqno
			} else {
				stamp(r, jobsJobSlotJS_HW_INIT, c)
				r.HwInitCtx, r.HwInitSeqno = c.fence.Context, c.fence.Seqno
			}
			hwOf[c.fence] = k
		case commonHookHOOK_DMA_FENCE_SIGNALED:
			if r, ok := state[c.fence]; ok { // a finished fence
				stamp(r, jobsJobSlotJS_FIN_SIGNAL, c)
				send(c.fence)
				continue
			}
			fin := event.FenceKey{Context: c.fence.Context + 1, Seqno: c.fence.Seqno}
			if r, ok := state[fin]; ok { // a scheduled fence: the run window closes
				stamp(r, jobsJobSlotJS_SCHED_SIGNAL, c)
				if running[tid] == fin {
					delete(running, tid)
				}
				continue
			}
			if k, ok := hwOf[c.fence]; ok && state[k] != nil {
				r := state[k]
				stamp(r, jobsJobSlotJS_HW_SIGNAL, c)
				r.HwSigCtx, r.HwSigSeqno = c.fence.Context, c.fence.Seqno
				continue
			}
			if watched[c.fence] { // fence.c's record
				r := commonFenceRecord{Ts: c.ts, PidTgid: c.pidTgid, Cpu: c.cpu, Hook: uint16(c.hook), Ptr: c.fencePtr,
					FenceCtx: c.fence.Context, FenceSeqno: c.fence.Seqno,
					Flags: uint8(commonRecordFlagRF_FENCE_WIDE | commonRecordFlagRF_HAS_FENCE)}
				out = append(out, sampleBytes(&r))
			}
		}
	}
	return out
}

// synthSequence is two jobs of one scheduler of a generation, the second depending on
// the first's finished fence and on a foreign fence (a watched dependency that is no
// job's), hook by hook as drm_sched runs them, with the hook names of that generation.
func synthSequence(gen617 bool) []synthCall {
	queue, run, done, dep := commonHookHOOK_DRM_SCHED_JOB, commonHookHOOK_DRM_RUN_JOB,
		commonHookHOOK_DRM_SCHED_PROCESS_JOB, commonHookHOOK_DRM_SCHED_JOB_WAIT_DEP
	if gen617 {
		queue, run, done, dep = commonHookHOOK_DRM_SCHED_JOB_QUEUE, commonHookHOOK_DRM_SCHED_JOB_RUN,
			commonHookHOOK_DRM_SCHED_JOB_DONE, commonHookHOOK_DRM_SCHED_JOB_ADD_DEP
	}
	mk := func(n uint64) *synthJob {
		j := &synthJob{ptr: 0xffff888000010000 + n<<8, entity: 0xffff888000020000, sfence: 0xffff888000030000 + n<<8,
			sched: 0xffff888000040000, fin: event.FenceKey{Context: 1<<33 | 5, Seqno: 16 + n},
			hw: event.FenceKey{Context: 600, Seqno: 2 + n}, ring: "vgpu-ring0", dev: "vgpu.0"}
		if gen617 {
			j.clientID = 99
		} else {
			j.jobID = 4240 + n
		}
		return j
	}
	a, b := mk(1), mk(2)
	foreign := event.FenceKey{Context: 777, Seqno: 9}
	const app, worker, irq = 100<<32 | 101, 200<<32 | 200, 0
	ts := uint64(1_000_000)
	at := func(c synthCall) synthCall {
		ts += 1000
		c.ts = ts
		if c.comm == "" {
			c.comm = map[uint64]string{app: "vgpu_app", worker: "vgpu-ring0", irq: "swapper/0"}[c.pidTgid]
		}
		c.cpu = uint32(c.pidTgid & 3)
		return c
	}
	fenceCall := func(h commonHook, f event.FenceKey, tid uint64) synthCall {
		return at(synthCall{hook: h, fence: f, fencePtr: 0xffff888000050000 + f.Seqno<<4 + f.Context&0xf, pidTgid: tid})
	}
	sig := commonHookHOOK_DMA_FENCE_SIGNALED
	return []synthCall{
		at(synthCall{hook: queue, job: a, pidTgid: app}),
		at(synthCall{hook: dep, job: b, dep: a.fin, pidTgid: app}),
		at(synthCall{hook: dep, job: b, dep: foreign, pidTgid: app}),
		at(synthCall{hook: queue, job: b, pidTgid: app}),
		at(synthCall{hook: run, job: a, pidTgid: worker}),
		fenceCall(commonHookHOOK_DMA_FENCE_INIT, a.hw, worker),
		fenceCall(commonHookHOOK_DMA_FENCE_EMIT, a.hw, worker),
		withHW(fenceCall(sig, a.scheduled(), worker), a),
		fenceCall(sig, foreign, irq),
		fenceCall(sig, a.hw, irq),
		at(synthCall{hook: done, job: a, pidTgid: irq}),
		fenceCall(sig, a.fin, irq),
		at(synthCall{hook: run, job: b, pidTgid: worker}),
		fenceCall(commonHookHOOK_DMA_FENCE_INIT, b.hw, worker),
		fenceCall(commonHookHOOK_DMA_FENCE_EMIT, b.hw, worker),
		withHW(fenceCall(sig, b.scheduled(), worker), b),
		fenceCall(sig, b.hw, irq),
		at(synthCall{hook: done, job: b, pidTgid: irq}),
		fenceCall(sig, b.fin, irq),
	}
}

func withHW(c synthCall, j *synthJob) synthCall {
	c.job, c.setHW = j, true
	return c
}

// decodeSamples decodes one mode's ring samples and puts the events in time order (the
// jobs reader's hand-over does that live; a job record comes after later events).
func decodeSamples(t *testing.T, samples [][]byte) []event.Event {
	t.Helper()
	jd := newJobDecoder(&decoder{})
	var out []event.Event
	for _, b := range samples {
		out = jd.decode(b, out, func(n string, err error) { t.Errorf("%s: %v", n, err) })
	}
	slices.SortStableFunc(out, func(a, b event.Event) int { return int(a.Time - b.Time) })
	return out
}

// assembleJobs runs events through the assembler and prints each job it gives.
func assembleJobs(evs []event.Event) []string {
	var jobs []string
	a := assemble.New(assemble.DefaultConfig(), func(j *assemble.Job) { jobs = append(jobs, fmt.Sprintf("%+v", *j)) })
	a.Consume(slices.Clone(evs))
	a.Flush()
	return jobs
}

// byDesign clears what the jobs mode does not keep of a job's own events: the comm of
// every event but the queue (the submitter's; the others are the scheduler's worker or an
// interrupt) and the pointer of a fence event (nothing joins on it). Dependency edges go
// out as the same record in both modes and keep everything.
func byDesign(e event.Event) event.Event {
	if e.Kind != event.JobQueue && e.Kind != event.JobDependency {
		e.Comm = ""
	}
	if strings.HasPrefix(e.Name, "dma_fence_") {
		e.FencePtr = 0
	}
	return e
}

// The same hook sequence gives the same events and the same jobs in both record modes,
// but for what the jobs mode does not keep by design (byDesign); the jobs, assembled from
// the events as decoded, must agree all the same.
func TestRecordModesDecodeAlike(t *testing.T) {
	for _, gen := range []struct {
		name string
		is   bool
	}{{"6.16", false}, {"6.17", true}} {
		t.Run(gen.name, func(t *testing.T) {
			evs := decodeSamples(t, eventsWrite(synthSequence(gen.is)))
			jobs := decodeSamples(t, jobsWrite(synthSequence(gen.is)))
			if len(evs) != len(synthSequence(gen.is)) {
				t.Fatalf("events mode: %d events for %d hook runs", len(evs), len(synthSequence(gen.is)))
			}
			if len(jobs) != len(evs) {
				t.Fatalf("jobs mode: %d events, events mode %d", len(jobs), len(evs))
			}
			for i := range evs {
				e, j := byDesign(evs[i]), byDesign(jobs[i])
				if !reflect.DeepEqual(e, j) {
					t.Errorf("event %d (%s):\n events %+v\n jobs   %+v", i, e.Name, e, j)
				}
			}
			je, jj := assembleJobs(evs), assembleJobs(jobs)
			if len(je) != 2 {
				t.Fatalf("events mode assembled %d jobs, want 2:\n%s", len(je), strings.Join(je, "\n"))
			}
			if !slices.Equal(je, jj) {
				t.Errorf("assembled jobs differ:\n events %s\n jobs   %s", strings.Join(je, "\n        "), strings.Join(jj, "\n        "))
			}
		})
	}
}
