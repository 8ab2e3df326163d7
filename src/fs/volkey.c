/* SPDX-License-Identifier: Apache-2.0 */
/*
 * volkey.c - the volume key as text (doc/FORMAT.md 2.6; see volume.h):
 * the paper backup that xtsfs-mkfs --print-volume-key prints and
 * --volume-key-file reads. Version 2 also says what the volume header
 * says of the volume (format, flags, UUID) and carries a check value, so
 * that the key alone opens a volume whose header is lost, and a typo is
 * caught before anything is decrypted with a wrong key.
 */
#include "volume.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmac.h"
#include "secmem.h"

#define KEY_TEXT_LABEL "xtsfs-key v2" /* also the check value's label */
#define KEY_CHECK_SIZE 4

/* see volume.h */
int vol_hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/*
 * key_check() - the check value of a version 2 text: the first 4 bytes
 * of AES-CMAC(K_hdr, "xtsfs-key v2" ‖ 0x00 ‖ LE32(format) ‖ LE32(flags)
 * ‖ uuid ‖ contents key ‖ names key). A wrong digit anywhere in the key
 * or the description changes it (the header key through the CMAC key).
 */
static void key_check(uint8_t out[KEY_CHECK_SIZE], const struct vol_keys *keys,
		      const struct vol_key_info *ki)
{
	uint8_t msg[sizeof(KEY_TEXT_LABEL) + 8 + 16 + 128], mac[16];
	struct aes_cmac_key k;
	size_t o = sizeof(KEY_TEXT_LABEL); /* the label and its NUL */

	memcpy(msg, KEY_TEXT_LABEL, o);
	put32(msg + o, ki->format);
	put32(msg + o + 4, ki->flags);
	memcpy(msg + o + 8, ki->uuid, 16);
	memcpy(msg + o + 24, keys->contents, 64);
	memcpy(msg + o + 88, keys->names, 64);
	aes_cmac_setkey(&k, keys->header);
	aes_cmac(&k, mac, msg, sizeof(msg));
	memcpy(out, mac, KEY_CHECK_SIZE);
	aes_cmac_wipe(&k);
	explicit_bzero(msg, sizeof(msg));
	explicit_bzero(mac, sizeof(mac));
}

/*
 * struct tok - a cursor over the text: tokens are separated by blanks
 * and line ends; '#' starts a comment that runs to the end of the line.
 */
struct tok {
	const char *t;
	size_t len, pos;
	const char *s; /* the current token */
	size_t n;      /* its length; 0 at the end */
};

static bool next_tok(struct tok *k)
{
	while (k->pos < k->len) {
		char c = k->t[k->pos];

		if (c == '#') {
			while (k->pos < k->len && k->t[k->pos] != '\n')
				k->pos++;
		} else if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
			k->pos++;
		} else {
			break;
		}
	}
	k->s = k->t + k->pos;
	/* a NUL is part of a token (and refused there), never a separator */
	while (k->pos < k->len && (!k->t[k->pos] ||
				   !strchr(" \t\r\n#", k->t[k->pos])))
		k->pos++;
	k->n = (size_t)(k->t + k->pos - k->s);
	return k->n > 0;
}

/* Whether the token is @key followed by '='; @val and @vlen its value. */
static bool tok_is(const struct tok *k, const char *key, const char **val,
		   size_t *vlen)
{
	size_t kl = strlen(key);

	if (k->n <= kl || strncasecmp(k->s, key, kl) || k->s[kl] != '=')
		return false;
	*val = k->s + kl + 1;
	*vlen = k->n - kl - 1;
	return true;
}

/*
 * hex_into() - the hex digits of @s (@n characters; '-' ignored) into
 * @out from nibble *@nib on, at most @max bytes in all.
 * Return: 0, or -EINVAL for another character or too many digits.
 */
static int hex_into(uint8_t *out, size_t max, size_t *nib, const char *s,
		    size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int v = vol_hexval((unsigned char)s[i]);

		if (s[i] == '-')
			continue;
		if (v < 0 || *nib >= 2 * max)
			return -EINVAL;
		if (*nib % 2 == 0)
			out[*nib / 2] = (uint8_t)(v << 4);
		else
			out[*nib / 2] |= (uint8_t)v;
		(*nib)++;
	}
	return 0;
}

/* A number in decimal, or in hex after 0x, of at most 32 bits. */
static int parse_u32(const char *s, size_t n, uint32_t *out)
{
	uint64_t v = 0;
	bool hex = n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
	size_t i = hex ? 2 : 0;

	if (i == n || n - i > (hex ? 8 : 10))
		return -EINVAL;
	for (; i < n; i++) {
		int d = hex ? vol_hexval((unsigned char)s[i]) :
			(s[i] >= '0' && s[i] <= '9' ? s[i] - '0' : -1);

		if (d < 0)
			return -EINVAL;
		v = v * (hex ? 16 : 10) + (uint64_t)d;
	}
	if (v > UINT32_MAX)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

/* The description fields of line 1 after "xtsfs-key v2". */
static int parse_fields(struct tok *k, struct vol_key_info *ki)
{
	const char *v;
	size_t n, nib = 0;

	if (!next_tok(k) || !tok_is(k, "format", &v, &n) ||
	    parse_u32(v, n, &ki->format))
		return -EINVAL;
	if (!next_tok(k) || !tok_is(k, "flags", &v, &n) ||
	    parse_u32(v, n, &ki->flags))
		return -EINVAL;
	if (!next_tok(k) || !tok_is(k, "uuid", &v, &n) ||
	    hex_into(ki->uuid, 16, &nib, v, n) || nib != 32)
		return -EINVAL;
	if (ki->format < VOL_VERSION_MIN || ki->format > VOL_VERSION ||
	    !vol_flags_ok(ki->flags))
		return -EPROTONOSUPPORT;
	return 0;
}

/* Version 2: description, key digits, optional check value, nothing more. */
static int parse_v2(struct tok *k, struct vol_keys *out,
		    struct vol_key_info *ki)
{
	uint8_t want[KEY_CHECK_SIZE], got[KEY_CHECK_SIZE];
	const char *v = NULL;
	size_t n = 0, nib = 0, cnib = 0;
	int rc;

	if (!next_tok(k))
		return -EINVAL;
	if (k->n != 2 || strncasecmp(k->s, "v2", 2))
		return -EPROTONOSUPPORT; /* a later text version */
	rc = parse_fields(k, ki);
	if (rc)
		return rc;
	while (next_tok(k) && !tok_is(k, "check", &v, &n))
		if (hex_into((uint8_t *)out, VOL_BLOB_SIZE, &nib, k->s, k->n))
			return -EINVAL;
	if (nib != 2 * VOL_BLOB_SIZE)
		return -EINVAL;
	ki->text_version = 2;
	if (!k->n)
		return 0; /* no check value: a description written by hand */
	if (hex_into(want, sizeof(want), &cnib, v, n) ||
	    cnib != 2 * KEY_CHECK_SIZE || next_tok(k))
		return -EINVAL;
	key_check(got, out, ki);
	if (!ct_memeq(want, got, sizeof(got)))
		return -EBADMSG;
	ki->checked = true;
	return 0;
}

/* see volume.h */
int vol_key_parse(struct vol_keys *out, struct vol_key_info *info,
		  const char *text, size_t len)
{
	struct tok k = { .t = text, .len = len };
	struct vol_key_info ki = { .text_version = 1 };
	size_t nib = 0;
	int rc;

	if (next_tok(&k) && k.n == 9 && !strncasecmp(k.s, "xtsfs-key", 9)) {
		rc = parse_v2(&k, out, &ki);
	} else {
		/* Version 1: hex digits only ('-' and blanks ignored). */
		k.pos = 0;
		rc = 0;
		while (!rc && next_tok(&k))
			rc = hex_into((uint8_t *)out, VOL_BLOB_SIZE, &nib, k.s,
				      k.n);
		if (!rc && (nib != 2 * VOL_BLOB_SIZE || memchr(text, '#', len)))
			rc = -EINVAL;
	}
	if (rc) {
		explicit_bzero(out, sizeof(*out));
		return rc;
	}
	if (info)
		*info = ki;
	return 0;
}

/* see volume.h */
const char *vol_key_strerror(int err)
{
	switch (err) {
	case -EBADMSG:
		return "the check value does not match the key: a digit was "
		       "copied wrong";
	case -EPROTONOSUPPORT:
		return "a key text version, format or flag this xtsfs does "
		       "not know (from a newer xtsfs?)";
	default:
		return "not a volume key (expected the text of xtsfs-mkfs "
		       "--print-volume-key: 320 hex digits, with or without "
		       "the line \"xtsfs-key v2 ...\")";
	}
}

/* see volume.h */
void vol_key_info_of(struct vol_key_info *ki, const struct vol_header *h)
{
	memset(ki, 0, sizeof(*ki));
	ki->text_version = 2;
	ki->format = h->version;
	ki->flags = h->flags;
	memcpy(ki->uuid, h->uuid, 16);
}

/* see volume.h */
void vol_uuid_format(char out[37], const uint8_t u[16])
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

	for (int i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			out[o++] = '-';
		out[o++] = hex[u[i] >> 4];
		out[o++] = hex[u[i] & 15];
	}
	out[o] = '\0';
}

/* see volume.h */
void vol_key_format(char buf[VOL_KEY_TEXT_SIZE], const struct vol_keys *keys,
		    const struct vol_key_info *ki)
{
	static const char hex[] = "0123456789abcdef";
	const uint8_t *p = (const uint8_t *)keys;
	uint8_t check[KEY_CHECK_SIZE];
	char uuid[37];
	int o;

	vol_uuid_format(uuid, ki->uuid);
	o = snprintf(buf, VOL_KEY_TEXT_SIZE, KEY_TEXT_LABEL
		     " format=%u flags=0x%08x uuid=%s\n", ki->format, ki->flags,
		     uuid);
	for (size_t i = 0; i < VOL_BLOB_SIZE; i++) {
		buf[o++] = hex[p[i] >> 4];
		buf[o++] = hex[p[i] & 15];
		if (i % 16 == 15)
			buf[o++] = '\n';
		else if (i % 4 == 3)
			buf[o++] = '-';
	}
	key_check(check, keys, ki);
	snprintf(buf + o, VOL_KEY_TEXT_SIZE - (size_t)o,
		 "check=%02x%02x%02x%02x\n", check[0], check[1], check[2],
		 check[3]);
	explicit_bzero(check, sizeof(check));
}

#define KEY_FILE_MAX 4095 /* a volume key's text is under 500 bytes */

/* Read all of @fd, at most @max bytes; Return: bytes, -E2BIG or -errno. */
static ssize_t read_to_end(int fd, char *text, size_t max)
{
	ssize_t got = 0, n = 0;

	/* One byte more than allowed tells a file that is too long. */
	while ((size_t)got <= max) {
		n = read(fd, text + got, max + 1 - (size_t)got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += n;
	}
	if (n < 0)
		return -errno;
	return (size_t)got > max ? -E2BIG : got;
}

/* see volume.h */
int vol_key_read_file(const char *path, struct vol_keys *out,
		      struct vol_key_info *info, const char **why)
{
	char *text = secmem_alloc(KEY_FILE_MAX + 1);
	ssize_t got;
	struct stat st;
	int fd, fl, err = 0;

	*why = NULL;
	if (!text)
		return -ENOMEM;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	if (fstat(fd, &st) != 0) {
		err = -errno;
		goto out_close;
	}
	if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)) {
		*why = "not a regular file or a pipe";
		err = -EINVAL;
		goto out_close;
	}
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
		err = -errno;
		goto out_close;
	}
	got = S_ISREG(st.st_mode) && st.st_size > KEY_FILE_MAX ? -E2BIG :
	      read_to_end(fd, text, KEY_FILE_MAX);
	if (got == -E2BIG) {
		*why = "too large for a volume key file (more than 4095 bytes)";
		err = -EINVAL;
	} else if (got < 0) {
		err = (int)got;
	} else {
		err = vol_key_parse(out, info, text, (size_t)got);
		if (err)
			*why = vol_key_strerror(err);
	}
out_close:
	close(fd);
out:
	secmem_free(text);
	return err;
}
