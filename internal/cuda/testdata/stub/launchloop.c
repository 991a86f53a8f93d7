/*
 * The launch-bound loop of the CUDA hook-cost harness (bench/cudahook): initialises the
 * stub runtime (its cuGetProcAddress calls), prints "ready", waits for a line, then
 * times N back-to-back cudaLaunchKernel calls (each reaches the stub driver's hidden
 * table launch, which spins 2 µs) and prints "ns_per_launch <wall> <cpu>": wall time and
 * the process's user + system CPU time (where the uprobe traps are charged) per launch.
 */
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

static double cpu_ns(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e9 + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e3;
}

typedef struct {
	unsigned int x, y, z;
} dim3;
extern int cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args, size_t shmem, void *stream);
extern int cudaFree(void *p);

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000;
	char line[64];
	dim3 g = {4, 1, 1}, b = {128, 1, 1};
	setvbuf(stdout, 0, _IONBF, 0);
	cudaFree(0);
	printf("ready\n");
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	struct timespec t0, t1;
	double c0 = cpu_ns();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 0; i < n; i++)
		cudaLaunchKernel((void *)(uintptr_t)0xf000, g, b, 0, 0, (void *)0x5000);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double c1 = cpu_ns();
	double ns = (t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec);
	printf("ns_per_launch %.1f %.1f\n", ns / n, (c1 - c0) / n);
	return 0;
}
