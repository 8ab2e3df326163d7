/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rview.c - the reverse view (doc/FORMAT.md section 5), FUSE-free: its
 * inodes, derived ids, names, attributes, lookup and listings; file
 * contents are in rview_read.c.
 *
 * Every object of the plaintext tree appears under its encrypted name;
 * regular files appear as header + ciphertext, computed on each read from
 * the plaintext; symlinks with encrypted targets. The files a normal
 * volume keeps for itself are synthesised: xtsfs.volume (the header kept
 * in the plaintext root as .xtsfs.volume), xtsfs.dirid in every
 * directory, long-name sidecars and long symlink targets.
 *
 * Identities are derived, not stored: a directory's dirid and a file's id
 * are AES-CMAC values, under the volume's header key, of the plaintext
 * object's inode number and birth time. So the view is the same at every
 * mount; renaming keeps ids; replacing a file or directory (a new inode)
 * changes them.
 */
#include "rview.h"
#include "rview_priv.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "dirops.h"
#include "layout.h"
#include "log.h"
#include "volume.h"

#define VIRT_MTIME 946684800 /* 2000-01-01: sidecars never change */
#define WALK_DEPTH_MAX 256 /* deepest directory walk_links() descends to */

static uint64_t mix64(uint64_t a, uint64_t b)
{
	uint64_t h = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull);

	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 29);
}

/* The inode number a synthesised object of key (@kind, @k1, @k2) shows. */
static uint64_t virt_ino(enum rkind kind, uint64_t k1, uint64_t k2)
{
	return mix64(mix64(kind, k1), k2) | (1ull << 63);
}

static uint64_t str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* ---- the inode table (itable.h) ------------------------------------------ */

static struct rinode *rinode_ofnode(struct itable_node *n)
{
	return (struct rinode *)(void *)n; /* node is the first member */
}

static void rinode_free(struct rinode *in)
{
	if (in->fd >= 0)
		close(in->fd);
	free(in->content);
	pthread_mutex_destroy(&in->lock);
	free(in);
}

static void rinode_free_node(struct itable_node *n)
{
	rinode_free(rinode_ofnode(n));
}

/*
 * Find or add the inode (@kind, @k1, @k2), taking a reference. @fd is
 * consumed; @content (malloc'd) too.
 */
static struct rinode *rinode_get(struct rfs *fs, enum rkind kind, uint64_t k1,
				 uint64_t k2, int fd, mode_t type,
				 uint8_t *content, size_t clen)
{
	struct itable_node *n = itable_ref(&fs->inodes, kind, k1, k2);
	struct rinode *in, *got;

	if (n) {
		if (fd >= 0)
			close(fd);
		free(content);
		return rinode_ofnode(n);
	}
	in = calloc(1, sizeof(*in));
	if (!in) {
		if (fd >= 0)
			close(fd);
		free(content);
		return NULL;
	}
	in->node.kind = kind;
	in->node.k1 = k1;
	in->node.k2 = k2;
	in->fd = fd;
	in->type = type;
	in->content = content;
	in->clen = clen;
	in->vino = kind == R_REAL ? k2 : virt_ino(kind, k1, k2);
	pthread_mutex_init(&in->lock, NULL);
	got = rinode_ofnode(itable_insert(&fs->inodes, &in->node));
	if (got != in)
		rinode_free(in); /* a concurrent lookup added it first */
	return got;
}

/* see rview.h */
void rfs_forget(struct rfs *fs, struct rinode *in, uint64_t n)
{
	if (in != fs->root && itable_forget(&fs->inodes, &in->node, n))
		rinode_free(in);
}

/* see rview.h */
int rfs_init(struct rfs *fs)
{
	struct stat st;
	int err = itable_init(&fs->inodes, 4096);

	if (err)
		return err;
	if (fstatat(fs->root_fd, "", &st, AT_EMPTY_PATH) != 0)
		return -errno;
	fs->root = calloc(1, sizeof(*fs->root));
	if (!fs->root)
		return -ENOMEM;
	fs->root->node.kind = R_REAL;
	fs->root->fd = fs->root_fd;
	fs->root->type = S_IFDIR;
	fs->root->node.k1 = st.st_dev;
	fs->root->node.k2 = st.st_ino;
	fs->root->vino = st.st_ino;
	fs->root->ids_ok = true; /* the root's dirid is zero (FORMAT 4.2) */
	pthread_mutex_init(&fs->root->lock, NULL);
	return 0;
}

/* see rview.h */
void rfs_destroy(struct rfs *fs)
{
	itable_destroy(&fs->inodes, rinode_free_node);
	if (fs->root)
		rinode_free(fs->root);
	fs->root = NULL;
}

/* ---- derived identities (FORMAT 5.2) ------------------------------------ */

/*
 * The dirid of a directory or the file id of a regular file:
 * AES-CMAC(header key, label || LE64(ino) || LE64(btime s) || LE32(btime ns)).
 */
/* see rview_priv.h */
int rview_derive_id(struct rfs *fs, struct rinode *in)
{
	static const char dlabel[] = "xtsfs reverse dirid";
	static const char flabel[] = "xtsfs reverse file id";
	const char *label = in->type == S_IFDIR ? dlabel : flabel;
	size_t ll = in->type == S_IFDIR ? sizeof(dlabel) : sizeof(flabel);
	uint8_t msg[64];
	struct statx sx;
	uint64_t ino, bs = 0;
	uint32_t bns = 0;

	pthread_mutex_lock(&in->lock);
	if (in->ids_ok) {
		pthread_mutex_unlock(&in->lock);
		return 0;
	}
	if (statx(in->fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW,
		  STATX_INO | STATX_BTIME, &sx) != 0) {
		int err = -errno;

		pthread_mutex_unlock(&in->lock);
		xlog(fs->mountpoint, LOG_ERR, "plaintext %s (inode %llu): "
		     "cannot derive its %s: %s", in->type == S_IFDIR ?
		     "directory" : "file", (unsigned long long)in->node.k2,
		     in->type == S_IFDIR ? "dirid" : "file id", strerror(-err));
		return err;
	}
	ino = sx.stx_ino;
	if (sx.stx_mask & STATX_BTIME) {
		bs = (uint64_t)sx.stx_btime.tv_sec;
		bns = sx.stx_btime.tv_nsec;
	}
	memcpy(msg, label, ll); /* includes the NUL: labels are prefix-free */
	for (int i = 0; i < 8; i++) {
		msg[ll + i] = (uint8_t)(ino >> (8 * i));
		msg[ll + 8 + i] = (uint8_t)(bs >> (8 * i));
	}
	for (int i = 0; i < 4; i++)
		msg[ll + 16 + i] = (uint8_t)(bns >> (8 * i));
	aes_cmac(fs->idkey, in->id, msg, ll + 20);
	in->ids_ok = true;
	pthread_mutex_unlock(&in->lock);
	return 0;
}

static int dirid_of(struct rfs *fs, struct rinode *dir, uint8_t out[16])
{
	int err = rview_derive_id(fs, dir);

	if (!err)
		memcpy(out, dir->id, 16);
	return err;
}

/* ---- names ---------------------------------------------------------------- */

/* see rview.h */
const char *rfs_reserved_clash(int root_fd)
{
	static const char *const names[] = { VOL_FILE_NAME, VOL_TMP_NAME };
	struct stat st;

	for (size_t i = 0; i < 2; i++)
		if (fstatat(root_fd, names[i], &st, AT_SYMLINK_NOFOLLOW) == 0)
			return names[i];
	return NULL;
}

/*
 * Plaintext entries the view never shows: the header file (shown as
 * xtsfs.volume instead) and its temp file; with plaintext names also
 * what would clash with the view's own root names, made after the
 * mount (rfs_reserved_clash() refuses them before).
 */
static bool hidden_plain(const struct rfs *fs, const struct rinode *dir,
			 const char *name)
{
	if (dir != fs->root)
		return false;
	if (!strcmp(name, VOL_REVERSE_NAME) || !strcmp(name, VOL_REVERSE_TMP_NAME))
		return true;
	if (fs->names || (strcmp(name, VOL_FILE_NAME) && strcmp(name, VOL_TMP_NAME)))
		return false;
	xlog(fs->mountpoint, LOG_ERR, "%s in the plaintext root cannot be "
	     "shown in a view with plaintext names (the name is reserved); "
	     "rename it", name);
	return true;
}

/* View name of plaintext entry @name in @dir; @full for long names. */
static int view_name(struct rfs *fs, struct rinode *dir, const char *name,
		     char stored[NAMES_STORED_MAX + 1], char full[NAMES_FULL_MAX],
		     bool *is_long)
{
	uint8_t dirid[16];
	int err;

	*is_long = false;
	if (!fs->names) {
		snprintf(stored, NAMES_STORED_MAX + 1, "%s", name);
		return 0;
	}
	err = dirid_of(fs, dir, dirid);
	if (err)
		return err;
	return names_encrypt(fs->names, dirid, name, strlen(name), stored, full,
			     is_long);
}

/* The view target of symlink @fd; @full for long ones (FORMAT 4.4). */
static int view_target(struct rfs *fs, int fd, char *stored, char *full,
		       bool *is_long, size_t *len)
{
	char target[4096];
	ssize_t n = readlinkat(fd, "", target, sizeof(target) - 1);
	int err;

	*is_long = false;
	if (n < 0)
		return -errno;
	target[n] = '\0';
	if (!fs->names) {
		memcpy(stored, target, (size_t)n + 1);
		*len = (size_t)n;
		return 0;
	}
	err = names_encrypt_target(fs->names, target, (size_t)n, stored, full,
				   is_long);
	if (!err)
		*len = strlen(stored);
	return err;
}

/* ---- attributes ----------------------------------------------------------- */

static int real_attr(struct rfs *fs, struct rinode *in, struct stat *st)
{
	if (fstatat(in->fd, "", st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0)
		return -errno;
	if (S_ISREG(st->st_mode)) {
		st->st_size = (off_t)layout_lower_size(LAYOUT_DOFF_COMPACT,
						      (uint64_t)st->st_size);
	} else if (S_ISLNK(st->st_mode)) {
		char *s = malloc(NAMES_TARGET_MAX), *f = malloc(NAMES_TARGET_MAX);
		bool lg;
		size_t len = 0;
		int err = s && f ? view_target(fs, in->fd, s, f, &lg, &len) : -ENOMEM;

		free(s);
		free(f);
		if (err)
			return err;
		st->st_size = (off_t)len;
	}
	st->st_ino = in->vino;
	return 0;
}

/* see rview.h */
int rfs_getattr(struct rfs *fs, struct rinode *in, struct stat *st)
{
	struct stat root;

	if (in->node.kind == R_REAL)
		return real_attr(fs, in, st);
	memset(st, 0, sizeof(*st));
	if (fstatat(fs->root_fd, "", &root, AT_EMPTY_PATH) == 0) {
		st->st_uid = root.st_uid;
		st->st_gid = root.st_gid;
		st->st_dev = root.st_dev;
	}
	st->st_mode = S_IFREG | 0444;
	st->st_nlink = 1;
	st->st_size = (off_t)in->clen;
	st->st_blocks = (blkcnt_t)((in->clen + 511) / 512);
	st->st_blksize = 4096;
	st->st_ino = in->vino;
	st->st_mtim = in->mtime;
	st->st_ctim = in->mtime;
	st->st_atim = in->mtime;
	return 0;
}

/* see rview.h */
int rfs_readlink(struct rfs *fs, struct rinode *in, char buf[RFS_TARGET_MAX])
{
	char *f = malloc(NAMES_TARGET_MAX);
	bool lg;
	size_t len;
	int err = f ? view_target(fs, in->fd, buf, f, &lg, &len) : -ENOMEM;

	free(f);
	return err;
}

/* ---- the plaintext tree's long targets ------------------------------------ */

/*
 * Walk the plaintext tree below @dirfd and call @fn(fs, stored, full, arg)
 * for every symlink whose target is long (FORMAT 4.4): @stored is its
 * xtsfs.link.* name, @full the text of that file. A non-zero return from
 * @fn stops the walk and is returned.
 */
typedef int (*link_fn)(struct rfs *fs, const char *stored, const char *full,
		       void *arg);

/* The directory @dirfd that walk_links() cannot search, for the log. */
static void walk_skipped(struct rfs *fs, int dirfd, int err)
{
	struct stat st;
	char why[64];

	if (fstat(dirfd, &st) != 0)
		st.st_ino = 0;
	if (err == -ELOOP)
		snprintf(why, sizeof(why), "more than %d directories deep",
			 WALK_DEPTH_MAX);
	else
		snprintf(why, sizeof(why), "%s", strerror(-err));
	xlog(fs->mountpoint, LOG_WARNING, "plaintext directory (inode %llu): "
	     "not searched for long symlink targets (%s): a copy of the view "
	     "lacks the xtsfs.link.* files of the symlinks below it",
	     (unsigned long long)st.st_ino, why);
}

/* @fn for the symlink @name in @dirfd if its target is long. */
static int walk_link(struct rfs *fs, int dirfd, const char *name, link_fn fn,
		     void *arg)
{
	int fd = openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	char *s = malloc(NAMES_TARGET_MAX), *f = malloc(NAMES_TARGET_MAX);
	bool lg = false;
	size_t len;
	int err = 0;

	if (fd >= 0 && s && f && !view_target(fs, fd, s, f, &lg, &len) && lg)
		err = fn(fs, s, f, arg);
	free(s);
	free(f);
	if (fd >= 0)
		close(fd);
	return err;
}

static int walk_links(struct rfs *fs, int dirfd, link_fn fn, void *arg,
		      int depth)
{
	DIR *dp;
	struct dirent *de;
	int err = depth > WALK_DEPTH_MAX ? -ELOOP : dirops_opendir(dirfd, &dp);

	/* a directory we cannot read has no symlinks we can show: skip it */
	if (err) {
		if (err != -ENOMEM)
			walk_skipped(fs, dirfd, err);
		return err == -ENOMEM ? err : 0;
	}
	while (!err && (de = readdir(dp))) {
		if (names_is_dot(de->d_name))
			continue;
		if (de->d_type == DT_LNK) {
			err = walk_link(fs, dirfd, de->d_name, fn, arg);
		} else if (de->d_type == DT_DIR) {
			int sub = openat(dirfd, de->d_name, O_PATH | O_DIRECTORY |
					 O_NOFOLLOW | O_CLOEXEC);

			if (sub >= 0) {
				err = walk_links(fs, sub, fn, arg, depth + 1);
				close(sub);
			}
		}
	}
	closedir(dp);
	return err;
}

/* For lookup: the long target whose link file is named @arg->name. */
struct link_want {
	const char *name;   /* the xtsfs.link.* name looked up */
	char *full;         /* out: its text (NAMES_TARGET_MAX) */
};

static int match_link(struct rfs *fs, const char *stored, const char *full,
		      void *arg)
{
	struct link_want *w = arg;

	(void)fs;
	if (strcmp(stored, w->name))
		return 0;
	snprintf(w->full, NAMES_TARGET_MAX, "%s", full);
	return 1;
}

/* ---- lookup --------------------------------------------------------------- */

static int real_entry(struct rfs *fs, struct rinode *dir, const char *plain,
		      struct rinode **out, struct stat *attr)
{
	struct rinode *in;
	struct stat st;
	int fd, err;

	if (hidden_plain(fs, dir, plain))
		return -ENOENT;
	fd = openat(dir->fd, plain, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstatat(fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) {
		err = -errno;
		close(fd);
		return err;
	}
	in = rinode_get(fs, R_REAL, st.st_dev, st.st_ino, fd,
			st.st_mode & S_IFMT, NULL, 0);
	if (!in)
		return -ENOMEM;
	err = rfs_getattr(fs, in, attr);
	if (err) {
		rfs_forget(fs, in, 1);
		return err;
	}
	*out = in;
	return 0;
}

/* The synthesised file (@kind, @k1, @k2) of @content (consumed). */
static int virt_entry(struct rfs *fs, enum rkind kind, uint64_t k1,
		      uint64_t k2, uint8_t *content, size_t clen,
		      struct timespec mtime, struct rinode **out,
		      struct stat *attr)
{
	struct rinode *in = rinode_get(fs, kind, k1, k2, -1, S_IFREG, content,
				       clen);

	if (!in)
		return -ENOMEM;
	in->mtime = mtime;
	(void)rfs_getattr(fs, in, attr); /* cannot fail for these */
	*out = in;
	return 0;
}

static int read_header_file(struct rfs *fs, uint8_t **out, size_t *len,
			    struct timespec *mtime)
{
	/* never blocks on a FIFO, never reads a device: a regular file only */
	int fd = openat(fs->root_fd, VOL_REVERSE_NAME, O_RDONLY | O_CLOEXEC |
			O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	struct stat st;
	uint8_t *buf;
	ssize_t n;
	int err;

	if (fd < 0 && errno == ENOENT)
		return -ENOENT;
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		xlog(fs->mountpoint, LOG_ERR, "%s cannot be shown: not a "
		     "regular file we can read", VOL_REVERSE_NAME);
		if (fd >= 0)
			close(fd);
		return -EIO;
	}
	buf = malloc(VOL_FILE_SIZE);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	n = pread(fd, buf, VOL_FILE_SIZE, 0);
	err = errno;
	close(fd);
	if (n < 0) {
		xlog(fs->mountpoint, LOG_ERR, "%s cannot be read: %s",
		     VOL_REVERSE_NAME, strerror(err));
		free(buf);
		return -EIO;
	}
	*out = buf;
	*len = (size_t)n;
	*mtime = st.st_mtim;
	return 0;
}

/* xtsfs.volume in the root: the bytes of .xtsfs.volume. */
static int lookup_header(struct rfs *fs, struct rinode **out, struct stat *st)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	struct timespec mt = { 0 };
	int err = read_header_file(fs, &buf, &len, &mt);

	if (err)
		return err;
	return virt_entry(fs, R_HEADER, 0, 0, buf, len, mt, out, st);
}

/* xtsfs.dirid of @dir, with an mtime derived from the dirid. */
static int lookup_dirid(struct rfs *fs, struct rinode *dir, struct rinode **out,
			struct stat *st)
{
	uint8_t *id = malloc(16);
	struct timespec mt = { 0 };
	int err;

	if (!id)
		return -ENOMEM;
	err = dirid_of(fs, dir, id);
	if (err) {
		free(id);
		return err;
	}
	/* mtime from the dirid: a new dirid never keeps an old mtime */
	mt.tv_sec = (time_t)((uint32_t)id[0] | (uint32_t)id[1] << 8 |
			     (uint32_t)id[2] << 16 | (uint32_t)(id[3] & 0x7f) << 24);
	return virt_entry(fs, R_DIRID, dir->node.k1, dir->node.k2, id, 16, mt,
			  out, st);
}

/* The root's xtsfs.link.* file @n, found by walking the tree. */
static int lookup_link(struct rfs *fs, const char *n, struct rinode **out,
		       struct stat *st)
{
	char *full = malloc(NAMES_TARGET_MAX);
	struct timespec mt = { VIRT_MTIME, 0 };
	struct link_want want = { .name = n, .full = full };
	int err;

	if (!full)
		return -ENOMEM;
	err = walk_links(fs, fs->root_fd, match_link, &want, 0);
	if (err != 1) {
		free(full);
		return err < 0 ? err : -ENOENT;
	}
	return virt_entry(fs, R_SIDECAR, 1, str_hash(n), (uint8_t *)full,
			  strlen(full), mt, out, st);
}

/* Find the plaintext entry of @dir whose long view name (or sidecar) is @n. */
static int find_long(struct rfs *fs, struct rinode *dir, const char *n,
		     char plain[256], char full[NAMES_FULL_MAX], bool *sidecar)
{
	DIR *dp;
	struct dirent *de;
	int err = dirops_opendir(dir->fd, &dp);

	if (err)
		return err;
	err = -ENOENT;
	while ((de = readdir(dp))) {
		char stored[NAMES_STORED_MAX + 1], side[NAMES_STORED_MAX + 1];
		bool lg;

		if (strlen(de->d_name) <= NAMES_STORED_MAX * 3 / 4 - 16 - 16 ||
		    hidden_plain(fs, dir, de->d_name))
			continue; /* short names are never long: skip the work */
		if (view_name(fs, dir, de->d_name, stored, full, &lg) || !lg)
			continue;
		names_long_sidecar(side, stored);
		if (!strcmp(stored, n) || !strcmp(side, n)) {
			*sidecar = !strcmp(side, n);
			snprintf(plain, 256, "%s", de->d_name);
			err = 0;
			break;
		}
	}
	closedir(dp);
	return err;
}

/* An xtsfs.long.* entry of @dir, or its sidecar. */
static int lookup_long(struct rfs *fs, struct rinode *dir, const char *n,
		       struct rinode **out, struct stat *st)
{
	char plain[256], full[NAMES_FULL_MAX];
	bool sidecar = false;
	struct timespec mt = { VIRT_MTIME, 0 };
	char *c;
	int err = find_long(fs, dir, n, plain, full, &sidecar);

	if (err)
		return err;
	if (!sidecar)
		return real_entry(fs, dir, plain, out, st);
	c = strdup(full);
	if (!c)
		return -ENOMEM;
	return virt_entry(fs, R_SIDECAR, dir->node.k2, str_hash(n),
			  (uint8_t *)c, strlen(c), mt, out, st);
}

/* see rview.h */
int rfs_lookup(struct rfs *fs, struct rinode *dir, const char *n,
	       struct rinode **out, struct stat *st)
{
	char plain[256];
	uint8_t dirid[16];
	size_t plen;
	int err;

	if (dir == fs->root && !strcmp(n, VOL_FILE_NAME))
		return lookup_header(fs, out, st);
	if (!fs->names)
		return hidden_plain(fs, dir, n) ? -ENOENT :
		       real_entry(fs, dir, n, out, st);
	if (dir != fs->root && !strcmp(n, NAMES_DIRID_FILE))
		return lookup_dirid(fs, dir, out, st);
	if (dir == fs->root && names_is_link_ref(n))
		return lookup_link(fs, n, out, st);
	if (!strncmp(n, NAMES_LONG_PREFIX, strlen(NAMES_LONG_PREFIX)))
		return lookup_long(fs, dir, n, out, st);
	if (names_is_internal(n))
		return -ENOENT;
	err = dirid_of(fs, dir, dirid);
	if (err)
		return err;
	if (names_decrypt(fs->names, dirid, n, strlen(n), plain, &plen))
		return -ENOENT; /* not a name of this view */
	return real_entry(fs, dir, plain, out, st);
}

/* ---- directories ---------------------------------------------------------- */

static int rdir_add(struct rdir *d, size_t *cap, const char *name,
		    unsigned char type, uint64_t ino)
{
	if (d->n == *cap) {
		size_t nc = *cap ? *cap * 2 : 64;
		struct rent *ne = realloc(d->e, nc * sizeof(*ne));

		if (!ne)
			return -ENOMEM;
		d->e = ne;
		*cap = nc;
	}
	d->e[d->n].name = strdup(name);
	if (!d->e[d->n].name)
		return -ENOMEM;
	d->e[d->n].type = type;
	d->e[d->n].ino = ino;
	d->n++;
	return 0;
}

/* see rview.h */
void rfs_closedir(struct rdir *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->e[i].name);
	free(d->e);
	free(d);
}

/* For the root listing: one entry per distinct long target. */
struct link_list {
	struct rdir *d;     /* the listing */
	size_t *cap;        /* its capacity */
};

static int list_link(struct rfs *fs, const char *stored, const char *full,
		     void *arg)
{
	struct link_list *l = arg;

	(void)fs;
	(void)full;
	for (size_t i = 0; i < l->d->n; i++)
		if (!strcmp(l->d->e[i].name, stored))
			return 0;
	return rdir_add(l->d, l->cap, stored, DT_REG,
			mix64(1, str_hash(stored)) | (1ull << 63));
}

/* The view's entries for plaintext entry @de of @dir: its own, a sidecar. */
static int list_entry(struct rfs *fs, struct rinode *dir, struct rdir *d,
		      size_t *cap, const struct dirent *de)
{
	char stored[NAMES_STORED_MAX + 1], full[NAMES_FULL_MAX];
	char side[NAMES_STORED_MAX + 1];
	bool lg;
	int err = view_name(fs, dir, de->d_name, stored, full, &lg);

	if (err) {
		/* a name that cannot be shown: skip it */
		xlog(fs->mountpoint, LOG_WARNING, "plaintext directory (inode "
		     "%llu): entry (inode %llu) not shown: %s",
		     (unsigned long long)dir->node.k2,
		     (unsigned long long)de->d_ino, strerror(-err));
		return 0;
	}
	err = rdir_add(d, cap, stored, de->d_type, de->d_ino);
	if (!err && lg) {
		names_long_sidecar(side, stored);
		err = rdir_add(d, cap, side, DT_REG,
			       virt_ino(R_SIDECAR, dir->node.k2, str_hash(side)));
	}
	return err;
}

static int build_dir(struct rfs *fs, struct rinode *dir, struct rdir *d)
{
	size_t cap = 0;
	DIR *dp;
	struct dirent *de;
	int err = dirops_opendir(dir->fd, &dp);

	if (err)
		return err;
	err = rdir_add(d, &cap, ".", DT_DIR, dir->vino);
	if (!err)
		err = rdir_add(d, &cap, "..", DT_DIR, 0);
	while (!err && (de = readdir(dp))) {
		if (names_is_dot(de->d_name) ||
		    hidden_plain(fs, dir, de->d_name))
			continue;
		err = list_entry(fs, dir, d, &cap, de);
	}
	closedir(dp);
	if (!err && fs->names && dir != fs->root)
		err = rdir_add(d, &cap, NAMES_DIRID_FILE, DT_REG,
			       virt_ino(R_DIRID, dir->node.k1, dir->node.k2));
	if (!err && dir == fs->root) {
		err = rdir_add(d, &cap, VOL_FILE_NAME, DT_REG,
			       virt_ino(R_HEADER, 0, 0));
		if (!err && fs->names) {
			struct link_list l = { .d = d, .cap = &cap };

			err = walk_links(fs, fs->root_fd, list_link, &l, 0);
		}
	}
	return err;
}

/* see rview.h */
int rfs_opendir(struct rfs *fs, struct rinode *dir, struct rdir **out)
{
	struct rdir *d = calloc(1, sizeof(*d));
	int err = d ? build_dir(fs, dir, d) : -ENOMEM;

	if (err) {
		if (d)
			rfs_closedir(d);
		return err;
	}
	*out = d;
	return 0;
}
