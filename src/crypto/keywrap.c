/* SPDX-License-Identifier: Apache-2.0 */
/*
 * keywrap.c - AES key wrap (RFC 3394, NIST SP 800-38F KW) with AES-256.
 *
 * The index-based form of RFC 3394 section 2.2.1: the n semiblocks R[i]
 * are updated in place in the output buffer, and A, the running check
 * value, sits in the first half of the one 16-byte block B that goes
 * through the cipher. Every AES call is one block, serially dependent on
 * the previous one, so there is nothing to batch: wrapping n semiblocks
 * costs 6n block operations, a few thousand at most for a 4 KiB blob.
 */
#include "keywrap.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "aes_ct.h"
#include "secmem.h"

/* the default initial value of RFC 3394 section 2.2.3.1 */
static const uint8_t kw_iv[8] = {
	0xa6, 0xa6, 0xa6, 0xa6, 0xa6, 0xa6, 0xa6, 0xa6,
};

/* A ^= t, with t as a 64-bit big-endian integer (the "MSB(64, B) ^ t"). */
static void xor_counter(uint8_t a[8], uint64_t t)
{
	for (int i = 7; i >= 0; i--) {
		a[i] ^= (uint8_t)t;
		t >>= 8;
	}
}

/* see keywrap.h */
int aes_kw_wrap(uint8_t *dst, const uint8_t *src, size_t len,
		const uint8_t kek[32])
{
	struct aes256_ct_key k;
	uint8_t b[16]; /* B = A | R[i]; A lives on in b[0..7] */
	size_t n = len / 8;
	uint64_t t = 0;

	if (!dst || !src || !kek || len % 8 || len < AES_KW_MIN_LEN ||
	    len > AES_KW_MAX_LEN)
		return -EINVAL;

	/* Copy first, so overlapping (and in-place) buffers are fine. */
	memmove(dst + 8, src, len);
	aes256_ct_setkey(&k, kek);
	memcpy(b, kw_iv, 8);
	for (int j = 0; j <= 5; j++) {
		for (size_t i = 1; i <= n; i++) {
			memcpy(b + 8, dst + 8 * i, 8);
			aes256_ct_encrypt_blocks(&k, b, b, 1);
			xor_counter(b, ++t); /* t = n * j + i */
			memcpy(dst + 8 * i, b + 8, 8);
		}
	}
	memcpy(dst, b, 8);

	explicit_bzero(&k, sizeof(k));
	explicit_bzero(b, sizeof(b));
	return 0;
}

/* see keywrap.h */
int aes_kw_unwrap(uint8_t *dst, const uint8_t *src, size_t len,
		  const uint8_t kek[32])
{
	struct aes256_ct_key k;
	uint8_t b[16]; /* B = (A ^ t) | R[i]; A lives on in b[0..7] */
	size_t n = len / 8 - 1;
	uint64_t t;
	bool ok;

	if (!dst || !src || !kek || len % 8 ||
	    len < AES_KW_MIN_LEN + AES_KW_OVERHEAD ||
	    len > AES_KW_MAX_LEN + AES_KW_OVERHEAD)
		return -EINVAL;

	/* A first: the memmove may overwrite it when the buffers overlap. */
	memcpy(b, src, 8);
	memmove(dst, src + 8, len - 8);
	aes256_ct_setkey(&k, kek);
	t = 6 * (uint64_t)n;
	for (int j = 5; j >= 0; j--) {
		for (size_t i = n; i >= 1; i--) {
			xor_counter(b, t--); /* t = n * j + i */
			memcpy(b + 8, dst + 8 * (i - 1), 8);
			aes256_ct_decrypt_blocks(&k, b, b, 1);
			memcpy(dst + 8 * (i - 1), b + 8, 8);
		}
	}

	/*
	 * Constant time up to here and in the compare itself: the only thing
	 * that may leak is the one bit "it matched", which the return value
	 * tells anyway. Not where the first difference was.
	 */
	ok = ct_memeq(b, kw_iv, 8);
	explicit_bzero(&k, sizeof(k));
	explicit_bzero(b, sizeof(b));
	if (!ok) {
		/* A wrong KEK still "decrypts": never hand out that output. */
		explicit_bzero(dst, len - 8);
		return -EBADMSG;
	}
	return 0;
}
