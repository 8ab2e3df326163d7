/* SPDX-License-Identifier: Apache-2.0 */
/*
 * aes_ct.h - constant-time, bitsliced software AES-256 (FIPS-197).
 *
 * The block cipher behind the "software" XTS core (xts_soft.c) and the
 * small users that need plain AES-256 on any CPU (key wrap, CMAC, the
 * name cipher). Nothing here indexes memory or branches on secret data:
 * the S-box is a Boolean circuit evaluated on bit planes, never a table.
 * See aes_ct.c for the representation.
 *
 * Two levels:
 *   - struct aes256_ct_key and the ECB calls: the key schedule in compact
 *     form (240 bytes); round keys are spread to bit planes on the fly.
 *   - struct aes256_ct_bskey and the XEX calls: the round keys already
 *     spread to bit planes (1920 bytes), for callers that run many blocks
 *     under one key; it is meant to live on the caller's stack for one
 *     call and be wiped with explicit_bzero() afterwards.
 */
#ifndef XTSFS_AES_CT_H
#define XTSFS_AES_CT_H

#include <stddef.h>
#include <stdint.h>

#define AES256_CT_ROUNDS 14
/* blocks the core encrypts per bitsliced pass; batch at least this many */
#define AES256_CT_PARALLEL 8

/*
 * struct aes256_ct_key - an expanded AES-256 key (FIPS-197 section 5.2).
 * @rk: the 15 round keys in cipher order. Rounds 1..14 have the S-box
 *      constant 0x63 XORed into every byte (the S-box circuit leaves it
 *      out; MixColumns maps an all-0x63 state to itself, so it can ride
 *      along with the round key). Used for both directions.
 *
 * Owns no pointers: wiping the struct wipes the key.
 */
struct aes256_ct_key {
	uint8_t rk[AES256_CT_ROUNDS + 1][16];
};

/*
 * struct aes256_ct_bskey - round keys of a struct aes256_ct_key spread to
 * the bitsliced layout: @plane[r][b] is bit b of every byte of round key
 * r, replicated for all AES256_CT_PARALLEL blocks of a pass.
 */
struct aes256_ct_bskey {
	_Alignas(16) uint32_t plane[AES256_CT_ROUNDS + 1][8][4];
};

/*
 * aes256_ct_setkey() - expand a 32-byte AES-256 key.
 * @k:   the expanded key (output).
 * @key: the cipher key.
 *
 * SubWord runs through the same bitsliced S-box circuit as the cipher,
 * so the schedule is constant-time too. Stack copies are wiped.
 */
void aes256_ct_setkey(struct aes256_ct_key *k, const uint8_t key[32]);

/*
 * aes256_ct_encrypt_blocks() - AES-256 ECB encryption of @nblocks blocks.
 * @k:       the key from aes256_ct_setkey().
 * @dst:     16 * @nblocks bytes of output.
 * @src:     16 * @nblocks bytes of input. @dst == @src is allowed;
 *           otherwise the buffers must not overlap. No alignment needed.
 * @nblocks: number of 16-byte blocks; 0 is a no-op.
 *
 * Work is done AES256_CT_PARALLEL blocks at a time, so one block costs
 * as much as eight.
 */
void aes256_ct_encrypt_blocks(const struct aes256_ct_key *k, uint8_t *dst,
			      const uint8_t *src, size_t nblocks);

/*
 * aes256_ct_decrypt_blocks() - AES-256 ECB decryption; the inverse of
 * aes256_ct_encrypt_blocks(), same contract.
 */
void aes256_ct_decrypt_blocks(const struct aes256_ct_key *k, uint8_t *dst,
			      const uint8_t *src, size_t nblocks);

/*
 * aes256_ct_bskey_expand() - spread the round keys of @k to bit planes.
 * @bk: output; secret, wipe it with explicit_bzero() when done.
 * @k:  the expanded key.
 */
void aes256_ct_bskey_expand(struct aes256_ct_bskey *bk,
			    const struct aes256_ct_key *k);

/*
 * aes256_ct_xex_encrypt() - dst_i = AES-Enc(src_i ^ mask_i) ^ mask_i.
 * @bk:      the bitsliced round keys.
 * @dst:     16 * @nblocks bytes; may equal @src, else no overlap.
 * @src:     16 * @nblocks bytes.
 * @mask:    16 * @nblocks bytes: one whitening value per block (the XTS
 *           tweaks T_j); may not overlap @dst.
 * @nblocks: number of blocks; 0 is a no-op.
 *
 * The mask is applied on the byte-ordered blocks just before the bit
 * transposition and after the inverse one, so it costs two XORs a block.
 */
void aes256_ct_xex_encrypt(const struct aes256_ct_bskey *bk, uint8_t *dst,
			   const uint8_t *src, const uint8_t *mask,
			   size_t nblocks);

/*
 * aes256_ct_xex_decrypt() - dst_i = AES-Dec(src_i ^ mask_i) ^ mask_i;
 * same contract as aes256_ct_xex_encrypt().
 */
void aes256_ct_xex_decrypt(const struct aes256_ct_bskey *bk, uint8_t *dst,
			   const uint8_t *src, const uint8_t *mask,
			   size_t nblocks);

#endif /* XTSFS_AES_CT_H */
