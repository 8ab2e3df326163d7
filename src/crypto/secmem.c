/* SPDX-License-Identifier: Apache-2.0 */
/*
 * secmem.c - locked, undumpable, wiped memory for keys (see secmem.h).
 *
 * Each allocation is its own anonymous mapping so that mlock() and
 * madvise() act on exactly the pages that hold it and nothing else is
 * ever mixed in with a secret. A small header before the returned
 * pointer records the mapping size.
 */
#include "secmem.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define SECMEM_HDR 64 /* keeps the returned pointer 64-byte aligned */

/* see secmem.h */
void *secmem_alloc(size_t len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t total;
	unsigned char *map;
	int err;

	if (len > SIZE_MAX - SECMEM_HDR - page) {
		errno = ENOMEM;
		return NULL;
	}
	total = (len + SECMEM_HDR + page - 1) / page * page;
	map = mmap(NULL, total, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		return NULL;
	/*
	 * Locked first: a key must never be written where swap could see it.
	 * The raw syscall, because sanitizer runtimes replace mlock() with a
	 * no-op and the sanitizer build must lock keys like any other.
	 */
	if (syscall(SYS_mlock, map, total) != 0)
		goto fail;
	/* Not fatal where unsupported: PR_SET_DUMPABLE covers core dumps too. */
	(void)madvise(map, total, MADV_DONTDUMP);
	/* A forked child (e.g. --extpass) gets zeros, not our keys. */
	(void)madvise(map, total, MADV_WIPEONFORK);
	memcpy(map, &total, sizeof(total));
	return map + SECMEM_HDR;
fail:
	err = errno;
	munmap(map, total);
	errno = err;
	return NULL;
}

/* see secmem.h */
void secmem_free(void *p)
{
	unsigned char *map;
	size_t total;

	if (!p)
		return;
	map = (unsigned char *)p - SECMEM_HDR;
	memcpy(&total, map, sizeof(total));
	explicit_bzero(map, total);
	syscall(SYS_munlock, map, total);
	munmap(map, total);
}

/* see secmem.h */
bool ct_memeq(const void *a, const void *b, size_t len)
{
	const volatile unsigned char *x = a, *y = b;
	unsigned char diff = 0;

	for (size_t i = 0; i < len; i++)
		diff |= x[i] ^ y[i];
	return diff == 0;
}

/* see secmem.h */
int secmem_harden_process(void)
{
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
		return -errno;
	return 0;
}
