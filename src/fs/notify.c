/* SPDX-License-Identifier: Apache-2.0 */
/*
 * notify.c - change notification for the forward mount (mount.h): the
 * lower directories the kernel knows are watched with inotify(7), and a
 * thread of ours turns each change made beside the mount (another mount
 * of the cipher directory, a sync tool, a restore) into a word to the
 * kernel through the front end's callbacks: the attributes (and, when
 * the contents changed, the pages) of an object, or an entry by its
 * plaintext name. So a stat(2) through this mount sees such a change
 * about as soon as an open does, whatever the attribute and entry
 * timeouts (doc/DESIGN.md, "Change notification").
 *
 * Our own changes raise the same events, and reacting to them would
 * throw away exactly the caches that make the mount fast (the entry we
 * just made, the pages we just wrote). They are filtered:
 * - names: every create, remove and rename through this mount is noted
 *   first (notify_own()); the event of that name in that directory is
 *   then taken as ours, once, within OWN_TTL_MS;
 * - attributes and contents: a regular file's lower state is compared,
 *   under its content lock (so a write of ours is done and recorded),
 *   with what the mount last saw or wrote (its seen record), and every
 *   object's with what the kernel was last told (its told record): an
 *   event that leaves both as the kernel knows them is nothing to tell.
 * Events of objects the kernel has no node of are nothing to tell
 * either: it caches nothing of them.
 *
 * Locks: the notifier's own (watch table, own names) is never held
 * while the kernel is told, nor is any lock of the core: the kernel may
 * need an inode lock that a request in flight holds.
 */
#include "mount_int.h"

#include "log.h"
#include "monotime.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

/* What a watch asks for. */
#define WATCH_ENTRY (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO)
#define WATCH_ATTR (IN_ATTRIB | IN_MODIFY | IN_CLOSE_WRITE)
#define WATCH_SELF (IN_DELETE_SELF | IN_MOVE_SELF)
#define WATCH_MASK (WATCH_ENTRY | WATCH_ATTR | WATCH_SELF | IN_ONLYDIR | \
		    IN_EXCL_UNLINK)

/*
 * After the first event of a burst, wait this long before reading:
 * events of one change come together (an append is a modify and a
 * close), inotify merges repeats still queued, and a change of ours in
 * flight is done and recorded by then. Adds this much to the window.
 */
#define BATCH_MS 10

/* How long a noted change of ours waits for its event. */
#define OWN_TTL_MS 5000

#define WD_BUCKETS 4096  /* watch table, chained; a power of two */
#define OWN_BUCKETS 1024 /* own names: buckets of OWN_WAYS; power of two */
#define OWN_WAYS 4
#define LONG_SLOTS 256   /* long names remembered; a power of two */
#define BATCH_MAX 1024   /* distinct (directory, name) per batch */
#define BATCH_SLOTS 2048 /* its hash, a power of two above BATCH_MAX */

/* struct wd_ent - one watch: which directory (the root, or by key). */
struct wd_ent {
	struct wd_ent *next;
	int wd;
	unsigned refs;     /* nodes that asked for it (one, but for races) */
	bool root;
	uint64_t dev, ino; /* the directory's node key */
};

/* struct own_ent - a change of ours whose event is still to come. */
struct own_ent {
	uint64_t dev, ino; /* the directory */
	uint64_t hash;     /* of the lower name */
	int64_t at_ms;     /* when noted (monotonic) */
	int n;             /* events still expected */
};

/*
 * struct long_ent - the plaintext of a long name (FORMAT 4.3) the kernel
 * may cache: once the entry and its sidecar are removed beside us, it
 * can be had nowhere else.
 */
struct long_ent {
	uint64_t dev, ino; /* the directory */
	uint64_t hash;     /* of the stored name */
	char plain[256];
};

/* struct bev - what a batch holds for one (directory, name). */
struct bev {
	int wd;
	uint32_t mask;
	uint64_t hash;
	char name[NAMES_STORED_MAX + 1];
};

struct xm_notify {
	struct xmount *m;
	const struct xm_notify_cb *cb;
	void *arg;
	int ifd;                     /* inotify */
	int kick[2];                 /* to the thread: 's' stop, 'f' flush,
				      * 'p' prune */
	atomic_bool prune_asked;     /* a 'p' is on its way */
	bool prune_off;              /* the kernel cannot (thread's) */
	int64_t pruned_ns;           /* the last prune (thread's) */
	pthread_t thread;
	bool running;
	pthread_mutex_t lock;        /* wd[], own[], flush_*, limit_logged */
	pthread_cond_t flushed;
	unsigned long flush_req, flush_done;
	bool limit_logged;
	struct wd_ent *wd[WD_BUCKETS];
	struct own_ent own[OWN_BUCKETS][OWN_WAYS];
	struct long_ent longs[LONG_SLOTS];
	/* the thread's alone */
	bool overflow;
	size_t nb;
	struct bev batch[BATCH_MAX];
	int16_t slot[BATCH_SLOTS];   /* batch index + 1, 0 free */
	_Alignas(struct inotify_event) char buf[64 * 1024];
	atomic_ullong events, own_seen, inodes, entries, overflows, unwatched;
	atomic_ullong pruned;
};

static uint64_t name_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		h = (h ^ *p) * 0x100000001b3ull;
	return h;
}

/* ---- the watch table --------------------------------------------------- */

static struct wd_ent **wd_slot(struct xm_notify *n, int wd)
{
	struct wd_ent **pp = &n->wd[(unsigned)wd & (WD_BUCKETS - 1)];

	while (*pp && (*pp)->wd != wd)
		pp = &(*pp)->next;
	return pp;
}

/* see mount_int.h */
void notify_watch(struct xmount *m, struct xnode *dir)
{
	struct xm_notify *n = m->notify;
	char path[DIROPS_FD_PATH_SIZE];
	struct wd_ent **pp, *e;
	bool log_limit = false;
	int wd;

	if (!n || !n->running || dir->type != S_IFDIR)
		return;
	dirops_fd_path(path, dir->fd);
	pthread_mutex_lock(&n->lock);
	/* under the lock: a forgotten node's rm_watch of the same inode */
	wd = inotify_add_watch(n->ifd, path, WATCH_MASK);
	if (wd < 0) {
		if (errno == ENOSPC && !n->limit_logged)
			log_limit = n->limit_logged = true;
		atomic_fetch_add(&n->unwatched, 1);
		pthread_mutex_unlock(&n->lock);
		if (log_limit)
			xm_log(m, LOG_WARNING, "inotify watch limit reached "
			       "(fs.inotify.max_user_watches): in directories "
			       "beyond it, changes made beside the mount show "
			       "at the next open or after the timeouts, as "
			       "with -o nonotify (logged once)");
		return;
	}
	pp = wd_slot(n, wd);
	if (*pp) {
		(*pp)->refs++; /* the inode's watch already: the same object */
	} else if ((e = calloc(1, sizeof(*e)))) {
		e->wd = wd;
		e->refs = 1;
		e->root = dir == m->root;
		e->dev = dir->node.k1;
		e->ino = dir->node.k2;
		*pp = e;
	} else {
		(void)inotify_rm_watch(n->ifd, wd);
		wd = 0;
	}
	dir->notify_wd = wd;
	pthread_mutex_unlock(&n->lock);
}

/* see mount_int.h */
void notify_listing_stale(struct xmount *m, struct xnode *dir)
{
	struct xm_notify *n = m->notify;

	if (!n || !n->running || !dir_take_stale(dir))
		return;
	atomic_fetch_add(&n->inodes, 1);
	n->cb->inval_inode(n->arg, dir, true);
}

/* see mount_int.h */
void notify_unwatch(struct xmount *m, struct xnode *dir)
{
	struct xm_notify *n = m->notify;
	struct wd_ent **pp, *e;

	if (!n || dir->notify_wd <= 0)
		return;
	pthread_mutex_lock(&n->lock);
	pp = wd_slot(n, dir->notify_wd);
	e = *pp;
	/* gone already if the kernel dropped it (IN_IGNORED) */
	if (e && e->dev == dir->node.k1 && e->ino == dir->node.k2 &&
	    --e->refs == 0) {
		*pp = e->next;
		(void)inotify_rm_watch(n->ifd, e->wd);
		free(e);
	}
	dir->notify_wd = 0;
	pthread_mutex_unlock(&n->lock);
}

/* The kernel dropped watch @wd (its directory went away). */
static void wd_ignored(struct xm_notify *n, int wd)
{
	struct wd_ent **pp, *e;

	pthread_mutex_lock(&n->lock);
	pp = wd_slot(n, wd);
	e = *pp;
	if (e) {
		*pp = e->next;
		free(e);
	}
	pthread_mutex_unlock(&n->lock);
}

/*
 * The directory node of watch @wd with one more reference (release with
 * node_put()), or NULL: its node is being forgotten.
 */
static struct xnode *wd_node(struct xm_notify *n, int wd)
{
	struct wd_ent *e;
	uint64_t dev = 0, ino = 0;
	bool root = false, found;

	pthread_mutex_lock(&n->lock);
	e = *wd_slot(n, wd);
	found = e != NULL;
	if (e) {
		root = e->root;
		dev = e->dev;
		ino = e->ino;
	}
	pthread_mutex_unlock(&n->lock);
	if (!found)
		return NULL;
	return root ? n->m->root : node_find(n->m, (dev_t)dev, (ino_t)ino);
}

/* The node key of watch @wd's directory: false if it has none. */
static bool wd_key(struct xm_notify *n, int wd, uint64_t *dev, uint64_t *ino)
{
	struct wd_ent *e;

	pthread_mutex_lock(&n->lock);
	e = *wd_slot(n, wd);
	if (e) {
		*dev = e->dev;
		*ino = e->ino;
	}
	pthread_mutex_unlock(&n->lock);
	return e != NULL;
}

static void node_put(struct xmount *m, struct xnode *in)
{
	if (in != m->root)
		xm_forget(m, in, 1);
}

/* ---- our own names ----------------------------------------------------- */

static struct own_ent *own_bucket(struct xm_notify *n, uint64_t dev,
				  uint64_t ino, uint64_t hash)
{
	uint64_t k = hash ^ (dev * 0x9e3779b97f4a7c15ull) ^ (ino << 7);

	return n->own[(k ^ (k >> 29)) & (OWN_BUCKETS - 1)];
}

static bool own_live(const struct own_ent *e, int64_t now)
{
	return e->n > 0 && now - e->at_ms < OWN_TTL_MS;
}

/* see mount_int.h */
void notify_own(struct xmount *m, struct xnode *dir, const char *stored,
		int count)
{
	struct xm_notify *n = m->notify;
	uint64_t h, dev = dir->node.k1, ino = dir->node.k2;
	struct own_ent *b, *use;
	int64_t now;

	if (!n || !n->running)
		return;
	h = name_hash(stored);
	b = own_bucket(n, dev, ino, h);
	now = mono_ms();
	pthread_mutex_lock(&n->lock);
	for (int i = 0; i < OWN_WAYS; i++) {
		struct own_ent *e = &b[i];

		if (own_live(e, now) && e->dev == dev && e->ino == ino &&
		    e->hash == h) {
			e->n += count; /* 0: free again */
			e->at_ms = now;
			pthread_mutex_unlock(&n->lock);
			return;
		}
	}
	if (count > 0) {
		/* a free way, else the oldest (its event is late: told) */
		use = &b[0];
		for (int i = 0; i < OWN_WAYS; i++) {
			if (!own_live(&b[i], now)) {
				use = &b[i];
				break;
			}
			if (b[i].at_ms < use->at_ms)
				use = &b[i];
		}
		*use = (struct own_ent){ dev, ino, h, now, count };
	}
	pthread_mutex_unlock(&n->lock);
}

/* Whether an entry event of @name in directory (@dev, @ino) is ours. */
static bool own_take(struct xm_notify *n, uint64_t dev, uint64_t ino,
		     const char *name)
{
	uint64_t h = name_hash(name);
	struct own_ent *b = own_bucket(n, dev, ino, h);
	int64_t now = mono_ms();
	bool ours = false;

	pthread_mutex_lock(&n->lock);
	for (int i = 0; i < OWN_WAYS && !ours; i++) {
		struct own_ent *e = &b[i];

		if (own_live(e, now) && e->dev == dev && e->ino == ino &&
		    e->hash == h) {
			e->n--;
			ours = true;
		}
	}
	pthread_mutex_unlock(&n->lock);
	return ours;
}

static void own_clear(struct xm_notify *n)
{
	pthread_mutex_lock(&n->lock);
	memset(n->own, 0, sizeof(n->own));
	pthread_mutex_unlock(&n->lock);
}

/* ---- long names -------------------------------------------------------- */

/* see mount_int.h */
void notify_long_name(struct xmount *m, struct xnode *dir, const char *stored,
		      const char *plain)
{
	struct xm_notify *n = m->notify;
	uint64_t h;
	struct long_ent *e;

	if (!n || !n->running)
		return;
	h = name_hash(stored);
	e = &n->longs[(h ^ dir->node.k2) & (LONG_SLOTS - 1)];
	pthread_mutex_lock(&n->lock);
	e->dev = dir->node.k1;
	e->ino = dir->node.k2;
	e->hash = h;
	snprintf(e->plain, sizeof(e->plain), "%s", plain);
	pthread_mutex_unlock(&n->lock);
}

/* The plaintext of long name @stored of @dir, if remembered, into @out. */
static bool long_find(struct xm_notify *n, struct xnode *dir,
		      const char *stored, char out[256])
{
	uint64_t h = name_hash(stored);
	struct long_ent *e = &n->longs[(h ^ dir->node.k2) & (LONG_SLOTS - 1)];
	bool found;

	pthread_mutex_lock(&n->lock);
	found = e->hash == h && e->dev == dir->node.k1 &&
		e->ino == dir->node.k2 && e->plain[0];
	if (found)
		memcpy(out, e->plain, sizeof(e->plain));
	pthread_mutex_unlock(&n->lock);
	return found;
}

/* ---- what changed ------------------------------------------------------ */

/* see mount.h */
void xm_told(struct xnode *in, const struct stat *st)
{
	pthread_mutex_lock(&in->seen_lock);
	attr_snap_set(&in->told, st);
	pthread_mutex_unlock(&in->seen_lock);
}

/* see mount.h */
void xm_told_until(struct xnode *in, double timeout)
{
	int64_t until = mono_ns() + (int64_t)(timeout * 1e9);

	pthread_mutex_lock(&in->seen_lock);
	in->attr_expiry_ns = until;
	pthread_mutex_unlock(&in->seen_lock);
}

/* see mount.h */
bool xm_told_fresh(struct xnode *in)
{
	int64_t until;

	pthread_mutex_lock(&in->seen_lock);
	until = in->attr_expiry_ns;
	pthread_mutex_unlock(&in->seen_lock);
	return mono_ns() < until;
}

/*
 * Whether the kernel must hear of @in's lower state @st (plaintext size
 * @psize), and *@pages whether its pages too; records it as told.
 * seen_lock held.
 */
static bool must_tell(struct xnode *in, const struct stat *st, off_t psize,
		      bool *pages)
{
	bool reg = S_ISREG(st->st_mode);
	bool seen_same = reg && in->seen.ok && in->seen.size == st->st_size &&
			 ts_same(&in->seen.mtime, &st->st_mtim);

	/*
	 * A regular file as this mount last saw or wrote it: our own
	 * change (write, truncate, setattr), or one an open of ours has
	 * taken in already. The kernel knows. Unless the ctime moved: a
	 * file rewritten in place with its size and mtime put back (rsync
	 * --inplace -t), which an open would see (files.c, handle_open())
	 * but no open may come (-o noopen), or files held open; or only
	 * metadata changed (a link, an xattr), and the pages are read
	 * again for nothing.
	 */
	if (seen_same && attr_snap_meta_same(&in->seen, st)) {
		if (ts_same(&in->seen.ctime, &st->st_ctim) || !in->told.ok)
			return false;
		attr_snap_set(&in->seen, st);
		attr_snap_set(&in->told, st);
		in->told.size = psize;
		*pages = true;
		return true;
	}
	/* nothing cached, or cached as it is */
	if (!in->told.ok || (attr_snap_meta_same(&in->told, st) &&
			     (!reg || in->told.size == psize)))
		return false;
	/* the contents moved since the kernel last heard: its pages too */
	*pages = reg && !seen_same &&
		 (!ts_same(&in->told.mtime, &st->st_mtim) ||
		  in->told.size != psize);
	attr_snap_set(&in->told, st);
	in->told.size = psize;
	return true;
}

/* Tell the kernel of @in's attributes if they changed beside us. */
static void node_check(struct xm_notify *n, struct xnode *in)
{
	bool pages = false, tell = false;
	struct stat st;

	/*
	 * Under the content lock: a change of ours in progress (a write, a
	 * truncate, a setattr) finishes and is recorded first, and none
	 * starts before the records are compared with the lower state.
	 */
	pthread_rwlock_rdlock(&in->lock);
	if (fstatat(in->fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) == 0 &&
	    st.st_nlink > 0) { /* a removed object: its name's event tells */
		int64_t ps = S_ISREG(st.st_mode) ?
			     content_plain_size(n->m->doff,
						(uint64_t)st.st_size) : 0;

		pthread_mutex_lock(&in->seen_lock);
		tell = must_tell(in, &st, ps < 0 ? 0 : ps, &pages);
		pthread_mutex_unlock(&in->seen_lock);
	}
	pthread_rwlock_unlock(&in->lock);
	/*
	 * Contents written beside us may be another file's, header and all
	 * (a sync tool writing in place): read the header again before the
	 * next read or write, handles held open and xm_bare()'s included.
	 */
	if (pages)
		header_forget(in);
	if (tell) {
		atomic_fetch_add(&n->inodes, 1);
		n->cb->inval_inode(n->arg, in, pages);
	}
}

/*
 * Entry @name of @dir appeared, vanished or moved beside us; @mask: the
 * batch's events of it.
 *
 * A name that only appeared has its entry expired, not dropped: the
 * kernel may have looked it up already (a file made in another mount and
 * read here at once, before the event came), and dropping that dentry
 * would evict the unused inode with its pages, FUSE keeping no inode
 * without a dentry. Expired, it is looked up again at its next use, and
 * kept only if the name still leads to the same node: a negative entry
 * never is. A name that vanished (or vanished and came back) is dropped.
 *
 * Return: whether the kernel was told of a name (so its listing of @dir
 * is stale too).
 */
static bool entry_changed(struct xm_notify *n, struct xnode *dir,
			  const char *name, uint32_t mask)
{
	bool expire = !(mask & (IN_DELETE | IN_MOVED_FROM));
	char plain[256];
	int rc = name_dec(n->m, dir, name, plain);

	if (rc == 1)
		return false; /* ours: a dirid, a sidecar, the header */
	/*
	 * A long name whose sidecar went with it: its plaintext as the
	 * kernel learnt it, if remembered; else the directory's attributes
	 * and listing at least (an open of the stale entry is still refused,
	 * ESTALE, and looked up again). Any other name that does not
	 * decrypt was never shown.
	 */
	if (rc < 0 && names_is_long(name) && long_find(n, dir, name, plain)) {
		rc = 0;
	} else if (rc < 0) {
		if (names_is_long(name)) {
			atomic_fetch_add(&n->inodes, 1);
			n->cb->inval_inode(n->arg, dir, true);
		}
		return false;
	}
	atomic_fetch_add(&n->entries, 1);
	n->cb->inval_entry(n->arg, dir, plain, strlen(plain), expire);
	explicit_bzero(plain, sizeof(plain));
	return true;
}

/* Object @name of @dir changed beside us (or we changed it). */
static void attrs_changed(struct xm_notify *n, struct xnode *dir,
			  const char *name)
{
	struct xnode *in;
	struct stat st;

	if (fstatat(dir->fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return;
	in = node_find(n->m, st.st_dev, st.st_ino);
	if (!in)
		return; /* the kernel caches nothing of it */
	node_check(n, in);
	node_put(n->m, in);
}

/*
 * Events were lost: drop what the kernel caches of every node's
 * attributes and every directory's listing. Names it caches stay until
 * their timeout (an open still checks the file).
 */
static void overflow_all(struct xm_notify *n)
{
	struct xmount *m = n->m;
	struct itable_node **all;
	size_t got;

	atomic_fetch_add(&n->overflows, 1);
	xm_log(m, LOG_INFO, "inotify queue overflowed: cached attributes "
	       "dropped");
	own_clear(n);
	n->cb->inval_inode(n->arg, m->root, true);
	all = node_snapshot(m, &got);
	for (size_t i = 0; i < got; i++)
		n->cb->inval_inode(n->arg, node_snap(all, i),
				   node_snap(all, i)->type == S_IFDIR);
	node_snapshot_drop(m, all, got);
}

/*
 * Out of descriptors: ask the kernel to forget every node no handle of
 * ours has open (it keeps those it uses: open files, a cwd, a directory
 * with children in its cache), in batches. Its FORGETs then close the
 * descriptors, from the request threads.
 */
static void prune_unused(struct xm_notify *n)
{
	enum { BATCH = 512 };
	struct xmount *m = n->m;
	size_t got, k = 0;
	struct itable_node **all;
	struct xnode *batch[BATCH];
	int64_t now = mono_ns();
	int err = 0;

	if (n->prune_off || !n->cb->prune ||
	    now - n->pruned_ns < 50 * 1000000LL)
		return;
	n->pruned_ns = now;
	all = node_snapshot(m, &got);
	if (!all)
		return;
	for (size_t i = 0; i < got; i++) {
		struct xnode *in = node_snap(all, i);
		bool busy;

		pthread_mutex_lock(&in->seen_lock);
		busy = in->handles > 0;
		pthread_mutex_unlock(&in->seen_lock);
		if (!busy && !err)
			batch[k++] = in;
		if (k == BATCH || (i + 1 == got && k)) {
			err = n->cb->prune(n->arg, batch, k);
			if (!err)
				atomic_fetch_add(&n->pruned, k);
			k = 0;
		}
	}
	node_snapshot_drop(m, all, got);
	if (err == -EOPNOTSUPP) {
		n->prune_off = true;
		xm_log(m, LOG_WARNING, "out of file descriptors, and this "
		       "kernel cannot be asked to forget unused files "
		       "(FUSE_NOTIFY_PRUNE, Linux 6.18): they stay until it "
		       "drops them itself");
	}
}

/* ---- the thread -------------------------------------------------------- */

/* Add event @ev (of directory @dev, @ino) to the batch. */
static void batch_add(struct xm_notify *n, const struct inotify_event *ev,
		      uint32_t mask)
{
	const char *name = ev->len ? ev->name : "";
	uint64_t h = name_hash(name) ^ ((uint64_t)(unsigned)ev->wd << 32);
	unsigned s = (unsigned)(h ^ (h >> 31)) & (BATCH_SLOTS - 1);
	struct bev *b;

	for (; n->slot[s]; s = (s + 1) & (BATCH_SLOTS - 1)) {
		b = &n->batch[n->slot[s] - 1];
		if (b->hash == h && b->wd == ev->wd && !strcmp(b->name, name)) {
			b->mask |= mask;
			return;
		}
	}
	if (strlen(name) > NAMES_STORED_MAX)
		return; /* not one of ours: no lower name is longer */
	b = &n->batch[n->nb];
	n->slot[s] = (int16_t)++n->nb;
	b->wd = ev->wd;
	b->mask = mask;
	b->hash = h;
	strcpy(b->name, name);
}

/* Tell the kernel what the batch says, and empty it. */
static void batch_run(struct xm_notify *n)
{
	int listed = -1; /* the watch whose listing was dropped last */

	if (n->overflow)
		overflow_all(n);
	n->overflow = false;
	for (size_t i = 0; i < n->nb; i++) {
		struct bev *b = &n->batch[i];
		struct xnode *dir = wd_node(n, b->wd);

		if (!dir)
			continue;
		if (!b->name[0]) {
			/*
			 * The directory itself. Removed or moved: the event
			 * of its name in its parent's watch tells the kernel
			 * (the watch goes with IN_IGNORED).
			 */
			if (b->mask & IN_ATTRIB)
				node_check(n, dir);
		} else {
			/*
			 * The directory's listing too, once for a run of its
			 * names: without OPENDIR (fuse_ops.c) no open drops
			 * it. fuse_reverse_inval_entry() marks the directory
			 * changed itself where it finds the name: on 6.18
			 * always (37-coherence passes without this), before
			 * only for a name in the dentry cache (d_lookup()),
			 * not for a new one the kernel never looked up.
			 */
			if ((b->mask & WATCH_ENTRY) &&
			    entry_changed(n, dir, b->name, b->mask) && b->wd != listed) {
				listed = b->wd;
				atomic_fetch_add(&n->inodes, 1);
				n->cb->inval_inode(n->arg, dir, true);
			}
			if (b->mask & WATCH_ATTR)
				attrs_changed(n, dir, b->name);
		}
		node_put(n->m, dir);
	}
	n->nb = 0;
	memset(n->slot, 0, sizeof(n->slot));
}

/* Sort the events in buf[0..len) into the batch. */
static void parse(struct xm_notify *n, size_t len)
{
	for (size_t off = 0; off + sizeof(struct inotify_event) <= len;) {
		const struct inotify_event *ev =
			(const struct inotify_event *)(void *)(n->buf + off);
		uint32_t mask = ev->mask;

		off += sizeof(*ev) + ev->len;
		atomic_fetch_add(&n->events, 1);
		if (mask & IN_Q_OVERFLOW) {
			n->overflow = true;
			continue;
		}
		if (mask & IN_IGNORED) {
			wd_ignored(n, ev->wd);
			continue;
		}
		if ((mask & WATCH_ENTRY) && ev->len && ev->name[0]) {
			uint64_t dev, ino;

			if (wd_key(n, ev->wd, &dev, &ino) &&
			    own_take(n, dev, ino, ev->name)) {
				atomic_fetch_add(&n->own_seen, 1);
				mask &= ~(uint32_t)WATCH_ENTRY;
			}
		}
		mask &= WATCH_ENTRY | WATCH_ATTR | WATCH_SELF;
		if (!mask)
			continue;
		if (n->nb == BATCH_MAX)
			batch_run(n);
		batch_add(n, ev, mask);
	}
}

/* Read every queued event and act on them. */
static void drain(struct xm_notify *n)
{
	ssize_t len;

	while ((len = read(n->ifd, n->buf, sizeof(n->buf))) > 0)
		parse(n, (size_t)len);
	batch_run(n);
}

static void *notify_main(void *arg)
{
	struct xm_notify *n = arg;
	const struct timespec pause = { 0, BATCH_MS * 1000000L };
	bool stop = false, prune = false;

	while (!stop) {
		struct pollfd p[2] = { { n->ifd, POLLIN, 0 },
				       { n->kick[0], POLLIN, 0 } };
		unsigned long req = 0;
		char c[16];
		ssize_t k;

		if (poll(p, 2, -1) < 0)
			continue; /* EINTR */
		if (p[0].revents & POLLIN)
			nanosleep(&pause, NULL);
		while ((k = read(n->kick[0], c, sizeof(c))) > 0) {
			stop = stop || memchr(c, 's', (size_t)k);
			prune = prune || memchr(c, 'p', (size_t)k);
		}
		if (prune) {
			atomic_store(&n->prune_asked, false);
			prune_unused(n);
			prune = false;
		}
		pthread_mutex_lock(&n->lock);
		req = n->flush_req;
		pthread_mutex_unlock(&n->lock);
		drain(n);
		pthread_mutex_lock(&n->lock);
		n->flush_done = req;
		pthread_cond_broadcast(&n->flushed);
		pthread_mutex_unlock(&n->lock);
	}
	return NULL;
}

static void kick(struct xm_notify *n, char c)
{
	while (write(n->kick[1], &c, 1) < 0 && errno == EINTR)
		;
}

/* see mount.h */
int xm_notify_start(struct xmount *m, const struct xm_notify_cb *cb,
		    void *arg)
{
	struct xm_notify *n = calloc(1, sizeof(*n));
	int err;

	if (!n)
		return -ENOMEM;
	n->m = m;
	n->cb = cb;
	n->arg = arg;
	n->kick[0] = n->kick[1] = -1;
	n->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (n->ifd < 0 || pipe2(n->kick, O_NONBLOCK | O_CLOEXEC) != 0) {
		err = -errno;
		goto fail;
	}
	pthread_mutex_init(&n->lock, NULL);
	pthread_cond_init(&n->flushed, NULL);
	err = -pthread_create(&n->thread, NULL, notify_main, n);
	if (err) {
		pthread_mutex_destroy(&n->lock);
		pthread_cond_destroy(&n->flushed);
		goto fail;
	}
	(void)pthread_setname_np(n->thread, "xtsfs-notify");
	n->running = true;
	m->notify = n;
	notify_watch(m, m->root);
	return 0;
fail:
	if (n->ifd >= 0)
		close(n->ifd);
	if (n->kick[0] >= 0) {
		close(n->kick[0]);
		close(n->kick[1]);
	}
	free(n);
	return err;
}

/* see mount.h */
bool xm_notify_covers(struct xmount *m, struct xnode *dir)
{
	struct xm_notify *n = m->notify;
	bool covered;

	if (!n || !n->running)
		return false;
	pthread_mutex_lock(&n->lock);
	covered = dir->notify_wd > 0;
	pthread_mutex_unlock(&n->lock);
	return covered;
}

/* see mount.h */
bool xm_notify_prune(struct xmount *m)
{
	struct xm_notify *n = m->notify;

	if (!n || !n->running || !n->cb->prune)
		return false;
	if (!atomic_exchange(&n->prune_asked, true))
		kick(n, 'p');
	return true;
}

/* see mount.h */
void xm_notify_flush(struct xmount *m)
{
	struct xm_notify *n = m->notify;
	unsigned long req;

	if (!n || !n->running)
		return;
	pthread_mutex_lock(&n->lock);
	req = ++n->flush_req;
	kick(n, 'f');
	while (n->flush_done < req)
		pthread_cond_wait(&n->flushed, &n->lock);
	pthread_mutex_unlock(&n->lock);
}

/* see mount.h */
void xm_notify_stats(struct xmount *m, struct xm_notify_stats *out)
{
	struct xm_notify *n = m->notify;

	memset(out, 0, sizeof(*out));
	if (!n)
		return;
	out->events = atomic_load(&n->events);
	out->own = atomic_load(&n->own_seen);
	out->inodes = atomic_load(&n->inodes);
	out->entries = atomic_load(&n->entries);
	out->overflows = atomic_load(&n->overflows);
	out->unwatched = atomic_load(&n->unwatched);
	out->pruned = atomic_load(&n->pruned);
}

/* see mount.h */
void xm_notify_stop(struct xmount *m)
{
	struct xm_notify *n = m->notify;
	struct xm_notify_stats s;

	if (!n || !n->running)
		return;
	kick(n, 's');
	pthread_join(n->thread, NULL);
	n->running = false; /* no new watches or own names from here */
	xm_notify_stats(m, &s);
	xm_log(m, LOG_INFO, "change notification: %llu events, %llu of them "
	       "our own names; told the kernel of %llu objects and %llu "
	       "names; %llu overflows, %llu directories unwatched", s.events,
	       s.own, s.inodes, s.entries, s.overflows, s.unwatched);
	if (s.pruned)
		xm_log(m, LOG_INFO, "out of file descriptors: the kernel was "
		       "asked to forget %llu unused files", s.pruned);
}

/* see mount_int.h */
void notify_free(struct xmount *m)
{
	struct xm_notify *n = m->notify;

	if (!n)
		return;
	xm_notify_stop(m);
	for (size_t i = 0; i < WD_BUCKETS; i++) {
		struct wd_ent *e = n->wd[i], *next;

		for (; e; e = next) {
			next = e->next;
			free(e);
		}
	}
	close(n->ifd);
	close(n->kick[0]);
	close(n->kick[1]);
	pthread_mutex_destroy(&n->lock);
	pthread_cond_destroy(&n->flushed);
	m->notify = NULL;
	free(n);
}
