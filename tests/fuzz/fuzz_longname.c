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
 * entry's name. The reader itself (name_dec(), do_readlink() in
 * fuse_ops.c) is static: this target checks the decoders and what their
 * results promise, so that those rules are enough for a canonical view.
 *
 * Input: a mode byte (value mod 3), then the payload:
 *   0  a sidecar: 22 characters of the entry's V, then the file content
 *   1  a stored target, inline or the content of an "xtsfs.link.*" file
 *   2  a plaintext target for names_encrypt_target() (then decrypted)
 */
#include <errno.h>

#include "fuzz_common.h"
#include "names.h"

static struct names_ctx *ctx(void)
{
	static struct names_ctx *c;
	uint8_t key[64];

	if (!c) {
		fuzz_key(key, sizeof(key), 1);
		if (names_ctx_new(&c, key)) {
			fprintf(stderr, "names_ctx_new failed (ulimit -l?)\n");
			exit(2);
		}
	}
	return c;
}

static void sidecar(const char *s, size_t size)
{
	char entry[NAMES_STORED_MAX + 1], side[NAMES_STORED_MAX + 1];
	char content[NAMES_FULL_MAX], out[256];
	char stored[NAMES_STORED_MAX + 1], full[NAMES_FULL_MAX];
	uint8_t vc[NAMES_FULL_MAX], ve[16];
	size_t len, outlen;
	bool is_long;
	int rc;

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
	rc = names_decrypt(ctx(), fuzz_dirid, content, len, out, &outlen);
	FUZZ_CHECK(rc == 0 || rc == -EBADMSG);
	if (rc) {
		FUZZ_CHECK(outlen == 0 && all_zero(out, sizeof(out)));
		return;
	}
	FUZZ_CHECK(outlen >= 1 && outlen <= NAMES_NAME_MAX &&
		   strlen(out) == outlen && !memchr(out, '/', outlen));
	FUZZ_CHECK(names_encrypt(ctx(), fuzz_dirid, out, outlen, stored, full,
				 &is_long) == 0);
	/* canonical: the content is the one full stored name of the name */
	FUZZ_CHECK(strlen(full) == len && !memcmp(full, content, len));
	FUZZ_CHECK(is_long == (len > NAMES_STORED_MAX));
	if (len <= NAMES_STORED_MAX)
		return; /* the reader refuses it: stored inline, not here */
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
	switch (data[0] % 3) {
	case 0:
		sidecar(s, size - 1);
		break;
	case 1:
		stored_target(s, size - 1);
		break;
	case 2:
		plain_target(s, size - 1);
		break;
	}
	return 0;
}
