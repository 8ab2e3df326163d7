/* SPDX-License-Identifier: Apache-2.0 */
/*
 * durable.c - batched syncs of the lower filesystem (see durable.h).
 */
#include <errno.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "durable.h"

static int sync_fs(int fd)
{
	return syncfs(fd) == 0 ? 0 : -errno;
}

/* Sync if anything was noted since the last successful sync. */
static int barrier(struct durable *d)
{
	uint64_t want;
	bool done;
	int err;

	pthread_mutex_lock(&d->lock);
	want = d->noted;
	done = want == d->synced;
	pthread_mutex_unlock(&d->lock);
	if (done)
		return 0;
	err = d->sync(d->fd);
	pthread_mutex_lock(&d->lock);
	if (!err && want > d->synced)
		d->synced = want;
	pthread_mutex_unlock(&d->lock);
	return err;
}

/* The background thread: one sync per burst of notes. */
static void *flusher(void *arg)
{
	struct durable *d = arg;

	pthread_mutex_lock(&d->lock);
	while (!d->stop) {
		struct timespec until;

		if (d->noted == d->synced) {
			pthread_cond_wait(&d->cond, &d->lock);
			continue;
		}
		/* let the burst go on for a moment: one sync covers it all */
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec += d->delay_ms / 1000;
		until.tv_nsec += (long)(d->delay_ms % 1000) * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		while (!d->stop &&
		       pthread_cond_timedwait(&d->cond, &d->lock, &until) !=
		       ETIMEDOUT)
			;
		if (d->stop)
			break;
		pthread_mutex_unlock(&d->lock);
		/* a failure is retried after the next delay */
		(void)barrier(d);
		pthread_mutex_lock(&d->lock);
	}
	pthread_mutex_unlock(&d->lock);
	return NULL;
}

/* see durable.h */
int durable_start(struct durable *d, int fd, int (*sync)(int fd),
		  unsigned delay_ms)
{
	pthread_condattr_t ca;
	sigset_t all, old;
	int rc;

	d->fd = fd;
	d->sync = sync ? sync : sync_fs;
	d->delay_ms = delay_ms;
	d->noted = d->synced = 0;
	d->stop = false;
	d->running = false;
	pthread_mutex_init(&d->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&d->cond, &ca);
	pthread_condattr_destroy(&ca);
	/* the thread takes no signals: they belong to the session loop */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(&d->thread, NULL, flusher, d);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		pthread_cond_destroy(&d->cond);
		pthread_mutex_destroy(&d->lock);
		close(fd);
		d->fd = -1;
		return -rc;
	}
	d->running = true;
	return 0;
}

/* see durable.h */
int durable_barrier(struct durable *d)
{
	return d->running ? barrier(d) : 0;
}

/* see durable.h */
void durable_note(struct durable *d)
{
	if (!d->running)
		return;
	pthread_mutex_lock(&d->lock);
	if (d->noted++ == d->synced)
		pthread_cond_signal(&d->cond);
	pthread_mutex_unlock(&d->lock);
}

/* see durable.h */
uint64_t durable_pending(struct durable *d)
{
	uint64_t n;

	if (!d->running)
		return 0;
	pthread_mutex_lock(&d->lock);
	n = d->noted - d->synced;
	pthread_mutex_unlock(&d->lock);
	return n;
}

/* see durable.h */
int durable_stop(struct durable *d)
{
	int err;

	if (!d->running)
		return 0;
	pthread_mutex_lock(&d->lock);
	d->stop = true;
	pthread_cond_signal(&d->cond);
	pthread_mutex_unlock(&d->lock);
	pthread_join(d->thread, NULL);
	err = barrier(d);
	d->running = false;
	close(d->fd);
	d->fd = -1;
	pthread_cond_destroy(&d->cond);
	pthread_mutex_destroy(&d->lock);
	return err;
}
