/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuse_glue.c - what both FUSE front ends share (fuse_glue.h).
 */
#include "fuse_glue.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/statvfs.h>
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
