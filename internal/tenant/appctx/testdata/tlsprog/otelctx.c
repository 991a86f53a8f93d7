// Test writer of an OTEP 4947 thread context: defines the TLS slot otel_thread_ctx_v1
// (a pointer to the record) and hands out its address. Built by tls_test.go as part of an
// executable or as a shared library, with the TLS model and dialect under test.
#include <stdint.h>
#include <stdlib.h>

#ifdef BIG_TLS
// Too big for glibc's surplus static TLS: a dlopen'ed copy must use the DTV.
__thread char otel_test_big_block[1 << 16];
#endif
// Initialised (.tdata, which precedes .tbss) and over-aligned, so the slot is not at
// offset 0 of the module's TLS block and the block's alignment matters.
__thread char otel_test_pad[40] __attribute__((aligned(64))) = {1};
__attribute__((visibility("default"))) __thread void *otel_thread_ctx_v1;

void **otel_ctx_slot(void) {
	otel_test_pad[0] = 1;
#ifdef BIG_TLS
	otel_test_big_block[0] = 1;
#endif
	return &otel_thread_ctx_v1;
}
