/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rview_xattr.c - the extended attributes of reverse mode's view: a
 * plaintext object's user.* and trusted.* xattrs shown as a forward
 * volume stores them (FORMAT 6), so that `rsync -X` of the view carries
 * them and a forward mount of the copy shows the plaintext ones. The
 * objects the view makes up (header, dirids, sidecars) have none; nor
 * are ACLs or security.* shown (doc/USAGE.md).
 */
#include "rview_priv.h"

#include "dirops.h"
#include "log.h"
#include "scratch.h"
#include "xattr.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/xattr.h>
#include <syslog.h>

/* see rview.h */
ssize_t rfs_getxattr(struct rfs *fs, struct rinode *in, const char *name,
		     void *out, size_t size)
{
	char plain[XTSFS_XATTR_NAME_BUF], path[DIROPS_FD_PATH_SIZE];
	uint8_t *buf, *val;
	ssize_t n, m;

	if (in->node.kind != R_REAL || xattr_name_dec(fs->xattr_names, name,
						      plain) != 0)
		return -ENODATA; /* not a name the view shows */
	buf = scratch_get(SCRATCH_XATTR, 2 * XTSFS_XATTR_KERNEL_SIZE_MAX);
	if (!buf)
		return -ENOMEM;
	val = buf + XTSFS_XATTR_KERNEL_SIZE_MAX;
	dirops_fd_path(path, in->fd);
	n = getxattr(path, plain, val, XTSFS_XATTR_KERNEL_SIZE_MAX);
	if (n < 0)
		return -errno;
	m = xattr_value_enc(fs->xattr_names, name, val, (size_t)n, buf,
			    XTSFS_XATTR_KERNEL_SIZE_MAX);
	explicit_bzero(val, (size_t)n);
	if (m == -E2BIG)
		xlog(fs->mountpoint, LOG_WARNING, "object (inode %llu): an "
		     "extended attribute of %zd bytes has no stored form; "
		     "not shown", (unsigned long long)in->node.k2, n);
	if (m < 0)
		return m == -E2BIG ? -ENODATA : m;
	return xattr_give(out, size, buf, (size_t)m);
}

/* see rview.h */
ssize_t rfs_listxattr(struct rfs *fs, struct rinode *in, bool root,
		      char *out, size_t size)
{
	struct xattr_list_stats st = { 0 };
	char path[DIROPS_FD_PATH_SIZE], *buf, *stored;
	ssize_t n;

	if (in->node.kind != R_REAL)
		return 0;
	buf = (char *)scratch_get(SCRATCH_XATTR,
				  2 * XTSFS_XATTR_KERNEL_LIST_MAX);
	if (!buf)
		return -ENOMEM;
	stored = buf + XTSFS_XATTR_KERNEL_LIST_MAX;
	dirops_fd_path(path, in->fd);
	n = listxattr(path, buf, XTSFS_XATTR_KERNEL_LIST_MAX);
	if (n < 0)
		return errno == ENOTSUP ? 0 : -errno;
	/* stored names are longer: the list may pass XATTR_LIST_MAX (E2BIG) */
	n = xattr_list_enc(fs->xattr_names, buf, (size_t)n, stored,
			   XTSFS_XATTR_KERNEL_LIST_MAX, 0, &st);
	if (st.toolong)
		xlog(fs->mountpoint, LOG_WARNING, "object (inode %llu): %zu "
		     "extended attribute names too long to be stored; not "
		     "shown", (unsigned long long)in->node.k2, st.toolong);
	if (n == -ERANGE)
		return -E2BIG;
	if (n < 0)
		return n;
	/* Linux lists trusted.* only to CAP_SYS_ADMIN */
	if (!root)
		n = (ssize_t)xattr_list_drop(stored, (size_t)n, XATTR_NS_TRUSTED);
	return xattr_give(out, size, stored, (size_t)n);
}
