// The Perfetto textproto captures (real data from Perfetto's diff tests) rendered to
// tracefs text lines by a small test helper, then decoded: the same events another
// tool parsed, through our text path.
package ftrace

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/ghostdriver/ghostdriver/internal/event"
)

// pbNode is a textproto message: scalar fields and sub-messages in order.
type pbNode struct {
	name   string
	fields map[string]string
	kids   []*pbNode
}

func parseTextproto(t *testing.T, path string) *pbNode {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	root := &pbNode{fields: map[string]string{}}
	stack := []*pbNode{root}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		top := stack[len(stack)-1]
		switch {
		case l == "" || strings.HasPrefix(l, "#"):
		case strings.HasSuffix(l, "{"):
			n := &pbNode{name: strings.TrimSpace(strings.TrimSuffix(l, "{")), fields: map[string]string{}}
			top.kids = append(top.kids, n)
			stack = append(stack, n)
		case l == "}":
			stack = stack[:len(stack)-1]
		default:
			k, v, ok := strings.Cut(l, ": ")
			if !ok {
				t.Fatalf("%s: %q", path, l)
			}
			if s, err := strconv.Unquote(v); err == nil {
				v = s
			}
			top.fields[k] = v
		}
	}
	return root
}

// textprotoPrintk is how the kernel prints each event of these captures: the TP_printk
// format and the proto fields in argument order (%p fields are u64 in the proto).
var textprotoPrintk = map[string]struct {
	format string
	fields []string
}{
	"dma_fence_init":          {"driver=%s timeline=%s context=%u seqno=%u", []string{"driver", "timeline", "context", "seqno"}},
	"dma_fence_emit":          {"driver=%s timeline=%s context=%u seqno=%u", []string{"driver", "timeline", "context", "seqno"}},
	"dma_fence_signaled":      {"driver=%s timeline=%s context=%u seqno=%u", []string{"driver", "timeline", "context", "seqno"}},
	"dma_fence_wait_start":    {"driver=%s timeline=%s context=%u seqno=%u", []string{"driver", "timeline", "context", "seqno"}},
	"dma_fence_wait_end":      {"driver=%s timeline=%s context=%u seqno=%u", []string{"driver", "timeline", "context", "seqno"}},
	"drm_sched_job":           {"entity=%p, id=%llu, fence=%p, ring=%s, job count:%u, hw job count:%d", []string{"entity", "id", "fence", "name", "job_count", "hw_job_count"}},
	"drm_run_job":             {"entity=%p, id=%llu, fence=%p, ring=%s, job count:%u, hw job count:%d", []string{"entity", "id", "fence", "name", "job_count", "hw_job_count"}},
	"drm_sched_process_job":   {"fence=%p signaled", []string{"fence"}},
	"drm_sched_job_queue":     {"dev=%s, fence=%llu:%llu, ring=%s, job count:%u, hw job count:%d, client_id:%llu", []string{"dev", "fence_context", "fence_seqno", "name", "job_count", "hw_job_count", "client_id"}},
	"drm_sched_job_run":       {"dev=%s, fence=%llu:%llu, ring=%s, job count:%u, hw job count:%d, client_id:%llu", []string{"dev", "fence_context", "fence_seqno", "name", "job_count", "hw_job_count", "client_id"}},
	"drm_sched_job_done":      {"fence=%llu:%llu signaled", []string{"fence_context", "fence_seqno"}},
	"virtio_gpu_cmd_queue":    {"vdev=%d vq=%u name=%s type=0x%x flags=0x%x fence_id=%llu ctx_id=%u num_free=%u seqno=%u", []string{"dev", "vq", "name", "type", "flags", "fence_id", "ctx_id", "num_free", "seqno"}},
	"virtio_gpu_cmd_response": {"vdev=%d vq=%u name=%s type=0x%x flags=0x%x fence_id=%llu ctx_id=%u num_free=%u seqno=%u", []string{"dev", "vq", "name", "type", "flags", "fence_id", "ctx_id", "num_free", "seqno"}},
}

// printkRender formats like the kernel: %p as 16 zero-padded hex digits (raw, as
// tracefs prints with hash-ptr off), %x as hex, numbers as decimal.
func printkRender(t *testing.T, format string, vals []string) string {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			b.WriteByte(format[i])
			continue
		}
		j := i + 1
		for strings.IndexByte("lL", format[j]) >= 0 {
			j++
		}
		v := vals[0]
		vals = vals[1:]
		switch format[j] {
		case 'p', 'x':
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			if format[j] == 'p' {
				fmt.Fprintf(&b, "%016x", n)
			} else {
				fmt.Fprintf(&b, "%x", n)
			}
		default:
			b.WriteString(v)
		}
		i = j
	}
	return b.String()
}

// textprotoLines renders every ftrace event of a Perfetto textproto as a tracefs line.
func textprotoLines(t *testing.T, name string) []string {
	root := parseTextproto(t, filepath.Join(capturesDir, name))
	var out []string
	for _, pkt := range root.kids {
		for _, fe := range pkt.kids {
			if fe.name != "ftrace_events" {
				continue
			}
			cpu, _ := strconv.Atoi(fe.fields["cpu"])
			for _, e := range fe.kids {
				ts, _ := strconv.ParseInt(e.fields["timestamp"], 10, 64)
				body := e.kids[0]
				p, ok := textprotoPrintk[body.name]
				if !ok {
					t.Fatalf("%s: no format for %s", name, body.name)
				}
				vals := make([]string, len(p.fields))
				for i, f := range p.fields {
					vals[i] = body.fields[f]
				}
				out = append(out, fmt.Sprintf("%16s-%-7s [%03d] ..... %5d.%09d: %s: %s", "<...>", e.fields["pid"], cpu,
					ts/1e9, ts%1e9, body.name, printkRender(t, p.format, vals)))
			}
		}
	}
	return out
}

func TestPerfettoTextprotos(t *testing.T) {
	tests := []struct {
		file    string
		kinds   map[event.Kind]uint64
		unknown map[string]uint64
		first   event.Event
	}{
		{"perfetto_drm_dma_fence.textproto",
			map[event.Kind]uint64{event.FenceInit: 3, event.FenceEmit: 2, event.FenceSignaled: 3, event.FenceWaitStart: 1, event.FenceWaitEnd: 1}, map[string]uint64{},
			event.Event{Kind: event.FenceInit, Time: 11303602488073, CPU: 7, TID: 191, Name: "dma_fence_init", Driver: "msm", Timeline: "gpu-ring-0", Fence: fk(1, 16665)}},
		{"perfetto_drm_sched.textproto",
			map[event.Kind]uint64{event.JobQueue: 4, event.JobRun: 4, event.JobDone: 4}, map[string]uint64{},
			event.Event{Kind: event.JobQueue, Time: 9246165326050, CPU: 0, TID: 365, Name: "drm_sched_job", Ring: "ring0",
				Entity: 18446743526218327296, FencePtr: 18446743526909918272, JobID: 13481}},
		{"perfetto_drm_sched_617.textproto",
			map[event.Kind]uint64{event.JobQueue: 1, event.JobRun: 1, event.JobDone: 1}, map[string]uint64{},
			event.Event{Kind: event.JobRun, Time: 2664817945719, CPU: 0, TID: 9381, Name: "drm_sched_job_run", Device: "0000:04:00.0",
				Ring: "gfx_0.0.0", Fence: fk(401, 1), FenceWide: true, ClientID: 13}},
		{"perfetto_virtio_gpu.textproto",
			map[event.Kind]uint64{event.VirtioGPUCmdQueue: 2, event.VirtioGPUCmdResponse: 2}, map[string]uint64{},
			event.Event{Kind: event.VirtioGPUCmdResponse, Time: 1345091904071, TID: 4244, Name: "virtio_gpu_cmd_response", Driver: "virtio_gpu",
				Device: "4", Ring: "0", Cmd: 0x1100, Fence: fk(0, 67980), JobID: 143910}},
	}
	for _, tt := range tests {
		var lines [][]byte
		for _, l := range textprotoLines(t, tt.file) {
			lines = append(lines, []byte(l))
		}
		evs, d := decodeAll(lines)
		s := d.Stats()
		if got := countsByKind(s); !reflect.DeepEqual(got, tt.kinds) || !reflect.DeepEqual(s.Unknown, tt.unknown) || s.Malformed != 0 {
			t.Errorf("%s: kinds %v unknown %v malformed %v; want %v %v", tt.file, got, s.Unknown, s.MalformedSamples, tt.kinds, tt.unknown)
		}
		if len(evs) > 0 && evs[0] != tt.first {
			t.Errorf("%s: first event\n got %+v\nwant %+v", tt.file, evs[0], tt.first)
		}
	}
	// The pointer-keyed jobs pair up: every process_job fence is a queued job's fence.
	evs, _ := decodeAll(toBytes(textprotoLines(t, "perfetto_drm_sched.textproto")))
	queued := map[uint64]bool{}
	for _, e := range evs {
		switch e.Kind {
		case event.JobQueue:
			queued[e.FencePtr] = true
		case event.JobDone:
			if !queued[e.FencePtr] {
				t.Errorf("done fence %x never queued", e.FencePtr)
			}
		}
	}
}

func toBytes(ss []string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}
