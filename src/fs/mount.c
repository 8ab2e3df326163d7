/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mount.c - the forward mount's volume and nodes: set-up, the node table,
 * attributes, lookup (mount.h). Dirids and names: dirnames.c.
 */
#include "mount_int.h"

#include "log.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

/*
 * New dirids and sidecars are synced at most this long after they were
 * written, if no fsync through the mount did it before (durable.h).
 */
#define DURABLE_DELAY_MS 1000

/*
 * Dirids read ahead (prefetch.h): threads, so that several small reads are
 * in flight at once, and queued directories, beyond which a listing's
 * subdirectories are left to the requests that open them.
 */
#define PREFETCH_THREADS 4
#define PREFETCH_DEPTH 1024

/*
 * Lower subdirectories read ahead (xm_lower_ahead()): threads, each
 * reading the first entries of one directory at a time, and queued
 * directories, beyond which a listing's subdirectories are left to the
 * walk.
 */
#define LOWER_AHEAD_THREADS 2
#define LOWER_AHEAD_DEPTH 4096
#define LOWER_AHEAD_BYTES 16384

/*
 * What the mount may rely on in a lower filesystem it knows by its magic
 * number (statfs f_type); anything not in lower_kinds[] gets none of it.
 */
enum {
	/*
	 * close() cannot report anything (no ->flush in the kernel), so a
	 * FLUSH at every close would be a round trip for nothing: opens say
	 * FOPEN_NOFLUSH. Network filesystems (NFS, CIFS) report delayed
	 * write errors at close: they keep FLUSH (xm_flush).
	 */
	LOWER_NOFLUSH = 1u << 0,
	/*
	 * Two things done exactly:
	 * - SEEK_HOLE reports holes exactly, so that writes in place may
	 *   skip the reservation of ranges without holes
	 *   (CONTENT_HOLES_SEEKABLE). The generic lseek of other
	 *   filesystems calls every byte of a file data, sparse or not:
	 *   there every overwrite keeps its fallocate. (ext2 and ext3
	 *   volumes mounted by the ext4 driver share its magic and its
	 *   lseek; the old ext2 driver has no fallocate, so its answer
	 *   changes nothing.)
	 * - a listing position (d_off) from one open stays valid in another
	 *   (ext4's hashes, the others' offsets), so that a listing may be
	 *   read without a handle of its own (fuse_ops.c, skip_opendir()).
	 *   Not FUSE lowers: sshfs died on a READDIR at a position its fresh
	 *   handle had not read to (its mount then said ENOTCONN;
	 *   38-network).
	 */
	LOWER_EXACT = 1u << 1,
	/*
	 * On a local disk: its cold reads are what a walk of the tree waits
	 * for, and reading ahead costs no network (nor is there anything to
	 * read on tmpfs).
	 */
	LOWER_DISK = 1u << 2,
};

static const struct {
	unsigned long magic;
	unsigned flags;
} lower_kinds[] = {
	/* EXT2/3/4_SUPER_MAGIC, XFS_SUPER_MAGIC */
	{ 0xEF53UL, LOWER_NOFLUSH | LOWER_EXACT | LOWER_DISK },
	{ 0x58465342UL, LOWER_NOFLUSH | LOWER_EXACT | LOWER_DISK },
	/* BTRFS_SUPER_MAGIC, F2FS_SUPER_MAGIC */
	{ 0x9123683EUL, LOWER_EXACT | LOWER_DISK },
	{ 0xF2F52010UL, LOWER_EXACT | LOWER_DISK },
	/* TMPFS_MAGIC */
	{ 0x01021994UL, LOWER_NOFLUSH | LOWER_EXACT },
};

/* The LOWER_* flags of the filesystem of @fd: none if unknown. */
static unsigned lower_fs_flags(int fd)
{
	struct statfs sf;
	size_t i;

	if (fstatfs(fd, &sf))
		return 0;
	for (i = 0; i < sizeof(lower_kinds) / sizeof(lower_kinds[0]); i++)
		if (lower_kinds[i].magic == (unsigned long)sf.f_type)
			return lower_kinds[i].flags;
	return 0;
}

/* see mount.h */
void xm_log(const struct xmount *m, int prio, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	xlog_v(m->mountpoint, prio, fmt, ap);
	va_end(ap);
}

/* ---- damaged entries, logged once --------------------------------------- */

#define REPORTED_MAX 4096 /* a power of two; beyond it, one last line */

struct xm_reported {
	pthread_mutex_t lock;
	unsigned int n;
	bool full;                  /* the "no more" line was logged */
	uint64_t key[REPORTED_MAX]; /* open addressing; 0 = free */
};

/* FNV-1a of the directory and the name: which entry was reported. */
static uint64_t report_key(uint64_t dir_ino, const char *name)
{
	uint64_t h = 0xcbf29ce484222325ull ^ dir_ino;

	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * 0x100000001b3ull;
	return h | 1;
}

/* Whether @key is new (and now remembered); *@full: no room left. */
static bool report_first(struct xm_reported *r, uint64_t key, bool *full)
{
	unsigned int i = (unsigned int)key & (REPORTED_MAX - 1);
	bool first = true;

	*full = false;
	pthread_mutex_lock(&r->lock);
	while (r->key[i] && r->key[i] != key)
		i = (i + 1) & (REPORTED_MAX - 1);
	if (r->key[i]) {
		first = false;
	} else if (r->n >= REPORTED_MAX / 2) {
		first = !r->full;
		*full = first;
		r->full = true;
	} else {
		r->key[i] = key;
		r->n++;
	}
	pthread_mutex_unlock(&r->lock);
	return first;
}

/* see mount_int.h */
void report_bad(struct xmount *m, uint64_t dir_ino, const char *lower,
		const char *what)
{
	bool full;

	if (m->reported &&
	    !report_first(m->reported, report_key(dir_ino, lower), &full))
		return;
	if (m->reported && full) {
		xm_log(m, LOG_WARNING, "more damaged entries than are logged; "
		       "xtsfs-fsck %s lists them all", m->cipherdir);
		return;
	}
	xm_log(m, LOG_WARNING, "directory (lower inode %llu): entry \"%s\" %s "
	       "(logged once; xtsfs-fsck %s checks the whole volume)",
	       (unsigned long long)dir_ino, lower, what,
	       m->cipherdir ? m->cipherdir : "CIPHERDIR");
}

/* ---- the inode table (itable.h) ------------------------------------------ */

static struct xnode *xnode_of(struct itable_node *n)
{
	return (struct xnode *)(void *)n; /* node is the first member */
}

static struct xnode *node_new(int fd, const struct stat *st)
{
	struct xnode *in = calloc(1, sizeof(*in));

	if (!in)
		return NULL;
	in->fd = fd;
	in->node.k1 = st->st_dev; /* kind 0: a lower object */
	in->node.k2 = st->st_ino;
	in->type = st->st_mode & S_IFMT;
	pthread_mutex_init(&in->meta_lock, NULL);
	pthread_rwlock_init(&in->lock, NULL);
	pthread_mutex_init(&in->seen_lock, NULL);
	/*
	 * A new node: the kernel has no pages of it, and its attributes
	 * are the ones in @st (the reply being made): what it has seen.
	 * Its first open then tells a change since from none.
	 */
	if (S_ISREG(st->st_mode))
		attr_snap_set(&in->seen, st);
	return in;
}

static void node_free(struct xnode *in)
{
	bare_free(in);
	close(in->fd);
	pthread_mutex_destroy(&in->meta_lock);
	pthread_rwlock_destroy(&in->lock);
	pthread_mutex_destroy(&in->seen_lock);
	free(in);
}

static void node_free_node(struct itable_node *n)
{
	node_free(xnode_of(n));
}

/* The inode of lower object (@dev, @ino) with one more reference, or NULL. */
static struct xnode *node_ref(struct xmount *m, dev_t dev, ino_t ino)
{
	struct itable_node *n = itable_ref(&m->inodes, 0, dev, ino);

	return n ? xnode_of(n) : NULL;
}

/* see mount_int.h */
struct xnode *node_find(struct xmount *m, dev_t dev, ino_t ino)
{
	return node_ref(m, dev, ino);
}

/* One more reference to @in, which the caller holds one on already. */
void node_hold(struct xmount *m, struct xnode *in)
{
	if (in != m->root)
		itable_hold(&m->inodes, &in->node);
}

/*
 * The inode for lower object @fd (whose stat is @st), taking one kernel
 * reference. @fd is consumed: kept in a new inode or closed.
 */
static struct xnode *node_get(struct xmount *m, int fd, const struct stat *st)
{
	struct xnode *in = node_new(fd, st), *got;

	if (!in) {
		close(fd);
		return NULL;
	}
	got = xnode_of(itable_insert(&m->inodes, &in->node));
	if (got != in)
		node_free(in); /* closes fd: the table had this object */
	else
		notify_watch(m, in); /* a directory the kernel now knows */
	return got;
}

/*
 * After the kernel forgot most of many nodes (an rm -rf, a drop of its
 * caches): give the freed memory back. glibc keeps freed small blocks in
 * each thread's arena for reuse, so a daemon that once knew 12,000 files
 * kept about 15 MiB it no longer used, and the next large write added
 * its buffers on top (a peak RSS of 47 MiB in fsbench). Once the table
 * is down to a quarter of its high mark (of at least 4096 nodes), one
 * thread trims every arena (a few ms, rarely).
 */
static void node_trim(struct xmount *m)
{
	if (itable_shrunk(&m->inodes, 4096))
		(void)malloc_trim(0);
}

/* see mount_int.h */
struct itable_node **node_snapshot(struct xmount *m, size_t *got)
{
	size_t max = itable_count(&m->inodes) + 64;
	struct itable_node **all = malloc(max * sizeof(*all));

	*got = all ? itable_snapshot(&m->inodes, all, max) : 0;
	return all;
}

/* see mount_int.h */
struct xnode *node_snap(struct itable_node **all, size_t i)
{
	return xnode_of(all[i]);
}

/* see mount_int.h */
void node_snapshot_drop(struct xmount *m, struct itable_node **all,
			size_t got)
{
	for (size_t i = 0; i < got; i++)
		xm_forget(m, node_snap(all, i), 1);
	free(all);
}

/* see mount.h */
void xm_forget(struct xmount *m, struct xnode *in, uint64_t n)
{
	if (in != m->root && itable_forget(&m->inodes, &in->node, n)) {
		notify_unwatch(m, in);
		node_free(in);
		node_trim(m);
	}
}

/* ---- lower subdirectories read ahead ------------------------------------ */

/* What xm_lower_ahead() queues: a held node and a lower name in it. */
struct lower_ahead {
	struct xnode *dir;
	char stored[];
};

static void lower_ahead_drop(void *ctx, void *item)
{
	struct lower_ahead *la = item;

	xm_forget(ctx, la->dir, 1);
	free(la);
}

/*
 * A prefetch thread: open the subdirectory and read its first entries,
 * which reads its inode and first block into the lower filesystem's
 * caches. Whatever fails (it went away, descriptors ran out) is left to
 * the walk.
 */
static void lower_ahead_run(void *ctx, void *item)
{
	struct lower_ahead *la = item;
	char buf[LOWER_AHEAD_BYTES];
	int fd = openat(la->dir->fd, la->stored, O_RDONLY | O_DIRECTORY |
			O_NOFOLLOW | O_CLOEXEC);

	if (fd >= 0) {
		(void)getdents64(fd, buf, sizeof(buf));
		close(fd);
	}
	lower_ahead_drop(ctx, la);
}

/* see mount.h */
void xm_lower_ahead(struct xmount *m, struct xnode *dir, const char *stored)
{
	size_t n = strlen(stored) + 1;
	struct lower_ahead *la;

	if (!m->lower_ra.running)
		return;
	la = malloc(sizeof(*la) + n);
	if (!la)
		return;
	memcpy(la->stored, stored, n);
	la->dir = dir;
	node_hold(m, dir);
	if (!prefetch_post(&m->lower_ra, la))
		lower_ahead_drop(m, la);
}

/* see mount.h */
int xm_init(struct xmount *m)
{
	struct stat st;
	unsigned lower;
	int err;

	/*
	 * Modes arrive from the kernel with the caller's umask already
	 * applied (no FUSE_DONT_MASK): the daemon's own must not take more
	 * bits away (a daemon started under umask 022 made every file
	 * created 0666 come out 0644). Our own files ask for 0444 exactly.
	 */
	umask(0);
	if (!m->doff)
		m->doff = LAYOUT_DOFF_COMPACT;
	if (!layout_doff_ok(m->doff))
		return -EINVAL;
	m->dops.root_fd = m->root_fd;
	m->dops.names = m->names;
	m->dops.durable = m->readonly ? NULL : &m->durable;
	m->dops.idkey = m->idkey;
	/* every writer derives dirids: merges keep names (FORMAT 4.2) */
	if (m->names && !m->readonly && !m->idkey)
		return -EINVAL;
	err = itable_init(&m->inodes, 1024);
	if (err)
		return err;
	m->reported = calloc(1, sizeof(*m->reported));
	if (!m->reported)
		return -ENOMEM;
	pthread_mutex_init(&m->reported->lock, NULL);
	pthread_mutex_init(&m->writers_lock, NULL);
	if (fstatat(m->root_fd, "", &st, AT_EMPTY_PATH) != 0)
		return -errno;
	/* the root is never in the table: the front end names it, forever */
	m->root = node_new(m->root_fd, &st);
	if (!m->root)
		return -ENOMEM;
	/* The root's dirid is 16 zero bytes (FORMAT 4.2). */
	m->root->dirid_ok = true;
	lower = lower_fs_flags(m->root_fd);
	/* shared storage: every close flushes (close-to-open, xm_flush) */
	m->noflush = (lower & LOWER_NOFLUSH) && !m->sharedstorage;
	m->write_flags = lower & LOWER_EXACT ? CONTENT_HOLES_SEEKABLE : 0;
	m->dir_offsets_stable = lower & LOWER_EXACT;
	/* plaintext names need no dirid */
	err = m->names ? prefetch_start(&m->prefetch, PREFETCH_THREADS,
					PREFETCH_DEPTH, dirid_prefetch_run,
					dirid_prefetch_drop, m) : 0;
	if (err)
		return err;
	/* best effort: without its threads nothing is read ahead */
	if (lower & LOWER_DISK)
		(void)prefetch_start(&m->lower_ra, LOWER_AHEAD_THREADS,
				     LOWER_AHEAD_DEPTH, lower_ahead_run,
				     lower_ahead_drop, m);
	if (!m->readonly) {
		/* syncfs() needs a real descriptor, not an O_PATH one */
		int fd = openat(m->root_fd, ".", O_RDONLY | O_DIRECTORY |
				O_CLOEXEC);

		if (fd < 0)
			return -errno;
		return durable_start(&m->durable, fd, NULL,
				     DURABLE_DELAY_MS);
	}
	return 0;
}

/* see mount.h */
void xm_destroy(struct xmount *m)
{
	int err;

	xm_notify_stop(m); /* it holds nodes while it works */
	xm_locks_end(m); /* its owners hold lower descriptors of nodes */
	prefetch_stop(&m->prefetch); /* its items hold nodes */
	prefetch_stop(&m->lower_ra); /* so do these */
	err = durable_stop(&m->durable);
	if (m->guard) {
		struct wbguard *g = m->guard;

		if (g->dips || g->lost || g->denied)
			xm_log(m, g->lost ? LOG_ERR : LOG_INFO,
			       "writeback guard: the reserve covered %llu "
			       "KiB of written-back pages in %llu pieces; "
			       "%llu cached writes refused; %llu written-back "
			       "writes failed for lack of space; %llu opens "
			       "for writing without the cache (no room for "
			       "their share of the reserve)",
			       g->dipped / 1024, g->dips,
			       (unsigned long long)atomic_load(&g->refused),
			       g->lost, g->denied);
		/* the reserve's space goes back with it */
		wbguard_stop(g);
		free(m->guard);
		m->guard = NULL;
	}

	if (err)
		xm_log(m, LOG_ERR, "cannot sync the cipher directory: %s",
		       strerror(-err));
	itable_destroy(&m->inodes, node_free_node);
	if (m->root)
		node_free(m->root); /* closes root_fd */
	m->root = NULL;
	/*
	 * Last: closing the inotify instance waits for the kernel to free
	 * every watch (an RCU grace period), and until our descriptors of
	 * the cipher directory are closed the daemon still looks in use
	 * (xtsfs-fsck right after an unmount).
	 */
	notify_free(m);
	if (m->reported)
		pthread_mutex_destroy(&m->reported->lock);
	free(m->reported);
	m->reported = NULL;
}

/* ---- names -------------------------------------------------------------- */

/* see mount_int.h */
bool xm_fd_retry(struct xmount *m, int err, int tries)
{
	const struct timespec step = { 0, 10 * 1000000L };

	if (err != -EMFILE && err != -ENFILE)
		return false;
	/* first the handles that cost the kernel nothing to give up */
	if (tries == 0 && bare_reclaim(m) > 0)
		return true;
	if (tries < 20 && xm_notify_prune(m)) {
		nanosleep(&step, NULL);
		return true;
	}
	xm_say_fd_limit(m, err);
	return false;
}

/* ---- attributes ---------------------------------------------------------- */

/* The plaintext length of symlink @fd (O_PATH of the lower symlink). */
static int64_t link_size(struct xmount *m, int fd)
{
	char out[4096];
	int err = dirops_readlink(&m->dops, fd, out);

	return err ? err : (int64_t)strlen(out);
}

/* Turn lower attributes into the plaintext view the kernel gets. */
static int attr_fix(struct xmount *m, int fd, struct stat *st)
{
	if (S_ISREG(st->st_mode)) {
		int64_t ps = content_plain_size(m->doff, (uint64_t)st->st_size);

		/*
		 * A 1..39-byte lower file (no room for its header): shown
		 * with that size, so that a read reaches us and says EIO
		 * (an empty file would read as empty where the kernel
		 * skips OPEN, -o noopen).
		 */
		if (ps >= 0)
			st->st_size = ps;
	} else if (S_ISLNK(st->st_mode) && m->names) {
		int64_t n = link_size(m, fd);

		st->st_size = n < 0 ? 0 : n;
	}
	return 0;
}

/* see mount.h */
int xm_getattr(struct xmount *m, struct xnode *in, struct stat *st)
{
	int locked = S_ISREG(in->type);

	/* Under the content lock, so a size never shows a half-done write. */
	if (locked)
		pthread_rwlock_rdlock(&in->lock);
	if (fstatat(in->fd, "", st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) {
		int err = -errno;

		if (locked)
			pthread_rwlock_unlock(&in->lock);
		return err;
	}
	if (locked)
		pthread_rwlock_unlock(&in->lock);
	return attr_fix(m, in->fd, st);
}

/* ---- lookup ------------------------------------------------------------- */

/* O_PATH of @name in @dirfd for a new node (fd_retry()), or -errno. */
static int open_node(struct xmount *m, int dirfd, const char *name)
{
	for (int tries = 0;; tries++) {
		int fd = openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		int err = -errno;

		if (fd >= 0)
			return fd;
		if (!xm_fd_retry(m, err, tries))
			return err;
	}
}

/* see mount.h */
void xm_say_fd_limit(struct xmount *m, int err)
{
	struct rlimit rl = { 0, 0 };

	if (__atomic_exchange_n(&m->said_fd_limit, true, __ATOMIC_RELAXED))
		return;
	(void)getrlimit(RLIMIT_NOFILE, &rl);
	xm_log(m, LOG_ERR, "out of file descriptors (%s): the daemon holds one "
	       "per file or directory the kernel knows, and its limit is "
	       "%llu; lookups and creates fail until the kernel forgets "
	       "some. Mount as root (the limit is raised to fs.nr_open) or "
	       "raise the hard limit (ulimit -Hn, LimitNOFILE=)", strerror(-err),
	       (unsigned long long)rl.rlim_cur);
}

/* see mount.h */
int xm_lookup_stored(struct xmount *m, struct xnode *dir, const char *stored,
		     ino_t listed_reg, struct xnode **out, struct stat *st)
{
	struct xnode *in;
	int fd, err;

	*out = NULL;
	/*
	 * An object we hold already (listed again, looked up again) needs no
	 * new descriptor: its inode number finds it. The table's O_PATH
	 * descriptor keeps it alive, so the number cannot name another. A
	 * listing gives the number (a regular file cannot be a mount point,
	 * whose listed number is the covered directory's); a lookup asks
	 * the lower filesystem.
	 */
	if (listed_reg) {
		in = node_ref(m, dir->node.k1, listed_reg);
	} else {
		if (fstatat(dir->fd, stored, st, AT_SYMLINK_NOFOLLOW))
			return -errno;
		in = node_ref(m, st->st_dev, st->st_ino);
	}
	if (!in) {
		fd = open_node(m, dir->fd, stored);
		if (fd < 0)
			return fd;
		/* the object opened, which a rename may have swapped */
		if (fstatat(fd, "", st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW)) {
			err = -errno;
			close(fd);
			return err;
		}
		in = node_get(m, fd, st);
		if (!in)
			return -ENOMEM;
		/*
		 * A new node (it kept our descriptor): nothing can be
		 * writing to it through the mount yet, so the attributes just
		 * read are current. One the table had (a concurrent lookup)
		 * is stat'ed again below, under its content lock.
		 */
		if (in->fd == fd) {
			err = attr_fix(m, in->fd, st);
			goto done;
		}
	}
	err = xm_getattr(m, in, st);
done:
	if (err) {
		xm_forget(m, in, 1);
		return err;
	}
	*out = in;
	return 0;
}

/* see mount.h */
int xm_lookup(struct xmount *m, struct xnode *dir, const char *name,
	      struct xnode **out, struct stat *st)
{
	struct lname ln;
	int err = name_enc_existing(m, dir, name, &ln);

	if (!err)
		err = xm_lookup_stored(m, dir, ln.stored, 0, out, st);
	if (!err)
		xm_dir_found(m, dir, *out, name);
	return err;
}

/* see mount.h */
int xm_readlink(struct xmount *m, struct xnode *in, char out[4096])
{
	int err = dirops_readlink(&m->dops, in->fd, out);

	if (err == -EIO)
		xm_log(m, LOG_ERR, "symlink (lower inode %llu): target cannot "
		       "be decrypted", (unsigned long long)in->node.k2);
	return err;
}

/* see mount.h */
int xm_access(struct xmount *m, struct xnode *in, int mask)
{
	char path[DIROPS_FD_PATH_SIZE];

	(void)m;
	dirops_fd_path(path, in->fd);
	return faccessat(AT_FDCWD, path, mask, 0) ? -errno : 0;
}

/* see mount_int.h */
void seen_forget(struct xnode *in)
{
	pthread_mutex_lock(&in->seen_lock);
	in->seen.ok = false;
	pthread_mutex_unlock(&in->seen_lock);
}

/* see mount.h */
bool ts_same(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

/* see mount.h */
void attr_snap_set(struct attr_snap *s, const struct stat *st)
{
	s->ok = true;
	s->mtime = st->st_mtim;
	s->ctime = st->st_ctim;
	s->size = st->st_size;
	s->mode = st->st_mode;
	s->uid = st->st_uid;
	s->gid = st->st_gid;
}

/* see mount.h */
bool attr_snap_meta_same(const struct attr_snap *s, const struct stat *st)
{
	return s->ok && ts_same(&s->mtime, &st->st_mtim) &&
	       s->mode == st->st_mode && s->uid == st->st_uid &&
	       s->gid == st->st_gid;
}

/* see mount_int.h */
bool seen_compare(struct xnode *in, const struct stat *st, bool compare,
		  time_t min_age, bool *attrs_same)
{
	struct timespec now = { 0 };
	bool same, attrs;

	if (min_age && clock_gettime(CLOCK_REALTIME, &now) != 0) {
		*attrs_same = false;
		return false;
	}
	pthread_mutex_lock(&in->seen_lock);
	attrs = compare && attr_snap_meta_same(&in->seen, st) &&
		in->seen.size == st->st_size;
	/*
	 * The ctime too: a sync tool that rewrites a file in place and puts
	 * its old mtime back (rsync --inplace -t) leaves mtime and size as
	 * they were, but not the ctime.
	 */
	same = attrs && ts_same(&in->seen.ctime, &st->st_ctim);
	attr_snap_set(&in->seen, st);
	in->seen.ok = !min_age || now.tv_sec - st->st_ctim.tv_sec >= min_age;
	pthread_mutex_unlock(&in->seen_lock);
	*attrs_same = attrs;
	return same;
}

/* see mount_int.h */
bool seen_check(struct xnode *in, int fd, bool compare, time_t min_age)
{
	struct stat st;
	bool attrs;

	if (fstat(fd, &st) != 0)
		return false;
	return seen_compare(in, &st, compare, min_age, &attrs);
}
