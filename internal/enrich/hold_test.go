// Hold: a job whose process's first read is in flight waits for it (bounded by MaxWait
// and MaxHeld), in order; jobs of processes already read are not delayed. The process
// reads are gated (a slow resolver); the expected context comes from the fake
// environment's literal TRACEPARENT, decoded here with encoding/hex.
package enrich

import (
	"encoding/hex"
	"sync"
	"testing"
	"time"

	"github.com/ghostdriver/ghostdriver/internal/assemble"
	"github.com/ghostdriver/ghostdriver/internal/ctxtier"
	"github.com/ghostdriver/ghostdriver/internal/metadata"
	"github.com/ghostdriver/ghostdriver/internal/tenant"
)

const (
	slowPID  = 51001 // its read waits for the gate
	readyPID = 51002 // read before the test's jobs
	otherPID = 51003 // also slow
)

// sink collects the jobs the enricher hands on, and how.
type sink struct {
	mu   sync.Mutex
	jobs []*assemble.Job
	late []bool // handed to later (another goroutine) rather than now
}

func (s *sink) now(j *assemble.Job)   { s.add(j, false) }
func (s *sink) later(j *assemble.Job) { s.add(j, true) }
func (s *sink) add(j *assemble.Job, late bool) {
	s.mu.Lock()
	s.jobs, s.late = append(s.jobs, j), append(s.late, late)
	s.mu.Unlock()
}

func (s *sink) snapshot() ([]*assemble.Job, []bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*assemble.Job(nil), s.jobs...), append([]bool(nil), s.late...)
}

func (s *sink) waitFor(t *testing.T, n int, within time.Duration) []*assemble.Job {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if js, _ := s.snapshot(); len(js) >= n {
			return js
		}
		time.Sleep(time.Millisecond)
	}
	js, _ := s.snapshot()
	t.Fatalf("%d jobs handed on after %v, want %d", len(js), within, n)
	return nil
}

// slowEnricher runs an enricher on a fake procfs in which the reads of slowPID and
// otherPID wait until open is called (at the latest at the test's end).
func slowEnricher(t *testing.T, cfg Config) (e *Enricher, fs procfs, open func()) {
	fs = procfs{t: t, root: t.TempDir()}
	tc := tenant.DefaultConfig()
	tc.ProcRoot, tc.SysRoot = fs.root, fs.root
	res := tenant.NewResolver(tc)
	e = New(cfg, res, &fakeKernel{}, nil)
	gate := make(chan struct{})
	e.read = func(pid uint32) (*tenant.Process, error) {
		if pid == slowPID || pid == otherPID {
			<-gate
		}
		return res.Process(pid)
	}
	var once sync.Once
	open = func() { once.Do(func() { close(gate) }) }
	t.Cleanup(func() { open(); e.Close() })
	fs.run(slowPID, 100, "trainer", "TRACEPARENT="+traceparent, "OTEL_SERVICE_NAME=trainer-svc")
	fs.run(otherPID, 100, "other", "OTEL_SERVICE_NAME=other-svc")
	fs.run(readyPID, 100, "server", "OTEL_SERVICE_NAME=server-svc")
	return e, fs, open
}

// traceparent's trace id, decoded from the literal.
func traceparentTraceID(t *testing.T) [16]byte {
	var id [16]byte
	if _, err := hex.Decode(id[:], []byte(traceparent[3:35])); err != nil {
		t.Fatal(err)
	}
	return id
}

func TestHoldUntilTheReadLands(t *testing.T) {
	e, _, open := slowEnricher(t, Config{MaxWait: 10 * time.Second})
	firstSight(e, readyPID)
	waitLoaded(t, e, readyPID)
	firstSight(e, slowPID) // its read is now in flight, stuck at the gate

	var s sink
	a1, b1, a2, b2 := jobAt(slowPID, 1000), jobAt(readyPID, 1100), jobAt(slowPID, 1200), jobAt(readyPID, 1300)
	for i, j := range []*assemble.Job{a1, b1, a2, b2} {
		e.Hold(j, s.now, s.later)
		// The ready process's jobs are handed on before Hold returns; the slow one's wait.
		js, late := s.snapshot()
		want := (i + 1) / 2
		if len(js) != want || (want > 0 && (js[want-1].PID != readyPID || late[want-1])) {
			t.Fatalf("after job %d: handed on %d jobs (%v), want %d of pid %d, at once", i, len(js), late, want, readyPID)
		}
	}
	if n := e.HeldJobs(); n != 2 {
		t.Fatalf("held %d jobs, want 2", n)
	}
	if st := e.Stats(); st.WaitedOut != 0 {
		t.Errorf("WaitedOut = %d: Hold must never wait on the caller's goroutine", st.WaitedOut)
	}

	open()
	js := s.waitFor(t, 4, 5*time.Second)
	_, late := s.snapshot()
	if js[2] != a1 || js[3] != a2 || !late[2] || !late[3] {
		t.Fatalf("held jobs handed on as %v (late %v), want a1 then a2, later", js[2:], late[2:])
	}
	trace := traceparentTraceID(t)
	for _, j := range []*assemble.Job{a1, a2} {
		if j.TraceID != trace || j.CtxTier != ctxtier.Traceparent {
			t.Errorf("held job: trace %x tier %d, want the process's TRACEPARENT %x", j.TraceID, j.CtxTier, trace)
		}
		if got := lookup(j.Resource, "service.name"); got != "trainer-svc" {
			t.Errorf("held job: service.name %q, want trainer-svc", got)
		}
	}
	if got := lookup(b1.Resource, "service.name"); got != "server-svc" {
		t.Errorf("ready process's job: service.name %q", got)
	}
	st := e.Stats()
	if st.Held != [numHoldOutcomes]uint64{HoldReadLanded: 2} || e.HeldJobs() != 0 {
		t.Errorf("hold outcomes %v, held now %d; want 2 read_landed, 0", st.Held, e.HeldJobs())
	}
	// Once read, the process's jobs go on at once.
	a3 := jobAt(slowPID, 1400)
	e.Hold(a3, s.now, s.later)
	if js, late := s.snapshot(); len(js) != 5 || js[4] != a3 || late[4] {
		t.Errorf("a job after the read was not handed on at once")
	}
}

// A read that does not land within MaxWait: each job goes on MaxWait after it was held,
// without the read's context, in order, counted.
func TestHoldBoundedByMaxWait(t *testing.T) {
	const wait = 60 * time.Millisecond
	e, _, _ := slowEnricher(t, Config{MaxWait: wait})
	firstSight(e, slowPID)
	var s sink
	a1, a2 := jobAt(slowPID, 1000), jobAt(slowPID, 2000)
	t1 := time.Now()
	e.Hold(a1, s.now, s.later)
	time.Sleep(wait / 2)
	t2 := time.Now()
	e.Hold(a2, s.now, s.later)

	var at [2]time.Duration
	for i := range at {
		s.waitFor(t, i+1, 5*time.Second)
		at[i] = time.Since([]time.Time{t1, t2}[i])
	}
	js, late := s.snapshot()
	if js[0] != a1 || js[1] != a2 || !late[0] || !late[1] {
		t.Fatalf("order %v, late %v", js, late)
	}
	for i, d := range at {
		if d < wait {
			t.Errorf("job %d went on %v after it was held, before MaxWait %v", i, d, wait)
		}
	}
	if a1.CtxTier != ctxtier.None || a1.Resource != nil {
		t.Errorf("a job released by the limit carries tier %d, resource %v: the read never landed", a1.CtxTier, a1.Resource)
	}
	if st := e.Stats(); st.Held != [numHoldOutcomes]uint64{HoldMaxWait: 2} {
		t.Errorf("hold outcomes %v, want 2 max_wait", st.Held)
	}
}

// MaxHeld bounds the jobs held over all processes: a job that finds the bound reached
// goes on at once, preceded by its process's held jobs (order kept), counted.
func TestHoldBoundedByMaxHeld(t *testing.T) {
	e, _, open := slowEnricher(t, Config{MaxWait: 10 * time.Second, MaxHeld: 2})
	firstSight(e, slowPID)
	firstSight(e, otherPID)
	var s sink
	a1, a2, c1, a3, c2 := jobAt(slowPID, 1000), jobAt(slowPID, 1100), jobAt(otherPID, 1200), jobAt(slowPID, 1300), jobAt(otherPID, 1400)
	for _, j := range []*assemble.Job{a1, a2, c1, a3, c2} {
		e.Hold(j, s.now, s.later)
		if n := e.HeldJobs(); n > 2 {
			t.Fatalf("%d jobs held, bound 2", n)
		}
	}
	js, late := s.snapshot()
	want := []*assemble.Job{c1, a1, a2, a3}
	if len(js) != len(want) {
		t.Fatalf("handed on %d jobs, want %d", len(js), len(want))
	}
	for i := range want {
		if js[i] != want[i] || late[i] {
			t.Fatalf("handed on %v (late %v), want c1, a1, a2, a3 at once", js, late)
		}
	}
	if st := e.Stats(); st.Held[HoldMaxHeld] != 4 || e.HeldJobs() != 1 {
		t.Errorf("max_held %d, held %d; want 4, 1 (c2)", st.Held[HoldMaxHeld], e.HeldJobs())
	}
	open()
	js = s.waitFor(t, 5, 5*time.Second)
	if js[4] != c2 || lookup(c2.Resource, "service.name") != "other-svc" {
		t.Errorf("c2 went on as %v with %v", js[4], c2.Resource)
	}
}

// At the end of input everything held goes on before ReleaseHeld returns, and nothing is
// held afterwards.
func TestReleaseHeldAtShutdown(t *testing.T) {
	e, _, _ := slowEnricher(t, Config{MaxWait: 10 * time.Second})
	firstSight(e, slowPID)
	var s sink
	a1, a2 := jobAt(slowPID, 1000), jobAt(slowPID, 1100)
	e.Hold(a1, s.now, s.later)
	e.Hold(a2, s.now, s.later)
	e.ReleaseHeld()
	if js, _ := s.snapshot(); len(js) != 2 || js[0] != a1 || js[1] != a2 {
		t.Fatalf("ReleaseHeld handed on %v", js)
	}
	a3 := jobAt(slowPID, 1200)
	e.Hold(a3, s.now, s.later)
	if js, late := s.snapshot(); len(js) != 3 || late[2] {
		t.Fatal("a job after ReleaseHeld was held")
	}
	if st := e.Stats(); st.Held != [numHoldOutcomes]uint64{HoldShutdown: 2} {
		t.Errorf("hold outcomes %v, want 2 shutdown", st.Held)
	}
}

// The read lands while jobs keep arriving from the source's goroutine: the process's jobs
// still go on in the order they came, each exactly once.
func TestHoldKeepsOrderWhileReleasing(t *testing.T) {
	const n = 5000
	// MaxHeld above n: the read may land long after open() on a loaded machine (the
	// worker needs the CPU the loop is using), and the bound must not let jobs go early
	// here (TestHoldBoundedByMaxHeld covers it), or fewer than n/4 would count as read_landed.
	e, _, open := slowEnricher(t, Config{MaxWait: 10 * time.Second, MaxHeld: 2 * n})
	firstSight(e, slowPID)
	var s sink
	var mu sync.Mutex // the pipeline's lock: now runs under it, later takes it
	later := func(j *assemble.Job) { mu.Lock(); s.later(j); mu.Unlock() }
	for i := 0; i < n; i++ {
		if i == n/4 {
			open()
		}
		mu.Lock()
		e.Hold(jobAt(slowPID, int64(1000+i)), s.now, later)
		mu.Unlock()
	}
	js := s.waitFor(t, n, 10*time.Second)
	for i, j := range js {
		if j.Start != int64(1000+i) {
			t.Fatalf("job %d handed on at position %d", j.Start-1000, i)
		}
	}
	if st := e.Stats(); st.Held[HoldReadLanded] < n/4 || e.HeldJobs() != 0 {
		t.Errorf("read_landed %d (want at least %d), held %d", st.Held[HoldReadLanded], n/4, e.HeldJobs())
	}
}

// The outcome names the enricher counts under are the metric attribute's enum values, in
// the order the metrics write them.
func TestOutcomeNamesMatchMetadata(t *testing.T) {
	for i, name := range metadata.HoldOutcomes {
		if got := HoldOutcome(i).String(); got != name {
			t.Errorf("hold outcome %d: %q, metadata says %q", i, got, name)
		}
	}
	for i, name := range metadata.RediscoveryOutcomes {
		if got := RediscoveryOutcome(i).String(); got != name {
			t.Errorf("re-discovery outcome %d: %q, metadata says %q", i, got, name)
		}
	}
	if len(metadata.HoldOutcomes) != int(numHoldOutcomes) || len(metadata.RediscoveryOutcomes) != int(numRediscoveryOutcomes) {
		t.Errorf("outcome counts differ from metadata")
	}
}
