// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * An application that publishes OTEP 4947 thread context the way an SDK does: the TLS
 * variable otel_thread_ctx_v1 (exported, in .dynsym) points at a per-thread record
 * {trace-id[16], span-id[8], valid, flags, attrs-size}. Built by the probe's tests in
 * several TLS shapes (see threadctx_test.go):
 *
 *   -DCTX_IN_EXE        the variable lives in the executable (static TLS, tp-relative)
 *   -DCTX_LIB           this file is the library that defines the variable; the
 *                       executable (built without CTX_*) calls ctx_publish() in it,
 *                       linked at start-up or dlopen()ed (CTX_DLOPEN=path at run time)
 *
 * With CTX_NONE set in the environment nothing is published (a process without thread
 * context: TRACEPARENT or no context at all).
 *
 * Protocol (stdin/stdout): after every thread has published its record the program
 * prints "ready <pid>" and waits for a line on stdin, so the test can resolve the TLS
 * recipe and push it into the kernel; then each thread makes NIOCTL ioctl(TCGETS) calls
 * on /dev/null and prints "thread <tid> <trace-id hex> <span-id hex> <valid> <flags>"
 * (flags: the record's W3C trace flags; the second worker's span is not sampled). The main
 * thread then publishes a record of its own, sleeps 2 ms and makes NIOCTL calls too (its
 * line has tid = pid): on arm64 the kernel's copy of a thread's TPIDR_EL0
 * (thread.uw.tp_value) is written when the thread is switched out, and glibc sets the
 * main thread's TPIDR_EL0 itself at start-up, so the sleep (a certain switch-out) is what
 * makes its context readable there; the worker threads get theirs at clone (CLONE_SETTLS).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/syscall.h>

struct otel_thread_ctx {
	uint8_t trace_id[16];
	uint8_t span_id[8];
	uint8_t valid;
	uint8_t flags;
	uint16_t attrs_size;
	uint8_t attrs[16];
} __attribute__((packed));

#if defined(CTX_IN_EXE) || defined(CTX_LIB)
__attribute__((visibility("default"))) __thread struct otel_thread_ctx *otel_thread_ctx_v1;

/* Publishes rec as this thread's context (what an SDK does when a span becomes active). */
__attribute__((visibility("default"))) void ctx_publish(struct otel_thread_ctx *rec)
{
	otel_thread_ctx_v1 = rec;
}
#endif

#ifndef CTX_LIB
#define NTHREADS 3
#define NIOCTL 5

typedef void (*publish_fn)(struct otel_thread_ctx *);
static publish_fn publish;
static int fd;
static pthread_barrier_t published, go;

static void publish_nothing(struct otel_thread_ctx *rec)
{
	(void)rec;
}

static void hex(char *out, const uint8_t *b, int n)
{
	for (int i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
}

static void *worker(void *arg)
{
	int i = (int)(intptr_t)arg;
	struct otel_thread_ctx *rec = calloc(1, sizeof(*rec));
	for (int k = 0; k < 16; k++)
		rec->trace_id[k] = (uint8_t)(0x10 * (i + 1) + k);
	for (int k = 0; k < 8; k++)
		rec->span_id[k] = (uint8_t)(0xa0 + 0x10 * i + k);
	rec->flags = i == 1 ? 0 : 1; /* sampled, but for the second worker's */
	rec->attrs_size = 4;
	memcpy(rec->attrs, "\x00\x02gp", 4);
	/* The last thread has a record that is not valid (no active span). */
	rec->valid = i == NTHREADS - 1 ? 0 : 1;
	publish(rec);
	pthread_barrier_wait(&published);
	pthread_barrier_wait(&go);
	struct termios t;
	for (int n = 0; n < NIOCTL; n++)
		ioctl(fd, TCGETS, &t);
	char th[33] = {0}, sp[17] = {0};
	hex(th, rec->trace_id, 16);
	hex(sp, rec->span_id, 8);
	flockfile(stdout);
	printf("thread %ld %s %s %d %d\n", (long)syscall(SYS_gettid), th, sp, rec->valid, rec->flags);
	fflush(stdout);
	funlockfile(stdout);
	return 0;
}

#if !defined(CTX_IN_EXE)
void ctx_publish(struct otel_thread_ctx *rec) __attribute__((weak));
#endif

/*
 * CTX_EARLY (the executable build; the test starts it stopped at its exec and pushes the
 * recipe then): the main thread publishes and makes NIOCTL ioctls at once, never switched
 * out since glibc set its thread pointer at start-up (unless preempted), then sleeps 2 ms
 * (a certain switch-out) and makes NIOCTL more; prints "early <tid> <trace> <span>".
 */
static int early(void)
{
	static struct otel_thread_ctx rec = {.valid = 1};
	for (int k = 0; k < 16; k++)
		rec.trace_id[k] = (uint8_t)(0xc0 + k);
	for (int k = 0; k < 8; k++)
		rec.span_id[k] = (uint8_t)(0xd0 + k);
	if (!ctx_publish)
		return 1;
	ctx_publish(&rec);
	int dev = open("/dev/null", O_RDONLY);
	struct termios t;
	for (int n = 0; n < NIOCTL; n++)
		ioctl(dev, TCGETS, &t);
	usleep(2000);
	for (int n = 0; n < NIOCTL; n++)
		ioctl(dev, TCGETS, &t);
	char th[33] = {0}, sp[17] = {0};
	hex(th, rec.trace_id, 16);
	hex(sp, rec.span_id, 8);
	printf("early %d %s %s\n", getpid(), th, sp);
	return 0;
}

int main(void)
{
	if (getenv("CTX_EARLY"))
		return early();
	fd = open("/dev/null", O_RDONLY);
	const char *lib = getenv("CTX_DLOPEN");
	if (getenv("CTX_NONE")) {
		publish = publish_nothing;
	} else if (lib && *lib) {
		void *h = dlopen(lib, RTLD_NOW);
		if (!h) {
			fprintf(stderr, "dlopen: %s\n", dlerror());
			return 1;
		}
		publish = (publish_fn)dlsym(h, "ctx_publish");
	} else {
		publish = ctx_publish;
	}
	if (!publish) {
		fprintf(stderr, "no ctx_publish\n");
		return 1;
	}
	pthread_barrier_init(&published, 0, NTHREADS + 1);
	pthread_barrier_init(&go, 0, NTHREADS + 1);
	pthread_t th[NTHREADS];
	for (int i = 0; i < NTHREADS; i++)
		pthread_create(&th[i], 0, worker, (void *)(intptr_t)i);
	pthread_barrier_wait(&published);
	/* One ioctl from the main thread before the go: the first sight of the process. */
	struct termios t;
	ioctl(fd, TCGETS, &t);
	printf("ready %d\n", getpid());
	fflush(stdout);
	char line[64];
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	pthread_barrier_wait(&go);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(th[i], 0);
	struct otel_thread_ctx *rec = calloc(1, sizeof(*rec));
	for (int k = 0; k < 16; k++)
		rec->trace_id[k] = (uint8_t)(0xe0 + k);
	for (int k = 0; k < 8; k++)
		rec->span_id[k] = (uint8_t)(0xf0 + k);
	rec->valid = 1;
	rec->flags = 1;
	publish(rec);
	usleep(2000);
	for (int n = 0; n < NIOCTL; n++)
		ioctl(fd, TCGETS, &t);
	char trace[33] = {0}, span[17] = {0};
	hex(trace, rec->trace_id, 16);
	hex(span, rec->span_id, 8);
	printf("thread %d %s %s %d %d\n", getpid(), trace, span, rec->valid, rec->flags);
	fflush(stdout);
	return 0;
}
#endif
