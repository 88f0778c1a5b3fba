/* SPDX-License-Identifier: GPL-2.0 */
/* Timestamps in nanoseconds, as the kernel's records and rules carry them. */
#ifndef TETHER_COMMON_CLOCK_H
#define TETHER_COMMON_CLOCK_H

#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC (the records' clock), CLOCK_BOOTTIME (DNS expiry), ... */
static inline uint64_t clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif
