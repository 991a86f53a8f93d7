/*
 * A stand-in for libcuda.so.1 with the real signatures of the functions the CUDA
 * source hooks. Like the real driver, cuGetProcAddress_v2 hands out entry points that
 * are NOT the exported symbols (hidden functions), so a uprobe on the exported
 * cuLaunchKernel misses launches made through the table (notes/ebpf-machines.md, H200).
 * Every function counts its calls (stub_counts) so the test has ground truth.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

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

/* Ground truth: [0] table launches, [1] exported launches, [2] stream syncs, ... */
__attribute__((visibility("default"))) volatile long stub_counts[16];
__attribute__((visibility("default"))) volatile uint64_t stub_last_stream;

static void spin_ns(long ns)
{
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < ns);
}

HIDDEN CUresult launch_via_table(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
				 unsigned bz, unsigned shmem, CUstream s, void **params, void **extra)
{
	__atomic_add_fetch(&stub_counts[0], 1, __ATOMIC_RELAXED);
	stub_last_stream = (uint64_t)s;
	spin_ns(2000);
	return 0;
}

API CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
			    unsigned shmem, CUstream s, void **params, void **extra)
{
	__atomic_add_fetch(&stub_counts[1], 1, __ATOMIC_RELAXED);
	stub_last_stream = (uint64_t)s;
	spin_ns(2000);
	return 0;
}

API CUresult cuLaunchKernelEx(const CUlaunchConfig *c, CUfunction f, void **params, void **extra)
{
	__atomic_add_fetch(&stub_counts[1], 1, __ATOMIC_RELAXED);
	stub_last_stream = (uint64_t)c->hStream;
	return 0;
}

/* The "GPU" of a stream finishes 1 ms after the sync is called. */
API CUresult cuStreamSynchronize(CUstream s)
{
	__atomic_add_fetch(&stub_counts[2], 1, __ATOMIC_RELAXED);
	spin_ns(1000000);
	return 0;
}

API CUresult cuCtxSynchronize(void)
{
	__atomic_add_fetch(&stub_counts[3], 1, __ATOMIC_RELAXED);
	spin_ns(3000000);
	return 0;
}

API CUresult cuEventRecord(CUevent e, CUstream s) { return 0; }
API CUresult cuEventSynchronize(CUevent e)
{
	__atomic_add_fetch(&stub_counts[4], 1, __ATOMIC_RELAXED);
	spin_ns(500000);
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
