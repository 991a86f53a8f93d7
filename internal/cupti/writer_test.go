// A test producer that writes channels as channel.h says the library does: the header,
// frames padded to 8 bytes, a PAD frame where the next frame would cross the ring's
// end, head stored after the frame's bytes. The ring, decoder, channel and fuzz tests
// build their input with it.
package cupti

import (
	"encoding/binary"
	"sync/atomic"
	"testing"
	"unsafe"
)

var le = binary.LittleEndian

// alignedMem is n zero bytes, 8-byte aligned like a mapping.
func alignedMem(n int) []byte {
	w := make([]uint64, (n+7)/8)
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(w))), n)
}

// writeHeader writes a valid header for a ring of ringSize bytes made by pid.
func writeHeader(mem []byte, ringSize uint64, pid uint32) {
	copy(mem[hdrMagic:], Magic)
	le.PutUint32(mem[hdrVersion:], Version)
	le.PutUint32(mem[hdrHeaderSize:], HeaderSize)
	le.PutUint64(mem[hdrRingSize:], ringSize)
	le.PutUint32(mem[hdrPID:], pid)
}

// newChannelMem is a mapping with a valid header for a ring of ringSize bytes.
func newChannelMem(ringSize uint64, pid uint32) []byte {
	mem := alignedMem(HeaderSize + int(ringSize))
	writeHeader(mem, ringSize, pid)
	return mem
}

type writer struct {
	mem  []byte
	size uint64
	head uint64 // written, published by publish
}

// newWriter produces into mem (header written), from the header's head.
func newWriter(mem []byte) *writer {
	return &writer{mem: mem, size: le.Uint64(mem[hdrRingSize:]), head: atomic.LoadUint64((*uint64)(unsafe.Pointer(&mem[hdrHead])))}
}

func (w *writer) tail() uint64 { return atomic.LoadUint64((*uint64)(unsafe.Pointer(&w.mem[hdrTail]))) }

// raw writes one frame of exactly n bytes (n >= 8, a multiple of 8) whose body is
// body then zeros, after a PAD to the ring's end where it would cross it. It returns
// false, writing nothing, when the ring has no room.
func (w *writer) raw(typ FrameType, flags uint16, n uint32, body []byte) bool {
	pos := w.head & (w.size - 1)
	pad := uint64(0)
	if w.size-pos < uint64(n) {
		pad = w.size - pos
	}
	if w.head+pad+uint64(n)-w.tail() > w.size {
		return false
	}
	ring := w.mem[HeaderSize : HeaderSize+w.size]
	if pad > 0 {
		putFrameHead(ring[pos:], uint32(pad), FramePad, 0)
		w.head += pad
		pos = 0
	}
	f := ring[pos : pos+uint64(n)]
	clear(f)
	putFrameHead(f, n, typ, flags)
	copy(f[SizeofFrame:], body)
	w.head += uint64(n)
	return true
}

func putFrameHead(b []byte, n uint32, typ FrameType, flags uint16) {
	le.PutUint32(b[frameLen:], n)
	le.PutUint16(b[frameType:], uint16(typ))
	le.PutUint16(b[frameFlags:], flags)
}

// frame writes a frame with body, padded to 8.
func (w *writer) frame(typ FrameType, flags uint16, body []byte) bool {
	return w.raw(typ, flags, uint32(SizeofFrame+len(body)+7)&^7, body)
}

// must is frame, failing t when the ring is full.
func (w *writer) must(t testing.TB, typ FrameType, flags uint16, body []byte) {
	t.Helper()
	if !w.frame(typ, flags, body) {
		t.Fatalf("test ring full at head %d tail %d", w.head, w.tail())
	}
}

// publish stores head: the frames written become visible to the consumer.
func (w *writer) publish() { atomic.StoreUint64((*uint64)(unsafe.Pointer(&w.mem[hdrHead])), w.head) }

// Frame bodies. Times are CUPTI's clock (the raw values the library copies).

func batchBody(b Batch) []byte {
	p := make([]byte, SizeofBatch)
	le.PutUint64(p[batchMonoBefore:], b.MonoBefore)
	le.PutUint64(p[batchCuptiAt:], b.CuptiAt)
	le.PutUint64(p[batchMonoAfter:], b.MonoAfter)
	le.PutUint32(p[batchRecords:], b.Records)
	le.PutUint32(p[batchDroppedCupti:], b.DroppedCUPTI)
	return p
}

// kernelBody encodes k with k.Start and k.End as CUPTI times; nameLen overrides the
// name's length field when >= 0.
func kernelBody(k *Kernel, nameLen int) []byte {
	p := make([]byte, SizeofKernel+len(k.Name))
	le.PutUint64(p[kernelStart:], uint64(k.Start))
	le.PutUint64(p[kernelEnd:], uint64(k.End))
	le.PutUint32(p[kernelCorrelation:], k.Correlation)
	le.PutUint32(p[kernelDevice:], k.Device)
	le.PutUint32(p[kernelContext:], k.Context)
	le.PutUint32(p[kernelStream:], k.Stream)
	for i, o := range []int{kernelGridX, kernelGridY, kernelGridZ} {
		le.PutUint32(p[o:], k.Grid[i])
	}
	for i, o := range []int{kernelBlockX, kernelBlockY, kernelBlockZ} {
		le.PutUint32(p[o:], k.Block[i])
	}
	le.PutUint32(p[kernelRegisters:], k.Registers)
	le.PutUint32(p[kernelSharedMemory:], k.SharedMemory)
	le.PutUint32(p[kernelGraphID:], k.GraphID)
	le.PutUint64(p[kernelGraphNodeID:], k.GraphNodeID)
	if nameLen < 0 {
		nameLen = len(k.Name)
	}
	le.PutUint16(p[kernelNameLen:], uint16(nameLen))
	le.PutUint16(p[kernelLaunchType:], k.LaunchType)
	copy(p[SizeofKernel:], k.Name)
	return p
}

func apiBody(a *API) []byte {
	p := make([]byte, SizeofAPI)
	le.PutUint64(p[apiStart:], uint64(a.Start))
	le.PutUint64(p[apiEnd:], uint64(a.End))
	le.PutUint32(p[apiCorrelation:], a.Correlation)
	le.PutUint32(p[apiCBID:], a.CBID)
	le.PutUint32(p[apiPID:], a.PID)
	le.PutUint32(p[apiTID:], a.TID)
	le.PutUint32(p[apiDomain:], a.Domain)
	le.PutUint32(p[apiResult:], a.Result)
	return p
}

func copyBody(c *Copy) []byte {
	p := make([]byte, SizeofCopy)
	le.PutUint64(p[copyStart:], uint64(c.Start))
	le.PutUint64(p[copyEnd:], uint64(c.End))
	le.PutUint64(p[copyBytes:], c.Bytes)
	le.PutUint32(p[copyCorrelation:], c.Correlation)
	le.PutUint32(p[copyDevice:], c.Device)
	le.PutUint32(p[copyContext:], c.Context)
	le.PutUint32(p[copyStream:], c.Stream)
	le.PutUint32(p[copyWhat:], c.What)
	le.PutUint32(p[copyKind:], c.CopyKind)
	le.PutUint32(p[copyGraphID:], c.GraphID)
	return p
}

func deviceBody(d Device) []byte {
	p := make([]byte, SizeofDevice)
	le.PutUint32(p[deviceID:], d.Device)
	le.PutUint32(p[deviceSMCount:], d.SMs)
	le.PutUint32(p[deviceCCMajor:], d.CCMajor)
	le.PutUint32(p[deviceCCMinor:], d.CCMinor)
	return p
}

func stateBody(s StateChange) []byte {
	p := make([]byte, SizeofStateChange)
	le.PutUint64(p[stateMono:], uint64(s.Mono))
	le.PutUint32(p[stateState:], uint32(s.State))
	le.PutUint32(p[stateReason:], s.Reason)
	return p
}

// recSink records what a Decoder hands on, as values (the Decoder reuses its structs).
type recSink struct {
	pids    []uint32
	kernels []Kernel
	apis    []API
	copies  []Copy
	states  []StateChange
	batches []Batch
	devices []Device
	order   []FrameType
}

func (s *recSink) Kernel(pid uint32, k *Kernel) {
	s.pids, s.kernels, s.order = append(s.pids, pid), append(s.kernels, *k), append(s.order, FrameKernel)
}
func (s *recSink) API(pid uint32, a *API) {
	s.pids, s.apis, s.order = append(s.pids, pid), append(s.apis, *a), append(s.order, FrameAPI)
}
func (s *recSink) Copy(pid uint32, c *Copy) {
	s.pids, s.copies, s.order = append(s.pids, pid), append(s.copies, *c), append(s.order, FrameCopy)
}
func (s *recSink) State(pid uint32, st StateChange) {
	s.pids, s.states, s.order = append(s.pids, pid), append(s.states, st), append(s.order, FrameState)
}
func (s *recSink) Device(pid uint32, d Device) {
	s.pids, s.devices, s.order = append(s.pids, pid), append(s.devices, d), append(s.order, FrameDevice)
}
func (s *recSink) Batch(pid uint32, b Batch) {
	s.pids, s.batches, s.order = append(s.pids, pid), append(s.batches, b), append(s.order, FrameBatch)
}
