/* SPDX-License-Identifier: Apache-2.0 */
/*
 * aes_blk.c - AES-256 blocks with AES-NI or the software core (aes_blk.h).
 */
#include "aes_blk.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include "aes_x86.h"
#include "cpu.h"

/* -1: not decided yet (AES-NI if it runs and passes); 0: software; 1: NI */
static atomic_int selected = -1;

/* see aes_blk.h */
void aes256_blk_setkey_impl(struct aes256_blk *k, const uint8_t key[32],
			    bool ni)
{
	k->ni = ni;
	if (ni)
		aes_x86_expand(k->u.rk, key);
	else
		aes256_ct_setkey(&k->u.ct, key);
}

/* see aes_blk.h */
void aes256_blk_encrypt(const struct aes256_blk *k, uint8_t *dst,
			const uint8_t *src, size_t nblocks)
{
	if (k->ni)
		aes_x86_encrypt_blocks(k->u.rk, dst, src, nblocks);
	else
		aes256_ct_encrypt_blocks(&k->u.ct, dst, src, nblocks);
}

/* see aes_blk.h */
void aes256_blk_wipe(struct aes256_blk *k)
{
	explicit_bzero(k, sizeof(*k));
}

/* see aes_blk.h */
int aes_blk_selftest(bool ni)
{
	/* FIPS-197 appendix C.3: AES-256 */
	static const uint8_t pt[16] = {
		0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
		0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff,
	};
	static const uint8_t want[16] = {
		0x8e, 0xa2, 0xb7, 0xca, 0x51, 0x67, 0x45, 0xbf,
		0xea, 0xfc, 0x49, 0x90, 0x4b, 0x49, 0x60, 0x89,
	};
	struct aes256_blk k;
	uint8_t key[32], buf[5 * 16];
	int rc = 0;

	if (ni && !cpu_features()->aesni)
		return -EIO;
	for (int i = 0; i < 32; i++)
		key[i] = (uint8_t)i;
	aes256_blk_setkey_impl(&k, key, ni);
	/* five blocks: the four-block path and the one-block path */
	for (int i = 0; i < 5; i++)
		memcpy(buf + 16 * i, pt, 16);
	aes256_blk_encrypt(&k, buf, buf, 5);
	for (int i = 0; i < 5; i++)
		if (memcmp(buf + 16 * i, want, 16))
			rc = -EIO;
	aes256_blk_wipe(&k);
	return rc;
}

/* see aes_blk.h */
int aes_blk_select(bool ni)
{
	if (ni && aes_blk_selftest(true))
		return -EIO;
	atomic_store(&selected, ni);
	return 0;
}

/* see aes_blk.h */
void aes256_blk_setkey(struct aes256_blk *k, const uint8_t key[32])
{
	int ni = atomic_load(&selected);

	if (ni < 0) {
		/* the same answer in every thread that gets here first */
		ni = cpu_features()->aesni && !aes_blk_selftest(true);
		atomic_store(&selected, ni);
	}
	aes256_blk_setkey_impl(k, key, ni);
}
