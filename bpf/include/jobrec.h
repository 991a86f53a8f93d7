/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * The per-job record mode (live.records: jobs, bpf/jobs.c): what one job's kernel state
 * looks like while the job is pending (a hash entry keyed by its finished fence) and the
 * one ring-buffer record it becomes when it completes, plus the once-per-scheduler names
 * record. bpf2go generates the Go mirrors (jobs.c, -type job_record -type job_names_record
 * -type job_slot -type job_flag -type job_counter); user space turns a job record back into
 * the events the per-event hooks would have sent (internal/probe/jobs_decode.go).
 */
#pragma once

#include "ghostdriver.h"

/*
 * The stamps a job record can carry, one per hook that ran for the job. Values index
 * job_record.st and are part of the record format: append, never renumber.
 */
enum job_slot {
	JS_QUEUE = 0,	     /* drm_sched_job / drm_sched_job_queue */
	JS_RUN = 1,	     /* drm_run_job / drm_sched_job_run */
	JS_HW_INIT = 2,	     /* dma_fence_init on the worker between run and the scheduled signal */
	JS_HW_EMIT = 3,	     /* dma_fence_emit, same window */
	JS_SCHED_SIGNAL = 4, /* dma_fence_signaled of the job's scheduled fence */
	JS_HW_SIGNAL = 5,    /* dma_fence_signaled of a fence created in the run window */
	JS_DONE = 6,	     /* drm_sched_process_job / drm_sched_job_done */
	JS_FIN_SIGNAL = 7,   /* dma_fence_signaled of the job's finished fence */
	JS_COUNT = 8,
};

/* job_record.flags */
enum job_flag {
	JF_NO_STATE = 1 << 0,  /* the jobs map was full: this record is one hook's stamp, sent at once */
	JF_RUN_HW = 1 << 1,    /* run_hw_* set (s_fence->parent at the run event) */
	JF_DONE_HW = 1 << 2,   /* done_hw_* set (s_fence->parent at the done event) */
	JF_NO_KEY = 1 << 3,    /* the job had no finished fence to key it: one stamp, sent at once */
	JF_EVICTED = 1 << 4,   /* set by user space: taken out of the map before it completed */
};

/* One hook run: what the per-event record's header would have said. */
struct job_stamp {
	__u64 ts;	/* bpf_ktime_get_ns() */
	__u64 pid_tgid;
	__u32 cpu;
	__u16 hook;	/* enum hook */
	__u16 _pad;
};

/* Key of the jobs map and of the fence → job maps: a dma_fence's (context, seqno). */
struct fence_key {
	__u64 ctx;
	__u64 seqno;
};

/* What a fence is to the jobs (bpf/jobs.c fence_roles). */
enum fence_role_bit {
	FR_HW = 1 << 0,	     /* a job's hardware fence: job says whose */
	FR_WATCHED = 1 << 1, /* a dependency some job waits on */
};

struct fence_role {
	struct fence_key job; /* the job's finished fence (FR_HW) */
	__u32 role;	      /* enum fence_role_bit */
	__u32 _pad;
};

/*
 * A job's state (jobs map value) and, unchanged, its ring-buffer record. Naturally
 * aligned, no implicit padding. Its size tells it apart from every other sample
 * (internal/probe/jobs_decode.go checks this at compile time).
 */
struct job_record {
	__u64 fence_ctx; /* the finished fence: the key */
	__u64 fence_seqno;
	__u64 sched;	 /* drm_gpu_scheduler pointer: key of the names record */
	__u64 job_id;	 /* drm_sched_job.id (<= 6.16) */
	__u64 entity;
	__u64 client_id; /* drm_sched_fence.drm_client_id (6.17+) */
	__u64 job_ptr;	 /* the drm_sched_job (queue/run events' ptr) */
	__u64 done_ptr;	 /* the drm_sched_fence of the done event */
	__u64 run_hw_ctx, run_hw_seqno;
	__u64 done_hw_ctx, done_hw_seqno;
	__u64 hw_init_ctx, hw_init_seqno; /* the last fence created in the run window */
	__u64 hw_emit_ctx, hw_emit_seqno; /* the last fence emitted in the run window */
	__u64 hw_sig_ctx, hw_sig_seqno;	  /* the run-window fence whose signal is JS_HW_SIGNAL */
	struct job_stamp st[JS_COUNT];
	__u32 slots; /* bit per enum job_slot set */
	__u16 flags; /* enum job_flag */
	__u16 bucket; /* pending-bucket index the job was counted in (jobs_pending) */
	char comm[16]; /* the queueing thread's comm */
};

/*
 * Sent once per scheduler, the first time a job of it is queued or run: its name and its
 * device's, which per-event records carried in every scheduler event.
 */
struct job_names_record {
	__u64 ts;
	__u64 sched;
	__u32 magic; /* JOB_NAMES_MAGIC */
	__u32 _pad;
	char ring[16];
	char dev[16];
};

#define JOB_NAMES_MAGIC 0x6a6e616d /* "jnam" */

/*
 * Pending jobs by the time they were first seen: bucket (ts >> JOB_BUCKET_SHIFT) &
 * (JOB_BUCKETS - 1). User space holds its events back to the oldest non-empty bucket, so
 * that the stamps of a job record (sent at completion) are never behind what the
 * assembler has already released. 1024 buckets of 16.8 ms: 17 s of history.
 */
#define JOB_BUCKET_SHIFT 24
#define JOB_BUCKETS 1024

struct job_pending {
	__s64 n[JOB_BUCKETS];
};

/* jobs_stats (per CPU): what the kernel counts in jobs mode. Append only. */
enum job_counter {
	JC_EMITTED = 0,	     /* job records sent at completion */
	JC_FULL = 1,	     /* a new job found the jobs map full: its stamps went out one by one */
	JC_NO_KEY = 2,	     /* a scheduler event without a finished fence */
	JC_RACE = 3,	     /* completion seen twice (the other CPU sent the record) */
	JC_NAMES = 4,	     /* names records sent */
	JC_RING_FULL = 5,    /* a job record could not be reserved (also counted in lost) */
	JC_WATCHED = 6,	     /* fence signals sent because a dependency waited on them */
	JC_COUNT = 8,
};
