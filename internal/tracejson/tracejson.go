// Package tracejson writes GPU jobs as Chrome trace-event JSON (the "JSON Object Format":
// {"traceEvents": [...]}), which the Perfetto UI and chrome://tracing open.
//
// Layout: one process per ring ("GPU amdgpu/gfx"), holding a hardware track (the
// execution stage of every job: what the engine ran, one after another) and "in flight"
// tracks (each job from queue to finish, its other ring-side stages nested in it); one
// process per submitting process with a track per submitting thread (the ioctl with
// bo_validation nested in it; without ioctl events, the zero-length moment the job was
// queued from that thread); and a flow (v2: bind_id with flow_out/flow_in) from each
// submission to the job's execution. Complete slices (ph "X") carry ts and dur in µs with
// three decimals (exact ns), relative to the earliest job; the absolute origin is in
// otherData. Slices on one track never overlap unless one nests inside the other: a
// stage that would break that is drawn on its own lane and counted (Stats.Unnested).
package tracejson

import (
	"bufio"
	"bytes"
	"container/heap"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/ghostdriver/ghostdriver/internal/timeline"
)

// Synthetic process and thread ids. Real Linux pids and tids are below 2^22; Perfetto
// reads both as 32-bit unsigned numbers.
const (
	ringPIDBase     = 1 << 30   // ring i is process ringPIDBase + i<<laneBits
	laneBits        = 16        // its tracks are that pid + 1 .. + 2^16-1
	unknownPID      = 1<<30 - 1 // the process of threads whose process is not known
	overflowTIDBase = 1 << 31   // extra lanes of a submitting thread whose slices overlap
	maxRings        = 1<<(30-laneBits) - 1
)

// Stats says what was written.
type Stats struct {
	Jobs     int // gpu.job spans drawn
	Slices   int // complete (X) events
	Flows    int // submit→execution flows
	Unnested int // stage slices that did not fit inside their parent and got a lane of their own
}

// usec is a time in ns written as µs with three decimals, exactly.
type usec int64

func (u usec) MarshalJSON() ([]byte, error) {
	neg := ""
	v := int64(u)
	if v < 0 {
		neg, v = "-", -v
	}
	return []byte(fmt.Sprintf("%s%d.%03d", neg, v/1000, v%1000)), nil
}

// event is one trace event; fields left empty are left out. The field order is Chrome's own
// JSON exporter's (pid, tid, ts, ph, cat, name), the order importers are tested against.
type event struct {
	Pid     int64          `json:"pid"`
	Tid     int64          `json:"tid"`
	Ts      *usec          `json:"ts,omitempty"`
	Ph      string         `json:"ph"`
	Cat     string         `json:"cat,omitempty"`
	Name    string         `json:"name"`
	Dur     *usec          `json:"dur,omitempty"`
	BindID  uint64         `json:"bind_id,omitempty"`
	FlowOut bool           `json:"flow_out,omitempty"`
	FlowIn  bool           `json:"flow_in,omitempty"`
	Args    map[string]any `json:"args,omitempty"`
}

// slice is a complete event before placement; kids nest inside it.
type slice struct {
	name, cat  string
	start, end int64
	args       func() map[string]any // built when written: a map per slice held for the whole input costs ~1 KiB a slice
	bind       uint64
	in, out    bool
	kids       []*slice
	order      int // input order, for a stable layout
}

// group is a set of slices packed into lanes (tracks) of one process.
type group struct {
	units []*slice
}

func (g *group) add(s *slice) {
	s.order = len(g.units)
	g.units = append(g.units, s)
}

// nest keeps in s.kids the kids that lie inside s without overlapping each other, and
// moves the others to the group as slices of their own; it returns how many it moved.
func (g *group) nest(s *slice) int {
	kids := s.kids
	sort.SliceStable(kids, func(a, b int) bool { return kids[a].start < kids[b].start })
	s.kids = kids[:0:0]
	prevEnd := s.start
	moved := 0
	for _, k := range kids {
		if k.start >= prevEnd && k.end <= s.end {
			s.kids = append(s.kids, k)
			prevEnd = k.end
			continue
		}
		g.add(k)
		moved++
	}
	return moved
}

// lanes packs the group's slices in start order, each into the lowest-numbered lane that is
// free by its start (a submitting thread's own track first), else a new lane. Two heaps (busy
// lanes by end, free lanes by number) keep it O(n log n) however many lanes there are.
func (g *group) lanes() [][]*slice {
	u := g.units
	sort.SliceStable(u, func(a, b int) bool {
		if u[a].start != u[b].start {
			return u[a].start < u[b].start
		}
		if u[a].end != u[b].end {
			return u[a].end > u[b].end
		}
		return u[a].order < u[b].order
	})
	var lanes [][]*slice
	busy := &laneHeap{}
	free := &laneHeap{} // end unused: ordered by lane number
	for _, s := range u {
		for busy.Len() > 0 && (*busy)[0].end <= s.start {
			l := heap.Pop(busy).(laneEnd)
			heap.Push(free, laneEnd{lane: l.lane})
		}
		lane := len(lanes)
		if free.Len() > 0 {
			lane = heap.Pop(free).(laneEnd).lane
		} else {
			lanes = append(lanes, nil)
		}
		lanes[lane] = append(lanes[lane], s)
		heap.Push(busy, laneEnd{s.end, lane})
	}
	return lanes
}

// laneEnd is when a lane's last slice ends.
type laneEnd struct {
	end  int64
	lane int
}

// laneHeap orders lanes by end, then number.
type laneHeap []laneEnd

func (h laneHeap) Len() int { return len(h) }
func (h laneHeap) Less(i, j int) bool {
	if h[i].end != h[j].end {
		return h[i].end < h[j].end
	}
	return h[i].lane < h[j].lane
}
func (h laneHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *laneHeap) Push(x any)   { *h = append(*h, x.(laneEnd)) }
func (h *laneHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

type ringTracks struct {
	ring     timeline.Ring
	hardware group
	inFlight group
}

type threadKey struct{ pid, tid int64 }

type threadTracks struct {
	key  threadKey
	name string
	g    group
}

type process struct {
	pid  int64
	name string
}

// Write writes set as trace-event JSON.
func Write(w io.Writer, set *timeline.Set) (Stats, error) {
	var st Stats
	origin, _ := set.Extent()
	for i := range set.Jobs {
		for _, s := range set.Jobs[i].Stages {
			origin = min(origin, s.Start)
		}
	}

	// A thread's process, where any of its jobs tells it.
	pidOf := map[int64]int64{}
	for i := range set.Jobs {
		if j := &set.Jobs[i]; j.TID != 0 && j.PID != 0 {
			pidOf[j.TID] = j.PID
		}
	}

	rings := map[timeline.Ring]*ringTracks{}
	threads := map[threadKey]*threadTracks{}
	procNames := map[int64]string{}
	var bind uint64
	for i := range set.Jobs {
		j := &set.Jobs[i]
		st.Jobs++
		rt := rings[j.Ring]
		if rt == nil {
			rt = &ringTracks{ring: j.Ring}
			rings[j.Ring] = rt
		}
		label := jobLabel(j)

		// The ring: the job in flight, its ring-side stages nested; execution on the
		// hardware track.
		flight := &slice{name: "job " + label, cat: "job", start: j.Queued(), end: max(j.End, j.Queued()), args: func() map[string]any { return jobArgs(j) }}
		var exec *slice
		var onThread []*slice
		for _, s := range j.Stages {
			sl := &slice{name: s.Name, cat: "stage", start: s.Start, end: max(s.End, s.Start), args: func() map[string]any { return stageArgs(j, s) }}
			switch {
			case timeline.OnThread(s.Name):
				onThread = append(onThread, sl)
			case s.Name == timeline.ExecutionStage && exec == nil:
				exec = sl
			default:
				flight.kids = append(flight.kids, sl)
			}
		}
		rt.inFlight.add(flight)
		st.Unnested += rt.inFlight.nest(flight)
		target := flight
		if exec != nil {
			exec.name = timeline.ExecutionStage
			rt.hardware.add(exec)
			target = exec
		}

		// The submitting thread.
		if j.TID == 0 {
			continue
		}
		pid := j.PID
		if pid == 0 {
			pid = pidOf[j.TID]
		}
		if pid == 0 {
			pid = unknownPID
		}
		if _, ok := procNames[pid]; !ok || procNames[pid] == "" {
			procNames[pid] = processLabel(j, pid)
		}
		key := threadKey{pid, j.TID}
		tt := threads[key]
		if tt == nil {
			tt = &threadTracks{key: key, name: j.Thread}
			threads[key] = tt
		}
		var source *slice
		for _, s := range onThread {
			if s.name == "ioctl" {
				source = s
			}
		}
		if source != nil {
			for _, s := range onThread {
				if s != source {
					source.kids = append(source.kids, s)
				}
			}
			tt.g.add(source)
			st.Unnested += tt.g.nest(source)
		} else if len(onThread) > 0 {
			for _, s := range onThread {
				tt.g.add(s)
			}
			source = onThread[0]
		} else {
			q := j.Queued()
			source = &slice{name: "queue", cat: "submit", start: q, end: q, args: func() map[string]any {
				return map[string]any{"fence": j.Fence, "job_span_id": j.SpanID,
					"note": "the job was queued from this thread (no ioctl events in the input)"}
			}}
			tt.g.add(source)
		}
		bind++
		source.bind, source.out = bind, true
		target.bind, target.in = bind, true
		st.Flows++
	}
	if len(rings) > maxRings {
		return st, fmt.Errorf("trace-event JSON: %d rings, at most %d can be drawn", len(rings), maxRings)
	}

	bw := bufio.NewWriterSize(w, 1<<20)
	ew := &eventWriter{w: bw, origin: origin}
	ew.raw(`{"displayTimeUnit":"ns","otherData":`)
	other, _ := json.Marshal(map[string]string{
		"generator":              "ghostdriver",
		"origin_unix_nano":       strconv.FormatInt(origin, 10),
		"ts_unit":                "µs since origin_unix_nano",
		"jobs":                   strconv.Itoa(st.Jobs),
		"flows":                  strconv.Itoa(st.Flows),
		"unnested_stage_slices":  strconv.Itoa(st.Unnested),
		"spans_not_drawn_other":  strconv.Itoa(set.OtherSpans),
		"spans_not_drawn_orphan": strconv.Itoa(set.OrphanStages),
	})
	ew.raw(string(other))
	ew.raw(`,"traceEvents":[`)

	ringList := make([]*ringTracks, 0, len(rings))
	for _, rt := range rings {
		ringList = append(ringList, rt)
	}
	sort.Slice(ringList, func(a, b int) bool { return ringList[a].ring.String() < ringList[b].ring.String() })
	for i, rt := range ringList {
		pid := int64(ringPIDBase + i<<laneBits)
		ew.meta("process_name", pid, pid, map[string]any{"name": "GPU " + rt.ring.String()})
		ew.meta("process_sort_index", pid, pid, map[string]any{"sort_index": i})
		tid := pid
		for _, g := range []struct {
			name string
			grp  *group
		}{{"hardware (execution)", &rt.hardware}, {"in flight", &rt.inFlight}} {
			lanes := g.grp.lanes()
			for n, lane := range lanes {
				tid++
				if tid-pid >= 1<<laneBits {
					return st, fmt.Errorf("trace-event JSON: ring %s needs more than %d tracks (jobs in flight at once)", rt.ring, 1<<laneBits-2)
				}
				name := g.name
				if len(lanes) > 1 {
					name = fmt.Sprintf("%s #%d", g.name, n+1)
				}
				ew.meta("thread_name", pid, tid, map[string]any{"name": name})
				ew.meta("thread_sort_index", pid, tid, map[string]any{"sort_index": tid - pid})
				ew.lane(pid, tid, lane, &st)
			}
		}
	}

	threadList := make([]*threadTracks, 0, len(threads))
	for _, tt := range threads {
		threadList = append(threadList, tt)
	}
	sort.Slice(threadList, func(a, b int) bool {
		x, y := threadList[a].key, threadList[b].key
		if x.pid != y.pid {
			return x.pid < y.pid
		}
		return x.tid < y.tid
	})
	named := map[int64]bool{}
	overflow := int64(overflowTIDBase)
	for _, tt := range threadList {
		pid := tt.key.pid
		if !named[pid] {
			named[pid] = true
			ew.meta("process_name", pid, pid, map[string]any{"name": procNames[pid]})
			ew.meta("process_sort_index", pid, pid, map[string]any{"sort_index": len(ringList) + len(named)})
		}
		for n, lane := range tt.g.lanes() {
			tid, name := tt.key.tid, tt.name
			if name == "" {
				name = "thread " + strconv.FormatInt(tid, 10)
			}
			if n > 0 {
				tid = overflow
				overflow++
				name = fmt.Sprintf("%s [%d] (overlapping submissions #%d)", name, tt.key.tid, n+1)
			}
			ew.meta("thread_name", pid, tid, map[string]any{"name": name})
			ew.lane(pid, tid, lane, &st)
		}
	}
	ew.raw("]}\n")
	if ew.err != nil {
		return st, ew.err
	}
	return st, bw.Flush()
}

// eventWriter writes the events, comma separated, keeping the first error.
type eventWriter struct {
	buf    bytes.Buffer
	w      *bufio.Writer
	origin int64
	n      int
	err    error
}

func (ew *eventWriter) raw(s string) {
	if ew.err == nil {
		_, ew.err = ew.w.WriteString(s)
	}
}

// event writes one event. <, > and & stay as they are (valid JSON): encoding/json's default
// \u003c escapes are more than some trace importers' string readers accept.
func (ew *eventWriter) event(e *event) {
	if ew.n > 0 {
		ew.raw(",\n")
	}
	ew.n++
	ew.buf.Reset()
	enc := json.NewEncoder(&ew.buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e); err != nil && ew.err == nil {
		ew.err = err
	}
	ew.raw(strings.TrimSuffix(ew.buf.String(), "\n"))
}

// meta writes a metadata event. Process-level ones carry tid = pid: Perfetto's importer
// registers the (tid, pid) of every event as a thread, and pid is the process's own
// (main-thread) id, whereas tid 0 would be taken for one thread moving between processes.
func (ew *eventWriter) meta(name string, pid, tid int64, args map[string]any) {
	ew.event(&event{Name: name, Ph: "M", Pid: pid, Tid: tid, Args: args})
}

// lane writes the slices of one track: each followed by its kids, in time order.
func (ew *eventWriter) lane(pid, tid int64, lane []*slice, st *Stats) {
	var write func(s *slice)
	write = func(s *slice) {
		ts, dur := usec(s.start-ew.origin), usec(s.end-s.start)
		ew.event(&event{Name: s.name, Cat: s.cat, Ph: "X", Ts: &ts, Dur: &dur, Pid: pid, Tid: tid,
			BindID: s.bind, FlowOut: s.out, FlowIn: s.in, Args: s.args()})
		st.Slices++
		for _, k := range s.kids {
			write(k)
		}
	}
	for _, s := range lane {
		write(s)
	}
}

func jobLabel(j *timeline.Job) string {
	switch {
	case j.Service != "" && j.Service != "unknown_service":
		return j.Service
	case j.Executable != "":
		return j.Executable
	case j.Thread != "":
		return j.Thread
	}
	return "?"
}

func processLabel(j *timeline.Job, pid int64) string {
	if pid == unknownPID {
		return "submitting threads (process unknown)"
	}
	switch {
	case j.Service != "" && j.Service != "unknown_service":
		return j.Service
	case j.Executable != "":
		return j.Executable
	}
	return "process " + strconv.FormatInt(pid, 10)
}

func jobArgs(j *timeline.Job) map[string]any {
	a := map[string]any{"ring": j.Ring.String(), "outcome": j.Outcome, "trace_id": j.TraceID, "span_id": j.SpanID,
		"tenant": j.Tenant()}
	put := func(k, v string) {
		if v != "" {
			a[k] = v
		}
	}
	put("fence", j.Fence)
	put("job_id", j.JobID)
	put("error", j.Error)
	put("thread", j.Thread)
	if j.PID != 0 {
		a["pid"] = j.PID
	}
	if j.TID != 0 {
		a["tid"] = j.TID
	}
	if j.Links > 0 {
		a["links"] = j.Links
	}
	return a
}

func stageArgs(j *timeline.Job, s timeline.Stage) map[string]any {
	a := map[string]any{"source": s.Source, "job": jobLabel(j), "job_span_id": j.SpanID}
	if s.Rule != "" {
		a["rule"] = s.Rule
	}
	if j.Fence != "" {
		a["fence"] = j.Fence
	}
	return a
}
