/* SPDX-License-Identifier: Apache-2.0 */
/*
 * caller.c - the permission rules the daemon applies itself for the
 * caller of a request, and the ownership of what it makes (mount.h).
 */
#include "mount_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

/*
 * Permission checks the daemon makes itself. The kernel checks the
 * objects it knows (default_permissions), but its view can be stale: a
 * negative entry cached for entry_timeout hides a name that appeared in
 * the cipher directory since (another mount, a sync client), and a
 * cached positive entry may name a lower object that was replaced. Where
 * the daemon acts on a lower object the kernel may not have checked, it
 * applies the same rules for the caller (generic_permission without
 * ACLs: the mount has none; a root caller passes as CAP_DAC_OVERRIDE and
 * CAP_FOWNER would let it).
 */

/* see mount_int.h */
bool caller_in_group(const struct caller *who, gid_t gid)
{
	gid_t small[64], *list = small;
	int n, i;
	bool in = false;

	if (who->gid == gid)
		return true;
	if (!who->getgroups)
		return false;
	n = who->getgroups(who->arg, 64, small);
	if (n > 64) {
		list = malloc((size_t)n * sizeof(*list));
		if (!list)
			return false;
		n = who->getgroups(who->arg, n, list);
	}
	for (i = 0; i < n && !in; i++)
		in = list[i] == gid;
	if (list != small)
		free(list);
	return in;
}

/* see mount_int.h */
bool caller_may_open(const struct caller *who, const struct stat *st,
		     int flags)
{
	int acc = flags & O_ACCMODE;
	mode_t want = 0, bits;

	if (acc != O_WRONLY)
		want |= 4;
	if (acc != O_RDONLY || (flags & O_TRUNC))
		want |= 2;
	if (who->uid == 0)
		return true;
	if (who->uid == st->st_uid)
		bits = (st->st_mode >> 6) & 7;
	else if (caller_in_group(who, st->st_gid))
		bits = (st->st_mode >> 3) & 7;
	else
		bits = st->st_mode & 7;
	return (bits & want) == want;
}

/* see mount_int.h; the kernel's check_sticky */
int caller_may_delete(const struct caller *who, int dirfd, const char *stored)
{
	struct stat d, st;

	if (who->uid == 0)
		return 0; /* CAP_FOWNER; and no syscall on a root's mount */
	if (fstatat(dirfd, "", &d, AT_EMPTY_PATH) != 0 || !(d.st_mode & S_ISVTX))
		return 0;
	if (fstatat(dirfd, stored, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return 0;
	return st.st_uid == who->uid || d.st_uid == who->uid ? 0 : -EPERM;
}

/*
 * Give a new lower object, made with @mode, to the caller, as the kernel
 * would have. The chown clears set-user-ID and set-group-ID bits of
 * what is not a directory (chown_common kills them even for root), but
 * the caller asked for them at creation, where ext4 keeps them (the VFS
 * has already dropped a set-group-ID bit the caller may not set): put
 * them back.
 */
void own_by_caller(const struct caller *who, int dirfd, const char *stored,
		   mode_t mode)
{
	struct stat dir;
	gid_t gid = who->gid;

	if (geteuid() != 0 || (who->uid == 0 && who->gid == 0))
		return;
	/* in a setgid directory the new object keeps the inherited group */
	if (fstatat(dirfd, "", &dir, AT_EMPTY_PATH) == 0 &&
	    (dir.st_mode & S_ISGID))
		gid = (gid_t)-1;
	if (fchownat(dirfd, stored, who->uid, gid, AT_SYMLINK_NOFOLLOW) != 0)
		return;
	/* onto the mode it has (an inherited ACL may have shaped it) */
	if ((mode & (S_ISUID | S_ISGID)) && !S_ISDIR(mode) && !S_ISLNK(mode) &&
	    fstatat(dirfd, stored, &dir, AT_SYMLINK_NOFOLLOW) == 0)
		(void)fchmodat(dirfd, stored, (dir.st_mode & 07777) |
			       (mode & (S_ISUID | S_ISGID)), 0);
}

/* see mount_int.h */
mode_t create_mode(const struct xmount *m, const struct caller *who,
		   int dirfd, mode_t mode)
{
	char path[DIROPS_FD_PATH_SIZE];

	if (!m->acl || !(mode & who->umask))
		return mode;
	dirops_fd_path(path, dirfd);
	if (getxattr(path, "system.posix_acl_default", NULL, 0) > 0)
		return mode;
	return mode & ~who->umask;
}

/*
 * After a write, truncate or chown by @who of regular file @in, whose mode was @mode and group @gid before it: clear the
 * set-user-ID and set-group-ID bits as the VFS does on ext4
 * (should_remove_suid, setattr_should_drop_sgid). A caller other than
 * root loses S_ISUID, and S_ISGID if the file is group-executable or the
 * caller is not in its group. The kernel clears them itself before such
 * requests, but by the older rule (S_ISGID only when group-executable),
 * and for open(O_TRUNC) not at all: the daemon truncates there
 * (atomic_o_trunc) and the kernel's mode change is dropped with the
 * truncation it skips.
 */
bool kill_priv(const struct caller *who, const struct xnode *in, mode_t mode,
	       gid_t gid)
{
	mode_t kill = 0;
	char path[DIROPS_FD_PATH_SIZE];

	if (who->uid == 0 || !S_ISREG(mode) ||
	    !(mode & (S_ISUID | S_ISGID)))
		return false;
	if (mode & S_ISUID)
		kill |= S_ISUID;
	if ((mode & S_ISGID) && ((mode & S_IXGRP) || !caller_in_group(who, gid)))
		kill |= S_ISGID;
	if (!kill)
		return false;
	dirops_fd_path(path, in->fd);
	return chmod(path, mode & 07777 & ~kill) == 0;
}

/* see mount_int.h */
void kill_priv_fd(const struct caller *who, const struct xnode *in, int fd)
{
	struct stat st;

	if (who->uid != 0 && fstat(fd, &st) == 0)
		(void)kill_priv(who, in, st.st_mode, st.st_gid);
}

