// The cuda command samples as the receiver's live.cuda does: on by default, --no-sample
// writes every submission, --sample-probability thins the rest consistently. The oracle is
// the stub workload's own fixed shape (the same submissions in both runs, counted by the
// command before sampling) and each kept span's trace id, read here against its threshold.
package main

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ghostdriver/ghostdriver/internal/cuda/cudatest"
)

// cudaSubmissionsRe reads the summary's count of submissions (all of them, sampled or not).
var cudaSubmissionsRe = regexp.MustCompile(`(?m)^submissions: (\d+) \((\d+) synchronized, (\d+) unsynchronized\)`)

func TestCUDACommandSamples(t *testing.T) {
	cudatest.Need(t)
	stubs := cudatest.Build(t)
	const iters = 400 // 2 threads × iters stream syncs, 2 event syncs, 1 device sync
	run := func(t *testing.T, flags ...string) (subs, unsynced int, spans []ptrace.Span, stdout string) {
		t.Helper()
		out := filepath.Join(t.TempDir(), "spans.json")
		args := append([]string{"cuda", "--no-tenant", "--no-xid", "--rescan-interval", "0",
			"--library", stubs.Driver, "--library", stubs.Runtime, "--flush-interval", "20ms", "--output", out}, flags...)
		// The workload's two stdin lines (initialise, then work) at once.
		args = append(args, "--", "sh", "-c", `printf '\n\n' | "$0" "$1" >/dev/null`, stubs.App, strconv.Itoa(iters))
		code, stdout, stderr := runCLI(args...)
		if code != 0 {
			t.Fatalf("ghostdriver %v: exit %d\n%s\n%s", args, code, stdout, stderr)
		}
		m := cudaSubmissionsRe.FindStringSubmatch(stdout)
		if m == nil {
			t.Fatalf("no submissions line in the summary:\n%s", stdout)
		}
		subs, _ = strconv.Atoi(m[1])
		unsynced, _ = strconv.Atoi(m[3])
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		var um ptrace.JSONUnmarshaler
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if line == "" {
				continue
			}
			td, err := um.UnmarshalTraces([]byte(line))
			if err != nil {
				t.Fatal(err)
			}
			for _, rs := range td.ResourceSpans().All() {
				for _, ss := range rs.ScopeSpans().All() {
					for _, sp := range ss.Spans().All() {
						if sp.Name() == "cuda.submission" {
							spans = append(spans, sp)
						}
					}
				}
			}
		}
		// The summary's count of spans written is every span in the file.
		inFile := 0
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if line != "" {
				td, _ := um.UnmarshalTraces([]byte(line))
				inFile += td.SpanCount()
			}
		}
		if want := "spans written: " + strconv.Itoa(inFile) + " to "; !strings.Contains(stdout, want) {
			t.Errorf("the summary does not say %q (the file holds %d spans):\n%s", want, inFile, stdout)
		}
		return subs, unsynced, spans, stdout
	}

	allSubs, allUnsynced, all, allOut := run(t, "--no-sample")
	if want := 2*iters + 3; allSubs < want {
		t.Fatalf("--no-sample: %d submissions, the workload makes at least %d", allSubs, want)
	}
	if len(all) != allSubs {
		t.Errorf("--no-sample: %d cuda.submission spans written of %d submissions", len(all), allSubs)
	}
	if strings.Contains(allOut, "sampling ") {
		t.Errorf("--no-sample printed a sampler line:\n%s", allOut)
	}
	for _, sp := range all {
		if ts := sp.TraceState().AsRaw(); ts != "" {
			t.Fatalf("--no-sample: a span carries tracestate %q", ts)
		}
	}

	const p = 0.25
	subs, _, kept, out := run(t, "--sample-probability", strconv.FormatFloat(p, 'g', -1, 64), "--keep-slowest-window", "0")
	if subs != allSubs {
		t.Errorf("sampled run: %d submissions counted, the unsampled run %d: the count must not follow the sampler", subs, allSubs)
	}
	if !strings.Contains(out, "sampling cuda.submission: ") {
		t.Errorf("the sampled run's summary has no sampler line:\n%s", out)
	}
	threshold := uint64((1 - p) * (1 << 56))
	byShare, byRule := 0, 0
	for _, sp := range kept {
		ts := sp.TraceState().AsRaw()
		th, rv, ok := readOT(sp.TraceID(), ts)
		switch {
		case !ok:
			t.Fatalf("a kept submission without a readable ot=th: (tracestate %q)", ts)
		case th == 0:
			byRule++ // a keep rule (unsynchronized, failed)
		case th == threshold:
			byShare++
			if rv < th {
				t.Errorf("submission %s kept at th %#x with randomness %#x below it (tracestate %q)", sp.SpanID(), th, rv, ts)
			}
		default:
			t.Errorf("a kept submission at threshold %#x (tracestate %q), want %#x (p=%g) or 0", th, ts, threshold, p)
		}
	}
	// Keep rules: only unsynchronized submissions (the stub fails nothing).
	if byRule > allUnsynced {
		t.Errorf("%d submissions kept by a keep rule; the workload has %d unsynchronized ones and no failures", byRule, allUnsynced)
	}
	// The share: binomial(n, p) over the others, 4.5 standard deviations.
	n := float64(allSubs - byRule)
	mean, sd := n*p, math.Sqrt(n*p*(1-p))
	t.Logf("%d submissions: %d kept by the share (expected %.0f ± %.0f), %d by keep rules", allSubs, byShare, mean, sd, byRule)
	if f := float64(byShare); f < mean-4.5*sd || f > mean+4.5*sd {
		t.Errorf("%d of %.0f submissions kept by the probability share %g: outside %.0f ± 4.5×%.1f", byShare, n, p, mean, sd)
	}
}

// readOT reads an OpenTelemetry tracestate's `ot=` entry: the rejection threshold `th`
// (hex, trailing zeros dropped, 56 bits) and the randomness — `rv` when present, else the
// trace id's low 56 bits.
func readOT(id [16]byte, ts string) (th, rv uint64, ok bool) {
	rv = binary.BigEndian.Uint64(id[8:]) & (1<<56 - 1)
	v, found := strings.CutPrefix(ts, "ot=")
	if !found {
		return 0, 0, false
	}
	for _, kv := range strings.Split(v, ";") {
		switch {
		case strings.HasPrefix(kv, "th:"):
			h := kv[3:]
			if h == "" || len(h) > 14 {
				return 0, 0, false
			}
			n, err := strconv.ParseUint(h+strings.Repeat("0", 14-len(h)), 16, 64)
			if err != nil {
				return 0, 0, false
			}
			th, ok = n, true
		case strings.HasPrefix(kv, "rv:"):
			n, err := strconv.ParseUint(kv[3:], 16, 64)
			if err != nil || len(kv[3:]) != 14 {
				return 0, 0, false
			}
			rv = n
		}
	}
	return th, rv, ok
}
