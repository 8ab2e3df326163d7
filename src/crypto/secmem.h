/* SPDX-License-Identifier: Apache-2.0 */
/*
 * secmem.h - memory for secrets: locked, excluded from core dumps, wiped.
 */
#ifndef XTSFS_SECMEM_H
#define XTSFS_SECMEM_H

#include <stdbool.h>
#include <stddef.h>

/*
 * secmem_alloc() - @len zeroed bytes, 64-byte aligned, in pages that are
 * mlock()ed (never swapped out, so keys never reach the swap device) and
 * marked MADV_DONTDUMP (never written to a core dump).
 * Return: the memory, or NULL with errno set (ENOMEM, or EPERM/EAGAIN when
 * the memory-lock limit is too low: see RLIMIT_MEMLOCK).
 */
void *secmem_alloc(size_t len);

/* secmem_free() - wipe, unlock and unmap memory from secmem_alloc(); NULL ok. */
void secmem_free(void *p);

/*
 * ct_memeq() - true if the @len bytes at @a and @b are equal, in time that
 * depends only on @len (no early exit that would leak where they differ).
 */
bool ct_memeq(const void *a, const void *b, size_t len);

/*
 * secmem_harden_process() - no core dumps and no ptrace attach by other
 * processes of the same user for the rest of this process's life
 * (PR_SET_DUMPABLE 0). Called by every tool before it reads a secret.
 * Return: 0 or -errno.
 */
int secmem_harden_process(void);

#endif /* XTSFS_SECMEM_H */
