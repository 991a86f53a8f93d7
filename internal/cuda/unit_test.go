package cuda

import "testing"

func TestNvidiaMajors(t *testing.T) {
	// /proc/devices of the H200 machine (VALIDATION.md).
	got := NvidiaMajors("Character devices:\n  1 mem\n195 nvidia\n195 nvidiactl\n238 nvidia-uvm\n241 nvidia-caps\n\nBlock devices:\n195 nvidia-fake\n")
	want := map[string]uint32{"nvidia": 195, "nvidiactl": 195, "nvidia-uvm": 238, "nvidia-caps": 241}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %d, want %d", k, got[k], v)
		}
	}
}

func TestProcAddressTarget(t *testing.T) {
	for sym, want := range map[string]string{
		"cuLaunchKernel": "cuLaunchKernel", "cuMemcpyHtoD": "cuMemcpyHtoD_v2", "cuCtxSynchronize": "cuCtxSynchronize",
		"cuLaunchKernel_ptsz": "cuLaunchKernel_ptsz", "cuMemsetD8": "cuMemsetD8_v2",
	} {
		id, ok := procAddressTarget(sym)
		if !ok || apis[id].Name != want {
			t.Errorf("%s → %v %v, want %s", sym, ok, apis[id].Name, want)
		}
	}
	if _, ok := procAddressTarget("cuModuleLoad"); ok {
		t.Error("cuModuleLoad is not hooked")
	}
}

func TestCookieRoundTrip(t *testing.T) {
	for id, a := range apis {
		c := cookie(id)
		got, ok := apiOfCookie(c | cookieEntryPoint)
		if !ok || got != id {
			t.Fatalf("%s: cookie %#x decodes to %d", a.Name, c, got)
		}
		if Loc(c>>16) != a.Stream || Loc(c>>32) != a.Bytes || Loc(c>>48) != a.Handle {
			t.Errorf("%s: locations lost in %#x", a.Name, c)
		}
	}
	if len(apis) > 0xfff {
		t.Fatal("API ids need more than 12 bits")
	}
}

func call(name string, pid, tid uint32, start, end int64, stream uint64, depth uint8) Call {
	return Call{API: apiByName[name], PID: pid, TID: tid, Start: start, End: end, Stream: stream, Depth: depth}
}

// An event sync takes only the work before the event's record; the rest stays open
// and is closed as unsynchronized by the watermark.
func TestAssemblerEventSync(t *testing.T) {
	var subs []*Submission
	a := NewAssembler(AssemblerConfig{FlushAfter: 1000}, func(s *Submission) { subs = append(subs, s) })
	rec := call("cudaEventRecordWithFlags", 1, 1, 30, 31, 7, 0)
	rec.Handle = 0xe
	sync := call("cudaEventSynchronize", 1, 2, 60, 90, 0xe, 0)
	a.Calls([]Call{
		call("cuLaunchKernel", 1, 1, 11, 12, 7, 1), // nested in the next
		call("cudaLaunchKernel", 1, 1, 10, 20, 7, 0),
		rec,
		call("cudaLaunchKernel", 1, 1, 40, 50, 7, 0),
		sync,
	})
	if len(subs) != 1 || subs[0].Launches != 1 || len(subs[0].Ops) != 2 || subs[0].Stream != 7 || subs[0].Scope != ScopeEvent {
		t.Fatalf("event submission %+v", subs)
	}
	if in := subs[0].Ops[0].Inner; len(in) != 1 || in[0].Name() != "cuLaunchKernel" {
		t.Errorf("inner calls %+v", in)
	}
	if subs[0].Start != 10 || subs[0].End != 90 || subs[0].Sync.End-subs[0].Sync.Start != 30 {
		t.Errorf("bounds %d→%d", subs[0].Start, subs[0].End)
	}
	a.Watermark(2000)
	if len(subs) != 2 || subs[1].Outcome != Unsynced || subs[1].Launches != 1 {
		t.Fatalf("leftover %+v", subs[len(subs)-1])
	}
	if a.Counts[ClassLaunch] != 2 || a.NestedCounts[ClassLaunch] != 1 {
		t.Errorf("counts %v nested %v", a.Counts, a.NestedCounts)
	}
}
