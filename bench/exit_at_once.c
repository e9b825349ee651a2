/* bench/exit_at_once: the floor under every start-up figure, a program that
 * exits at once.  bench/run builds it twice and times both beside /bin/true:
 *
 *   exit_at_once          static, with glibc: the kernel's exec plus what the
 *                         C library does before main.  On x86-64 glibc's
 *                         start-up reads the CPU's features and cache sizes
 *                         with cpuid (init_cpu_features, dl_init_cacheinfo),
 *                         and under virtualization every cpuid is a VM exit:
 *                         dear in a VM, dearer in a nested one.  Every glibc
 *                         program pays it once (/bin/true, moat, bwrap,
 *                         unshare, the sandboxed command), so a launcher in
 *                         front of a command pays it once more than bare exec.
 *   exit_at_once_nolibc   built with -DNO_LIBC -nostdlib -static: its own
 *                         _start makes one exit_group(0); the kernel's exec
 *                         alone.
 *
 *   exit_at_once --cpuid N   (the glibc build) times N cpuid instructions of
 *                         leaf 4, the one glibc's cache probe walks, and prints
 *                         {"cpuid_us": ...} (microseconds each, the median of
 *                         9 rounds): the price of one VM exit of that kind.
 *
 * The difference of the first two is what moat cannot remove from its own
 * start-up short of leaving glibc; see docs/performance.md. */
#ifdef NO_LIBC
void _start(void);
void _start(void)
{
	__asm__ volatile("mov $231, %%eax\n\txor %%edi, %%edi\n\tsyscall" ::: "rax", "rdi", "rcx", "r11", "memory");
	for (;;)
		;
}
#else
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

static double cpuid_round_us(long n)
{
	struct timespec a, b;
	unsigned eax, ebx, ecx, edx;
	long i;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < n; i++) {
		__cpuid_count(4, (unsigned)(i & 3), eax, ebx, ecx, edx);
		__asm__ volatile("" ::"r"(eax), "r"(ebx), "r"(ecx), "r"(edx));
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	return ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / (double)n / 1e3;
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return (a > b) - (a < b);
}

static int time_cpuid(long n)
{
	double r[9];
	int i;

	for (i = 0; i < 9; i++)
		r[i] = cpuid_round_us(n);
	qsort(r, 9, sizeof(r[0]), cmp_double);
	printf("{\"cpuid_us\": %.3f, \"n\": %ld, \"rounds\": 9}\n", r[4], n);
	return 0;
}
#else
static int time_cpuid(long n)
{
	(void)n;
	return 1; /* no cpuid on this architecture */
}
#endif

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--cpuid") == 0) {
		long n = atol(argv[2]);

		return n > 0 ? time_cpuid(n) : 2;
	}
	return 0;
}
#endif
