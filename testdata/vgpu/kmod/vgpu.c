// SPDX-License-Identifier: GPL-2.0
/*
 * vgpu — a virtual GPU for ghostdriver's tests. Test-only; never load it on a real machine.
 *
 * A real DRM driver without hardware: a render node, shmem GEM buffer objects, syncobj and sync_file
 * in/out fences, one drm_sched scheduler per ring, and a serial "engine" per ring modelled by an
 * hrtimer that fires in hard-IRQ context and signals the job's hardware fence, exactly where a real
 * GPU's completion interrupt would. Every job the engine ran is appended to a ground-truth log,
 * /sys/kernel/debug/vgpu/groundtruth, so spans built from kernel hooks can be checked against what
 * the "hardware" really did.
 *
 * The functions a tracer is expected to hook are noinline on purpose:
 *   vgpu_validate_bos  BO lookup + reservation (fentry/fexit: the bo_validation stage, t1)
 *   vgpu_run_job       scheduler run_job: creates and emits the hardware fence (te = fexit, or the
 *                      dma_fence_emit tracepoint it fires)
 *   vgpu_engine_irq    the completion "interrupt" (hrtimer, HRTIMER_MODE_ABS_HARD)
 *
 * Engine model (per ring, serial): a job starts when run_job handed it over or when the previous job
 * on the ring ended, whichever is later, and ends engine_ns later — as late as the hrtimer actually
 * fires. hw_start_ns/hw_end_ns in the log are the times the model really used (ktime_get_ns(),
 * CLOCK_MONOTONIC), so hw_end_ns - hw_start_ns - engine_ns is the timer noise.
 *
 * Builds for Debian bookworm 6.1 (whose drm_sched carries the backported drm_sched_init_args API)
 * and Debian trixie-backports 7.3 (6.17+ scheduler: credits + client id in drm_sched_job_init, no
 * drm_sched_job.id, hrtimer_setup, DRM_GPU_SCHED_STAT_RESET).
 */
#include <linux/debugfs.h>
#include <linux/dma-mapping.h>
#include <linux/dma-resv.h>
#include <linux/file.h>
#include <linux/hrtimer.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/platform_device.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/sync_file.h>
#include <linux/version.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_gem_shmem_helper.h>
#include <drm/drm_ioctl.h>
#include <drm/drm_syncobj.h>
#include <drm/gpu_scheduler.h>
#include <trace/events/dma_fence.h>

#include "vgpu_drm.h"

/* Kernel API generations (mainline version that changed it; Debian 6.1 has the drm_sched_init_args backport). */
#define VGPU_SCHED_CREDITS   (LINUX_VERSION_CODE >= KERNEL_VERSION(6, 8, 0))  /* job_init credits, init_args.num_rqs */
#define VGPU_SCHED_CLIENT_ID (LINUX_VERSION_CODE >= KERNEL_VERSION(6, 17, 0)) /* job_init client id; job.id gone */
#define VGPU_HRTIMER_SETUP   (LINUX_VERSION_CODE >= KERNEL_VERSION(6, 15, 0))
#define VGPU_DRV_DATE        (LINUX_VERSION_CODE < KERNEL_VERSION(6, 14, 0))

#define VGPU_MAX_DEPS 4
#define VGPU_GT_MAX   16384
#define VGPU_CREDIT_LIMIT 64

static unsigned int gt_max = VGPU_GT_MAX;
module_param(gt_max, uint, 0444);
MODULE_PARM_DESC(gt_max, "ground-truth log capacity (jobs)");

struct vgpu_device;

struct vgpu_ring {
	struct vgpu_device *vdev;
	unsigned int idx;
	char name[16];
	struct drm_gpu_scheduler sched;
	struct drm_gpu_scheduler *sched_list[1];

	raw_spinlock_t lock;		/* engine state: queue, busy, seqno */
	struct list_head queue;		/* handed-over jobs; the head is on the engine */
	bool busy;
	struct hrtimer timer;		/* the engine's completion "interrupt" */

	spinlock_t fence_lock;		/* hardware fences of this ring */
	u64 fence_context;
	u64 fence_seqno;
};

struct vgpu_device {
	struct drm_device drm;
	struct vgpu_ring rings[VGPU_NUM_RINGS];
};

struct vgpu_file {
	struct drm_sched_entity entity[VGPU_NUM_RINGS];
	struct mutex submit_lock;	/* drm_sched_job_arm + push must not interleave per entity */
};

struct vgpu_job {
	struct drm_sched_job base;
	struct kref ref;		/* the scheduler's (free_job) + the submit ioctl's until it unlocks the BOs */
	struct vgpu_ring *ring;
	struct list_head node;		/* on ring->queue while handed over */
	struct drm_gem_object **bos;
	u32 bo_count;
	u64 engine_ns;
	pid_t pid, tid;
	u64 sched_id;
	u64 submit_ns, handover_ns, hw_start_ns, hw_end_ns;
	u64 fence_context, fence_seqno;	/* the scheduler's finished fence */
	struct dma_fence *hw_fence;
	u64 hw_context, hw_seqno;
	u32 ndeps;
	u64 dep_context[VGPU_MAX_DEPS], dep_seqno[VGPU_MAX_DEPS];
};

/* One line of /sys/kernel/debug/vgpu/groundtruth. */
struct vgpu_gt_entry {
	u32 ring, ndeps;
	pid_t pid, tid;
	u64 fence_context, fence_seqno, sched_id;
	u64 hw_context, hw_seqno;
	u64 submit_ns, handover_ns, hw_start_ns, hw_end_ns, engine_ns;
	u64 dep_context[VGPU_MAX_DEPS], dep_seqno[VGPU_MAX_DEPS];
};

static struct {
	raw_spinlock_t lock;
	struct vgpu_gt_entry *e;
	u32 n;			/* published entries (smp_store_release) */
	u64 dropped;
} gt;

static struct platform_device *vgpu_pdev;
static struct vgpu_device *vgpu_dev;
static struct dentry *vgpu_debugfs;

static inline struct vgpu_job *to_vgpu_job(struct drm_sched_job *j)
{
	return container_of(j, struct vgpu_job, base);
}

static inline struct vgpu_device *to_vgpu(struct drm_device *d)
{
	return container_of(d, struct vgpu_device, drm);
}

/* ---- hardware fences ---------------------------------------------------------------------- */

static const char *vgpu_fence_driver_name(struct dma_fence *f)
{
	return "vgpu";
}

struct vgpu_hw_fence {
	struct dma_fence base;	/* first: the default release kfree()s the whole fence */
	struct vgpu_ring *ring;
};

static const char *vgpu_fence_timeline_name(struct dma_fence *f)
{
	return container_of(f, struct vgpu_hw_fence, base)->ring->name;
}

static const struct dma_fence_ops vgpu_fence_ops = {
	.get_driver_name = vgpu_fence_driver_name,
	.get_timeline_name = vgpu_fence_timeline_name,
};

/* ---- ground truth ------------------------------------------------------------------------- */

static void vgpu_gt_record(const struct vgpu_job *job)
{
	struct vgpu_gt_entry *e;
	unsigned long flags;
	u32 n, i;

	raw_spin_lock_irqsave(&gt.lock, flags);
	n = gt.n;
	if (n >= gt_max) {
		gt.dropped++;
		raw_spin_unlock_irqrestore(&gt.lock, flags);
		return;
	}
	e = &gt.e[n];
	e->ring = job->ring->idx;
	e->pid = job->pid;
	e->tid = job->tid;
	e->fence_context = job->fence_context;
	e->fence_seqno = job->fence_seqno;
	e->sched_id = job->sched_id;
	e->hw_context = job->hw_context;
	e->hw_seqno = job->hw_seqno;
	e->submit_ns = job->submit_ns;
	e->handover_ns = job->handover_ns;
	e->hw_start_ns = job->hw_start_ns;
	e->hw_end_ns = job->hw_end_ns;
	e->engine_ns = job->engine_ns;
	e->ndeps = job->ndeps;
	for (i = 0; i < job->ndeps; i++) {
		e->dep_context[i] = job->dep_context[i];
		e->dep_seqno[i] = job->dep_seqno[i];
	}
	smp_store_release(&gt.n, n + 1);
	raw_spin_unlock_irqrestore(&gt.lock, flags);
}

static void *vgpu_gt_start(struct seq_file *m, loff_t *pos)
{
	u32 n = smp_load_acquire(&gt.n);

	return *pos < n ? &gt.e[*pos] : NULL;
}

static void *vgpu_gt_next(struct seq_file *m, void *v, loff_t *pos)
{
	++*pos;
	return vgpu_gt_start(m, pos);
}

static void vgpu_gt_stop(struct seq_file *m, void *v)
{
}

static int vgpu_gt_show(struct seq_file *m, void *v)
{
	const struct vgpu_gt_entry *e = v;
	u32 i;

	seq_printf(m, "ring=%u fence=%llu:%llu pid=%d tid=%d hw_start_ns=%llu hw_end_ns=%llu engine_ns=%llu "
		   "submit_ns=%llu handover_ns=%llu hw_fence=%llu:%llu sched_id=%llu deps=",
		   e->ring, e->fence_context, e->fence_seqno, e->pid, e->tid, e->hw_start_ns, e->hw_end_ns,
		   e->engine_ns, e->submit_ns, e->handover_ns, e->hw_context, e->hw_seqno, e->sched_id);
	if (!e->ndeps)
		seq_puts(m, "-");
	for (i = 0; i < e->ndeps; i++)
		seq_printf(m, "%s%llu:%llu", i ? "," : "", e->dep_context[i], e->dep_seqno[i]);
	seq_putc(m, '\n');
	return 0;
}

static const struct seq_operations vgpu_gt_sops = {
	.start = vgpu_gt_start,
	.next = vgpu_gt_next,
	.stop = vgpu_gt_stop,
	.show = vgpu_gt_show,
};
DEFINE_SEQ_ATTRIBUTE(vgpu_gt);

/* ---- the engine --------------------------------------------------------------------------- */

/* Called with ring->lock held. */
static void vgpu_engine_start(struct vgpu_ring *ring, struct vgpu_job *job, u64 now)
{
	job->hw_start_ns = max(now, job->handover_ns);
	hrtimer_start(&ring->timer, ns_to_ktime(job->hw_start_ns + job->engine_ns), HRTIMER_MODE_ABS_HARD);
}

/*
 * The completion interrupt: the job at the head of the ring is done. Hard-IRQ context.
 */
static noinline enum hrtimer_restart vgpu_engine_irq(struct hrtimer *t)
{
	struct vgpu_ring *ring = container_of(t, struct vgpu_ring, timer);
	enum hrtimer_restart ret = HRTIMER_NORESTART;
	struct vgpu_job *done, *next;
	struct dma_fence *f;
	u64 now = ktime_get_ns();

	raw_spin_lock(&ring->lock);
	done = list_first_entry_or_null(&ring->queue, struct vgpu_job, node);
	if (!done) {
		ring->busy = false;
		raw_spin_unlock(&ring->lock);
		return HRTIMER_NORESTART;
	}
	list_del_init(&done->node);
	done->hw_end_ns = now;
	f = done->hw_fence;
	done->hw_fence = NULL;
	next = list_first_entry_or_null(&ring->queue, struct vgpu_job, node);
	if (next) {
		next->hw_start_ns = max(now, next->handover_ns);
		hrtimer_set_expires(t, ns_to_ktime(next->hw_start_ns + next->engine_ns));
		ret = HRTIMER_RESTART;
	} else {
		ring->busy = false;
	}
	raw_spin_unlock(&ring->lock);

	/* Log before signalling: once the fence signals, the scheduler may free the job. */
	vgpu_gt_record(done);
	dma_fence_signal(f);
	dma_fence_put(f);
	return ret;
}

/* ---- scheduler backend -------------------------------------------------------------------- */

/*
 * run_job: "write the job to the ring". Creates the hardware fence, emits it (dma_fence_emit, as
 * i915 and others do) and hands the job to the engine.
 */
static noinline struct dma_fence *vgpu_run_job(struct drm_sched_job *sched_job)
{
	struct vgpu_job *job = to_vgpu_job(sched_job);
	struct vgpu_ring *ring = job->ring;
	struct vgpu_hw_fence *hw;
	struct dma_fence *f;
	unsigned long flags;
	u64 now;

	if (unlikely(sched_job->s_fence->finished.error))
		return NULL;

	hw = kzalloc(sizeof(*hw), GFP_KERNEL);
	if (!hw)
		return ERR_PTR(-ENOMEM);
	hw->ring = ring;
	f = &hw->base;

	raw_spin_lock_irqsave(&ring->lock, flags);
	dma_fence_init(f, &vgpu_fence_ops, &ring->fence_lock, ring->fence_context, ++ring->fence_seqno);
	trace_dma_fence_emit(f);
	job->hw_fence = dma_fence_get(f);	/* the engine's reference; the returned one is the scheduler's */
	job->hw_context = f->context;
	job->hw_seqno = f->seqno;
	now = ktime_get_ns();
	job->handover_ns = now;
	list_add_tail(&job->node, &ring->queue);
	if (!ring->busy) {
		ring->busy = true;
		vgpu_engine_start(ring, job, now);
	}
	raw_spin_unlock_irqrestore(&ring->lock, flags);
	return f;
}

static enum drm_gpu_sched_stat vgpu_timedout_job(struct drm_sched_job *sched_job)
{
	/* The timeout is MAX_SCHEDULE_TIMEOUT: a slow TCG guest must not "hang" the fake GPU. */
#if VGPU_SCHED_CLIENT_ID
	return DRM_GPU_SCHED_STAT_RESET;
#else
	return DRM_GPU_SCHED_STAT_NOMINAL;
#endif
}

static void vgpu_put_bos(struct vgpu_job *job)
{
	u32 i;

	if (!job->bos)
		return;
	for (i = 0; i < job->bo_count; i++)
		if (job->bos[i])
			drm_gem_object_put(job->bos[i]);
	kvfree(job->bos);
	job->bos = NULL;
}

static void vgpu_job_release(struct kref *ref)
{
	struct vgpu_job *job = container_of(ref, struct vgpu_job, ref);

	vgpu_put_bos(job);
	kfree(job);
}

static void vgpu_free_job(struct drm_sched_job *sched_job)
{
	drm_sched_job_cleanup(sched_job);
	kref_put(&to_vgpu_job(sched_job)->ref, vgpu_job_release);
}

static const struct drm_sched_backend_ops vgpu_sched_ops = {
	.run_job = vgpu_run_job,
	.timedout_job = vgpu_timedout_job,
	.free_job = vgpu_free_job,
};

/* ---- ioctls ------------------------------------------------------------------------------- */

static int vgpu_ioctl_bo_create(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct drm_vgpu_bo_create *args = data;
	struct drm_gem_shmem_object *shmem;
	int ret;

	if (!args->size || args->pad)
		return -EINVAL;
	shmem = drm_gem_shmem_create(dev, PAGE_ALIGN(args->size));
	if (IS_ERR(shmem))
		return PTR_ERR(shmem);
	ret = drm_gem_handle_create(file, &shmem->base, &args->handle);
	drm_gem_object_put(&shmem->base);
	return ret;
}

static void vgpu_unlock_bos(struct vgpu_job *job, struct ww_acquire_ctx *ww)
{
	u32 i;

	for (i = 0; i < job->bo_count; i++)
		dma_resv_unlock(job->bos[i]->resv);
	ww_acquire_fini(ww);
}

/*
 * BO validation: look the handles up, reserve every BO (ww-mutex dance, as drm_gem_lock_reservations
 * did) and make room for the job's fence. The bo_validation stage ends when this returns.
 */
static noinline int vgpu_validate_bos(struct drm_file *file, struct vgpu_job *job,
				      void __user *handles, u32 count, struct ww_acquire_ctx *ww)
{
	int contended = -1, ret, i, j;

	ww_acquire_init(ww, &reservation_ww_class);
	if (!count) {
		ww_acquire_done(ww);
		return 0;
	}
	ret = drm_gem_objects_lookup(file, handles, count, &job->bos);
	job->bo_count = count;
	if (ret)
		goto err;

retry:
	if (contended != -1) {
		ret = dma_resv_lock_slow_interruptible(job->bos[contended]->resv, ww);
		if (ret)
			goto err;
	}
	for (i = 0; i < count; i++) {
		if (i == contended)
			continue;
		ret = dma_resv_lock_interruptible(job->bos[i]->resv, ww);
		if (ret) {
			for (j = 0; j < i; j++)
				if (j != contended)
					dma_resv_unlock(job->bos[j]->resv);
			if (contended != -1 && contended >= i)
				dma_resv_unlock(job->bos[contended]->resv);
			if (ret == -EDEADLK) {
				contended = i;
				goto retry;
			}
			goto err;
		}
	}
	ww_acquire_done(ww);

	for (i = 0; i < count; i++) {
		ret = dma_resv_reserve_fences(job->bos[i]->resv, 1);
		if (ret) {
			vgpu_unlock_bos(job, ww);
			vgpu_put_bos(job);
			return ret;
		}
	}
	return 0;

err:
	ww_acquire_fini(ww);
	vgpu_put_bos(job);
	return ret;
}

/* Takes over the reference to @fence. */
static int vgpu_add_dep(struct vgpu_job *job, struct dma_fence *fence)
{
	if (job->ndeps < VGPU_MAX_DEPS) {
		job->dep_context[job->ndeps] = fence->context;
		job->dep_seqno[job->ndeps] = fence->seqno;
		job->ndeps++;
	}
	return drm_sched_job_add_dependency(&job->base, fence);
}

static int vgpu_ioctl_submit(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct vgpu_device *vdev = to_vgpu(dev);
	struct vgpu_file *vf = file->driver_priv;
	struct drm_vgpu_submit *args = data;
	struct drm_syncobj *out_syncobj = NULL;
	struct dma_fence *in, *finished;
	struct ww_acquire_ctx ww;
	struct vgpu_job *job;
	int out_fd = -1, ret;
	u64 t0 = ktime_get_ns();
	u32 i;

	if ((args->flags & ~VGPU_SUBMIT_FLAGS) || args->ring >= VGPU_NUM_RINGS ||
	    args->bo_count > VGPU_MAX_BOS || args->pad)
		return -EINVAL;

	job = kzalloc(sizeof(*job), GFP_KERNEL);
	if (!job)
		return -ENOMEM;
	INIT_LIST_HEAD(&job->node);
	kref_init(&job->ref);
	job->ring = &vdev->rings[args->ring];
	job->engine_ns = args->engine_ns;
	job->pid = current->tgid;
	job->tid = current->pid;
	job->submit_ns = t0;

	ret = vgpu_validate_bos(file, job, u64_to_user_ptr(args->bo_handles), args->bo_count, &ww);
	if (ret) {
		kfree(job);
		return ret;
	}

#if VGPU_SCHED_CLIENT_ID
	ret = drm_sched_job_init(&job->base, &vf->entity[args->ring], 1, vf, file->client_id);
#elif VGPU_SCHED_CREDITS
	ret = drm_sched_job_init(&job->base, &vf->entity[args->ring], 1, vf);
#else
	ret = drm_sched_job_init(&job->base, &vf->entity[args->ring], vf);
#endif
	if (ret)
		goto err_unlock;

	/*
	 * Jobs only read their BOs: no implicit dependencies between vgpu jobs, so the explicit in-fences
	 * are all the dependencies there are and the ground truth lists them completely.
	 */
	for (i = 0; i < job->bo_count; i++) {
		ret = drm_sched_job_add_implicit_dependencies(&job->base, job->bos[i], false);
		if (ret)
			goto err_cleanup;
	}
	if (args->flags & VGPU_SUBMIT_IN_SYNCOBJ) {
		ret = drm_syncobj_find_fence(file, args->in_syncobj, 0, 0, &in);
		if (ret)
			goto err_cleanup;
		ret = vgpu_add_dep(job, in);
		if (ret)
			goto err_cleanup;
	}
	if (args->flags & VGPU_SUBMIT_IN_FENCE_FD) {
		in = sync_file_get_fence(args->in_fence_fd);
		if (!in) {
			ret = -EINVAL;
			goto err_cleanup;
		}
		ret = vgpu_add_dep(job, in);
		if (ret)
			goto err_cleanup;
	}
	if (args->flags & VGPU_SUBMIT_OUT_SYNCOBJ) {
		out_syncobj = drm_syncobj_find(file, args->out_syncobj);
		if (!out_syncobj) {
			ret = -ENOENT;
			goto err_cleanup;
		}
	}
	if (args->flags & VGPU_SUBMIT_OUT_FENCE_FD) {
		out_fd = get_unused_fd_flags(O_CLOEXEC);
		if (out_fd < 0) {
			ret = out_fd;
			goto err_cleanup;
		}
	}

	mutex_lock(&vf->submit_lock);
	drm_sched_job_arm(&job->base);
	finished = dma_fence_get(&job->base.s_fence->finished);
	job->fence_context = finished->context;
	job->fence_seqno = finished->seqno;
#if !VGPU_SCHED_CLIENT_ID
	job->sched_id = job->base.id;
#endif
	for (i = 0; i < job->bo_count; i++)
		dma_resv_add_fence(job->bos[i]->resv, finished, DMA_RESV_USAGE_READ);
	/* Once pushed, the job may run, finish and be freed before we unlock its BOs: hold it. */
	kref_get(&job->ref);
	drm_sched_entity_push_job(&job->base);
	mutex_unlock(&vf->submit_lock);
	vgpu_unlock_bos(job, &ww);
	kref_put(&job->ref, vgpu_job_release);

	/* the job may already be freed: read the fence, to which we hold a reference */
	args->fence_context = finished->context;
	args->fence_seqno = finished->seqno;
	args->out_fence_fd = -1;
	if (out_syncobj) {
		drm_syncobj_replace_fence(out_syncobj, finished);
		drm_syncobj_put(out_syncobj);
	}
	if (out_fd >= 0) {
		struct sync_file *sf = sync_file_create(finished);

		if (sf) {
			fd_install(out_fd, sf->file);
			args->out_fence_fd = out_fd;
		} else {
			put_unused_fd(out_fd);
			ret = -ENOMEM; /* the job was submitted; only its out-fence is missing */
		}
	}
	dma_fence_put(finished);
	return ret;

err_cleanup:
	if (out_syncobj)
		drm_syncobj_put(out_syncobj);
	drm_sched_job_cleanup(&job->base);
err_unlock:
	vgpu_unlock_bos(job, &ww);
	vgpu_put_bos(job);
	kfree(job);
	return ret;
}

static const struct drm_ioctl_desc vgpu_ioctls[] = {
	DRM_IOCTL_DEF_DRV(VGPU_BO_CREATE, vgpu_ioctl_bo_create, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(VGPU_SUBMIT, vgpu_ioctl_submit, DRM_RENDER_ALLOW),
};

/* ---- files and device --------------------------------------------------------------------- */

static int vgpu_open(struct drm_device *dev, struct drm_file *file)
{
	struct vgpu_device *vdev = to_vgpu(dev);
	struct vgpu_file *vf;
	int i, ret;

	vf = kzalloc(sizeof(*vf), GFP_KERNEL);
	if (!vf)
		return -ENOMEM;
	mutex_init(&vf->submit_lock);
	for (i = 0; i < VGPU_NUM_RINGS; i++) {
		ret = drm_sched_entity_init(&vf->entity[i], DRM_SCHED_PRIORITY_NORMAL,
					    vdev->rings[i].sched_list, 1, NULL);
		if (ret) {
			while (--i >= 0)
				drm_sched_entity_destroy(&vf->entity[i]);
			kfree(vf);
			return ret;
		}
	}
	file->driver_priv = vf;
	return 0;
}

static void vgpu_postclose(struct drm_device *dev, struct drm_file *file)
{
	struct vgpu_file *vf = file->driver_priv;
	int i;

	for (i = 0; i < VGPU_NUM_RINGS; i++)
		drm_sched_entity_destroy(&vf->entity[i]);
	kfree(vf);
}

DEFINE_DRM_GEM_FOPS(vgpu_fops);

static const struct drm_driver vgpu_driver = {
	.driver_features = DRIVER_GEM | DRIVER_RENDER | DRIVER_SYNCOBJ,
	.open = vgpu_open,
	.postclose = vgpu_postclose,
	.ioctls = vgpu_ioctls,
	.num_ioctls = ARRAY_SIZE(vgpu_ioctls),
	.fops = &vgpu_fops,
	DRM_GEM_SHMEM_DRIVER_OPS,
	.name = "vgpu",
	.desc = "ghostdriver virtual GPU (test only)",
#if VGPU_DRV_DATE
	.date = "20250101",
#endif
	.major = 1,
	.minor = 0,
};

static int vgpu_ring_init(struct vgpu_device *vdev, unsigned int idx)
{
	struct vgpu_ring *ring = &vdev->rings[idx];
	struct drm_sched_init_args args = {
		.ops = &vgpu_sched_ops,
#if VGPU_SCHED_CREDITS
		.num_rqs = DRM_SCHED_PRIORITY_COUNT,
#endif
		.credit_limit = VGPU_CREDIT_LIMIT,
		.hang_limit = 0,
		.timeout = MAX_SCHEDULE_TIMEOUT,
		.name = ring->name,
		.dev = vdev->drm.dev,
	};

	ring->vdev = vdev;
	ring->idx = idx;
	snprintf(ring->name, sizeof(ring->name), "vgpu-ring%u", idx);
	ring->sched_list[0] = &ring->sched;
	raw_spin_lock_init(&ring->lock);
	spin_lock_init(&ring->fence_lock);
	INIT_LIST_HEAD(&ring->queue);
	ring->fence_context = dma_fence_context_alloc(1);
#if VGPU_HRTIMER_SETUP
	hrtimer_setup(&ring->timer, vgpu_engine_irq, CLOCK_MONOTONIC, HRTIMER_MODE_ABS_HARD);
#else
	hrtimer_init(&ring->timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS_HARD);
	ring->timer.function = vgpu_engine_irq;
#endif
	return drm_sched_init(&ring->sched, &args);
}

static int __init vgpu_init(void)
{
	struct vgpu_device *vdev;
	int ret, i;

	raw_spin_lock_init(&gt.lock);
	gt.e = kvcalloc(gt_max, sizeof(*gt.e), GFP_KERNEL);
	if (!gt.e)
		return -ENOMEM;

	vgpu_pdev = platform_device_register_simple("vgpu", -1, NULL, 0);
	if (IS_ERR(vgpu_pdev)) {
		ret = PTR_ERR(vgpu_pdev);
		goto err_gt;
	}
	if (!devres_open_group(&vgpu_pdev->dev, NULL, GFP_KERNEL)) {
		ret = -ENOMEM;
		goto err_pdev;
	}
	dma_coerce_mask_and_coherent(&vgpu_pdev->dev, DMA_BIT_MASK(64));

	vdev = devm_drm_dev_alloc(&vgpu_pdev->dev, &vgpu_driver, struct vgpu_device, drm);
	if (IS_ERR(vdev)) {
		ret = PTR_ERR(vdev);
		goto err_devres;
	}
	for (i = 0; i < VGPU_NUM_RINGS; i++) {
		ret = vgpu_ring_init(vdev, i);
		if (ret) {
			while (--i >= 0)
				drm_sched_fini(&vdev->rings[i].sched);
			goto err_devres;
		}
	}
	ret = drm_dev_register(&vdev->drm, 0);
	if (ret)
		goto err_sched;
	vgpu_dev = vdev;

	vgpu_debugfs = debugfs_create_dir("vgpu", NULL);
	debugfs_create_file("groundtruth", 0444, vgpu_debugfs, NULL, &vgpu_gt_fops);
	debugfs_create_u64("groundtruth_dropped", 0444, vgpu_debugfs, &gt.dropped);
	pr_info("vgpu: %d rings, render node ready\n", VGPU_NUM_RINGS);
	return 0;

err_sched:
	for (i = 0; i < VGPU_NUM_RINGS; i++)
		drm_sched_fini(&vdev->rings[i].sched);
err_devres:
	devres_release_group(&vgpu_pdev->dev, NULL);
err_pdev:
	platform_device_unregister(vgpu_pdev);
err_gt:
	kvfree(gt.e);
	return ret;
}

static void __exit vgpu_exit(void)
{
	int i;

	debugfs_remove_recursive(vgpu_debugfs);
	drm_dev_unregister(&vgpu_dev->drm);
	for (i = 0; i < VGPU_NUM_RINGS; i++) {
		drm_sched_fini(&vgpu_dev->rings[i].sched);
		hrtimer_cancel(&vgpu_dev->rings[i].timer);
	}
	devres_release_group(&vgpu_pdev->dev, NULL);
	platform_device_unregister(vgpu_pdev);
	kvfree(gt.e);
}

module_init(vgpu_init);
module_exit(vgpu_exit);

MODULE_DESCRIPTION("ghostdriver virtual GPU: DRM render node + drm_sched + hrtimer engine (test only)");
MODULE_LICENSE("GPL");
