/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuse_glue.c - what both FUSE front ends share (fuse_glue.h).
 */
#include "fuse_glue.h"

#include "scratch.h"

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/statvfs.h>
#include <sys/uio.h>
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

/*
 * The kernel's side of INIT (include/uapi/linux/fuse.h), the little of
 * it read here: the request's header and flags, the reply's flags.
 */
#define K_FUSE_INIT 26
#define K_PARALLEL_DIROPS (1u << 18)
#define K_HANDLE_KILLPRIV_V2 (1u << 28)
#define K_INIT_EXT (1u << 30)              /* flags2 is there */
#define K2_DIRECT_IO_ALLOW_MMAP (1u << 4)  /* bit 36, in flags2 */

struct k_in_header {
	uint32_t len, opcode;
	uint64_t unique, nodeid;
	uint32_t uid, gid, pid;
	uint16_t total_extlen, padding;
};

struct k_init_in {
	uint32_t major, minor, max_readahead, flags, flags2;
};

struct k_out_header {
	uint32_t len;
	int32_t error;
	uint64_t unique;
};

struct k_init_out_head {
	uint32_t major, minor, max_readahead, flags;
	uint16_t max_background, congestion_threshold;
	uint32_t max_write, time_gran;
	uint16_t max_pages, map_alignment;
	uint32_t flags2;
};

_Static_assert(sizeof(struct k_in_header) == 40, "fuse_in_header");
_Static_assert(sizeof(struct k_out_header) == 16, "fuse_out_header");
_Static_assert(offsetof(struct k_init_out_head, flags2) == 32, "flags2");

/* What the I/O hooks know of INIT: one session per process. */
static struct {
	uint32_t want;          /* K_* flags to add where offered */
	uint32_t want2;         /* K2_* flags (flags2) likewise */
	uint32_t offered;       /* the flags of the kernel's INIT */
	uint32_t offered2;      /* its flags2 (with K_INIT_EXT) */
	bool done;              /* the INIT reply went out */
	uint64_t unique;        /* the INIT request */
} init_patch;

static ssize_t io_read(int fd, void *buf, size_t len, void *userdata)
{
	ssize_t n = read(fd, buf, len);

	(void)userdata;
	if (!init_patch.done && n >= (ssize_t)(sizeof(struct k_in_header) +
					       sizeof(struct k_init_in))) {
		struct k_in_header h;
		struct k_init_in in;

		memcpy(&h, buf, sizeof(h));
		memcpy(&in, (char *)buf + sizeof(h), sizeof(in));
		if (h.opcode == K_FUSE_INIT) {
			init_patch.unique = h.unique;
			init_patch.offered = in.flags;
			init_patch.offered2 = in.flags & K_INIT_EXT ?
					      in.flags2 : 0;
		}
	}
	return n;
}

static ssize_t io_writev(int fd, struct iovec *iov, int count, void *userdata)
{
	(void)userdata;
	if (!init_patch.done && count >= 2 &&
	    iov[0].iov_len >= sizeof(struct k_out_header) &&
	    iov[1].iov_len >= offsetof(struct k_init_out_head, max_background)) {
		struct k_out_header oh;

		memcpy(&oh, iov[0].iov_base, sizeof(oh));
		if (oh.unique == init_patch.unique && oh.unique != 0) {
			struct k_init_out_head out;
			/* flags2 only in a reply long enough (minor >= 23) */
			size_t len = iov[1].iov_len < sizeof(out) ?
				     offsetof(struct k_init_out_head,
					      max_background) : sizeof(out);
			uint32_t add2 = init_patch.want2 & init_patch.offered2;

			init_patch.done = true;
			memcpy(&out, iov[1].iov_base, len);
			if (oh.error == 0) {
				out.flags |= init_patch.want &
					     init_patch.offered;
				if (add2 && len == sizeof(out)) {
					out.flags |= K_INIT_EXT;
					out.flags2 |= add2;
				}
				memcpy(iov[1].iov_base, &out, len);
			}
		}
	}
	return writev(fd, iov, count);
}

/* see fuse_glue.h */
int glue_session_io(struct fuse_session *se, unsigned add)
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
	rc = fuse_session_custom_io(se, &io, fuse_session_fd(se));
	return rc < 0 ? rc : 0;
}
