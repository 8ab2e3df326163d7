/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_xts_badinput.c - the dispatcher refuses what it must: equal key
 * halves, lengths under 16 bytes or over 2^20 blocks, unit ranges that
 * overflow, unknown core names, and a forced core the CPU lacks (the CPU
 * is made to look old with XTSFS_CPU_MASK). Also: "auto" then falls back
 * to the fastest remaining core, XTSFS_CIPHER is honoured, and secmem
 * memory is locked, zeroed and compares in constant time.
 */
#include <errno.h>

#include "secmem.h"
#include "testutil.h"
#include "xts.h"

static void check_key_rules(void)
{
	const struct xts_backend *be = NULL;
	uint8_t key[XTS_KEY_SIZE], buf[64] = { 0 }, tw[16] = { 0 };
	struct xts_ctx *ctx = NULL;

	CHECK(xts_choose("software", &be) == 0, "software must run: %s",
	      xts_choose_error());
	if (!be)
		return;
	memset(key, 0x5a, sizeof(key));
	CHECK(xts_ctx_new(&ctx, be, key) == -EINVAL,
	      "equal key halves accepted");
	CHECK(ctx == NULL, "ctx set on error");
	key[63] ^= 1; /* one bit of Key2 differs: now fine */
	CHECK(xts_ctx_new(&ctx, be, key) == 0, "distinct halves refused");
	if (!ctx)
		return;
	for (size_t len = 0; len < 16; len++) {
		CHECK(xts_encrypt_one(ctx, buf, buf, len, tw) == -EINVAL,
		      "encrypt of %zu bytes accepted", len);
		CHECK(xts_decrypt_one(ctx, buf, buf, len, tw) == -EINVAL,
		      "decrypt of %zu bytes accepted", len);
	}
	CHECK(xts_encrypt_one(ctx, buf, buf, XTS_MAX_UNIT_LEN + 1, tw) ==
		      -EINVAL, "unit over 2^20 blocks accepted");
	CHECK(xts_encrypt_one(ctx, buf, buf, 16, tw) == 0, "16 bytes refused");
	CHECK(xts_encrypt_units(ctx, buf, buf, 2, tw, UINT64_MAX) == -EINVAL,
	      "unit range overflow accepted");
	CHECK(xts_decrypt_units(ctx, buf, buf, 2, tw, UINT64_MAX) == -EINVAL,
	      "unit range overflow accepted");
	CHECK(xts_encrypt_units(ctx, buf, buf, 0, tw, UINT64_MAX) == 0,
	      "zero units refused");
	xts_ctx_free(ctx);
}

static void check_choice(void)
{
	const struct xts_backend *be = NULL;

	/* The mask was set before the first probe (see main). */
	CHECK(xts_choose("zmm", &be) == -ENOTSUP, "masked zmm accepted");
	CHECK(strstr(xts_choose_error(), "needs AVX-512"),
	      "unclear error: %s", xts_choose_error());
	printf("forced zmm on a masked CPU: %s\n", xts_choose_error());
	CHECK(xts_choose("vaes", &be) == -ENOTSUP, "masked vaes accepted");
	CHECK(strstr(xts_choose_error(), "cannot run on this CPU"),
	      "unclear error: %s", xts_choose_error());
	printf("forced vaes on a masked CPU: %s\n", xts_choose_error());
	CHECK(xts_choose("aesni", &be) == -ENOTSUP, "masked aesni accepted");
	CHECK(xts_choose("rot13", &be) == -ENOENT, "unknown core accepted");
	CHECK(strstr(xts_choose_error(), "unknown cipher core 'rot13'"),
	      "unclear error: %s", xts_choose_error());
	printf("unknown core: %s\n", xts_choose_error());
	CHECK(xts_choose("auto", &be) == 0 && be == &xts_backend_software,
	      "auto did not pick software on a CPU without AES-NI");
	setenv("XTSFS_CIPHER", "aesni", 1);
	CHECK(xts_choose(NULL, &be) == -ENOTSUP,
	      "XTSFS_CIPHER=aesni ignored on a masked CPU");
	setenv("XTSFS_CIPHER", "software", 1);
	CHECK(xts_choose(NULL, &be) == 0 && be == &xts_backend_software,
	      "XTSFS_CIPHER=software ignored");
	unsetenv("XTSFS_CIPHER");
}

static void check_secmem(void)
{
	uint8_t a[32], b[32];
	unsigned char *p = secmem_alloc(5000);
	int zero = 1;
	FILE *f;
	char line[256];
	long locked_kb = -1;

	CHECK(p != NULL, "secmem_alloc failed: %s", strerror(errno));
	if (!p)
		return;
	CHECK(((uintptr_t)p & 63) == 0, "secmem not 64-byte aligned");
	for (int i = 0; i < 5000; i++)
		zero &= p[i] == 0;
	CHECK(zero, "secmem not zeroed");
	memset(p, 0xee, 5000);
	f = fopen("/proc/self/status", "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmLck:", 6))
			locked_kb = strtol(line + 6, NULL, 10);
	if (f)
		fclose(f);
	CHECK(locked_kb >= 8, "secmem not mlocked: VmLck %ld kB", locked_kb);
	secmem_free(p);
	secmem_free(NULL);
	memset(a, 1, sizeof(a));
	memcpy(b, a, sizeof(b));
	CHECK(ct_memeq(a, b, sizeof(a)), "equal buffers differ");
	b[31] ^= 0x80;
	CHECK(!ct_memeq(a, b, sizeof(a)), "unequal buffers equal");
}

int main(void)
{
	/* Before any probe: make this CPU look like one without AES-NI. */
	setenv("XTSFS_CPU_MASK", "aesni,vaes,vpclmul,avx2,pclmul,avx512", 1);
	unsetenv("XTSFS_CIPHER");
	check_key_rules();
	check_choice();
	check_secmem();
	printf("%s\n", test_failures ? "FAILED" : "ok");
	return test_failures ? 1 : 0;
}
