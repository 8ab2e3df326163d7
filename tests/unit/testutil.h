/* SPDX-License-Identifier: Apache-2.0 */
/*
 * testutil.h - tiny helpers shared by the C unit tests: a checked
 * assertion that reports and counts failures, hex dumps of got/want,
 * hex vectors to bytes, an all-zero test, and a reproducible PRNG
 * (xoshiro256**) whose seed each test prints.
 */
#ifndef XTSFS_TESTUTIL_H
#define XTSFS_TESTUTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TEST_SKIP 77 /* meson's exit code for "skipped" */

static int test_failures __attribute__((unused));

#define CHECK(cond, ...)                                                    \
	do {                                                                \
		if (!(cond)) {                                              \
			test_failures++;                                    \
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__,       \
				__LINE__, #cond);                           \
			fprintf(stderr, __VA_ARGS__);                       \
			fputc('\n', stderr);                                \
		}                                                           \
	} while (0)

/* A call returning 0 on success, which must succeed here. */
#define CHECK_OK(call) CHECK((call) == 0, "returned non-zero")

static inline __attribute__((unused)) void
test_hexdump(const char *label, const uint8_t *p, size_t len)
{
	fprintf(stderr, "  %s:", label);
	for (size_t i = 0; i < len && i < 64; i++)
		fprintf(stderr, "%s%02x", i % 16 ? "" : " ", p[i]);
	fprintf(stderr, "%s\n", len > 64 ? " ..." : "");
}

/* Compare and on mismatch print where and both sides, like printhex. */
static inline __attribute__((unused)) int
test_memeq(const char *what, const uint8_t *got, const uint8_t *want,
	   size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (got[i] != want[i]) {
			size_t from = i & ~(size_t)15;

			test_failures++;
			fprintf(stderr, "FAIL %s: first difference at byte %zu "
				"of %zu\n", what, i, len);
			test_hexdump("got ", got + from, len - from);
			test_hexdump("want", want + from, len - from);
			return 0;
		}
	}
	return 1;
}

/* 1 if all @len bytes at @p are zero (a wiped output, a hole). */
static inline __attribute__((unused)) int test_all_zero(const void *p,
							size_t len)
{
	const uint8_t *b = p;
	uint8_t acc = 0;

	for (size_t i = 0; i < len; i++)
		acc |= b[i];
	return acc == 0;
}

/*
 * Hex as printed in a vector's source (spaces allowed, either case) to
 * bytes at @out; the count. Anything else, or an odd digit count, is a
 * typo in the vector: abort().
 */
static inline __attribute__((unused)) size_t test_unhex(uint8_t *out,
							const char *hex)
{
	size_t n = 0;
	int hi = -1;

	for (; *hex; hex++) {
		int v;

		if (*hex == ' ')
			continue;
		if (*hex >= '0' && *hex <= '9')
			v = *hex - '0';
		else if (*hex >= 'a' && *hex <= 'f')
			v = *hex - 'a' + 10;
		else if (*hex >= 'A' && *hex <= 'F')
			v = *hex - 'A' + 10;
		else
			abort();
		if (hi < 0) {
			hi = v;
		} else {
			out[n++] = (uint8_t)(hi << 4 | v);
			hi = -1;
		}
	}
	if (hi >= 0)
		abort();
	return n;
}

static uint64_t rng_s[4] __attribute__((unused));

static inline __attribute__((unused)) uint64_t rng_next(void)
{
	uint64_t r = rng_s[1] * 5, t = rng_s[1] << 17;

	r = ((r << 7) | (r >> 57)) * 9;
	rng_s[2] ^= rng_s[0];
	rng_s[3] ^= rng_s[1];
	rng_s[1] ^= rng_s[2];
	rng_s[0] ^= rng_s[3];
	rng_s[2] ^= t;
	rng_s[3] = (rng_s[3] << 45) | (rng_s[3] >> 19);
	return r;
}

/* Seed from XTSFS_TEST_SEED if set, else the clock; print it to rerun. */
static inline __attribute__((unused)) void rng_seed(const char *test)
{
	const char *env = getenv("XTSFS_TEST_SEED");
	uint64_t seed = env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL);
	uint64_t z = seed;

	for (int i = 0; i < 4; i++) { /* splitmix64 */
		z += 0x9e3779b97f4a7c15ull;
		uint64_t x = z;
		x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
		x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
		rng_s[i] = x ^ (x >> 31);
	}
	printf("%s: seed %llu (rerun with XTSFS_TEST_SEED=%llu)\n", test,
	       (unsigned long long)seed, (unsigned long long)seed);
}

static inline __attribute__((unused)) void rng_bytes(uint8_t *p, size_t len)
{
	while (len) {
		uint64_t r = rng_next();
		size_t n = len < 8 ? len : 8;

		memcpy(p, &r, n);
		p += n;
		len -= n;
	}
}

static inline __attribute__((unused)) uint64_t rng_below(uint64_t n)
{
	return rng_next() % n;
}

#endif /* XTSFS_TESTUTIL_H */
