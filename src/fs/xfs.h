/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xfs.h - the mounted filesystem: its state and the FUSE low-level
 * operations table (fuse_ops.c). The daemon's main (tools/xtsfs.c)
 * unlocks the volume, fills a struct xfs and runs the session.
 *
 * Why the low-level API: every lower object is held by an O_PATH file
 * descriptor per inode (as libfuse's passthrough_hp does), so a name is
 * encrypted once per lookup instead of once per path component on every
 * call, hard links map to one inode and one content lock, and replies
 * can carry entries (readdirplus) without a second round trip.
 */
#ifndef XTSFS_XFS_H
#define XTSFS_XFS_H

#define FUSE_USE_VERSION 312

#include <fuse_lowlevel.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "bdi.h"
#include "content.h"
#include "dirops.h"
#include "durable.h"
#include "itable.h"
#include "names.h"
#include "prefetch.h"
#include "xts.h"

struct xinode;

/* struct xfs - one mounted volume. */
struct xfs {
	int root_fd;                  /* cipher directory, O_PATH */
	const struct xts_ctx *xts;    /* contents key (locked memory) */
	const struct names_ctx *names; /* names key, NULL if plaintext names */
	bool plaintext_names;         /* volume flag */
	bool readonly;                /* -o ro */
	bool writeback;               /* -o writeback: kernel writeback cache */
	bool writeback_on;            /* ... and the kernel agreed to it */
	bool noflush;                 /* lower close() reports nothing */
	unsigned write_flags;         /* content_write() flags for the lower fs */
	struct fuse_session *se;      /* for notifications to the kernel */
	double entry_timeout;         /* seconds the kernel may cache names */
	double attr_timeout;          /* seconds the kernel may cache attrs */
	const char *mountpoint;       /* for log lines */
	const char *cipherdir;        /* for log lines */
	struct bdi_tune readahead;    /* applied at the first open */
	struct durable durable;       /* dirids and sidecars to sync */
	struct prefetch prefetch;     /* dirids read ahead */
	struct dirops dops;           /* directory operations (xfs_init) */
	struct xinode *root;          /* FUSE_ROOT_ID, not in the table */
	struct itable inodes;         /* every other inode the kernel knows */
};

/*
 * xfs_init() - set up the root inode, the threads that read dirids ahead
 * (prefetch.h) and, unless read-only, the thread that syncs new dirids
 * and sidecars (durable.h). Return: 0 or -errno.
 */
int xfs_init(struct xfs *fs);

/*
 * xfs_destroy() - stop the threads, sync what is pending, free every
 * inode (after the session ended; also after a failed xfs_init).
 */
void xfs_destroy(struct xfs *fs);

/* The low-level operations; userdata is the struct xfs. */
extern const struct fuse_lowlevel_ops xfs_ops;

/*
 * xfs_log() - a message for the user: to syslog when the daemon runs in
 * the background, to stderr in the foreground, prefixed with the mount
 * point, rate-limited so a corrupt volume cannot flood the log. Never
 * pass a secret.
 */
void xfs_log(const struct xfs *fs, int prio, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* xfs_log_to_syslog() - switch xfs_log() to syslog (after daemonizing). */
void xfs_log_to_syslog(void);

#endif /* XTSFS_XFS_H */
