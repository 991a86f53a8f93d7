// virtio_gpu (virgl) jobs through the assembler (virtio.go), from lines in each kernel's
// own TP_printk format: virtgpu_trace.h of 6.1.172 (bookworm; 7 fields) and of 7.3.4
// (trixie-backports; num_free= and seqno= added), the syscall and dma_fence lines as those
// guests print them (testdata/captures/virgl/). T(0) is 1.000000 s.

package assemble

import (
	"strings"
	"testing"

	"github.com/ghostdriver/ghostdriver/internal/event"
	"github.com/ghostdriver/ghostdriver/internal/ftrace"
)

// One set-up ioctl (DRM_IOCTL_VIRTGPU_RESOURCE_CREATE: a fenced RESOURCE_CREATE_3D, not a
// job), two execbuffers (SUBMIT_3D, fences 6 and 7), the fbcon's unfenced 0x105/0x104 on
// a kworker, and a tear-down execbuffer whose SUBMIT_3D is unfenced. The responses come
// on the driver's worker after the control interrupt; the two fences signal there.
const virglCapture61 = `
    virgl_client-177     [000] ...1.     1.000010: sys_ioctl(fd: 6, cmd: c0386444, arg: 7ffd81f10b00)
    virgl_client-177     [000] .....     1.000020: dma_fence_init: driver=virtio_gpu timeline=controlq context=1 seqno=0
    virgl_client-177     [000] ...1.     1.000030: dma_fence_emit: driver=virtio_gpu timeline=controlq context=1 seqno=5
    virgl_client-177     [000] ...1.     1.000035: virtio_gpu_cmd_queue: vdev=0 vq=0 name=control type=0x204 flags=0x1 fence_id=5 ctx_id=2
    virgl_client-177     [000] ...1.     1.000040: sys_ioctl -> 0x0
     kworker/1:2-53      [001] .....     1.000060: virtio_gpu_cmd_response: vdev=0 vq=0 name=control type=0x1100 flags=0x1 fence_id=5 ctx_id=2
     kworker/1:2-53      [001] d..1.     1.000061: dma_fence_signaled: driver=virtio_gpu timeline=controlq context=1 seqno=5
    virgl_client-177     [000] ...1.     1.000100: sys_ioctl(fd: 6, cmd: c0286442, arg: 7ffd81f10c80)
    virgl_client-177     [000] .....     1.000150: dma_fence_init: driver=virtio_gpu timeline=controlq context=1 seqno=0
    virgl_client-177     [000] ...1.     1.000170: dma_fence_emit: driver=virtio_gpu timeline=controlq context=1 seqno=6
    virgl_client-177     [000] ...1.     1.000180: virtio_gpu_cmd_queue: vdev=0 vq=0 name=control type=0x207 flags=0x1 fence_id=6 ctx_id=2
    virgl_client-177     [000] ...1.     1.000200: sys_ioctl -> 0x0
     kworker/0:1-17      [000] ...1.     1.000210: virtio_gpu_cmd_queue: vdev=0 vq=0 name=control type=0x105 flags=0x0 fence_id=0 ctx_id=0
     kworker/0:1-17      [000] ...1.     1.000220: virtio_gpu_cmd_queue: vdev=0 vq=0 name=control type=0x104 flags=0x0 fence_id=0 ctx_id=0
    virgl_client-177     [000] ...1.     1.000300: sys_ioctl(fd: 6, cmd: c0286442, arg: 7ffd81f10c60)
    virgl_client-177     [000] .....     1.000320: dma_fence_init: driver=virtio_gpu timeline=controlq context=1 seqno=0
    virgl_client-177     [000] ...1.     1.000340: dma_fence_emit: driver=virtio_gpu timeline=controlq context=1 seqno=7
    virgl_client-177     [000] ...1.     1.000350: virtio_gpu_cmd_queue: vdev=0 vq=0 name=control type=0x207 flags=0x1 fence_id=7 ctx_id=2
    virgl_client-177     [000] ...1.     1.000360: sys_ioctl -> 0x0
          <idle>-0       [001] d.h1.     1.000800: irq_handler_entry: irq=29 name=virtio0-control
          <idle>-0       [001] dNh1.     1.000810: irq_handler_exit: irq=29 ret=handled
     kworker/1:2-53      [001] .....     1.000900: virtio_gpu_cmd_response: vdev=0 vq=0 name=control type=0x1100 flags=0x1 fence_id=6 ctx_id=2
     kworker/1:2-53      [001] d..1.     1.000905: dma_fence_signaled: driver=virtio_gpu timeline=controlq context=1 seqno=6
     kworker/1:2-53      [001] .....     1.000910: virtio_gpu_cmd_response: vdev=0 vq=0 name=control type=0x1100 flags=0x0 fence_id=0 ctx_id=0
     kworker/1:2-53      [001] .....     1.000920: virtio_gpu_cmd_response: vdev=0 vq=0 name=control type=0x1100 flags=0x0 fence_id=0 ctx_id=0
     kworker/1:2-53      [001] .....     1.001000: virtio_gpu_cmd_response: vdev=0 vq=0 name=control type=0x1100 flags=0x1 fence_id=7 ctx_id=2
     kworker/1:2-53      [001] d..1.     1.001002: dma_fence_signaled: driver=virtio_gpu timeline=controlq context=1 seqno=7
    virgl_client-177     [000] ...1.     1.002000: sys_ioctl(fd: 6, cmd: c0286442, arg: 7ffd81f10c60)
    virgl_client-177     [000] ...1.     1.002030: virtio_gpu_cmd_queue: vdev=0 vq=0 name=control type=0x207 flags=0x0 fence_id=0 ctx_id=2
    virgl_client-177     [000] ...1.     1.002040: sys_ioctl -> 0x0
     kworker/1:2-53      [001] .....     1.002500: virtio_gpu_cmd_response: vdev=0 vq=0 name=control type=0x1100 flags=0x0 fence_id=0 ctx_id=0
`

// The same run on 7.3: fence init comes first in the ioctl, both virtio_gpu events print the
// command's seqno, and the unfenced SUBMIT_3D's response joins it by seqno.
var virglCapture73 = func() string {
	seq := map[string]string{ // the queue's command counter, per command in order
		"type=0x204 flags=0x1 fence_id=5 ctx_id=2": "num_free=252 seqno=10",
		"type=0x207 flags=0x1 fence_id=6 ctx_id=2": "num_free=251 seqno=11",
		"type=0x105 flags=0x0 fence_id=0 ctx_id=0": "num_free=250 seqno=12",
		"type=0x104 flags=0x0 fence_id=0 ctx_id=0": "num_free=249 seqno=13",
		"type=0x207 flags=0x1 fence_id=7 ctx_id=2": "num_free=248 seqno=14",
		"type=0x207 flags=0x0 fence_id=0 ctx_id=2": "num_free=255 seqno=15",
	}
	resp := []string{"10", "11", "12", "13", "14", "15"} // responses in order
	var b strings.Builder
	r := 0
	for _, l := range strings.Split(virglCapture61, "\n") {
		l = strings.ReplaceAll(l, "cmd: c0", "cmd: 0xc0")
		if i := strings.Index(l, "virtio_gpu_cmd_queue: "); i >= 0 {
			tail := l[strings.Index(l, "type="):]
			l += " " + seq[tail]
		} else if strings.Contains(l, "virtio_gpu_cmd_response: ") {
			l += " num_free=256 seqno=" + resp[r]
			r++
		}
		b.WriteString(l + "\n")
	}
	return b.String()
}()

func TestVirglJobs(t *testing.T) {
	for _, c := range []struct {
		kernel, text string
		unfencedTh   bool // the unfenced SUBMIT_3D's response joins it (7.3: seqno)
	}{
		{"6.1", virglCapture61, false},
		{"7.3", virglCapture73, true},
	} {
		t.Run(c.kernel, func(t *testing.T) {
			col, jobs := assembleText(t, c.text)
			if len(jobs) != 3 {
				t.Fatalf("%d jobs, want 3 (the two fenced SUBMIT_3D and the unfenced one): %s", len(jobs), dump(jobs))
			}
			for _, f := range []struct {
				seq                    uint64
				t0, tq, te, tx, th, tf int64
			}{{6, 100, 170, 180, 200, 900, 905}, {7, 300, 340, 350, 360, 1000, 1002}} {
				j := find(t, jobs, fk(1, f.seq))
				if j.Outcome != Completed || j.Driver != "virtio_gpu" || j.Comm != "virgl_client" || j.TID != 177 || j.Ring != "0" || j.Device != "0" {
					t.Errorf("fence %d: %s %q driver %q comm %q tid %d ring %q device %q", f.seq, j.Outcome, j.Reason, j.Driver, j.Comm, j.TID, j.Ring, j.Device)
				}
				wantStage(t, j, "ioctl", f.t0, f.tx, Measured, "sys_enter_ioctl→sys_exit_ioctl")
				wantStage(t, j, "bo_validation", f.t0, f.tq, Inferred, "sys_enter_ioctl→fallback_to_queued")
				wantStage(t, j, "ring_emission", f.tq, f.te, Measured, "dma_fence_emit→virtio_gpu_cmd_queue")
				wantStage(t, j, "execution", f.te, f.th, Inferred, "host_start_unobserved→virtio_gpu_cmd_response")
				wantStage(t, j, "fence_signal", f.th, f.tf, Measured, "virtio_gpu_cmd_response→dma_fence_signaled")
				for _, s := range []string{"fence_dependency", "scheduler_queue", "dma_scheduling"} {
					if _, ok := stageOf(j, s); ok {
						t.Errorf("fence %d: a %s stage (virtio_gpu has no basis for it)", f.seq, s)
					}
				}
				if len(j.Stages) != 5 {
					t.Errorf("fence %d: %d stages: %s", f.seq, len(j.Stages), dump([]*Job{j}))
				}
			}
			var u *Job
			for _, j := range jobs {
				if j.Finished.IsZero() {
					u = j
				}
			}
			if u == nil {
				t.Fatalf("no unfenced job: %s", dump(jobs))
			}
			wantStage(t, u, "ioctl", 2000, 2040, Measured, "sys_enter_ioctl→sys_exit_ioctl")
			if _, ok := stageOf(u, "ring_emission"); ok {
				t.Error("unfenced job: a ring_emission stage, but no fence emission bounds one")
			}
			if c.unfencedTh {
				if u.Outcome != Completed {
					t.Errorf("unfenced job on %s: %s %q, want completed at its response", c.kernel, u.Outcome, u.Reason)
				}
				wantStage(t, u, "execution", 2030, 2500, Inferred, "host_start_unobserved→virtio_gpu_cmd_response")
				if _, ok := stageOf(u, "fence_signal"); ok {
					t.Error("unfenced job: a fence_signal stage without a fence")
				}
			} else if u.Outcome != Incomplete || u.Reason != reasonVirtioUnjoinable || len(u.Stages) != 2 {
				t.Errorf("unfenced job on %s: %s %q %d stages, want incomplete (%q): ioctl and bo_validation only",
					c.kernel, u.Outcome, u.Reason, len(u.Stages), reasonVirtioUnjoinable)
			}
			// RESOURCE_CREATE_3D's response and fence signal belong to no job; the fbcon's
			// commands and the unfenced responses are ignored.
			st := col.a.Stats()
			if st.Orphans["virtio_gpu_cmd_response"] != 1 || st.Orphans["fence_signaled"] != 1 {
				t.Errorf("orphans %v, want RESOURCE_CREATE_3D's response and fence signal", st.Orphans)
			}
		})
	}
}

// An in-fence of another context (VIRTGPU_EXECBUF_FENCE_FD_IN; 7.3 waits between the fence's
// init and its emit): waited for synchronously inside the ioctl, so it is a dependency of
// the job that ended before tq, not a fence_dependency stage.
func TestVirglInFence(t *testing.T) {
	_, jobs := assembleText(t, `
    virgl_client-185     [000] ...1.     1.000100: sys_ioctl(fd: 0x6, cmd: 0xc0286442, arg: 0x7ffd81f10c80)
    virgl_client-185     [000] .....     1.000107: dma_fence_init: driver=virtio_gpu timeline=controlq context=1 seqno=0
    virgl_client-185     [000] .....     1.000120: dma_fence_wait_start: driver=drm_sched timeline=gfx context=40 seqno=9
    virgl_client-185     [000] .....     1.000400: dma_fence_wait_end: driver=drm_sched timeline=gfx context=40 seqno=9
    virgl_client-185     [000] ...1.     1.000420: dma_fence_emit: driver=virtio_gpu timeline=controlq context=1 seqno=8
    virgl_client-185     [000] ...1.     1.000424: virtio_gpu_cmd_queue: vdev=0 vq=0 name=control type=0x207 flags=0x1 fence_id=8 ctx_id=2 num_free=250 seqno=30
    virgl_client-185     [000] ...1.     1.000440: sys_ioctl -> 0x0
     kworker/1:1-34      [001] .....     1.001000: virtio_gpu_cmd_response: vdev=0 vq=0 name=control type=0x1100 flags=0x1 fence_id=8 ctx_id=2 num_free=256 seqno=30
     kworker/1:1-34      [001] d..1.     1.001004: dma_fence_signaled: driver=virtio_gpu timeline=controlq context=1 seqno=8
`)
	j := find(t, jobs, fk(1, 8))
	if len(j.Deps) != 1 || j.Deps[0].Fence != fk(40, 9) || j.Deps[0].Signaled != T(400) {
		t.Errorf("deps %+v, want the in-fence 40:9 signalled at 400 µs", j.Deps)
	}
	wantStage(t, j, "ring_emission", 420, 424, Measured, "dma_fence_emit→virtio_gpu_cmd_queue")
	if _, ok := stageOf(j, "fence_dependency"); ok {
		t.Error("a fence_dependency stage: the wait was inside the ioctl")
	}
}

// The DRM client of a virtio_gpu job is its submit ioctl's file (fentry drm_ioctl reads
// drm_file.client_id on 6.5+; no virtio_gpu event names the client): every job of the
// capture carries the id its ioctl entries carry, and none where they carry none (tracefs).
func TestVirglJobsCarryTheIoctlsClient(t *testing.T) {
	for _, id := range []uint64{0, 2} {
		d := ftrace.NewDecoder()
		var evs []event.Event
		for n, l := range strings.Split(virglCapture73, "\n") {
			if l = strings.TrimSpace(l); l == "" {
				continue
			}
			var ev event.Event
			if !d.Decode([]byte(l), n, &ev) {
				t.Fatalf("line %d not decoded: %q", n, l)
			}
			if ev.Kind == event.IoctlEnter {
				ev.ClientID = id
			}
			evs = append(evs, ev)
		}
		jobs := newCollector(testConfig()).run(evs...)
		if len(jobs) != 3 {
			t.Fatalf("%d jobs, want 3: %s", len(jobs), dump(jobs))
		}
		for _, j := range jobs {
			if j.ClientID != id {
				t.Errorf("ioctl client %d: job %v carries client %d", id, j.Finished, j.ClientID)
			}
		}
	}
}

// A scheduler event that names the client (6.17+) is the job's client; the ioctl's file
// names it where the scheduler's events do not (before 6.17).
func TestSchedulerJobClientFromTheIoctl(t *testing.T) {
	f := fk(70, 1)
	for _, c := range []struct {
		sched, ioctl, want uint64
	}{{13, 13, 13}, {0, 7, 7}, {13, 0, 13}} {
		enter := ioctlEnter(0, 100)
		enter.ClientID = c.ioctl
		q := queue617(10, 100, f)
		q.ClientID = c.sched
		r := run617(20, f)
		r.ClientID = c.sched
		jobs := newCollector(testConfig()).run(enter, q, ioctlExit(15, 100), r, done617(40, f))
		j := find(t, jobs, f)
		if j.ClientID != c.want {
			t.Errorf("scheduler client %d, ioctl client %d: job client %d, want %d", c.sched, c.ioctl, j.ClientID, c.want)
		}
	}
}
