/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mount_int.h - what the files of the forward mount's core (mount.h)
 * share among themselves. Not for the front end.
 */
#ifndef XTSFS_MOUNT_INT_H
#define XTSFS_MOUNT_INT_H

#include "mount.h"

/* ---- mount.c ---- */

/* One more reference to @in, which the caller holds one on already. */
void node_hold(struct xmount *m, struct xnode *in);

/*
 * node_find() - the node of lower object (@dev, @ino) with one more
 * reference (drop it with xm_forget(m, in, 1)), or NULL.
 */
struct xnode *node_find(struct xmount *m, dev_t dev, ino_t ino);

/*
 * xm_fd_retry() - whether to try again a call that failed with @err, for
 * the @tries-th time (from 0): out of descriptors (EMFILE, ENFILE), the
 * notifier asks the kernel to forget unused nodes (xm_notify_prune()),
 * whose FORGETs other threads serve, so wait 10 ms and say yes, for up
 * to 0.2 s (a request handler may not wait for the notifier itself).
 * The last failure is logged, once (xm_say_fd_limit()). Only for calls
 * that leave nothing behind when they fail.
 */
bool xm_fd_retry(struct xmount *m, int err, int tries);

/*
 * report_bad() - log that entry @lower of the lower directory @dir_ino
 * is damaged (@what: "cannot be decrypted; skipped"), once per mount:
 * every listing finds it again, and the log should show each problem,
 * not its repetitions. Points at xtsfs-fsck, which checks them all.
 */
void report_bad(struct xmount *m, uint64_t dir_ino, const char *lower,
		const char *what);

/*
 * seen_check() - whether lower object @fd has the mtime, ctime and size
 * last seen (only if @compare), then remember them; a state whose ctime
 * is less than @min_age seconds old is remembered as unknown.
 */
bool seen_check(struct xnode *in, int fd, bool compare, time_t min_age);

/*
 * seen_compare() - seen_check() of the lower object's stat @st (taken
 * by the caller, who may use it further), and *@attrs_same: whether
 * what a stat shows but the ctime (size, mtime, mode, owner) is as last
 * seen: a rename moves the ctime alone, and leaves the kernel's
 * attributes right.
 */
bool seen_compare(struct xnode *in, const struct stat *st, bool compare,
		  time_t min_age, bool *attrs_same);

/* seen_forget() - the lower object of @in is in a state not known. */
void seen_forget(struct xnode *in);

/* ---- dirnames.c ---- */

/*
 * dirid_prefetch_run() - the prefetch threads' work (prefetch.h, set up
 * by xm_init()): load the dirid of directory @item that a listing showed,
 * have the kernel drop its listing if it went stale, then drop the
 * reference the listing took for us. dirid_prefetch_drop(): that
 * reference of an @item never run.
 */
void dirid_prefetch_run(void *ctx, void *item);
void dirid_prefetch_drop(void *ctx, void *item);

/* The lower name of @name in @dir (dirops_name_enc; -EPERM: reserved). */
int name_enc(struct xmount *m, struct xnode *dir, const char *name,
	     struct lname *ln);

/* dirops_mkdir() of @ln (plaintext @name) in @dir, dirid from @dir's. */
int mkdir_in(struct xmount *m, struct xnode *dir, const struct lname *ln,
	     mode_t mode, const char *name);

/*
 * The lower name of @name in @dir for an entry that may exist: a
 * conflict copy's if no entry has that name (dirops_name_find()).
 */
int name_find(struct xmount *m, struct xnode *dir, const char *name,
	      struct lname *ln);

/* name_find() for a name that must exist: reserved ones are -ENOENT. */
int name_enc_existing(struct xmount *m, struct xnode *dir, const char *name,
		      struct lname *ln);

/*
 * Decrypt lower entry @lower of @dir into @out. Return 0, 1 to skip it
 * silently (our own files), or -errno (-EIO: no dirid).
 */
int name_dec(struct xmount *m, struct xnode *dir, const char *lower,
	     char out[256]);

/*
 * dir_take_stale() - whether @dir's listing may show names its dirid does
 * not give (xnode.cand_stale), and forget that: the caller has the
 * kernel drop the listing.
 */
bool dir_take_stale(struct xnode *dir);

/* ---- notify.c ---- */

/* notify_watch() - watch new directory node @dir (if the notifier runs). */
void notify_watch(struct xmount *m, struct xnode *dir);

/* notify_unwatch() - @dir is being freed: drop its watch. */
void notify_unwatch(struct xmount *m, struct xnode *dir);

/*
 * notify_listing_stale() - if @dir's listing may show names its dirid
 * does not give (dir_take_stale()), have the kernel drop its copy of it
 * and of @dir's attributes; if the notifier does not run, the next
 * OPENDIR does that instead. From a thread that serves no request.
 */
void notify_listing_stale(struct xmount *m, struct xnode *dir);

/*
 * notify_own() - this mount is about to make, remove or move entry
 * @stored of @dir: its next inotify event of that name is ours (@n 1),
 * or, @n -1, the change did not happen after all.
 */
void notify_own(struct xmount *m, struct xnode *dir, const char *stored,
		int n);

/*
 * notify_long_name() - the kernel may learn @plain, the plaintext of long
 * stored name @stored in @dir: remembered for when the entry and its
 * sidecar are removed beside the mount.
 */
void notify_long_name(struct xmount *m, struct xnode *dir, const char *stored,
		      const char *plain);

/* notify_free() - free what xm_notify_start() made (xm_destroy). */
void notify_free(struct xmount *m);

/* ---- caller.c ---- */

/* Whether @who is in group @gid (primary or supplementary). */
bool caller_in_group(const struct caller *who, gid_t gid);

/* Whether @who may open the existing object @st with open(2) @flags. */
bool caller_may_open(const struct caller *who, const struct stat *st,
		     int flags);

/*
 * Whether @who may remove or replace entry @stored of lower directory
 * @dirfd as far as the sticky bit goes: 0 (also when @stored does not
 * exist) or -EPERM.
 */
int caller_may_delete(const struct caller *who, int dirfd, const char *stored);

/*
 * The mode to make a lower object with in lower directory @dirfd, for
 * @mode as the caller asked it: with ACLs the kernel leaves the umask to
 * us, and it applies only where no default ACL is inherited (as the VFS
 * does on ext4); the lower filesystem applies an inherited one itself.
 */
mode_t create_mode(const struct xmount *m, const struct caller *who,
		   int dirfd, mode_t mode);

/* Give the new lower object @stored, made with @mode, to @who. */
void own_by_caller(const struct caller *who, int dirfd, const char *stored,
		   mode_t mode);

/*
 * After a write, truncate or chown by @who of regular file @in, whose
 * mode was @mode and group @gid before it: drop set-id bits as the VFS
 * does on ext4. Return: whether the mode changed.
 */
bool kill_priv(const struct caller *who, const struct xnode *in, mode_t mode,
	       gid_t gid);

/* kill_priv() for what lower file @fd (of @in) is now. */
void kill_priv_fd(const struct caller *who, const struct xnode *in, int fd);

/* ---- files.c ---- */

/* A real descriptor of @in's lower object, opened with @flags. */
int reopen(const struct xnode *in, int flags);

/*
 * Make the next read or write of regular file @in read its header again
 * (its lower contents changed beside us).
 */
void header_forget(struct xnode *in);

/* Close @in's handle of I/O without OPEN (xm_bare()), as it goes. */
void bare_free(struct xnode *in);

/*
 * Close the handles of I/O without OPEN (xm_bare()) that no request is
 * using, out of descriptors: the next I/O opens its file again. Return:
 * how many were closed.
 */
size_t bare_reclaim(struct xmount *m);

/*
 * node_snapshot() - every node the kernel knows, each with one more
 * reference (drop them with node_snapshot_drop()), into *@got; NULL if
 * out of memory. node_snap(): node @i of it.
 */
struct itable_node **node_snapshot(struct xmount *m, size_t *got);
struct xnode *node_snap(struct itable_node **all, size_t i);
void node_snapshot_drop(struct xmount *m, struct itable_node **all,
			size_t got);

/* Truncate regular file @in (opened writable as @fd) to @size. */
int file_truncate(struct xmount *m, struct xnode *in, int fd, uint64_t size);

/* ---- guard.c: the writeback guard (wbguard.h) -------------------------- */

/* guard_on() - whether the mount has the guard and it is not off. */
bool guard_on(const struct xmount *m);

/* guard_check() - wbguard_check() with a log line when the mode changes. */
enum wbguard_mode guard_check(struct xmount *m);

/*
 * guard_bound() - after an open set the mount's dirty limit
 * (bdi_tune_once()): the reserve must cover the limit in force, FUSE's
 * own 1 % when the daemon could not set its own (not root); without a
 * strict limit nothing bounds what the reserve must cover, so the guard
 * goes off (said once).
 */
void guard_bound(struct xmount *m);

/*
 * guard_admit() - new handle @h writes: through the kernel's cache
 * (h->cached_writer, in xmount.writers) if the guard admits it, else
 * past it (h->direct). Nothing without the guard.
 * guard_leave() - @h goes: out of the guard's writers.
 */
void guard_admit(struct xmount *m, struct xhandle *h);
void guard_leave(struct xmount *m, struct xhandle *h);

/*
 * guard_cover() - a written-back write found no space (@n, -ENOSPC):
 * take room for its @size bytes from the reserve and call @w(@arg) to
 * redo it, as long as there is reserve. Return: the last result.
 */
ssize_t guard_cover(struct xmount *m, ssize_t n, size_t size,
		    ssize_t (*w)(void *), void *arg);

#endif /* XTSFS_MOUNT_INT_H */
