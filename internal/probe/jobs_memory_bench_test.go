//go:build linux

package probe

// Memory per pending job in jobs mode (BENCHMARKS.md, "Per-job records in the kernel").
// Kernel: the state maps as the kernel itself accounts them (the `memlock` line of each
// map's fdinfo: htab_map_mem_usage), with no job pending and with GHOSTDRIVER_JOBMEM_JOBS
// (1000) jobs pending, for this jobs.o as the loader creates it (BPF_F_NO_PREALLOC from
// 6.1) and preallocated, and for an older jobs.o (GHOSTDRIVER_JOBCOST_OLD, preallocated
// as it was) side by side. User space: what the reader holds for a pending job's ioctl-side records,
// as decoded events (what jobs_live.go held before) and as packed samples (jobs_held.go),
// by arithmetic and by the Go heap.

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
	"go.uber.org/zap"

	"github.com/ghostdriver/ghostdriver/internal/event"
)

// mapMemlock is the memlock line of a map's fdinfo (bytes the kernel charges for it).
func mapMemlock(t *testing.T, m *ebpf.Map) uint64 {
	f, err := os.Open(fmt.Sprintf("/proc/self/fdinfo/%d", m.FD()))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "memlock:"); ok {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("map fd %d: no memlock in fdinfo", m.FD())
	return 0
}

// It only runs when GHOSTDRIVER_JOBMEM_OUT names a TSV file.
func TestJobStateMemory(t *testing.T) {
	out := os.Getenv("GHOSTDRIVER_JOBMEM_OUT")
	if out == "" {
		t.Skip("benchmark: set GHOSTDRIVER_JOBMEM_OUT=FILE")
	}
	requireRoot(t)
	pending := 1000
	if v, err := strconv.Atoi(os.Getenv("GHOSTDRIVER_JOBMEM_JOBS")); err == nil && v > 0 {
		pending = v
	}
	dfSize := int(kernelStruct(t, "dma_fence").Size)
	l := fakeLayout73(dfSize, -1)
	df := kernelStruct(t, "dma_fence")
	ctxOff, seqOff, opsOff := memberOffset(t, df, "context"), memberOffset(t, df, "seqno"), memberOffset(t, df, "ops")
	s := newScratch(t)
	const jobAt, fenceAt, hwAt, schedAt, ringAt = 0, 96, 560, 700, 780
	a := func(off int) uint64 { return s.addr + uint64(off) }
	s.put64(fenceAt+opsOff, realOps.scheduled)
	s.put64(fenceAt+l.fenceFinished+opsOff, realOps.finished)
	s.put64(hwAt+opsOff, realOps.drvHW)
	s.put64(jobAt+l.jobSched, a(schedAt))
	s.put64(jobAt+l.jobSFence, a(fenceAt))
	s.put64(fenceAt+l.fenceParent, a(hwAt))
	s.put64(fenceAt+l.fenceFinished+ctxOff, 1<<33|5)
	s.put64(hwAt+ctxOff, 600)
	s.put64(schedAt+l.schedName, a(ringAt))
	s.putStr(ringAt, "vgpu-ring0")

	newJobs, noPrealloc := familySpecs[famJobs], jobsNoPrealloc
	defer func() { familySpecs[famJobs], jobsNoPrealloc = newJobs, noPrealloc }()
	type variant struct {
		spec       func() (*ebpf.CollectionSpec, error)
		noPrealloc bool
	}
	variants := map[string]variant{"jobs": {newJobs, noPrealloc}, "jobs-prealloc": {newJobs, false}}
	if old := os.Getenv("GHOSTDRIVER_JOBCOST_OLD"); old != "" {
		variants["jobs-old"] = variant{func() (*ebpf.CollectionSpec, error) { return ebpf.LoadCollectionSpec(old) }, false}
	}
	names := make([]string, 0, len(variants))
	for n := range variants {
		names = append(names, n)
	}
	sort.Strings(names)

	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fmt.Fprintln(f, "variant\tmap\tmax_entries\tmemlock_0_pending\tmemlock_n_pending\tn_pending\tbytes_per_pending_job")
	for _, name := range names {
		familySpecs[famJobs], jobsNoPrealloc = variants[name].spec, variants[name].noPrealloc
		cfg, _ := Config{Records: RecordsJobs}.withDefaults()
		ld := newLoader(cfg, zap.NewNop())
		ld.progOpts = ebpf.ProgramOptions{ExtraRelocationTargets: []*btf.Spec{drmSchedTypes(t, l)}}
		if err := ld.loadCommon(); err != nil {
			t.Fatal(err)
		}
		fam, err := ld.family(famJobs)
		if err != nil {
			t.Fatal(err)
		}
		var state []string // the maps that hold per-job state
		for m := range fam.maps {
			switch m {
			case "jobs", "running", "fence_roles", "hw_fences", "watched":
				state = append(state, m)
			}
		}
		sort.Strings(state)
		before := map[string]uint64{}
		for _, m := range state {
			before[m] = mapMemlock(t, fam.maps[m])
		}
		// Each job queued, run and given its hardware fence, as far as a job pending on
		// the GPU gets: its state entry, its run window's thread entry, its fence role.
		var progs []*ebpf.Program
		for _, p := range []string{"jobs_rawtp_drm_sched_job_queue", "jobs_rawtp_drm_sched_job_run", "jobs_rawtp_dma_fence_init", "jobs_rawtp_dma_fence_signaled"} {
			prog, err := ld.loadProgram(fam, p, rung{})
			if err != nil {
				t.Fatalf("%s %s: %v", name, p, err)
			}
			progs = append(progs, prog)
		}
		for seq := uint64(1); seq <= uint64(pending); seq++ {
			s.put64(fenceAt+ctxOff, 1<<33|4)
			s.put64(fenceAt+seqOff, seq)
			s.put64(fenceAt+l.fenceFinished+seqOff, seq)
			s.put64(hwAt+seqOff, seq)
			s.flush(t)
			for i, args := range [][]uint64{{a(jobAt), 0}, {a(jobAt), 0}, {a(hwAt)}, {a(fenceAt)}} {
				if _, err := progs[i].Run(&ebpf.RunOptions{Context: args}); err != nil {
					t.Fatal(err)
				}
			}
		}
		var n int
		var it = fam.maps["jobs"].Iterate()
		var k jobsFenceKey
		var v jobsJobRecord
		for it.Next(&k, &v) {
			n++
		}
		if n != pending {
			t.Errorf("%s: %d jobs in the map, want %d pending", name, n, pending)
		}
		for _, m := range state {
			after := mapMemlock(t, fam.maps[m])
			fmt.Fprintf(f, "%s\t%s\t%d\t%d\t%d\t%d\t%.1f\n", name, m, fam.maps[m].MaxEntries(), before[m], after, pending,
				(float64(after)-float64(before[m]))/float64(pending))
			t.Logf("%-16s %-12s %6d entries: %9d B idle, %9d B with %d pending", name, m, fam.maps[m].MaxEntries(), before[m], after, pending)
		}
		for _, p := range progs {
			p.Close()
		}
		ld.objs.close()
	}
}

// pendingJobSamples are the per-event records a 6.17+ job with one BO validation function
// sends before its job record (held while it is pending), with the fields their programs
// fill: bpf/syscalls.c fentry_drm_ioctl + emit_ioctl_exit, bpf/funcs.c fentry/fexit
// ttm_bo_validate and fexit run_job (rec_reserve: ts, pid_tgid, cpu, hook, comm). No
// application trace context (ctx_tier 0: three words more when there is one).
func pendingJobSamples(i uint64) [][]byte {
	ts := 1_000_000 + i*1000
	pid := uint64(4242)<<32 | 4243
	comm := cstr16("vgpu_app")
	enter := commonIoctlEnterRecord{Ts: ts, PidTgid: pid, Arg: 0x7ffc12340000, Fd: -1, Cmd: 0xc0186440,
		Cpu: 1, Hook: uint8(commonHookHOOK_DRM_IOCTL_ENTER), Comm: comm, Driver: cstr16("vgpu")}
	boEnter := commonRecord{Ts: ts + 10, PidTgid: pid, Cpu: 1, Hook: uint16(commonHookHOOK_BO_VALIDATE_ENTER), Comm: comm}
	boExit := commonRecord{Ts: ts + 20, PidTgid: pid, Cpu: 1, Hook: uint16(commonHookHOOK_BO_VALIDATE_EXIT), Comm: comm}
	exit := commonIoctlExitRecord{Ts: ts + 30, PidTgid: pid, Fd: -1, Cmd: 0xc0186440, Cpu: 1, Hook: uint16(commonHookHOOK_DRM_IOCTL_EXIT)}
	runExit := commonRecord{Ts: ts + 50, PidTgid: uint64(99)<<32 | 99, Ptr: 0xffff888055550000 + i*128, Ret: -0x777700000000 + int64(i)*64,
		FenceCtx: 1<<33 | 5, FenceSeqno: i, HwCtx: 600, HwSeqno: i, Flags: uint8(commonRecordFlagRF_FENCE_WIDE | commonRecordFlagRF_HAS_FENCE | commonRecordFlagRF_HW_FENCE),
		Cpu: 0, Hook: uint16(commonHookHOOK_RUN_JOB_EXIT), Comm: cstr16("vgpu-ring0")}
	var out [][]byte
	for _, b := range [][]byte{sampleBytes(&enter), sampleBytes(&boEnter), sampleBytes(&boExit), sampleBytes(&exit), sampleBytes(&runExit)} {
		out = append(out, append([]byte(nil), b...))
	}
	return out
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// It only runs when GHOSTDRIVER_JOBMEM_OUT names a TSV file (this writes FILE.user).
func TestJobsHeldMemory(t *testing.T) {
	out := os.Getenv("GHOSTDRIVER_JOBMEM_OUT")
	if out == "" {
		t.Skip("benchmark: set GHOSTDRIVER_JOBMEM_OUT=FILE")
	}
	const jobs = 20_000
	var samples [][]byte
	for i := uint64(0); i < jobs; i++ {
		samples = append(samples, pendingJobSamples(i)...)
	}
	f, err := os.Create(out + ".user")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fmt.Fprintln(f, "representation\tpending_jobs\tsamples\tsample_bytes\theld_bytes_by_length\theap_bytes\theld_bytes_per_job\theap_bytes_per_job")
	raw := 0
	for _, b := range samples {
		raw += len(b)
	}
	for round := 1; round <= 3; round++ {
		// before: every sample decoded at arrival into the held slice
		base := heapInUse()
		d := newJobDecoder(&decoder{})
		var held []event.Event
		for _, b := range samples {
			held = d.decode(b, held, func(n string, err error) { t.Fatalf("%s: %v", n, err) })
		}
		held = held[:len(held):len(held)] // the length, as a reader that sized it exactly would
		oldLen := len(held) * int(unsafe.Sizeof(event.Event{}))
		oldHeap := heapInUse() - base
		runtime.KeepAlive(held)
		held = nil

		// after: the packed samples
		base = heapInUse()
		r := &jobsReader{dec: newJobDecoder(&decoder{})}
		for _, b := range samples {
			r.hold(b)
		}
		newLen := r.held.bytes()
		newHeap := heapInUse() - base
		runtime.KeepAlive(r)
		if r.held.items() != len(samples) {
			t.Fatalf("held %d items of %d samples", r.held.items(), len(samples))
		}
		// both give the same events
		var got []event.Event
		r.handOver(1<<63-1, nil, func(b []event.Event) { got = append(got, b...) })
		if len(got) != len(samples) {
			t.Fatalf("handed over %d events of %d", len(got), len(samples))
		}
		for name, v := range map[string][2]int{"decoded events (before)": {oldLen, int(oldHeap)}, "packed samples (after)": {newLen, int(newHeap)}} {
			fmt.Fprintf(f, "%s\t%d\t%d\t%d\t%d\t%d\t%.0f\t%.0f\n", name, jobs, len(samples), raw, v[0], v[1],
				float64(v[0])/jobs, float64(v[1])/jobs)
			t.Logf("round %d %-24s %6.0f B/pending job by length, %6.0f by heap", round, name, float64(v[0])/jobs, float64(v[1])/jobs)
		}
	}
}

// The reader's CPU for the held samples, both ways side by side (go test -bench
// JobsHold -run ^$): decoded at arrival and copied out at hand-over (before), packed at
// arrival and unpacked + decoded at hand-over (after); per pending job's five samples.
func BenchmarkJobsHold(b *testing.B) {
	const jobs = 1000
	var samples [][]byte
	for i := uint64(0); i < jobs; i++ {
		samples = append(samples, pendingJobSamples(i)...)
	}
	b.Run("decoded", func(b *testing.B) {
		d := newJobDecoder(&decoder{})
		var held, out []event.Event
		for n := 0; n < b.N; n++ {
			held = held[:0]
			for _, s := range samples {
				held = d.decode(s, held, func(string, error) {})
			}
			out = append(out[:0], held...)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*jobs), "ns/job")
	})
	b.Run("packed", func(b *testing.B) {
		r := &jobsReader{dec: newJobDecoder(&decoder{})}
		var out []event.Event
		for n := 0; n < b.N; n++ {
			for _, s := range samples {
				r.hold(s)
			}
			out = r.held.take(1<<63-1, out[:0], r.decodeSample)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*jobs), "ns/job")
	})
}
