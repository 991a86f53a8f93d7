// AArch64 fixtures of the TLS recipe tests (tlsaarch64_test.go): a module that defines
// OTEP 4947's otel_thread_ctx_v1 after PAD bytes of other initialised TLS (ALIGN: the
// variable's alignment), and slot(), which returns the variable's address the way the
// compiler's TLS model for the module does. build.sh builds every fixture.
#include <stdint.h>

#ifndef PAD
#define PAD 40
#endif
#ifndef ALIGN
#define ALIGN 8
#endif

__thread uint8_t otel_pad[PAD] = {1};
__thread void *otel_thread_ctx_v1 __attribute__((aligned(ALIGN)));

void *slot(void) { return &otel_thread_ctx_v1; }
