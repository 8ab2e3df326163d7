/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fwd.h - the forward mount's FUSE front end (fuse_ops.c): the low-level
 * operations table over the core of mount.h. The daemon's main
 * (tools/xtsfs.c) unlocks the volume, fills the struct xmount, calls
 * xm_init() and runs the session with fwd_ops and a struct fwd.
 */
#ifndef XTSFS_FWD_H
#define XTSFS_FWD_H

#include "fuse_glue.h"
#include "mount.h"

/* struct fwd - a forward mount and its FUSE session. */
struct fwd {
	struct xmount m;              /* the core */
	struct fuse_session *se;      /* for notifications to the kernel */
};

/* The low-level operations; userdata is the struct fwd. */
extern const struct fuse_lowlevel_ops fwd_ops;

/*
 * What the change notifier (xm_notify_start(), with the struct fwd as
 * its argument) tells the kernel through the session.
 */
extern const struct xm_notify_cb fwd_notify_cb;

#endif /* XTSFS_FWD_H */
