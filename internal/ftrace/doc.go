// Package ftrace is the decode stage: ftrace text — tracefs `trace` / `trace_pipe` output
// and `trace-cmd report` output — one line at a time, and the raw trace entries the live
// source's classic tracepoints copy, into event.Event values.
//
// A line is split into its header (comm, tid, optional TGID column, optional CPU column,
// optional irq-flags/latency column, timestamp) and the event name and payload
// (line.go). The payload is matched against the kernel's own TP_printk formats for that
// event, every generation of them, listed in one table (internal/eventdef, flattened by table.go) and compiled into
// byte-scanning templates (printk.go); the captured values go to Event fields by name
// (fields.go). No regexp, no per-line allocation beyond the strings an Event must hold,
// and those are interned. A raw entry is decoded with its event's tracefs format file
// (formatfile.go): each print argument bound to its field (entryprint.go) and read from
// the entry as the conversion prints it, then the same table and rules fill the Event
// (entry.go, values.go); no text is printed. One reading of printk formats serves both
// (printkfmt.go).
//
// Decisions a reader of the output should know:
//   - Values are decoded as the line prints them. The assembler does the joining (for
//     amdgpu: the job's fence is the scheduler's finished fence; the scheduled fence
//     signalled at run time is context−1).
//   - One exception: amdgpu ≤5.4 prints ring_name as a raw pointer in trace-cmd output
//     (the field was a char*); then Ring takes the timeline name, which on amdgpu is the
//     ring's scheduler name (AMDGPU_JOB_GET_TIMELINE_NAME → sched->name).
//   - Events we know but do not decode (drm_vblank_event, amdgpu_vm_flush, i915
//     execute/notify, …; see internal/eventdef/table.go) are counted in SourceStats.Unknown like truly
//     unknown events, because SourceStats.Unknown is where every skipped event must be
//     counted; Known tells the two apart.
//   - CPU is -1 when the line has no CPU column (trace-cmd's short form). PID is the
//     TGID column when present, else 0. A comm printed as "<...>" becomes "".
//   - Lines that are not events (headers, "cpus=4", "CPU 0 is empty", blank lines) are
//     counted by Headers(), not as malformed. "CPU:N [LOST n EVENTS]" adds n to Lost and,
//     when it names its CPU, is an EventsLost event at the time of the line before it.
//   - The latency format (options/latency-format, ftrace_dump in the kernel log) is read
//     too (latency.go); its plain form's times are microseconds since the buffer's start.
package ftrace
