// Lossless (replay) mode: a consumer slower than the source makes the source wait; every
// job reaches the output, and memory stays bounded whatever the capture's size. Live mode
// keeps dropping under the same consumer, and says so at warn level.
package pipeline

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/ghostdriver/ghostdriver/internal/emit"
	"github.com/ghostdriver/ghostdriver/internal/replay"
	"github.com/ghostdriver/ghostdriver/internal/testcapture"
)

// slowConsumer counts job spans and sleeps per call: slower than the source.
func slowConsumer(exported *atomic.Int64, delay time.Duration) func(context.Context, ptrace.Traces) error {
	return func(_ context.Context, td ptrace.Traces) error {
		time.Sleep(delay)
		exported.Add(int64(jobSpans(td)))
		return nil
	}
}

func TestLosslessSlowConsumerGetsEveryJob(t *testing.T) {
	var exported atomic.Int64
	p, errc := startPipeline(t, floodCapture(t), Config{Lossless: true, MaxBufferedJobs: 512},
		Outputs{Traces: slowConsumer(&exported, 50*time.Millisecond)})
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	st := p.Stats()
	if st.Assembler.Completed != floodJobs || exported.Load() != floodJobs || st.DroppedJobs != 0 {
		t.Fatalf("completed %d, exported %d, dropped %d; want %d, %d, 0",
			st.Assembler.Completed, exported.Load(), st.DroppedJobs, floodJobs, floodJobs)
	}
}

func TestLiveSlowConsumerDropsAndWarns(t *testing.T) {
	for _, stages := range []bool{true, false} {
		t.Run(fmt.Sprintf("stage-spans-%v", stages), func(t *testing.T) {
			var exported atomic.Int64
			core, logs := observer.New(zapcore.WarnLevel)
			src, err := replay.New(replay.Config{Path: floodCapture(t), HasEpoch: true})
			if err != nil {
				t.Fatal(err)
			}
			p := New(Config{MaxBufferedJobs: 512, SpanOptions: []emit.SpanOption{emit.WithStageSpans(stages)}}, src,
				Outputs{Traces: slowConsumer(&exported, 50*time.Millisecond)}, zap.New(core))
			if err := p.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			st := p.Stats()
			if st.DroppedJobs == 0 {
				t.Fatal("a consumer slower than the source dropped nothing in live mode: the test provokes no drops")
			}
			if uint64(exported.Load())+st.DroppedJobs != floodJobs {
				t.Errorf("exported %d + dropped %d != %d", exported.Load(), st.DroppedJobs, floodJobs)
			}
			var reported uint64
			warnings := logs.FilterMessageSnippet("dropped").All()
			for _, e := range warnings {
				reported += uint64(e.ContextMap()["dropped_since_last_report"].(uint64))
				// The lever the receiver has is named only where it would help.
				if hint := strings.Contains(e.Message, "stage_spans: false"); hint != stages {
					t.Errorf("stage spans %v: the warning names stage_spans: false = %v: %q", stages, hint, e.Message)
				}
			}
			if reported != st.DroppedJobs {
				t.Errorf("warnings reported %d dropped job spans, the pipeline dropped %d (%d warnings)",
					reported, st.DroppedJobs, len(warnings))
			}
		})
	}
}

// The memory bound is measured in a child process of its own (its peak RSS, VmHWM, is the
// whole run's and no other test's): the child replays a generated 6.17 capture into
// OTLP/JSON lines in a file through a consumer slower than the source, and prints VmHWM.
// The parent counts gpu.job spans in the file itself and compares the peaks of two sizes.
const childEnv = "GHOSTDRIVER_LOSSLESS_CHILD"

func TestLosslessMemoryBoundedWhateverTheSize(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: generates and replays two captures (20k and 80k jobs) in child processes")
	}
	dir := t.TempDir()
	peak := map[int]uint64{}
	for _, n := range []int{20_000, 80_000} {
		in := filepath.Join(dir, fmt.Sprintf("c%d.txt", n))
		f, err := os.Create(in)
		if err != nil {
			t.Fatal(err)
		}
		w := bufio.NewWriter(f)
		if err := testcapture.Write(w, testcapture.Options{Style: "6.17", Jobs: n, Rings: 4, Procs: 8}); err != nil {
			t.Fatal(err)
		}
		if err := errors.Join(w.Flush(), f.Close()); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, fmt.Sprintf("c%d.json", n))
		cmd := exec.Command(os.Args[0], "-test.run=^TestLosslessChild$")
		cmd.Env = append(os.Environ(), childEnv+"="+in+","+out)
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("child on %d jobs: %v\n%s", n, err, b)
		}
		_, rest, ok := strings.Cut(string(b), "VmHWM=")
		if !ok {
			t.Fatalf("child printed no VmHWM:\n%s", b)
		}
		hwm, err := strconv.ParseUint(strings.Fields(rest)[0], 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		peak[n] = hwm << 10
		// Counted here, from the bytes of the file, not from the pipeline's counters.
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if got := bytes.Count(data, []byte(`"name":"gpu.job"`)); got != n {
			t.Errorf("%d jobs in the capture, %d gpu.job spans in the file", n, got)
		}
		t.Logf("%d jobs: peak RSS %.1f MiB, %.1f MiB written", n, float64(peak[n])/(1<<20), float64(len(data))/(1<<20))
	}
	// 4× the jobs may not cost more resident memory than a margin for the runtime (the
	// live mode held 65 536 jobs' spans, ≈ 250 MB of pdata plus their JSON, at this size).
	if peak[80_000] > peak[20_000]+24<<20 {
		t.Errorf("peak RSS grew from %.1f MiB (20k jobs) to %.1f MiB (80k jobs): memory follows the capture's size",
			float64(peak[20_000])/(1<<20), float64(peak[80_000])/(1<<20))
	}
	if peak[80_000] > 160<<20 {
		t.Errorf("peak RSS %.1f MiB on 80k jobs, over the 160 MiB bound", float64(peak[80_000])/(1<<20))
	}
}

// TestLosslessChild is the child of TestLosslessMemoryBoundedWhateverTheSize.
func TestLosslessChild(t *testing.T) {
	arg := os.Getenv(childEnv)
	if arg == "" {
		t.Skip("runs only as the child of TestLosslessMemoryBoundedWhateverTheSize")
	}
	in, outPath, _ := strings.Cut(arg, ",")
	src, err := replay.New(replay.Config{Path: in, HasEpoch: true})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(outPath)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var m ptrace.JSONMarshaler
	out := Outputs{Traces: func(_ context.Context, td ptrace.Traces) error {
		time.Sleep(time.Duration(jobSpans(td)) * 20 * time.Microsecond) // slower than the source
		b, err := m.MarshalTraces(td)
		if err != nil {
			return err
		}
		w.Write(b)
		return w.WriteByte('\n')
	}}
	p := New(Config{Lossless: true}, src, out, nil)
	if err := p.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(w.Flush(), f.Close()); err != nil {
		t.Fatal(err)
	}
	if st := p.Stats(); st.DroppedJobs != 0 || st.ExportErrors != 0 {
		t.Errorf("dropped %d, export errors %d", st.DroppedJobs, st.ExportErrors)
	}
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			fmt.Printf("VmHWM=%s\n", strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
		}
	}
}
