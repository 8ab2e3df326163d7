/* SPDX-License-Identifier: Apache-2.0 */
/*
 * prefetch.c - a small queue of background work (see prefetch.h).
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>

#include "prefetch.h"

static void *worker(void *arg)
{
	struct prefetch *p = arg;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		void *item;

		while (!p->stop && !p->count) {
			p->idle++;
			pthread_cond_wait(&p->cond, &p->lock);
			p->idle--;
		}
		if (p->stop)
			break;
		item = p->ring[p->head];
		p->head = (p->head + 1) % p->cap;
		p->count--;
		/*
		 * More to do: wake one more thread. A burst thus wakes as
		 * many threads as it keeps busy, not one per item.
		 */
		if (p->count && p->idle)
			pthread_cond_signal(&p->cond);
		pthread_mutex_unlock(&p->lock);
		p->run(p->ctx, item);
		pthread_mutex_lock(&p->lock);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* Stop and join the first @n threads. */
static void join(struct prefetch *p, unsigned n)
{
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	for (unsigned i = 0; i < n; i++)
		pthread_join(p->threads[i], NULL);
}

/* see prefetch.h */
int prefetch_start(struct prefetch *p, unsigned threads, size_t depth,
		   void (*run)(void *ctx, void *item),
		   void (*drop)(void *ctx, void *item), void *ctx)
{
	sigset_t all, old;
	int rc = 0;

	p->running = false;
	if (threads < 1 || threads > PREFETCH_MAX_THREADS || depth < 1)
		return -EINVAL;
	p->ring = calloc(depth, sizeof(*p->ring));
	if (!p->ring)
		return -ENOMEM;
	p->cap = depth;
	p->head = p->count = 0;
	p->idle = 0;
	p->run = run;
	p->drop = drop;
	p->ctx = ctx;
	p->stop = false;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	/* the threads take no signals: they belong to the session loop */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (p->nthreads = 0; p->nthreads < threads; p->nthreads++) {
		rc = pthread_create(&p->threads[p->nthreads], NULL, worker, p);
		if (rc)
			break;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		join(p, p->nthreads);
		pthread_cond_destroy(&p->cond);
		pthread_mutex_destroy(&p->lock);
		free(p->ring);
		p->ring = NULL;
		return -rc;
	}
	p->running = true;
	return 0;
}

/* see prefetch.h */
bool prefetch_post(struct prefetch *p, void *item)
{
	bool queued = false;

	if (!p->running)
		return false;
	pthread_mutex_lock(&p->lock);
	if (!p->stop && p->count < p->cap) {
		p->ring[(p->head + p->count) % p->cap] = item;
		/* a queue that was not empty has a thread on its way */
		if (!p->count++ && p->idle)
			pthread_cond_signal(&p->cond);
		queued = true;
	}
	pthread_mutex_unlock(&p->lock);
	return queued;
}

/* see prefetch.h */
void prefetch_stop(struct prefetch *p)
{
	if (!p->running)
		return;
	join(p, p->nthreads);
	/* the threads are gone: what is still queued was never run */
	for (; p->count; p->count--) {
		p->drop(p->ctx, p->ring[p->head]);
		p->head = (p->head + 1) % p->cap;
	}
	p->running = false;
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
	free(p->ring);
	p->ring = NULL;
}
