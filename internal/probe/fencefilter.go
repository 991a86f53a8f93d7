//go:build linux

// The fence filter's user-space half (Config.FenceFilter; bpf/fence.c passes over dma_fence
// events whose context is not in `fence_ctxs`): every fence context a decoded GPU job
// event names — the job's finished fence and the scheduled fence before it (the
// scheduler allocates the two together), its dependency, its hardware fence — goes into
// the map once.

package probe

import (
	"github.com/cilium/ebpf"

	"github.com/ghostdriver/ghostdriver/internal/event"
)

// fenceContexts feeds fence_ctxs; nil when the filter is off.
type fenceContexts struct {
	m    *ebpf.Map
	seen map[uint64]struct{}
	// failed counts contexts the map refused (kept in seen: not retried per event).
	failed uint64
}

func newFenceContexts(objs *objects, on bool) *fenceContexts {
	if !on {
		return nil
	}
	f, ok := objs.families[famFence]
	if !ok || f.maps[fenceMapFenceCtxs] == nil {
		return nil
	}
	return &fenceContexts{m: f.maps[fenceMapFenceCtxs], seen: map[uint64]struct{}{}}
}

// follow adds the contexts e names, when e identifies a GPU job.
func (fc *fenceContexts) follow(e *event.Event) {
	switch e.Kind {
	case event.JobQueue, event.JobRun, event.JobDone, event.JobDependency, event.RunJobEnd:
	default:
		return
	}
	if c := e.Fence.Context; c != 0 {
		fc.add(c)
		fc.add(c - 1) // drm_sched_fence: scheduled = finished - 1 (drm_sched_entity_init)
	}
	if c := e.Dep.Context; c != 0 {
		fc.add(c)
	}
	if c := e.HWFence.Context; c != 0 {
		fc.add(c)
	}
}

func (fc *fenceContexts) add(ctx uint64) {
	if _, ok := fc.seen[ctx]; ok {
		return
	}
	fc.seen[ctx] = struct{}{}
	if err := fc.m.Update(ctx, uint8(1), ebpf.UpdateAny); err != nil {
		fc.failed++
	}
}
