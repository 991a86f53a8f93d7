/*
 * A stand-in for libcuda.so.1 with the real signatures of the functions the CUDA
 * source hooks. Like the real driver, cuGetProcAddress_v2 hands out entry points that
 * are NOT the exported symbols (hidden functions), so a uprobe on the exported
 * cuLaunchKernel misses launches made through the table (notes/ebpf-machines.md, H200).
 * Every function counts its calls (stub_counts) so the test has ground truth.
 *
 * For the CUPTI timeline (cuptilib/stub/libcupti_stub.c): cuInit loads the injection
 * library named by CUDA_INJECTION64_PATH and calls its InitializeInjection once, as the
 * real driver does. Every launch runs a simulated kernel (STUB_KERNEL_NS, default 20000 ns;
 * a graph launch STUB_GRAPH_KERNELS of them, default 3) on its stream's timeline: kernel
 * start = max(the launch's exit, the stream's previous kernel end) + 1 µs, in
 * CLOCK_REALTIME. The syncs wait (after their fixed spins) until the kernels they wait for
 * have ended. Each top-level launch is reported once to stub_cupti_launch_hook (set by the
 * stub libcupti when it is loaded): a launch the stub runtime makes reports the runtime's
 * cbid (stub_runtime_cbid, set around its driver call), others their driver cbid.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef int CUresult;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUfunc_st *CUfunction;
typedef unsigned long long CUdeviceptr;
typedef struct {
	unsigned int gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes;
	CUstream hStream;
	void *attrs;
	unsigned int numAttrs;
} CUlaunchConfig;

#define API __attribute__((visibility("default"), noinline))
#define HIDDEN __attribute__((visibility("hidden"), noinline))

/* Ground truth: [0] table launches, [1] exported launches, [2] stream syncs, [3] context
 * syncs, [4] event syncs, [5] table HtoD copies, [6] exported HtoD copies, [7] graph
 * launches, [8] cuInit calls, [9] InitializeInjection calls made. */
__attribute__((visibility("default"))) volatile long stub_counts[16];
__attribute__((visibility("default"))) volatile uint64_t stub_last_stream;

/* The stub libcupti's launch report (NULL until it is loaded). domain: 1 driver, 2 runtime
 * (CUPTI's callback domains); times CLOCK_REALTIME ns; graph_kernels 0 for a kernel launch. */
__attribute__((visibility("default"))) void (*stub_cupti_launch_hook)(int cbid, int domain, unsigned gx, unsigned gy,
								     unsigned gz, unsigned bx, unsigned by, unsigned bz,
								     uint64_t stream, uint64_t enter_realtime_ns,
								     uint64_t exit_realtime_ns, uint64_t kernel_ns,
								     int graph_kernels);
/* Set by the stub runtime around its driver call: the launch inside reports as the runtime's
 * call (its cbid and entry time), once. */
__attribute__((visibility("default"))) __thread int stub_runtime_cbid;
__attribute__((visibility("default"))) __thread uint64_t stub_runtime_enter_ns;

#define DOMAIN_DRIVER 1
#define DOMAIN_RUNTIME 2
#define QUEUE_NS 1000ull /* the same as the stub libcupti's */

static void spin_ns(long ns)
{
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < ns);
}

static uint64_t realtime_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static uint64_t env_u64(const char *name, uint64_t def)
{
	const char *v = getenv(name);
	if (!v || !*v)
		return def;
	char *end;
	unsigned long long n = strtoull(v, &end, 0);
	return *end ? def : (uint64_t)n;
}

/* The simulated GPU: per stream, when its last kernel ends (CLOCK_REALTIME ns). */
static pthread_mutex_t sched_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
	uint64_t handle, end;
	int used;
} streams[1024];
static uint64_t all_end;
static struct {
	uint64_t handle, end;
} events[256];

static uint64_t *stream_end(uint64_t handle) /* sched_mu held */
{
	size_t n = sizeof streams / sizeof streams[0];
	size_t i = (size_t)((handle * 0x9e3779b97f4a7c15ull) >> 54) % n;
	for (size_t k = 0; k < n; k++, i = (i + 1) % n) {
		if (streams[i].used && streams[i].handle == handle)
			return &streams[i].end;
		if (!streams[i].used) {
			streams[i].used = 1;
			streams[i].handle = handle;
			return &streams[i].end;
		}
	}
	return &all_end; /* full: such streams wait for everything */
}

static uint64_t kernel_ns(void)
{
	static uint64_t ns = UINT64_MAX;
	if (ns == UINT64_MAX)
		ns = env_u64("STUB_KERNEL_NS", 20000);
	return ns;
}

/* launched: the kernels of one launch go on their stream's timeline and, once per
 * top-level launch, to the stub libcupti. Called after the launch's spin. */
static void launched(int cbid, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
		     CUstream s, uint64_t enter, int graph_kernels)
{
	int domain = DOMAIN_DRIVER;
	if (stub_runtime_cbid) {
		cbid = stub_runtime_cbid;
		domain = DOMAIN_RUNTIME;
		enter = stub_runtime_enter_ns;
		stub_runtime_cbid = 0;
	}
	uint64_t exit = realtime_ns(), kns = kernel_ns();
	pthread_mutex_lock(&sched_mu);
	uint64_t *end = stream_end((uint64_t)s);
	for (int i = 0; i < (graph_kernels > 0 ? graph_kernels : 1); i++)
		*end = (exit > *end ? exit : *end) + QUEUE_NS + kns;
	if (*end > all_end)
		all_end = *end;
	/* Under the lock: the hook sees the launches in the order of the timeline. */
	void (*hook)(int, int, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, uint64_t, uint64_t,
		     uint64_t, uint64_t, int) = __atomic_load_n(&stub_cupti_launch_hook, __ATOMIC_ACQUIRE);
	if (hook)
		hook(cbid, domain, gx, gy, gz, bx, by, bz, (uint64_t)s, enter, exit, kns, graph_kernels);
	pthread_mutex_unlock(&sched_mu);
}

/* The sleeps' own log (STUB_WAKE_LOG=PATH): "tid monotonic_ns" after each nanosleep of a
 * sync returned, the thread running again: the ground truth of the blocking-sync split. */
static void log_wake(void)
{
	static int fd = -2;
	if (fd == -2) {
		const char *p = getenv("STUB_WAKE_LOG");
		fd = p && *p ? open(p, O_WRONLY | O_CREAT | O_APPEND, 0644) : -1;
	}
	if (fd < 0)
		return;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	char line[64];
	int n = snprintf(line, sizeof line, "%ld %lld\n", (long)syscall(SYS_gettid),
			 (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
	if (write(fd, line, (size_t)n) != n)
		return;
}

/* wait_until: returns once CLOCK_REALTIME has passed t, sleeping (a blocking sync's wait)
 * while more than 200 µs are left. */
static void wait_until(uint64_t t)
{
	for (uint64_t now = realtime_ns(); now < t; now = realtime_ns()) {
		if (t - now > 200000) {
			struct timespec d = { 0, (long)(t - now - 100000) };
			nanosleep(&d, NULL);
			log_wake();
		}
	}
}

static uint64_t end_of(uint64_t stream)
{
	pthread_mutex_lock(&sched_mu);
	uint64_t t = *stream_end(stream);
	pthread_mutex_unlock(&sched_mu);
	return t;
}

HIDDEN CUresult launch_via_table(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
				 unsigned bz, unsigned shmem, CUstream s, void **params, void **extra)
{
	uint64_t enter = realtime_ns();
	__atomic_add_fetch(&stub_counts[0], 1, __ATOMIC_RELAXED);
	stub_last_stream = (uint64_t)s;
	spin_ns(2000);
	launched(307, gx, gy, gz, bx, by, bz, s, enter, 0); /* cuLaunchKernel */
	return 0;
}

API CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
			    unsigned shmem, CUstream s, void **params, void **extra)
{
	uint64_t enter = realtime_ns();
	__atomic_add_fetch(&stub_counts[1], 1, __ATOMIC_RELAXED);
	stub_last_stream = (uint64_t)s;
	spin_ns(2000);
	launched(307, gx, gy, gz, bx, by, bz, s, enter, 0); /* cuLaunchKernel */
	return 0;
}

API CUresult cuLaunchKernelEx(const CUlaunchConfig *c, CUfunction f, void **params, void **extra)
{
	uint64_t enter = realtime_ns();
	__atomic_add_fetch(&stub_counts[1], 1, __ATOMIC_RELAXED);
	stub_last_stream = (uint64_t)c->hStream;
	launched(652, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX, c->blockDimY, c->blockDimZ, c->hStream, enter,
		 0); /* cuLaunchKernelEx */
	return 0;
}

/* A graph launch: STUB_GRAPH_KERNELS kernels in a row on the stream, one correlation id. */
typedef struct CUgraphExec_st *CUgraphExec;
API CUresult cuGraphLaunch(CUgraphExec g, CUstream s)
{
	uint64_t enter = realtime_ns();
	__atomic_add_fetch(&stub_counts[7], 1, __ATOMIC_RELAXED);
	stub_last_stream = (uint64_t)s;
	spin_ns(2000);
	uint64_t n = env_u64("STUB_GRAPH_KERNELS", 3);
	launched(514, 1, 1, 1, 32, 1, 1, s, enter, n < 1 ? 1 : n > 1024 ? 1024 : (int)n); /* cuGraphLaunch */
	return 0;
}

/* The "GPU" of a stream finishes 1 ms after the sync is called, or when its last kernel
 * ends if that is later. */
API CUresult cuStreamSynchronize(CUstream s)
{
	__atomic_add_fetch(&stub_counts[2], 1, __ATOMIC_RELAXED);
	spin_ns(1000000);
	wait_until(end_of((uint64_t)s));
	return 0;
}

API CUresult cuCtxSynchronize(void)
{
	__atomic_add_fetch(&stub_counts[3], 1, __ATOMIC_RELAXED);
	spin_ns(3000000);
	pthread_mutex_lock(&sched_mu);
	uint64_t t = all_end;
	pthread_mutex_unlock(&sched_mu);
	wait_until(t);
	return 0;
}

/* An event completes when the work its stream had at the record has ended. */
API CUresult cuEventRecord(CUevent e, CUstream s)
{
	pthread_mutex_lock(&sched_mu);
	uint64_t t = *stream_end((uint64_t)s);
	size_t i = (size_t)(((uint64_t)e * 0x9e3779b97f4a7c15ull) >> 56) % (sizeof events / sizeof events[0]);
	events[i].handle = (uint64_t)e; /* a collision overwrites: that event then waits for nothing */
	events[i].end = t;
	pthread_mutex_unlock(&sched_mu);
	return 0;
}
API CUresult cuEventSynchronize(CUevent e)
{
	__atomic_add_fetch(&stub_counts[4], 1, __ATOMIC_RELAXED);
	spin_ns(500000);
	pthread_mutex_lock(&sched_mu);
	size_t i = (size_t)(((uint64_t)e * 0x9e3779b97f4a7c15ull) >> 56) % (sizeof events / sizeof events[0]);
	uint64_t t = events[i].handle == (uint64_t)e ? events[i].end : 0;
	pthread_mutex_unlock(&sched_mu);
	wait_until(t);
	return 0;
}

/* The device queries the injection library makes when the timeline comes on: one device
 * (STUB_DEVICES) of STUB_SMS multiprocessors (default 132, an H100 SXM), compute
 * capability 9.0. */
static int env_int(const char *name, int def)
{
	const char *v = getenv(name);
	return v && *v ? atoi(v) : def;
}

/* initialised: cuInit has returned. The real driver answers device queries only then
 * (CUDA_ERROR_NOT_INITIALIZED before), and its cuInit takes long enough (hundreds of ms on
 * an H100) for the injection library's control thread to run inside it: STUB_CUINIT_HOLD_MS
 * keeps the stub's cuInit that long after InitializeInjection. */
static int initialised;

API CUresult cuDeviceGetCount(int *count)
{
	if (!__atomic_load_n(&initialised, __ATOMIC_ACQUIRE))
		return 3; /* CUDA_ERROR_NOT_INITIALIZED */
	*count = env_int("STUB_DEVICES", 1);
	return 0;
}

API CUresult cuDeviceGetAttribute(int *value, int attribute, int device)
{
	if (!__atomic_load_n(&initialised, __ATOMIC_ACQUIRE))
		return 3; /* CUDA_ERROR_NOT_INITIALIZED */
	if (device < 0 || device >= env_int("STUB_DEVICES", 1))
		return 101; /* CUDA_ERROR_INVALID_DEVICE */
	switch (attribute) {
	case 16: *value = env_int("STUB_SMS", 132); return 0; /* MULTIPROCESSOR_COUNT */
	case 75: *value = 9; return 0;                        /* COMPUTE_CAPABILITY_MAJOR */
	case 76: *value = 0; return 0;                        /* COMPUTE_CAPABILITY_MINOR */
	}
	return 1; /* CUDA_ERROR_INVALID_VALUE */
}

static void init_done(void)
{
	int hold = env_int("STUB_CUINIT_HOLD_MS", 0);
	if (hold > 0) {
		struct timespec d = { .tv_sec = hold / 1000, .tv_nsec = (hold % 1000) * 1000000L };
		nanosleep(&d, 0);
	}
	__atomic_store_n(&initialised, 1, __ATOMIC_RELEASE);
}

/* cuInit: the injection library (CUDA_INJECTION64_PATH) is loaded and initialised once, as
 * the real driver does; a library that does not load is reported and the driver goes on. */
API CUresult cuInit(unsigned flags)
{
	static int done;
	__atomic_add_fetch(&stub_counts[8], 1, __ATOMIC_RELAXED);
	if (__atomic_exchange_n(&done, 1, __ATOMIC_ACQ_REL)) {
		/* A second caller waits for the first, as the driver's cuInit does. */
		while (!__atomic_load_n(&initialised, __ATOMIC_ACQUIRE))
			sched_yield();
		return 0;
	}
	const char *path = getenv("CUDA_INJECTION64_PATH");
	if (!path || !*path) {
		init_done();
		return 0;
	}
	void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, "stub libcuda: injection %s: %s\n", path, dlerror());
		init_done();
		return 0;
	}
	int (*init)(void) = (int (*)(void))dlsym(lib, "InitializeInjection");
	if (!init) {
		fprintf(stderr, "stub libcuda: injection %s: no InitializeInjection: %s\n", path, dlerror());
		init_done();
		return 0;
	}
	__atomic_add_fetch(&stub_counts[9], 1, __ATOMIC_RELAXED);
	if (!init())
		fprintf(stderr, "stub libcuda: injection %s: InitializeInjection returned 0\n", path);
	init_done();
	return 0;
}

HIDDEN CUresult memcpy_htod_via_table(CUdeviceptr dst, const void *src, size_t n)
{
	__atomic_add_fetch(&stub_counts[5], 1, __ATOMIC_RELAXED);
	return 0;
}
API CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n)
{
	__atomic_add_fetch(&stub_counts[6], 1, __ATOMIC_RELAXED);
	return 0;
}
API CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n)
{
	*p = 0x7000000;
	return 0;
}
API CUresult cuMemFree_v2(CUdeviceptr p) { return 0; }

struct entry {
	const char *name;
	void *fn;
};

API CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, uint64_t flags, int *status)
{
	/* The table: launches and HtoD copies go to hidden code, syncs to the exports. */
	const struct entry table[] = {
		{"cuLaunchKernel", (void *)launch_via_table},
		{"cuMemcpyHtoD", (void *)memcpy_htod_via_table},
		{"cuStreamSynchronize", (void *)cuStreamSynchronize},
		{"cuCtxSynchronize", (void *)cuCtxSynchronize},
		{"cuEventRecord", (void *)cuEventRecord},
		{"cuEventSynchronize", (void *)cuEventSynchronize},
		{"cuMemAlloc", (void *)cuMemAlloc_v2},
		{"cuMemFree", (void *)cuMemFree_v2},
	};
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		if (strcmp(symbol, table[i].name) == 0) {
			*pfn = table[i].fn;
			if (status)
				*status = 0;
			return 0;
		}
	}
	*pfn = NULL;
	if (status)
		*status = 1;
	return 500; /* CUDA_ERROR_NOT_FOUND */
}
