/* SPDX-License-Identifier: Apache-2.0 */
/*
 * floor_loop.h - what the two floor daemons (nullfs.c, memfs.c) share:
 * serving their session as xtsfs serves its own, so that what they
 * measure is the same transport. Built with -DFLOOR_GLUE -Isrc/fs and
 * linked with build/src/fs/libxtsfs-fuse.a, libxtsfs-core.a and
 * -luring, they use xtsfs's glue for the INIT flags libfuse 3.14 drops
 * and for FUSE over io_uring; without it, neither.
 */
#ifndef FLOOR_LOOP_H
#define FLOOR_LOOP_H

#ifdef FLOOR_GLUE
#include "fuse_glue.h"
#else
/*
 * 312 as in xtsfs: below it fuse_session_loop_mt() takes the old config
 * struct, reads this one's fields as other things and starts a thread
 * per request (a 2x slower floor, measured).
 */
#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>
#endif

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* CLOCK_MONOTONIC in µs */
static long long floor_now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000LL + t.tv_nsec / 1000;
}

/*
 * floor_spin_loop() - one thread serving @se that polls /dev/fuse
 * without sleeping for @spin_us after each request (non-blocking reads)
 * before it sleeps in poll(): the daemon side of a round trip without
 * its sleep and wake-up.
 */
static int floor_spin_loop(struct fuse_session *se, long spin_us)
{
	struct fuse_buf fbuf = { .mem = NULL };
	int fd = fuse_session_fd(se), res;
	long long last = 0;

	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) != 0)
		return 1;
	while (!fuse_session_exited(se)) {
		res = fuse_session_receive_buf(se, &fbuf);
		if (res == -EAGAIN) {
			if (floor_now_us() - last < spin_us)
				continue;
			struct pollfd p = { .fd = fd, .events = POLLIN };
			poll(&p, 1, -1);
			last = floor_now_us();
			continue;
		}
		if (res == -EINTR)
			continue;
		if (res <= 0)
			break;
		fuse_session_process_buf(se, &fbuf);
		last = floor_now_us();
	}
	free(fbuf.mem);
	return 0;
}

/*
 * floor_serve() - mount @se on @mnt and serve it until it is unmounted:
 * with one thread (@single: libfuse's loop; @spin_us > 0:
 * floor_spin_loop()) or with xtsfs's loop (8 workers that never exit,
 * no clone_fd). @ring: 0 /dev/fuse, 1 io_uring with pinned
 * threads (xtsfs -o uring), 2 unpinned (-o uring_unpinned); @xtsfs_init:
 * also the INIT flags xtsfs adds (HANDLE_KILLPRIV_V2, PARALLEL_DIROPS).
 * The caller makes and destroys @se. Return: the exit status.
 */
static int floor_serve(struct fuse_session *se, const char *mnt, int single,
		       long spin_us, int ring, int xtsfs_init)
{
	struct fuse_loop_config *cfg;
	int rc;

	if (fuse_session_mount(se, mnt) != 0)
		return 1;
#ifdef FLOOR_GLUE
	unsigned add = (xtsfs_init ? GLUE_INIT_KILLPRIV_V2 |
			GLUE_INIT_PARALLEL_DIROPS : 0) |
		       (ring == 1 ? GLUE_INIT_URING : 0) |
		       (ring == 2 ? GLUE_URING_UNPINNED : 0);

	if (add && glue_session_io(se, add, mnt) != 0) {
		fuse_session_unmount(se);
		return 1;
	}
#else
	(void)xtsfs_init;
	if (ring) {
		fprintf(stderr, "built without FLOOR_GLUE: no io_uring\n");
		fuse_session_unmount(se);
		return 2;
	}
#endif
	if (spin_us > 0) {
		rc = floor_spin_loop(se, spin_us);
	} else if (single) {
		rc = fuse_session_loop(se);
	} else {
		cfg = fuse_loop_cfg_create();
		fuse_loop_cfg_set_clone_fd(cfg, 0);
		fuse_loop_cfg_set_max_threads(cfg, 8);
		fuse_loop_cfg_set_idle_threads(cfg, 8); /* as xtsfs: never exit */
		rc = fuse_session_loop_mt(se, cfg);
		fuse_loop_cfg_destroy(cfg);
	}
#ifdef FLOOR_GLUE
	glue_session_io_stop();
#endif
	fuse_session_unmount(se);
	return rc ? 1 : 0;
}

#endif /* FLOOR_LOOP_H */
