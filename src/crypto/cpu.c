/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cpu.c - CPUID and XGETBV probing for the x86 cores. On other
 * architectures every feature reads false and only "software" runs.
 */
#include "cpu.h"

#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

/* XCR0 read with the raw opcode, so no -mxsave is needed. */
static unsigned long long xgetbv0(void)
{
	unsigned int lo, hi;

	__asm__ volatile(".byte 0x0f, 0x01, 0xd0" : "=a"(lo), "=d"(hi) : "c"(0));
	return ((unsigned long long)hi << 32) | lo;
}

/*
 * Intel family 6 models that lower their clock when 512-bit vectors are
 * used, so that code using zmm registers slows down everything around it:
 * the list Linux keeps in arch/x86/kernel/cpu/intel.c (X86_FEATURE_PREFER_YMM,
 * earlier aesni-intel_glue.c's zmm_exclusion_list). Rocket Lake, Sapphire
 * Rapids and later, and every AMD CPU with AVX-512 (Zen 4 on), are not on
 * it. Model numbers as in Linux's intel-family.h.
 */
static const unsigned char zmm_slow_models[] = {
	0x55, /* Skylake-X (also Cascade Lake, Cooper Lake) */
	0x6a, /* Ice Lake-X */
	0x6c, /* Ice Lake-D */
	0x7d, /* Ice Lake (client) */
	0x7e, /* Ice Lake-L */
	0x9d, /* Ice Lake NNPI */
	0x8c, /* Tiger Lake-L */
	0x8d, /* Tiger Lake */
};

/* Is this an Intel CPU whose clock drops for zmm code? @eax1: CPUID 1 EAX. */
static bool zmm_downclocks(unsigned int eax1)
{
	unsigned int a, b, c, d;
	unsigned int family = (eax1 >> 8) & 0xf, model = (eax1 >> 4) & 0xf;

	/* "GenuineIntel" in EBX, EDX, ECX of leaf 0 */
	__cpuid(0, a, b, c, d);
	if (b != 0x756e6547 || d != 0x49656e69 || c != 0x6c65746e)
		return false;
	if (family != 6)
		return false;
	model |= ((eax1 >> 16) & 0xf) << 4; /* extended model, family 6 */
	for (size_t i = 0; i < sizeof(zmm_slow_models); i++)
		if (model == zmm_slow_models[i])
			return true;
	return false;
}

static void detect(struct cpu_features *f)
{
	unsigned int a, b, c, d, max, eax1;
	unsigned long long xcr0 = 0;
	bool os_ymm, os_zmm;

	max = __get_cpuid_max(0, NULL);
	if (max < 1 || !__get_cpuid(1, &a, &b, &c, &d))
		return;
	eax1 = a;
	/* leaf 1 ECX: 1 PCLMULQDQ, 19 SSE4.1, 25 AES, 27 OSXSAVE, 28 AVX */
	bool sse41 = c & (1u << 19);
	f->aesni = (c & (1u << 25)) && sse41;
	f->pclmul = c & (1u << 1);
	if ((c & (1u << 27)) && (c & (1u << 28)))
		xcr0 = xgetbv0();
	/* XCR0: 1 SSE, 2 AVX (YMM), 5 opmask, 6 ZMM_Hi256, 7 Hi16_ZMM */
	os_ymm = (xcr0 & 0x6) == 0x6;
	os_zmm = (xcr0 & 0xe6) == 0xe6;
	if (max < 7)
		return;
	__cpuid_count(7, 0, a, b, c, d);
	/*
	 * leaf 7 EBX bit 5 AVX2, 16 AVX512F, 30 AVX512BW, 31 AVX512VL;
	 * ECX bit 9 VAES, bit 10 VPCLMULQDQ
	 */
	f->avx2 = os_ymm && (b & (1u << 5));
	f->vaes = f->avx2 && f->aesni && (c & (1u << 9));
	f->vpclmul = f->avx2 && f->pclmul && (c & (1u << 10));
	f->avx512 = f->avx2 && os_zmm && (b & (1u << 16)) &&
		    (b & (1u << 30)) && (b & (1u << 31));
	f->zmm_fast = f->avx512 && !zmm_downclocks(eax1);
}
#else
static void detect(struct cpu_features *f)
{
	(void)f;
}
#endif

/* Hide the features named in XTSFS_CPU_MASK (tests simulate old CPUs). */
static void apply_mask(struct cpu_features *f, const char *mask)
{
	static const struct {
		const char *name;
		size_t off;
	} names[] = {
		{ "aesni", offsetof(struct cpu_features, aesni) },
		{ "pclmul", offsetof(struct cpu_features, pclmul) },
		{ "avx2", offsetof(struct cpu_features, avx2) },
		{ "vaes", offsetof(struct cpu_features, vaes) },
		{ "vpclmul", offsetof(struct cpu_features, vpclmul) },
		{ "avx512", offsetof(struct cpu_features, avx512) },
		{ "zmm_fast", offsetof(struct cpu_features, zmm_fast) },
	};
	const char *p = mask;

	while (*p) {
		size_t len = strcspn(p, ",");

		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (strlen(names[i].name) == len &&
			    !strncmp(p, names[i].name, len))
				*(bool *)((char *)f + names[i].off) = false;
		p += len;
		if (*p == ',')
			p++;
	}
	/* what needs a hidden feature goes with it, as detect() has it */
	f->vaes = f->vaes && f->avx2 && f->aesni;
	f->vpclmul = f->vpclmul && f->avx2 && f->pclmul;
	f->avx512 = f->avx512 && f->avx2;
	f->zmm_fast = f->zmm_fast && f->avx512;
}

static struct cpu_features features;
static pthread_once_t features_once = PTHREAD_ONCE_INIT;

static void features_init(void)
{
	const char *mask = getenv("XTSFS_CPU_MASK");

	detect(&features);
	if (mask)
		apply_mask(&features, mask);
}

const struct cpu_features *cpu_features(void)
{
	pthread_once(&features_once, features_init);
	return &features;
}
