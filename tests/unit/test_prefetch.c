/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_prefetch.c - the background work queue (prefetch.c): every item
 * posted is run or dropped exactly once; a burst keeps every thread busy
 * at once (several reads in flight); a full queue refuses items and the
 * caller keeps them; stop drops what was never run; a never-started or
 * stopped queue refuses everything; bad arguments are refused.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "prefetch.h"
#include "testutil.h"

#define NITEMS 1000

static atomic_int runs[NITEMS];
static atomic_int drops[NITEMS];
static atomic_int inside;       /* threads inside run() now */

/* the gate: while closed, run() waits in it */
static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;
static bool gate_closed;

static void gate(bool closed)
{
	pthread_mutex_lock(&gate_lock);
	gate_closed = closed;
	pthread_cond_broadcast(&gate_cond);
	pthread_mutex_unlock(&gate_lock);
}

static void run(void *ctx, void *item)
{
	int *base = ctx;

	atomic_fetch_add(&inside, 1);
	pthread_mutex_lock(&gate_lock);
	while (gate_closed)
		pthread_cond_wait(&gate_cond, &gate_lock);
	pthread_mutex_unlock(&gate_lock);
	atomic_fetch_add(&runs[(int *)item - base], 1);
	atomic_fetch_sub(&inside, 1);
}

static void drop(void *ctx, void *item)
{
	int *base = ctx;

	atomic_fetch_add(&drops[(int *)item - base], 1);
}

static int items[NITEMS];

static void reset(void)
{
	for (int i = 0; i < NITEMS; i++)
		runs[i] = drops[i] = 0;
	inside = 0;
}

/* Wait (up to 30 s) until @cond holds; return whether it does. */
#define WAIT_FOR(cond)                                                  \
	({                                                              \
		int w_ = 0;                                             \
		while (!(cond) && w_++ < 3000)                          \
			usleep(10000);                                  \
		(cond);                                                 \
	})

static int total(atomic_int *a, int n)
{
	int t = 0;

	for (int i = 0; i < n; i++)
		t += a[i];
	return t;
}

static void every_item_once(void)
{
	struct prefetch p;
	int refused = 0;

	reset();
	CHECK(prefetch_start(&p, 4, NITEMS, run, drop, items) == 0, "start");
	for (int i = 0; i < NITEMS; i++)
		if (!prefetch_post(&p, &items[i]))
			refused++;
	CHECK(refused == 0, "%d refused with room for all", refused);
	CHECK(WAIT_FOR(total(runs, NITEMS) == NITEMS), "all run: %d",
	      total(runs, NITEMS));
	prefetch_stop(&p);
	for (int i = 0; i < NITEMS; i++)
		CHECK(runs[i] == 1 && drops[i] == 0, "item %d: %d runs, %d "
		      "drops", i, runs[i], drops[i]);
}

static void burst_uses_every_thread(void)
{
	struct prefetch p;

	reset();
	gate(true);
	CHECK(prefetch_start(&p, 4, 64, run, drop, items) == 0, "start");
	for (int i = 0; i < 8; i++)
		CHECK(prefetch_post(&p, &items[i]), "post %d", i);
	CHECK(WAIT_FOR(inside == 4), "4 threads at work at once, got %d",
	      (int)inside);
	gate(false);
	CHECK(WAIT_FOR(total(runs, 8) == 8), "8 run");
	prefetch_stop(&p);
}

static void full_queue_and_stop(void)
{
	struct prefetch p;
	int accepted = 0, refused = 0;

	reset();
	gate(true);
	CHECK(prefetch_start(&p, 2, 16, run, drop, items) == 0, "start");
	/* two items taken by the blocked threads, then 16 queued */
	for (int i = 0; i < 2; i++)
		CHECK(prefetch_post(&p, &items[i]), "post %d", i);
	CHECK(WAIT_FOR(inside == 2), "both threads hold an item");
	for (int i = 2; i < 40; i++) {
		if (prefetch_post(&p, &items[i]))
			accepted++;
		else
			refused++;
	}
	CHECK(accepted == 16 && refused == 22, "depth 16: %d accepted, %d "
	      "refused", accepted, refused);
	gate(false);
	prefetch_stop(&p);
	/* each accepted item run or dropped once; refused ones untouched */
	for (int i = 0; i < 18; i++)
		CHECK(runs[i] + drops[i] == 1, "item %d: %d runs, %d drops",
		      i, runs[i], drops[i]);
	for (int i = 18; i < 40; i++)
		CHECK(runs[i] + drops[i] == 0, "refused item %d touched", i);
	CHECK(!prefetch_post(&p, &items[0]), "a stopped queue refuses");
	prefetch_stop(&p); /* twice: harmless */
}

static void never_started_and_bad_args(void)
{
	struct prefetch z = { 0 };
	struct prefetch p;

	CHECK(!prefetch_post(&z, &items[0]), "a zeroed queue refuses");
	prefetch_stop(&z);
	CHECK(prefetch_start(&p, 0, 8, run, drop, items) == -EINVAL,
	      "0 threads");
	CHECK(prefetch_start(&p, PREFETCH_MAX_THREADS + 1, 8, run, drop,
			     items) == -EINVAL, "too many threads");
	CHECK(prefetch_start(&p, 1, 0, run, drop, items) == -EINVAL,
	      "depth 0");
	CHECK(!prefetch_post(&p, &items[0]), "a queue that failed to "
	      "start refuses");
}

int main(void)
{
	every_item_once();
	burst_uses_every_thread();
	full_queue_and_stop();
	never_started_and_bad_args();
	return test_failures ? 1 : 0;
}
