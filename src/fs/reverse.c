/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reverse.c - the reverse-mode view (doc/FORMAT.md section 5).
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
#include "reverse.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "content.h"
#include "dirops.h"
#include "fileheader.h"
#include "layout.h"
#include "volume.h"
#include "fuse_glue.h"

#define H FILEHDR_SIZE     /* shorthands for buffer sizes; offsets: layout.h */
#define U LAYOUT_UNIT_SIZE
#define VIRT_MTIME 946684800 /* 2000-01-01: sidecars never change */

enum rkind {
	R_REAL,      /* a plaintext object */
	R_HEADER,    /* xtsfs.volume: the bytes of .xtsfs.volume */
	R_DIRID,     /* xtsfs.dirid of a directory */
	R_SIDECAR,   /* xtsfs.long.*.name, xtsfs.link.*: fixed text */
};

/* struct rinode - one object of the view. */
struct rinode {
	/*
	 * First: the table's key, (enum rkind, k1, k2): REAL (dev, ino),
	 * else synthetic; and the kernel's references.
	 */
	struct itable_node node;
	int fd;                   /* REAL: O_PATH of the plaintext object */
	mode_t type;              /* S_IFMT of what the view shows */
	pthread_mutex_t lock;     /* ids below */
	bool ids_ok;              /* id[] is derived */
	uint8_t id[16];           /* REAL dir: dirid; REAL file: file id */
	uint8_t *content;         /* virtual: the file's bytes */
	size_t clen;              /* virtual: their length */
	struct timespec mtime;    /* virtual: modification time */
	uint64_t vino;            /* the inode number the view shows */
};

/* struct rdir - an open view directory: its entries, made at opendir. */
struct rdir {
	size_t n;                 /* entries */
	struct rent {
		char *name;       /* view name */
		unsigned char type; /* DT_* */
		uint64_t ino;     /* shown inode number */
	} *e;
};

static struct rfs *rfs_of(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

static struct rinode *rinode_of(struct rfs *fs, fuse_ino_t ino)
{
	return ino == FUSE_ROOT_ID ? fs->root : (struct rinode *)(uintptr_t)ino;
}

static uint64_t mix64(uint64_t a, uint64_t b)
{
	uint64_t h = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull);

	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 29);
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
	in->vino = kind == R_REAL ? k2 : mix64(mix64(kind, k1), k2) | (1ull << 63);
	pthread_mutex_init(&in->lock, NULL);
	got = rinode_ofnode(itable_insert(&fs->inodes, &in->node));
	if (got != in)
		rinode_free(in); /* a concurrent lookup added it first */
	return got;
}

static void rinode_forget(struct rfs *fs, struct rinode *in, uint64_t n)
{
	if (in != fs->root && itable_forget(&fs->inodes, &in->node, n))
		rinode_free(in);
}

/* see reverse.h */
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

/* see reverse.h */
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
static int derive_id(struct rfs *fs, struct rinode *in)
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
	int err = derive_id(fs, dir);

	if (!err)
		memcpy(out, dir->id, 16);
	return err;
}

/* ---- names ---------------------------------------------------------------- */

static bool hidden_plain(const struct rfs *fs, const struct rinode *dir,
			 const char *name)
{
	return dir == fs->root && (!strcmp(name, VOL_REVERSE_NAME) ||
				   !strcmp(name, VOL_REVERSE_TMP_NAME));
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
		st->st_size = (off_t)layout_lower_size((uint64_t)st->st_size);
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

static int inode_attr(struct rfs *fs, struct rinode *in, struct stat *st)
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

/* ---- lookup --------------------------------------------------------------- */

static int real_entry(struct rfs *fs, struct rinode *dir, const char *plain,
		      struct fuse_entry_param *e)
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
	err = inode_attr(fs, in, &e->attr);
	if (err) {
		rinode_forget(fs, in, 1);
		return err;
	}
	e->ino = (fuse_ino_t)(uintptr_t)in;
	return 0;
}

static int virt_entry(struct rfs *fs, enum rkind kind, uint64_t k1,
		      uint64_t k2, uint8_t *content, size_t clen,
		      struct timespec mtime, struct fuse_entry_param *e)
{
	struct rinode *in = rinode_get(fs, kind, k1, k2, -1, S_IFREG, content,
				       clen);

	if (!in)
		return -ENOMEM;
	in->mtime = mtime;
	inode_attr(fs, in, &e->attr);
	e->ino = (fuse_ino_t)(uintptr_t)in;
	return 0;
}

static uint64_t str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
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

/*
 * Walk the plaintext tree below @dirfd and call @fn(fs, stored, full, arg)
 * for every symlink whose target is long (FORMAT 4.4): @stored is its
 * xtsfs.link.* name, @full the text of that file. A non-zero return from
 * @fn stops the walk and is returned.
 */
typedef int (*link_fn)(struct rfs *fs, const char *stored, const char *full,
		       void *arg);

static int walk_links(struct rfs *fs, int dirfd, link_fn fn, void *arg,
		      int depth)
{
	DIR *dp;
	struct dirent *de;
	int err = depth > 256 ? -ELOOP : dirops_opendir(dirfd, &dp);

	/* a directory we cannot read has no symlinks we can show: skip it */
	if (err)
		return err == -ENOMEM ? err : 0;
	while (!err && (de = readdir(dp))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (de->d_type == DT_LNK) {
			int fd = openat(dirfd, de->d_name, O_PATH | O_NOFOLLOW |
					O_CLOEXEC);
			char *s = malloc(NAMES_TARGET_MAX), *f = malloc(NAMES_TARGET_MAX);
			bool lg = false;
			size_t len;

			if (fd >= 0 && s && f &&
			    !view_target(fs, fd, s, f, &lg, &len) && lg)
				err = fn(fs, s, f, arg);
			free(s);
			free(f);
			if (fd >= 0)
				close(fd);
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

static int read_header_file(struct rfs *fs, uint8_t **out, size_t *len,
			    struct timespec *mtime)
{
	/* never blocks on a FIFO, never reads a device: a regular file only */
	int fd = openat(fs->root_fd, VOL_REVERSE_NAME, O_RDONLY | O_CLOEXEC |
			O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	struct stat st;
	uint8_t *buf;
	ssize_t n;

	if (fd < 0)
		return errno == ENOENT ? -ENOENT : -EIO;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EIO;
	}
	buf = malloc(VOL_FILE_SIZE);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	n = pread(fd, buf, VOL_FILE_SIZE, 0);
	close(fd);
	if (n < 0) {
		free(buf);
		return -EIO;
	}
	*out = buf;
	*len = (size_t)n;
	*mtime = st.st_mtim;
	return 0;
}

static int do_rlookup(struct rfs *fs, struct rinode *dir, const char *n,
		      struct fuse_entry_param *e)
{
	char plain[256];
	size_t plen;
	int err;

	memset(e, 0, sizeof(e[0]));
	e->attr_timeout = 1.0;
	e->entry_timeout = 1.0;
	if (dir == fs->root && !strcmp(n, VOL_FILE_NAME)) {
		uint8_t *buf = NULL;
		size_t len = 0;
		struct timespec mt = { 0 };

		err = read_header_file(fs, &buf, &len, &mt);
		if (err)
			return err;
		return virt_entry(fs, R_HEADER, 0, 0, buf, len, mt, e);
	}
	if (!fs->names)
		return real_entry(fs, dir, n, e);
	if (dir != fs->root && !strcmp(n, NAMES_DIRID_FILE)) {
		uint8_t *id = malloc(16);
		struct timespec mt = { 0 };

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
		return virt_entry(fs, R_DIRID, dir->node.k1, dir->node.k2, id, 16, mt, e);
	}
	if (dir == fs->root && names_is_link_ref(n)) {
		char *full = malloc(NAMES_TARGET_MAX);
		struct timespec mt = { VIRT_MTIME, 0 };

		if (!full)
			return -ENOMEM;
		struct link_want want = { .name = n, .full = full };

		err = walk_links(fs, fs->root_fd, match_link, &want, 0);
		if (err != 1) {
			free(full);
			return err < 0 ? err : -ENOENT;
		}
		return virt_entry(fs, R_SIDECAR, 1, str_hash(n), (uint8_t *)full,
				  strlen(full), mt, e);
	}
	if (!strncmp(n, "xtsfs.long.", 11)) {
		char full[NAMES_FULL_MAX];
		bool sidecar = false;

		err = find_long(fs, dir, n, plain, full, &sidecar);
		if (err)
			return err;
		if (sidecar) {
			struct timespec mt = { VIRT_MTIME, 0 };
			char *c = strdup(full);

			if (!c)
				return -ENOMEM;
			return virt_entry(fs, R_SIDECAR, dir->node.k2, str_hash(n),
					  (uint8_t *)c, strlen(c), mt, e);
		}
		return real_entry(fs, dir, plain, e);
	}
	if (names_is_internal(n))
		return -ENOENT;
	{
		uint8_t dirid[16];

		err = dirid_of(fs, dir, dirid);
		if (err)
			return err;
		if (names_decrypt(fs->names, dirid, n, strlen(n), plain, &plen))
			return -ENOENT; /* not a name of this view */
	}
	return real_entry(fs, dir, plain, e);
}

static void rfs_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct rfs *fs = rfs_of(req);
	struct fuse_entry_param e;
	int err = do_rlookup(fs, rinode_of(fs, parent), name, &e);

	if (err == -ENOENT) {
		memset(&e, 0, sizeof(e));
		e.entry_timeout = 1.0;
		fuse_reply_entry(req, &e);
	} else if (err) {
		fuse_reply_err(req, -err);
	} else {
		fuse_reply_entry(req, &e);
	}
}

static void rfs_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	struct rfs *fs = rfs_of(req);

	rinode_forget(fs, rinode_of(fs, ino), nlookup);
	fuse_reply_none(req);
}

static void rfs_forget_multi(fuse_req_t req, size_t count,
			     struct fuse_forget_data *forgets)
{
	struct rfs *fs = rfs_of(req);

	for (size_t i = 0; i < count; i++)
		rinode_forget(fs, rinode_of(fs, forgets[i].ino), forgets[i].nlookup);
	fuse_reply_none(req);
}

static void rfs_getattr(fuse_req_t req, fuse_ino_t ino,
			struct fuse_file_info *fi)
{
	struct rfs *fs = rfs_of(req);
	struct stat st;
	int err = inode_attr(fs, rinode_of(fs, ino), &st);

	(void)fi;
	if (err)
		fuse_reply_err(req, -err);
	else
		fuse_reply_attr(req, &st, 1.0);
}

static void rfs_readlink(fuse_req_t req, fuse_ino_t ino)
{
	struct rfs *fs = rfs_of(req);
	struct rinode *in = rinode_of(fs, ino);
	char *s = malloc(NAMES_TARGET_MAX), *f = malloc(NAMES_TARGET_MAX);
	bool lg;
	size_t len;
	int err = s && f ? view_target(fs, in->fd, s, f, &lg, &len) : -ENOMEM;

	if (err)
		fuse_reply_err(req, -err);
	else
		fuse_reply_readlink(req, s);
	free(s);
	free(f);
}

/* ---- files ---------------------------------------------------------------- */

static void rfs_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct rfs *fs = rfs_of(req);
	struct rinode *in = rinode_of(fs, ino);
	char path[64];
	int fd;

	(void)bdi_tune_once(&fs->readahead);
	if ((fi->flags & O_ACCMODE) != O_RDONLY) {
		fuse_reply_err(req, EROFS);
		return;
	}
	if (in->node.kind != R_REAL) {
		fi->fh = (uint64_t)-1;
		fi->keep_cache = 1;
		fuse_reply_open(req, fi);
		return;
	}
	if (in->type != S_IFREG) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", in->fd);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fuse_reply_err(req, errno);
		return;
	}
	fi->fh = (uint64_t)fd;
	fuse_reply_open(req, fi);
}

/* Mark the units [u0, u0 + n) of plaintext @fd that are holes. */
static void find_holes(int fd, uint64_t psize, uint64_t u0, uint64_t n,
		       bool *hole)
{
	uint64_t pos = layout_unit_start(u0);
	uint64_t end = pos + layout_units_len(psize, u0, n);

	memset(hole, 0, n);
	while (pos < end) {
		off_t d = lseek(fd, (off_t)pos, SEEK_DATA), h;
		uint64_t dd = d < 0 ? end : (uint64_t)d;

		/* units wholly inside [pos, dd) are holes */
		/* from the first unit that starts at or after pos */
		for (uint64_t u = layout_nunits(pos); u < u0 + n; u++) {
			uint64_t us = layout_unit_start(u);
			uint64_t ue = us + layout_unit_len(psize, u);

			if (ue > dd)
				break;
			if (us >= pos)
				hole[u - u0] = true;
		}
		if (d < 0 || dd >= end)
			break;
		h = lseek(fd, d, SEEK_HOLE);
		if (h < 0 || (uint64_t)h <= dd)
			break;
		pos = (uint64_t)h;
	}
}

/*
 * The 40-byte header of a file: the id and, if the file ends in a short
 * tail, its slot, exactly as a forward mount would have written them.
 */
static int make_header(struct rfs *fs, struct rinode *in, int fd,
		       uint64_t psize, uint8_t hdr[H])
{
	struct fileheader fh = { 0 }; /* no short tail: the slot is zeros */

	memcpy(fh.id, in->id, sizeof(fh.id));
	if (layout_has_tail(psize)) {
		uint64_t u = layout_last_unit(psize);
		uint32_t n = layout_unit_len(psize, u);
		uint8_t p[16] = { 0 }, c[16];
		bool hole;

		if (pread(fd, p, n, (off_t)layout_unit_start(u)) != (ssize_t)n)
			return -EIO;
		find_holes(fd, psize, u, 1, &hole);
		content_encrypt_span(fs->xts, in->id, psize, u, 1, p, c,
				     fh.slot, &hole);
	}
	fileheader_encode(hdr, &fh);
	return 0;
}

static void rfs_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	struct rfs *fs = rfs_of(req);
	struct rinode *in = rinode_of(fs, ino);
	uint8_t *out = NULL, *buf = NULL;
	bool *hole = NULL;
	uint64_t psize, vsize, o = (uint64_t)off, got = 0;
	struct stat st;
	int fd = (int)fi->fh, err = 0;

	if (in->node.kind != R_REAL) {
		size_t len = o >= in->clen ? 0 : in->clen - o < size ?
			     in->clen - o : size;

		fuse_reply_buf(req, (const char *)in->content + (len ? o : 0), len);
		return;
	}
	if (fstat(fd, &st) != 0 || (err = derive_id(fs, in))) {
		fuse_reply_err(req, err ? -err : errno);
		return;
	}
	psize = (uint64_t)st.st_size;
	vsize = layout_lower_size(psize);
	if (o >= vsize) {
		fuse_reply_buf(req, NULL, 0);
		return;
	}
	if (size > vsize - o)
		size = (size_t)(vsize - o);
	out = content_scratch(SCRATCH_REPLY, size);
	if (!out) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	if (o < H) {
		uint8_t hdr[H];

		err = make_header(fs, in, fd, psize, hdr);
		if (err)
			goto fail;
		got = H - o < size ? H - o : size;
		memcpy(out, hdr + o, got);
	}
	if (got < size) {
		/* plaintext [a, b) covered, in whole units */
		uint64_t a = layout_poff(o + got), b = layout_poff(o + size);
		struct layout_span sp;
		uint64_t u0, n, span;
		uint8_t slot[16];
		ssize_t r;

		layout_span(&sp, psize, a, b - a);
		u0 = sp.u0;
		n = sp.n;
		span = sp.len;
		buf = content_scratch(SCRATCH_UNITS, n * U);
		hole = (bool *)content_scratch(SCRATCH_HOLES, n * sizeof(*hole));
		if (!buf || !hole) {
			err = -ENOMEM;
			goto fail;
		}
		r = pread(fd, buf, span, (off_t)layout_unit_start(u0));
		if (r < 0) {
			err = -errno;
			goto fail;
		}
		if ((uint64_t)r < span) /* the file shrank meanwhile */
			memset(buf + r, 0, span - (uint64_t)r);
		find_holes(fd, psize, u0, n, hole);
		content_encrypt_span(fs->xts, in->id, psize, u0, n, buf, buf,
				     slot, hole);
		memcpy(out + got, buf + (a - layout_unit_start(u0)), b - a);
		explicit_bzero(buf, n * U);
	}
	fuse_reply_buf(req, (const char *)out, size);
	return;
fail:
	fuse_reply_err(req, -err);
}

static void rfs_release(fuse_req_t req, fuse_ino_t ino,
			struct fuse_file_info *fi)
{
	(void)ino;
	if (fi->fh != (uint64_t)-1)
		close((int)fi->fh);
	fuse_reply_err(req, 0);
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

static void rdir_free(struct rdir *d)
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
		char stored[NAMES_STORED_MAX + 1], full[NAMES_FULL_MAX];
		char side[NAMES_STORED_MAX + 1];
		bool lg;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    hidden_plain(fs, dir, de->d_name))
			continue;
		if (view_name(fs, dir, de->d_name, stored, full, &lg))
			continue; /* a name that cannot be shown: skip it */
		err = rdir_add(d, &cap, stored, de->d_type, de->d_ino);
		if (!err && lg) {
			names_long_sidecar(side, stored);
			err = rdir_add(d, &cap, side, DT_REG,
				       mix64(mix64(R_SIDECAR, dir->node.k2),
					     str_hash(side)) | (1ull << 63));
		}
	}
	closedir(dp);
	if (!err && fs->names && dir != fs->root)
		err = rdir_add(d, &cap, NAMES_DIRID_FILE, DT_REG,
			       mix64(mix64(R_DIRID, dir->node.k1), dir->node.k2) | (1ull << 63));
	if (!err && dir == fs->root) {
		err = rdir_add(d, &cap, VOL_FILE_NAME, DT_REG,
			       mix64(mix64(R_HEADER, 0), 0) | (1ull << 63));
		if (!err && fs->names)
		{
			struct link_list l = { .d = d, .cap = &cap };

			err = walk_links(fs, fs->root_fd, list_link, &l, 0);
		}
	}
	return err;
}

static void rfs_opendir(fuse_req_t req, fuse_ino_t ino,
			struct fuse_file_info *fi)
{
	struct rfs *fs = rfs_of(req);
	struct rinode *dir = rinode_of(fs, ino);
	struct rdir *d = calloc(1, sizeof(*d));
	int err = d ? build_dir(fs, dir, d) : -ENOMEM;

	if (err) {
		if (d)
			rdir_free(d);
		fuse_reply_err(req, -err);
		return;
	}
	fi->fh = (uint64_t)(uintptr_t)d;
	fi->cache_readdir = 0;
	fuse_reply_open(req, fi);
}

static void rfs_readdir(fuse_req_t req, fuse_ino_t ino, size_t size,
			off_t off, struct fuse_file_info *fi)
{
	struct rdir *d = (struct rdir *)(uintptr_t)fi->fh;
	char *buf = malloc(size), *p = buf;
	size_t rem = size;

	(void)ino;
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	for (size_t i = (size_t)off; i < d->n; i++) {
		struct stat st = { .st_ino = d->e[i].ino,
				   .st_mode = (mode_t)d->e[i].type << 12 };
		size_t need = fuse_add_direntry(req, p, rem, d->e[i].name, &st,
						(off_t)(i + 1));

		if (need > rem)
			break;
		p += need;
		rem -= need;
	}
	fuse_reply_buf(req, buf, size - rem);
	free(buf);
}

static void rfs_releasedir(fuse_req_t req, fuse_ino_t ino,
			   struct fuse_file_info *fi)
{
	(void)ino;
	rdir_free((struct rdir *)(uintptr_t)fi->fh);
	fuse_reply_err(req, 0);
}

static void rfs_statfs(fuse_req_t req, fuse_ino_t ino)
{
	(void)ino;
	glue_reply_statfs(req, rfs_of(req)->root_fd);
}

static void rfs_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
			 size_t size)
{
	(void)ino;
	(void)name;
	(void)size;
	fuse_reply_err(req, ENODATA);
}

static void rfs_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	(void)ino;
	if (size)
		fuse_reply_buf(req, NULL, 0);
	else
		fuse_reply_xattr(req, 0);
}

static void rfs_init_conn(void *userdata, struct fuse_conn_info *conn)
{
	(void)userdata;
	glue_conn_common(conn);
}

const struct fuse_lowlevel_ops rfs_ops = {
	.init = rfs_init_conn,
	.lookup = rfs_lookup,
	.forget = rfs_forget,
	.forget_multi = rfs_forget_multi,
	.getattr = rfs_getattr,
	.readlink = rfs_readlink,
	.open = rfs_open,
	.read = rfs_read,
	.release = rfs_release,
	.opendir = rfs_opendir,
	.readdir = rfs_readdir,
	.releasedir = rfs_releasedir,
	.statfs = rfs_statfs,
	.getxattr = rfs_getxattr,
	.listxattr = rfs_listxattr,
};
