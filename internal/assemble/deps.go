// What a job really waits for before it can run: drm_sched's dependency rules, and the
// end of the fence_dependency stage (td) that follows from them.
//
// drm_sched_entity_add_dependency_cb (drivers/gpu/drm/scheduler/sched_entity.c; the same
// three branches from 5.x to 7.x) decides, for each dependency of the job at the head of
// an entity, when the scheduler may go on:
//
//   - a fence of the job's own entity (context == entity->fence_context, the entity's
//     scheduled fences, or +1, its finished fences) is not waited for: entity order
//     already holds (wait "own_entity");
//   - a scheduler fence of the same drm_gpu_scheduler, without error and without
//     DRM_SCHED_FENCE_DONT_PIPELINE, is waited for only until the job owning it is
//     *scheduled*: its scheduled fence signals right after that job's run_job returns
//     (wait "same_scheduler");
//   - any other fence until it signals (wait "fence_signal").
//
// td = max(tq, the end of every waited dependency). Once td has passed the job is
// runnable, and what it waits for until tr — its turn in the entity's queue, ring credits
// (credit_count + credits ≤ credit_limit), the scheduler worker — is the stage
// scheduler_queue (td → tr), not fence_dependency.
//
// What the events say, per generation:
//   - the job's own entity: the context of its finished fence (6.17+ scheduler events,
//     the live source's CO-RE read, dma_fence_init on the submitting thread for ≤6.16
//     text); with no fence key (≤6.16 text without dma_fence_init), the entity pointer
//     the job's events print, compared with the entity of the job owning the dependency.
//   - the dependency's scheduler: the ring (and device) of the job that owns the
//     dependency's context, from that job's events, or the timeline of a drm_sched
//     fence's dma_fence_init (a scheduler fence's timeline name is its scheduler's name).
//     A context names one entity for its whole life; an entity can move to another
//     scheduler of its list while idle, so the owner seen last is the one used.
//   - fence errors and DRM_SCHED_FENCE_DONT_PIPELINE are in no event. On 6.17+
//     drm_sched_job_unschedulable fires exactly when the scheduler took the third branch
//     for a fence that had not signalled, so a dependency it names is waited for until
//     it signals, whatever its context says.
//   - a dependency whose context nothing identifies is taken as "fence_signal".
//
// The end of a wait is measured when its defining event was seen: the dma_fence_signaled
// of the dependency (fence_signal) or of its owner's scheduled fence (same_scheduler).
// Otherwise it is inferred from a neighbour event, named in the rule: the owner's
// drm_sched_job_done, 1–2 µs before its finished fence signals ("dependency_done"), or the
// owner's run_job return / run event, just before its scheduled fence signals
// ("dependency_run"). Jobs of drivers without drm_sched (i915 requests) wait for every
// dependency until it signals.

package assemble

import "github.com/ghostdriver/ghostdriver/internal/event"

// DepWait is what the scheduler waited for on one dependency.
type DepWait uint8

const (
	DepWaitSignal    DepWait = iota // until the fence signals
	DepWaitScheduled                // same scheduler: until the owning job's scheduled fence signals
	DepWaitNone                     // the job's own entity: not waited for
)

func (w DepWait) String() string {
	switch w {
	case DepWaitScheduled:
		return "same_scheduler"
	case DepWaitNone:
		return "own_entity"
	}
	return "fence_signal"
}

const (
	ruleOwnEntityDeps = "own_entity_dependencies"
	ruleDepsPartly    = "dependency_signal_partly_unseen"
	ruleDepDone       = "dependency_done"
	ruleDepRun        = "dependency_run"
)

// ctxInfo is what is known about a fence context: the scheduler (ring) and entity whose
// fences it numbers. A drm_sched entity owns two contexts: scheduled, then finished.
type ctxInfo struct {
	ring      ringKey
	entity    uint64 // entity pointer, 0 when not printed
	scheduled bool   // the scheduled half of an entity's pair (the finished one is +1)
}

// learnJobContexts records the contexts of a scheduler job with a fence key.
func (a *Assembler) learnJobContexts(j *job) {
	if !j.hasKey || j.fam != famSched || j.out.Ring == "" {
		return
	}
	rk := ringKey{j.out.Device, j.out.Ring}
	fin := j.key >> 32
	if c, ok := a.contexts.get(fin); ok && c.ring == rk && c.entity == j.entity {
		return
	}
	a.contexts.put(fin, ctxInfo{ring: rk, entity: j.entity})
	a.contexts.put(fin-1, ctxInfo{ring: rk, entity: j.entity, scheduled: true})
}

// learnSchedFence records the scheduler of a drm_sched fence from its creation event
// (its timeline is the scheduler's name). finished: the thread initialised the scheduled
// fence of the pair just before, so this context is the finished half.
func (a *Assembler) learnSchedFence(e *event.Event, finished bool) {
	if e.Timeline == "" || e.Timeline == "signaled-timeline" {
		return
	}
	ctx := e.Fence.Context & 0xffffffff
	if c, ok := a.contexts.get(ctx); ok && c.ring.name == e.Timeline {
		return
	}
	rk := ringKey{name: e.Timeline}
	a.contexts.put(ctx, ctxInfo{ring: rk})
	if finished {
		a.contexts.put(ctx-1, ctxInfo{ring: rk, scheduled: true})
	}
}

// sameRing reports whether a context's scheduler is j's. The device is compared only
// when both sides print it (≤6.16 events and dma_fence timelines do not).
func sameRing(c ctxInfo, j *job) bool {
	return c.ring.name == j.out.Ring && (c.ring.dev == "" || j.out.Device == "" || c.ring.dev == j.out.Device)
}

// classify decides what the scheduler waited for on d, by the rules above.
func (a *Assembler) classify(j *job, d *Dependency) DepWait {
	if j.fam != famSched || d.Unschedulable {
		return DepWaitSignal
	}
	dctx := d.Fence.Context & 0xffffffff
	if j.hasKey {
		if own := j.key >> 32; dctx == own || dctx+1 == own {
			return DepWaitNone
		}
	}
	c, ok := a.contexts.get(dctx)
	if !ok {
		return DepWaitSignal
	}
	if j.entity != 0 && c.entity == j.entity {
		return DepWaitNone
	}
	if j.out.Ring != "" && sameRing(c, j) {
		return DepWaitScheduled
	}
	return DepWaitSignal
}

// depEnd is when the wait on d ended, and how that is known (src Unknown: not seen).
func (a *Assembler) depEnd(d *Dependency) (int64, Provenance, string) {
	k := key32(d.Fence)
	switch d.Wait {
	case DepWaitNone:
		return 0, Unknown, ""
	case DepWaitScheduled:
		if c, _ := a.contexts.get(k >> 32); c.scheduled {
			// The dependency is the scheduled fence itself: its own signal ends the wait.
			if d.Signaled != 0 && !d.signalProxy {
				return d.Signaled, Measured, a.qualify(a.signalHook(k), "scheduled")
			}
			k = finishedOfScheduled(k)
		} else if d.Scheduled != 0 {
			return d.Scheduled, Measured, a.qualify(hookDepSignal, "scheduled")
		}
		if t, ok := a.ownerRun(k); ok {
			return t, Inferred, ruleDepRun
		}
		return 0, Unknown, ""
	}
	switch {
	case d.Signaled != 0 && d.signalProxy:
		return d.Signaled, Inferred, ruleDepDone
	case d.Signaled != 0:
		return d.Signaled, Measured, a.signalHook(k)
	}
	return 0, Unknown, ""
}

// signalHook names the event that reported fence k's signal.
func (a *Assembler) signalHook(k uint64) string {
	if r, ok := a.signals.get(k); ok && !r.proxy && r.hook != "" {
		return r.hook
	}
	return hookDepSignal
}

// ownerRun is when the job whose finished fence is k was handed to its ring: its run_job
// return when measured, else its run event. Its scheduled fence signals right after.
func (a *Assembler) ownerRun(k uint64) (int64, bool) {
	if o := a.byKey.get(k); o != nil {
		p := &o.out.Points
		if p[PointEmitted].Src == Measured {
			return p[PointEmitted].Time, true
		}
		if p[PointRun].Known() {
			return p[PointRun].Time, true
		}
		return 0, false
	}
	if r, ok := a.owners.get(k); ok && r.run != 0 {
		return r.run, true
	}
	return 0, false
}

// resolveDeps classifies the job's dependencies and sets td.
func (a *Assembler) resolveDeps(j *job) {
	p := &j.out.Points
	if p[PointDepsResolved].Known() || !p[PointQueued].Known() {
		return
	}
	tq := p[PointQueued].Time
	var (
		waited, known int
		end           int64
		src           Provenance
		hook          string
	)
	for i := range j.out.Deps {
		d := &j.out.Deps[i]
		d.Wait = a.classify(j, d)
		if d.Wait == DepWaitNone {
			continue
		}
		waited++
		t, s, h := a.depEnd(d)
		if s == Unknown {
			continue
		}
		d.Until = t
		known++
		if known == 1 || t > end || t == end && s == Measured {
			end, src, hook = t, s, h
		}
	}
	var b Bound
	switch {
	case len(j.out.Deps) == 0:
		b = Bound{Time: tq, Src: Inferred, Hook: ruleNoDeps}
	case waited == 0:
		b = Bound{Time: tq, Src: Inferred, Hook: ruleOwnEntityDeps}
	case known == 0:
		b = Bound{Time: tq, Src: Inferred, Hook: ruleDepsUnseen}
	case end <= tq:
		b = Bound{Time: tq, Src: Inferred, Hook: ruleDepsBeforeQueue}
	case p[PointRun].Known() && end > p[PointRun].Time:
		// The scheduler ran the job before the wait we computed ended: a rule the events
		// cannot see applied (a fence error), or the clocks disagree.
		b = Bound{Time: p[PointRun].Time, Src: Inferred, Hook: ruleDepsAfterRun}
		a.st.DepsAfterRun++
	case known < waited:
		b = Bound{Time: end, Src: Inferred, Hook: ruleDepsPartly}
	default:
		b = Bound{Time: end, Src: src, Hook: hook}
	}
	p[PointDepsResolved] = b
}
