/* SPDX-License-Identifier: Apache-2.0 */
/*
 * guard.c - the forward mount's side of the writeback guard (wbguard.h
 * keeps the reserve and decides the mode): starting it, admitting and
 * letting go the handles that write through the kernel's cache, dipping
 * into the reserve when a written-back write finds the disk full, and
 * the log lines of each change of mode.
 */
#include "mount_int.h"

#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

/* see mount_int.h */
bool guard_on(const struct xmount *m)
{
	return m->guard && !atomic_load(&m->guard->off);
}

/*
 * The log line of a change of the guard's mode from @old to @mode (the
 * guard's lock not held: its numbers are read under it).
 */
static void guard_said(struct xmount *m, enum wbguard_mode old,
		       enum wbguard_mode mode)
{
	struct wbguard *g = m->guard;
	unsigned long long held, rate;
	unsigned writers;
	bool dipped;

	if (mode == old)
		return;
	pthread_mutex_lock(&g->lock);
	dipped = g->short_since;
	held = g->reserved / 1024;
	rate = g->rate / 1000000;
	writers = g->writers;
	pthread_mutex_unlock(&g->lock);
	if (mode == WBG_REFUSING && dipped)
		xm_log(m, LOG_WARNING, "writeback guard: the cipher "
		       "directory's filesystem is full: dirty pages go to the "
		       "reserve (%llu KiB left); writes through files opened "
		       "before are refused (ENOSPC), new opens write through",
		       held);
	else if (mode == WBG_REFUSING)
		xm_log(m, LOG_WARNING, "writeback guard: the cipher "
		       "directory's filesystem has too little space left for "
		       "the reserve that %u writers through the cache at up "
		       "to %llu MB/s need (%llu KiB held): their writes are "
		       "refused (ENOSPC), new opens write through", writers,
		       rate, held);
	else if (old == WBG_REFUSING)
		xm_log(m, LOG_NOTICE, "writeback guard: space again, the "
		       "reserve is whole: writes through the cache resume%s",
		       mode == WBG_LOW ? " (new opens still write through)" :
		       "");
}

/* see mount_int.h */
enum wbguard_mode guard_check(struct xmount *m)
{
	enum wbguard_mode old = atomic_load(&m->guard->mode), mode;
	bool entered;

	mode = wbguard_check(m->guard, &entered);
	guard_said(m, old, mode);
	return mode;
}

/* see mount_int.h */
void guard_bound(struct xmount *m)
{
	struct wbguard *g = m->guard;
	unsigned ppm = m->readahead.dirty_ppm_now;
	int err = m->readahead.dirty_err;

	if (!guard_on(m))
		return;
	if (err) {
		wbguard_disable(g);
		xm_log(m, LOG_WARNING, "writeback guard off: no strict dirty "
		       "limit on the mount (/sys/class/bdi/.../max_ratio_fine, "
		       "strict_limit: %s): a full disk shows only at fsync or "
		       "close", strerror(-err));
		return;
	}
	if (ppm == g->plan.dirty_ppm)
		return;
	(void)wbguard_replan(g, ppm);
	xm_log(m, LOG_NOTICE, "writeback guard: the mount's dirty limit is "
	       "%u ppm of the global one (not ours: not root?): at most "
	       "%llu KiB dirty, %llu KiB reserved (%llu KiB held now)", ppm,
	       (unsigned long long)g->plan.dirty_max / 1024,
	       (unsigned long long)g->plan.reserve / 1024,
	       (unsigned long long)g->reserved / 1024);
}

/* see mount.h */
int xm_guard_start(struct xmount *m)
{
	struct wbguard *g;
	uint64_t limit;
	int fd, err;

	if (!m->writeback_on || !m->wbguard || m->readonly)
		return 0;
	err = bdi_limit_max(&limit);
	if (err)
		goto out;
	fd = openat(m->root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	g = calloc(1, sizeof(*g));
	if (!g) {
		close(fd);
		err = -ENOMEM;
		goto out;
	}
	err = wbguard_start(g, fd, limit);
	if (err) {
		free(g);
		goto out;
	}
	m->guard = g;
	m->readahead.dirty_ppm = g->plan.dirty_ppm;
	xm_log(m, LOG_INFO, "writeback guard: at most %llu KiB dirty, %llu KiB "
	       "reserved in the cipher directory (%llu KiB held now)",
	       (unsigned long long)g->plan.dirty_max / 1024,
	       (unsigned long long)g->plan.reserve / 1024,
	       (unsigned long long)g->reserved / 1024);
	if (atomic_load(&g->mode) != WBG_NORMAL)
		xm_log(m, LOG_NOTICE, "writeback guard: less than %llu KiB "
		       "free: files are opened without the writeback cache "
		       "until there is",
		       (unsigned long long)(g->plan.reserve + g->plan.low) /
		       1024);
	return 0;
out:
	xm_log(m, LOG_WARNING, "writeback guard off: %s: a full disk shows "
	       "only at fsync or close", err == -EOPNOTSUPP ?
	       "the cipher directory's filesystem has no O_TMPFILE or "
	       "fallocate" : strerror(-err));
	return err;
}

/* see mount.h */
bool xm_guard_refuses(struct xmount *m, struct xhandle *h)
{
	if (!h->cached_writer || !guard_on(m) ||
	    atomic_load(&m->guard->mode) != WBG_REFUSING ||
	    guard_check(m) != WBG_REFUSING)
		return false;
	/* expired: a read or lseek may be asking; let it through */
	if (!h->wronly && !xm_told_fresh(h->in))
		return false;
	atomic_fetch_add(&m->guard->refused, 1);
	return true;
}

/* see mount.h */
bool xm_guard_watch(struct xmount *m, struct xnode *in)
{
	bool watch;

	if (!m->guard || atomic_load(&m->guard->mode) != WBG_REFUSING ||
	    in->type != S_IFREG)
		return false;
	pthread_mutex_lock(&in->seen_lock);
	watch = in->cached_writers > 0;
	pthread_mutex_unlock(&in->seen_lock);
	return watch;
}

/* see mount.h */
void xm_guard_each_writer(struct xmount *m,
			  void (*fn)(void *arg, struct xnode *in), void *arg)
{
	pthread_mutex_lock(&m->writers_lock);
	for (struct xhandle *h = m->writers; h; h = h->wnext)
		fn(arg, h->in);
	pthread_mutex_unlock(&m->writers_lock);
}

/* see mount_int.h */
ssize_t guard_cover(struct xmount *m, ssize_t n, size_t size,
		    ssize_t (*w)(void *), void *arg)
{
	enum wbguard_mode old;
	bool entered;

	while (n == -ENOSPC) {
		old = atomic_load(&m->guard->mode);
		/*
		 * @size bytes of units 40 bytes off the lower blocks (the
		 * compact layout) touch one block more, a tail slot one
		 * more; again if not enough
		 */
		if (wbguard_dip(m->guard, (uint64_t)size + 8192,
				&entered) != 0) {
			wbguard_lost(m->guard);
			xm_log(m, LOG_ERR, "writeback guard: the reserve is "
			       "used up: a written-back write of %zu bytes "
			       "failed (No space left on device; fsync or "
			       "close reports it)", size);
			break;
		}
		guard_said(m, old, WBG_REFUSING);
		n = w(arg);
	}
	/* what it was given and did not need goes back to the reserve */
	(void)guard_check(m);
	return n;
}

/* see mount_int.h */
void guard_admit(struct xmount *m, struct xhandle *h)
{
	enum wbguard_mode old;

	if (!guard_on(m))
		return;
	old = atomic_load(&m->guard->mode);
	/*
	 * Should this look begin a refusal (a race with the rate a
	 * written-back write just raised), that write tells the cached
	 * writers (wbguard_untold())
	 */
	h->cached_writer = wbguard_admit(m->guard);
	h->direct = !h->cached_writer;
	guard_said(m, old, atomic_load(&m->guard->mode));
	if (!h->cached_writer)
		return;
	pthread_mutex_lock(&m->writers_lock);
	h->wnext = m->writers;
	if (m->writers)
		m->writers->wprev = h;
	m->writers = h;
	pthread_mutex_unlock(&m->writers_lock);
}

/* see mount_int.h */
void guard_leave(struct xmount *m, struct xhandle *h)
{
	if (!h->cached_writer)
		return;
	if (m->guard)
		wbguard_leave(m->guard);
	pthread_mutex_lock(&m->writers_lock);
	if (h->wprev)
		h->wprev->wnext = h->wnext;
	else
		m->writers = h->wnext;
	if (h->wnext)
		h->wnext->wprev = h->wprev;
	pthread_mutex_unlock(&m->writers_lock);
}
