/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_xattr.c - the extended-attribute codec (xattr.c, doc/FORMAT.md
 * section 6): known answers that pin the format; namespace
 * classification; names of every length in both encrypted namespaces
 * round trip with the exact stored lengths, deterministically, and at
 * and over every limit; stored names that are foreign, damaged, moved to
 * the other namespace, of another key or authentic but not canonical are
 * refused; values of every size class round trip with getxattr's size
 * rules, and flipped bits, a value moved to another name and another key
 * are refused (also by the size probe); list conversion with passed,
 * dropped, foreign and corrupt names, exact size probes, ERANGE and
 * malformed lists.
 * Exit 0 on success, 1 on any failure.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"
#include "siv.h"
#include "testutil.h"
#include "xattr.h"

#define SECURITY_SYSTEM \
	(XATTR_NS_BIT(XATTR_NS_SECURITY) | XATTR_NS_BIT(XATTR_NS_SYSTEM))

static uint8_t test_key[64];
static struct names_ctx *ctx, *other_ctx;

static const char b64_alphabet[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static bool only_b64(const char *s)
{
	for (; *s; s++)
		if (!strchr(b64_alphabet, *s))
			return false;
	return true;
}

/* the stored length of a name with @slen bytes after @prefix */
static size_t lower_len(const char *prefix, size_t slen)
{
	size_t p = slen <= 16 ? 16 : (slen + 15) / 16 * 16;

	return strlen(prefix) + 6 + (4 * (16 + p) + 2) / 3;
}

/* @len random bytes 1..255 (an xattr name has no NUL) */
static void rng_text(char *p, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		uint8_t c;

		do
			c = (uint8_t)rng_next();
		while (c == 0);
		p[i] = (char)c;
	}
	p[len] = '\0';
}

/*
 * A stored name made by hand: @prefix "xtsfs." base64url(SIV(@p bytes at
 * @pt, exactly as given)) under the name AD of @adns, with the test key;
 * for the forms xattr_name_enc() never makes.
 */
static void craft(char *out, const char *prefix, const char *adns,
		  const uint8_t *pt, size_t p)
{
	static uint8_t ct[16 + 512];
	struct siv_ad ad[2] = {
		{ (const uint8_t *)XTSFS_XATTR_NAME_AD, 16 },
		{ (const uint8_t *)adns, strlen(adns) },
	};
	struct aes_siv_key k;
	size_t n = strlen(prefix);

	aes_siv_setkey(&k, test_key);
	aes_siv_encrypt(&k, ct, pt, p, ad, 2);
	aes_siv_wipe(&k);
	memcpy(out, prefix, n);
	memcpy(out + n, "xtsfs.", 6);
	names_b64_encode(out + n + 6, ct, 16 + p);
}

/* ---- known answers ------------------------------------------------- */

/*
 * Computed from the text of FORMAT.md section 6 alone by
 * tests/tools/xattr-kat.py, with Python's cryptography (AESSIV, RFC
 * 5297) and base64.urlsafe_b64encode, under the names key 00 01 02 ..
 * 3f. If these change, the format changed.
 */
static void test_kat(void)
{
	static const struct {
		const char *name;
		const char *lower;
		const char *value;
		size_t vlen;
		const char *stored; /* hex */
	} kat[] = {
		{ "user.test",
		  "user.xtsfs.Ur8kCTgunhihA90f4D5fvp_5s18sIE4Wj_e57AiIf6w",
		  "hello world", 11,
		  "e1c4ec1b5abfb16faf5f701ea008ac365e6b28ee34f5ffb54b8449" },
		{ "trusted.x",
		  "trusted.xtsfs.OfFJL-PhJJDXXB1NBGeMUqwYn5TsH6wlZzQSe0r49aY",
		  "", 0, "f4d54cf8d7c84d09fcee29be46247662" },
		{ "user.0123456789abcdefg",
		  "user.xtsfs.M9oKN27GYQHcK9Ja8bgqiH7ka8h3X-heik4z440HlE3Z"
		  "Xt35rcPIBZ23cZN4oZuI",
		  "\0\1\2", 3, "9e831cb850ca97ad1e1e91bc7317e8c4fda84e" },
	};
	uint8_t key[64], want[64], got[64], val[64];
	char lower[XTSFS_XATTR_NAME_BUF], name[XTSFS_XATTR_NAME_BUF];
	struct names_ctx *k;
	int before = test_failures;

	for (int i = 0; i < 64; i++)
		key[i] = (uint8_t)i;
	if (names_ctx_new(&k, key)) {
		CHECK(0, "names_ctx_new");
		return;
	}
	for (size_t i = 0; i < sizeof(kat) / sizeof(kat[0]); i++) {
		size_t wlen = test_unhex(want, kat[i].stored);
		ssize_t n;

		CHECK_OK(xattr_name_enc(k, kat[i].name, lower));
		CHECK(!strcmp(lower, kat[i].lower), "KAT %zu: %s\n  want %s",
		      i, lower, kat[i].lower);
		CHECK(xattr_name_dec(k, kat[i].lower, name) == 0 &&
			      !strcmp(name, kat[i].name),
		      "KAT %zu: decrypts to \"%s\"", i, name);
		n = xattr_value_enc(k, kat[i].lower, kat[i].value,
				    kat[i].vlen, got, sizeof(got));
		CHECK(n == (ssize_t)wlen, "KAT %zu: value of %zd bytes", i, n);
		if (n == (ssize_t)wlen)
			test_memeq("KAT value", got, want, wlen);
		n = xattr_value_dec(k, kat[i].lower, want, wlen, val,
				    sizeof(val));
		CHECK(n == (ssize_t)kat[i].vlen &&
			      !memcmp(val, kat[i].value, kat[i].vlen),
		      "KAT %zu: value decrypts: %zd", i, n);
	}
	names_ctx_free(k);
	printf("known answers: %s\n",
	       test_failures == before ? "ok" : "FAILED");
}

/* ---- namespaces ---------------------------------------------------- */

static void test_namespaces(void)
{
	static const struct {
		const char *name;
		enum xattr_ns ns;
		bool ours;
	} vec[] = {
		{ "user.foo", XATTR_NS_USER, false },
		{ "user.", XATTR_NS_USER, false },
		{ "user.xtsfs.", XATTR_NS_USER, true },
		{ "user.xtsfs.AAAA", XATTR_NS_USER, true },
		{ "user.xtsfs", XATTR_NS_USER, false },
		{ "user.xtsfs-x", XATTR_NS_USER, false },
		{ "trusted.xtsfs.x", XATTR_NS_TRUSTED, true },
		{ "trusted.overlay.opaque", XATTR_NS_TRUSTED, false },
		{ "security.selinux", XATTR_NS_SECURITY, false },
		{ "security.xtsfs.x", XATTR_NS_SECURITY, false },
		{ "system.posix_acl_access", XATTR_NS_SYSTEM, false },
		{ "system.xtsfs.x", XATTR_NS_SYSTEM, false },
		{ "osx.foo", XATTR_NS_OTHER, false },
		{ "xtsfs.user.x", XATTR_NS_OTHER, false },
		{ "User.foo", XATTR_NS_OTHER, false },
		{ "user", XATTR_NS_OTHER, false },
		{ "", XATTR_NS_OTHER, false },
	};
	int before = test_failures;

	for (size_t i = 0; i < sizeof(vec) / sizeof(vec[0]); i++) {
		CHECK(xattr_namespace(vec[i].name) == vec[i].ns,
		      "\"%s\": namespace %d", vec[i].name,
		      (int)xattr_namespace(vec[i].name));
		CHECK(xattr_lower_is_ours(vec[i].name) == vec[i].ours,
		      "\"%s\": ours %d", vec[i].name, !vec[i].ours);
	}
	CHECK(xattr_ns_encrypted(XATTR_NS_USER) &&
		      xattr_ns_encrypted(XATTR_NS_TRUSTED) &&
		      !xattr_ns_encrypted(XATTR_NS_SECURITY) &&
		      !xattr_ns_encrypted(XATTR_NS_SYSTEM) &&
		      !xattr_ns_encrypted(XATTR_NS_OTHER),
	      "encrypted namespaces");
	printf("namespaces: %s\n", test_failures == before ? "ok" : "FAILED");
}

/* ---- names --------------------------------------------------------- */

/* every suffix length 1..160 in both namespaces, twice */
static void test_name_roundtrip(void)
{
	static const char *const prefixes[] = { "user.", "trusted." };
	char name[300], lower[XTSFS_XATTR_NAME_BUF];
	char again[XTSFS_XATTR_NAME_BUF], back[XTSFS_XATTR_NAME_BUF];
	char other[XTSFS_XATTR_NAME_BUF];
	int before = test_failures;

	for (size_t k = 0; k < 2; k++) {
		const char *pre = prefixes[k];
		size_t plen = strlen(pre);

		for (size_t len = 1; len <= XTSFS_XATTR_SUFFIX_MAX; len++) {
			for (int r = 0; r < 2; r++) {
				int rc;

				memcpy(name, pre, plen);
				rng_text(name + plen, len);
				rc = xattr_name_enc(ctx, name, lower);
				CHECK(rc == 0, "%s + %zu bytes: %d", pre, len,
				      rc);
				if (rc)
					continue;
				CHECK(strlen(lower) == lower_len(pre, len),
				      "%s + %zu bytes: %zu characters", pre,
				      len, strlen(lower));
				CHECK(!strncmp(lower, pre, plen) &&
					      !strncmp(lower + plen, "xtsfs.",
						       6) &&
					      only_b64(lower + plen + 6),
				      "%s + %zu: \"%s\"", pre, len, lower);
				CHECK(xattr_lower_is_ours(lower) &&
					      xattr_namespace(lower) ==
						      xattr_namespace(name),
				      "%s + %zu: not ours", pre, len);
				CHECK_OK(xattr_name_enc(ctx, name, again));
				CHECK(!strcmp(lower, again),
				      "%s + %zu: not deterministic", pre, len);
				rc = xattr_name_dec(ctx, lower, back);
				CHECK(rc == 0 && !strcmp(back, name),
				      "%s + %zu: decrypts: %d", pre, len, rc);
				/* another key: unrelated, and not ours */
				CHECK_OK(xattr_name_enc(other_ctx, name,
							other));
				CHECK(strcmp(other, lower),
				      "%s + %zu: same under another key", pre,
				      len);
				rc = xattr_name_dec(other_ctx, lower, back);
				CHECK(rc == -EBADMSG &&
					      test_all_zero(back, sizeof(back)),
				      "%s + %zu: other key: %d", pre, len, rc);
			}
		}
	}
	/* the same suffix in the other namespace shares nothing visible */
	CHECK_OK(xattr_name_enc(ctx, "user.same", lower));
	CHECK_OK(xattr_name_enc(ctx, "trusted.same", other));
	CHECK(strcmp(lower + 11, other + 14) &&
		      memcmp(lower + 11, other + 14, 22),
	      "user.same and trusted.same: %s, %s", lower, other);
	/* names sharing a prefix share no prefix stored (SIV) */
	CHECK_OK(xattr_name_enc(ctx, "user.0123456789abcdef0", lower));
	CHECK_OK(xattr_name_enc(ctx, "user.0123456789abcdef1", other));
	CHECK(memcmp(lower + 11, other + 11, 4),
	      "shared prefix: %s, %s", lower, other);
	printf("name round trips: %s\n",
	       test_failures == before ? "ok" : "FAILED");
}

static void test_name_limits(void)
{
	char name[600], lower[XTSFS_XATTR_NAME_BUF];
	char back[XTSFS_XATTR_NAME_BUF];
	int before = test_failures, rc;

	/* exactly at the limit: the longest stored names */
	memcpy(name, "user.", 5);
	memset(name + 5, 'u', 160);
	name[165] = '\0';
	CHECK(strlen(name) == XTSFS_XATTR_USER_NAME_MAX, "user max");
	CHECK_OK(xattr_name_enc(ctx, name, lower));
	CHECK(strlen(lower) == XTSFS_XATTR_USER_LOWER_MAX &&
		      XTSFS_XATTR_USER_LOWER_MAX == 246,
	      "user max: %zu characters", strlen(lower));
	CHECK(xattr_name_dec(ctx, lower, back) == 0 && !strcmp(back, name),
	      "user max: round trip");
	memcpy(name, "trusted.", 8);
	memset(name + 8, 't', 160);
	name[168] = '\0';
	CHECK(strlen(name) == XTSFS_XATTR_TRUSTED_NAME_MAX, "trusted max");
	CHECK_OK(xattr_name_enc(ctx, name, lower));
	CHECK(strlen(lower) == XTSFS_XATTR_TRUSTED_LOWER_MAX &&
		      XTSFS_XATTR_TRUSTED_LOWER_MAX == 249 &&
		      XTSFS_XATTR_TRUSTED_LOWER_MAX <= 255,
	      "trusted max: %zu characters", strlen(lower));
	CHECK(xattr_name_dec(ctx, lower, back) == 0 && !strcmp(back, name),
	      "trusted max: round trip");

	/* one over, up to and past XATTR_NAME_MAX: ERANGE, lower zeroed */
	static const size_t over[] = { 161, 176, 177, 250, 255, 256, 500 };
	for (size_t i = 0; i < sizeof(over) / sizeof(over[0]); i++) {
		for (int t = 0; t < 2; t++) {
			const char *pre = t ? "trusted." : "user.";
			size_t plen = strlen(pre);

			memcpy(name, pre, plen);
			memset(name + plen, 'x', over[i]);
			name[plen + over[i]] = '\0';
			memset(lower, 0x5a, sizeof(lower));
			rc = xattr_name_enc(ctx, name, lower);
			CHECK(rc == -ERANGE &&
				      test_all_zero(lower, sizeof(lower)),
			      "%s + %zu bytes: %d", pre, over[i], rc);
		}
	}
	CHECK(XTSFS_XATTR_VALUE_MAX == 65520 &&
		      XTSFS_XATTR_VALUE_OVERHEAD == 16,
	      "value limits");

	/* bare prefixes; namespaces the codec does not handle */
	CHECK(xattr_name_enc(ctx, "user.", lower) == -EINVAL, "user.");
	CHECK(xattr_name_enc(ctx, "trusted.", lower) == -EINVAL, "trusted.");
	static const char *const notours[] = {
		"security.selinux", "security.capability",
		"system.posix_acl_access", "system.posix_acl_default",
		"osx.foo", "foo", "", "user", "USER.foo",
	};
	for (size_t i = 0; i < sizeof(notours) / sizeof(notours[0]); i++) {
		rc = xattr_name_enc(ctx, notours[i], lower);
		CHECK(rc == -EOPNOTSUPP && test_all_zero(lower, sizeof(lower)),
		      "\"%s\": %d", notours[i], rc);
	}
	printf("name limits: %s\n", test_failures == before ? "ok" : "FAILED");
}

/* stored names that must not decrypt, or are not ours */
static void test_name_bad(void)
{
	char lower[XTSFS_XATTR_NAME_BUF], buf[600];
	char back[XTSFS_XATTR_NAME_BUF];
	uint8_t pt[512];
	int before = test_failures, rc;

	static const char *const foreign[] = {
		"user.foo", "user.xtsfs", "user.xtsfsAAAA", "trusted.overlay.x",
		"security.xtsfs.AAAA", "system.xtsfs.AAAA", "xtsfs.AAAA", "",
	};
	for (size_t i = 0; i < sizeof(foreign) / sizeof(foreign[0]); i++) {
		memset(back, 0x5a, sizeof(back));
		rc = xattr_name_dec(ctx, foreign[i], back);
		CHECK(rc == 1 && test_all_zero(back, sizeof(back)),
		      "foreign \"%s\": %d", foreign[i], rc);
	}

	CHECK_OK(xattr_name_enc(ctx, "user.hello", lower));
	/* each character changed */
	for (size_t i = 11; lower[i]; i++) {
		snprintf(buf, sizeof(buf), "%s", lower);
		buf[i] = buf[i] == 'A' ? 'B' : 'A';
		rc = xattr_name_dec(ctx, buf, back);
		CHECK(rc == -EBADMSG && test_all_zero(back, sizeof(back)),
		      "character %zu changed: %d", i, rc);
	}
	/* moved to the other namespace: the AD binds it */
	snprintf(buf, sizeof(buf), "trusted.%s", lower + 5);
	rc = xattr_name_dec(ctx, buf, back);
	CHECK(rc == -EBADMSG, "user name under trusted.: %d \"%s\"", rc, back);
	/* cut, extended, padded, bad characters, empty */
	snprintf(buf, sizeof(buf), "%.*s", (int)strlen(lower) - 1, lower);
	CHECK(xattr_name_dec(ctx, buf, back) == -EBADMSG, "cut");
	snprintf(buf, sizeof(buf), "%sA", lower);
	CHECK(xattr_name_dec(ctx, buf, back) == -EBADMSG, "one more");
	snprintf(buf, sizeof(buf), "%s=", lower);
	CHECK(xattr_name_dec(ctx, buf, back) == -EBADMSG, "'=' padding");
	snprintf(buf, sizeof(buf), "%s", lower);
	buf[20] = '+';
	CHECK(xattr_name_dec(ctx, buf, back) == -EBADMSG, "'+'");
	buf[20] = '.';
	CHECK(xattr_name_dec(ctx, buf, back) == -EBADMSG, "'.'");
	CHECK(xattr_name_dec(ctx, "user.xtsfs.", back) == -EBADMSG, "empty");
	CHECK(xattr_name_dec(ctx, "trusted.xtsfs.AAAA", back) == -EBADMSG,
	      "short");
	/* non-zero trailing bits: the last character of 43 carries 2 */
	snprintf(buf, sizeof(buf), "%s", lower);
	{
		size_t n = strlen(buf);
		const char *c = strchr(b64_alphabet, buf[n - 1]);
		size_t v = (size_t)(c - b64_alphabet);

		buf[n - 1] = b64_alphabet[v ^ 1];
		CHECK(xattr_name_dec(ctx, buf, back) == -EBADMSG,
		      "trailing bits");
	}
	/* a stored file name (names_encrypt) is not an xattr name */
	{
		static const uint8_t dirid[16];
		char stored[NAMES_STORED_MAX + 1], full[NAMES_FULL_MAX];
		bool is_long;

		CHECK_OK(names_encrypt(ctx, dirid, "hello", 5, stored, full,
				       &is_long));
		snprintf(buf, sizeof(buf), "user.xtsfs.%s", stored);
		CHECK(xattr_name_dec(ctx, buf, back) == -EBADMSG,
		      "a file name's ciphertext");
	}

	/* authentic, but not what xattr_name_enc() makes */
	memset(pt, 0, sizeof(pt));
	pt[0] = 'a';
	craft(buf, "user.", "user.", pt, 16);
	CHECK(xattr_name_dec(ctx, buf, back) == 0 && !strcmp(back, "user.a"),
	      "crafted baseline: \"%s\"", back);
	craft(buf, "user.", "user.", pt, 32);
	CHECK(xattr_name_dec(ctx, buf, back) == -EBADMSG, "padding too long");
	craft(buf, "user.", "user.", pt, 15);
	CHECK(xattr_name_dec(ctx, buf, back) == -EBADMSG, "15 bytes");
	craft(buf, "user.", "user.", pt, 17);
	CHECK(xattr_name_dec(ctx, buf, back) == -EBADMSG, "17 bytes");
	pt[1] = 0;
	pt[2] = 'b';
	craft(buf, "user.", "user.", pt, 16);
	CHECK(xattr_name_dec(ctx, buf, back) == -EBADMSG, "NUL inside");
	memset(pt, 0, sizeof(pt));
	craft(buf, "user.", "user.", pt, 16);
	CHECK(xattr_name_dec(ctx, buf, back) == -EBADMSG, "empty name");
	memset(pt, 'z', 176);
	craft(buf, "user.", "user.", pt, 176);
	CHECK(xattr_name_dec(ctx, buf, back) == -EBADMSG, "176 bytes");
	memset(pt, 0, sizeof(pt));
	pt[0] = 'a';
	craft(buf, "user.", "trusted.", pt, 16);
	CHECK(xattr_name_dec(ctx, buf, back) == -EBADMSG,
	      "made under the trusted AD, stored under user.");
	printf("bad stored names: %s\n",
	       test_failures == before ? "ok" : "FAILED");
}

/* ---- values -------------------------------------------------------- */

static void test_values(void)
{
	static const size_t lens[] = { 0, 1, 15, 16, 17, 255, 4096, 4097,
				       65519, XTSFS_XATTR_VALUE_MAX };
	static uint8_t val[70000], st[70000], out[70000];
	char lower[XTSFS_XATTR_NAME_BUF], lower2[XTSFS_XATTR_NAME_BUF];
	int before = test_failures;
	ssize_t n, m;

	CHECK_OK(xattr_name_enc(ctx, "user.v", lower));
	CHECK_OK(xattr_name_enc(ctx, "user.w", lower2));
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		size_t len = lens[i];

		rng_bytes(val, len);
		n = xattr_value_enc(ctx, lower, val, len, st, sizeof(st));
		CHECK(n == (ssize_t)(len + 16), "%zu bytes: %zd", len, n);
		if (n != (ssize_t)(len + 16))
			continue;
		/* deterministic */
		m = xattr_value_enc(ctx, lower, val, len, out, len + 16);
		CHECK(m == n && !memcmp(out, st, (size_t)n),
		      "%zu bytes: not deterministic (exact room)", len);
		/* the probe, a buffer too small, exact, larger */
		m = xattr_value_dec(ctx, lower, st, (size_t)n, NULL, 0);
		CHECK(m == (ssize_t)len, "%zu bytes: probe %zd", len, m);
		if (len > 1) { /* room 0 is the probe */
			memset(out, 0x5a, len);
			m = xattr_value_dec(ctx, lower, st, (size_t)n, out,
					    len - 1);
			CHECK(m == -ERANGE && test_all_zero(out, len - 1) &&
				      out[len - 1] == 0x5a,
			      "%zu bytes into %zu: %zd", len, len - 1, m);
		}
		m = xattr_value_dec(ctx, lower, st, (size_t)n, out, len);
		CHECK(m == (ssize_t)len && !memcmp(out, val, len),
		      "%zu bytes, exact room: %zd", len, m);
		memset(out, 0x5a, sizeof(out));
		m = xattr_value_dec(ctx, lower, st, (size_t)n, out,
				    sizeof(out));
		CHECK(m == (ssize_t)len && !memcmp(out, val, len) &&
			      out[len] == 0x5a,
		      "%zu bytes, more room: %zd", len, m);
		/* flipped bits in V and in C */
		for (size_t b = 0; b < (size_t)n; b += (size_t)n / 7 + 1) {
			st[b] ^= 0x10;
			memset(out, 0x5a, len + 1);
			m = xattr_value_dec(ctx, lower, st, (size_t)n, out,
					    len + 1);
			CHECK(m == -EIO && test_all_zero(out, len),
			      "%zu bytes, byte %zu flipped: %zd", len, b, m);
			CHECK(xattr_value_dec(ctx, lower, st, (size_t)n, NULL,
					      0) == -EIO,
			      "%zu bytes, byte %zu flipped: probe", len, b);
			st[b] ^= 0x10;
		}
		/* under another name, another key, cut */
		m = xattr_value_dec(ctx, lower2, st, (size_t)n, out,
				    sizeof(out));
		CHECK(m == -EIO, "%zu bytes under another name: %zd", len, m);
		m = xattr_value_dec(other_ctx, lower, st, (size_t)n, out,
				    sizeof(out));
		CHECK(m == -EIO, "%zu bytes, other key: %zd", len, m);
		m = xattr_value_dec(ctx, lower, st, (size_t)n - 1, out,
				    sizeof(out));
		CHECK(m == -EIO, "%zu bytes cut by one: %zd", len, m);
	}
	/* too large; too little room (nothing written) */
	n = xattr_value_enc(ctx, lower, val, XTSFS_XATTR_VALUE_MAX + 1, st,
			    sizeof(st));
	CHECK(n == -E2BIG, "65521 bytes: %zd", n);
	n = xattr_value_enc(ctx, lower, val, 1u << 20, st, sizeof(st));
	CHECK(n == -E2BIG, "1 MiB: %zd", n);
	memset(st, 0x5a, 40);
	n = xattr_value_enc(ctx, lower, val, 20, st, 35);
	CHECK(n == -ERANGE && st[0] == 0x5a && st[34] == 0x5a,
	      "20 bytes into 35: %zd", n);
	n = xattr_value_enc(ctx, lower, NULL, 0, st, 16);
	CHECK(n == 16, "empty into 16: %zd", n);
	n = xattr_value_enc(ctx, lower, NULL, 0, st, 15);
	CHECK(n == -ERANGE, "empty into 15: %zd", n);
	/* stored values no one wrote */
	for (size_t len = 0; len < 16; len++) {
		m = xattr_value_dec(ctx, lower, st, len, out, sizeof(out));
		CHECK(m == -EIO, "stored value of %zu bytes: %zd", len, m);
		m = xattr_value_dec(ctx, lower, st, len, NULL, 0);
		CHECK(m == -EIO, "probe of %zu bytes: %zd", len, m);
	}
	m = xattr_value_dec(ctx, lower, st, XTSFS_XATTR_KERNEL_SIZE_MAX + 1,
			    NULL, 0);
	CHECK(m == -EIO, "stored value over XATTR_SIZE_MAX: %zd", m);
	memset(st, 0, 16);
	m = xattr_value_dec(ctx, lower, st, 16, NULL, 0);
	CHECK(m == -EIO, "16 zero bytes: %zd", m);
	printf("values: %s\n", test_failures == before ? "ok" : "FAILED");
}

/* ---- lists --------------------------------------------------------- */

/* append @s and its NUL to the list at @l, of *@len bytes */
static void add(char *l, size_t *len, const char *s)
{
	memcpy(l + *len, s, strlen(s) + 1);
	*len += strlen(s) + 1;
}

static void test_lists(void)
{
	static const char *const plain[] = {
		"user.mime_type", "trusted.overlay.opaque", "user.a",
		"user.xtsfs.looks.like.ours",
	};
	static char lower[8192], out[8192], want[8192], want_pass[8192];
	char enc[XTSFS_XATTR_NAME_BUF], bad[XTSFS_XATTR_NAME_BUF];
	size_t llen = 0, wlen = 0, plen = 0;
	struct xattr_list_stats st;
	int before = test_failures;
	ssize_t n;

	/* a lower list as a cipher directory may have it, in this order */
	add(lower, &llen, "security.selinux");
	add(want_pass, &plen, "security.selinux");
	for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++) {
		CHECK_OK(xattr_name_enc(ctx, plain[i], enc));
		add(lower, &llen, enc);
		add(want, &wlen, plain[i]);
		add(want_pass, &plen, plain[i]);
		if (i == 1) {
			add(lower, &llen, "user.foreign");
			add(lower, &llen, "system.posix_acl_access");
			add(want_pass, &plen, "system.posix_acl_access");
			add(lower, &llen, "osx.dropped");
		}
	}
	CHECK_OK(xattr_name_enc(ctx, "user.damaged", bad));
	bad[15] = bad[15] == 'A' ? 'B' : 'A';
	add(lower, &llen, bad);
	add(lower, &llen, "trusted.xtsfs.");
	add(lower, &llen, "trusted.foreign");
	CHECK_OK(xattr_name_enc(other_ctx, "user.other.volume", enc));
	add(lower, &llen, enc);

	/* without passing anything: the four names, in order */
	n = xattr_list_dec(ctx, lower, llen, NULL, 0, 0, &st);
	CHECK(n == (ssize_t)wlen, "probe: %zd, want %zu", n, wlen);
	CHECK(st.foreign == 2 && st.corrupt == 3 && st.toolong == 0,
	      "probe stats: %zu foreign, %zu corrupt", st.foreign,
	      st.corrupt);
	memset(out, 0x5a, sizeof(out));
	n = xattr_list_dec(ctx, lower, llen, out, wlen, 0, &st);
	CHECK(n == (ssize_t)wlen && !memcmp(out, want, wlen),
	      "exact room: %zd", n);
	CHECK(st.foreign == 2 && st.corrupt == 3, "stats");
	n = xattr_list_dec(ctx, lower, llen, out, sizeof(out), 0, NULL);
	CHECK(n == (ssize_t)wlen && !memcmp(out, want, wlen) &&
		      out[wlen] == 0x5a,
	      "more room: %zd", n);
	memset(out, 0x5a, sizeof(out));
	n = xattr_list_dec(ctx, lower, llen, out, wlen - 1, 0, &st);
	CHECK(n == -ERANGE && test_all_zero(out, wlen - 1) &&
		      out[wlen - 1] == 0x5a,
	      "one byte short: %zd", n);
	n = xattr_list_dec(ctx, lower, llen, out, 1, 0, &st);
	CHECK(n == -ERANGE, "one byte: %zd", n);

	/* passing security and system: copied, where they were */
	n = xattr_list_dec(ctx, lower, llen, NULL, 0, SECURITY_SYSTEM, &st);
	CHECK(n == (ssize_t)plen, "pass probe: %zd, want %zu", n, plen);
	n = xattr_list_dec(ctx, lower, llen, out, plen, SECURITY_SYSTEM, &st);
	CHECK(n == (ssize_t)plen && !memcmp(out, want_pass, plen),
	      "pass: %zd", n);
	/* user and trusted bits change nothing */
	n = xattr_list_dec(ctx, lower, llen, out, sizeof(out),
			   XATTR_NS_BIT(XATTR_NS_USER) |
				   XATTR_NS_BIT(XATTR_NS_TRUSTED),
			   &st);
	CHECK(n == (ssize_t)wlen && !memcmp(out, want, wlen),
	      "user/trusted bits: %zd", n);
	/* XATTR_NS_OTHER can be passed too */
	n = xattr_list_dec(ctx, lower, llen, NULL, 0,
			   XATTR_NS_BIT(XATTR_NS_OTHER), &st);
	CHECK(n == (ssize_t)(wlen + sizeof("osx.dropped")),
	      "other passed: %zd", n);

	/* the plaintext list is never longer than the lower one */
	CHECK(wlen < llen && plen < llen, "lengths %zu %zu %zu", wlen, plen,
	      llen);

	/* round trip through xattr_list_enc() */
	{
		static char back[8192], stored[8192];
		ssize_t s;

		s = xattr_list_enc(ctx, want_pass, plen, NULL, 0,
				   SECURITY_SYSTEM, &st);
		CHECK(s > (ssize_t)plen && st.toolong == 0, "enc probe: %zd",
		      s);
		n = xattr_list_enc(ctx, want_pass, plen, stored, (size_t)s,
				   SECURITY_SYSTEM, &st);
		CHECK(n == s, "enc: %zd", n);
		n = xattr_list_enc(ctx, want_pass, plen, stored, (size_t)s - 1,
				   SECURITY_SYSTEM, &st);
		CHECK(n == -ERANGE, "enc short: %zd", n);
		n = xattr_list_enc(ctx, want_pass, plen, stored, (size_t)s,
				   SECURITY_SYSTEM, &st);
		n = xattr_list_dec(ctx, stored, (size_t)n, back, sizeof(back),
				   SECURITY_SYSTEM, &st);
		CHECK(n == (ssize_t)plen && !memcmp(back, want_pass, plen) &&
			      st.foreign == 0 && st.corrupt == 0,
		      "enc then dec: %zd", n);
		/* dropped when not passed */
		n = xattr_list_enc(ctx, want_pass, plen, stored, sizeof(stored),
				   0, &st);
		n = xattr_list_dec(ctx, stored, (size_t)n, back, sizeof(back),
				   SECURITY_SYSTEM, &st);
		CHECK(n == (ssize_t)wlen && !memcmp(back, want, wlen),
		      "enc without pass: %zd", n);
	}
	/* names that have no stored form */
	{
		char l[1024], longname[200], res[1024];
		size_t len = 0;

		add(l, &len, "user.");
		add(l, &len, "user.ok");
		memcpy(longname, "trusted.", 8);
		memset(longname + 8, 'n', 161);
		longname[8 + 161] = '\0';
		add(l, &len, longname);
		n = xattr_list_enc(ctx, l, len, res, sizeof(res), 0, &st);
		CHECK(n == (ssize_t)lower_len("user.", 2) + 1 &&
			      st.toolong == 2,
		      "too long for a stored form: %zd, %zu", n, st.toolong);
	}

	/* malformed and empty lists */
	n = xattr_list_dec(ctx, "", 0, NULL, 0, SECURITY_SYSTEM, &st);
	CHECK(n == 0, "empty list: %zd", n);
	n = xattr_list_dec(ctx, "", 0, out, sizeof(out), SECURITY_SYSTEM,
			   &st);
	CHECK(n == 0, "empty list with room: %zd", n);
	n = xattr_list_dec(ctx, "security.x", 10, NULL, 0, SECURITY_SYSTEM,
			   &st);
	CHECK(n == -EIO, "no final NUL: %zd", n);
	n = xattr_list_dec(ctx, "security.x\0\0", 12, NULL, 0,
			   SECURITY_SYSTEM, &st);
	CHECK(n == -EIO, "empty name: %zd", n);
	n = xattr_list_dec(ctx, "\0", 1, NULL, 0, 0, &st);
	CHECK(n == -EIO, "only a NUL: %zd", n);
	memset(out, 0x5a, 64);
	n = xattr_list_dec(ctx, "security.x\0security.y", 21, out, 64,
			   SECURITY_SYSTEM, &st);
	CHECK(n == -EIO && test_all_zero(out, 64), "cut list: %zd", n);
	n = xattr_list_enc(ctx, "user.x", 6, NULL, 0, 0, &st);
	CHECK(n == -EIO, "enc: no final NUL: %zd", n);
	printf("lists: %s\n", test_failures == before ? "ok" : "FAILED");
}

/* xattr_list_drop(): one namespace out, order and the rest kept. */
static void test_list_drop(void)
{
	static const char in[] = "user.a\0trusted.b\0user.c\0trusted.\0"
				 "security.d";
	char buf[sizeof(in)];
	size_t n;

	memcpy(buf, in, sizeof(in));
	n = xattr_list_drop(buf, sizeof(in), XATTR_NS_TRUSTED);
	CHECK(n == 25 && !memcmp(buf, "user.a\0user.c\0security.d", 25),
	      "drop trusted: %zu", n);
	memcpy(buf, in, sizeof(in));
	n = xattr_list_drop(buf, sizeof(in), XATTR_NS_SYSTEM);
	CHECK(n == sizeof(in) && !memcmp(buf, in, n), "drop none: %zu", n);
	/* a last name without its NUL stays as it is */
	memcpy(buf, "trusted.x\0user.y", 16);
	n = xattr_list_drop(buf, 16, XATTR_NS_TRUSTED);
	CHECK(n == 6 && !memcmp(buf, "user.y", 6), "unterminated: %zu", n);
	CHECK(xattr_list_drop(buf, 0, XATTR_NS_USER) == 0, "empty");
}

/* xattr_give(): getxattr's size rules for bytes at hand. */
static void test_give(void)
{
	char out[4] = { 'x', 'x', 'x', 'x' };

	CHECK(xattr_give(NULL, 0, "abc", 3) == 3, "probe");
	CHECK(xattr_give(out, 2, "abc", 3) == -ERANGE && out[0] == 'x',
	      "too small: nothing written");
	CHECK(xattr_give(out, 3, "abc", 3) == 3 && !memcmp(out, "abcx", 4),
	      "exact");
	CHECK(xattr_give(out, 4, "", 0) == 0, "empty");
}

int main(void)
{
	uint8_t other[64];
	int ret;

	rng_seed("test_xattr");
	rng_bytes(test_key, sizeof(test_key));
	memcpy(other, test_key, sizeof(other));
	other[0] ^= 1;
	ret = names_ctx_new(&ctx, test_key);
	if (!ret)
		ret = names_ctx_new(&other_ctx, other);
	if (ret) {
		printf("test_xattr: names_ctx_new: %d\n", ret);
		return 1;
	}
	test_kat();
	test_namespaces();
	test_name_roundtrip();
	test_name_limits();
	test_name_bad();
	test_values();
	test_lists();
	test_list_drop();
	test_give();
	names_ctx_free(ctx);
	names_ctx_free(other_ctx);
	if (test_failures) {
		printf("test_xattr: %d FAILED\n", test_failures);
		return 1;
	}
	printf("test_xattr: all passed\n");
	return 0;
}
