/* SPDX-License-Identifier: Apache-2.0 */
/*
 * aes_x86.c - AES-256 key expansion with AES-NI (FIPS-197 5.2), shared by
 * the "aesni", "vaes" and "zmm" cores, and plain ECB encryption of a few
 * blocks for aes_blk.h. Requires: AES-NI, SSE2.
 */
#include "aes_x86.h"

#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#define TARGET __attribute__((target("aes,sse4.1")))

/* One step of the AES-256 schedule: w[i] for even 4-word groups. */
TARGET static inline __m128i expand_a(__m128i prev, __m128i assist)
{
	assist = _mm_shuffle_epi32(assist, 0xff);
	prev = _mm_xor_si128(prev, _mm_slli_si128(prev, 4));
	prev = _mm_xor_si128(prev, _mm_slli_si128(prev, 4));
	prev = _mm_xor_si128(prev, _mm_slli_si128(prev, 4));
	return _mm_xor_si128(prev, assist);
}

/* The odd groups use SubWord without RotWord and no round constant. */
TARGET static inline __m128i expand_b(__m128i prev, __m128i assist)
{
	assist = _mm_shuffle_epi32(assist, 0xaa);
	prev = _mm_xor_si128(prev, _mm_slli_si128(prev, 4));
	prev = _mm_xor_si128(prev, _mm_slli_si128(prev, 4));
	prev = _mm_xor_si128(prev, _mm_slli_si128(prev, 4));
	return _mm_xor_si128(prev, assist);
}

#define STEP(rcon)                                                          \
	do {                                                                \
		a = expand_a(a, _mm_aeskeygenassist_si128(b, rcon));        \
		_mm_store_si128((__m128i *)rk[i++], a);                     \
		if (i == 15)                                                \
			break;                                              \
		b = expand_b(b, _mm_aeskeygenassist_si128(a, 0));           \
		_mm_store_si128((__m128i *)rk[i++], b);                     \
	} while (0)

TARGET static void expand256(uint8_t rk[15][16], const uint8_t key[32])
{
	__m128i a = _mm_loadu_si128((const __m128i *)key);
	__m128i b = _mm_loadu_si128((const __m128i *)(key + 16));
	int i = 0;

	_mm_store_si128((__m128i *)rk[i++], a);
	_mm_store_si128((__m128i *)rk[i++], b);
	STEP(0x01);
	STEP(0x02);
	STEP(0x04);
	STEP(0x08);
	STEP(0x10);
	STEP(0x20);
	STEP(0x40);
	/*
	 * No attempt to clear a and b here: the compiler would drop such dead
	 * stores anyway. The round keys go straight into locked memory.
	 */
}

/* see aes_x86.h */
TARGET void aes_x86_setkey(struct xts_ctx *ctx, const uint8_t key[XTS_KEY_SIZE])
{
	struct aes_x86_keys *k = (struct aes_x86_keys *)ctx->state;

	expand256(k->ek1, key);
	expand256(k->ek2, key + 32);
	memcpy(k->dk1[0], k->ek1[14], 16);
	for (int r = 1; r < 14; r++) {
		__m128i t = _mm_load_si128((const __m128i *)k->ek1[14 - r]);

		_mm_store_si128((__m128i *)k->dk1[r], _mm_aesimc_si128(t));
	}
	memcpy(k->dk1[14], k->ek1[0], 16);
}

/* see aes_x86.h */
TARGET void aes_x86_expand(uint8_t rk[15][16], const uint8_t key[32])
{
	expand256(rk, key);
}

/* Round key @r of @rk, read from memory at each use. */
TARGET static inline __m128i rkey(const uint8_t rk[15][16], int r)
{
	return _mm_load_si128((const __m128i *)rk[r]);
}

TARGET static inline __m128i load(const uint8_t *p)
{
	return _mm_loadu_si128((const __m128i *)p);
}

TARGET static inline void store(uint8_t *p, __m128i x)
{
	_mm_storeu_si128((__m128i *)p, x);
}

/*
 * see aes_x86.h. The empty asm hides where @rk points, so the compiler
 * reads the round keys from the key rather than keeping them in registers
 * it would then spill to the stack (see aes_enc1() in xts_aesni.c).
 */
TARGET void aes_x86_encrypt_blocks(const uint8_t rk[15][16], uint8_t *dst,
				   const uint8_t *src, size_t nblocks)
{
	__asm__ volatile("" : "+r"(rk));
	for (; nblocks >= 4; nblocks -= 4, src += 64, dst += 64) {
		__m128i a = _mm_xor_si128(load(src), rkey(rk, 0));
		__m128i b = _mm_xor_si128(load(src + 16), rkey(rk, 0));
		__m128i c = _mm_xor_si128(load(src + 32), rkey(rk, 0));
		__m128i d = _mm_xor_si128(load(src + 48), rkey(rk, 0));

		for (int r = 1; r < 14; r++) {
			__m128i k = rkey(rk, r);

			a = _mm_aesenc_si128(a, k);
			b = _mm_aesenc_si128(b, k);
			c = _mm_aesenc_si128(c, k);
			d = _mm_aesenc_si128(d, k);
		}
		store(dst, _mm_aesenclast_si128(a, rkey(rk, 14)));
		store(dst + 16, _mm_aesenclast_si128(b, rkey(rk, 14)));
		store(dst + 32, _mm_aesenclast_si128(c, rkey(rk, 14)));
		store(dst + 48, _mm_aesenclast_si128(d, rkey(rk, 14)));
	}
	for (; nblocks; nblocks--, src += 16, dst += 16) {
		__m128i x = _mm_xor_si128(load(src), rkey(rk, 0));

		for (int r = 1; r < 14; r++)
			x = _mm_aesenc_si128(x, rkey(rk, r));
		store(dst, _mm_aesenclast_si128(x, rkey(rk, 14)));
	}
}
#else
/* see aes_x86.h: never called off x86 (the x86 cores' probes fail) */
void aes_x86_setkey(struct xts_ctx *ctx, const uint8_t key[XTS_KEY_SIZE])
{
	(void)ctx;
	(void)key;
}

/* see aes_x86.h: never called off x86 (aes_blk.h needs AES-NI for it) */
void aes_x86_expand(uint8_t rk[15][16], const uint8_t key[32])
{
	(void)rk;
	(void)key;
}

/* see aes_x86.h */
void aes_x86_encrypt_blocks(const uint8_t rk[15][16], uint8_t *dst,
			    const uint8_t *src, size_t nblocks)
{
	(void)rk;
	(void)dst;
	(void)src;
	(void)nblocks;
}
#endif
