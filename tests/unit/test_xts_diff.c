/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_xts_diff.c - differential test of every core this CPU can run
 * against OpenSSL's EVP aes-256-xts (an independent implementation) and
 * against the "software" core: random keys and tweaks; every length from
 * 16 to 4 KiB + 2 blocks (every tail, with and without ciphertext
 * stealing, after 0..8 full iterations of the widest core) and
 * log-uniform random lengths up to 1 MiB (most not multiples of 16); out
 * of place and in place; source and destination misaligned by 0..31
 * bytes, with canaries around the output that no core may touch; buffers
 * that end, or start, at a page next to an inaccessible one, so that a
 * core reading or writing a byte outside them (a masked tail done wrong)
 * crashes the test; and multi-unit calls (encrypt_units) against the same
 * units done one at a time, with unit numbers that cross byte boundaries
 * and reach 2^64 - 1. XTSFS_TEST_SEED reproduces a run; XTSFS_TEST_LONG=1
 * does ten times as many cases.
 */
#include <openssl/evp.h>
#include <sys/mman.h>
#include <unistd.h>

#include "testutil.h"
#include "xts.h"

#define MAX_LEN (1u << 20)
#define ALL_LENS (XTSFS_UNIT_SIZE + 32) /* every length 16..ALL_LENS */
#define CANARY 0xc3                     /* bytes around an output */
#define GUARD_LEN (3 * XTSFS_UNIT_SIZE) /* guarded buffer, <= 3 pages */

static uint8_t *pt, *ct, *ref, *work;
static uint8_t *g_lo[2], *g_hi[2]; /* guarded source, destination */
static EVP_CIPHER_CTX *ossl;

static void ossl_xts(int enc, uint8_t *dst, const uint8_t *src, size_t len,
		     const uint8_t key[64], const uint8_t tw[16])
{
	int outl = 0;

	if (EVP_CipherInit_ex(ossl, EVP_aes_256_xts(), NULL, key, tw, enc) != 1 ||
	    EVP_CipherUpdate(ossl, dst, &outl, src, (int)len) != 1 ||
	    (size_t)outl != len) {
		fprintf(stderr, "OpenSSL EVP aes-256-xts failed\n");
		exit(2);
	}
}

static void random_key(uint8_t key[64])
{
	do
		rng_bytes(key, 64);
	while (!memcmp(key, key + 32, 32));
}

static size_t random_len(void)
{
	/* log-uniform: many short lengths, some long ones, up to 1 MiB */
	size_t len = 16 + rng_below((uint64_t)1 << rng_below(21));

	return len > MAX_LEN ? MAX_LEN : len;
}

/* @buf[0..off) and @buf[off + len, off + len + 32) still hold CANARY? */
static void check_canary(const char *what, const uint8_t *buf, size_t off,
			 size_t len)
{
	for (size_t i = 0; i < off + len + 32; i++) {
		if (i == off)
			i += len;
		if (buf[i] != CANARY) {
			CHECK(0, "%s: byte %zd from the output's start, "
			      "outside it, was written", what,
			      (ssize_t)i - (ssize_t)off);
			return;
		}
	}
}

/* One unit of @len bytes through @be, checked against OpenSSL and @soft. */
static void check_one(const struct xts_backend *be, struct xts_ctx *ctx,
		      struct xts_ctx *soft, const uint8_t key[64], size_t len)
{
	uint8_t tw[16];
	size_t so = rng_below(32), doff = rng_below(32);
	char what[96];

	rng_bytes(tw, 16);
	rng_bytes(pt + so, len);
	ossl_xts(1, ref, pt + so, len, key, tw);

	snprintf(what, sizeof(what), "%s encrypt len %zu src+%zu dst+%zu",
		 be->name, len, so, doff);
	memset(ct, CANARY, doff + len + 32);
	CHECK_OK(xts_encrypt_one(ctx, ct + doff, pt + so, len, tw));
	check_canary(what, ct, doff, len);
	if (!test_memeq(what, ct + doff, ref, len))
		return;
	snprintf(what, sizeof(what), "%s decrypt len %zu", be->name, len);
	memset(work, CANARY, so + len + 32);
	CHECK_OK(xts_decrypt_one(ctx, work + so, ct + doff, len, tw));
	check_canary(what, work, so, len);
	test_memeq(what, work + so, pt + so, len);

	/* in place, at the odd offset */
	memcpy(work + doff, pt + so, len);
	CHECK_OK(xts_encrypt_one(ctx, work + doff, work + doff, len, tw));
	snprintf(what, sizeof(what), "%s encrypt in place len %zu", be->name,
		 len);
	test_memeq(what, work + doff, ref, len);
	CHECK_OK(xts_decrypt_one(ctx, work + doff, work + doff, len, tw));
	snprintf(what, sizeof(what), "%s decrypt in place len %zu", be->name,
		 len);
	test_memeq(what, work + doff, pt + so, len);

	/* core against core: the software core must agree byte for byte */
	if (soft && len <= 65536) {
		CHECK_OK(xts_encrypt_one(soft, work, pt + so, len, tw));
		snprintf(what, sizeof(what), "%s vs software len %zu",
			 be->name, len);
		test_memeq(what, ct + doff, work, len);
	}
}

/*
 * A buffer of GUARD_LEN bytes with an inaccessible page right before and
 * right after it: *@lo is its start, *@hi its end.
 */
static void guarded_map(uint8_t **lo, uint8_t **hi)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t inner = (GUARD_LEN + page - 1) / page * page;
	uint8_t *p = mmap(NULL, inner + 2 * page, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED || mprotect(p, page, PROT_NONE) ||
	    mprotect(p + page + inner, page, PROT_NONE)) {
		perror("test_xts_diff: guard pages");
		exit(2);
	}
	*lo = p + page;
	*hi = p + page + inner;
}

/*
 * @len bytes that end at an inaccessible page, then start right after
 * one: a core that touches one byte outside its source or destination
 * (a masked load or store of a tail done wrong) dies with SIGSEGV.
 */
static void check_guarded(const struct xts_backend *be, struct xts_ctx *ctx,
			  const uint8_t key[64], uint8_t *const lo[2],
			  uint8_t *const hi[2], size_t len)
{
	uint8_t tw[16];
	char what[96];

	rng_bytes(tw, 16);
	rng_bytes(pt, len);
	ossl_xts(1, ref, pt, len, key, tw);
	for (int at_end = 0; at_end < 2; at_end++) {
		uint8_t *s = at_end ? hi[0] - len : lo[0];
		uint8_t *d = at_end ? hi[1] - len : lo[1];

		memcpy(s, pt, len);
		snprintf(what, sizeof(what), "%s encrypt len %zu next to a "
			 "guard page (%s)", be->name, len,
			 at_end ? "after" : "before");
		CHECK_OK(xts_encrypt_one(ctx, d, s, len, tw));
		test_memeq(what, d, ref, len);
		CHECK_OK(xts_decrypt_one(ctx, s, d, len, tw));
		test_memeq(what, s, pt, len);
		CHECK_OK(xts_encrypt_one(ctx, s, s, len, tw)); /* in place */
		test_memeq(what, s, ref, len);
		CHECK_OK(xts_decrypt_one(ctx, s, s, len, tw));
		test_memeq(what, s, pt, len);
	}
}

/* nunits whole units in one call against the same units one by one. */
static void check_units(const struct xts_backend *be, struct xts_ctx *ctx,
			const uint8_t key[64], size_t nunits, uint64_t first)
{
	size_t len = nunits * XTSFS_UNIT_SIZE, off = rng_below(32);
	uint8_t id[16], tw[16];
	char what[128];

	rng_bytes(id, 16);
	rng_bytes(pt, len);
	for (size_t u = 0; u < nunits; u++) {
		xts_unit_tweak(tw, id, first + u);
		ossl_xts(1, ref + u * XTSFS_UNIT_SIZE, pt + u * XTSFS_UNIT_SIZE,
			 XTSFS_UNIT_SIZE, key, tw);
	}
	snprintf(what, sizeof(what),
		 "%s encrypt_units n=%zu first=%llu (vs OpenSSL unit by unit)",
		 be->name, nunits, (unsigned long long)first);
	CHECK_OK(xts_encrypt_units(ctx, ct + off, pt, nunits, id, first));
	test_memeq(what, ct + off, ref, len);
	for (size_t u = 0; u < nunits; u++) {
		xts_unit_tweak(tw, id, first + u);
		CHECK_OK(xts_encrypt_one(ctx, work + u * XTSFS_UNIT_SIZE,
				pt + u * XTSFS_UNIT_SIZE, XTSFS_UNIT_SIZE, tw));
	}
	snprintf(what, sizeof(what), "%s encrypt_units n=%zu vs encrypt_one",
		 be->name, nunits);
	test_memeq(what, ct + off, work, len);
	CHECK_OK(xts_decrypt_units(ctx, ct + off, ct + off, nunits, id, first));
	snprintf(what, sizeof(what), "%s decrypt_units in place n=%zu",
		 be->name, nunits);
	test_memeq(what, ct + off, pt, len);
	memcpy(work + off, pt, len);
	CHECK_OK(xts_encrypt_units(ctx, work + off, work + off, nunits, id, first));
	snprintf(what, sizeof(what), "%s encrypt_units in place n=%zu",
		 be->name, nunits);
	test_memeq(what, work + off, ref, len);
}

static void run_core(const struct xts_backend *be, int scale)
{
	uint8_t key[64];
	struct xts_ctx *ctx, *soft = NULL;
	int before = test_failures;
	static const uint64_t firsts[] = { 0, 1, 0xfe, 0xffff, 0xfffffffe,
					   0x00ffffffffffffffull,
					   UINT64_MAX - 300 };

	random_key(key);
	if (xts_ctx_new(&ctx, be, key) != 0) {
		CHECK(0, "%s: xts_ctx_new failed", be->name);
		return;
	}
	if (be != &xts_backend_software)
		CHECK_OK(xts_ctx_new(&soft, &xts_backend_software, key));
	for (size_t len = 16; len <= ALL_LENS; len++)
		check_one(be, ctx, soft, key, len);
	for (size_t len = 16; len <= 600; len++)
		check_guarded(be, ctx, key, g_lo, g_hi, len);
	for (size_t len = 601; len <= GUARD_LEN; len += 1 + rng_below(97))
		check_guarded(be, ctx, key, g_lo, g_hi, len);
	check_one(be, ctx, soft, key, MAX_LEN);
	check_one(be, ctx, soft, key, MAX_LEN - 1);
	check_one(be, ctx, soft, key, XTSFS_UNIT_SIZE);
	check_one(be, ctx, soft, key, XTSFS_UNIT_SIZE - 15);
	for (int i = 0; i < 60 * scale; i++) {
		if (i % 10 == 0) { /* fresh keys now and then */
			xts_ctx_free(ctx);
			xts_ctx_free(soft);
			soft = NULL;
			random_key(key);
			CHECK_OK(xts_ctx_new(&ctx, be, key));
			if (be != &xts_backend_software)
				CHECK_OK(xts_ctx_new(&soft, &xts_backend_software, key));
		}
		check_one(be, ctx, soft, key, random_len());
	}
	for (size_t n = 1; n <= 9; n++)
		for (size_t f = 0; f < sizeof(firsts) / sizeof(firsts[0]); f++)
			check_units(be, ctx, key, n, firsts[f]);
	for (int i = 0; i < 10 * scale; i++)
		check_units(be, ctx, key, 1 + rng_below(40), rng_next() >> 1);
	check_units(be, ctx, key, MAX_LEN / XTSFS_UNIT_SIZE - 1, 12345);
	xts_ctx_free(ctx);
	xts_ctx_free(soft);
	printf("%-10s %s\n", be->name, test_failures == before ? "ok" : "FAILED");
}

int main(void)
{
	const char *lng = getenv("XTSFS_TEST_LONG");
	int scale = lng && *lng == '1' ? 10 : 1;

	rng_seed("test_xts_diff");
	pt = malloc(MAX_LEN + 64);
	ct = malloc(MAX_LEN + 64);
	ref = malloc(MAX_LEN + 64);
	work = malloc(MAX_LEN + 64);
	ossl = EVP_CIPHER_CTX_new();
	if (!pt || !ct || !ref || !work || !ossl)
		return 2;
	guarded_map(&g_lo[0], &g_hi[0]);
	guarded_map(&g_lo[1], &g_hi[1]);
	for (size_t i = 0; xts_backends[i]; i++) {
		if (!xts_backends[i]->probe()) {
			printf("%-10s UNAVAILABLE\n", xts_backends[i]->name);
			continue;
		}
		run_core(xts_backends[i], scale);
	}
	EVP_CIPHER_CTX_free(ossl);
	free(pt);
	free(ct);
	free(ref);
	free(work);
	return test_failures ? 1 : 0;
}
