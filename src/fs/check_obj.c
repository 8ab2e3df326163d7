/* SPDX-License-Identifier: Apache-2.0 */
/*
 * check_obj.c - the checker's look at one lower object (check_priv.h):
 * a regular file's header and short tail (FORMAT 3.4, 3.5), a symlink's
 * stored target (4.4), the xattrs of any object (section 6), and the
 * descent into directories. The decoders are content.c's, names.c's
 * and xattr.c's.
 */
#include "check_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "content.h"
#include "dirops.h"
#include "layout.h"
#include "names.h"
#include "xattr.h"

/*
 * A regular file: what FORMAT 3.4 and 3.5 make checkable without a MAC.
 * The header's fixed fields, and a short tail, whose 16 - n bytes of
 * zero padding must come back from the decryption: a file cut into its
 * last unit so that 1..15 bytes remain, or a tail torn from its slot,
 * fails that check but for a 2^-8(16-n) chance.
 */
static int check_file(struct walk *w, int fd, const struct stat *st,
		      const struct wpath *wp)
{
	const uint32_t doff = w->o->doff ? w->o->doff : LAYOUT_DOFF_COMPACT;
	struct content_hdr hdr;
	uint8_t tail[LAYOUT_TAIL_MAX];
	uint64_t psize;
	char detail[128];
	ssize_t n;

	w->c->files++;
	if (st->st_size == 0)
		return 0;
	if (st->st_size < LAYOUT_HDR_SIZE) {
		snprintf(detail, sizeof(detail), "%lld bytes: cut inside the "
			 "40-byte file header; no byte of it can be read",
			 (long long)st->st_size);
		simple(w, CHECK_FILE_CUT_HEADER, wp, NULL, detail);
		return 0;
	}
	n = content_read_header(fd, doff, &hdr);
	if (n == -EIO) {
		simple(w, CHECK_FILE_HEADER, wp, NULL, "the file header's "
		       "magic, version or reserved bytes are wrong");
		return 0;
	}
	if (n)
		return op_error(w, wp, NULL, (int)n);
	psize = (uint64_t)layout_plain_size(doff, (uint64_t)st->st_size);
	if (!layout_has_tail(psize))
		return 0;
	n = content_read(w->o->xts, fd, &hdr, psize, tail,
			 psize % LAYOUT_UNIT_SIZE,
			 psize - psize % LAYOUT_UNIT_SIZE);
	explicit_bzero(tail, sizeof(tail));
	if (n == -EIO) {
		snprintf(detail, sizeof(detail), "its short tail (%u bytes) "
			 "does not decrypt to zero padding: the file was cut "
			 "or its tail torn", (unsigned)(psize % 4096));
		simple(w, CHECK_FILE_TAIL, wp, NULL, detail);
	} else if (n < 0) {
		return op_error(w, wp, NULL, (int)n);
	}
	return 0;
}

/*
 * A symlink: its stored target decrypts (4.4); a long one's file in the
 * root exists and is its own, and is noted as used.
 */
static int check_link(struct walk *w, int dfd, const char *name,
		      const struct wpath *wp)
{
	char *buf = malloc(2 * NAMES_TARGET_MAX);
	char out[4096], *content;
	ssize_t n;
	size_t len;
	int err = 0;

	w->c->symlinks++;
	if (!buf)
		return -ENOMEM;
	content = buf + NAMES_TARGET_MAX;
	n = readlinkat(dfd, name, buf, NAMES_TARGET_MAX - 1);
	if (n < 0) {
		err = op_error(w, wp, NULL, -errno);
		goto out;
	}
	buf[n] = '\0';
	if (w->o->plaintext_names)
		goto out;
	if (!names_is_link_ref(buf)) {
		if (names_decrypt_target(w->o->names, buf, (size_t)n, out,
					 &len))
			simple(w, CHECK_TARGET_BAD, wp, NULL, "the stored "
			       "target does not decrypt");
		goto out;
	}
	err = strv_add(&w->linkrefs, &w->nlinkrefs, &w->caplinkrefs, buf);
	if (err)
		goto out;
	n = dirops_read_small(w->rootfd, buf, content, NAMES_TARGET_MAX - 1,
			      &len);
	if (n == -ENOENT)
		simple(w, CHECK_LINK_MISSING, wp, NULL, "its long target's "
		       "file (xtsfs.link.*) in the root is missing");
	else if (n || names_decrypt_target_ref(w->o->names, buf, content,
					       len, out, &len))
		simple(w, CHECK_LINK_MISSING, wp, NULL, "its long target's "
		       "file (xtsfs.link.*) in the root is damaged or "
		       "another target's");
out:
	explicit_bzero(out, sizeof(out));
	free(buf);
	return err;
}

/* The object's xattrs: by descriptor @fd if it is one, else by @path. */
static ssize_t xlist(int fd, const char *path, char *buf, size_t size)
{
	return fd >= 0 ? flistxattr(fd, buf, size) :
			 llistxattr(path, buf, size);
}

static ssize_t xget(int fd, const char *path, const char *xn, void *buf,
		    size_t size)
{
	return fd >= 0 ? fgetxattr(fd, xn, buf, size) :
			 lgetxattr(path, xn, buf, size);
}

/* The stored value of xattr @xn decrypts under its name. */
static int check_value(struct walk *w, int fd, const char *path,
		       const char *xn, const struct wpath *wp)
{
	uint8_t *val = malloc(XTSFS_XATTR_KERNEL_SIZE_MAX);
	char detail[300];
	ssize_t n;
	int err = 0;

	if (!val)
		return -ENOMEM;
	n = xget(fd, path, xn, val, XTSFS_XATTR_KERNEL_SIZE_MAX);
	if (n < 0)
		err = op_error(w, wp, NULL, -errno);
	else if (xattr_value_dec(w->o->names, xn, val, (size_t)n, NULL, 0) <
		 0) {
		char esc[260];

		snprintf(detail, sizeof(detail), "the value of xattr %s does "
			 "not decrypt under its name",
			 check_escape(esc, sizeof(esc), xn));
		simple(w, CHECK_XATTR_VALUE, wp, NULL, detail);
	}
	free(val);
	return err;
}

/* see check_priv.h */
int check_xattrs(struct walk *w, int fd, const char *path,
		 const struct wpath *wp)
{
	char plain[XTSFS_XATTR_NAME_BUF], esc[260], detail[320];
	char *list = NULL;
	ssize_t n = xlist(fd, path, NULL, 0);
	int err = 0;

	if (n <= 0)
		return 0; /* none, or no xattrs on this filesystem */
	list = malloc((size_t)n + 1);
	if (!list)
		return -ENOMEM;
	n = xlist(fd, path, list, (size_t)n);
	for (ssize_t i = 0; n > 0 && i < n && !err;
	     i += (ssize_t)strlen(list + i) + 1) {
		const char *xn = list + i;
		int r;

		list[n] = '\0';
		if (!xattr_lower_is_ours(xn))
			continue; /* another program's, or not encrypted */
		r = xattr_name_dec(w->o->names, xn, plain);
		explicit_bzero(plain, sizeof(plain));
		if (r == 0) {
			err = check_value(w, fd, path, xn, wp);
			continue;
		}
		snprintf(detail, sizeof(detail), "xattr %s does not decrypt",
			 check_escape(esc, sizeof(esc), xn));
		simple(w, CHECK_XATTR_NAME, wp, NULL, detail);
	}
	free(list);
	return err;
}

/* A directory: its xattrs, then everything in it. */
static int check_subdir(struct walk *w, int dfd, const char *name,
			const struct wpath *wp)
{
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
			O_CLOEXEC);
	int err;

	w->c->dirs++;
	if (fd < 0)
		return op_error(w, wp, NULL, -errno);
	err = check_xattrs(w, fd, NULL, wp);
	if (!err && w->depth >= CHECK_MAX_DEPTH) {
		simple(w, CHECK_UNREADABLE, wp, NULL, "nested more than 2000 "
		       "directories deep: not checked below");
	} else if (!err) {
		w->depth++;
		err = check_dir(w, fd, wp);
		w->depth--;
	}
	close(fd);
	return err;
}

/* A regular file, opened without following, blocking or a tty. */
static int check_reg(struct walk *w, int dfd, const char *name,
		     const struct wpath *wp)
{
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
			O_NOCTTY | O_CLOEXEC);
	struct stat st;
	int err;

	if (fd < 0)
		return op_error(w, wp, NULL, -errno);
	if (fstat(fd, &st))
		err = op_error(w, wp, NULL, -errno);
	else if (!S_ISREG(st.st_mode))
		err = 0; /* replaced under us: not ours to judge */
	else
		err = check_file(w, fd, &st, wp);
	if (!err)
		err = check_xattrs(w, fd, NULL, wp);
	close(fd);
	return err;
}

static void progress(struct walk *w)
{
	if (++w->entries % 1000 == 0 && w->o->progress)
		w->o->progress(w->o->arg, w->c);
}

/* see check_priv.h */
int check_object(struct walk *w, int dfd, const char *name,
		 const struct wpath *wp)
{
	char fdp[DIROPS_FD_PATH_SIZE], *path;
	struct stat st;
	int err;

	progress(w);
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW))
		return op_error(w, wp, NULL, -errno);
	if (S_ISDIR(st.st_mode))
		return check_subdir(w, dfd, name, wp);
	if (S_ISREG(st.st_mode))
		return check_reg(w, dfd, name, wp);
	/* symlinks and special files are not opened: their xattrs by path,
	 * this one naming the entry itself, not followed */
	dirops_fd_path(fdp, dfd);
	if (asprintf(&path, "%s/%s", fdp, name) < 0)
		return -ENOMEM;
	if (S_ISLNK(st.st_mode)) {
		err = check_link(w, dfd, name, wp);
	} else {
		w->c->others++;
		err = 0;
	}
	if (!err)
		err = check_xattrs(w, -1, path, wp);
	free(path);
	return err;
}
