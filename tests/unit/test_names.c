/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_names.c - the name transform (names.c, doc/FORMAT.md section 4):
 * base64url against RFC 4648 section 10 and its strictness; names of
 * every length 1..255 round trip with the exact stored lengths, the
 * long-name form and its boundary; determinism, dirid separation, no
 * shared prefixes; illegal names; decryption of garbage, tampered,
 * wrong-directory and authentic-but-illegal stored names; symlink
 * targets of every length 1..4095 with the inline/long boundary; and the
 * internal-name predicates.
 * Exit 0 on success, 1 on any failure.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "names.h"
#include "siv.h"
#include "testutil.h"

/* Got @glen bytes, want @wlen: the lengths must agree, then the bytes. */
static void expect_bytes(const char *what, const void *got, size_t glen,
			 const void *want, size_t wlen)
{
	CHECK(glen == wlen, "%s: got %zu bytes, want %zu", what, glen, wlen);
	if (glen != wlen) {
		test_hexdump("got ", got, glen);
		test_hexdump("want", want, wlen);
		return;
	}
	test_memeq(what, got, want, wlen);
}

/* bytes 1..255 except '/' (and, if @name, not "." or ".."): legal */
static void rng_name(char *p, size_t len, bool name)
{
	do {
		for (size_t i = 0; i < len; i++) {
			uint8_t c;

			do
				c = (uint8_t)rng_next();
			while (c == 0 || (name && c == '/'));
			p[i] = (char)c;
		}
	} while (name && p[0] == '.' &&
		 (len == 1 || (len == 2 && p[1] == '.')));
}

static const char b64_alphabet[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static bool only_b64(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!s[i] || !strchr(b64_alphabet, s[i]))
			return false;
	return true;
}

/* the stored length of 4.1: ceil((16 + p) * 4 / 3), p the padded length */
static size_t stored_len(size_t len)
{
	size_t p = len <= 16 ? 16 : (len + 15) / 16 * 16;

	return (4 * (16 + p) + 2) / 3;
}

static uint8_t test_key[64];
static struct names_ctx *ctx;

/*
 * A stored name made by hand: SIV of the @p bytes at @pt, exactly as
 * given (no padding added), under @ad; for plaintexts the transform
 * itself would never produce.
 */
static void craft(char *out, const struct siv_ad *ad, const uint8_t *pt,
		  size_t p)
{
	static uint8_t ct[16 + 4096];
	struct aes_siv_key k;

	aes_siv_setkey(&k, test_key);
	aes_siv_encrypt(&k, ct, pt, p, ad, 1);
	names_b64_encode(out, ct, 16 + p);
	aes_siv_wipe(&k);
}

/* ---- base64url ---------------------------------------------------- */

static void test_b64(void)
{
	/*
	 * RFC 4648 section 10 (its alphabet and the url one agree on these;
	 * '=' padding removed as section 3.2 allows), then bytes that hit
	 * the two characters where the url alphabet differs (section 5:
	 * 62 is '-', 63 is '_'), cross-checked with Python's
	 * base64.urlsafe_b64encode.
	 */
	static const struct {
		const char *in;
		size_t len;
		const char *out;
	} vec[] = {
		{ "", 0, "" },
		{ "f", 1, "Zg" },
		{ "fo", 2, "Zm8" },
		{ "foo", 3, "Zm9v" },
		{ "foob", 4, "Zm9vYg" },
		{ "fooba", 5, "Zm9vYmE" },
		{ "foobar", 6, "Zm9vYmFy" },
		{ "\xfb\xff\xbf", 3, "-_-_" },
		{ "\xff\xff\xff", 3, "____" },
		{ "\xfb\xef", 2, "--8" },
		{ "\xff", 1, "_w" },
		{ "\xf8", 1, "-A" },
		{ "\0", 1, "AA" },
		{ "\0\0", 2, "AAA" },
	};
	/* each must be refused, with the reason */
	static const struct {
		const char *in;
		size_t len;
		const char *why;
	} bad[] = {
		{ "Z", 1, "4k+1 characters" },
		{ "Zm9vY", 5, "4k+1 characters" },
		{ "Zh", 2, "non-zero trailing bits (1 byte)" },
		{ "Zm9", 3, "non-zero trailing bits (2 bytes)" },
		{ "_x", 2, "non-zero trailing bits (1 byte)" },
		{ "Zg==", 4, "'=' padding" },
		{ "Zm8=", 4, "'=' padding" },
		{ "Zm+v", 4, "'+' (standard alphabet)" },
		{ "Zm/v", 4, "'/' (standard alphabet)" },
		{ "Zm9v.A", 6, "'.'" },
		{ "Zm 9", 4, "space" },
		{ "Zm\09v", 5, "NUL inside" },
		{ "Zm9v\n", 5, "line end" },
		{ "Zm\xc3\xa9", 4, "non-ASCII" },
	};
	uint8_t buf[300], raw[256];
	char txt[400];
	size_t n, outlen;
	int before = test_failures, ret;

	for (size_t i = 0; i < sizeof(vec) / sizeof(vec[0]); i++) {
		char what[64];

		n = names_b64_encode(txt, (const uint8_t *)vec[i].in,
				     vec[i].len);
		snprintf(what, sizeof(what), "b64 encode of vector %zu", i);
		expect_bytes(what, txt, n + 1, vec[i].out,
			     strlen(vec[i].out) + 1);
		ret = names_b64_decode(buf, sizeof(buf), vec[i].out,
				       strlen(vec[i].out), &outlen);
		snprintf(what, sizeof(what), "b64 decode of vector %zu", i);
		CHECK(ret == 0, "%s: %d", what, ret);
		if (!ret)
			expect_bytes(what, buf, outlen, vec[i].in, vec[i].len);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ret = names_b64_decode(buf, sizeof(buf), bad[i].in, bad[i].len,
				       &outlen);
		CHECK(ret == -EINVAL, "b64 \"%s\" (%s) accepted: %d", bad[i].in,
		      bad[i].why, ret);
	}

	/* all byte values, and random lengths 0..255, round trip */
	for (int i = 0; i < 256; i++)
		raw[i] = (uint8_t)i;
	for (int r = 0; r < 300; r++) {
		size_t len = r ? (size_t)rng_below(256) : 256;

		if (r)
			rng_bytes(raw, len);
		n = names_b64_encode(txt, raw, len);
		CHECK(n == (4 * len + 2) / 3 && txt[n] == '\0' &&
			      only_b64(txt, n),
		      "b64 length %zu: %zu characters", len, n);
		ret = names_b64_decode(buf, sizeof(buf), txt, n, &outlen);
		CHECK(ret == 0, "b64 length %zu: decode %d", len, ret);
		if (!ret)
			expect_bytes("b64 random round trip", buf, outlen, raw,
				     len);
	}

	/* too small an output: -ERANGE and nothing written */
	memset(buf, 0xa5, sizeof(buf));
	ret = names_b64_decode(buf, 5, "Zm9vYmFy", 8, &outlen);
	CHECK(ret == -ERANGE, "6 bytes into 5: %d", ret);
	CHECK(buf[0] == 0xa5, "6 bytes into 5: output written");
	ret = names_b64_decode(buf, 6, "Zm9vYmFy", 8, &outlen);
	CHECK(ret == 0 && outlen == 6, "6 bytes into 6: %d", ret);

	printf("base64url: %s\n", test_failures == before ? "ok" : "FAILED");
}

/* ---- names -------------------------------------------------------- */

/*
 * Every length 1..255, random legal bytes, a random directory: the
 * stored form has the length 4.1 gives, only base64url characters (or
 * the long form of 4.3), decrypts back, is deterministic, and is
 * unrelated in another directory, where it does not decrypt.
 */
static void test_roundtrip(void)
{
	char name[255], stored[NAMES_STORED_MAX + 1], full[NAMES_FULL_MAX];
	char stored2[NAMES_STORED_MAX + 1], full2[NAMES_FULL_MAX];
	char out[256], v64[32];
	uint8_t dirid[16], dirid2[16], raw[16 + 256];
	size_t outlen, rawlen, nlong = 0;
	bool is_long, is_long2;
	int before = test_failures, ret;

	for (size_t len = 1; len <= 255; len++) {
		size_t want = stored_len(len), n;

		rng_name(name, len, true);
		rng_bytes(dirid, sizeof(dirid));
		memset(full, 0x5a, sizeof(full));
		ret = names_encrypt(ctx, dirid, name, len, stored, full,
				    &is_long);
		CHECK(ret == 0, "len %zu: encrypt %d", len, ret);
		if (ret)
			continue;
		n = strlen(full);
		CHECK(n == want, "len %zu: full stored name has %zu chars, "
		      "want %zu", len, n, want);
		CHECK(only_b64(full, n), "len %zu: full stored name has a "
		      "character outside base64url ('.', '/', ...)", len);
		CHECK(strlen(stored) <= NAMES_STORED_MAX,
		      "len %zu: stored name of %zu chars", len, strlen(stored));
		CHECK(is_long == (want > 255), "len %zu: is_long %d", len,
		      is_long);
		if (is_long) {
			nlong++;
			/* "xtsfs.long." + base64url(V), V = bytes 0..16 */
			CHECK(!names_b64_decode(raw, sizeof(raw), full, n,
						&rawlen),
			      "len %zu: full does not decode", len);
			names_b64_encode(v64, raw, 16);
			CHECK(strlen(stored) == 33 &&
				      !strncmp(stored, "xtsfs.long.", 11) &&
				      !strcmp(stored + 11, v64),
			      "len %zu: long entry name \"%s\", V \"%s\"", len,
			      stored, v64);
			CHECK(names_is_long(stored) &&
				      names_is_internal(stored),
			      "len %zu: \"%s\" not seen as long", len, stored);
		} else {
			CHECK(!strcmp(stored, full),
			      "len %zu: stored != full for a short name", len);
			CHECK(!names_is_internal(stored) &&
				      !names_is_long(stored),
			      "len %zu: \"%s\" seen as internal", len, stored);
		}

		memset(out, 0x5a, sizeof(out));
		ret = names_decrypt(ctx, dirid, full, n, out, &outlen);
		CHECK(ret == 0, "len %zu: decrypt %d", len, ret);
		if (!ret) {
			expect_bytes("name round trip", out, outlen, name, len);
			CHECK(out[outlen] == '\0', "len %zu: no NUL", len);
		}

		/* deterministic */
		ret = names_encrypt(ctx, dirid, name, len, stored2, full2,
				    &is_long2);
		CHECK(ret == 0 && is_long2 == is_long &&
			      !strcmp(stored, stored2) && !strcmp(full, full2),
		      "len %zu: second encryption differs", len);

		/* another dirid (one bit off): unrelated, and wrong there */
		memcpy(dirid2, dirid, 16);
		dirid2[rng_below(16)] ^= (uint8_t)(1u << rng_below(8));
		ret = names_encrypt(ctx, dirid2, name, len, stored2, full2,
				    &is_long2);
		CHECK(ret == 0 && strcmp(full, full2),
		      "len %zu: another dirid gives the same \"%.8s...\"", len,
		      full);
		memset(out, 0x5a, sizeof(out));
		ret = names_decrypt(ctx, dirid2, full, n, out, &outlen);
		CHECK(ret == -EBADMSG, "len %zu: decrypts under the wrong "
		      "dirid (%d)", len, ret);
		CHECK(test_all_zero(out, sizeof(out)) && outlen == 0,
		      "len %zu: wrong dirid: output not wiped", len);
	}
	CHECK(nlong == 255 - 160, "%zu long names, want 95 (161..255)", nlong);
	printf("names 1..255 round trip, lengths, determinism, dirids: %s\n",
	       test_failures == before ? "ok" : "FAILED");
}

/*
 * The inline/long boundary and the padding steps. 4.1 pads a name to a
 * multiple of 16, so a 160-byte name (p = 160) takes 235 characters and
 * the largest that fits; 161..176 bytes pad to 176 and take exactly 256.
 * FORMAT.md 4.1's "Names up to 175 bytes fit in 255 characters" ignores
 * the padding (16 + 175 unpadded bytes would be 255 characters): with
 * the padding it prescribes, 175 is long.
 */
static void test_boundary(void)
{
	static const struct {
		size_t len;
		size_t chars;
		bool is_long;
	} b[] = {
		{ 1, 43, false },    /* p = 16 */
		{ 15, 43, false },
		{ 16, 43, false },   /* a 16-byte name: no padding */
		{ 17, 64, false },   /* 17 -> 32 */
		{ 32, 64, false },
		{ 33, 86, false },
		{ 159, 235, false },
		{ 160, 235, false }, /* the longest inline name */
		{ 161, 256, true },
		{ 175, 256, true },  /* see above: FORMAT.md says inline */
		{ 176, 256, true },
		{ 177, 278, true },
		{ 255, 363, true },  /* p = 256: NAMES_FULL_MAX must hold it */
	};
	char name[255], stored[NAMES_STORED_MAX + 1], full[NAMES_FULL_MAX];
	char out[256];
	uint8_t dirid[16] = { 0 }; /* the root */
	size_t outlen;
	bool is_long;
	int before = test_failures, ret;

	for (size_t i = 0; i < sizeof(b) / sizeof(b[0]); i++) {
		memset(name, 'a' + (int)(i % 26), b[i].len);
		ret = names_encrypt(ctx, dirid, name, b[i].len, stored, full,
				    &is_long);
		CHECK(ret == 0 && strlen(full) == b[i].chars &&
			      is_long == b[i].is_long,
		      "len %zu: ret %d, %zu chars (want %zu), long %d (want "
		      "%d)", b[i].len, ret, strlen(full), b[i].chars, is_long,
		      b[i].is_long);
		ret = names_decrypt(ctx, dirid, full, strlen(full), out,
				    &outlen);
		CHECK(ret == 0 && outlen == b[i].len &&
			      !memcmp(out, name, outlen),
		      "len %zu: round trip %d", b[i].len, ret);
	}
	printf("inline/long boundary 160/161: %s\n",
	       test_failures == before ? "ok" : "FAILED");
}

/*
 * Names sharing a prefix share nothing, not even the first characters
 * (4.1: V depends on the whole name, and C on V). A fixed key and dirid
 * make this deterministic: a 24-bit coincidence cannot come and go.
 */
static void test_prefixes(void)
{
	static const char *const group[] = {
		"report-2024-01.txt",
		"report-2024-02.txt",
		"report-2024-03.txt",
		"report-2024-01.txt.bak",
		"report-2024-01.tx",
		"0123456789abcdef",	/* 16: one block */
		"0123456789abcdef0",	/* 17: crosses a block */
		"0123456789abcdef1",
		"0123456789abcdeF",
		"a",
		"b",
		"aa",
	};
	enum { NG = sizeof(group) / sizeof(group[0]) };
	char stored[NG][NAMES_STORED_MAX + 1], full[NAMES_FULL_MAX];
	char longname[2][255];
	uint8_t key[64], dirid[16];
	struct names_ctx *fixed;
	bool is_long;
	int before = test_failures;

	for (int i = 0; i < 64; i++)
		key[i] = (uint8_t)(0x40 + i);
	for (int i = 0; i < 16; i++)
		dirid[i] = (uint8_t)(0xd0 + i);
	if (names_ctx_new(&fixed, key))
		abort();
	for (size_t i = 0; i < NG; i++)
		CHECK(!names_encrypt(fixed, dirid, group[i], strlen(group[i]),
				     stored[i], full, &is_long),
		      "\"%s\"", group[i]);
	for (size_t i = 0; i < NG; i++)
		for (size_t j = i + 1; j < NG; j++)
			CHECK(strncmp(stored[i], stored[j], 4),
			      "\"%s\" -> %.8s, \"%s\" -> %.8s: same prefix",
			      group[i], stored[i], group[j], stored[j]);

	/* two 255-byte names differing only in the last byte: the long
	 * entry names and the full names are unrelated from the start */
	memset(longname, 'x', sizeof(longname));
	longname[1][254] = 'y';
	CHECK(!names_encrypt(fixed, dirid, longname[0], 255, stored[0], full,
			     &is_long) && is_long, "255 x");
	CHECK(!names_encrypt(fixed, dirid, longname[1], 255, stored[1], full,
			     &is_long) && is_long, "254 x + y");
	CHECK(strncmp(stored[0] + 11, stored[1] + 11, 4),
	      "long names %s and %s share a prefix", stored[0], stored[1]);
	names_ctx_free(fixed);
	names_ctx_free(NULL);
	printf("common prefixes: %s\n",
	       test_failures == before ? "ok" : "FAILED");
}

static void test_illegal(void)
{
	static const struct {
		const char *name;
		size_t len;
		int err;
	} ill[] = {
		{ "", 0, -EINVAL },
		{ ".", 1, -EINVAL },
		{ "..", 2, -EINVAL },
		{ "/", 1, -EINVAL },
		{ "a/b", 3, -EINVAL },
		{ "abc/", 4, -EINVAL },
		{ "a\0b", 3, -EINVAL },
		{ "\0", 1, -EINVAL },
		{ "abc\0", 4, -EINVAL },
	};
	static const char *const legal[] = { "...", ".a", "a.", "..a", " ",
					     "\\", "\xff\xfe" };
	static char big[4096];
	char stored[NAMES_STORED_MAX + 1], full[NAMES_FULL_MAX], out[256];
	uint8_t dirid[16];
	size_t outlen;
	bool is_long;
	int before = test_failures, ret;

	rng_bytes(dirid, sizeof(dirid));
	for (size_t i = 0; i < sizeof(ill) / sizeof(ill[0]); i++) {
		ret = names_encrypt(ctx, dirid, ill[i].name, ill[i].len,
				    stored, full, &is_long);
		CHECK(ret == ill[i].err, "illegal name %zu (len %zu): %d", i,
		      ill[i].len, ret);
	}
	memset(big, 'n', sizeof(big));
	ret = names_encrypt(ctx, dirid, big, 256, stored, full, &is_long);
	CHECK(ret == -ENAMETOOLONG, "256 bytes: %d", ret);
	ret = names_encrypt(ctx, dirid, big, sizeof(big), stored, full,
			    &is_long);
	CHECK(ret == -ENAMETOOLONG, "4096 bytes: %d", ret);
	ret = names_encrypt(ctx, dirid, big, 255, stored, full, &is_long);
	CHECK(ret == 0, "255 bytes: %d", ret);
	for (size_t i = 0; i < sizeof(legal) / sizeof(legal[0]); i++) {
		ret = names_encrypt(ctx, dirid, legal[i], strlen(legal[i]),
				    stored, full, &is_long);
		CHECK(ret == 0, "legal name \"%s\": %d", legal[i], ret);
		ret = names_decrypt(ctx, dirid, full, strlen(full), out,
				    &outlen);
		CHECK(ret == 0 && !strcmp(out, legal[i]),
		      "legal name \"%s\": round trip %d", legal[i], ret);
	}
	printf("illegal names: %s\n",
	       test_failures == before ? "ok" : "FAILED");
}

/* names_decrypt() must fail with -EBADMSG and leave @out zeroed */
static void expect_bad_name(const char *what, const uint8_t dirid[16],
			    const char *stored, size_t len)
{
	char out[256];
	size_t outlen = 99;
	int ret;

	memset(out, 0x5a, sizeof(out));
	ret = names_decrypt(ctx, dirid, stored, len, out, &outlen);
	CHECK(ret == -EBADMSG, "%s: \"%.*s\" gave %d", what,
	      (int)(len > 40 ? 40 : len), stored, ret);
	CHECK(test_all_zero(out, sizeof(out)) && outlen == 0,
	      "%s: output not wiped", what);
}

static void test_bad_names(void)
{
	char stored[NAMES_STORED_MAX + 1], full[NAMES_FULL_MAX];
	char txt[NAMES_FULL_MAX + 64], out[256];
	uint8_t dirid[16], pt[272];
	struct siv_ad ad;
	size_t n, outlen;
	bool is_long;
	int before = test_failures, ret;

	rng_bytes(dirid, sizeof(dirid));
	ad.p = dirid;
	ad.len = 16;

	/* garbage: random base64url text of every length up to 400 */
	for (size_t len = 0; len <= 400; len++) {
		for (size_t i = 0; i < len; i++)
			txt[i] = b64_alphabet[rng_below(64)];
		expect_bad_name("random base64url", dirid, txt, len);
	}
	/* garbage: random bytes */
	for (int r = 0; r < 200; r++) {
		size_t len = (size_t)rng_below(400);

		rng_bytes((uint8_t *)txt, len);
		expect_bad_name("random bytes", dirid, txt, len);
	}

	/* tampered: every character of a real stored name, changed */
	ret = names_encrypt(ctx, dirid, "tamper-me.txt", 13, stored, full,
			    &is_long);
	CHECK(ret == 0, "encrypt: %d", ret);
	n = strlen(full);
	for (size_t i = 0; i < n; i++) {
		char c;

		memcpy(txt, full, n);
		do
			c = b64_alphabet[rng_below(64)];
		while (c == full[i]);
		txt[i] = c;
		expect_bad_name("one character changed", dirid, txt, n);
		txt[i] = '.';
		expect_bad_name("a '.' put in", dirid, txt, n);
	}
	for (size_t cut = 1; cut <= 5; cut++)
		expect_bad_name("truncated", dirid, full, n - cut);
	memcpy(txt, full, n);
	memcpy(txt + n, "AAAA", 4);
	expect_bad_name("4 characters appended", dirid, txt, n + 4);
	expect_bad_name("2 characters appended", dirid, txt, n + 2);
	expect_bad_name("long entry name", dirid,
			"xtsfs.long.AAAAAAAAAAAAAAAAAAAAAA", 33);
	/* the real one still works */
	ret = names_decrypt(ctx, dirid, full, n, out, &outlen);
	CHECK(ret == 0 && !strcmp(out, "tamper-me.txt"), "control: %d", ret);

	/*
	 * Authentic, but not what names_encrypt() makes: made with the key
	 * directly. First a control that mirrors the transform exactly.
	 */
	memset(pt, 0, sizeof(pt));
	memcpy(pt, "abc", 3);
	craft(txt, &ad, pt, 16);
	ret = names_decrypt(ctx, dirid, txt, strlen(txt), out, &outlen);
	CHECK(ret == 0 && !strcmp(out, "abc"), "crafted control: %d", ret);

	memset(pt, 0, sizeof(pt));
	pt[0] = '.';
	craft(txt, &ad, pt, 16);
	expect_bad_name("authentic \".\"", dirid, txt, strlen(txt));
	pt[1] = '.';
	craft(txt, &ad, pt, 16);
	expect_bad_name("authentic \"..\"", dirid, txt, strlen(txt));
	memcpy(pt, "a/b", 3);
	craft(txt, &ad, pt, 16);
	expect_bad_name("authentic \"a/b\"", dirid, txt, strlen(txt));
	memset(pt, 0, sizeof(pt));
	memcpy(pt, "a\0b", 3);
	craft(txt, &ad, pt, 16);
	expect_bad_name("authentic NUL inside", dirid, txt, strlen(txt));
	memset(pt, 0, sizeof(pt));
	craft(txt, &ad, pt, 16);
	expect_bad_name("authentic empty name", dirid, txt, strlen(txt));
	memcpy(pt, "abc", 3);
	pt[15] = 1;
	craft(txt, &ad, pt, 16);
	expect_bad_name("authentic non-zero padding", dirid, txt,
			strlen(txt));
	memset(pt, 0, sizeof(pt));
	memcpy(pt, "abc", 3);
	craft(txt, &ad, pt, 32);
	expect_bad_name("authentic 3 bytes padded to 32", dirid, txt,
			strlen(txt));
	memset(pt, 'q', 16);
	craft(txt, &ad, pt, 32);
	expect_bad_name("authentic 16 bytes padded to 32", dirid, txt,
			strlen(txt));
	memset(pt, 'q', 256);
	craft(txt, &ad, pt, 256);
	expect_bad_name("authentic 256-byte name", dirid, txt, strlen(txt));
	memset(pt, 'q', 20);
	craft(txt, &ad, pt, 20);
	expect_bad_name("authentic unpadded 20 bytes", dirid, txt,
			strlen(txt));
	craft(txt, &ad, pt, 0);
	expect_bad_name("authentic V alone", dirid, txt, strlen(txt));
	memset(pt, 0, sizeof(pt));
	memcpy(pt, "abc", 3);
	ad.p = (const uint8_t *)NAMES_TARGET_AD;
	ad.len = 20;
	craft(txt, &ad, pt, 16);
	expect_bad_name("a stored target as a name", dirid, txt, strlen(txt));

	printf("bad stored names: %s\n",
	       test_failures == before ? "ok" : "FAILED");
}

/* ---- symlink targets ---------------------------------------------- */

static void test_targets(void)
{
	static char target[4096], stored[NAMES_TARGET_MAX],
		full[NAMES_TARGET_MAX], stored2[NAMES_TARGET_MAX],
		full2[NAMES_TARGET_MAX], out[4096], txt[NAMES_TARGET_MAX];
	static uint8_t raw[16 + 4096];
	uint8_t dirid[16] = { 0 };
	char v64[32], nout[256];
	size_t outlen, rawlen, nlong = 0;
	bool is_long, is_long2;
	int before = test_failures, ret;

	for (size_t len = 1; len <= 4095; len++) {
		size_t want = stored_len(len), n;

		rng_name(target, len, false);
		ret = names_encrypt_target(ctx, target, len, stored, full,
					   &is_long);
		CHECK(ret == 0, "target len %zu: %d", len, ret);
		if (ret)
			continue;
		n = strlen(full);
		CHECK(n == want && only_b64(full, n),
		      "target len %zu: %zu chars, want %zu", len, n, want);
		CHECK(is_long == (len > 3040) && is_long == (n > 4095),
		      "target len %zu: is_long %d", len, is_long);
		if (is_long) {
			nlong++;
			CHECK(!names_b64_decode(raw, sizeof(raw), full, n,
						&rawlen),
			      "target len %zu: full does not decode", len);
			names_b64_encode(v64, raw, 16);
			CHECK(strlen(stored) == 33 &&
				      !strncmp(stored, "xtsfs.link.", 11) &&
				      !strcmp(stored + 11, v64) &&
				      names_is_link_ref(stored),
			      "target len %zu: reference \"%s\"", len, stored);
		} else {
			CHECK(!strcmp(stored, full) &&
				      !names_is_link_ref(stored),
			      "target len %zu: inline stored != full", len);
		}
		memset(out, 0x5a, sizeof(out));
		ret = names_decrypt_target(ctx, full, n, out, &outlen);
		CHECK(ret == 0, "target len %zu: decrypt %d", len, ret);
		if (!ret) {
			expect_bytes("target round trip", out, outlen, target,
				     len);
			CHECK(out[outlen] == '\0', "target len %zu: no NUL",
			      len);
		}
		if (len % 64 == 1 || len > 3035) {
			/* deterministic, with no dirid anywhere */
			ret = names_encrypt_target(ctx, target, len, stored2,
						   full2, &is_long2);
			CHECK(ret == 0 && !strcmp(stored, stored2) &&
				      !strcmp(full, full2),
			      "target len %zu: not deterministic", len);
			/* tampered */
			memcpy(txt, full, n);
			txt[rng_below(n)] ^= 1;
			ret = names_decrypt_target(ctx, txt, n, out, &outlen);
			CHECK(ret == -EBADMSG &&
				      test_all_zero(out, sizeof(out)),
			      "target len %zu: tampered gave %d", len, ret);
		}
	}
	CHECK(nlong == 4095 - 3040, "%zu long targets, want 1055", nlong);

	/* the boundary, spelled out: 3040 -> 4075 chars, 3041 -> 4096 */
	memset(target, 't', 3041);
	CHECK(!names_encrypt_target(ctx, target, 3040, stored, full, &is_long)
		      && !is_long && strlen(stored) == 4075,
	      "3040: long %d, %zu chars", is_long, strlen(stored));
	CHECK(!names_encrypt_target(ctx, target, 3041, stored, full, &is_long)
		      && is_long && strlen(full) == 4096,
	      "3041: long %d, %zu chars", is_long, strlen(full));

	/* illegal */
	ret = names_encrypt_target(ctx, target, 0, stored, full, &is_long);
	CHECK(ret == -EINVAL, "empty target: %d", ret);
	ret = names_encrypt_target(ctx, "a\0b", 3, stored, full, &is_long);
	CHECK(ret == -EINVAL, "target with NUL: %d", ret);
	memset(target, 't', sizeof(target));
	ret = names_encrypt_target(ctx, target, 4096, stored, full, &is_long);
	CHECK(ret == -ENAMETOOLONG, "4096-byte target: %d", ret);
	/* targets may hold what names may not */
	ret = names_encrypt_target(ctx, "../a/./b/..", 11, stored, full,
				   &is_long);
	CHECK(ret == 0, "\"../a/./b/..\": %d", ret);
	ret = names_decrypt_target(ctx, full, strlen(full), out, &outlen);
	CHECK(ret == 0 && !strcmp(out, "../a/./b/.."), "round trip %d", ret);
	/* a target is not a name and vice versa (different AD) */
	ret = names_decrypt(ctx, dirid, full, strlen(full), nout, &outlen);
	CHECK(ret == -EBADMSG, "a stored target decrypts as a name: %d", ret);
	ret = names_encrypt(ctx, dirid, "abc", 3, stored2, full2, &is_long2);
	CHECK(ret == 0, "abc");
	ret = names_decrypt_target(ctx, full2, strlen(full2), out, &outlen);
	CHECK(ret == -EBADMSG, "a stored name decrypts as a target: %d", ret);
	ret = names_decrypt_target(ctx, "xtsfs.link.AAAAAAAAAAAAAAAAAAAAAA",
				   33, out, &outlen);
	CHECK(ret == -EBADMSG, "a reference decrypts: %d", ret);
	ret = names_decrypt_target(ctx, "", 0, out, &outlen);
	CHECK(ret == -EBADMSG, "empty stored target: %d", ret);
	/* authentic but not canonical: 4096 non-zero bytes, extra padding */
	{
		struct siv_ad ad = { (const uint8_t *)NAMES_TARGET_AD, 20 };
		static uint8_t pt[4096];

		memset(pt, 'q', sizeof(pt));
		craft(txt, &ad, pt, 4096);
		ret = names_decrypt_target(ctx, txt, strlen(txt), out, &outlen);
		CHECK(ret == -EBADMSG, "authentic 4096-byte target: %d", ret);
		memset(pt, 0, sizeof(pt));
		memcpy(pt, "abc", 3);
		craft(txt, &ad, pt, 48);
		ret = names_decrypt_target(ctx, txt, strlen(txt), out, &outlen);
		CHECK(ret == -EBADMSG, "authentic over-padded target: %d",
		      ret);
		memcpy(pt, "a\0b", 3);
		craft(txt, &ad, pt, 16);
		ret = names_decrypt_target(ctx, txt, strlen(txt), out, &outlen);
		CHECK(ret == -EBADMSG, "authentic target with NUL: %d", ret);
		memset(pt, 0, sizeof(pt));
		craft(txt, &ad, pt, 16);
		ret = names_decrypt_target(ctx, txt, strlen(txt), out, &outlen);
		CHECK(ret == -EBADMSG, "authentic empty target: %d", ret);
		memcpy(pt, "abc", 3);
		craft(txt, &ad, pt, 16);
		ret = names_decrypt_target(ctx, txt, strlen(txt), out, &outlen);
		CHECK(ret == 0 && !strcmp(out, "abc"), "crafted control: %d",
		      ret);
	}
	printf("symlink targets 1..4095, boundary 3040/3041: %s\n",
	       test_failures == before ? "ok" : "FAILED");
}

/* ---- predicates --------------------------------------------------- */

static void test_predicates(void)
{
	static const struct {
		const char *s;
		bool internal, is_long, link;
	} p[] = {
		{ "xtsfs.dirid", true, false, false },
		{ "xtsfs.volume", true, false, false },
		{ "xtsfs.volume.tmp", true, false, false },
		{ "xtsfs.long.AAAAAAAAAAAAAAAAAAAAAA", true, true, false },
		{ "xtsfs.long.-_-_-_-_-_-_-_-_-_-_-w", true, true, false },
		{ "xtsfs.long.AAAAAAAAAAAAAAAAAAAAAA.name", true, false,
		  false },
		{ "xtsfs.long.AAAAAAAAAAAAAAAAAAAAA", true, false, false },
		{ "xtsfs.long.AAAAAAAAAAAAAAAAAAAAAAA", true, false, false },
		{ "xtsfs.long.AAAAAAAAAAAAAAAAAAAAAB", true, false, false },
		{ "xtsfs.long.", true, false, false },
		{ "xtsfs.link.AAAAAAAAAAAAAAAAAAAAAA", true, false, true },
		{ "xtsfs.link.AAAAAAAAAAAAAAAAAAAAA.", true, false, false },
		{ "xtsfs.link.", true, false, false },
		{ "xtsfs.", true, false, false },
		{ "xtsfs", false, false, false },
		{ "xtsfs_long.AAAAAAAAAAAAAAAAAAAAAA", false, false, false },
		{ "XTSFS.dirid", false, false, false },
		{ "abc", false, false, false },
		{ "", false, false, false },
		{ "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", false, false,
		  false },
	};
	char side[NAMES_STORED_MAX + 1];
	int before = test_failures;

	for (size_t i = 0; i < sizeof(p) / sizeof(p[0]); i++) {
		CHECK(names_is_internal(p[i].s) == p[i].internal,
		      "names_is_internal(\"%s\")", p[i].s);
		CHECK(names_is_long(p[i].s) == p[i].is_long,
		      "names_is_long(\"%s\")", p[i].s);
		CHECK(names_is_link_ref(p[i].s) == p[i].link,
		      "names_is_link_ref(\"%s\")", p[i].s);
	}
	names_long_sidecar(side, "xtsfs.long.AAAAAAAAAAAAAAAAAAAAAA");
	CHECK(!strcmp(side, "xtsfs.long.AAAAAAAAAAAAAAAAAAAAAA.name"),
	      "sidecar \"%s\"", side);
	CHECK(names_is_internal(side) && !names_is_long(side),
	      "the sidecar is internal and not a long entry");
	CHECK(!strcmp(NAMES_DIRID_FILE, "xtsfs.dirid") &&
		      names_is_internal(NAMES_DIRID_FILE),
	      "NAMES_DIRID_FILE");
	{
		static const char *const dots[] = { ".", ".." };
		static const char *const not[] = { "", "...", ".a", "..a",
						   "a", "a.", "x." };

		for (size_t i = 0; i < sizeof(dots) / sizeof(dots[0]); i++)
			CHECK(names_is_dot(dots[i]), "names_is_dot(\"%s\")",
			      dots[i]);
		for (size_t i = 0; i < sizeof(not) / sizeof(not[0]); i++)
			CHECK(!names_is_dot(not[i]), "names_is_dot(\"%s\")",
			      not[i]);
	}
	printf("internal-name predicates: %s\n",
	       test_failures == before ? "ok" : "FAILED");
}

/*
 * A long entry's sidecar and a long target's file must hold the
 * ciphertext their names name (FORMAT 4.3, 4.4): a copy of another
 * entry's sidecar, or another target's file, is refused, not shown
 * under the wrong name.
 */
static void test_refs_checked(void)
{
	static char a[256], b[256], sa[NAMES_STORED_MAX + 1],
		sb[NAMES_STORED_MAX + 1], fa[NAMES_FULL_MAX], fb[NAMES_FULL_MAX],
		out[4096], ta[4096], tb[4096], rta[NAMES_TARGET_MAX],
		rtb[NAMES_TARGET_MAX], fta[NAMES_TARGET_MAX],
		ftb[NAMES_TARGET_MAX];
	uint8_t dirid[16];
	size_t outlen;
	bool la, lb;
	int before = test_failures, ret;

	rng_bytes(dirid, sizeof(dirid));
	rng_name(a, 200, true);
	rng_name(b, 200, true);
	CHECK(!names_encrypt(ctx, dirid, a, 200, sa, fa, &la) && la &&
	      !names_encrypt(ctx, dirid, b, 200, sb, fb, &lb) && lb,
	      "two long names");
	ret = names_decrypt_long(ctx, dirid, sa, fa, strlen(fa), out, &outlen);
	CHECK(ret == 0 && outlen == 200 && !memcmp(out, a, 200),
	      "own sidecar: %d", ret);
	ret = names_decrypt_long(ctx, dirid, sb, fa, strlen(fa), out, &outlen);
	CHECK(ret == -EBADMSG && outlen == 0 && !out[0],
	      "A's sidecar under B's entry: %d (\"%.20s\")", ret, out);
	ret = names_decrypt_long(ctx, dirid, "xtsfs.long.x", fa, strlen(fa),
				 out, &outlen);
	CHECK(ret == -EBADMSG, "not a long entry name: %d", ret);
	/* an inline-sized stored name is never a sidecar's content */
	rng_name(a, 20, true);
	CHECK(!names_encrypt(ctx, dirid, a, 20, sb, fb, &lb) && !lb,
	      "a short name");
	ret = names_decrypt_long(ctx, dirid, sa, fb, strlen(fb), out, &outlen);
	CHECK(ret == -EBADMSG, "short stored name in a sidecar: %d", ret);

	rng_name(ta, 3500, false);
	rng_name(tb, 3500, false);
	CHECK(!names_encrypt_target(ctx, ta, 3500, rta, fta, &la) && la &&
	      !names_encrypt_target(ctx, tb, 3500, rtb, ftb, &lb) && lb,
	      "two long targets");
	ret = names_decrypt_target_ref(ctx, rta, fta, strlen(fta), out,
				       &outlen);
	CHECK(ret == 0 && outlen == 3500 && !memcmp(out, ta, 3500),
	      "own target file: %d", ret);
	ret = names_decrypt_target_ref(ctx, rtb, fta, strlen(fta), out,
				       &outlen);
	CHECK(ret == -EBADMSG && outlen == 0 && !out[0],
	      "A's target file under B's reference: %d", ret);
	CHECK(!names_encrypt_target(ctx, "short", 5, rtb, ftb, &lb) && !lb,
	      "a short target");
	ret = names_decrypt_target_ref(ctx, rta, ftb, strlen(ftb), out,
				       &outlen);
	CHECK(ret == -EBADMSG, "short target in a target file: %d", ret);
	printf("refs checked: %s\n", test_failures == before ? "ok" : "FAILED");
}

int main(void)
{
	int ret;

	rng_seed("test_names");
	rng_bytes(test_key, sizeof(test_key));
	ret = names_ctx_new(&ctx, test_key);
	if (ret) {
		printf("test_names: names_ctx_new: %d\n", ret);
		return 1;
	}
	test_b64();
	test_roundtrip();
	test_boundary();
	test_prefixes();
	test_illegal();
	test_bad_names();
	test_targets();
	test_predicates();
	test_refs_checked();
	names_ctx_free(ctx);
	if (test_failures) {
		printf("test_names: %d FAILED\n", test_failures);
		return 1;
	}
	printf("test_names: all passed\n");
	return 0;
}
