/* SPDX-License-Identifier: Apache-2.0 */
/*
 * aes_x86.h - the AES-256 key schedule shared by the "aesni", "vaes" and
 * "zmm" cores (FIPS-197 section 5.2, computed with AESKEYGENASSIST), and
 * the AES-NI block encryption behind aes_blk.h.
 */
#ifndef XTSFS_AES_X86_H
#define XTSFS_AES_X86_H

#include <stddef.h>
#include <stdint.h>

#include "xts.h"

/*
 * struct aes_x86_keys - what the x86 cores keep in xts_ctx->state.
 * Round keys are stored as raw 16-byte blocks so this header needs no
 * intrinsics; load them with _mm_load_si128 (16-byte aligned).
 */
struct aes_x86_keys {
	_Alignas(64) uint8_t ek1[15][16]; /* Key1 encryption round keys */
	_Alignas(64) uint8_t dk1[15][16]; /* Key1 decryption round keys, in
					   * the order AESDEC uses them:
					   * dk1[0] = ek1[14], dk1[r] =
					   * AESIMC(ek1[14 - r]), dk1[14] = ek1[0] */
	_Alignas(64) uint8_t ek2[15][16]; /* Key2 (tweak) encryption keys */
};

_Static_assert(sizeof(struct aes_x86_keys) <= XTS_CTX_STATE_SIZE,
	       "x86 keys must fit in xts_ctx");

/*
 * aes_x86_setkey() - fill ctx->state with a struct aes_x86_keys for
 * Key1 || Key2. Needs AES-NI; only called after a probe passed.
 */
void aes_x86_setkey(struct xts_ctx *ctx, const uint8_t key[XTS_KEY_SIZE]);

/*
 * aes_x86_expand() - the 15 encryption round keys of one AES-256 @key
 * into @rk (16-byte aligned). Needs AES-NI (cpu_features()->aesni).
 */
void aes_x86_expand(uint8_t rk[15][16], const uint8_t key[32]);

/*
 * aes_x86_encrypt_blocks() - encrypt @nblocks 16-byte blocks from @src
 * to @dst (may be equal) with the round keys @rk of aes_x86_expand():
 * ECB, four blocks in flight. For CMAC, AES-SIV and the key wrap
 * (aes_blk.h). Needs AES-NI.
 */
void aes_x86_encrypt_blocks(const uint8_t rk[15][16], uint8_t *dst,
			    const uint8_t *src, size_t nblocks);

#endif /* XTSFS_AES_X86_H */
