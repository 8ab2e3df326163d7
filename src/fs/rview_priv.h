/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rview_priv.h - what the files of the reverse view (rview.c: inodes,
 * ids, names, lookup, listings; rview_read.c: open and range reads)
 * share. Not for the front end: it sees struct rinode as opaque.
 */
#ifndef XTSFS_RVIEW_PRIV_H
#define XTSFS_RVIEW_PRIV_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "itable.h"
#include "rview.h"

enum rkind {
	R_REAL,      /* a plaintext object */
	R_HEADER,    /* xtsfs.volume: the bytes of .xtsfs.volume */
	R_DIRID,     /* xtsfs.dirid of a directory */
	R_SIDECAR,   /* xtsfs.long.*.name, xtsfs.link.*: fixed text */
};

/* struct rinode - one object of the view. */
struct rinode {
	/*
	 * First: the table's key, (enum rkind, k1, k2): REAL (dev, ino),
	 * else synthetic; and the kernel's references.
	 */
	struct itable_node node;
	int fd;                   /* REAL: O_PATH of the plaintext object */
	mode_t type;              /* S_IFMT of what the view shows */
	pthread_mutex_t lock;     /* ids below */
	bool ids_ok;              /* id[] is derived */
	uint8_t id[16];           /* REAL dir: dirid; REAL file: file id */
	uint8_t *content;         /* virtual: the file's bytes */
	size_t clen;              /* virtual: their length */
	struct timespec mtime;    /* virtual: modification time */
	uint64_t vino;            /* the inode number the view shows */
};

/*
 * rview_derive_id() - derive @in's dirid (a directory) or file id (a
 * regular file) into @in->id, once (FORMAT 5.2). The root's is set
 * already (zeros). Return: 0 or -errno (logged).
 */
int rview_derive_id(struct rfs *fs, struct rinode *in);

#endif /* XTSFS_RVIEW_PRIV_H */
