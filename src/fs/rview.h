/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rview.h - the reverse view (doc/FORMAT.md section 5) without FUSE: a
 * plaintext directory shown encrypted, read only, in exactly the on-disk
 * format of a normal volume, so that a copy of the view mounts normally.
 * Derived ids, synthesised entries (xtsfs.volume, xtsfs.dirid, long-name
 * sidecars, long-target files), listings and range reads live here, on
 * the same layout (layout.h), header (fileheader.h) and contents
 * (content_encrypt_span()) code as the forward mount; the FUSE front end
 * (reverse.c) only decodes requests, calls these and replies.
 *
 * One error convention: every function that can fail returns 0 (or a
 * byte count) or -errno; results go to out-parameters. Inodes are opaque
 * handles: rfs_lookup() hands out one reference per successful call,
 * rfs_forget() drops them, the root (fs->root) is never forgotten.
 * Lines for the user go to xlog(fs->mountpoint, ...): object numbers,
 * never plaintext names or keys.
 */
#ifndef XTSFS_RVIEW_H
#define XTSFS_RVIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "bdi.h"
#include "cmac.h"
#include "itable.h"
#include "names.h"
#include "xts.h"

struct rinode; /* one object of the view; private to rview.c */

/* struct rfs - one reverse-mode view. The caller sets the first six. */
struct rfs {
	int root_fd;                    /* the plaintext directory, O_PATH */
	const struct xts_ctx *xts;      /* contents key */
	const struct names_ctx *names;  /* names key; NULL: plaintext names */
	const struct names_ctx *xattr_names; /* names key for xattrs, always */
	struct aes_cmac_key *idkey;     /* header key: id derivation (locked) */
	const char *mountpoint;         /* for log lines */
	struct bdi_tune readahead;      /* applied at the first open */
	struct rinode *root;            /* the root, not in the table */
	struct itable inodes;           /* the rest, by (kind, k1, k2) */
};

/*
 * rfs_reserved_clash() - with plaintext names, a plaintext root entry
 * named xtsfs.volume or xtsfs.volume.tmp could not be in the view (the
 * view's header has the one name, a mount of a copy hides the other:
 * FORMAT.md 5.3), so reverse mode refuses such a directory.
 * Return: the clashing name, or NULL.
 */
const char *rfs_reserved_clash(int root_fd);

/* rfs_init() - the table and the root inode. Return: 0 or -errno. */
int rfs_init(struct rfs *fs);

/*
 * rfs_destroy() - free every inode (the session is over), the root's
 * too, which closes fs->root_fd.
 */
void rfs_destroy(struct rfs *fs);

/*
 * rfs_lookup() - the entry of view directory @dir named @name: @out
 * gets the inode, with one more reference, @st its attributes.
 * Return: 0, -ENOENT if the view has no such entry, or another -errno.
 */
int rfs_lookup(struct rfs *fs, struct rinode *dir, const char *name,
	       struct rinode **out, struct stat *st);

/* rfs_forget() - drop @n references to @in (never the root's). */
void rfs_forget(struct rfs *fs, struct rinode *in, uint64_t n);

/*
 * rfs_getattr() - the attributes the view shows for @in: a regular
 * file's size is its view size (layout_lower_size()), a symlink's the
 * length of its encrypted target, st_ino the view's inode number.
 * Return: 0 or -errno.
 */
int rfs_getattr(struct rfs *fs, struct rinode *in, struct stat *st);

/* Room for a view symlink target and its NUL (FORMAT 4.4). */
#define RFS_TARGET_MAX NAMES_TARGET_MAX

/*
 * rfs_readlink() - the view target of symlink @in, NUL-terminated, in
 * @buf. Return: 0 or -errno.
 */
int rfs_readlink(struct rfs *fs, struct rinode *in, char buf[RFS_TARGET_MAX]);

/* The handle rfs_open() gives a synthesised file: it has no descriptor. */
#define RFS_NO_FILE ((uint64_t)-1)

/*
 * rfs_open() - open @in for reading with open(2) @flags. Also applies
 * fs->readahead the first time. @fh gets the handle for rfs_read() and
 * rfs_release(); @fixed is set if the contents can never change while
 * open (synthesised files: the kernel may keep its cache).
 * Return: 0; -EROFS for any access mode but O_RDONLY; -EINVAL if @in is
 * not a regular file; another -errno.
 */
int rfs_open(struct rfs *fs, struct rinode *in, int flags, uint64_t *fh,
	     bool *fixed);

/*
 * rfs_read() - up to @size bytes of @in's view at view offset @off into
 * @buf: for a plaintext file the 40-byte header (fileheader.h) followed
 * by its units, encrypted as content_write() would store them (units
 * wholly in a plaintext hole as zeros), computed now; for a synthesised
 * file its bytes. @fh: from rfs_open().
 * Return: the byte count (0 at or past the end) or -errno.
 */
ssize_t rfs_read(struct rfs *fs, struct rinode *in, uint64_t fh,
		 uint8_t *buf, size_t size, uint64_t off);

/* rfs_release() - close handle @fh of rfs_open(). */
void rfs_release(struct rfs *fs, uint64_t fh);

/* struct rdir - the listing of a view directory, made at opendir. */
struct rdir {
	size_t n;                   /* entries, "." and ".." first */
	struct rent {
		char *name;         /* view name */
		unsigned char type; /* DT_* */
		uint64_t ino;       /* shown inode number */
	} *e;
};

/*
 * rfs_opendir() - the listing of view directory @dir, in @out: every
 * plaintext entry under its view name (and a sidecar after each long
 * one), xtsfs.dirid below the root, and in the root xtsfs.volume and one
 * xtsfs.link.* per distinct long symlink target of the tree.
 * Return: 0 or -errno (then nothing to free).
 */
int rfs_opendir(struct rfs *fs, struct rinode *dir, struct rdir **out);

/* rfs_closedir() - free a listing of rfs_opendir(). */
void rfs_closedir(struct rdir *d);

/*
 * rfs_getxattr() - the stored form (FORMAT 6) of the plaintext xattr
 * that view name @name (a stored name) stands for, with getxattr(2)'s
 * size rules (@size 0: the size). -ENODATA for names the view does not
 * show. rview_xattr.c.
 */
ssize_t rfs_getxattr(struct rfs *fs, struct rinode *in, const char *name,
		     void *out, size_t size);

/*
 * rfs_listxattr() - the stored names of @in's user.* and trusted.*
 * xattrs (trusted.* only if the caller is @root), with listxattr(2)'s
 * size rules.
 */
ssize_t rfs_listxattr(struct rfs *fs, struct rinode *in, bool root,
		      char *out, size_t size);

#endif /* XTSFS_RVIEW_H */
