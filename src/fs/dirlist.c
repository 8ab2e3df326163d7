/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dirlist.c - listings of the forward mount (mount.h): the lower
 * directory read with getdents64 straight into our buffer (a DIR stream
 * costs two more syscalls at every opendir, and one more getdents at the
 * end), every name decrypted on the way.
 */
#include "mount_int.h"

#include "scratch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

/* struct xdir - one open directory. */
struct xdir {
	int fd;                    /* the lower directory, O_RDONLY */
	off_t offset;              /* position the next entry is at */
	bool eof;                  /* getdents said the end, at offset */
	size_t pos, len;           /* unread entries: buf[pos..len) */
	struct dirent64 *entry;    /* an entry read but not yet taken */
	char buf[32768];           /* what getdents64 returned */
};

/*
 * Whether lower directory @fd is unchanged since the previous call (same
 * mtime and size), and remember it. Timestamps are coarse: an entry
 * added in the same tick as the last change leaves the mtime as it was,
 * so a state whose mtime is less than 2 s old is not remembered (the
 * next call says "changed"), as git does with its index.
 */
static bool dir_unchanged(struct xnode *in, int fd)
{
	return seen_check(in, fd, true, 2);
}

/* @d's stream state for lower position @offset, nothing read yet. */
static void xdir_reset(struct xdir *d, off_t offset)
{
	d->offset = offset;
	d->eof = false;
	d->pos = d->len = 0;
	d->entry = NULL;
}

/* see mount.h */
int xm_opendir(struct xmount *m, struct xnode *in, struct xdir **out,
	       bool *keep_cache)
{
	/* not calloc: the 32 KiB buffer needs no zeroing */
	struct xdir *d = malloc(sizeof(*d));
	int fd;

	(void)m;
	if (!d)
		return -ENOMEM;
	fd = openat(in->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		int err = -errno;

		free(d);
		return err;
	}
	d->fd = fd;
	xdir_reset(d, 0);
	*out = d;
	*keep_cache = dir_unchanged(in, fd);
	if (dir_take_stale(in))
		*keep_cache = false;
	return 0;
}

/*
 * The next lower entry of @d, or NULL at the end (*@err 0) or on an error
 * (*@err -errno).
 */
static struct dirent64 *xdir_next(struct xdir *d, int *err)
{
	struct dirent64 *de;

	*err = 0;
	if (d->pos >= d->len) {
		ssize_t n;

		if (d->eof)
			return NULL;
		n = getdents64(d->fd, d->buf, sizeof(d->buf));
		if (n <= 0) {
			/* the end stays the end until the kernel seeks */
			if (n < 0)
				*err = -errno;
			else
				d->eof = true;
			return NULL;
		}
		d->pos = 0;
		d->len = (size_t)n;
	}
	de = (struct dirent64 *)(void *)(d->buf + d->pos);
	d->pos += de->d_reclen;
	return de;
}

/* see mount.h */
int xm_dir_seek(struct xdir *d, off_t offset)
{
	if (offset == d->offset)
		return 0;
	xdir_reset(d, offset);
	return lseek(d->fd, offset, SEEK_SET) < 0 ? -errno : 0;
}

/* see mount.h */
int xm_dir_peek(struct xmount *m, struct xnode *dir, struct xdir *d,
		struct xm_dirent *e)
{
	for (;;) {
		const char *lower;
		int err, rc;

		if (!d->entry && !(d->entry = xdir_next(d, &err)))
			return err;
		lower = d->entry->d_name;
		if (names_is_dot(lower)) {
			snprintf(e->name, sizeof(e->name), "%s", lower);
			rc = 0;
		} else {
			rc = name_dec(m, dir, lower, e->name);
		}
		if (rc == -EIO)
			return rc; /* no dirid: no name here can be decrypted */
		if (!rc)
			break;
		/* an offline tool reports them itself; a mount logs them */
		if (rc < 0 && m->skipped)
			m->skipped(m->skipped_arg, dir, lower);
		else if (rc == -EILSEQ)
			report_bad(m, dir->node.k2, lower, "is a stored name "
				   "with an unknown conflict suffix; skipped");
		else if (rc < 0)
			report_bad(m, dir->node.k2, lower,
				   "cannot be decrypted; skipped");
		d->offset = d->entry->d_off;
		d->entry = NULL;
	}
	e->stored = d->entry->d_name;
	e->ino = d->entry->d_ino;
	e->type = d->entry->d_type;
	e->next = d->entry->d_off;
	return 1;
}

/* see mount.h */
void xm_dir_take(struct xdir *d, const struct xm_dirent *e)
{
	d->entry = NULL;
	d->offset = e->next;
}

/* see mount.h */
int xm_dir_fd(const struct xdir *d)
{
	return d->fd;
}

/* see mount.h */
void xm_releasedir(struct xdir *d)
{
	close(d->fd);
	free(d);
}

/* see mount.h */
int xm_dir_borrow(struct xnode *in, struct xdir **out)
{
	/*
	 * The thread's buffer, not a malloc per request: a listing without
	 * OPENDIR is one or two READDIRs per directory, each opening the
	 * lower directory and seeking to the kernel's position (ext4, XFS,
	 * btrfs and tmpfs positions stay valid across opens).
	 */
	struct xdir *d = (struct xdir *)(void *)scratch_get(SCRATCH_LISTING,
							      sizeof(*d));
	int fd;

	if (!d)
		return -ENOMEM;
	fd = openat(in->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d->fd = fd;
	xdir_reset(d, 0);
	*out = d;
	return 0;
}

/* see mount.h */
void xm_dir_return(struct xdir *d)
{
	close(d->fd);
	d->fd = -1;
}
