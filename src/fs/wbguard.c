/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wbguard.c - the writeback guard's sizes and its reserve file (see
 * wbguard.h). No FUSE types.
 */
#include "wbguard.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#define CHUNK (64u * 1024) /* reserve sizes are multiples of this */
#define PAGE 4096u         /* what it grows and shrinks by */

static uint64_t round_up(uint64_t v, uint64_t to)
{
	return (v + to - 1) / to * to;
}

/* see wbguard.h */
int wbguard_plan(uint64_t fs_bytes, uint64_t limit_max,
		 struct wbguard_plan *p)
{
	uint64_t want = fs_bytes / 64, ppm;

	if (!limit_max)
		return -EINVAL;
	if (want < WBGUARD_DIRTY_MIN)
		want = WBGUARD_DIRTY_MIN;
	if (want > WBGUARD_DIRTY_MAX)
		want = WBGUARD_DIRTY_MAX;
	/* the kernel takes whole ppm: round up, then see what it gives */
	ppm = (want * 1000000 + limit_max - 1) / limit_max;
	if (ppm < 1)
		ppm = 1;
	if (ppm > 1000000)
		ppm = 1000000;
	p->dirty_ppm = (uint32_t)ppm;
	p->dirty_max = (ppm * limit_max + 999999) / 1000000;
	p->reserve = round_up(p->dirty_max * 5 / 2, CHUNK);
	p->low = p->reserve;
	return 0;
}

/* see wbguard.h */
enum wbguard_mode wbguard_mode_of(const struct wbguard_plan *p, uint64_t free,
				  uint64_t reserved)
{
	if (reserved < p->reserve)
		return WBG_REFUSING;
	return free < p->low ? WBG_LOW : WBG_NORMAL;
}

/* Bytes of the lower filesystem we may still allocate, outside the reserve. */
static int free_bytes(const struct wbguard *g, uint64_t *out)
{
	struct statvfs sv;

	if (fstatvfs(g->dirfd, &sv) != 0)
		return -errno;
	*out = (uint64_t)(g->use_bfree ? sv.f_bfree : sv.f_bavail) *
	       sv.f_frsize;
	return 0;
}

/* What the reserve file holds now (lock held). */
static void measure(struct wbguard *g)
{
	struct stat st;

	if (fstat(g->fd, &st) == 0)
		g->reserved = (uint64_t)st.st_blocks * 512;
}

/*
 * Grow the reserve towards its size from the @free bytes there are
 * (lock held). After a dip (@g->short_since), space freed comes to the
 * reserve first, to the last page: what a written-back write needed
 * less than was given to it too, so that a write bypassing the cache
 * then fails as on a full disk, and the reserve is whole again as soon
 * as it can be (cached pages may still need it). Otherwise (at the
 * start, or once it was given up) the reserve is taken whole, with
 * @low bytes to spare, or not at all: on a nearly full disk every open
 * bypasses the cache and the disk can be written to the last byte.
 */
static void refill(struct wbguard *g, uint64_t free)
{
	uint64_t want, grow;
	off_t at;

	if (g->reserved >= g->plan.reserve)
		return;
	want = g->plan.reserve - g->reserved;
	if (g->short_since) {
		grow = free / PAGE * PAGE;
		if (grow > want)
			grow = want;
	} else {
		grow = free >= want + g->plan.low ? want : 0;
	}
	if (!grow)
		return;
	at = lseek(g->fd, 0, SEEK_END);
	if (at < 0)
		return;
	/*
	 * Extending the file (mode 0): a failure part-way may leave part of
	 * it allocated, which measure() counts.
	 */
	(void)fallocate(g->fd, 0, at, (off_t)grow);
	measure(g);
	if (g->reserved >= g->plan.reserve)
		g->short_since = false;
}

/* Set the mode from @free and the reserve (lock held). */
static enum wbguard_mode set_mode(struct wbguard *g, uint64_t free,
				  bool *entered)
{
	enum wbguard_mode mode = wbguard_mode_of(&g->plan, free, g->reserved);
	int old = atomic_exchange(&g->mode, (int)mode);

	if (entered)
		*entered = mode == WBG_REFUSING && old != WBG_REFUSING;
	return mode;
}

/* see wbguard.h */
int wbguard_start(struct wbguard *g, int dirfd, uint64_t limit_max)
{
	struct statvfs sv;
	uint64_t free = 0;
	int err;

	g->fd = -1;
	g->dirfd = dirfd;
	g->limit_max = limit_max;
	if (fstatvfs(dirfd, &sv) != 0) {
		err = -errno;
		goto out_dir;
	}
	err = wbguard_plan((uint64_t)sv.f_blocks * sv.f_frsize, limit_max,
			   &g->plan);
	if (err)
		goto out_dir;
	g->use_bfree = geteuid() == 0;
	g->fd = openat(dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (g->fd < 0) {
		err = errno == EISDIR || errno == ENOENT ? -EOPNOTSUPP : -errno;
		goto out_dir;
	}
	/* no fallocate: there is nothing to reserve with */
	if (fallocate(g->fd, 0, 0, PAGE) != 0 && errno != ENOSPC) {
		err = errno == ENOSYS ? -EOPNOTSUPP : -errno;
		goto out_fd;
	}
	if (ftruncate(g->fd, 0) != 0) {
		err = -errno;
		goto out_fd;
	}
	pthread_mutex_init(&g->lock, NULL);
	measure(g);
	err = free_bytes(g, &free);
	if (!err) {
		refill(g, free);
		err = free_bytes(g, &free);
	}
	if (err) {
		wbguard_stop(g);
		return err;
	}
	(void)set_mode(g, free, NULL);
	return 0;

out_fd:
	close(g->fd);
	g->fd = -1;
out_dir:
	close(dirfd);
	g->dirfd = -1;
	return err;
}

/* see wbguard.h */
enum wbguard_mode wbguard_check(struct wbguard *g, bool *entered)
{
	enum wbguard_mode mode;
	uint64_t free = 0;

	*entered = false;
	pthread_mutex_lock(&g->lock);
	if (free_bytes(g, &free) != 0) {
		mode = (enum wbguard_mode)atomic_load(&g->mode);
	} else {
		if (g->reserved < g->plan.reserve) {
			refill(g, free);
			(void)free_bytes(g, &free);
		}
		mode = set_mode(g, free, entered);
	}
	pthread_mutex_unlock(&g->lock);
	return mode;
}

/* see wbguard.h */
int wbguard_dip(struct wbguard *g, uint64_t need, bool *entered)
{
	int err = -ENOSPC;
	int old;

	*entered = false;
	pthread_mutex_lock(&g->lock);
	measure(g);
	if (g->reserved > 0) {
		uint64_t give = round_up(need ? need : 1, PAGE);
		uint64_t keep = g->reserved > give ? g->reserved - give : 0;

		if (ftruncate(g->fd, (off_t)keep) == 0) {
			uint64_t before = g->reserved;

			measure(g);
			if (g->reserved < before) {
				g->short_since = true;
				g->dips++;
				g->dipped += before - g->reserved;
				err = 0;
			}
		}
	}
	old = atomic_exchange(&g->mode, WBG_REFUSING);
	*entered = old != WBG_REFUSING;
	pthread_mutex_unlock(&g->lock);
	return err;
}

/* see wbguard.h */
enum wbguard_mode wbguard_replan(struct wbguard *g, uint32_t ppm)
{
	enum wbguard_mode mode;
	uint64_t free = 0;

	pthread_mutex_lock(&g->lock);
	g->plan.dirty_ppm = ppm;
	g->plan.dirty_max = ((uint64_t)ppm * g->limit_max + 999999) / 1000000;
	g->plan.reserve = round_up(g->plan.dirty_max * 5 / 2, CHUNK);
	g->plan.low = g->plan.reserve;
	g->short_since = false;
	if (g->reserved > g->plan.reserve &&
	    ftruncate(g->fd, (off_t)g->plan.reserve) == 0)
		measure(g);
	if (free_bytes(g, &free) == 0)
		refill(g, free);
	(void)free_bytes(g, &free);
	mode = set_mode(g, free, NULL);
	pthread_mutex_unlock(&g->lock);
	return mode;
}

/* see wbguard.h */
void wbguard_lost(struct wbguard *g)
{
	pthread_mutex_lock(&g->lock);
	g->lost++;
	pthread_mutex_unlock(&g->lock);
}

/* see wbguard.h */
void wbguard_disable(struct wbguard *g)
{
	pthread_mutex_lock(&g->lock);
	atomic_store(&g->off, true);
	if (ftruncate(g->fd, 0) == 0)
		g->reserved = 0;
	g->short_since = false;
	atomic_store(&g->mode, WBG_NORMAL);
	pthread_mutex_unlock(&g->lock);
}

/* see wbguard.h */
void wbguard_stop(struct wbguard *g)
{
	if (g->fd >= 0) {
		close(g->fd);
		g->fd = -1;
		pthread_mutex_destroy(&g->lock);
	}
	if (g->dirfd >= 0)
		close(g->dirfd);
	g->dirfd = -1;
	g->reserved = 0;
}
