/* SPDX-License-Identifier: Apache-2.0 */
/*
 * prefetch.h - work that requests will soon need, done ahead of them by
 * a few background threads.
 *
 * A cold walk of a tree (find, ls -lR, du, rsync) is a chain of small
 * synchronous reads: before the daemon can decrypt one name of a
 * directory it must read that directory's dirid file (FORMAT 4.2), and
 * the kernel asks for one directory after the other. When a listing
 * shows subdirectories, the daemon posts them here, and these threads
 * read their dirids (several reads in flight at once) while the kernel
 * is still busy with the listing, so that most are in memory by the time
 * the kernel opens them.
 *
 * Best effort: when the queue is full an item is refused and the caller
 * drops it (the request that needs the work does it itself). The threads
 * take no signals.
 */
#ifndef XTSFS_PREFETCH_H
#define XTSFS_PREFETCH_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#define PREFETCH_MAX_THREADS 8

/* struct prefetch - one queue and its threads. */
struct prefetch {
	void (*run)(void *ctx, void *item);  /* do it and release @item */
	void (*drop)(void *ctx, void *item); /* release an @item never run */
	void *ctx;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	void **ring;              /* queued items */
	size_t cap;               /* ring slots */
	size_t head;              /* the oldest queued item */
	size_t count;             /* items queued */
	unsigned idle;            /* threads waiting for an item */
	unsigned nthreads;        /* threads started */
	pthread_t threads[PREFETCH_MAX_THREADS];
	bool stop;
	bool running;             /* started and not stopped */
};

/*
 * prefetch_start() - start @threads (1 to PREFETCH_MAX_THREADS) threads
 * that call @run(@ctx, item) for each item posted, oldest first, with a
 * queue of @depth items. Return: 0 or -errno (nothing started then).
 */
int prefetch_start(struct prefetch *p, unsigned threads, size_t depth,
		   void (*run)(void *ctx, void *item),
		   void (*drop)(void *ctx, void *item), void *ctx);

/*
 * prefetch_post() - queue @item. Return: true if queued (it will be run
 * or dropped by the queue), false if refused (queue full, never started
 * or stopped): the caller still owns @item.
 */
bool prefetch_post(struct prefetch *p, void *item);

/*
 * prefetch_stop() - let running items finish, drop the queued ones, join
 * the threads. Safe on a zeroed or never-started @p, and twice.
 */
void prefetch_stop(struct prefetch *p);

#endif /* XTSFS_PREFETCH_H */
