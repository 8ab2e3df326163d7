/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reverse.h - reverse mode's FUSE front end: a read-only FUSE view in
 * which a plaintext directory appears encrypted, in exactly the on-disk
 * format of a normal volume (doc/FORMAT.md section 5), so that the view
 * can be backed up with rsync and the copy mounted in normal mode. The
 * view itself (struct rfs, rfs_init(), rfs_destroy()) is the FUSE-free
 * core's, rview.h; this adds the low-level operations that serve it.
 */
#ifndef XTSFS_REVERSE_H
#define XTSFS_REVERSE_H

#define FUSE_USE_VERSION 312

#include <fuse_lowlevel.h>

#include "rview.h"

/* The low-level operations; userdata is the struct rfs. */
extern const struct fuse_lowlevel_ops rfs_ops;

#endif /* XTSFS_REVERSE_H */
