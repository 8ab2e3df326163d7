/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_aes_ct.c - known-answer and round-trip tests of the constant-time
 * bitsliced AES-256 in src/crypto/aes_ct.c.
 *
 *   - FIPS-197 Appendix C.3 (AES-256) in both directions, alone and in
 *     every one of the AES256_CT_PARALLEL lanes of a pass (the same block
 *     repeated), so a fault confined to one lane cannot hide;
 *   - decrypt(encrypt(x)) == x for 1..40 blocks, out of place at odd
 *     addresses and in place, and encrypt is not the identity;
 *   - the spread-key XEX path with zero masks agrees with ECB, and with
 *     non-zero masks it is E(x ^ m) ^ m.
 *
 * Standalone: no test framework; exit 0 on success, 1 on any failure,
 * with got/want printed in hex.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "aes_ct.h"

#define MAXBLK 40

static int failures;

static void hex(const char *label, const uint8_t *p, size_t len)
{
	fprintf(stderr, "  %s:", label);
	for (size_t i = 0; i < len; i++)
		fprintf(stderr, "%s%02x", i % 16 ? "" : " ", p[i]);
	fputc('\n', stderr);
}

static void expect(const char *what, const uint8_t *got, const uint8_t *want,
		   size_t len)
{
	if (memcmp(got, want, len) == 0)
		return;
	failures++;
	fprintf(stderr, "FAIL %s\n", what);
	hex("got ", got, len);
	hex("want", want, len);
}

/* A fixed, reproducible byte stream (xorshift64); not a secret. */
static uint64_t prng_state = 0x9e3779b97f4a7c15ull;

static void fill(uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		prng_state ^= prng_state << 13;
		prng_state ^= prng_state >> 7;
		prng_state ^= prng_state << 17;
		p[i] = (uint8_t)(prng_state >> 24);
	}
}

static void test_fips197(void)
{
	static const uint8_t pt[16] = {
		0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
		0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff,
	};
	static const uint8_t ct[16] = {
		0x8e, 0xa2, 0xb7, 0xca, 0x51, 0x67, 0x45, 0xbf,
		0xea, 0xfc, 0x49, 0x90, 0x4b, 0x49, 0x60, 0x89,
	};
	struct aes256_ct_key k;
	uint8_t key[32], out[16 * MAXBLK], in[16 * MAXBLK];
	char what[64];

	for (int i = 0; i < 32; i++)
		key[i] = (uint8_t)i;
	aes256_ct_setkey(&k, key);

	aes256_ct_encrypt_blocks(&k, out, pt, 1);
	expect("FIPS-197 C.3 encrypt", out, ct, 16);
	aes256_ct_decrypt_blocks(&k, out, ct, 1);
	expect("FIPS-197 C.3 decrypt", out, pt, 16);

	/* the same block in every lane of several passes plus a tail */
	for (int i = 0; i < MAXBLK; i++)
		memcpy(in + 16 * i, pt, 16);
	aes256_ct_encrypt_blocks(&k, out, in, MAXBLK - 1);
	for (int i = 0; i < MAXBLK - 1; i++) {
		snprintf(what, sizeof(what), "FIPS-197 C.3 encrypt, block %d",
			 i);
		expect(what, out + 16 * i, ct, 16);
	}
	for (int i = 0; i < MAXBLK; i++)
		memcpy(in + 16 * i, ct, 16);
	aes256_ct_decrypt_blocks(&k, in, in, MAXBLK - 1);
	for (int i = 0; i < MAXBLK - 1; i++) {
		snprintf(what, sizeof(what), "FIPS-197 C.3 decrypt, block %d",
			 i);
		expect(what, in + 16 * i, pt, 16);
	}
	expect("no write past the last block", in + 16 * (MAXBLK - 1), ct,
	       16);
}

static void test_roundtrip(void)
{
	/* +1: run at an odd address, nothing here may need alignment */
	static uint8_t pt[16 * MAXBLK + 1], ct[16 * MAXBLK + 1];
	static uint8_t back[16 * MAXBLK + 1], work[16 * MAXBLK + 1];
	struct aes256_ct_key k;
	uint8_t key[32];
	char what[64];

	for (size_t n = 1; n <= MAXBLK; n++) {
		size_t len = 16 * n;

		fill(key, sizeof(key));
		fill(pt + 1, len);
		aes256_ct_setkey(&k, key);

		aes256_ct_encrypt_blocks(&k, ct + 1, pt + 1, n);
		if (memcmp(ct + 1, pt + 1, len) == 0) {
			failures++;
			fprintf(stderr, "FAIL encrypt is the identity, "
				"n=%zu\n", n);
		}
		aes256_ct_decrypt_blocks(&k, back + 1, ct + 1, n);
		snprintf(what, sizeof(what), "round trip, %zu blocks", n);
		expect(what, back + 1, pt + 1, len);

		memcpy(work + 1, pt + 1, len);
		aes256_ct_encrypt_blocks(&k, work + 1, work + 1, n);
		snprintf(what, sizeof(what), "in-place encrypt, %zu blocks",
			 n);
		expect(what, work + 1, ct + 1, len);
		aes256_ct_decrypt_blocks(&k, work + 1, work + 1, n);
		snprintf(what, sizeof(what), "in-place decrypt, %zu blocks",
			 n);
		expect(what, work + 1, pt + 1, len);
	}
}

static void test_xex(void)
{
	static uint8_t pt[16 * MAXBLK], ct[16 * MAXBLK], mask[16 * MAXBLK];
	static uint8_t got[16 * MAXBLK], want[16 * MAXBLK];
	static struct aes256_ct_bskey bk;
	struct aes256_ct_key k;
	uint8_t key[32];
	char what[64];

	for (size_t n = 1; n <= MAXBLK; n += 3) {
		size_t len = 16 * n;

		fill(key, sizeof(key));
		fill(pt, len);
		aes256_ct_setkey(&k, key);
		aes256_ct_bskey_expand(&bk, &k);

		memset(mask, 0, len);
		aes256_ct_encrypt_blocks(&k, ct, pt, n);
		aes256_ct_xex_encrypt(&bk, got, pt, mask, n);
		snprintf(what, sizeof(what), "XEX, zero mask, %zu blocks", n);
		expect(what, got, ct, len);
		aes256_ct_xex_decrypt(&bk, got, ct, mask, n);
		snprintf(what, sizeof(what), "XEX dec, zero mask, %zu blocks",
			 n);
		expect(what, got, pt, len);

		/* want = E(pt ^ mask) ^ mask, through the ECB path */
		fill(mask, len);
		for (size_t i = 0; i < len; i++)
			want[i] = pt[i] ^ mask[i];
		aes256_ct_encrypt_blocks(&k, want, want, n);
		for (size_t i = 0; i < len; i++)
			want[i] ^= mask[i];
		memcpy(got, pt, len);
		aes256_ct_xex_encrypt(&bk, got, got, mask, n);
		snprintf(what, sizeof(what), "XEX, %zu blocks", n);
		expect(what, got, want, len);
		aes256_ct_xex_decrypt(&bk, got, got, mask, n);
		snprintf(what, sizeof(what), "XEX dec, %zu blocks", n);
		expect(what, got, pt, len);
	}
}

int main(void)
{
	test_fips197();
	test_roundtrip();
	test_xex();
	if (failures) {
		fprintf(stderr, "test_aes_ct: %d failure(s)\n", failures);
		return 1;
	}
	printf("test_aes_ct: ok\n");
	return 0;
}
