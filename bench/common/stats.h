/* SPDX-License-Identifier: GPL-2.0 */
/* Order statistics the benchmark drivers share (header only: loops.c is built alone). */
#ifndef TETHER_BENCH_STATS_H
#define TETHER_BENCH_STATS_H

#include <stddef.h>

/* qsort comparator for doubles. */
static inline int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Nearest-rank percentile of `n` sorted samples. */
static inline double bench_percentile(const double *sorted, size_t n, unsigned int pct)
{
	size_t rank = (pct * n + 99) / 100;

	return sorted[rank ? rank - 1 : 0];
}

#endif
