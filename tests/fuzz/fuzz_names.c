/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_names.c - fuzz target for stored names (names.h, FORMAT.md 4.1,
 * 4.3, 4.5): names_decrypt() of a lower entry name under a fixed test key
 * and dirid, the base64url codec under it, names_encrypt() of plaintext
 * names, and the checks readdir applies to every lower name
 * (names_is_internal/_is_long/_is_link_ref, names_long_sidecar).
 *
 * Input: a mode byte (low two bits), then the payload:
 *   0  a stored name for names_decrypt()
 *   1  one byte choosing the output room, then base64url text
 *   2  a plaintext name for names_encrypt() (then decrypted again)
 *   3  a lower name (up to the first NUL) for the predicates
 */
#include <errno.h>

#include "names.h"
#include "fuzz_common.h"

#define B64_MAX 8192

/* the shared names key (fuzz_common.h) */
static struct names_ctx *ctx(void)
{
	return fuzz_names_ctx();
}

static bool legal_name(const char *s, size_t n)
{
	return n >= 1 && n <= NAMES_NAME_MAX && !memchr(s, '/', n) &&
	       !memchr(s, '\0', n) && strcmp(s, ".") && strcmp(s, "..");
}

/*
 * A plaintext name @name that came out of names_decrypt() or went into
 * names_encrypt() successfully: it encrypts to @full (@flen characters)
 * and every promise about the stored forms holds.
 */
static void check_encrypts_to(const char *name, size_t n, const char *full,
			      size_t flen)
{
	char stored[NAMES_STORED_MAX + 1], f[NAMES_FULL_MAX];
	char side[NAMES_STORED_MAX + 1], back[256];
	uint8_t v[16];
	size_t blen, p = n <= 16 ? 16 : (n + 15) / 16 * 16;
	bool is_long;

	FUZZ_CHECK(names_encrypt(ctx(), fuzz_dirid, name, n, stored, f,
				 &is_long) == 0);
	/* canonical: the one stored form of this name is the one given */
	FUZZ_CHECK(strlen(f) == flen && !memcmp(f, full, flen));
	FUZZ_CHECK(flen == (4 * (16 + p) + 2) / 3);
	FUZZ_CHECK(is_long == (flen > NAMES_STORED_MAX));
	FUZZ_CHECK(is_long == (n > 160));
	FUZZ_CHECK(names_is_long(stored) == is_long);
	FUZZ_CHECK(names_is_internal(stored) == is_long);
	if (is_long) {
		char want[NAMES_STORED_MAX + 1];
		uint8_t vc[16 + 256];

		/* the entry name carries V, the first 16 bytes of V || C */
		FUZZ_CHECK(ref_b64_decode(vc, sizeof(vc), full, flen) ==
			   (long)(16 + p));
		memcpy(v, vc, 16);
		memcpy(want, NAMES_LONG_PREFIX, sizeof(NAMES_LONG_PREFIX) - 1);
		names_b64_encode(want + sizeof(NAMES_LONG_PREFIX) - 1, v, 16);
		FUZZ_CHECK(!strcmp(stored, want) && strlen(stored) == 33);
		names_long_sidecar(side, stored);
		FUZZ_CHECK(strlen(side) == 38 && !strncmp(side, stored, 33) &&
			   !strcmp(side + 33, NAMES_LONG_SUFFIX));
		FUZZ_CHECK(!names_is_long(side) && names_is_internal(side));
	} else {
		FUZZ_CHECK(!strcmp(stored, f));
	}
	/* and decrypts back, in its own directory only */
	FUZZ_CHECK(names_decrypt(ctx(), fuzz_dirid, f, flen, back, &blen) == 0);
	FUZZ_CHECK(blen == n && !memcmp(back, name, n) && back[n] == '\0');
	FUZZ_CHECK(names_decrypt(ctx(), fuzz_dirid2, f, flen, back, &blen) ==
		   -EBADMSG);
}

static void stored_name(const char *s, size_t len)
{
	char out[256];
	size_t outlen = 12345;
	int rc;

	memset(out, 0x5a, sizeof(out));
	rc = names_decrypt(ctx(), fuzz_dirid, s, len, out, &outlen);
	FUZZ_CHECK(rc == 0 || rc == -EBADMSG);
	if (rc) {
		FUZZ_CHECK(outlen == 0 && all_zero(out, sizeof(out)));
		return;
	}
	FUZZ_CHECK(outlen >= 1 && outlen <= NAMES_NAME_MAX);
	FUZZ_CHECK(out[outlen] == '\0' && strlen(out) == outlen);
	FUZZ_CHECK(legal_name(out, outlen));
	check_encrypts_to(out, outlen, s, len);
}

static void b64(const uint8_t *d, size_t size)
{
	static uint8_t out[B64_MAX + 16], ref[B64_MAX];
	static char back[2 * B64_MAX];
	const char *s = (const char *)d + 1;
	size_t len, outmax, outlen = 0, rem, need;
	long want;
	int rc;

	if (size < 1)
		return;
	len = size - 1;
	if (len > B64_MAX)
		return;
	/* 0..127 bytes of room, else all of it */
	outmax = d[0] < 128 ? d[0] : B64_MAX;
	rem = len % 4;
	need = len / 4 * 3 + (rem ? rem - 1 : 0);
	want = ref_b64_decode(ref, sizeof(ref), s, len);
	memset(out, 0xa5, sizeof(out));
	rc = names_b64_decode(out, outmax, s, len, &outlen);
	if (want < 0) {
		FUZZ_CHECK(rc == -EINVAL);
	} else if (need > outmax) {
		FUZZ_CHECK((size_t)want == need);
		FUZZ_CHECK(rc == -ERANGE);
	} else {
		FUZZ_CHECK(rc == 0 && outlen == need && (size_t)want == need);
		FUZZ_CHECK(!memcmp(out, ref, need));
		/* the one text of these bytes is the one given */
		FUZZ_CHECK(names_b64_encode(back, out, outlen) == len);
		FUZZ_CHECK(!memcmp(back, s, len) && back[len] == '\0');
	}
	/* nothing written past the room, and nothing at all on error */
	for (size_t i = rc ? 0 : outlen; i < sizeof(out); i++)
		FUZZ_CHECK(out[i] == 0xa5);
}

static void plain_name(const char *s, size_t len)
{
	char stored[NAMES_STORED_MAX + 1], full[NAMES_FULL_MAX];
	char name[NAMES_NAME_MAX + 1];
	bool is_long;
	int rc, want;

	if (len > 300)
		return;
	if (len == 0)
		want = -EINVAL;
	else if (len > NAMES_NAME_MAX)
		want = -ENAMETOOLONG;
	else if (memchr(s, '/', len) || memchr(s, '\0', len) ||
		 (len == 1 && s[0] == '.') ||
		 (len == 2 && s[0] == '.' && s[1] == '.'))
		want = -EINVAL;
	else
		want = 0;
	rc = names_encrypt(ctx(), fuzz_dirid, s, len, stored, full, &is_long);
	FUZZ_CHECK(rc == want);
	if (rc)
		return;
	memcpy(name, s, len);
	name[len] = '\0';
	check_encrypts_to(name, len, full, strlen(full));
}

/* "<prefix>" and exactly 22 characters of canonical base64url */
static bool ref_is_prefixed_iv(const char *s, const char *prefix)
{
	size_t plen = strlen(prefix);
	uint8_t v[16];

	return !strncmp(s, prefix, plen) && strlen(s + plen) == 22 &&
	       ref_b64_decode(v, sizeof(v), s + plen, 22) == 16;
}

static void lower_name(const uint8_t *d, size_t size)
{
	char name[600], side[NAMES_STORED_MAX + 1], want[600];
	size_t n = size < sizeof(name) - 1 ? size : sizeof(name) - 1;

	memcpy(name, d, n);
	name[n] = '\0';
	FUZZ_CHECK(names_is_internal(name) ==
		   !strncmp(name, "xtsfs.", 6));
	FUZZ_CHECK(names_is_long(name) ==
		   ref_is_prefixed_iv(name, NAMES_LONG_PREFIX));
	FUZZ_CHECK(names_is_link_ref(name) ==
		   ref_is_prefixed_iv(name, NAMES_LINK_PREFIX));
	/* no base64url text starts like our own names */
	if (ref_b64_decode((uint8_t[600]){ 0 }, 600, name, strlen(name)) >= 0)
		FUZZ_CHECK(!names_is_internal(name));
	memset(side, 0x5a, sizeof(side));
	names_long_sidecar(side, name);
	snprintf(want, sizeof(want), "%s.name", name);
	want[NAMES_STORED_MAX] = '\0';
	FUZZ_CHECK(!strcmp(side, want));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data + 1;

	if (size < 1)
		return 0;
	switch (data[0] & 3) {
	case 0:
		stored_name(s, size - 1);
		break;
	case 1:
		b64(data + 1, size - 1);
		break;
	case 2:
		plain_name(s, size - 1);
		break;
	case 3:
		lower_name(data + 1, size - 1);
		break;
	}
	return 0;
}
