/* SPDX-License-Identifier: Apache-2.0 */
/*
 * names.c - the name transform of doc/FORMAT.md section 4 (see names.h).
 *
 * Encryption: check the name, zero-pad it to p = max(16, roundup16(len))
 * bytes, AES-SIV it with AD = [dirid] (or ["xtsfs-symlink-target"] for
 * targets), base64url the 16 + p bytes of V || C. Decryption undoes that
 * and insists on the canonical form at every step, so that a stored name
 * and a plaintext name map one to one: lookup (which encrypts) must find
 * exactly what readdir (which decrypts) shows.
 *
 * Plaintext names and targets are secret and are wiped from the stack.
 * Stored names, V and C are public and are handled with ordinary code.
 */
#include "names.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "secmem.h"
#include "siv.h"

/* the stored V of a long name or target is 16 bytes: 22 characters */
#define B64_IV_CHARS 22
/* longest padded name and target */
#define NAME_PAD_MAX 256
#define TARGET_PAD_MAX 4096

_Static_assert((4 * (AES_SIV_IV_SIZE + NAME_PAD_MAX) + 2) / 3 <
		       NAMES_FULL_MAX,
	       "NAMES_FULL_MAX too small for a 255-byte name");
_Static_assert((4 * (AES_SIV_IV_SIZE + TARGET_PAD_MAX) + 2) / 3 <
		       NAMES_TARGET_MAX,
	       "NAMES_TARGET_MAX too small for a 4095-byte target");
_Static_assert(sizeof(NAMES_LONG_PREFIX) - 1 + B64_IV_CHARS <=
		       NAMES_STORED_MAX,
	       "a long entry name must fit in NAME_MAX");
_Static_assert(sizeof(NAMES_TARGET_AD) - 1 == 20, "FORMAT.md 4.4");
/* open_stored() gives padded max - 1 bytes: that must be the name limit */
_Static_assert(NAME_PAD_MAX - 1 == NAMES_NAME_MAX, "name buffer");
_Static_assert(TARGET_PAD_MAX - 1 == NAMES_TARGET_LEN_MAX, "target buffer");

/*
 * struct names_ctx - the expanded names key. Allocated with
 * secmem_alloc() so it is locked in RAM, left out of core dumps and
 * wiped on free.
 */
struct names_ctx {
	struct aes_siv_key siv;
};

static const char b64_chars[64] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* the 6-bit value of a base64url character, or -1 */
static int b64_val(unsigned char c)
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

/* see names.h */
bool names_is_b64(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (b64_val((unsigned char)s[i]) < 0)
			return false;
	return true;
}

/* see names.h */
size_t names_b64_encode(char *out, const uint8_t *in, size_t len)
{
	size_t o = 0, i = 0;
	uint32_t w;

	for (; len - i >= 3; i += 3) {
		w = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 |
		    in[i + 2];
		out[o++] = b64_chars[w >> 18];
		out[o++] = b64_chars[w >> 12 & 63];
		out[o++] = b64_chars[w >> 6 & 63];
		out[o++] = b64_chars[w & 63];
	}
	if (len - i == 1) {
		w = (uint32_t)in[i] << 16;
		out[o++] = b64_chars[w >> 18];
		out[o++] = b64_chars[w >> 12 & 63];
	} else if (len - i == 2) {
		w = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8;
		out[o++] = b64_chars[w >> 18];
		out[o++] = b64_chars[w >> 12 & 63];
		out[o++] = b64_chars[w >> 6 & 63];
	}
	out[o] = '\0';
	return o;
}

/* see names.h */
int names_b64_decode(uint8_t *out, size_t outmax, const char *in,
		     size_t len, size_t *outlen)
{
	size_t rem = len % 4;
	size_t need, o = 0, i = 0;
	uint32_t w;

	/* 4k + 1 characters would carry 6 bits: not a whole byte */
	if (rem == 1)
		return -EINVAL;
	for (size_t j = 0; j < len; j++)
		if (b64_val((unsigned char)in[j]) < 0)
			return -EINVAL;
	/*
	 * The bits of the last character that fall past the last byte must
	 * be zero, or two texts would decode to the same bytes.
	 */
	if (rem == 2 && (b64_val((unsigned char)in[len - 1]) & 0x0f))
		return -EINVAL;
	if (rem == 3 && (b64_val((unsigned char)in[len - 1]) & 0x03))
		return -EINVAL;
	need = len / 4 * 3 + (rem ? rem - 1 : 0);
	if (need > outmax)
		return -ERANGE;

	for (; len - i >= 4; i += 4) {
		w = (uint32_t)b64_val((unsigned char)in[i]) << 18 |
		    (uint32_t)b64_val((unsigned char)in[i + 1]) << 12 |
		    (uint32_t)b64_val((unsigned char)in[i + 2]) << 6 |
		    (uint32_t)b64_val((unsigned char)in[i + 3]);
		out[o++] = (uint8_t)(w >> 16);
		out[o++] = (uint8_t)(w >> 8);
		out[o++] = (uint8_t)w;
	}
	if (rem) {
		w = (uint32_t)b64_val((unsigned char)in[i]) << 18 |
		    (uint32_t)b64_val((unsigned char)in[i + 1]) << 12;
		if (rem == 3)
			w |= (uint32_t)b64_val((unsigned char)in[i + 2]) << 6;
		out[o++] = (uint8_t)(w >> 16);
		if (rem == 3)
			out[o++] = (uint8_t)(w >> 8);
	}
	*outlen = o;
	return 0;
}

/* see names.h */
int names_ctx_new(struct names_ctx **out, const uint8_t key[64])
{
	struct names_ctx *ctx = secmem_alloc(sizeof(*ctx));

	*out = NULL;
	if (!ctx)
		return -ENOMEM;
	aes_siv_setkey(&ctx->siv, key);
	*out = ctx;
	return 0;
}

/* see names.h */
void names_ctx_free(struct names_ctx *ctx)
{
	if (!ctx)
		return;
	aes_siv_wipe(&ctx->siv);
	secmem_free(ctx);
}

/* see names.h */
size_t names_pad_len(size_t len)
{
	return len <= 16 ? 16 : (len + 15) / 16 * 16;
}

/* see names.h */
int names_unpad(const uint8_t *buf, size_t p, size_t max, size_t *len)
{
	size_t n = p;

	while (n > 0 && buf[n - 1] == 0)
		n--;
	/* other padding would give the same plaintext a second stored form */
	if (n == 0 || n > max || names_pad_len(n) != p || memchr(buf, 0, n))
		return -EBADMSG;
	*len = n;
	return 0;
}

/* see names.h */
void names_siv_encrypt(const struct names_ctx *ctx, uint8_t *out,
		       const uint8_t *in, size_t len,
		       const struct siv_ad *ad, size_t nad)
{
	aes_siv_encrypt(&ctx->siv, out, in, len, ad, nad);
}

/* see names.h */
int names_siv_decrypt(const struct names_ctx *ctx, uint8_t *out,
		      const uint8_t *in, size_t len, const struct siv_ad *ad,
		      size_t nad)
{
	return aes_siv_decrypt(&ctx->siv, out, in, len, ad, nad);
}

/* 4.1 step 1: 1..255 bytes, no '/' or NUL, not "." or ".." */
static int check_name(const char *name, size_t len)
{
	if (len == 0)
		return -EINVAL;
	if (len > NAMES_NAME_MAX)
		return -ENAMETOOLONG;
	if (memchr(name, '/', len) || memchr(name, '\0', len))
		return -EINVAL;
	if (name[0] == '.' && (len == 1 || (len == 2 && name[1] == '.')))
		return -EINVAL;
	return 0;
}

/*
 * Encrypt @len plaintext bytes, padded, under @ad and base64url the
 * result into @full. @pt is scratch of at least names_pad_len(@len)
 * bytes and @ct of 16 more; @pt is wiped. Return the length of @full and
 * leave V in @ct[0..16).
 */
static size_t seal(const struct names_ctx *ctx, const struct siv_ad *ad,
		   const char *in, size_t len, uint8_t *pt, uint8_t *ct,
		   char *full)
{
	size_t p = names_pad_len(len);

	memset(pt, 0, p);
	memcpy(pt, in, len);
	aes_siv_encrypt(&ctx->siv, ct, pt, p, ad, 1);
	explicit_bzero(pt, p);
	return names_b64_encode(full, ct, AES_SIV_IV_SIZE + p);
}

/* "<prefix><base64url(V)>": the name of a long entry or target file */
static void ref_name(char *out, const char *prefix, const uint8_t v[16])
{
	size_t plen = strlen(prefix);

	memcpy(out, prefix, plen);
	names_b64_encode(out + plen, v, AES_SIV_IV_SIZE);
}

/*
 * Decode, authenticate and unpad @len characters at @stored into @out,
 * which has room for @padmax bytes, the longest padded plaintext; the
 * plaintext may be up to @padmax - 1 bytes, leaving room for the NUL. @ct
 * is scratch for 16 + @padmax bytes. On failure @out is zeroed.
 */
static int open_stored(const struct names_ctx *ctx, const struct siv_ad *ad,
		       const char *stored, size_t len, uint8_t *ct,
		       size_t padmax, const uint8_t *want_v, char *out,
		       size_t *outlen)
{
	size_t clen, p, n;

	*outlen = 0;
	if (names_b64_decode(ct, AES_SIV_IV_SIZE + padmax, stored, len,
			     &clen))
		goto bad;
	/* V and at least one block, whole blocks only */
	if (clen < AES_SIV_IV_SIZE + 16 || (clen - AES_SIV_IV_SIZE) % 16)
		goto bad;
	/* a sidecar or target file holds the ciphertext its name names */
	if (want_v && memcmp(ct, want_v, AES_SIV_IV_SIZE))
		goto bad;
	p = clen - AES_SIV_IV_SIZE; /* <= padmax */
	if (aes_siv_decrypt(&ctx->siv, (uint8_t *)out, ct, clen, ad, 1))
		goto bad;
	if (names_unpad((const uint8_t *)out, p, padmax - 1, &n))
		goto bad;
	out[n] = '\0';
	*outlen = n;
	return 0;
bad:
	explicit_bzero(out, padmax);
	return -EBADMSG;
}

/* see names.h */
int names_encrypt(const struct names_ctx *ctx,
		  const uint8_t dirid[NAMES_DIRID_SIZE], const char *name,
		  size_t len, char stored[NAMES_STORED_MAX + 1],
		  char full[NAMES_FULL_MAX], bool *is_long)
{
	const struct siv_ad ad = { dirid, NAMES_DIRID_SIZE };
	uint8_t pt[NAME_PAD_MAX];
	uint8_t ct[AES_SIV_IV_SIZE + NAME_PAD_MAX];
	size_t n;
	int err;

	err = check_name(name, len);
	if (err)
		return err;
	n = seal(ctx, &ad, name, len, pt, ct, full);
	if (n > NAMES_STORED_MAX) {
		/* 4.3: V alone names the entry; V depends on the whole name */
		*is_long = true;
		ref_name(stored, NAMES_LONG_PREFIX, ct);
	} else {
		*is_long = false;
		memcpy(stored, full, n + 1);
	}
	return 0;
}

static bool is_prefixed_iv(const char *s, const char *prefix);

/* names_decrypt(), and with @want_v the V a long entry's name gives */
static int decrypt_name(const struct names_ctx *ctx,
			const uint8_t dirid[NAMES_DIRID_SIZE],
			const char *stored, size_t len, const uint8_t *want_v,
			char out[256], size_t *outlen)
{
	const struct siv_ad ad = { dirid, NAMES_DIRID_SIZE };
	uint8_t ct[AES_SIV_IV_SIZE + NAME_PAD_MAX];
	int err;

	err = open_stored(ctx, &ad, stored, len, ct, NAME_PAD_MAX, want_v,
			  out, outlen);
	if (err)
		return err;
	/*
	 * Authentic but illegal: only a buggy writer or one holding the key
	 * makes these, and showing them would break the directory.
	 */
	if (check_name(out, *outlen)) {
		explicit_bzero(out, 256);
		*outlen = 0;
		return -EBADMSG;
	}
	return 0;
}

/* see names.h */
int names_decrypt(const struct names_ctx *ctx,
		  const uint8_t dirid[NAMES_DIRID_SIZE], const char *stored,
		  size_t len, char out[256], size_t *outlen)
{
	return decrypt_name(ctx, dirid, stored, len, NULL, out, outlen);
}

/* The V that "<prefix><base64url(V)>" @ref names; false if it names none. */
static bool ref_v(const char *ref, const char *prefix,
		  uint8_t v[AES_SIV_IV_SIZE])
{
	size_t vlen;

	return is_prefixed_iv(ref, prefix) &&
	       !names_b64_decode(v, AES_SIV_IV_SIZE, ref + strlen(prefix),
				 B64_IV_CHARS, &vlen);
}

/* see names.h */
int names_decrypt_long(const struct names_ctx *ctx,
		       const uint8_t dirid[NAMES_DIRID_SIZE],
		       const char *long_name, const char *sidecar, size_t len,
		       char out[256], size_t *outlen)
{
	uint8_t v[AES_SIV_IV_SIZE];

	*outlen = 0;
	memset(out, 0, 256);
	/* a sidecar is only for a stored name that does not fit inline */
	if (!ref_v(long_name, NAMES_LONG_PREFIX, v) || len <= NAMES_STORED_MAX)
		return -EBADMSG;
	return decrypt_name(ctx, dirid, sidecar, len, v, out, outlen);
}

/* see names.h */
bool names_is_internal(const char *lower_name)
{
	return !strncmp(lower_name, NAMES_INTERNAL_PREFIX,
			sizeof(NAMES_INTERNAL_PREFIX) - 1);
}

/* "<prefix>" followed by exactly the canonical base64url of 16 bytes */
static bool is_prefixed_iv(const char *s, const char *prefix)
{
	size_t plen = strlen(prefix);
	uint8_t v[AES_SIV_IV_SIZE];
	size_t vlen;

	if (strncmp(s, prefix, plen))
		return false;
	s += plen;
	if (strnlen(s, B64_IV_CHARS + 1) != B64_IV_CHARS)
		return false;
	return !names_b64_decode(v, sizeof(v), s, B64_IV_CHARS, &vlen) &&
	       vlen == AES_SIV_IV_SIZE;
}

/* see names.h */
bool names_is_long(const char *lower_name)
{
	return is_prefixed_iv(lower_name, NAMES_LONG_PREFIX);
}

/* see names.h */
void names_long_sidecar(char out[NAMES_STORED_MAX + 1],
			const char *long_name)
{
	snprintf(out, NAMES_STORED_MAX + 1, "%s%s", long_name,
		 NAMES_LONG_SUFFIX);
}

/* see names.h */
int names_encrypt_target(const struct names_ctx *ctx, const char *target,
			 size_t len, char stored[NAMES_TARGET_MAX],
			 char full[NAMES_TARGET_MAX], bool *is_long)
{
	const struct siv_ad ad = { (const uint8_t *)NAMES_TARGET_AD,
				   sizeof(NAMES_TARGET_AD) - 1 };
	uint8_t pt[TARGET_PAD_MAX];
	uint8_t ct[AES_SIV_IV_SIZE + TARGET_PAD_MAX];
	size_t n;

	if (len == 0 || memchr(target, '\0', len))
		return -EINVAL;
	if (len > NAMES_TARGET_LEN_MAX)
		return -ENAMETOOLONG;
	n = seal(ctx, &ad, target, len, pt, ct, full);
	if (n > NAMES_TARGET_LEN_MAX) {
		/* symlink(2) takes at most PATH_MAX - 1 = 4095 bytes */
		*is_long = true;
		ref_name(stored, NAMES_LINK_PREFIX, ct);
	} else {
		*is_long = false;
		memcpy(stored, full, n + 1);
	}
	return 0;
}

/* see names.h */
int names_decrypt_target(const struct names_ctx *ctx, const char *stored,
			 size_t len, char out[4096], size_t *outlen)
{
	const struct siv_ad ad = { (const uint8_t *)NAMES_TARGET_AD,
				   sizeof(NAMES_TARGET_AD) - 1 };
	uint8_t ct[AES_SIV_IV_SIZE + TARGET_PAD_MAX];

	return open_stored(ctx, &ad, stored, len, ct, TARGET_PAD_MAX, NULL,
			   out, outlen);
}

/* see names.h */
int names_decrypt_target_ref(const struct names_ctx *ctx, const char *ref,
			     const char *content, size_t len, char out[4096],
			     size_t *outlen)
{
	const struct siv_ad ad = { (const uint8_t *)NAMES_TARGET_AD,
				   sizeof(NAMES_TARGET_AD) - 1 };
	uint8_t ct[AES_SIV_IV_SIZE + TARGET_PAD_MAX];
	uint8_t v[AES_SIV_IV_SIZE];

	*outlen = 0;
	memset(out, 0, 4096);
	/* a target file is only for a target that does not fit a symlink */
	if (!ref_v(ref, NAMES_LINK_PREFIX, v) || len <= NAMES_TARGET_LEN_MAX)
		return -EBADMSG;
	return open_stored(ctx, &ad, content, len, ct, TARGET_PAD_MAX, v, out,
			   outlen);
}

/* see names.h */
bool names_is_link_ref(const char *lower_target)
{
	return is_prefixed_iv(lower_target, NAMES_LINK_PREFIX);
}
