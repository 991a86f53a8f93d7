// SPDX-License-Identifier: MIT
/*
 * ioctlloop: the ioctl-heavy workload of the overhead benchmarks (BENCHMARKS.md).
 *
 *   ioctlloop N [RATE]
 *
 * N ioctl(TCGETS) on /dev/null (ENOTTY: the cheapest ioctl that still goes through the
 * syscall tracepoints and the fd lookup). RATE > 0 paces the loop to RATE ioctls/s
 * (busy-waiting, so that the pacing itself does not sleep and change the CPU's state).
 * Prints one line: n, wall ns per ioctl, and this process's CPU ns per ioctl.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

static long long ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long long n = argc > 1 ? atoll(argv[1]) : 1000000;
	double rate = argc > 2 ? atof(argv[2]) : 0;
	struct termios t;
	int fd = open("/dev/null", O_RDONLY);
	if (fd < 0) {
		perror("/dev/null");
		return 1;
	}
	long long w0 = ns(CLOCK_MONOTONIC), c0 = ns(CLOCK_PROCESS_CPUTIME_ID);
	if (rate > 0) {
		double step = 1e9 / rate;
		for (long long i = 0; i < n; i++) {
			if ((i & 31) == 0)
				while (ns(CLOCK_MONOTONIC) - w0 < (long long)(i * step))
					;
			ioctl(fd, TCGETS, &t);
		}
	} else {
		for (long long i = 0; i < n; i++)
			ioctl(fd, TCGETS, &t);
	}
	long long w1 = ns(CLOCK_MONOTONIC), c1 = ns(CLOCK_PROCESS_CPUTIME_ID);
	printf("n=%lld wall_ns_per_op=%.1f cpu_ns_per_op=%.1f wall_s=%.3f\n", n, (double)(w1 - w0) / n,
	       (double)(c1 - c0) / n, (w1 - w0) / 1e9);
	return 0;
}
