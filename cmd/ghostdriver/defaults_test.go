// The CLI and the collector receiver run the same pipeline: every CLI flag that has a
// receiver config key must default to the receiver's default (createDefaultConfig), so
// that `ghostdriver replay` and `source: replay` give the same spans for the same capture.
package main

import (
	"bytes"
	"flag"
	"strconv"
	"strings"
	"testing"
	"time"

	ghostreceiver "github.com/ghostdriver/ghostdriver/receiver/ghostdriverreceiver"
)

// helpDefaults runs `ghostdriver CMD --help` and returns flag name → default as printed.
func helpDefaults(t *testing.T, cmd string) map[string]string {
	t.Helper()
	var o, e bytes.Buffer
	if code := run([]string{cmd, "--help"}, &o, &e); code != 0 {
		t.Fatalf("%s --help: exit %d (stderr %q)", cmd, code, e.String())
	}
	return parseHelpDefaults(o.String())
}

// parseHelpDefaults reads flag.PrintDefaults text: "  -name type\n    \tusage (default X)".
func parseHelpDefaults(text string) map[string]string {
	out := map[string]string{}
	cur := ""
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(line, "  -") {
			cur = strings.Fields(trimmed)[0][1:]
			out[cur] = ""
			trimmed = strings.TrimSpace(strings.TrimPrefix(trimmed, "-"+cur))
		}
		if cur == "" {
			continue
		}
		if i := strings.LastIndex(trimmed, "(default "); i >= 0 && strings.HasSuffix(trimmed, ")") {
			out[cur] = strings.Trim(trimmed[i+len("(default "):len(trimmed)-1], `"`)
		}
	}
	return out
}

func TestCLIDefaultsAreTheReceiverDefaults(t *testing.T) {
	d := ghostreceiver.NewFactory().CreateDefaultConfig().(*ghostreceiver.Config)
	dur := func(v time.Duration) string { return v.String() }
	pipeline := map[string]string{
		"job-timeout":         dur(d.JobTimeout),
		"max-pending-jobs":    strconv.Itoa(d.MaxPendingJobs),
		"reorder-window":      dur(d.ReorderWindow),
		"flush-interval":      dur(d.FlushInterval),
		"collection-interval": dur(d.CollectionInterval),
	}
	if !d.StageSpans {
		t.Fatal("receiver default stage_spans is false: --no-stage-spans would have to default to true")
	}
	want := map[string]map[string]string{
		"replay": pipeline,
		"live": merge(pipeline, map[string]string{
			"context-tiers": strings.Join(d.Context.Tiers, ","),
			"obi-map-path":  d.Context.OBIMapPath,
			"proc-root":     d.Tenant.ProcRoot,
			"sys-root":      d.Tenant.SysRoot,
		}),
		"cuda": {
			"flush-interval":      dur(d.FlushInterval),
			"collection-interval": dur(d.CollectionInterval),
			"rescan-interval":     dur(d.Live.CUDA.RescanInterval),
			"obi-map":             d.Context.OBIMapPath,
		},
	}
	for cmd, flags := range want {
		got := helpDefaults(t, cmd)
		for name, w := range flags {
			g, ok := got[name]
			if !ok {
				t.Errorf("%s: no --%s in --help", cmd, name)
				continue
			}
			if g != w {
				t.Errorf("%s --%s defaults to %q, the receiver to %q", cmd, name, g, w)
			}
		}
		// A boolean flag is off by default; --no-stage-spans off = stage_spans on.
		if _, ok := got["no-stage-spans"]; cmd != "cuda" && !ok {
			t.Errorf("%s: no --no-stage-spans", cmd)
		}
	}
}

func merge(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// The flag package's own view, independent of the help text: the parsed defaults.
func TestPipelineFlagsParseToTheReceiverDefaults(t *testing.T) {
	d := ghostreceiver.NewFactory().CreateDefaultConfig().(*ghostreceiver.Config)
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	pf := addPipelineFlags(fs)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	c := pf.config()
	if c.Assemble.JobTimeout != d.JobTimeout || c.Assemble.MaxPendingJobs != d.MaxPendingJobs ||
		c.Assemble.ReorderWindow != d.ReorderWindow || c.FlushInterval != d.FlushInterval ||
		c.CollectionInterval != d.CollectionInterval {
		t.Errorf("CLI pipeline config %+v differs from the receiver's defaults (job_timeout %v, max_pending_jobs %d, reorder_window %v, flush_interval %v, collection_interval %v)",
			c.Assemble, d.JobTimeout, d.MaxPendingJobs, d.ReorderWindow, d.FlushInterval, d.CollectionInterval)
	}
}
