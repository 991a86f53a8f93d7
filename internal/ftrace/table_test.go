// Checks the table against the kernel history it was written from
// (testdata/kernel-tracepoints): every event name
// there is known, and every print format of a decoded event is in its family.
package ftrace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ghostdriver/ghostdriver/internal/event"
)

const historyDir = "testdata/kernel-tracepoints"

// shapeOf compiles a printk string with placeholder args and returns its shape.
func shapeOf(t *testing.T, printk string) string {
	t.Helper()
	n := strings.Count(printk, "%") - 2*strings.Count(printk, "%%")
	args := strings.TrimSpace(strings.Repeat("_ ", n))
	return compile(&format{printk: printk, args: args}).shape()
}

func familyShapes(s *spec) map[string]bool {
	m := map[string]bool{}
	for _, t := range s.templates {
		m[t.shape()] = true
	}
	return m
}

// checkFormat asserts that name is known and, when decoded, that printk is one of its formats.
func checkFormat(t *testing.T, where, name, printk string) {
	t.Helper()
	s, ok := specs[name]
	if !ok {
		t.Errorf("%s: event %s is not in the table", where, name)
		return
	}
	if s.kind == event.KindUnknown || printk == "" {
		return
	}
	if !familyShapes(s)[shapeOf(t, printk)] {
		t.Errorf("%s: %s: format %q is not in family %q", where, name, printk, s.fam.name)
	}
}

func TestHistoryFormatsInTable(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(historyDir, "*_history.txt"))
	if len(files) != 4 {
		t.Fatalf("history files: %v", files)
	}
	checked := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := ""
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "--- ") {
				name = strings.Fields(l)[1]
				continue
			}
			l = strings.TrimSpace(l)
			if !strings.HasPrefix(l, "printk: \"") || name == "" {
				continue
			}
			// the format is the first C string: up to the quote before the first ", "
			printk := strings.TrimPrefix(l, "printk: \"")
			printk = printk[:strings.Index(printk, "\", ")]
			checkFormat(t, filepath.Base(f), name, printk)
			checked++
		}
	}
	if checked < 150 {
		t.Errorf("only %d formats checked", checked)
	}
}

// Formats quoted in the markdown notes; each string is checked to be verbatim in its file.
var mdFormats = []struct{ file, name, printk string }{
	{"other_drivers_and_core.md", "msm_gpu_submit", "id=%d pid=%d ring=%d bos=%d cmds=%d"},
	{"other_drivers_and_core.md", "msm_gpu_submit_flush", "id=%d pid=%d ring=%d:%d ticks=%lld"},
	{"other_drivers_and_core.md", "msm_gpu_submit_retired", "id=%d pid=%d ring=%d:%d elapsed=%lld ns mhz=%lld start=%lld end=%lld"},
	{"other_drivers_and_core.md", "irq_handler_entry", "irq=%d name=%s"},
	{"other_drivers_and_core.md", "irq_handler_exit", "irq=%d ret=%s"},
	{"other_drivers_and_core.md", "sys_enter", "NR %ld (%lx, %lx, %lx, %lx, %lx, %lx)"},
	{"other_drivers_and_core.md", "sys_exit", "NR %ld = %ld"},
	{"other_drivers_and_core.md", "sys_enter_ioctl", "fd: 0x%08lx, cmd: 0x%08lx, arg: 0x%08lx"},
	{"other_drivers_and_core.md", "sys_exit_ioctl", "0x%lx"},
	{"other_drivers_and_core.md", "drm_vblank_event", ""},
	{"other_drivers_and_core.md", "lima_task_submit", ""},
	{"other_drivers_and_core.md", "v3d_submit_cl", ""},
	{"other_drivers_and_core.md", "virtio_gpu_cmd_queue", ""},
	{"dma_fence_trace_versions.md", "dma_fence_init", "driver=%s timeline=%s context=%u seqno=%u"},
	{"dma_fence_trace_versions.md", "fence_signaled", "driver=%s timeline=%s context=%u seqno=%u"},
	{"dma_fence_trace_versions.md", "dma_fence_sync_to", "driver=%s timeline=%s context=%u seqno=%u reason=%s"},
	{"dma_fence_trace_versions.md", "dma_fence_used_as_dependency", "driver=%s timeline=%s context=%u seqno=%u reason=%s"},
	// V0 splits this one over two C strings.
	{"dma_fence_trace_versions.md", "fence_annotate_wait_on", "driver=%s timeline=%s context=%u seqno=%u |waits on driver=%s timeline=%s context=%u seqno=%u"},
}

func TestMarkdownFormatsInTable(t *testing.T) {
	for _, m := range mdFormats {
		b, err := os.ReadFile(filepath.Join(historyDir, m.file))
		if err != nil {
			t.Fatal(err)
		}
		for _, piece := range strings.Split(m.printk, "|") {
			if !strings.Contains(string(b), piece) {
				t.Errorf("%s does not quote %q", m.file, piece)
			}
		}
		if !strings.Contains(string(b), m.name) {
			t.Errorf("%s does not name %s", m.file, m.name)
		}
		checkFormat(t, m.file, m.name, strings.ReplaceAll(m.printk, "|", ""))
	}
}

// Every Kind a text capture can carry is produced by some event name; the ones only the
// live source produces are named here.
func TestKindsCovered(t *testing.T) {
	// ProcessExec/ProcessExit drive the live source's per-process context cache (the TLS
	// recipe of a process that exec'd or exited is dropped); a replayed capture comes from
	// another machine, so its sched_process_* lines carry nothing the pipeline uses.
	liveOnly := map[event.Kind]bool{event.BOValidStart: true, event.BOValidEnd: true, event.RunJobEnd: true,
		event.ProcessExec: true, event.ProcessExit: true,
		event.EventsLost: true} // a "CPU:N [LOST n EVENTS]" note, not an event name (decode.go)
	have := map[event.Kind]bool{}
	for _, e := range events {
		have[e.kind] = true
		if e.kind == event.KindUnknown && e.note == "" {
			t.Errorf("%s: known-but-unused without a reason", e.name)
		}
	}
	for _, k := range event.Kinds() {
		if !have[k] && !liveOnly[k] {
			t.Errorf("no event name decodes to %v", k)
		}
	}
}
