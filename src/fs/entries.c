/* SPDX-License-Identifier: Apache-2.0 */
/*
 * entries.c - making, removing and renaming entries of the forward
 * mount, and changing attributes (mount.h). The directory operations
 * themselves, with their undo, are dirops.c's; here: who may, who owns
 * the result, and the lookup the kernel gets back.
 */
#include "mount_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

/*
 * Our own change of entry @ln in @dir is coming (@n events of its name):
 * they are ours, not news for the kernel (notify.c).
 */
static void own_before(struct xmount *m, struct xnode *dir,
		       const struct lname *ln, int n)
{
	notify_own(m, dir, ln->stored, n);
}

/* After own_before(): @err not 0, nothing happened. Return: @err. */
static int own_after(struct xmount *m, struct xnode *dir,
		     const struct lname *ln, int n, int err)
{
	if (err)
		notify_own(m, dir, ln->stored, -n);
	return err;
}

/*
 * The end of every create: give the new object @ln in @dir (made with
 * @mode) to @who and look it up into *@out; if the lookup fails (out of
 * descriptors or memory), remove the object nobody was told of.
 */
static int made(struct xmount *m, const struct caller *who, struct xnode *dir,
		const struct lname *ln, mode_t mode, struct xnode **out,
		struct stat *st)
{
	int err;

	own_by_caller(who, dir->fd, ln->stored, mode);
	err = xm_lookup_stored(m, dir, ln->stored, 0, out, st);
	if (err)
		dirops_undo_make(dir->fd, ln, S_ISDIR(mode));
	return err;
}

/* see mount.h */
int xm_mkdir(struct xmount *m, const struct caller *who, struct xnode *dir,
	     const char *name, mode_t mode, struct xnode **out, struct stat *st)
{
	struct lname ln;
	int err = name_enc(m, dir, name, &ln);

	if (!err) {
		own_before(m, dir, &ln, 1);
		err = own_after(m, dir, &ln, 1,
				mkdir_in(m, dir, &ln,
					 create_mode(m, who, dir->fd, mode),
					 name));
	}
	if (!err)
		err = made(m, who, dir, &ln, S_IFDIR | mode, out, st);
	if (!err) /* the dirid just written, unless someone swapped it */
		xm_dir_found(m, dir, *out, name);
	return err;
}

/* see mount.h */
int xm_mknod(struct xmount *m, const struct caller *who, struct xnode *dir,
	     const char *name, mode_t mode, dev_t rdev, struct xnode **out,
	     struct stat *st)
{
	struct lname ln;
	int err = name_enc(m, dir, name, &ln);

	if (!err) {
		own_before(m, dir, &ln, 1);
		err = own_after(m, dir, &ln, 1,
				dirops_mknod(&m->dops, dir->fd, &ln,
					     create_mode(m, who, dir->fd, mode),
					     rdev));
	}
	if (!err)
		err = made(m, who, dir, &ln, mode, out, st);
	return err;
}

/* see mount.h */
int xm_symlink(struct xmount *m, const struct caller *who, struct xnode *dir,
	       const char *name, const char *target, struct xnode **out,
	       struct stat *st)
{
	struct lname ln;
	int err = name_enc(m, dir, name, &ln);

	if (!err) {
		own_before(m, dir, &ln, 1);
		err = own_after(m, dir, &ln, 1,
				dirops_symlink(&m->dops, dir->fd, &ln, target));
	}
	if (!err)
		err = made(m, who, dir, &ln, S_IFLNK, out, st);
	return err;
}

/* see mount.h */
int xm_link(struct xmount *m, struct xnode *in, struct xnode *dir,
	    const char *name, struct xnode **out, struct stat *st)
{
	struct lname ln;
	int err = name_enc(m, dir, name, &ln);

	if (!err) {
		own_before(m, dir, &ln, 1);
		err = own_after(m, dir, &ln, 1,
				dirops_link(&m->dops, in->fd, dir->fd, &ln));
	}
	if (!err) {
		err = xm_lookup_stored(m, dir, ln.stored, 0, out, st);
		/*
		 * The new name must be the same lower object (inode number).
		 * Lowers without inode numbers (sshfs: SFTP has none) number
		 * names, not files: two nodes would then cache one file's size
		 * and contents apart, so refuse as a filesystem without hard
		 * links does.
		 */
		if (!err && *out != in) {
			xm_forget(m, *out, 1);
			*out = NULL;
			if (!__atomic_exchange_n(&m->said_nolink, true,
						 __ATOMIC_RELAXED))
				xm_log(m, LOG_WARNING, "the lower filesystem "
				       "gives the new name of a hard link "
				       "another inode number (sshfs does: SFTP "
				       "has none); hard links are refused");
			err = -EPERM;
		}
		if (err)
			dirops_undo_make(dir->fd, &ln, false);
	}
	return err;
}

/* xm_unlink() or, @is_dir, xm_rmdir(). */
static int remove_entry(struct xmount *m, const struct caller *who,
			struct xnode *dir, const char *name, bool is_dir)
{
	struct lname ln;
	int err = name_enc_existing(m, dir, name, &ln);

	/* the kernel checked the sticky bit against what it last saw */
	if (!err)
		err = caller_may_delete(who, dir->fd, ln.stored);
	if (err)
		return err;
	own_before(m, dir, &ln, 1);
	return own_after(m, dir, &ln, 1,
			 is_dir ? dirops_rmdir(&m->dops, dir->fd, &ln) :
			 dirops_unlink(&m->dops, dir->fd, &ln));
}

/* see mount.h */
int xm_unlink(struct xmount *m, const struct caller *who, struct xnode *dir,
	      const char *name)
{
	return remove_entry(m, who, dir, name, false);
}

/* see mount.h */
int xm_rmdir(struct xmount *m, const struct caller *who, struct xnode *dir,
	     const char *name)
{
	return remove_entry(m, who, dir, name, true);
}

/* see mount.h */
int xm_rename(struct xmount *m, const struct caller *who, struct xnode *d1,
	      const char *name1, struct xnode *d2, const char *name2,
	      unsigned flags)
{
	struct lname l1, l2;
	int err;

	/*
	 * RENAME_WHITEOUT (overlayfs on an xtsfs upper layer; the kernel
	 * has checked CAP_MKNOD): the lower rename leaves the whiteout, a
	 * 0/0 character device, under the old stored name, which decrypts
	 * to the old name; so a long old name keeps its sidecar.
	 */
	if (flags & ~(RENAME_NOREPLACE | RENAME_EXCHANGE | RENAME_WHITEOUT))
		return -EINVAL;
	err = name_enc_existing(m, d1, name1, &l1);
	/* a target that exists as a conflict copy is that copy, replaced */
	if (!err)
		err = name_find(m, d2, name2, &l2);
	/*
	 * The kernel checked the sticky bit only for a target it knew of:
	 * one that appeared behind its negative entry would be replaced
	 * unchecked. Both ends, against the objects there now.
	 */
	if (!err)
		err = caller_may_delete(who, d1->fd, l1.stored);
	if (!err && !(flags & RENAME_NOREPLACE))
		err = caller_may_delete(who, d2->fd, l2.stored);
	if (!err) {
		/* an exchange moves each name twice: both ways */
		int k = flags & RENAME_EXCHANGE ? 2 : 1;

		own_before(m, d1, &l1, k);
		own_before(m, d2, &l2, k);
		err = dirops_rename(&m->dops, d1->fd, &l1, d2->fd, &l2, flags);
		(void)own_after(m, d1, &l1, k, err);
		(void)own_after(m, d2, &l2, k, err);
	}
	if (!err && (flags & RENAME_WHITEOUT))
		own_by_caller(who, d1->fd, l1.stored, S_IFCHR); /* as ext4 */
	return err;
}

/* ---- attributes, set ---------------------------------------------------- */

/* A new size for regular file @in, through @h if it is writable. */
static int set_size(struct xmount *m, struct xnode *in, struct xhandle *h,
		    uint64_t size)
{
	int fd, err;

	if (in->type != S_IFREG)
		return -EINVAL;
	if (h && h->writable)
		return file_truncate(m, in, h->fd, size);
	fd = reopen(in, O_RDWR);
	if (fd < 0)
		return fd;
	err = file_truncate(m, in, fd, size);
	close(fd);
	return err;
}

/* utimensat(2) of @in as @valid and @attr say. */
static int set_times(struct xnode *in, const struct stat *attr, int valid)
{
	struct timespec tv[2] = { { 0, UTIME_OMIT }, { 0, UTIME_OMIT } };
	char path[DIROPS_FD_PATH_SIZE];

	if (valid & XM_SET_ATIME_NOW)
		tv[0].tv_nsec = UTIME_NOW;
	else if (valid & XM_SET_ATIME)
		tv[0] = attr->st_atim;
	if (valid & XM_SET_MTIME_NOW)
		tv[1].tv_nsec = UTIME_NOW;
	else if (valid & XM_SET_MTIME)
		tv[1] = attr->st_mtim;
	if (utimensat(in->fd, "", tv, AT_EMPTY_PATH) == 0)
		return 0;
	/* refused on the O_PATH descriptor: through /proc, as the file */
	dirops_fd_path(path, in->fd);
	if (in->type == S_IFLNK || utimensat(AT_FDCWD, path, tv, 0) != 0)
		return -errno;
	return 0;
}

static int do_setattr(struct xmount *m, struct xnode *in,
		      const struct stat *attr, int valid, struct xhandle *h)
{
	char path[DIROPS_FD_PATH_SIZE];
	int err;

	if (valid & XM_SET_MODE) {
		if (in->type == S_IFLNK)
			return -EOPNOTSUPP;
		dirops_fd_path(path, in->fd);
		if (chmod(path, attr->st_mode & 07777) != 0)
			return -errno;
	}
	if (valid & (XM_SET_UID | XM_SET_GID)) {
		uid_t uid = valid & XM_SET_UID ? attr->st_uid : (uid_t)-1;
		gid_t gid = valid & XM_SET_GID ? attr->st_gid : (gid_t)-1;

		if (fchownat(in->fd, "", uid, gid,
			     AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0)
			return -errno;
	}
	if (valid & XM_SET_SIZE) {
		err = set_size(m, in, h, (uint64_t)attr->st_size);
		if (err)
			return err;
	}
	if (valid & (XM_SET_ATIME | XM_SET_MTIME))
		return set_times(in, attr, valid);
	return 0;
}

/* see mount.h */
int xm_setattr(struct xmount *m, const struct caller *who, struct xnode *in,
	       const struct stat *attr, int valid, struct xhandle *h,
	       struct stat *st)
{
	struct stat before;
	bool kill = in->type == S_IFREG && who->uid != 0 &&
		    (valid & (XM_SET_SIZE | XM_SET_UID | XM_SET_GID)) &&
		    fstatat(in->fd, "", &before, AT_EMPTY_PATH) == 0;
	/*
	 * Under the content lock, so that the change notifier (notify.c),
	 * which compares under it, never sees this change half recorded
	 * and takes it for one made beside us (a size change takes the
	 * lock itself, in file_truncate()).
	 */
	bool lock = !(valid & XM_SET_SIZE);
	bool known;
	int err;

	if (lock)
		pthread_rwlock_wrlock(&in->lock);
	/*
	 * A change of ours: if the lower file was as last seen, record it
	 * as it is after, so that the next open keeps the kernel's pages
	 * (rsync sets times after writing every file); if it was not,
	 * someone changed it behind our back first: the next open must not.
	 */
	known = in->type == S_IFREG && seen_check(in, in->fd, true, 0);
	err = do_setattr(m, in, attr, valid, h);
	if (known)
		(void)seen_check(in, in->fd, false, 0);
	else if (in->type == S_IFREG)
		seen_forget(in);
	/* others: what the reply will tell the kernel, told already */
	if (in->type != S_IFREG && !err &&
	    fstatat(in->fd, "", st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) == 0)
		xm_told(in, st);
	if (lock)
		pthread_rwlock_unlock(&in->lock);
	/* by the group the file had before a chown (kill_priv) */
	if (!err && kill && fstatat(in->fd, "", st, AT_EMPTY_PATH) == 0)
		(void)kill_priv(who, in, st->st_mode, before.st_gid);
	if (!err)
		err = xm_getattr(m, in, st);
	return err;
}
