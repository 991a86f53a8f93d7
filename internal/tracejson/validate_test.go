// A reading of trace-event JSON that shares nothing with the writer: the structure the
// Trace Event Format and Perfetto's JSON importer require, checked event by event, and the
// input's spans read from their raw OTLP/JSON with encoding/json alone.
package tracejson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"testing"
)

// tev is one decoded trace event; ts and dur are exact ns.
type tev struct {
	idx             int
	Name, Cat, Ph   string
	Pid, Tid        int64
	ts, dur         int64
	hasTS, hasDur   bool
	bind            int64
	flowIn, flowOut bool
	Args            map[string]any
	end             int64
}

type traceFile struct {
	other  map[string]string
	events []tev
}

// nsOf reads a µs JSON number as exact ns.
func nsOf(n json.Number) (int64, error) {
	r, ok := new(big.Rat).SetString(string(n))
	if !ok {
		return 0, fmt.Errorf("%q is not a number", n)
	}
	r.Mul(r, big.NewRat(1000, 1))
	if !r.IsInt() {
		return 0, fmt.Errorf("%s µs is not a whole number of ns", n)
	}
	return r.Num().Int64(), nil
}

// parseTrace checks what every event must have for its phase and decodes the file.
func parseTrace(t *testing.T, data []byte) traceFile {
	t.Helper()
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		t.Fatalf("not a JSON object: %v", err)
	}
	raw, ok := top["traceEvents"]
	if !ok {
		t.Fatal("no traceEvents array (JSON Object Format)")
	}
	var tf traceFile
	if o, ok := top["otherData"]; ok {
		if err := json.Unmarshal(o, &tf.other); err != nil {
			t.Fatalf("otherData: %v", err)
		}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var evs []map[string]any
	if err := dec.Decode(&evs); err != nil {
		t.Fatalf("traceEvents: %v", err)
	}
	for i, m := range evs {
		e := tev{idx: i}
		fail := func(f string, a ...any) { t.Fatalf("event %d %v: %s", i, m, fmt.Sprintf(f, a...)) }
		var ok bool
		if e.Name, ok = m["name"].(string); !ok {
			fail("no name")
		}
		if e.Ph, ok = m["ph"].(string); !ok {
			fail("no ph")
		}
		e.Cat, _ = m["cat"].(string)
		for _, f := range []struct {
			key string
			dst *int64
		}{{"pid", &e.Pid}, {"tid", &e.Tid}} {
			n, ok := m[f.key].(json.Number)
			if !ok {
				fail("no numeric %s", f.key)
			}
			v, err := strconv.ParseInt(string(n), 10, 64)
			if err != nil || v < 0 || v > 1<<32-1 {
				fail("%s %s is not a 32-bit unsigned integer", f.key, n)
			}
			*f.dst = v
		}
		if n, ok := m["ts"].(json.Number); ok {
			v, err := nsOf(n)
			if err != nil {
				fail("ts: %v", err)
			}
			e.ts, e.hasTS = v, true
		}
		if n, ok := m["dur"].(json.Number); ok {
			v, err := nsOf(n)
			if err != nil {
				fail("dur: %v", err)
			}
			e.dur, e.hasDur = v, true
		}
		e.Args, _ = m["args"].(map[string]any)
		if n, ok := m["bind_id"].(json.Number); ok {
			e.bind, _ = strconv.ParseInt(string(n), 10, 64)
		}
		e.flowIn, _ = m["flow_in"].(bool)
		e.flowOut, _ = m["flow_out"].(bool)
		switch e.Ph {
		case "X":
			if !e.hasTS || !e.hasDur || e.dur < 0 {
				fail("a complete event needs ts and a dur >= 0")
			}
		case "M":
			switch e.Name {
			case "process_name", "thread_name":
				if s, _ := e.Args["name"].(string); s == "" {
					fail("metadata %s without args.name", e.Name)
				}
			case "process_sort_index", "thread_sort_index":
				if _, ok := e.Args["sort_index"].(json.Number); !ok {
					fail("metadata %s without a numeric args.sort_index", e.Name)
				}
			default:
				fail("unknown metadata event")
			}
		default:
			fail("phase %q is not written by this exporter", e.Ph)
		}
		if (e.flowIn || e.flowOut) && (e.bind == 0 || e.Ph != "X") {
			fail("flow_in/flow_out needs a bind_id on a complete event")
		}
		e.end = e.ts + e.dur
		tf.events = append(tf.events, e)
	}
	return tf
}

type track struct{ pid, tid int64 }

// checkStructure: names for every process and thread used, ts non-decreasing per track,
// slices on a track nested or disjoint, flows paired (one flow_out, one flow_in per id,
// the flow_out no later than the flow_in).
func checkStructure(t *testing.T, tf traceFile) {
	t.Helper()
	procNamed := map[int64]bool{}
	threadNamed := map[track]bool{}
	for _, e := range tf.events {
		if e.Ph != "M" {
			continue
		}
		switch e.Name {
		case "process_name":
			if procNamed[e.Pid] {
				t.Errorf("process %d named twice", e.Pid)
			}
			procNamed[e.Pid] = true
		case "thread_name":
			k := track{e.Pid, e.Tid}
			if threadNamed[k] {
				t.Errorf("thread %v named twice", k)
			}
			threadNamed[k] = true
		}
	}
	tidPid := map[int64]int64{}
	stacks := map[track][]tev{}
	last := map[track]int64{}
	outs, ins := map[int64][]tev{}, map[int64][]tev{}
	for _, e := range tf.events {
		if e.Ph != "X" {
			continue
		}
		k := track{e.Pid, e.Tid}
		if !procNamed[e.Pid] {
			t.Errorf("event %d: process %d has no process_name", e.idx, e.Pid)
		}
		if !threadNamed[k] {
			t.Errorf("event %d: track %v has no thread_name", e.idx, k)
		}
		if p, ok := tidPid[e.Tid]; ok && p != e.Pid {
			t.Errorf("event %d: tid %d used in processes %d and %d", e.idx, e.Tid, p, e.Pid)
		}
		tidPid[e.Tid] = e.Pid
		if l, ok := last[k]; ok && e.ts < l {
			t.Errorf("event %d: ts %d before the previous slice's %d on track %v", e.idx, e.ts, l, k)
		}
		last[k] = e.ts
		st := stacks[k]
		for len(st) > 0 && st[len(st)-1].end <= e.ts {
			st = st[:len(st)-1]
		}
		if len(st) > 0 && e.end > st[len(st)-1].end {
			p := st[len(st)-1]
			t.Errorf("event %d %q [%d,%d] overlaps %q [%d,%d] on track %v without nesting in it",
				e.idx, e.Name, e.ts, e.end, p.Name, p.ts, p.end, k)
		}
		stacks[k] = append(st, e)
		if e.flowOut {
			outs[e.bind] = append(outs[e.bind], e)
		}
		if e.flowIn {
			ins[e.bind] = append(ins[e.bind], e)
		}
	}
	for id, o := range outs {
		in := ins[id]
		if len(o) != 1 || len(in) != 1 {
			t.Errorf("flow %d: %d flow_out and %d flow_in events, want one each", id, len(o), len(in))
			continue
		}
		if o[0].ts > in[0].ts {
			t.Errorf("flow %d starts at %d, after its end at %d", id, o[0].ts, in[0].ts)
		}
	}
	for id := range ins {
		if _, ok := outs[id]; !ok {
			t.Errorf("flow %d has a flow_in and no flow_out", id)
		}
	}
}

// rawSpan is one span of an OTLP/JSON file, read with encoding/json only.
type rawSpan struct {
	name, traceID, spanID, parent string
	start, end                    int64
	attrs                         map[string]string
	resource                      map[string]string
	errorStatus                   bool
}

func rawAttrs(list []any) map[string]string {
	m := map[string]string{}
	for _, a := range list {
		kv := a.(map[string]any)
		v := kv["value"].(map[string]any)
		for _, x := range v {
			m[kv["key"].(string)] = fmt.Sprint(x)
		}
	}
	return m
}

// rawSpans reads OTLP/JSON lines.
func rawSpans(t *testing.T, data []byte) []rawSpan {
	t.Helper()
	var out []rawSpan
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var req map[string]any
		dec := json.NewDecoder(strings.NewReader(line))
		dec.UseNumber()
		if err := dec.Decode(&req); err != nil {
			t.Fatal(err)
		}
		rss, _ := req["resourceSpans"].([]any)
		for _, rs := range rss {
			rsm := rs.(map[string]any)
			res := map[string]string{}
			if r, ok := rsm["resource"].(map[string]any); ok {
				l, _ := r["attributes"].([]any)
				res = rawAttrs(l)
			}
			for _, ss := range rsm["scopeSpans"].([]any) {
				for _, s := range ss.(map[string]any)["spans"].([]any) {
					sm := s.(map[string]any)
					sp := rawSpan{resource: res}
					sp.name, _ = sm["name"].(string)
					sp.traceID, _ = sm["traceId"].(string)
					sp.spanID, _ = sm["spanId"].(string)
					sp.parent, _ = sm["parentSpanId"].(string)
					st, _ := sm["startTimeUnixNano"].(string) // absent when 0
					en, _ := sm["endTimeUnixNano"].(string)
					sp.start, _ = strconv.ParseInt(st, 10, 64)
					sp.end, _ = strconv.ParseInt(en, 10, 64)
					l, _ := sm["attributes"].([]any)
					sp.attrs = rawAttrs(l)
					if st, ok := sm["status"].(map[string]any); ok {
						sp.errorStatus = fmt.Sprint(st["code"]) == "2"
					}
					out = append(out, sp)
				}
			}
		}
	}
	return out
}
