// Frames to Go values: the Decoder keeps a channel's clock offset (set by each batch
// frame), converts the CUPTI timestamps of the records that follow to CLOCK_MONOTONIC,
// and hands the values to a Sink.

package cupti

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// wideSpread: a batch whose monotonic readings are further apart than this (the
// library was preempted between them) gives an offset that may be off by up to half of
// it; it is still used (there is no better one for its records) and counted.
const wideSpread = 1_000_000 // 1 ms

// Batch is one CUPTI buffer's head: the clock triple its records are converted with.
type Batch struct {
	MonoBefore, CuptiAt, MonoAfter uint64
	Records, DroppedCUPTI          uint32
}

// Spread is MonoAfter − MonoBefore: twice the worst error of the batch's offset
// (negative when the readings went backwards: a process writing garbage).
func (b Batch) Spread() int64 { return int64(b.MonoAfter - b.MonoBefore) }

// Offset is what the batch's records add to a CUPTI time to get CLOCK_MONOTONIC: the
// monotonic midpoint minus the CUPTI reading, in wrapping int64 arithmetic (a garbage
// triple gives a garbage offset, never a panic).
func (b Batch) Offset() int64 {
	mid := int64(b.MonoBefore) + b.Spread()/2
	return mid - int64(b.CuptiAt)
}

// Kernel is one kernel execution. Start and End are CLOCK_MONOTONIC ns.
type Kernel struct {
	Start, End                       int64
	Correlation, Device              uint32
	Context, Stream                  uint32
	Grid, Block                      [3]uint32
	Registers, SharedMemory, GraphID uint32
	GraphNodeID                      uint64
	LaunchType                       uint16
	Name                             string
	NameTruncated                    bool // the library cut the name at NameMax
}

// API is one runtime or driver API call as CUPTI saw it. Start and End are
// CLOCK_MONOTONIC ns; PID and TID are CUPTI's.
type API struct {
	Start, End                  int64
	Correlation, CBID, PID, TID uint32
	Domain                      uint32 // APIRuntime or APIDriver
	Result                      uint32
}

// Copy is one memory copy or set. Start and End are CLOCK_MONOTONIC ns.
type Copy struct {
	Start, End                   int64
	Bytes                        uint64
	Correlation, Device, Context uint32
	Stream                       uint32
	What                         uint32 // CopyMemcpy or CopyMemset
	CopyKind                     uint32 // CUPTI's memcpy kind (1 HtoD, 2 DtoH, …), 0 for memset
	GraphID                      uint32
}

// StateChange is a state the library entered, at CLOCK_MONOTONIC Mono.
type StateChange struct {
	Mono   int64
	State  State
	Reason uint32 // 0, or the CUPTI result that caused it
}

// Device is one device the process sees, as its driver reported it when the timeline
// came on. Device is the kernel records' device id; SMs 0 where the driver did not say.
type Device struct {
	Device, SMs      uint32
	CCMajor, CCMinor uint32
}

// Sink receives a channel's decoded frames in ring order. pid is the channel's owner.
// Kernel, API and Copy values are reused: valid only during the call.
type Sink interface {
	Kernel(pid uint32, k *Kernel)
	API(pid uint32, a *API)
	Copy(pid uint32, c *Copy)
	State(pid uint32, s StateChange)
	Batch(pid uint32, b Batch)
	Device(pid uint32, d Device)
}

// DecoderStats counts a channel's frames.
type DecoderStats struct {
	// Frames handed to the Sink, by type (records dropped for NoClock not included).
	Batches, Kernels, APIs, Copies, States, Devices uint64
	// Corrupt: frames whose body did not add up (too short for its struct, a name
	// past the frame or longer than NameMax); the ring dropped what followed.
	Corrupt uint64
	// NoClock: kernel, API and copy records met before the channel's first batch
	// frame, dropped (no offset to convert them with).
	NoClock uint64
	// ClockSpreadWide: batches whose monotonic readings went backwards or were more
	// than 1 ms apart; MaxClockSpread is the widest spread seen (ns), LastClockSpread
	// the latest batch's.
	ClockSpreadWide                 uint64
	MaxClockSpread, LastClockSpread int64
	// UnknownFrameType: frames of a type this collector does not know (a newer
	// library), skipped.
	UnknownFrameType uint64
}

// Add adds o's counts to s (MaxClockSpread: the larger; LastClockSpread: o's).
func (s *DecoderStats) Add(o DecoderStats) {
	s.Batches += o.Batches
	s.Kernels += o.Kernels
	s.APIs += o.APIs
	s.Copies += o.Copies
	s.States += o.States
	s.Devices += o.Devices
	s.Corrupt += o.Corrupt
	s.NoClock += o.NoClock
	s.ClockSpreadWide += o.ClockSpreadWide
	s.MaxClockSpread = max(s.MaxClockSpread, o.MaxClockSpread)
	s.LastClockSpread = o.LastClockSpread
	s.UnknownFrameType += o.UnknownFrameType
}

// maxNames bounds the decoder's kernel-name cache: a job launches few distinct kernels
// many times, so names are interned rather than allocated per kernel; a process that
// makes up names without end only resets the cache.
const maxNames = 4096

// Decoder decodes one channel's frames. Not safe for concurrent use.
type Decoder struct {
	pid    uint32
	sink   Sink
	clock  bool  // a batch frame was seen
	offset int64 // mono − CUPTI, from the latest batch
	stats  DecoderStats
	names  map[string]string
	k      Kernel
	a      API
	c      Copy
}

// NewDecoder returns a Decoder for the channel of process pid, writing to sink.
func NewDecoder(pid uint32, sink Sink) *Decoder {
	return &Decoder{pid: pid, sink: sink, names: map[string]string{}}
}

// Stats returns the decoder's counts.
func (d *Decoder) Stats() DecoderStats { return d.stats }

var errShort = errors.New("body too short")

// Frame decodes one frame, the callback of Ring.Drain. It returns an error (and counts
// Corrupt) when the body does not add up; unknown frame types are skipped.
func (d *Decoder) Frame(f Frame) error {
	le := binary.LittleEndian
	b := f.Body
	need := 0
	switch f.Type {
	case FrameBatch:
		need = SizeofBatch
	case FrameKernel:
		need = SizeofKernel
	case FrameAPI:
		need = SizeofAPI
	case FrameCopy:
		need = SizeofCopy
	case FrameState:
		need = SizeofStateChange
	case FrameDevice:
		need = SizeofDevice
	default:
		d.stats.UnknownFrameType++
		return nil
	}
	if len(b) < need {
		d.stats.Corrupt++
		return fmt.Errorf("%w: %d bytes, struct is %d", errShort, len(b), need)
	}
	switch f.Type {
	case FrameBatch:
		bt := Batch{
			MonoBefore:   le.Uint64(b[batchMonoBefore:]),
			CuptiAt:      le.Uint64(b[batchCuptiAt:]),
			MonoAfter:    le.Uint64(b[batchMonoAfter:]),
			Records:      le.Uint32(b[batchRecords:]),
			DroppedCUPTI: le.Uint32(b[batchDroppedCupti:]),
		}
		spread := bt.Spread()
		if bt.MonoAfter < bt.MonoBefore || spread > wideSpread {
			d.stats.ClockSpreadWide++
		}
		d.stats.LastClockSpread = spread
		d.stats.MaxClockSpread = max(d.stats.MaxClockSpread, spread)
		d.clock, d.offset = true, bt.Offset()
		d.stats.Batches++
		d.sink.Batch(d.pid, bt)
	case FrameState:
		d.stats.States++
		d.sink.State(d.pid, StateChange{
			Mono:   int64(le.Uint64(b[stateMono:])),
			State:  State(le.Uint32(b[stateState:])),
			Reason: le.Uint32(b[stateReason:]),
		})
	case FrameDevice:
		d.stats.Devices++
		d.sink.Device(d.pid, Device{
			Device:  le.Uint32(b[deviceID:]),
			SMs:     le.Uint32(b[deviceSMCount:]),
			CCMajor: le.Uint32(b[deviceCCMajor:]),
			CCMinor: le.Uint32(b[deviceCCMinor:]),
		})
	case FrameKernel:
		n := int(le.Uint16(b[kernelNameLen:]))
		if n > NameMax || SizeofKernel+n > len(b) {
			d.stats.Corrupt++
			return fmt.Errorf("name_len %d: the body has %d bytes after the struct, the most is %d", n, len(b)-SizeofKernel, NameMax)
		}
		if !d.clock {
			d.stats.NoClock++
			return nil
		}
		k := &d.k
		*k = Kernel{
			Start:         d.mono(le.Uint64(b[kernelStart:])),
			End:           d.mono(le.Uint64(b[kernelEnd:])),
			Correlation:   le.Uint32(b[kernelCorrelation:]),
			Device:        le.Uint32(b[kernelDevice:]),
			Context:       le.Uint32(b[kernelContext:]),
			Stream:        le.Uint32(b[kernelStream:]),
			Grid:          [3]uint32{le.Uint32(b[kernelGridX:]), le.Uint32(b[kernelGridY:]), le.Uint32(b[kernelGridZ:])},
			Block:         [3]uint32{le.Uint32(b[kernelBlockX:]), le.Uint32(b[kernelBlockY:]), le.Uint32(b[kernelBlockZ:])},
			Registers:     le.Uint32(b[kernelRegisters:]),
			SharedMemory:  le.Uint32(b[kernelSharedMemory:]),
			GraphID:       le.Uint32(b[kernelGraphID:]),
			GraphNodeID:   le.Uint64(b[kernelGraphNodeID:]),
			LaunchType:    le.Uint16(b[kernelLaunchType:]),
			Name:          d.name(b[SizeofKernel : SizeofKernel+n]),
			NameTruncated: f.Flags&KernelNameTruncated != 0,
		}
		d.stats.Kernels++
		d.sink.Kernel(d.pid, k)
	case FrameAPI:
		if !d.clock {
			d.stats.NoClock++
			return nil
		}
		a := &d.a
		*a = API{
			Start:       d.mono(le.Uint64(b[apiStart:])),
			End:         d.mono(le.Uint64(b[apiEnd:])),
			Correlation: le.Uint32(b[apiCorrelation:]),
			CBID:        le.Uint32(b[apiCBID:]),
			PID:         le.Uint32(b[apiPID:]),
			TID:         le.Uint32(b[apiTID:]),
			Domain:      le.Uint32(b[apiDomain:]),
			Result:      le.Uint32(b[apiResult:]),
		}
		d.stats.APIs++
		d.sink.API(d.pid, a)
	case FrameCopy:
		if !d.clock {
			d.stats.NoClock++
			return nil
		}
		c := &d.c
		*c = Copy{
			Start:       d.mono(le.Uint64(b[copyStart:])),
			End:         d.mono(le.Uint64(b[copyEnd:])),
			Bytes:       le.Uint64(b[copyBytes:]),
			Correlation: le.Uint32(b[copyCorrelation:]),
			Device:      le.Uint32(b[copyDevice:]),
			Context:     le.Uint32(b[copyContext:]),
			Stream:      le.Uint32(b[copyStream:]),
			What:        le.Uint32(b[copyWhat:]),
			CopyKind:    le.Uint32(b[copyKind:]),
			GraphID:     le.Uint32(b[copyGraphID:]),
		}
		d.stats.Copies++
		d.sink.Copy(d.pid, c)
	}
	return nil
}

// mono converts a CUPTI timestamp. CUPTI leaves a time it did not record at 0: that
// stays 0 rather than becoming the offset, a plausible-looking time.
func (d *Decoder) mono(t uint64) int64 {
	if t == 0 {
		return 0
	}
	return int64(t) + d.offset
}

// name interns a kernel name (made valid UTF-8: a name cut at NameMax may end inside a
// character, and the name is exported).
func (d *Decoder) name(b []byte) string {
	if s, ok := d.names[string(b)]; ok {
		return s
	}
	if len(d.names) >= maxNames {
		clear(d.names)
	}
	s := validUTF8(b)
	d.names[string(b)] = s
	return s
}

func validUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}
