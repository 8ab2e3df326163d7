/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xts_aesni.c - the "aesni" core: XTS-AES-256 (IEEE Std 1619-2018).
 *
 * ISA:        AES-NI + SSE4.1 (PSHUFB, PBLENDVB, PEXTRQ), legacy SSE
 *             encoding, 16 xmm registers. No PCLMULQDQ, no AVX.
 *             Probe: cpu_features()->aesni.
 * Width:      128 bits, one block per xmm register.
 * In flight:  12 independent blocks per batch: 12 states and the current
 *             round key take 13 registers; each round key is loaded once
 *             per round per batch, the tweaks are memory operands.
 * Targets:    any x86-64 with AES-NI. Tuned on AMD Zen 4/5, where AESENC
 *             has latency 4 and throughput 2 per cycle: 8 blocks is the
 *             bare minimum to fill both units and every bubble shows
 *             (measured ~92% of the AESENC ceiling); 10-12 leave slack
 *             (~97%); 16 needs more than 16 registers and spills. Older
 *             or Intel cores (latency 3-7, 1-2 per cycle) need <= 8, so
 *             12 costs them nothing.
 * Tuned for:  4096-byte units, one or many per call. encrypt_units runs
 *             all its units as one stream of 12-block batches: the tweak
 *             generator moves to the next unit's T (encrypted a unit
 *             ahead) after 256 tweaks, so batches straddle units and
 *             nothing drains between them. encrypt_one of any length uses
 *             the same engine; the 0..11 blocks after the last full batch
 *             run as batches of 8, 4, 2, 1; ciphertext stealing is out of
 *             line and branch-free.
 * Tweaks:     T * alpha in 64-bit general registers (shift, shift-in of
 *             the carry, SAR/AND for the 0x87 fold: no branches), one
 *             batch ahead, into a stack buffer that the next batch reads.
 *             Integer ALUs and stores only: the vector pipes do nothing
 *             but AES and the tweak XORs, and no xmm register is needed.
 *             The classic xmm doubling (PSHUFD/PSRAD/PADDQ/PAND/PXOR)
 *             measured ~5% slower at 8 lanes and, lacking registers,
 *             0.65-0.75x at 12.
 *
 * Measured on Zen 5 against OpenSSL 3.0 EVP aes-256-xts (AES-NI, 6 blocks
 * in flight): ~1.2x at 4 KiB, ~1.1x from 64 KiB up (both near the AESENC
 * ceiling there), ~1.5x at 512 bytes.
 *
 * Nothing here branches on or indexes memory by secret data. The tweak
 * buffer is wiped before returning; round keys are only ever read from
 * ctx (see aes_enc1()).
 */
#include "xts.h"

#include <immintrin.h>
#include <string.h>

#include "aes_x86.h"
#include "cpu.h"

#define TARGET __attribute__((target("aes,sse4.1")))
#define INLINE TARGET static inline __attribute__((always_inline))

#define LANES 12 /* xts_batch() has 12 lane variables */

INLINE __m128i loadu(const void *p)
{
	return _mm_loadu_si128((const __m128i *)p);
}

INLINE uint64_t lo64(__m128i x)
{
	return (uint64_t)_mm_cvtsi128_si64(x);
}

INLINE uint64_t hi64(__m128i x)
{
	return (uint64_t)_mm_extract_epi64(x, 1);
}

/* Round keys: aes_x86_setkey() stores them 16-byte aligned. */
static inline const __m128i *ek1(const struct xts_ctx *ctx)
{
	return (const __m128i *)((const struct aes_x86_keys *)ctx->state)->ek1;
}

static inline const __m128i *dk1(const struct xts_ctx *ctx)
{
	return (const __m128i *)((const struct aes_x86_keys *)ctx->state)->dk1;
}

static inline const __m128i *ek2(const struct xts_ctx *ctx)
{
	return (const __m128i *)((const struct aes_x86_keys *)ctx->state)->ek2;
}

/*
 * T * alpha in GF(2^128): shift the 128-bit little-endian value left by
 * one. paddq shifts each 64-bit half; the bits that fall out of bit 63
 * and bit 127 are spread to whole dwords by pshufd + psrad and masked to
 * 1 (into bit 64) and 0x87 (the reduction of x^128). No branches.
 */
INLINE __m128i mul_alpha(__m128i t)
{
	const __m128i poly = _mm_set_epi32(0, 1, 0, 0x87);
	__m128i c = _mm_shuffle_epi32(t, 0x13); /* dword 3 -> 0, 1 -> 2 */

	c = _mm_srai_epi32(c, 31);
	c = _mm_and_si128(c, poly);
	return _mm_xor_si128(_mm_add_epi64(t, t), c);
}

/*
 * One block (tweaks, ciphertext stealing). The empty asm hides where @rk
 * points, so the compiler cannot keep round keys in registers from one
 * call to the next: clang did, ran out of registers and spilled a Key2
 * round key to the stack. Each call reads the keys from ctx instead.
 */
INLINE __m128i aes_enc1(const __m128i *rk, __m128i x)
{
	__asm__ volatile("" : "+r"(rk));
	x = _mm_xor_si128(x, rk[0]);
	for (int r = 1; r < 14; r++)
		x = _mm_aesenc_si128(x, rk[r]);
	return _mm_aesenclast_si128(x, rk[14]);
}

INLINE __m128i aes_dec1(const __m128i *rk, __m128i x)
{
	__asm__ volatile("" : "+r"(rk));
	x = _mm_xor_si128(x, rk[0]);
	for (int r = 1; r < 14; r++)
		x = _mm_aesdec_si128(x, rk[r]);
	return _mm_aesdeclast_si128(x, rk[14]);
}

/*
 * xts_batch() - @n blocks (a compile-time constant) at once, with the
 * tweaks @tw[2 i], @tw[2 i + 1] (low, high 64 bits of block i's tweak).
 *
 * Whitening folds the tweak and round key 0 into the input, the 13 middle
 * rounds load each round key once for all n blocks, and the output is
 * AESENCLAST/AESDECLAST xor the tweak, read again from memory (a memory
 * operand costs no register: all 16 are busy with 12 states and a key).
 */
INLINE void xts_batch(const __m128i *rk, const uint64_t *tw, uint8_t *dst,
		      const uint8_t *src, const int n, const int enc)
{
	__m128i s0, s1, s2, s3, s4, s5, s6, s7, s8, s9, s10, s11, k;

	/*
	 * Named variables and lane macros, not an array and a loop: then no
	 * compiler can leave the states in memory. Lanes i >= n compile away.
	 */
#define X12(m) m(0) m(1) m(2) m(3) m(4) m(5) m(6) m(7) m(8) m(9) m(10) m(11)
#define TW(i) _mm_load_si128((const __m128i *)&tw[2 * (i)])
#define WHITEN(i) \
	if (i < n) \
		s##i = _mm_xor_si128(_mm_xor_si128(loadu(src + 16 * i), \
						   TW(i)), k);
#define ROUND(i) \
	if (i < n) \
		s##i = enc ? _mm_aesenc_si128(s##i, k) : \
			     _mm_aesdec_si128(s##i, k);
#define FINAL(i) \
	if (i < n) \
		_mm_storeu_si128((__m128i *)(dst + 16 * i), _mm_xor_si128( \
			enc ? _mm_aesenclast_si128(s##i, k) : \
			      _mm_aesdeclast_si128(s##i, k), TW(i)));

	k = rk[0];
	X12(WHITEN)
	_Pragma("GCC unroll 13") for (int r = 1; r < 14; r++) {
		k = rk[r];
		X12(ROUND)
	}
	/*
	 * Read the tweaks again from memory rather than let the compiler keep
	 * them in registers from the whitening: in the narrow tail batches it
	 * would, and then spill AES states to the stack to make room.
	 */
	__asm__("" : "+r"(tw));
	k = rk[14];
	X12(FINAL)
#undef X12
#undef TW
#undef WHITEN
#undef ROUND
#undef FINAL
}

/*
 * gen_tweaks() - store @n consecutive tweaks from (@lo, @hi) at @tw and
 * advance. T * alpha on 64-bit halves: the carry out of the high half
 * selects 0x87 through an arithmetic shift (no branch), the carry out of
 * the low half moves to the high one. Integer ALUs and stores only: the
 * vector pipes stay free for AESENC.
 */
INLINE void gen_tweaks(uint64_t *tw, const int n, uint64_t *lo, uint64_t *hi)
{
	uint64_t l = *lo, h = *hi;

	_Pragma("GCC unroll 16") for (int i = 0; i < n; i++) {
		uint64_t c = (uint64_t)((int64_t)h >> 63) & 0x87;

		tw[2 * i] = l;
		tw[2 * i + 1] = h;
		h = (h << 1) | (l >> 63);
		l = (l << 1) ^ c;
	}
	*lo = l;
	*hi = h;
}

/* T = AES-Enc_Key2(id xor LE64(unit)): the initial tweak of a unit */
INLINE __m128i unit_tweak(const struct xts_ctx *ctx,
			  const uint8_t id[XTS_ID_SIZE], uint64_t unit)
{
	__m128i t = _mm_cvtsi64_si128((long long)unit);

	return aes_enc1(ek2(ctx), _mm_xor_si128(loadu(id), t));
}

#define UNIT_BLOCKS (XTSFS_UNIT_SIZE / 16)

/*
 * xts_stream() - @n full blocks from @src to @dst, the first with tweak
 * @t; returns the tweak of the block after the last. @units and @enc are
 * compile-time constants. With @units, @t is the T of unit @unit of file
 * @id and @more units follow it in the buffer.
 *
 * One stream engine serves both entry points. For encrypt_one (@units
 * false) the tweaks just run on. For encrypt_units the blocks of all the
 * units are one stream too: the tweak generator, which runs a batch
 * ahead, switches to the next unit's T after 256 tweaks, so a batch can
 * straddle two units and nothing drains between units (256 = 21 * 12 + 4
 * would otherwise leave a latency-bound 4-block batch per unit). The
 * next unit's T is encrypted a whole unit before it is needed.
 *
 * The tweaks are stored as two 64-bit halves and loaded as one 128-bit
 * value, which cannot be store-forwarded: a batch ahead, the stores have
 * long retired when the loads run (the first batch pays a short stall
 * once per call; measured cheaper than making it in xmm registers).
 * What is left after the 12-block batches (0..11 blocks; 0, 4 or 8 for
 * whole units) runs as batches of 8, 4, 2 and 1 with tweaks already made.
 */
INLINE __m128i xts_stream(const struct xts_ctx *ctx, const __m128i *rk,
			  __m128i t, uint8_t *dst, const uint8_t *src,
			  size_t n, const uint8_t *id, uint64_t unit,
			  size_t more, const int units, const int enc)
{
	struct {
		_Alignas(16) uint64_t tw[2][2 * LANES]; /* this batch, next */
		__m128i next_t; /* units: T of the unit after the current one */
	} sc;
	uint64_t *cur = sc.tw[0], *nxt = sc.tw[1], *tmp, lo, hi;
	size_t left = UNIT_BLOCKS - LANES; /* tweaks still in this unit */

	if (units && more)
		sc.next_t = unit_tweak(ctx, id, unit + 1);
	lo = lo64(t);
	hi = hi64(t);
	gen_tweaks(cur, LANES, &lo, &hi);
	for (; n >= LANES; n -= LANES) {
		if (!units || __builtin_expect(left >= LANES, 1)) {
			gen_tweaks(nxt, LANES, &lo, &hi);
			left -= LANES;
		} else {
			/* unit boundary inside this batch: once per unit */
			size_t i = 0;

			for (; i < left; i++)
				gen_tweaks(nxt + 2 * i, 1, &lo, &hi);
			if (more) { /* else: past the end, never used */
				lo = lo64(sc.next_t);
				hi = hi64(sc.next_t);
				unit++;
				if (--more)
					sc.next_t = unit_tweak(ctx, id,
							       unit + 1);
			}
			for (; i < LANES; i++)
				gen_tweaks(nxt + 2 * i, 1, &lo, &hi);
			left = UNIT_BLOCKS - (LANES - left);
		}
		xts_batch(rk, cur, dst, src, LANES, enc);
		tmp = cur;
		cur = nxt;
		nxt = tmp;
		src += 16 * LANES;
		dst += 16 * LANES;
	}
#define TAIL(m) \
	if (n & m) { \
		xts_batch(rk, cur, dst, src, m, enc); \
		cur += 2 * m; \
		src += 16 * m; \
		dst += 16 * m; \
	}
	TAIL(8) TAIL(4) TAIL(2) TAIL(1)
#undef TAIL
	/* the next tweak stays in GPRs across the wipe, not in a spill slot */
	lo = cur[0];
	hi = cur[1];
	__asm__("" : "+r"(lo), "+r"(hi));
	explicit_bzero(&sc, sizeof(sc));
	return _mm_set_epi64x((long long)hi, (long long)lo);
}

/*
 * Ciphertext stealing (IEEE 1619-2018 5.3.2, 5.4.2) for the last full
 * block at @src/@dst, tweak @t, followed by @r (1..15) more bytes.
 *
 * No byte loops, no memcpy, nothing on the stack: the r-byte tail is read
 * as the 16 bytes ending at the end of the buffer (src + r, overlapping
 * the full block, so never out of bounds) and moved into place with
 * PSHUFB; the output tail is written the same way, as 16 bytes ending at
 * the end of dst whose first 16 - r bytes the final full-block store then
 * overwrites. All loads come before all stores, so in place works. The
 * PSHUFB controls come from one table indexed by r, which is public.
 */
static const uint8_t cts_table[48] __attribute__((aligned(16))) = {
	0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
	0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
	0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
	0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
	0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
};

INLINE void cts(const __m128i *rk, __m128i t, uint8_t *dst, const uint8_t *src,
		size_t r, const int enc)
{
	/* x[j] = x[j + 16 - r], zero for j >= r; its top bits: j >= r */
	const __m128i down = loadu(&cts_table[32 - r]);
	/* x[i] = x[i - (16 - r)], zero for i < 16 - r */
	const __m128i up = loadu(&cts_table[r]);
	__m128i t2 = mul_alpha(t), full, tail, x;

	full = loadu(src);
	tail = _mm_shuffle_epi8(loadu(src + r), down);
	if (!enc) { /* decrypt: the full block was made with T_m */
		x = t;
		t = t2;
		t2 = x;
	}
	/*
	 * enc: CC = E(P_{m-1}, T_{m-1}); C_m = CC[0..r);
	 *      C_{m-1} = E(P_m || CC[r..16), T_m).
	 * dec: PP = D(C_{m-1}, T_m); P_m = PP[0..r);
	 *      P_{m-1} = D(C_m || PP[r..16), T_{m-1}).
	 */
	x = _mm_xor_si128(full, t);
	x = enc ? aes_enc1(rk, x) : aes_dec1(rk, x);
	x = _mm_xor_si128(x, t);
	_mm_storeu_si128((__m128i *)(dst + r), _mm_shuffle_epi8(x, up));
	x = _mm_blendv_epi8(tail, x, down);
	x = _mm_xor_si128(x, t2);
	x = enc ? aes_enc1(rk, x) : aes_dec1(rk, x);
	_mm_storeu_si128((__m128i *)dst, _mm_xor_si128(x, t2));
}

TARGET __attribute__((noinline)) static void
cts_encrypt(const __m128i *rk, __m128i t, uint8_t *dst, const uint8_t *src,
	    size_t r)
{
	cts(rk, t, dst, src, r, 1);
}

TARGET __attribute__((noinline)) static void
cts_decrypt(const __m128i *rk, __m128i t, uint8_t *dst, const uint8_t *src,
	    size_t r)
{
	cts(rk, t, dst, src, r, 0);
}

TARGET static void aesni_encrypt_units(const struct xts_ctx *ctx, uint8_t *dst,
				       const uint8_t *src, size_t nunits,
				       const uint8_t id[XTS_ID_SIZE],
				       uint64_t first_unit)
{
	xts_stream(ctx, ek1(ctx), unit_tweak(ctx, id, first_unit), dst, src,
		   nunits * UNIT_BLOCKS, id, first_unit, nunits - 1, 1, 1);
}

TARGET static void aesni_decrypt_units(const struct xts_ctx *ctx, uint8_t *dst,
				       const uint8_t *src, size_t nunits,
				       const uint8_t id[XTS_ID_SIZE],
				       uint64_t first_unit)
{
	xts_stream(ctx, dk1(ctx), unit_tweak(ctx, id, first_unit), dst, src,
		   nunits * UNIT_BLOCKS, id, first_unit, nunits - 1, 1, 0);
}

/* One data unit of any length (>= 16) under a raw tweak input. */
INLINE void xts_one(const struct xts_ctx *ctx, const __m128i *rk,
		    uint8_t *dst, const uint8_t *src, size_t len,
		    const uint8_t tweak_in[XTS_BLOCK_SIZE], const int enc)
{
	size_t r = len % 16, n = len / 16 - (r != 0);
	__m128i t = aes_enc1(ek2(ctx), loadu(tweak_in));

	t = xts_stream(ctx, rk, t, dst, src, n, NULL, 0, 0, 0, enc);
	if (r && enc)
		cts_encrypt(rk, t, dst + 16 * n, src + 16 * n, r);
	else if (r)
		cts_decrypt(rk, t, dst + 16 * n, src + 16 * n, r);
}

TARGET static void aesni_encrypt_one(const struct xts_ctx *ctx, uint8_t *dst,
				     const uint8_t *src, size_t len,
				     const uint8_t tweak_in[XTS_BLOCK_SIZE])
{
	xts_one(ctx, ek1(ctx), dst, src, len, tweak_in, 1);
}

TARGET static void aesni_decrypt_one(const struct xts_ctx *ctx, uint8_t *dst,
				     const uint8_t *src, size_t len,
				     const uint8_t tweak_in[XTS_BLOCK_SIZE])
{
	xts_one(ctx, dk1(ctx), dst, src, len, tweak_in, 0);
}

static bool aesni_probe(void)
{
	return cpu_features()->aesni;
}

const struct xts_backend xts_backend_aesni = {
	.name = "aesni",
	.requires = "AES-NI and SSE4.1",
	.probe = aesni_probe,
	.setkey = aes_x86_setkey,
	.encrypt_units = aesni_encrypt_units,
	.decrypt_units = aesni_decrypt_units,
	.encrypt_one = aesni_encrypt_one,
	.decrypt_one = aesni_decrypt_one,
};
