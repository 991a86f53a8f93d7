// Device-side fact finder (issue 25): compiled on the device against NVIDIA's own CUPTI
// headers (never copied into this repository) to print the record layouts, enum values
// and callback ids that cupti/cupti_abi.h declares on its own, and what CUPTI's API
// records carry for the thread and the clock. Output: key=value lines.
#include <cuda_runtime.h>
#include <cupti.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#define OFF(T, f) printf("off.%s.%s=%zu\n", #T, #f, offsetof(T, f))
#define SZ(T) printf("size.%s=%zu\n", #T, sizeof(T))
#define V(x) printf("val.%s=%d\n", #x, (int)(x))

__global__ void k_empty(int *p) { if (p) *p = 1; }

static uint8_t bufmem[8 << 20];
static int handed;
static void CUPTIAPI req(uint8_t **b, size_t *sz, size_t *max) {
  *b = bufmem + (handed++ % 2) * (4 << 20); *sz = 4 << 20; *max = 0;
}
static void CUPTIAPI done(CUcontext c, uint32_t s, uint8_t *b, size_t sz, size_t valid) {
  CUpti_Activity *r = NULL;
  while (cuptiActivityGetNextRecord(b, valid, &r) == CUPTI_SUCCESS) {
    if (r->kind == CUPTI_ACTIVITY_KIND_RUNTIME || r->kind == CUPTI_ACTIVITY_KIND_DRIVER) {
      CUpti_ActivityAPI *a = (CUpti_ActivityAPI *)r;
      printf("api kind=%d cbid=%u pid=%u tid=%u corr=%u start=%llu end=%llu\n", r->kind, a->cbid,
             a->processId, a->threadId, a->correlationId, (unsigned long long)a->start,
             (unsigned long long)a->end);
    } else if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
      CUpti_ActivityKernel10 *k = (CUpti_ActivityKernel10 *)r;
      printf("kernel corr=%u start=%llu end=%llu dev=%u ctx=%u stream=%u grid=%u block=%u name=%s graph=%u\n",
             k->correlationId, (unsigned long long)k->start, (unsigned long long)k->end, k->deviceId,
             k->contextId, k->streamId, k->gridX, k->blockX, k->name, k->graphId);
    } else {
      printf("other kind=%d\n", r->kind);
    }
  }
  size_t dropped = 0;
  cuptiActivityGetNumDroppedRecords(c, s, &dropped);
  printf("dropped=%zu\n", dropped);
}

int main() {
  SZ(CUpti_ActivityKernel10);
  OFF(CUpti_ActivityKernel10, kind); OFF(CUpti_ActivityKernel10, registersPerThread);
  OFF(CUpti_ActivityKernel10, start); OFF(CUpti_ActivityKernel10, end);
  OFF(CUpti_ActivityKernel10, completed); OFF(CUpti_ActivityKernel10, deviceId);
  OFF(CUpti_ActivityKernel10, contextId); OFF(CUpti_ActivityKernel10, streamId);
  OFF(CUpti_ActivityKernel10, gridX); OFF(CUpti_ActivityKernel10, gridY); OFF(CUpti_ActivityKernel10, gridZ);
  OFF(CUpti_ActivityKernel10, blockX); OFF(CUpti_ActivityKernel10, blockY); OFF(CUpti_ActivityKernel10, blockZ);
  OFF(CUpti_ActivityKernel10, staticSharedMemory); OFF(CUpti_ActivityKernel10, dynamicSharedMemory);
  OFF(CUpti_ActivityKernel10, correlationId); OFF(CUpti_ActivityKernel10, gridId);
  OFF(CUpti_ActivityKernel10, name); OFF(CUpti_ActivityKernel10, queued); OFF(CUpti_ActivityKernel10, submitted);
  OFF(CUpti_ActivityKernel10, launchType); OFF(CUpti_ActivityKernel10, graphNodeId);
  OFF(CUpti_ActivityKernel10, graphId); OFF(CUpti_ActivityKernel10, channelID);
  SZ(CUpti_ActivityAPI);
  OFF(CUpti_ActivityAPI, kind); OFF(CUpti_ActivityAPI, cbid); OFF(CUpti_ActivityAPI, start);
  OFF(CUpti_ActivityAPI, end); OFF(CUpti_ActivityAPI, processId); OFF(CUpti_ActivityAPI, threadId);
  OFF(CUpti_ActivityAPI, correlationId); OFF(CUpti_ActivityAPI, returnValue);
  V(CUPTI_ACTIVITY_KIND_RUNTIME); V(CUPTI_ACTIVITY_KIND_DRIVER); V(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  V(CUPTI_ACTIVITY_KIND_MEMCPY); V(CUPTI_ACTIVITY_KIND_MEMSET); V(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
  V(CUPTI_ERROR_NOT_INITIALIZED); V(CUPTI_ERROR_MAX_LIMIT_REACHED);
  V(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000); V(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000);
  V(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060); V(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060);
  V(CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000); V(CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000);
  V(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000);
  V(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020); V(CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020);
  V(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel); V(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz);
  V(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx); V(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz);
  V(CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch); V(CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz);
  uint32_t ver = 0; cuptiGetVersion(&ver); printf("cupti.version=%u\n", ver);
  printf("api.version=%d\n", CUPTI_API_VERSION);
  printf("main.gettid=%ld main.pthread_self=%lu main.getpid=%d\n", syscall(SYS_gettid),
         (unsigned long)pthread_self(), getpid());
  cuptiActivityRegisterCallbacks(req, done);
  cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME);
  cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER);
  int *d; cudaMalloc(&d, 4);
  struct timespec rt, mt; uint64_t ct;
  clock_gettime(CLOCK_REALTIME, &rt); cuptiGetTimestamp(&ct); clock_gettime(CLOCK_MONOTONIC, &mt);
  printf("clock realtime=%lld cupti=%llu monotonic=%lld\n", rt.tv_sec * 1000000000LL + rt.tv_nsec,
         (unsigned long long)ct, mt.tv_sec * 1000000000LL + mt.tv_nsec);
  for (int i = 0; i < 3; i++) k_empty<<<1, 1>>>(d);
  cudaDeviceSynchronize();
  cuptiActivityFlushAll(1);
  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_RUNTIME);
  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_DRIVER);
  printf("after-disable\n");
  for (int i = 0; i < 2; i++) k_empty<<<2, 32>>>(d);
  cudaDeviceSynchronize();
  cuptiActivityFlushAll(1);
  CUpti_SubscriberHandle s;
  printf("subscribe1=%d\n", cuptiSubscribe(&s, NULL, NULL));
  CUpti_SubscriberHandle s2;
  printf("subscribe2=%d\n", cuptiSubscribe(&s2, NULL, NULL));
  printf("unsubscribe=%d\n", cuptiUnsubscribe(s));
  printf("finalize=%d\n", cuptiFinalize());
  return 0;
}
