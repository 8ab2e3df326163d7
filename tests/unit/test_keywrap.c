/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_keywrap.c - AES key wrap (keywrap.c) against the RFC 3394 section 4
 * vectors with a 256-bit KEK, in both directions and in place; then that
 * any change to a wrapped blob, or a wrong KEK, gives -EBADMSG and a wiped
 * output; that bad lengths give -EINVAL and leave the output alone; and,
 * when OpenSSL is there, that random keys and lengths match
 * EVP_aes_256_wrap() both ways. Exit 0 on success, 1 on any failure.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "keywrap.h"
#include "testutil.h"

#if HAVE_OPENSSL
#include <openssl/err.h>
#include <openssl/evp.h>
#endif

#define MAXBUF (AES_KW_MAX_LEN + 2 * AES_KW_OVERHEAD)

/*
 * RFC 3394 (J. Schaad, R. Housley, September 2002), section 4, the three
 * examples with a 256-bit KEK, as printed there ("KEK:", "Key Data:" and
 * the final "Ciphertext:" of each wrap). Copied from the RFC text as
 * reproduced in Chromium's components/test/data/webcrypto/aes_kw.json
 * ("AES-KW test vectors from http://www.ietf.org/rfc/rfc3394.txt") and
 * cross-checked against libgcrypt tests/aeswrap.c and Bouncy Castle's
 * RFC 3394 tests, which print the same values.
 */
static const struct kw_vector {
	const char *name;
	const char *kek;
	const char *data;
	const char *wrapped;
} vectors[] = {
	{
		"RFC 3394 4.3 (128 bits of key data, 256-bit KEK)",
		"000102030405060708090A0B0C0D0E0F"
		"101112131415161718191A1B1C1D1E1F",
		"00112233445566778899AABBCCDDEEFF",
		"64E8C3F9CE0F5BA2 63E9777905818A2A 93C8191E7D6E8AE7",
	},
	{
		"RFC 3394 4.5 (192 bits of key data, 256-bit KEK)",
		"000102030405060708090A0B0C0D0E0F"
		"101112131415161718191A1B1C1D1E1F",
		"00112233445566778899AABBCCDDEEFF0001020304050607",
		"A8F9BC1612C68B3F F6E6F4FBE30E71E4 769C8B80A32CB895 "
		"8CD5D17D6B254DA1",
	},
	{
		"RFC 3394 4.6 (256 bits of key data, 256-bit KEK)",
		"000102030405060708090A0B0C0D0E0F"
		"101112131415161718191A1B1C1D1E1F",
		"00112233445566778899AABBCCDDEEFF"
		"000102030405060708090A0B0C0D0E0F",
		"28C9F404C4B810F4 CBCCB35CFB87F826 3F5786E2D80ED326 "
		"CBC7F0E71A99F43B FB988B9B7A02DD21",
	},
};

static void test_vectors(void)
{
	for (size_t v = 0; v < sizeof(vectors) / sizeof(vectors[0]); v++) {
		const struct kw_vector *tv = &vectors[v];
		uint8_t kek[32], data[64], wrapped[72], buf[72];
		size_t klen = test_unhex(kek, tv->kek);
		size_t dlen = test_unhex(data, tv->data);
		size_t wlen = test_unhex(wrapped, tv->wrapped);
		char what[128];

		if (klen != 32 || wlen != dlen + 8) {
			CHECK(0, "%s: bad vector lengths", tv->name);
			continue;
		}

		snprintf(what, sizeof(what), "%s wrap", tv->name);
		memset(buf, 0x5a, sizeof(buf));
		CHECK(aes_kw_wrap(buf, data, dlen, kek) == 0, "%s", what);
		test_memeq(what, buf, wrapped, wlen);

		snprintf(what, sizeof(what), "%s unwrap", tv->name);
		memset(buf, 0x5a, sizeof(buf));
		CHECK(aes_kw_unwrap(buf, wrapped, wlen, kek) == 0, "%s", what);
		test_memeq(what, buf, data, dlen);

		/* in place: the documented overlap case */
		snprintf(what, sizeof(what), "%s wrap in place", tv->name);
		memcpy(buf, data, dlen);
		CHECK(aes_kw_wrap(buf, buf, dlen, kek) == 0, "%s", what);
		test_memeq(what, buf, wrapped, wlen);
		snprintf(what, sizeof(what), "%s unwrap in place", tv->name);
		CHECK(aes_kw_unwrap(buf, buf, wlen, kek) == 0, "%s", what);
		test_memeq(what, buf, data, dlen);
		printf("%s: checked\n", tv->name);
	}
}

/*
 * Every byte of every vector's wrapped blob changed in turn (one bit,
 * a different bit position per byte so all eight get exercised), then a
 * KEK with one bit flipped: each must fail the integrity check, and the
 * output, pre-filled with a pattern, must come back all zeros.
 */
static void test_tamper(void)
{
	int before = test_failures;
	size_t cases = 0;

	for (size_t v = 0; v < sizeof(vectors) / sizeof(vectors[0]); v++) {
		const struct kw_vector *tv = &vectors[v];
		uint8_t kek[32], data[64], wrapped[72], bad[72], out[64];
		size_t dlen, wlen;

		test_unhex(kek, tv->kek);
		dlen = test_unhex(data, tv->data);
		wlen = test_unhex(wrapped, tv->wrapped);

		for (size_t i = 0; i < wlen; i++) {
			int rc;

			memcpy(bad, wrapped, wlen);
			bad[i] ^= (uint8_t)(1u << (i % 8));
			memset(out, 0x5a, sizeof(out));
			rc = aes_kw_unwrap(out, bad, wlen, kek);
			CHECK(rc == -EBADMSG, "%s: byte %zu flipped: rc %d",
			      tv->name, i, rc);
			CHECK(test_all_zero(out, dlen),
			      "%s: byte %zu flipped: output not wiped",
			      tv->name, i);
			cases++;
		}
		for (size_t bit = 0; bit < 256; bit += 37) {
			int rc;

			kek[bit / 8] ^= (uint8_t)(1u << (bit % 8));
			memset(out, 0x5a, sizeof(out));
			rc = aes_kw_unwrap(out, wrapped, wlen, kek);
			CHECK(rc == -EBADMSG, "%s: KEK bit %zu flipped: rc %d",
			      tv->name, bit, rc);
			CHECK(test_all_zero(out, dlen),
			      "%s: KEK bit %zu flipped: output not wiped",
			      tv->name, bit);
			kek[bit / 8] ^= (uint8_t)(1u << (bit % 8));
			cases++;
		}
	}
	printf("tampering: %zu cases %s\n", cases,
	       test_failures == before ? "all rejected and wiped" : "FAILED");
}

/* Bad lengths and NULLs: -EINVAL and the output buffer left untouched. */
static void test_bad_args(void)
{
	static const size_t bad_wrap[] = {
		0, 1, 8, 12, 15, 17, 23, 4095, 4097, 4100, 4104, 8192,
		SIZE_MAX & ~(size_t)7,
	};
	static const size_t bad_unwrap[] = {
		0, 1, 8, 16, 20, 23, 25, 31, 4103, 4105, 4112, 8192,
		SIZE_MAX & ~(size_t)7,
	};
	static uint8_t src[MAXBUF], dst[MAXBUF], ref[MAXBUF];
	uint8_t kek[32];
	int before = test_failures;
	int rc;

	memset(kek, 0x42, sizeof(kek));
	memset(src, 0x11, sizeof(src));
	memset(ref, 0x5a, sizeof(ref));

	for (size_t i = 0; i < sizeof(bad_wrap) / sizeof(bad_wrap[0]); i++) {
		memset(dst, 0x5a, sizeof(dst));
		rc = aes_kw_wrap(dst, src, bad_wrap[i], kek);
		CHECK(rc == -EINVAL, "wrap len %zu: rc %d", bad_wrap[i], rc);
		CHECK(!memcmp(dst, ref, sizeof(dst)),
		      "wrap len %zu: dst written", bad_wrap[i]);
	}
	for (size_t i = 0; i < sizeof(bad_unwrap) / sizeof(bad_unwrap[0]);
	     i++) {
		memset(dst, 0x5a, sizeof(dst));
		rc = aes_kw_unwrap(dst, src, bad_unwrap[i], kek);
		CHECK(rc == -EINVAL, "unwrap len %zu: rc %d", bad_unwrap[i],
		      rc);
		CHECK(!memcmp(dst, ref, sizeof(dst)),
		      "unwrap len %zu: dst written", bad_unwrap[i]);
	}
	CHECK(aes_kw_wrap(NULL, src, 16, kek) == -EINVAL, "wrap dst NULL");
	CHECK(aes_kw_wrap(dst, NULL, 16, kek) == -EINVAL, "wrap src NULL");
	CHECK(aes_kw_wrap(dst, src, 16, NULL) == -EINVAL, "wrap kek NULL");
	CHECK(aes_kw_unwrap(NULL, src, 24, kek) == -EINVAL, "unwrap dst NULL");
	CHECK(aes_kw_unwrap(dst, NULL, 24, kek) == -EINVAL, "unwrap src NULL");
	CHECK(aes_kw_unwrap(dst, src, 24, NULL) == -EINVAL, "unwrap kek NULL");

	/* the edges themselves are valid and round-trip */
	static const size_t edges[] = { AES_KW_MIN_LEN, AES_KW_MAX_LEN };
	for (size_t i = 0; i < 2; i++) {
		size_t len = edges[i];

		rng_bytes(src, len);
		CHECK(aes_kw_wrap(dst, src, len, kek) == 0, "wrap len %zu",
		      len);
		CHECK(aes_kw_unwrap(ref, dst, len + 8, kek) == 0,
		      "unwrap len %zu", len + 8);
		test_memeq("edge length round trip", ref, src, len);
	}
	printf("bad arguments: %s\n",
	       test_failures == before ? "ok" : "FAILED");
}

#if HAVE_OPENSSL
/* OpenSSL's RFC 3394 wrap (enc = 1) or unwrap (enc = 0); -1 on failure. */
static int ossl_kw(int enc, uint8_t *out, const uint8_t *in, size_t len,
		   const uint8_t kek[32])
{
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	int n = 0, fin = 0, ret = -1;

	if (!c)
		return -1;
	/* required before 3.0 for the wrap modes; harmless after */
	EVP_CIPHER_CTX_set_flags(c, EVP_CIPHER_CTX_FLAG_WRAP_ALLOW);
	/* IV NULL: the RFC 3394 default A6A6A6A6A6A6A6A6 */
	if (EVP_CipherInit_ex(c, EVP_aes_256_wrap(), NULL, kek, NULL, enc) ==
		    1 &&
	    EVP_CipherUpdate(c, out, &n, in, (int)len) == 1 &&
	    EVP_CipherFinal_ex(c, out + n, &fin) == 1)
		ret = n + fin;
	EVP_CIPHER_CTX_free(c);
	ERR_clear_error();
	return ret;
}

/* One random KEK and key data of @len bytes, both ways against OpenSSL. */
static int diff_one(size_t len)
{
	static uint8_t data[MAXBUF], ours[MAXBUF], theirs[MAXBUF],
		back[MAXBUF];
	uint8_t kek[32];
	char what[96];
	int before = test_failures;
	int n;

	rng_bytes(kek, sizeof(kek));
	rng_bytes(data, len);
	snprintf(what, sizeof(what), "len %zu vs OpenSSL", len);

	CHECK(aes_kw_wrap(ours, data, len, kek) == 0, "%s", what);
	n = ossl_kw(1, theirs, data, len, kek);
	CHECK(n == (int)(len + 8), "%s: OpenSSL wrap gave %d", what, n);
	test_memeq(what, ours, theirs, len + 8);

	n = ossl_kw(0, back, ours, len + 8, kek);
	CHECK(n == (int)len, "%s: OpenSSL unwrap gave %d", what, n);
	test_memeq("OpenSSL unwrap of ours", back, data, len);

	memset(back, 0, len);
	CHECK(aes_kw_unwrap(back, theirs, len + 8, kek) == 0,
	      "%s: unwrap of OpenSSL's", what);
	test_memeq("our unwrap of OpenSSL's", back, data, len);
	return test_failures == before;
}

static void test_openssl(void)
{
	int before = test_failures;
	unsigned runs = 0;

	/* every length 16..512 four times, random ones, then the maximum */
	for (int round = 0; round < 4 && test_failures == before; round++)
		for (size_t len = 16; len <= 512 && diff_one(len); len += 8)
			runs++;
	for (int i = 0; i < 200 && test_failures == before; i++, runs++)
		diff_one(16 + 8 * (size_t)rng_below(63));
	if (test_failures == before && diff_one(AES_KW_MAX_LEN))
		runs++;
	printf("OpenSSL EVP_aes_256_wrap differential: %u runs %s\n", runs,
	       test_failures == before ? "ok" : "FAILED");
}
#endif

int main(void)
{
	rng_seed("test_keywrap");
	test_vectors();
	test_tamper();
	test_bad_args();
#if HAVE_OPENSSL
	test_openssl();
#else
	printf("OpenSSL differential: skipped (built without OpenSSL)\n");
#endif
	if (test_failures) {
		printf("test_keywrap: %d FAILED\n", test_failures);
		return 1;
	}
	printf("test_keywrap: all passed\n");
	return 0;
}
