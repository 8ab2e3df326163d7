/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xts.c - the XTS dispatcher: the table of cores, the choice of one, and
 * the only place that validates arguments before a core sees them.
 * IEEE Std 1619-2018 XTS-AES-256; the tweak layout is in doc/FORMAT.md.
 */
#include "xts.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aes_blk.h"
#include "secmem.h"

/*
 * Fastest first: "auto" takes the first whose probe passes and that does
 * not defer to a later one on this CPU (zmm gives way to vaes where
 * 512-bit vectors lower the clock).
 */
const struct xts_backend *const xts_backends[] = {
	&xts_backend_zmm,
	&xts_backend_vaes,
	&xts_backend_aesni,
	&xts_backend_software,
	NULL,
};

/* The last xts_choose() failure, for the user. Per thread, never a secret. */
static _Thread_local char choose_error[256];

/* see xts.h */
const char *xts_choose_error(void)
{
	return choose_error;
}

/* see xts.h */
const struct xts_backend *xts_backend_find(const char *name)
{
	for (size_t i = 0; xts_backends[i]; i++)
		if (!strcmp(xts_backends[i]->name, name))
			return xts_backends[i];
	return NULL;
}

static void list_names(char *buf, size_t size)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; xts_backends[i] && off < size; i++)
		off += (size_t)snprintf(buf + off, size - off, "%s%s",
					i ? ", " : "", xts_backends[i]->name);
}

/* see xts.h */
int xts_choose(const char *want, const struct xts_backend **out)
{
	const struct xts_backend *be = NULL;
	char names[96];

	choose_error[0] = '\0';
	if (!want || !*want) {
		want = getenv("XTSFS_CIPHER");
		if (!want || !*want)
			want = "auto";
	}
	if (!strcmp(want, "auto")) {
		for (size_t i = 0; xts_backends[i] && !be; i++)
			if (xts_backends[i]->probe() &&
			    (!xts_backends[i]->preferred ||
			     xts_backends[i]->preferred()))
				be = xts_backends[i];
		if (!be) { /* cannot happen: "software" always runs */
			snprintf(choose_error, sizeof(choose_error),
				 "no cipher core can run on this CPU");
			return -ENOTSUP;
		}
	} else {
		be = xts_backend_find(want);
		if (!be) {
			list_names(names, sizeof(names));
			snprintf(choose_error, sizeof(choose_error),
				 "unknown cipher core '%.40s' (known: auto, %s)",
				 want, names);
			return -ENOENT;
		}
		/* A forced core never falls back silently to another one. */
		if (!be->probe()) {
			snprintf(choose_error, sizeof(choose_error),
				 "cipher core '%s' cannot run on this CPU: it "
				 "needs %s", be->name, be->requires);
			return -ENOTSUP;
		}
	}
	if (xts_selftest(be) != 0) {
		snprintf(choose_error, sizeof(choose_error),
			 "cipher core '%s' failed its known-answer self-test; "
			 "refusing to use it", be->name);
		return -EIO;
	}
	/* CMAC and the names' AES-SIV follow: AES-NI with the x86 cores */
	if (aes_blk_select(be != &xts_backend_software) != 0) {
		snprintf(choose_error, sizeof(choose_error),
			 "AES-NI failed its known-answer self-test for single "
			 "blocks; refusing cipher core '%s'", be->name);
		return -EIO;
	}
	*out = be;
	return 0;
}

/* see xts.h */
int xts_ctx_new(struct xts_ctx **out, const struct xts_backend *be,
		const uint8_t key[XTS_KEY_SIZE])
{
	struct xts_ctx *ctx;

	*out = NULL;
	/*
	 * Key1 == Key2 makes the tweak encryption equal to the data
	 * encryption, which breaks XTS's security argument (Rogaway 2004;
	 * IEEE 1619-2018 requires distinct keys). Constant time, because the
	 * halves are secret.
	 */
	if (ct_memeq(key, key + XTS_KEY_SIZE / 2, XTS_KEY_SIZE / 2))
		return -EINVAL;
	ctx = secmem_alloc(sizeof(*ctx));
	if (!ctx)
		return -ENOMEM;
	ctx->be = be;
	be->setkey(ctx, key);
	*out = ctx;
	return 0;
}

/* see xts.h */
void xts_ctx_free(struct xts_ctx *ctx)
{
	secmem_free(ctx); /* wipes the expanded keys */
}

static bool units_ok(size_t nunits, uint64_t first_unit)
{
	return (uint64_t)nunits <= UINT64_MAX - first_unit;
}

/* see xts.h */
int xts_encrypt_units(const struct xts_ctx *ctx, uint8_t *dst,
		      const uint8_t *src, size_t nunits,
		      const uint8_t id[XTS_ID_SIZE], uint64_t first_unit)
{
	if (!units_ok(nunits, first_unit))
		return -EINVAL;
	if (nunits)
		ctx->be->encrypt_units(ctx, dst, src, nunits, id, first_unit);
	return 0;
}

/* see xts.h */
int xts_decrypt_units(const struct xts_ctx *ctx, uint8_t *dst,
		      const uint8_t *src, size_t nunits,
		      const uint8_t id[XTS_ID_SIZE], uint64_t first_unit)
{
	if (!units_ok(nunits, first_unit))
		return -EINVAL;
	if (nunits)
		ctx->be->decrypt_units(ctx, dst, src, nunits, id, first_unit);
	return 0;
}

/* see xts.h */
int xts_encrypt_one(const struct xts_ctx *ctx, uint8_t *dst,
		    const uint8_t *src, size_t len,
		    const uint8_t tweak_in[XTS_BLOCK_SIZE])
{
	/* < 16 bytes has no XTS encryption; > 2^20 blocks breaks its bound. */
	if (len < XTS_BLOCK_SIZE || len > XTS_MAX_UNIT_LEN)
		return -EINVAL;
	ctx->be->encrypt_one(ctx, dst, src, len, tweak_in);
	return 0;
}

/* see xts.h */
int xts_decrypt_one(const struct xts_ctx *ctx, uint8_t *dst,
		    const uint8_t *src, size_t len,
		    const uint8_t tweak_in[XTS_BLOCK_SIZE])
{
	if (len < XTS_BLOCK_SIZE || len > XTS_MAX_UNIT_LEN)
		return -EINVAL;
	ctx->be->decrypt_one(ctx, dst, src, len, tweak_in);
	return 0;
}
