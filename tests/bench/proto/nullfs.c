// SPDX-License-Identifier: Apache-2.0
//
// nullfs: the FUSE round-trip floor on this kernel and libfuse. One
// regular file, "f", whose bytes live in the daemon's memory: a READ is
// a reply straight from that buffer, a WRITE a memcpy into it. No lower
// filesystem, no cipher, no checks. What fio measures on it is what
// /dev/fuse and the scheduler cost per request, nothing else: the
// ceiling for any FUSE filesystem's random 4 KiB I/O on the machine.
// With -l FILE the bytes are FILE's instead, at offset + the -O shift
// (one pread or pwrite per request, as a passthrough would): what the
// lower filesystem adds, and what a header in front of the data costs
// (xtsfs's plaintext byte 0 sits at 40, off the lower blocks). -W asks
// for the lower range with POSIX_FADV_WILLNEED before each write (the
// two pages a shifted write straddles read at once, not one by one).
//
// -u / -U serve it over io_uring (pinned / unpinned threads, as xtsfs's
// -o uring / uring_unpinned), through xtsfs's own glue: build with
// -DFLOOR_GLUE -Isrc/fs and link build/src/fs/libxtsfs-fuse.a,
// libxtsfs-core.a and -luring (floor.sh does, when they are built).
//
// Build: cc -O2 -o nullfs nullfs.c $(pkg-config --cflags --libs fuse3)
// Run:   nullfs [-s|-S US] [-u|-U] [-l FILE [-O SHIFT] [-W]] [-o opts] MOUNTPOINT SIZE_MIB
//        (foreground; -s: one thread; -S US: one thread that polls
//        /dev/fuse without sleeping for US µs after each request)
#include "floor_loop.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *data;
static size_t size;
static int lower = -1;   /* -l FILE: bytes live in FILE at offset + shift */
static off_t shift;      /* -O BYTES: where the plaintext's byte 0 sits */
static int willneed;     /* -W: POSIX_FADV_WILLNEED on the range first */

static void fill(fuse_ino_t ino, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	st->st_uid = 0;
	st->st_gid = 0;
	if (ino == FUSE_ROOT_ID) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
	} else {
		st->st_mode = S_IFREG | 0644;
		st->st_nlink = 1;
		st->st_size = (off_t)size;
		st->st_blocks = (blkcnt_t)(size / 512);
	}
	st->st_blksize = 4096;
}

static void nl_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fuse_entry_param e = { 0 };

	if (parent != FUSE_ROOT_ID || strcmp(name, "f") != 0) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	e.ino = 2;
	e.attr_timeout = 1.0;
	e.entry_timeout = 1.0;
	fill(2, &e.attr);
	fuse_reply_entry(req, &e);
}

static void nl_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct stat st;

	(void)fi;
	fill(ino, &st);
	fuse_reply_attr(req, &st, 1.0);
}

static void nl_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
		       int to_set, struct fuse_file_info *fi)
{
	(void)attr;
	(void)to_set;
	nl_getattr(req, ino, fi);
}

static void nl_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	fuse_reply_open(req, fi);
}

/* The part of [off, off + n) inside the file: its length. */
static size_t clamp(off_t off, size_t n)
{
	if ((size_t)off >= size)
		return 0;
	return n > size - (size_t)off ? size - (size_t)off : n;
}

static void nl_read(fuse_req_t req, fuse_ino_t ino, size_t n, off_t off,
		    struct fuse_file_info *fi)
{
	(void)ino;
	(void)fi;
	n = clamp(off, n);
	if (lower >= 0) {
		char buf[1 << 17];
		ssize_t got;

		if (n > sizeof(buf))
			n = sizeof(buf);
		got = pread(lower, buf, n, off + shift);
		if (got < 0)
			fuse_reply_err(req, errno);
		else
			fuse_reply_buf(req, buf, (size_t)got);
		return;
	}
	fuse_reply_buf(req, data + off, n);
}

static void nl_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t n,
		     off_t off, struct fuse_file_info *fi)
{
	(void)ino;
	(void)fi;
	n = clamp(off, n);
	if (lower >= 0) {
		ssize_t put;

		if (willneed)
			(void)posix_fadvise(lower, off + shift, (off_t)n,
					    POSIX_FADV_WILLNEED);
		put = pwrite(lower, buf, n, off + shift);

		if (put < 0)
			fuse_reply_err(req, errno);
		else
			fuse_reply_write(req, (size_t)put);
		return;
	}
	memcpy(data + off, buf, n);
	fuse_reply_write(req, n);
}

static void nl_ok(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	(void)fi;
	fuse_reply_err(req, 0);
}

static void nl_fsync(fuse_req_t req, fuse_ino_t ino, int datasync,
		     struct fuse_file_info *fi)
{
	(void)datasync;
	nl_ok(req, ino, fi);
}

static const struct fuse_lowlevel_ops ops = {
	.lookup = nl_lookup,
	.getattr = nl_getattr,
	.setattr = nl_setattr,
	.open = nl_open,
	.read = nl_read,
	.write = nl_write,
	.flush = nl_ok,
	.release = nl_ok,
	.fsync = nl_fsync,
};

int main(int argc, char **argv)
{
	struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
	struct fuse_session *se;
	int single = 0, i, rc;
	long spin_us = 0;     /* -S US: one thread that polls for US µs */
	unsigned glue = 0;    /* -u / -U: FUSE over io_uring through xtsfs's glue */
	const char *mnt = NULL, *mib = NULL;

	fuse_opt_add_arg(&args, argv[0]);
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-s") == 0) {
			single = 1;
		} else if (strcmp(argv[i], "-S") == 0 && i + 1 < argc) {
			spin_us = strtol(argv[++i], NULL, 10);
		} else if (strcmp(argv[i], "-l") == 0 && i + 1 < argc) {
			lower = open(argv[++i], O_RDWR);
			if (lower < 0) {
				perror(argv[i]);
				return 1;
			}
		} else if (strcmp(argv[i], "-u") == 0) {
			glue = 1;
		} else if (strcmp(argv[i], "-U") == 0) {
			glue = 2;
		} else if (strcmp(argv[i], "-W") == 0) {
			willneed = 1;
		} else if (strcmp(argv[i], "-O") == 0 && i + 1 < argc) {
			shift = strtoll(argv[++i], NULL, 10);
		} else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) {
			fuse_opt_add_arg(&args, "-o");
			fuse_opt_add_arg(&args, argv[++i]);
		} else if (!mnt) {
			mnt = argv[i];
		} else {
			mib = argv[i];
		}
	}
	if (!mnt || !mib) {
		fprintf(stderr, "usage: nullfs [-s|-S US] [-u|-U] [-l FILE [-O SHIFT] "
			"[-W]] [-o opts] MOUNTPOINT SIZE_MIB\n");
		return 2;
	}
	size = strtoull(mib, NULL, 10) << 20;
	data = lower >= 0 ? NULL : calloc(1, size);
	if (lower < 0 && !data)
		return 1;
	se = fuse_session_new(&args, &ops, sizeof(ops), NULL);
	if (!se)
		return 1;
	rc = floor_serve(se, mnt, single, spin_us, (int)glue, 0);
	fuse_session_destroy(se);
	return rc;
}
