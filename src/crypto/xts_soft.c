/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xts_soft.c - the "software" core: XTS-AES-256 (IEEE Std 1619-2018) in
 * portable C on top of the constant-time bitsliced AES of aes_ct.c.
 *
 * ISA:        none required; GCC vector extensions give SSE2 on x86-64.
 * In flight:  AES256_CT_PARALLEL (8) blocks per bitsliced pass.
 * Tweaks:     T = AES-Enc_Key2(tweak_in); T_{j+1} = T_j * alpha, computed
 *             on two 64-bit halves with a mask (no branch on the carry).
 *             For encrypt_units the initial tweaks of up to 8 units are
 *             encrypted in one pass.
 * Key1:       spread to bit planes (struct aes256_ct_bskey, 1920 bytes)
 *             on the stack at the start of each call and wiped at the
 *             end; ctx->state keeps only the compact schedules, because
 *             two spread keys would not fit in XTS_CTX_STATE_SIZE.
 * Stealing:   the last full block rides in the last regular pass (for
 *             decryption with T_m instead of T_{m-1}), so a partial tail
 *             costs one extra pass.
 *
 * Constant time like aes_ct.c: branches and addresses depend only on
 * lengths, never on keys, tweaks or data.
 */
#include "xts.h"

#include <stdbool.h>
#include <string.h>

#include "aes_ct.h"

/* ctx->state for this core */
struct soft_keys {
	struct aes256_ct_key k1; /* Key1: data */
	struct aes256_ct_key k2; /* Key2: tweak */
};

_Static_assert(sizeof(struct soft_keys) <= XTS_CTX_STATE_SIZE,
	       "software XTS keys must fit in xts_ctx");

/* tweaks made per refill: a few passes' worth amortises the loop */
#define TWEAK_BATCH (4 * AES256_CT_PARALLEL)

static const struct soft_keys *keys(const struct xts_ctx *ctx)
{
	return (const struct soft_keys *)(const void *)ctx->state;
}

/* A tweak as a little-endian 128-bit integer: bytes 0..7 are @lo. */
struct tweak {
	uint64_t lo, hi;
};

static inline uint64_t le64_load(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	return v;
}

static inline void le64_store(uint8_t *p, uint64_t v)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	memcpy(p, &v, 8);
}

static inline void tweak_load(struct tweak *t, const uint8_t b[16])
{
	t->lo = le64_load(b);
	t->hi = le64_load(b + 8);
}

static inline void tweak_store(uint8_t b[16], const struct tweak *t)
{
	le64_store(b, t->lo);
	le64_store(b + 8, t->hi);
}

/*
 * T <- T * alpha in GF(2^128) mod x^128 + x^7 + x^2 + x + 1: shift the
 * 128-bit integer left by one; a carry out of bit 127 becomes 0x87 in
 * byte 0. The carry is turned into a mask, not tested.
 */
static inline void tweak_mul_alpha(struct tweak *t)
{
	uint64_t carry = t->hi >> 63;

	t->hi = (t->hi << 1) | (t->lo >> 63);
	t->lo = (t->lo << 1) ^ (0x87 & (0 - carry));
}

/*
 * xts_unit() - one data unit of @len bytes (16 <= len) whose initial
 * tweak T is @t, with IEEE 1619 ciphertext stealing when len % 16 != 0.
 * dst == src is allowed.
 *
 * With m full blocks and r = len % 16 tail bytes:
 *   encrypt: blocks 0..m-1 as usual (block m-1 gives CC); the tail's
 *            ciphertext is CC[0..r); block m-1 is then re-encrypted from
 *            P_m || CC[r..16) with T_m.
 *   decrypt: block m-1 is decrypted with T_m (giving PP); the tail's
 *            plaintext is PP[0..r); block m-1 is C_m || PP[r..16)
 *            decrypted with T_{m-1}.
 */
static void xts_unit(bool dec, const struct aes256_ct_bskey *bk,
		     uint8_t *dst, const uint8_t *src, size_t len,
		     struct tweak t)
{
	uint8_t tw[16 * TWEAK_BATCH];
	size_t m = len / 16, r = len % 16;
	struct tweak t_prev = t; /* T_{m-1}, for decryption with stealing */

	for (size_t i = 0; i < m;) {
		size_t n = m - i < TWEAK_BATCH ? m - i : TWEAK_BATCH;

		for (size_t j = 0; j < n; j++) {
			if (dec && r && i + j == m - 1) {
				t_prev = t;
				tweak_mul_alpha(&t);
			}
			tweak_store(tw + 16 * j, &t);
			tweak_mul_alpha(&t);
		}
		if (dec)
			aes256_ct_xex_decrypt(bk, dst + 16 * i, src + 16 * i,
					      tw, n);
		else
			aes256_ct_xex_encrypt(bk, dst + 16 * i, src + 16 * i,
					      tw, n);
		i += n;
	}
	if (!r)
		return;

	/*
	 * Stealing. Encryption: t is T_m. Decryption: t_prev is T_{m-1}.
	 * The tail of src is read before the tail of dst is written, which
	 * keeps dst == src working.
	 */
	uint8_t last[16], *full = dst + 16 * (m - 1);

	memcpy(last, full, 16);         /* CC (enc) or PP (dec) */
	memcpy(last, src + 16 * m, r);  /* P_m || CC[r..] or C_m || PP[r..] */
	memcpy(dst + 16 * m, full, r);  /* C_m = CC[0..r) or P_m = PP[0..r) */
	if (dec) {
		tweak_store(tw, &t_prev);
		aes256_ct_xex_decrypt(bk, full, last, tw, 1);
	} else {
		tweak_store(tw, &t);
		aes256_ct_xex_encrypt(bk, full, last, tw, 1);
	}
}

static bool soft_probe(void)
{
	return true;
}

static void soft_setkey(struct xts_ctx *ctx, const uint8_t key[XTS_KEY_SIZE])
{
	struct soft_keys *sk = (struct soft_keys *)(void *)ctx->state;

	aes256_ct_setkey(&sk->k1, key);
	aes256_ct_setkey(&sk->k2, key + 32);
}

static void soft_units(bool dec, const struct xts_ctx *ctx, uint8_t *dst,
		       const uint8_t *src, size_t nunits,
		       const uint8_t id[XTS_ID_SIZE], uint64_t first_unit)
{
	const struct soft_keys *sk = keys(ctx);
	struct aes256_ct_bskey bk;
	uint8_t tin[16 * AES256_CT_PARALLEL];

	aes256_ct_bskey_expand(&bk, &sk->k1);
	for (size_t u = 0; u < nunits;) {
		size_t g = nunits - u;

		if (g > AES256_CT_PARALLEL)
			g = AES256_CT_PARALLEL;
		/* one pass makes the initial tweaks of up to 8 units */
		for (size_t j = 0; j < g; j++)
			xts_unit_tweak(tin + 16 * j, id, first_unit + u + j);
		aes256_ct_encrypt_blocks(&sk->k2, tin, tin, g);
		for (size_t j = 0; j < g; j++, u++) {
			struct tweak t;

			tweak_load(&t, tin + 16 * j);
			xts_unit(dec, &bk, dst + XTSFS_UNIT_SIZE * u,
				 src + XTSFS_UNIT_SIZE * u, XTSFS_UNIT_SIZE, t);
		}
	}
	explicit_bzero(&bk, sizeof(bk));
}

static void soft_encrypt_units(const struct xts_ctx *ctx, uint8_t *dst,
			       const uint8_t *src, size_t nunits,
			       const uint8_t id[XTS_ID_SIZE],
			       uint64_t first_unit)
{
	soft_units(false, ctx, dst, src, nunits, id, first_unit);
}

static void soft_decrypt_units(const struct xts_ctx *ctx, uint8_t *dst,
			       const uint8_t *src, size_t nunits,
			       const uint8_t id[XTS_ID_SIZE],
			       uint64_t first_unit)
{
	soft_units(true, ctx, dst, src, nunits, id, first_unit);
}

static void soft_one(bool dec, const struct xts_ctx *ctx, uint8_t *dst,
		     const uint8_t *src, size_t len,
		     const uint8_t tweak_in[XTS_BLOCK_SIZE])
{
	const struct soft_keys *sk = keys(ctx);
	struct aes256_ct_bskey bk;
	uint8_t tb[16];
	struct tweak t;

	aes256_ct_encrypt_blocks(&sk->k2, tb, tweak_in, 1);
	tweak_load(&t, tb);
	aes256_ct_bskey_expand(&bk, &sk->k1);
	xts_unit(dec, &bk, dst, src, len, t);
	explicit_bzero(&bk, sizeof(bk));
}

static void soft_encrypt_one(const struct xts_ctx *ctx, uint8_t *dst,
			     const uint8_t *src, size_t len,
			     const uint8_t tweak_in[XTS_BLOCK_SIZE])
{
	soft_one(false, ctx, dst, src, len, tweak_in);
}

static void soft_decrypt_one(const struct xts_ctx *ctx, uint8_t *dst,
			     const uint8_t *src, size_t len,
			     const uint8_t tweak_in[XTS_BLOCK_SIZE])
{
	soft_one(true, ctx, dst, src, len, tweak_in);
}

const struct xts_backend xts_backend_software = {
	.name = "software",
	.requires = "any CPU",
	.probe = soft_probe,
	.setkey = soft_setkey,
	.encrypt_units = soft_encrypt_units,
	.decrypt_units = soft_decrypt_units,
	.encrypt_one = soft_encrypt_one,
	.decrypt_one = soft_decrypt_one,
};
