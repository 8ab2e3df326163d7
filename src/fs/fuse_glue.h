/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuse_glue.h - what the two FUSE front ends (forward: fuse_ops.c,
 * reverse: reverse.c) share: the libfuse API version, connection
 * settings and the statfs reply. Everything else they call is the core,
 * which has no FUSE types (doc/DESIGN.md, "Layers").
 */
#ifndef XTSFS_FUSE_GLUE_H
#define XTSFS_FUSE_GLUE_H

#define FUSE_USE_VERSION 312

#include <fuse_lowlevel.h>
#include <stdbool.h>

/*
 * glue_conn_common() - the settings of every xtsfs connection: requests
 * of up to 1 MiB (libfuse derives max_pages, hence the largest READ,
 * from max_write, so reverse mode raises it too although nothing is
 * written), and locks local to this kernel, the right thing for one
 * host (doc/DESIGN.md).
 */
void glue_conn_common(struct fuse_conn_info *conn);

/*
 * glue_reply_statfs() - reply to statfs with the figures of the lower
 * filesystem of @root_fd, name length 255: any name fits, long ones by
 * the long-name scheme (FORMAT 4.4).
 */
void glue_reply_statfs(fuse_req_t req, int root_fd);

/*
 * glue_xattr_buf() - the buffer a getxattr or listxattr reply of @size
 * bytes is made in (the thread's SCRATCH_REPLY); NULL for a size probe
 * (@size 0) or out of memory.
 */
char *glue_xattr_buf(size_t size);

/*
 * glue_reply_xattr() - reply to getxattr or listxattr: the error of a
 * negative @n, the count @n for a size probe (@size 0), else the @n
 * bytes at @buf.
 */
void glue_reply_xattr(fuse_req_t req, ssize_t n, const char *buf,
		      size_t size);

/* What glue_session_io() may add to the INIT reply (where offered). */
enum {
	/*
	 * FUSE_HANDLE_KILLPRIV_V2: the kernel marks the mount SB_NOSEC and
	 * stops sending a GETXATTR of security.capability before every
	 * write(2) (fs/fuse/inode.c, process_init_reply), and no GETATTR
	 * before a chown (fs/fuse/dir.c, fuse_setattr); the daemon drops
	 * set-id bits itself (caller.c).
	 */
	GLUE_INIT_KILLPRIV_V2 = 1u << 0,
	/*
	 * FUSE_PARALLEL_DIROPS: the kernel no longer serializes LOOKUP and
	 * READDIR of one directory (fs/fuse/dir.c, fuse_lock_inode); the
	 * core takes the locks it needs itself. libfuse 3.14 parses the
	 * flag but never puts it in its reply.
	 */
	GLUE_INIT_PARALLEL_DIROPS = 1u << 1,
	/*
	 * FUSE_OVER_IO_URING (-o uring): requests come through io_uring
	 * queues, one per CPU, served by our own threads (fuse_uring.h);
	 * only if the kernel offers it and the rings could be set up,
	 * else one log line and /dev/fuse as without.
	 */
	GLUE_INIT_URING = 1u << 2,
	/*
	 * FUSE_DIRECT_IO_ALLOW_MMAP (flags2): a file opened with
	 * FOPEN_DIRECT_IO (the writeback guard's opens on a nearly full
	 * disk) may still be mapped shared; without it mmap(MAP_SHARED)
	 * fails with ENODEV (fs/fuse/file.c, fuse_file_mmap). The kernel
	 * then keeps the mapping's pages in its cache, as for any file.
	 * libfuse 3.14 has no name for it.
	 */
	GLUE_INIT_DIRECT_IO_ALLOW_MMAP = 1u << 3,
	/*
	 * GLUE_INIT_URING, with the ring threads free to run on any CPU
	 * instead of each pinned to its queue's (-o uring_unpinned).
	 */
	GLUE_URING_UNPINNED = 1u << 4,
};

/*
 * glue_session_io() - after fuse_session_mount(): read and write @se's
 * device through our own calls (fuse_session_custom_io), which pass
 * every byte on as libfuse gave it, except that the reply to INIT also
 * carries the GLUE_INIT_* flags in @add that the kernel offered. libfuse
 * 3.14 (Debian 12) has no name for KILLPRIV_V2 and DIRECT_IO_ALLOW_MMAP,
 * drops PARALLEL_DIROPS and
 * predates FUSE over io_uring (GLUE_INIT_URING), whose replies these
 * calls route into the ring. @mountpoint names the mount in log lines.
 * Return: 0 or -errno (then the session is as it was).
 */
int glue_session_io(struct fuse_session *se, unsigned add,
		    const char *mountpoint);

/*
 * glue_session_io_stop() - once the session loop has returned, before
 * the unmount: end the io_uring threads of GLUE_INIT_URING, if any (a
 * no-op otherwise).
 */
void glue_session_io_stop(void);

#endif /* XTSFS_FUSE_GLUE_H */
