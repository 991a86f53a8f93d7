//go:build linux

// The decoder: one ring-buffer record into a Call, an Xid, a process-gone report or a
// cuGetProcAddress result queued for the hook worker.

package cuda

import (
	"unsafe"

	"github.com/ghostdriver/ghostdriver/internal/kstr"
)

func (s *Source) decode(b []byte, batch *[]Call, sink Sink) {
	if len(b) < recordSize {
		s.mu.Lock()
		s.stats.Malformed++
		s.mu.Unlock()
		return
	}
	var r cudaBPFCudaRecord
	copy(unsafe.Slice((*byte)(unsafe.Pointer(&r)), recordSize), b)
	pid, tid := uint32(r.PidTgid>>32), uint32(r.PidTgid)
	kind := cudaBPFCudaRec(r.Kind)
	if kind != cudaBPFCudaRecCUDA_REC_CALL && len(*batch) > 0 {
		// Keep the sink's view in ring order: calls before this record go first (an
		// exit closes the process's open work, which its last calls belong to).
		sink.Calls(*batch)
		*batch = (*batch)[:0]
	}
	switch kind {
	case cudaBPFCudaRecCUDA_REC_XID:
		s.mu.Lock()
		s.stats.Xids++
		s.mu.Unlock()
		sink.Xid(Xid{Time: int64(r.Start), Device: kstr.FromC(r.Dev[:]), Code: uint32(r.Ret), Msg: kstr.FromC(r.Text[:]),
			PID: pid, TID: tid, Comm: kstr.FromC(r.Comm[:])})
	case cudaBPFCudaRecCUDA_REC_EXEC, cudaBPFCudaRecCUDA_REC_EXIT:
		s.mu.Lock()
		s.stats.ProcessesGone++
		s.mu.Unlock()
		sink.ProcessGone(pid, kind == cudaBPFCudaRecCUDA_REC_EXEC)
	case cudaBPFCudaRecCUDA_REC_PROCADDR:
		s.mu.Lock()
		s.stats.ProcAddress++
		s.mu.Unlock()
		if r.Ret != 0 || r.Handle == 0 || s.cfg.IgnoreEntryPoints || !s.cfg.hooks(Driver) {
			break
		}
		// Only symbols of the API table are worth the worker's file reads.
		if sym := kstr.FromC(r.Text[:]); isProcAddressTarget(sym) {
			s.queueLearn(learnRequest{pid: pid, symbol: sym, addr: r.Handle})
		}
	case cudaBPFCudaRecCUDA_REC_CALL:
		id, ok := apiOfCookie(r.Cookie)
		if !ok {
			s.mu.Lock()
			s.stats.Malformed++
			s.mu.Unlock()
			return
		}
		a := apis[id]
		bytes := r.Bytes
		if a.ByteScale > 1 {
			bytes *= uint64(a.ByteScale)
		}
		*batch = append(*batch, Call{
			API: id, Start: int64(r.Start), End: int64(r.End), PID: pid, TID: tid, CPU: r.Cpu,
			Comm: kstr.FromC(r.Comm[:]), Stream: r.Stream, Bytes: bytes, Handle: r.Handle, Ret: int32(r.Ret),
			Depth: r.Depth, EntryPoint: r.Cookie&cookieEntryPoint != 0,
			Untimed:  r.Flags&uint8(cudaBPFCudaFlagCUDA_F_STACK_OVERFLOW) != 0,
			ArgFault: r.Flags&uint8(cudaBPFCudaFlagCUDA_F_ARG_FAULT) != 0,
			NoReturn: r.Flags&uint8(cudaBPFCudaFlagCUDA_F_NO_RETURN) != 0,
			CtxTier:  r.CtxTier, TraceFlags: r.TraceFlags, TraceID: r.TraceId, SpanID: r.SpanId,
			WakeTraced: s.wakeups, Wake: int64(r.Wake), IRQ: int64(r.Irq),
		})
		s.mu.Lock()
		if r.CtxTier != 0 {
			s.stats.WithContext++
		} else if r.Flags&uint8(cudaBPFCudaFlagCUDA_F_CTX_UNREADABLE) != 0 {
			s.stats.ContextUnreadable++
		}
		s.stats.Calls++
		s.stats.ByAPI[a.Name]++
		s.mu.Unlock()
	default:
		s.mu.Lock()
		s.stats.Malformed++
		s.mu.Unlock()
	}
}
