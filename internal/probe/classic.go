// The classic-tracepoint rung of the gpu_scheduler and driver events, user-space half.
// tp_btf and raw_tp read the events' arguments through CO-RE, which needs the kernel's
// and the module's BTF (gpu-sched is a module; 5.x kernels have vmlinux BTF but no
// module BTF). A classic tracepoint needs neither: its program (ghostdriver.h,
// raw_copy) copies the raw trace entry, and user space decodes the copy with what the
// kernel publishes about the event in tracefs, its format file:
//
//	load:   events/<system>/<event>/format → internal/ftrace compiles it
//	        (ftrace.NewEntryFormat: each print argument bound to its field, the print fmt
//	        to the table's reading of it); the rung is unavailable, with the reason, when
//	        the print fmt needs something the binder does not do or is not in the table
//	record: raw entry → ftrace's Decoder (one per source) reads each argument's value
//	        from its field and fills the Event with the table's rules
//	        (Decoder.DecodeEntry) → Time, PID, TID, CPU and Comm set from the record
//
// So every generation of an event's format that the table knows works live too,
// with the identities the event prints (fence keys since 6.17; before, pointers, which
// fenceJoin turns into the keys the dma_fence hooks read) rather than what CO-RE reads.
// Before Linux 6.7 the kernel skips a classic-tracepoint program, without counting it,
// when it fires while another such program (or a bpf() map update) runs on that CPU;
// 6.7+ counts the skip in the program's recursion misses, which Stats().Lost includes.

package probe

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unsafe"

	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/eventdef"
	"github.com/ghostdriver/ghostdriver/internal/ftrace"
	"github.com/ghostdriver/ghostdriver/internal/kstr"
)

// rawRecordSize is sizeof(struct raw_record): a sample of exactly this size is a raw
// copy; every other one is a struct record (and the sizes differ).
const rawRecordSize = int(unsafe.Sizeof(commonRawRecord{}))

const rawMax = len(commonRawRecord{}.Raw)

// Offsets of the raw record's header fields (read in place: no copy of the entry).
const (
	rawOffTs   = int(unsafe.Offsetof(commonRawRecord{}.Ts))
	rawOffPid  = int(unsafe.Offsetof(commonRawRecord{}.PidTgid))
	rawOffCPU  = int(unsafe.Offsetof(commonRawRecord{}.Cpu))
	rawOffHook = int(unsafe.Offsetof(commonRawRecord{}.Hook))
	rawOffLen  = int(unsafe.Offsetof(commonRawRecord{}.RawLen))
	rawOffComm = int(unsafe.Offsetof(commonRawRecord{}.Comm))
	rawOffRaw  = int(unsafe.Offsetof(commonRawRecord{}.Raw))
)

// The reader tells the two records apart by size alone.
const _ = uint(rawRecordSize - recordSize - 1)

// maxHookValue bounds enum hook values (ghostdriver.h): the classic table and the hook
// index are arrays. The numbering is the event table's (eventdef.MaxHookValue, checked
// without root by its TestHookValues).
const maxHookValue = eventdef.MaxHookValue

// tracefsRoots are where the format files are looked for, in order.
var tracefsRoots = []string{"/sys/kernel/tracing", "/sys/kernel/debug/tracing"}

// classicEvent is one event of the rung as user space decodes it.
type classicEvent struct {
	system, name string
	format       *ftrace.EntryFormat
}

// classicEvents are the events whose classic program is attached, by hook.
type classicEvents struct {
	byHook [maxHookValue]*classicEvent
}

func (c *classicEvents) add(h commonHook, e *classicEvent) {
	if int(h) < maxHookValue {
		c.byHook[h] = e
	}
}

// classicHook is the enum hook value the raw-copy program of event name writes.
func classicHook(name string) (commonHook, bool) {
	for h, info := range hookTable {
		if info.name == name {
			return h, true
		}
	}
	return 0, false
}

// readFormat reads events/<system>/<name>/format from the first tracefs root that has it.
func readFormat(system, name string) (string, error) {
	var first error
	for _, root := range tracefsRoots {
		b, err := os.ReadFile(filepath.Join(root, "events", system, name, "format"))
		if err == nil {
			return string(b), nil
		}
		if first == nil {
			first = err
		}
	}
	return "", first
}

// errClassicFormat is a format the rung cannot decode (the reason follows).
var errClassicFormat = errors.New("classic tracepoint format")

// newClassicEvent compiles the format text of system/name and checks that what it
// prints is text the decoder reads.
func newClassicEvent(system, name, formatText string) (*classicEvent, error) {
	f, err := ftrace.NewEntryFormat(system, name, formatText)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errClassicFormat, err)
	}
	return &classicEvent{system: system, name: name, format: f}, nil
}

// loadClassicEvent reads and compiles the format of a classic program's tracepoint
// ("system/name", the program's AttachTo).
func loadClassicEvent(attachTo string) (*classicEvent, error) {
	system, name, ok := strings.Cut(attachTo, "/")
	if !ok {
		return nil, fmt.Errorf("tracepoint %q is not group/name", attachTo)
	}
	text, err := readFormat(system, name)
	if err != nil {
		return nil, err
	}
	return newClassicEvent(system, name, text)
}

// classicReason is the report's line for a format that could not be used.
func classicReason(attachTo string, err error) string {
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "tracepoint not present in this kernel (no events/" + attachTo + "/format in tracefs)"
	case errors.Is(err, errClassicFormat):
		return "cannot decode its raw entries: " + firstLine(err.Error())
	}
	return "reading the tracefs format of " + attachTo + ": " + firstLine(err.Error())
}

// classicDecoder decodes raw records with their events' formats. Used by the one reader
// goroutine only.
type classicDecoder struct {
	events *classicEvents
	table  *ftrace.Decoder // the entries' decode and string interning (no text is parsed)
	comms  kstr.Interner
	// join: gpu_scheduler events of <= 6.16 print the finished fence's pointer, not its
	// key (and the dependency event names the job by ring and id). The dma_fence hooks
	// (tp_btf/raw_tp: vmlinux BTF is enough) record each fence's pointer with its 64-bit
	// key when it is created, so the source gives those events the key the tp_btf rung
	// reads from the job itself. nil when no gpu_scheduler event is on this rung.
	join *fenceJoin
}

func newClassicDecoder(events *classicEvents) *classicDecoder {
	c := &classicDecoder{events: events, table: ftrace.NewDecoder()}
	for _, e := range events.byHook {
		if e != nil && e.system == "gpu_scheduler" {
			c.join = &fenceJoin{}
			break
		}
	}
	return c
}

// Sizes of the join's tables: direct-mapped, bounded, never allocating. A slot holds
// the newest entry that hashed to it; a lookup checks the whole key, so an overwritten
// entry is a miss (the event keeps its pointer identity), never a wrong key.
const (
	fenceJoinSlots = 1 << 13 // fences created and not yet seen by a scheduler event
	jobJoinSlots   = 1 << 11 // jobs queued and not yet seen by a dependency event
)

type fenceJoin struct {
	fences [fenceJoinSlots]struct {
		ptr uint64
		key event.FenceKey
	}
	jobs [jobJoinSlots]struct {
		ring string
		id   uint64
		key  event.FenceKey
	}
}

func fenceSlot(ptr uint64) uint64 { return (ptr >> 4) * 0x9e3779b97f4a7c15 >> (64 - 13) }

// jobSlot mixes the ring name (FNV-1a) and the id so that the same id on two rings,
// whose names differ in one character, lands in different slots (the last character's
// difference must reach the top bits the slot is taken from).
func jobSlot(id uint64, ring string) uint64 {
	h := uint64(0xcbf29ce484222325)
	for i := 0; i < len(ring); i++ {
		h = (h ^ uint64(ring[i])) * 0x100000001b3
	}
	h = (h ^ id) * 0x9e3779b97f4a7c15
	h ^= h >> 31
	h *= 0xbf58476d1ce4e5b9
	return h >> (64 - 11)
}

// fenceCreated remembers a dma_fence_init's pointer and 64-bit key.
func (j *fenceJoin) fenceCreated(ptr uint64, key event.FenceKey) {
	s := &j.fences[fenceSlot(ptr)]
	s.ptr, s.key = ptr, key
}

// fill gives a gpu_scheduler event the key of the fence (or job) it names.
func (j *fenceJoin) fill(ev *event.Event) {
	if ev.Fence.IsZero() && ev.FencePtr != 0 {
		if s := &j.fences[fenceSlot(ev.FencePtr)]; s.ptr == ev.FencePtr {
			ev.Fence, ev.FenceWide = s.key, true
		}
	}
	if ev.JobID == 0 || ev.Ring == "" {
		return
	}
	s := &j.jobs[jobSlot(ev.JobID, ev.Ring)]
	switch {
	case !ev.Fence.IsZero():
		s.ring, s.id, s.key = ev.Ring, ev.JobID, ev.Fence
	case s.id == ev.JobID && s.ring == ev.Ring:
		ev.Fence, ev.FenceWide = s.key, true
	}
}

var errClassicEntry = errors.New("classic tracepoint entry")

// decodeRaw decodes a raw_record sample (len(b) == rawRecordSize).
func (d *decoder) decodeRaw(b []byte, ev *event.Event) error {
	hook := binary.LittleEndian.Uint16(b[rawOffHook:])
	var ce *classicEvent
	if d.classic != nil && int(hook) < maxHookValue {
		ce = d.classic.events.byHook[hook]
	}
	if ce == nil {
		return unknownHook(ev, hook)
	}
	return d.classic.decode(ce, b, ev)
}

func (c *classicDecoder) decode(ce *classicEvent, b []byte, ev *event.Event) error {
	// The entry's common fields are not there to check: the kernel stores its pt_regs
	// pointer over them before it runs the program (perf_trace_run_bpf_submit). The hook
	// says which event it is: each raw-copy program is attached to its own tracepoint.
	if n := binary.LittleEndian.Uint16(b[rawOffLen:]); int(n) != rawMax {
		return fmt.Errorf("%w: %s: the program could not read the entry (%d bytes copied)", errClassicEntry, ce.name, n)
	}
	raw := b[rawOffRaw : rawOffRaw+rawMax]
	if err := c.table.DecodeEntry(ce.format, raw, ev); err != nil {
		return fmt.Errorf("%w: %s: %w", errClassicEntry, ce.name, err)
	}
	if c.join != nil && ce.system == "gpu_scheduler" {
		c.join.fill(ev)
	}
	ts := binary.LittleEndian.Uint64(b[rawOffTs:])
	pidTgid := binary.LittleEndian.Uint64(b[rawOffPid:])
	ev.Time = int64(ts)
	ev.CPU = int32(binary.LittleEndian.Uint32(b[rawOffCPU:]))
	ev.PID = uint32(pidTgid >> 32)
	ev.TID = uint32(pidTgid)
	ev.Comm = c.comms.FromC(unsafe.Slice((*int8)(unsafe.Pointer(&b[rawOffComm])), 16))
	return nil
}
