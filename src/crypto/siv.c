/* SPDX-License-Identifier: Apache-2.0 */
/*
 * siv.c - AES-SIV with AES-256 (RFC 5297; see siv.h).
 *
 * S2V (RFC 5297 section 2.4) chains one CMAC per associated-data string
 * through doublings in GF(2^128) and folds in the plaintext last; CTR
 * (sections 2.5-2.7) runs from V with two bits cleared. The final S2V
 * input T = P xorend D is formed in the caller's output buffer, which
 * holds a copy of the plaintext at that point, and is undone afterwards;
 * that way T needs no allocation of its own for any length.
 */
#include "siv.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "secmem.h"

/*
 * dbl() of RFC 5297 section 2.3, in place: a 128-bit big-endian left
 * shift, with 0x87 XORed into the last byte if the bit shifted out was 1.
 * D is secret (a CMAC under K1), so the condition is a mask, not a branch.
 */
static void siv_dbl(uint8_t b[16])
{
	uint8_t mask = (uint8_t)-(b[0] >> 7);

	for (int i = 0; i < 15; i++)
		b[i] = (uint8_t)(b[i] << 1 | b[i + 1] >> 7);
	b[15] = (uint8_t)(b[15] << 1) ^ (mask & 0x87);
}

static void xor16(uint8_t *dst, const uint8_t *src)
{
	for (int i = 0; i < 16; i++)
		dst[i] ^= src[i];
}

/*
 * S2V(K1, AD1, ..., ADn, P) of RFC 5297 section 2.4 into @v. @p is the
 * plaintext, @len bytes; it is modified during the call and restored.
 *
 * The plaintext is always the last S2V string, so there is at least one
 * string and the RFC's "n = 0" case (V = CMAC(<one>)) cannot occur here.
 * An empty plaintext is a short final string: T = dbl(D) xor pad(""),
 * with pad("") = 0x80 0^120.
 */
static void s2v(const struct aes_siv_key *k, uint8_t v[16],
		const struct siv_ad *ad, size_t nad, uint8_t *p, size_t len)
{
	uint8_t d[16];
	uint8_t t[16];

	memcpy(d, k->d0, 16); /* D = CMAC(K1, <zero>) */
	for (size_t i = 0; i < nad; i++) {
		aes_cmac(&k->mac, t, ad[i].p, ad[i].len);
		siv_dbl(d);
		xor16(d, t);
	}

	if (len >= 16) {
		/* T = P xorend D: D goes into the last 16 bytes of P */
		xor16(p + len - 16, d);
		aes_cmac(&k->mac, v, p, len);
		xor16(p + len - 16, d);
	} else {
		/* T = dbl(D) xor pad(P), pad = P || 0x80 || zeros to 16 */
		memset(t, 0, sizeof(t));
		if (len)
			memcpy(t, p, len);
		t[len] = 0x80;
		siv_dbl(d);
		xor16(t, d);
		aes_cmac(&k->mac, v, t, 16);
	}
	explicit_bzero(d, sizeof(d));
	explicit_bzero(t, sizeof(t));
}

/* Q + 1 modulo 2^128, big-endian; carries through all 16 bytes. */
static void ctr_inc(uint8_t c[16])
{
	unsigned int carry = 1;

	for (int i = 15; i >= 0; i--) {
		carry += c[i];
		c[i] = (uint8_t)carry;
		carry >>= 8;
	}
}

/*
 * dst = src xor AES-CTR(K2, Q) (RFC 5297 sections 2.6/2.7), @len bytes;
 * @dst == @src is allowed. Q is V with bits 63 and 31 cleared (the top
 * bits of bytes 8 and 12), so implementations with 32- or 64-bit counter
 * arithmetic agree with this full 128-bit increment for any message
 * shorter than 2^32 blocks. Keystream is made AES256_CT_PARALLEL blocks
 * at a time because the bitsliced core costs the same for 1 or 8.
 */
static void siv_ctr(const struct aes256_blk *k, uint8_t *dst,
		    const uint8_t *src, size_t len, const uint8_t v[16])
{
	uint8_t ks[AES256_CT_PARALLEL * 16];
	uint8_t q[16];

	memcpy(q, v, 16);
	q[8] &= 0x7f;
	q[12] &= 0x7f;
	while (len) {
		size_t nb = (len + 15) / 16;
		size_t n;

		if (nb > AES256_CT_PARALLEL)
			nb = AES256_CT_PARALLEL;
		for (size_t i = 0; i < nb; i++) {
			memcpy(ks + 16 * i, q, 16);
			ctr_inc(q);
		}
		aes256_blk_encrypt(k, ks, ks, nb);
		n = len < 16 * nb ? len : 16 * nb;
		for (size_t i = 0; i < n; i++)
			dst[i] = src[i] ^ ks[i];
		dst += n;
		src += n;
		len -= n;
	}
	explicit_bzero(ks, sizeof(ks));
}

/* see siv.h */
void aes_siv_setkey(struct aes_siv_key *k, const uint8_t key[64])
{
	aes_cmac_setkey(&k->mac, key);
	memset(k->d0, 0, sizeof(k->d0));
	aes_cmac(&k->mac, k->d0, k->d0, 16);
	aes256_blk_setkey(&k->ctr, key + 32);
}

/* see siv.h */
void aes_siv_wipe(struct aes_siv_key *k)
{
	explicit_bzero(k, sizeof(*k));
}

/* see siv.h */
void aes_siv_encrypt(const struct aes_siv_key *k, uint8_t *out,
		     const uint8_t *in, size_t len, const struct siv_ad *ad,
		     size_t nad)
{
	uint8_t *c = out + AES_SIV_IV_SIZE;

	/*
	 * S2V runs on a copy of P in the ciphertext slot (it needs to
	 * write T = P xorend D somewhere); CTR then encrypts it in place.
	 */
	if (len)
		memcpy(c, in, len);
	s2v(k, out, ad, nad, c, len);
	siv_ctr(&k->ctr, c, c, len, out);
}

/* see siv.h */
int aes_siv_decrypt(const struct aes_siv_key *k, uint8_t *out,
		    const uint8_t *in, size_t len, const struct siv_ad *ad,
		    size_t nad)
{
	uint8_t v[16];
	size_t plen;
	bool ok;

	if (len < AES_SIV_IV_SIZE)
		return -EBADMSG;
	plen = len - AES_SIV_IV_SIZE;
	siv_ctr(&k->ctr, out, in + AES_SIV_IV_SIZE, plen, in);
	s2v(k, v, ad, nad, out, plen);
	ok = ct_memeq(v, in, AES_SIV_IV_SIZE);
	explicit_bzero(v, sizeof(v));
	if (!ok) {
		/* the plaintext of a forgery must not leak out */
		if (plen)
			explicit_bzero(out, plen);
		return -EBADMSG;
	}
	return 0;
}
