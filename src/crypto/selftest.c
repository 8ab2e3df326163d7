/* SPDX-License-Identifier: Apache-2.0 */
/*
 * selftest.c - the known-answer gate every core passes before it is used
 * (xts_choose() runs it). It checks, with public test keys only:
 *   1. every published vector in xts_vectors.h (IEEE 1619 and the
 *      ciphertext-stealing ones), both directions, out of place and in
 *      place;
 *   2. the multi-unit path: three units of one file whose unit numbers
 *      cross a byte boundary, pinned against OpenSSL's EVP aes-256-xts
 *      (a 16-byte XOR fold of each unit's ciphertext), so the tweak
 *      derivation of doc/FORMAT.md is checked too, not just the cipher.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "xts.h"
#include "xts_vectors.h"

#define ST_UNITS 3

/*
 * Key: IEEE 1619 vector 10's. id = a0 a1 .. af, first unit 0xfffffffe,
 * plaintext byte i = 7 i + 3 (mod 256). fold[u][b] = XOR of ciphertext
 * bytes 16 k + b of unit u. Values computed with OpenSSL 3.0 EVP
 * aes-256-xts and tweak input id XOR LE64(unit).
 */
static const uint8_t st_fold[ST_UNITS][16] = {
	{ 0x1f, 0xbb, 0x7e, 0xe6, 0x33, 0x5f, 0xa8, 0xd3,
	  0xf2, 0x59, 0xe6, 0xd6, 0x48, 0x09, 0x32, 0x5f, },
	{ 0xf8, 0x1a, 0x08, 0x7d, 0x3b, 0x85, 0x95, 0xee,
	  0x81, 0xbc, 0x4e, 0xa5, 0xc2, 0x03, 0x78, 0x28, },
	{ 0x3a, 0x0e, 0x12, 0x70, 0x8a, 0xc4, 0x2b, 0xbb,
	  0x55, 0x44, 0xf4, 0x2a, 0x39, 0x22, 0xc8, 0x38, },
};

static int check_vector(const struct xts_backend *be, struct xts_ctx *ctx,
			const struct xts_vector *v, uint8_t *buf)
{
	be->setkey(ctx, v->key);
	be->encrypt_one(ctx, buf, v->pt, v->len, v->tweak);
	if (memcmp(buf, v->ct, v->len))
		return -EIO;
	be->decrypt_one(ctx, buf, buf, v->len, v->tweak); /* in place */
	if (memcmp(buf, v->pt, v->len))
		return -EIO;
	memcpy(buf, v->pt, v->len);
	be->encrypt_one(ctx, buf, buf, v->len, v->tweak); /* in place */
	if (memcmp(buf, v->ct, v->len))
		return -EIO;
	be->decrypt_one(ctx, buf, v->ct, v->len, v->tweak);
	if (memcmp(buf, v->pt, v->len))
		return -EIO;
	return 0;
}

static int check_units(const struct xts_backend *be, struct xts_ctx *ctx,
		       uint8_t *pt, uint8_t *ct)
{
	const size_t n = ST_UNITS * XTSFS_UNIT_SIZE;
	uint8_t id[XTS_ID_SIZE];

	for (int i = 0; i < XTS_ID_SIZE; i++)
		id[i] = (uint8_t)(0xa0 + i);
	for (size_t i = 0; i < n; i++)
		pt[i] = (uint8_t)(i * 7 + 3);
	be->setkey(ctx, xts_vectors[0].key);
	be->encrypt_units(ctx, ct, pt, ST_UNITS, id, 0xfffffffeu);
	for (int u = 0; u < ST_UNITS; u++) {
		uint8_t fold[16] = { 0 };

		for (size_t i = 0; i < XTSFS_UNIT_SIZE; i++)
			fold[i % 16] ^= ct[u * XTSFS_UNIT_SIZE + i];
		if (memcmp(fold, st_fold[u], 16))
			return -EIO;
	}
	be->decrypt_units(ctx, ct, ct, ST_UNITS, id, 0xfffffffeu);
	for (size_t i = 0; i < n; i++)
		if (ct[i] != (uint8_t)(i * 7 + 3))
			return -EIO;
	return 0;
}

/* see xts.h */
int xts_selftest(const struct xts_backend *be)
{
	const size_t n = ST_UNITS * XTSFS_UNIT_SIZE;
	struct xts_ctx *ctx;
	uint8_t *pt, *ct;
	int err = 0;

	if (!be->probe())
		return -EIO;
	/* Heap, not stack: the context is large and 64-byte aligned. */
	ctx = aligned_alloc(64, sizeof(*ctx));
	pt = malloc(n);
	ct = malloc(n);
	if (!ctx || !pt || !ct) {
		err = -ENOMEM;
		goto out;
	}
	ctx->be = be;
	for (size_t i = 0; i < XTS_NVECTORS && !err; i++)
		err = check_vector(be, ctx, &xts_vectors[i], ct);
	if (!err)
		err = check_units(be, ctx, pt, ct);
out:
	if (ctx)
		explicit_bzero(ctx, sizeof(*ctx)); /* test keys, but be tidy */
	free(ctx);
	free(pt);
	free(ct);
	return err ? -EIO : 0;
}
