// Package eventdef is the one table of the kernel events ghostdriver reads: every name an
// event has been printed under in each kernel generation, its print formats and which
// Event field each printk argument fills, the point of a job's critical path it measures
// and how the assembler applies it, and, for drivers' own events, the live hook that
// follows it (bpf/drivers.c). The text decoder (internal/ftrace), the live loader and
// decoder (internal/probe), the assembler's per-driver rules (internal/assemble) and the
// per-driver table of docs/stages.md all read it; nothing about a driver event is stated
// anywhere else except the BPF program body that reads the driver's structures.
//
// It imports only internal/event, so every stage of the data flow may import it.

package eventdef

import "github.com/ghostdriver/ghostdriver/internal/event"

// Format is one print format of an event family: the TP_printk string verbatim (or, for
// syscalls in tracefs, the text the kernel's syscall printer writes), and the printk
// arguments in order, named by the Event field they fill (internal/ftrace/fields.go:
// argNames; "_" skips one).
type Format struct {
	Printk string
	Args   string
	Src    string // where the format comes from (commit, kernel version, capture)
}

// Family is a set of events that share their print formats across generations.
type Family struct {
	Name    string
	Formats []Format
}

// Name is one name an event is printed under, and the kernels that print it.
type Name struct {
	Name    string // as printed after the timestamp
	Kernels string // which kernels, with the source ("" when every kernel of the event)
}

// Event is one row of the table: an event under every name it has had. A row whose Kind
// is event.KindUnknown is known and deliberately not decoded (Note says why); the decoder
// counts it in Unknown.
type Event struct {
	Names      []Name
	Tracepoint string     // Event.Name, when the line prints another name (syscall printer, trace_marker)
	Kind       event.Kind // the normalised kind it decodes to
	// KindName defines Kind, a driver's own kind, and is its name (ghostdriver.event.kind):
	// internal/event's driver kinds are generated from the rows that have one (kindgen,
	// go generate ./internal/event). Empty for a kind internal/event declares itself.
	KindName string
	Driver   string  // the GPU driver of a driver's own event (Event.Driver)
	System   string  // TRACE_SYSTEM of a driver's own event (tracefs events/<System>/<name>)
	Formats  *Family // nil for markers and for known-but-unused events
	Note     string  // why a known event is not decoded, or what else to know

	// Points are the points of the job's critical path this event measures (the first
	// two are applied by Role; an event without Role is applied by its own code in
	// internal/assemble, named in Rule).
	Points []Point
	Role   *Role
	Rule   string // what the event does to its job, in a phrase (docs/stages.md)

	// Hook is the live hook of a driver's own event; nil for the scheduler, dma_fence,
	// syscall and interrupt events, whose ladders are internal/probe/hooks.go's.
	Hook *Hook
}

// Role is how the assembler's generic driver rule (internal/assemble/native.go) applies
// an event: the points it sets with this precedence, which of the three events that
// make a job complete it is, and whether it may open a job.
type Role struct {
	Prio    uint8 // precedence over other hooks of the same point (higher wins)
	Seen    Seen  // SeenQueue, SeenRun, SeenDone, or 0
	Creates bool  // may open a job (queue- and run-like events; never completion events)
}

// Seen flags the three events that make a job completed.
type Seen uint8

const (
	SeenQueue Seen = 1 << iota
	SeenRun
	SeenDone
)

// Hook is the live side of a driver event: the value its records carry in struct
// record's hook (the enum in bpf/include/driver_hooks.h, generated from this table), the
// tracepoint it attaches to (one of the row's names: the newest), and which kernels have
// that tracepoint. Its programs are named by rule, BTFProgram and ClassicProgram: the
// tp_btf program is written in bpf/drivers.c (it reads the driver's structures and sends a
// struct record); the classic-tracepoint twin, generated with the enum, sends the raw
// entry (struct raw_record), which internal/ftrace decodes with the event's tracefs
// format file and the row's argument names.
type Hook struct {
	Value   uint16
	Event   string
	Kernels string
}

// Hook values (enum hook, bpf/include/ghostdriver.h): the core's hooks are below
// FirstDriverHook and in 80..89 (the process lifecycle); each driver takes a block of ten
// from FirstDriverHook (amdgpu 40, i915 50, xe 60, msm 70, virtio_gpu 90, v3d 100, vc4
// 110; the next driver 120, and so on up to 250). User space looks a record's hook up in
// arrays of MaxHookValue entries (internal/probe), so every value is below it; the records
// carry the value in 16 bits (ioctl_enter_record in 8: only the core's ioctl hooks use it).
// TestHookValues checks all of it without root.
const (
	FirstDriverHook = 40
	MaxHookValue    = 256
)

// HookBlock is the block of ten hook values a hook value is in (its value rounded down to ten).
func HookBlock(v uint16) uint16 { return v - v%10 }

// BTFProgram is the name of the hook's tp_btf program (bpf/drivers.c; bpf2go's name).
func (h *Hook) BTFProgram() string { return "tpbtf_" + h.Event }

// ClassicProgram is the name of the hook's classic-tracepoint program (raw entry copy).
func (h *Hook) ClassicProgram() string { return "tp_" + h.Event }

// Enum is the hook's name in bpf/include/driver_hooks.h.
func (h *Hook) Enum() string { return "HOOK_" + upper(h.Event) }

func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

// Events returns every row, in table order.
func Events() []Event { return events }

// Drivers returns the rows of drivers' own events (Driver set), in table order.
func Drivers() []Event {
	var out []Event
	for _, e := range events {
		if e.Driver != "" {
			out = append(out, e)
		}
	}
	return out
}

// Hooks returns the rows that have a live hook, in table order.
func Hooks() []Event {
	var out []Event
	for _, e := range events {
		if e.Hook != nil {
			out = append(out, e)
		}
	}
	return out
}
