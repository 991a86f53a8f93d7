// A process whose OTEP 4947 publisher is loaded late: it starts without any module that
// defines otel_thread_ctx_v1, prints "started", and waits for a line "load <library>" on
// stdin. Then it dlopen()s that library (otelctx.c built as a shared object), publishes a
// record through the slot in its main thread, prints "ctx <tid> <fsbase> <slot address>
// <trace byte>" and "ready", and waits for stdin to close. Used by internal/enrich's
// re-discovery test (a tracer imported after the GPU runtime initialised).
#define _GNU_SOURCE
#include <asm/prctl.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

struct record {
	uint8_t trace_id[16];
	uint8_t span_id[8];
	uint8_t valid;
	uint8_t flags;
	uint16_t attrs_size;
};

int main(void) {
	printf("started\n");
	fflush(stdout);
	char line[4096];
	if (!fgets(line, sizeof line, stdin) || strncmp(line, "load ", 5) != 0) return 2;
	line[strcspn(line, "\n")] = 0;
	void *h = dlopen(line + 5, RTLD_NOW | RTLD_LOCAL);
	if (!h) { fprintf(stderr, "dlopen: %s\n", dlerror()); return 1; }
	void **(*slot_fn)(void) = (void **(*)(void))dlsym(h, "otel_ctx_slot");
	if (!slot_fn) return 1;
	static struct record r;
	const uint8_t tag = 0x5a;
	memset(r.trace_id, tag, sizeof r.trace_id);
	memset(r.span_id, tag + 1, sizeof r.span_id);
	r.flags = 1;
	r.valid = 1;
	void **slot = slot_fn();
	*slot = &r;
	unsigned long fs = 0;
	syscall(SYS_arch_prctl, ARCH_GET_FS, &fs);
	printf("ctx %ld %#lx %#lx %u\nready\n", (long)syscall(SYS_gettid), fs, (unsigned long)slot, tag);
	fflush(stdout);
	while (fgets(line, sizeof line, stdin)) {}
	return 0;
}
