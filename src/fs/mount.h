/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mount.h - the forward mount's core: one unlocked volume seen as a tree
 * of plaintext objects, every operation a function on lower descriptors
 * that returns 0 (or a count) or -errno. No FUSE types: the FUSE front
 * end (fuse_ops.c) decodes a request, calls one of these and replies;
 * a checker or a test calls them the same way without a mount.
 *
 * Every object the kernel knows is a struct xnode holding an O_PATH
 * descriptor of its lower object (as libfuse's passthrough_hp does), so
 * a name is encrypted once per lookup instead of once per path component
 * on every call, hard links map to one node and one content lock, and
 * listings can carry entries (readdirplus) without a second round trip.
 * Names are encrypted with the dirid of the parent directory (FORMAT 4);
 * regular files go through content.c under a per-node read-write lock
 * shared by every handle of that lower inode.
 *
 * The files: mount.c (the volume, its nodes, names, lookup), caller.c
 * (the permission rules the daemon applies for a caller), entries.c
 * (making, removing, renaming, attributes), files.c (open files),
 * guard.c (the writeback guard's side of them), dirlist.c (listings).
 * Their shared internals: mount_int.h.
 */
#ifndef XTSFS_MOUNT_H
#define XTSFS_MOUNT_H

#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include "bdi.h"
#include "content.h"
#include "scratch.h"
#include "dirops.h"
#include "durable.h"
#include "itable.h"
#include "names.h"
#include "prefetch.h"
#include "wbguard.h"
#include "xts.h"

/*
 * struct attr_snap - the attributes by which a change of an object is
 * judged, as they were at one moment (attr_snap_set()).
 */
struct attr_snap {
	bool ok;                   /* the fields below are set */
	struct timespec mtime;
	struct timespec ctime;
	off_t size;
	mode_t mode;
	uid_t uid;
	gid_t gid;
};

/* attr_snap_set() - record @st in @s (and mark it set). */
void attr_snap_set(struct attr_snap *s, const struct stat *st);

/*
 * attr_snap_meta_same() - whether @s is set and has @st's mtime, mode,
 * owner and group (not size, not ctime: the callers judge those apart).
 */
bool attr_snap_meta_same(const struct attr_snap *s, const struct stat *st);

/* ts_same() - whether two times are equal to the nanosecond. */
bool ts_same(const struct timespec *a, const struct timespec *b);

/* struct xnode - one lower object the kernel knows. */
struct xnode {
	struct itable_node node;   /* first: (0, st_dev, st_ino), kernel refs */
	int fd;                    /* O_PATH | O_NOFOLLOW of the lower object */
	mode_t type;               /* S_IFMT bits */
	pthread_mutex_t meta_lock; /* dirid and header loading */
	bool dirid_ok;             /* dirid[] is loaded; meta_lock */
	uint8_t dirid[NAMES_DIRID_SIZE]; /* directories; meta_lock */
	/*
	 * Until dirid[] is loaded, the dirid a writer would have derived
	 * from the name and parent @in was found by (xm_dir_found()): names
	 * are read with it, AES-SIV confirming or refuting it. @cand_seen:
	 * a name authenticated under it; @cand_stale: one did although the
	 * loaded dirid is another (a listing may show such names: the
	 * kernel's copy of it is to be dropped). All meta_lock.
	 */
	bool cand_ok, cand_seen, cand_stale;
	uint8_t cand[NAMES_DIRID_SIZE];
	bool hdr_ok;               /* hdr is loaded; meta_lock */
	struct content_hdr hdr;    /* regular files; meta_lock */
	struct timespec hdr_ctime; /* lower ctime hdr holds at; meta_lock */
	pthread_rwlock_t lock;     /* contents: read shared, write alone */
	pthread_mutex_t seen_lock; /* seen, told, handles, open */
	struct attr_snap seen;     /* the lower object as last seen/written */
	unsigned handles;          /* open handles of ours; seen_lock */
	struct xhandle *open;      /* those handles, a list; seen_lock */
	/*
	 * What the kernel was last told of the attributes (every reply that
	 * carries them: xm_told()), in plaintext (its size is the plaintext
	 * size; its ctime is not used); seen_lock. The change notifier
	 * (notify.c) compares a lower change with it.
	 */
	struct attr_snap told;
	int64_t attr_expiry_ns;    /* when the kernel's copy of the attributes
				    * expires (CLOCK_MONOTONIC), as far as
				    * the replies it kept say (xm_told_until());
				    * seen_lock */
	unsigned cached_writers;   /* handles in xmount.writers; seen_lock */
	int notify_wd;             /* a directory's inotify watch, 0: none */
	struct xhandle *bare;      /* regular files: the handle of I/O that
				    * comes without one (no OPEN: xm_bare());
				    * seen_lock */
};

/* struct xmount - one mounted volume. The caller fills the first part. */
struct xmount {
	int root_fd;                  /* cipher directory, O_PATH */
	const struct xts_ctx *xts;    /* contents key (locked memory) */
	const struct names_ctx *names; /* names key, NULL if plaintext names */
	const struct names_ctx *xattr_names; /* names key for xattrs, always */
	const struct aes_cmac_key *idkey; /* header key: new dirids (FORMAT
					   * 4.2); needed to write names */
	uint32_t doff;                /* the files' data offset (layout.h):
				       * LAYOUT_DOFF_ALIGNED if the volume's
				       * flags say so; 0 is taken for
				       * LAYOUT_DOFF_COMPACT by xm_init() */
	bool readonly;                /* -o ro */
	bool writeback;               /* -o writeback: kernel writeback cache */
	bool wbguard;                 /* ... with the writeback guard
				       * (wbguard.h; xm_guard_start()) */
	double entry_timeout;         /* seconds the kernel may cache names */
	double attr_timeout;          /* seconds the kernel may cache attrs */
	bool said_nolink;             /* logged: the lower numbers names,
				       * not files (xm_link) */
	bool said_fd_limit;           /* logged: out of descriptors
				       * (xm_say_fd_limit()) */
	/*
	 * Directories whose candidate dirid (xnode.cand) proved right, and
	 * wrong (renamed, or random dirids of a version 1 writer): while
	 * the wrong ones are more, dirids are read ahead anyway.
	 */
	unsigned long cand_right, cand_wrong;
	bool sharedstorage;           /* -o sharedstorage: others write the
				       * lower files unannounced (network fs) */
	bool noopen;                  /* -o noopen: the kernel skips OPEN and
				       * RELEASE of regular files where it
				       * skips OPENDIR (fuse_ops.c) */
	bool dir_handles;             /* -o dirhandles: a lower handle per
				       * open directory (OPENDIR/RELEASEDIR
				       * round trips) even where the notifier
				       * would let the kernel skip them */
	const char *mountpoint;       /* for log lines */
	const char *cipherdir;        /* for log lines */
	struct bdi_tune readahead;    /* applied at the first open */
	/* each entry a listing skips as undecryptable (after the log line) */
	void (*skipped)(void *arg, struct xnode *dir, const char *stored);
	void *skipped_arg;            /* for @skipped */
	/* set by xm_init() and the front end */
	bool writeback_on;            /* the kernel agreed to writeback */
	bool acl;                     /* POSIX ACLs: the kernel enforces them */
	bool noflush;                 /* lower close() reports nothing */
	bool dir_offsets_stable;      /* lower listings resume at a d_off
				       * in another open (mount.c) */
	unsigned write_flags;         /* content_write() flags for the lower fs */
	struct durable durable;       /* dirids and sidecars to sync */
	struct prefetch prefetch;     /* dirids read ahead */
	struct prefetch lower_ra;     /* lower subdirectories read ahead */
	struct dirops dops;           /* directory operations */
	struct xnode *root;           /* the root, never in the table */
	struct itable inodes;         /* every other node the kernel knows */
	struct xm_reported *reported; /* damaged entries logged (mount.c) */
	struct xlocks *locks;         /* record locks, made at the first
				       * (locks.c) */
	struct xm_notify *notify;     /* change notification, NULL: off */
	struct wbguard *guard;        /* the writeback guard, NULL: off */
	pthread_mutex_t writers_lock; /* writers */
	struct xhandle *writers;      /* handles writing through the kernel's
				       * cache while the guard is on (a list
				       * through wnext) */
};

/*
 * struct caller - who asks: the permission rules the daemon applies
 * itself (caller.c) and the owner of what it makes. @getgroups fills
 * @list with up to @size supplementary groups and returns how many
 * there are (more than @size: call again), or -errno.
 */
struct caller {
	uid_t uid;
	gid_t gid;
	mode_t umask;     /* with ACLs: its umask, for creates (else 0) */
	int (*getgroups)(void *arg, int size, gid_t *list);
	void *arg;
};

/* struct xhandle - one open regular file. */
struct xhandle {
	int fd;                    /* lower fd, O_RDONLY or O_RDWR */
	struct xnode *in;          /* its node (the kernel holds a lookup) */
	struct xmount *m;          /* its mount */
	bool writable;             /* opened for writing */
	bool wronly;               /* ... and not for reading */
	bool direct;               /* the kernel is told to bypass its cache
				    * (FOPEN_DIRECT_IO): the guard saw
				    * little space left at the open */
	bool cached_writer;        /* in xmount.writers */
	struct xhandle *wprev, *wnext; /* xmount.writers; writers_lock */
	bool changed;              /* the lower file changed behind our back
				    * since we last saw it: the kernel's
				    * cached attributes are stale too */
	struct xhandle *prev, *next; /* in->open; in->seen_lock */
	bool bare;                 /* in->bare: xm_bare(), xm_bare_put() */
	unsigned users;            /* ... requests using it; in->seen_lock */
};

struct xdir; /* an open directory (dirlist.c) */

/*
 * xm_init() - set up the root node, the threads that read dirids and,
 * on a local disk, lower subdirectories ahead (prefetch.h) and, unless
 * read-only, the thread that syncs new dirids
 * and sidecars (durable.h). Sets the process umask to 0: modes arrive
 * with the caller's umask applied. Return: 0 or -errno.
 */
int xm_init(struct xmount *m);

/*
 * xm_destroy() - stop the threads, sync what is pending, free every node
 * (after the session ended; also after a failed xm_init).
 */
void xm_destroy(struct xmount *m);

/*
 * xm_say_fd_limit() - log, once per mount, that opening a lower object
 * failed with @err (-EMFILE or -ENFILE): the daemon holds a descriptor
 * per object the kernel knows, so the limit on open files caps them.
 */
void xm_say_fd_limit(struct xmount *m, int err);

/* xm_log() - a line for the user about this mount (log.h). */
void xm_log(const struct xmount *m, int prio, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ---- change notification (notify.c) ------------------------------------ */

/*
 * struct xm_notify_cb - how the notifier tells the front end (the kernel)
 * that what it caches is stale, from the notifier's own thread, with no
 * lock of the core held. @inval_inode: the attributes of @in, with
 * @pages its cached pages (a directory: its listing) too; @inval_entry:
 * the entry @name (plaintext, @len bytes and a NUL after them) of
 * directory @dir, dropped, or with @expire only expired: the kernel looks
 * the name up again at its next use and keeps what it caches of the node
 * if the name still leads there.
 */
struct xm_notify_cb {
	void (*inval_inode)(void *arg, struct xnode *in, bool pages);
	void (*inval_entry)(void *arg, struct xnode *dir, const char *name,
			    size_t len, bool expire);
	/*
	 * @prune: ask the kernel to forget the @n nodes @in if nothing uses
	 * them (it then sends FORGET, which closes their descriptors).
	 * Return: 0, or -errno (-EOPNOTSUPP: the kernel cannot).
	 */
	int (*prune)(void *arg, struct xnode *const *in, size_t n);
};

/* struct xm_notify_stats - what the notifier did, since it started. */
struct xm_notify_stats {
	unsigned long long events;    /* inotify events read */
	unsigned long long own;       /* ... of them our own (filtered) */
	unsigned long long inodes;    /* attribute (and page) invalidations */
	unsigned long long entries;   /* name invalidations */
	unsigned long long overflows; /* queue overflows: everything dropped */
	unsigned long long unwatched; /* directories not watched (limit) */
	unsigned long long pruned;    /* nodes the kernel was asked to
				       * forget (out of descriptors) */
};

/*
 * xm_notify_start() - watch the lower directories the kernel knows with
 * inotify (the root now, every other one when its node is made, until
 * it is forgotten) and, from a thread of its own, tell @cb of every
 * change made beside the mount (another mount, a sync tool): a changed
 * object's attributes, a name that appeared, vanished or moved. Our own
 * changes are filtered out: they leave the kernel's caches right.
 * Call before requests are served. Return: 0 or -errno (then off).
 */
int xm_notify_start(struct xmount *m, const struct xm_notify_cb *cb,
		    void *arg);

/*
 * xm_notify_stop() - stop the notifier's thread (after the last request,
 * before the front end's session goes away); its stats are logged. The
 * rest is freed by xm_destroy().
 */
void xm_notify_stop(struct xmount *m);

/*
 * xm_notify_prune() - out of descriptors (EMFILE): have the notifier's
 * thread ask the kernel to forget the nodes it does not use (struct
 * xm_notify_cb.prune), at most every 50 ms. Does not wait: a request
 * handler calls it. Return: whether a notifier runs to do it.
 */
bool xm_notify_prune(struct xmount *m);

/*
 * xm_notify_flush() - wait until the notifier has handled every event
 * queued before the call (for tests: no timing).
 */
void xm_notify_flush(struct xmount *m);

/*
 * xm_notify_covers() - whether the notifier watches directory @dir, so
 * that a name made in it beside the mount is told to the kernel (which
 * may then keep a name's absence as long as any entry).
 */
bool xm_notify_covers(struct xmount *m, struct xnode *dir);

/* xm_notify_stats() - a snapshot of the counts (zeros when off). */
void xm_notify_stats(struct xmount *m, struct xm_notify_stats *out);

/*
 * xm_told() - the kernel is told @st (plaintext attributes) of @in: a
 * lookup, getattr or setattr reply. What the notifier compares with.
 */
void xm_told(struct xnode *in, const struct stat *st);

/* ---- nodes and lookup (mount.c) ---------------------------------------- */

/* xm_forget() - drop @n of the kernel's references to @in. */
void xm_forget(struct xmount *m, struct xnode *in, uint64_t n);

/*
 * xm_lookup() - the object @name in directory @dir: *@out with one more
 * reference, its plaintext attributes in @st. -ENOENT also for reserved
 * names (FORMAT 4.5).
 */
int xm_lookup(struct xmount *m, struct xnode *dir, const char *name,
	      struct xnode **out, struct stat *st);

/*
 * xm_lookup_stored() - xm_lookup() by lower name @stored. @listed_reg:
 * the inode number a listing gave for @stored when it is a regular
 * file, else 0 (then the lower filesystem is asked).
 */
int xm_lookup_stored(struct xmount *m, struct xnode *dir, const char *stored,
		     ino_t listed_reg, struct xnode **out, struct stat *st);

/*
 * xm_stored_name() - the lower name(s) of @name in @dir without looking
 * it up (FORMAT 4.1, 4.3): *@ln, whether or not the entry exists, so
 * that a tool can say which cipher paths a plaintext path needs from a
 * copy that holds only the directories and their dirids.
 * Return: 0; -ENOENT a reserved name; -ENAMETOOLONG; -EINVAL an illegal
 * name; -EIO @dir's dirid cannot be read.
 */
int xm_stored_name(struct xmount *m, struct xnode *dir, const char *name,
		   struct lname *ln);

/*
 * xm_plain_name() - the plaintext name of lower entry @stored of @dir
 * into @out (a long name through its sidecar).
 * Return: 0; 1 an entry of xtsfs's own (a dirid, a sidecar), never
 * shown; -EBADMSG it does not decrypt; -EIO @dir's dirid is lost.
 */
int xm_plain_name(struct xmount *m, struct xnode *dir, const char *stored,
		  char out[256]);

/* xm_getattr() - the plaintext attributes of @in. */
int xm_getattr(struct xmount *m, struct xnode *in, struct stat *st);

/* xm_readlink() - the plaintext target of symlink @in (NUL-terminated). */
int xm_readlink(struct xmount *m, struct xnode *in, char out[4096]);

/*
 * xm_access() - access(2) for the daemon's own user (the mount without
 * default_permissions, used by its owner alone).
 */
int xm_access(struct xmount *m, struct xnode *in, int mask);

/*
 * xm_prefetch_dir() - have the dirid of @in read ahead, if it is a
 * directory whose dirid is not loaded (a listing shows it: a walk of
 * the tree will open it soon).
 */
void xm_prefetch_dir(struct xmount *m, struct xnode *in);

/*
 * xm_lower_ahead() - have the lower subdirectory @stored of @dir read
 * ahead (its inode and first block), which a listing just showed: a walk
 * of the tree lists it next, and waits for those reads if they are
 * cold. Best effort, in the background, on local disk filesystems only.
 */
void xm_lower_ahead(struct xmount *m, struct xnode *dir, const char *stored);

/*
 * xm_dir_found() - @in was found as @name in @dir (a lookup, a listing,
 * a mkdir): if it is a directory whose dirid is not loaded, note the
 * dirid a version 2 writer derives for it (FORMAT 4.2), to read its
 * names with before its xtsfs.dirid is read, if ever. A name that
 * authenticates under it confirms it; one that does not, or a name
 * looked up and not there, has xtsfs.dirid read and the names tried
 * again under that. Names are only ever written under xtsfs.dirid's.
 */
void xm_dir_found(struct xmount *m, struct xnode *dir, struct xnode *in,
		  const char *name);

/* ---- making, removing, renaming, attributes (entries.c) ---------------- */

/*
 * xm_mkdir(), xm_mknod(), xm_symlink() - make @name in @dir for @who,
 * owned by @who as the kernel would have made it, and look it up into
 * *@out / @st (one reference). Nothing is left behind on failure.
 */
int xm_mkdir(struct xmount *m, const struct caller *who, struct xnode *dir,
	     const char *name, mode_t mode, struct xnode **out, struct stat *st);
int xm_mknod(struct xmount *m, const struct caller *who, struct xnode *dir,
	     const char *name, mode_t mode, dev_t rdev, struct xnode **out,
	     struct stat *st);
int xm_symlink(struct xmount *m, const struct caller *who, struct xnode *dir,
	       const char *name, const char *target, struct xnode **out,
	       struct stat *st);

/* xm_link() - a hard link @name in @dir to @in, looked up into *@out. */
int xm_link(struct xmount *m, struct xnode *in, struct xnode *dir,
	    const char *name, struct xnode **out, struct stat *st);

/*
 * xm_unlink(), xm_rmdir() - remove @name from @dir, with its sidecar and
 * (directories) its dirid; the sticky bit is checked for @who against
 * the object there now.
 */
int xm_unlink(struct xmount *m, const struct caller *who, struct xnode *dir,
	      const char *name);
int xm_rmdir(struct xmount *m, const struct caller *who, struct xnode *dir,
	     const char *name);

/*
 * xm_rename() - rename(2) with @flags RENAME_NOREPLACE, RENAME_EXCHANGE
 * or RENAME_WHITEOUT (others: -EINVAL).
 */
int xm_rename(struct xmount *m, const struct caller *who, struct xnode *d1,
	      const char *name1, struct xnode *d2, const char *name2,
	      unsigned flags);

/* What xm_setattr() changes: the FUSE_SET_ATTR_* values (fuse_ops.c). */
enum {
	XM_SET_MODE = 1 << 0,
	XM_SET_UID = 1 << 1,
	XM_SET_GID = 1 << 2,
	XM_SET_SIZE = 1 << 3,
	XM_SET_ATIME = 1 << 4,
	XM_SET_MTIME = 1 << 5,
	XM_SET_ATIME_NOW = 1 << 7,
	XM_SET_MTIME_NOW = 1 << 8,
};

/*
 * xm_setattr() - change what @valid says of @in to @attr's values, for
 * @who (set-id bits dropped as the VFS does); @h: the handle the change
 * came through, or NULL. @st gets the attributes after.
 */
int xm_setattr(struct xmount *m, const struct caller *who, struct xnode *in,
	       const struct stat *attr, int valid, struct xhandle *h,
	       struct stat *st);

/* ---- open files (files.c) ---------------------------------------------- */

/*
 * xm_open() - open regular file @in with open(2) @flags for @who: *@h.
 * *@keep_cache: whether the kernel may keep the pages it has (nobody
 * changed the lower file since it last saw it); (*@h)->changed: its
 * cached attributes are stale. -ESTALE: the lower file was removed or
 * replaced behind our back (the kernel looks its name up again).
 */
int xm_open(struct xmount *m, const struct caller *who, struct xnode *in,
	    int flags, struct xhandle **h, bool *keep_cache);

/*
 * xm_create() - open(2) with O_CREAT of @name in @dir: the new (or, if
 * it appeared meanwhile and @flags has no O_EXCL, existing) file, looked
 * up into *@out / @st and opened into *@h.
 */
int xm_create(struct xmount *m, const struct caller *who, struct xnode *dir,
	      const char *name, mode_t mode, int flags, struct xnode **out,
	      struct stat *st, struct xhandle **h, bool *keep_cache);

/*
 * xm_read() - up to @size bytes at @off: *@data points at them, in the
 * calling thread's SCRATCH_REPLY buffer. Return: the count or -errno.
 */
ssize_t xm_read(struct xmount *m, struct xhandle *h, size_t size, off_t off,
		const uint8_t **data);

/*
 * xm_write() - write @size bytes at @off for @who; *@mode_changed: the
 * write dropped set-id bits (the kernel's cached mode is stale then).
 * @writeback: the kernel writes back pages of its cache, which a program
 * was told were written: on a full disk the writeback guard's reserve
 * makes room (*@refusing: the guard began refusing cached writes since
 * the last written-back write said so, here, at a check or at an open:
 * xm_guard_each_writer()). Return: the count or -errno.
 */
ssize_t xm_write(struct xmount *m, const struct caller *who, struct xhandle *h,
		 const uint8_t *buf, size_t size, off_t off, bool writeback,
		 bool *mode_changed, bool *refusing);

/* ---- the writeback guard (guard.c; wbguard.h) -------------------------- */

/*
 * xm_guard_start() - with the kernel's writeback cache agreed
 * (writeback_on) and @m->wbguard: make the reserve and plan the dirty
 * limit, which the first open sets (bdi.h). Logs what it did, or why
 * there is no guard (then a full disk shows only at fsync or close).
 * Return: 0 or -errno.
 */
int xm_guard_start(struct xmount *m);

/*
 * xm_guard_refuses() - whether a write through @h must be refused with
 * ENOSPC at the attribute refresh the kernel asked for it
 * (FUSE_GETATTR_FH): the guard refuses (its reserve is in use), @h writes
 * through the kernel's cache, and the request can only be a write's:
 * @h cannot read, or the attributes the kernel holds for the node have
 * not expired (xm_told_fresh()), so it was not a read or lseek that
 * asked (those ask for the size alone, which the kernel keeps itself
 * with the writeback cache; a write also asks for the mode, invalidated
 * by xm_guard_each_writer()).
 */
bool xm_guard_refuses(struct xmount *m, struct xhandle *h);

/*
 * xm_guard_watch() - whether a reply that gives the kernel attributes
 * of @in must be followed or preceded by their invalidation: the guard
 * refuses and @in has handles writing through the cache (their next
 * write must ask first).
 */
bool xm_guard_watch(struct xmount *m, struct xnode *in);

/* what the kernel keeps of attributes (notify.c) */

/*
 * xm_told_until() - the kernel keeps the attributes of @in it was just
 * given for @timeout seconds (its attr_valid).
 */
void xm_told_until(struct xnode *in, double timeout);

/* xm_told_fresh() - whether the kernel's copy of them has not expired. */
bool xm_told_fresh(struct xnode *in);

/*
 * xm_guard_each_writer() - call @fn for the node of every handle writing
 * through the kernel's cache (a node may come more than once).
 */
void xm_guard_each_writer(struct xmount *m,
			  void (*fn)(void *arg, struct xnode *in), void *arg);

/*
 * xm_flock() - flock(2) operation @op (LOCK_SH, LOCK_EX, LOCK_UN) on the
 * lower file of @h, never waiting (-EWOULDBLOCK: held elsewhere): with
 * -o sharedstorage, so that other mounts and other machines (NFS turns
 * flock into a lock on the server) exclude us. The caller waits.
 */
int xm_flock(struct xhandle *h, int op);

/*
 * xm_flush() - what close(2) of the lower file would report now; with
 * -o sharedstorage, written data is first synced to the lower file.
 */
int xm_flush(struct xmount *m, struct xhandle *h);

/*
 * xm_bare() - the handle of regular file @in for a request that came
 * without one (the kernel skips OPEN: fuse_ops.c, skip_open()), for the
 * request to give back with xm_bare_put(): opened at the first such
 * request, for reading and writing where the lower file allows it, and
 * kept with the node until the kernel forgets it or descriptors run out
 * (bare_reclaim()). Not one of @in's open handles (in->open): nothing
 * tells when the files opened on it close.
 */
int xm_bare(struct xmount *m, struct xnode *in, struct xhandle **h);

/* xm_bare_put() - done with @h; a no-op for a handle of an OPEN or NULL. */
void xm_bare_put(struct xhandle *h);

/*
 * xm_bare_adopt() - make @h, just made by xm_create(), the handle of its
 * node's I/O without one (xm_bare()), or close it if the node has one:
 * without OPEN the kernel sends no RELEASE of created files either.
 */
void xm_bare_adopt(struct xhandle *h);

/* xm_release() - close @h. */
void xm_release(struct xhandle *h);

/*
 * xm_fsync() - fsync or fdatasync of lower file or directory @fd, after
 * the names on the way to it (durable.h).
 */
int xm_fsync(struct xmount *m, int fd, bool datasync);

/* xm_fallocate() - fallocate(2) @mode on the plaintext. */
int xm_fallocate(struct xmount *m, struct xhandle *h, int mode, off_t off,
		 off_t len);

/* xm_lseek() - SEEK_DATA or SEEK_HOLE. Return: the offset or -errno. */
int64_t xm_lseek(struct xmount *m, struct xhandle *h, off_t off, int whence);

/* ---- record locks on the lower file (locks.c) -------------------------- */

/*
 * With -o sharedstorage, fcntl(2) record locks (F_SETLK, F_SETLKW,
 * F_GETLK and the F_OFD_* ones) are taken on the lower file, so that
 * other mounts and other machines exclude us: one lower open file
 * description per (node, lock owner @owner, the kernel's id of a
 * process's file table or of an open file), the owner's locks OFD locks
 * on it. Locks of an @lk: l_whence SEEK_SET, l_len 0 to the end.
 */

/*
 * xm_setlk() - F_SETLK of @lk for @owner through open file @h, never
 * waiting: -EAGAIN, the range is held by another owner (here or in
 * another mount). @lk->l_pid: the caller's process (what xm_getlk()
 * reports of this owner's locks).
 */
int xm_setlk(struct xmount *m, struct xhandle *h, uint64_t owner,
	     const struct flock *lk);

/*
 * xm_getlk() - F_GETLK: a lock of another owner that conflicts with
 * @lk into @lk, else l_type F_UNLCK. Its l_pid is the process that took
 * it if it did through this mount, else 0 (another mount's or
 * machine's, unknown).
 */
int xm_getlk(struct xmount *m, struct xhandle *h, uint64_t owner,
	     struct flock *lk);

/*
 * struct xm_lockwait - a lock to wait for: F_SETLKW of @lk for @owner
 * (@flock_op 0) or a blocking flock(2) @flock_op (LOCK_SH, LOCK_EX),
 * through @h. @interrupted(@arg): whether to stop waiting; @done(@arg,
 * err) is called once, with 0 or -errno (-EINTR: interrupted, or the
 * mount ends), from any thread.
 */
struct xm_lockwait {
	struct xhandle *h;
	uint64_t owner;
	struct flock lk;
	int flock_op;
	bool (*interrupted)(void *arg);
	void (*done)(void *arg, int err);
	void *arg;
};

/*
 * xm_lock_wait() - get the lock of @w (copied), waiting without holding
 * the caller: tried once now; if it is held, one thread of the mount
 * tries again every 1 ms, backing off to every 10 ms, until it gets it
 * or @w->interrupted().
 */
void xm_lock_wait(struct xmount *m, const struct xm_lockwait *w);

/*
 * xm_lock_flush() - @owner closed a descriptor of @in: its locks on @in
 * go (POSIX: any close by the process releases them).
 */
void xm_lock_flush(struct xmount *m, struct xnode *in, uint64_t owner);

/*
 * xm_lock_release() - before xm_release(@h): the owners whose locks
 * were taken only through @h lose them (an OFD lock's owner is the
 * open file).
 */
void xm_lock_release(struct xmount *m, struct xhandle *h);

/*
 * xm_locks_end() - stop waiting (each wait ends with -EINTR), drop every
 * lock. Before the session's end: waits are answered to it.
 */
void xm_locks_end(struct xmount *m);

/* ---- extended attributes (xattrs.c) ------------------------------------ */

/*
 * xm_getxattr() - getxattr(2) of @in: the value of @name into @out, or
 * with @size 0 its size. Return: the size, or -errno as getxattr(2)
 * (-ENODATA, -ERANGE, -EOPNOTSUPP for a namespace not kept; -EIO for a
 * damaged value).
 */
ssize_t xm_getxattr(struct xmount *m, struct xnode *in, const char *name,
		    void *out, size_t size);

/* xm_setxattr() - setxattr(2) of @in, @flags XATTR_CREATE/XATTR_REPLACE. */
int xm_setxattr(struct xmount *m, struct xnode *in, const char *name,
		const void *val, size_t size, int flags);

/* xm_removexattr() - removexattr(2) of @in. */
int xm_removexattr(struct xmount *m, struct xnode *in, const char *name);

/*
 * xm_listxattr() - listxattr(2) of @in for @who: the plaintext names
 * into @out, or with @size 0 the size they need; trusted.* only for
 * root, as Linux lists them only to CAP_SYS_ADMIN.
 */
ssize_t xm_listxattr(struct xmount *m, const struct caller *who,
		     struct xnode *in, char *out, size_t size);

/* ---- listings (dirlist.c) ----------------------------------------------- */

/* struct xm_dirent - one plaintext entry of a listing. */
struct xm_dirent {
	char name[256];            /* plaintext name, "." and ".." included */
	const char *stored;        /* its lower name (valid until the next) */
	ino_t ino;                 /* lower inode number */
	unsigned char type;        /* DT_* */
	off_t next;                /* the position after it */
};

/*
 * xm_opendir() - open directory @in for listing: *@d. *@keep_cache:
 * whether the lower directory is as it was at the last listing.
 */
int xm_opendir(struct xmount *m, struct xnode *in, struct xdir **d,
	       bool *keep_cache);

/*
 * xm_dir_seek() - go to position @offset of @d: 0 or a next that the
 * listing gave (nothing to do if the listing is there already).
 */
int xm_dir_seek(struct xdir *d, off_t offset);

/*
 * xm_dir_peek() - the entry at @d's position, without moving past it:
 * entries of our own files are skipped, undecryptable ones too (logged,
 * and told to m->skipped if set).
 * Return: 1 and *@e, 0 at the end, -errno (-EIO: the directory's dirid
 * is lost, no name can be decrypted).
 */
int xm_dir_peek(struct xmount *m, struct xnode *dir, struct xdir *d,
		struct xm_dirent *e);

/* xm_dir_take() - move past the entry xm_dir_peek() gave. */
void xm_dir_take(struct xdir *d, const struct xm_dirent *e);

/* xm_dir_fd() - the lower directory's descriptor (for fsyncdir). */
int xm_dir_fd(const struct xdir *d);

/* xm_releasedir() - close @d. */
void xm_releasedir(struct xdir *d);

/*
 * xm_dir_borrow() - a listing of directory @in for one request that has
 * no open directory (the kernel skips OPENDIR): the calling thread's own
 * struct xdir, at position 0 (xm_dir_seek() moves it). Give it back with
 * xm_dir_return() before the thread's next xm_dir_borrow().
 */
int xm_dir_borrow(struct xnode *in, struct xdir **d);

/* xm_dir_return() - close what xm_dir_borrow() opened. */
void xm_dir_return(struct xdir *d);

#endif /* XTSFS_MOUNT_H */
