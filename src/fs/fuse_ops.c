/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuse_ops.c - the forward mount's FUSE low-level operations: each
 * handler decodes a request, calls the core (mount.h) and replies
 * exactly once. What is FUSE's alone stays here: node ids, the entry
 * and attribute timeouts, the caller's credentials, open-file flags for
 * the kernel, notifications and the reply formats.
 */
#include "fuse_kabi.h"
#include "fwd.h"

#include "scratch.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/uio.h>
#include <syslog.h>

/* xm_setattr() takes FUSE's bits as they are. */
_Static_assert(XM_SET_MODE == FUSE_SET_ATTR_MODE &&
	       XM_SET_UID == FUSE_SET_ATTR_UID &&
	       XM_SET_GID == FUSE_SET_ATTR_GID &&
	       XM_SET_SIZE == FUSE_SET_ATTR_SIZE &&
	       XM_SET_ATIME == FUSE_SET_ATTR_ATIME &&
	       XM_SET_MTIME == FUSE_SET_ATTR_MTIME &&
	       XM_SET_ATIME_NOW == FUSE_SET_ATTR_ATIME_NOW &&
	       XM_SET_MTIME_NOW == FUSE_SET_ATTR_MTIME_NOW,
	       "XM_SET_* must equal FUSE_SET_ATTR_*");

/*
 * Seconds the kernel may keep a name's absence (at most entry_timeout)
 * in a directory the change notifier does not watch.
 */
#define NEG_TIMEOUT 1.0

static struct fwd *fwd_of(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

static struct xmount *mnt_of(fuse_req_t req)
{
	return &fwd_of(req)->m;
}

static struct xnode *node_of(fuse_req_t req, fuse_ino_t ino)
{
	return ino == FUSE_ROOT_ID ? mnt_of(req)->root :
	       (struct xnode *)(uintptr_t)ino;
}

static struct xhandle *handle_of(const struct fuse_file_info *fi)
{
	return (struct xhandle *)(uintptr_t)fi->fh;
}

/*
 * The handle of a file request on @ino: the one its OPEN or CREATE gave,
 * or, for a file opened without OPEN (skip_open(): handle 0), the
 * node's own (xm_bare()), to give back with xm_bare_put(); NULL with
 * *@err.
 */
static struct xhandle *io_handle(fuse_req_t req, fuse_ino_t ino,
				 const struct fuse_file_info *fi, int *err)
{
	struct xhandle *h = handle_of(fi);

	*err = h ? 0 : xm_bare(mnt_of(req), node_of(req, ino), &h);
	return *err ? NULL : h;
}

static struct xdir *dir_of(const struct fuse_file_info *fi)
{
	return (struct xdir *)(uintptr_t)fi->fh;
}

static int caller_groups(void *arg, int size, gid_t *list)
{
	return fuse_req_getgroups(arg, size, list);
}

/* The caller of @req, for the permission rules the core applies. */
static struct caller caller_of(fuse_req_t req)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	struct caller who = { ctx->uid, ctx->gid,
			      mnt_of(req)->acl ? ctx->umask : 0,
			      caller_groups, req };

	return who;
}

/*
 * Whether OPENDIR is answered ENOSYS, so that the kernel skips OPENDIR
 * and RELEASEDIR for the rest of the mount and keeps every listing
 * (fs/fuse/file.c, fuse_do_open(): no_opendir, FOPEN_KEEP_CACHE |
 * FOPEN_CACHE_DIR). Only where the change notifier runs: a listing is
 * then dropped when the kernel changes the directory itself (its
 * iversion), when the notifier tells it of a name changed beside us, or,
 * in a directory the notifier could not watch, when its mtime moved
 * (attributes of such directories live NEG_TIMEOUT). Not with
 * sharedstorage: others' changes raise no event there, and each opendir
 * must look at the lower directory (xm_opendir()). Nor on a lower
 * filesystem whose listing positions are not known to hold across opens
 * (xm_init(): local filesystems only; a READDIR without OPENDIR opens the
 * lower directory anew at each call).
 */
static bool skip_opendir(const struct xmount *m)
{
	return m->notify && !m->dir_handles && !m->sharedstorage &&
	       m->dir_offsets_stable;
}

/*
 * Whether OPEN of regular files is answered ENOSYS likewise (-o noopen):
 * the kernel then skips OPEN and RELEASE of every file it opens for the
 * rest of the mount (and RELEASE of those it creates: fwd_create() gives
 * them handle 0 too), keeps their pages
 * (FOPEN_KEEP_CACHE), and sends their I/O with handle 0, which the
 * node's own handle serves (xm_bare()). Where OPENDIR is skipped (the
 * notifier tells the kernel of changes beside the mount; never with
 * sharedstorage, the only mounts that take locks, so that lock requests
 * always come with a handle), and not with the writeback guard, which
 * counts the handles that write.
 */
static bool skip_open(const struct xmount *m)
{
	return m->noopen && skip_opendir(m) && !m->guard;
}

/* Seconds the kernel may keep @in's attributes. */
static double attr_ttl(struct xmount *m, struct xnode *in)
{
	/*
	 * Without OPENDIR, a kept listing is checked against the mtime
	 * only (at position 0, fuse_readdir_cached()), and only once the
	 * attributes expired.
	 */
	if (in->type == S_IFDIR && m->attr_timeout > NEG_TIMEOUT &&
	    skip_opendir(m) && !xm_notify_covers(m, in))
		return NEG_TIMEOUT;
	return m->attr_timeout;
}

/*
 * The entry for node @in with attributes @st (one reference), kept by
 * the kernel @attr_timeout seconds (attr_ttl(), give_timeout()).
 */
static void fill_entry(struct fuse_entry_param *e, const struct xmount *m,
		       struct xnode *in, const struct stat *st,
		       double attr_timeout)
{
	memset(e, 0, sizeof(*e));
	e->ino = (fuse_ino_t)(uintptr_t)in;
	e->attr = *st;
	e->attr_timeout = attr_timeout;
	e->entry_timeout = m->entry_timeout;
}

/*
 * How a reply gives the kernel attributes of @in while the writeback
 * guard refuses cached writes and @in has handles writing through the
 * cache (xm_guard_watch()): their next write must find the attributes
 * invalid and ask (fwd_getattr), whatever else asks meanwhile (a stat,
 * a lookup, a setattr).
 * - GIVE_PLAIN: no guard to keep; the mount's attribute timeout.
 * - GIVE_DROPPED: the kernel's copy has not expired: invalidated now,
 *   before the reply, so that the kernel drops the reply's attributes
 *   (fs/fuse/inode.c, fuse_change_attributes_i: attr_version) and keeps
 *   its expiry; the caller still gets them.
 * - GIVE_LONG: the kernel's copy expired (or @applied: a setattr reply,
 *   which the kernel applies whatever its attr_version): given with
 *   GUARD_ATTR_TIMEOUT and invalidated right after the reply, so that
 *   from then on the kernel's copy never expires during the refusal,
 *   and a read or lseek (which ask for the size alone) never asks.
 *   A write racing that invalidation can still get through, once.
 */
enum give { GIVE_PLAIN, GIVE_DROPPED, GIVE_LONG };

#define GUARD_ATTR_TIMEOUT 86400.0

static enum give guard_give(struct fwd *f, struct xnode *in, bool applied)
{
	fuse_ino_t ino = (fuse_ino_t)(uintptr_t)in;

	if (!f->se || in == f->m.root || !xm_guard_watch(&f->m, in))
		return GIVE_PLAIN;
	if (!applied && xm_told_fresh(in)) {
		(void)fuse_lowlevel_notify_inval_inode(f->se, ino, -1, 0);
		return GIVE_DROPPED;
	}
	return GIVE_LONG;
}

/* The attribute timeout of a reply about @in given as @how. */
static double give_timeout(struct fwd *f, struct xnode *in, enum give how)
{
	return how == GIVE_LONG ? GUARD_ATTR_TIMEOUT : attr_ttl(&f->m, in);
}

/*
 * After the reply (@f taken before it: the reply frees the request):
 * what the kernel keeps (@ttl, the reply's give_timeout()), and the
 * invalidation of GIVE_LONG.
 */
static void given(struct fwd *f, struct xnode *in, enum give how,
		  double ttl)
{
	if (how != GIVE_DROPPED)
		xm_told_until(in, ttl);
	if (how == GIVE_LONG)
		(void)fuse_lowlevel_notify_inval_inode(f->se,
				(fuse_ino_t)(uintptr_t)in, -1, 0);
}

/* Reply to a request that made or found @in, or failed with @err. */
static void reply_entry(fuse_req_t req, int err, struct xnode *in,
			const struct stat *st)
{
	struct fwd *f = fwd_of(req);
	struct fuse_entry_param e;
	enum give how;

	if (err) {
		fuse_reply_err(req, -err);
		return;
	}
	how = guard_give(f, in, false);
	fill_entry(&e, &f->m, in, st, give_timeout(f, in, how));
	xm_told(in, st);
	fuse_reply_entry(req, &e);
	given(f, in, how, e.attr_timeout);
}

/* ---- nodes -------------------------------------------------------------- */

static void fwd_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct xmount *m = mnt_of(req);
	struct xnode *dir = node_of(req, parent), *in;
	struct stat st;
	int err = xm_lookup(m, dir, name, &in, &st);

	if (err == -ENOENT) {
		/*
		 * A negative entry. Where the notifier watches the directory,
		 * a name made beside the mount (another mount, a sync tool)
		 * is told to the kernel, which drops the entry then: it may
		 * stay as long as any (rsync looks a name up again at the
		 * rename that makes it). Elsewhere it is cached at most
		 * NEG_TIMEOUT, so that such a name shows soon. A name we make
		 * replaces its negative entry anyway.
		 */
		struct fuse_entry_param e = {
			.entry_timeout = m->entry_timeout < NEG_TIMEOUT ||
						 xm_notify_covers(m, dir) ?
					 m->entry_timeout : NEG_TIMEOUT,
		};

		fuse_reply_entry(req, &e);
		return;
	}
	reply_entry(req, err, in, &st);
}

static void fwd_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	xm_forget(mnt_of(req), node_of(req, ino), nlookup);
	fuse_reply_none(req);
}

static void fwd_forget_multi(fuse_req_t req, size_t count,
			     struct fuse_forget_data *forgets)
{
	for (size_t i = 0; i < count; i++)
		xm_forget(mnt_of(req), node_of(req, forgets[i].ino),
			  forgets[i].nlookup);
	fuse_reply_none(req);
}

/* @applied: a setattr's reply (guard_give()). */
static void reply_attr(fuse_req_t req, struct xnode *in, int err,
		       const struct stat *st, bool applied)
{
	struct fwd *f = fwd_of(req);
	enum give how;
	double ttl;

	if (err) {
		fuse_reply_err(req, -err);
		return;
	}
	how = guard_give(f, in, applied);
	ttl = give_timeout(f, in, how);
	xm_told(in, st);
	fuse_reply_attr(req, st, ttl);
	given(f, in, how, ttl);
}

/*
 * With the writeback cache, the kernel asks for the attributes with a
 * file handle (FUSE_GETATTR_FH) before a write(2) into its cache when
 * the mode it holds is invalid (fs/fuse/file.c, fuse_cache_write_iter:
 * fuse_update_attributes(..., STATX_SIZE | STATX_MODE)), and an error
 * here fails that write(2) before it copies a byte. So while the
 * writeback guard's reserve is in use, such a write is refused with
 * ENOSPC (xm_guard_refuses() tells a write's request from a read's);
 * stat(2) and fstat(2) ask without a handle (fs/fuse/dir.c,
 * fuse_getattr) and are answered.
 */
static void fwd_getattr(fuse_req_t req, fuse_ino_t ino,
			struct fuse_file_info *fi)
{
	struct xmount *m = mnt_of(req);
	struct xnode *in = node_of(req, ino);
	struct stat st;

	if (fi && m->guard && xm_guard_refuses(m, handle_of(fi))) {
		fuse_reply_err(req, ENOSPC);
		return;
	}
	reply_attr(req, in, xm_getattr(m, in, &st), &st, false);
}

static void fwd_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
			int valid, struct fuse_file_info *fi)
{
	struct caller who = caller_of(req);
	struct xnode *in = node_of(req, ino);
	struct stat st;
	int err = xm_setattr(mnt_of(req), &who, in, attr, valid,
			     fi ? handle_of(fi) : NULL, &st);

	reply_attr(req, in, err, &st, true);
}

static void fwd_readlink(fuse_req_t req, fuse_ino_t ino)
{
	char out[4096];
	int err = xm_readlink(mnt_of(req), node_of(req, ino), out);

	if (err)
		fuse_reply_err(req, -err);
	else
		fuse_reply_readlink(req, out);
}

/*
 * access(2) and chdir, asked only without default_permissions, when the
 * mounting user alone uses the mount: the lower object answers for that
 * user (the daemon's own credentials), modes being the same there.
 */
static void fwd_access(fuse_req_t req, fuse_ino_t ino, int mask)
{
	fuse_reply_err(req, -xm_access(mnt_of(req), node_of(req, ino), mask));
}

static void fwd_statfs(fuse_req_t req, fuse_ino_t ino)
{
	(void)ino;
	glue_reply_statfs(req, mnt_of(req)->root_fd);
}

/* ---- entries ------------------------------------------------------------ */

static void fwd_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name,
		      mode_t mode)
{
	struct caller who = caller_of(req);
	struct xnode *in;
	struct stat st;
	int err = xm_mkdir(mnt_of(req), &who, node_of(req, parent), name, mode,
			   &in, &st);

	reply_entry(req, err, in, &st);
}

static void fwd_mknod(fuse_req_t req, fuse_ino_t parent, const char *name,
		      mode_t mode, dev_t rdev)
{
	struct caller who = caller_of(req);
	struct xnode *in;
	struct stat st;
	int err = xm_mknod(mnt_of(req), &who, node_of(req, parent), name, mode,
			   rdev, &in, &st);

	reply_entry(req, err, in, &st);
}

static void fwd_symlink(fuse_req_t req, const char *target, fuse_ino_t parent,
			const char *name)
{
	struct caller who = caller_of(req);
	struct xnode *in;
	struct stat st;
	int err = xm_symlink(mnt_of(req), &who, node_of(req, parent), name,
			     target, &in, &st);

	reply_entry(req, err, in, &st);
}

static void fwd_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent,
		     const char *newname)
{
	struct xnode *in;
	struct stat st;
	int err = xm_link(mnt_of(req), node_of(req, ino),
			  node_of(req, newparent), newname, &in, &st);

	reply_entry(req, err, in, &st);
}

static void fwd_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct caller who = caller_of(req);

	fuse_reply_err(req, -xm_unlink(mnt_of(req), &who, node_of(req, parent),
				       name));
}

static void fwd_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct caller who = caller_of(req);

	fuse_reply_err(req, -xm_rmdir(mnt_of(req), &who, node_of(req, parent),
				      name));
}

static void fwd_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
		       fuse_ino_t newparent, const char *newname,
		       unsigned int flags)
{
	struct caller who = caller_of(req);

	fuse_reply_err(req, -xm_rename(mnt_of(req), &who, node_of(req, parent),
				       name, node_of(req, newparent), newname,
				       flags));
}

/*
 * Make the kernel forget @ino's cached attributes (a negative offset:
 * attributes only), after the daemon changed its mode by itself: with
 * HANDLE_KILLPRIV_V2 the kernel leaves dropping set-id bits on write and
 * O_TRUNC to us and keeps the mode it has cached.
 */
static void drop_cached_attrs(fuse_req_t req, fuse_ino_t ino)
{
	struct fwd *f = fwd_of(req);

	if (f->se)
		(void)fuse_lowlevel_notify_inval_inode(f->se, ino, -1, 0);
}

/* ---- files -------------------------------------------------------------- */

/* What the kernel is told of a new handle @h. */
static void fill_open(struct fuse_file_info *fi, const struct xmount *m,
		      struct xhandle *h, bool keep_cache)
{
	fi->fh = (uint64_t)(uintptr_t)h;
	fi->keep_cache = keep_cache;
	fi->noflush = m->noflush;
	/* the writeback guard saw little space: every write to us */
	fi->direct_io = h->direct;
}

static void fwd_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct caller who = caller_of(req);
	struct xmount *m = mnt_of(req);
	struct xhandle *h;
	bool keep;
	int err;

	if (skip_open(m)) {
		fuse_reply_err(req, ENOSYS); /* and never again: no_open */
		return;
	}
	err = xm_open(m, &who, node_of(req, ino), fi->flags, &h, &keep);
	if (err) {
		fuse_reply_err(req, -err);
		return;
	}
	fill_open(fi, m, h, keep);
	/*
	 * O_TRUNC by another user dropped set-id bits (xm_open), or the
	 * lower file changed behind our back (another mount, a sync tool):
	 * the size and times the kernel caches are stale. Dropped now, the
	 * next stat, or a read past the old end, asks again (close-to-open,
	 * whatever the attribute timeout).
	 */
	if (h->changed || ((fi->flags & O_TRUNC) && who.uid != 0))
		drop_cached_attrs(req, ino);
	fuse_reply_open(req, fi);
}

static void fwd_create(fuse_req_t req, fuse_ino_t parent, const char *name,
		       mode_t mode, struct fuse_file_info *fi)
{
	struct caller who = caller_of(req);
	struct fwd *f = fwd_of(req);
	struct xmount *m = &f->m;
	struct fuse_entry_param e;
	struct xhandle *h;
	struct xnode *in;
	struct stat st;
	enum give how;
	bool keep;
	int err = xm_create(m, &who, node_of(req, parent), name, mode,
			    fi->flags, &in, &st, &h, &keep);

	if (err) {
		fuse_reply_err(req, -err);
		return;
	}
	how = guard_give(f, in, false);
	fill_entry(&e, m, in, &st, give_timeout(f, in, how));
	xm_told(in, &st);
	fill_open(fi, m, h, keep);
	if (skip_open(m)) {
		/*
		 * The kernel sends no RELEASE once it skips OPEN (it may skip
		 * it already): the node's own handle serves the file.
		 */
		xm_bare_adopt(h);
		fi->fh = 0;
	}
	fuse_reply_create(req, &e, fi);
	given(f, in, how, e.attr_timeout);
}

static void fwd_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	const uint8_t *data;
	int err;
	struct xhandle *h = io_handle(req, ino, fi, &err);
	ssize_t n = h ? xm_read(mnt_of(req), h, size, off, &data) : err;

	xm_bare_put(h); /* the reply's data is the thread's own */
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else
		fuse_reply_buf(req, (const char *)data, (size_t)n);
}

/* Make a handle's next cached write ask first (xm_guard_each_writer()). */
static void guard_inval(void *arg, struct xnode *in)
{
	struct fwd *f = arg;

	(void)fuse_lowlevel_notify_inval_inode(f->se,
					       (fuse_ino_t)(uintptr_t)in, -1, 0);
}

/*
 * fi->writepage: the kernel writes back pages of its cache (the program
 * was told they were written), which the writeback guard's reserve
 * covers; when that starts, every handle writing through the cache gets
 * its attributes invalidated, so that its next write(2) asks first and
 * is refused (fwd_getattr).
 */
static void fwd_write(fuse_req_t req, fuse_ino_t ino, const char *buf,
		      size_t size, off_t off, struct fuse_file_info *fi)
{
	struct caller who = caller_of(req);
	struct fwd *f = fwd_of(req);
	bool killed = false, refusing = false;
	int err;
	struct xhandle *h = io_handle(req, ino, fi, &err);
	ssize_t n = h ? xm_write(&f->m, &who, h, (const uint8_t *)buf, size,
				 off, fi->writepage, &killed, &refusing) : err;

	xm_bare_put(h);
	if (killed)
		drop_cached_attrs(req, ino);
	if (refusing && f->se)
		xm_guard_each_writer(&f->m, guard_inval, f);
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else
		fuse_reply_write(req, (size_t)n);
}

static void fwd_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct xmount *m = mnt_of(req);
	struct xhandle *h;
	int err;

	/*
	 * A file opened without OPEN has no FOPEN_NOFLUSH to give: where a
	 * lower close() reports nothing, ENOSYS makes the kernel send no
	 * FLUSH again (no_flush).
	 */
	if (!handle_of(fi) && m->noflush) {
		fuse_reply_err(req, ENOSYS);
		return;
	}
	h = io_handle(req, ino, fi, &err);
	if (!h) {
		fuse_reply_err(req, -err);
		return;
	}
	err = xm_flush(m, h);
	/*
	 * A close(2) by lock owner fi->lock_owner (the kernel sends one per
	 * close): its record locks on the file go, after what it wrote is
	 * synced, as on NFS, for the next holder to read.
	 */
	xm_lock_flush(m, h->in, fi->lock_owner);
	xm_bare_put(h);
	fuse_reply_err(req, -err);
}

/*
 * A wait for a lock (lock_wait), answered by the core's waiting thread
 * (xm_lock_wait), so that no session thread is held while it waits: a
 * few threads, or one (-s), would otherwise stop the whole mount, the
 * holder's own unlock included.
 */
struct lock_wait {
	fuse_req_t req;
	fuse_ino_t ino;
	bool drop_cache;           /* a record lock taken: see lock_taken */
};

static bool lock_interrupted(void *arg)
{
	return fuse_req_interrupted(((struct lock_wait *)arg)->req);
}

/*
 * A record lock was taken through @ino: drop the pages and attributes
 * the kernel caches, so that reads under the lock see what the last
 * holder wrote in another mount, as NFS does when it grants a lock.
 * Not with the writeback cache: the kernel would write dirty pages back
 * first, through a session thread that a request waiting here holds.
 */
static void lock_taken(struct fwd *f, fuse_ino_t ino)
{
	if (f->se && !f->m.writeback_on)
		(void)fuse_lowlevel_notify_inval_inode(f->se, ino, 0, 0);
}

static void lock_done(void *arg, int err)
{
	struct lock_wait *lw = arg;

	if (!err && lw->drop_cache)
		lock_taken(fwd_of(lw->req), lw->ino);
	fuse_reply_err(lw->req, -err);
	free(lw);
}

/* Wait for @w (its owner, lock or flock op set) for @req on @ino. */
static void lock_wait(fuse_req_t req, fuse_ino_t ino, struct xm_lockwait *w)
{
	struct lock_wait *lw = malloc(sizeof(*lw));

	if (!lw) {
		fuse_reply_err(req, ENOLCK);
		return;
	}
	lw->req = req;
	lw->ino = ino;
	lw->drop_cache = !w->flock_op;
	w->interrupted = lock_interrupted;
	w->done = lock_done;
	w->arg = lw;
	xm_lock_wait(mnt_of(req), w);
}

/*
 * flock(2), with -o sharedstorage only (fwd_init_conn; else the kernel
 * keeps flocks itself, local to the mount): taken on the lower file.
 * A blocking request waits in the core's waiting thread, and a signal
 * to the waiting process (FUSE_INTERRUPT) ends the wait.
 */
static void fwd_flock(fuse_req_t req, fuse_ino_t ino,
		      struct fuse_file_info *fi, int op)
{
	struct xm_lockwait w = { .h = handle_of(fi), .flock_op = op };

	if ((op & LOCK_NB) || (op & (LOCK_SH | LOCK_EX)) == 0) {
		fuse_reply_err(req, -xm_flock(handle_of(fi), op & ~LOCK_NB));
		return;
	}
	lock_wait(req, ino, &w);
}

/*
 * fcntl(2) record locks, with -o sharedstorage only (fwd_init_conn; else
 * the kernel keeps them itself, local to the mount): taken on the lower
 * file (locks.c), F_SETLKW waiting as a blocking flock does.
 */
static void fwd_getlk(fuse_req_t req, fuse_ino_t ino,
		      struct fuse_file_info *fi, struct flock *lock)
{
	int err = xm_getlk(mnt_of(req), handle_of(fi), fi->lock_owner, lock);

	(void)ino;
	if (err)
		fuse_reply_err(req, -err);
	else
		fuse_reply_lock(req, lock);
}

static void fwd_setlk(fuse_req_t req, fuse_ino_t ino,
		      struct fuse_file_info *fi, struct flock *lock, int sleep)
{
	struct xm_lockwait w = { .h = handle_of(fi),
				 .owner = fi->lock_owner, .lk = *lock };
	int err;

	if (sleep && lock->l_type != F_UNLCK) {
		lock_wait(req, ino, &w);
		return;
	}
	err = xm_setlk(mnt_of(req), handle_of(fi), fi->lock_owner, lock);
	if (!err && lock->l_type != F_UNLCK)
		lock_taken(fwd_of(req), ino);
	fuse_reply_err(req, -err);
}

static void fwd_release(fuse_req_t req, fuse_ino_t ino,
			struct fuse_file_info *fi)
{
	struct xhandle *h = handle_of(fi);

	(void)ino;
	if (!h) { /* created without a handle of its own (fwd_create) */
		fuse_reply_err(req, 0);
		return;
	}
	if (fi->flush) /* the last close's flush, sent with the release */
		xm_lock_flush(mnt_of(req), h->in, fi->lock_owner);
	xm_lock_release(mnt_of(req), h);
	xm_release(h);
	fuse_reply_err(req, 0);
}

static void fwd_fsync(fuse_req_t req, fuse_ino_t ino, int datasync,
		      struct fuse_file_info *fi)
{
	int err;
	struct xhandle *h = io_handle(req, ino, fi, &err);

	if (h) {
		err = xm_fsync(mnt_of(req), h->fd, datasync != 0);
		xm_bare_put(h);
	}
	fuse_reply_err(req, -err);
}

static void fwd_fallocate(fuse_req_t req, fuse_ino_t ino, int mode,
			  off_t off, off_t len, struct fuse_file_info *fi)
{
	int err;
	struct xhandle *h = io_handle(req, ino, fi, &err);

	if (h) {
		err = xm_fallocate(mnt_of(req), h, mode, off, len);
		xm_bare_put(h);
	}
	fuse_reply_err(req, -err);
}

static void fwd_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence,
		      struct fuse_file_info *fi)
{
	struct fwd *f = fwd_of(req);
	struct xhandle *h;
	int64_t r;
	int err;

	/*
	 * With the writeback cache, written data may still sit in the
	 * kernel's dirty pages. Invalidating the inode makes the kernel
	 * write them back first (and wait for it), so that holes and data
	 * are decided on what was really written. Another worker thread
	 * serves those writes: the core takes the content lock only after.
	 */
	if (f->m.writeback_on && f->se && off >= 0 &&
	    (whence == SEEK_DATA || whence == SEEK_HOLE))
		(void)fuse_lowlevel_notify_inval_inode(f->se, ino, 0, 0);
	h = io_handle(req, ino, fi, &err);
	r = h ? xm_lseek(&f->m, h, off, whence) : err;
	xm_bare_put(h);
	if (r < 0)
		fuse_reply_err(req, (int)-r);
	else
		fuse_reply_lseek(req, (off_t)r);
}

/* ---- directories -------------------------------------------------------- */

static void fwd_opendir(fuse_req_t req, fuse_ino_t ino,
			struct fuse_file_info *fi)
{
	struct xdir *d;
	bool keep;
	int err;

	if (skip_opendir(mnt_of(req))) {
		fuse_reply_err(req, ENOSYS); /* and never again: no_opendir */
		return;
	}
	err = xm_opendir(mnt_of(req), node_of(req, ino), &d, &keep);
	if (err) {
		fuse_reply_err(req, -err);
		return;
	}
	fi->fh = (uint64_t)(uintptr_t)d;
	/*
	 * Let the kernel keep this directory's listing (its own changes
	 * drop it) while the lower directory is what we last listed.
	 */
	fi->cache_readdir = 1;
	fi->keep_cache = keep;
	fuse_reply_open(req, fi);
}

/*
 * Add entry @de of @dir to the readdirplus reply at @p (@rem bytes
 * left), with its attributes and a reference the kernel then holds.
 * Return: the bytes it took (more than @rem: it does not fit, nothing
 * taken), or 0 to skip it (it vanished meanwhile).
 */
static size_t add_plus(fuse_req_t req, struct xnode *dir,
		       const struct xm_dirent *de, char *p, size_t rem)
{
	struct xmount *m = mnt_of(req);
	struct fuse_entry_param e;
	struct xnode *in = NULL;
	struct stat st;
	bool dot = names_is_dot(de->name);
	size_t need;
	int rc = dot ? 0 : xm_lookup_stored(m, dir, de->stored,
					    de->type == DT_REG ? de->ino : 0,
					    &in, &st);

	if (rc == -ENOENT)
		return 0;
	if (!rc && !dot && xm_guard_watch(m, in)) {
		/*
		 * The writeback guard needs the kernel's attributes of @in
		 * invalid: the name alone (the kernel looks it up then).
		 */
		xm_forget(m, in, 1);
		rc = -EAGAIN;
	}
	if (dot || rc) {
		/*
		 * "." and "..", or out of descriptors or memory: the name
		 * with no node (ino 0: the kernel looks it up when it needs
		 * it).
		 */
		memset(&e, 0, sizeof(e));
		e.attr.st_ino = de->ino;
		e.attr.st_mode = (mode_t)de->type << 12;
		in = NULL;
	} else {
		fill_entry(&e, m, in, &st, attr_ttl(m, in));
	}
	need = fuse_add_direntry_plus(req, p, rem, de->name, &e, de->next);
	if (in && need > rem) {
		xm_forget(m, in, 1);
	} else if (in) {
		xm_told(in, &st);
		xm_told_until(in, m->attr_timeout);
		xm_dir_found(m, dir, in, de->name);
		if (S_ISDIR(in->type)) {
			/* a walk of the tree will list it next */
			xm_prefetch_dir(m, in);
			xm_lower_ahead(m, dir, de->stored);
		}
	}
	return need;
}

static void do_readdir(fuse_req_t req, fuse_ino_t ino, size_t size,
		       off_t offset, struct fuse_file_info *fi, bool plus)
{
	struct xmount *m = mnt_of(req);
	struct xnode *dir = node_of(req, ino);
	struct xdir *d = dir_of(fi);
	char *buf = (char *)scratch_get(SCRATCH_REPLY, size), *p = buf;
	size_t rem = size;
	int rc;

	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	/* no handle: the kernel skips OPENDIR (skip_opendir()) */
	if (!d && (rc = xm_dir_borrow(dir, &d)) != 0) {
		fuse_reply_err(req, -rc);
		return;
	}
	rc = xm_dir_seek(d, offset);
	while (!rc) {
		struct xm_dirent de;
		size_t need;

		rc = xm_dir_peek(m, dir, d, &de);
		if (rc <= 0)
			break;
		rc = 0;
		if (plus) {
			need = add_plus(req, dir, &de, p, rem);
		} else {
			struct stat st = { .st_ino = de.ino,
					   .st_mode = (mode_t)de.type << 12 };

			need = fuse_add_direntry(req, p, rem, de.name, &st,
						 de.next);
		}
		if (need > rem)
			break;
		/* a walk of the tree will list it next (add_plus() too) */
		if (!plus && de.type == DT_DIR && !names_is_dot(de.name))
			xm_lower_ahead(m, dir, de.stored);
		p += need;
		rem -= need;
		xm_dir_take(d, &de);
	}
	if (!dir_of(fi))
		xm_dir_return(d);
	if (rc < 0 && rem == size)
		fuse_reply_err(req, -rc);
	else
		fuse_reply_buf(req, buf, size - rem);
}

static void fwd_readdir(fuse_req_t req, fuse_ino_t ino, size_t size,
			off_t offset, struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, offset, fi, false);
}

static void fwd_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size,
			    off_t offset, struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, offset, fi, true);
}

static void fwd_releasedir(fuse_req_t req, fuse_ino_t ino,
			   struct fuse_file_info *fi)
{
	(void)ino;
	if (dir_of(fi))
		xm_releasedir(dir_of(fi));
	fuse_reply_err(req, 0);
}

static void fwd_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync,
			 struct fuse_file_info *fi)
{
	struct xdir *d = dir_of(fi);
	int err = d ? 0 : xm_dir_borrow(node_of(req, ino), &d);

	if (!err) {
		err = xm_fsync(mnt_of(req), xm_dir_fd(d), datasync != 0);
		if (!dir_of(fi))
			xm_dir_return(d);
	}
	fuse_reply_err(req, -err);
}

/* ---- extended attributes ------------------------------------------------ */

static void fwd_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
			 size_t size)
{
	char *buf = glue_xattr_buf(size);
	ssize_t n = size && !buf ? -ENOMEM :
		    xm_getxattr(mnt_of(req), node_of(req, ino), name, buf, size);

	glue_reply_xattr(req, n, buf, size);
}

static void fwd_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	struct caller who = caller_of(req);
	char *buf = glue_xattr_buf(size);
	ssize_t n = size && !buf ? -ENOMEM :
		    xm_listxattr(mnt_of(req), &who, node_of(req, ino), buf,
				 size);

	glue_reply_xattr(req, n, buf, size);
}

static void fwd_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
			 const char *value, size_t size, int flags)
{
	fuse_reply_err(req, -xm_setxattr(mnt_of(req), node_of(req, ino), name,
					 value, size, flags));
}

static void fwd_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	fuse_reply_err(req, -xm_removexattr(mnt_of(req), node_of(req, ino),
					    name));
}

/* ---- change notification (notify.c) -------------------------------------- */

/*
 * The notifier's words to the kernel, from its own thread with no lock
 * held (never from a request handler: the kernel may hold the inode's
 * lock while it waits for our reply). Neither takes an inode lock but
 * inval_entry (the directory's, which a request in flight may hold
 * until we reply: the notifier waits, the handlers do not wait for it).
 */
static fuse_ino_t ino_of(struct fwd *f, struct xnode *in)
{
	return in == f->m.root ? FUSE_ROOT_ID : (fuse_ino_t)(uintptr_t)in;
}

static void notify_inode(void *arg, struct xnode *in, bool pages)
{
	struct fwd *f = arg;

	/* a negative offset: the attributes only, the pages stay */
	if (f->se)
		(void)fuse_lowlevel_notify_inval_inode(f->se, ino_of(f, in),
						       pages ? 0 : -1, 0);
}

/*
 * Expiring is FUSE_EXPIRE_ONLY, for which libfuse 3.14 has no call: the
 * notification is written raw. Kernels before 6.2 ignore the flag (it was
 * padding) and drop the entry; one that refuses it gets the plain call.
 */
static void notify_entry(void *arg, struct xnode *dir, const char *name,
			 size_t len, bool expire)
{
	struct fwd *f = arg;
	struct k_notify_inval_entry_out out = {
		.parent = ino_of(f, dir), .namelen = (uint32_t)len,
		.flags = K_EXPIRE_ONLY,
	};
	struct k_out_header h = {
		.len = (uint32_t)(sizeof(h) + sizeof(out) + len + 1),
		.error = K_NOTIFY_INVAL_ENTRY,
	};
	struct iovec iov[3] = { { &h, sizeof(h) }, { &out, sizeof(out) },
				{ (void *)name, len + 1 } };
	ssize_t w = -1;

	if (!f->se)
		return;
	if (expire) {
		do
			w = writev(fuse_session_fd(f->se), iov, 3);
		while (w < 0 && errno == EINTR);
		if (w >= 0 || errno != EINVAL)
			return;
	}
	(void)fuse_lowlevel_notify_inval_entry(f->se, ino_of(f, dir), name,
					       len);
}

/* FUSE_NOTIFY_PRUNE of @n (at most 512) nodes; libfuse 3.14 has no call */
static int notify_prune(void *arg, struct xnode *const *in, size_t n)
{
	struct fwd *f = arg;
	uint64_t ids[512];
	struct k_notify_prune_out out = { .count = (uint32_t)n };
	struct k_out_header h = {
		.len = (uint32_t)(sizeof(h) + sizeof(out) + n * sizeof(ids[0])),
		.error = K_NOTIFY_PRUNE,
	};
	struct iovec iov[3] = { { &h, sizeof(h) }, { &out, sizeof(out) },
				{ ids, n * sizeof(ids[0]) } };
	ssize_t w;

	if (!f->se || n > sizeof(ids) / sizeof(ids[0]))
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		ids[i] = ino_of(f, in[i]);
	do
		w = writev(fuse_session_fd(f->se), iov, 3);
	while (w < 0 && errno == EINTR);
	if (w < 0)
		return errno == EINVAL ? -EOPNOTSUPP : -errno;
	return 0;
}

const struct xm_notify_cb fwd_notify_cb = {
	.inval_inode = notify_inode,
	.inval_entry = notify_entry,
	.prune = notify_prune,
};

/* ---- session ------------------------------------------------------------ */

static void fwd_init_conn(void *userdata, struct fuse_conn_info *conn)
{
	struct xmount *m = &((struct fwd *)userdata)->m;

	/*
	 * Writeback cache: writes land in the page cache and reach us as
	 * large, unit-aligned WRITEs, so most need no read-modify-write.
	 * The kernel then owns size and mtime of regular files (it sends
	 * them to us with setattr), handles O_APPEND itself, and may read
	 * through a write-only handle, which is why writers always open the
	 * lower file read-write.
	 */
	if (m->writeback && (conn->capable & FUSE_CAP_WRITEBACK_CACHE)) {
		conn->want |= FUSE_CAP_WRITEBACK_CACHE;
		m->writeback_on = true;
		/* a full disk still reported at write(2): wbguard.h */
		(void)xm_guard_start(m);
	} else {
		conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;
	}
	/*
	 * Without OPEN, an open(O_TRUNC) must come as a SETATTR of the
	 * size: with atomic_o_trunc the kernel takes the truncation as done
	 * by the OPEN it did not send (fs/fuse/dir.c, ATTR_OPEN), and the
	 * old contents stay (measured on 6.18: "echo hi > f" over 12 bytes
	 * left 12).
	 */
	if (skip_open(m))
		conn->want &= ~FUSE_CAP_ATOMIC_O_TRUNC;
	else if (m->noopen)
		xm_log(m, LOG_INFO, "noopen ignored: it needs change "
		       "notification and directories opened without a "
		       "handle (not nonotify, sharedstorage, dirhandles or "
		       "the writeback guard, nor a network lower "
		       "filesystem)");
	/* big requests: fewer round trips, many units per core call */
	glue_conn_common(conn);
	/*
	 * flock on the lower file only for shared storage: elsewhere the
	 * kernel's own flocks are exact for one mount and cost nothing.
	 */
	if (m->sharedstorage && (conn->capable & FUSE_CAP_FLOCK_LOCKS))
		conn->want |= FUSE_CAP_FLOCK_LOCKS;
	else
		conn->want &= ~FUSE_CAP_FLOCK_LOCKS;
	/* fcntl record locks likewise (locks.c) */
	if (m->sharedstorage && (conn->capable & FUSE_CAP_POSIX_LOCKS))
		conn->want |= FUSE_CAP_POSIX_LOCKS;
	else
		conn->want &= ~FUSE_CAP_POSIX_LOCKS;
	if (conn->capable & FUSE_CAP_READDIRPLUS)
		conn->want |= FUSE_CAP_READDIRPLUS;
	/*
	 * POSIX ACLs, enforced by the kernel (which then checks permissions
	 * itself, as default_permissions) on what the lower object keeps:
	 * the kernel then leaves the umask to us (FUSE_CAP_DONT_MASK), to be
	 * applied only where no default ACL is inherited, as on ext4.
	 */
	if (m->acl && (conn->capable & FUSE_CAP_POSIX_ACL)) {
		conn->want |= FUSE_CAP_POSIX_ACL | FUSE_CAP_DONT_MASK;
	} else {
		m->acl = false;
		/* let the kernel apply the umask before create/mkdir */
		conn->want &= ~FUSE_CAP_DONT_MASK;
	}
#ifdef FUSE_CAP_HANDLE_KILLPRIV_V2
	/*
	 * The daemon drops set-id bits itself on write, truncate and chown
	 * (caller.c): with HANDLE_KILLPRIV_V2 the kernel marks the
	 * filesystem SB_NOSEC and stops asking for security.capability
	 * before every write (fs/fuse/inode.c, process_init_reply). libfuse
	 * 3.17 and later know the flag; Debian 12's 3.14 does not.
	 */
	if (conn->capable & FUSE_CAP_HANDLE_KILLPRIV_V2)
		conn->want |= FUSE_CAP_HANDLE_KILLPRIV_V2;
#endif
}

/* The session ends: waits for locks are answered while it still can be. */
static void fwd_destroy(void *userdata)
{
	xm_locks_end(&((struct fwd *)userdata)->m);
}

const struct fuse_lowlevel_ops fwd_ops = {
	.init = fwd_init_conn,
	.destroy = fwd_destroy,
	.lookup = fwd_lookup,
	.forget = fwd_forget,
	.forget_multi = fwd_forget_multi,
	.getattr = fwd_getattr,
	.setattr = fwd_setattr,
	.readlink = fwd_readlink,
	.mknod = fwd_mknod,
	.mkdir = fwd_mkdir,
	.unlink = fwd_unlink,
	.rmdir = fwd_rmdir,
	.symlink = fwd_symlink,
	.rename = fwd_rename,
	.link = fwd_link,
	.open = fwd_open,
	.create = fwd_create,
	.read = fwd_read,
	.write = fwd_write,
	.flush = fwd_flush,
	.release = fwd_release,
	.fsync = fwd_fsync,
	.flock = fwd_flock,
	.getlk = fwd_getlk,
	.setlk = fwd_setlk,
	.opendir = fwd_opendir,
	.readdir = fwd_readdir,
	.readdirplus = fwd_readdirplus,
	.releasedir = fwd_releasedir,
	.fsyncdir = fwd_fsyncdir,
	.statfs = fwd_statfs,
	.access = fwd_access,
	.fallocate = fwd_fallocate,
	.lseek = fwd_lseek,
	.getxattr = fwd_getxattr,
	.setxattr = fwd_setxattr,
	.listxattr = fwd_listxattr,
	.removexattr = fwd_removexattr,
};
