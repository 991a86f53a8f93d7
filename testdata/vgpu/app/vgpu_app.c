// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * vgpu_app — the workload of the virtual GPU rig (testdata/vgpu). Built static with the host gcc.
 *
 * Three processes on both rings of /dev/dri/renderD* (A and B two threads each, C one):
 *   A0  ring 0; every job's finished fence goes to syncobj SA; every 2nd job is also exported as a
 *       sync_file and sent (SCM_RIGHTS) to process B with its context:seqno; every 4th job (i % 4 == 1)
 *       waits for SA, i.e. for A0's own previous job: a dependency on the job's own entity (same
 *       file, same ring), which drm_sched ignores
 *   A1  ring 1; every 3rd job waits for SA (another thread's job on the other ring, via syncobj):
 *       cross-ring
 *   B0  for each sync_file from A: one job (ring alternating) that waits for it — a dependency
 *       across processes: on ring 0 the same ring (same scheduler, another entity), on ring 1
 *       cross-ring
 *   B1  rings alternating; every 4th job waits for its own previous job via syncobj (the other
 *       ring: same file, another scheduler)
 *   C0  rounds (rings alternating) that fill the ring — with the rig's credit limit of 2 — and wait
 *       behind it, on two render-node files (two entities per ring):
 *         X, Y  10 ms each, file 1: they take both credits (long enough that D and J are
 *               queued before X ends even when a loaded TCG guest makes each ioctl slow)
 *         D     2 ms, file 1, waits for Y (its own entity: ignored); runnable at once, it waits
 *               for a credit until X ends; exported as a sync_file
 *         J     0.5 ms, file 2, waits for D (same scheduler, another entity: until D is
 *               *scheduled*, i.e. until X ends), then for a credit until Y ends
 *       then waits for J before the next round
 * Application trace context, one kind per process (what the receiver must link each job to):
 *   A   OTEP 4947: each thread publishes its own record through the exported TLS variable
 *       otel_thread_ctx_v1 (different trace id per thread; the active span changes every 4
 *       jobs, updated in place guarded by `valid`)
 *   B   W3C TRACEPARENT in its environment (B is re-executed with it: /proc/<pid>/environ
 *       is the exec-time environment), no thread context
 *   C   nothing: neither thread context nor TRACEPARENT
 * Each process makes a cheap DRM ioctl and waits for the receivers to have read it (warm_up)
 * before its first job: the receiver reads a process at its first DRM ioctl and pushes its
 * OTEP 4947 recipe into the kernel from a background worker, so a job submitted right away
 * could miss its thread context (documented limit of the enricher).
 * Each thread waits for its last jobs before exiting. One line per job on stdout:
 *   job pid=P tid=T ring=R fence=CTX:SEQ engine_ns=N bos=K dep=KIND:CTX:SEQ|- submit_ns=S return_ns=X
 *       thread=NAME ctx=otep4947|traceparent|none [trace=<32 hex> span=<16 hex>]
 * and, when tracefs is mounted, the same text (prefixed "vgpu_app ") into trace_marker.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../kmod/vgpu_drm.h"

#define NBOS 4

static int jobs_per_thread = 16;
static const char *node;
static int marker_fd = -1;

/* W3C's example: process B's TRACEPARENT. */
#define B_TRACEPARENT "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

/* OTEP 4947 thread context record (packed, host-endian; no attributes here). */
struct otel_thread_ctx {
	uint8_t trace_id[16];
	uint8_t span_id[8];
	uint8_t valid;
	uint8_t flags;
	uint16_t attrs_size;
} __attribute__((packed));

/*
 * The TLS variable an SDK exports. This executable is static: the variable is in the
 * executable's own TLS block (local-exec) and its symbol in .symtab (a static binary has no
 * .dynsym), which is where the receiver's TLS resolution finds it.
 */
__attribute__((visibility("default"), used)) __thread struct otel_thread_ctx *otel_thread_ctx_v1;

struct msg {
	uint64_t context, seqno;
};

struct thread {
	const char *name;
	int fd;			/* the process's render node */
	int sock;		/* A0: send end; B0: receive end */
	unsigned int seed;
	uint32_t bos[NBOS];
	uint32_t own[VGPU_NUM_RINGS];	/* syncobj holding this thread's last job per ring */
	int used[VGPU_NUM_RINGS];
	uint32_t shared;	/* A0: SA (also its ring-0 tracker); A1: SA to wait on */
	const char *ctx_kind;	/* "otep4947", "traceparent" or "none" */
	uint64_t engine_ns;	/* the next job's engine time; 0: random 0.3 .. 3 ms */
	struct otel_thread_ctx ctx;	/* otep4947: the published record; traceparent: the ids */
	unsigned int njobs;
};

/* A0's last job in SA, read by A1 under the same lock so that its printed dependency is exact. */
static pthread_mutex_t sa_lock = PTHREAD_MUTEX_INITIALIZER;
static struct msg sa_last;

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "vgpu_app[%d]: ", getpid());
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, ": %s\n", strerror(errno));
	va_end(ap);
	exit(1);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* Every ioctl this process made, retries included (reported in app.err at its exit). */
static unsigned long n_ioctls;

static int xioctl(int fd, unsigned long req, void *arg)
{
	int r;

	do {
		__atomic_add_fetch(&n_ioctls, 1, __ATOMIC_RELAXED);
		r = ioctl(fd, req, arg);
	} while (r == -1 && (errno == EINTR || errno == EAGAIN));
	return r;
}

static const char *find_render_node(void)
{
	static char path[300];
	struct dirent *d;
	DIR *dir;

	if (getenv("VGPU_NODE"))
		return getenv("VGPU_NODE");
	/* vgpu is the only DRM driver with a device here, but pick it by name to be sure. */
	dir = opendir("/dev/dri");
	if (!dir)
		die("opendir /dev/dri");
	while ((d = readdir(dir))) {
		char name[64] = "";
		char sys[320];
		FILE *f;

		if (strncmp(d->d_name, "renderD", 7))
			continue;
		snprintf(path, sizeof(path), "/dev/dri/%s", d->d_name);
		snprintf(sys, sizeof(sys), "/sys/class/drm/%s/device/uevent", d->d_name);
		f = fopen(sys, "r");
		if (f) {
			while (fgets(name, sizeof(name), f))
				if (strstr(name, "vgpu")) {
					fclose(f);
					closedir(dir);
					return path;
				}
			fclose(f);
		}
	}
	closedir(dir);
	return path[0] ? path : "/dev/dri/renderD128";
}

static uint32_t syncobj_create(int fd)
{
	struct drm_syncobj_create c = { 0 };

	if (xioctl(fd, DRM_IOCTL_SYNCOBJ_CREATE, &c))
		die("SYNCOBJ_CREATE");
	return c.handle;
}

static void out_line(const char *line)
{
	/* One write per line: the processes share stdout's file offset. */
	if (write(1, line, strlen(line)) < 0)
		die("write stdout");
	if (marker_fd >= 0 && write(marker_fd, line, strlen(line)) < 0) {
		/* trace_marker is best effort */
	}
}

static void hex(char *out, const uint8_t *b, int n)
{
	int i;

	for (i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
}

static int unhex(uint8_t *out, const char *s, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		unsigned int v;

		if (sscanf(s + 2 * i, "%2x", &v) != 1)
			return -1;
		out[i] = (uint8_t)v;
	}
	return 0;
}

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* OTEP 4947 writer: a new active span on this thread, updated in place guarded by valid. */
static void new_active_span(struct thread *t)
{
	uint64_t x = ((uint64_t)t->seed << 32) + t->njobs / 4 + 1, v = splitmix64(&x) | 1;

	t->ctx.valid = 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	memcpy(t->ctx.span_id, &v, 8);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->ctx.valid = 1;
}

/* Thread start: publish this thread's context (A) or record the process's (B). */
static void thread_ctx_start(struct thread *t)
{
	if (!strcmp(t->ctx_kind, "otep4947")) {
		uint64_t x = (uint64_t)t->seed << 32, a = splitmix64(&x), b = splitmix64(&x);

		memcpy(t->ctx.trace_id, &a, 8);
		memcpy(t->ctx.trace_id + 8, &b, 8);
		t->ctx.flags = 1;
		t->ctx.attrs_size = 0;
		new_active_span(t);
		otel_thread_ctx_v1 = &t->ctx;
	} else if (!strcmp(t->ctx_kind, "traceparent")) {
		const char *tp = getenv("TRACEPARENT");

		if (!tp || strlen(tp) < 55 || unhex(t->ctx.trace_id, tp + 3, 16) || unhex(t->ctx.span_id, tp + 36, 8))
			die("process B without a valid TRACEPARENT (%s)", tp ? tp : "unset");
	}
}

struct job_result {
	uint64_t context, seqno;
	int out_fd;
};

static struct job_result submit(struct thread *t, unsigned int ring, uint32_t flags, uint32_t in_syncobj,
				int in_fd, const char *dep)
{
	struct drm_vgpu_submit s = { 0 };
	uint32_t handles[NBOS];
	unsigned int nb = 2 + rand_r(&t->seed) % 2, i, first = rand_r(&t->seed) % NBOS;
	uint64_t engine_ns = 300000 + (uint64_t)(rand_r(&t->seed) % 2700) * 1000; /* 0.3 .. 3 ms */

	if (t->engine_ns)
		engine_ns = t->engine_ns;
	struct job_result r;
	uint64_t t0, t1;
	char line[640], ids[80] = "";

	if (!strcmp(t->ctx_kind, "otep4947") && t->njobs % 4 == 0)
		new_active_span(t);
	t->njobs++;
	if (strcmp(t->ctx_kind, "none")) {
		strcpy(ids, " trace=");
		hex(ids + strlen(ids), t->ctx.trace_id, 16);
		strcat(ids, " span=");
		hex(ids + strlen(ids), t->ctx.span_id, 8);
	}
	for (i = 0; i < nb; i++)
		handles[i] = t->bos[(first + i) % NBOS];
	s.bo_handles = (uintptr_t)handles;
	s.bo_count = nb;
	s.ring = ring;
	s.engine_ns = engine_ns;
	s.flags = flags | VGPU_SUBMIT_OUT_SYNCOBJ;
	s.in_syncobj = in_syncobj;
	s.in_fence_fd = in_fd;
	s.out_syncobj = t->own[ring];
	t0 = now_ns();
	if (xioctl(t->fd, DRM_IOCTL_VGPU_SUBMIT, &s))
		die("VGPU_SUBMIT ring %u", ring);
	t1 = now_ns();
	t->used[ring] = 1;
	snprintf(line, sizeof(line),
		 "vgpu_app job pid=%d tid=%ld ring=%u fence=%llu:%llu engine_ns=%llu bos=%u dep=%s submit_ns=%llu return_ns=%llu thread=%s ctx=%s%s\n",
		 getpid(), (long)syscall(SYS_gettid), ring, (unsigned long long)s.fence_context,
		 (unsigned long long)s.fence_seqno, (unsigned long long)engine_ns, nb, dep,
		 (unsigned long long)t0, (unsigned long long)t1, t->name, t->ctx_kind, ids);
	out_line(line + strlen("vgpu_app "));
	r.context = s.fence_context;
	r.seqno = s.fence_seqno;
	r.out_fd = (flags & VGPU_SUBMIT_OUT_FENCE_FD) ? s.out_fence_fd : -1;
	return r;
}

static void pace(struct thread *t)
{
	struct timespec ts = { 0, (long)(rand_r(&t->seed) % 1500) * 1000 };

	nanosleep(&ts, NULL);
}

static void wait_own(struct thread *t)
{
	uint32_t h[VGPU_NUM_RINGS];
	struct drm_syncobj_wait w = { 0 };
	int i, n = 0;

	for (i = 0; i < VGPU_NUM_RINGS; i++)
		if (t->used[i])
			h[n++] = t->own[i];
	if (!n)
		return;
	w.handles = (uintptr_t)h;
	w.count_handles = n;
	w.flags = DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL;
	w.timeout_nsec = (int64_t)(now_ns() + 120ull * 1000000000ull);
	if (xioctl(t->fd, DRM_IOCTL_SYNCOBJ_WAIT, &w))
		die("SYNCOBJ_WAIT %s", t->name);
}

static void thread_setup(struct thread *t)
{
	int i;

	for (i = 0; i < NBOS; i++) {
		struct drm_vgpu_bo_create c = { .size = 64 * 1024 };

		if (xioctl(t->fd, DRM_IOCTL_VGPU_BO_CREATE, &c))
			die("BO_CREATE");
		t->bos[i] = c.handle;
	}
	for (i = 0; i < VGPU_NUM_RINGS; i++)
		t->own[i] = syncobj_create(t->fd);
}

static void send_fence(int sock, int fd, struct msg *m)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { m, sizeof(*m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	if (sendmsg(sock, &mh, 0) != sizeof(*m))
		die("sendmsg");
}

static int recv_fence(int sock, struct msg *m)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { m, sizeof(*m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;
	ssize_t n;
	int fd;

	n = recvmsg(sock, &mh, 0);
	if (n == 0)
		return -1;
	if (n != sizeof(*m))
		die("recvmsg");
	c = CMSG_FIRSTHDR(&mh);
	if (!c || c->cmsg_type != SCM_RIGHTS)
		die("recvmsg: no fd");
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

static void *thread_a0(void *arg)
{
	struct thread *t = arg;
	int i;

	thread_ctx_start(t);
	for (i = 0; i < jobs_per_thread; i++) {
		int export = i % 2 == 0, same_entity = i % 4 == 1;
		uint32_t flags = export ? VGPU_SUBMIT_OUT_FENCE_FD : 0;
		struct job_result r;
		char dep[64] = "-";

		pthread_mutex_lock(&sa_lock);
		if (same_entity && sa_last.seqno) { /* SA holds this thread's previous (ring 0) job */
			snprintf(dep, sizeof(dep), "syncobj:%llu:%llu", (unsigned long long)sa_last.context,
				 (unsigned long long)sa_last.seqno);
			flags |= VGPU_SUBMIT_IN_SYNCOBJ;
		}
		r = submit(t, 0, flags, t->shared, -1, dep);
		sa_last.context = r.context;
		sa_last.seqno = r.seqno;
		pthread_mutex_unlock(&sa_lock);

		if (export) {
			struct msg m = { r.context, r.seqno };

			send_fence(t->sock, r.out_fd, &m);
			close(r.out_fd);
		}
		if (i % 4 != 0) /* the next (same-entity) job follows at once: its dependency is still running */
			pace(t);
	}
	shutdown(t->sock, SHUT_WR);
	wait_own(t);
	return NULL;
}

static void *thread_a1(void *arg)
{
	struct thread *t = arg;
	int i;

	thread_ctx_start(t);
	for (i = 0; i < jobs_per_thread; i++) {
		int waited = 0;

		if (i % 3 == 2) {
			pthread_mutex_lock(&sa_lock);
			if (sa_last.seqno) { /* SA is empty until A0's first job */
				char dep[64];

				snprintf(dep, sizeof(dep), "syncobj:%llu:%llu", (unsigned long long)sa_last.context,
					 (unsigned long long)sa_last.seqno);
				submit(t, 1, VGPU_SUBMIT_IN_SYNCOBJ, t->shared, -1, dep);
				waited = 1;
			}
			pthread_mutex_unlock(&sa_lock);
		}
		if (!waited)
			submit(t, 1, 0, 0, -1, "-");
		pace(t);
	}
	wait_own(t);
	return NULL;
}

static void *thread_b0(void *arg)
{
	struct thread *t = arg;
	unsigned int k = 0;
	struct msg m;
	int fd;

	thread_ctx_start(t);
	while ((fd = recv_fence(t->sock, &m)) >= 0) {
		char dep[64];

		snprintf(dep, sizeof(dep), "sync_file:%llu:%llu", (unsigned long long)m.context,
			 (unsigned long long)m.seqno);
		submit(t, k++ % 2, VGPU_SUBMIT_IN_FENCE_FD, 0, fd, dep);
		close(fd);
	}
	wait_own(t);
	return NULL;
}

static void *thread_b1(void *arg)
{
	struct thread *t = arg;
	struct job_result prev = { 0 };
	unsigned int prev_ring = 0;
	int i;

	thread_ctx_start(t);
	for (i = 0; i < jobs_per_thread; i++) {
		unsigned int ring = i % 2;

		if (i % 4 == 3) {
			char dep[64];

			snprintf(dep, sizeof(dep), "syncobj:%llu:%llu", (unsigned long long)prev.context,
				 (unsigned long long)prev.seqno);
			prev = submit(t, ring, VGPU_SUBMIT_IN_SYNCOBJ, t->own[prev_ring], -1, dep);
		} else {
			prev = submit(t, ring, 0, 0, -1, "-");
		}
		prev_ring = ring;
		pace(t);
	}
	wait_own(t);
	return NULL;
}

static void wait_syncobj(struct thread *t, uint32_t handle)
{
	struct drm_syncobj_wait w = { 0 };

	w.handles = (uintptr_t)&handle;
	w.count_handles = 1;
	w.timeout_nsec = (int64_t)(now_ns() + 120ull * 1000000000ull);
	if (xioctl(t->fd, DRM_IOCTL_SYNCOBJ_WAIT, &w))
		die("SYNCOBJ_WAIT %s", t->name);
}

static void *thread_c0(void *arg)
{
	struct thread *t = arg, t2 = *t;	/* t2: the same thread on a second file (another entity) */
	int i, rounds = jobs_per_thread / 4 > 2 ? jobs_per_thread / 4 : 2;

	thread_ctx_start(t);
	t2.fd = open(node, O_RDWR | O_CLOEXEC);
	if (t2.fd < 0)
		die("open %s", node);
	memset(t2.used, 0, sizeof(t2.used));
	thread_setup(&t2);
	for (i = 0; i < rounds; i++) {
		unsigned int ring = i % 2;
		struct job_result y, d;
		char dep[64];

		t->engine_ns = 10000000;
		submit(t, ring, 0, 0, -1, "-");					/* X */
		y = submit(t, ring, 0, 0, -1, "-");				/* Y */
		t->engine_ns = 2000000;
		snprintf(dep, sizeof(dep), "syncobj:%llu:%llu", (unsigned long long)y.context, (unsigned long long)y.seqno);
		d = submit(t, ring, VGPU_SUBMIT_IN_SYNCOBJ | VGPU_SUBMIT_OUT_FENCE_FD, t->own[ring], -1, dep); /* D */
		t2.engine_ns = 500000;
		snprintf(dep, sizeof(dep), "sync_file:%llu:%llu", (unsigned long long)d.context, (unsigned long long)d.seqno);
		submit(&t2, ring, VGPU_SUBMIT_IN_FENCE_FD, 0, d.out_fd, dep);		/* J */
		close(d.out_fd);
		wait_syncobj(&t2, t2.own[ring]);
		pace(t);
	}
	t->engine_ns = 0;
	wait_own(t);
	close(t2.fd);
	return NULL;
}

#ifndef DRM_IOCTL_VERSION /* vgpu_drm.h declares only what the driver uses (no <drm/drm.h> here) */
struct drm_version {
	int version_major, version_minor, version_patchlevel;
	size_t name_len;
	char *name;
	size_t date_len;
	char *date;
	size_t desc_len;
	char *desc;
};
#define DRM_IOCTL_VERSION DRM_IOWR(0x00, struct drm_version)
#endif

/*
 * A cheap DRM ioctl, then wait until the receiver has read the process (see the top). With
 * VGPU_READY_DIR set (the rig's guest does it while a receiver runs), the wait ends when
 * VGPU_READY_DIR/<pid> exists: the guest creates it once every receiver has logged that the
 * process's row is in its kernel table. It gives up after VGPU_READY_TIMEOUT_MS (default 60000)
 * and says so, and the checks of the jobs' contexts then fail. Without VGPU_READY_DIR it sleeps
 * VGPU_WARMUP_MS (default 500).
 */
static void warm_up(int fd)
{
	struct drm_version v = { 0 };
	const char *dir = getenv("VGPU_READY_DIR");
	const char *e = getenv(dir ? "VGPU_READY_TIMEOUT_MS" : "VGPU_WARMUP_MS");
	long ms = e ? atol(e) : dir ? 60000 : 500, waited = 0;
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 }, tick = { 0, 5000000 };
	char path[4096];

	if (xioctl(fd, DRM_IOCTL_VERSION, &v))
		die("DRM_IOCTL_VERSION");
	if (!dir) {
		nanosleep(&ts, NULL);
		return;
	}
	snprintf(path, sizeof(path), "%s/%d", dir, (int)getpid());
	while (access(path, F_OK) && waited < ms) {
		nanosleep(&tick, NULL);
		waited += 5;
	}
	if (access(path, F_OK))
		fprintf(stderr, "vgpu_app: pid %d: no receiver reported reading it within %ld ms; going on\n", (int)getpid(), ms);
	else
		fprintf(stderr, "vgpu_app: pid %d: read by the receivers after ~%ld ms\n", (int)getpid(), waited);
}

static void run_process(const char *who, int sock)
{
	struct thread t[2] = { 0 };
	pthread_t th[2];
	int fd, i, nth = who[0] == 'C' ? 1 : 2;
	const char *kind = who[0] == 'A' ? "otep4947" : who[0] == 'B' ? "traceparent" : "none";

	fd = open(node, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		die("open %s", node);
	marker_fd = open("/sys/kernel/tracing/trace_marker", O_WRONLY | O_CLOEXEC);
	for (i = 0; i < nth; i++) {
		t[i].fd = fd;
		t[i].sock = sock;
		t[i].seed = (who[0] << 8) + i + 1;
		t[i].ctx_kind = kind;
		thread_setup(&t[i]);
	}
	warm_up(fd);
	if (who[0] == 'C') {
		t[0].name = "C0";
		pthread_create(&th[0], NULL, thread_c0, &t[0]);
	} else if (who[0] == 'A') {
		t[0].name = "A0";
		t[1].name = "A1";
		t[0].shared = t[1].shared = syncobj_create(fd);
		t[0].own[0] = t[0].shared;
		pthread_create(&th[0], NULL, thread_a0, &t[0]);
		pthread_create(&th[1], NULL, thread_a1, &t[1]);
	} else {
		t[0].name = "B0";
		t[1].name = "B1";
		pthread_create(&th[0], NULL, thread_b0, &t[0]);
		pthread_create(&th[1], NULL, thread_b1, &t[1]);
	}
	for (i = 0; i < nth; i++)
		pthread_join(th[i], NULL);
	close(fd);
	/* The receivers' oracle: each of these was either sent or counted in the kernel. */
	fprintf(stderr, "vgpu_app: pid %d: %lu ioctls\n", (int)getpid(), __atomic_load_n(&n_ioctls, __ATOMIC_RELAXED));
	exit(0);
}

/* Process B: re-executed with TRACEPARENT in its environment, its socket end kept open. */
static void exec_b(int sock)
{
	extern char **environ;
	static char self[4096];
	char fdarg[16], jobs[16], tp[] = "TRACEPARENT=" B_TRACEPARENT;
	char *args[] = { "vgpu_app", "--process-b", fdarg, jobs, NULL };
	char **env;
	ssize_t n;
	int i = 0, k = 0;

	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		die("readlink /proc/self/exe");
	self[n] = 0;
	if (fcntl(sock, F_SETFD, 0))
		die("fcntl");
	snprintf(fdarg, sizeof(fdarg), "%d", sock);
	snprintf(jobs, sizeof(jobs), "%d", jobs_per_thread);
	while (environ[i])
		i++;
	env = calloc(i + 2, sizeof(*env));
	for (i = 0; environ[i]; i++)
		if (strncmp(environ[i], "TRACEPARENT=", 12))
			env[k++] = environ[i];
	env[k++] = tp;
	execve(self, args, env);
	die("execve %s", self);
}

int main(int argc, char **argv)
{
	int sv[2], status, rc = 0, i;
	pid_t pa, pb, pc;

	if (argc == 4 && !strcmp(argv[1], "--process-b")) {
		jobs_per_thread = atoi(argv[3]);
		node = find_render_node();
		run_process("B", atoi(argv[2]));
	}
	if (argc > 1)
		jobs_per_thread = atoi(argv[1]);
	node = find_render_node();
	fprintf(stderr, "vgpu_app: node %s, %d jobs per thread\n", node, jobs_per_thread);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		die("socketpair");
	pa = fork();
	if (pa == 0) {
		close(sv[1]);
		run_process("A", sv[0]);
	}
	pb = fork();
	if (pb == 0) {
		close(sv[0]);
		exec_b(sv[1]);
	}
	close(sv[0]);
	close(sv[1]);
	pc = fork();
	if (pc == 0)
		run_process("C", -1);
	for (i = 0; i < 3; i++) {
		pid_t p = wait(&status);

		if (p < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
			fprintf(stderr, "vgpu_app: child %d failed (status %#x)\n", p, status);
			rc = 1;
		}
	}
	return rc;
}
