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
 *
 * The same directory holds the dirty limit of the mount (the writeback
 * guard, wbguard.h): max_ratio_fine, parts per million of the global
 * dirty limit, which FUSE enforces per device (strict_limit, set by
 * fs/fuse/inode.c for every FUSE mount; written again to be sure).
 */
#ifndef XTSFS_BDI_H
#define XTSFS_BDI_H

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

/* struct bdi_tune - what to set, once. Zero-initialised: nothing to do. */
struct bdi_tune {
	const char *mountpoint; /* canonical path (realpath before mounting) */
	unsigned read_ahead_kb; /* 0: leave the kernel's default */
	unsigned dirty_ppm;     /* 0: leave the dirty limit (FUSE: 1 %) */
	atomic_int state;       /* 0 not yet, 1 claimed, 2 done */
	/*
	 * Once done: the dirty limit in force (max_ratio_fine, whether we
	 * could set ours or not: a daemon not run by root cannot, and FUSE's
	 * own of 1 % holds), or dirty_err: why it is not known, or -EPERM if
	 * it is not strict (strict_limit 0: the device may then go over it).
	 */
	unsigned dirty_ppm_now;
	int dirty_err;
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
 * bdi_tune_once() - apply @t the first time it is called (concurrent
 * calls wait until it is applied, later ones return at once). Return: 0
 * if the readahead window was set or nothing to do or already done, else
 * -errno of the first attempt (not root, no sysfs: the kernel default
 * stays, which is only slower). The dirty limit's result is left in
 * @t->dirty_err.
 */
int bdi_tune_once(struct bdi_tune *t);

/*
 * bdi_limit_from() - the largest global dirty limit in bytes: @dirty_bytes
 * (vm.dirty_bytes) if set, else @dirty_ratio percent (vm.dirty_ratio) of
 * @mem_total, all the memory there is (the kernel takes the ratio of the
 * memory it could write back, never more).
 */
uint64_t bdi_limit_from(uint64_t dirty_bytes, unsigned dirty_ratio,
			uint64_t mem_total);

/*
 * bdi_limit_max() - bdi_limit_from() with this machine's values, from
 * /proc. Return: 0 or -errno.
 */
int bdi_limit_max(uint64_t *bytes);

#endif /* XTSFS_BDI_H */
