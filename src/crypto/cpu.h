/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cpu.h - what the CPU and the OS let the x86 cores use.
 *
 * A feature counts only if the CPU reports it (CPUID) *and* the OS saves
 * the registers it needs (XGETBV): AVX/VAES need OSXSAVE and XCR0 bits
 * 1 and 2 (SSE and YMM state), as the kernel's cpu_has_xfeatures() does;
 * AVX-512 needs XCR0 bits 5, 6 and 7 as well (opmask, ZMM_Hi256: the
 * upper halves of zmm0-15, Hi16_ZMM: zmm16-31).
 */
#ifndef XTSFS_CPU_H
#define XTSFS_CPU_H

#include <stdbool.h>

struct cpu_features {
	bool aesni;      /* AES-NI and SSE4.1 (for pshufb, pblend, ptest) */
	bool pclmul;     /* PCLMULQDQ */
	bool avx2;       /* AVX2 with OS YMM state */
	bool vaes;       /* VAES (256-bit) with OS YMM state */
	bool vpclmul;    /* VPCLMULQDQ (256-bit) with OS YMM state */
	bool avx512;     /* AVX-512 F, VL and BW with OS opmask and ZMM
			  * state; with vaes/vpclmul, their zmm forms too */
	bool zmm_fast;   /* avx512, and 512-bit vectors cost no clock speed:
			  * not one of the Intel models that downclock for
			  * them (Linux's X86_FEATURE_PREFER_YMM list) */
};

/*
 * cpu_features() - the features of this CPU, detected once.
 * The environment variable XTSFS_CPU_MASK (comma list of feature names,
 * for tests only) hides features to simulate an older CPU; hiding
 * zmm_fast simulates a CPU that downclocks for 512-bit vectors.
 */
const struct cpu_features *cpu_features(void);

#endif /* XTSFS_CPU_H */
