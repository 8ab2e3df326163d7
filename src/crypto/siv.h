/* SPDX-License-Identifier: Apache-2.0 */
/*
 * siv.h - AES-SIV (RFC 5297) with AES-256: deterministic authenticated
 * encryption, the name cipher of doc/FORMAT.md section 4.
 *
 * The 64-byte key is K1 || K2 as in RFC 5297 section 2.2: K1 = key[0..32)
 * keys S2V (AES-256-CMAC, cmac.h), K2 = key[32..64) keys CTR (aes_ct.h).
 * This is the key layout of "AES-SIV-CMAC-512" / OpenSSL's AES-256-SIV.
 * A message is encrypted to V || C, where V is the 16-byte synthetic IV
 * (the S2V of the associated data and the plaintext) and C has the
 * length of the plaintext; V is the authenticator, checked on decryption.
 *
 * Everything runs on the constant-time software AES: no table lookups
 * or branches on keys, plaintexts or S2V intermediates. Branches depend
 * only on lengths and on V, which is public (it is part of the output).
 */
#ifndef XTSFS_SIV_H
#define XTSFS_SIV_H

#include <stddef.h>
#include <stdint.h>

#include "cmac.h"

#define AES_SIV_KEY_SIZE 64
#define AES_SIV_IV_SIZE 16
/* most associated-data components a caller may pass (RFC 5297 allows 126) */
#define AES_SIV_MAX_AD 8

/*
 * struct siv_ad - one associated-data component, one S2V input string.
 * @p:   the bytes; may be NULL when @len is 0.
 * @len: their number; an empty component is still a component (it
 *       changes V), which is not the same as leaving it out.
 */
struct siv_ad {
	const uint8_t *p;
	size_t len;
};

/*
 * struct aes_siv_key - a keyed AES-SIV.
 * @mac: K1 for S2V, expanded with its CMAC subkeys.
 * @d0:  CMAC(K1, <zero>), where every S2V starts: a function of K1 alone.
 * @ctr: K2 for CTR, expanded.
 *
 * Owns no pointers: aes_siv_wipe() (or explicit_bzero() of the struct)
 * destroys the key. Read-only after aes_siv_setkey(), so one key may serve
 * several threads at once. Put it in locked memory (secmem_alloc()).
 */
struct aes_siv_key {
	struct aes_cmac_key mac;
	uint8_t d0[16];
	struct aes256_blk ctr;
};

/*
 * aes_siv_setkey() - expand a 64-byte AES-SIV key.
 * @k:   the keyed SIV (output).
 * @key: K1 || K2, 32 bytes each.
 */
void aes_siv_setkey(struct aes_siv_key *k, const uint8_t key[64]);

/*
 * aes_siv_wipe() - destroy the key: explicit_bzero() of all of @k.
 */
void aes_siv_wipe(struct aes_siv_key *k);

/*
 * aes_siv_encrypt() - SIV-Encrypt of RFC 5297 section 2.6.
 * @k:   the key from aes_siv_setkey().
 * @out: @len + 16 bytes of output, V || C. Must not overlap @in.
 * @in:  the plaintext, @len bytes; NULL is allowed when @len is 0.
 * @len: any length, 0 included (then the output is V alone).
 * @ad:  the associated-data components AD1..ADn, in order; NULL if @nad
 *       is 0.
 * @nad: their number, at most AES_SIV_MAX_AD.
 *
 * Deterministic: equal (key, AD, plaintext) give equal output, and that
 * is the point (see doc/FORMAT.md 4.1).
 */
void aes_siv_encrypt(const struct aes_siv_key *k, uint8_t *out,
		     const uint8_t *in, size_t len, const struct siv_ad *ad,
		     size_t nad);

/*
 * aes_siv_decrypt() - SIV-Decrypt of RFC 5297 section 2.7.
 * @k:   the key from aes_siv_setkey().
 * @out: @len - 16 bytes of output, the plaintext. Must not overlap @in.
 * @in:  V || C, @len bytes.
 * @len: at least 16.
 * @ad:  the associated data, exactly as given to aes_siv_encrypt().
 * @nad: their number, at most AES_SIV_MAX_AD.
 *
 * V is recomputed over the decrypted plaintext and compared with
 * ct_memeq(), so the time taken does not depend on where they differ.
 *
 * Return: 0, or -EBADMSG if V does not verify (or @len < 16); then all
 * of @out is zeroed, so no unauthenticated plaintext is ever released.
 */
int aes_siv_decrypt(const struct aes_siv_key *k, uint8_t *out,
		    const uint8_t *in, size_t len, const struct siv_ad *ad,
		    size_t nad)
	__attribute__((warn_unused_result));

#endif /* XTSFS_SIV_H */
