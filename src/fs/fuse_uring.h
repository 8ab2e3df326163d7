/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuse_uring.h - FUSE over io_uring (-o uring) for libfuse 3.14, which
 * knows nothing of it: our own threads take requests from the kernel's
 * ring queues, hand each to the session as if read from /dev/fuse
 * (fuse_session_process_buf), and the session's reply, which comes back
 * through our custom I/O (fuse_glue.c), is routed into the ring
 * (doc/DESIGN.md, "The daemon"). Used by fuse_glue.c only.
 */
#ifndef XTSFS_FUSE_URING_H
#define XTSFS_FUSE_URING_H

#include "fuse_glue.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <sys/uio.h>

/*
 * uring_prepare() - before the INIT reply goes out: set up one io_uring
 * and its buffers (payload buffers of @payload_len bytes) per ring
 * thread, and start the threads, which wait for uring_start(). Nothing
 * is told to the kernel yet, so a failure here leaves /dev/fuse alone
 * in use (the caller then does not offer FUSE_OVER_IO_URING).
 * @se, @fd: the session and its /dev/fuse descriptor.
 * @unpinned: leave each thread free to run on any CPU (by default it
 * is pinned to the CPU of its queue; doc/PERFORMANCE.md, "Lever 2:
 * pinned or not").
 * @mountpoint: for log lines.
 * Return: 0 or -errno (everything undone).
 */
int uring_prepare(struct fuse_session *se, int fd, size_t payload_len,
		  bool unpinned, const char *mountpoint);

/*
 * uring_start() - after the INIT reply was written: with @go, the
 * threads register their entries (the kernel holds requests back until
 * every queue has one) and serve; says in the log whether the ring is in
 * use. Without @go (the reply did not carry the flag, or failed), the
 * threads end and everything is freed.
 */
void uring_start(bool go);

/*
 * uring_reply() - the session's reply @iov[@count] (iov[0] the
 * fuse_out_header), if it answers a request that came through the ring:
 * copied into that request's ring entry and committed, by the entry's
 * thread. Callable from any thread (a lock granted later answers from
 * the core's waiting thread).
 * Return: true if taken (*@res: the bytes, as writev(2) would say),
 * false if the reply is for /dev/fuse (INIT, notifications, a request
 * read from /dev/fuse).
 */
bool uring_reply(const struct iovec *iov, int count, ssize_t *res);

/*
 * uring_dev_read() - read(2) of /dev/fuse @fd into @buf (@len bytes) for
 * the session's loop, once the ring serves every queue: /dev/fuse then
 * carries only FORGETs and INTERRUPTs, and they are read in batches
 * rather than each waking a thread.
 * Return: true if it read (*@n as read(2) returns it, errno set with
 * -1), false if the ring does not serve every queue (the caller reads).
 */
bool uring_dev_read(int fd, void *buf, size_t len, ssize_t *n);

/*
 * uring_stop() - once the session loop has returned: end the ring
 * threads (an entry still waiting for a late reply is abandoned, its
 * request ended by the kernel when the connection goes), close the
 * rings, free everything and log how many requests the ring served.
 * A no-op when the ring was never started.
 */
void uring_stop(void);

#endif /* XTSFS_FUSE_URING_H */
