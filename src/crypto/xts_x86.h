/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xts_x86.h - what the "vaes" and "zmm" cores share (xts_vaes.c,
 * xts_zmm.c): one-block helpers on xmm registers with AES-NI and SSE2
 * (the IEEE 1619 tweak doubling, one AES-256 block either way for the
 * tweak encryption and ciphertext stealing, a unit's tweak input), the
 * wipe of a work area, and what a loop body leaves in its tweaks.
 *
 * The helpers are static inline with their own target attribute, so they
 * inline into any function whose target includes "aes" (as both cores'
 * do) and the build still needs no -m flags. x86-64 only.
 */
#ifndef XTSFS_XTS_X86_H
#define XTSFS_XTS_X86_H

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define XTS_X86_INLINE                                                      \
	static inline __attribute__((always_inline, target("aes,sse4.1")))

/* T * x for one tweak: the doubling of IEEE 1619, on an xmm register. */
XTS_X86_INLINE __m128i xts_x86_mul_x(__m128i t)
{
	/*
	 * Shift each 32-bit word left by one; the top bit of word i - 1
	 * (a mask from SRAD, rotated up by PSHUFD) adds 1 to word i, and
	 * the top bit of word 3, x^128, wraps around as 0x87.
	 */
	const __m128i carry = _mm_set_epi32(1, 1, 1, 0x87);
	__m128i c = _mm_shuffle_epi32(_mm_srai_epi32(t, 31), 0x93);

	return _mm_xor_si128(_mm_slli_epi32(t, 1), _mm_and_si128(c, carry));
}

/* One block with AES-256 (rk: 15 round keys, 16-byte aligned). */
XTS_X86_INLINE __m128i xts_x86_enc1(__m128i x, const uint8_t rk[15][16])
{
	x = _mm_xor_si128(x, _mm_load_si128((const __m128i *)rk[0]));
	_Pragma("GCC unroll 16")
	for (int r = 1; r < 14; r++)
		x = _mm_aesenc_si128(x, _mm_load_si128((const __m128i *)rk[r]));
	return _mm_aesenclast_si128(x, _mm_load_si128((const __m128i *)rk[14]));
}

/* The inverse, with round keys in AESDEC order (aes_x86.h dk1). */
XTS_X86_INLINE __m128i xts_x86_dec1(__m128i x, const uint8_t rk[15][16])
{
	x = _mm_xor_si128(x, _mm_load_si128((const __m128i *)rk[0]));
	_Pragma("GCC unroll 16")
	for (int r = 1; r < 14; r++)
		x = _mm_aesdec_si128(x, _mm_load_si128((const __m128i *)rk[r]));
	return _mm_aesdeclast_si128(x, _mm_load_si128((const __m128i *)rk[14]));
}

/* The tweak input of a unit: xts_unit_tweak(), on x86's little-endian lanes. */
XTS_X86_INLINE __m128i xts_x86_unit_tweak_in(__m128i id, uint64_t unit)
{
	return _mm_xor_si128(id, _mm_cvtsi64_si128((long long)unit));
}

/*
 * xts_x86_wipe() - explicit_bzero() behind a call GCC does not inline:
 * with ASan's fake stacks, GCC 12 otherwise "proves" a path where the
 * work area is NULL and -Wnonnull stops the build.
 */
static __attribute__((noinline, unused)) void xts_x86_wipe(void *p,
							   size_t len)
{
	explicit_bzero(p, len);
}

/* What a core's loop body (crypt_blocks()) leaves in its tweaks. */
enum next_tweaks {
	TW_KEEP,  /* unchanged: the tail, whose caller still needs them */
	TW_STEP,  /* times x^NBLK: the next iteration of the same unit */
	TW_NEXT,  /* the next unit's first ones: its first iteration */
};

#endif /* XTSFS_XTS_X86_H */
