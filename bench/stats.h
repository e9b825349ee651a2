/* What bench/'s C programs share for timing and summarising: a monotonic
 * clock in microseconds, and the median of a sample.  Header-only: each
 * program is built alone by bench/run (one cc line each). */
#ifndef MOAT_BENCH_STATS_H
#define MOAT_BENCH_STATS_H

#include <stdlib.h>
#include <time.h>

static inline double bench_now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Sorts v in place. */
static inline double bench_median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), bench_cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#endif
