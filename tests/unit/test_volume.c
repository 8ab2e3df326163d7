/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_volume.c - the volume header without FUSE: round trips, a table
 * of corruptions (one generator each) with the error every one must give,
 * the MAC against downgrades, key slots, the volume-key text format, and
 * the file level (two copies, truncation, stale temp files, fallbacks),
 * the unlock path (the passphrase asked for once, through get_pass, and
 * only when a slot is worth trying; a failing source), its refusal of
 * slots too costly for this machine, and
 * planted special files (FIFO, device, directory, huge) as the header or
 * the volume key file, each refused without blocking.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "crc32c.h"
#include "names.h"
#include "secmem.h"
#include "testutil.h"
#include "volume.h"

static const struct kdf_params tiny = { .t_cost = 1, .m_cost_kib = 8,
					.lanes = 1 };

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void fix_crc(uint8_t *c)
{
	put32(c + VOL_CRC_OFF, crc32c(c, VOL_CRC_OFF));
}

/* generators: each damages a valid copy; fix_crc() where it should pass CRC */
static void g_flip_magic(uint8_t *c) { c[0] ^= 1; fix_crc(c); }
static void g_zero(uint8_t *c) { memset(c, 0, VOL_COPY_SIZE); }
static void g_flip_data(uint8_t *c) { c[2000] ^= 0x40; }
static void g_flip_crc(uint8_t *c) { c[VOL_CRC_OFF] ^= 1; }
static void g_version3(uint8_t *c) { put32(c + 8, 3); fix_crc(c); }
static void g_version0(uint8_t *c) { put32(c + 8, 0); fix_crc(c); }
static void g_copysize(uint8_t *c) { put32(c + 12, 8192); fix_crc(c); }
static void g_cipher(uint8_t *c) { c[40 + 8] = '1'; fix_crc(c); }
static void g_unit(uint8_t *c) { put32(c + 56, 512); fix_crc(c); }
static void g_flag(uint8_t *c) { c[60] |= 0x80; fix_crc(c); }
static void g_names(uint8_t *c) { memcpy(c + 64, "aes-256-eme", 11); fix_crc(c); }
static void g_blobsize(uint8_t *c) { put32(c + 80, 96); fix_crc(c); }
static void g_nslots(uint8_t *c) { put32(c + 84, 32); fix_crc(c); }
static void g_reserved0(uint8_t *c) { c[100] = 1; fix_crc(c); }
static void g_reserved1(uint8_t *c) { c[3000] = 1; fix_crc(c); }
static void g_reserved2(uint8_t *c) { c[4085] = 1; fix_crc(c); }
static void g_slot_state(uint8_t *c) { put32(c + 128, 7); fix_crc(c); }
static void g_slot_kdf(uint8_t *c) { put32(c + 128 + 4, 2); fix_crc(c); }
static void g_t0(uint8_t *c) { put32(c + 128 + 8, 0); fix_crc(c); }
static void g_thuge(uint8_t *c) { put32(c + 128 + 8, 0xffffffff); fix_crc(c); }
static void g_mhuge(uint8_t *c) { put32(c + 128 + 12, 0xffffffff); fix_crc(c); }
static void g_m4g1(uint8_t *c) { put32(c + 128 + 12, (4u << 20) + 1); fix_crc(c); }
static void g_msmall(uint8_t *c) { put32(c + 128 + 12, 7); fix_crc(c); }
static void g_lanes0(uint8_t *c) { put32(c + 128 + 16, 0); fix_crc(c); }
static void g_lanes17(uint8_t *c) { put32(c + 128 + 16, 17); fix_crc(c); }
static void g_slot_res(uint8_t *c) { c[128 + 250] = 1; fix_crc(c); }
static void g_empty_dirty(uint8_t *c) { c[128 + 256 + 30] = 1; fix_crc(c); }
static void g_no_slots(uint8_t *c) { memset(c + 128, 0, 256); fix_crc(c); }

static const struct {
	const char *name;
	void (*gen)(uint8_t *copy);
	int want;
} corruptions[] = {
	{ "magic changed (CRC fixed)", g_flip_magic, -EBADMSG },
	{ "zero-filled", g_zero, -EBADMSG },
	{ "bit flip in the body", g_flip_data, -EBADMSG },
	{ "bit flip in the CRC", g_flip_crc, -EBADMSG },
	{ "future version 3", g_version3, -EPROTONOSUPPORT },
	{ "version 0", g_version0, -EPROTONOSUPPORT },
	{ "copy size 8192", g_copysize, -EPROTONOSUPPORT },
	{ "contents cipher renamed", g_cipher, -EPROTONOSUPPORT },
	{ "unit size 512", g_unit, -EPROTONOSUPPORT },
	{ "unknown flag bit", g_flag, -EPROTONOSUPPORT },
	{ "names cipher renamed", g_names, -EPROTONOSUPPORT },
	{ "blob size 96", g_blobsize, -EPROTONOSUPPORT },
	{ "32 key slots", g_nslots, -EPROTONOSUPPORT },
	{ "reserved bytes before the slots", g_reserved0, -EPROTONOSUPPORT },
	{ "reserved bytes after the slots", g_reserved1, -EPROTONOSUPPORT },
	{ "reserved bytes before the CRC", g_reserved2, -EPROTONOSUPPORT },
	{ "slot state 7", g_slot_state, -EPROTONOSUPPORT },
	{ "slot KDF 2", g_slot_kdf, -EPROTONOSUPPORT },
	{ "argon2 time 0", g_t0, -EINVAL },
	{ "argon2 time 2^32-1", g_thuge, -EINVAL },
	{ "argon2 memory 2^32-1 KiB", g_mhuge, -EINVAL },
	{ "argon2 memory 4 GiB + 1 KiB", g_m4g1, -EINVAL },
	{ "argon2 memory below 8 KiB per lane", g_msmall, -EINVAL },
	{ "argon2 lanes 0", g_lanes0, -EINVAL },
	{ "argon2 lanes 17", g_lanes17, -EINVAL },
	{ "slot reserved bytes", g_slot_res, -EPROTONOSUPPORT },
	{ "empty slot not all zero", g_empty_dirty, -EINVAL },
	{ "no active slot", g_no_slots, -EINVAL },
};

static struct vol_keys *keys;
static struct vol_header hdr;
static uint8_t good[VOL_COPY_SIZE];

static void make_header(void)
{
	CHECK(vol_keys_new(&keys) == 0, "vol_keys_new");
	CHECK(memcmp(keys->contents, keys->contents + 32, 32) != 0,
	      "contents key halves equal");
	memset(&hdr, 0, sizeof(hdr));
	memset(hdr.uuid, 0x11, 16);
	CHECK(vol_slot_store(&hdr, 0, "correct horse", 13, &tiny, keys) == 0,
	      "slot store");
	hdr.seqid = 5;
	vol_to_disk(good, &hdr, keys);
}

static void check_roundtrip(void)
{
	struct vol_header h;

	CHECK(vol_from_disk(&h, good) == 0, "valid copy refused");
	CHECK(h.seqid == 5 && h.version == VOL_VERSION && h.flags == 0,
	      "fields: seqid %llu version %u flags %u",
	      (unsigned long long)h.seqid, h.version, h.flags);
	CHECK(!memcmp(h.uuid, hdr.uuid, 16), "uuid");
	CHECK(vol_slot_count(&h) == 1 && h.slots[0].active, "slots");
	CHECK(h.slots[0].kdf.t_cost == 1 && h.slots[0].kdf.m_cost_kib == 8 &&
	      h.slots[0].kdf.lanes == 1, "kdf params");
	CHECK(vol_verify_mac(&h, keys), "MAC of a fresh header fails");
	CHECK(!memcmp(good, "XTSFSVOL", 8), "magic");
	/* a format 1 header is read, and rewritten as format 1 (2.2) */
	{
		uint8_t old[VOL_COPY_SIZE];
		struct vol_header h1 = hdr;

		h1.version = 1;
		vol_to_disk(old, &h1, keys);
		CHECK(old[8] == 1 && vol_from_disk(&h, old) == 0 &&
		      h.version == 1 && vol_verify_mac(&h, keys),
		      "format 1 kept on rewrite");
	}
}

static void check_corruptions(void)
{
	uint8_t c[VOL_COPY_SIZE];
	struct vol_header h;

	for (size_t i = 0; i < sizeof(corruptions) / sizeof(corruptions[0]); i++) {
		int got;

		memcpy(c, good, sizeof(c));
		corruptions[i].gen(c);
		got = vol_from_disk(&h, c);
		CHECK(got == corruptions[i].want, "%s: got %d (%s), want %d",
		      corruptions[i].name, got, strerror(-got),
		      corruptions[i].want);
	}
	/* every single-bit flip anywhere is caught */
	for (size_t off = 0; off < VOL_COPY_SIZE; off++) {
		memcpy(c, good, sizeof(c));
		c[off] ^= (uint8_t)(1u << (off % 8));
		CHECK(vol_from_disk(&h, c) != 0, "bit flip at %zu accepted", off);
	}
}

static void check_mac(void)
{
	uint8_t c[VOL_COPY_SIZE];
	struct vol_header h;

	/* Downgrade to plaintext names, with a valid CRC: parses, MAC fails. */
	memcpy(c, good, sizeof(c));
	c[60] |= VOL_FLAG_PLAINTEXT_NAMES;
	memset(c + 64, 0, 16);
	fix_crc(c);
	CHECK(vol_from_disk(&h, c) == 0, "edited header does not parse");
	CHECK(!vol_verify_mac(&h, keys), "downgrade not detected by the MAC");
	/* the layout switched: parses, the MAC fails */
	memcpy(c, good, sizeof(c));
	c[60] |= VOL_FLAG_ALIGNED;
	fix_crc(c);
	CHECK(vol_from_disk(&h, c) == 0, "aligned header does not parse");
	CHECK(!vol_verify_mac(&h, keys), "layout edit not detected by the MAC");
	/* reverse mode with the aligned layout: no valid header has both */
	c[60] |= VOL_FLAG_REVERSE;
	fix_crc(c);
	CHECK(vol_from_disk(&h, c) == -EPROTONOSUPPORT,
	      "reverse and aligned accepted");
	/* seqid rollback / any edit likewise */
	memcpy(c, good, sizeof(c));
	c[16] ^= 1;
	fix_crc(c);
	CHECK(vol_from_disk(&h, c) == 0 && !vol_verify_mac(&h, keys),
	      "seqid edit not detected");
}

static void check_slots(void)
{
	struct vol_keys *k = NULL;
	struct vol_header h;

	CHECK(vol_from_disk(&h, good) == 0, "parse");
	CHECK(vol_slot_open(&h, 0, "correct horse", 13, &k) == 0,
	      "right passphrase refused");
	CHECK(k && !memcmp(k, keys, sizeof(*k)), "unwrapped keys differ");
	vol_keys_free(k);
	CHECK(vol_slot_open(&h, 0, "correct horsf", 13, &k) == -EACCES,
	      "wrong passphrase accepted");
	CHECK(k == NULL, "keys returned on failure");
	CHECK(vol_slot_open(&h, 0, "correct horse", 12, &k) == -EACCES,
	      "prefix of the passphrase accepted");
	CHECK(vol_slot_open(&h, 1, "correct horse", 13, &k) == -ENOENT,
	      "empty slot opened");
	CHECK(vol_slot_open(&h, 8, "x", 1, &k) == -EINVAL, "slot 8 accepted");
	CHECK(vol_slot_store(&h, 8, "x", 1, &tiny, keys) == -EINVAL,
	      "store into slot 8");
	/* a second slot with another passphrase opens the same keys */
	CHECK(vol_slot_store(&h, 3, "second", 6, &tiny, keys) == 0, "store 3");
	CHECK(vol_slot_open(&h, 3, "second", 6, &k) == 0 &&
	      !memcmp(k, keys, sizeof(*k)), "slot 3");
	vol_keys_free(k);
	CHECK(vol_slot_open(&h, 3, "correct horse", 13, &k) == -EACCES,
	      "slot 3 opened by slot 0's passphrase");
	CHECK(memcmp(h.slots[0].salt, h.slots[3].salt, 32) != 0,
	      "salts repeat");
}

/* The version 2 key text of the test volume. */
static void format_key(char text[VOL_KEY_TEXT_SIZE])
{
	struct vol_key_info ki;

	vol_key_info_of(&ki, &hdr);
	vol_key_format(text, keys, &ki);
}

/* vol_key_parse() of @text, expecting @want; *@ki the description. */
static int parse_text(const char *text, struct vol_key_info *ki)
{
	struct vol_keys *k = secmem_alloc(sizeof(*k));
	int rc = vol_key_parse(k, ki, text, strlen(text));

	if (!rc)
		CHECK(!memcmp(k, keys, sizeof(*k)), "key differs: %s", text);
	secmem_free(k);
	return rc;
}

/* @text with its line "check=..." removed (a description by hand). */
static void drop_check(char *text)
{
	*strstr(text, "check=") = '\0';
}

/* The example of FORMAT.md 2.6: blob bytes 00..9f, that UUID. */
static void check_keytext_kat(void)
{
	static const char want[] =
"xtsfs-key v2 format=2 flags=0x00000000 uuid=00112233-4455-6677-8899-aabbccddeeff\n"
"00010203-04050607-08090a0b-0c0d0e0f\n"
"10111213-14151617-18191a1b-1c1d1e1f\n"
"20212223-24252627-28292a2b-2c2d2e2f\n"
"30313233-34353637-38393a3b-3c3d3e3f\n"
"40414243-44454647-48494a4b-4c4d4e4f\n"
"50515253-54555657-58595a5b-5c5d5e5f\n"
"60616263-64656667-68696a6b-6c6d6e6f\n"
"70717273-74757677-78797a7b-7c7d7e7f\n"
"80818283-84858687-88898a8b-8c8d8e8f\n"
"90919293-94959697-98999a9b-9c9d9e9f\n"
"check=bb36b226\n";
	/* format, flags, check value: the four examples of FORMAT.md 2.6 */
	static const struct { const char *fmt, *flags, *check; } ex[] = {
		{ "2", "0x00000001", "9a57f281" },
		{ "1", "0x00000000", "15b96d16" },
		{ "1", "0x00000001", "b2690211" },
	};
	struct vol_keys *k = secmem_alloc(sizeof(*k)), *k2 = secmem_alloc(sizeof(*k2));
	struct vol_key_info ki = { .text_version = 2, .format = 2 }, got;
	char text[VOL_KEY_TEXT_SIZE], t2[VOL_KEY_TEXT_SIZE];

	for (size_t i = 0; i < sizeof(*k); i++)
		((uint8_t *)k)[i] = (uint8_t)i;
	for (int i = 0; i < 16; i++)
		ki.uuid[i] = (uint8_t)(0x11 * i);
	vol_key_format(text, k, &ki);
	CHECK(!strcmp(text, want), "FORMAT.md 2.6 example:\n%s", text);
	for (size_t i = 0; i < sizeof(ex) / sizeof(ex[0]); i++) {
		strcpy(t2, want);
		t2[20] = ex[i].fmt[0];
		memcpy(t2 + 28, ex[i].flags, 10);
		memcpy(strstr(t2, "check=") + 6, ex[i].check, 8);
		CHECK(vol_key_parse(k2, &got, t2, strlen(t2)) == 0 &&
		      got.checked && got.format == (uint32_t)(ex[i].fmt[0] - '0') &&
		      got.flags == (ex[i].flags[9] == '1') &&
		      !memcmp(k, k2, sizeof(*k)), "example %zu", i + 2);
	}
	secmem_free(k);
	secmem_free(k2);
}

static void check_keytext(void)
{
	char text[VOL_KEY_TEXT_SIZE], t2[2 * VOL_KEY_TEXT_SIZE];
	struct vol_key_info ki, got;
	char *body, *p;

	vol_key_info_of(&ki, &hdr);
	vol_key_format(text, keys, &ki);
	body = strchr(text, '\n') + 1;
	CHECK(!strncmp(text, "xtsfs-key v2 format=2 flags=0x00000000 uuid=", 44)
	      && body - text == 44 + 36 + 1, "line 1: %.90s", text);
	CHECK(strlen(body) == 10 * 36 + 15, "key text length %zu", strlen(body));
	CHECK(parse_text(text, &got) == 0 && got.text_version == 2 &&
	      got.checked && got.format == 2 && got.flags == 0 &&
	      !memcmp(got.uuid, hdr.uuid, 16), "v2 round trip");
	/* comments, upper case, other blanks */
	snprintf(t2, sizeof(t2), "# written 2026-12-02\n  %s# end\n", text);
	for (p = t2; *p; p++)
		if (*p >= 'a' && *p <= 'f')
			*p = (char)(*p - 'a' + 'A');
	CHECK(parse_text(t2, &got) == 0 && got.checked, "comments, upper case");
	/* a typo anywhere is caught by the check value */
	strcpy(t2, text);
	p = t2 + (body - text) + 40;
	*p = *p == '0' ? '1' : '0';
	CHECK(parse_text(t2, NULL) == -EBADMSG, "typo in the key");
	strcpy(t2, text);
	memcpy(t2 + 28, "0x00000001", 10);
	CHECK(parse_text(t2, NULL) == -EBADMSG, "flags edited, old check");
	drop_check(t2);
	CHECK(parse_text(t2, &got) == 0 && !got.checked && got.flags == 1,
	      "a hand-written description without check");
	strcpy(t2, text);
	memcpy(t2 + 28, "0x00000080", 10);
	drop_check(t2);
	CHECK(parse_text(t2, NULL) == -EPROTONOSUPPORT, "unknown flag");
	/* the aligned layout (bit 2), but never with reverse mode (bit 1) */
	strcpy(t2, text);
	memcpy(t2 + 28, "0x00000004", 10);
	drop_check(t2);
	CHECK(parse_text(t2, &got) == 0 && got.flags == VOL_FLAG_ALIGNED,
	      "the aligned layout");
	strcpy(t2, text);
	memcpy(t2 + 28, "0x00000006", 10);
	drop_check(t2);
	CHECK(parse_text(t2, NULL) == -EPROTONOSUPPORT,
	      "reverse and aligned together");
	strcpy(t2, text);
	t2[11] = '3';
	CHECK(parse_text(t2, NULL) == -EPROTONOSUPPORT, "text version 3");
	strcpy(t2, text);
	t2[20] = '3';
	drop_check(t2);
	CHECK(parse_text(t2, NULL) == -EPROTONOSUPPORT, "format 3");
	strcpy(t2, text);
	t2[20] = '0';
	drop_check(t2);
	CHECK(parse_text(t2, NULL) == -EPROTONOSUPPORT, "format 0");
	strcpy(t2, text);
	strcat(t2, "00\n");
	CHECK(parse_text(t2, NULL) == -EINVAL, "digits after the check");
	/* version 1: the digits alone */
	strcpy(t2, body);
	drop_check(t2);
	CHECK(parse_text(t2, &got) == 0 && got.text_version == 1, "v1");
	t2[strlen(t2) - 2] = '\0';
	CHECK(parse_text(t2, NULL) == -EINVAL, "short key accepted");
	strcpy(t2, body);
	drop_check(t2);
	t2[5] = 'g';
	CHECK(parse_text(t2, NULL) == -EINVAL, "non-hex accepted");
}

static int write_file(int dfd, const char *name, const uint8_t *p, size_t len)
{
	int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	if (fd < 0)
		return -1;
	if (write(fd, p, len) != (ssize_t)len) {
		close(fd);
		return -1;
	}
	return close(fd);
}

/* vol_unlock() hook: note each slot tried, and that the cost came along. */
static void note_try_slot(void *arg, int slot, const struct kdf_params *kdf)
{
	unsigned int *tried = arg;

	CHECK(!(*tried & 1u << slot), "slot %d tried twice", slot);
	CHECK(kdf->t_cost == 1 && kdf->m_cost_kib == 8, "slot %d: kdf", slot);
	*tried |= 1u << slot;
}

/*
 * struct test_pass - the get_pass_arg of test_get_pass(): what it gives,
 * and how often vol_unlock() asked.
 */
struct test_pass {
	const char *pass;  /* the passphrase; NULL: fail with @rc */
	size_t len;        /* its length; 0: strlen(@pass) */
	int rc;            /* returned when @pass is NULL */
	int calls;         /* calls so far */
	size_t size;       /* the buffer size of the last call */
};

/* vol_unlock() get_pass: @arg's passphrase, or its error and a reason. */
static int test_get_pass(void *arg, char *buf, size_t size, size_t *len,
			 char *err, size_t errlen)
{
	struct test_pass *t = arg;

	t->calls++;
	t->size = size;
	if (!t->pass) {
		snprintf(err, errlen, "test source: no passphrase");
		return t->rc;
	}
	*len = t->len ? t->len : strlen(t->pass);
	if (*len <= size) /* else vol_unlock() must refuse it */
		memcpy(buf, t->pass, *len);
	return 0;
}

static void check_files(void)
{
	char dir[] = "/tmp/xtsfs-test-volume-XXXXXX";
	uint8_t file[VOL_FILE_SIZE];
	struct vol_header h;
	struct vol_read_info info;
	struct stat st;
	int dfd;

	CHECK(mkdtemp(dir) != NULL, "mkdtemp");
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	CHECK(vol_read(dfd, &h, &info) == -ENOENT, "missing header");
	h = hdr;
	CHECK(vol_write(dfd, &h, keys) == 0, "vol_write");
	CHECK(h.seqid == 6, "seqid not bumped: %llu",
	      (unsigned long long)h.seqid);
	CHECK(fstatat(dfd, VOL_FILE_NAME, &st, 0) == 0 &&
	      st.st_size == VOL_FILE_SIZE && (st.st_mode & 0777) == 0400,
	      "size %lld mode %o", (long long)st.st_size, st.st_mode & 0777);
	CHECK(fstatat(dfd, VOL_TMP_NAME, &st, 0) != 0, "temp file left");
	CHECK(vol_read(dfd, &h, &info) == 0 && info.copy_used == 0 &&
	      info.copy_ok[0] && info.copy_ok[1] && !info.copies_differ,
	      "fresh file");
	{
		int fd = openat(dfd, VOL_FILE_NAME, O_RDONLY);

		CHECK(read(fd, file, sizeof(file)) == sizeof(file), "read");
		close(fd);
	}
	CHECK(!memcmp(file, file + VOL_COPY_SIZE, VOL_COPY_SIZE),
	      "copies differ");
	unlinkat(dfd, VOL_FILE_NAME, 0);

	/* primary damaged: the secondary is used */
	file[300] ^= 0xff;
	write_file(dfd, VOL_FILE_NAME, file, sizeof(file));
	CHECK(vol_read(dfd, &h, &info) == 0 && info.copy_used == 1 &&
	      !info.copy_ok[0] && info.copy_err[0] == -EBADMSG,
	      "secondary not used");
	/* both damaged */
	file[VOL_COPY_SIZE + 300] ^= 0xff;
	write_file(dfd, VOL_FILE_NAME, file, sizeof(file));
	CHECK(vol_read(dfd, &h, &info) == -EBADMSG, "both damaged accepted");
	file[300] ^= 0xff;
	file[VOL_COPY_SIZE + 300] ^= 0xff;
	/* truncated to one copy: the primary still works */
	write_file(dfd, VOL_FILE_NAME, file, VOL_COPY_SIZE);
	CHECK(vol_read(dfd, &h, &info) == 0 && info.copy_used == 0 &&
	      !info.copy_ok[1], "one copy");
	/* truncated inside the primary: nothing */
	write_file(dfd, VOL_FILE_NAME, file, 100);
	CHECK(vol_read(dfd, &h, &info) == -EBADMSG, "truncated accepted");
	write_file(dfd, VOL_FILE_NAME, file, 0);
	CHECK(vol_read(dfd, &h, &info) == -EBADMSG, "empty file accepted");
	/* a future version in both copies is reported as such */
	put32(file + 8, 9);
	fix_crc(file);
	memcpy(file + VOL_COPY_SIZE, file, VOL_COPY_SIZE);
	write_file(dfd, VOL_FILE_NAME, file, sizeof(file));
	CHECK(vol_read(dfd, &h, &info) == -EPROTONOSUPPORT, "version");
	/* a stale temp file from a crash is ignored, then replaced */
	h = hdr;
	CHECK(vol_write(dfd, &h, keys) == 0, "rewrite");
	write_file(dfd, VOL_TMP_NAME, (const uint8_t *)"junk", 4);
	CHECK(vol_read(dfd, &h, &info) == 0, "stale temp file disturbs");
	CHECK(vol_write(dfd, &h, keys) == 0, "write over a stale temp file");
	CHECK(fstatat(dfd, VOL_TMP_NAME, &st, 0) != 0, "temp file left");

	/* the unlock path, with a passphrase file */
	{
		struct vol v;
		struct test_pass tp = { .pass = "correct horse" };
		unsigned int tried = 0;
		struct vol_unlock_req req = {
			.get_pass = test_get_pass, .get_pass_arg = &tp,
			.slot = -1, .on_try_slot = note_try_slot,
			.on_try_slot_arg = &tried,
		};
		char err[512];

		CHECK(vol_unlock(dfd, dir, &req, &v, err, sizeof(err)) == 0,
		      "unlock: %s", err);
		CHECK(tp.calls == 1 && tp.size == VOL_PASS_MAX,
		      "get_pass: %d calls, size %zu", tp.calls, tp.size);
		CHECK(v.slot == 0 && v.keys && !memcmp(v.keys, keys,
						       sizeof(*keys)), "keys");
		CHECK(tried == 1u << 0, "on_try_slot: slots %#x", tried);
		vol_close(&v);
		/* a second slot: a wrong passphrase tries both, in order */
		h = hdr;
		CHECK(vol_slot_store(&h, 5, "other", 5, &h.slots[0].kdf,
				     keys) == 0, "store slot 5");
		CHECK(vol_write(dfd, &h, keys) == 0, "write with slot 5");
		tried = 0;
		tp = (struct test_pass){ .pass = "wrong" };
		CHECK(vol_unlock(dfd, dir, &req, &v, err, sizeof(err)) ==
			      -EACCES, "wrong passphrase");
		CHECK(strstr(err, "wrong passphrase") && strstr(err, dir),
		      "message: %s", err);
		CHECK(tried == (1u << 0 | 1u << 5), "on_try_slot: slots %#x",
		      tried);
		/* asked once for both slots */
		CHECK(tp.calls == 1, "get_pass: %d calls", tp.calls);
		/* a prefix of the passphrase, given by length, is wrong */
		tried = 0;
		tp = (struct test_pass){ .pass = "correct horse", .len = 12 };
		CHECK(vol_unlock(dfd, dir, &req, &v, err, sizeof(err)) ==
			      -EACCES, "prefix accepted");
		/* the source fails: -ENOKEY, its reason, no slot tried */
		tried = 0;
		tp = (struct test_pass){ .rc = -ENOENT };
		CHECK(vol_unlock(dfd, dir, &req, &v, err, sizeof(err)) ==
			      -ENOKEY && v.keys == NULL, "source failed");
		CHECK(!strcmp(err, "test source: no passphrase"),
		      "message: %s", err);
		CHECK(tried == 0 && tp.calls == 1, "tried %#x", tried);
		/* the source gives 0 or more than VOL_PASS_MAX bytes */
		tp = (struct test_pass){ .pass = "x", .len = VOL_PASS_MAX + 1 };
		CHECK(vol_unlock(dfd, dir, &req, &v, err, sizeof(err)) ==
			      -ENOKEY && strstr(err, dir), "too long: %s", err);
		tp = (struct test_pass){ .pass = "" };
		CHECK(vol_unlock(dfd, dir, &req, &v, err, sizeof(err)) ==
			      -ENOKEY && strstr(err, "0 bytes"), "empty: %s",
		      err);
		CHECK(tried == 0, "tried %#x", tried);
		/* no source at all */
		req.get_pass = NULL;
		CHECK(vol_unlock(dfd, dir, &req, &v, err, sizeof(err)) ==
			      -ENOKEY && strstr(err, "no passphrase"),
		      "no source: %s", err);
		req.get_pass = test_get_pass;
		/* a passphrase of VOL_PASS_MAX bytes opens its slot */
		{
			static char big[VOL_PASS_MAX];

			memset(big, 'p', sizeof(big));
			CHECK(vol_slot_store(&h, 6, big, sizeof(big),
					     &h.slots[0].kdf, keys) == 0,
			      "store slot 6");
			CHECK(vol_write(dfd, &h, keys) == 0, "write slot 6");
			tp = (struct test_pass){ .pass = big,
						 .len = sizeof(big) };
			tried = 0;
			CHECK(vol_unlock(dfd, dir, &req, &v, err,
					 sizeof(err)) == 0 && v.slot == 6,
			      "VOL_PASS_MAX bytes: %s", err);
			vol_close(&v);
		}
	}
	/* no header: fails before asking for a passphrase */
	unlinkat(dfd, VOL_FILE_NAME, 0);
	{
		struct test_pass tp = { .pass = "correct horse" };
		struct vol_unlock_req req = {
			.get_pass = test_get_pass, .get_pass_arg = &tp,
			.slot = -1,
		};
		struct vol v;
		char err[512];

		CHECK(vol_unlock(dfd, dir, &req, &v, err, sizeof(err)) ==
			      -ENOENT && tp.calls == 0,
		      "no header: %d calls: %s", tp.calls, err);
	}
	unlinkat(dfd, VOL_FILE_NAME, 0);
	close(dfd);
	rmdir(dir);
}

/* vol_unlock() hook: note each slot tried (any cost). */
static void note_slot(void *arg, int slot, const struct kdf_params *kdf)
{
	(void)kdf;
	*(unsigned int *)arg |= 1u << slot;
}

/* vol_unlock() hook: the costly slot is about to be tried; stop there. */
static void exit_on_costly(void *arg, int slot, const struct kdf_params *kdf)
{
	(void)arg;
	if (kdf->t_cost == KDF_T_MAX)
		_exit(40 + slot);
}

/*
 * A slot at the largest cost the bounds allow (hours and 4 GiB: too
 * costly on any machine) is skipped; if it is the only one, vol_unlock()
 * fails with -E2BIG before reading the passphrase (the passphrase file
 * does not exist yet). The header is MAC'd and valid otherwise.
 */
static void check_costly(void)
{
	static const struct kdf_params huge = { KDF_T_MAX, KDF_M_MAX,
						KDF_LANES_MAX };
	char dir[] = "/tmp/xtsfs-test-costly-XXXXXX", err[512];
	struct test_pass tp = { .pass = "other" };
	unsigned int tried = 0;
	struct vol_unlock_req req = {
		.get_pass = test_get_pass, .get_pass_arg = &tp, .slot = -1,
		.on_try_slot = note_slot, .on_try_slot_arg = &tried,
	};
	struct vol_header h = hdr;
	struct vol v;
	int dfd, status;
	pid_t pid;

	CHECK(mkdtemp(dir) != NULL, "mkdtemp");
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	h.slots[0].kdf = huge;
	CHECK(vol_write(dfd, &h, keys) == 0, "write");
	CHECK(vol_unlock(dfd, dir, &req, &v, err, sizeof(err)) == -E2BIG,
	      "costly slot: %s", err);
	CHECK(strstr(err, dir) && strstr(err, "key slot 0") &&
	      strstr(err, "4096 MiB") && strstr(err, "1000 iterations") &&
	      strstr(err, "16 lanes") && strstr(err, "per slot") &&
	      strstr(err, "--allow-costly-kdf"), "message: %s", err);
	CHECK(tried == 0 && v.keys == NULL, "tried %#x", tried);
	CHECK(tp.calls == 0, "get_pass called before -E2BIG");
	/* only that slot asked for: the same */
	req.slot = 0;
	CHECK(vol_unlock(dfd, dir, &req, &v, err, sizeof(err)) == -E2BIG,
	      "--slot 0: %s", err);
	CHECK(tp.calls == 0, "get_pass called before -E2BIG");
	req.slot = -1;
	/* the volume key needs no KDF: unaffected */
	{
		char kf[300], text[VOL_KEY_TEXT_SIZE];
		struct vol_unlock_req kreq = { .volume_key_file = kf, .slot = -1 };

		snprintf(kf, sizeof(kf), "%s/key", dir);
		format_key(text);
		write_file(AT_FDCWD, kf, (const uint8_t *)text, strlen(text));
		CHECK(vol_unlock(dfd, dir, &kreq, &v, err, sizeof(err)) == 0,
		      "volume key: %s", err);
		vol_close(&v);
		unlink(kf);
	}
	/* a cheap slot beside it opens; the costly one is never tried */
	CHECK(vol_slot_store(&h, 5, "other", 5, &tiny, keys) == 0, "store 5");
	CHECK(vol_write(dfd, &h, keys) == 0, "write with slot 5");
	CHECK(vol_unlock(dfd, dir, &req, &v, err, sizeof(err)) == 0 &&
	      v.slot == 5, "cheap slot: %s", err);
	CHECK(tried == 1u << 5, "tried %#x", tried);
	vol_close(&v);
	/* a wrong passphrase says a slot was skipped, and how to try it */
	tp = (struct test_pass){ .pass = "wrong" };
	tried = 0;
	CHECK(vol_unlock(dfd, dir, &req, &v, err, sizeof(err)) == -EACCES,
	      "wrong passphrase: %s", err);
	CHECK(strstr(err, "wrong passphrase") && strstr(err, "1 slot") &&
	      strstr(err, "--allow-costly-kdf"), "message: %s", err);
	CHECK(tried == 1u << 5, "tried %#x", tried);
	/* allow_costly_kdf: the costly slot is tried (stopped in a child) */
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		req.allow_costly_kdf = true;
		req.on_try_slot = exit_on_costly;
		vol_unlock(dfd, dir, &req, &v, err, sizeof(err));
		_exit(1);
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid, "fork");
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 40,
	      "allow_costly_kdf did not try slot 0: status %#x", status);
	unlinkat(dfd, VOL_FILE_NAME, 0);
	close(dfd);
	rmdir(dir);
}

/*
 * in_child() - run @fn(@arg) in a child that SIGALRM kills after 10 s,
 * so a call that would block (open of a FIFO without a writer) ends the
 * test with a failure instead of hanging it.
 * Return: the child's exit code (fn's value & 255), or -1 if it hung.
 */
static int in_child(int (*fn)(void *arg), void *arg, const char *what)
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		alarm(10);
		_exit(fn(arg) & 255);
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid, "fork");
	CHECK(!WIFSIGNALED(status), "%s: killed by signal %d (blocked?)",
	      what, WTERMSIG(status));
	if (WIFSIGNALED(status))
		return -1;
	return WEXITSTATUS(status);
}

/*
 * in_child() body: vol_read() of arg (a dirfd): -rc, plus 128 if the file
 * itself was not refused (no info.file_refused).
 */
static int child_vol_read(void *arg)
{
	struct vol_header h;
	struct vol_read_info info;
	int rc = vol_read(*(int *)arg, &h, &info);

	return (-rc & 127) | (rc && !info.file_refused ? 128 : 0);
}

struct key_try {
	int dfd;
	const char *dir, *keyfile, *want; /* want: in the message, or NULL */
};

/* in_child() body: vol_unlock() with a volume key file; 0 ok, 1 failed. */
static int child_key_unlock(void *arg)
{
	const struct key_try *t = arg;
	struct vol_unlock_req req = { .volume_key_file = t->keyfile,
				      .slot = -1 };
	struct vol v;
	char err[512];
	int rc = vol_unlock(t->dfd, t->dir, &req, &v, err, sizeof(err));

	vol_close(&v);
	if (t->want)
		return rc == -ENOKEY && strstr(err, t->want) ? 0 : 1;
	return rc;
}

static void check_special_files(void)
{
	char dir[] = "/tmp/xtsfs-test-special-XXXXXX", path[300];
	char text[VOL_KEY_TEXT_SIZE], big[5000];
	uint8_t file[VOL_FILE_SIZE + 1];
	struct vol_header h = hdr;
	int dfd, rc;

	CHECK(mkdtemp(dir) != NULL, "mkdtemp");
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	snprintf(path, sizeof(path), "%s/" VOL_FILE_NAME, dir);

	/* the header: a FIFO with no writer (the old code blocked in open) */
	CHECK(mkfifo(path, 0600) == 0, "mkfifo");
	rc = in_child(child_vol_read, &dfd, "FIFO header");
	CHECK(rc == EBADMSG, "FIFO header: %d", rc);
	unlink(path);
	/* a directory */
	CHECK(mkdir(path, 0700) == 0, "mkdir");
	rc = in_child(child_vol_read, &dfd, "directory header");
	CHECK(rc == EBADMSG, "directory header: %d", rc);
	rmdir(path);
	/* a character device like /dev/zero (as root) */
	if (mknod(path, S_IFCHR | 0600, makedev(1, 5)) == 0) {
		rc = in_child(child_vol_read, &dfd, "device header");
		CHECK(rc == EBADMSG, "device header: %d", rc);
		unlink(path);
	} else {
		printf("# no mknod (%s): device header not tested\n",
		       strerror(errno));
	}
	/* a symlink to /dev/zero */
	CHECK(symlink("/dev/zero", path) == 0, "symlink");
	rc = in_child(child_vol_read, &dfd, "symlink header");
	CHECK(rc == EBADMSG, "symlink header: %d", rc);
	unlink(path);
	/* a valid header with one byte more */
	CHECK(vol_write(dfd, &h, keys) == 0, "write");
	{
		int fd = open(path, O_RDONLY);

		CHECK(read(fd, file, VOL_FILE_SIZE) == VOL_FILE_SIZE, "read");
		close(fd);
	}
	/* FORMAT.md 2.5: only the first 8192 bytes count; no more is read */
	file[VOL_FILE_SIZE] = 0;
	unlink(path);
	write_file(dfd, VOL_FILE_NAME, file, VOL_FILE_SIZE + 1);
	rc = in_child(child_vol_read, &dfd, "header one byte too long");
	CHECK(rc == 0, "header one byte too long: %d", rc);
	/* a 1 TiB sparse file of zeros: corrupt at once, not read to its end */
	unlink(path);
	write_file(dfd, VOL_FILE_NAME, file, 0);
	CHECK(truncate(path, 1ll << 40) == 0, "truncate: %s", strerror(errno));
	rc = in_child(child_vol_read, &dfd, "huge header");
	CHECK(rc == (128 | EBADMSG), "1 TiB of zeros as the header: %d", rc);
	unlink(path);
	write_file(dfd, VOL_FILE_NAME, file, VOL_FILE_SIZE);

	/* the volume key file */
	{
		struct key_try t = { dfd, dir, path, NULL };
		int p[2];

		snprintf(path, sizeof(path), "%s/key", dir);
		CHECK(mkfifo(path, 0600) == 0, "mkfifo");
		t.want = "not a volume key"; /* no writer: empty at once */
		CHECK(in_child(child_key_unlock, &t, "FIFO key") == 0,
		      "FIFO key file");
		unlink(path);
		CHECK(mkdir(path, 0700) == 0, "mkdir");
		t.want = "not a regular file or a pipe";
		CHECK(in_child(child_key_unlock, &t, "directory key") == 0,
		      "directory key file");
		rmdir(path);
		t.keyfile = "/dev/zero";
		CHECK(in_child(child_key_unlock, &t, "/dev/zero key") == 0,
		      "/dev/zero as the key file");
		/* the right key with 5000 bytes of padding: too large */
		t.keyfile = path;
		format_key(text);
		memset(big, ' ', sizeof(big));
		memcpy(big, text, strlen(text));
		write_file(AT_FDCWD, path, (const uint8_t *)big, sizeof(big));
		t.want = "too large";
		CHECK(in_child(child_key_unlock, &t, "big key") == 0,
		      "oversized key file");
		/* a regular file and a pipe with the key still open */
		write_file(AT_FDCWD, path, (const uint8_t *)text, strlen(text));
		t.want = NULL;
		CHECK(in_child(child_key_unlock, &t, "key") == 0, "key file");
		unlink(path);
		CHECK(pipe(p) == 0 && write(p[1], text, strlen(text)) ==
		      (ssize_t)strlen(text), "pipe");
		close(p[1]);
		snprintf(path, sizeof(path), "/dev/fd/%d", p[0]);
		CHECK(in_child(child_key_unlock, &t, "pipe key") == 0,
		      "key through a pipe");
		close(p[0]);
	}
	unlinkat(dfd, VOL_FILE_NAME, 0);
	close(dfd);
	rmdir(dir);
}

/* vol_unlock() of @dir with the key text @text; *@v stays open on 0. */
static int unlock_text(int dfd, const char *dir, const char *text,
		       struct vol *v, char *err, size_t errlen)
{
	char kf[300];
	struct vol_unlock_req req = { .volume_key_file = kf, .slot = -1 };
	int rc;

	snprintf(kf, sizeof(kf), "%s.key", dir);
	CHECK(write_file(AT_FDCWD, kf, (const uint8_t *)text, strlen(text)) == 0,
	      "key file");
	rc = vol_unlock(dfd, dir, &req, v, err, errlen);
	unlink(kf);
	return rc;
}

/* An entry of the root named as the volume names @name. */
static void make_entry(int dfd, const char *name)
{
	static const uint8_t root[NAMES_DIRID_SIZE];
	char stored[NAMES_STORED_MAX + 1], full[NAMES_FULL_MAX];
	struct names_ctx *n = NULL;
	bool is_long;

	CHECK(names_ctx_new(&n, keys->names) == 0 &&
	      names_encrypt(n, root, name, strlen(name), stored, full,
			    &is_long) == 0 && !is_long, "names_encrypt");
	CHECK(write_file(dfd, stored, (const uint8_t *)"x", 1) == 0, "entry");
	names_ctx_free(n);
}

/*
 * The key alone (FORMAT.md 2.6): no header, or both copies corrupt; the
 * description must fit what the directory shows.
 */
static void check_headerless(void)
{
	char dir[] = "/tmp/xtsfs-test-nohdr-XXXXXX", err[1024];
	char text[VOL_KEY_TEXT_SIZE], hand[VOL_KEY_TEXT_SIZE], v1[VOL_KEY_TEXT_SIZE];
	uint8_t junk[VOL_FILE_SIZE];
	struct vol v;
	int dfd;

	CHECK(mkdtemp(dir) != NULL, "mkdtemp");
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	format_key(text);
	strcpy(v1, strchr(text, '\n') + 1);
	*strstr(v1, "check=") = '\0';
	strcpy(hand, text);
	memcpy(hand + 28, "0x00000001", 10); /* a wrong guess, by hand */
	*strstr(hand, "check=") = '\0';

	/* an empty volume: nothing to contradict the description */
	CHECK(unlock_text(dfd, dir, text, &v, err, sizeof(err)) == 0 &&
	      v.info.headerless && v.info.header_err == -ENOENT &&
	      v.hdr.flags == 0 && !memcmp(v.hdr.uuid, hdr.uuid, 16) &&
	      vol_slot_count(&v.hdr) == 0 && !memcmp(v.keys, keys, sizeof(*keys)),
	      "empty, no header: %s", err);
	vol_close(&v);
	CHECK(unlock_text(dfd, dir, v1, &v, err, sizeof(err)) == -ENOENT &&
	      strstr(err, "version 1"), "v1 key, nothing proves: %s", err);
	/* junk no xtsfs writes says nothing either way */
	CHECK(write_file(dfd, "lost+found", (const uint8_t *)"", 0) == 0, "junk");
	CHECK(unlock_text(dfd, dir, text, &v, err, sizeof(err)) == 0,
	      "junk in the root: %s", err);
	vol_close(&v);
	/* plaintext names and nothing else: a wrong guess of the flags */
	CHECK(write_file(dfd, "notes.txt", (const uint8_t *)"", 0) == 0, "plain");
	CHECK(unlock_text(dfd, dir, text, &v, err, sizeof(err)) == -EACCES &&
	      strstr(err, "not encrypted"), "plaintext root: %s", err);
	/* a name another key made: the key does not fit */
	CHECK(write_file(dfd, "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
			 (const uint8_t *)"", 0) == 0, "foreign");
	CHECK(unlock_text(dfd, dir, text, &v, err, sizeof(err)) == -EACCES &&
	      strstr(err, "none of the names"), "foreign names: %s", err);
	/* one name of this volume proves key and flags, v1 keys too */
	make_entry(dfd, "hello.txt");
	/* notes.txt is still there: a proof outweighs junk */
	CHECK(unlock_text(dfd, dir, text, &v, err, sizeof(err)) == 0,
	      "proven: %s", err);
	vol_close(&v);
	CHECK(unlock_text(dfd, dir, v1, &v, err, sizeof(err)) == 0 &&
	      v.hdr.flags == 0, "v1 key, proven: %s", err);
	vol_close(&v);
	CHECK(unlock_text(dfd, dir, hand, &v, err, sizeof(err)) == -EACCES &&
	      strstr(err, "plaintext names"), "wrong guess: %s", err);
	/* both copies corrupt: the key stands in too */
	memset(junk, 0x5a, sizeof(junk));
	CHECK(write_file(dfd, VOL_FILE_NAME, junk, sizeof(junk)) == 0, "junk hdr");
	CHECK(unlock_text(dfd, dir, text, &v, err, sizeof(err)) == 0 &&
	      v.info.header_err == -EBADMSG, "corrupt header: %s", err);
	vol_close(&v);
	/* what it opened has no key slot: never written as a header */
	CHECK(unlock_text(dfd, dir, text, &v, err, sizeof(err)) == 0 &&
	      vol_write(dfd, &v.hdr, v.keys) == -EINVAL, "slotless header");
	vol_close(&v);
	/* a good header: the key must be this volume's (UUID, then MAC) */
	{
		struct vol_header h = hdr;

		CHECK(vol_write(dfd, &h, keys) == 0, "vol_write");
		CHECK(unlock_text(dfd, dir, text, &v, err, sizeof(err)) == 0 &&
		      !v.info.headerless, "with header: %s", err);
		vol_close(&v);
		h.uuid[0] ^= 1;
		CHECK(vol_write(dfd, &h, keys) == 0, "vol_write");
		CHECK(unlock_text(dfd, dir, text, &v, err, sizeof(err)) == -EACCES &&
		      strstr(err, "UUID"), "other UUID: %s", err);
		CHECK(unlock_text(dfd, dir, v1, &v, err, sizeof(err)) == 0,
		      "v1 key, other UUID: %s", err);
		vol_close(&v);
	}
	CHECK(system("rm -rf /tmp/xtsfs-test-nohdr-*") == 0, "cleanup");
	close(dfd);
}

/* A header backup file opens like the header it is a copy of. */
static void check_backup_file(void)
{
	char path[] = "/tmp/xtsfs-test-backup-XXXXXX", err[1024];
	struct test_pass tp = { .pass = "correct horse" };
	struct vol_unlock_req req = { .get_pass = test_get_pass,
				      .get_pass_arg = &tp, .slot = -1 };
	uint8_t file[VOL_FILE_SIZE];
	struct vol v;
	int fd = mkstemp(path);

	memcpy(file, good, VOL_COPY_SIZE);
	memcpy(file + VOL_COPY_SIZE, good, VOL_COPY_SIZE);
	CHECK(fd >= 0 && write(fd, file, sizeof(file)) == sizeof(file), "write");
	close(fd);
	CHECK(vol_unlock_backup(path, &req, &v, err, sizeof(err)) == 0 &&
	      v.slot == 0 && !memcmp(v.hdr.uuid, hdr.uuid, 16), "backup: %s", err);
	vol_close(&v);
	tp.pass = "wrong";
	CHECK(vol_unlock_backup(path, &req, &v, err, sizeof(err)) == -EACCES,
	      "wrong passphrase on a backup");
	unlink(path);
	CHECK(vol_unlock_backup(path, &req, &v, err, sizeof(err)) == -ENOENT,
	      "missing backup");
}

int main(void)
{
	make_header();
	check_roundtrip();
	check_corruptions();
	check_mac();
	check_slots();
	check_keytext();
	check_keytext_kat();
	check_files();
	check_costly();
	check_special_files();
	check_headerless();
	check_backup_file();
	vol_keys_free(keys);
	printf("%s\n", test_failures ? "FAILED" : "ok");
	return test_failures ? 1 : 0;
}
