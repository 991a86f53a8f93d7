// The record mode of the live source (Config.Records): per-job records aggregated in the
// kernel (bpf/jobs.c) or one record per hook run (the event stream, for debugging).

package probe

import "fmt"

// Record modes.
const (
	// RecordsJobs: the gpu_scheduler and dma_fence hooks keep each job's stamps in a
	// kernel hash and send one record when it completes (bpf/jobs.c).
	RecordsJobs = "jobs"
	// RecordsEvents: every hook run sends its own record.
	RecordsEvents = "events"
)

// DefaultRecords is the mode used when Config.Records is empty. Jobs mode gives the events
// mode's spans on the virtual GPU rig's Debian 6.1 and 7.3 kernels (e2e/vgpu_jobs_test.go),
// but it is not the default yet: it measured only 6 % less kernel CPU per job than the
// events since neither hooks the fences' destroys (7.9× against 8.4× the floor;
// BENCHMARKS.md, "Per-job records in the kernel"), it
// delays a job's events until the oldest pending job finishes, and the late-IRQ refresh
// and the fence filter do not run in it.
const DefaultRecords = RecordsEvents

// DefaultJobsMapEntries sizes the kernel's pending-job hash (and the fence → job maps).
const DefaultJobsMapEntries = 16384

// maxJobsMapEntries bounds JobsMapEntries: about 440 bytes an entry, allocated as jobs
// come from 6.1 and preallocated before (jobsMapSizes), plus a preallocated fence-role
// entry (about 104 bytes) per unit of the bound.
const maxJobsMapEntries = 1 << 20

// withJobsDefaults fills and checks Records and JobsMapEntries.
func (c Config) withJobsDefaults() (Config, error) {
	if c.Records == "" {
		c.Records = DefaultRecords
		if c.ClassicTracepoints {
			c.Records = RecordsEvents // the classic rung reads no structure: no per-job state
		}
	}
	switch c.Records {
	case RecordsJobs:
		if c.FenceFilter {
			return c, fmt.Errorf("records %q with the fence filter: the filter is fed by the events mode's fence hooks; use records %q or turn the filter off", RecordsJobs, RecordsEvents)
		}
	case RecordsEvents:
	default:
		return c, fmt.Errorf("records %q: want %q or %q", c.Records, RecordsJobs, RecordsEvents)
	}
	if c.JobsMapEntries == 0 {
		c.JobsMapEntries = DefaultJobsMapEntries
	}
	if c.JobsMapEntries < 64 || c.JobsMapEntries > maxJobsMapEntries {
		return c, fmt.Errorf("jobs map entries %d: want 64..%d", c.JobsMapEntries, maxJobsMapEntries)
	}
	if c.Records == RecordsJobs && c.ClassicTracepoints {
		return c, fmt.Errorf("records %q reads the scheduler's structures through BTF; classic tracepoints need records %q",
			RecordsJobs, RecordsEvents)
	}
	return c, nil
}

// jobsMode reports whether the jobs family replaces the per-event scheduler and fence hooks.
func (c Config) jobsMode() bool { return c.Records == RecordsJobs }
