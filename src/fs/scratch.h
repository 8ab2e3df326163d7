/* SPDX-License-Identifier: Apache-2.0 */
/*
 * scratch.h - per-thread buffers: one allocation each per worker thread
 * and use, reused by every request (no malloc per read or write), freed
 * when the thread ends. No FUSE types.
 */
#ifndef XTSFS_SCRATCH_H
#define XTSFS_SCRATCH_H

#include <stddef.h>
#include <stdint.h>

/*
 * enum scratch_slot - one buffer per use that may be live at the same
 * time in one request.
 */
enum scratch_slot {
	SCRATCH_WRITE,       /* content.c: the new ciphertext of a write */
	SCRATCH_KEEP,        /* content.c: the old ciphertext it overwrites */
	SCRATCH_REPLY,       /* the reply of a request: read data, a listing */
	SCRATCH_UNITS,       /* reverse read: the whole units of a range */
	SCRATCH_HOLES,       /* reverse read: which of those units are holes */
	SCRATCH_XATTR,       /* a stored xattr value or name list */
	SCRATCH_LISTING,     /* dirlist.c: a listing without a handle */
	SCRATCH_SLOTS
};

/*
 * scratch_get() - the calling thread's buffer @slot: at least @len bytes
 * (at least 1 MiB + 8 KiB, so a request's usual sizes need one
 * allocation), 64-byte aligned, valid until its next call with the same
 * slot, freed when the thread ends. NULL if out of memory.
 */
uint8_t *scratch_get(enum scratch_slot slot, size_t len);

#endif /* XTSFS_SCRATCH_H */
