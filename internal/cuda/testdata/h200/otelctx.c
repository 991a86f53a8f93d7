/* Minimal OTEP 4947 thread-context publisher for Python workloads (VALIDATION.md, H200
 * application-context linking). Loaded with ctypes, so its TLS is dynamic (DTV) TLS:
 * the recipe ghostdriver resolves for it is the "dtv" one, as for an SDK in a shared
 * library. otelctx_set(trace16, span8) publishes the calling thread's current span;
 * otelctx_clear() unpublishes it. Build: gcc -O2 -fPIC -shared -o libotelctx.so otelctx.c */
#include <stdint.h>
#include <string.h>

struct otel_thread_ctx {
	uint8_t trace_id[16];
	uint8_t span_id[8];
	uint8_t valid;
	uint8_t flags;
	uint16_t attrs_size;
} __attribute__((packed));

__attribute__((visibility("default"), used)) __thread struct otel_thread_ctx *otel_thread_ctx_v1;
static __thread struct otel_thread_ctx record;

void otelctx_set(const uint8_t *trace_id, const uint8_t *span_id)
{
	record.valid = 0; /* a writer marks the record invalid while it changes it */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	memcpy(record.trace_id, trace_id, 16);
	memcpy(record.span_id, span_id, 8);
	record.flags = 1; /* sampled */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	record.valid = 1;
	otel_thread_ctx_v1 = &record;
}

void otelctx_clear(void)
{
	otel_thread_ctx_v1 = 0;
}
