/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmac.c - AES-256-CMAC (NIST SP 800-38B; RFC 4493 with a 256-bit key).
 *
 * CBC-MAC over the message with a zero IV, where the last block is first
 * XORed with K1 if it is a full block, or padded with 10...0 and XORed
 * with K2 if it is partial (or the message is empty). The chaining is
 * serial, so the AES core gets one block per call.
 */
#include "cmac.h"

#include <string.h>

/*
 * dst = src * x in GF(2^128) with the CMAC bit order: a 128-bit
 * big-endian left shift, then R_128 = 0x87 into the last byte if the bit
 * shifted out was 1. The condition is the secret msb of a value derived
 * from the key, so it becomes an all-ones/all-zeros mask, not a branch.
 */
static void cmac_dbl(uint8_t dst[16], const uint8_t src[16])
{
	uint8_t mask = (uint8_t)-(src[0] >> 7);

	for (int i = 0; i < 15; i++)
		dst[i] = (uint8_t)(src[i] << 1 | src[i + 1] >> 7);
	dst[15] = (uint8_t)(src[15] << 1) ^ (mask & 0x87);
}

static void xor_block(uint8_t *dst, const uint8_t *src)
{
	for (int i = 0; i < 16; i++)
		dst[i] ^= src[i];
}

/* see cmac.h */
void aes_cmac_setkey(struct aes_cmac_key *k, const uint8_t key[32])
{
	uint8_t l[16] = { 0 };

	aes256_blk_setkey(&k->aes, key);
	aes256_blk_encrypt(&k->aes, l, l, 1); /* L = E_K(0^128) */
	cmac_dbl(k->k1, l);
	cmac_dbl(k->k2, k->k1);
	explicit_bzero(l, sizeof(l));
}

/* see cmac.h */
void aes_cmac(const struct aes_cmac_key *k, uint8_t mac[16],
	      const uint8_t *msg, size_t len)
{
	uint8_t x[16] = { 0 };  /* the CBC chaining value C_i */
	uint8_t last[16];       /* M_n* with its subkey */
	size_t nfull;           /* blocks before the last one */
	size_t rem;             /* bytes in the last block, 0..16 */

	/* The last block is the final 1..16 bytes; empty counts as partial. */
	if (len == 0) {
		nfull = 0;
		rem = 0;
	} else {
		nfull = (len - 1) / 16;
		rem = len - 16 * nfull;
	}

	for (size_t i = 0; i < nfull; i++) {
		xor_block(x, msg + 16 * i);
		aes256_blk_encrypt(&k->aes, x, x, 1);
	}

	/* Branch on the length only: that is public. */
	if (rem == 16) {
		memcpy(last, msg + 16 * nfull, 16);
		xor_block(last, k->k1);
	} else {
		memset(last, 0, sizeof(last));
		if (rem)
			memcpy(last, msg + 16 * nfull, rem);
		last[rem] = 0x80;
		xor_block(last, k->k2);
	}
	xor_block(x, last);
	aes256_blk_encrypt(&k->aes, x, x, 1);
	memcpy(mac, x, 16);

	explicit_bzero(x, sizeof(x));
	explicit_bzero(last, sizeof(last));
}

/* see cmac.h */
void aes_cmac_wipe(struct aes_cmac_key *k)
{
	explicit_bzero(k, sizeof(*k));
}
