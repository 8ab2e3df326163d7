/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wbguard.h - the writeback guard: a kernel writeback cache that still
 * reports a full disk at write(2) (doc/DESIGN.md, "The daemon").
 *
 * With the writeback cache the kernel takes a write(2) into its page
 * cache and sends it to us later; by then the program was told it
 * succeeded, and a full lower filesystem could only fail the writeback
 * (reported at fsync or close, the data lost). The guard keeps that from
 * happening with three things:
 *
 * - a bound on what may be dirty: the mount's backing device gets a
 *   dirty limit (bdi max_ratio_fine, with FUSE's strict_limit, bdi.h),
 *   so at most about @dirty_max bytes are accepted and not yet written
 *   back at any moment;
 * - a reserve: an unnamed file (O_TMPFILE) in the cipher directory,
 *   fallocated to what the dirty bound can need (a 4 KiB page can touch
 *   two lower blocks, units sit 40 bytes off block boundaries) and a
 *   share for each writer through the cache (what the kernel lets a
 *   task dirty before it first looks at it, wbguard_overshoot()), given
 *   up piece by piece when a written-back page finds the lower
 *   filesystem full (wbguard_dip()), refilled when space comes back
 *   (wbguard_check()). It vanishes by itself if the daemon dies;
 * - what the front end does with the mode: below @low bytes free, or
 *   without room for one more writer's share (wbguard_admit()), new
 *   opens for writing bypass the cache (every write reaches the daemon,
 *   which the lower filesystem answers); once the reserve had to be used
 *   or is short of its target (WBG_REFUSING), writes through handles
 *   opened earlier with the cache are refused with ENOSPC at the
 *   attribute refresh the kernel makes before a cached write
 *   (fuse_ops.c).
 *
 * The sizes are pure functions (wbguard_plan(), wbguard_mode_of()), unit
 * tested; the rest works on a lower directory, without FUSE.
 */
#ifndef XTSFS_WBGUARD_H
#define XTSFS_WBGUARD_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* The smallest and largest dirty bound (bytes). */
#define WBGUARD_DIRTY_MIN (256u * 1024)
#define WBGUARD_DIRTY_MAX (32u * 1024 * 1024)

/* struct wbguard_plan - the sizes of one mount's guard. */
struct wbguard_plan {
	uint32_t dirty_ppm;  /* bdi max_ratio_fine: parts per million of
			      * the global dirty limit */
	uint64_t dirty_max;  /* bytes that may be dirty at most: dirty_ppm
			      * of the largest global limit there can be */
	uint64_t reserve;    /* the base of the reserve: what it holds
			      * with no writer (wbguard_target()) */
	uint64_t low;        /* below this many bytes free (outside the
			      * reserve), new opens bypass the cache */
	uint64_t poll;       /* bytes a task may dirty between two looks
			      * of the kernel at a global limit of
			      * @limit_max (wbguard_overshoot()) */
};

/*
 * wbguard_plan() - the sizes for a lower filesystem of @fs_bytes bytes
 * when the global dirty limit can reach @limit_max bytes (vm.dirty_bytes,
 * else vm.dirty_ratio of all memory): a dirty bound of 1/64 of the
 * filesystem within [WBGUARD_DIRTY_MIN, WBGUARD_DIRTY_MAX], rounded up
 * to what a whole ppm of @limit_max gives; a base reserve and low-water
 * mark of 5/2 of it (2x for pages that straddle two lower blocks, 1/2
 * for lower metadata). What each writer may dirty past the bound comes
 * on top (wbguard_target()), at least @poll.
 * Return: 0, or -EINVAL if @limit_max is 0.
 */
int wbguard_plan(uint64_t fs_bytes, uint64_t limit_max,
		 struct wbguard_plan *p);

/*
 * The kernel's first estimate of a new mount's write-back rate
 * (mm/page-writeback.c: INIT_BW, 100 MiB/s), the floor of ours.
 */
#define WBGUARD_RATE_MIN (100ull * 1024 * 1024)

/*
 * wbguard_overshoot() - what one writing task may dirty here past the
 * bound when pages are written back at @rate bytes per second, in whole
 * 64 KiB. The kernel looks at a task dirtying pages only every
 * current->nr_dirtied_pause pages (balance_dirty_pages_ratelimited()),
 * a count of the task, not of the mount, which two things set:
 * - the task's last look on any filesystem: one without a strict limit
 *   (ext4, the root disk) in free run sets it to
 *   dirty_poll_interval() of the global limit, 2^(ilog2(pages) / 2)
 *   pages (@p->poll); measured: 4 MiB dirty on a 1 MiB bound after
 *   50 KB written to ext4 by the same task;
 * - its looks here: wb_min_pause() sizes it to the mount's
 *   dirty_ratelimit (a rate that follows the write-back rate, INIT_BW at
 *   first) times max(HZ/100, 1) jiffies over roundup_pow_of_two(HZ),
 *   under 10 ms of @rate (at least WBGUARD_RATE_MIN).
 * Once the mount is over its bound the kernel looks every 8 pages
 * (wb->dirty_exceeded): what is past it is each task's first run.
 */
uint64_t wbguard_overshoot(const struct wbguard_plan *p, uint64_t rate);

/*
 * wbguard_target() - what the reserve must hold for @writers handles
 * writing through the cache at @rate: the base, and two lower blocks per
 * page of each writer's overshoot.
 */
uint64_t wbguard_target(const struct wbguard_plan *p, unsigned writers,
			uint64_t rate);

/* What the front end does for new opens and cached writes. */
enum wbguard_mode {
	WBG_NORMAL,   /* cache for everyone */
	WBG_LOW,      /* little space left: new opens bypass the cache */
	WBG_REFUSING, /* the reserve holds less than @target: also refuse
		       * cached writes */
};

/*
 * wbguard_mode_of() - the mode for @free bytes free outside the reserve
 * and @reserved bytes in it, when it should hold @target.
 */
enum wbguard_mode wbguard_mode_of(const struct wbguard_plan *p, uint64_t free,
				  uint64_t reserved, uint64_t target);

/* struct wbguard - one mount's guard (zero-initialised: not started). */
struct wbguard {
	struct wbguard_plan plan;  /* set by wbguard_start(); lock */
	uint64_t limit_max;        /* the largest global dirty limit */
	int dirfd;                 /* the lower root, a real descriptor */
	pthread_mutex_t lock;      /* the reserve */
	int fd;                    /* the reserve file (O_TMPFILE); lock */
	uint64_t reserved;         /* bytes allocated to it; lock */
	atomic_int mode;           /* enum wbguard_mode, read without lock */
	bool use_bfree;            /* root: may use the root-reserved blocks */
	bool short_since;          /* dipped into since it was last whole:
				    * it takes back any space freed; lock */
	unsigned long long dips;   /* releases from the reserve; lock */
	unsigned long long dipped; /* bytes released; lock */
	unsigned long long lost;   /* written-back requests it could not
				    * cover (-ENOSPC after all); lock */
	atomic_ullong refused;     /* cached writes refused (front end) */
	atomic_bool off;           /* given up (wbguard_disable()) */
	unsigned writers;          /* handles writing through the cache
				    * (wbguard_admit()); lock */
	uint64_t rate;             /* the highest write-back rate seen
				    * lately, bytes/s; lock */
	int64_t rate_ns;           /* when it was last raised; lock */
	int64_t win_ns;            /* the current rate window: since; lock */
	uint64_t win_bytes;        /* ... bytes written back in it; lock */
	int64_t admit_ns;          /* the last writer admitted; lock */
	int64_t check_ns;          /* the last look at the free space; lock */
	uint64_t since_check;      /* bytes written back since; lock */
	uint64_t slack;            /* free space past the low-water mark
				    * and the target then; lock */
	unsigned long long denied; /* opens refused the cache for lack of
				    * room to grow the reserve; lock */
	atomic_bool untold;        /* WBG_REFUSING entered, the front end
				    * not told yet (wbguard_untold()) */
};

/*
 * wbguard_start() - plan the guard of lower directory @dirfd (a real
 * descriptor, which @g then owns) for a global dirty limit of at most
 * @limit_max bytes, make the reserve and fill it if the lower filesystem
 * has room for it and the low-water mark (else it holds nothing, in
 * WBG_REFUSING: every open bypasses the cache until there is room).
 * Return: 0, or -errno (-EOPNOTSUPP: no O_TMPFILE or no fallocate on
 * the lower filesystem); then nothing is left open.
 */
int wbguard_start(struct wbguard *g, int dirfd, uint64_t limit_max);

/*
 * wbguard_check() - look at the free space, bring the reserve to its
 * target (refilled from what is free, or what is held past the target
 * given back when no writer came for a while or space is short), and
 * set the mode. *@entered: the mode became WBG_REFUSING now (the front
 * end then makes cached writers ask).
 * Return: the mode.
 */
enum wbguard_mode wbguard_check(struct wbguard *g, bool *entered);

/*
 * wbguard_admit() - a file is opened for writing: may it write through
 * the cache? Yes (counted as a writer until wbguard_leave()) if the
 * mode is WBG_NORMAL and the reserve holds, or can take whole with the
 * low-water mark to spare, the target with one writer more. Otherwise
 * the open bypasses the cache, and the writers before it are left as
 * they were.
 */
bool wbguard_admit(struct wbguard *g);

/*
 * wbguard_untold() - whether WBG_REFUSING was entered since the last
 * call, wherever it was (a check, a dip, an admission): the front end
 * then makes the cached writers ask. Once per entry.
 */
bool wbguard_untold(struct wbguard *g);

/* wbguard_leave() - a writer admitted by wbguard_admit() is closed. */
void wbguard_leave(struct wbguard *g);

/*
 * wbguard_wrote() - @bytes of cached pages were written back: count
 * them into the rate. Return: true if the free space should be looked
 * at again (wbguard_check()): half the slack of the last look is used
 * up, or 100 ms went by.
 */
bool wbguard_wrote(struct wbguard *g, uint64_t bytes);

/*
 * wbguard_dip() - a written-back request needing about @need bytes
 * found the lower filesystem full: give that much (rounded up to a page,
 * at most what is left) of the reserve back to the filesystem, and enter
 * WBG_REFUSING (*@entered: just now). Return: 0 (try the request
 * again), or -ENOSPC when the reserve is empty.
 */
int wbguard_dip(struct wbguard *g, uint64_t need, bool *entered);

/*
 * wbguard_replan() - the dirty limit in force is @ppm, not the plan's
 * (the daemon could not set its own): size the reserve for it (taken
 * whole or not at all, as at the start). Return: the new mode.
 */
enum wbguard_mode wbguard_replan(struct wbguard *g, uint32_t ppm);

/* wbguard_lost() - count a written-back request that failed after all. */
void wbguard_lost(struct wbguard *g);

/*
 * wbguard_disable() - give up guarding (the dirty limit could not be
 * set): the reserve is emptied, the mode stays WBG_NORMAL.
 */
void wbguard_disable(struct wbguard *g);

/* wbguard_stop() - close the reserve (its space goes back) and @dirfd. */
void wbguard_stop(struct wbguard *g);

#endif /* XTSFS_WBGUARD_H */
