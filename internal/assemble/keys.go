// Correlation keys (docs/correlation.md). The tables indexed by them are in
// jobindex.go (jobs) and fifo.go (the bounded lookaside tables that remember fences after
// their job has left the pending table).
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
	nsSched       namespace = iota + 1 // ≤6.16 scheduler events: (ring, sched job id)
	nsMsm                              // msm submit ident, per device
	nsXe                               // xe job fence pointer, per device
	nsVirtioFence                      // virtio_gpu command fence_id, per device
	nsVirtioSeq                        // virtio_gpu command seqno (7.3), per device
	nsV3D                              // v3d queue and hardware fence seqno, per device
	nsPVR                              // imagination: the pvr_job pointer (accel.go)
	nsIVPU                             // ivpu: job_id, per device (accel.go)
	nsIVPUCreate                       // ivpu: a created job not submitted yet, by its thread (accel.go)
)

// idKey is the identity of a job that has no fence key in its events: old scheduler
// events (a job id per ring), msm submits and xe jobs (a pointer). scope is the ring
// name for nsSched and the device for the others: one string, since the namespace
// already tells them apart (a pending job carries two of these).
type idKey struct {
	ns    namespace
	scope string
	id    uint64
}
