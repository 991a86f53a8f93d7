//go:build linux

package probe

import (
	"strings"
	"testing"

	"github.com/ghostdriver/ghostdriver/internal/capability"
)

func TestJobsConfig(t *testing.T) {
	c, err := Config{}.withDefaults()
	if err != nil || c.Records != DefaultRecords || c.JobsMapEntries != DefaultJobsMapEntries {
		t.Fatalf("defaults: %+v %v", c, err)
	}
	if c, err := (Config{ClassicTracepoints: true}).withDefaults(); err != nil || c.Records != RecordsEvents {
		t.Fatalf("classic tracepoints, records unset: %q %v, want events", c.Records, err)
	}
	for _, bad := range []struct {
		cfg  Config
		want string
	}{
		{Config{Records: "stream"}, `records "stream": want "jobs" or "events"`},
		{Config{Records: RecordsJobs, ClassicTracepoints: true}, "classic tracepoints need records"},
		{Config{JobsMapEntries: 10}, "jobs map entries 10"},
	} {
		if _, err := bad.cfg.withDefaults(); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%+v: error %v, want %q", bad.cfg, err, bad.want)
		}
	}
}

// In jobs mode the scheduler and dma_fence ladders start with the jobs family's programs
// and keep the per-event rungs after them; every other ladder is the events mode's.
func TestJobsHookDefs(t *testing.T) {
	events := hookDefs(DefaultConfig())
	jobs := liveHookDefs(Config{Records: RecordsJobs, BOValidationFuncs: DefaultConfig().BOValidationFuncs,
		RunJobFuncs: DefaultConfig().RunJobFuncs})
	if len(jobs) != len(events) {
		t.Fatalf("%d ladders in jobs mode, %d in events mode", len(jobs), len(events))
	}
	taken := 0
	for i, d := range jobs {
		e := events[i]
		switch {
		case len(d.rungs) == len(e.rungs)+2 && d.rungs[0].family == famJobs:
			taken++
			if d.rungs[0].progs[0] != "jobs_tpbtf_"+d.event || d.rungs[1].progs[0] != "jobs_rawtp_"+d.event {
				t.Errorf("%s: rungs %+v", d.event, d.rungs[:2])
			}
			if famJobs == e.rungs[0].family || d.rungs[2].progs[0] != e.rungs[0].progs[0] {
				t.Errorf("%s: the per-event rungs do not follow", d.event)
			}
		default:
			if len(d.rungs) != len(e.rungs) || len(d.rungs) > 0 && d.rungs[0].family == famJobs {
				t.Errorf("%s: ladder changed in jobs mode", d.event)
			}
		}
	}
	// 9 scheduler events + dma_fence init, emit, signaled
	if taken != 12 {
		t.Errorf("jobs family takes %d ladders, want 12", taken)
	}
	spec, err := loadJobs()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range jobs {
		for _, r := range d.rungs {
			if r.family != famJobs {
				continue
			}
			for _, p := range r.progs {
				if spec.Programs[p] == nil {
					t.Errorf("no program %s in jobs.o", p)
				}
			}
		}
	}
}

// Jobs mode has its own dma_fence hooks, which do not feed the fence filter: asking for
// both is an error naming the conflict, not a filter that passes over every fence.
func TestJobsRecordsRefuseFenceFilter(t *testing.T) {
	_, err := Config{Records: RecordsJobs, FenceFilter: true}.withJobsDefaults()
	if err == nil || !strings.Contains(err.Error(), "fence filter") {
		t.Fatalf("jobs + fence filter: err %v, want an error naming the fence filter", err)
	}
	c, err := Config{FenceFilter: true}.withJobsDefaults()
	if err != nil || c.Records != RecordsEvents {
		t.Fatalf("default + fence filter: %q, %v; want events, no error", c.Records, err)
	}
}

// The kernel release decides whether the pending-job hash is preallocated.
func TestParseRelease(t *testing.T) {
	for _, c := range []struct {
		rel          string
		major, minor int
		ok           bool
	}{{"6.1.0-48-amd64", 6, 1, true}, {"7.3.4+deb13-amd64", 7, 3, true}, {"6.18", 6, 18, true}, {"5.15.0", 5, 15, true},
		{"6.10-rc1", 6, 10, true}, {"six", 0, 0, false}, {"6.x", 6, 0, false}} {
		ma, mi, ok := parseRelease(c.rel)
		if ma != c.major || mi != c.minor || ok != c.ok {
			t.Errorf("%q: %d.%d %v, want %d.%d %v", c.rel, ma, mi, ok, c.major, c.minor, c.ok)
		}
	}
}

// The jobs record mode refuses a host where virtio_gpu's hooks attached (its jobs need the
// per-event dma_fence records), names the driver and the mode to use; it runs where the
// driver's hooks did not attach, and the events mode never refuses.
func TestJobsModeRefusesVirtioGPU(t *testing.T) {
	virtio := capability.Report{}
	virtio.Add(StageIoctl, "fentry/drm_ioctl", capability.StatusAttached, "")
	virtio.Add("virtio_gpu", "tp_btf/virtio_gpu_cmd_queue", capability.StatusUnavailable, "rejected by the verifier")
	virtio.Add("virtio_gpu", "tracepoint/virtio_gpu/virtio_gpu_cmd_queue", capability.StatusAttached, "")
	absent := capability.Report{}
	absent.Add(StageIoctl, "fentry/drm_ioctl", capability.StatusAttached, "")
	absent.Add("virtio_gpu", "tp_btf/virtio_gpu_cmd_queue", capability.StatusUnavailable, "tracepoint not present")
	jobs, events := Config{Records: RecordsJobs}, Config{Records: RecordsEvents}
	err := jobsModeRefusal(jobs, virtio)
	if err == nil || !strings.Contains(err.Error(), "virtio_gpu has no scheduler") || !strings.Contains(err.Error(), `use records "events"`) {
		t.Errorf("jobs mode with virtio_gpu attached: %v", err)
	}
	if err := jobsModeRefusal(jobs, absent); err != nil {
		t.Errorf("jobs mode, virtio_gpu not attached: %v", err)
	}
	if err := jobsModeRefusal(events, virtio); err != nil {
		t.Errorf("events mode: %v", err)
	}
}
