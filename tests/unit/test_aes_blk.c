/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_aes_blk.c - the two implementations behind aes_blk.h (AES-NI and
 * the software core) and which one a key gets.
 *
 *   - FIPS-197 C.3 through each (aes_blk_selftest());
 *   - the same ciphertext from both for random keys and 1..21 blocks
 *     (the four-block and one-block paths of AES-NI, the eight-block
 *     passes and tails of the software core), in place and not;
 *   - aes_blk_select(): keys set after it use what it chose, and
 *     xts_choose() selects AES-NI for the x86 cores and software for
 *     "software".
 *
 * On a CPU without AES-NI (or XTSFS_CPU_MASK=aesni) the AES-NI half is
 * skipped and AES-NI must be refused.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "aes_blk.h"
#include "cpu.h"
#include "testutil.h"
#include "xts.h"

#define MAXBLK 21

static void test_kat(bool ni)
{
	CHECK(aes_blk_selftest(false) == 0, "software core: FIPS-197 C.3");
	if (ni)
		CHECK(aes_blk_selftest(true) == 0, "AES-NI: FIPS-197 C.3");
	else
		CHECK(aes_blk_selftest(true) != 0,
		      "AES-NI passes its self-test on a CPU without it");
}

static void test_same(void)
{
	uint8_t key[32], in[16 * MAXBLK], a[16 * MAXBLK], b[16 * MAXBLK];
	struct aes256_blk kn, ks;

	for (int round = 0; round < 40; round++) {
		rng_bytes(key, sizeof(key));
		rng_bytes(in, sizeof(in));
		aes256_blk_setkey_impl(&kn, key, true);
		aes256_blk_setkey_impl(&ks, key, false);
		for (size_t n = 1; n <= MAXBLK; n++) {
			aes256_blk_encrypt(&kn, a, in, n);
			aes256_blk_encrypt(&ks, b, in, n);
			if (!test_memeq("AES-NI against software", a, b, 16 * n))
				return;
			memcpy(a, in, 16 * n);
			aes256_blk_encrypt(&kn, a, a, n); /* in place */
			if (!test_memeq("AES-NI in place", a, b, 16 * n))
				return;
		}
	}
	aes256_blk_wipe(&kn);
	CHECK(test_all_zero(&kn, sizeof(kn)), "wipe left key bytes");
}

/* Which implementation a key set now gets. */
static bool key_ni(void)
{
	static const uint8_t key[32];
	struct aes256_blk k;
	bool ni;

	aes256_blk_setkey(&k, key);
	ni = k.ni;
	aes256_blk_wipe(&k);
	return ni;
}

static void test_select(bool ni)
{
	const struct xts_backend *be;

	/* nothing selected yet: AES-NI where the CPU has it */
	CHECK(key_ni() == ni, "default: want %s", ni ? "AES-NI" : "software");
	CHECK_OK(aes_blk_select(false));
	CHECK(!key_ni(), "selected software, key uses AES-NI");
	CHECK(aes_blk_select(true) == (ni ? 0 : -EIO), "select AES-NI");
	CHECK(key_ni() == ni, "after selecting AES-NI");
	CHECK_OK(xts_choose("software", &be));
	CHECK(!key_ni(), "--cipher software, but names would use AES-NI");
	CHECK_OK(xts_choose("auto", &be));
	CHECK(key_ni() == ni, "--cipher auto (%s)", be->name);
}

int main(void)
{
	bool ni = cpu_features()->aesni;

	rng_seed("test_aes_blk");
	printf("AES-NI %s\n", ni ? "present: both implementations" :
	       "absent: software only");
	test_select(ni); /* first: it checks the default */
	test_kat(ni);
	if (ni)
		test_same();
	if (test_failures) {
		printf("test_aes_blk: %d FAILED\n", test_failures);
		return 1;
	}
	printf("test_aes_blk: all passed\n");
	return 0;
}
