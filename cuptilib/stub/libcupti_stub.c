/* SPDX-License-Identifier: Apache-2.0 */
/* libcupti.so.13 stand-in for CI without a GPU: CUPTI's activity API, records in CUPTI 13.0's layouts.
 * The stub CUDA driver reports each launch (stub_cupti_launch_hook); kernels run on a simulated timeline.
 * Own declarations from facts measured on the device (no NVIDIA header); env knobs, counters for tests. */

/*
 * Behaviour (what the tests may rely on):
 *
 *  - Records: a launch reported through the hook makes one Kernel10 record per kernel (a graph
 *    launch: graph_kernels records sharing one correlation id, graphId 1, graphNodeId
 *    (1 << 32) | (i + 1)) while CONCURRENT_KERNEL is enabled, and one CUpti_ActivityAPI
 *    record (RUNTIME kind 5 for domain 2, DRIVER kind 4 for domain 1) while that kind is
 *    enabled or that cbid is enabled fine-grained. Every launch takes a fresh correlation id
 *    from one process-wide counter, whether or not anything is recorded.
 *  - Timing: kernel i of a launch starts at max(the launch's exit, previous kernel's end on
 *    that stream) + STUB_QUEUE_NS (1 µs) and lasts kernel_ns (the driver passes it; the stub
 *    driver takes STUB_KERNEL_NS). The stub driver keeps the same timeline, so its syncs
 *    return only after the kernels they wait for ended.
 *  - A record is written into a client buffer only once its end time has passed (kernels
 *    wait in a pending list; the worker thread, each launch and each flush move the finished
 *    ones). API records end when the launch returned, so they go in at once.
 *  - Buffers: asked for with bufferRequested when a record needs room; a full buffer is
 *    handed back with bufferCompleted(NULL, 0, ...) from the stub's worker thread, and a new
 *    one requested. A refused buffer (*buffer NULL or *size too small) drops that record:
 *    counted for cuptiActivityGetNumDroppedRecords (global queue only: ctx NULL, stream 0;
 *    reset by each read) and in stub_cupti_counts[2]. Without registered callbacks records
 *    are dropped the same way.
 *  - cuptiActivityFlushAll(flag): in the caller's thread, moves every finished pending
 *    record into buffers, hands back every full buffer not yet handed back (and waits for a
 *    delivery the worker has in progress), then the current buffer: with flag 1 (FORCED)
 *    always, even empty (validSize 0); with flag 0 only when it holds a record. Kernels not
 *    yet finished stay pending.
 *  - cuptiFinalize: waits (up to 10 s) for pending kernels to finish, hands everything back
 *    as a forced flush does, then resets: callbacks, enabled kinds, per-cbid enables, the
 *    subscriber slot and the dropped count. Stream ids and the correlation counter stay.
 *  - Stream ids: CUPTI numbers streams itself; here the NULL stream is 7 and other stream
 *    handles get 13, 14, ... in order of first launch (stub_cupti_stream_id tells).
 *
 * Env: STUB_CUPTI_VERSION=N (cuptiGetVersion's value, default 130001),
 *      STUB_CUPTI_SUBSCRIBED=1 (every cuptiSubscribe returns 39),
 *      STUB_CUPTI_FOREIGN_KIND=1 (each buffer that gets records starts with one 16-byte
 *      record of kind 99), STUB_CUPTI_LOG=PATH (one line appended per client call and per
 *      buffer callback; successful cuptiActivityGetNextRecord calls are not logged).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define API __attribute__((visibility("default")))

typedef int CUptiResult;
#define CUPTI_SUCCESS 0
#define CUPTI_ERROR_INVALID_PARAMETER 1
#define CUPTI_ERROR_MAX_LIMIT_REACHED 12
#define CUPTI_ERROR_NOT_INITIALIZED 15
#define CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED 39
#define CUPTI_ERROR_UNKNOWN 999

#define KIND_MEMCPY 1
#define KIND_MEMSET 2
#define KIND_DRIVER 4
#define KIND_RUNTIME 5
#define KIND_CONCURRENT_KERNEL 10
#define KIND_FOREIGN 99
#define KIND_MAX 64 /* kinds the stub accepts in cuptiActivityEnable */

#define DOMAIN_DRIVER 1
#define DOMAIN_RUNTIME 2

#define FLUSH_FORCED 1

#define KERNEL_SIZE 216
#define API_SIZE 40
#define FOREIGN_SIZE 16
#define MAX_RECORD 216

#define CBID_MAX 4096
#define STUB_QUEUE_NS 1000ull /* the same delay as the stub driver's */
#define MAX_PENDING (1 << 17)

typedef struct CUctx_st *CUcontext;
typedef void CUpti_Activity;
typedef void *CUpti_SubscriberHandle;
typedef void (*CUpti_CallbackFunc)(void *userdata, int domain, uint32_t cbid, const void *cbdata);
typedef void (*CUpti_BuffersCallbackRequestFunc)(uint8_t **buffer, size_t *size, size_t *maxNumRecords);
typedef void (*CUpti_BuffersCallbackCompleteFunc)(CUcontext ctx, uint32_t streamId, uint8_t *buffer, size_t size,
						  size_t validSize);

/* Ground truth for tests: [0] kernel records written into a client buffer, [1] API records
 * written into a client buffer, [2] records dropped (refused buffer, no callbacks, pending
 * list full), [3] cuptiFinalize calls, [4] cuptiActivityEnable calls, [5] cuptiSubscribe
 * calls, [6] buffers handed back (bufferCompleted calls), [7] fine-grained enables
 * (cuptiActivityEnable{Runtime,Driver}Api with enable 1). */
API volatile long stub_cupti_counts[8];

static void count(int i, long n) { __atomic_add_fetch(&stub_cupti_counts[i], n, __ATOMIC_RELAXED); }

/* ---- records ------------------------------------------------------------------------- */

static void put8(uint8_t *r, unsigned off, uint8_t v) { r[off] = v; }
static void put16(uint8_t *r, unsigned off, uint16_t v) { memcpy(r + off, &v, 2); }
static void put32(uint8_t *r, unsigned off, uint32_t v) { memcpy(r + off, &v, 4); }
static void put64(uint8_t *r, unsigned off, uint64_t v) { memcpy(r + off, &v, 8); }

/* CUpti_ActivityKernel10 (216 bytes). */
enum {
	K_KIND = 0, K_CACHE_CONFIG = 4, K_SHARED_MEMORY_CONFIG = 5, K_REGISTERS = 6, K_PGC_REQUESTED = 8,
	K_PGC_EXECUTED = 12, K_START = 16, K_END = 24, K_COMPLETED = 32, K_DEVICE = 40, K_CONTEXT = 44,
	K_STREAM = 48, K_GRID = 52, K_BLOCK = 64, K_STATIC_SHMEM = 76, K_DYNAMIC_SHMEM = 80,
	K_LOCAL_PER_THREAD = 84, K_LOCAL_TOTAL = 88, K_CORRELATION = 92, K_GRID_ID = 96, K_NAME = 104,
	K_RESERVED0 = 112, K_QUEUED = 120, K_SUBMITTED = 128, K_LAUNCH_TYPE = 136, K_SHMEM_EXECUTED = 140,
	K_GRAPH_NODE_ID = 144, K_SHMEM_LIMIT = 152, K_GRAPH_ID = 156, K_ACCESS_POLICY = 160, K_CHANNEL_ID = 168,
	K_CHANNEL_TYPE = 172, K_CLUSTER = 176, K_CLUSTER_POLICY = 188, K_LOCAL_TOTAL_V2 = 192,
	K_MAX_CLUSTER_SIZE = 200, K_MAX_ACTIVE_CLUSTERS = 204, K_DEVICE_LAUNCHED = 208,
};
/* CUpti_ActivityAPI (40 bytes). */
enum { A_KIND = 0, A_CBID = 4, A_START = 8, A_END = 16, A_PID = 24, A_TID = 28, A_CORRELATION = 32, A_RESULT = 36 };

static uint32_t record_size(uint32_t kind)
{
	switch (kind) {
	case KIND_CONCURRENT_KERNEL:
		return KERNEL_SIZE;
	case KIND_RUNTIME:
	case KIND_DRIVER:
		return API_SIZE;
	case KIND_FOREIGN:
		return FOREIGN_SIZE;
	}
	return 0;
}

struct pending {
	uint64_t ready; /* CLOCK_REALTIME ns after which it may be delivered */
	uint8_t bytes[MAX_RECORD] __attribute__((aligned(8)));
};

/* ---- state ----------------------------------------------------------------------------- */

static struct {
	pthread_mutex_t mu; /* recursive: a client callback run under it may call back in */
	pthread_cond_t wake; /* the worker: pending records or completed buffers */
	pthread_cond_t idle; /* flush: the worker's delivery in progress is done */
	pthread_t worker;
	int worker_started;

	CUpti_BuffersCallbackRequestFunc requested;
	CUpti_BuffersCallbackCompleteFunc completed;
	uint64_t kinds; /* bit per enabled kind */
	uint8_t runtime_cbid[CBID_MAX], driver_cbid[CBID_MAX];

	/* The buffer being filled. */
	uint8_t *buf;
	size_t buf_size, buf_used, buf_first; /* buf_first: where records start (8-aligned) */
	int buf_records;

	/* Full buffers waiting for the worker to hand them back. */
	struct done {
		uint8_t *buf;
		size_t size, valid;
	} *full;
	int nfull, capfull;
	int delivering;

	struct pending *pend;
	int npend, cappend;
	uint64_t min_ready;

	size_t dropped; /* since the last cuptiActivityGetNumDroppedRecords */
	int subscribed;
	int foreign; /* STUB_CUPTI_FOREIGN_KIND=1 */
	int stop;    /* cuptiFinalize: the worker ends */

	/* The simulated timeline (kept whether or not anything is enabled). */
	struct stream {
		uint64_t handle;
		uint64_t last_end;
		uint32_t id;
		int used;
	} streams[1024];
	uint32_t next_stream_id;
	uint64_t grid_id;

	int log_fd;
} S = { .log_fd = -1, .next_stream_id = 13 };

static uint32_t correlation; /* one process-wide counter */

static void lock(void) { pthread_mutex_lock(&S.mu); }
static void unlock(void) { pthread_mutex_unlock(&S.mu); }

static uint64_t realtime_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_(const char *fmt, ...)
{
	if (S.log_fd < 0)
		return;
	char line[256];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof line - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int)sizeof line - 2)
		n = (int)sizeof line - 2;
	line[n++] = '\n';
	ssize_t w = write(S.log_fd, line, (size_t)n); /* O_APPEND: one line, one write */
	(void)w;
}

static CUptiResult ret(CUptiResult r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static CUptiResult ret(CUptiResult r, const char *fmt, ...)
{
	if (S.log_fd >= 0) {
		char what[200];
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(what, sizeof what, fmt, ap);
		va_end(ap);
		logf_("%s = %d", what, r);
	}
	return r;
}

static long env_long(const char *name, long def)
{
	const char *v = getenv(name);
	if (!v || !*v)
		return def;
	char *end;
	long n = strtol(v, &end, 0);
	return *end ? def : n;
}

/* ---- buffers (S.mu held) ----------------------------------------------------------------- */

static void queue_full(void)
{
	if (!S.buf)
		return;
	if (S.nfull == S.capfull) {
		int cap = S.capfull ? 2 * S.capfull : 16;
		struct done *n = realloc(S.full, (size_t)cap * sizeof *n);
		if (!n) { /* cannot queue it: hand nothing back, keep filling nothing */
			S.buf = NULL;
			return;
		}
		S.full = n;
		S.capfull = cap;
	}
	S.full[S.nfull++] = (struct done){ S.buf, S.buf_size, S.buf_used };
	S.buf = NULL;
	pthread_cond_signal(&S.wake);
}

/* room returns where a record of len bytes goes, asking the client for a new buffer when
 * there is none or it is full (the full one is queued for the worker to hand back); NULL
 * when the client refuses (or gives a buffer too small for the record: handed back empty).
 * With STUB_CUPTI_FOREIGN_KIND a buffer's first record is preceded by one of kind 99. */
static uint8_t *room(uint32_t len)
{
	uint32_t extra = S.foreign && (!S.buf || S.buf_records == 0) ? FOREIGN_SIZE : 0;
	if (!S.buf || S.buf_used + extra + len > S.buf_size) {
		if (S.buf)
			queue_full();
		if (!S.requested)
			return NULL;
		uint8_t *b = NULL;
		size_t size = 0, max_records = 0;
		S.requested(&b, &size, &max_records);
		(void)max_records; /* 0: as many as fit (what the injection library passes) */
		logf_("callback bufferRequested -> %p size %zu", (void *)b, size);
		if (!b)
			return NULL;
		S.buf = b;
		S.buf_size = size;
		S.buf_first = (size_t)((8 - ((uintptr_t)b & 7)) & 7); /* records are 8-byte aligned */
		S.buf_used = S.buf_first < size ? S.buf_first : size;
		S.buf_records = 0;
		extra = S.foreign ? FOREIGN_SIZE : 0;
		if (S.buf_used + extra + len > S.buf_size) {
			queue_full();
			return NULL;
		}
	}
	uint8_t *p = S.buf + S.buf_used;
	if (extra) {
		memset(p, 0, FOREIGN_SIZE);
		put32(p, 0, KIND_FOREIGN);
		put32(p, 4, 0x5eed);
		put64(p, 8, realtime_ns());
		p += FOREIGN_SIZE;
	}
	S.buf_used += extra + len;
	return p;
}

static void drop(void)
{
	S.dropped++;
	count(2, 1);
}

/* deliver writes one finished record into the client's buffers. */
static void deliver(const uint8_t *rec)
{
	uint32_t kind;
	memcpy(&kind, rec, 4);
	uint32_t len = record_size(kind);
	uint8_t *p = room(len);
	if (!p) {
		drop();
		return;
	}
	memcpy(p, rec, len);
	S.buf_records++;
	count(kind == KIND_CONCURRENT_KERNEL ? 0 : 1, 1);
}

/* drain delivers every pending record whose end has passed (all with everything set). */
static void drain(int everything)
{
	if (!S.npend)
		return;
	uint64_t now = realtime_ns();
	if (!everything && now < S.min_ready)
		return;
	int keep = 0;
	uint64_t min = UINT64_MAX;
	for (int i = 0; i < S.npend; i++) {
		if (everything || S.pend[i].ready <= now) {
			deliver(S.pend[i].bytes);
		} else {
			if (keep != i)
				S.pend[keep] = S.pend[i];
			if (S.pend[keep].ready < min)
				min = S.pend[keep].ready;
			keep++;
		}
	}
	S.npend = keep;
	S.min_ready = min;
}

static void add_record(const uint8_t *rec, uint64_t ready)
{
	if (ready <= realtime_ns() && !S.npend) {
		deliver(rec);
		return;
	}
	if (S.npend == S.cappend) {
		int cap = S.cappend ? 2 * S.cappend : 256;
		struct pending *n = cap <= MAX_PENDING ? realloc(S.pend, (size_t)cap * sizeof *n) : NULL;
		if (!n) {
			drop();
			return;
		}
		S.pend = n;
		S.cappend = cap;
	}
	struct pending *p = &S.pend[S.npend++];
	p->ready = ready;
	memcpy(p->bytes, rec, MAX_RECORD);
	if (S.npend == 1 || ready < S.min_ready) {
		S.min_ready = ready;
		pthread_cond_signal(&S.wake);
	}
}

/* take_all moves the full buffers (and with current, the current one) into *out: the
 * caller hands them back without the lock. */
static int take_all(struct done **out, int current, int forced)
{
	if (current && S.buf && (forced || S.buf_records > 0)) {
		queue_full();
	}
	*out = S.full;
	int n = S.nfull;
	S.full = NULL;
	S.nfull = S.capfull = 0;
	return n;
}

static void hand_back(struct done *d, int n, CUpti_BuffersCallbackCompleteFunc done)
{
	for (int i = 0; i < n; i++) {
		logf_("callback bufferCompleted %p size %zu valid %zu", (void *)d[i].buf, d[i].size, d[i].valid);
		count(6, 1);
		if (done)
			done(NULL, 0, d[i].buf, d[i].size, d[i].valid);
	}
	free(d);
}

/* ---- the worker: hands back full buffers, moves finished kernels ---------------------- */

static void *worker(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "stub-cupti");
	lock();
	while (!S.stop) {
		drain(0);
		if (S.nfull) {
			struct done *d;
			int n = take_all(&d, 0, 0);
			CUpti_BuffersCallbackCompleteFunc done = S.completed;
			S.delivering++;
			unlock();
			hand_back(d, n, done);
			lock();
			S.delivering--;
			pthread_cond_broadcast(&S.idle);
			continue;
		}
		uint64_t until = realtime_ns() + 100000000ull;
		if (S.npend && S.min_ready < until)
			until = S.min_ready;
		struct timespec ts = { .tv_sec = (time_t)(until / 1000000000ull), .tv_nsec = (long)(until % 1000000000ull) };
		pthread_cond_timedwait(&S.wake, &S.mu, &ts); /* the condvar's clock is CLOCK_REALTIME */
	}
	unlock();
	return NULL;
}

static void start_worker(void)
{
	if (S.worker_started)
		return;
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old); /* the thread takes none of the app's signals */
	S.stop = 0;
	if (pthread_create(&S.worker, NULL, worker, NULL) == 0)
		S.worker_started = 1;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static int on_worker(void) { return S.worker_started && pthread_equal(pthread_self(), S.worker); }

/* flush: everything finished (everything at all with all) handed back, in this thread. */
static void flush(int forced, int all)
{
	lock();
	drain(all);
	while (S.delivering && !on_worker()) /* a delivery the worker has begun ends first */
		pthread_cond_wait(&S.idle, &S.mu);
	struct done *d;
	int n = take_all(&d, 1, forced);
	CUpti_BuffersCallbackCompleteFunc done = S.completed;
	unlock();
	hand_back(d, n, done);
}

/* ---- the launch hook (called by the stub driver, its schedule lock held) ------------- */

static struct stream *stream_of(uint64_t handle)
{
	size_t n = sizeof S.streams / sizeof S.streams[0];
	size_t i = (size_t)((handle * 0x9e3779b97f4a7c15ull) >> 54) % n;
	for (size_t k = 0; k < n; k++, i = (i + 1) % n) {
		struct stream *s = &S.streams[i];
		if (s->used && s->handle == handle)
			return s;
		if (!s->used) {
			s->used = 1;
			s->handle = handle;
			s->id = handle ? S.next_stream_id++ : 7;
			return s;
		}
	}
	return &S.streams[0]; /* full: streams share a timeline */
}

static int api_enabled(int domain, int cbid)
{
	int kind = domain == DOMAIN_RUNTIME ? KIND_RUNTIME : KIND_DRIVER;
	if (S.kinds & (1ull << kind))
		return 1;
	if (cbid < 0 || cbid >= CBID_MAX)
		return 0;
	return domain == DOMAIN_RUNTIME ? S.runtime_cbid[cbid] : S.driver_cbid[cbid];
}

static const char *kernel_name(int cbid, int domain, int graph_kernels, int i)
{
	static const char *graph_names[] = { "stub_graph_kernel_0", "stub_graph_kernel_1", "stub_graph_kernel_2",
					     "stub_graph_kernel_3", "stub_graph_kernel_4", "stub_graph_kernel_5",
					     "stub_graph_kernel_6", "stub_graph_kernel_7" };
	if (graph_kernels > 0)
		return i < 8 ? graph_names[i] : "stub_graph_kernel_n";
	if (domain == DOMAIN_RUNTIME)
		return (cbid == 430 || cbid == 431) ? "stub_kernel_ex" : "stub_kernel_table";
	if (cbid == 652 || cbid == 653)
		return "stub_kernel_ex";
	return "stub_kernel_exported";
}

API void stub_cupti_report_launch(int cbid, int domain, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
				  unsigned by, unsigned bz, uint64_t stream, uint64_t enter_ns, uint64_t exit_ns,
				  uint64_t kernel_ns, int graph_kernels)
{
	uint32_t corr = __atomic_add_fetch(&correlation, 1, __ATOMIC_RELAXED);
	lock();
	struct stream *st = stream_of(stream);
	int kernels = graph_kernels > 0 ? graph_kernels : 1;
	int record = (S.kinds >> KIND_CONCURRENT_KERNEL) & 1;
	for (int i = 0; i < kernels; i++) {
		uint64_t start = (exit_ns > st->last_end ? exit_ns : st->last_end) + STUB_QUEUE_NS;
		uint64_t end = start + kernel_ns;
		st->last_end = end;
		S.grid_id++;
		if (!record)
			continue;
		uint8_t r[MAX_RECORD] __attribute__((aligned(8))) = { 0 };
		put32(r, K_KIND, KIND_CONCURRENT_KERNEL);
		put8(r, K_CACHE_CONFIG, 0);
		put8(r, K_SHARED_MEMORY_CONFIG, 0);
		put16(r, K_REGISTERS, 32);
		put64(r, K_START, start);
		put64(r, K_END, end);
		put64(r, K_COMPLETED, end);
		put32(r, K_DEVICE, 0);
		put32(r, K_CONTEXT, 1);
		put32(r, K_STREAM, st->id);
		put32(r, K_GRID, gx), put32(r, K_GRID + 4, gy), put32(r, K_GRID + 8, gz);
		put32(r, K_BLOCK, bx), put32(r, K_BLOCK + 4, by), put32(r, K_BLOCK + 8, bz);
		put32(r, K_CORRELATION, corr);
		put64(r, K_GRID_ID, S.grid_id);
		put64(r, K_NAME, (uint64_t)(uintptr_t)kernel_name(cbid, domain, graph_kernels, i));
		put8(r, K_LAUNCH_TYPE, 0);
		if (graph_kernels > 0) {
			put64(r, K_GRAPH_NODE_ID, (1ull << 32) | (uint64_t)(i + 1));
			put32(r, K_GRAPH_ID, 1);
		}
		put8(r, K_DEVICE_LAUNCHED, 0);
		add_record(r, end);
	}
	/* A call that launches nothing before each launch, as a real runtime makes many
	 * (cudaGetDevice, 3; cuCtxGetCurrent, 9): recorded only when the whole API kind is on,
	 * as CUPTI does; the library must leave it out of the ring. */
	int quiet_cbid = domain == DOMAIN_RUNTIME ? 3 : 9;
	if (S.kinds & (1ull << (domain == DOMAIN_RUNTIME ? KIND_RUNTIME : KIND_DRIVER))) {
		uint8_t r[MAX_RECORD] __attribute__((aligned(8))) = { 0 };
		put32(r, A_KIND, domain == DOMAIN_RUNTIME ? KIND_RUNTIME : KIND_DRIVER);
		put32(r, A_CBID, (uint32_t)quiet_cbid);
		put64(r, A_START, enter_ns);
		put64(r, A_END, enter_ns);
		put32(r, A_PID, (uint32_t)getpid());
		put32(r, A_TID, (uint32_t)(uintptr_t)pthread_self());
		put32(r, A_CORRELATION, __atomic_add_fetch(&correlation, 1, __ATOMIC_RELAXED));
		add_record(r, enter_ns);
	}
	if (api_enabled(domain, cbid)) {
		uint8_t r[MAX_RECORD] __attribute__((aligned(8))) = { 0 };
		put32(r, A_KIND, domain == DOMAIN_RUNTIME ? KIND_RUNTIME : KIND_DRIVER);
		put32(r, A_CBID, (uint32_t)cbid);
		put64(r, A_START, enter_ns);
		put64(r, A_END, exit_ns);
		put32(r, A_PID, (uint32_t)getpid());
		put32(r, A_TID, (uint32_t)(uintptr_t)pthread_self());
		put32(r, A_CORRELATION, corr);
		put32(r, A_RESULT, 0);
		add_record(r, exit_ns);
	}
	drain(0);
	unlock();
}

/* stub_cupti_stream_id: the streamId the stub's records give a stream handle. */
API uint32_t stub_cupti_stream_id(uint64_t stream)
{
	lock();
	uint32_t id = stream_of(stream)->id;
	unlock();
	return id;
}

typedef void (*launch_hook_fn)(int, int, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, uint64_t,
			       uint64_t, uint64_t, uint64_t, int);
static launch_hook_fn *hook_slot;

__attribute__((constructor)) static void stub_cupti_load(void)
{
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&S.mu, &a);
	pthread_mutexattr_destroy(&a);
	pthread_cond_init(&S.wake, NULL);
	pthread_cond_init(&S.idle, NULL);
	const char *foreign = getenv("STUB_CUPTI_FOREIGN_KIND");
	S.foreign = foreign && !strcmp(foreign, "1");
	const char *log = getenv("STUB_CUPTI_LOG");
	if (log && *log)
		S.log_fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	/* The stub driver's hook: found in the loaded libcuda.so.1, else anywhere global. */
	void *cuda = dlopen("libcuda.so.1", RTLD_NOLOAD | RTLD_NOW);
	if (cuda) {
		hook_slot = dlsym(cuda, "stub_cupti_launch_hook");
		dlclose(cuda);
	}
	if (!hook_slot)
		hook_slot = dlsym(RTLD_DEFAULT, "stub_cupti_launch_hook");
	if (hook_slot)
		__atomic_store_n(hook_slot, stub_cupti_report_launch, __ATOMIC_RELEASE);
	logf_("load pid %d hook %s", (int)getpid(), hook_slot ? "set" : "not found (no stub libcuda.so.1 loaded)");
}

__attribute__((destructor)) static void stub_cupti_unload(void)
{
	launch_hook_fn mine = stub_cupti_report_launch;
	if (hook_slot)
		__atomic_compare_exchange_n(hook_slot, &mine, NULL, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

/* ---- the CUPTI functions ---------------------------------------------------------------- */

API CUptiResult cuptiGetVersion(uint32_t *version)
{
	if (!version)
		return ret(CUPTI_ERROR_INVALID_PARAMETER, "cuptiGetVersion(NULL)");
	*version = (uint32_t)env_long("STUB_CUPTI_VERSION", 130001);
	return ret(CUPTI_SUCCESS, "cuptiGetVersion -> %u", *version);
}

API CUptiResult cuptiGetResultString(CUptiResult result, const char **str)
{
	static const struct {
		int code;
		const char *s;
	} names[] = {
		{ CUPTI_SUCCESS, "CUPTI_SUCCESS" },
		{ CUPTI_ERROR_INVALID_PARAMETER, "CUPTI_ERROR_INVALID_PARAMETER" },
		{ CUPTI_ERROR_MAX_LIMIT_REACHED, "CUPTI_ERROR_MAX_LIMIT_REACHED" },
		{ CUPTI_ERROR_NOT_INITIALIZED, "CUPTI_ERROR_NOT_INITIALIZED" },
		{ CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED" },
		{ CUPTI_ERROR_UNKNOWN, "CUPTI_ERROR_UNKNOWN" },
	};
	if (!str)
		return ret(CUPTI_ERROR_INVALID_PARAMETER, "cuptiGetResultString(%d, NULL)", result);
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (names[i].code == result) {
			*str = names[i].s;
			return ret(CUPTI_SUCCESS, "cuptiGetResultString(%d)", result);
		}
	return ret(CUPTI_ERROR_INVALID_PARAMETER, "cuptiGetResultString(%d)", result);
}

API CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req,
					       CUpti_BuffersCallbackCompleteFunc done)
{
	if (!req || !done)
		return ret(CUPTI_ERROR_INVALID_PARAMETER, "cuptiActivityRegisterCallbacks(%p, %p)", (void *)req,
			   (void *)done);
	lock();
	S.requested = req;
	S.completed = done;
	start_worker();
	unlock();
	return ret(CUPTI_SUCCESS, "cuptiActivityRegisterCallbacks");
}

API CUptiResult cuptiActivityEnable(uint32_t kind)
{
	count(4, 1);
	if (kind == 0 || kind >= KIND_MAX)
		return ret(CUPTI_ERROR_INVALID_PARAMETER, "cuptiActivityEnable(%u)", kind);
	lock();
	S.kinds |= 1ull << kind;
	unlock();
	return ret(CUPTI_SUCCESS, "cuptiActivityEnable(%u)", kind);
}

API CUptiResult cuptiActivityDisable(uint32_t kind)
{
	if (kind == 0 || kind >= KIND_MAX)
		return ret(CUPTI_ERROR_INVALID_PARAMETER, "cuptiActivityDisable(%u)", kind);
	lock();
	S.kinds &= ~(1ull << kind);
	/* Measured: API records stop after the kind is disabled; per-cbid enables go with it. */
	if (kind == KIND_RUNTIME)
		memset(S.runtime_cbid, 0, sizeof S.runtime_cbid);
	if (kind == KIND_DRIVER)
		memset(S.driver_cbid, 0, sizeof S.driver_cbid);
	unlock();
	return ret(CUPTI_SUCCESS, "cuptiActivityDisable(%u)", kind);
}

static CUptiResult enable_cbid(uint8_t *table, const char *what, uint32_t cbid, uint8_t enable)
{
	if (cbid >= CBID_MAX)
		return ret(CUPTI_ERROR_INVALID_PARAMETER, "%s(%u, %u)", what, cbid, enable);
	if (enable)
		count(7, 1);
	lock();
	table[cbid] = enable ? 1 : 0;
	unlock();
	return ret(CUPTI_SUCCESS, "%s(%u, %u)", what, cbid, enable);
}

API CUptiResult cuptiActivityEnableRuntimeApi(uint32_t cbid, uint8_t enable)
{
	return enable_cbid(S.runtime_cbid, "cuptiActivityEnableRuntimeApi", cbid, enable);
}

API CUptiResult cuptiActivityEnableDriverApi(uint32_t cbid, uint8_t enable)
{
	return enable_cbid(S.driver_cbid, "cuptiActivityEnableDriverApi", cbid, enable);
}

API CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
	flush(flag & FLUSH_FORCED, 0);
	return ret(CUPTI_SUCCESS, "cuptiActivityFlushAll(%u)", flag);
}

API CUptiResult cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid, CUpti_Activity **record)
{
	if (!buffer || !record)
		return ret(CUPTI_ERROR_INVALID_PARAMETER, "cuptiActivityGetNextRecord(%p, %zu, %p)", (void *)buffer,
			   valid, (void *)record);
	size_t off;
	if (!*record) {
		off = (size_t)((8 - ((uintptr_t)buffer & 7)) & 7);
	} else {
		uint8_t *prev = *record;
		if (prev < buffer || prev >= buffer + valid)
			return ret(CUPTI_ERROR_INVALID_PARAMETER, "cuptiActivityGetNextRecord: record outside the buffer");
		uint32_t kind;
		memcpy(&kind, prev, 4);
		uint32_t len = record_size(kind);
		if (!len)
			return ret(CUPTI_ERROR_UNKNOWN, "cuptiActivityGetNextRecord: record of kind %u", kind);
		off = (size_t)(prev - buffer) + len;
	}
	if (off + 8 > valid) {
		*record = NULL;
		return ret(CUPTI_ERROR_MAX_LIMIT_REACHED, "cuptiActivityGetNextRecord(%p, %zu) end", (void *)buffer, valid);
	}
	uint32_t kind;
	memcpy(&kind, buffer + off, 4);
	uint32_t len = record_size(kind);
	if (!len || off + len > valid)
		return ret(CUPTI_ERROR_UNKNOWN, "cuptiActivityGetNextRecord: record of kind %u at %zu of %zu", kind,
			   off, valid);
	*record = buffer + off;
	return CUPTI_SUCCESS; /* not logged: once per record */
}

API CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext ctx, uint32_t streamId, size_t *dropped)
{
	if (!dropped)
		return ret(CUPTI_ERROR_INVALID_PARAMETER, "cuptiActivityGetNumDroppedRecords(NULL)");
	lock();
	if (ctx == NULL && streamId == 0) {
		*dropped = S.dropped;
		S.dropped = 0;
	} else {
		*dropped = 0;
	}
	unlock();
	return ret(CUPTI_SUCCESS, "cuptiActivityGetNumDroppedRecords(%p, %u) -> %zu", (void *)ctx, streamId,
		   *dropped);
}

API CUptiResult cuptiGetTimestamp(uint64_t *timestamp)
{
	if (!timestamp)
		return ret(CUPTI_ERROR_INVALID_PARAMETER, "cuptiGetTimestamp(NULL)");
	*timestamp = realtime_ns();
	return ret(CUPTI_SUCCESS, "cuptiGetTimestamp");
}

static int subscriber_token;

API CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback, void *userdata)
{
	count(5, 1);
	(void)userdata;
	if (!subscriber)
		return ret(CUPTI_ERROR_INVALID_PARAMETER, "cuptiSubscribe(NULL)");
	const char *other = getenv("STUB_CUPTI_SUBSCRIBED");
	if (other && !strcmp(other, "1"))
		return ret(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, "cuptiSubscribe (another profiler: STUB_CUPTI_SUBSCRIBED)");
	lock();
	if (S.subscribed) {
		unlock();
		return ret(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, "cuptiSubscribe");
	}
	S.subscribed = 1;
	unlock();
	(void)callback; /* the stub makes no callbacks */
	*subscriber = &subscriber_token;
	return ret(CUPTI_SUCCESS, "cuptiSubscribe -> %p", (void *)*subscriber);
}

API CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle subscriber)
{
	lock();
	int ok = S.subscribed && subscriber == &subscriber_token;
	if (ok)
		S.subscribed = 0;
	unlock();
	return ret(ok ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER, "cuptiUnsubscribe(%p)", subscriber);
}

API CUptiResult cuptiFinalize(void)
{
	count(3, 1);
	if (on_worker()) /* from inside bufferCompleted: the stub cannot tear itself down there */
		return ret(CUPTI_ERROR_UNKNOWN, "cuptiFinalize (from the stub's own thread)");
	lock();
	S.kinds = 0; /* no new records; the kernels still "running" finish (bounded), then all go back */
	memset(S.runtime_cbid, 0, sizeof S.runtime_cbid);
	memset(S.driver_cbid, 0, sizeof S.driver_cbid);
	unlock();
	uint64_t deadline = realtime_ns() + 10000000000ull;
	for (;;) {
		lock();
		drain(0);
		uint64_t next = S.npend ? S.min_ready : 0;
		unlock();
		uint64_t now = realtime_ns();
		if (!next || now >= deadline)
			break;
		uint64_t d = next > now ? next - now : 0;
		struct timespec ts = { 0, (long)(d > 1000000 ? 1000000 : d) };
		nanosleep(&ts, NULL);
	}
	flush(1, 1);
	lock();
	int had_worker = S.worker_started;
	S.stop = 1;
	pthread_cond_broadcast(&S.wake);
	unlock();
	if (had_worker)
		pthread_join(S.worker, NULL);
	lock();
	S.worker_started = 0;
	S.stop = 0;
	S.requested = NULL;
	S.completed = NULL;
	S.subscribed = 0;
	S.dropped = 0;
	unlock();
	return ret(CUPTI_SUCCESS, "cuptiFinalize");
}
