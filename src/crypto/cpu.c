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

static void detect(struct cpu_features *f)
{
	unsigned int a, b, c, d, max;
	bool os_ymm = false;

	max = __get_cpuid_max(0, NULL);
	if (max < 1 || !__get_cpuid(1, &a, &b, &c, &d))
		return;
	/* leaf 1 ECX: 1 PCLMULQDQ, 19 SSE4.1, 25 AES, 27 OSXSAVE, 28 AVX */
	bool sse41 = c & (1u << 19);
	f->aesni = (c & (1u << 25)) && sse41;
	f->pclmul = c & (1u << 1);
	if ((c & (1u << 27)) && (c & (1u << 28)))
		os_ymm = (xgetbv0() & 0x6) == 0x6;
	if (max < 7)
		return;
	__cpuid_count(7, 0, a, b, c, d);
	/* leaf 7 EBX bit 5 AVX2; ECX bit 9 VAES, bit 10 VPCLMULQDQ */
	f->avx2 = os_ymm && (b & (1u << 5));
	f->vaes = f->avx2 && f->aesni && (c & (1u << 9));
	f->vpclmul = f->avx2 && f->pclmul && (c & (1u << 10));
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
