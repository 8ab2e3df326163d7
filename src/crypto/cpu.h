/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cpu.h - what the CPU and the OS let the x86 cores use.
 *
 * A feature counts only if the CPU reports it (CPUID) *and* the OS saves
 * the registers it needs (XGETBV): AVX/VAES need OSXSAVE and XCR0 bits
 * 1 and 2 (SSE and YMM state), as the kernel's cpu_has_xfeatures() does.
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
};

/*
 * cpu_features() - the features of this CPU, detected once.
 * The environment variable XTSFS_CPU_MASK (comma list of feature names,
 * for tests only) hides features to simulate an older CPU.
 */
const struct cpu_features *cpu_features(void);

#endif /* XTSFS_CPU_H */
