/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xts_vaes.c - the "vaes" core: XTS-AES-256 (IEEE Std 1619-2018) with
 * VAES and VPCLMULQDQ on 256-bit vectors.
 *
 * ISA        VAES + VPCLMULQDQ + AVX2 (VEX-encoded ymm only: no AVX-512,
 *            no zmm, no EVEX), plus AES-NI/SSE4.1/PCLMUL for the xmm
 *            paths. Every function carries its own target attribute; the
 *            build uses no -m flags, and the dispatcher calls the core
 *            only when vaes_probe() passed (CPUID + XGETBV, see cpu.h).
 * Width      two AES blocks per ymm register (one per 128-bit lane).
 * In flight  8 ymm = 16 blocks per main-loop iteration. VAES has a
 *            latency of about 4 cycles and a throughput of 2 per cycle on
 *            Zen 3/4/5 and recent Intel cores, so 8 independent chains
 *            are the minimum that keeps both AES units busy; with 4 the
 *            loop measured 10-15% slower. More than 8 does not fit: 8
 *            states plus round key, tweak and temporaries already fill the
 *            16 ymm registers AVX2 has.
 * Targets    AMD Zen 3, Zen 4, Zen 5; Intel Ice Lake, Tiger Lake, Alder
 *            Lake and later (also the AVX2-only VAES parts).
 * Tuned for  full 4096-byte data units (256 blocks = 16 iterations, no
 *            tail) and encrypt_units() streams of back-to-back units. On
 *            Zen 5 it runs at about 2x OpenSSL 3.0's AES-NI XTS (which
 *            interleaves 6 xmm blocks) at 4 KiB and above. Other lengths
 *            take out-of-line paths: the last < 16 full blocks go through a
 *            buffer and the same 16-block body, ciphertext stealing uses
 *            xmm AES-NI. They are correct, not fast.
 *
 * Tweaks. XTS multiplies the tweak by alpha (x in GF(2^128) modulo
 * P(x) = x^128 + x^7 + x^2 + x + 1) once per block. With the tweak as a
 * 128-bit little-endian integer, T * x is a left shift by one bit; the bit
 * shifted out of position 127 stands for x^128, which equals
 * x^7 + x^2 + x + 1 = 0x87 modulo P, so it is folded back by XORing 0x87
 * into byte 0. Multiplying by x^k for a small k works the same way: shift
 * left by k bits and fold the k bits c(x) that fell out back in as
 * c(x) * x^128 = c(x) * 0x87. That product is one carry-less multiply
 * (VPCLMULQDQ) and has at most k + 7 bits, so for k <= 120 it never needs
 * a second reduction.
 *
 * Vector i of an iteration holds (T[j+2i], T[j+2i+1]) in its (low, high)
 * lane. The next iteration needs every lane multiplied by alpha^16,
 * because each lane advances 16 blocks: a byte shift (VPSLLDQ by 2), a
 * byte shift that brings the 16 carried-out bits down (VPSRLDQ by 14) and
 * one VPCLMULQDQ of those by 0x87. Both lanes and all 8 vectors step
 * independently, so there is no serial chain of doublings. The 8 updates
 * are spread over AES rounds 1..8 (vector i after round i + 1) rather than
 * issued in one burst: the shuffles and VPCLMULQDQ compete with VAES for
 * execution ports, and spreading them let the out-of-order core hide them
 * (5% faster on Zen 5). At the start of a unit, T = Enc_Key2(tweak input)
 * and T * x make vector 0, and vectors 1..7 are 7 independent products of
 * it by alpha^2i.
 *
 * Units. encrypt_units() runs all units through one loop. The next unit's
 * T is encrypted before the current unit's first iteration (its 14
 * dependent rounds overlap that iteration instead of stalling the
 * pipeline between units), its 16 starting tweaks are built after it, and
 * the unit's last iteration swaps them in.
 *
 * Secrets. The Key1 round keys (dk1 is already in AESDEC order, see
 * aes_x86.h) are broadcast once per call into a local, 32-byte aligned
 * work area; memory operands cost nothing in the AES rounds. The current
 * tweaks and the "last round key ^ tweak" values live there too. The area
 * is wiped with explicit_bzero() and every ymm register is cleared with
 * VZEROALL before returning (which also does the VZEROUPPER the ABI wants
 * before SSE code runs). The pointer to the work area is hidden from the
 * optimiser with empty asm statements so that GCC keeps keys and tweaks in
 * that area instead of copying them into stack spill slots that would not
 * be wiped (checked with objdump: no key, tweak or data is spilled).
 * No branch or address depends on key, tweak or data; branches depend only
 * on lengths and unit counts.
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

#define TARGET __attribute__((target("avx2,vaes,vpclmulqdq,aes,sse4.1,pclmul")))
#define INLINE TARGET static inline __attribute__((always_inline))
#define UNROLL _Pragma("GCC unroll 16")

#define NVEC 8                  /* ymm registers per iteration */
#define NBLK (2 * NVEC)         /* blocks per iteration */
#define STEP_BYTES (NBLK / 8)   /* x^NBLK is a shift by this many bytes */
#define UNIT_ITERS (XTSFS_UNIT_SIZE / XTS_BLOCK_SIZE / NBLK)

_Static_assert(NBLK % 8 == 0 && STEP_BYTES < 8,
	       "the per-iteration tweak step must be whole bytes, < 64 bits");
_Static_assert(XTSFS_UNIT_SIZE % (NBLK * XTS_BLOCK_SIZE) == 0,
	       "a full unit must be whole iterations");

/*
 * struct work - everything secret the hot loop keeps in memory. Only ever
 * reached through a laundered pointer (see work_init()).
 */
struct work {
	__m256i rk[15];   /* Key1 round keys, AESENC or AESDEC order, 2 lanes */
	__m256i tw[NVEC]; /* tweaks of the next NBLK blocks */
	__m256i lk[NVEC]; /* last round key ^ tweak, for AESENC/DECLAST */
	__m256i nx[NVEC]; /* encrypt_units: first tweaks of the next unit */
	struct {          /* only for lengths that are not whole iterations */
		_Alignas(32) uint8_t buf[NBLK * XTS_BLOCK_SIZE]; /* the tail */
		__m128i tt[NBLK + 1];            /* its tweaks, one per block */
		_Alignas(16) uint8_t cts[2][16]; /* ciphertext stealing */
	} odd;
};

/*
 * work_init() - broadcast @rk into a fresh work area and return a pointer
 * to it that GCC cannot see through. Without the empty asm, GCC splits the
 * struct into separate variables (SRA) and spills round keys to stack slots
 * that explicit_bzero() never reaches.
 */
INLINE struct work *work_init(struct work *wk, const uint8_t rk[15][16])
{
	struct work *w = wk;

	__asm__("" : "+r"(w));
	UNROLL
	for (int r = 0; r < 15; r++)
		w->rk[r] = _mm256_broadcastsi128_si256(
			_mm_load_si128((const __m128i *)rk[r]));
	return w;
}

/*
 * work_wipe() - wipe the parts of the work area that were used, and every
 * vector register (the ABI asks only for clean upper halves).
 */
INLINE void work_wipe(struct work *w, bool units, bool odd)
{
	_mm256_zeroall();
	xts_x86_wipe(w, units ? offsetof(struct work, odd)
			  : offsetof(struct work, nx));
	if (odd)
		xts_x86_wipe(&w->odd, sizeof(w->odd));
}

/*
 * hidden() - load *@p where it is used. The empty volatile asm hides where
 * p points, so GCC can neither hoist the loads of all 15 round keys to the
 * loop head (and spill them) nor keep a value it stored in w in a register
 * and spill that instead of reloading it: both would leave key material in
 * stack slots that work_wipe() does not reach.
 */
INLINE __m256i hidden(const __m256i *p)
{
	__asm__ volatile("" : "+r"(p));
	return *p;
}

/*
 * mul_xk() - each lane times x^k, 1 <= k <= 63, any bit count: the 128-bit
 * shift is built from 64-bit shifts, and the k bits that leave the top
 * (bits 64-k..63 of the high qword) are folded back as c * 0x87.
 */
INLINE __m256i mul_xk(__m256i t, int k, __m256i poly)
{
	/* per lane (lo, hi) -> c = (hi >> 64-k, lo >> 64-k) */
	__m256i c = _mm256_srli_epi64(_mm256_shuffle_epi32(t, 0x4e), 64 - k);
	/* low qword: (hi >> 64-k) * 0x87; high qword 0 */
	__m256i r = _mm256_clmulepi64_epi128(c, poly, 0x00);

	/* high qword: the bits of lo that cross into hi */
	r = _mm256_blend_epi32(r, c, 0xcc);
	return _mm256_xor_si256(_mm256_slli_epi64(t, k), r);
}

/* mul_step() - each lane times x^NBLK, the per-iteration step: byte shifts. */
INLINE __m256i mul_step(__m256i t, __m256i poly)
{
	/* the NBLK bits that fall out of the top, moved to the bottom */
	__m256i c = _mm256_bsrli_epi128(t, 16 - STEP_BYTES);

	return _mm256_xor_si256(_mm256_bslli_epi128(t, STEP_BYTES),
				_mm256_clmulepi64_epi128(c, poly, 0x00));
}

/* tweak_init() - tw[i] = (T * x^2i, T * x^2i+1) for the first NBLK blocks. */
INLINE void tweak_init(__m256i tw[NVEC], __m128i t)
{
	const __m256i poly = _mm256_set1_epi64x(0x87);
	__m256i p = _mm256_inserti128_si256(_mm256_castsi128_si256(t),
					    xts_x86_mul_x(t), 1);

	tw[0] = p;
	UNROLL
	for (int i = 1; i < NVEC; i++)
		tw[i] = mul_xk(p, 2 * i, poly);
}

/*
 * crypt_blocks() - XTS on NBLK blocks with the tweaks in w->tw.
 * C_j = AES(P_j ^ T_j) ^ T_j: the first XOR is merged with round key 0,
 * the second is folded into the last round (AESENCLAST XORs its key last,
 * so AESENCLAST(s, k14 ^ T) == AESENCLAST(s, k14) ^ T).
 */
INLINE void crypt_blocks(struct work *w, bool enc, uint8_t *dst,
			 const uint8_t *src, enum next_tweaks next)
{
	const __m256i poly = _mm256_set1_epi64x(0x87);
	__m256i k0, k14, s[NVEC];

	/*
	 * Take the tweaks from w, not from registers GCC remembers from the
	 * previous iteration or tweak_init(): with 8 states live those would
	 * be spilled to the stack, outside the area that is wiped.
	 */
	__asm__ volatile("" : : : "memory");
	k0 = hidden(&w->rk[0]);
	k14 = hidden(&w->rk[14]);

	UNROLL
	for (int i = 0; i < NVEC; i++) {
		__m256i t = w->tw[i];
		__m256i x = _mm256_loadu_si256((const __m256i *)(src + 32 * i));

		s[i] = _mm256_xor_si256(_mm256_xor_si256(x, t), k0);
		w->lk[i] = _mm256_xor_si256(k14, t);
		if (next == TW_NEXT)
			w->tw[i] = w->nx[i];
	}
	UNROLL
	for (int r = 1; r < 14; r++) {
		__m256i k = hidden(&w->rk[r]);

		UNROLL
		for (int i = 0; i < NVEC; i++)
			s[i] = enc ? _mm256_aesenc_epi128(s[i], k)
				   : _mm256_aesdec_epi128(s[i], k);
		/* one tweak update per round: see "Tweaks" above */
		if (next == TW_STEP && r <= NVEC)
			w->tw[r - 1] = mul_step(w->tw[r - 1], poly);
	}
	UNROLL
	for (int i = 0; i < NVEC; i++) {
		__m256i lk = hidden(&w->lk[i]);

		s[i] = enc ? _mm256_aesenclast_epi128(s[i], lk)
			   : _mm256_aesdeclast_epi128(s[i], lk);
		_mm256_storeu_si256((__m256i *)(dst + 32 * i), s[i]);
	}
}

/*
 * crypt_tail() - the last 1..NBLK-1 full blocks of a crypt_one(), out of
 * line because it is rare. They go through w->odd.buf so that the one loop
 * body serves them too (the zeroed rest of buf is encrypted for nothing),
 * instead of a second body whose per-vector length tests made GCC spill
 * states and tweaks to the stack.
 */
TARGET static __attribute__((noinline)) void
crypt_tail(struct work *w, bool enc, uint8_t *dst, const uint8_t *src,
	   size_t nb)
{
	size_t len = nb * XTS_BLOCK_SIZE;

	memcpy(w->odd.buf, src, len);
	memset(w->odd.buf + len, 0, sizeof(w->odd.buf) - len);
	if (enc)
		crypt_blocks(w, true, w->odd.buf, w->odd.buf, TW_KEEP);
	else
		crypt_blocks(w, false, w->odd.buf, w->odd.buf, TW_KEEP);
	memcpy(dst, w->odd.buf, len);
}

/*
 * cts() - ciphertext stealing (IEEE 1619-2018 5.3.2 / 5.4.2) for the last
 * full block m-1 at @dst/@src and the @rem-byte partial block m after it.
 * w->tw holds the tweaks of the last iteration or tail, whose block @j is
 * block m-1 when decrypting (it was held back) and block m when encrypting
 * (block m-1 is done: its output CC is at @dst). Each source byte is read
 * before the in-place write that could overwrite it.
 */
TARGET static __attribute__((noinline)) void
cts(struct work *w, const struct aes_x86_keys *kx, bool enc, uint8_t *dst,
    const uint8_t *src, size_t rem, size_t j)
{
	uint8_t *b = w->odd.cts[0], *c = w->odd.cts[1];
	__m128i x, t;

	UNROLL
	for (int i = 0; i < NVEC; i++)
		_mm256_storeu_si256((__m256i *)&w->odd.tt[2 * i], w->tw[i]);
	w->odd.tt[NBLK] = xts_x86_mul_x(w->odd.tt[NBLK - 1]);
	if (enc) {
		/*
		 * PP = P_m || CC[rem..15]; C_m = CC[0..rem-1];
		 * C_m-1 = Enc(PP) with T_m
		 */
		memcpy(b, dst, 16);
		memcpy(b, src + 16, rem);
		memcpy(dst + 16, dst, rem);
		t = w->odd.tt[j];
		x = _mm_xor_si128(_mm_load_si128((const __m128i *)b), t);
		x = _mm_xor_si128(xts_x86_enc1(x, kx->ek1), t);
		_mm_storeu_si128((__m128i *)dst, x);
	} else {
		/*
		 * PP = Dec(C_m-1) with T_m; P_m = PP[0..rem-1];
		 * P_m-1 = Dec(C_m || PP[rem..15]) with T_m-1
		 */
		t = w->odd.tt[j + 1];
		x = _mm_xor_si128(_mm_loadu_si128((const __m128i *)src), t);
		x = _mm_xor_si128(xts_x86_dec1(x, kx->dk1), t);
		_mm_store_si128((__m128i *)b, x);
		memcpy(c, b, 16);
		memcpy(c, src + 16, rem);
		memcpy(dst + 16, b, rem);
		t = w->odd.tt[j];
		x = _mm_xor_si128(_mm_load_si128((const __m128i *)c), t);
		x = _mm_xor_si128(xts_x86_dec1(x, kx->dk1), t);
		_mm_storeu_si128((__m128i *)dst, x);
	}
}

INLINE void crypt_one(const struct xts_ctx *ctx, bool enc, uint8_t *dst,
		      const uint8_t *src, size_t len,
		      const uint8_t tweak_in[XTS_BLOCK_SIZE])
{
	const struct aes_x86_keys *kx = (const struct aes_x86_keys *)ctx->state;
	struct work wk, *w = work_init(&wk, enc ? kx->ek1 : kx->dk1);
	size_t rem = len % XTS_BLOCK_SIZE;
	/* decryption with stealing must hold back the last full block */
	size_t nb = len / XTS_BLOCK_SIZE - (!enc && rem);

	tweak_init(w->tw,
		   xts_x86_enc1(_mm_loadu_si128((const __m128i *)tweak_in),
				kx->ek2));
	for (; nb >= NBLK; nb -= NBLK) {
		crypt_blocks(w, enc, dst, src, TW_STEP);
		src += NBLK * XTS_BLOCK_SIZE;
		dst += NBLK * XTS_BLOCK_SIZE;
	}
	if (nb) {
		/* the tail leaves w->tw alone: block nb's tweak is lane nb */
		crypt_tail(w, enc, dst, src, nb);
		src += nb * XTS_BLOCK_SIZE;
		dst += nb * XTS_BLOCK_SIZE;
	}
	if (rem) {
		if (enc)
			cts(w, kx, true, dst - 16, src - 16, rem, nb);
		else
			cts(w, kx, false, dst, src, rem, nb);
	}
	work_wipe(w, false, nb || rem);
}

INLINE void crypt_units(const struct xts_ctx *ctx, bool enc, uint8_t *dst,
			const uint8_t *src, size_t nunits,
			const uint8_t id[XTS_ID_SIZE], uint64_t first_unit)
{
	const struct aes_x86_keys *kx = (const struct aes_x86_keys *)ctx->state;
	const __m128i idv = _mm_loadu_si128((const __m128i *)id);
	struct work wk, *w = work_init(&wk, enc ? kx->ek1 : kx->dk1);

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
		crypt_blocks(w, enc, dst, src, TW_STEP);
		src += NBLK * XTS_BLOCK_SIZE;
		dst += NBLK * XTS_BLOCK_SIZE;
		if (more)
			tweak_init(w->nx, t);
		for (int it = 1; it < UNIT_ITERS - 1; it++) {
			crypt_blocks(w, enc, dst, src, TW_STEP);
			src += NBLK * XTS_BLOCK_SIZE;
			dst += NBLK * XTS_BLOCK_SIZE;
		}
		crypt_blocks(w, enc, dst, src, more ? TW_NEXT : TW_KEEP);
		src += NBLK * XTS_BLOCK_SIZE;
		dst += NBLK * XTS_BLOCK_SIZE;
	}
	work_wipe(w, true, false);
}

TARGET static void vaes_encrypt_units(const struct xts_ctx *ctx, uint8_t *dst,
				      const uint8_t *src, size_t nunits,
				      const uint8_t id[XTS_ID_SIZE],
				      uint64_t first_unit)
{
	crypt_units(ctx, true, dst, src, nunits, id, first_unit);
}

TARGET static void vaes_decrypt_units(const struct xts_ctx *ctx, uint8_t *dst,
				      const uint8_t *src, size_t nunits,
				      const uint8_t id[XTS_ID_SIZE],
				      uint64_t first_unit)
{
	crypt_units(ctx, false, dst, src, nunits, id, first_unit);
}

TARGET static void vaes_encrypt_one(const struct xts_ctx *ctx, uint8_t *dst,
				    const uint8_t *src, size_t len,
				    const uint8_t tweak_in[XTS_BLOCK_SIZE])
{
	crypt_one(ctx, true, dst, src, len, tweak_in);
}

TARGET static void vaes_decrypt_one(const struct xts_ctx *ctx, uint8_t *dst,
				    const uint8_t *src, size_t len,
				    const uint8_t tweak_in[XTS_BLOCK_SIZE])
{
	crypt_one(ctx, false, dst, src, len, tweak_in);
}

/* cpu.h's vaes and vpclmul imply AVX2, AES-NI, PCLMUL and OS YMM state. */
static bool vaes_probe(void)
{
	const struct cpu_features *f = cpu_features();

	return f->vaes && f->vpclmul;
}

const struct xts_backend xts_backend_vaes = {
	.name = "vaes",
	.requires = "VAES, VPCLMULQDQ and AVX2 (with OS support)",
	.probe = vaes_probe,
	.setkey = aes_x86_setkey,
	.encrypt_units = vaes_encrypt_units,
	.decrypt_units = vaes_decrypt_units,
	.encrypt_one = vaes_encrypt_one,
	.decrypt_one = vaes_decrypt_one,
};

#else /* !__x86_64__ */

/*
 * Not x86-64: the table exists so that the core list is the same on every
 * build, but the probe fails and the dispatcher never calls the rest.
 */
static bool vaes_probe(void)
{
	return false;
}

static void vaes_setkey(struct xts_ctx *ctx, const uint8_t key[XTS_KEY_SIZE])
{
	(void)ctx;
	(void)key;
	abort();
}

static void vaes_units(const struct xts_ctx *ctx, uint8_t *dst,
		       const uint8_t *src, size_t nunits,
		       const uint8_t id[XTS_ID_SIZE], uint64_t first_unit)
{
	(void)ctx;
	(void)dst;
	(void)src;
	(void)nunits;
	(void)id;
	(void)first_unit;
	abort();
}

static void vaes_one(const struct xts_ctx *ctx, uint8_t *dst,
		     const uint8_t *src, size_t len,
		     const uint8_t tweak_in[XTS_BLOCK_SIZE])
{
	(void)ctx;
	(void)dst;
	(void)src;
	(void)len;
	(void)tweak_in;
	abort();
}

const struct xts_backend xts_backend_vaes = {
	.name = "vaes",
	.requires = "VAES, VPCLMULQDQ and AVX2 (with OS support)",
	.probe = vaes_probe,
	.setkey = vaes_setkey,
	.encrypt_units = vaes_units,
	.decrypt_units = vaes_units,
	.encrypt_one = vaes_one,
	.decrypt_one = vaes_one,
};

#endif /* __x86_64__ */
