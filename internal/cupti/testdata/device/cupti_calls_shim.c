// Device-side fact finder (issue 25): an LD_PRELOAD shim that logs which CUPTI calls a
// profiler (torch.profiler / Kineto) makes and what they return, to stderr, so the
// injection library's back-off rule rests on what the peer really does.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/syscall.h>
#define LOG(...) do { fprintf(stderr, "[shim %ld] ", syscall(SYS_gettid)); fprintf(stderr, __VA_ARGS__); } while (0)
#define FWD(name, ...) static int (*real)() = 0; if (!real) real = dlsym(RTLD_NEXT, name); int r = real(__VA_ARGS__)
int cuptiSubscribe(void *s, void *cb, void *ud) { FWD("cuptiSubscribe", s, cb, ud); LOG("cuptiSubscribe -> %d\n", r); return r; }
int cuptiUnsubscribe(void *s) { FWD("cuptiUnsubscribe", s); LOG("cuptiUnsubscribe -> %d\n", r); return r; }
int cuptiFinalize(void) { FWD("cuptiFinalize"); LOG("cuptiFinalize -> %d\n", r); return r; }
int cuptiActivityRegisterCallbacks(void *a, void *b) { FWD("cuptiActivityRegisterCallbacks", a, b); LOG("cuptiActivityRegisterCallbacks -> %d\n", r); return r; }
int cuptiActivityEnable(int k) { FWD("cuptiActivityEnable", k); LOG("cuptiActivityEnable(%d) -> %d\n", k, r); return r; }
int cuptiActivityDisable(int k) { FWD("cuptiActivityDisable", k); LOG("cuptiActivityDisable(%d) -> %d\n", k, r); return r; }
int cuptiActivityFlushAll(uint32_t f) { FWD("cuptiActivityFlushAll", f); LOG("cuptiActivityFlushAll(%u) -> %d\n", f, r); return r; }
int cuptiEnableCallback(uint32_t e, void *s, int d, uint32_t c) { FWD("cuptiEnableCallback", e, s, d, c); LOG("cuptiEnableCallback(%u,%d,%u) -> %d\n", e, d, c, r); return r; }
int cuptiEnableDomain(uint32_t e, void *s, int d) { FWD("cuptiEnableDomain", e, s, d); LOG("cuptiEnableDomain(%u,%d) -> %d\n", e, d, r); return r; }
