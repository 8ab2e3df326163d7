// SPDX-License-Identifier: Apache-2.0
//
// memfs: the FUSE floor of fsbench's tree rows (untar, find, ls -lR,
// du, rm -rf, rsync -a). A whole file system in the daemon's memory:
// directories are hash tables of names, files and symlinks byte arrays;
// no lower filesystem, no cipher, no checks beyond what POSIX asks of a
// directory tree. What those rows take on it is what the kernel's FUSE
// requests cost on this machine, and nothing else: no FUSE daemon can
// do the same work faster (nullfs.c is the same floor for one file's
// random I/O).
//
// It talks to the kernel as xtsfs does by default: the same libfuse
// loop (API 3.12, 8 workers that never exit), READDIRPLUS, OPENDIR
// answered ENOSYS (the kernel then skips OPENDIR and RELEASEDIR), and,
// when built with xtsfs's glue (-DFLOOR_GLUE -Isrc/fs, linking
// build/src/fs/libxtsfs-fuse.a, libxtsfs-core.a and -luring, as
// fsbench.sh does), the INIT flags libfuse 3.14 drops
// (HANDLE_KILLPRIV_V2, PARALLEL_DIROPS) and -u / -U for FUSE over
// io_uring (pinned / unpinned threads, xtsfs's -o uring /
// uring_unpinned). As xtsfs's default mount it leaves out
// default_permissions (the kernel would then ask for a directory's
// attributes before each path walk through it after a change) and ACLs;
// it checks no permissions itself: the benchmark runs as root. One lock
// guards everything: each request holds it for well under a
// microsecond.
//
// Build: cc -O2 -o memfs memfs.c $(pkg-config --cflags --libs fuse3)
// Run:   memfs [-s] [-d] [-u|-U] MOUNTPOINT (foreground; -s: one thread,
//        -d: libfuse logs every request)
#define _GNU_SOURCE /* RENAME_NOREPLACE */
#include "floor_loop.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#define TTL 86400.0 /* nothing changes the tree behind the kernel's back */

struct node;

/* A directory entry; name NULL once removed (offsets stay stable). */
struct dent {
	char *name;
	uint32_t hash;
	struct node *n;
};

struct node {
	struct stat st;
	uint64_t nlookup;
	char *data;           /* file bytes, or a symlink's target */
	size_t cap;
	struct dent *ents;    /* a directory's entries, in creation order */
	size_t nents, ents_cap, live;
	uint32_t *index;      /* open addressing: 1 + position in ents, 0 empty */
	size_t index_cap;     /* a power of two, or 0 */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct node root;
static ino_t next_ino = 2;

static struct node *node_of(fuse_ino_t ino)
{
	return ino == FUSE_ROOT_ID ? &root : (struct node *)(uintptr_t)ino;
}

static fuse_ino_t ino_of(struct node *n)
{
	return n == &root ? FUSE_ROOT_ID : (fuse_ino_t)(uintptr_t)n;
}

static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

static void touch(struct timespec *t)
{
	clock_gettime(CLOCK_REALTIME, t);
}

static struct dent *dir_find(struct node *d, const char *name)
{
	uint32_t h = name_hash(name);
	size_t mask = d->index_cap - 1, i;

	if (!d->index_cap)
		return NULL;
	for (i = h & mask; d->index[i]; i = (i + 1) & mask) {
		struct dent *e = &d->ents[d->index[i] - 1];

		if (e->name && e->hash == h && strcmp(e->name, name) == 0)
			return e;
	}
	return NULL;
}

static void index_put(struct node *d, size_t pos)
{
	size_t mask = d->index_cap - 1, i;

	for (i = d->ents[pos].hash & mask; d->index[i]; i = (i + 1) & mask)
		;
	d->index[i] = (uint32_t)(pos + 1);
}

/* Double the index and put the live entries back in it. The entries
 * themselves never move: a READDIR offset is a position in them. */
static int index_grow(struct node *d)
{
	size_t cap = d->index_cap ? d->index_cap * 2 : 16, i;
	uint32_t *ix = calloc(cap, sizeof(*ix));

	if (!ix)
		return -ENOMEM;
	free(d->index);
	d->index = ix;
	d->index_cap = cap;
	for (i = 0; i < d->nents; i++)
		if (d->ents[i].name)
			index_put(d, i);
	return 0;
}

static int dir_add(struct node *d, const char *name, struct node *n)
{
	struct dent *e;

	if (d->nents == d->ents_cap) {
		size_t cap = d->ents_cap ? d->ents_cap * 2 : 8;
		struct dent *p = realloc(d->ents, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		d->ents = p;
		d->ents_cap = cap;
	}
	/* the index counts removed entries too: they still occupy slots */
	if (2 * (d->nents + 1) > d->index_cap && index_grow(d) != 0)
		return -ENOMEM;
	e = &d->ents[d->nents];
	e->name = strdup(name);
	if (!e->name)
		return -ENOMEM;
	e->hash = name_hash(name);
	e->n = n;
	index_put(d, d->nents++);
	d->live++;
	touch(&d->st.st_mtim);
	d->st.st_ctim = d->st.st_mtim;
	return 0;
}

/* Remove entry @e of @d (its slot in the index stays, pointing at a
 * tombstone, so that probing goes on past it). */
static void dir_del(struct node *d, struct dent *e)
{
	free(e->name);
	e->name = NULL;
	e->n = NULL;
	d->live--;
	touch(&d->st.st_mtim);
	d->st.st_ctim = d->st.st_mtim;
}

static void node_free(struct node *n)
{
	size_t i;

	for (i = 0; i < n->nents; i++)
		free(n->ents[i].name);
	free(n->ents);
	free(n->index);
	free(n->data);
	free(n);
}

/* Drop one link to @n (it is no longer named in some directory). */
static void unlinked(struct node *n)
{
	if (S_ISDIR(n->st.st_mode))
		n->st.st_nlink = 0;
	else if (n->st.st_nlink)
		n->st.st_nlink--;
	touch(&n->st.st_ctim);
	if (n->st.st_nlink == 0 && n->nlookup == 0)
		node_free(n);
}

static struct node *node_new(fuse_req_t req, mode_t mode, dev_t rdev)
{
	const struct fuse_ctx *c = fuse_req_ctx(req);
	struct node *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	n->st.st_ino = next_ino++;
	n->st.st_mode = mode;
	n->st.st_nlink = S_ISDIR(mode) ? 2 : 1;
	n->st.st_uid = c->uid;
	n->st.st_gid = c->gid;
	n->st.st_rdev = rdev;
	n->st.st_blksize = 4096;
	touch(&n->st.st_mtim);
	n->st.st_atim = n->st.st_ctim = n->st.st_mtim;
	return n;
}

static void fill_entry(struct fuse_entry_param *e, struct node *n)
{
	memset(e, 0, sizeof(*e));
	e->ino = ino_of(n);
	e->attr = n->st;
	e->attr.st_blocks = (blkcnt_t)((n->st.st_size + 511) / 512);
	e->attr_timeout = TTL;
	e->entry_timeout = TTL;
}

/* Reply with @n's entry and count the lookup (lock held). */
static void reply_entry(fuse_req_t req, struct node *n)
{
	struct fuse_entry_param e;

	fill_entry(&e, n);
	n->nlookup++;
	pthread_mutex_unlock(&lock);
	fuse_reply_entry(req, &e);
}

static void reply_err(fuse_req_t req, int err)
{
	pthread_mutex_unlock(&lock);
	fuse_reply_err(req, err);
}

static void mf_init(void *userdata, struct fuse_conn_info *conn)
{
	(void)userdata;
#ifdef FLOOR_GLUE
	glue_conn_common(conn);
#endif
	conn->want &= ~FUSE_CAP_WRITEBACK_CACHE; /* xtsfs's default */
	if (conn->capable & FUSE_CAP_READDIRPLUS)
		conn->want |= FUSE_CAP_READDIRPLUS;
}

static void mf_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct dent *e;

	pthread_mutex_lock(&lock);
	e = dir_find(node_of(parent), name);
	if (!e) {
		/* a negative entry the kernel may keep: nothing else adds names */
		struct fuse_entry_param neg = { .entry_timeout = TTL };

		pthread_mutex_unlock(&lock);
		fuse_reply_entry(req, &neg);
		return;
	}
	reply_entry(req, e->n);
}

static void forget_one(fuse_ino_t ino, uint64_t nlookup)
{
	struct node *n = node_of(ino);

	n->nlookup -= nlookup;
	if (n != &root && n->nlookup == 0 && n->st.st_nlink == 0)
		node_free(n);
}

static void mf_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	pthread_mutex_lock(&lock);
	forget_one(ino, nlookup);
	pthread_mutex_unlock(&lock);
	fuse_reply_none(req);
}

static void mf_forget_multi(fuse_req_t req, size_t count,
			    struct fuse_forget_data *f)
{
	size_t i;

	pthread_mutex_lock(&lock);
	for (i = 0; i < count; i++)
		forget_one(f[i].ino, f[i].nlookup);
	pthread_mutex_unlock(&lock);
	fuse_reply_none(req);
}

static void mf_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fuse_entry_param e;

	(void)fi;
	pthread_mutex_lock(&lock);
	fill_entry(&e, node_of(ino));
	pthread_mutex_unlock(&lock);
	fuse_reply_attr(req, &e.attr, TTL);
}

/* Set @n's size (lock held). */
static int resize(struct node *n, size_t size)
{
	if (size > n->cap) {
		size_t cap = n->cap ? n->cap : 4096;
		char *p;

		while (cap < size)
			cap *= 2;
		p = realloc(n->data, cap);
		if (!p)
			return -ENOMEM;
		n->data = p;
		n->cap = cap;
	}
	if (size > (size_t)n->st.st_size)
		memset(n->data + n->st.st_size, 0, size - (size_t)n->st.st_size);
	n->st.st_size = (off_t)size;
	return 0;
}

static void mf_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *a,
		       int set, struct fuse_file_info *fi)
{
	struct node *n;
	struct fuse_entry_param e;

	(void)fi;
	pthread_mutex_lock(&lock);
	n = node_of(ino);
	if ((set & FUSE_SET_ATTR_SIZE) && resize(n, (size_t)a->st_size) != 0) {
		reply_err(req, ENOSPC);
		return;
	}
	if (set & FUSE_SET_ATTR_MODE)
		n->st.st_mode = (n->st.st_mode & S_IFMT) | (a->st_mode & 07777);
	if (set & FUSE_SET_ATTR_UID)
		n->st.st_uid = a->st_uid;
	if (set & FUSE_SET_ATTR_GID)
		n->st.st_gid = a->st_gid;
	if (set & FUSE_SET_ATTR_ATIME_NOW)
		touch(&n->st.st_atim);
	else if (set & FUSE_SET_ATTR_ATIME)
		n->st.st_atim = a->st_atim;
	if (set & FUSE_SET_ATTR_MTIME_NOW)
		touch(&n->st.st_mtim);
	else if (set & FUSE_SET_ATTR_MTIME)
		n->st.st_mtim = a->st_mtim;
	else if (set & FUSE_SET_ATTR_SIZE)
		touch(&n->st.st_mtim);
	touch(&n->st.st_ctim);
	fill_entry(&e, n);
	pthread_mutex_unlock(&lock);
	fuse_reply_attr(req, &e.attr, TTL);
}

static void mf_readlink(fuse_req_t req, fuse_ino_t ino)
{
	struct node *n;
	char buf[4097];

	pthread_mutex_lock(&lock);
	n = node_of(ino);
	memcpy(buf, n->data, (size_t)n->st.st_size);
	buf[n->st.st_size] = '\0';
	pthread_mutex_unlock(&lock);
	fuse_reply_readlink(req, buf);
}

/* Make @name in @parent (lock held); NULL and @err on failure. */
static struct node *make(fuse_req_t req, fuse_ino_t parent, const char *name,
			 mode_t mode, dev_t rdev, int *err)
{
	struct node *d = node_of(parent), *n;

	if (dir_find(d, name)) {
		*err = EEXIST;
		return NULL;
	}
	n = node_new(req, mode, rdev);
	if (!n || dir_add(d, name, n) != 0) {
		free(n);
		*err = ENOSPC;
		return NULL;
	}
	if (S_ISDIR(mode))
		d->st.st_nlink++;
	return n;
}

static void mf_mknod(fuse_req_t req, fuse_ino_t parent, const char *name,
		     mode_t mode, dev_t rdev)
{
	struct node *n;
	int err;

	pthread_mutex_lock(&lock);
	n = make(req, parent, name, mode, rdev, &err);
	if (!n)
		reply_err(req, err);
	else
		reply_entry(req, n);
}

static void mf_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name,
		     mode_t mode)
{
	mf_mknod(req, parent, name, S_IFDIR | (mode & 07777), 0);
}

static void mf_symlink(fuse_req_t req, const char *target, fuse_ino_t parent,
		       const char *name)
{
	struct node *n;
	size_t len = strlen(target);
	int err;

	if (len > 4096) {
		fuse_reply_err(req, ENAMETOOLONG);
		return;
	}
	pthread_mutex_lock(&lock);
	n = make(req, parent, name, S_IFLNK | 0777, 0, &err);
	if (!n) {
		reply_err(req, err);
		return;
	}
	if (resize(n, len) == 0)
		memcpy(n->data, target, len);
	reply_entry(req, n);
}

static void mf_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t parent,
		    const char *name)
{
	struct node *n, *d;

	pthread_mutex_lock(&lock);
	n = node_of(ino);
	d = node_of(parent);
	if (dir_find(d, name)) {
		reply_err(req, EEXIST);
		return;
	}
	if (dir_add(d, name, n) != 0) {
		reply_err(req, ENOSPC);
		return;
	}
	n->st.st_nlink++;
	touch(&n->st.st_ctim);
	reply_entry(req, n);
}

/* unlink (@dir 0) or rmdir (@dir 1) */
static void remove_name(fuse_req_t req, fuse_ino_t parent, const char *name,
			int dir)
{
	struct node *d, *n;
	struct dent *e;

	pthread_mutex_lock(&lock);
	d = node_of(parent);
	e = dir_find(d, name);
	if (!e) {
		reply_err(req, ENOENT);
		return;
	}
	n = e->n;
	if (dir && !S_ISDIR(n->st.st_mode)) {
		reply_err(req, ENOTDIR);
		return;
	}
	if (!dir && S_ISDIR(n->st.st_mode)) {
		reply_err(req, EISDIR);
		return;
	}
	if (dir && n->live) {
		reply_err(req, ENOTEMPTY);
		return;
	}
	dir_del(d, e);
	if (dir)
		d->st.st_nlink--;
	unlinked(n);
	pthread_mutex_unlock(&lock);
	fuse_reply_err(req, 0);
}

static void mf_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	remove_name(req, parent, name, 0);
}

static void mf_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	remove_name(req, parent, name, 1);
}

static void mf_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
		      fuse_ino_t newparent, const char *newname,
		      unsigned int flags)
{
	struct node *d, *nd, *n;
	struct dent *e, *t;

	if (flags & ~RENAME_NOREPLACE) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	pthread_mutex_lock(&lock);
	d = node_of(parent);
	nd = node_of(newparent);
	e = dir_find(d, name);
	if (!e) {
		reply_err(req, ENOENT);
		return;
	}
	n = e->n;
	t = dir_find(nd, newname);
	if (t && t->n == n) {
		reply_err(req, 0);
		return;
	}
	if (t) {
		if (flags & RENAME_NOREPLACE) {
			reply_err(req, EEXIST);
			return;
		}
		if (S_ISDIR(t->n->st.st_mode) != S_ISDIR(n->st.st_mode)) {
			reply_err(req, S_ISDIR(n->st.st_mode) ? ENOTDIR : EISDIR);
			return;
		}
		if (S_ISDIR(t->n->st.st_mode) && t->n->live) {
			reply_err(req, ENOTEMPTY);
			return;
		}
	}
	/* the new name first: out of memory leaves the old one in place */
	if (!t && dir_add(nd, newname, n) != 0) {
		reply_err(req, ENOSPC);
		return;
	}
	if (t) {
		struct node *old = t->n;

		t->n = n;
		if (S_ISDIR(old->st.st_mode))
			nd->st.st_nlink--;
		unlinked(old);
		touch(&nd->st.st_mtim);
		nd->st.st_ctim = nd->st.st_mtim;
	}
	/* again by name: dir_add() may have moved d's entries */
	dir_del(d, dir_find(d, name));
	if (S_ISDIR(n->st.st_mode) && d != nd) {
		d->st.st_nlink--;
		nd->st.st_nlink++;
	}
	touch(&n->st.st_ctim);
	reply_err(req, 0);
}

static void mf_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	pthread_mutex_lock(&lock);
	if ((fi->flags & O_TRUNC) && resize(node_of(ino), 0) != 0) {
		reply_err(req, ENOSPC);
		return;
	}
	pthread_mutex_unlock(&lock);
	fuse_reply_open(req, fi);
}

static void mf_create(fuse_req_t req, fuse_ino_t parent, const char *name,
		      mode_t mode, struct fuse_file_info *fi)
{
	struct fuse_entry_param e;
	struct node *n;
	int err;

	pthread_mutex_lock(&lock);
	n = make(req, parent, name, S_IFREG | (mode & 07777), 0, &err);
	if (!n) {
		reply_err(req, err);
		return;
	}
	fill_entry(&e, n);
	n->nlookup++;
	pthread_mutex_unlock(&lock);
	fuse_reply_create(req, &e, fi);
}

/* This thread's reply buffer, at least @size bytes; NULL without memory. */
static char *reply_buf(size_t size)
{
	static __thread char *buf;
	static __thread size_t cap;

	if (size > cap) {
		char *p = realloc(buf, size);

		if (!p)
			return NULL;
		buf = p;
		cap = size;
	}
	return buf;
}

static void mf_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct node *n;
	size_t len = 0;
	char *buf;

	(void)fi;
	pthread_mutex_lock(&lock);
	n = node_of(ino);
	if (off < n->st.st_size) {
		len = (size_t)(n->st.st_size - off);
		if (len > size)
			len = size;
	}
	buf = reply_buf(len);
	if (len && !buf) {
		reply_err(req, ENOMEM);
		return;
	}
	if (len)
		memcpy(buf, n->data + off, len);
	pthread_mutex_unlock(&lock);
	fuse_reply_buf(req, buf, len);
}

static void mf_write(fuse_req_t req, fuse_ino_t ino, const char *buf,
		     size_t size, off_t off, struct fuse_file_info *fi)
{
	struct node *n;

	(void)fi;
	pthread_mutex_lock(&lock);
	n = node_of(ino);
	if ((size_t)off + size > (size_t)n->st.st_size &&
	    resize(n, (size_t)off + size) != 0) {
		reply_err(req, ENOSPC);
		return;
	}
	memcpy(n->data + off, buf, size);
	touch(&n->st.st_mtim);
	n->st.st_ctim = n->st.st_mtim;
	pthread_mutex_unlock(&lock);
	fuse_reply_write(req, size);
}

static void mf_ok(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	(void)fi;
	fuse_reply_err(req, 0);
}

/* As xtsfs: ENOSYS, and the kernel sends no FLUSH again (no_flush). */
static void mf_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	(void)fi;
	fuse_reply_err(req, ENOSYS);
}

static void mf_fsync(fuse_req_t req, fuse_ino_t ino, int datasync,
		     struct fuse_file_info *fi)
{
	(void)datasync;
	mf_ok(req, ino, fi);
}

/* As xtsfs on a local lower filesystem: the kernel then sends no
 * OPENDIR or RELEASEDIR for the rest of the mount. */
static void mf_opendir(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	(void)ino;
	(void)fi;
	fuse_reply_err(req, ENOSYS);
}

/* READDIR and READDIRPLUS (@plus): entry i of the table is offset i + 3,
 * after "." (1) and ".." (2). */
static void list(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		 int plus)
{
	char *buf = reply_buf(size);
	struct node *d;
	size_t used = 0, i;

	if (size && !buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	pthread_mutex_lock(&lock);
	d = node_of(ino);
	for (i = (size_t)off; i < d->nents + 2; i++) {
		struct fuse_entry_param e;
		const char *name;
		struct node *n;
		size_t need;

		if (i < 2) {
			name = i == 0 ? "." : "..";
			n = d; /* ".." is not followed: the kernel skips both */
		} else {
			name = d->ents[i - 2].name;
			n = d->ents[i - 2].n;
			if (!name)
				continue;
		}
		fill_entry(&e, n);
		if (plus) {
			if (i < 2)
				e.ino = 0; /* no lookup is counted for them */
			need = fuse_add_direntry_plus(req, buf + used, size - used,
						      name, &e, (off_t)i + 1);
		} else {
			need = fuse_add_direntry(req, buf + used, size - used, name,
						 &e.attr, (off_t)i + 1);
		}
		if (need > size - used)
			break;
		used += need;
		if (plus && i >= 2)
			n->nlookup++;
	}
	pthread_mutex_unlock(&lock);
	fuse_reply_buf(req, buf, used);
}

static void mf_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	(void)fi;
	list(req, ino, size, off, 0);
}

static void mf_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size,
			   off_t off, struct fuse_file_info *fi)
{
	(void)fi;
	list(req, ino, size, off, 1);
}

static void mf_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct statvfs s = {
		.f_bsize = 4096, .f_frsize = 4096, .f_blocks = 1u << 26,
		.f_bfree = 1u << 25, .f_bavail = 1u << 25, .f_files = 1u << 24,
		.f_ffree = 1u << 23, .f_favail = 1u << 23, .f_namemax = 255,
	};

	(void)ino;
	fuse_reply_statfs(req, &s);
}

/*
 * No extended attributes: user.* and trusted.* have none, every other
 * name is refused (EOPNOTSUPP), as xtsfs without -o acl refuses them:
 * ls -l then stops asking for SELinux labels and ACLs on the mount.
 */
static void mf_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
			size_t size)
{
	(void)ino;
	(void)size;
	fuse_reply_err(req, strncmp(name, "user.", 5) == 0 ||
		       strncmp(name, "trusted.", 8) == 0 ? ENODATA : EOPNOTSUPP);
}

/* access(2) and chdir: no permission checks, the benchmark is root's */
static void mf_access(fuse_req_t req, fuse_ino_t ino, int mask)
{
	(void)ino;
	(void)mask;
	fuse_reply_err(req, 0);
}

static void mf_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	(void)ino;
	if (size == 0)
		fuse_reply_xattr(req, 0);
	else
		fuse_reply_buf(req, NULL, 0);
}

static const struct fuse_lowlevel_ops ops = {
	.init = mf_init,
	.lookup = mf_lookup,
	.forget = mf_forget,
	.forget_multi = mf_forget_multi,
	.getattr = mf_getattr,
	.setattr = mf_setattr,
	.readlink = mf_readlink,
	.mknod = mf_mknod,
	.mkdir = mf_mkdir,
	.unlink = mf_unlink,
	.rmdir = mf_rmdir,
	.symlink = mf_symlink,
	.rename = mf_rename,
	.link = mf_link,
	.open = mf_open,
	.create = mf_create,
	.read = mf_read,
	.write = mf_write,
	.flush = mf_flush,
	.release = mf_ok,
	.fsync = mf_fsync,
	.opendir = mf_opendir,
	.readdir = mf_readdir,
	.readdirplus = mf_readdirplus,
	.statfs = mf_statfs,
	.getxattr = mf_getxattr,
	.listxattr = mf_listxattr,
	.access = mf_access,
};

int main(int argc, char **argv)
{
	struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
	struct fuse_session *se;
	int single = 0, i, rc;
	unsigned glue = 0;
	const char *mnt = NULL;

	fuse_opt_add_arg(&args, argv[0]);
	fuse_opt_add_arg(&args, "-o");
	fuse_opt_add_arg(&args, "fsname=memfs");
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-s") == 0)
			single = 1;
		else if (strcmp(argv[i], "-d") == 0)
			fuse_opt_add_arg(&args, "-d"); /* every request logged */
		else if (strcmp(argv[i], "-u") == 0)
			glue = 1;
		else if (strcmp(argv[i], "-U") == 0)
			glue = 2;
		else if (!mnt)
			mnt = argv[i];
		else
			mnt = NULL, i = argc;
	}
	if (!mnt) {
		fprintf(stderr, "usage: memfs [-s] [-d] [-u|-U] MOUNTPOINT\n");
		return 2;
	}
	root.st.st_ino = 1;
	root.st.st_mode = S_IFDIR | 0755;
	root.st.st_nlink = 2;
	root.st.st_blksize = 4096;
	root.nlookup = 1;
	touch(&root.st.st_mtim);
	root.st.st_atim = root.st.st_ctim = root.st.st_mtim;
	se = fuse_session_new(&args, &ops, sizeof(ops), NULL);
	if (!se)
		return 1;
	rc = floor_serve(se, mnt, single, 0, (int)glue, 1);
	fuse_session_destroy(se);
	return rc;
}
