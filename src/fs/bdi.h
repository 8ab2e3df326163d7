/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bdi.h - the kernel's readahead window for our own FUSE mount.
 *
 * The kernel reads ahead at most min(the mount's backing-device window,
 * what the INIT reply asked for), and the window starts at the kernel
 * default (128 KiB), which also caps what INIT may ask for. So a FUSE
 * file is read in 128 KiB requests, one round trip and one lower pread
 * each, however fast the daemon is. The window is a per-mount sysfs
 * file, /sys/class/bdi/MAJ:MIN/read_ahead_kb, which root may raise once
 * the kernel has processed INIT (before that, the INIT reply would cut it
 * down again): the daemon does it at the first open of a file, found
 * from the mount point in /proc/self/mountinfo (not by stat(), which on
 * our own mount point would wait for ourselves).
 */
#ifndef XTSFS_BDI_H
#define XTSFS_BDI_H

#include <stdatomic.h>
#include <stdio.h>

/* struct bdi_tune - what to set, once. Zero-initialised: nothing to do. */
struct bdi_tune {
	const char *mountpoint; /* canonical path (realpath before mounting) */
	unsigned read_ahead_kb; /* 0: leave the kernel's default */
	atomic_int state;       /* 0 not yet, 1 claimed */
};

/*
 * bdi_find() - "MAJ:MIN" of the topmost mount on @mountpoint (canonical
 * path) whose type starts with "fuse", from /proc/self/mountinfo.
 * Return: 0, -ENOENT if there is none, or another -errno.
 */
int bdi_find(const char *mountpoint, char *devname, unsigned size);

/* bdi_find_in() - the same, reading mountinfo lines from @f. */
int bdi_find_in(FILE *f, const char *mountpoint, char *devname,
		unsigned size);

/*
 * bdi_tune_once() - apply @t the first time it is called (later calls
 * and concurrent ones return at once). Return: 0 if applied or nothing to
 * do or already done, else -errno of the first attempt (not root, no
 * sysfs: the kernel default stays, which is only slower).
 */
int bdi_tune_once(struct bdi_tune *t);

#endif /* XTSFS_BDI_H */
