/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xtsfs-decrypt-ref: an independent reference decryptor for xtsfs volumes.
 *
 * This program was written from doc/FORMAT.md alone, without looking at
 * anything under src/. It is a second implementation of the on-disk format
 * whose only purpose is to show that FORMAT.md is complete and correct:
 * if the daemon writes a tree that this program cannot decrypt to the
 * same plaintext, either the daemon or the document is wrong.
 *
 * It uses only libc and OpenSSL libcrypto (EVP_aes_256_xts, AES-256-SIV,
 * CMAC). Argon2id is not in OpenSSL 3.0, so it does not unlock key slots:
 * it takes the raw volume key (FORMAT 2.4) instead.
 *
 *   xtsfs-decrypt-ref --volume-key-file KEYFILE CIPHERDIR OUTDIR
 *
 * The user.* and trusted.* extended attributes (6) are decrypted onto
 * the output objects (trusted.* only when run as root).
 *
 * OUTDIR is created (or must be an empty directory). Exit status: 0 when
 * the whole tree decrypted without a single inconsistency, 1 when anything
 * was wrong (each problem is reported on stderr with the lower path, and
 * the walk goes on over the rest of the tree), 2 on bad usage.
 *
 * Section numbers in comments ("3.5") refer to doc/FORMAT.md.
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#define PROG "xtsfs-decrypt-ref"

/* 2.1, 2.2 */
#define VOL_FILE_SIZE 8192
#define COPY_SIZE 4096
#define FORMAT_VERSION 2 /* 1 and 2 read alike (FORMAT.md 2.2) */
#define BLOB_SIZE 160
#define NSLOTS 8
#define SLOT_SIZE 256
#define SLOTS_OFF 128
#define MAC_OFF 4064
#define CRC_OFF 4092
#define FLAG_PLAINTEXT_NAMES 0x1u
#define FLAG_REVERSE 0x2u
#define FLAG_ALIGNED 0x4u

/* 3.4 */
#define FHDR_SIZE 40
#define UNIT 4096
#define TAIL_SLOT_OFF 24

/* 4.1, 4.3, 4.4 */
#define NAME_MAX_PLAIN 255
#define NAME_MAX_PADDED 256		/* 255 padded to a multiple of 16 */
#define TARGET_MAX_PLAIN 4095
#define TARGET_MAX_PADDED 4096
#define B64_MAX(n) (((n) * 4 + 2) / 3)	/* unpadded base64 length of n bytes */
#define LONG_PREFIX "xtsfs.long."
#define LINK_PREFIX "xtsfs.link."
#define INTERNAL_PREFIX "xtsfs."
#define V_B64_LEN 22			/* base64url of a 16-byte V */
#define SYMLINK_AD "xtsfs-symlink-target"

/* 6 */
#define XATTR_MARKER "xtsfs."
#define XATTR_NAME_AD "xtsfs-xattr-name"
#define XATTR_VALUE_AD "xtsfs-xattr-value"
#define XATTR_REST_MAX 160		/* bytes of a name after its namespace */
#define XATTR_VALUE_STORED_MAX 65536	/* XATTR_SIZE_MAX */

#define CHUNK_UNITS 256

static int g_status;			/* 1 once any inconsistency was seen */
static bool g_plaintext_names;
static uint64_t g_doff = FHDR_SIZE;	/* data offset D, 3.4 */
static uint8_t g_blob[BLOB_SIZE];	/* the volume key blob, 2.4 */
static EVP_CIPHER *g_siv;
static EVP_CIPHER_CTX *g_xts;		/* keyed once with the contents key */
static int g_root_lfd = -1;		/* the cipher directory (4.4 link files) */
static const char *g_cipherdir;

/* ------------------------------------------------------------------ */
/* Messages */

static void report(const char *lpath, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* An inconsistency: printed, remembered in the exit status, walk goes on. */
static void report(const char *lpath, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: %s: ", PROG, lpath);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	g_status = 1;
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", PROG);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	OPENSSL_cleanse(g_blob, sizeof(g_blob));
	exit(1);
}

static char *path_join(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	char *p = malloc(la + lb + 2);

	if (!p)
		die("out of memory");
	memcpy(p, a, la);
	p[la] = '/';
	memcpy(p + la + 1, b, lb + 1);
	return p;
}

/* ------------------------------------------------------------------ */
/* Little helpers */

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint16_t le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static void put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static bool all_zero(const uint8_t *p, size_t n)
{
	uint8_t acc = 0;

	for (size_t i = 0; i < n; i++)
		acc |= p[i];
	return acc == 0;
}

/* CRC-32C, 2.2: reflected polynomial 0x82F63B78, init and final XOR ~0. */
static uint32_t crc32c(const uint8_t *p, size_t n)
{
	uint32_t c = 0xFFFFFFFFu;

	for (size_t i = 0; i < n; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1u)));
	}
	return c ^ 0xFFFFFFFFu;
}

/* Read exactly n bytes at off; 0 on success, -1 (errno set, 0 = short). */
static int pread_full(int fd, void *buf, size_t n, off_t off)
{
	uint8_t *p = buf;

	while (n) {
		ssize_t r = pread(fd, p, n, off);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (r == 0) {
			errno = 0;
			return -1;
		}
		p += r;
		n -= (size_t)r;
		off += r;
	}
	return 0;
}

static int pwrite_full(int fd, const void *buf, size_t n, off_t off)
{
	const uint8_t *p = buf;

	while (n) {
		ssize_t r = pwrite(fd, p, n, off);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += r;
		n -= (size_t)r;
		off += r;
	}
	return 0;
}

static const char *errstr(int e)
{
	return e ? strerror(e) : "file shorter than expected";
}

/* ------------------------------------------------------------------ */
/* base64url (RFC 4648 section 5), no '=' padding, canonical only (4.1) */

static int b64val(int c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '-')
		return 62;
	if (c == '_')
		return 63;
	return -1;
}

/*
 * Decode n characters into out (capacity cap). Refuses characters outside
 * the alphabet, '=', a length that is 1 mod 4 and non-zero unused trailing
 * bits, so each byte string has exactly one accepted encoding.
 * Returns the decoded length or -1.
 */
static long b64url_decode(const char *s, size_t n, uint8_t *out, size_t cap)
{
	uint32_t acc = 0;
	int bits = 0;
	size_t o = 0;

	if (n % 4 == 1)
		return -1;
	if (n / 4 * 3 + (n % 4 ? n % 4 - 1 : 0) > cap)
		return -1;
	for (size_t i = 0; i < n; i++) {
		int v = b64val((unsigned char)s[i]);

		if (v < 0)
			return -1;
		acc = (acc << 6) | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (uint8_t)(acc >> bits);
			acc &= (1u << bits) - 1;
		}
	}
	if (acc != 0)
		return -1;
	return (long)o;
}

/* ------------------------------------------------------------------ */
/* AES-SIV (RFC 5297) through OpenSSL; K_mac = key[0..32), K_ctr = key[32..64) */

/* AES-256-CMAC under K_mac = K_names[0..32) (for S2V) */
static void names_cmac(const uint8_t *m, size_t n, uint8_t out[16])
{
	EVP_MAC *mac = EVP_MAC_fetch(NULL, "CMAC", NULL);
	EVP_MAC_CTX *ctx = mac ? EVP_MAC_CTX_new(mac) : NULL;
	OSSL_PARAM params[2];
	size_t tl = 0;

	if (!ctx)
		die("OpenSSL has no CMAC");
	params[0] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_CIPHER,
						     (char *)"AES-256-CBC", 0);
	params[1] = OSSL_PARAM_construct_end();
	if (EVP_MAC_init(ctx, g_blob + 64, 32, params) != 1 ||
	    EVP_MAC_update(ctx, m, n) != 1 ||
	    EVP_MAC_final(ctx, out, &tl, 16) != 1 || tl != 16)
		die("AES-256-CMAC failed in OpenSSL");
	EVP_MAC_CTX_free(ctx);
	EVP_MAC_free(mac);
}

/* dbl() of RFC 5297 2.3: shift left by one bit, 0x87 if a bit fell out */
static void siv_dbl(uint8_t b[16])
{
	uint8_t carry = b[0] >> 7;

	for (int i = 0; i < 15; i++)
		b[i] = (uint8_t)(b[i] << 1 | b[i + 1] >> 7);
	b[15] = (uint8_t)(b[15] << 1) ^ (carry ? 0x87 : 0);
}

/*
 * V of an empty plaintext, RFC 5297 2.4 S2V done by hand: OpenSSL 3.0
 * ignores a decryption update of zero bytes and then fails every empty
 * plaintext (6.3: an empty xattr value is stored as V alone).
 */
static int siv_open_empty(const uint8_t *const *ad, const size_t *adlen,
			  int nad, const uint8_t v[16])
{
	static const uint8_t zero[16];
	uint8_t d[16], t[16];

	names_cmac(zero, 16, d);
	for (int i = 0; i < nad; i++) {
		names_cmac(ad[i], adlen[i], t);
		siv_dbl(d);
		for (int j = 0; j < 16; j++)
			d[j] ^= t[j];
	}
	siv_dbl(d);
	d[0] ^= 0x80;	/* pad("") = 0x80 0^120 */
	names_cmac(d, 16, t);
	return CRYPTO_memcmp(t, v, 16) == 0 ? 0 : -1;
}

/*
 * vc = V || C (vclen >= 16). nad AD components ad[i] of adlen[i] bytes,
 * in order (each EVP_DecryptUpdate with a NULL output is one S2V
 * string). On success writes vclen - 16 bytes to out and returns 0; -1
 * if it does not authenticate.
 */
static int siv_open_n(const uint8_t *const *ad, const size_t *adlen,
		      int nad, const uint8_t *vc, size_t vclen, uint8_t *out)
{
	EVP_CIPHER_CTX *ctx;
	int ok = 0, outl = 0, finl = 0;
	uint8_t tag[16];

	if (vclen == 16)
		return siv_open_empty(ad, adlen, nad, vc);
	ctx = EVP_CIPHER_CTX_new();
	if (!ctx)
		die("out of memory");
	memcpy(tag, vc, 16);
	if (EVP_DecryptInit_ex(ctx, g_siv, NULL, g_blob + 64, NULL) == 1 &&
	    EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, 16, tag) == 1) {
		ok = 1;
		for (int i = 0; i < nad && ok; i++)
			ok = EVP_DecryptUpdate(ctx, NULL, &outl, ad[i],
					       (int)adlen[i]) == 1;
	}
	if (ok)
		ok = EVP_DecryptUpdate(ctx, out, &outl, vc + 16,
				       (int)(vclen - 16)) == 1 &&
		     (size_t)outl == vclen - 16 &&
		     EVP_DecryptFinal_ex(ctx, out + outl, &finl) == 1;
	EVP_CIPHER_CTX_free(ctx);
	ERR_clear_error();
	if (!ok)
		OPENSSL_cleanse(out, vclen - 16);
	return ok ? 0 : -1;
}

/* siv_open_n() with one AD component */
static int siv_open(const uint8_t *ad, size_t adlen, const uint8_t *vc,
		    size_t vclen, uint8_t *out)
{
	return siv_open_n(&ad, &adlen, 1, vc, vclen, out);
}

/*
 * Remove the zero padding of 4.1 and check it was minimal: the padded
 * length must be the next multiple of 16 of the unpadded length, at
 * least 16. Returns the unpadded length, or -1.
 */
static long unpad(const uint8_t *p, size_t plen)
{
	size_t len = plen;

	while (len && p[len - 1] == 0)
		len--;
	if (len == 0)
		return -1;
	if (((len + 15) / 16) * 16 != plen)
		return -1;
	return (long)len;
}

/*
 * Decrypt a stored name (4.1) with AD = [dirid]. On success writes the
 * NUL-terminated plaintext name to out (>= NAME_MAX_PLAIN + 1 bytes) and
 * returns NULL; otherwise returns a reason.
 */
static const char *decrypt_name(const char *stored, size_t slen,
				const uint8_t dirid[16], char *out)
{
	uint8_t vc[16 + NAME_MAX_PADDED], pt[NAME_MAX_PADDED];
	long n, len;

	n = b64url_decode(stored, slen, vc, sizeof(vc));
	if (n < 0)
		return "not canonical base64url, or longer than any name";
	if (n < 32 || (n - 16) % 16 != 0)
		return "decoded length is not 16 + a multiple of 16 (at least 32)";
	if (siv_open(dirid, 16, vc, (size_t)n, pt) != 0)
		return "AES-SIV authentication failed (wrong directory id or key, or tampered)";
	len = unpad(pt, (size_t)n - 16);
	if (len < 0) {
		OPENSSL_cleanse(pt, sizeof(pt));
		return "padding is not minimal zero padding";
	}
	if (len > NAME_MAX_PLAIN || memchr(pt, 0, (size_t)len) ||
	    memchr(pt, '/', (size_t)len) ||
	    (len == 1 && pt[0] == '.') ||
	    (len == 2 && pt[0] == '.' && pt[1] == '.')) {
		OPENSSL_cleanse(pt, sizeof(pt));
		return "decrypts to an illegal name";
	}
	memcpy(out, pt, (size_t)len);
	out[len] = '\0';
	OPENSSL_cleanse(pt, sizeof(pt));
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Volume key file (2.4, 2.6) */

/*
 * One line of a key text: '#' starts a comment; the description line
 * ("xtsfs-key v2 ...") and the check value ("check=...") of a version 2
 * text are skipped (this reader takes the flags from the header, which
 * the header MAC authenticates); every other character must be a hex
 * digit or a separator.
 */
static void key_line(const char *path, char *line, int *hi, size_t *nb)
{
	char *hash = strchr(line, '#');
	const char *p = line;

	if (hash)
		*hash = '\0';
	while (*p == ' ' || *p == '\t')
		p++;
	if (!strncasecmp(p, "xtsfs-key", 9) || !strncasecmp(p, "check=", 6))
		return;
	for (; *p; p++) {
		int c = (unsigned char)*p, v;

		if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '-')
			continue;
		if (c >= '0' && c <= '9')
			v = c - '0';
		else if (c >= 'a' && c <= 'f')
			v = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v = c - 'A' + 10;
		else
			die("%s: not a volume key: unexpected character 0x%02x "
			    "(only hex digits, spaces, line ends and '-' are allowed)",
			    path, (unsigned)c);
		if (*nb == BLOB_SIZE)
			die("%s: not a volume key: more than %d hex digits",
			    path, 2 * BLOB_SIZE);
		if (*hi < 0) {
			*hi = v;
		} else {
			g_blob[(*nb)++] = (uint8_t)(*hi << 4 | v);
			*hi = -1;
		}
	}
}

static void read_key_file(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[4096];
	int hi = -1;
	size_t nb = 0;

	if (!f)
		die("%s: cannot open the volume key file: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f))
		key_line(path, line, &hi, &nb);
	fclose(f);
	if (nb != BLOB_SIZE || hi >= 0)
		die("%s: not a volume key: expected %d hex digits", path,
		    2 * BLOB_SIZE);
	/* 3.1: K1 != K2 always; a reader refuses equal halves. */
	if (CRYPTO_memcmp(g_blob, g_blob + 32, 32) == 0)
		die("%s: invalid volume key: the two halves of the contents key are equal",
		    path);
}

/* ------------------------------------------------------------------ */
/* Volume header (2.2, 2.3, 2.5) */

static bool field_is(const uint8_t *p, const char *s)
{
	size_t n = strlen(s);

	return memcmp(p, s, n) == 0 && all_zero(p + n, 16 - n);
}

/* Returns NULL if the copy is valid, else why not (into buf). */
static const char *check_copy(const uint8_t *c, char *buf, size_t bufsz)
{
	uint32_t flags, ver;
	int active = 0;

	if (memcmp(c, "XTSFSVOL", 8) != 0)
		return "bad magic (not an xtsfs volume header)";
	if (crc32c(c, CRC_OFF) != le32(c + CRC_OFF))
		return "CRC-32C mismatch (damaged)";
	ver = le32(c + 8);
	if (ver < 1 || ver > FORMAT_VERSION) {
		snprintf(buf, bufsz, "unknown format version %u (this reader knows %d)",
			 ver, FORMAT_VERSION);
		return buf;
	}
	if (le32(c + 12) != COPY_SIZE)
		return "copy size is not 4096";
	if (!field_is(c + 40, "aes-256-xts"))
		return "contents cipher is not aes-256-xts";
	if (le32(c + 56) != UNIT)
		return "data unit size is not 4096";
	flags = le32(c + 60);
	if (flags & ~(FLAG_PLAINTEXT_NAMES | FLAG_REVERSE | FLAG_ALIGNED))
		return "unknown flag bits set";
	if ((flags & FLAG_REVERSE) && (flags & FLAG_ALIGNED))
		return "reverse mode and the aligned layout together (5.1)";
	if (flags & FLAG_PLAINTEXT_NAMES) {
		if (!all_zero(c + 64, 16))
			return "names cipher is not empty on a plaintext-names volume";
	} else if (!field_is(c + 64, "aes-256-siv")) {
		return "names cipher is not aes-256-siv";
	}
	if (le32(c + 80) != BLOB_SIZE)
		return "volume key blob size is not 160";
	if (le32(c + 84) != NSLOTS)
		return "number of key slots is not 8";
	if (!all_zero(c + 88, 40) || !all_zero(c + SLOTS_OFF + NSLOTS * SLOT_SIZE,
						 MAC_OFF - (SLOTS_OFF + NSLOTS * SLOT_SIZE)) ||
	    !all_zero(c + MAC_OFF + 16, CRC_OFF - (MAC_OFF + 16)))
		return "reserved bytes are not zero";
	for (int i = 0; i < NSLOTS; i++) {
		const uint8_t *s = c + SLOTS_OFF + i * SLOT_SIZE;
		uint32_t st = le32(s), t, m, p;

		if (st == 0) {
			if (!all_zero(s, SLOT_SIZE)) {
				snprintf(buf, bufsz, "key slot %d is empty but not all zero", i);
				return buf;
			}
			continue;
		}
		if (st != 1) {
			snprintf(buf, bufsz, "key slot %d has unknown state %u", i, st);
			return buf;
		}
		t = le32(s + 8);
		m = le32(s + 12);
		p = le32(s + 16);
		if (le32(s + 4) != 1 || t < 1 || t > 1000 || p < 1 || p > 16 ||
		    m < 8 * p || m > 4194304 || !all_zero(s + 20, 4) ||
		    !all_zero(s + 224, 32)) {
			snprintf(buf, bufsz, "key slot %d is malformed (KDF, costs out "
				 "of bounds, or reserved bytes not zero)", i);
			return buf;
		}
		active++;
	}
	if (!active)
		return "no active key slot";
	return NULL;
}

static bool cmac_ok(const uint8_t *copy)
{
	EVP_MAC *mac = EVP_MAC_fetch(NULL, "CMAC", NULL);
	EVP_MAC_CTX *ctx = mac ? EVP_MAC_CTX_new(mac) : NULL;
	OSSL_PARAM params[2];
	uint8_t tag[16];
	size_t tl = 0;
	bool ok = false;

	if (!ctx)
		die("OpenSSL has no CMAC");
	params[0] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_CIPHER,
						     (char *)"AES-256-CBC", 0);
	params[1] = OSSL_PARAM_construct_end();
	if (EVP_MAC_init(ctx, g_blob + 128, 32, params) != 1 ||
	    EVP_MAC_update(ctx, copy, MAC_OFF) != 1 ||
	    EVP_MAC_final(ctx, tag, &tl, sizeof(tag)) != 1 || tl != 16)
		die("AES-256-CMAC failed in OpenSSL");
	ok = CRYPTO_memcmp(tag, copy + MAC_OFF, 16) == 0;
	EVP_MAC_CTX_free(ctx);
	EVP_MAC_free(mac);
	return ok;
}

static void read_header(const char *cipherdir)
{
	char *path = path_join(cipherdir, "xtsfs.volume");
	static uint8_t buf[VOL_FILE_SIZE + 1];
	char why0[128], why1[128];
	const char *bad0, *bad1;
	const uint8_t *use;
	struct stat st;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		die("%s: cannot open: %s", path, strerror(errno));
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		die("%s: not a regular file", path);
	n = 0;
	while ((size_t)n < sizeof(buf)) {
		ssize_t r = read(fd, buf + n, sizeof(buf) - (size_t)n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			die("%s: read error: %s", path, strerror(errno));
		if (r == 0)
			break;
		n += r;
	}
	close(fd);
	if (n != VOL_FILE_SIZE)
		report(path, "size is %s 8192 bytes (2.1)",
		       n > VOL_FILE_SIZE ? "more than" : "not");

	bad0 = n >= COPY_SIZE ? check_copy(buf, why0, sizeof(why0)) : "incomplete";
	bad1 = n >= 2 * COPY_SIZE ?
		check_copy(buf + COPY_SIZE, why1, sizeof(why1)) : "incomplete";
	if (bad0 && bad1)
		die("%s: the volume cannot be opened: primary copy: %s; secondary copy: %s",
		    path, bad0, bad1);
	if (!bad0) {
		use = buf;
		if (bad1)
			report(path, "secondary copy is damaged: %s", bad1);
		else if (memcmp(buf, buf + COPY_SIZE, COPY_SIZE) != 0)
			report(path, "both copies are valid but not byte-identical (2.1)");
	} else {
		report(path, "primary copy is damaged (%s); using the secondary", bad0);
		use = buf + COPY_SIZE;
	}
	if (!cmac_ok(use))
		die("%s: the header MAC does not verify under this volume key: "
		    "wrong volume key, or the header was changed by someone "
		    "without the key; refusing the volume", path);
	g_plaintext_names = le32(use + 60) & FLAG_PLAINTEXT_NAMES;
	g_doff = le32(use + 60) & FLAG_ALIGNED ? UNIT : FHDR_SIZE; /* 3.4 */
	free(path);
}

/* ------------------------------------------------------------------ */
/* File contents (3) */

/* W(u) of 3.3, or W'(u, n) of 3.5 when n != 0. */
static void tweak(uint8_t w[16], const uint8_t id[16], uint64_t u, unsigned n)
{
	uint8_t x[16] = { 0 };

	put_le64(x, u);
	if (n)
		put_le64(x + 8, (UINT64_C(1) << 63) + n);
	for (int i = 0; i < 16; i++)
		w[i] = id[i] ^ x[i];
}

/* One XTS data unit (3.2), 16 <= len <= 4096, out may equal in. */
static int xts_unit(const uint8_t w[16], const uint8_t *in, uint8_t *out,
		    size_t len)
{
	int outl = 0;

	if (EVP_DecryptInit_ex(g_xts, NULL, NULL, NULL, w) != 1 ||
	    EVP_DecryptUpdate(g_xts, out, &outl, in, (int)len) != 1 ||
	    (size_t)outl != len) {
		ERR_clear_error();
		return -1;
	}
	return 0;
}

/* Decrypts the lower file (open as lfd) into ofd. */
static void decrypt_contents(int lfd, const char *lpath, int ofd)
{
	static uint8_t buf[CHUNK_UNITS * UNIT];
	uint8_t hdr[FHDR_SIZE], id[16], w[16];
	uint64_t size, nunits;
	unsigned tail;
	struct stat st;

	if (fstat(lfd, &st) != 0) {
		report(lpath, "fstat: %s", strerror(errno));
		return;
	}
	if (st.st_size == 0)
		return;			/* empty plaintext file, 3.4 */
	if (st.st_size < FHDR_SIZE) {
		report(lpath, "corrupt: lower file of %lld bytes (1 to 39 bytes is never valid, 3.4)",
		       (long long)st.st_size);
		return;
	}
	if (pread_full(lfd, hdr, FHDR_SIZE, 0) != 0) {
		report(lpath, "read error: %s", errstr(errno));
		return;
	}
	if (memcmp(hdr, "xtsf", 4) != 0) {
		report(lpath, "corrupt: bad file header magic (3.4)");
		return;
	}
	if (le16(hdr + 4) != 1) {
		report(lpath, "corrupt: unknown file format version %u (3.4)",
		       le16(hdr + 4));
		return;
	}
	if (!all_zero(hdr + 6, 2))
		report(lpath, "file header reserved bytes 6..8 are not zero (3.4)");
	memcpy(id, hdr + 8, 16);

	/* 3.4: D + S bytes; 40..D bytes is a header and no data */
	size = (uint64_t)st.st_size <= g_doff ? 0 : (uint64_t)st.st_size - g_doff;
	tail = (unsigned)(size % UNIT);
	nunits = size / UNIT + (tail ? 1 : 0);

	if (tail == 0 || tail >= 16) {
		if (!all_zero(hdr + TAIL_SLOT_OFF, 16))
			report(lpath, "tail slot is not zero although the file does "
			       "not end in a short tail (3.4)");
	}

	for (uint64_t u0 = 0; u0 < nunits; u0 += CHUNK_UNITS) {
		uint64_t off = u0 * UNIT;
		uint64_t clen = size - off < (uint64_t)sizeof(buf) ?
				size - off : (uint64_t)sizeof(buf);

		if (pread_full(lfd, buf, (size_t)clen, (off_t)(g_doff + off)) != 0) {
			report(lpath, "read error at lower offset %llu: %s",
			       (unsigned long long)(g_doff + off), errstr(errno));
			goto out;
		}
		for (uint64_t k = 0; k * UNIT < clen; k++) {
			uint64_t u = u0 + k;
			uint8_t *p = buf + k * UNIT;
			size_t L = clen - k * UNIT < UNIT ? (size_t)(clen - k * UNIT) : UNIT;

			if (L >= 16) {
				/* 3.6: a unit stored as all zero is a hole */
				if (all_zero(p, L))
					continue;
				tweak(w, id, u, 0);
				if (xts_unit(w, p, p, L) != 0) {
					report(lpath, "XTS decryption of unit %llu failed in OpenSSL",
					       (unsigned long long)u);
					goto out;
				}
			} else {
				/* 3.5: short tail of n = L bytes */
				uint8_t c[16];
				unsigned n = (unsigned)L;

				if (!all_zero(hdr + TAIL_SLOT_OFF, n))
					report(lpath, "short tail of %u bytes: header bytes "
					       "[24, %u) are not zero (3.5)", n, 24 + n);
				memcpy(c, p, n);
				memcpy(c + n, hdr + TAIL_SLOT_OFF + n, 16 - n);
				if (all_zero(c, 16))
					continue;	/* 3.6 */
				tweak(w, id, u, n);
				if (xts_unit(w, c, c, 16) != 0) {
					report(lpath, "XTS decryption of the short tail failed in OpenSSL");
					goto out;
				}
				if (!all_zero(c + n, 16 - n)) {
					report(lpath, "short tail of %u bytes (unit %llu): "
					       "the %u padding bytes are not zero after "
					       "decryption: torn or tampered tail (3.5)",
					       n, (unsigned long long)u, 16 - n);
					OPENSSL_cleanse(c, sizeof(c));
					goto out;
				}
				memcpy(p, c, n);
				OPENSSL_cleanse(c, sizeof(c));
			}
			if (pwrite_full(ofd, p, L, (off_t)(u * UNIT)) != 0) {
				report(lpath, "write error on output: %s", strerror(errno));
				goto out;
			}
		}
	}
	/* Holes (all-zero units) were skipped: set the length last. */
	if (ftruncate(ofd, (off_t)size) != 0)
		report(lpath, "ftruncate on output: %s", strerror(errno));
out:
	OPENSSL_cleanse(buf, sizeof(buf));
}

/* ------------------------------------------------------------------ */
/* The tree walk (4) */

struct ent {
	char *name;
	bool used;	/* a long-name sidecar that an entry referred to */
};

static int ent_cmp(const void *a, const void *b)
{
	return strcmp(((const struct ent *)a)->name, ((const struct ent *)b)->name);
}

static struct ent *find_ent(struct ent *v, size_t n, const char *name)
{
	struct ent key = { .name = (char *)name };

	return bsearch(&key, v, n, sizeof(*v), ent_cmp);
}

/* Reads a whole small regular file (< cap bytes) in directory dfd. */
static long read_small(int dfd, const char *name, const char *lpath,
		       uint8_t *out, size_t cap)
{
	struct stat st;
	long r = -1;
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0) {
		report(lpath, "cannot open: %s", strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		report(lpath, "not a regular file");
	} else if ((uint64_t)st.st_size >= cap) {
		report(lpath, "too large (%lld bytes)", (long long)st.st_size);
	} else if (pread_full(fd, out, (size_t)st.st_size, 0) != 0) {
		report(lpath, "read error: %s", errstr(errno));
	} else {
		r = (long)st.st_size;
	}
	close(fd);
	return r;
}

static void copy_times(int ofd_dir, const char *oname, const char *opath,
		       const struct stat *st, bool is_link)
{
	struct timespec ts[2] = { st->st_atim, st->st_mtim };

	if (utimensat(ofd_dir, oname, ts, is_link ? AT_SYMLINK_NOFOLLOW : 0) != 0)
		report(opath, "cannot set times: %s", strerror(errno));
}

/*
 * Symlink target (4.4): stored is the lower target. Writes the plaintext
 * target (NUL-terminated) to out, TARGET_MAX_PLAIN + 1 bytes. Long
 * targets are in content-addressed files in the root of the cipher
 * directory, shared by all symlinks with that target.
 */
static bool decrypt_target(const char *lpath, const char *stored, size_t slen,
			   char *out)
{
	static char linkbuf[B64_MAX(16 + TARGET_MAX_PADDED) + 2];
	static uint8_t vc[16 + TARGET_MAX_PADDED], pt[TARGET_MAX_PADDED];
	const char *b64 = stored;
	size_t blen = slen;
	long n, len;

	if (g_plaintext_names) {
		memcpy(out, stored, slen);
		out[slen] = '\0';
		return true;
	}
	if (slen >= strlen(LINK_PREFIX) &&
	    memcmp(stored, LINK_PREFIX, strlen(LINK_PREFIX)) == 0) {
		/* long target: the file xtsfs.link.<b64(V)> holds b64(V || C) */
		uint8_t v[16];
		char *lp = path_join(g_cipherdir, stored);
		long r;

		if (slen != strlen(LINK_PREFIX) + V_B64_LEN ||
		    b64url_decode(stored + strlen(LINK_PREFIX), V_B64_LEN, v, 16) != 16) {
			report(lpath, "symlink target '%s' is a malformed xtsfs.link.* name",
			       stored);
			free(lp);
			return false;
		}
		r = read_small(g_root_lfd, stored, lp, (uint8_t *)linkbuf,
			       sizeof(linkbuf) - 1);
		if (r < 0) {
			report(lpath, "symlink skipped: its long target file %s is "
			       "unusable", lp);
			free(lp);
			return false;
		}
		if (r <= TARGET_MAX_PLAIN) {
			report(lp, "holds a target of %ld characters, which must be stored "
			       "in the symlink itself (not canonical, 4.4)", r);
			free(lp);
			return false;
		}
		n = b64url_decode(linkbuf, (size_t)r, vc, sizeof(vc));
		if (n < 16 || memcmp(vc, v, 16) != 0) {
			report(lp, "contents are not base64url(V || C) with the V of its "
			       "name (4.4)");
			free(lp);
			return false;
		}
		free(lp);
		b64 = linkbuf;
		blen = (size_t)r;
	}
	n = b64url_decode(b64, blen, vc, sizeof(vc));
	if (n < 0) {
		report(lpath, "symlink target is not canonical base64url");
		return false;
	}
	if (n < 32 || (n - 16) % 16 != 0) {
		report(lpath, "symlink target: decoded length %ld is not 16 + a "
		       "multiple of 16", n);
		return false;
	}
	if (siv_open((const uint8_t *)SYMLINK_AD, strlen(SYMLINK_AD), vc,
		     (size_t)n, pt) != 0) {
		report(lpath, "symlink target does not authenticate (AES-SIV)");
		return false;
	}
	len = unpad(pt, (size_t)n - 16);
	if (len < 0 || len > TARGET_MAX_PLAIN || memchr(pt, 0, (size_t)len)) {
		report(lpath, "symlink target: bad padding or illegal target");
		OPENSSL_cleanse(pt, sizeof(pt));
		return false;
	}
	memcpy(out, pt, (size_t)len);
	out[len] = '\0';
	OPENSSL_cleanse(pt, (size_t)n - 16);
	return true;
}

static bool has_prefix(const char *s, const char *p);

/*
 * A stored xattr name (6.2), NUL-terminated, in "user." or "trusted."
 * and marked: writes the plaintext name to out (>= 256 bytes) and returns
 * NULL, or returns why it is damaged.
 */
static const char *decrypt_xattr_name(const char *lower, const char *ns,
				      char *out)
{
	const char *b64 = lower + strlen(ns) + strlen(XATTR_MARKER);
	uint8_t vc[16 + XATTR_REST_MAX], pt[XATTR_REST_MAX];
	const uint8_t *ad[2] = { (const uint8_t *)XATTR_NAME_AD,
				 (const uint8_t *)ns };
	size_t adlen[2] = { strlen(XATTR_NAME_AD), strlen(ns) };
	size_t blen = strlen(b64);
	long n, len;

	if (blen > B64_MAX(16 + XATTR_REST_MAX))
		return "longer than the stored form of any name";
	n = b64url_decode(b64, blen, vc, sizeof(vc));
	if (n < 0)
		return "not canonical base64url";
	if (n < 32 || (n - 16) % 16 != 0)
		return "decoded length is not 16 + a multiple of 16 (at least 32)";
	if (siv_open_n(ad, adlen, 2, vc, (size_t)n, pt) != 0)
		return "AES-SIV authentication failed (wrong key or namespace, or tampered)";
	len = unpad(pt, (size_t)n - 16);
	if (len < 0 || len > XATTR_REST_MAX || memchr(pt, 0, (size_t)len)) {
		OPENSSL_cleanse(pt, sizeof(pt));
		return "padding is not minimal zero padding, or a NUL inside";
	}
	memcpy(out, ns, strlen(ns));
	memcpy(out + strlen(ns), pt, (size_t)len);
	out[strlen(ns) + (size_t)len] = '\0';
	OPENSSL_cleanse(pt, sizeof(pt));
	return NULL;
}

/*
 * 6: decrypt the user.* and trusted.* xattrs of the lower object lpath
 * onto the output object opath (neither followed if a symlink). Other
 * xattrs (unmarked ones, security.*, system.*) are not part of the
 * format and are not copied. A lower filesystem without xattrs has none.
 */
static void copy_xattrs(const char *lpath, const char *opath)
{
	static char list[65536 + 1];
	static uint8_t val[XATTR_VALUE_STORED_MAX + 1];
	static uint8_t pt[XATTR_VALUE_STORED_MAX];
	ssize_t ln = llistxattr(lpath, list, sizeof(list) - 1);

	if (ln < 0) {
		if (errno != ENOTSUP)
			report(lpath, "listxattr: %s", strerror(errno));
		return;
	}
	for (ssize_t pos = 0; pos < ln; pos += (ssize_t)strlen(list + pos) + 1) {
		const char *lname = list + pos;
		const char *ns = has_prefix(lname, "user.") ? "user." :
				 has_prefix(lname, "trusted.") ? "trusted." :
				 NULL;
		const uint8_t *ad[2] = { (const uint8_t *)XATTR_VALUE_AD,
					 (const uint8_t *)lname };
		size_t adlen[2] = { strlen(XATTR_VALUE_AD), strlen(lname) };
		char plain[256];
		const char *why;
		ssize_t vn;

		if (!ns || !has_prefix(lname + strlen(ns), XATTR_MARKER))
			continue;	/* 6.2: not ours, left alone */
		why = decrypt_xattr_name(lname, ns, plain);
		if (why) {
			report(lpath, "undecryptable xattr name '%s': %s", lname, why);
			continue;
		}
		vn = lgetxattr(lpath, lname, val, sizeof(val));
		if (vn < 0) {
			report(lpath, "getxattr %s: %s", lname, strerror(errno));
			continue;
		}
		/* 6.3: V, then at most XATTR_SIZE_MAX - 16 bytes */
		if (vn < 16 || vn > XATTR_VALUE_STORED_MAX) {
			report(lpath, "xattr %s: stored value of %zd bytes", plain, vn);
			continue;
		}
		if (siv_open_n(ad, adlen, 2, val, (size_t)vn, pt) != 0) {
			report(lpath, "xattr %s: value does not authenticate under its "
			       "stored name (AES-SIV, 6.3)", plain);
			continue;
		}
		if (lsetxattr(opath, plain, pt, (size_t)vn - 16, 0) != 0)
			report(opath, "setxattr %s: %s", plain, strerror(errno));
		OPENSSL_cleanse(pt, (size_t)vn - 16);
	}
}

static void walk_dir(int ldfd, const char *ldir, int odfd, const char *odir,
		     const uint8_t dirid[16], bool root);

static void do_entry(int ldfd, const char *ldir, int odfd, const char *odir,
		     const char *lname, const char *pname)
{
	char *lpath = path_join(ldir, lname);
	char *opath = path_join(odir, pname);
	static char target[TARGET_MAX_PLAIN + 1];
	struct stat st;
	mode_t perm;

	if (fstatat(ldfd, lname, &st, AT_SYMLINK_NOFOLLOW) != 0) {
		report(lpath, "stat: %s", strerror(errno));
		goto out;
	}
	perm = st.st_mode & 07777;

	if (S_ISDIR(st.st_mode)) {
		uint8_t id[16] = { 0 };
		int sub = openat(ldfd, lname, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int osub;

		if (sub < 0) {
			report(lpath, "cannot open directory: %s", strerror(errno));
			goto out;
		}
		if (!g_plaintext_names) {
			/* 4.2: the dirid, exactly 16 bytes */
			uint8_t idbuf[17];
			char *ip = path_join(lpath, "xtsfs.dirid");
			long r = read_small(sub, "xtsfs.dirid", ip, idbuf, sizeof(idbuf));

			if (r >= 0 && r != 16)
				report(ip, "is %ld bytes, not 16 (4.2)", r);
			free(ip);
			if (r != 16) {
				report(lpath, "directory skipped: no valid directory id, "
				       "its entries cannot be decrypted");
				close(sub);
				goto out;
			}
			memcpy(id, idbuf, 16);
		}
		if (mkdirat(odfd, pname, 0700) != 0) {
			report(lpath, "cannot create %s: %s", opath, strerror(errno));
			close(sub);
			goto out;
		}
		osub = openat(odfd, pname, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (osub < 0) {
			report(opath, "cannot open: %s", strerror(errno));
			close(sub);
			goto out;
		}
		walk_dir(sub, lpath, osub, opath, id, false);
		close(sub);
		close(osub);
		copy_xattrs(lpath, opath);
		if (fchmodat(odfd, pname, perm, 0) != 0)
			report(opath, "chmod: %s", strerror(errno));
		copy_times(odfd, pname, opath, &st, false);
	} else if (S_ISREG(st.st_mode)) {
		int lfd = openat(ldfd, lname, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		int ofd;

		if (lfd < 0) {
			report(lpath, "cannot open: %s", strerror(errno));
			goto out;
		}
		ofd = openat(odfd, pname, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			     0600);
		if (ofd < 0) {
			report(lpath, "cannot create %s: %s", opath, strerror(errno));
			close(lfd);
			goto out;
		}
		decrypt_contents(lfd, lpath, ofd);
		close(lfd);
		copy_xattrs(lpath, opath);
		if (fchmod(ofd, perm) != 0)
			report(opath, "chmod: %s", strerror(errno));
		if (close(ofd) != 0)
			report(opath, "close: %s", strerror(errno));
		copy_times(odfd, pname, opath, &st, false);
	} else if (S_ISLNK(st.st_mode)) {
		static char stored[B64_MAX(16 + TARGET_MAX_PADDED) + 2];
		ssize_t r = readlinkat(ldfd, lname, stored, sizeof(stored) - 1);

		if (r < 0) {
			report(lpath, "readlink: %s", strerror(errno));
			goto out;
		}
		if (r == 0 || (size_t)r > TARGET_MAX_PLAIN) {
			report(lpath, "symlink target of %zd bytes is out of range", r);
			goto out;
		}
		stored[r] = '\0';
		if (!decrypt_target(lpath, stored, (size_t)r, target))
			goto out;
		if (symlinkat(target, odfd, pname) != 0) {
			report(lpath, "cannot create symlink %s: %s", opath, strerror(errno));
			goto out;
		}
		copy_xattrs(lpath, opath);
		copy_times(odfd, pname, opath, &st, true);
	} else if (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) ||
		   S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) {
		/* 4.6: stored as lower objects of the same type */
		if (mknodat(odfd, pname, (st.st_mode & S_IFMT) | 0600,
			    st.st_rdev) != 0) {
			report(lpath, "cannot create special file %s: %s", opath,
			       strerror(errno));
			goto out;
		}
		copy_xattrs(lpath, opath);
		if (fchmodat(odfd, pname, perm, 0) != 0)
			report(opath, "chmod: %s", strerror(errno));
		copy_times(odfd, pname, opath, &st, false);
	} else {
		report(lpath, "unknown file type 0%o", (unsigned)(st.st_mode & S_IFMT));
	}
out:
	free(lpath);
	free(opath);
}

/* not inlined: GCC 12 with ASan misreads the offsets callers pass */
static __attribute__((noinline)) bool is_name(const char *a, const char *b)
{
	return strcmp(a, b) == 0;
}

static bool has_prefix(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

static void walk_dir(int ldfd, const char *ldir, int odfd, const char *odir,
		     const uint8_t dirid[16], bool root)
{
	struct ent *ents = NULL;
	size_t nents = 0, cap = 0;
	struct dirent *de;
	DIR *d;
	int fd = dup(ldfd);

	if (fd < 0 || !(d = fdopendir(fd))) {
		report(ldir, "cannot read directory: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	errno = 0;
	while ((de = readdir(d))) {
		if (is_name(de->d_name, ".") || is_name(de->d_name, ".."))
			continue;
		if (nents == cap) {
			cap = cap ? 2 * cap : 64;
			ents = realloc(ents, cap * sizeof(*ents));
			if (!ents)
				die("out of memory");
		}
		ents[nents].name = strdup(de->d_name);
		ents[nents].used = false;
		if (!ents[nents].name)
			die("out of memory");
		nents++;
		errno = 0;
	}
	if (errno)
		report(ldir, "readdir: %s", strerror(errno));
	closedir(d);
	if (nents)
		qsort(ents, nents, sizeof(*ents), ent_cmp);

	for (size_t i = 0; i < nents; i++) {
		const char *name = ents[i].name;
		char plain[NAME_MAX_PLAIN + 1];
		const char *why;

		/* 2.1, 4.5: the header and its temporary, root only */
		if (root && (is_name(name, "xtsfs.volume") ||
			     is_name(name, "xtsfs.volume.tmp")))
			continue;
		if (g_plaintext_names) {
			do_entry(ldfd, ldir, odfd, odir, name, name);
			continue;
		}
		if (has_prefix(name, INTERNAL_PREFIX)) {
			size_t len = strlen(name), pl = strlen(LONG_PREFIX);
			char *lpath;

			if (is_name(name, "xtsfs.dirid")) {
				if (root)
					report(ldir, "unexpected xtsfs.dirid in the root "
					       "(the root's dirid is 16 zero bytes, 4.2); ignored");
				continue;
			}
			if (has_prefix(name, LINK_PREFIX) && len == pl + V_B64_LEN) {
				/*
				 * 4.4: long-target files live in the root only;
				 * they are shared and never removed, so one that
				 * no symlink uses is not an inconsistency.
				 */
				if (!root) {
					lpath = path_join(ldir, name);
					report(lpath, "long symlink target file outside "
					       "the root of the cipher directory (4.4)");
					free(lpath);
				}
				continue;
			}
			if (has_prefix(name, LONG_PREFIX) && len == pl + V_B64_LEN + 5 &&
			    is_name(name + pl + V_B64_LEN, ".name"))
				continue;	/* checked below: must be used */
			lpath = path_join(ldir, name);
			if (has_prefix(name, LONG_PREFIX) && len == pl + V_B64_LEN) {
				/* 4.3: long name, full stored name in the sidecar */
				char sc[40], stored[B64_MAX(16 + NAME_MAX_PADDED) + 2];
				uint8_t v[16], vc[16 + NAME_MAX_PADDED];
				struct ent *e;
				char *sp;
				long r;

				snprintf(sc, sizeof(sc), "%s.name", name);
				sp = path_join(ldir, sc);
				e = find_ent(ents, nents, sc);
				if (e)
					e->used = true;
				r = -1;
				if (b64url_decode(name + pl, V_B64_LEN, v, 16) != 16)
					report(lpath, "malformed long name (not canonical base64url)");
				else if (!e)
					report(lpath, "long name without its sidecar %s", sp);
				else
					r = read_small(ldfd, sc, sp, (uint8_t *)stored,
						       sizeof(stored) - 1);
				if (r < 0) {
					/* reported */
				} else if (r <= NAME_MAX_PLAIN) {
					report(sp, "holds a stored name of %ld characters; a "
					       "sidecar is only valid for more than 255 (4.1)", r);
				} else if (b64url_decode(stored, (size_t)r, vc, sizeof(vc)) < 16 ||
					   memcmp(vc, v, 16) != 0) {
					report(sp, "does not hold base64url(V || C) with the V "
					       "of the entry name (4.3)");
				} else if ((why = decrypt_name(stored, (size_t)r, dirid, plain))) {
					report(lpath, "undecryptable long name (sidecar %s): %s",
					       sp, why);
				} else {
					do_entry(ldfd, ldir, odfd, odir, name, plain);
				}
				free(sp);
				free(lpath);
				continue;
			}
			report(lpath, "unknown xtsfs-internal name");
			free(lpath);
			continue;
		}
		if (strlen(name) > NAME_MAX_PLAIN) {
			report(ldir, "stored name longer than 255 characters");
			continue;
		}
		why = decrypt_name(name, strlen(name), dirid, plain);
		if (why) {
			char *lpath = path_join(ldir, name);

			report(lpath, "undecryptable name: %s", why);
			free(lpath);
			continue;
		}
		do_entry(ldfd, ldir, odfd, odir, name, plain);
	}

	/* Long-name sidecars that no entry referred to. */
	for (size_t i = 0; i < nents; i++) {
		const char *name = ents[i].name;
		size_t len = strlen(name), pl = strlen(LONG_PREFIX);

		if (!g_plaintext_names && !ents[i].used &&
		    has_prefix(name, LONG_PREFIX) && len == pl + V_B64_LEN + 5 &&
		    is_name(name + pl + V_B64_LEN, ".name")) {
			char *lpath = path_join(ldir, name);

			report(lpath, "orphan sidecar: no long name in this directory "
			       "uses it (4.3)");
			free(lpath);
		}
		free(ents[i].name);
	}
	free(ents);
}

/* ------------------------------------------------------------------ */

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: %s --volume-key-file KEYFILE CIPHERDIR OUTDIR\n"
		"Decrypt a whole xtsfs cipher directory into OUTDIR (created, or an\n"
		"empty directory), using the raw volume key (xtsfs-mkfs\n"
		"--print-volume-key). An independent implementation of doc/FORMAT.md,\n"
		"for tests.\n"
		"Exit status: 0 ok, 1 any inconsistency (all reported on stderr), 2 bad usage.\n",
		PROG);
}

int main(int argc, char **argv)
{
	const char *keyfile = NULL, *cipherdir = NULL, *outdir = NULL;
	static const uint8_t root_id[16];
	struct stat st;
	int ldfd, odfd;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (is_name(a, "-h") || is_name(a, "--help")) {
			usage(stdout);
			return 0;
		} else if (is_name(a, "--volume-key-file") && i + 1 < argc) {
			keyfile = argv[++i];
		} else if (has_prefix(a, "--volume-key-file=")) {
			keyfile = a + strlen("--volume-key-file=");
		} else if (a[0] == '-' && a[1]) {
			usage(stderr);
			return 2;
		} else if (!cipherdir) {
			cipherdir = a;
		} else if (!outdir) {
			outdir = a;
		} else {
			usage(stderr);
			return 2;
		}
	}
	if (!keyfile || !cipherdir || !outdir) {
		usage(stderr);
		return 2;
	}

	g_siv = EVP_CIPHER_fetch(NULL, "AES-256-SIV", NULL);
	if (!g_siv)
		die("OpenSSL has no AES-256-SIV (OpenSSL 3.0 or later is needed)");

	read_key_file(keyfile);
	read_header(cipherdir);

	g_xts = EVP_CIPHER_CTX_new();
	if (!g_xts || EVP_DecryptInit_ex(g_xts, EVP_aes_256_xts(), NULL, g_blob, NULL) != 1)
		die("OpenSSL refused the AES-256-XTS contents key");

	ldfd = open(cipherdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (ldfd < 0)
		die("%s: %s", cipherdir, strerror(errno));
	g_root_lfd = ldfd;
	g_cipherdir = cipherdir;
	if (mkdir(outdir, 0700) != 0 && errno != EEXIST)
		die("%s: cannot create: %s", outdir, strerror(errno));
	odfd = open(outdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (odfd < 0)
		die("%s: %s", outdir, strerror(errno));
	{
		DIR *d = fdopendir(dup(odfd));
		struct dirent *de;

		if (!d)
			die("%s: %s", outdir, strerror(errno));
		while ((de = readdir(d)))
			if (!is_name(de->d_name, ".") && !is_name(de->d_name, ".."))
				die("%s: output directory is not empty", outdir);
		closedir(d);
	}

	walk_dir(ldfd, cipherdir, odfd, outdir, root_id, true);
	copy_xattrs(cipherdir, outdir);

	if (fstat(ldfd, &st) == 0) {
		struct timespec ts[2] = { st.st_atim, st.st_mtim };

		if (fchmod(odfd, st.st_mode & 07777) != 0 || futimens(odfd, ts) != 0)
			report(outdir, "cannot copy the root's mode and times: %s",
			       strerror(errno));
	}
	close(ldfd);
	close(odfd);

	EVP_CIPHER_CTX_free(g_xts);
	EVP_CIPHER_free(g_siv);
	OPENSSL_cleanse(g_blob, sizeof(g_blob));
	return g_status;
}
