// The classic-tracepoint rung's records decoded by the source: a hook's raw copy of an
// entry, with the record's header, through its event's format (internal/ftrace decodes
// the entry: its tests cover the format files, the printer and the entry's values), the
// rungs' table, and the join of <= 6.16 scheduler pointers to fence keys.

package probe

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"unsafe"

	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/eventdef"
	"github.com/ghostdriver/ghostdriver/internal/ftrace"
)

// formatBlock is one event's format text in a testdata file of "## system: S" blocks.
type formatBlock struct{ system, text string }

// readFormats reads internal/ftrace/testdata/formats/<file>: format files of several
// events, each after a "## system: <system>" line (the decoder's tests read them too).
func readFormats(t testing.TB, file string) map[string]formatBlock {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "ftrace", "testdata", "formats", file))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]formatBlock{}
	for _, blk := range strings.Split(string(b), "## system: ")[1:] {
		system, text, _ := strings.Cut(blk, "\n")
		name := ""
		for _, l := range strings.Split(text, "\n") {
			if v, ok := strings.CutPrefix(l, "name: "); ok {
				name = v
			}
		}
		out[name] = formatBlock{system: strings.TrimSpace(system), text: text}
	}
	return out
}

// entry builds a raw trace entry of f: common_type, then each value at its field's
// offset; strings of __data_loc fields after the fixed part, as the kernel stores them.
func entry(t testing.TB, f *ftrace.Format, vals map[string]any) []byte {
	t.Helper()
	raw := make([]byte, rawMax)
	// What a BPF program finds in the common fields: the kernel's pt_regs pointer.
	binary.LittleEndian.PutUint64(raw, 0xffffc90000a3fe58)
	dyn := 0
	for _, fld := range f.Fields {
		dyn = max(dyn, fld.Offset+fld.Size)
	}
	for name, v := range vals {
		fld := f.Field(name)
		if fld == nil {
			t.Fatalf("%s has no field %s", f.Name, name)
		}
		switch v := v.(type) {
		case string:
			switch {
			case fld.DataLoc:
				binary.LittleEndian.PutUint32(raw[fld.Offset:], uint32(len(v)+1)<<16|uint32(dyn))
				copy(raw[dyn:], v+"\x00")
				dyn += len(v) + 1
			case fld.Array:
				copy(raw[fld.Offset:fld.Offset+fld.Size], v)
			default:
				t.Fatalf("%s.%s (%s) is not a string field", f.Name, name, fld.CType)
			}
		case uint64:
			for i := 0; i < fld.Size; i++ {
				raw[fld.Offset+i] = byte(v >> (8 * i))
			}
		case int64:
			for i := 0; i < fld.Size; i++ {
				raw[fld.Offset+i] = byte(uint64(v) >> (8 * i))
			}
		default:
			t.Fatalf("value %T", v)
		}
	}
	return raw
}

// rawSample is a raw_record ring buffer sample.
func rawSample(hook commonHook, ts, pidTgid uint64, cpu uint32, comm string, raw []byte) []byte {
	r := commonRawRecord{Ts: ts, PidTgid: pidTgid, Cpu: cpu, Hook: uint16(hook), RawLen: uint16(rawMax)}
	setCString(r.Comm[:], comm)
	copy(r.Raw[:], raw)
	return append([]byte(nil), unsafe.Slice((*byte)(unsafe.Pointer(&r)), rawRecordSize)...)
}

// Two events of a real amdgpu trace through the whole record path: entries built with
// the values of real lines of the same trace decode to the event the text decoder makes
// of the real line, with the record's time, task and CPU (internal/ftrace's
// TestPrinterRendersRealLines checks the rendering of the same entries).
func TestClassicRecordPath(t *testing.T) {
	blocks := readFormats(t, "gpuvis_amdgpu_linux-4.11.txt")
	cases := []struct {
		event string
		vals  map[string]any
		line  string // a real line of the capture
	}{{
		event: "amdgpu_cs_ioctl",
		vals: map[string]any{"sched_job_id": uint64(3489726), "timeline": "gfx", "context": uint64(4929), "seqno": uint64(3200),
			"fence": uint64(0xffff91cb1ab1b000), "ring_name": uint64(0xffff91cb1ab1bdd0), "num_ibs": uint64(1)},
		line: "    RenderThread-25155 [003] 630659.133157: amdgpu_cs_ioctl:      sched_job=3489726, timeline=gfx, context=4929, seqno=3200, ring_name=ffff91cb1ab1bdd0, num_ibs=1",
	}, {
		event: "amdgpu_sched_run_job",
		vals: map[string]any{"sched_job_id": uint64(1892797), "timeline": "sdma0", "context": uint64(123), "seqno": uint64(1735030),
			"ring_name": uint64(0xffff91cb1ab1d170), "num_ibs": uint64(1)},
		line: "           sdma0-199   [003] 630659.230528: amdgpu_sched_run_job: sched_job=1892797, timeline=sdma0, context=123, seqno=1735030, ring_name=ffff91cb1ab1d170, num_ibs=1",
	}}
	// The whole record path for the two events of the rung.
	for _, c := range cases {
		ce, err := newClassicEvent("amdgpu", c.event, blocks[c.event].text)
		if err != nil {
			t.Fatal(err)
		}
		h, ok := classicHook(c.event)
		if !ok {
			t.Fatalf("no hook named %s", c.event)
		}
		var evs classicEvents
		evs.add(h, ce)
		d := decoder{classic: newClassicDecoder(&evs)}

		var want event.Event
		if !ftrace.NewDecoder().Decode([]byte(c.line), 1, &want) {
			t.Fatalf("the text decoder does not read %q", c.line)
		}
		// The record's header: the line's task, CPU and time (ns), and a TGID the
		// line does not show.
		comm, tid := want.Comm, uint64(want.TID)
		ts := uint64(want.Time) + 789 // ns the line's µs cannot show
		var got event.Event
		if err := d.decode(rawSample(h, ts, 25150<<32|tid, uint32(want.CPU), comm, entry(t, ce.layout(), c.vals)), &got); err != nil {
			t.Fatal(err)
		}
		if got.PID != 25150 || got.Time != int64(ts) {
			t.Errorf("%s: pid %d time %d, want the record's 25150, %d", c.event, got.PID, got.Time, ts)
		}
		got.PID, got.Time = 0, want.Time
		if got != want {
			t.Errorf("%s:\n got %+v\nwant %+v", c.event, got, want)
		}
		if want.Ring != "gfx" && want.Ring != "sdma0" {
			t.Errorf("%s: ring %q: the printed char* should have given way to the timeline", c.event, want.Ring)
		}
	}
}

// layout is the event's format file as parsed (the entry's fields).
func (c *classicEvent) layout() *ftrace.Format { return c.format.Printer().Format() }

// gpu_scheduler formats of both generations (written from the history of the events,
// testdata/formats/gpu_scheduler_*.txt): the rendered line decodes to what the text
// decoder makes of the line the kernel prints with the same values.
func TestClassicSchedulerFormats(t *testing.T) {
	cases := []struct {
		file, event string
		vals        map[string]any
		payload     string
	}{
		{"gpu_scheduler_6.16.txt", "drm_sched_job",
			map[string]any{"entity": uint64(0xffff8881076f0d51), "id": uint64(1), "fence": uint64(0xffff88818dd56028), "name": "gfx_0.0.0", "job_count": uint64(0), "hw_job_count": int64(-1)},
			"entity=ffff8881076f0d51, id=1, fence=ffff88818dd56028, ring=gfx_0.0.0, job count:0, hw job count:-1"},
		{"gpu_scheduler_6.16.txt", "drm_run_job",
			map[string]any{"entity": uint64(0xffff8881076f0d51), "id": uint64(51756), "fence": uint64(0xffff88818dd56028), "name": "vgpu-ring1", "job_count": uint64(2), "hw_job_count": int64(1)},
			"entity=ffff8881076f0d51, id=51756, fence=ffff88818dd56028, ring=vgpu-ring1, job count:2, hw job count:1"},
		{"gpu_scheduler_6.16.txt", "drm_sched_process_job",
			map[string]any{"fence": uint64(0xffff88818dd56028)},
			"fence=ffff88818dd56028 signaled"},
		{"gpu_scheduler_6.16.txt", "drm_sched_job_wait_dep",
			map[string]any{"name": "gfx_0.0.0", "id": uint64(7), "fence": uint64(0xffff888100000040), "ctx": uint64(664), "seqno": uint64(17099)},
			"job ring=gfx_0.0.0, id=7, depends fence=ffff888100000040, context=664, seq=17099"},
		{"gpu_scheduler_6.17.txt", "drm_sched_job_queue",
			map[string]any{"dev": "0000:04:00.0", "fence_context": uint64(401), "fence_seqno": uint64(1), "name": "gfx_0.0.0", "job_count": uint64(0), "hw_job_count": int64(1), "client_id": uint64(13)},
			"dev=0000:04:00.0, fence=401:1, ring=gfx_0.0.0, job count:0, hw job count:1, client_id:13"},
		{"gpu_scheduler_6.17.txt", "drm_sched_job_run",
			map[string]any{"dev": "vgpu", "fence_context": uint64(1) << 40, "fence_seqno": uint64(1<<33 + 5), "name": "vgpu-ring0", "job_count": uint64(0), "hw_job_count": int64(1), "client_id": uint64(2)},
			"dev=vgpu, fence=1099511627776:8589934597, ring=vgpu-ring0, job count:0, hw job count:1, client_id:2"},
		{"gpu_scheduler_6.17.txt", "drm_sched_job_done",
			map[string]any{"fence_context": uint64(401), "fence_seqno": uint64(1)},
			"fence=401:1 signaled"},
		{"gpu_scheduler_6.17.txt", "drm_sched_job_add_dep",
			map[string]any{"fence_context": uint64(10), "fence_seqno": uint64(5), "ctx": uint64(8), "seqno": uint64(3)},
			"fence=10:5 depends on fence=8:3"},
		{"gpu_scheduler_6.17.txt", "drm_sched_job_unschedulable",
			map[string]any{"fence_context": uint64(10), "fence_seqno": uint64(5), "ctx": uint64(8), "seqno": uint64(3)},
			"fence=10:5 depends on unsignalled fence=8:3"},
	}
	// Where a guest of the virtual GPU rig gave the real format files of a generation,
	// the same cases run on them too.
	real := map[string]string{"gpu_scheduler_6.16.txt": "guest_linux-6.1_gpu_scheduler.txt",
		"gpu_scheduler_6.17.txt": "guest_linux-7.3_gpu_scheduler.txt"}
	for _, c := range cases {
		if r, ok := real[c.file]; ok {
			c.file = r
			cases = append(cases, c)
		}
	}
	for _, c := range cases {
		t.Run(c.file+"/"+c.event, func(t *testing.T) {
			blocks := readFormats(t, c.file)
			ce, err := newClassicEvent("gpu_scheduler", c.event, blocks[c.event].text)
			if err != nil {
				t.Fatal(err)
			}
			raw := entry(t, ce.layout(), c.vals)
			payload, err := ce.format.Printer().AppendPayload(nil, raw)
			if err != nil || string(payload) != c.payload {
				t.Fatalf("rendered %q (%v)\nwant     %q", payload, err, c.payload)
			}
			line := "  kworker/u8:1-77      [001] d..1.  1234.567890: " + c.event + ": " + c.payload
			var want event.Event
			if !ftrace.NewDecoder().Decode([]byte(line), 1, &want) {
				t.Fatalf("the text decoder does not read %q", line)
			}
			h, _ := classicHook(c.event)
			var evs classicEvents
			evs.add(h, ce)
			d := decoder{classic: newClassicDecoder(&evs)}
			var got event.Event
			if err := d.decode(rawSample(h, 1234567890000, 77, 1, "kworker/u8:1", raw), &got); err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("\n got %+v\nwant %+v", got, want)
			}
			if got.Kind != hookTable[h].kind || got.Name != hookTable[h].name {
				t.Errorf("kind %v name %q, the hook table says %v %q", got.Kind, got.Name, hookTable[h].kind, hookTable[h].name)
			}
		})
	}
}

// The driver events of real 6.1 and 7.3 kernels (amdgpu, i915, and xe on 7.3, loaded
// without hardware in the rig's guests): every one with a classic rung compiles and is
// read by the text decoder, and a rendered entry decodes to the job identity the event
// prints.
func TestClassicDriverFormatsOfRealKernels(t *testing.T) {
	rungs := map[string]bool{}
	for _, def := range hookDefs(DefaultConfig()) {
		if def.hasClassic() {
			rungs[def.event] = true
		}
	}
	type check struct {
		file, event string
		vals        map[string]any
		check       func(event.Event) bool
	}
	compiled := map[string]map[string]*classicEvent{}
	for file, want := range map[string]int{"guest_linux-6.1_drivers.txt": 7, "guest_linux-7.3_drivers.txt": 13} {
		compiled[file] = map[string]*classicEvent{}
		for name, blk := range readFormats(t, file) {
			if !rungs[name] {
				continue // xe_sched_job_ban, xe_hw_fence_try_signal, ...: not hooked
			}
			ce, err := newClassicEvent(blk.system, name, blk.text)
			if err != nil {
				t.Errorf("%s: %s: %v", file, name, err)
				continue
			}
			compiled[file][name] = ce
		}
		if len(compiled[file]) != want {
			t.Errorf("%s: %d driver events compiled, want the %d of the guest's formats with a rung", file, len(compiled[file]), want)
		}
	}
	for _, c := range []check{
		{"guest_linux-6.1_drivers.txt", "amdgpu_cs_ioctl", map[string]any{"sched_job_id": uint64(3), "timeline": "gfx_0.0.0", "context": uint64(5),
			"seqno": uint64(9), "fence": uint64(0xffff888104a2c0c8), "ring": "gfx_0.0.0", "num_ibs": uint64(1)},
			func(e event.Event) bool {
				return e.Kind == event.JobQueue && e.Fence == event.FenceKey{Context: 5, Seqno: 9} && !e.FenceWide && e.JobID == 3 && e.Ring == "gfx_0.0.0"
			}},
		{"guest_linux-6.1_drivers.txt", "i915_request_retire", map[string]any{"dev": uint64(0), "ctx": uint64(42), "class": uint64(0), "instance": uint64(0), "seqno": uint64(7)},
			func(e event.Event) bool {
				return e.Kind == event.I915RequestRetire && e.Fence == event.FenceKey{Context: 42, Seqno: 7} && e.Ring == "0:0"
			}},
		{"guest_linux-7.3_drivers.txt", "amdgpu_cs_ioctl", map[string]any{"timeline": "gfx_0.0.0", "context": uint64(1) << 36, "seqno": uint64(9), "ring": "gfx_0.0.0", "num_ibs": uint64(1)},
			func(e event.Event) bool {
				return e.Kind == event.JobQueue && e.Fence == event.FenceKey{Context: 1 << 36, Seqno: 9} && e.FenceWide && e.Ring == "gfx_0.0.0" && e.Driver == "amdgpu"
			}},
		{"guest_linux-7.3_drivers.txt", "i915_request_add", map[string]any{"dev": uint64(0), "ctx": uint64(42), "class": uint64(1), "instance": uint64(2), "seqno": uint64(7), "tail": uint64(128)},
			func(e event.Event) bool {
				return e.Kind == event.I915RequestAdd && e.Fence == event.FenceKey{Context: 42, Seqno: 7} && e.Ring == "1:2"
			}},
		{"guest_linux-7.3_drivers.txt", "xe_sched_job_run", map[string]any{"dev": "0000:00:02.0", "fence": uint64(0xffff888104a2c0c8), "seqno": uint64(3), "lrc_seqno": uint64(3),
			"gt_id": uint64(0), "guc_id": uint64(5), "batch_addr": uint64(0x1a0000), "guc_state": uint64(0), "flags": uint64(0), "error": int64(0)},
			func(e event.Event) bool {
				return e.Kind == event.XeSchedJobRun && e.FencePtr == 0xffff888104a2c0c8 && e.JobID == 0xffff888104a2c0c8 && e.Device == "0000:00:02.0"
			}},
		{"guest_linux-7.3_drivers.txt", "xe_hw_fence_signal", map[string]any{"dev": "0000:00:02.0", "ctx": uint64(0x21), "seqno": uint64(3), "fence": uint64(0xffff888104a2c000)},
			func(e event.Event) bool {
				return e.Kind == event.XeHwFenceSignal && e.Fence == event.FenceKey{Context: 0x21, Seqno: 3} && e.FencePtr == 0xffff888104a2c000
			}},
	} {
		ce := compiled[c.file][c.event]
		if ce == nil {
			t.Errorf("%s: %s did not compile", c.file, c.event)
			continue
		}
		h, _ := classicHook(c.event)
		var evs classicEvents
		evs.add(h, ce)
		d := decoder{classic: newClassicDecoder(&evs)}
		var ev event.Event
		err := d.decode(rawSample(h, 1, 1, 0, "x", entry(t, ce.layout(), c.vals)), &ev)
		if err != nil || !c.check(ev) {
			t.Errorf("%s: %s: %+v %v", c.file, c.event, ev, err)
		}
	}
}

func TestClassicRecordErrors(t *testing.T) {
	blocks := readFormats(t, "gpu_scheduler_6.17.txt")
	ce, err := newClassicEvent("gpu_scheduler", "drm_sched_job_queue", blocks["drm_sched_job_queue"].text)
	if err != nil {
		t.Fatal(err)
	}
	var evs classicEvents
	evs.add(commonHookHOOK_DRM_SCHED_JOB_QUEUE, ce)
	d := decoder{classic: newClassicDecoder(&evs)}
	good := entry(t, ce.layout(), map[string]any{"dev": "d", "name": "r", "fence_context": uint64(1), "fence_seqno": uint64(2)})
	var ev event.Event
	if err := d.decode(rawSample(commonHookHOOK_DRM_SCHED_JOB_QUEUE, 1, 1, 0, "x", good), &ev); err != nil || ev.Fence.Seqno != 2 {
		t.Fatalf("good entry: %+v %v", ev, err)
	}
	// A hook without a classic event (no format loaded) is unknown, counted by name.
	if err := d.decode(rawSample(commonHookHOOK_DRM_SCHED_JOB_RUN, 1, 1, 0, "x", good), &ev); !errors.Is(err, errUnknownHook) || ev.Name != "hook(15)" {
		t.Errorf("hook without format: %+v %v", ev, err)
	}
	// A string said to lie past the copied bytes.
	long := append([]byte(nil), good...)
	binary.LittleEndian.PutUint32(long[20:], 40<<16|240)
	if err := d.decode(rawSample(commonHookHOOK_DRM_SCHED_JOB_QUEUE, 1, 1, 0, "x", long), &ev); !errors.Is(err, ftrace.ErrShortEntry) {
		t.Errorf("string beyond the copy: %v", err)
	}
	// A copy the program could not make.
	failed := rawSample(commonHookHOOK_DRM_SCHED_JOB_QUEUE, 1, 1, 0, "x", good)
	binary.LittleEndian.PutUint16(failed[rawOffLen:], 0)
	if err := d.decode(failed, &ev); !errors.Is(err, errClassicEntry) || !strings.Contains(err.Error(), "could not read") {
		t.Errorf("failed copy: %v", err)
	}
	// Without any classic program attached, a raw sample is an unknown hook.
	var plain decoder
	if err := plain.decode(rawSample(commonHookHOOK_DRM_SCHED_JOB_QUEUE, 1, 1, 0, "x", good), &ev); !errors.Is(err, errUnknownHook) {
		t.Errorf("no classic decoder: %v", err)
	}
	// The common path does not allocate; neither does the classic one once warm.
	rec := rawRecord(commonRecord{Hook: uint16(commonHookHOOK_DMA_FENCE_SIGNALED), Flags: uint8(commonRecordFlagRF_HAS_FENCE)})
	if n := testing.AllocsPerRun(100, func() { _ = d.decode(rec, &ev) }); n != 0 {
		t.Errorf("struct record: %v allocations per decode", n)
	}
	sample := rawSample(commonHookHOOK_DRM_SCHED_JOB_QUEUE, 1, 1, 0, "x", good)
	if n := testing.AllocsPerRun(100, func() { _ = d.decode(sample, &ev) }); n != 0 {
		t.Errorf("raw record: %v allocations per decode", n)
	}
}

// Every classic rung names a tracepoint program of the right system, and its event has
// a hook (the decoder finds the format by it).
func TestClassicRungs(t *testing.T) {
	systems := map[string]string{StageJobQueue: "gpu_scheduler", StageJobRun: "gpu_scheduler", StageJobDone: "gpu_scheduler",
		StageJobDependency: "gpu_scheduler"}
	for _, e := range eventdef.Hooks() {
		systems[e.Driver] = e.System
	}
	var events []string
	for _, def := range hookDefs(DefaultConfig()) {
		sys, want := systems[def.stage]
		if def.hasClassic() != want {
			t.Errorf("%s %s: classic rung %v", def.stage, def.event, def.hasClassic())
		}
		if !want {
			continue
		}
		last := def.rungs[len(def.rungs)-1]
		if !last.classic {
			t.Errorf("%s: the classic rung is not the last", def.event)
		}
		spec, err := familySpecs[last.family]()
		if err != nil {
			t.Fatal(err)
		}
		ps := spec.Programs[last.progs[0]]
		if ps == nil || ps.SectionName != "tracepoint/"+sys+"/"+def.event {
			t.Errorf("%s: program %+v", def.event, ps)
		}
		if _, ok := classicHook(def.event); !ok || !ftraceKnows(def.event) {
			t.Errorf("%s: no hook, or not an event the text decoder knows", def.event)
		}
		events = append(events, def.event)
	}
	sort.Strings(events)
	if len(events) != 48 {
		t.Errorf("%d events with a classic rung: %v", len(events), events)
	}
}

func ftraceKnows(name string) bool {
	k, ok := ftrace.Known(name)
	return ok && k != event.KindUnknown
}

// <= 6.16 scheduler events print the finished fence's pointer: the source gives them
// the 64-bit key the dma_fence hooks recorded for that pointer at dma_fence_init, and
// the dependency event (named by ring and id) the key of that job.
func TestClassicJoinsPointersToFenceKeys(t *testing.T) {
	blocks := readFormats(t, "gpu_scheduler_6.16.txt")
	var evs classicEvents
	ces := map[string]*classicEvent{}
	for _, name := range []string{"drm_sched_job", "drm_run_job", "drm_sched_process_job", "drm_sched_job_wait_dep"} {
		ce, err := newClassicEvent("gpu_scheduler", name, blocks[name].text)
		if err != nil {
			t.Fatal(err)
		}
		h, _ := classicHook(name)
		evs.add(h, ce)
		ces[name] = ce
	}
	d := decoder{classic: newClassicDecoder(&evs)}
	const finished, other = 0xffff888104a2c0c8, 0xffff888104a2d148
	key := event.FenceKey{Context: 1<<33 + 9, Seqno: 4}
	var ev event.Event
	for _, f := range []struct {
		ptr uint64
		key event.FenceKey
	}{{finished - 0x80, event.FenceKey{Context: key.Context - 1, Seqno: 4}}, {finished, key}} {
		init := fenceSample(commonFenceRecord{Hook: uint16(commonHookHOOK_DMA_FENCE_INIT), Ptr: f.ptr, FenceCtx: f.key.Context, FenceSeqno: f.key.Seqno,
			Flags: uint8(commonRecordFlagRF_HAS_FENCE | commonRecordFlagRF_FENCE_WIDE)})
		if err := d.decode(init, &ev); err != nil || ev.Kind != event.FenceInit {
			t.Fatal(ev, err)
		}
	}
	job := map[string]any{"entity": uint64(0xffff888100001000), "id": uint64(7), "fence": uint64(finished), "name": "vgpu-ring0",
		"job_count": uint64(0), "hw_job_count": int64(0)}
	decode := func(name string, vals map[string]any) event.Event {
		t.Helper()
		h, _ := classicHook(name)
		var ev event.Event
		if err := d.decode(rawSample(h, 5, 1, 0, "w", entry(t, ces[name].layout(), vals)), &ev); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return ev
	}
	for _, name := range []string{"drm_sched_job", "drm_run_job"} {
		if ev := decode(name, job); ev.Fence != key || !ev.FenceWide || ev.FencePtr != finished || ev.JobID != 7 {
			t.Errorf("%s: %+v", name, ev)
		}
	}
	if ev := decode("drm_sched_process_job", map[string]any{"fence": uint64(finished)}); ev.Fence != key || ev.Kind != event.JobDone {
		t.Errorf("done: %+v", ev)
	}
	dep := map[string]any{"name": "vgpu-ring0", "id": uint64(7), "fence": uint64(other), "ctx": uint64(20), "seqno": uint64(3)}
	if ev := decode("drm_sched_job_wait_dep", dep); ev.Fence != key || ev.Dep != (event.FenceKey{Context: 20, Seqno: 3}) {
		t.Errorf("wait_dep: %+v", ev)
	}
	// Nothing known: the event keeps only what it prints.
	dep["id"], dep["name"] = uint64(8), "vgpu-ring0"
	if ev := decode("drm_sched_job_wait_dep", dep); !ev.Fence.IsZero() {
		t.Errorf("wait_dep of an unknown job: %+v", ev)
	}
	job["fence"], job["id"] = uint64(other), uint64(9)
	if ev := decode("drm_sched_job", job); !ev.Fence.IsZero() || ev.FencePtr != other {
		t.Errorf("queue of an unseen fence: %+v", ev)
	}
}

// The rig's two schedulers, vgpu-ring0 and vgpu-ring1, number their jobs alike: the same
// id on both rings must keep both jobs' keys (the slot hash must see the last character).
func TestClassicJoinSameIDOnTwoRings(t *testing.T) {
	var j fenceJoin
	k0, k1 := event.FenceKey{Context: 21, Seqno: 5}, event.FenceKey{Context: 31, Seqno: 5}
	collide := 0
	for id := uint64(1); id <= 512; id++ {
		if jobSlot(id, "vgpu-ring0") == jobSlot(id, "vgpu-ring1") {
			collide++
		}
	}
	if collide > 2 { // 512 ids in 2048 slots: about 0.25 expected by chance
		t.Errorf("%d of 512 ids share a slot across the two rings", collide)
	}
	for id := uint64(1); id <= 64; id++ {
		if jobSlot(id, "vgpu-ring0") == jobSlot(id, "vgpu-ring1") {
			continue
		}
		j.fill(&event.Event{JobID: id, Ring: "vgpu-ring0", Fence: k0})
		j.fill(&event.Event{JobID: id, Ring: "vgpu-ring1", Fence: k1})
		e0, e1 := event.Event{JobID: id, Ring: "vgpu-ring0"}, event.Event{JobID: id, Ring: "vgpu-ring1"}
		j.fill(&e0)
		j.fill(&e1)
		if e0.Fence != k0 || e1.Fence != k1 {
			t.Errorf("id %d: ring0 → %v, ring1 → %v", id, e0.Fence, e1.Fence)
		}
	}
}
