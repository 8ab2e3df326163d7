/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmac.h - AES-256-CMAC: the CMAC mode of NIST SP 800-38B with AES-256
 * as the block cipher (the RFC 4493 construction, which is written for
 * AES-128, with the 256-bit key; same subkeys, padding and chaining).
 * Full 128-bit tags only.
 *
 * The block cipher is the constant-time software AES (aes_ct.h); subkey
 * generation uses masks, not branches, on the secret L = E_K(0^128).
 * Branches and loop counts depend only on the message length, which is
 * public.
 */
#ifndef XTSFS_CMAC_H
#define XTSFS_CMAC_H

#include <stddef.h>
#include <stdint.h>

#include "aes_blk.h"

#define AES_CMAC_KEY_SIZE 32
#define AES_CMAC_TAG_SIZE 16

/*
 * struct aes_cmac_key - a keyed CMAC.
 * @aes: the expanded AES-256 key K.
 * @k1:  subkey K1 = dbl(E_K(0^128)), used when the last block is full.
 * @k2:  subkey K2 = dbl(K1), used when the last block is padded.
 *
 * Owns no pointers: aes_cmac_wipe() (or explicit_bzero() of the struct)
 * destroys the key. Read-only after aes_cmac_setkey(), so one key may
 * serve several threads at once.
 */
struct aes_cmac_key {
	struct aes256_blk aes;
	uint8_t k1[16];
	uint8_t k2[16];
};

/*
 * aes_cmac_setkey() - expand @key and derive the subkeys K1 and K2
 * (SP 800-38B section 6.1). Stack copies of L are wiped.
 * @k:   the keyed CMAC (output).
 * @key: the 32-byte AES-256 key.
 */
void aes_cmac_setkey(struct aes_cmac_key *k, const uint8_t key[32]);

/*
 * aes_cmac() - the 16-byte CMAC tag of a message (SP 800-38B 6.2).
 * @k:   the key from aes_cmac_setkey().
 * @mac: 16 bytes of output; may overlap @msg (it is written last).
 * @msg: the message, @len bytes; NULL is allowed when @len is 0.
 * @len: any length, 0 included.
 *
 * To verify a tag, compute it and compare with ct_memeq() (secmem.h),
 * never with memcmp().
 */
void aes_cmac(const struct aes_cmac_key *k, uint8_t mac[16],
	      const uint8_t *msg, size_t len);

/*
 * aes_cmac_wipe() - destroy the key: explicit_bzero() of all of @k.
 */
void aes_cmac_wipe(struct aes_cmac_key *k);

#endif /* XTSFS_CMAC_H */
