/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gen_corpus.c - write the seed inputs of the fuzz corpora that need the
 * real encoders (names, long names, file contents, volume key, key wrap,
 * xattrs) and the edge cases next to them, under the fixed test keys of
 * fuzz_common.h. Deterministic: running it again writes the same files.
 *
 * Usage: fuzz_gen_corpus SRCDIR/tests/fuzz
 * writes SRCDIR/tests/fuzz/corpus-NAME/seed-* (the directories must
 * exist). What libFuzzer found is kept next to them under other names.
 */
#include <errno.h>

#include "content.h"
#include "fuzz_common.h"
#include "keywrap.h"
#include "names.h"
#include "siv.h"
#include "volume.h"
#include "xattr.h"
#include "xts.h"

static const char *top;

/* write @pre (one mode byte, or none if < 0) and @len bytes of @d */
static void put(const char *corpus, const char *name, int pre,
		const void *d, size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/corpus-%s/seed-%s", top, corpus,
		 name);
	f = fopen(path, "wb");
	if (!f || (pre >= 0 && fputc(pre, f) == EOF) ||
	    (len && fwrite(d, 1, len, f) != len) || fclose(f)) {
		perror(path);
		exit(1);
	}
}

static void put_str(const char *corpus, const char *name, int pre,
		    const char *s)
{
	put(corpus, name, pre, s, strlen(s));
}

static struct names_ctx *nctx;
static struct aes_siv_key siv;

/* base64url(SIV(@n bytes of @pt padded with zeros to @p)) with the
 * names AD (@dirid) or the target AD (NULL): for authentic but
 * non-canonical stored forms that names_encrypt() never makes */
static void raw_stored(char *out, const uint8_t *dirid, const char *pt,
		       size_t n, size_t p)
{
	uint8_t in[4096] = { 0 }, ct[16 + 4096];
	struct siv_ad ad = { dirid, 16 };

	if (!dirid) {
		ad.p = (const uint8_t *)NAMES_TARGET_AD;
		ad.len = sizeof(NAMES_TARGET_AD) - 1;
	}
	memcpy(in, pt, n);
	aes_siv_encrypt(&siv, ct, in, p, &ad, 1);
	names_b64_encode(out, ct, 16 + p);
}

static void fill(char *s, size_t n, char c)
{
	for (size_t i = 0; i < n; i++)
		s[i] = (char)(c + i % 26);
	s[n] = '\0';
}

static void gen_names(void)
{
	static const size_t lens[] = { 1, 15, 16, 17, 160, 161, 255 };
	char name[300], stored[NAMES_STORED_MAX + 1], full[NAMES_FULL_MAX];
	char tag[64], buf[600];
	bool is_long;

	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		fill(name, lens[i], 'a');
		names_encrypt(nctx, fuzz_dirid, name, lens[i], stored, full,
			      &is_long);
		snprintf(tag, sizeof(tag), "stored-%zu", lens[i]);
		put_str("names", tag, 0, full);
		snprintf(tag, sizeof(tag), "plain-%zu", lens[i]);
		put("names", tag, 2, name, lens[i]);
		if (is_long) {
			snprintf(tag, sizeof(tag), "lower-long-%zu", lens[i]);
			put_str("names", tag, 3, stored);
			names_long_sidecar(buf, stored);
			snprintf(tag, sizeof(tag), "lower-sidecar-%zu", lens[i]);
			put_str("names", tag, 3, buf);
		}
	}
	names_encrypt(nctx, fuzz_dirid, "caf\xc3\xa9 \xe2\x9c\x93", 9, stored,
		      full, &is_long);
	put_str("names", "stored-utf8", 0, full);
	names_encrypt(nctx, fuzz_dirid2, "a", 1, stored, full, &is_long);
	put_str("names", "stored-other-dirid", 0, full);
	names_encrypt(nctx, fuzz_dirid, "hello", 5, stored, full, &is_long);
	snprintf(buf, sizeof(buf), "%s=", full);
	put_str("names", "stored-padding", 0, buf);
	snprintf(buf, sizeof(buf), "%s", full);
	buf[3] = buf[3] == 'A' ? 'B' : 'A';
	put_str("names", "stored-changed", 0, buf);
	snprintf(buf, sizeof(buf), "%s", full);
	buf[5] = '+';
	put_str("names", "stored-bad-char", 0, buf);
	put("names", "stored-cut", 0, full, strlen(full) - 1);
	/* authentic, but no name or not canonical */
	raw_stored(buf, fuzz_dirid, "a", 1, 32);
	put_str("names", "stored-pad-too-long", 0, buf);
	raw_stored(buf, fuzz_dirid, "a\0b", 3, 16);
	put_str("names", "stored-nul-inside", 0, buf);
	raw_stored(buf, fuzz_dirid, "a/b", 3, 16);
	put_str("names", "stored-slash", 0, buf);
	raw_stored(buf, fuzz_dirid, ".", 1, 16);
	put_str("names", "stored-dot", 0, buf);
	raw_stored(buf, fuzz_dirid, "..", 2, 16);
	put_str("names", "stored-dotdot", 0, buf);
	raw_stored(buf, fuzz_dirid, "", 0, 16);
	put_str("names", "stored-empty-name", 0, buf);
	raw_stored(buf, fuzz_dirid, "", 0, 272);
	put_str("names", "stored-too-long", 0, buf);
	put_str("names", "stored-empty", 0, "");
	put_str("names", "stored-one", 0, "A");

	/* base64url: mode 1, then the room byte */
	put_str("names", "b64-empty", 1, "\x7f");
	put_str("names", "b64-ok", 1, "\x7f" "AAECAwQFBgcICQ");
	put_str("names", "b64-room-short", 1, "\x09" "AAECAwQFBgcICQ");
	put_str("names", "b64-room-exact", 1, "\x0a" "AAECAwQFBgcICQ");
	put_str("names", "b64-4k1", 1, "\x7f" "AAECA");
	put_str("names", "b64-trailing-bits", 1, "\x7f" "AAECAwQFBgcICR");
	put_str("names", "b64-trailing-bits3", 1, "\x7f" "AAECAwQFBgcIC_");
	put_str("names", "b64-padding", 1, "\x7f" "AAECAwQFBgcICQ==");
	put_str("names", "b64-std-alphabet", 1, "\x7f" "+/+/");
	put_str("names", "b64-url-alphabet", 1, "\x7f" "-_-_");
	put("names", "b64-nul", 1, "\x7f" "AA\0A", 5);

	/* illegal plaintext names */
	put_str("names", "plain-empty", 2, "");
	put_str("names", "plain-dot", 2, ".");
	put_str("names", "plain-dotdot", 2, "..");
	put_str("names", "plain-dotdotdot", 2, "...");
	put_str("names", "plain-slash", 2, "a/b");
	put("names", "plain-nul", 2, "a\0b", 3);
	fill(name, 256, 'A');
	put("names", "plain-256", 2, name, 256);

	/* lower names readdir meets */
	put_str("names", "lower-dirid", 3, NAMES_DIRID_FILE);
	put_str("names", "lower-volume", 3, VOL_FILE_NAME);
	put_str("names", "lower-volume-tmp", 3, VOL_TMP_NAME);
	put_str("names", "lower-long-prefix", 3, NAMES_LONG_PREFIX);
	put_str("names", "lower-long-21", 3,
		NAMES_LONG_PREFIX "AAAAAAAAAAAAAAAAAAAAA");
	put_str("names", "lower-long-23", 3,
		NAMES_LONG_PREFIX "AAAAAAAAAAAAAAAAAAAAAAA");
	put_str("names", "lower-long-bits", 3,
		NAMES_LONG_PREFIX "AAAAAAAAAAAAAAAAAAAAAB");
	put_str("names", "lower-link", 3,
		NAMES_LINK_PREFIX "AAAAAAAAAAAAAAAAAAAAAA");
	put_str("names", "lower-xtsfs", 3, "xtsfs");
	fill(buf, 300, 'a');
	memcpy(buf, NAMES_LONG_PREFIX, 11);
	put_str("names", "lower-300", 3, buf);
}

static void gen_longname(void)
{
	static const size_t tlens[] = { 1, 16, 3040, 3041, 4095 };
	static char t[4200], stored[NAMES_TARGET_MAX], full[NAMES_TARGET_MAX];
	static char big[NAMES_TARGET_MAX + 64];
	char name[300], s[NAMES_STORED_MAX + 1], f[NAMES_FULL_MAX];
	char f2[NAMES_FULL_MAX], s2[NAMES_STORED_MAX + 1], buf[700];
	char tag[64];
	bool is_long;

	/* sidecars: the entry's V (22 characters), then the content */
	fill(name, 255, 'a');
	names_encrypt(nctx, fuzz_dirid, name, 255, s, f, &is_long);
	snprintf(buf, sizeof(buf), "%s%s", s + 11, f);
	put_str("longname", "sidecar-255", 0, buf);
	snprintf(buf, sizeof(buf), "%s%s\n", s + 11, f);
	put_str("longname", "sidecar-newline", 0, buf);
	fill(name, 161, 'b');
	names_encrypt(nctx, fuzz_dirid, name, 161, s2, f2, &is_long);
	snprintf(buf, sizeof(buf), "%s%s", s2 + 11, f2);
	put_str("longname", "sidecar-161", 0, buf);
	snprintf(buf, sizeof(buf), "%s%s", s + 11, f2);
	put_str("longname", "sidecar-other-v", 0, buf);
	names_encrypt(nctx, fuzz_dirid, "short", 5, s2, f2, &is_long);
	snprintf(buf, sizeof(buf), "%s%s", s + 11, f2);
	put_str("longname", "sidecar-inline-name", 0, buf);
	snprintf(buf, sizeof(buf), "%.22s%.300s", s + 11, f);
	put_str("longname", "sidecar-cut", 0, buf);
	put_str("longname", "sidecar-empty", 0, s + 11);

	/* stored targets and link files */
	for (size_t i = 0; i < sizeof(tlens) / sizeof(tlens[0]); i++) {
		fill(t, tlens[i], '/' + 18);
		t[0] = '/';
		names_encrypt_target(nctx, t, tlens[i], stored, full, &is_long);
		snprintf(tag, sizeof(tag), "target-%zu", tlens[i]);
		put_str("longname", tag, 1, full);
		if (tlens[i] > 16)
			continue; /* the long plaintexts come from mutation */
		snprintf(tag, sizeof(tag), "plain-target-%zu", tlens[i]);
		put("longname", tag, 2, t, tlens[i]);
	}
	/* long targets: the reference's V, then the file's content */
	fill(t, 3041, 'a');
	names_encrypt_target(nctx, t, 3041, stored, full, &is_long);
	snprintf(big, sizeof(big), "%s%s", stored + 11, full);
	put_str("longname", "ref-3041", 3, big);
	snprintf(big, sizeof(big), "%s%s\n", stored + 11, full);
	put_str("longname", "ref-newline", 3, big);
	memcpy(big, stored + 11, 22);
	names_encrypt_target(nctx, t, 3040, stored, full, &is_long);
	snprintf(big + 22, sizeof(big) - 22, "%s", full);
	put_str("longname", "ref-inline-target", 3, big);
	fill(t, 4095, 'c');
	names_encrypt_target(nctx, t, 4095, stored, full, &is_long);
	snprintf(big + 22, sizeof(big) - 22, "%s", full);
	put_str("longname", "ref-other-v", 3, big);
	memcpy(big, stored + 11, 22);
	put_str("longname", "ref-4095", 3, big);
	names_encrypt_target(nctx, "../x", 4, stored, full, &is_long);
	put_str("longname", "target-dotdot", 1, full);
	full[7] ^= 1;
	put_str("longname", "target-changed", 1, full);
	names_encrypt(nctx, fuzz_dirid, "../x", 4, s, f, &is_long);
	put_str("longname", "target-is-a-name", 1, f);
	raw_stored(buf, NULL, "a\0b", 3, 16);
	put_str("longname", "target-nul-inside", 1, buf);
	raw_stored(buf, NULL, "a", 1, 32);
	put_str("longname", "target-pad-too-long", 1, buf);
	put_str("longname", "target-empty", 1, "");
	put_str("longname", "plain-target-empty", 2, "");
	put("longname", "plain-target-nul", 2, "a\0", 2);
	fill(t, 4096, 'a');
	put("longname", "plain-target-4096", 2, t, 4096);
}

/* mode 2 and 4 inputs: [@room byte,] @name, NUL, @len bytes of @v */
static void put_named(const char *tag, int mode, int room, const char *name,
		      const void *v, size_t len)
{
	static uint8_t buf[2 + XTSFS_XATTR_NAME_BUF + 70000];
	size_t o = 0, n = strlen(name);

	if (room >= 0)
		buf[o++] = (uint8_t)room;
	memcpy(buf + o, name, n + 1);
	o += n + 1;
	if (len)
		memcpy(buf + o, v, len);
	put("xattr", tag, mode, buf, o + len);
}

/* a stored xattr name of @pt (@p bytes, as given) under @prefix's AD */
static void raw_xattr_name(char *out, const char *prefix, const char *pt,
			   size_t n, size_t p)
{
	uint8_t in[256] = { 0 }, ct[16 + 256];
	struct siv_ad ad[2] = {
		{ (const uint8_t *)XTSFS_XATTR_NAME_AD, 16 },
		{ (const uint8_t *)prefix, strlen(prefix) },
	};

	memcpy(in, pt, n);
	aes_siv_encrypt(&siv, ct, in, p, ad, 2);
	snprintf(out, XTSFS_XATTR_NAME_BUF, "%sxtsfs.", prefix);
	names_b64_encode(out + strlen(out), ct, 16 + p);
}

static void gen_xattr(void)
{
	static const size_t lens[] = { 1, 15, 16, 17, 160 };
	static uint8_t val[70000], st[70000];
	char name[400], lower[XTSFS_XATTR_NAME_BUF], tag[64];
	char list[4096], buf[600];
	size_t o = 1; /* list[0]: the pass mask */
	ssize_t n;

	/* stored and plaintext names of each padded size, both namespaces */
	for (int t = 0; t < 2; t++) {
		const char *pre = t ? "trusted." : "user.";

		for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
			snprintf(name, sizeof(name), "%s", pre);
			fill(name + strlen(pre), lens[i], 'a');
			xattr_name_enc(nctx, name, lower);
			snprintf(tag, sizeof(tag), "stored-%s%zu", pre,
				 lens[i]);
			put_str("xattr", tag, 0, lower);
			snprintf(tag, sizeof(tag), "plain-%s%zu", pre,
				 lens[i]);
			put_str("xattr", tag, 1, name);
		}
	}
	xattr_name_enc(nctx, "user.hello", lower);
	snprintf(buf, sizeof(buf), "trusted.%s", lower + 5);
	put_str("xattr", "stored-other-ns", 0, buf);
	snprintf(buf, sizeof(buf), "%s", lower);
	buf[15] = buf[15] == 'A' ? 'B' : 'A';
	put_str("xattr", "stored-changed", 0, buf);
	snprintf(buf, sizeof(buf), "%s=", lower);
	put_str("xattr", "stored-padding", 0, buf);
	snprintf(buf, sizeof(buf), "%.*s", (int)strlen(lower) - 1, lower);
	put_str("xattr", "stored-cut", 0, buf);
	raw_xattr_name(buf, "user.", "a", 1, 32);
	put_str("xattr", "stored-pad-too-long", 0, buf);
	raw_xattr_name(buf, "user.", "a\0b", 3, 16);
	put_str("xattr", "stored-nul-inside", 0, buf);
	raw_xattr_name(buf, "user.", "", 0, 16);
	put_str("xattr", "stored-empty-name", 0, buf);
	raw_xattr_name(buf, "trusted.", "", 0, 176);
	put_str("xattr", "stored-176", 0, buf);
	put_str("xattr", "stored-marker-only", 0, "user.xtsfs.");
	put_str("xattr", "stored-foreign", 0, "user.foreign");
	put_str("xattr", "stored-no-dot", 0, "user.xtsfsAAAA");
	put_str("xattr", "stored-security", 0, "security.xtsfs.AAAA");
	put_str("xattr", "stored-empty", 0, "");
	/* plaintext names over and at the limits */
	put_str("xattr", "plain-bare-user", 1, "user.");
	put_str("xattr", "plain-bare-trusted", 1, "trusted.");
	put_str("xattr", "plain-security", 1, "security.capability");
	put_str("xattr", "plain-acl", 1, "system.posix_acl_access");
	put_str("xattr", "plain-other", 1, "osx.x");
	snprintf(name, sizeof(name), "user.");
	fill(name + 5, 161, 'a');
	put_str("xattr", "plain-user.161", 1, name);
	snprintf(name, sizeof(name), "trusted.");
	fill(name + 8, 247, 'a');
	put_str("xattr", "plain-trusted.247", 1, name);

	/* stored values: sizes, room classes, damage, another name */
	static const size_t vlens[] = { 0, 1, 16, 17, 4096 };
	xattr_name_enc(nctx, "user.mime_type", lower);
	for (size_t i = 0; i < sizeof(vlens) / sizeof(vlens[0]); i++) {
		for (size_t j = 0; j < vlens[i]; j++)
			val[j] = (uint8_t)(j * 11 + 5);
		n = xattr_value_enc(nctx, lower, val, vlens[i], st,
				    sizeof(st));
		for (int room = 0; room < 4; room++) {
			snprintf(tag, sizeof(tag), "value-%zu-room%d",
				 vlens[i], room);
			put_named(tag, 2, room, lower, st, (size_t)n);
		}
		snprintf(tag, sizeof(tag), "plain-value-%zu", vlens[i]);
		put_named(tag, 4, -1, lower, val, vlens[i]);
	}
	n = xattr_value_enc(nctx, lower, "text/plain", 10, st, sizeof(st));
	put_named("value-other-name", 2, 3, "user.xtsfs.other", st,
		  (size_t)n);
	st[20] ^= 1;
	put_named("value-flipped", 2, 3, lower, st, (size_t)n);
	put_named("value-15", 2, 3, lower, st, 15);
	memset(st, 0, 16);
	put_named("value-zeros", 2, 0, lower, st, 16);
	memset(val, 'v', XTSFS_XATTR_VALUE_MAX + 1);
	n = xattr_value_enc(nctx, lower, val, XTSFS_XATTR_VALUE_MAX, st,
			    sizeof(st));
	put_named("value-max", 2, 1, lower, st, (size_t)n);
	put_named("plain-value-max", 4, -1, lower, val,
		  XTSFS_XATTR_VALUE_MAX);
	put_named("plain-value-over", 4, -1, lower, val,
		  XTSFS_XATTR_VALUE_MAX + 1);
	put_named("value-no-name", 2, 3, "", st, 16);

	/* lower lists: ours, foreign, damaged, passed and dropped */
#define ADD(s) (memcpy(list + o, (s), strlen(s) + 1), o += strlen(s) + 1)
	ADD("security.selinux");
	xattr_name_enc(nctx, "user.a", lower);
	ADD(lower);
	ADD("user.foreign");
	xattr_name_enc(nctx, "trusted.overlay.opaque", lower);
	ADD(lower);
	ADD("system.posix_acl_access");
	ADD("osx.other");
	ADD(buf);
	ADD("trusted.xtsfs.");
	/* list[0] is the pass mask: none, security and system, all */
	list[0] = 0;
	put("xattr", "list-mixed-pass0", 3, list, o);
	list[0] = 0x18;
	put("xattr", "list-mixed-pass-sec-sys", 3, list, o);
	put("xattr", "list-cut", 3, list, o - 1);
	list[0] = 0x1f;
	put("xattr", "list-mixed-pass-all", 3, list, o);
	put("xattr", "list-empty", 3, "\x18", 1);
	put("xattr", "list-empty-name", 3, "\x18security.x\0\0", 13);
	put("xattr", "list-only-nul", 3, "\x18\0", 2);
#undef ADD
}

/*
 * A lower file of @n plaintext bytes under the fixed id, in the layout of
 * data offset @doff, into @lower. Return: its size.
 */
static size_t lower_file(struct xts_ctx *x, size_t n, uint8_t *lower,
			 uint32_t doff)
{
	static uint8_t p[4 * CONTENT_UNIT];
	uint8_t hdr[CONTENT_HDR_SIZE] = { 'x', 't', 's', 'f', 1 };
	struct content_hdr h;
	uint64_t psize = 0;
	int fd;

	memcpy(hdr + 8, "fuzz-content-id", 16);
	memcpy(h.id, hdr + 8, 16);
	h.doff = doff;
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 7 + 1);
	fd = fuzz_memfd(hdr, sizeof(hdr));
	if (n && content_write(x, fd, &h, &psize, p, n, 0, 0) != (ssize_t)n) {
		fprintf(stderr, "content_write failed\n");
		exit(1);
	}
	n = n ? doff + n : CONTENT_HDR_SIZE;
	if (pread(fd, lower, n, 0) != (ssize_t)n) {
		perror("pread");
		exit(1);
	}
	close(fd);
	return n;
}

/*
 * Seeds of the aligned layout (fuzz_content.c flags bit 3): raw files
 * of every size class, read and written over; a header with junk in
 * the hole after it (ignored: an empty file); built files cut and
 * flipped inside that hole and in the first unit.
 */
static void gen_content_aligned(struct xts_ctx *x)
{
	static const size_t sizes[] = { 1, 15, 17, 4096, 4097, 8192 + 5 };
	static uint8_t lower[4 + LAYOUT_DOFF_ALIGNED + 4 * CONTENT_UNIT];
	static uint8_t p[4 + 5000];
	char tag[64];
	size_t n;

	memcpy(lower, "\x01\x03\x02\x01", 4);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		n = lower_file(x, sizes[i], lower + 4, LAYOUT_DOFF_ALIGNED);
		snprintf(tag, sizeof(tag), "aligned-raw-%zu", sizes[i]);
		put("content", tag, 8, lower, 4 + n);
		snprintf(tag, sizeof(tag), "aligned-raw-write-%zu", sizes[i]);
		put("content", tag, 8 | 2, lower, 4 + n);
	}
	n = lower_file(x, 0, lower + 4, LAYOUT_DOFF_ALIGNED);
	put("content", "aligned-raw-header-only", 8, lower, 4 + n);
	memset(lower + 4 + n, 0x5a, 2000);
	put("content", "aligned-raw-hole-junk", 8 | 2, lower, 4 + n + 2000);
	/* built, 5000 bytes: cut and flip at 2000 (the hole), flip at 4196 */
	memset(p, 0, 4);
	for (size_t j = 0; j < 5000; j++)
		p[4 + j] = (uint8_t)(j * 5 + 3);
	p[0] = 2000 & 255;
	p[1] = 2000 >> 8;
	p[2] = 1;
	put("content", "aligned-built-cut-hole", 1 | 8, p, sizeof(p));
	p[2] = 2;
	put("content", "aligned-built-flip-hole", 1 | 8, p, sizeof(p));
	p[0] = 4196 & 255;
	p[1] = 4196 >> 8;
	put("content", "aligned-built-flip-data", 1 | 8, p, sizeof(p));
}

static void gen_content(void)
{
	static const size_t sizes[] = { 0, 1, 15, 16, 17, 4095, 4096, 4097,
					4111, 4112, 8192 + 5 };
	static uint8_t lower[4 + CONTENT_HDR_SIZE + 4 * CONTENT_UNIT];
	static uint8_t p[4 + 4 * CONTENT_UNIT];
	const struct xts_backend *be;
	struct xts_ctx *x;
	uint8_t key[64];
	char tag[64];
	size_t n;

	fuzz_key(key, sizeof(key), 3);
	if (xts_choose(NULL, &be) || xts_ctx_new(&x, be, key)) {
		fprintf(stderr, "no XTS context\n");
		exit(1);
	}
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		/* raw: read at 100, 200 bytes; write 38 bytes at 134 */
		memcpy(lower, "\x01\x03\x02\x01", 4);
		n = lower_file(x, sizes[i], lower + 4, LAYOUT_DOFF_COMPACT);
		snprintf(tag, sizeof(tag), "raw-%zu", sizes[i]);
		put("content", tag, 0, lower, 4 + n);
		snprintf(tag, sizeof(tag), "raw-write-%zu", sizes[i]);
		put("content", tag, 2, lower, 4 + n);
		/* built: cut at 20 (in the header), flip at 30 (the slot) */
		memset(p, 0, 4);
		p[0] = 20;
		p[2] = 1;
		p[3] = 77;
		for (size_t j = 0; j < sizes[i]; j++)
			p[4 + j] = (uint8_t)(j * 5 + 3);
		snprintf(tag, sizeof(tag), "built-cut-header-%zu", sizes[i]);
		put("content", tag, 1, p, 4 + sizes[i]);
		p[0] = 30;
		p[2] = 2;
		snprintf(tag, sizeof(tag), "built-flip-slot-%zu", sizes[i]);
		put("content", tag, 1, p, 4 + sizes[i]);
		/* cut at 45 + 4096: inside the second unit */
		p[0] = (45 + 4096) & 255;
		p[1] = (45 + 4096) >> 8;
		p[2] = 1;
		snprintf(tag, sizeof(tag), "built-cut-data-%zu", sizes[i]);
		put("content", tag, 1, p, 4 + sizes[i]);
	}
	/* damaged raw files */
	memcpy(lower, "\0\0\0\0", 4);
	n = lower_file(x, 4101, lower + 4, LAYOUT_DOFF_COMPACT);
	put("content", "raw-cut-header", 0, lower, 4 + 20);
	put("content", "raw-header-only", 0, lower, 4 + CONTENT_HDR_SIZE);
	lower[4 + 4] = 2;
	put("content", "raw-version-2", 0, lower, 4 + n);
	lower[4 + 4] = 1;
	lower[4] = 'X';
	put("content", "raw-bad-magic", 0, lower, 4 + n);
	lower[4] = 'x';
	memset(lower + 4 + CONTENT_HDR_SIZE, 0, CONTENT_UNIT);
	put("content", "raw-hole", 0, lower, 4 + n);
	n = lower_file(x, 4096 + 7, lower + 4, LAYOUT_DOFF_COMPACT);
	lower[4 + CONTENT_SLOT_OFF + 12] ^= 1;
	put("content", "raw-torn-tail", 2, lower, 4 + n);
	memset(lower + 4 + CONTENT_SLOT_OFF, 0, 16);
	memset(lower + 4 + CONTENT_HDR_SIZE + 4096, 0, 7);
	put("content", "raw-hole-tail", 2, lower, 4 + n);
	put("content", "empty", -1, "", 0);
	put("content", "one", 0, "", 0);
	gen_content_aligned(x);
	xts_ctx_free(x);
}

static void gen_volkey(void)
{
	struct vol_keys k;
	struct vol_key_info ki = { .format = VOL_VERSION, .flags = 1 };
	char text[VOL_KEY_TEXT_SIZE], buf[2 * VOL_KEY_TEXT_SIZE];
	const char *body;
	size_t o = 0;

	fuzz_key((uint8_t *)&k, sizeof(k), 4);
	fuzz_key(ki.uuid, sizeof(ki.uuid), 5);
	ki.format = 1; /* a key text of a volume made before format 2 */
	vol_key_format(text, &k, &ki);
	put_str("volkey", "formatted-v2-format1", -1, text);
	ki.format = VOL_VERSION;
	vol_key_format(text, &k, &ki);
	put_str("volkey", "formatted-v2", -1, text);
	snprintf(buf, sizeof(buf), "# paper copy\n%s", text);
	put_str("volkey", "v2-comment", -1, buf);
	body = strchr(text, '\n') + 1;
	memmove(text, body, strlen(body) + 1);
	*strstr(text, "check=") = '\0'; /* the version 1 text: digits only */
	put_str("volkey", "formatted", -1, text);
	for (size_t i = 0; text[i]; i++)
		buf[i] = text[i] >= 'a' && text[i] <= 'f' ?
				 (char)(text[i] - 'a' + 'A') : text[i];
	put("volkey", "upper", -1, buf, strlen(text));
	for (size_t i = 0; text[i]; i++)
		if (text[i] != '-' && text[i] != '\n')
			buf[o++] = text[i];
	put("volkey", "bare", -1, buf, o);
	put("volkey", "bare-319", -1, buf, o - 1);
	buf[o] = '0';
	put("volkey", "bare-321", -1, buf, o + 1);
	buf[100] = 'g';
	put("volkey", "bad-digit", -1, buf, o);
	buf[100] = '\0';
	put("volkey", "nul-inside", -1, buf, o);
	buf[100] = '0';
	o = 0;
	for (size_t i = 0; text[i]; i++)
		buf[o++] = text[i] == '-' ? '\t' :
			   text[i] == '\n' ? '\r' : text[i];
	put("volkey", "tabs-cr", -1, buf, o);
	snprintf(buf, sizeof(buf), "  %s\n\n", text);
	put_str("volkey", "spaced", -1, buf);
	put_str("volkey", "empty", -1, "");
	put_str("volkey", "dash", -1, "-");
	put_str("volkey", "one-digit", -1, "a");
}


static void wrap_or_die(uint8_t *w, const uint8_t *key, size_t n,
			const uint8_t kek[32])
{
	if (aes_kw_wrap(w, key, n, kek) != 0) {
		fprintf(stderr, "aes_kw_wrap failed\n");
		exit(1);
	}
}

static void gen_keywrap(void)
{
	static const size_t lens[] = { 16, 24, VOL_BLOB_SIZE, 4096 };
	static uint8_t key[4096 + 64], w[4096 + 64];
	uint8_t kek[32];
	char tag[64];

	fuzz_key(kek, sizeof(kek), 2);
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		size_t n = lens[i];

		fuzz_key(key + 2, n, 5 + (unsigned)i);
		wrap_or_die(w, key + 2, n, kek);
		snprintf(tag, sizeof(tag), "unwrap-%zu", n);
		put("keywrap", tag, 0, w, n + 8);
		snprintf(tag, sizeof(tag), "unwrap-in-place-%zu", n);
		put("keywrap", tag, 2, w, n + 8);
		w[n / 2] ^= 4;
		snprintf(tag, sizeof(tag), "unwrap-flipped-%zu", n);
		put("keywrap", tag, 0, w, n + 8);
		/* wrap round: the bit to flip, then the key data */
		key[0] = (uint8_t)(3 * i + 1);
		key[1] = 0;
		snprintf(tag, sizeof(tag), "round-%zu", n);
		put("keywrap", tag, 4, key, n + 2);
	}
	/* the KEK in the input */
	memcpy(key, kek, 32);
	fuzz_key(key + 32, VOL_BLOB_SIZE, 9);
	wrap_or_die(w, key + 32, VOL_BLOB_SIZE, kek);
	memcpy(key + 32, w, VOL_WRAPPED_SIZE);
	put("keywrap", "kek-in-input", 1, key, 32 + VOL_WRAPPED_SIZE);
	key[0] ^= 1;
	put("keywrap", "kek-wrong", 1, key, 32 + VOL_WRAPPED_SIZE);
	put("keywrap", "len-23", 0, w, 23);
	put("keywrap", "len-16", 0, w, 16);
	memset(w, 0, sizeof(w));
	put("keywrap", "len-4112", 0, w, 4112);
	put("keywrap", "zeros-168", 0, w, VOL_WRAPPED_SIZE);
	put("keywrap", "empty", -1, "", 0);
	put("keywrap", "round-len-20", 4, w, 22);
}

int main(int argc, char **argv)
{
	uint8_t key[64];

	if (argc != 2) {
		fprintf(stderr, "usage: %s SRCDIR/tests/fuzz\n", argv[0]);
		return 2;
	}
	top = argv[1];
	fuzz_key(key, sizeof(key), 1);
	if (names_ctx_new(&nctx, key)) {
		fprintf(stderr, "names_ctx_new failed\n");
		return 1;
	}
	aes_siv_setkey(&siv, key);
	gen_names();
	gen_longname();
	gen_content();
	gen_volkey();
	gen_keywrap();
	gen_xattr();
	names_ctx_free(nctx);
	aes_siv_wipe(&siv);
	return 0;
}
