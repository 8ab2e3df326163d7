/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuse_glue.c - what both FUSE front ends share (fuse_glue.h).
 */
#include "fuse_glue.h"

#include "config.h"

#include "fuse_kabi.h"
#include "log.h"
#include "scratch.h"
#if HAVE_LIBURING
#include "fuse_uring.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/statvfs.h>
#include <sys/uio.h>
#include <syslog.h>
#include <unistd.h>

/* see fuse_glue.h */
void glue_conn_common(struct fuse_conn_info *conn)
{
	conn->max_write = 1u << 20;
	conn->max_readahead = 1u << 20;
	conn->want &= ~(FUSE_CAP_POSIX_LOCKS | FUSE_CAP_FLOCK_LOCKS);
}

/* see fuse_glue.h */
void glue_reply_statfs(fuse_req_t req, int root_fd)
{
	struct statvfs sv;
	int fd = openat(root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0 || fstatvfs(fd, &sv) != 0) {
		int err = errno;

		if (fd >= 0)
			close(fd);
		fuse_reply_err(req, err);
		return;
	}
	close(fd);
	sv.f_namemax = 255;
	fuse_reply_statfs(req, &sv);
}

/* see fuse_glue.h */
char *glue_xattr_buf(size_t size)
{
	return size ? (char *)scratch_get(SCRATCH_REPLY, size) : NULL;
}

/* see fuse_glue.h */
void glue_reply_xattr(fuse_req_t req, ssize_t n, const char *buf,
		      size_t size)
{
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else if (size == 0)
		fuse_reply_xattr(req, (size_t)n);
	else
		fuse_reply_buf(req, buf, (size_t)n);
}

/* What the I/O hooks know of INIT: one session per process. */
static struct {
	uint32_t want;          /* K_* flags to add where offered */
	uint32_t want2;         /* K2_* flags (flags2) likewise */
	bool uring;             /* -o uring: offer FUSE over io_uring */
	bool unpinned;          /* -o uring_unpinned */
	struct fuse_session *se;
	const char *mountpoint; /* for log lines */
	uint32_t offered;       /* the flags of the kernel's INIT */
	uint32_t offered2;      /* its flags2 (0 without K_INIT_EXT) */
	bool done;              /* the INIT reply went out */
	uint64_t unique;        /* the INIT request */
} init_patch;

static ssize_t io_read(int fd, void *buf, size_t len, void *userdata)
{
	ssize_t n;

#if HAVE_LIBURING
	if (!uring_dev_read(fd, buf, len, &n))
#endif
		n = read(fd, buf, len);

	(void)userdata;
	if (!init_patch.done && n >= (ssize_t)(sizeof(struct k_in_header) +
					       sizeof(struct k_init_in))) {
		struct k_in_header h;
		struct k_init_in in;
		uint32_t flags2 = 0;

		memcpy(&h, buf, sizeof(h));
		memcpy(&in, (char *)buf + sizeof(h), sizeof(in));
		if (n >= (ssize_t)(sizeof(h) + sizeof(in) + sizeof(flags2)))
			memcpy(&flags2, (char *)buf + sizeof(h) + sizeof(in),
			       sizeof(flags2));
		if (h.opcode == K_FUSE_INIT) {
			init_patch.unique = h.unique;
			init_patch.offered = in.flags;
			init_patch.offered2 =
				in.flags & K_INIT_EXT ? flags2 : 0;
		}
	}
	return n;
}

#if HAVE_LIBURING
/*
 * -o uring, at the INIT reply @out (@outlen bytes, in the reply's iovec,
 * flags already patched): when the kernel offers FUSE over io_uring, set
 * up the ring threads (fuse_uring.c) and add the flag to the reply.
 * Return: true if added (the caller then calls uring_start()).
 */
static bool offer_uring(int fd, void *out, size_t outlen)
{
	struct k_init_out o;
	long page = sysconf(_SC_PAGESIZE);
	size_t payload;
	int rc;

	if (!(init_patch.offered2 & K2_OVER_IO_URING) ||
	    outlen < sizeof(o)) {
		xlog(init_patch.mountpoint, LOG_NOTICE, "-o uring: the kernel "
		     "offers no FUSE over io_uring (Linux 6.14 or later, with "
		     "/sys/module/fuse/parameters/enable_uring set to Y): "
		     "serving /dev/fuse");
		return false;
	}
	memcpy(&o, out, sizeof(o));
	/*
	 * The payload buffer must hold the largest request or reply:
	 * max(8 KiB, max_write, max_pages pages) (fs/fuse/dev_uring.c,
	 * fuse_uring_create); max_pages is 32 unless the reply says.
	 */
	payload = (o.flags & K_MAX_PAGES) && o.max_pages ? o.max_pages : 32;
	payload *= (size_t)page;
	if (payload < o.max_write)
		payload = o.max_write;
	if (payload < 8192)
		payload = 8192;
	rc = uring_prepare(init_patch.se, fd, payload, init_patch.unpinned,
			   init_patch.mountpoint);
	if (rc) {
		xlog(init_patch.mountpoint, LOG_WARNING, "-o uring: cannot set "
		     "up the rings (%s): serving /dev/fuse", strerror(-rc));
		return false;
	}
	o.flags |= K_INIT_EXT;
	o.flags2 |= K2_OVER_IO_URING;
	memcpy(out, &o, sizeof(o));
	return true;
}
#else
static bool offer_uring(int fd, void *out, size_t outlen)
{
	(void)fd;
	(void)out;
	(void)outlen;
	xlog(init_patch.mountpoint, LOG_NOTICE, "-o uring: this xtsfs was "
	     "built without liburing: serving /dev/fuse");
	return false;
}

static void uring_start(bool go)
{
	(void)go;
}
#endif

static ssize_t io_writev(int fd, struct iovec *iov, int count, void *userdata)
{
	bool ring = false;
	ssize_t n;

	(void)userdata;
#if HAVE_LIBURING
	/* the reply to a request that came through the ring goes back there */
	if (uring_reply(iov, count, &n))
		return n;
#endif
	if (!init_patch.done && count >= 2 &&
	    iov[0].iov_len >= sizeof(struct k_out_header) &&
	    iov[1].iov_len >= offsetof(struct k_init_out, flags) + 4) {
		struct k_out_header oh;

		memcpy(&oh, iov[0].iov_base, sizeof(oh));
		if (oh.unique == init_patch.unique && oh.unique != 0) {
			const size_t at = offsetof(struct k_init_out, flags);
			char *out = iov[1].iov_base;
			uint32_t flags;

			init_patch.done = true;
			memcpy(&flags, out + at, sizeof(flags));
			if (oh.error == 0 &&
			    (init_patch.want & init_patch.offered)) {
				flags |= init_patch.want & init_patch.offered;
				memcpy(out + at, &flags, sizeof(flags));
			}
			/* flags2 only in a reply long enough (minor >= 23) */
			if (oh.error == 0 &&
			    (init_patch.want2 & init_patch.offered2) &&
			    iov[1].iov_len >= sizeof(struct k_init_out)) {
				struct k_init_out o;

				memcpy(&o, out, sizeof(o));
				o.flags |= K_INIT_EXT;
				o.flags2 |= init_patch.want2 &
					    init_patch.offered2;
				memcpy(out, &o, sizeof(o));
			}
			if (oh.error == 0 && init_patch.uring)
				ring = offer_uring(fd, out, iov[1].iov_len);
		}
	}
	n = writev(fd, iov, count);
	/*
	 * The kernel took the reply (fs/fuse/inode.c, process_init_reply,
	 * runs in this write): the rings may register now, and until every
	 * queue has an entry the kernel holds new requests back.
	 */
	if (ring)
		uring_start(n >= 0);
	return n;
}

/* see fuse_glue.h */
int glue_session_io(struct fuse_session *se, unsigned add,
		    const char *mountpoint)
{
	static const struct fuse_custom_io io = {
		.read = io_read,
		.writev = io_writev,
	};
	int rc;

	init_patch.want = 0;
	init_patch.want2 = 0;
	if (add & GLUE_INIT_DIRECT_IO_ALLOW_MMAP)
		init_patch.want2 |= K2_DIRECT_IO_ALLOW_MMAP;
	if (add & GLUE_INIT_KILLPRIV_V2)
		init_patch.want |= K_HANDLE_KILLPRIV_V2;
	if (add & GLUE_INIT_PARALLEL_DIROPS)
		init_patch.want |= K_PARALLEL_DIROPS;
	init_patch.uring = add & (GLUE_INIT_URING | GLUE_URING_UNPINNED);
	init_patch.unpinned = add & GLUE_URING_UNPINNED;
	init_patch.se = se;
	init_patch.mountpoint = mountpoint;
	rc = fuse_session_custom_io(se, &io, fuse_session_fd(se));
	return rc < 0 ? rc : 0;
}

/* see fuse_glue.h */
void glue_session_io_stop(void)
{
#if HAVE_LIBURING
	uring_stop();
#endif
}
