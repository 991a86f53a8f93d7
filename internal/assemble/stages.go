// Tiling: from the points a job's events measured to its stage spans (docs/stages.md).
// Applied once, when the job is output, in this order:
//
//	t1  no BO-validation hook, ioctl seen   → t1 = tq          rule "fallback_to_queued"
//	td  by drm_sched's dependency rules (deps.go): the latest end of a dependency the
//	    scheduler waits for (own-entity fences: none; same-scheduler fences: the owner's
//	    scheduled fence; any other fence: its signal)
//	    no dependencies                     → td = tq          rule "no_dependencies"
//	    only own-entity dependencies        → td = tq          rule "own_entity_dependencies"
//	    no end of a waited one seen         → td = tq          rule "dependency_signal_unseen"
//	    all ended at or before tq           → td = tq          rule "dependencies_signaled_before_queue"
//	    the latest ends after tr            → td = tr          rule "clamped_to_run" (counted)
//	    some ends not seen                  → td = latest seen rule "dependency_signal_partly_unseen"
//	    otherwise td = the latest end, measured by its hook ("dma_fence_signaled",
//	    "dma_fence_signaled(scheduled)") or inferred from the owner's done or run
//	    ("dependency_done", "dependency_run")
//	te  no emission hook                    → te = tr          rule "fallback_to_run"
//	th  no hardware-fence signal            → th = tf          rule "fallback_to_finished"
//	ts  not measured (i915_request_in and msm's GPU stamps measure it: native.go)
//	                                        → ts = max(te, previous job's th-or-tf on the ring),
//	                                          at most th        rule "ring_serial"
//	    virtio_gpu: ts = te                rule "host_start_unobserved" (virtio.go), and the
//	    stages it has no basis for are omitted (virtioOmitted)
//	The te and ts fallbacks apply only when a later point was seen (te: ts, th or tf; ts:
//	th): a job seen up to its run and no further gets neither stage.
//
// td → tr is the stage scheduler_queue: the job is runnable and waits for its turn on the
// ring (entity order, ring credits, the scheduler worker).
//
// A point whose neighbour is unknown stays unknown (no ioctl events: no t0, tx, t1; no
// queue event: no td), and a stage with an unknown bound is omitted, never faked. A
// stage is Measured only when both its bounds are; its Rule is "<start hook>→<end hook>",
// each hook being the tracepoint/function that measured the bound or the rule above.
//
// So with only queue, run and done events (Perfetto's view), execution is
// [max(tr, previous job's done on the ring), tf], and with amdgpu's scheduled fence
// signal it starts at max(te, …) instead.

package assemble

import "math"

const (
	ruleFallbackQueued   = "fallback_to_queued"
	ruleNoDeps           = "no_dependencies"
	ruleDepsBeforeQueue  = "dependencies_signaled_before_queue"
	ruleDepsUnseen       = "dependency_signal_unseen"
	ruleDepsAfterRun     = "clamped_to_run"
	ruleFallbackRun      = "fallback_to_run"
	ruleFallbackFinished = "fallback_to_finished"
	ruleRingSerial       = "ring_serial"
)

// tile completes a job's points by the rules above and builds its stages, Start and End.
func (a *Assembler) tile(j *job) {
	p := &j.out.Points
	if p[PointIoctlEnter].Known() && !p[PointBOValidEnd].Known() && p[PointQueued].Known() {
		p[PointBOValidEnd] = Bound{Time: p[PointQueued].Time, Src: Inferred, Hook: ruleFallbackQueued}
	}
	a.resolveDeps(j)
	// The fallbacks below stand in for a point between two that were seen; a job seen
	// only up to its run (incomplete: the input ended, or it was evicted) has nothing
	// after it, and zero-length ring_emission and dma_scheduling spans would be stages
	// with no basis.
	later := p[PointHWStart].Known() || p[PointHWDone].Known() || p[PointFinished].Known()
	if !p[PointEmitted].Known() && p[PointRun].Known() && later {
		p[PointEmitted] = Bound{Time: p[PointRun].Time, Src: Inferred, Hook: ruleFallbackRun}
	}
	if !p[PointHWDone].Known() && p[PointFinished].Known() {
		p[PointHWDone] = Bound{Time: p[PointFinished].Time, Src: Inferred, Hook: ruleFallbackFinished}
	}
	var omit [stageCount]bool
	if j.fam == famVirtio {
		omit = virtioOmitted(j)
		if !p[PointHWStart].Known() && p[PointEmitted].Known() && p[PointHWDone].Known() {
			p[PointHWStart] = Bound{Time: p[PointEmitted].Time, Src: Inferred, Hook: ruleVirtioHostStart}
		}
	}
	if !p[PointHWStart].Known() && p[PointEmitted].Known() && p[PointHWDone].Known() {
		te := p[PointEmitted].Time
		t := te
		if j.hasPrevDone && j.prevDone > t {
			t = j.prevDone
		}
		if p[PointHWDone].Known() && t > p[PointHWDone].Time {
			t = max(p[PointHWDone].Time, te)
		}
		p[PointHWStart] = Bound{Time: t, Src: Inferred, Hook: ruleRingSerial}
	}

	// The stages' backing store is allocated here, at output, not with the job: a
	// pending job does not carry it (BENCHMARKS.md, memory per pending job).
	n := 0
	for s := Stage(0); s < stageCount; s++ {
		if b := StageBounds[s]; p[b[0]].Known() && p[b[1]].Known() && !omit[s] {
			n++
		}
	}
	// Built in a local slice and stored once: the job is cold by now (it waited out the
	// window), and every append through j.out.Stages wrote its header back.
	stages := a.stageBuf(n)
	for s := Stage(0); s < stageCount; s++ {
		b := StageBounds[s]
		start, end := p[b[0]], p[b[1]]
		if !start.Known() || !end.Known() || omit[s] {
			continue
		}
		src := Inferred
		if start.Src == Measured && end.Src == Measured {
			src = Measured
		}
		stages = append(stages, StageSpan{
			Stage: s, Start: start.Time, End: end.Time, Src: src, Rule: a.rule(s, start.Hook, end.Hook),
		})
	}
	j.out.Stages = stages

	first, last := int64(math.MaxInt64), int64(math.MinInt64)
	for _, b := range p {
		if b.Known() {
			first = min(first, b.Time)
			last = max(last, b.Time)
		}
	}
	if first == math.MaxInt64 {
		first, last = j.last, j.last
	}
	j.out.Start, j.out.End = first, last
	if p[PointFinished].Known() {
		j.out.End = p[PointFinished].Time
	}
}

// stageSlabJobs is how many jobs' stages one slab holds.
const stageSlabJobs = 256

// stageBuf returns an empty slice with room for n stages, carved from a slab shared by
// the next jobs output (one allocation per stageSlabJobs jobs instead of one per job; a
// slab lives as long as any Job output from it is referenced).
func (a *Assembler) stageBuf(n int) []StageSpan {
	if n > cap(a.stageSlab)-len(a.stageSlab) {
		a.stageSlab = make([]StageSpan, 0, stageSlabJobs*NumStages)
	}
	l := len(a.stageSlab)
	a.stageSlab = a.stageSlab[:l+n]
	return a.stageSlab[l : l : l+n]
}

// rule returns "start→end", cached (the set of hook pairs is small). Each stage first
// checks the pair it saw last: jobs of one capture mostly repeat it, and comparing two
// strings costs less than hashing them.
func (a *Assembler) rule(st Stage, start, end string) string {
	last := &a.lastRule[st]
	if last.rule != "" && last.start == start && last.end == end {
		return last.rule
	}
	k := [2]string{start, end}
	s, ok := a.rules[k]
	if !ok {
		s = start + "→" + end
		if len(a.rules) < maxCachedRules {
			a.rules[k] = s
		}
	}
	*last = stageRule{start, end, s}
	return s
}

// stageRule is a stage's last rule, with the hooks it joins.
type stageRule struct{ start, end, rule string }
