// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * A thread that publishes OTEP 4947 thread context and makes ioctls while the kernel
 * moves the memory its record lives in (threadctx_moving_test.go). The record is alone in
 * a 2 MiB-aligned anonymous region; the main thread collapses that region into a huge page
 * (MADV_COLLAPSE: what khugepaged does by itself where transparent huge pages are
 * "always") and splits it again (a page's protection changed and restored), CTX_CYCLES
 * times (default 1000), while the worker makes ioctl(TCGETS) calls on /dev/null.
 * A collapse unmaps the region while it copies it, and a BPF program may not take a page
 * fault: its read of the record fails meanwhile, though the record is there and valid.
 *
 * Protocol as threadctx.c: "ready <pid>", a line on stdin, then the worker's line
 * "thread <tid> <trace-id hex> <span-id hex> 1" on stdout. "<collapses> <ioctls>" (the
 * collapses that succeeded, the worker's ioctls) go to the file named by CTX_COLLAPSES_FILE.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif

#define HUGE (2ul << 20)

struct otel_thread_ctx {
	uint8_t trace_id[16];
	uint8_t span_id[8];
	uint8_t valid;
	uint8_t flags;
	uint16_t attrs_size;
} __attribute__((packed));

__attribute__((visibility("default"))) __thread struct otel_thread_ctx *otel_thread_ctx_v1;

static int fd;
static long cycles = 1000, nioctl;
static struct otel_thread_ctx *rec;
static pthread_barrier_t published, go;
static volatile int done;

static void hex(char *out, const uint8_t *b, int n)
{
	for (int i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
}

static void *worker(void *arg)
{
	(void)arg;
	otel_thread_ctx_v1 = rec;
	pthread_barrier_wait(&published);
	pthread_barrier_wait(&go);
	struct termios t;
	while (!done) {
		ioctl(fd, TCGETS, &t);
		nioctl++;
	}
	char th[33] = {0}, sp[17] = {0};
	hex(th, rec->trace_id, 16);
	hex(sp, rec->span_id, 8);
	printf("thread %ld %s %s 1 %d\n", (long)syscall(SYS_gettid), th, sp, rec->flags);
	fflush(stdout);
	return 0;
}

int main(void)
{
	if (getenv("CTX_CYCLES"))
		cycles = atol(getenv("CTX_CYCLES"));
	fd = open("/dev/null", O_RDONLY);
	/* A 2 MiB-aligned region of its own, populated. */
	char *p = mmap(0, 2 * HUGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	char *region = (char *)(((uintptr_t)p + HUGE - 1) & ~(HUGE - 1));
	memset(region, 1, HUGE);
	rec = (struct otel_thread_ctx *)(region + HUGE / 2);
	memset(rec, 0, sizeof(*rec));
	for (int k = 0; k < 16; k++)
		rec->trace_id[k] = (uint8_t)(0x30 + k);
	for (int k = 0; k < 8; k++)
		rec->span_id[k] = (uint8_t)(0xb0 + k);
	rec->flags = 1;
	rec->valid = 1;
	pthread_barrier_init(&published, 0, 2);
	pthread_barrier_init(&go, 0, 2);
	pthread_t th;
	if (pthread_create(&th, 0, worker, 0)) {
		perror("pthread_create");
		return 1;
	}
	pthread_barrier_wait(&published);
	struct termios t;
	ioctl(fd, TCGETS, &t); /* the first sight of the process */
	printf("ready %d\n", getpid());
	fflush(stdout);
	char line[64];
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	pthread_barrier_wait(&go);
	long collapses = 0;
	for (long i = 0; i < cycles; i++) {
		collapses += madvise(region, HUGE, MADV_COLLAPSE) == 0;
		mprotect(region, 4096, PROT_READ);
		mprotect(region, 4096, PROT_READ | PROT_WRITE);
	}
	done = 1;
	pthread_join(th, 0);
	const char *out = getenv("CTX_COLLAPSES_FILE");
	FILE *f = out ? fopen(out, "w") : 0;
	if (f) {
		fprintf(f, "%ld %ld\n", collapses, nioctl);
		fclose(f);
	}
	return 0;
}
