/* SPDX-License-Identifier: Apache-2.0 */
/*
 * files.c - open regular files of the forward mount (mount.h): open and
 * create, read, write, truncate, fallocate, seek, sync. The contents go
 * through content.c under the node's lock: reads shared, every change
 * alone, so a size never shows a half-done write.
 */
#include "mount_int.h"

#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

/* see mount_int.h */
int reopen(const struct xnode *in, int flags)
{
	char path[DIROPS_FD_PATH_SIZE];
	int fd;

	dirops_fd_path(path, in->fd);
	fd = open(path, flags | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/*
 * After a change of ours to regular file @in (under its content lock
 * for writing): record the lower file as we leave it, so that the next
 * open may keep the kernel's page cache (nobody changed the cipher file
 * behind our back), and the loaded header as still the file's at the
 * ctime our change gave it (header_get()).
 */
static void seen_update(struct xnode *in, int fd)
{
	struct stat st;
	bool attrs;

	if (fstat(fd, &st) != 0) {
		seen_forget(in);
		return;
	}
	(void)seen_compare(in, &st, false, 0, &attrs);
	pthread_mutex_lock(&in->meta_lock);
	if (in->hdr_ok)
		in->hdr_ctime = st.st_ctim;
	pthread_mutex_unlock(&in->meta_lock);
}

/*
 * Whether the loaded header of @in is the lower file's as it is now
 * (@st, its fstat): loaded, and the lower ctime not moved since it was
 * read or since our own last change. A lower file rewritten beside the
 * mount (a sync tool writing in place, another mount) may be another
 * file altogether, with another id, and moves the ctime.
 */
static bool header_fresh(struct xnode *in, const struct stat *st)
{
	bool fresh;

	pthread_mutex_lock(&in->meta_lock);
	fresh = in->hdr_ok && ts_same(&in->hdr_ctime, &st->st_ctim);
	pthread_mutex_unlock(&in->meta_lock);
	return fresh;
}

/*
 * Load the header of regular file @in (opened as @fd) unless the loaded
 * one is fresh (header_fresh()) by @now, the file's fstat under the lock
 * (NULL: taken here); make one if the file is empty and @create. The
 * caller holds @in's content lock for writing: no read or write uses
 * the header while it is replaced.
 */
static int header_get(struct xmount *m, struct xnode *in, int fd, bool create,
		      const struct stat *now)
{
	struct stat st;
	int err = 0;

	if (now)
		st = *now;
	else if (fstat(fd, &st) != 0)
		return -errno;
	pthread_mutex_lock(&in->meta_lock);
	if (!in->hdr_ok || !ts_same(&in->hdr_ctime, &st.st_ctim)) {
		in->hdr_ok = false;
		err = content_read_header(fd, m->doff, &in->hdr);
		if (err == -ENODATA && create)
			err = content_init_header(fd, m->doff, &in->hdr);
		if (!err) {
			in->hdr_ok = true;
			/* a header just made moved it: read once more then */
			in->hdr_ctime = st.st_ctim;
		} else if (err == -EIO) {
			xm_log(m, LOG_ERR, "file (lower inode %llu): header "
			       "corrupt or truncated",
			       (unsigned long long)in->node.k2);
		}
	}
	pthread_mutex_unlock(&in->meta_lock);
	return err;
}

/* see mount_int.h */
void header_forget(struct xnode *in)
{
	pthread_rwlock_wrlock(&in->lock); /* no read or write in flight */
	pthread_mutex_lock(&in->meta_lock);
	in->hdr_ok = false;
	pthread_mutex_unlock(&in->meta_lock);
	pthread_rwlock_unlock(&in->lock);
}

/* The plaintext size of lower file @fd; @st (may be NULL) gets its stat. */
static int lower_psize_st(const struct xmount *m, int fd, uint64_t *psize,
			  struct stat *st)
{
	struct stat tmp;
	int64_t ps;

	if (!st)
		st = &tmp;
	if (fstat(fd, st) != 0)
		return -errno;
	ps = content_plain_size(m->doff, (uint64_t)st->st_size);
	if (ps < 0)
		return (int)ps;
	*psize = (uint64_t)ps;
	return 0;
}

static int lower_psize(const struct xmount *m, int fd, uint64_t *psize)
{
	return lower_psize_st(m, fd, psize, NULL);
}

/* see mount_int.h */
int file_truncate(struct xmount *m, struct xnode *in, int fd, uint64_t size)
{
	struct stat st;
	uint64_t ps;
	int err;

	pthread_rwlock_wrlock(&in->lock);
	err = lower_psize_st(m, fd, &ps, &st);
	if (!err && size != ps) {
		err = header_get(m, in, fd, true, &st);
		if (!err)
			err = content_truncate(m->xts, fd, &in->hdr, &ps, size);
		seen_update(in, fd);
	}
	pthread_rwlock_unlock(&in->lock);
	return err;
}

/* Lower open flags for plaintext open flags @flags. */
static int lower_flags(int flags, bool *writable)
{
	int acc = flags & O_ACCMODE;

	*writable = acc != O_RDONLY;
	/*
	 * O_APPEND would make the lower pwrite ignore our offsets; O_TRUNC
	 * would drop the header; writers need to read for partial units.
	 */
	flags &= ~(O_APPEND | O_TRUNC | O_CREAT | O_EXCL | O_NOFOLLOW |
		   O_DIRECT | O_ACCMODE | O_NOCTTY);
	return flags | (*writable ? O_RDWR : O_RDONLY) | O_CLOEXEC;
}

/* The open(2) @flags with O_TRUNC of @in, whose header is loaded. */
static int open_trunc(struct xmount *m, struct xnode *in, int fd,
		      bool writable)
{
	/*
	 * Linux truncates even for O_RDONLY | O_TRUNC (the kernel has
	 * checked write permission): use a writable descriptor then.
	 */
	int wfd = writable ? fd : reopen(in, O_RDWR);
	int err = wfd < 0 ? wfd : file_truncate(m, in, wfd, 0);

	if (!err && !writable) {
		pthread_rwlock_wrlock(&in->lock);
		err = header_get(m, in, wfd, true, NULL);
		pthread_rwlock_unlock(&in->lock);
	}
	if (wfd >= 0 && wfd != fd)
		close(wfd);
	return err;
}

/* A handle of @in on lower descriptor @fd (kept only on success). */
static int handle_open(struct xmount *m, struct xnode *in, int fd, int flags,
		       bool writable, struct xhandle **out, bool *keep_cache)
{
	struct xhandle *h;
	struct stat st;
	bool attrs_same = false;
	bool same = fstat(fd, &st) == 0 &&
		    seen_compare(in, &st, true, 0, &attrs_same);
	int err;

	err = bdi_tune_once(&m->readahead);
	if (err)
		xm_log(m, LOG_INFO, "readahead window left at the kernel "
		       "default: %s", strerror(-err));
	guard_bound(m);
	err = 0;
	/*
	 * A lower file changed behind our back may be a different file
	 * altogether (another id): read its header again, whatever its
	 * ctime says where others write unannounced (a coarse clock,
	 * another machine's). Under the content lock: a read of another
	 * handle may be decrypting with the header.
	 */
	if (!same || m->sharedstorage || !header_fresh(in, &st)) {
		pthread_rwlock_wrlock(&in->lock);
		if (!same || m->sharedstorage) {
			pthread_mutex_lock(&in->meta_lock);
			in->hdr_ok = false;
			pthread_mutex_unlock(&in->meta_lock);
		}
		err = header_get(m, in, fd, writable, NULL);
		pthread_rwlock_unlock(&in->lock);
	}
	if (err == -ENODATA)
		err = 0; /* an empty read-only file: no header needed yet */
	if (!err && (flags & O_TRUNC))
		err = open_trunc(m, in, fd, writable);
	if (err)
		return err;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->fd = fd;
	h->in = in;
	h->m = m;
	h->writable = writable;
	h->wronly = (flags & O_ACCMODE) == O_WRONLY;
	if (writable)
		guard_admit(m, h);
	pthread_mutex_lock(&in->seen_lock);
	in->handles++;
	in->cached_writers += h->cached_writer;
	h->next = in->open;
	if (in->open)
		in->open->prev = h;
	in->open = h;
	pthread_mutex_unlock(&in->seen_lock);
	/*
	 * On storage others write unannounced, the mtime may not move (a
	 * coarse clock, another machine's): trust no cached page there.
	 * Elsewhere a change of the ctime alone (a rename, ours too) drops
	 * the pages but leaves the kernel's attributes.
	 */
	h->changed = !attrs_same || m->sharedstorage;
	*out = h;
	*keep_cache = same && !m->sharedstorage && !(flags & O_TRUNC);
	seen_update(in, fd); /* after our own truncation */
	return 0;
}

/*
 * Whether the lower file of @in has no name left: removed or replaced
 * (renamed over) in the cipher directory behind our back, by another
 * mount or a sync tool. The kernel's entry for it is stale: -ESTALE
 * from open makes the kernel look the name up again (LOOKUP_REVAL) and
 * retry, so that the open finds the file now there, or none. Not while
 * we hold it open: then it is a file removed through this mount and
 * opened again through /proc/PID/fd, which must work.
 */
static bool lower_unlinked(struct xnode *in)
{
	struct stat st;
	bool held;

	pthread_mutex_lock(&in->seen_lock);
	held = in->handles > 0;
	pthread_mutex_unlock(&in->seen_lock);
	return !held && fstat(in->fd, &st) == 0 && st.st_nlink == 0;
}

/*
 * reopen() of a file we hold open, for a lower filesystem that cannot
 * open it again: GlusterFS answers an open of a removed file (through
 * /proc/self/fd, as for a file opened again through /proc/PID/fd of
 * the mount) with ESTALE, as NFS would. A duplicate of an open handle's
 * descriptor with at least the access wanted serves (our I/O is pread
 * and pwrite, so the shared offset does not matter).
 */
static int reopen_held(struct xnode *in, bool writable)
{
	int fd = -ESTALE;

	pthread_mutex_lock(&in->seen_lock);
	for (struct xhandle *h = in->open; h; h = h->next)
		if (h->writable || !writable) {
			fd = fcntl(h->fd, F_DUPFD_CLOEXEC, 0);
			fd = fd < 0 ? -errno : fd;
			break;
		}
	pthread_mutex_unlock(&in->seen_lock);
	return fd;
}

/* see mount.h */
int xm_open(struct xmount *m, const struct caller *who, struct xnode *in,
	    int flags, struct xhandle **h, bool *keep_cache)
{
	bool writable;
	int fd, err;

	if (in->type != S_IFREG)
		return in->type == S_IFDIR ? -EISDIR : -EINVAL;
	if (lower_unlinked(in))
		return -ESTALE;
	for (int tries = 0;; tries++) {
		fd = reopen(in, lower_flags(flags, &writable));
		if (fd == -ESTALE)
			fd = reopen_held(in, writable);
		if (!xm_fd_retry(m, fd, tries))
			break;
	}
	if (fd < 0)
		return fd;
	err = handle_open(m, in, fd, flags, writable, h, keep_cache);
	if (err) {
		close(fd);
		return err;
	}
	if (flags & O_TRUNC)
		kill_priv_fd(who, in, fd);
	return 0;
}

/*
 * Open or make the lower file @ln of @dir for xm_create(): the
 * descriptor, *@made whether we made it.
 */
static int create_lower(const struct caller *who, struct xnode *dir,
			const struct lname *ln, mode_t mode, int flags,
			bool *made)
{
	bool writable;
	int lflags = (lower_flags(flags, &writable) & ~O_ACCMODE) | O_RDWR |
		     O_NOFOLLOW;
	/* know whether we made the file, to remove it if the rest fails */
	int fd = openat(dir->fd, ln->stored, lflags | O_CREAT | O_EXCL,
			mode & 07777);
	struct stat st;

	*made = fd >= 0;
	/*
	 * GlusterFS makes files without the set-id bits asked for: put
	 * back only those (the rest may come from a default ACL)
	 */
	if (fd >= 0 && (mode & 06000) && fstat(fd, &st) == 0 &&
	    (mode & 06000 & ~st.st_mode))
		(void)fchmod(fd, (st.st_mode & 07777) | (mode & 06000));
	if (fd >= 0 || errno != EEXIST || (flags & O_EXCL))
		return fd < 0 ? -errno : fd;
	/*
	 * The kernel thought the name absent (a stale negative entry), so
	 * it checked nothing of the file that is there: check the caller's
	 * access to it before opening it as root.
	 */
	fd = openat(dir->fd, ln->stored, lflags);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) != 0 || !caller_may_open(who, &st, flags)) {
		close(fd);
		return -EACCES;
	}
	return fd;
}

/* see mount.h */
int xm_create(struct xmount *m, const struct caller *who, struct xnode *dir,
	      const char *name, mode_t mode, int flags, struct xnode **out,
	      struct stat *st, struct xhandle **h, bool *keep_cache)
{
	struct lname ln;
	bool made = false;
	int fd, err;

	err = name_enc(m, dir, name, &ln);
	if (!err)
		err = dirops_sidecar_make(&m->dops, dir->fd, &ln);
	if (err)
		return err;
	notify_own(m, dir, ln.stored, 1); /* its event is ours */
	for (int tries = 0;; tries++) {
		fd = create_lower(who, dir, &ln,
				  create_mode(m, who, dir->fd, mode), flags,
				  &made);
		if (made || !xm_fd_retry(m, fd, tries))
			break;
	}
	if (!made)
		notify_own(m, dir, ln.stored, -1); /* none: it was there */
	if (fd < 0) {
		if (fd != -EEXIST)
			dirops_sidecar_drop(dir->fd, &ln);
		return fd;
	}
	if (made)
		own_by_caller(who, dir->fd, ln.stored, S_IFREG | mode);
	err = xm_lookup_stored(m, dir, ln.stored, 0, out, st);
	if (err) {
		if (made)
			dirops_undo_make(dir->fd, &ln, false);
		close(fd);
		return err;
	}
	err = handle_open(m, *out, fd, flags, true, h, keep_cache);
	if (err) {
		xm_forget(m, *out, 1);
		*out = NULL;
		if (made) { /* e.g. no space for the header: leave nothing */
			unlinkat(dir->fd, ln.stored, 0);
			dirops_sidecar_drop(dir->fd, &ln);
		}
		close(fd);
		return err;
	}
	if (!made && (flags & O_TRUNC))
		kill_priv_fd(who, *out, fd);
	/* the header was just written: report the (empty) size again */
	(void)xm_getattr(m, *out, st);
	return 0;
}

/* see mount.h */
ssize_t xm_read(struct xmount *m, struct xhandle *h, size_t size, off_t off,
		const uint8_t **data)
{
	struct xnode *in = h->in;
	struct stat st;
	uint8_t *buf;
	uint64_t ps = 0;
	ssize_t n;
	int err;

	*data = NULL;
	pthread_rwlock_rdlock(&in->lock);
	err = lower_psize_st(m, h->fd, &ps, &st);
	if (!err && ps > 0 && !header_fresh(in, &st)) {
		/*
		 * Not loaded, or the lower file changed beside us since (no
		 * OPEN need come before a read: -o noopen, a handle held
		 * open): load it while no read decrypts with it.
		 */
		pthread_rwlock_unlock(&in->lock);
		pthread_rwlock_wrlock(&in->lock);
		err = header_get(m, in, h->fd, false, NULL);
		pthread_rwlock_unlock(&in->lock);
		pthread_rwlock_rdlock(&in->lock);
		if (!err)
			err = lower_psize(m, h->fd, &ps);
	}
	if (err) {
		pthread_rwlock_unlock(&in->lock);
		if (err == -EIO)
			xm_log(m, LOG_ERR, "file (lower inode %llu): too short "
			       "for its header", (unsigned long long)in->node.k2);
		return err;
	}
	if ((uint64_t)off >= ps) {
		pthread_rwlock_unlock(&in->lock);
		return 0;
	}
	buf = scratch_get(SCRATCH_REPLY, size);
	if (!buf) {
		pthread_rwlock_unlock(&in->lock);
		return -ENOMEM;
	}
	n = content_read(m->xts, h->fd, &in->hdr, ps, buf, size, (uint64_t)off);
	pthread_rwlock_unlock(&in->lock);
	if (n == -EIO)
		xm_log(m, LOG_ERR, "file (lower inode %llu): corrupt data near "
		       "offset %lld", (unsigned long long)in->node.k2,
		       (long long)off);
	if (n >= 0)
		*data = buf;
	return n;
}

/*
 * With the writeback cache the kernel owns the mtime of regular files and
 * sends it to us (setattr) when it flushes; a WRITE it sends may carry
 * data dirtied before a later utimensat(), so our own pwrite must not
 * move the lower mtime: put back the one it had.
 */
static void keep_mtime(const struct xmount *m, int fd,
		       const struct stat *before)
{
	struct timespec tv[2] = { { 0, UTIME_OMIT }, before->st_mtim };

	if (m->writeback_on)
		(void)futimens(fd, tv);
}

/* One content_write() of xm_write(), to be redone by guard_cover(). */
struct wr_args {
	struct xmount *m;
	struct xhandle *h;
	uint64_t *ps;
	const uint8_t *buf;
	size_t size;
	off_t off;
};

static ssize_t wr_once(void *arg)
{
	struct wr_args *a = arg;

	return content_write(a->m->xts, a->h->fd, &a->h->in->hdr, a->ps,
			     a->buf, a->size, (uint64_t)a->off,
			     a->m->write_flags);
}

/* see mount.h */
ssize_t xm_write(struct xmount *m, const struct caller *who, struct xhandle *h,
		 const uint8_t *buf, size_t size, off_t off, bool writeback,
		 bool *mode_changed, bool *refusing)
{
	struct xnode *in = h->in;
	struct stat before;
	struct wr_args a = { m, h, NULL, buf, size, off };
	uint64_t ps;
	ssize_t n;
	int err;

	*mode_changed = false;
	*refusing = false;
	a.ps = &ps;
	pthread_rwlock_wrlock(&in->lock);
	err = lower_psize_st(m, h->fd, &ps, &before);
	if (!err)
		err = header_get(m, in, h->fd, true, &before);
	if (err) {
		pthread_rwlock_unlock(&in->lock);
		return err;
	}
	*mode_changed = kill_priv(who, in, before.st_mode, before.st_gid);
	n = wr_once(&a);
	/*
	 * Pages a program was told it wrote: the reserve holds room for
	 * them. Other writes (bypassing the cache, O_DIRECT) get ENOSPC.
	 */
	if (n == -ENOSPC && writeback && guard_on(m))
		n = guard_cover(m, n, size, wr_once, &a);
	else if (n > 0 && writeback && guard_on(m) &&
		 wbguard_wrote(m->guard, (uint64_t)n))
		(void)guard_check(m);
	/* a refusal begun here or anywhere since: cached writers must ask */
	if (writeback && guard_on(m))
		*refusing = wbguard_untold(m->guard);
	keep_mtime(m, h->fd, &before);
	seen_update(in, h->fd);
	pthread_rwlock_unlock(&in->lock);
	return n;
}

/* see mount.h */
int xm_flush(struct xmount *m, struct xhandle *h)
{
	int fd;

	/*
	 * Close-to-open on shared storage: what was written is on the
	 * lower filesystem's server before close(2) returns, as NFS does
	 * at close, for the next open elsewhere to read. Our lower file is
	 * closed only at RELEASE, which the kernel sends after close(2)
	 * returned.
	 */
	if (m->sharedstorage && h->writable && fdatasync(h->fd) != 0)
		return -errno;
	/* close() of a dup reports delayed write errors of NFS and the like */
	fd = dup(h->fd);
	if (fd < 0)
		return -errno;
	return close(fd) ? -errno : 0;
}

/* see mount.h */
int xm_flock(struct xhandle *h, int op)
{
	return flock(h->fd, op | LOCK_NB) ? -errno : 0;
}

/*
 * Make @h (just made, not in use) @in's handle without OPEN, or close it
 * if @in has one already (another request opened it first). Return:
 * @in's handle, taken for a request if @take.
 */
static struct xhandle *bare_set(struct xnode *in, struct xhandle *h,
				bool take)
{
	struct xhandle *got;

	pthread_mutex_lock(&in->seen_lock);
	if (!in->bare) {
		in->bare = h;
		h = NULL;
	}
	got = in->bare;
	got->users += take;
	pthread_mutex_unlock(&in->seen_lock);
	if (h) {
		close(h->fd);
		free(h);
	}
	return got;
}

/* see mount.h */
int xm_bare(struct xmount *m, struct xnode *in, struct xhandle **h)
{
	struct xhandle *nh;
	int fd;

	if (in->type != S_IFREG)
		return -EBADF;
	pthread_mutex_lock(&in->seen_lock);
	*h = in->bare;
	if (*h)
		(*h)->users++;
	pthread_mutex_unlock(&in->seen_lock);
	if (*h)
		return 0;
	for (int tries = 0;; tries++) {
		fd = reopen(in, O_RDWR);
		/* a lower file we may not write (read-only filesystem) */
		if (fd == -EACCES || fd == -EROFS || fd == -EPERM ||
		    fd == -ETXTBSY)
			fd = reopen(in, O_RDONLY);
		if (!xm_fd_retry(m, fd, tries))
			break;
	}
	if (fd < 0)
		return fd;
	nh = calloc(1, sizeof(*nh));
	if (!nh) {
		close(fd);
		return -ENOMEM;
	}
	nh->fd = fd;
	nh->in = in;
	nh->m = m;
	nh->writable = (fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDWR;
	nh->bare = true;
	*h = bare_set(in, nh, true);
	return 0;
}

/* see mount.h */
void xm_bare_put(struct xhandle *h)
{
	if (h && h->bare) {
		pthread_mutex_lock(&h->in->seen_lock);
		h->users--;
		pthread_mutex_unlock(&h->in->seen_lock);
	}
}

/* see mount_int.h */
void bare_free(struct xnode *in)
{
	if (in->bare) {
		close(in->bare->fd);
		free(in->bare);
		in->bare = NULL;
	}
}

/* see mount_int.h */
size_t bare_reclaim(struct xmount *m)
{
	size_t got, closed = 0;
	struct itable_node **all = node_snapshot(m, &got);

	if (!all)
		return 0;
	for (size_t i = 0; i < got; i++) {
		struct xnode *in = node_snap(all, i);
		struct xhandle *h = NULL;

		pthread_mutex_lock(&in->seen_lock);
		if (in->bare && in->bare->users == 0) {
			h = in->bare; /* a new user must take the lock first */
			in->bare = NULL;
		}
		pthread_mutex_unlock(&in->seen_lock);
		if (h) {
			close(h->fd);
			free(h);
			closed++;
		}
	}
	node_snapshot_drop(m, all, got);
	return closed;
}

/* Take @h off its node's and its mount's lists of open handles. */
static void handle_unlist(struct xhandle *h)
{
	struct xmount *m = h->m;

	guard_leave(m, h);
	pthread_mutex_lock(&h->in->seen_lock);
	h->in->handles--;
	h->in->cached_writers -= h->cached_writer;
	if (h->prev)
		h->prev->next = h->next;
	else
		h->in->open = h->next;
	if (h->next)
		h->next->prev = h->prev;
	h->prev = h->next = NULL;
	h->cached_writer = false;
	pthread_mutex_unlock(&h->in->seen_lock);
}

/* see mount.h */
void xm_release(struct xhandle *h)
{
	handle_unlist(h);
	close(h->fd);
	free(h);
}

/* see mount.h */
void xm_bare_adopt(struct xhandle *h)
{
	handle_unlist(h);
	h->bare = true;
	(void)bare_set(h->in, h, false);
}

/* see mount.h */
int xm_fsync(struct xmount *m, int fd, bool datasync)
{
	int rc = durable_barrier(&m->durable);

	if (!rc)
		rc = (datasync ? fdatasync(fd) : fsync(fd)) ? -errno : 0;
	return rc;
}

/* see mount.h */
int xm_fallocate(struct xmount *m, struct xhandle *h, int mode, off_t off,
		 off_t len)
{
	struct xnode *in = h->in;
	struct stat st;
	uint64_t ps;
	int err;

	if (off < 0 || len <= 0)
		return -EINVAL;
	pthread_rwlock_wrlock(&in->lock);
	err = lower_psize_st(m, h->fd, &ps, &st);
	if (!err)
		err = header_get(m, in, h->fd, true, &st);
	if (!err)
		err = content_fallocate(m->xts, h->fd, &in->hdr, &ps, mode,
					(uint64_t)off, (uint64_t)len);
	seen_update(in, h->fd);
	pthread_rwlock_unlock(&in->lock);
	return err;
}

/* see mount.h */
int64_t xm_lseek(struct xmount *m, struct xhandle *h, off_t off, int whence)
{
	struct xnode *in = h->in;
	uint64_t ps;
	int64_t r;
	int err;

	(void)m;
	if (whence != SEEK_DATA && whence != SEEK_HOLE)
		return -EINVAL;
	if (off < 0)
		return -ENXIO;
	pthread_rwlock_rdlock(&in->lock);
	err = lower_psize(m, h->fd, &ps);
	r = err ? err : content_seek(h->fd, m->doff, ps, (uint64_t)off, whence);
	pthread_rwlock_unlock(&in->lock);
	return r;
}
