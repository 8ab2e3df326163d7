/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dirops.c - directory operations on lower descriptors (dirops.h).
 */
#include "dirops.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "content.h"

/* see dirops.h */
int dirops_read_small(int dirfd, const char *name, void *buf, size_t max,
		      size_t *len)
{
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW |
			O_NONBLOCK | O_NOCTTY);
	struct stat st;
	ssize_t n = 0;
	size_t got = 0;

	*len = 0;
	if (fd < 0)
		return errno == ELOOP || errno == ENXIO || errno == ENODEV ||
		       errno == EOPNOTSUPP ? -EIO : -errno;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 0 ||
	    (uint64_t)st.st_size > max) {
		close(fd);
		return -EIO;
	}
	/*
	 * These files are small: one read gets it all, and a read of a
	 * regular file that returns less than asked is at the end (no
	 * second read to see 0).
	 */
	while (got < max) {
		size_t want = max - got;

		n = read(fd, (char *)buf + got, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
		if ((size_t)n < want)
			break; /* short: the end */
	}
	n = n < 0 ? -errno : 0;
	close(fd);
	*len = got;
	return (int)n;
}

/* see dirops.h */
void dirops_fd_path(char buf[DIROPS_FD_PATH_SIZE], int fd)
{
	snprintf(buf, DIROPS_FD_PATH_SIZE, "/proc/self/fd/%d", fd);
}

/* see dirops.h */
int dirops_opendir(int fd, DIR **out)
{
	int dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (dfd < 0)
		return -errno;
	*out = fdopendir(dfd);
	if (!*out) {
		close(dfd);
		return -ENOMEM;
	}
	return 0;
}

/* see dirops.h */
int dirops_read_dirid(int dirfd, uint8_t out[NAMES_DIRID_SIZE])
{
	uint8_t buf[NAMES_DIRID_SIZE + 1];
	size_t len = 0;
	int err = dirops_read_small(dirfd, NAMES_DIRID_FILE, buf, sizeof(buf),
				    &len);

	if (err || len != NAMES_DIRID_SIZE) {
		explicit_bzero(buf, sizeof(buf));
		return -EIO;
	}
	memcpy(out, buf, NAMES_DIRID_SIZE);
	explicit_bzero(buf, sizeof(buf));
	return 0;
}

/*
 * Write @len bytes to a new file @name in @dirfd (mode 0444): a dirid or
 * a sidecar, which names depend on. Not fsynced here: noted, so that the
 * next fsync through the mount, the background sync a moment later or
 * the unmount makes it durable (durable.h).
 */
static int write_new_at(const struct dirops *d, int dirfd, const char *name,
			const void *buf, size_t len)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC |
			O_NOFOLLOW, 0444);
	ssize_t n;
	int err = 0;

	if (fd < 0)
		return -errno;
	n = write(fd, buf, len);
	if (n != (ssize_t)len)
		err = n < 0 ? -errno : -EIO;
	close(fd);
	if (err)
		unlinkat(dirfd, name, 0);
	else if (d->durable)
		durable_note(d->durable);
	return err;
}

static int new_dirid(const struct dirops *d, int dirfd)
{
	uint8_t id[NAMES_DIRID_SIZE];

	if (getrandom(id, sizeof(id), 0) != sizeof(id))
		return -EIO;
	return write_new_at(d, dirfd, NAMES_DIRID_FILE, id, sizeof(id));
}

/* Names a plaintext-names volume keeps for itself (FORMAT 4.5). */
static bool reserved_plain(bool root, const char *name)
{
	return root && (!strcmp(name, "xtsfs.volume") ||
			!strcmp(name, "xtsfs.volume.tmp"));
}

/* see dirops.h */
int dirops_name_enc(const struct dirops *d, const struct dirid_src *id,
		    bool root, const char *name, struct lname *ln)
{
	uint8_t dirid[NAMES_DIRID_SIZE];
	size_t len = strlen(name);
	int err;

	if (len > NAMES_NAME_MAX)
		return -ENAMETOOLONG;
	if (!d->names) {
		if (reserved_plain(root, name))
			return -EPERM;
		memcpy(ln->stored, name, len + 1);
		ln->is_long = false;
		return 0;
	}
	err = id->get(id->arg, dirid);
	if (err)
		return err;
	return names_encrypt(d->names, dirid, name, len, ln->stored, ln->full,
			     &ln->is_long);
}

/* see dirops.h */
int dirops_name_dec(const struct dirops *d, int dirfd,
		    const struct dirid_src *id, bool root, const char *lower,
		    char out[256])
{
	uint8_t dirid[NAMES_DIRID_SIZE];
	char full[NAMES_FULL_MAX];
	size_t len, outlen;
	int err;

	if (!d->names) {
		if (reserved_plain(root, lower))
			return 1;
		snprintf(out, 256, "%s", lower);
		return 0;
	}
	if (names_is_long(lower)) {
		char side[NAMES_STORED_MAX + 1];

		names_long_sidecar(side, lower);
		err = dirops_read_small(dirfd, side, full, sizeof(full) - 1,
					&len);
		if (err)
			return -EBADMSG; /* this entry only */
		err = id->get(id->arg, dirid);
		if (err)
			return err;
		/* the sidecar must be this entry's, not a copy of another's */
		return names_decrypt_long(d->names, dirid, lower, full, len,
					  out, &outlen);
	}
	if (names_is_internal(lower))
		return 1;
	err = id->get(id->arg, dirid);
	if (err)
		return err;
	return names_decrypt(d->names, dirid, lower, strlen(lower), out,
			     &outlen);
}

/* see dirops.h */
int dirops_readlink(const struct dirops *d, int fd, char out[4096])
{
	char *buf = malloc(NAMES_TARGET_MAX);
	ssize_t n;
	size_t len;
	int err = 0;

	if (!buf)
		return -ENOMEM;
	n = readlinkat(fd, "", buf, NAMES_TARGET_MAX - 1);
	if (n < 0) {
		err = -errno;
		goto out;
	}
	buf[n] = '\0';
	if (!d->names) {
		if (n > 4095)
			err = -ENAMETOOLONG;
		else
			memcpy(out, buf, (size_t)n + 1);
		goto out;
	}
	if (names_is_link_ref(buf)) {
		char ref[NAMES_STORED_MAX + 1];

		snprintf(ref, sizeof(ref), "%s", buf);
		err = dirops_read_small(d->root_fd, ref, buf,
					NAMES_TARGET_MAX - 1, &len);
		/* the file must be this target's, not a copy of another's */
		if (!err)
			err = names_decrypt_target_ref(d->names, ref, buf, len,
						       out, &len);
	} else {
		err = names_decrypt_target(d->names, buf, (size_t)n, out,
					   &len);
	}
	if (err)
		err = -EIO;
out:
	free(buf);
	return err;
}

/*
 * The sidecar of @ln, made if it is long and not there: *@made says
 * whether this call made it (and an undo may drop it).
 */
static int sidecar_new(const struct dirops *d, int dirfd,
		       const struct lname *ln, bool *made)
{
	char side[NAMES_STORED_MAX + 1];
	int err;

	*made = false;
	if (!ln->is_long)
		return 0;
	names_long_sidecar(side, ln->stored);
	err = write_new_at(d, dirfd, side, ln->full, strlen(ln->full));
	*made = !err;
	return err == -EEXIST ? 0 : err;
}

/* see dirops.h */
int dirops_sidecar_make(const struct dirops *d, int dirfd,
			const struct lname *ln)
{
	bool made;

	return sidecar_new(d, dirfd, ln, &made);
}

/* see dirops.h */
void dirops_sidecar_drop(int dirfd, const struct lname *ln)
{
	char side[NAMES_STORED_MAX + 1];

	if (!ln->is_long)
		return;
	names_long_sidecar(side, ln->stored);
	(void)unlinkat(dirfd, side, 0);
}

/*
 * A create of @ln failed with @err after its sidecar was made: drop the
 * sidecar unless an existing entry of that name (-EEXIST) uses it.
 */
static int made_nothing(int dirfd, const struct lname *ln, int err)
{
	if (err != -EEXIST)
		dirops_sidecar_drop(dirfd, ln);
	return err;
}

/* see dirops.h */
void dirops_undo_make(int dirfd, const struct lname *ln, bool isdir)
{
	char p[NAME_MAX + sizeof("/" NAMES_DIRID_FILE) + 1];

	/* by path: no descriptor may be left (out of descriptors) */
	if (isdir) {
		snprintf(p, sizeof(p), "%s/%s", ln->stored, NAMES_DIRID_FILE);
		(void)unlinkat(dirfd, p, 0);
	}
	(void)unlinkat(dirfd, ln->stored, isdir ? AT_REMOVEDIR : 0);
	dirops_sidecar_drop(dirfd, ln);
}

/* see dirops.h */
int dirops_mkdir(const struct dirops *d, int dirfd, const struct lname *ln,
		 mode_t mode)
{
	int err = dirops_sidecar_make(d, dirfd, ln), fd;

	if (err)
		return err;
	if (mkdirat(dirfd, ln->stored, mode) != 0)
		return made_nothing(dirfd, ln, -errno);
	if (!d->names)
		return 0;
	fd = openat(dirfd, ln->stored, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC);
	err = fd < 0 ? -errno : new_dirid(d, fd);
	if (fd >= 0)
		close(fd);
	if (err) {
		(void)unlinkat(dirfd, ln->stored, AT_REMOVEDIR);
		dirops_sidecar_drop(dirfd, ln);
	}
	return err;
}

/* see dirops.h */
int dirops_mknod(const struct dirops *d, int dirfd, const struct lname *ln,
		 mode_t mode, dev_t rdev)
{
	int err = dirops_sidecar_make(d, dirfd, ln), fd;

	if (err)
		return err;
	if (!S_ISREG(mode)) {
		if (mknodat(dirfd, ln->stored, mode, rdev) != 0)
			return made_nothing(dirfd, ln, -errno);
		return 0;
	}
	/* a regular file gets its header at once (FORMAT 3.4) */
	fd = openat(dirfd, ln->stored, O_WRONLY | O_CREAT | O_EXCL |
		    O_CLOEXEC | O_NOFOLLOW, mode & 07777);
	if (fd < 0)
		return made_nothing(dirfd, ln, -errno);
	{
		struct content_hdr h;

		err = content_init_header(fd, &h);
	}
	close(fd);
	if (err) {
		(void)unlinkat(dirfd, ln->stored, 0);
		dirops_sidecar_drop(dirfd, ln);
	}
	return err;
}

/* Write a long symlink target's file into the root (FORMAT 4.4). */
static int link_file_make(const struct dirops *d, const char *stored,
			  const char *full)
{
	int err = write_new_at(d, d->root_fd, stored, full, strlen(full));

	return err == -EEXIST ? 0 : err; /* shared by equal targets */
}

/* see dirops.h */
int dirops_symlink(const struct dirops *d, int dirfd, const struct lname *ln,
		   const char *target)
{
	char *stored_t = NULL, *full_t = NULL;
	const char *lower_target = target;
	bool tlong = false;
	int err = 0;

	if (d->names) {
		stored_t = malloc(NAMES_TARGET_MAX);
		full_t = malloc(NAMES_TARGET_MAX);
		if (!stored_t || !full_t) {
			err = -ENOMEM;
			goto out;
		}
		err = names_encrypt_target(d->names, target, strlen(target),
					   stored_t, full_t, &tlong);
		if (err == -EINVAL)
			err = -ENAMETOOLONG;
		if (!err && tlong)
			err = link_file_make(d, stored_t, full_t);
		if (err)
			goto out;
		lower_target = stored_t;
	}
	err = dirops_sidecar_make(d, dirfd, ln);
	if (!err && symlinkat(lower_target, dirfd, ln->stored) != 0)
		err = made_nothing(dirfd, ln, -errno);
out:
	free(stored_t);
	free(full_t);
	return err;
}

/* see dirops.h */
int dirops_link(const struct dirops *d, int fd, int dirfd,
		const struct lname *ln)
{
	char path[DIROPS_FD_PATH_SIZE];
	int err = dirops_sidecar_make(d, dirfd, ln);

	if (err)
		return err;
	/* /proc/self/fd needs no CAP_DAC_READ_SEARCH, AT_EMPTY_PATH does */
	dirops_fd_path(path, fd);
	if (linkat(AT_FDCWD, path, dirfd, ln->stored, AT_SYMLINK_FOLLOW) != 0 &&
	    linkat(fd, "", dirfd, ln->stored, AT_EMPTY_PATH) != 0)
		return made_nothing(dirfd, ln, -errno);
	return 0;
}

/* see dirops.h */
int dirops_unlink(const struct dirops *d, int dirfd, const struct lname *ln)
{
	(void)d;
	if (unlinkat(dirfd, ln->stored, 0) != 0)
		return -errno;
	dirops_sidecar_drop(dirfd, ln);
	return 0;
}

/*
 * Remove the xtsfs.dirid of lower directory @fd before it is removed or
 * replaced, without touching its times: a program holding the directory
 * open sees the mtime it had, as on any other filesystem.
 */
static int unlink_dirid(int fd)
{
	struct stat st;
	bool have = fstat(fd, &st) == 0;

	if (unlinkat(fd, NAMES_DIRID_FILE, 0) != 0 && errno != ENOENT)
		return -errno;
	if (have) {
		struct timespec tv[2] = { st.st_atim, st.st_mtim };

		(void)futimens(fd, tv);
	}
	return 0;
}

/* Is lower directory @fd empty but for our own files? 1, 0 or -errno. */
static int dir_only_internal(int fd)
{
	DIR *dp;
	struct dirent *de;
	int ret = dirops_opendir(fd, &dp);

	if (ret)
		return ret;
	ret = 1;
	while ((de = readdir(dp))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (strcmp(de->d_name, NAMES_DIRID_FILE)) {
			ret = 0;
			break;
		}
	}
	closedir(dp);
	return ret;
}

/*
 * A directory @fd that is about to be removed or replaced: empty but for
 * its dirid, which is kept in @id (*@idlen bytes) to be put back and then
 * removed. Return: 0, -ENOTEMPTY or -errno.
 */
static int dirid_take(int fd, uint8_t id[NAMES_DIRID_SIZE + 1], size_t *idlen)
{
	int err = dir_only_internal(fd);

	*idlen = 0;
	if (err == 0)
		return -ENOTEMPTY;
	if (err < 0)
		return err;
	(void)dirops_read_small(fd, NAMES_DIRID_FILE, id, NAMES_DIRID_SIZE + 1,
				idlen);
	return unlink_dirid(fd);
}

/* Put back what dirid_take() took from @fd. */
static void dirid_restore(const struct dirops *d, int fd,
			  const uint8_t id[NAMES_DIRID_SIZE + 1], size_t idlen)
{
	if (idlen == NAMES_DIRID_SIZE)
		(void)write_new_at(d, fd, NAMES_DIRID_FILE, id, idlen);
}

/* see dirops.h */
int dirops_rmdir(const struct dirops *d, int dirfd, const struct lname *ln)
{
	uint8_t id[NAMES_DIRID_SIZE + 1];
	size_t idlen;
	int err, fd;

	if (!d->names)
		return unlinkat(dirfd, ln->stored, AT_REMOVEDIR) ? -errno : 0;
	fd = openat(dirfd, ln->stored, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = dirid_take(fd, id, &idlen);
	if (!err && unlinkat(dirfd, ln->stored, AT_REMOVEDIR) != 0) {
		err = -errno;
		dirid_restore(d, fd, id, idlen);
	}
	if (!err)
		dirops_sidecar_drop(dirfd, ln);
	close(fd);
	explicit_bzero(id, sizeof(id));
	return err;
}

/*
 * renameat2(); a directory over an empty directory: the lower target
 * still holds its xtsfs.dirid, so drop that first (as rmdir does) and
 * put it back if the rename fails.
 */
static int rename_lower(const struct dirops *d, int d1fd, const char *s1,
			int d2fd, const char *s2, unsigned int flags)
{
	uint8_t id[NAMES_DIRID_SIZE + 1];
	struct stat a, b;
	size_t idlen = 0;
	int tfd, err;

	if (renameat2(d1fd, s1, d2fd, s2, flags) == 0)
		return 0;
	err = -errno;
	if (err != -ENOTEMPTY && err != -EEXIST)
		return err;
	if (!d->names || (flags & (RENAME_EXCHANGE | RENAME_NOREPLACE)) ||
	    fstatat(d1fd, s1, &a, AT_SYMLINK_NOFOLLOW) != 0 ||
	    fstatat(d2fd, s2, &b, AT_SYMLINK_NOFOLLOW) != 0 ||
	    !S_ISDIR(a.st_mode) || !S_ISDIR(b.st_mode))
		return err;
	tfd = openat(d2fd, s2, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (tfd < 0)
		return err;
	err = dirid_take(tfd, id, &idlen);
	if (!err && renameat2(d1fd, s1, d2fd, s2, flags) != 0) {
		err = -errno;
		dirid_restore(d, tfd, id, idlen);
	}
	close(tfd);
	explicit_bzero(id, sizeof(id));
	return err;
}

/* see dirops.h */
int dirops_rename(const struct dirops *d, int d1fd, const struct lname *l1,
		  int d2fd, const struct lname *l2, unsigned int flags)
{
	bool made1 = false, made2;
	int err = sidecar_new(d, d2fd, l2, &made2);

	if (!err && (flags & RENAME_EXCHANGE))
		err = sidecar_new(d, d1fd, l1, &made1);
	if (!err)
		err = rename_lower(d, d1fd, l1->stored, d2fd, l2->stored, flags);
	if (err) {
		/* only what this call made: an existing entry uses the rest */
		if (made2)
			dirops_sidecar_drop(d2fd, l2);
		if (made1)
			dirops_sidecar_drop(d1fd, l1);
		return err;
	}
	/*
	 * Names stay with their slots; only a moved-away long name drops
	 * its sidecar. A whiteout keeps the old name, so its sidecar too.
	 */
	if (!(flags & (RENAME_EXCHANGE | RENAME_WHITEOUT)) &&
	    !(d1fd == d2fd && !strcmp(l1->stored, l2->stored)))
		dirops_sidecar_drop(d1fd, l1);
	return 0;
}
