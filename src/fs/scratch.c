/* SPDX-License-Identifier: Apache-2.0 */
/*
 * scratch.c - per-thread buffers (scratch.h).
 */
#include "scratch.h"

#include <pthread.h>
#include <stdlib.h>

#include "log.h"

/* the smallest allocation: a 1 MiB request and the units around it */
#define SCRATCH_MIN ((1u << 20) + 2 * 4096)

struct scratch {
	uint8_t *p[SCRATCH_SLOTS];   /* 64-byte aligned */
	size_t cap[SCRATCH_SLOTS];   /* bytes */
};

static pthread_key_t scratch_key;
static pthread_once_t scratch_once = PTHREAD_ONCE_INIT;

static void scratch_free(void *arg)
{
	struct scratch *b = arg;

	for (int i = 0; i < SCRATCH_SLOTS; i++)
		free(b->p[i]);
	free(b);
}

static void scratch_init(void)
{
	(void)pthread_key_create(&scratch_key, scratch_free);
}

/* see scratch.h */
uint8_t *scratch_get(enum scratch_slot slot, size_t len)
{
	struct scratch *b;

	if ((unsigned)slot >= SCRATCH_SLOTS)
		xtsfs_bug("scratch_get: slot %d", (int)slot);
	pthread_once(&scratch_once, scratch_init);
	b = pthread_getspecific(scratch_key);
	if (!b) {
		b = calloc(1, sizeof(*b));
		if (!b || pthread_setspecific(scratch_key, b)) {
			free(b);
			return NULL;
		}
	}
	/* also for @len 0: a buffer, not NULL, which means out of memory */
	if (!b->p[slot] || b->cap[slot] < len) {
		size_t cap = len < SCRATCH_MIN ? SCRATCH_MIN : len;
		void *p;

		if (posix_memalign(&p, 64, cap))
			return NULL;
		free(b->p[slot]);
		b->p[slot] = p;
		b->cap[slot] = cap;
	}
	return b->p[slot];
}
