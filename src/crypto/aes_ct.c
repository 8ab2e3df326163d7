/* SPDX-License-Identifier: Apache-2.0 */
/*
 * aes_ct.c - constant-time, bitsliced AES-256 (FIPS-197), encryption and
 * decryption, for CPUs without AES instructions.
 *
 * Constant time: there are no secret-indexed loads (no S-box tables, no
 * T-tables) and no branches on secret data anywhere, key schedule
 * included. Every branch and every address depends only on lengths and
 * loop counters. SubBytes is a Boolean circuit evaluated on bit planes:
 * the depth-16 circuits of J. Boyar and R. Peralta, "A depth-16 circuit
 * for the AES S-box", SEC 2012 (IACR ePrint 2011/332): 128 gates for the
 * S-box and 127 for its inverse, sharing their 63-gate middle part. The
 * circuits were written down here from the paper's equations (the T, M,
 * L and P names follow it) and checked exhaustively against the FIPS-197
 * S-box and its inverse during development.
 *
 * Representation. A pass works on 8 blocks at once, held in 8 "planes"
 * of 128 bits (one SIMD register each, via GCC vector extensions, so
 * SSE2 on x86-64 and NEON on arm64 do the work; other targets get the
 * same code lowered to scalar words). Plane b holds bit b of every byte:
 *
 *	plane b, bit 8 * i + j  =  bit b of byte i of block j
 *
 * with byte i = 4 * column + row as in FIPS-197. So each 32-bit element
 * of a plane is one column of all 8 blocks and each of its bytes one row:
 *   - the transposition in and out is 12 swap-moves of 8 registers
 *     (bit-matrix transpose of every byte position),
 *   - ShiftRows is two 32-bit element shuffles (pshufd) and masked
 *     merges,
 *   - MixColumns' "row below" is an 8-bit rotation inside each 32-bit
 *     element, "two rows below" a 16-bit one,
 *   - AddRoundKey is one XOR per plane with the round key spread to bit
 *     planes (bytes of 0x00/0xff).
 *
 * The S-box constant 0x63 is not computed by the circuit (its XNORs are
 * plain XORs here) but folded into round keys 1..14; see aes_ct.h.
 * InvMixColumns is MixColumns after the multiplication by
 * {05 00 04 00} (circulant), which needs only a 16-bit rotation.
 */
#include "aes_ct.h"

#include <stdbool.h>
#include <string.h>

#if !defined(__BYTE_ORDER__) || !defined(__ORDER_LITTLE_ENDIAN__)
#error "aes_ct.c needs GCC-compatible vector extensions and __BYTE_ORDER__"
#endif

/* One bit plane: 8 blocks x 16 bytes, one bit of each byte. */
typedef uint32_t bsw __attribute__((vector_size(16)));
/* The same, for access to memory of another declared type. */
typedef uint32_t bsw_mem __attribute__((vector_size(16), may_alias));
/* A plane seen as 16 bytes (one byte position of the 8 blocks each). */
typedef uint8_t bsb __attribute__((vector_size(16)));
/* ... and as 8 16-bit halves of columns, for ROW_NEXT2() */
typedef uint16_t bsh __attribute__((vector_size(16)));

/*
 * Everything on the hot path is forced inline, and every loop over the 8
 * planes is fully unrolled (#pragma GCC unroll), so that the plane arrays
 * become plain register variables instead of stack memory.
 */
#define INLINE static inline __attribute__((always_inline))

/* element shuffles: result element k is element (k-th argument) of x */
#ifdef __clang__
#define SHUF32(x, a, b, c, d) __builtin_shufflevector((x), (x), a, b, c, d)
#define SHUF16(x, ...) __builtin_shufflevector((x), (x), __VA_ARGS__)
#else
#define SHUF32(x, a, b, c, d) __builtin_shuffle((x), (bsw){ a, b, c, d })
#define SHUF16(x, ...) __builtin_shuffle((x), (bsh){ __VA_ARGS__ })
#endif

/*
 * Rows within a column are the bytes of a 32-bit element. Moving row r+1
 * into row r is a rotation whose direction depends on the byte order.
 */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ROW_NEXT(x) (((x) >> 8) | ((x) << 24))
#else
#define ROW_NEXT(x) (((x) << 8) | ((x) >> 24))
#endif
/*
 * Two rows on is swapping the 16-bit halves of each element, in either
 * byte order: a word shuffle (pshuflw + pshufhw) beats two shifts + OR.
 */
#define ROW_NEXT2(x) ((bsw)SHUF16((bsh)(x), 1, 0, 3, 2, 5, 4, 7, 6))

/* bytes of rows 2 and 3 / rows 1 and 3 of every column */
#define ROWS23 ((bsw)(bsb){ 0, 0, 0xff, 0xff, 0, 0, 0xff, 0xff,          \
			    0, 0, 0xff, 0xff, 0, 0, 0xff, 0xff })
#define ROWS13 ((bsw)(bsb){ 0, 0xff, 0, 0xff, 0, 0xff, 0, 0xff,          \
			    0, 0xff, 0, 0xff, 0, 0xff, 0, 0xff })

/*
 * Memory <-> plane. Macros, not functions: no function here takes or
 * returns a vector by value, because on targets without SIMD registers
 * (i386 without SSE, for one) that has no stable ABI and GCC warns.
 */
#define LOAD16(v, p) memcpy(&(v), (p), 16)
#define STORE16(p, v) memcpy((p), &(v), 16)
#define SPLAT32(x) ((bsw){ (x), (x), (x), (x) })

/* Exchange the bits of @lo selected by @m << @n with those of @hi at @m. */
#define SWAPMOVE(lo, hi, n, m)                                              \
	do {                                                                \
		bsw t_ = (((lo) >> (n)) ^ (hi)) & (m);                      \
		(hi) ^= t_;                                                 \
		(lo) ^= t_ << (n);                                          \
	} while (0)

/*
 * Block j in q[j] <-> bit plane b in q[b]: a transpose of the 8x8 bit
 * matrix at every byte position. Each stage is an involution, so running
 * the stages in reverse order undoes it.
 */
INLINE void to_planes(bsw q[8])
{
	const bsw m1 = SPLAT32(0x55555555), m2 = SPLAT32(0x33333333);
	const bsw m4 = SPLAT32(0x0f0f0f0f);

	SWAPMOVE(q[0], q[1], 1, m1);
	SWAPMOVE(q[2], q[3], 1, m1);
	SWAPMOVE(q[4], q[5], 1, m1);
	SWAPMOVE(q[6], q[7], 1, m1);
	SWAPMOVE(q[0], q[2], 2, m2);
	SWAPMOVE(q[1], q[3], 2, m2);
	SWAPMOVE(q[4], q[6], 2, m2);
	SWAPMOVE(q[5], q[7], 2, m2);
	SWAPMOVE(q[0], q[4], 4, m4);
	SWAPMOVE(q[1], q[5], 4, m4);
	SWAPMOVE(q[2], q[6], 4, m4);
	SWAPMOVE(q[3], q[7], 4, m4);
}

INLINE void from_planes(bsw q[8])
{
	const bsw m1 = SPLAT32(0x55555555), m2 = SPLAT32(0x33333333);
	const bsw m4 = SPLAT32(0x0f0f0f0f);

	SWAPMOVE(q[0], q[4], 4, m4);
	SWAPMOVE(q[1], q[5], 4, m4);
	SWAPMOVE(q[2], q[6], 4, m4);
	SWAPMOVE(q[3], q[7], 4, m4);
	SWAPMOVE(q[0], q[2], 2, m2);
	SWAPMOVE(q[1], q[3], 2, m2);
	SWAPMOVE(q[4], q[6], 2, m2);
	SWAPMOVE(q[5], q[7], 2, m2);
	SWAPMOVE(q[0], q[1], 1, m1);
	SWAPMOVE(q[2], q[3], 1, m1);
	SWAPMOVE(q[4], q[5], 1, m1);
	SWAPMOVE(q[6], q[7], 1, m1);
}

/*
 * The nonlinear middle part shared by both Boyar-Peralta circuits
 * (inversion in GF(2^8) seen as GF((2^4)^2)): 34 AND, 29 XOR. Inputs are
 * the T values of a top linear layer and D (U7 for the S-box, U0 + U2 +
 * U5 for the inverse); outputs are M46..M63, the bottom layer's inputs.
 * Passed through structs so no function takes vectors by value.
 */
struct sbox_top {
	bsw t1, t2, t3, t4, t6, t8, t9, t10, t13, t14, t15;
	bsw t16, t17, t19, t20, t22, t23, t24, t25, t26, t27, d;
};

struct sbox_mid {
	bsw m46, m47, m48, m49, m50, m51, m52, m53, m54;
	bsw m55, m56, m57, m58, m59, m60, m61, m62, m63;
};

INLINE void sbox_middle(struct sbox_mid *o, const struct sbox_top *t)
{
	const bsw t1 = t->t1, t2 = t->t2, t3 = t->t3, t4 = t->t4, t6 = t->t6;
	const bsw t8 = t->t8, t9 = t->t9, t10 = t->t10, t13 = t->t13;
	const bsw t14 = t->t14, t15 = t->t15, t16 = t->t16, t17 = t->t17;
	const bsw t19 = t->t19, t20 = t->t20, t22 = t->t22, t23 = t->t23;
	const bsw t24 = t->t24, t25 = t->t25, t26 = t->t26, t27 = t->t27;
	const bsw d = t->d;

	bsw m1 = t13 & t6;
	bsw m2 = t23 & t8;
	bsw m3 = t14 ^ m1;
	bsw m4 = t19 & d;
	bsw m5 = m4 ^ m1;
	bsw m6 = t3 & t16;
	bsw m7 = t22 & t9;
	bsw m8 = t26 ^ m6;
	bsw m9 = t20 & t17;
	bsw m10 = m9 ^ m6;
	bsw m11 = t1 & t15;
	bsw m12 = t4 & t27;
	bsw m13 = m12 ^ m11;
	bsw m14 = t2 & t10;
	bsw m15 = m14 ^ m11;
	bsw m16 = m3 ^ m2;
	bsw m17 = m5 ^ t24;
	bsw m18 = m8 ^ m7;
	bsw m19 = m10 ^ m15;
	bsw m20 = m16 ^ m13;
	bsw m21 = m17 ^ m15;
	bsw m22 = m18 ^ m13;
	bsw m23 = m19 ^ t25;
	bsw m24 = m22 ^ m23;
	bsw m25 = m22 & m20;
	bsw m26 = m21 ^ m25;
	bsw m27 = m20 ^ m21;
	bsw m28 = m23 ^ m25;
	bsw m29 = m28 & m27;
	bsw m30 = m26 & m24;
	bsw m31 = m20 & m23;
	bsw m32 = m27 & m31;
	bsw m33 = m27 ^ m25;
	bsw m34 = m21 & m22;
	bsw m35 = m24 & m34;
	bsw m36 = m24 ^ m25;
	bsw m37 = m21 ^ m29;
	bsw m38 = m32 ^ m33;
	bsw m39 = m23 ^ m30;
	bsw m40 = m35 ^ m36;
	bsw m41 = m38 ^ m40;
	bsw m42 = m37 ^ m39;
	bsw m43 = m37 ^ m38;
	bsw m44 = m39 ^ m40;
	bsw m45 = m42 ^ m41;

	o->m46 = m44 & t6;
	o->m47 = m40 & t8;
	o->m48 = m39 & d;
	o->m49 = m43 & t16;
	o->m50 = m38 & t9;
	o->m51 = m37 & t17;
	o->m52 = m42 & t15;
	o->m53 = m45 & t27;
	o->m54 = m41 & t10;
	o->m55 = m44 & t13;
	o->m56 = m40 & t23;
	o->m57 = m39 & t19;
	o->m58 = m43 & t3;
	o->m59 = m38 & t22;
	o->m60 = m37 & t20;
	o->m61 = m42 & t1;
	o->m62 = m45 & t4;
	o->m63 = m41 & t2;
}

/*
 * SubBytes minus the constant: q[b] <- bit b of (S(x) ^ 0x63). The
 * paper numbers bits from the most significant: U0 = q[7], S7 = q[0].
 */
INLINE void sub_bytes(bsw q[8])
{
	const bsw u0 = q[7], u1 = q[6], u2 = q[5], u3 = q[4];
	const bsw u4 = q[3], u5 = q[2], u6 = q[1], u7 = q[0];
	struct sbox_mid m;

	/* top linear layer */
	bsw t1 = u0 ^ u3;
	bsw t2 = u0 ^ u5;
	bsw t3 = u0 ^ u6;
	bsw t4 = u3 ^ u5;
	bsw t5 = u4 ^ u6;
	bsw t6 = t1 ^ t5;
	bsw t7 = u1 ^ u2;
	bsw t8 = u7 ^ t6;
	bsw t9 = u7 ^ t7;
	bsw t10 = t6 ^ t7;
	bsw t11 = u1 ^ u5;
	bsw t12 = u2 ^ u5;
	bsw t13 = t3 ^ t4;
	bsw t14 = t6 ^ t11;
	bsw t15 = t5 ^ t11;
	bsw t16 = t5 ^ t12;
	bsw t17 = t9 ^ t16;
	bsw t18 = u3 ^ u7;
	bsw t19 = t7 ^ t18;
	bsw t20 = t1 ^ t19;
	bsw t21 = u6 ^ u7;
	bsw t22 = t7 ^ t21;
	bsw t23 = t2 ^ t22;
	bsw t24 = t2 ^ t10;
	bsw t25 = t20 ^ t17;
	bsw t26 = t3 ^ t16;
	bsw t27 = t1 ^ t12;

	const struct sbox_top top = {
		t1, t2, t3, t4, t6, t8, t9, t10, t13, t14, t15,
		t16, t17, t19, t20, t22, t23, t24, t25, t26, t27, u7
	};

	sbox_middle(&m, &top);

	/* bottom linear layer */
	bsw l0 = m.m61 ^ m.m62;
	bsw l1 = m.m50 ^ m.m56;
	bsw l2 = m.m46 ^ m.m48;
	bsw l3 = m.m47 ^ m.m55;
	bsw l4 = m.m54 ^ m.m58;
	bsw l5 = m.m49 ^ m.m61;
	bsw l6 = m.m62 ^ l5;
	bsw l7 = m.m46 ^ l3;
	bsw l8 = m.m51 ^ m.m59;
	bsw l9 = m.m52 ^ m.m53;
	bsw l10 = m.m53 ^ l4;
	bsw l11 = m.m60 ^ l2;
	bsw l12 = m.m48 ^ m.m51;
	bsw l13 = m.m50 ^ l0;
	bsw l14 = m.m52 ^ m.m61;
	bsw l15 = m.m55 ^ l1;
	bsw l16 = m.m56 ^ l0;
	bsw l17 = m.m57 ^ l1;
	bsw l18 = m.m58 ^ l8;
	bsw l19 = m.m63 ^ l4;
	bsw l20 = l0 ^ l1;
	bsw l21 = l1 ^ l7;
	bsw l22 = l3 ^ l12;
	bsw l23 = l18 ^ l2;
	bsw l24 = l15 ^ l9;
	bsw l25 = l6 ^ l10;
	bsw l26 = l7 ^ l9;
	bsw l27 = l8 ^ l10;
	bsw l28 = l11 ^ l14;
	bsw l29 = l11 ^ l17;

	/* S1, S2, S6 and S7 are XNORs in the paper: the 0x63 we leave out */
	q[7] = l6 ^ l24;
	q[6] = l16 ^ l26;
	q[5] = l19 ^ l28;
	q[4] = l6 ^ l21;
	q[3] = l20 ^ l22;
	q[2] = l25 ^ l29;
	q[1] = l13 ^ l27;
	q[0] = l6 ^ l23;
}

/*
 * InvSubBytes of (x ^ 0x63): q[b] <- bit b of S^-1(x ^ 0x63). The
 * paper's XNORs in the top layer are exactly that input constant, which
 * the caller has folded into the round key.
 */
INLINE void inv_sub_bytes(bsw q[8])
{
	const bsw u0 = q[7], u1 = q[6], u2 = q[5], u3 = q[4];
	const bsw u4 = q[3], u5 = q[2], u6 = q[1], u7 = q[0];
	struct sbox_mid m;

	/* top linear layer of the inverse */
	bsw t23 = u0 ^ u3;
	bsw t22 = u1 ^ u3;
	bsw t2 = u0 ^ u1;
	bsw t1 = u3 ^ u4;
	bsw t24 = u4 ^ u7;
	bsw r0 = u6 ^ u7;
	bsw t8 = u1 ^ t23;
	bsw t19 = t22 ^ r0;
	bsw t9 = u7 ^ t1;
	bsw t10 = t2 ^ t24;
	bsw t13 = t2 ^ r0;
	bsw t3 = t1 ^ r0;
	bsw t25 = u2 ^ t1;
	bsw r1 = u1 ^ u6;
	bsw t17 = u2 ^ t19;
	bsw t20 = t24 ^ r1;
	bsw t4 = u4 ^ t8;
	bsw r2 = u2 ^ u5;
	bsw r3 = u5 ^ u6;
	bsw r4 = u2 ^ u4;
	bsw d = u0 ^ r2;
	bsw t6 = t22 ^ r2;
	bsw t16 = r1 ^ r4;
	bsw t27 = t1 ^ r3;
	bsw t15 = t10 ^ t27;
	bsw t14 = t10 ^ r3;
	bsw t26 = t3 ^ t16;

	const struct sbox_top top = {
		t1, t2, t3, t4, t6, t8, t9, t10, t13, t14, t15,
		t16, t17, t19, t20, t22, t23, t24, t25, t26, t27, d
	};

	sbox_middle(&m, &top);

	/* bottom linear layer of the inverse */
	bsw p0 = m.m52 ^ m.m61;
	bsw p1 = m.m58 ^ m.m59;
	bsw p2 = m.m54 ^ m.m62;
	bsw p3 = m.m47 ^ m.m50;
	bsw p4 = m.m48 ^ m.m56;
	bsw p5 = m.m46 ^ m.m51;
	bsw p6 = m.m49 ^ m.m60;
	bsw p7 = p0 ^ p1;
	bsw p8 = m.m50 ^ m.m53;
	bsw p9 = m.m55 ^ m.m63;
	bsw p10 = m.m57 ^ p4;
	bsw p11 = p0 ^ p3;
	bsw p12 = m.m46 ^ m.m48;
	bsw p13 = m.m49 ^ m.m51;
	bsw p14 = m.m49 ^ m.m62;
	bsw p15 = m.m54 ^ m.m59;
	bsw p16 = m.m57 ^ m.m61;
	bsw p17 = m.m58 ^ p2;
	bsw p18 = m.m63 ^ p5;
	bsw p19 = p2 ^ p3;
	bsw p20 = p4 ^ p6;
	bsw p22 = p2 ^ p7;
	bsw p23 = p7 ^ p8;
	bsw p24 = p5 ^ p7;
	bsw p25 = p6 ^ p10;
	bsw p26 = p9 ^ p11;
	bsw p27 = p10 ^ p18;
	bsw p28 = p11 ^ p25;
	bsw p29 = p15 ^ p20;

	q[7] = p13 ^ p22;
	q[6] = p26 ^ p29;
	q[5] = p17 ^ p28;
	q[4] = p12 ^ p22;
	q[3] = p23 ^ p27;
	q[2] = p19 ^ p24;
	q[1] = p14 ^ p23;
	q[0] = p9 ^ p16;
}

/*
 * ShiftRows: row r of column c takes row r of column c + r. Done as
 * rows 2 and 3 moving by two columns, then rows 1 and 3 by one more.
 */
INLINE void shift_rows(bsw q[8])
{
#pragma GCC unroll 8
	for (int b = 0; b < 8; b++) {
		bsw x = q[b];

		x ^= (x ^ SHUF32(x, 2, 3, 0, 1)) & ROWS23;
		x ^= (x ^ SHUF32(x, 1, 2, 3, 0)) & ROWS13;
		q[b] = x;
	}
}

/* InvShiftRows: the same two steps, the second one the other way. */
INLINE void inv_shift_rows(bsw q[8])
{
#pragma GCC unroll 8
	for (int b = 0; b < 8; b++) {
		bsw x = q[b];

		x ^= (x ^ SHUF32(x, 2, 3, 0, 1)) & ROWS23;
		x ^= (x ^ SHUF32(x, 3, 0, 1, 2)) & ROWS13;
		q[b] = x;
	}
}

/*
 * MixColumns: out_r = 2 a_r + 3 a_{r+1} + a_{r+2} + a_{r+3}
 *                   = 2 t_r + a_{r+1} + t_{r+2}   with t_r = a_r + a_{r+1}.
 * Doubling in GF(2^8) moves plane b to b + 1 and folds plane 7 into
 * planes 0, 1, 3 and 4 (x^8 = x^4 + x^3 + x + 1).
 */
INLINE void mix_columns(bsw q[8])
{
	bsw a1[8], t[8];

#pragma GCC unroll 8
	for (int b = 0; b < 8; b++) {
		a1[b] = ROW_NEXT(q[b]);
		t[b] = q[b] ^ a1[b];
	}
	q[0] = t[7] ^ a1[0] ^ ROW_NEXT2(t[0]);
	q[1] = t[0] ^ t[7] ^ a1[1] ^ ROW_NEXT2(t[1]);
	q[2] = t[1] ^ a1[2] ^ ROW_NEXT2(t[2]);
	q[3] = t[2] ^ t[7] ^ a1[3] ^ ROW_NEXT2(t[3]);
	q[4] = t[3] ^ t[7] ^ a1[4] ^ ROW_NEXT2(t[4]);
	q[5] = t[4] ^ a1[5] ^ ROW_NEXT2(t[5]);
	q[6] = t[5] ^ a1[6] ^ ROW_NEXT2(t[6]);
	q[7] = t[6] ^ a1[7] ^ ROW_NEXT2(t[7]);
}

/*
 * InvMixColumns = MixColumns o circ(05, 00, 04, 00):
 * a_r <- a_r + 4 (a_r + a_{r+2}), then MixColumns.
 */
INLINE void inv_mix_columns(bsw q[8])
{
	bsw u[8];

#pragma GCC unroll 8
	for (int b = 0; b < 8; b++)
		u[b] = q[b] ^ ROW_NEXT2(q[b]);
	/* times x^2: planes shift up by two, 6 and 7 fold back */
	bsw u67 = u[6] ^ u[7];

	q[0] ^= u[6];
	q[1] ^= u67;
	q[2] ^= u[0] ^ u[7];
	q[3] ^= u[1] ^ u[6];
	q[4] ^= u[2] ^ u67;
	q[5] ^= u[3] ^ u[7];
	q[6] ^= u[4];
	q[7] ^= u[5];
	mix_columns(q);
}

/*
 * AddRoundKey r, from the spread planes @pl if @spread, else from the
 * compact key @k: plane b of byte i is 0xff iff bit b of rk[i] is set (a
 * compare, no branch). @spread is a compile-time constant at every call.
 */
INLINE void add_round_key(bsw q[8], bool spread, const bsw_mem *pl,
			  const struct aes256_ct_key *k, int r)
{
	if (spread) {
#pragma GCC unroll 8
		for (int b = 0; b < 8; b++)
			q[b] ^= pl[8 * r + b];
	} else {
		bsb rk;

		memcpy(&rk, k->rk[r], 16);
#pragma GCC unroll 8
		for (int b = 0; b < 8; b++) {
			bsb bit = (bsb){ 0 } + (uint8_t)(1u << b);

			q[b] ^= (bsw)((rk & bit) == bit);
		}
	}
}

INLINE void encrypt_planes(bsw q[8], bool spread, const bsw_mem *pl,
			   const struct aes256_ct_key *k)
{
	add_round_key(q, spread, pl, k, 0);
	for (int r = 1; r < AES256_CT_ROUNDS; r++) {
		sub_bytes(q);
		shift_rows(q);
		mix_columns(q);
		add_round_key(q, spread, pl, k, r);
	}
	sub_bytes(q);
	shift_rows(q);
	add_round_key(q, spread, pl, k, AES256_CT_ROUNDS);
}

/*
 * The inverse cipher of FIPS-197 5.3. Round keys 1..14 carry 0x63, which
 * reaches inv_sub_bytes() unchanged: InvMixColumns maps a state of equal
 * bytes c to itself (0e + 0b + 0d + 09 = 01).
 */
INLINE void decrypt_planes(bsw q[8], bool spread, const bsw_mem *pl,
			   const struct aes256_ct_key *k)
{
	add_round_key(q, spread, pl, k, AES256_CT_ROUNDS);
	for (int r = AES256_CT_ROUNDS - 1; r > 0; r--) {
		inv_shift_rows(q);
		inv_sub_bytes(q);
		add_round_key(q, spread, pl, k, r);
		inv_mix_columns(q);
	}
	inv_shift_rows(q);
	inv_sub_bytes(q);
	add_round_key(q, spread, pl, k, 0);
}

/*
 * One pass over exactly AES256_CT_PARALLEL blocks, whitened with @mask
 * if @whiten. @mask is re-read at the end rather than kept in registers:
 * the rounds need all of them. @dec, @spread and @whiten are constants.
 */
INLINE void pass8(bool dec, bool spread, const bsw_mem *pl,
		  const struct aes256_ct_key *k, uint8_t *dst,
		  const uint8_t *src, bool whiten, const uint8_t *mask)
{
	bsw q[8], w;

#pragma GCC unroll 8
	for (int j = 0; j < 8; j++) {
		LOAD16(q[j], src + 16 * j);
		if (whiten) {
			LOAD16(w, mask + 16 * j);
			q[j] ^= w;
		}
	}
	to_planes(q);
	if (dec)
		decrypt_planes(q, spread, pl, k);
	else
		encrypt_planes(q, spread, pl, k);
	from_planes(q);
#pragma GCC unroll 8
	for (int j = 0; j < 8; j++) {
		if (whiten) {
			LOAD16(w, mask + 16 * j);
			q[j] ^= w;
		}
		STORE16(dst + 16 * j, q[j]);
	}
}

/* The four instances the callers need, kept out of line once each. */
static void ecb_enc8(const struct aes256_ct_key *k, uint8_t *dst,
		     const uint8_t *src)
{
	pass8(false, false, NULL, k, dst, src, false, NULL);
}

static void ecb_dec8(const struct aes256_ct_key *k, uint8_t *dst,
		     const uint8_t *src)
{
	pass8(true, false, NULL, k, dst, src, false, NULL);
}

static void xex_enc8(const struct aes256_ct_bskey *bk, uint8_t *dst,
		     const uint8_t *src, const uint8_t *mask)
{
	pass8(false, true, (const bsw_mem *)bk->plane, NULL, dst, src, true,
	      mask);
}

static void xex_dec8(const struct aes256_ct_bskey *bk, uint8_t *dst,
		     const uint8_t *src, const uint8_t *mask)
{
	pass8(true, true, (const bsw_mem *)bk->plane, NULL, dst, src, true,
	      mask);
}

/*
 * A short tail (1..7 blocks) goes through a zero-padded copy; the copies
 * hold only input/output blocks and masks, no key material.
 */
#define TAIL_BYTES (16 * AES256_CT_PARALLEL)

static void ecb_tail(bool dec, const struct aes256_ct_key *k, uint8_t *dst,
		     const uint8_t *src, size_t nblocks)
{
	uint8_t buf[TAIL_BYTES] = { 0 };

	memcpy(buf, src, 16 * nblocks);
	if (dec)
		ecb_dec8(k, buf, buf);
	else
		ecb_enc8(k, buf, buf);
	memcpy(dst, buf, 16 * nblocks);
}

static void xex_tail(bool dec, const struct aes256_ct_bskey *bk,
		     uint8_t *dst, const uint8_t *src, const uint8_t *mask,
		     size_t nblocks)
{
	uint8_t buf[TAIL_BYTES] = { 0 }, msk[TAIL_BYTES] = { 0 };

	memcpy(buf, src, 16 * nblocks);
	memcpy(msk, mask, 16 * nblocks);
	if (dec)
		xex_dec8(bk, buf, buf, msk);
	else
		xex_enc8(bk, buf, buf, msk);
	memcpy(dst, buf, 16 * nblocks);
}

void aes256_ct_encrypt_blocks(const struct aes256_ct_key *k, uint8_t *dst,
			      const uint8_t *src, size_t nblocks)
{
	for (; nblocks >= AES256_CT_PARALLEL; nblocks -= AES256_CT_PARALLEL) {
		ecb_enc8(k, dst, src);
		dst += TAIL_BYTES;
		src += TAIL_BYTES;
	}
	if (nblocks)
		ecb_tail(false, k, dst, src, nblocks);
}

void aes256_ct_decrypt_blocks(const struct aes256_ct_key *k, uint8_t *dst,
			      const uint8_t *src, size_t nblocks)
{
	for (; nblocks >= AES256_CT_PARALLEL; nblocks -= AES256_CT_PARALLEL) {
		ecb_dec8(k, dst, src);
		dst += TAIL_BYTES;
		src += TAIL_BYTES;
	}
	if (nblocks)
		ecb_tail(true, k, dst, src, nblocks);
}

void aes256_ct_xex_encrypt(const struct aes256_ct_bskey *bk, uint8_t *dst,
			   const uint8_t *src, const uint8_t *mask,
			   size_t nblocks)
{
	for (; nblocks >= AES256_CT_PARALLEL; nblocks -= AES256_CT_PARALLEL) {
		xex_enc8(bk, dst, src, mask);
		dst += TAIL_BYTES;
		src += TAIL_BYTES;
		mask += TAIL_BYTES;
	}
	if (nblocks)
		xex_tail(false, bk, dst, src, mask, nblocks);
}

void aes256_ct_xex_decrypt(const struct aes256_ct_bskey *bk, uint8_t *dst,
			   const uint8_t *src, const uint8_t *mask,
			   size_t nblocks)
{
	for (; nblocks >= AES256_CT_PARALLEL; nblocks -= AES256_CT_PARALLEL) {
		xex_dec8(bk, dst, src, mask);
		dst += TAIL_BYTES;
		src += TAIL_BYTES;
		mask += TAIL_BYTES;
	}
	if (nblocks)
		xex_tail(true, bk, dst, src, mask, nblocks);
}

void aes256_ct_bskey_expand(struct aes256_ct_bskey *bk,
			    const struct aes256_ct_key *k)
{
	bsw_mem *pl = (bsw_mem *)bk->plane;
	bsw q[8];

	for (int r = 0; r <= AES256_CT_ROUNDS; r++) {
		memset(q, 0, sizeof(q));
		add_round_key(q, false, NULL, k, r);
#pragma GCC unroll 8
		for (int b = 0; b < 8; b++)
			pl[8 * r + b] = q[b];
	}
	explicit_bzero(q, sizeof(q));
}

/*
 * SubWord (FIPS-197 5.2) through the bitsliced circuit: the word sits in
 * bytes 0..3 of block 0 of an otherwise zero pass. Wasteful (one word in
 * a 128-byte pass) but it runs 13 times per key and shares the audited,
 * constant-time S-box with the cipher.
 */
static void sub_word(uint8_t w[4])
{
	uint8_t blk[16] = { 0 };
	bsw q[8] = { 0 };

	memcpy(blk, w, 4);
	LOAD16(q[0], blk);
	to_planes(q);
	sub_bytes(q);
	from_planes(q);
	STORE16(blk, q[0]);
	for (int i = 0; i < 4; i++)
		w[i] = blk[i] ^ 0x63;
	explicit_bzero(blk, sizeof(blk));
	explicit_bzero(q, sizeof(q));
}

void aes256_ct_setkey(struct aes256_ct_key *k, const uint8_t key[32])
{
	/* w[] is FIPS-197's word array: round key r is w[4r .. 4r + 3]. */
	uint8_t (*w)[4] = (uint8_t (*)[4])k->rk;
	uint8_t tmp[4];
	uint8_t rcon = 0x01;

	memcpy(k->rk, key, 32);
	for (int i = 8; i < 4 * (AES256_CT_ROUNDS + 1); i++) {
		memcpy(tmp, w[i - 1], 4);
		if (i % 8 == 0) {
			/* RotWord, SubWord, Rcon; rcon never passes 0x40 */
			uint8_t t0 = tmp[0];

			tmp[0] = tmp[1];
			tmp[1] = tmp[2];
			tmp[2] = tmp[3];
			tmp[3] = t0;
			sub_word(tmp);
			tmp[0] ^= rcon;
			rcon <<= 1;
		} else if (i % 8 == 4) {
			sub_word(tmp);
		}
		for (int j = 0; j < 4; j++)
			w[i][j] = w[i - 8][j] ^ tmp[j];
	}
	/* the S-box constant rides on round keys 1..14 (see aes_ct.h) */
	for (int r = 1; r <= AES256_CT_ROUNDS; r++)
		for (int i = 0; i < 16; i++)
			k->rk[r][i] ^= 0x63;
	explicit_bzero(tmp, sizeof(tmp));
}
