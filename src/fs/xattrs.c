/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xattrs.c - extended attributes of the forward mount (mount.h): user.*
 * and trusted.* encrypted by the codec of xattr.h (FORMAT 6) and kept on
 * the lower object under the same namespace, so the lower filesystem's
 * own rules and limits apply as they are (user.* only on regular files
 * and directories, trusted.* only for CAP_SYS_ADMIN, its space); POSIX
 * ACLs (system.posix_acl_access, system.posix_acl_default) kept on the
 * lower object as they are, where the lower filesystem keeps them
 * consistent with chmod and inherits default ACLs, as the kernel enforces
 * them on the mount; security.* and every other name refused
 * (EOPNOTSUPP), doc/DESIGN.md says why.
 *
 * The lower object is reached through /proc/self/fd/N of its O_PATH
 * descriptor, with the calls that follow the last link: that link is the
 * descriptor itself, so a symlink's own attributes are meant, not its
 * target's (the *l*xattr calls would act on the /proc link).
 */
#include "mount_int.h"

#include "log.h"
#include "scratch.h"
#include "xattr.h"

#include <errno.h>
#include <string.h>
#include <sys/xattr.h>
#include <syslog.h>

/* the two ACL names, passed through */
#define ACL_ACCESS "system.posix_acl_access"
#define ACL_DEFAULT "system.posix_acl_default"

static bool is_acl(const char *name)
{
	return !strcmp(name, ACL_ACCESS) || !strcmp(name, ACL_DEFAULT);
}

/*
 * What becomes of plaintext @name: its lower name in @lower (encrypted
 * or, for an ACL, the same). Return: 0, or -errno as setxattr(2) would
 * give it for a name it cannot take.
 */
static int lower_name(const struct xmount *m, const char *name,
		      char lower[XTSFS_XATTR_NAME_BUF], bool *encrypted)
{
	enum xattr_ns ns = xattr_namespace(name);

	*encrypted = xattr_ns_encrypted(ns);
	if (*encrypted)
		return xattr_name_enc(m->xattr_names, name, lower);
	if (ns == XATTR_NS_SYSTEM && is_acl(name) && m->acl) {
		snprintf(lower, XTSFS_XATTR_NAME_BUF, "%s", name);
		return 0;
	}
	return -EOPNOTSUPP;
}

/*
 * lower_name()'s @err for getxattr and removexattr of @name: a name too
 * long to be stored, but within Linux's 255 bytes, is simply not there
 * (ENODATA, as ext4 says of any name it has not got); a bare prefix is
 * EINVAL as on ext4, and what Linux itself refuses stays refused.
 */
static int absent_name(int err, const char *name)
{
	if (err == -ERANGE && strlen(name) <= XTSFS_XATTR_KERNEL_NAME_MAX)
		return -ENODATA;
	return err;
}

/*
 * Whether one more stored name @lower fits in @path's list: the lower
 * listxattr(2) gives at most XATTR_LIST_MAX bytes, and stored names are
 * longer than plaintext ones, so a lower filesystem that takes more
 * (XFS) would make an object whose xattrs nobody could list any more.
 */
static int list_has_room(const char *path, const char *lower)
{
	ssize_t have = listxattr(path, NULL, 0);

	if (have < 0)
		return errno == ENOTSUP ? -ENOTSUP : 0;
	if ((size_t)have + strlen(lower) + 1 <= XTSFS_XATTR_KERNEL_LIST_MAX)
		return 0;
	/* already there: a replacement takes no room */
	return getxattr(path, lower, NULL, 0) >= 0 ? 0 : -ENOSPC;
}

/* see mount.h */
ssize_t xm_getxattr(struct xmount *m, struct xnode *in, const char *name,
		    void *out, size_t size)
{
	char lower[XTSFS_XATTR_NAME_BUF], path[DIROPS_FD_PATH_SIZE];
	uint8_t *buf;
	bool enc;
	ssize_t n;
	int err = absent_name(lower_name(m, name, lower, &enc), name);

	if (err)
		return err;
	dirops_fd_path(path, in->fd);
	if (!enc) {
		n = getxattr(path, lower, out, size);
		return n < 0 ? -errno : n;
	}
	buf = scratch_get(SCRATCH_XATTR, XTSFS_XATTR_KERNEL_SIZE_MAX);
	if (!buf)
		return -ENOMEM;
	n = getxattr(path, lower, buf, XTSFS_XATTR_KERNEL_SIZE_MAX);
	if (n < 0)
		return -errno;
	n = xattr_value_dec(m->xattr_names, lower, buf, (size_t)n, out, size);
	if (n == -EIO)
		xm_log(m, LOG_ERR, "object (lower inode %llu): extended "
		       "attribute value damaged or moved",
		       (unsigned long long)in->node.k2);
	return n;
}

/* see mount.h */
int xm_setxattr(struct xmount *m, struct xnode *in, const char *name,
		const void *val, size_t size, int flags)
{
	char lower[XTSFS_XATTR_NAME_BUF], path[DIROPS_FD_PATH_SIZE];
	uint8_t *buf;
	bool enc;
	ssize_t n;
	int err = lower_name(m, name, lower, &enc);

	if (err)
		return err;
	dirops_fd_path(path, in->fd);
	if (!enc)
		return setxattr(path, lower, val, size, flags) ? -errno : 0;
	err = list_has_room(path, lower);
	if (err)
		return err;
	buf = scratch_get(SCRATCH_XATTR, size + XTSFS_XATTR_VALUE_OVERHEAD);
	if (!buf)
		return -ENOMEM;
	n = xattr_value_enc(m->xattr_names, lower, val, size, buf,
			    size + XTSFS_XATTR_VALUE_OVERHEAD);
	if (n < 0)
		return (int)n;
	return setxattr(path, lower, buf, (size_t)n, flags) ? -errno : 0;
}

/* see mount.h */
int xm_removexattr(struct xmount *m, struct xnode *in, const char *name)
{
	char lower[XTSFS_XATTR_NAME_BUF], path[DIROPS_FD_PATH_SIZE];
	bool enc;
	int err = absent_name(lower_name(m, name, lower, &enc), name);

	if (err)
		return err;
	dirops_fd_path(path, in->fd);
	return removexattr(path, lower) ? -errno : 0;
}

/* see mount.h */
ssize_t xm_listxattr(struct xmount *m, const struct caller *who,
		     struct xnode *in, char *out, size_t size)
{
	struct xattr_list_stats st = { 0 };
	char path[DIROPS_FD_PATH_SIZE];
	char *buf, *plain;
	ssize_t n;

	dirops_fd_path(path, in->fd);
	buf = (char *)scratch_get(SCRATCH_XATTR,
				  2 * XTSFS_XATTR_KERNEL_LIST_MAX);
	if (!buf)
		return -ENOMEM;
	plain = buf + XTSFS_XATTR_KERNEL_LIST_MAX;
	n = listxattr(path, buf, XTSFS_XATTR_KERNEL_LIST_MAX);
	if (n < 0)
		return -errno;
	/* never longer than the lower list (xattr.h) */
	n = xattr_list_dec(m->xattr_names, buf, (size_t)n, plain,
			   XTSFS_XATTR_KERNEL_LIST_MAX,
			   m->acl ? XATTR_NS_BIT(XATTR_NS_SYSTEM) : 0, &st);
	if (st.corrupt)
		xm_log(m, LOG_WARNING, "object (lower inode %llu): %zu "
		       "extended attribute names cannot be decrypted; not "
		       "shown", (unsigned long long)in->node.k2, st.corrupt);
	if (n < 0)
		return n;
	/* Linux lists trusted.* only to CAP_SYS_ADMIN (ext4's xattr_trusted.c) */
	if (who->uid != 0)
		n = (ssize_t)xattr_list_drop(plain, (size_t)n, XATTR_NS_TRUSTED);
	return xattr_give(out, size, plain, (size_t)n);
}
