// Correlation keys (DESIGN.md "Correlation keys") and the bounded lookaside tables that
// remember fences after their job has left the pending table.
//
// Every fence is looked up by its 32-bit truncation, packed into one uint64: dma_fence
// tracepoints print 32-bit context and seqno while 6.17+ scheduler events print 64-bit
// ones, so truncation is the only join that works across both (and it survives the
// 32-bit seqno wrapping while the 64-bit one keeps counting). Fence contexts come from
// one kernel-wide counter (dma_fence_context_alloc), so a (context, seqno) pair names one
// fence on the whole machine and the device is not part of the key. Timeline names are
// never keys: 6.17–7.0 print "signaled-timeline" once a fence has signalled.
package assemble

import "github.com/ghostdriver/ghostdriver/internal/event"

// key32 packs the 32-bit truncation of a fence key: context in the high half.
func key32(k event.FenceKey) uint64 {
	return (k.Context&0xffffffff)<<32 | k.Seqno&0xffffffff
}

// scheduledOf returns the packed key of the scheduled fence of the job whose finished
// fence is k: drm_sched (and amd_sched before it) allocates two contexts per entity, the
// scheduled fence's and, one above it, the finished fence's, with the same seqno.
func scheduledOf(k uint64) uint64 { return k - 1<<32 }

// finishedOfScheduled is the inverse of scheduledOf.
func finishedOfScheduled(k uint64) uint64 { return k + 1<<32 }

// namespace says which identity scheme an idKey belongs to.
type namespace uint8

const (
	nsSched namespace = iota + 1 // ≤6.16 scheduler events: (ring, sched job id)
	nsMsm                        // msm submit ident, per device
	nsXe                         // xe job fence pointer, per device
)

// idKey is the identity of a job that has no fence key in its events: old scheduler
// events (a job id per ring), msm submits and xe jobs (a pointer). scope is the ring
// name for nsSched and the device for nsMsm and nsXe: one string, since the namespace
// already tells them apart (a pending job carries two of these).
type idKey struct {
	ns    namespace
	scope string
	id    uint64
}

// fifoMap is a map with a fixed capacity that forgets its oldest insertions first. The
// assembler uses it for facts that outlive a job but must not grow without bound:
// recent fence signals, owners of recently output jobs' fences, dependencies announced
// before their job was queued.
type fifoMap[V any] struct {
	m    map[uint64]fifoEntry[V]
	ring []fifoSlot // insertion order; grows to capacity, then wraps
	cap  int
	next int
	seq  uint64
}

type fifoEntry[V any] struct {
	v   V
	seq uint64
}

type fifoSlot struct {
	key uint64
	seq uint64
}

// newFIFOMap returns an empty table of the given capacity. Nothing is allocated up
// front: the table grows with what it holds (an assembler that sees few fences does
// not pay for 8192 of them).
func newFIFOMap[V any](capacity int) *fifoMap[V] {
	return &fifoMap[V]{m: make(map[uint64]fifoEntry[V]), cap: max(capacity, 1)}
}

// put inserts or replaces k. A replaced key keeps its place in the eviction order.
func (f *fifoMap[V]) put(k uint64, v V) {
	if e, ok := f.m[k]; ok {
		e.v = v
		f.m[k] = e
		return
	}
	f.seq++
	if len(f.ring) < f.cap {
		f.ring = append(f.ring, fifoSlot{key: k, seq: f.seq})
	} else {
		old := f.ring[f.next]
		if e, ok := f.m[old.key]; ok && e.seq == old.seq {
			delete(f.m, old.key)
		}
		f.ring[f.next] = fifoSlot{key: k, seq: f.seq}
		f.next = (f.next + 1) % f.cap
	}
	f.m[k] = fifoEntry[V]{v: v, seq: f.seq}
}

func (f *fifoMap[V]) get(k uint64) (V, bool) {
	e, ok := f.m[k]
	return e.v, ok
}

func (f *fifoMap[V]) remove(k uint64) { delete(f.m, k) }

func (f *fifoMap[V]) len() int { return len(f.m) }

func (f *fifoMap[V]) reset() {
	clear(f.m)
	f.ring = f.ring[:0]
	f.next = 0
}
