/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xattr.c - the extended-attribute codec of doc/FORMAT.md section 6
 * (see xattr.h).
 *
 * Names: check the namespace and length, zero-pad the part after the
 * prefix (names_pad_len()), AES-SIV it under AD = ["xtsfs-xattr-name",
 * prefix], and write prefix "xtsfs." base64url(V || C). Decoding undoes
 * each step and insists on the canonical form at each, so that a stored
 * name and a plaintext name map one to one (listxattr shows exactly what
 * getxattr finds). Values: AES-SIV under AD = ["xtsfs-xattr-value",
 * stored name], stored raw.
 *
 * Plaintext names and values are secret and wiped from the stack and
 * heap here; stored names and values are public.
 */
#include "xattr.h"

#include <errno.h>
#include <linux/limits.h>
#include <stdlib.h>
#include <string.h>

#include "siv.h"

#define USER_PREFIX "user."
#define TRUSTED_PREFIX "trusted."
#define SECURITY_PREFIX "security."
#define SYSTEM_PREFIX "system."
#define MARKER_LEN (sizeof(XTSFS_XATTR_MARKER) - 1)

/* base64url of 16 + p bytes without padding (FORMAT 4.1) */
#define B64_LEN(p) ((4 * (AES_SIV_IV_SIZE + (p)) + 2) / 3)
/* the shortest and longest base64url part of a stored name: 43, 235 */
#define B64_MIN B64_LEN(16)
#define B64_MAX B64_LEN(XTSFS_XATTR_SUFFIX_MAX)

_Static_assert(XTSFS_XATTR_KERNEL_NAME_MAX == XATTR_NAME_MAX, "limits.h");
_Static_assert(XTSFS_XATTR_KERNEL_SIZE_MAX == XATTR_SIZE_MAX, "limits.h");
_Static_assert(XTSFS_XATTR_KERNEL_LIST_MAX == XATTR_LIST_MAX, "limits.h");
_Static_assert(sizeof(XTSFS_XATTR_NAME_AD) - 1 == 16, "FORMAT.md 6.2");
_Static_assert(sizeof(XTSFS_XATTR_VALUE_AD) - 1 == 17, "FORMAT.md 6.3");
_Static_assert(XTSFS_XATTR_SUFFIX_MAX % 16 == 0, "a whole padded length");
/* the limit is the largest padded length whose stored names fit ... */
_Static_assert(sizeof(TRUSTED_PREFIX) - 1 + MARKER_LEN + B64_MAX ==
		       XTSFS_XATTR_TRUSTED_LOWER_MAX &&
		   XTSFS_XATTR_TRUSTED_LOWER_MAX <= XTSFS_XATTR_KERNEL_NAME_MAX,
	       "trusted.* names up to the limit fit in XATTR_NAME_MAX");
_Static_assert(sizeof(USER_PREFIX) - 1 + MARKER_LEN + B64_MAX ==
		   XTSFS_XATTR_USER_LOWER_MAX,
	       "user.* stored length");
/* ... and the next one (16 more bytes) fits in neither namespace */
_Static_assert(sizeof(USER_PREFIX) - 1 + MARKER_LEN +
		       B64_LEN(XTSFS_XATTR_SUFFIX_MAX + 16) >
		   XTSFS_XATTR_KERNEL_NAME_MAX,
	       "XTSFS_XATTR_SUFFIX_MAX is not the largest that fits");
_Static_assert(sizeof(USER_PREFIX) - 1 + XTSFS_XATTR_SUFFIX_MAX ==
		       XTSFS_XATTR_USER_NAME_MAX &&
		   sizeof(TRUSTED_PREFIX) - 1 + XTSFS_XATTR_SUFFIX_MAX ==
		       XTSFS_XATTR_TRUSTED_NAME_MAX,
	       "plaintext name limits");
_Static_assert(XTSFS_XATTR_TRUSTED_LOWER_MAX < XTSFS_XATTR_NAME_BUF &&
		   XTSFS_XATTR_KERNEL_NAME_MAX < XTSFS_XATTR_NAME_BUF,
	       "name buffers");
_Static_assert(XTSFS_XATTR_VALUE_OVERHEAD == AES_SIV_IV_SIZE, "V");

/* the prefix of each namespace; "" for XATTR_NS_OTHER */
static const char *const ns_prefix[] = {
	[XATTR_NS_OTHER] = "",
	[XATTR_NS_USER] = USER_PREFIX,
	[XATTR_NS_TRUSTED] = TRUSTED_PREFIX,
	[XATTR_NS_SECURITY] = SECURITY_PREFIX,
	[XATTR_NS_SYSTEM] = SYSTEM_PREFIX,
};

static bool has_prefix(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* see xattr.h */
enum xattr_ns xattr_namespace(const char *name)
{
	for (int ns = XATTR_NS_USER; ns <= XATTR_NS_SYSTEM; ns++)
		if (has_prefix(name, ns_prefix[ns]))
			return (enum xattr_ns)ns;
	return XATTR_NS_OTHER;
}

/* see xattr.h */
bool xattr_ns_encrypted(enum xattr_ns ns)
{
	return ns == XATTR_NS_USER || ns == XATTR_NS_TRUSTED;
}

/* see xattr.h */
bool xattr_lower_is_ours(const char *lower)
{
	enum xattr_ns ns = xattr_namespace(lower);

	return xattr_ns_encrypted(ns) &&
	       has_prefix(lower + strlen(ns_prefix[ns]), XTSFS_XATTR_MARKER);
}

/*
 * The two AD components of a name in namespace @ns: the label, then the
 * prefix, which binds the stored name to its namespace.
 */
static void name_ad(struct siv_ad ad[2], enum xattr_ns ns)
{
	ad[0].p = (const uint8_t *)XTSFS_XATTR_NAME_AD;
	ad[0].len = sizeof(XTSFS_XATTR_NAME_AD) - 1;
	ad[1].p = (const uint8_t *)ns_prefix[ns];
	ad[1].len = strlen(ns_prefix[ns]);
}

/* see xattr.h */
int xattr_name_enc(const struct names_ctx *ctx, const char *name,
		   char lower[XTSFS_XATTR_NAME_BUF])
{
	enum xattr_ns ns = xattr_namespace(name);
	uint8_t pt[XTSFS_XATTR_SUFFIX_MAX];
	uint8_t ct[AES_SIV_IV_SIZE + XTSFS_XATTR_SUFFIX_MAX];
	struct siv_ad ad[2];
	size_t plen, slen, p, o;
	const char *suffix;

	memset(lower, 0, XTSFS_XATTR_NAME_BUF);
	if (!xattr_ns_encrypted(ns))
		return -EOPNOTSUPP;
	plen = strlen(ns_prefix[ns]);
	suffix = name + plen;
	slen = strnlen(suffix, XTSFS_XATTR_SUFFIX_MAX + 1);
	if (slen == 0)
		return -EINVAL;
	if (slen > XTSFS_XATTR_SUFFIX_MAX)
		return -ERANGE;

	p = names_pad_len(slen);
	memset(pt, 0, p);
	memcpy(pt, suffix, slen);
	name_ad(ad, ns);
	names_siv_encrypt(ctx, ct, pt, p, ad, 2);
	explicit_bzero(pt, sizeof(pt));

	memcpy(lower, ns_prefix[ns], plen);
	memcpy(lower + plen, XTSFS_XATTR_MARKER, MARKER_LEN);
	o = plen + MARKER_LEN;
	names_b64_encode(lower + o, ct, AES_SIV_IV_SIZE + p);
	return 0;
}

/* see xattr.h */
int xattr_name_dec(const struct names_ctx *ctx, const char *lower,
		   char name[XTSFS_XATTR_NAME_BUF])
{
	enum xattr_ns ns = xattr_namespace(lower);
	uint8_t ct[AES_SIV_IV_SIZE + XTSFS_XATTR_SUFFIX_MAX];
	uint8_t pt[XTSFS_XATTR_SUFFIX_MAX];
	struct siv_ad ad[2];
	size_t plen, blen, clen, p, n;
	const char *b64;

	memset(name, 0, XTSFS_XATTR_NAME_BUF);
	if (!xattr_lower_is_ours(lower))
		return 1;
	plen = strlen(ns_prefix[ns]);
	b64 = lower + plen + MARKER_LEN;
	/* bounded before anything is decoded; names_b64_decode() is strict */
	blen = strnlen(b64, B64_MAX + 1);
	if (blen < B64_MIN || blen > B64_MAX)
		return -EBADMSG;
	if (names_b64_decode(ct, sizeof(ct), b64, blen, &clen))
		return -EBADMSG;
	/* V and whole blocks of padded name (B64_MIN: at least one) */
	if ((clen - AES_SIV_IV_SIZE) % 16)
		return -EBADMSG;
	p = clen - AES_SIV_IV_SIZE;
	name_ad(ad, ns);
	if (names_siv_decrypt(ctx, pt, ct, clen, ad, 2))
		return -EBADMSG; /* pt is zeroed */
	if (names_unpad(pt, p, XTSFS_XATTR_SUFFIX_MAX, &n)) {
		explicit_bzero(pt, sizeof(pt));
		return -EBADMSG;
	}
	memcpy(name, ns_prefix[ns], plen);
	memcpy(name + plen, pt, n);
	explicit_bzero(pt, sizeof(pt));
	return 0;
}

/* the two AD components of a value: the label, then its stored name */
static void value_ad(struct siv_ad ad[2], const char *lower)
{
	ad[0].p = (const uint8_t *)XTSFS_XATTR_VALUE_AD;
	ad[0].len = sizeof(XTSFS_XATTR_VALUE_AD) - 1;
	ad[1].p = (const uint8_t *)lower;
	ad[1].len = strlen(lower);
}

/* see xattr.h */
ssize_t xattr_value_enc(const struct names_ctx *ctx, const char *lower,
			const void *val, size_t len, void *out, size_t outsize)
{
	struct siv_ad ad[2];

	if (len > XTSFS_XATTR_VALUE_MAX)
		return -E2BIG;
	if (outsize < len + AES_SIV_IV_SIZE)
		return -ERANGE;
	value_ad(ad, lower);
	names_siv_encrypt(ctx, out, val, len, ad, 2);
	return (ssize_t)(len + AES_SIV_IV_SIZE);
}

/* see xattr.h */
ssize_t xattr_value_dec(const struct names_ctx *ctx, const char *lower,
			const void *in, size_t inlen, void *out, size_t outsize)
{
	struct siv_ad ad[2];
	uint8_t *buf = out;
	size_t n;
	int err;

	if (inlen < AES_SIV_IV_SIZE || inlen > XTSFS_XATTR_KERNEL_SIZE_MAX) {
		err = -EIO;
		goto fail;
	}
	n = inlen - AES_SIV_IV_SIZE;
	if (outsize && outsize < n) {
		err = -ERANGE;
		goto fail;
	}
	if (!outsize && n) {
		/* the probe: authenticate too, into memory of its own */
		buf = malloc(n);
		if (!buf)
			return -ENOMEM;
	}
	value_ad(ad, lower);
	err = names_siv_decrypt(ctx, buf, in, inlen, ad, 2) ? -EIO : 0;
	if (buf != out) {
		explicit_bzero(buf, n);
		free(buf);
	}
	if (!err)
		return (ssize_t)n;
	/* names_siv_decrypt() zeroed the @n bytes; the rest too */
fail:
	if (outsize)
		explicit_bzero(out, outsize);
	return err;
}

/*
 * A listxattr result: non-empty names, each with its NUL, back to back.
 * Checked whole before anything is converted, so that a malformed list
 * is EIO whatever the room.
 */
static bool list_ok(const char *list, size_t len)
{
	size_t pos = 0;

	while (pos < len) {
		const char *nul = memchr(list + pos, '\0', len - pos);

		if (!nul || nul == list + pos)
			return false;
		pos = (size_t)(nul - list) + 1;
	}
	return true;
}

/*
 * Append @n bytes of @name and a NUL to @out at *@o, if @outsize (0: count
 * only) has room; -ERANGE if not.
 */
static int put_name(char *out, size_t outsize, size_t *o, const char *name,
		    size_t n)
{
	if (outsize) {
		if (outsize - *o < n + 1)
			return -ERANGE;
		memcpy(out + *o, name, n);
		out[*o + n] = '\0';
	}
	*o += n + 1;
	return 0;
}

/* a name of a namespace in @pass (user and trusted never are) */
static bool passed(const char *name, unsigned pass)
{
	enum xattr_ns ns = xattr_namespace(name);

	return !xattr_ns_encrypted(ns) && (pass & XATTR_NS_BIT(ns));
}

/*
 * xattr_list_dec() with @dec, xattr_list_enc() without: one walk over
 * @in, converting the user/trusted names one way or the other.
 */
static ssize_t list_convert(const struct names_ctx *ctx, bool dec,
			    const char *in, size_t inlen, char *out,
			    size_t outsize, unsigned pass,
			    struct xattr_list_stats *st)
{
	struct xattr_list_stats dummy;
	char conv[XTSFS_XATTR_NAME_BUF];
	size_t pos = 0, o = 0, n;
	const char *name;
	int err = 0;

	if (!st)
		st = &dummy;
	memset(st, 0, sizeof(*st));
	if (!list_ok(in, inlen)) {
		err = -EIO;
		goto out;
	}
	for (; pos < inlen; pos += n + 1) {
		name = in + pos;
		n = strlen(name);
		if (!xattr_ns_encrypted(xattr_namespace(name))) {
			if (passed(name, pass))
				err = put_name(out, outsize, &o, name, n);
		} else if (dec) {
			int rc = xattr_name_dec(ctx, name, conv);

			if (rc == 1)
				st->foreign++;
			else if (rc)
				st->corrupt++;
			else
				err = put_name(out, outsize, &o, conv,
					       strlen(conv));
		} else {
			/* the whole name: it ends at its NUL */
			if (xattr_name_enc(ctx, name, conv))
				st->toolong++;
			else
				err = put_name(out, outsize, &o, conv,
					       strlen(conv));
		}
		if (err)
			break;
	}
out:
	explicit_bzero(conv, sizeof(conv));
	if (err) {
		if (outsize)
			explicit_bzero(out, outsize);
		return err;
	}
	return (ssize_t)o;
}

/* see xattr.h */
ssize_t xattr_list_dec(const struct names_ctx *ctx, const char *lower,
		       size_t lowerlen, char *out, size_t outsize,
		       unsigned pass, struct xattr_list_stats *st)
{
	return list_convert(ctx, true, lower, lowerlen, out, outsize, pass, st);
}

/* see xattr.h */
ssize_t xattr_list_enc(const struct names_ctx *ctx, const char *plain,
		       size_t plainlen, char *out, size_t outsize,
		       unsigned pass, struct xattr_list_stats *st)
{
	return list_convert(ctx, false, plain, plainlen, out, outsize, pass,
			    st);
}

/* see xattr.h */
size_t xattr_list_drop(char *list, size_t len, enum xattr_ns ns)
{
	size_t in = 0, out = 0;

	while (in < len) {
		size_t n = strnlen(list + in, len - in);

		n += n < len - in; /* its NUL, if it has one */
		if (xattr_namespace(list + in) != ns) {
			memmove(list + out, list + in, n);
			out += n;
		}
		in += n;
	}
	return out;
}

/* see xattr.h */
ssize_t xattr_give(void *out, size_t size, const void *src, size_t n)
{
	if (size && n > size)
		return -ERANGE;
	if (size)
		memcpy(out, src, n);
	return (ssize_t)n;
}
