/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wbguard.c - the writeback guard's sizes and its reserve file (see
 * wbguard.h). No FUSE types.
 */
#include "wbguard.h"
#include "monotime.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#define CHUNK (64u * 1024) /* reserve sizes are multiples of this */
#define PAGE 4096u         /* what it grows and shrinks by */
#define MS 1000000ll       /* nanoseconds */
#define RATE_WINDOW (50 * MS)  /* the rate is measured over this */
#define RATE_HOLD (10000 * MS) /* a rate seen is kept this long */
#define CHECK_EVERY (100 * MS) /* free space looked at while writing */
#define SHRINK_AFTER (2000 * MS) /* reserve held past its target: kept
				  * this long after the last writer came */

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
	/* dirty_poll_interval() with nothing dirty: 1 << (ilog2(n) >> 1) */
	p->poll = PAGE;
	for (uint64_t n = limit_max / PAGE; n >= 4; n >>= 2)
		p->poll <<= 1;
	return 0;
}

/* see wbguard.h */
uint64_t wbguard_overshoot(const struct wbguard_plan *p, uint64_t rate)
{
	uint64_t o;

	if (rate < WBGUARD_RATE_MIN)
		rate = WBGUARD_RATE_MIN;
	o = rate / 100;
	if (o < p->poll)
		o = p->poll;
	return round_up(o, CHUNK);
}

/* see wbguard.h */
uint64_t wbguard_target(const struct wbguard_plan *p, unsigned writers,
			uint64_t rate)
{
	return p->reserve + 2 * (uint64_t)writers * wbguard_overshoot(p, rate);
}

/* see wbguard.h */
enum wbguard_mode wbguard_mode_of(const struct wbguard_plan *p, uint64_t free,
				  uint64_t reserved, uint64_t target)
{
	if (reserved < target)
		return WBG_REFUSING;
	return free < p->low ? WBG_LOW : WBG_NORMAL;
}

/* The target of @g now (lock held). */
static uint64_t target_of(const struct wbguard *g)
{
	return wbguard_target(&g->plan, g->writers, g->rate);
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
 * Grow the reserve towards @target from the @free bytes there are
 * (lock held). After a dip (@g->short_since), space freed comes to the
 * reserve first, to the last page: what a written-back write needed
 * less than was given to it too, so that a write bypassing the cache
 * then fails as on a full disk, and the reserve is whole again as soon
 * as it can be (cached pages may still need it). Otherwise (at the
 * start, once it was given up, or with @whole: a new writer's share)
 * what is missing is taken whole, with @low bytes to spare, or not at
 * all: on a nearly full disk opens bypass the cache and the disk can be
 * written to the last byte.
 */
static void refill(struct wbguard *g, uint64_t free, uint64_t target,
		   bool whole)
{
	uint64_t want, grow;
	off_t at;

	if (g->reserved >= target) {
		g->short_since = false;
		return;
	}
	want = target - g->reserved;
	if (g->short_since && !whole) {
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
	if (g->reserved >= target)
		g->short_since = false;
}

/*
 * Give back what the reserve holds past @target (lock held): when no
 * writer came for a while (opens and closes in a row do not grow and
 * shrink it each time), or at once when less than the low-water mark is
 * free.
 */
static void shrink(struct wbguard *g, uint64_t free, uint64_t target,
		   int64_t now)
{
	if (g->reserved <= target ||
	    (free >= g->plan.low && now - g->admit_ns < SHRINK_AFTER))
		return;
	if (ftruncate(g->fd, (off_t)target) == 0)
		measure(g);
}

/* Set the mode from @free and the reserve (lock held). */
static enum wbguard_mode set_mode(struct wbguard *g, uint64_t free,
				  bool *entered)
{
	uint64_t target = target_of(g);
	enum wbguard_mode mode = wbguard_mode_of(&g->plan, free, g->reserved,
						 target);
	int old = atomic_exchange(&g->mode, (int)mode);
	uint64_t need = g->plan.low + (target > g->reserved ?
				       target - g->reserved : 0);

	g->check_ns = mono_ns();
	g->since_check = 0;
	g->slack = free > need ? free - need : 0;

	if (mode == WBG_REFUSING && old != WBG_REFUSING)
		atomic_store(&g->untold, true);
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
		refill(g, free, g->plan.reserve, true);
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

/*
 * wbguard_check() under the lock; *@free: the bytes free outside the
 * reserve (0 if the filesystem could not say).
 */
static enum wbguard_mode look(struct wbguard *g, uint64_t *free,
			      bool *entered)
{
	uint64_t target = target_of(g);

	if (free_bytes(g, free) != 0) {
		*free = 0;
		return (enum wbguard_mode)atomic_load(&g->mode);
	}
	if (g->reserved < target) {
		refill(g, *free, target, false);
		(void)free_bytes(g, free);
	} else if (!g->short_since || *free >= g->plan.low) {
		/*
		 * Whole, or writers left since a dip: what it holds past the
		 * target goes back, but not while the disk is still full
		 * (the space a dip left stays the reserve's, so that writes
		 * bypassing the cache fail as on a full disk)
		 */
		g->short_since = false;
		if (g->reserved > target) {
			shrink(g, *free, target, mono_ns());
			(void)free_bytes(g, free);
		}
	}
	return set_mode(g, *free, entered);
}

/* see wbguard.h */
enum wbguard_mode wbguard_check(struct wbguard *g, bool *entered)
{
	enum wbguard_mode mode;
	uint64_t free = 0;

	*entered = false;
	pthread_mutex_lock(&g->lock);
	mode = look(g, &free, entered);
	pthread_mutex_unlock(&g->lock);
	return mode;
}

/* see wbguard.h */
bool wbguard_admit(struct wbguard *g)
{
	uint64_t free = 0, more;
	bool yes = false;

	pthread_mutex_lock(&g->lock);
	if (look(g, &free, NULL) == WBG_NORMAL) {
		more = wbguard_target(&g->plan, g->writers + 1, g->rate);
		/* taken whole with the low-water mark to spare, or not */
		if (g->reserved < more)
			refill(g, free, more, true);
		yes = g->reserved >= more;
		if (yes) {
			g->writers++;
			g->admit_ns = mono_ns();
		} else {
			g->denied++;
		}
		if (free_bytes(g, &free) == 0)
			(void)set_mode(g, free, NULL);
	}
	pthread_mutex_unlock(&g->lock);
	return yes;
}

/* see wbguard.h */
bool wbguard_untold(struct wbguard *g)
{
	return atomic_exchange(&g->untold, false);
}

/* see wbguard.h */
void wbguard_leave(struct wbguard *g)
{
	pthread_mutex_lock(&g->lock);
	if (g->writers)
		g->writers--;
	pthread_mutex_unlock(&g->lock);
}

/* see wbguard.h */
bool wbguard_wrote(struct wbguard *g, uint64_t bytes)
{
	int64_t now = mono_ns(), span;
	bool due = false;

	pthread_mutex_lock(&g->lock);
	span = now - g->win_ns;
	if (span >= RATE_WINDOW) {
		uint64_t r = (uint64_t)((double)g->win_bytes * 1e9 /
					(double)span);

		/* a higher target: look at once */
		due = r > g->rate && wbguard_overshoot(&g->plan, r) >
				     wbguard_overshoot(&g->plan, g->rate);
		if (r >= g->rate || now - g->rate_ns >= RATE_HOLD) {
			g->rate = r;
			g->rate_ns = now;
		}
		g->win_ns = now;
		g->win_bytes = 0;
	}
	g->win_bytes += bytes;
	g->since_check += bytes;
	due = due || g->since_check * 2 >= g->slack ||
	      now - g->check_ns >= CHECK_EVERY;
	pthread_mutex_unlock(&g->lock);
	return due;
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
	if (*entered)
		atomic_store(&g->untold, true);
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
	if (g->reserved > target_of(g) &&
	    ftruncate(g->fd, (off_t)target_of(g)) == 0)
		measure(g);
	if (free_bytes(g, &free) == 0)
		refill(g, free, target_of(g), false);
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
