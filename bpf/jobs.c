//go:build ignore
// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * The per-job record mode (live.records: jobs). The gpu_scheduler and dma_fence hooks
 * write a job's stamps into its entry of the `jobs` hash, keyed by the job's finished
 * fence (context, seqno), and reserve nothing in the ring buffer; when the finished fence
 * signals (or, where the dma_fence_signaled hook is not attached, at the done event) the
 * entry goes out as ONE struct job_record (bpf/include/jobrec.h). Dependency edges go out
 * as they happen (the struct record of sched.c's hooks), and the signal of a fence a
 * dependency waits on that is no job's own goes out as sched.c's fence_record. Scheduler
 * and device names go once per scheduler (struct job_names_record).
 *
 * Which fences belong to a job, decided in the kernel the way the assembler decides it
 * from the event stream (internal/assemble/fences.go): a fence created or emitted by the
 * thread that ran the job, between its run event and the signal of its scheduled fence
 * (context one below the finished fence's, same seqno), is its hardware fence; a fence
 * whose (context + 1, seqno) is a pending job is that job's scheduled fence. A signalled
 * fence's ops pointer says which of the three lookups can match: the scheduler gives its
 * scheduled and finished fences their own dma_fence_ops (drm_sched_fence_ops_scheduled /
 * _finished in sched_fence.c, both generations; to_drm_sched_fence tells them apart the
 * same way), which the queue hook learns from the first job's s_fence.
 *
 * Bounds: `jobs` is a preallocated hash sized by Config.JobsMapEntries. A new job that
 * finds it full is counted (JC_FULL) and each of its hooks sends its stamp at once, marked
 * JF_NO_STATE: nothing is silently lost. The auxiliary maps (running thread → job, fence
 * roles: hardware fence → job and watched dependencies, schedulers seen) are LRU hashes:
 * losing an entry of theirs costs a stamp, never a job.
 */
#include "ghostdriver.h"
#include "drm_types.h"
#include "jobrec.h"
#include "sched_reads.h"
#include "twin_progs.h"

char __license[] SEC("license") = "Dual MIT/GPL";

/* Referenced so that bpf2go emits the Go types. */
const struct job_record *unused_job_record __attribute__((unused));
const struct job_names_record *unused_job_names_record __attribute__((unused));
const struct job_pending *unused_job_pending __attribute__((unused));
const enum job_slot *unused_job_slot __attribute__((unused));
const enum job_flag *unused_job_flag __attribute__((unused));
const enum job_counter *unused_job_counter __attribute__((unused));
const struct fence_role *unused_fence_role __attribute__((unused));

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384); /* Config.JobsMapEntries */
	__type(key, struct fence_key);
	__type(value, struct job_record);
} jobs SEC(".maps");

/* Scheduler worker thread → the job it ran last, until that job's scheduled fence signals. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct fence_key);
} running SEC(".maps");

/*
 * What a fence that is not a scheduler fence is to the jobs: the hardware fence of a job
 * (FR_HW: created or emitted in its run window) and/or a dependency some job waits on
 * (FR_WATCHED: its signal is sent even when it is no job's own). One lookup tells both.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384); /* Config.JobsMapEntries */
	__type(key, struct fence_key);
	__type(value, struct fence_role);
} fence_roles SEC(".maps");

/* Schedulers whose names record was sent. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024);
	__type(key, __u64);
	__type(value, __u8);
} sched_seen SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct job_pending);
} jobs_pending SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, JC_COUNT);
	__type(key, __u32);
	__type(value, __u64);
} jobs_stats SEC(".maps");

/*
 * A zeroed job_record that no program writes: the value a new job's entry is inserted
 * with, then filled in place. There is no per-CPU scratch in this file, on purpose: a
 * tracing program runs with migration disabled but, on a preemptible kernel, can be
 * preempted, and another hook's program on the same CPU then reused a shared scratch
 * while the first was still filling it. On the 7.3 guest that put one job's queue stamp
 * and hardware fence under another job's key (a queue program preempted for 7 ms while
 * the scheduler's worker created a job on the same CPU).
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct job_record);
} jobs_zero SEC(".maps");

/*
 * jobs_cfg[0]: 1 once user space has attached this family's dma_fence_signaled program, so
 * the finished fence's signal (which follows the done event) ends the job; 0: the done
 * event does.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} jobs_cfg SEC(".maps");

/*
 * The scheduler's dma_fence_ops of its scheduled and finished fences, learned from the
 * first job's s_fence (0 until then: the signal hook then tries every lookup).
 */
__u64 sched_ops_scheduled = 0, sched_ops_finished = 0;

/* Threads with an entry in `running` (a job's run window open): 0 lets the fence
 * creation hooks return without a lookup. Entries the LRU evicts keep it above 0, which
 * only costs that shortcut. */
__s64 run_windows = 0;

/* The scheduler whose names record was sent last: most jobs need no sched_seen lookup. */
__u64 names_last = 0;

/* Atomic although per CPU: two programs can interleave on one CPU (see jobs_zero). */
static __always_inline void count(__u32 c)
{
	__u64 *n = bpf_map_lookup_elem(&jobs_stats, &c);
	if (n)
		__sync_fetch_and_add(n, 1);
}

static __always_inline void stamp_at(struct job_record *j, __u32 slot, __u16 hook, __u64 ts)
{
	if (slot >= JS_COUNT)
		return;
	struct job_stamp *s = &j->st[slot];
	s->ts = ts;
	s->pid_tgid = bpf_get_current_pid_tgid();
	s->cpu = bpf_get_smp_processor_id();
	s->hook = hook;
	j->slots |= 1u << slot;
}

static __always_inline void stamp(struct job_record *j, __u32 slot, __u16 hook)
{
	stamp_at(j, slot, hook, bpf_ktime_get_ns());
}

static __always_inline void pending_add(__u16 bucket, __s64 d)
{
	__u32 zero = 0;
	struct job_pending *p = bpf_map_lookup_elem(&jobs_pending, &zero);
	if (p)
		__sync_fetch_and_add(&p->n[bucket & (JOB_BUCKETS - 1)], d);
}

/*
 * The job's entry, created when it has none: inserted as a copy of jobs_zero and filled in
 * place by the caller. ts is the time of the stamp the caller is about to write (its
 * pending bucket). Returns NULL when the map is full (counted JC_FULL; the caller sends its
 * stamp alone) or when the entry vanished at once (another CPU sent it).
 *
 * The bucket is written right after the insert; the entry's sender reads it. No sender
 * can come between: a job is sent at its finished fence's signal (or its done event),
 * which the kernel raises only after every hook that can create the entry (queue, run,
 * done) has returned for that job.
 */
static __always_inline struct job_record *job_get(struct fence_key *k, __u64 ts)
{
	struct job_record *j = bpf_map_lookup_elem(&jobs, k);
	if (j)
		return j;
	__u32 zero = 0;
	struct job_record *z = bpf_map_lookup_elem(&jobs_zero, &zero);
	if (!z)
		return 0;
	long err = bpf_map_update_elem(&jobs, k, z, BPF_NOEXIST);
	if (err != 0 && err != -17 /* EEXIST: another CPU created it */) {
		count(JC_FULL);
		return 0;
	}
	j = bpf_map_lookup_elem(&jobs, k);
	if (!j || err != 0)
		return j;
	j->fence_ctx = k->ctx;
	j->fence_seqno = k->seqno;
	j->bucket = (ts >> JOB_BUCKET_SHIFT) & (JOB_BUCKETS - 1);
	pending_add(j->bucket, 1);
	return j;
}

/*
 * A record of one stamp, built in its ring reservation and sent at once: no state could
 * be kept (flag JF_NO_STATE: the map was full; JF_NO_KEY: no finished fence). NULL when
 * the ring is full (counted in `lost`); otherwise the caller fills it and calls
 * ring_submit.
 */
static __always_inline struct job_record *alone_reserve(struct fence_key *k, __u16 flag)
{
	struct job_record *r = ring_reserve(sizeof(*r));
	if (!r)
		return 0;
	__builtin_memset(r, 0, sizeof(*r));
	r->fence_ctx = k->ctx;
	r->fence_seqno = k->seqno;
	r->flags = flag;
	return r;
}

/*
 * Sends a job's state and removes it; the CPU whose delete succeeds is the one that sends.
 * (Written so that the reservation is never NULL on a path that holds it: older verifiers,
 * 6.1's, lose track of a nullable reservation across a helper call.)
 */
static __always_inline void job_send(struct fence_key *k, struct job_record *j)
{
	__u16 bucket = j->bucket;
	struct job_record *r = ring_reserve(sizeof(*r));
	if (!r) {
		if (bpf_map_delete_elem(&jobs, k) == 0) {
			pending_add(bucket, -1);
			count(JC_RING_FULL); /* the job is lost: counted here and in `lost` */
		}
		return;
	}
	__builtin_memcpy(r, j, sizeof(*r));
	if (bpf_map_delete_elem(&jobs, k) != 0) {
		bpf_ringbuf_discard(r, BPF_RB_NO_WAKEUP);
		count(JC_RACE);
		return;
	}
	/* committed before the job stops counting as pending: the reader relies on it */
	ring_submit(r);
	pending_add(bucket, -1);
	count(JC_EMITTED);
}

static __always_inline void read_fence_key(struct dma_fence *f, struct fence_key *k)
{
	k->ctx = 0;
	k->seqno = 0;
	read_fence(f, &k->ctx, &k->seqno);
}

static __always_inline void names_once(struct drm_gpu_scheduler___gd *s)
{
	__u64 key = (__u64)s;
	if (!s || key == names_last)
		return;
	if (bpf_map_lookup_elem(&sched_seen, &key)) {
		names_last = key;
		return;
	}
	__u8 one = 1;
	if (bpf_map_update_elem(&sched_seen, &key, &one, BPF_NOEXIST) != 0)
		return;
	names_last = key;
	struct job_names_record *r = ring_reserve(sizeof(*r));
	if (!r)
		return;
	__builtin_memset(r, 0, sizeof(*r));
	r->ts = bpf_ktime_get_ns();
	r->sched = key;
	r->magic = JOB_NAMES_MAGIC;
	read_sched_names(s, r->ring, sizeof(r->ring), r->dev, sizeof(r->dev));
	count(JC_NAMES);
	ring_submit(r);
}

/* The scheduler's fence ops, from a job's s_fence (once). */
static __always_inline void learn_sched_ops(struct drm_sched_fence___gd *sf)
{
	if (sched_ops_finished)
		return;
	__u64 sch = (__u64)BPF_CORE_READ(sf, scheduled.ops);
	__u64 fin = (__u64)BPF_CORE_READ(sf, finished.ops);
	if (sch && fin && sch != fin) {
		sched_ops_scheduled = sch;
		sched_ops_finished = fin;
	}
}

/*
 * The ids a queue or run event carries (what record_sched_job reads for sched.c, into the
 * job's state). A run
 * after the job's queue was stamped reads only what the run adds (the hardware fence):
 * the rest is the same job's and already there.
 */
static __always_inline void job_ids(struct job_record *j, struct drm_sched_job___gd *job, void *entity,
				    struct drm_sched_fence___gd *sf, bool run)
{
	if (!run || !(j->slots & (1u << JS_QUEUE))) {
		j->job_ptr = (__u64)job;
		j->entity = entity ? (__u64)entity : (__u64)BPF_CORE_READ(job, entity);
		sched_job_id(job, &j->job_id);
		sched_client_id(sf, &j->client_id);
		struct drm_gpu_scheduler___gd *s = BPF_CORE_READ(job, sched);
		j->sched = (__u64)s;
		names_once(s);
	} else if (entity) {
		j->entity = (__u64)entity;
	}
	if (run && sched_hw_fence(sf, &j->run_hw_ctx, &j->run_hw_seqno))
		j->flags |= JF_RUN_HW;
}

/* What a queue or run event writes into the job's state. */
static __always_inline void job_fill(struct job_record *j, __u16 hook, __u32 slot, struct drm_sched_job___gd *job,
				     void *entity, struct drm_sched_fence___gd *sf)
{
	job_ids(j, job, entity, sf, slot == JS_RUN);
	stamp(j, slot, hook);
	if (slot == JS_QUEUE)
		bpf_get_current_comm(j->comm, sizeof(j->comm));
}

/* queue (slot JS_QUEUE) / run (JS_RUN): (struct drm_sched_job *, struct drm_sched_entity *) */
static __always_inline int on_job(__u16 hook, __u32 slot, struct drm_sched_job___gd *job, void *entity)
{
	if (!job)
		return 0;
	/*
	 * The queue is stamped into the job's state, not sent, but it is what joins the job to
	 * the submitting thread's ioctl: that ioctl's deferred entry goes out now (ioctl_slot.h).
	 */
	if (slot == JS_QUEUE)
		ioctl_flush();
	struct drm_sched_fence___gd *sf = BPF_CORE_READ(job, s_fence);
	struct fence_key k = {};
	struct job_record *j = 0;
	if (sf) {
		learn_sched_ops(sf);
		sched_finished_key(sf, &k.ctx, &k.seqno);
		j = bpf_map_lookup_elem(&jobs, &k);
	} else {
		count(JC_NO_KEY);
	}
	if (!j && sf)
		j = job_get(&k, bpf_ktime_get_ns());
	if (j) {
		job_fill(j, hook, slot, job, entity, sf);
	} else {
		struct job_record *r = alone_reserve(&k, sf ? JF_NO_STATE : JF_NO_KEY);
		if (!r)
			return 0;
		job_fill(r, hook, slot, job, entity, sf);
		ring_submit(r);
	}
	if (slot == JS_RUN && sf) {
		__u32 tid = (__u32)bpf_get_current_pid_tgid();
		if (bpf_map_update_elem(&running, &tid, &k, BPF_NOEXIST) == 0)
			__sync_fetch_and_add(&run_windows, 1);
		else
			bpf_map_update_elem(&running, &tid, &k, BPF_ANY);
	}
	return 0;
}

static __always_inline bool end_at_signal(void)
{
	__u32 zero = 0;
	__u32 *v = bpf_map_lookup_elem(&jobs_cfg, &zero);
	return v && *v;
}

/* What a done event writes into the job's state. */
static __always_inline void done_fill(struct job_record *j, __u16 hook, struct drm_sched_fence___gd *sf)
{
	stamp(j, JS_DONE, hook);
	j->done_ptr = (__u64)sf;
	if (sched_hw_fence(sf, &j->done_hw_ctx, &j->done_hw_seqno))
		j->flags |= JF_DONE_HW;
	/* the queue event read it from the same s_fence */
	if (!(j->slots & (1u << JS_QUEUE)))
		sched_client_id(sf, &j->client_id);
}

/* done (JS_DONE): (struct drm_sched_fence *) */
static __always_inline int on_done(__u16 hook, struct drm_sched_fence___gd *sf)
{
	if (!sf)
		return 0;
	struct fence_key k;
	sched_finished_key(sf, &k.ctx, &k.seqno);
	struct job_record *j = job_get(&k, bpf_ktime_get_ns());
	if (!j) {
		struct job_record *r = alone_reserve(&k, JF_NO_STATE);
		if (!r)
			return 0;
		done_fill(r, hook, sf);
		ring_submit(r);
		return 0;
	}
	done_fill(j, hook, sf);
	/* kept when the finished fence's signal ends it */
	if (!end_at_signal())
		job_send(&k, j);
	return 0;
}

/* Marks a fence's role (FR_*); hw: the job (its finished fence) it is the hardware fence of. */
static __always_inline void role_set(struct fence_key *fk, __u32 bit, struct fence_key *job)
{
	struct fence_role *r = bpf_map_lookup_elem(&fence_roles, fk);
	if (r) {
		if (job)
			r->job = *job;
		r->role |= bit; /* a lost race costs a stamp (the LRU contract) */
		return;
	}
	struct fence_role nr = {.role = bit};
	if (job)
		nr.job = *job;
	bpf_map_update_elem(&fence_roles, fk, &nr, BPF_ANY);
}

/*
 * Dependency edges (add_dep / unschedulable / wait_dep): sched.c's record, sent as it
 * happens, and the dependency fence is watched so that its signal is sent too.
 */
static __always_inline int on_dep(__u16 hook, struct drm_sched_job___gd *job, struct dma_fence *dep)
{
	struct record *r = rec_reserve(hook);
	if (!r)
		return 0;
	record_sched_job(r, job);
	if (dep) {
		read_fence(dep, &r->dep_ctx, &r->dep_seqno);
		r->flags |= RF_DEP_WIDE | RF_HAS_DEP;
		struct fence_key dk = {.ctx = r->dep_ctx, .seqno = r->dep_seqno};
		role_set(&dk, FR_WATCHED, 0);
	}
	rec_submit(r);
	return 0;
}

/*
 * dma_fence_init / dma_fence_emit: a fence created by a thread inside a job's run window.
 * Outside every run window (the scheduler's own fences at arm, other drivers' fences) it
 * returns before any lookup.
 */
static __always_inline int on_fence_created(__u16 hook, struct dma_fence *f)
{
	if (run_windows <= 0 || !f)
		return 0;
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct fence_key *jk = bpf_map_lookup_elem(&running, &tid);
	if (!jk)
		return 0;
	struct fence_key jkey = *jk;
	struct job_record *j = bpf_map_lookup_elem(&jobs, &jkey);
	if (!j)
		return 0;
	struct fence_key fk;
	read_fence_key(f, &fk);
	if (hook == HOOK_DMA_FENCE_EMIT) {
		stamp(j, JS_HW_EMIT, hook);
		j->hw_emit_ctx = fk.ctx;
		j->hw_emit_seqno = fk.seqno;
		/* the fence created in the same window already has its role */
		if ((j->slots & (1u << JS_HW_INIT)) && j->hw_init_ctx == fk.ctx && j->hw_init_seqno == fk.seqno)
			return 0;
	} else {
		stamp(j, JS_HW_INIT, hook);
		j->hw_init_ctx = fk.ctx;
		j->hw_init_seqno = fk.seqno;
	}
	role_set(&fk, FR_HW, &jkey);
	return 0;
}

/* A scheduled fence's signal: run_job has returned, the job's run window closes. */
static __always_inline void run_window_close(struct fence_key *fin)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct fence_key *rk = bpf_map_lookup_elem(&running, &tid);
	if (rk && rk->ctx == fin->ctx && rk->seqno == fin->seqno && bpf_map_delete_elem(&running, &tid) == 0)
		__sync_fetch_and_add(&run_windows, -1);
}

/*
 * dma_fence_signaled: a job's finished, scheduled or hardware fence, or a watched one; a
 * fence is at most one of them. The fence's ops pointer says whether it is a scheduler
 * fence and which (once learned; before, every lookup is tried): a finished or scheduled
 * fence costs one lookup in `jobs`, any other fence one in `fence_roles` (and a hardware
 * fence one more, in `jobs`). Fence keys are never reused (a context's seqnos only grow),
 * so the role entries of matched fences are left to the LRU map's own eviction.
 */
static __always_inline int on_fence_signaled(__u16 hook, struct dma_fence *f)
{
	if (!f)
		return 0;
	struct fence_key k;
	read_fence_key(f, &k);
	__u64 ops = sched_ops_finished ? (__u64)BPF_CORE_READ(f, ops) : 0;

	struct job_record *j;
	if (!ops || ops == sched_ops_finished) {
		j = bpf_map_lookup_elem(&jobs, &k);
		if (j) { /* the finished fence: the job is complete */
			stamp(j, JS_FIN_SIGNAL, hook);
			job_send(&k, j);
			return 0;
		}
	}
	if (!ops || ops == sched_ops_scheduled) {
		struct fence_key fin = {.ctx = k.ctx + 1, .seqno = k.seqno};
		j = bpf_map_lookup_elem(&jobs, &fin);
		if (j) { /* the scheduled fence */
			stamp(j, JS_SCHED_SIGNAL, hook);
			run_window_close(&fin);
			return 0;
		}
	}
	struct fence_role *role = bpf_map_lookup_elem(&fence_roles, &k);
	if (!role)
		return 0;
	if (role->role & FR_HW) {
		struct fence_key jkey = role->job;
		j = bpf_map_lookup_elem(&jobs, &jkey);
		if (j) {
			stamp(j, JS_HW_SIGNAL, hook);
			j->hw_sig_ctx = k.ctx;
			j->hw_sig_seqno = k.seqno;
			return 0;
		}
	}
	if (!(role->role & FR_WATCHED))
		return 0;
	/* fence.c's record of the same signal */
	struct fence_record *r = fence_reserve(hook);
	if (!r)
		return 0;
	r->ptr = (__u64)f;
	r->fence_ctx = k.ctx;
	r->fence_seqno = k.seqno;
	r->flags = RF_FENCE_WIDE | RF_HAS_FENCE;
	count(JC_WATCHED);
	ring_submit(r);
	return 0;
}

/* <= 6.16 */
TWIN_SCHED_JOB(jobs_, drm_sched_job, on_job, HOOK_DRM_SCHED_JOB, JS_QUEUE)
TWIN_SCHED_JOB(jobs_, drm_run_job, on_job, HOOK_DRM_RUN_JOB, JS_RUN)
TWIN_SCHED_DONE(jobs_, drm_sched_process_job, on_done, HOOK_DRM_SCHED_PROCESS_JOB)
TWIN_SCHED_DEP(jobs_, drm_sched_job_wait_dep, on_dep, HOOK_DRM_SCHED_JOB_WAIT_DEP)
/* 6.17+ */
TWIN_SCHED_JOB(jobs_, drm_sched_job_queue, on_job, HOOK_DRM_SCHED_JOB_QUEUE, JS_QUEUE)
TWIN_SCHED_JOB(jobs_, drm_sched_job_run, on_job, HOOK_DRM_SCHED_JOB_RUN, JS_RUN)
TWIN_SCHED_DONE(jobs_, drm_sched_job_done, on_done, HOOK_DRM_SCHED_JOB_DONE)
TWIN_SCHED_DEP(jobs_, drm_sched_job_add_dep, on_dep, HOOK_DRM_SCHED_JOB_ADD_DEP)
TWIN_SCHED_DEP(jobs_, drm_sched_job_unschedulable, on_dep, HOOK_DRM_SCHED_JOB_UNSCHEDULABLE)
/* dma_fence */
TWIN_FENCE(jobs_, dma_fence_init, on_fence_created, HOOK_DMA_FENCE_INIT)
TWIN_FENCE(jobs_, dma_fence_emit, on_fence_created, HOOK_DMA_FENCE_EMIT)
TWIN_FENCE(jobs_, dma_fence_signaled, on_fence_signaled, HOOK_DMA_FENCE_SIGNALED)
