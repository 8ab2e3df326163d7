/* SPDX-License-Identifier: Apache-2.0 */
/*
 * monotime.h - CLOCK_MONOTONIC as one number, for the intervals the
 * daemon measures (rate limits, quiet spells, how long a step took).
 */
#ifndef XTSFS_MONOTIME_H
#define XTSFS_MONOTIME_H

#include <stdint.h>
#include <time.h>

/* Nanoseconds of CLOCK_MONOTONIC. */
static inline int64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Milliseconds of CLOCK_MONOTONIC. */
static inline int64_t mono_ms(void)
{
	return mono_ns() / 1000000;
}

#endif /* XTSFS_MONOTIME_H */
