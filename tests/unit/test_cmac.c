/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_cmac.c - AES-256-CMAC (cmac.c) against the NIST SP 800-38B AES-256
 * examples, subkeys included; the tag written over its own message; the
 * wipe; random messages with one bit flipped; and, when OpenSSL is
 * there, random keys and every message length 0..300 against OpenSSL's
 * EVP_MAC "CMAC" with AES-256-CBC.
 * Exit 0 on success, 1 on any failure.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmac.h"
#include "config.h"
#include "testutil.h"

#if HAVE_OPENSSL
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#endif

/*
 * NIST SP 800-38B (May 2005), Appendix D.3 "AES-256": the key, the
 * subkeys K1 and K2, and examples 9-12 with Mlen = 0, 128, 320 and 512
 * bits. The messages are prefixes of one 64-byte string (the SP 800-38A
 * sample plaintext). Copied as reproduced in Bouncy Castle's CMacTest
 * (output_k256_m0/m16/m40/m64) and in Go/Rust CMAC test suites citing
 * SP 800-38B D.3, which all agree.
 *
 * NIST's later CSRC example file (AES_CMAC.pdf, "CMAC-AES256",
 * Example #3) replaces the 40-byte message with a 20-byte one (Mlen =
 * 160); that tag is checked too, copied as quoted by CyberChef's CMAC
 * tests ("CMAC-AES256 NIST's CSRC Example #3") and the soft-aes crate.
 */
static const char d3_key[] =
	"603deb1015ca71be2b73aef0857d7781 1f352c073b6108d72d9810a30914dff4";
static const char d3_k1[] = "cad1ed03299eedac2e9a99808621502f";
static const char d3_k2[] = "95a3da06533ddb585d3533010c42a0d9";
static const char d3_msg[] =
	"6bc1bee22e409f96e93d7e117393172a ae2d8a571e03ac9c9eb76fac45af8e51 "
	"30c81c46a35ce411e5fbc1191a0a52ef f69f2445df4f9b17ad2b417be66c3710";

static const struct cmac_vector {
	const char *name;
	size_t mlen; /* bytes of d3_msg */
	const char *tag;
} vectors[] = {
	{ "SP 800-38B D.3 Example 9 (Mlen = 0)", 0,
	  "028962f61b7bf89efc6b551f4667d983" },
	{ "SP 800-38B D.3 Example 10 (Mlen = 128)", 16,
	  "28a7023f452e8f82bd4bf28d8c37c35c" },
	{ "NIST CSRC CMAC-AES256 Example #3 (Mlen = 160)", 20,
	  "156727dc0878944a023c1fe03bad6d93" },
	{ "SP 800-38B D.3 Example 11 (Mlen = 320)", 40,
	  "aaf3d8f1de5640c232f5b169b9c911e6" },
	{ "SP 800-38B D.3 Example 12 (Mlen = 512)", 64,
	  "e1992190549f6ed5696a2c056c315410" },
};

static void test_vectors(void)
{
	struct aes_cmac_key k;
	uint8_t key[32], k1[16], k2[16], msg[64], want[16], mac[16], buf[64];
	int before = test_failures;

	if (test_unhex(key, d3_key) != 32 || test_unhex(k1, d3_k1) != 16 ||
	    test_unhex(k2, d3_k2) != 16 || test_unhex(msg, d3_msg) != 64)
		abort();

	aes_cmac_setkey(&k, key);
	test_memeq("SP 800-38B D.3 subkey K1", k.k1, k1, 16);
	test_memeq("SP 800-38B D.3 subkey K2", k.k2, k2, 16);

	for (size_t v = 0; v < sizeof(vectors) / sizeof(vectors[0]); v++) {
		const struct cmac_vector *tv = &vectors[v];
		char what[128];

		if (test_unhex(want, tv->tag) != 16)
			abort();
		memset(mac, 0x5a, sizeof(mac));
		aes_cmac(&k, mac, tv->mlen ? msg : NULL, tv->mlen);
		test_memeq(tv->name, mac, want, 16);

		/* the tag may overwrite the start of its own message */
		if (tv->mlen >= 16) {
			memcpy(buf, msg, tv->mlen);
			aes_cmac(&k, buf, buf, tv->mlen);
			snprintf(what, sizeof(what), "%s, mac == msg",
				 tv->name);
			test_memeq(what, buf, want, 16);
		}
		printf("%s: checked\n", tv->name);
	}

	aes_cmac_wipe(&k);
	{
		static const struct aes_cmac_key zero;

		CHECK(!memcmp(&k, &zero, sizeof(k)),
		      "aes_cmac_wipe left key bytes behind");
	}
	printf("vectors, subkeys and wipe: %s\n",
	       test_failures == before ? "ok" : "FAILED");
}

/*
 * Without any reference: for random keys and lengths, the tag written
 * over its own message equals the tag written elsewhere, and changing
 * any one message bit changes the tag (a wrong block boundary or a
 * skipped tail byte would not).
 */
static void test_random(void)
{
	static uint8_t msg[300], buf[300];
	struct aes_cmac_key k;
	uint8_t key[32], mac[16], mac2[16];
	int before = test_failures;
	unsigned runs = 0;

	for (int i = 0; i < 300 && test_failures == before; i++, runs++) {
		size_t len = 1 + (size_t)rng_below(300);
		size_t bit = (size_t)(rng_next() % (8 * len));
		char what[64];

		rng_bytes(key, sizeof(key));
		rng_bytes(msg, len);
		aes_cmac_setkey(&k, key);
		aes_cmac(&k, mac, msg, len);
		if (len >= 16) {
			memcpy(buf, msg, len);
			aes_cmac(&k, buf, buf, len);
			snprintf(what, sizeof(what), "len %zu, mac == msg",
				 len);
			test_memeq(what, buf, mac, 16);
		}
		msg[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		aes_cmac(&k, mac2, msg, len);
		CHECK(memcmp(mac, mac2, 16) != 0,
		      "len %zu: flipping bit %zu left the tag unchanged", len,
		      bit);
	}
	aes_cmac_wipe(&k);
	printf("random in-place and bit-flip checks: %u runs %s\n", runs,
	       test_failures == before ? "ok" : "FAILED");
}

#if HAVE_OPENSSL
/* OpenSSL 3 CMAC with AES-256-CBC; 0 on success. */
static int ossl_cmac(uint8_t mac[16], const uint8_t key[32],
		     const uint8_t *msg, size_t len)
{
	EVP_MAC *m = EVP_MAC_fetch(NULL, "CMAC", NULL);
	EVP_MAC_CTX *c = m ? EVP_MAC_CTX_new(m) : NULL;
	char cipher[] = "AES-256-CBC";
	OSSL_PARAM params[] = {
		OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_CIPHER,
						 cipher, 0),
		OSSL_PARAM_construct_end(),
	};
	size_t outl = 0;
	int ret = -1;

	if (c && EVP_MAC_init(c, key, 32, params) == 1 &&
	    EVP_MAC_update(c, msg, len) == 1 &&
	    EVP_MAC_final(c, mac, &outl, 16) == 1 && outl == 16)
		ret = 0;
	EVP_MAC_CTX_free(c);
	EVP_MAC_free(m);
	ERR_clear_error();
	return ret;
}

static void test_openssl(void)
{
	static uint8_t msg[300 + 16];
	struct aes_cmac_key k;
	uint8_t key[32], ours[16], theirs[16];
	int before = test_failures;
	unsigned runs = 0;

	/* every length 0..300 three times, at a random misalignment */
	for (int round = 0; round < 3 && test_failures == before; round++) {
		for (size_t len = 0; len <= 300 && test_failures == before;
		     len++) {
			size_t off = (size_t)rng_below(16);
			char what[64];

			rng_bytes(key, sizeof(key));
			rng_bytes(msg + off, len);
			snprintf(what, sizeof(what), "len %zu vs OpenSSL",
				 len);
			aes_cmac_setkey(&k, key);
			aes_cmac(&k, ours, msg + off, len);
			CHECK(ossl_cmac(theirs, key, msg + off, len) == 0,
			      "%s: OpenSSL CMAC failed", what);
			test_memeq(what, ours, theirs, 16);
			runs++;
		}
	}
	aes_cmac_wipe(&k);
	printf("OpenSSL EVP_MAC CMAC(AES-256-CBC) differential: %u runs %s\n",
	       runs, test_failures == before ? "ok" : "FAILED");
}
#endif

int main(void)
{
	rng_seed("test_cmac");
	test_vectors();
	test_random();
#if HAVE_OPENSSL
	test_openssl();
#else
	printf("OpenSSL differential: skipped (built without OpenSSL)\n");
#endif
	if (test_failures) {
		printf("test_cmac: %d FAILED\n", test_failures);
		return 1;
	}
	printf("test_cmac: all passed\n");
	return 0;
}
