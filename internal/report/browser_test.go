// The report in a real browser: Debian's chromium, headless, loads the page written for the
// real amdgpu capture's spans, with every host name unresolvable. The page must render
// (its script ran to the end and drew every job), show the job count read from the spans
// with encoding/json alone, and log nothing to the console (no script error, no blocked
// request). Skips, saying so, where chromium is not installed (.ci/run installs it).
package report

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/ghostdriver/ghostdriver/internal/pipeline"
	"github.com/ghostdriver/ghostdriver/internal/replay"
	"github.com/ghostdriver/ghostdriver/internal/testreq"
	"github.com/ghostdriver/ghostdriver/internal/timeline"
)

func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	testreq.Skip(t, testreq.Chromium, "chromium is not installed (apt-get install chromium; .ci/run does): the report is not checked in a browser")
	return ""
}

// countJobs counts gpu.job spans in OTLP/JSON lines without this project's readers.
func countJobs(t *testing.T, otlp []byte) (jobs int) {
	t.Helper()
	for _, line := range bytes.Split(bytes.TrimSpace(otlp), []byte("\n")) {
		var req struct {
			ResourceSpans []struct {
				ScopeSpans []struct {
					Spans []struct {
						Name string `json:"name"`
					} `json:"spans"`
				} `json:"scopeSpans"`
			} `json:"resourceSpans"`
		}
		if err := json.Unmarshal(line, &req); err != nil {
			t.Fatal(err)
		}
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					if s.Name == "gpu.job" {
						jobs++
					}
				}
			}
		}
	}
	return jobs
}

// loadInChromium returns the DOM after the page's scripts ran and the console lines.
func loadInChromium(t *testing.T, bin, page string) (dom string, console []string) {
	t.Helper()
	var out, errb bytes.Buffer
	// Chromium itself was seen to die of SIGSEGV now and then on a loaded 2-core machine
	// (before loading the page: nothing on its console). A browser killed by a signal is
	// started again, at most twice, and said so; any other failure, or a third crash, fails.
	for attempt := 1; ; attempt++ {
		out.Reset()
		errb.Reset()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu",
			"--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
			"--user-data-dir="+t.TempDir(), "--host-resolver-rules=MAP * ~NOTFOUND",
			"--enable-logging=stderr", "--v=0", "--window-size=1400,1000", "--dump-dom", "file://"+page)
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		cancel()
		if err == nil {
			break
		}
		var ee *exec.ExitError
		crashed := errors.As(err, &ee) && ee.ProcessState != nil && !ee.ProcessState.Exited() && ctx.Err() == nil
		if !crashed || attempt == 3 {
			t.Fatalf("chromium (attempt %d): %v\n%s", attempt, err, errb.String())
		}
		t.Logf("chromium died (%v) on attempt %d, before the page was checked: starting it again", err, attempt)
	}
	for _, l := range strings.Split(errb.String(), "\n") {
		if strings.Contains(l, ":CONSOLE") {
			console = append(console, l)
		}
	}
	return out.String(), console
}

func TestReportInChromium(t *testing.T) {
	bin := chromium(t)
	otlp := captureOTLP(t)
	want := countJobs(t, otlp)
	if want < 700 {
		t.Fatalf("%d gpu.job spans from the capture: the replay lost most of them", want)
	}
	set, err := timeline.Read(bytes.NewReader(otlp))
	if err != nil {
		t.Fatal(err)
	}
	page := checkInChromium(t, bin, set, want)

	// Zoomed in through the page's #view= address: the window 1.000–1.100 s is drawn.
	dom, console := loadInChromium(t, bin, page+"#view=1000000000,1100000000")
	for _, l := range console {
		t.Errorf("console (zoomed): %s", l)
	}
	if !strings.Contains(dom, "view 1.000 s – 1.100 s of") {
		t.Errorf("the zoomed page shows %s", regexp.MustCompile(`<span id="view">[^<]*`).FindString(dom))
	}
}

// captureOTLP replays the bundled amdgpu capture and returns its spans as OTLP/JSON lines.
func captureOTLP(t *testing.T) []byte {
	t.Helper()
	_, self, _, _ := runtime.Caller(0)
	capture := filepath.Join(filepath.Dir(self), "..", "..", "testdata", "captures", "gpuvis_amdgpu_4.11_full.trace-cmd-report.txt.gz")
	var otlp bytes.Buffer
	var m ptrace.JSONMarshaler
	_, _, err := timeline.Capture(context.Background(), replay.Config{Path: capture, HasEpoch: true}, pipeline.Config{},
		func(td ptrace.Traces) {
			b, err := m.MarshalTraces(td)
			if err != nil {
				t.Error(err)
			}
			otlp.Write(b)
			otlp.WriteByte('\n')
		})
	if err != nil {
		t.Fatal(err)
	}
	return otlp.Bytes()
}

// TestHandSetInChromium: thread-only tenants, a failed job, a stage name the page has no
// colour or category for, a ring without execution.
func TestHandSetInChromium(t *testing.T) {
	bin := chromium(t)
	set := handSet()
	set.Jobs = append(set.Jobs, timeline.Job{Ring: timeline.Ring{Driver: "xe", Ring: "bcs"}, Start: 400, End: 420,
		Stages: []timeline.Stage{st("fence_dependency", 400, 420)}})
	_ = checkInChromium(t, bin, set, len(set.Jobs))
}

// checkInChromium writes the report of set, loads it and checks it shows want jobs; it
// returns the page's path.
func checkInChromium(t *testing.T, bin string, set *timeline.Set, want int) string {
	t.Helper()
	page := filepath.Join(t.TempDir(), "report.html")
	f, err := os.Create(page)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Write(f, set, Options{Title: "amdgpu 4.11", Source: "test"}); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}

	dom, console := loadInChromium(t, bin, page)
	for _, l := range console {
		t.Errorf("console: %s", l)
	}
	number := func(re string) int {
		m := regexp.MustCompile(re).FindStringSubmatch(dom)
		if m == nil {
			t.Fatalf("the rendered page has no match for %s", re)
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	if got := number(`id="job-count">(\d+)<`); got != want {
		t.Errorf("the page says %d jobs, the spans have %d", got, want)
	}
	if got := number(`data-drawn-jobs="(\d+)"`); got != want {
		t.Errorf("the timeline drew %d jobs, the spans have %d", got, want)
	}
	if got := number(`id="drawn-jobs">(\d+)`); got != want {
		t.Errorf("the page says %d jobs drawn, the spans have %d", got, want)
	}
	if !regexp.MustCompile(`<pre id="errors" hidden="">\s*</pre>`).MatchString(dom) {
		m := regexp.MustCompile(`(?s)<pre id="errors".*?</pre>`).FindString(dom)
		t.Errorf("the page reports script errors: %s", m)
	}
	if !strings.Contains(dom, `<canvas id="timeline"`) || !regexp.MustCompile(`<canvas id="timeline"[^>]*height="[1-9]\d{2,}"`).MatchString(dom) {
		t.Errorf("the timeline canvas was not sized by the script: %s", regexp.MustCompile(`<canvas[^>]*>`).FindString(dom))
	}
	return page
}
