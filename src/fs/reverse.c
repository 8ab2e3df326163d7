/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reverse.c - reverse mode's FUSE handlers (doc/FORMAT.md section 5).
 * Each decodes its request, calls the view (rview.h: FUSE-free, every
 * call 0 or a count or -errno) and replies exactly once. What stays here
 * is FUSE's: inode numbers (FUSE_ROOT_ID is the view's root, every other
 * number a view inode handle), the 1 s timeouts, file handles in
 * fuse_file_info, the readdir buffer format, statfs and the xattr
 * replies.
 */
#include "reverse.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "content.h"
#include "scratch.h"
#include "fuse_glue.h"

#define TIMEOUT 1.0 /* entries and attributes: the plaintext changes under us */

static struct rfs *rfs_of(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

static struct rinode *rinode_of(struct rfs *fs, fuse_ino_t ino)
{
	return ino == FUSE_ROOT_ID ? fs->root : (struct rinode *)(uintptr_t)ino;
}

static void rev_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct rfs *fs = rfs_of(req);
	struct fuse_entry_param e;
	struct rinode *in;
	struct stat st;
	int err = rfs_lookup(fs, rinode_of(fs, parent), name, &in, &st);

	memset(&e, 0, sizeof(e));
	e.entry_timeout = TIMEOUT;
	if (err == -ENOENT) {
		fuse_reply_entry(req, &e); /* a negative entry, cached too */
	} else if (err) {
		fuse_reply_err(req, -err);
	} else {
		e.ino = (fuse_ino_t)(uintptr_t)in;
		e.attr = st;
		e.attr_timeout = TIMEOUT;
		fuse_reply_entry(req, &e);
	}
}

static void rev_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	struct rfs *fs = rfs_of(req);

	rfs_forget(fs, rinode_of(fs, ino), nlookup);
	fuse_reply_none(req);
}

static void rev_forget_multi(fuse_req_t req, size_t count,
			     struct fuse_forget_data *forgets)
{
	struct rfs *fs = rfs_of(req);

	for (size_t i = 0; i < count; i++)
		rfs_forget(fs, rinode_of(fs, forgets[i].ino), forgets[i].nlookup);
	fuse_reply_none(req);
}

static void rev_getattr(fuse_req_t req, fuse_ino_t ino,
			struct fuse_file_info *fi)
{
	struct rfs *fs = rfs_of(req);
	struct stat st;
	int err = rfs_getattr(fs, rinode_of(fs, ino), &st);

	(void)fi;
	if (err)
		fuse_reply_err(req, -err);
	else
		fuse_reply_attr(req, &st, TIMEOUT);
}

static void rev_readlink(fuse_req_t req, fuse_ino_t ino)
{
	struct rfs *fs = rfs_of(req);
	char *s = malloc(RFS_TARGET_MAX);
	int err = s ? rfs_readlink(fs, rinode_of(fs, ino), s) : -ENOMEM;

	if (err)
		fuse_reply_err(req, -err);
	else
		fuse_reply_readlink(req, s);
	free(s);
}

static void rev_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct rfs *fs = rfs_of(req);
	uint64_t fh;
	bool fixed;
	int err = rfs_open(fs, rinode_of(fs, ino), fi->flags, &fh, &fixed);

	if (err) {
		fuse_reply_err(req, -err);
		return;
	}
	fi->fh = fh;
	if (fixed)
		fi->keep_cache = 1;
	fuse_reply_open(req, fi);
}

static void rev_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	struct rfs *fs = rfs_of(req);
	uint8_t *buf = scratch_get(SCRATCH_REPLY, size);
	ssize_t n;

	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	n = rfs_read(fs, rinode_of(fs, ino), fi->fh, buf, size, (uint64_t)off);
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else
		fuse_reply_buf(req, (const char *)buf, (size_t)n);
}

static void rev_release(fuse_req_t req, fuse_ino_t ino,
			struct fuse_file_info *fi)
{
	(void)ino;
	rfs_release(rfs_of(req), fi->fh);
	fuse_reply_err(req, 0);
}

static void rev_opendir(fuse_req_t req, fuse_ino_t ino,
			struct fuse_file_info *fi)
{
	struct rfs *fs = rfs_of(req);
	struct rdir *d;
	int err = rfs_opendir(fs, rinode_of(fs, ino), &d);

	if (err) {
		fuse_reply_err(req, -err);
		return;
	}
	fi->fh = (uint64_t)(uintptr_t)d;
	fi->cache_readdir = 0;
	fuse_reply_open(req, fi);
}

/* The listing's entries from index @off on, as many as fit in @size. */
static void rev_readdir(fuse_req_t req, fuse_ino_t ino, size_t size,
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

static void rev_releasedir(fuse_req_t req, fuse_ino_t ino,
			   struct fuse_file_info *fi)
{
	(void)ino;
	rfs_closedir((struct rdir *)(uintptr_t)fi->fh);
	fuse_reply_err(req, 0);
}

static void rev_statfs(fuse_req_t req, fuse_ino_t ino)
{
	(void)ino;
	glue_reply_statfs(req, rfs_of(req)->root_fd);
}

static void rev_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
			 size_t size)
{
	char *buf = glue_xattr_buf(size);
	ssize_t n = size && !buf ? -ENOMEM :
		    rfs_getxattr(rfs_of(req), rinode_of(rfs_of(req), ino), name, buf,
				 size);

	glue_reply_xattr(req, n, buf, size);
}

static void rev_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	char *buf = glue_xattr_buf(size);
	ssize_t n = size && !buf ? -ENOMEM :
		    rfs_listxattr(rfs_of(req), rinode_of(rfs_of(req), ino),
				  fuse_req_ctx(req)->uid == 0, buf, size);

	glue_reply_xattr(req, n, buf, size);
}

static void rev_init_conn(void *userdata, struct fuse_conn_info *conn)
{
	(void)userdata;
	glue_conn_common(conn);
}

const struct fuse_lowlevel_ops rfs_ops = {
	.init = rev_init_conn,
	.lookup = rev_lookup,
	.forget = rev_forget,
	.forget_multi = rev_forget_multi,
	.getattr = rev_getattr,
	.readlink = rev_readlink,
	.open = rev_open,
	.read = rev_read,
	.release = rev_release,
	.opendir = rev_opendir,
	.readdir = rev_readdir,
	.releasedir = rev_releasedir,
	.statfs = rev_statfs,
	.getxattr = rev_getxattr,
	.listxattr = rev_listxattr,
};
