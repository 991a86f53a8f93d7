// Runs two threads, each publishing its own OTEP 4947 record through otel_thread_ctx_v1,
// prints per thread "ctx <tid> <fsbase> <slot address> <trace byte>" and "ready", then
// waits for stdin to close. The test resolves the slot from outside and compares.
// With OTEL_CTX_PAYLOAD=<file> it first publishes that protobuf payload as its OTEP 4719
// process context, the way the reference C implementation does, and prints "otel_ctx <addr>".
#define _GNU_SOURCE
#include <asm/prctl.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct record {
	uint8_t trace_id[16];
	uint8_t span_id[8];
	uint8_t valid;
	uint8_t flags;
	uint16_t attrs_size;
	uint8_t attrs[16];
};

typedef void **(*slot_fn)(void);
static slot_fn get_slot;
static pthread_mutex_t out = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t published;

#ifndef USE_DLOPEN
void **otel_ctx_slot(void);
#endif

static void publish(uint8_t tag) {
	static struct record recs[2];
	struct record *r = &recs[tag - 1];
	memset(r, 0, sizeof *r);
	for (int i = 0; i < 16; i++) r->trace_id[i] = tag;
	for (int i = 0; i < 8; i++) r->span_id[i] = tag + 0x10;
	r->flags = 1;
	r->attrs_size = 5;
	memcpy(r->attrs, "\x00\x03GET", 5);
	r->valid = 1;
	void **slot = get_slot();
	*slot = r;
	unsigned long fs = 0;
	syscall(SYS_arch_prctl, ARCH_GET_FS, &fs);
	pthread_mutex_lock(&out);
	printf("ctx %ld %#lx %#lx %u\n", (long)syscall(SYS_gettid), fs, (unsigned long)slot, tag);
	fflush(stdout);
	pthread_mutex_unlock(&out);
}

#ifndef PR_SET_VMA
#define PR_SET_VMA 0x53564d41
#define PR_SET_VMA_ANON_NAME 0
#endif

struct otel_ctx_header {
	char signature[8];
	uint32_t version;
	uint32_t payload_size;
	uint64_t monotonic_published_at_ns;
	uint64_t payload;
};

static int publish_process_ctx(const char *file) {
	static uint8_t payload[1 << 16];
	FILE *f = fopen(file, "rb");
	if (!f) return -1;
	size_t n = fread(payload, 1, sizeof payload, f);
	fclose(f);
	long ps = sysconf(_SC_PAGESIZE);
	uint8_t *m = mmap(NULL, 2 * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) return -1;
	madvise(m, 2 * ps, MADV_DONTFORK);
	struct otel_ctx_header *h = (struct otel_ctx_header *)m;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	h->version = 2;
	h->payload_size = (uint32_t)n;
	h->monotonic_published_at_ns = (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
	h->payload = (uint64_t)(uintptr_t)payload; /* elsewhere in memory, as the OTEP allows */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	memcpy(h->signature, "OTEL_CTX", 8);
	mprotect(m, 2 * ps, PROT_READ);
	prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, (unsigned long)m, 2 * ps, (unsigned long)"OTEL_CTX");
	printf("otel_ctx %#lx\n", (unsigned long)m);
	return 0;
}

static void *worker(void *arg) {
	(void)arg;
	publish(2);
	pthread_barrier_wait(&published);
	pause(); // keep the thread (and its TLS) alive until the process exits
	return NULL;
}

int main(int argc, char **argv) {
#ifdef USE_DLOPEN
	if (argc < 2) return 2;
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) { fprintf(stderr, "dlopen: %s\n", dlerror()); return 1; }
	get_slot = (slot_fn)dlsym(h, "otel_ctx_slot");
	if (!get_slot) return 1;
#else
	(void)argc; (void)argv;
	get_slot = otel_ctx_slot;
#endif
	const char *ctx_file = getenv("OTEL_CTX_PAYLOAD");
	if (ctx_file && publish_process_ctx(ctx_file) != 0) return 3;
	pthread_barrier_init(&published, NULL, 2);
	publish(1);
	pthread_t t;
	pthread_create(&t, NULL, worker, NULL);
	pthread_barrier_wait(&published);
	printf("ready\n");
	fflush(stdout);
	char buf[1];
	while (read(0, buf, 1) > 0) {}
	return 0;
}
