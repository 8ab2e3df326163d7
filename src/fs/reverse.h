/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reverse.h - reverse mode: a read-only FUSE view in which a plaintext
 * directory appears encrypted, in exactly the on-disk format of a normal
 * volume (doc/FORMAT.md section 5), so that the view can be backed up with
 * rsync and the copy mounted in normal mode.
 */
#ifndef XTSFS_REVERSE_H
#define XTSFS_REVERSE_H

#define FUSE_USE_VERSION 312

#include <fuse_lowlevel.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "bdi.h"
#include "cmac.h"
#include "itable.h"
#include "names.h"
#include "xts.h"

struct rinode;

/* struct rfs - one reverse-mode view. */
struct rfs {
	int root_fd;                    /* the plaintext directory, O_PATH */
	const struct xts_ctx *xts;      /* contents key */
	const struct names_ctx *names;  /* names key; NULL: plaintext names */
	struct aes_cmac_key *idkey;     /* header key: id derivation (locked) */
	const char *mountpoint;         /* for log lines */
	struct bdi_tune readahead;      /* applied at the first open */
	struct rinode *root;            /* FUSE_ROOT_ID, not in the table */
	struct itable inodes;           /* the rest, by (kind, k1, k2) */
};

/* rfs_init() - the root inode. Return: 0 or -errno. */
int rfs_init(struct rfs *fs);

/* rfs_destroy() - free every inode. */
void rfs_destroy(struct rfs *fs);

/* The low-level operations; userdata is the struct rfs. */
extern const struct fuse_lowlevel_ops rfs_ops;

#endif /* XTSFS_REVERSE_H */
