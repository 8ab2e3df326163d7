/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rview_read.c - the reverse view's file contents (doc/FORMAT.md 5.3):
 * open, and the range read that computes a view file's bytes on each
 * call from the plaintext: the 40-byte header (fileheader_encode(), the
 * derived file id and the tail slot) and the units, placed by layout.h
 * and encrypted by content_encrypt_span() exactly as content_write()
 * would store them; units wholly in a plaintext hole show as zeros, the
 * stored form of a hole (FORMAT 3.6). FUSE-free.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "content.h"
#include "dirops.h"
#include "fileheader.h"
#include "layout.h"
#include "log.h"
#include "rview.h"
#include "rview_priv.h"
#include "scratch.h"

#define H FILEHDR_SIZE     /* shorthands for buffer sizes; offsets: layout.h */
#define U LAYOUT_UNIT_SIZE

/* see rview.h */
int rfs_open(struct rfs *fs, struct rinode *in, int flags, uint64_t *fh,
	     bool *fixed)
{
	char path[DIROPS_FD_PATH_SIZE];
	int fd, err = bdi_tune_once(&fs->readahead);

	if (err)
		xlog(fs->mountpoint, LOG_INFO, "readahead window left at the "
		     "kernel default: %s", strerror(-err));
	if ((flags & O_ACCMODE) != O_RDONLY)
		return -EROFS;
	if (in->node.kind != R_REAL) {
		*fh = RFS_NO_FILE;
		*fixed = true;
		return 0;
	}
	if (in->type != S_IFREG)
		return -EINVAL;
	dirops_fd_path(path, in->fd);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		xlog(fs->mountpoint, LOG_WARNING, "plaintext file (inode "
		     "%llu): cannot be opened: %s",
		     (unsigned long long)in->node.k2, strerror(-err));
		return err;
	}
	*fh = (uint64_t)fd;
	*fixed = false;
	return 0;
}

/* see rview.h */
void rfs_release(struct rfs *fs, uint64_t fh)
{
	(void)fs;
	if (fh != RFS_NO_FILE)
		close((int)fh);
}

/*
 * Mark the units [u0, u0 + n) of plaintext @fd that are holes: those
 * whose whole plaintext range lseek(2) SEEK_DATA/SEEK_HOLE reports as a
 * hole now (FORMAT.md 5.3).
 */
static void find_holes(int fd, uint64_t psize, uint64_t u0, uint64_t n,
		       bool *hole)
{
	uint64_t pos = layout_unit_start(u0);
	uint64_t end = pos + layout_units_len(psize, u0, n);

	memset(hole, 0, n);
	while (pos < end) {
		off_t d = lseek(fd, (off_t)pos, SEEK_DATA), h;
		uint64_t dd = d < 0 ? end : (uint64_t)d;

		/*
		 * ENXIO: no data from pos to the end of the file, a hole.
		 * Any other failure tells nothing: the rest is data (read and
		 * encrypted), never zeros shown in place of data.
		 */
		if (d < 0 && errno != ENXIO)
			break;

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

		if (pread(fd, p, n, (off_t)layout_unit_start(u)) != (ssize_t)n) {
			xlog(fs->mountpoint, LOG_WARNING, "plaintext file "
			     "(inode %llu): its last bytes cannot be read "
			     "(changed while read?)",
			     (unsigned long long)in->node.k2);
			return -EIO;
		}
		find_holes(fd, psize, u, 1, &hole);
		content_encrypt_span(fs->xts, in->id, psize, u, 1, p, c,
				     fh.slot, &hole);
	}
	fileheader_encode(hdr, &fh);
	return 0;
}

/*
 * The view's bytes of plaintext [@a, @b) (0 < @b - @a, @b <= @psize) at
 * @dst: the whole units they lie in, read, encrypted as a forward mount
 * stores them, holes as zeros.
 */
static int read_units(struct rfs *fs, struct rinode *in, int fd,
		      uint64_t psize, uint64_t a, uint64_t b, uint8_t *dst)
{
	struct layout_span sp;
	uint8_t *buf, slot[16];
	bool *hole;
	ssize_t r;

	layout_span(&sp, psize, a, b - a);
	buf = scratch_get(SCRATCH_UNITS, sp.n * U);
	hole = (bool *)scratch_get(SCRATCH_HOLES, sp.n * sizeof(*hole));
	if (!buf || !hole)
		return -ENOMEM;
	r = pread(fd, buf, sp.len, (off_t)layout_unit_start(sp.u0));
	if (r < 0) {
		int err = -errno;

		xlog(fs->mountpoint, LOG_ERR, "plaintext file (inode %llu): "
		     "read error near offset %llu: %s",
		     (unsigned long long)in->node.k2, (unsigned long long)a,
		     strerror(-err));
		return err;
	}
	if ((uint64_t)r < sp.len) /* the file shrank meanwhile */
		memset(buf + r, 0, sp.len - (uint64_t)r);
	find_holes(fd, psize, sp.u0, sp.n, hole);
	content_encrypt_span(fs->xts, in->id, psize, sp.u0, sp.n, buf, buf,
			     slot, hole);
	memcpy(dst, buf + (a - layout_unit_start(sp.u0)), b - a);
	explicit_bzero(buf, sp.n * U);
	return 0;
}

/* rfs_read() of a plaintext file, open as @fd. */
static ssize_t read_real(struct rfs *fs, struct rinode *in, int fd,
			 uint8_t *out, size_t size, uint64_t o)
{
	uint64_t psize, vsize, got = 0;
	struct stat st;
	int err = 0;

	if (fstat(fd, &st) != 0)
		return -errno;
	err = rview_derive_id(fs, in);
	if (err)
		return err;
	psize = (uint64_t)st.st_size;
	/* a reverse view is always of the compact layout (FORMAT 5.1) */
	vsize = layout_lower_size(LAYOUT_DOFF_COMPACT, psize);
	if (o >= vsize)
		return 0;
	if (size > vsize - o)
		size = (size_t)(vsize - o);
	if (o < H) {
		uint8_t hdr[H];

		err = make_header(fs, in, fd, psize, hdr);
		if (err)
			return err;
		got = H - o < size ? H - o : size;
		memcpy(out, hdr + o, got);
	}
	if (got < size) {
		/* plaintext [a, b) covered, in whole units */
		err = read_units(fs, in, fd, psize,
				 layout_poff(LAYOUT_DOFF_COMPACT, o + got),
				 layout_poff(LAYOUT_DOFF_COMPACT, o + size),
				 out + got);
		if (err)
			return err;
	}
	return (ssize_t)size;
}

/* see rview.h */
ssize_t rfs_read(struct rfs *fs, struct rinode *in, uint64_t fh,
		 uint8_t *buf, size_t size, uint64_t off)
{
	size_t len;

	if (in->node.kind == R_REAL)
		return read_real(fs, in, (int)fh, buf, size, off);
	len = off >= in->clen ? 0 : in->clen - off < size ? in->clen - off : size;
	if (len)
		memcpy(buf, in->content + off, len);
	return (ssize_t)len;
}
