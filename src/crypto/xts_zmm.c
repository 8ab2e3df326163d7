/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xts_zmm.c - the "zmm" core: XTS-AES-256 (IEEE Std 1619-2018) with
 * VAES and VPCLMULQDQ on 512-bit vectors.
 *
 * ISA        VAES + VPCLMULQDQ on zmm registers, AVX-512 F/VL/BW (EVEX:
 *            32 vector registers, opmasks, byte-masked loads and stores),
 *            plus AES-NI for the one-block xmm paths. Every function
 *            carries its own target attribute; the build uses no -m
 *            flags, and the dispatcher calls the core only when
 *            zmm_probe() passed (CPUID leaf 7 and XGETBV: the OS saves
 *            the opmask and all 32 zmm registers, see cpu.h).
 * Width      four AES blocks per zmm register (one per 128-bit lane).
 * In flight  8 zmm = 32 blocks per main-loop iteration (ZMM_NVEC). VAES
 *            on zmm has a latency of 4 cycles and a throughput of 2 per
 *            cycle on Zen 5 (full 512-bit datapath; measured), so 8
 *            independent chains are the minimum that keeps both AES
 *            units busy: with 4 zmm (16 blocks, as in Linux's
 *            aes-xts-avx) the loop measured ~10% slower, with 16 zmm (64
 *            blocks, whose last-round keys no longer fit in registers)
 *            10-18% slower (doc/PERFORMANCE.md). The 32 registers of
 *            AVX-512 hold the 8 states, their 8 last-round keys, the
 *            round key and temporaries without spilling.
 * Targets    AMD Zen 5 (measured: ~1.8x the vaes core at 4 KiB) and Zen 4
 *            (512-bit ops split in two 256-bit halves: not measured here,
 *            fewer instructions than ymm for the same work); Intel
 *            Sapphire Rapids and later, Rocket Lake. On Intel CPUs that
 *            lower their clock for 512-bit vectors (Skylake-X, Ice Lake,
 *            Tiger Lake: the list Linux keeps as X86_FEATURE_PREFER_YMM)
 *            the core still runs when forced, but "auto" takes "vaes".
 * Tuned for  full 4096-byte data units (256 blocks = 8 iterations, no
 *            tail) and encrypt_units() streams of back-to-back units.
 *            Other lengths take out-of-line paths that are short, not
 *            fast: the last < 32 full blocks run once more through the
 *            same loop body with byte-masked loads and stores (masked-off
 *            bytes are neither read nor written, so nothing beyond the
 *            buffer is touched and no bounce buffer is needed), and
 *            ciphertext stealing is two xmm AES-NI blocks with a masked
 *            load, blend and store for the partial block.
 *
 * Tweaks. As in xts_vaes.c: with the tweak as a 128-bit little-endian
 * integer, T * x^k for k <= 120 is a left shift by k bits plus the k bits
 * c(x) shifted out of the top, folded back as c(x) * x^128 = c(x) * 0x87
 * (x^128 = x^7 + x^2 + x + 1 modulo P(x) = x^128 + x^7 + x^2 + x + 1),
 * which is one carry-less multiply (VPCLMULQDQ) and needs no second
 * reduction.
 *
 * Vector i of an iteration holds T[j+4i .. j+4i+3] in its lanes 0..3. The
 * next iteration needs every lane times x^32: a byte shift left by 4
 * (VPSLLDQ), a byte shift right by 12 that brings the 32 carried-out bits
 * down (VPSRLDQ), one VPCLMULQDQ of those by 0x87 and an XOR, for all four
 * lanes of a vector at once and all 8 vectors independently: no serial
 * chain of doublings. The 8 updates are spread over AES rounds 1..8, as in
 * the vaes core, so that the out-of-order core hides them between the
 * VAES instructions (all 8 after the last round measured ~10% slower).
 * At the start of a unit, T = Enc_Key2(tweak input) is broadcast to the
 * four lanes, lane l is multiplied by x^l (variable 64-bit shifts,
 * VPSLLVQ/VPSRLVQ), and vectors 1..7 are 7 independent products of
 * vector 0 by x^4i.
 *
 * Units. encrypt_units() runs all units through one loop, exactly as the
 * vaes core does: the next unit's T is encrypted before the current
 * unit's first iteration, its 32 starting tweaks are built after it, and
 * the unit's last iteration swaps them in.
 *
 * Secrets. The Key1 round keys (dk1 is already in AESDEC order, see
 * aes_x86.h) stay in ctx, in locked memory: each round broadcasts its key
 * to the four lanes straight from there (VBROADCASTI32X4 from memory, a
 * load), so no copy of them is made. The "last round key ^ tweak" values
 * stay in registers. The current tweaks, the next unit's and (for
 * ciphertext stealing) the tweaks block by block live in a local work
 * area that is wiped with explicit_bzero() before returning, and so is
 * every vector register: VZEROALL clears zmm0-15 (and does the VZEROUPPER
 * the ABI wants before SSE code runs), but not zmm16-31, which EVEX code
 * may use, so those are cleared one by one. The opmask registers only
 * ever hold masks derived from lengths. The pointers to the work area and
 * to the round keys are hidden from the optimiser with empty asm
 * statements, as in xts_vaes.c, so that GCC keeps tweaks in that area and
 * loads keys where they are used instead of copying either into stack
 * spill slots that would not be wiped (checked with objdump: no vector
 * register is spilled; the one spill slot holds the unit number).
 * No branch, mask or address depends on key, tweak or data; they depend
 * only on lengths and unit counts.
 */
#include "xts.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "aes_x86.h"
#include "cpu.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include "xts_x86.h"

#define TARGET                                                              \
	__attribute__((target("avx512f,avx512vl,avx512bw,vaes,vpclmulqdq,"  \
			      "aes,sse4.1,pclmul")))
#define INLINE TARGET static inline __attribute__((always_inline))
#define UNROLL _Pragma("GCC unroll 16")

/* -DZMM_NVEC=4 builds the 16-block variant measured in PERFORMANCE.md */
#ifndef ZMM_NVEC
#define ZMM_NVEC 8              /* zmm registers per iteration: 4 or 8 */
#endif
#define NVEC ZMM_NVEC
#define NBLK (4 * NVEC)         /* blocks per iteration */
#define VEC_BYTES 64            /* bytes per zmm register */
#define STEP_BYTES (NBLK / 8)   /* x^NBLK is a shift by this many bytes */
#define UNIT_ITERS (XTSFS_UNIT_SIZE / XTS_BLOCK_SIZE / NBLK)

_Static_assert(NBLK % 8 == 0 && STEP_BYTES < 8,
	       "the per-iteration tweak step must be whole bytes, < 64 bits");
_Static_assert(4 * (NVEC - 1) + 7 <= 64,
	       "tweak_init's x^4i products must need no second reduction");
_Static_assert(XTSFS_UNIT_SIZE % (NBLK * XTS_BLOCK_SIZE) == 0 &&
		       UNIT_ITERS >= 2,
	       "a full unit must be at least two whole iterations");

/*
 * struct work - everything secret the hot loop keeps in memory. Only ever
 * reached through a laundered pointer (see work_init()). The round keys
 * are not in it: they are broadcast from ctx where they are used.
 */
struct work {
	__m512i tw[NVEC]; /* tweaks of the next NBLK blocks */
	__m512i nx[NVEC]; /* encrypt_units: first tweaks of the next unit */
	__m128i tt[NBLK + 1]; /* ciphertext stealing: the tweaks, one a block */
};

_Static_assert(offsetof(struct work, nx) == sizeof(((struct work *)0)->tw),
	       "work_wipe() wipes tw and nx as one range");

/*
 * work_init() - a pointer to the work area @wk that GCC cannot see through
 * (see xts_vaes.c: without it GCC splits the struct into variables and
 * spills them to stack slots that explicit_bzero() never reaches).
 */
INLINE struct work *work_init(struct work *wk)
{
	struct work *w = wk;

	__asm__("" : "+r"(w));
	return w;
}

/*
 * zero_vregs() - clear every vector register: VZEROALL for zmm0-15 (all
 * 512 bits of them), and an EVEX XOR for each of zmm16-31, which VZEROALL
 * leaves alone (an EVEX write to xmmN clears bits 128-511 of zmmN too).
 */
INLINE void zero_vregs(void)
{
	_mm256_zeroall();
	__asm__ volatile(
		"vpxord %%xmm16, %%xmm16, %%xmm16\n\t"
		"vpxord %%xmm17, %%xmm17, %%xmm17\n\t"
		"vpxord %%xmm18, %%xmm18, %%xmm18\n\t"
		"vpxord %%xmm19, %%xmm19, %%xmm19\n\t"
		"vpxord %%xmm20, %%xmm20, %%xmm20\n\t"
		"vpxord %%xmm21, %%xmm21, %%xmm21\n\t"
		"vpxord %%xmm22, %%xmm22, %%xmm22\n\t"
		"vpxord %%xmm23, %%xmm23, %%xmm23\n\t"
		"vpxord %%xmm24, %%xmm24, %%xmm24\n\t"
		"vpxord %%xmm25, %%xmm25, %%xmm25\n\t"
		"vpxord %%xmm26, %%xmm26, %%xmm26\n\t"
		"vpxord %%xmm27, %%xmm27, %%xmm27\n\t"
		"vpxord %%xmm28, %%xmm28, %%xmm28\n\t"
		"vpxord %%xmm29, %%xmm29, %%xmm29\n\t"
		"vpxord %%xmm30, %%xmm30, %%xmm30\n\t"
		"vpxord %%xmm31, %%xmm31, %%xmm31\n\t"
		:
		:
		: "xmm16", "xmm17", "xmm18", "xmm19", "xmm20", "xmm21",
		  "xmm22", "xmm23", "xmm24", "xmm25", "xmm26", "xmm27",
		  "xmm28", "xmm29", "xmm30", "xmm31");
}

/*
 * work_wipe() - wipe the parts of the work area that were used (w->nx
 * only if @nx, w->tt only if @cts), and every vector register (the ABI
 * asks only for clean upper halves).
 */
INLINE void work_wipe(struct work *w, bool nx, bool cts)
{
	zero_vregs();
	xts_x86_wipe(w->tw, nx ? sizeof(w->tw) + sizeof(w->nx) : sizeof(w->tw));
	if (cts)
		xts_x86_wipe(w->tt, sizeof(w->tt));
}

/*
 * rkey() - round key @r of @rk (in ctx, 16-byte aligned) in all four
 * lanes: VBROADCASTI32X4 from memory, where it is used. Keeping the 15
 * broadcast keys in the stack work area instead cost a store each per
 * call and their wipe, ~12% of a 4 KiB call (doc/PERFORMANCE.md); 15
 * registers for them would leave too few for 8 states and 8 lk. The empty
 * volatile asm hides where the pointer points, so that GCC cannot hoist
 * the 15 loads to the loop head and spill them to the stack.
 */
INLINE __m512i rkey(const __m128i *rk, int r)
{
	const __m128i *p = rk + r;

	__asm__ volatile("" : "+r"(p));
	return _mm512_broadcast_i32x4(*p);
}

/*
 * mul_xkv() - each lane times x^k, k given per 64-bit element (the same
 * in both halves of a lane), 0 <= k <= 57: the 128-bit shift is built from
 * 64-bit variable shifts, and the k bits that leave the top (bits 64-k..63
 * of the high qword) are folded back as c * 0x87. VPSRLVQ by 64 gives 0,
 * so k = 0 passes the lane through.
 */
INLINE __m512i mul_xkv(__m512i t, __m512i k, __m512i poly)
{
	const __m512i kc = _mm512_sub_epi64(_mm512_set1_epi64(64), k);
	/* per lane (lo, hi) -> c = (hi >> 64-k, lo >> 64-k) */
	__m512i c = _mm512_srlv_epi64(
		_mm512_shuffle_epi32(t, (_MM_PERM_ENUM)0x4e), kc);
	/* low qword: (hi >> 64-k) * 0x87 (<= 64 bits); high qword 0 */
	__m512i r = _mm512_clmulepi64_epi128(c, poly, 0x00);

	/* high qword: the bits of lo that cross into hi */
	r = _mm512_mask_blend_epi64(0xaa, r, c);
	return _mm512_xor_si512(_mm512_sllv_epi64(t, k), r);
}

/* mul_step() - each lane times x^NBLK, the per-iteration step: byte shifts. */
INLINE __m512i mul_step(__m512i t, __m512i poly)
{
	/* the NBLK bits that fall out of the top, moved to the bottom */
	__m512i c = _mm512_bsrli_epi128(t, 16 - STEP_BYTES);

	return _mm512_xor_si512(_mm512_bslli_epi128(t, STEP_BYTES),
				_mm512_clmulepi64_epi128(c, poly, 0x00));
}

/* tweak_init() - lane l of tw[i] = T * x^(4i + l) for the first NBLK blocks. */
INLINE void tweak_init(__m512i tw[NVEC], __m128i t)
{
	const __m512i poly = _mm512_set1_epi64(0x87);
	const __m512i lane = _mm512_set_epi64(3, 3, 2, 2, 1, 1, 0, 0);
	__m512i p = mul_xkv(_mm512_broadcast_i32x4(t), lane, poly);

	tw[0] = p;
	UNROLL
	for (int i = 1; i < NVEC; i++)
		tw[i] = mul_xkv(p, _mm512_set1_epi64(4 * i), poly);
}

/*
 * tail_mask() - the bytes of vector @i that lie in a @len-byte tail: all
 * 64, some or none. Lengths are public; nothing here is secret.
 */
INLINE __mmask64 tail_mask(size_t len, int i)
{
	size_t off = (size_t)VEC_BYTES * (size_t)i;
	size_t n = len > off ? len - off : 0;

	return n >= VEC_BYTES ? ~(__mmask64)0 : ((__mmask64)1 << n) - 1;
}

/*
 * crypt_blocks() - XTS on NBLK blocks with the tweaks in w->tw and the
 * round keys @rk (AESENC or AESDEC order, see aes_x86.h), or, when
 * @tail is not 0, on the first @tail bytes (whole blocks) only, with
 * byte-masked loads and stores: masked-off bytes are not read (no fault
 * past the end of the buffer) and not written, and the zero lanes they
 * leave are encrypted for nothing. tail is a constant 0 on the hot path,
 * so the masks vanish there.
 * C_j = AES(P_j ^ T_j) ^ T_j: the first XOR is merged with round key 0
 * (one VPTERNLOGQ), the second is folded into the last round (AESENCLAST
 * XORs its key last, so AESENCLAST(s, k14 ^ T) == AESENCLAST(s, k14) ^ T).
 * Those last keys lk[] stay in registers (8 states + 8 lk + round key
 * and temporaries fit in 32 zmm: objdump shows no spill).
 */
INLINE void crypt_blocks(struct work *w, const __m128i *rk, bool enc,
			 uint8_t *dst, const uint8_t *src,
			 enum next_tweaks next, size_t tail)
{
	const __m512i poly = _mm512_set1_epi64(0x87);
	__m512i k0, k14, s[NVEC], lk[NVEC];
	__mmask64 m[NVEC];

	/*
	 * Take the tweaks from w, not from registers GCC remembers from the
	 * previous iteration or tweak_init() (see xts_vaes.c).
	 */
	__asm__ volatile("" : : : "memory");
	k0 = rkey(rk, 0);
	k14 = rkey(rk, 14);

	UNROLL
	for (int i = 0; i < NVEC; i++) {
		__m512i t = w->tw[i];
		__m512i x;

		if (tail) {
			m[i] = tail_mask(tail, i);
			/* no pointer past the buffer, even unused */
			x = _mm512_maskz_loadu_epi8(
				m[i], m[i] ? src + VEC_BYTES * i : src);
		} else {
			x = _mm512_loadu_si512(src + VEC_BYTES * i);
		}
		s[i] = _mm512_ternarylogic_epi64(x, t, k0, 0x96); /* x^t^k0 */
		lk[i] = _mm512_xor_si512(k14, t);
		if (next == TW_NEXT)
			w->tw[i] = w->nx[i];
	}
	UNROLL
	for (int r = 1; r < 14; r++) {
		__m512i k = rkey(rk, r);

		UNROLL
		for (int i = 0; i < NVEC; i++)
			s[i] = enc ? _mm512_aesenc_epi128(s[i], k)
				   : _mm512_aesdec_epi128(s[i], k);
		/* one tweak update per round: see "Tweaks" above */
		if (next == TW_STEP && r <= NVEC)
			w->tw[r - 1] = mul_step(w->tw[r - 1], poly);
	}
	UNROLL
	for (int i = 0; i < NVEC; i++) {
		s[i] = enc ? _mm512_aesenclast_epi128(s[i], lk[i])
			   : _mm512_aesdeclast_epi128(s[i], lk[i]);
		if (tail)
			_mm512_mask_storeu_epi8(
				m[i] ? dst + VEC_BYTES * i : dst, m[i], s[i]);
		else
			_mm512_storeu_si512(dst + VEC_BYTES * i, s[i]);
	}
}

/*
 * crypt_tail() - the last 1..NBLK-1 full blocks of a crypt_one(), out of
 * line because it is rare: the loop body once more, masked to @nb blocks.
 */
TARGET static __attribute__((noinline)) void
crypt_tail(struct work *w, const __m128i *rk, bool enc, uint8_t *dst,
	   const uint8_t *src, size_t nb)
{
	size_t len = nb * XTS_BLOCK_SIZE;

	if (enc)
		crypt_blocks(w, rk, true, dst, src, TW_KEEP, len);
	else
		crypt_blocks(w, rk, false, dst, src, TW_KEEP, len);
}

/*
 * cts() - ciphertext stealing (IEEE 1619-2018 5.3.2 / 5.4.2) for the last
 * full block m-1 at @dst/@src and the @rem-byte partial block m after it,
 * 1 <= rem <= 15. w->tw holds the tweaks of the last iteration or tail,
 * whose block @j is block m-1 when decrypting (it was held back) and
 * block m when encrypting (block m-1 is done: its output CC is at @dst).
 * The partial block is moved with byte masks (its rem bytes only, never
 * past the buffer). Every source byte is read before the in-place write
 * that could overwrite it.
 */
TARGET static __attribute__((noinline)) void
cts(struct work *w, const struct aes_x86_keys *kx, bool enc, uint8_t *dst,
    const uint8_t *src, size_t rem, size_t j)
{
	const __mmask16 m = (__mmask16)((1u << rem) - 1);
	__m128i a, b, t;

	UNROLL
	for (int i = 0; i < NVEC; i++)
		_mm512_storeu_si512(&w->tt[4 * i], w->tw[i]);
	w->tt[NBLK] = xts_x86_mul_x(w->tt[NBLK - 1]);
	if (enc) {
		/*
		 * CC = C_m-1 so far; PP = P_m || CC[rem..15];
		 * C_m = CC[0..rem-1]; C_m-1 = Enc(PP) with T_m
		 */
		a = _mm_loadu_si128((const __m128i *)dst);
		b = _mm_maskz_loadu_epi8(m, src + 16);
		b = _mm_mask_blend_epi8(m, a, b);
		_mm_mask_storeu_epi8(dst + 16, m, a);
		t = w->tt[j];
		b = xts_x86_enc1(_mm_xor_si128(b, t), kx->ek1);
		b = _mm_xor_si128(b, t);
		_mm_storeu_si128((__m128i *)dst, b);
	} else {
		/*
		 * PP = Dec(C_m-1) with T_m; P_m = PP[0..rem-1];
		 * P_m-1 = Dec(C_m || PP[rem..15]) with T_m-1
		 */
		a = _mm_loadu_si128((const __m128i *)src);
		b = _mm_maskz_loadu_epi8(m, src + 16);
		t = w->tt[j + 1];
		a = xts_x86_dec1(_mm_xor_si128(a, t), kx->dk1);
		a = _mm_xor_si128(a, t);
		b = _mm_mask_blend_epi8(m, a, b);
		_mm_mask_storeu_epi8(dst + 16, m, a);
		t = w->tt[j];
		b = xts_x86_dec1(_mm_xor_si128(b, t), kx->dk1);
		b = _mm_xor_si128(b, t);
		_mm_storeu_si128((__m128i *)dst, b);
	}
}

INLINE void crypt_one(const struct xts_ctx *ctx, bool enc, uint8_t *dst,
		      const uint8_t *src, size_t len,
		      const uint8_t tweak_in[XTS_BLOCK_SIZE])
{
	const struct aes_x86_keys *kx = (const struct aes_x86_keys *)ctx->state;
	const __m128i *rk = (const __m128i *)(enc ? kx->ek1 : kx->dk1);
	struct work wk, *w = work_init(&wk);
	size_t rem = len % XTS_BLOCK_SIZE;
	/* decryption with stealing must hold back the last full block */
	size_t nb = len / XTS_BLOCK_SIZE - (!enc && rem);

	tweak_init(w->tw,
		   xts_x86_enc1(_mm_loadu_si128((const __m128i *)tweak_in),
				kx->ek2));
	for (; nb >= NBLK; nb -= NBLK) {
		crypt_blocks(w, rk, enc, dst, src, TW_STEP, 0);
		src += NBLK * XTS_BLOCK_SIZE;
		dst += NBLK * XTS_BLOCK_SIZE;
	}
	if (nb) {
		/* the tail leaves w->tw alone: block nb's tweak is lane nb */
		crypt_tail(w, rk, enc, dst, src, nb);
		src += nb * XTS_BLOCK_SIZE;
		dst += nb * XTS_BLOCK_SIZE;
	}
	if (rem) {
		if (enc)
			cts(w, kx, true, dst - 16, src - 16, rem, nb);
		else
			cts(w, kx, false, dst, src, rem, nb);
	}
	work_wipe(w, false, rem);
}

INLINE void crypt_units(const struct xts_ctx *ctx, bool enc, uint8_t *dst,
			const uint8_t *src, size_t nunits,
			const uint8_t id[XTS_ID_SIZE], uint64_t first_unit)
{
	const struct aes_x86_keys *kx = (const struct aes_x86_keys *)ctx->state;
	const __m128i *rk = (const __m128i *)(enc ? kx->ek1 : kx->dk1);
	const __m128i idv = _mm_loadu_si128((const __m128i *)id);
	struct work wk, *w = work_init(&wk);

	tweak_init(w->tw,
		   xts_x86_enc1(xts_x86_unit_tweak_in(idv, first_unit),
				kx->ek2));
	for (size_t u = 0; u < nunits; u++) {
		bool more = u + 1 < nunits;
		__m128i t = _mm_setzero_si128();

		/*
		 * Start the next unit's T here: its 14 dependent AES rounds
		 * overlap this unit's first iteration instead of stalling
		 * the pipeline between units.
		 */
		if (more)
			t = xts_x86_enc1(
				xts_x86_unit_tweak_in(idv, first_unit + u + 1),
				kx->ek2);
		crypt_blocks(w, rk, enc, dst, src, TW_STEP, 0);
		src += NBLK * XTS_BLOCK_SIZE;
		dst += NBLK * XTS_BLOCK_SIZE;
		if (more)
			tweak_init(w->nx, t);
		for (int it = 1; it < UNIT_ITERS - 1; it++) {
			crypt_blocks(w, rk, enc, dst, src, TW_STEP, 0);
			src += NBLK * XTS_BLOCK_SIZE;
			dst += NBLK * XTS_BLOCK_SIZE;
		}
		crypt_blocks(w, rk, enc, dst, src, more ? TW_NEXT : TW_KEEP, 0);
		src += NBLK * XTS_BLOCK_SIZE;
		dst += NBLK * XTS_BLOCK_SIZE;
	}
	work_wipe(w, nunits > 1, false);
}

TARGET static void zmm_encrypt_units(const struct xts_ctx *ctx, uint8_t *dst,
				     const uint8_t *src, size_t nunits,
				     const uint8_t id[XTS_ID_SIZE],
				     uint64_t first_unit)
{
	crypt_units(ctx, true, dst, src, nunits, id, first_unit);
}

TARGET static void zmm_decrypt_units(const struct xts_ctx *ctx, uint8_t *dst,
				     const uint8_t *src, size_t nunits,
				     const uint8_t id[XTS_ID_SIZE],
				     uint64_t first_unit)
{
	crypt_units(ctx, false, dst, src, nunits, id, first_unit);
}

TARGET static void zmm_encrypt_one(const struct xts_ctx *ctx, uint8_t *dst,
				   const uint8_t *src, size_t len,
				   const uint8_t tweak_in[XTS_BLOCK_SIZE])
{
	crypt_one(ctx, true, dst, src, len, tweak_in);
}

TARGET static void zmm_decrypt_one(const struct xts_ctx *ctx, uint8_t *dst,
				   const uint8_t *src, size_t len,
				   const uint8_t tweak_in[XTS_BLOCK_SIZE])
{
	crypt_one(ctx, false, dst, src, len, tweak_in);
}

/* cpu.h's avx512, vaes and vpclmul imply AVX2, AES-NI, PCLMUL, OS state. */
static bool zmm_probe(void)
{
	const struct cpu_features *f = cpu_features();

	return f->avx512 && f->vaes && f->vpclmul;
}

/* "auto" takes the core only where 512-bit vectors cost no clock speed. */
static bool zmm_preferred(void)
{
	return cpu_features()->zmm_fast;
}

const struct xts_backend xts_backend_zmm = {
	.name = "zmm",
	.requires = "AVX-512 F/VL/BW, VAES and VPCLMULQDQ (with OS support "
		    "for zmm state)",
	.probe = zmm_probe,
	.preferred = zmm_preferred,
	.setkey = aes_x86_setkey,
	.encrypt_units = zmm_encrypt_units,
	.decrypt_units = zmm_decrypt_units,
	.encrypt_one = zmm_encrypt_one,
	.decrypt_one = zmm_decrypt_one,
};

#else /* !__x86_64__ */

/*
 * Not x86-64: the table exists so that the core list is the same on every
 * build, but the probe fails and the dispatcher never calls the rest.
 */
static bool zmm_probe(void)
{
	return false;
}

const struct xts_backend xts_backend_zmm = {
	.name = "zmm",
	.requires = "AVX-512 F/VL/BW, VAES and VPCLMULQDQ (x86-64)",
	.probe = zmm_probe,
};

#endif /* __x86_64__ */
