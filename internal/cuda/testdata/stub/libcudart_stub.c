/*
 * A stand-in for libcudart.so: like the real runtime it reaches the driver only through
 * pointers from cuGetProcAddress_v2 (the entry-point table), never the exported symbols.
 * Its first call runs cuInit (which loads CUDA_INJECTION64_PATH, as the real runtime's
 * first call does). Around its driver launch it sets stub_runtime_cbid, so the stub libcupti
 * records the launch once, as this runtime call (cudaLaunchKernel_v7000, cbid 211).
 */
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

typedef int cudaError_t;
typedef struct CUstream_st *cudaStream_t;
typedef struct CUevent_st *cudaEvent_t;
typedef struct {
	unsigned int x, y, z;
} dim3;
enum cudaMemcpyKind { cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2 };

typedef int (*launch_fn)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *, void **,
			 void **);
typedef int (*stream_fn)(void *);
typedef int (*void_fn)(void);
typedef int (*record_fn)(void *, void *);
typedef int (*htod_fn)(unsigned long long, const void *, size_t);
typedef int (*alloc_fn)(unsigned long long *, size_t);
typedef int (*free_fn)(unsigned long long);

extern int cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, uint64_t flags, int *status);
extern int cuInit(unsigned flags);
extern int cuGraphLaunch(void *graph_exec, void *stream);
extern __thread int stub_runtime_cbid;
extern __thread uint64_t stub_runtime_enter_ns;

static struct {
	launch_fn launch;
	stream_fn stream_sync, event_sync;
	void_fn ctx_sync;
	record_fn record;
	htod_fn htod;
	alloc_fn alloc;
	free_fn free;
} drv;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void get(const char *name, void *slot)
{
	int st;
	cuGetProcAddress_v2(name, (void **)slot, 12080, 0, &st);
}

static void init(void)
{
	cuInit(0);
	get("cuLaunchKernel", &drv.launch);
	get("cuStreamSynchronize", &drv.stream_sync);
	get("cuEventSynchronize", &drv.event_sync);
	get("cuCtxSynchronize", &drv.ctx_sync);
	get("cuEventRecord", &drv.record);
	get("cuMemcpyHtoD", &drv.htod);
	get("cuMemAlloc", &drv.alloc);
	get("cuMemFree", &drv.free);
	{ void *miss; get("cuNotInTheTable", &miss); } /* a miss, as the real runtime has many */
}

#define API __attribute__((visibility("default"), noinline))

static uint64_t realtime_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

API cudaError_t cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args, size_t shmem, cudaStream_t stream)
{
	pthread_once(&once, init);
	stub_runtime_enter_ns = realtime_ns();
	stub_runtime_cbid = 211; /* cudaLaunchKernel_v7000 */
	int r = drv.launch((void *)func, grid.x, grid.y, grid.z, block.x, block.y, block.z, (unsigned)shmem, stream, args, 0);
	stub_runtime_cbid = 0;
	return r;
}
API cudaError_t cudaGraphLaunch(void *graph_exec, cudaStream_t stream)
{
	pthread_once(&once, init);
	stub_runtime_enter_ns = realtime_ns();
	stub_runtime_cbid = 311; /* cudaGraphLaunch_v10000 */
	int r = cuGraphLaunch(graph_exec, stream);
	stub_runtime_cbid = 0;
	return r;
}
API cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
	pthread_once(&once, init);
	return drv.stream_sync(s);
}
API cudaError_t cudaDeviceSynchronize(void)
{
	pthread_once(&once, init);
	return drv.ctx_sync();
}
API cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s)
{
	pthread_once(&once, init);
	return drv.record(e, s);
}
API cudaError_t cudaEventSynchronize(cudaEvent_t e)
{
	pthread_once(&once, init);
	return drv.event_sync(e);
}
API cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind)
{
	pthread_once(&once, init);
	return drv.htod((unsigned long long)dst, src, n);
}
API cudaError_t cudaMalloc(void **p, size_t n)
{
	pthread_once(&once, init);
	return drv.alloc((unsigned long long *)p, n);
}
API cudaError_t cudaFree(void *p)
{
	pthread_once(&once, init);
	return p ? drv.free((unsigned long long)p) : 0;
}
