/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_xattr.c - fuzz target for the extended-attribute codec (xattr.h,
 * FORMAT.md section 6): xattr_name_dec() of names a lower listxattr can
 * give, xattr_value_dec() of stored values with getxattr's size rules,
 * xattr_list_dec() of whole lower lists, and the encoders of plaintext
 * names and values, under the fixed test names key (fuzz_common.h).
 *
 * A decoded name or value must encode back to exactly the input (one
 * stored form per plaintext, so listxattr shows only what getxattr
 * finds); the size probes must give exactly the size a read then
 * fills; outputs are zeroed on failure; nothing is written past the
 * room given.
 *
 * Input: a mode byte (low three bits; 5..7 do nothing), then:
 *   0  a stored name (up to the first NUL) for xattr_name_dec()
 *   1  a plaintext name (up to the first NUL) for xattr_name_enc()
 *   2  a room byte (low two bits: 0 probe, 1 exact, 2 one short, 3 all
 *      of it), a stored name up to a NUL, then a stored value
 *   3  a pass mask byte, then a lower listxattr result
 *   4  a stored name up to a NUL, then a plaintext value for
 *      xattr_value_enc() (then decrypted again, also under another name)
 */
#include <errno.h>

#include "names.h"
#include "xattr.h"
#include "fuzz_common.h"

#define NAME_IN_MAX 600
#define LIST_MAX (XTSFS_XATTR_KERNEL_LIST_MAX + 4096)

static struct names_ctx *ctx(void)
{
	return fuzz_names_ctx();
}

/* a NUL-terminated copy of up to NAME_IN_MAX - 1 bytes of @d, to a NUL */
static size_t cstr(char out[NAME_IN_MAX], const uint8_t *d, size_t size)
{
	size_t n = size < NAME_IN_MAX - 1 ? size : NAME_IN_MAX - 1;
	const uint8_t *nul = memchr(d, 0, n);

	if (nul)
		n = (size_t)(nul - d);
	memcpy(out, d, n);
	out[n] = '\0';
	return n;
}

static const char *prefix_of(const char *name)
{
	switch (xattr_namespace(name)) {
	case XATTR_NS_USER:
		return "user.";
	case XATTR_NS_TRUSTED:
		return "trusted.";
	default:
		return NULL;
	}
}

/* a plaintext name @name that xattr_name_enc() took made @lower */
static void check_name_pair(const char *name, const char *lower)
{
	const char *pre = prefix_of(name);
	char back[XTSFS_XATTR_NAME_BUF];
	size_t plen, slen, p, blen;
	uint8_t vc[16 + 256];

	FUZZ_CHECK(pre != NULL);
	plen = strlen(pre);
	slen = strlen(name) - plen;
	FUZZ_CHECK(slen >= 1 && slen <= XTSFS_XATTR_SUFFIX_MAX);
	p = slen <= 16 ? 16 : (slen + 15) / 16 * 16;
	/* pre "xtsfs." base64url(16 + p bytes), within NAME_MAX */
	FUZZ_CHECK(!strncmp(lower, pre, plen) &&
		   !strncmp(lower + plen, "xtsfs.", 6));
	blen = strlen(lower + plen + 6);
	FUZZ_CHECK(blen == (4 * (16 + p) + 2) / 3);
	FUZZ_CHECK(strlen(lower) <= XTSFS_XATTR_KERNEL_NAME_MAX);
	FUZZ_CHECK(ref_b64_decode(vc, sizeof(vc), lower + plen + 6, blen) ==
		   (long)(16 + p));
	FUZZ_CHECK(xattr_lower_is_ours(lower));
	FUZZ_CHECK(xattr_namespace(lower) == xattr_namespace(name));
	FUZZ_CHECK(xattr_name_dec(ctx(), lower, back) == 0);
	FUZZ_CHECK(!strcmp(back, name));
}

static void stored_name(const uint8_t *d, size_t size)
{
	char lower[NAME_IN_MAX], name[XTSFS_XATTR_NAME_BUF];
	char again[XTSFS_XATTR_NAME_BUF];
	int rc;

	cstr(lower, d, size);
	memset(name, 0x5a, sizeof(name));
	rc = xattr_name_dec(ctx(), lower, name);
	FUZZ_CHECK(rc == 0 || rc == 1 || rc == -EBADMSG);
	FUZZ_CHECK((rc == 1) == !xattr_lower_is_ours(lower));
	if (rc) {
		FUZZ_CHECK(all_zero(name, sizeof(name)));
		return;
	}
	/* canonical: the one stored form of this name is the one given */
	FUZZ_CHECK(strlen(name) < XTSFS_XATTR_NAME_BUF);
	FUZZ_CHECK(xattr_name_enc(ctx(), name, again) == 0);
	FUZZ_CHECK(!strcmp(again, lower));
	check_name_pair(name, lower);
}

static void plain_name(const uint8_t *d, size_t size)
{
	char name[NAME_IN_MAX], lower[XTSFS_XATTR_NAME_BUF];
	const char *pre;
	size_t n = cstr(name, d, size), slen;
	int rc, want;

	pre = prefix_of(name);
	slen = pre ? n - strlen(pre) : 0;
	if (!pre)
		want = -EOPNOTSUPP;
	else if (slen == 0)
		want = -EINVAL;
	else if (slen > XTSFS_XATTR_SUFFIX_MAX)
		want = -ERANGE;
	else
		want = 0;
	memset(lower, 0x5a, sizeof(lower));
	rc = xattr_name_enc(ctx(), name, lower);
	FUZZ_CHECK(rc == want);
	if (rc) {
		FUZZ_CHECK(all_zero(lower, sizeof(lower)));
		return;
	}
	check_name_pair(name, lower);
}

/* the room byte of mode 2 for a plaintext of @n bytes, and the room */
static size_t room_for(uint8_t b, size_t n, size_t max)
{
	switch (b & 3) {
	case 0:
		return 0;
	case 1:
		return n;
	case 2:
		return n ? n - 1 : 0;
	default:
		return max;
	}
}

static void stored_value(const uint8_t *d, size_t size)
{
	static uint8_t out[XTSFS_XATTR_KERNEL_SIZE_MAX + 64];
	static uint8_t again[XTSFS_XATTR_KERNEL_SIZE_MAX + 64];
	char lower[NAME_IN_MAX];
	const uint8_t *in;
	size_t nlen, inlen, room, want;
	ssize_t rc, probe;

	if (size < 1)
		return;
	nlen = cstr(lower, d + 1, size - 1);
	if (1 + nlen >= size)
		return; /* no NUL after the name */
	in = d + 1 + nlen + 1;
	inlen = size - (1 + nlen + 1);
	want = inlen >= 16 ? inlen - 16 : 0;
	room = room_for(d[0], want, sizeof(out) - 1);

	probe = xattr_value_dec(ctx(), lower, in, inlen, NULL, 0);
	memset(out, 0xa5, sizeof(out));
	rc = xattr_value_dec(ctx(), lower, in, inlen, room ? out : NULL, room);
	if (inlen < 16 || inlen > XTSFS_XATTR_KERNEL_SIZE_MAX) {
		FUZZ_CHECK(probe == -EIO && rc == -EIO);
	} else if (room == 0) {
		FUZZ_CHECK(rc == probe);
	} else if (room < want) {
		FUZZ_CHECK(rc == -ERANGE);
	} else {
		/* a probe's answer is exactly what the read gives */
		FUZZ_CHECK(rc == probe);
		FUZZ_CHECK(rc == (ssize_t)want || rc == -EIO);
	}
	FUZZ_CHECK(probe == (ssize_t)want || probe == -EIO);
	if (rc < 0) {
		FUZZ_CHECK(all_zero(out, room));
		FUZZ_CHECK(out[room] == 0xa5);
		return;
	}
	if (!room)
		return;
	FUZZ_CHECK(out[want] == 0xa5);
	/* authentic: the one stored form of this value under this name */
	FUZZ_CHECK(xattr_value_enc(ctx(), lower, out, want, again,
				   sizeof(again)) == (ssize_t)inlen);
	FUZZ_CHECK(!memcmp(again, in, inlen));
}

static void plain_value(const uint8_t *d, size_t size)
{
	static uint8_t st[XTSFS_XATTR_KERNEL_SIZE_MAX + 64];
	static uint8_t out[XTSFS_XATTR_KERNEL_SIZE_MAX + 64];
	char lower[NAME_IN_MAX], other[NAME_IN_MAX + 1];
	const uint8_t *val;
	size_t nlen, len;
	ssize_t n;

	nlen = cstr(lower, d, size);
	if (nlen >= size)
		return;
	val = d + nlen + 1;
	len = size - nlen - 1;
	n = xattr_value_enc(ctx(), lower, val, len, st, sizeof(st));
	if (len > XTSFS_XATTR_VALUE_MAX) {
		FUZZ_CHECK(n == -E2BIG);
		return;
	}
	FUZZ_CHECK(n == (ssize_t)(len + 16));
	FUZZ_CHECK(xattr_value_dec(ctx(), lower, st, (size_t)n, out,
				   sizeof(out)) == (ssize_t)len);
	FUZZ_CHECK(!memcmp(out, val, len));
	/* bound to the name: one more character and it is refused */
	snprintf(other, sizeof(other), "%s%c", lower, 'x');
	FUZZ_CHECK(xattr_value_dec(ctx(), other, st, (size_t)n, out,
				   sizeof(out)) == -EIO);
	FUZZ_CHECK(all_zero(out, len));
}

/* every name of the well-formed list @l, @len bytes, is legal and @ok */
static void check_list_names(const char *l, size_t len, unsigned pass,
			     bool stored)
{
	size_t pos = 0;

	while (pos < len) {
		const char *name = l + pos;
		size_t n = strnlen(name, len - pos);
		enum xattr_ns ns = xattr_namespace(name);

		FUZZ_CHECK(n >= 1 && n < len - pos);
		if (xattr_ns_encrypted(ns)) {
			/* plaintext names carry no marker requirement */
			if (stored)
				FUZZ_CHECK(xattr_lower_is_ours(name));
		} else {
			FUZZ_CHECK(pass & XATTR_NS_BIT(ns));
		}
		pos += n + 1;
	}
}

static void lower_list(const uint8_t *d, size_t size)
{
	static char out[LIST_MAX], again[2 * LIST_MAX], back[LIST_MAX];
	struct xattr_list_stats st, st2;
	const char *l = (const char *)d + 1;
	size_t len;
	unsigned pass;
	ssize_t probe, rc, s, rc2;
	bool wellformed;

	if (size < 1 || size - 1 > LIST_MAX)
		return;
	len = size - 1;
	pass = d[0] & 0x1f;
	wellformed = len == 0 || (l[len - 1] == '\0' && l[0] != '\0' &&
				  !memmem(l, len, "\0\0", 2));
	probe = xattr_list_dec(ctx(), l, len, NULL, 0, pass, &st);
	if (!wellformed) {
		FUZZ_CHECK(probe == -EIO);
		memset(out, 0x5a, 64);
		FUZZ_CHECK(xattr_list_dec(ctx(), l, len, out, 64, pass, NULL) ==
			   -EIO);
		FUZZ_CHECK(all_zero(out, 64));
		return;
	}
	/* never longer than the lower list */
	FUZZ_CHECK(probe >= 0 && (size_t)probe <= len);
	memset(out, 0xa5, sizeof(out));
	rc = xattr_list_dec(ctx(), l, len, out, (size_t)probe + 1, pass, &st2);
	FUZZ_CHECK(rc == probe);
	FUZZ_CHECK(st.foreign == st2.foreign && st.corrupt == st2.corrupt &&
		   st.toolong == 0 && st2.toolong == 0);
	FUZZ_CHECK((unsigned char)out[probe] == 0xa5);
	check_list_names(out, (size_t)rc, pass, false);
	if (probe > 1) {
		memset(out + probe + 1, 0xa5, 4);
		FUZZ_CHECK(xattr_list_dec(ctx(), l, len, out, (size_t)probe - 1,
					  pass, NULL) == -ERANGE);
		FUZZ_CHECK(all_zero(out, (size_t)probe - 1));
		rc = xattr_list_dec(ctx(), l, len, out, (size_t)probe, pass,
				    NULL);
		FUZZ_CHECK(rc == probe);
	}
	/* encoding it back gives names that decode to the same list */
	s = xattr_list_enc(ctx(), out, (size_t)rc, NULL, 0, pass, &st2);
	FUZZ_CHECK(s >= rc && st2.toolong == 0);
	FUZZ_CHECK(xattr_list_enc(ctx(), out, (size_t)rc, again, (size_t)s,
				  pass, NULL) == s);
	check_list_names(again, (size_t)s, pass, true);
	rc2 = xattr_list_dec(ctx(), again, (size_t)s, back, sizeof(back), pass,
			     &st2);
	FUZZ_CHECK(rc2 == rc && !memcmp(back, out, (size_t)rc));
	FUZZ_CHECK(st2.foreign == 0 && st2.corrupt == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	switch (data[0] & 7) {
	case 0:
		stored_name(data + 1, size - 1);
		break;
	case 1:
		plain_name(data + 1, size - 1);
		break;
	case 2:
		stored_value(data + 1, size - 1);
		break;
	case 3:
		lower_list(data + 1, size - 1);
		break;
	case 4:
		plain_value(data + 1, size - 1);
		break;
	}
	return 0;
}
