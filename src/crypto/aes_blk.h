/* SPDX-License-Identifier: Apache-2.0 */
/*
 * aes_blk.h - AES-256 encryption of a few blocks at a time, for CMAC,
 * AES-SIV (the names) and the key wrap: with AES-NI when the chosen
 * cipher core is one of the x86 ones, else with the constant-time
 * software core (aes_ct.h). Both are constant time: AESENC takes no
 * data-dependent time, aes_ct is bitsliced. The software core encrypts
 * eight blocks per pass whatever it is given, so the one-block calls of
 * CMAC's chain cost eight blocks there; AES-NI does one in 14 rounds.
 */
#ifndef XTSFS_AES_BLK_H
#define XTSFS_AES_BLK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "aes_ct.h"

/*
 * struct aes256_blk - one expanded AES-256 key. Set once, then read-only:
 * one key may serve many threads. Holds round keys: keep it in locked
 * memory (secmem_alloc) and wipe it with aes256_blk_wipe().
 */
struct aes256_blk {
	union {
		struct aes256_ct_key ct;         /* !ni: the software core's */
		_Alignas(16) uint8_t rk[15][16]; /* ni: FIPS-197 round keys */
	} u;
	bool ni;                                 /* which of the two */
};

/*
 * aes_blk_select() - make keys set from now on use AES-NI (@ni) or the
 * software core. xts_choose() calls it with the core it chose, so that
 * "--cipher software" keeps every AES computation in software. Before
 * any call, AES-NI is used where the CPU has it and it passes the
 * known-answer test. Return: 0, or -EIO when @ni and AES-NI fails that
 * test (or is absent); the selection is then left unchanged.
 */
int aes_blk_select(bool ni) __attribute__((warn_unused_result));

/*
 * aes_blk_selftest() - the FIPS-197 AES-256 known answer (appendix C.3)
 * through AES-NI (@ni) or the software core. Return: 0 or -EIO.
 */
int aes_blk_selftest(bool ni) __attribute__((warn_unused_result));

/* aes256_blk_setkey() - expand @key for the selected implementation. */
void aes256_blk_setkey(struct aes256_blk *k, const uint8_t key[32]);

/*
 * aes256_blk_setkey_impl() - expand @key for AES-NI (@ni; the caller has
 * checked cpu_features()->aesni) or the software core, whatever is
 * selected: for the tests that compare the two.
 */
void aes256_blk_setkey_impl(struct aes256_blk *k, const uint8_t key[32],
			    bool ni);

/*
 * aes256_blk_encrypt() - encrypt @nblocks 16-byte blocks from @src to
 * @dst (which may be equal): ECB, the building block of the callers.
 */
void aes256_blk_encrypt(const struct aes256_blk *k, uint8_t *dst,
			const uint8_t *src, size_t nblocks);

/* aes256_blk_wipe() - erase the round keys. */
void aes256_blk_wipe(struct aes256_blk *k);

#endif /* XTSFS_AES_BLK_H */
