/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_longname.c - fuzz target for what long names and long symlink
 * targets leave in files (FORMAT.md 4.3, 4.4): the content of a
 * "xtsfs.long.*.name" sidecar (names_decrypt() of up to the
 * NAMES_FULL_MAX - 1 bytes readdir reads of it) and of a lower symlink
 * target or the "xtsfs.link.*" file it refers to (names_decrypt_target()),
 * and names_encrypt_target() of plaintext targets, under a fixed test
 * key and dirid.
 *
 * The sidecar is checked as FORMAT.md 4.3 says a reader must: only a
 * name longer than 255 characters has one, and its V is the one in the
 * entry's name; names_decrypt_long() and names_decrypt_target_ref() must
 * accept exactly that, and give what names_decrypt() and
 * names_decrypt_target() give.
 *
 * Input: a mode byte (low two bits), then the payload:
 *   0  a sidecar: 22 characters of the entry's V, then the file content
 *      (names_decrypt_long(), compared with names_decrypt())
 *   1  a stored target, inline or the content of an "xtsfs.link.*" file
 *   2  a plaintext target for names_encrypt_target() (then decrypted)
 *   3  a long target: 22 characters of the reference's V, then the
 *      file's content (names_decrypt_target_ref())
 */
#include <errno.h>

#include "names.h"
#include "fuzz_common.h"

/* the shared names key (fuzz_common.h) */
static struct names_ctx *ctx(void)
{
	return fuzz_names_ctx();
}

static void sidecar(const char *s, size_t size)
{
	char entry[NAMES_STORED_MAX + 1], side[NAMES_STORED_MAX + 1];
	char content[NAMES_FULL_MAX], out[256], lout[256];
	char stored[NAMES_STORED_MAX + 1], full[NAMES_FULL_MAX];
	uint8_t vc[NAMES_FULL_MAX], ve[16];
	size_t len, outlen, loutlen = 12345;
	bool is_long;
	int rc, lrc;

	if (size < 22)
		return;
	/* the entry name as readdir finds it */
	snprintf(entry, sizeof(entry), "%s%.22s", NAMES_LONG_PREFIX, s);
	if (strlen(entry) != 33 || !names_is_long(entry))
		return;
	names_long_sidecar(side, entry);
	FUZZ_CHECK(!names_is_long(side) && names_is_internal(side));
	/* readdir reads at most NAMES_FULL_MAX - 1 bytes of the file */
	len = size - 22 < sizeof(content) - 1 ? size - 22 : sizeof(content) - 1;
	memcpy(content, s + 22, len);
	content[len] = '\0';
	memset(lout, 0x5a, sizeof(lout));
	lrc = names_decrypt_long(ctx(), fuzz_dirid, entry, content, len, lout,
				 &loutlen);
	FUZZ_CHECK(lrc == 0 || lrc == -EBADMSG);
	if (lrc)
		FUZZ_CHECK(loutlen == 0 && all_zero(lout, sizeof(lout)));
	rc = names_decrypt(ctx(), fuzz_dirid, content, len, out, &outlen);
	FUZZ_CHECK(rc == 0 || rc == -EBADMSG);
	if (rc) {
		FUZZ_CHECK(outlen == 0 && all_zero(out, sizeof(out)));
		FUZZ_CHECK(lrc == -EBADMSG);
		return;
	}
	FUZZ_CHECK(outlen >= 1 && outlen <= NAMES_NAME_MAX &&
		   strlen(out) == outlen && !memchr(out, '/', outlen));
	FUZZ_CHECK(names_encrypt(ctx(), fuzz_dirid, out, outlen, stored, full,
				 &is_long) == 0);
	/* canonical: the content is the one full stored name of the name */
	FUZZ_CHECK(strlen(full) == len && !memcmp(full, content, len));
	FUZZ_CHECK(is_long == (len > NAMES_STORED_MAX));
	if (len <= NAMES_STORED_MAX) {
		/* stored inline, never in a sidecar */
		FUZZ_CHECK(lrc == -EBADMSG);
		return;
	}
	/*
	 * FORMAT.md 4.3's reader then checks that the sidecar's V is the
	 * entry's. That alone must tell whether the entry is the one
	 * names_encrypt() makes for the name, so that readdir shows only
	 * names lookup finds.
	 */
	FUZZ_CHECK(is_long && names_is_long(stored));
	FUZZ_CHECK(ref_b64_decode(vc, sizeof(vc), content, len) > 16 &&
		   ref_b64_decode(ve, sizeof(ve), entry + 11, 22) == 16);
	FUZZ_CHECK(!memcmp(vc, ve, 16) == !strcmp(stored, entry));
	/* names_decrypt_long() is that reader */
	FUZZ_CHECK((lrc == 0) == !strcmp(stored, entry));
	if (lrc == 0)
		FUZZ_CHECK(loutlen == outlen && !strcmp(lout, out));
}

static void check_target_encrypts_to(const char *t, size_t n,
				     const char *s, size_t len)
{
	static char stored[NAMES_TARGET_MAX], full[NAMES_TARGET_MAX];
	static char back[4096];
	size_t p = (n + 15) / 16 * 16, blen;
	bool is_long;

	if (p < 16)
		p = 16;
	FUZZ_CHECK(names_encrypt_target(ctx(), t, n, stored, full,
					&is_long) == 0);
	FUZZ_CHECK(strlen(full) == len && !memcmp(full, s, len));
	FUZZ_CHECK(len == (4 * (16 + p) + 2) / 3);
	FUZZ_CHECK(is_long == (len > NAMES_TARGET_LEN_MAX));
	FUZZ_CHECK(is_long == (n >= 3041));
	FUZZ_CHECK(names_is_link_ref(stored) == is_long);
	if (is_long) {
		uint8_t vc[16 + 4096];
		char want[64];

		FUZZ_CHECK(ref_b64_decode(vc, sizeof(vc), full, len) ==
			   (long)(16 + p));
		memcpy(want, NAMES_LINK_PREFIX, sizeof(NAMES_LINK_PREFIX) - 1);
		names_b64_encode(want + sizeof(NAMES_LINK_PREFIX) - 1, vc, 16);
		FUZZ_CHECK(!strcmp(stored, want) && strlen(stored) == 33);
	} else {
		FUZZ_CHECK(!strcmp(stored, full));
	}
	FUZZ_CHECK(names_decrypt_target(ctx(), full, len, back, &blen) == 0);
	FUZZ_CHECK(blen == n && !memcmp(back, t, n) && back[n] == '\0');
}

static void stored_target(const char *s, size_t len)
{
	static char out[4096];
	char name[256];
	size_t outlen = 12345, nlen;
	int rc;

	if (len >= NAMES_TARGET_MAX)
		return; /* more than do_readlink() reads */
	memset(out, 0x5a, sizeof(out));
	rc = names_decrypt_target(ctx(), s, len, out, &outlen);
	FUZZ_CHECK(rc == 0 || rc == -EBADMSG);
	if (rc) {
		FUZZ_CHECK(outlen == 0 && all_zero(out, sizeof(out)));
		return;
	}
	FUZZ_CHECK(outlen >= 1 && outlen <= NAMES_TARGET_LEN_MAX);
	FUZZ_CHECK(out[outlen] == '\0' && strlen(out) == outlen);
	check_target_encrypts_to(out, outlen, s, len);
	/* a target is no name: the AD keeps them apart, in any directory */
	FUZZ_CHECK(names_decrypt(ctx(), fuzz_dirid, s, len, name, &nlen) ==
		   -EBADMSG);
}

static void target_ref(const char *s, size_t size)
{
	static char out[4096], rout[4096], content[NAMES_TARGET_MAX];
	static char stored[NAMES_TARGET_MAX], full[NAMES_TARGET_MAX];
	char ref[64];
	size_t len, outlen, routlen = 12345;
	bool is_long;
	int rc, rrc;

	if (size < 22)
		return;
	snprintf(ref, sizeof(ref), "%s%.22s", NAMES_LINK_PREFIX, s);
	if (strlen(ref) != 33 || !names_is_link_ref(ref))
		return;
	/* do_readlink() reads at most NAMES_TARGET_MAX - 1 bytes */
	len = size - 22 < sizeof(content) - 1 ? size - 22 : sizeof(content) - 1;
	memcpy(content, s + 22, len);
	content[len] = '\0';
	memset(rout, 0x5a, sizeof(rout));
	rrc = names_decrypt_target_ref(ctx(), ref, content, len, rout,
				       &routlen);
	FUZZ_CHECK(rrc == 0 || rrc == -EBADMSG);
	if (rrc)
		FUZZ_CHECK(routlen == 0 && all_zero(rout, sizeof(rout)));
	rc = names_decrypt_target(ctx(), content, len, out, &outlen);
	if (rc) {
		FUZZ_CHECK(rrc == -EBADMSG);
		return;
	}
	FUZZ_CHECK(names_encrypt_target(ctx(), out, outlen, stored, full,
					&is_long) == 0);
	FUZZ_CHECK(strlen(full) == len && !memcmp(full, content, len));
	/* only a target too long for a symlink, and only under its V */
	FUZZ_CHECK((rrc == 0) == (is_long && !strcmp(stored, ref)));
	if (rrc == 0)
		FUZZ_CHECK(routlen == outlen && !strcmp(rout, out));
}

static void plain_target(const char *t, size_t len)
{
	static char stored[NAMES_TARGET_MAX], full[NAMES_TARGET_MAX];
	bool is_long;
	int rc, want;

	if (len > NAMES_TARGET_LEN_MAX + 16)
		return;
	if (len == 0 || memchr(t, '\0', len))
		want = -EINVAL;
	else if (len > NAMES_TARGET_LEN_MAX)
		want = -ENAMETOOLONG;
	else
		want = 0;
	rc = names_encrypt_target(ctx(), t, len, stored, full, &is_long);
	FUZZ_CHECK(rc == want);
	if (!rc)
		check_target_encrypts_to(t, len, full, strlen(full));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data + 1;

	if (size < 1)
		return 0;
	switch (data[0] & 3) {
	case 0:
		sidecar(s, size - 1);
		break;
	case 1:
		stored_target(s, size - 1);
		break;
	case 2:
		plain_target(s, size - 1);
		break;
	case 3:
		target_ref(s, size - 1);
		break;
	}
	return 0;
}
