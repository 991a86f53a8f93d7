/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libghostdriver_cupti.so: the GPU's own timeline for ghostdriver, loaded into a CUDA
 * process by the driver (CUDA_INJECTION64_PATH; libcuda calls InitializeInjection at
 * cuInit). It makes one shared-memory channel (channel.h) that the collector finds
 * through /proc and stays DORMANT: CUPTI is neither loaded nor subscribed until the
 * collector asks. Turned on, it enables CUPTI's kernel records and the API records of
 * the launch calls only, and copies each record it knows into the channel's ring as a
 * compact frame; turned off (or when the collector stops visiting), it flushes,
 * disables and calls cuptiFinalize, so nothing of CUPTI stays in the process. It never
 * blocks the application: a full ring or an exhausted buffer budget drops records and
 * counts them in the header. Built with a plain C compiler, no CUDA toolkit: CUPTI is
 * dlopen'ed and its record layouts are this project's own declarations (cupti_abi.h).
 *
 * Environment (all optional):
 *   GHOSTDRIVER_CUPTI=off                 do nothing at all (no channel)
 *   GHOSTDRIVER_CUPTI_LIBRARY=PATH        the libcupti to load (default: search below)
 *   GHOSTDRIVER_CUPTI_RING_BYTES=N        channel ring size (power of two, 64 KiB..256 MiB; 8 MiB)
 *   GHOSTDRIVER_CUPTI_BUFFER_BYTES=N      one CUPTI buffer (default 1 MiB)
 *   GHOSTDRIVER_CUPTI_BUFFERS=N           CUPTI buffers at most (default 8): the memory budget
 *   GHOSTDRIVER_CUPTI_POLL_MS=N           how often the control word is read (default 50)
 *   GHOSTDRIVER_CUPTI_FLUSH_MS=N          while on, how often CUPTI is flushed (default 200)
 *   GHOSTDRIVER_CUPTI_BEAT_TIMEOUT_MS=N   collector silent this long: turn off (default 3000)
 *   GHOSTDRIVER_CUPTI_RETRY_MS=N          backed off or failed: try again this often (default 10000)
 *   GHOSTDRIVER_CUPTI_ACCEPT_VERSION=N    read CUPTI version N with the newest known layout
 *   GHOSTDRIVER_CUPTI_API=all|launch      API records of every runtime and driver call (all, the
 *                                         default), or of the launch calls only (per callback id;
 *                                         on the H100 with PyTorch 2.11 that gave no records for
 *                                         most launches: docs/nvidia-timeline.md)
 *   GHOSTDRIVER_CUPTI_LOG=1               one line to stderr per state change
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "channel.h"
#include "cupti_abi.h"
#include "peer.h"

#define EXPORT __attribute__((visibility("default")))

static struct {
	int fd;
	struct gd_header *h;
	uint8_t *ring;
	uint64_t ring_size;
	pthread_mutex_t write_mu; /* one producer at a time: CUPTI's thread and ours */
	int dead;                 /* a forked child: the channel is the parent's */

	void *lib;
	struct cupti_api api;
	const struct cupti_kernel_layout *layout;
	int fine_grained;    /* launch API records enabled per callback id */
	int api_launch_only; /* GHOSTDRIVER_CUPTI_API=launch */

	/* CUPTI buffers: a fixed pool (the memory budget), handed out and taken back. */
	size_t buf_bytes;
	int nbufs;
	uint8_t **bufs;
	uint8_t *buf_used;
	pthread_mutex_t buf_mu;

	long poll_ms, flush_ms, beat_timeout_ms, retry_ms;
	/* Another profiler in this process (peer.c): while one is in a session the timeline
	 * keeps out; it may come back retry_ms after the session ended. */
	pthread_mutex_t cupti_mu; /* our CUPTI state changes: control thread and peer wrappers */
	int peer_active;
	uint64_t peer_left_at;
	struct peer_hooks peer;
	int log;
	uint32_t state;
	/* devices_pending: the device frames of this session are not written yet (the driver
	 * answers device queries only once cuInit has returned; the timeline may come on
	 * inside it, from the control thread). */
	int devices_pending;
} g = { .fd = -1, .write_mu = PTHREAD_MUTEX_INITIALIZER, .buf_mu = PTHREAD_MUTEX_INITIALIZER,
	.cupti_mu = PTHREAD_MUTEX_INITIALIZER };

static uint64_t mono_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static long env_long(const char *name, long def, long lo, long hi)
{
	const char *v = getenv(name);
	if (!v || !*v)
		return def;
	char *end;
	long n = strtol(v, &end, 0);
	if (*end || n < lo || n > hi) {
		fprintf(stderr, "ghostdriver-cupti: %s=%s is not a number in [%ld, %ld]; using %ld\n", name, v, lo, hi,
			def);
		return def;
	}
	return n;
}

static void counter_add(uint64_t *c, uint64_t n) { __atomic_add_fetch(c, n, __ATOMIC_RELAXED); }

static void set_state(uint32_t st, int reason, const char *fmt, ...)
{
	char msg[sizeof g.h->state_msg];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	g.state = st;
	memcpy(g.h->state_msg, msg, sizeof msg);
	__atomic_store_n(&g.h->lib_state, st, __ATOMIC_RELEASE);
	if (g.log)
		fprintf(stderr, "ghostdriver-cupti[%d]: state %u: %s\n", getpid(), st, msg);
	(void)reason;
}

/* ---- the ring (producer side) ------------------------------------------------------ */

/* reserve returns where a frame of len bytes (multiple of 8) goes, or NULL when the
 * ring has no room; the caller fills it and calls commit. write_mu held. */
static uint8_t *reserve(uint32_t len, uint64_t *head_out)
{
	uint64_t head = g.h->head; /* only we write it */
	uint64_t tail = __atomic_load_n(&g.h->tail, __ATOMIC_ACQUIRE);
	uint64_t used = head - tail;
	if (used > g.ring_size) /* the consumer wrote nonsense: treat as full, never overrun */
		return NULL;
	uint64_t off = head & (g.ring_size - 1);
	uint64_t to_end = g.ring_size - off;
	uint64_t need = len + (to_end < len ? to_end : 0);
	if (g.ring_size - used < need)
		return NULL;
	if (to_end < len) { /* pad to the end: a frame never wraps */
		struct gd_frame pad = { .len = (uint32_t)to_end, .type = GD_FRAME_PAD };
		memcpy(g.ring + off, &pad, sizeof pad);
		head += to_end;
		off = 0;
	}
	*head_out = head;
	return g.ring + off;
}

static void commit(uint64_t head, uint32_t len) { __atomic_store_n(&g.h->head, head + len, __ATOMIC_RELEASE); }

static int put_frame(uint16_t type, uint16_t flags, const void *body, uint32_t body_len, const void *tail,
		     uint32_t tail_len)
{
	uint32_t len = (uint32_t)((sizeof(struct gd_frame) + body_len + tail_len + 7) & ~7u);
	uint64_t head;
	uint8_t *p = reserve(len, &head);
	if (!p)
		return -1;
	struct gd_frame f = { .len = len, .type = type, .flags = flags };
	memcpy(p, &f, sizeof f);
	memcpy(p + sizeof f, body, body_len);
	if (tail_len)
		memcpy(p + sizeof f + body_len, tail, tail_len);
	size_t used = sizeof f + body_len + tail_len;
	memset(p + used, 0, len - used);
	commit(head, len);
	return 0;
}

/* put_one writes a frame of the library's own (not a CUPTI record) under write_mu; a full
 * ring drops it, counted. */
static void put_one(uint16_t type, uint16_t flags, const void *body, uint32_t len)
{
	pthread_mutex_lock(&g.write_mu);
	if (put_frame(type, flags, body, len, NULL, 0))
		counter_add(&g.h->dropped_ring_full, 1);
	pthread_mutex_unlock(&g.write_mu);
}

static void put_state_frame(uint32_t st, uint32_t reason)
{
	struct gd_state_change s = { .mono = mono_ns(), .state = st, .reason = reason };
	put_one(GD_FRAME_STATE, 0, &s, sizeof s);
}

/* ---- CUPTI buffers ------------------------------------------------------------------ */

static void buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	*buffer = NULL;
	*size = 0;
	*max_records = 0;
	pthread_mutex_lock(&g.buf_mu);
	for (int i = 0; i < g.nbufs; i++) {
		if (g.buf_used[i])
			continue;
		if (!g.bufs[i]) {
			void *b = NULL;
			if (posix_memalign(&b, 8, g.buf_bytes))
				break;
			g.bufs[i] = b;
		}
		g.buf_used[i] = 1;
		*buffer = g.bufs[i];
		*size = g.buf_bytes;
		break;
	}
	pthread_mutex_unlock(&g.buf_mu);
	if (!*buffer && g.h)
		counter_add(&g.h->buffers_refused, 1);
}

static void buffer_release(uint8_t *buffer)
{
	pthread_mutex_lock(&g.buf_mu);
	for (int i = 0; i < g.nbufs; i++)
		if (g.bufs[i] == buffer)
			g.buf_used[i] = 0;
	pthread_mutex_unlock(&g.buf_mu);
}

static uint32_t rd32(const uint8_t *r, unsigned off)
{
	uint32_t v;
	memcpy(&v, r + off, 4);
	return v;
}
static uint64_t rd64(const uint8_t *r, unsigned off)
{
	uint64_t v;
	memcpy(&v, r + off, 8);
	return v;
}

static int put_kernel(const uint8_t *r)
{
	const struct cupti_kernel_layout *L = g.layout;
	struct gd_kernel k = { 0 };
	k.start = rd64(r, L->start);
	k.end = rd64(r, L->end);
	k.correlation_id = rd32(r, L->correlation);
	k.device_id = rd32(r, L->device);
	k.context_id = rd32(r, L->context);
	k.stream_id = rd32(r, L->stream);
	k.grid_x = rd32(r, L->grid), k.grid_y = rd32(r, L->grid + 4), k.grid_z = rd32(r, L->grid + 8);
	k.block_x = rd32(r, L->block), k.block_y = rd32(r, L->block + 4), k.block_z = rd32(r, L->block + 8);
	uint16_t regs;
	memcpy(&regs, r + L->registers, 2);
	k.registers_per_thread = regs;
	k.shared_memory = rd32(r, L->static_shmem) + rd32(r, L->dynamic_shmem);
	k.graph_id = rd32(r, L->graph_id);
	k.graph_node_id = rd64(r, L->graph_node_id);
	k.launch_type = r[L->launch_type];
	const char *name = (const char *)(uintptr_t)rd64(r, L->name);
	uint16_t flags = 0;
	size_t n = name ? strnlen(name, GD_NAME_MAX + 1) : 0;
	if (n > GD_NAME_MAX) {
		n = GD_NAME_MAX;
		flags |= GD_KERNEL_F_NAME_TRUNCATED;
		counter_add(&g.h->names_truncated, 1);
	}
	k.name_len = (uint16_t)n;
	return put_frame(GD_FRAME_KERNEL, flags, &k, sizeof k, name, (uint32_t)n);
}

/* is_launch says whether an API record is of a call that launches work (the only ones
 * the collector joins: a kernel's correlation id names its launch). With the whole
 * runtime and driver kinds enabled, PyTorch makes ~20 API records per kernel (measured on
 * the H200: 210 694 API records for 10 321 kernels), which would fill the ring. */
static int is_launch(uint32_t cbid, uint32_t domain)
{
	const uint32_t *ids = domain == GD_API_RUNTIME ? cupti_runtime_launch_cbids : cupti_driver_launch_cbids;
	size_t n = domain == GD_API_RUNTIME ? sizeof cupti_runtime_launch_cbids / sizeof cupti_runtime_launch_cbids[0]
					    : sizeof cupti_driver_launch_cbids / sizeof cupti_driver_launch_cbids[0];
	for (size_t i = 0; i < n; i++)
		if (ids[i] == cbid)
			return 1;
	return 0;
}

static int put_api(const uint8_t *r, uint32_t domain)
{
	struct gd_api a = {
		.start = rd64(r, CUPTI_API_START),
		.end = rd64(r, CUPTI_API_END),
		.correlation_id = rd32(r, CUPTI_API_CORRELATION),
		.cbid = rd32(r, CUPTI_API_CBID),
		.pid = rd32(r, CUPTI_API_PID),
		.tid = rd32(r, CUPTI_API_TID),
		.domain = domain,
		.result = rd32(r, CUPTI_API_RESULT),
	};
	return put_frame(GD_FRAME_API, 0, &a, sizeof a, NULL, 0);
}

static void buffer_completed(void *ctx, uint32_t stream_id, uint8_t *buffer, size_t size, size_t valid)
{
	(void)size;
	if (g.dead || !g.h) {
		buffer_release(buffer);
		return;
	}
	size_t dropped = 0;
	if (g.api.ActivityGetNumDroppedRecords)
		g.api.ActivityGetNumDroppedRecords(ctx, stream_id, &dropped);
	if (dropped)
		counter_add(&g.h->dropped_cupti, dropped);

	struct gd_batch b = { .dropped_cupti = (uint32_t)dropped };
	uint64_t ts = 0;
	b.mono_before = mono_ns();
	g.api.GetTimestamp(&ts);
	b.mono_after = mono_ns();
	b.cupti_at = ts;
	uint32_t records = 0;
	for (void *rec = NULL; valid && g.api.ActivityGetNextRecord(buffer, valid, &rec) == CUPTI_OK;)
		records++;
	b.records = records;

	pthread_mutex_lock(&g.write_mu);
	uint64_t written = 0, full = 0, refused = 0, filtered = 0;
	if (records && put_frame(GD_FRAME_BATCH, 0, &b, sizeof b, NULL, 0)) {
		full = records; /* no clock for them: they cannot be placed */
	} else if (records) {
		for (void *rec = NULL; g.api.ActivityGetNextRecord(buffer, valid, &rec) == CUPTI_OK;) {
			const uint8_t *r = rec;
			uint32_t kind = rd32(r, 0);
			int rc;
			if (kind == CUPTI_KIND_CONCURRENT_KERNEL)
				rc = put_kernel(r);
			else if (kind == CUPTI_KIND_RUNTIME || kind == CUPTI_KIND_DRIVER) {
				uint32_t domain = kind == CUPTI_KIND_RUNTIME ? GD_API_RUNTIME : GD_API_DRIVER;
				if (!is_launch(rd32(r, CUPTI_API_CBID), domain)) {
					filtered++;
					continue;
				}
				rc = put_api(r, domain);
			} else {
				refused++;
				continue;
			}
			if (rc)
				full++;
			else
				written++;
		}
	}
	pthread_mutex_unlock(&g.write_mu);
	counter_add(&g.h->records_written, written);
	counter_add(&g.h->dropped_ring_full, full);
	counter_add(&g.h->refused_layout, refused);
	counter_add(&g.h->api_filtered, filtered);
	counter_add(&g.h->batches, 1);
	buffer_release(buffer);
}

/* ---- CUPTI on and off ---------------------------------------------------------------- */

static const char *cupti_error(cupti_result r)
{
	const char *s = NULL;
	if (g.api.GetResultString && g.api.GetResultString(r, &s) == CUPTI_OK && s)
		return s;
	return "unknown CUPTI error";
}

static int load_cupti(void)
{
	static const char *names[] = {
		"libcupti.so.13",
		"libcupti.so",
		"/usr/local/cuda/lib64/libcupti.so.13",
		"/usr/local/cuda/targets/x86_64-linux/lib/libcupti.so.13",
		"/usr/local/cuda/targets/sbsa-linux/lib/libcupti.so.13",
		"/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13",
		"/usr/local/cuda/lib64/libcupti.so",
		"/usr/local/cuda/extras/CUPTI/lib64/libcupti.so",
	};
	char errs[200] = "";
	const char *want = getenv("GHOSTDRIVER_CUPTI_LIBRARY");
	/* A libcupti the process already loaded (PyTorch links one for Kineto) comes first:
	 * two CUPTI copies in one process compete for the driver's profiling interface, and
	 * one sharing the process's copy is the one the peer hooks can yield to. */
	static const char *loaded[] = { "libcupti.so.13", "libcupti.so" };
	for (size_t i = 0; i < sizeof loaded / sizeof loaded[0] && !g.lib; i++)
		if ((g.lib = dlopen(loaded[i], RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD))) {
			Dl_info di;
			void *sym = dlsym(g.lib, "cuptiGetVersion");
			snprintf(g.h->cupti_path, sizeof g.h->cupti_path, "%s",
				 sym && dladdr(sym, &di) && di.dli_fname ? di.dli_fname : loaded[i]);
		}
	if (g.lib) {
		/* already loaded: use it */
	} else if (want && *want) {
		g.lib = dlopen(want, RTLD_NOW | RTLD_LOCAL);
		if (!g.lib) {
			set_state(GD_STATE_NO_CUPTI, 0, "GHOSTDRIVER_CUPTI_LIBRARY=%s: %s", want, dlerror());
			return -1;
		}
		snprintf(g.h->cupti_path, sizeof g.h->cupti_path, "%s", want);
	} else {
		for (size_t i = 0; i < sizeof names / sizeof names[0] && !g.lib; i++) {
			g.lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
			if (g.lib)
				snprintf(g.h->cupti_path, sizeof g.h->cupti_path, "%s", names[i]);
			else if (!errs[0])
				snprintf(errs, sizeof errs, "%s", dlerror());
		}
		if (!g.lib) {
			set_state(GD_STATE_NO_CUPTI, 0, "no libcupti found (set GHOSTDRIVER_CUPTI_LIBRARY): %s", errs);
			return -1;
		}
	}
#define SYM(field, name, required)                                                                       \
	do {                                                                                             \
		*(void **)&g.api.field = dlsym(g.lib, name);                                             \
		if (!g.api.field && required) {                                                          \
			set_state(GD_STATE_UNSUPPORTED, 0, "%s has no %s", g.h->cupti_path, name);       \
			return -1;                                                                       \
		}                                                                                        \
	} while (0)
	SYM(GetVersion, "cuptiGetVersion", 1);
	SYM(GetResultString, "cuptiGetResultString", 0);
	SYM(ActivityRegisterCallbacks, "cuptiActivityRegisterCallbacks", 1);
	SYM(ActivityEnable, "cuptiActivityEnable", 1);
	SYM(ActivityDisable, "cuptiActivityDisable", 1);
	SYM(ActivityEnableRuntimeApi, "cuptiActivityEnableRuntimeApi", 0);
	SYM(ActivityEnableDriverApi, "cuptiActivityEnableDriverApi", 0);
	SYM(ActivityFlushAll, "cuptiActivityFlushAll", 1);
	SYM(ActivityGetNextRecord, "cuptiActivityGetNextRecord", 1);
	SYM(ActivityGetNumDroppedRecords, "cuptiActivityGetNumDroppedRecords", 0);
	SYM(GetTimestamp, "cuptiGetTimestamp", 1);
	SYM(Subscribe, "cuptiSubscribe", 1);
	SYM(Unsubscribe, "cuptiUnsubscribe", 1);
	SYM(Finalize, "cuptiFinalize", 1);
#undef SYM
	uint32_t v = 0;
	g.api.GetVersion(&v);
	g.h->cupti_version = v;
	long accept = env_long("GHOSTDRIVER_CUPTI_ACCEPT_VERSION", 0, 0, 1L << 31);
	size_t n = sizeof cupti_known_layouts / sizeof cupti_known_layouts[0];
	for (size_t i = 0; i < n; i++)
		if (cupti_known_layouts[i].version == v)
			g.layout = &cupti_known_layouts[i];
	if (!g.layout && accept && (uint32_t)accept == v)
		g.layout = &cupti_known_layouts[n - 1];
	if (!g.layout) {
		set_state(GD_STATE_UNSUPPORTED, 0,
			  "CUPTI version %u: its kernel record layout is not one this library knows (known: %u)", v,
			  cupti_known_layouts[n - 1].version);
		return -1;
	}
	g.h->kernel_record_size = g.layout->size;
	return 0;
}

static void noop_callback(void *u, int d, uint32_t c, const void *p) { (void)u, (void)d, (void)c, (void)p; }

/* another_profiler says whether some other tool holds CUPTI's one subscriber slot
 * (Nsight Systems, Kineto's callback API): then the timeline keeps out. The probe holds
 * the slot only between the two calls. */
static int another_profiler(void)
{
	void *sub = NULL;
	cupti_result r = g.api.Subscribe(&sub, noop_callback, NULL);
	if (r == CUPTI_ERR_MULTIPLE_SUBSCRIBERS)
		return 1;
	if (r == CUPTI_OK)
		g.api.Unsubscribe(sub);
	return 0;
}

static void enable_api_records(uint8_t on)
{
	for (size_t i = 0; i < sizeof cupti_runtime_launch_cbids / sizeof cupti_runtime_launch_cbids[0]; i++)
		g.api.ActivityEnableRuntimeApi(cupti_runtime_launch_cbids[i], on);
	for (size_t i = 0; i < sizeof cupti_driver_launch_cbids / sizeof cupti_driver_launch_cbids[0]; i++)
		g.api.ActivityEnableDriverApi(cupti_driver_launch_cbids[i], on);
}

/* ---- devices -------------------------------------------------------------------------- */

/* The two driver calls the device frames need, declared here (the CUDA driver API's
 * signatures: CUresult is an int, CUdevice an int ordinal). libcuda is in the process
 * already: it is the library that called InitializeInjection. */
typedef int (*cu_device_get_count_fn)(int *count);
typedef int (*cu_device_get_attribute_fn)(int *value, int attribute, int device);
enum { CU_ATTR_MULTIPROCESSOR_COUNT = 16, CU_ATTR_CC_MAJOR = 75, CU_ATTR_CC_MINOR = 76 };

/* put_devices writes one device frame per device the driver lists (SM count and compute
 * capability), so the collector can weigh a kernel's blocks against its device. Called
 * from the control thread, never from a CUPTI callback. It returns the frames written: 0
 * while the driver does not answer yet — cuDeviceGetCount fails with
 * CUDA_ERROR_NOT_INITIALIZED until cuInit has returned, and the timeline can come on
 * inside cuInit (the control thread starts in InitializeInjection) — and the control loop
 * then asks again at each poll (devices_pending). */
static int put_devices(void)
{
	void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	void *from = cuda ? cuda : RTLD_DEFAULT;
	cu_device_get_count_fn get_count = (cu_device_get_count_fn)dlsym(from, "cuDeviceGetCount");
	cu_device_get_attribute_fn get_attr = (cu_device_get_attribute_fn)dlsym(from, "cuDeviceGetAttribute");
	int n = 0, put = 0;
	if (get_count && get_attr && get_count(&n) == 0) {
		for (int d = 0; d < n && d < 64; d++) {
			int sms = 0, major = 0, minor = 0;
			if (get_attr(&sms, CU_ATTR_MULTIPROCESSOR_COUNT, d) != 0)
				sms = 0;
			if (get_attr(&major, CU_ATTR_CC_MAJOR, d) != 0 || get_attr(&minor, CU_ATTR_CC_MINOR, d) != 0)
				major = minor = 0;
			struct gd_device dev = { .device_id = (uint32_t)d, .sm_count = (uint32_t)(sms > 0 ? sms : 0),
						 .cc_major = (uint32_t)(major > 0 ? major : 0),
						 .cc_minor = (uint32_t)(minor > 0 ? minor : 0) };
			put_one(GD_FRAME_DEVICE, 0, &dev, sizeof dev);
			put++;
		}
	}
	if (cuda)
		dlclose(cuda);
	return put;
}

static void turn_on(void)
{
	if (!g.lib && load_cupti())
		return;
	if (g.peer_active) {
		counter_add(&g.h->backoffs, 1);
		set_state(GD_STATE_BACKED_OFF, 0, "another profiler in this process is in a CUPTI session; keeping out");
		put_state_frame(GD_STATE_BACKED_OFF, 0);
		return;
	}
	if (another_profiler()) {
		counter_add(&g.h->backoffs, 1);
		set_state(GD_STATE_BACKED_OFF, CUPTI_ERR_MULTIPLE_SUBSCRIBERS,
			  "another profiler holds CUPTI (cuptiSubscribe: %s); keeping out",
			  cupti_error(CUPTI_ERR_MULTIPLE_SUBSCRIBERS));
		put_state_frame(GD_STATE_BACKED_OFF, CUPTI_ERR_MULTIPLE_SUBSCRIBERS);
		return;
	}
	cupti_result r = g.api.ActivityRegisterCallbacks(buffer_requested, buffer_completed);
	if (r == CUPTI_OK)
		r = g.api.ActivityEnable(CUPTI_KIND_CONCURRENT_KERNEL);
	if (r != CUPTI_OK) {
		set_state(GD_STATE_ERROR, r, "enabling kernel records: %s", cupti_error(r));
		put_state_frame(GD_STATE_ERROR, (uint32_t)r);
		return;
	}
	/* Only the launch calls' API records: every kernel's correlation id names its launch,
	 * and the launch's thread and time join it to the host's span. */
	g.fine_grained = g.api_launch_only && g.api.ActivityEnableRuntimeApi && g.api.ActivityEnableDriverApi;
	if (g.fine_grained) {
		enable_api_records(1);
	} else {
		g.api.ActivityEnable(CUPTI_KIND_RUNTIME);
		g.api.ActivityEnable(CUPTI_KIND_DRIVER);
	}
	counter_add(&g.h->enables, 1);
	put_state_frame(GD_STATE_ON, 0);
	g.devices_pending = put_devices() == 0;
	set_state(GD_STATE_ON, 0, "on: kernel records and %s launch API records from %s",
		  g.fine_grained ? "per-callback" : "all runtime and driver", g.h->cupti_path);
}

/* stop_records hands every buffer over and disables the timeline's kinds; what was in
 * flight is flushed once more after the disable. */
static void stop_records(void)
{
	g.api.ActivityFlushAll(CUPTI_FLUSH_FORCED);
	g.api.ActivityDisable(CUPTI_KIND_CONCURRENT_KERNEL);
	if (g.fine_grained)
		enable_api_records(0);
	else {
		g.api.ActivityDisable(CUPTI_KIND_RUNTIME);
		g.api.ActivityDisable(CUPTI_KIND_DRIVER);
	}
	g.api.ActivityFlushAll(CUPTI_FLUSH_FORCED);
}

static void turn_off(uint32_t why, const char *msg)
{
	put_state_frame(why, 0);
	stop_records();
	/* cuptiActivityDisable alone leaves CUPTI's instrumentation in place (measured: 10-20 %
	 * per launch); cuptiFinalize takes it out. A later turn_on starts CUPTI afresh. */
	cupti_result r = g.api.Finalize();
	counter_add(&g.h->disables, 1);
	set_state(why, r, "%s%s%s", msg, r == CUPTI_OK ? "" : "; cuptiFinalize: ", r == CUPTI_OK ? "" : cupti_error(r));
}

/* flush_and_mark hands CUPTI's buffers over (forced: partly filled ones too) and then
 * writes a flush mark, a batch frame of no records whose mono_before is when the flush
 * began: the collector holds a submission until a mark at or after its sync's return. */
static void flush_and_mark(void)
{
	struct gd_batch m = { 0 };
	uint64_t ts = 0;
	m.mono_before = mono_ns();
	g.api.ActivityFlushAll(CUPTI_FLUSH_FORCED);
	g.api.GetTimestamp(&ts);
	m.cupti_at = ts;
	m.mono_after = mono_ns();
	put_one(GD_FRAME_BATCH, GD_BATCH_F_MARK, &m, sizeof m);
}

/* ---- another profiler --------------------------------------------------------------- */

/* step_aside: the timeline hands its buffers over and disables its kinds (no
 * cuptiFinalize: that would end the peer's session too), so that the peer's own calls,
 * which come next, find CUPTI as if the library were not there. */
static void peer_arrived(const char *call)
{
	pthread_mutex_lock(&g.cupti_mu);
	if (!g.peer_active && g.h && !g.dead) {
		g.peer_active = 1;
		if (g.state == GD_STATE_ON) {
			put_state_frame(GD_STATE_BACKED_OFF, 0);
			stop_records();
			counter_add(&g.h->backoffs, 1);
			counter_add(&g.h->disables, 1);
			set_state(GD_STATE_BACKED_OFF, 0, "another profiler in this process called %s: stepped aside", call);
		}
	}
	pthread_mutex_unlock(&g.cupti_mu);
}

static void peer_left(const char *call)
{
	(void)call;
	pthread_mutex_lock(&g.cupti_mu);
	if (g.peer_active) {
		g.peer_active = 0;
		g.peer_left_at = mono_ns();
	}
	pthread_mutex_unlock(&g.cupti_mu);
}

/* ---- the control thread -------------------------------------------------------------- */

static void *control_loop(void *arg)
{
	(void)arg;
	uint64_t last_flush = 0, last_try = 0;
	for (;;) {
		struct timespec d = { .tv_sec = g.poll_ms / 1000, .tv_nsec = (g.poll_ms % 1000) * 1000000L };
		nanosleep(&d, NULL);
		if (g.dead)
			return NULL;
		uint64_t now = mono_ns();
		uint32_t control = __atomic_load_n(&g.h->control, __ATOMIC_ACQUIRE);
		uint32_t seq = __atomic_load_n(&g.h->control_seq, __ATOMIC_ACQUIRE);
		uint64_t beat = __atomic_load_n(&g.h->collector_beat, __ATOMIC_ACQUIRE);
		int fresh = beat && beat <= now + 1000000000ull && now - beat < (uint64_t)g.beat_timeout_ms * 1000000ull;
		int want = control == GD_CONTROL_ON && fresh;
		uint32_t seen = __atomic_load_n(&g.h->lib_seen_seq, __ATOMIC_RELAXED);
		peer_watch(&g.peer); /* modules loaded since the last poll */
		pthread_mutex_lock(&g.cupti_mu);
		if (g.peer_active || (g.peer_left_at && now - g.peer_left_at < (uint64_t)g.retry_ms * 1000000ull))
			want = 0; /* keep out; come back only retry_ms after the peer's session ended */
		if (g.state == GD_STATE_ON && want && g.devices_pending)
			g.devices_pending = put_devices() == 0;
		if (g.state == GD_STATE_ON) {
			if (!want)
				turn_off(GD_STATE_OFF, fresh ? "off: the collector asked" : "off: the collector stopped visiting");
			else if (now - last_flush >= (uint64_t)g.flush_ms * 1000000ull) {
				flush_and_mark();
				last_flush = now;
			}
		} else if (want && (g.state == GD_STATE_DORMANT || g.state == GD_STATE_OFF ||
				    ((g.state == GD_STATE_BACKED_OFF || g.state == GD_STATE_ERROR) &&
				     (seq != seen || now - last_try >= (uint64_t)g.retry_ms * 1000000ull)))) {
			/* A backed-off or failed timeline tries again when the collector writes its
			 * control word again (the next duty cycle) or every retry period, not every
			 * poll: the other profiler may still be there. */
			last_try = now;
			turn_on();
			last_flush = now;
		}
		pthread_mutex_unlock(&g.cupti_mu);
		__atomic_store_n(&g.h->lib_seen_seq, seq, __ATOMIC_RELEASE);
	}
}

static void at_exit(void)
{
	/* The last records of a process that exits normally: flush them into the ring (the
	 * collector keeps the channel mapped and drains it after the process is gone). */
	if (!g.dead && g.state == GD_STATE_ON && g.api.ActivityFlushAll)
		g.api.ActivityFlushAll(CUPTI_FLUSH_FORCED);
}

static void in_child(void)
{
	/* The mapping is MADV_DONTFORK (absent here) and the header names the parent: this
	 * process has no channel. CUDA does not work across fork anyway. */
	g.dead = 1;
	g.h = NULL;
	if (g.fd >= 0)
		close(g.fd);
	g.fd = -1;
}

static int make_channel(void)
{
	long ring = env_long("GHOSTDRIVER_CUPTI_RING_BYTES", 8L << 20, GD_RING_MIN, GD_RING_MAX);
	if (ring & (ring - 1)) {
		fprintf(stderr, "ghostdriver-cupti: GHOSTDRIVER_CUPTI_RING_BYTES=%ld is not a power of two; using 8 MiB\n",
			ring);
		ring = 8L << 20;
	}
	size_t total = GD_HEADER_SIZE + (size_t)ring;
	g.fd = memfd_create(GD_CHANNEL_NAME, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (g.fd < 0 && errno == EINVAL)
		g.fd = memfd_create(GD_CHANNEL_NAME, MFD_CLOEXEC);
	if (g.fd < 0 || ftruncate(g.fd, (off_t)total)) {
		fprintf(stderr, "ghostdriver-cupti: memfd: %s; the timeline is off for this process\n", strerror(errno));
		return -1;
	}
	/* Sealed against shrinking: a mapping of it can never fault in the collector. */
	fcntl(g.fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
	void *m = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, g.fd, 0);
	if (m == MAP_FAILED) {
		fprintf(stderr, "ghostdriver-cupti: mmap: %s; the timeline is off for this process\n", strerror(errno));
		close(g.fd);
		return -1;
	}
	madvise(m, total, MADV_DONTFORK);
	g.h = m;
	g.ring = (uint8_t *)m + GD_HEADER_SIZE;
	g.ring_size = (uint64_t)ring;
	g.h->version = GD_VERSION;
	g.h->header_size = GD_HEADER_SIZE;
	g.h->ring_size = (uint64_t)ring;
	g.h->pid = (uint32_t)getpid();
	g.h->lib_state = GD_STATE_DORMANT;
	/* The magic last: a collector that maps the file early sees no channel, not half of one. */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	memcpy(g.h->magic, GD_MAGIC, 8);
	return 0;
}

EXPORT int InitializeInjection(void)
{
	static int done;
	if (__atomic_exchange_n(&done, 1, __ATOMIC_ACQ_REL))
		return 1;
	const char *off = getenv("GHOSTDRIVER_CUPTI");
	if (off && (!strcmp(off, "off") || !strcmp(off, "0")))
		return 1;
	g.log = getenv("GHOSTDRIVER_CUPTI_LOG") != NULL;
	g.poll_ms = env_long("GHOSTDRIVER_CUPTI_POLL_MS", 50, 1, 10000);
	g.flush_ms = env_long("GHOSTDRIVER_CUPTI_FLUSH_MS", 200, 1, 60000);
	g.beat_timeout_ms = env_long("GHOSTDRIVER_CUPTI_BEAT_TIMEOUT_MS", 3000, 10, 600000);
	g.retry_ms = env_long("GHOSTDRIVER_CUPTI_RETRY_MS", 10000, 10, 3600000);
	const char *api = getenv("GHOSTDRIVER_CUPTI_API");
	g.api_launch_only = api && !strcmp(api, "launch");
	g.buf_bytes = (size_t)env_long("GHOSTDRIVER_CUPTI_BUFFER_BYTES", 1L << 20, 4096, 64L << 20) & ~(size_t)7;
	g.nbufs = (int)env_long("GHOSTDRIVER_CUPTI_BUFFERS", 8, 1, 1024);
	g.bufs = calloc((size_t)g.nbufs, sizeof *g.bufs);
	g.buf_used = calloc((size_t)g.nbufs, 1);
	if (!g.bufs || !g.buf_used || make_channel())
		return 1; /* the application runs on; it just has no timeline */
	set_state(GD_STATE_DORMANT, 0, "dormant: waiting for the collector");
	g.peer.arrived = peer_arrived;
	g.peer.left = peer_left;
	peer_watch(&g.peer);
	pthread_atfork(NULL, NULL, in_child);
	atexit(at_exit);
	pthread_attr_t a;
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&a, 256 << 10);
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old); /* the thread takes none of the app's signals */
	pthread_t t;
	int rc = pthread_create(&t, &a, control_loop, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&a);
	if (rc)
		set_state(GD_STATE_ERROR, 0, "no control thread: %s", strerror(rc));
	else
		pthread_setname_np(t, "gd-cupti");
	return 1;
}
