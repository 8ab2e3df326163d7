/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kdf.c - Argon2id through libargon2, and its calibration (see kdf.h).
 */
#include "kdf.h"
#include "monotime.h"

#include <argon2.h>
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysinfo.h>
#include <unistd.h>

/* see kdf.h */
int kdf_check_params(const struct kdf_params *p)
{
	if (p->t_cost < 1 || p->t_cost > KDF_T_MAX)
		return -EINVAL;
	if (p->lanes < 1 || p->lanes > KDF_LANES_MAX)
		return -EINVAL;
	if (p->m_cost_kib < 8 * p->lanes || p->m_cost_kib > KDF_M_MAX)
		return -EINVAL;
	return 0;
}

/*
 * libargon2's allocator callback: the working memory (m_cost KiB, up to
 * 4 GiB) holds values derived from the passphrase, so keep it out of swap
 * and core dumps. mlock() is best effort: an unprivileged user's
 * RLIMIT_MEMLOCK (often 8 MiB) is far below a calibrated cost, and
 * refusing to unlock then would be worse than memory that may be swapped,
 * so it falls back to unlocked pages; MADV_DONTDUMP applies either way.
 * Failure sets *memory to NULL, which libargon2 turns into
 * ARGON2_MEMORY_ALLOCATION_ERROR.
 */
static int kdf_mem_alloc(uint8_t **memory, size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		*memory = NULL;
		return ARGON2_MEMORY_ALLOCATION_ERROR;
	}
	(void)mlock(p, len);
	(void)madvise(p, len, MADV_DONTDUMP);
	*memory = p;
	return ARGON2_OK;
}

/*
 * libargon2 wipes the memory before this is called, but only while its
 * global FLAG_clear_internal_memory is set, which any code in the process
 * may clear: wipe again here, whatever the library did.
 */
static void kdf_mem_free(uint8_t *memory, size_t len)
{
	explicit_bzero(memory, len);
	(void)munlock(memory, len);
	(void)munmap(memory, len);
}

/* see kdf.h */
int kdf_derive(uint8_t out[KDF_OUT_SIZE], const char *pass, size_t passlen,
	       const uint8_t salt[KDF_SALT_SIZE], const struct kdf_params *p)
{
	/*
	 * What argon2id_hash_raw() does, but with our allocator. The library
	 * takes non-const pointers yet reads the passphrase and salt only
	 * (the ARGON2_FLAG_CLEAR_* flags, which would write, are not set).
	 */
	argon2_context ctx = {
		.out = out,
		.outlen = KDF_OUT_SIZE,
		.pwd = (uint8_t *)(uintptr_t)pass,
		.pwdlen = (uint32_t)passlen,
		.salt = (uint8_t *)(uintptr_t)salt,
		.saltlen = KDF_SALT_SIZE,
		.t_cost = p->t_cost,
		.m_cost = p->m_cost_kib,
		.lanes = p->lanes,
		.threads = p->lanes,
		.version = ARGON2_VERSION_13,
		.allocate_cbk = kdf_mem_alloc,
		.free_cbk = kdf_mem_free,
		.flags = ARGON2_DEFAULT_FLAGS,
	};
	int rc;

	if (kdf_check_params(p) || passlen > UINT32_MAX)
		return -EINVAL;
	rc = argon2_ctx(&ctx, Argon2_id);
	if (rc == ARGON2_OK)
		return 0;
	explicit_bzero(out, KDF_OUT_SIZE);
	return rc == ARGON2_MEMORY_ALLOCATION_ERROR ? -ENOMEM : -EINVAL;
}

static double now_ms(void)
{
	return (double)mono_ns() / 1e6;
}

/* see kdf.h */
double kdf_time_ms(const struct kdf_params *p)
{
	static const uint8_t salt[KDF_SALT_SIZE]; /* not secret: a probe */
	uint8_t out[KDF_OUT_SIZE];
	double start = now_ms();

	if (kdf_derive(out, "calibration", 11, salt, p) != 0)
		return -1;
	explicit_bzero(out, sizeof(out));
	return now_ms() - start;
}

static uint32_t default_memory_kib(void)
{
	struct sysinfo si;
	unsigned long long quarter;

	if (sysinfo(&si) != 0)
		return KDF_M_DEFAULT_MIN;
	quarter = (unsigned long long)si.totalram * si.mem_unit / 4 / 1024;
	if (quarter < KDF_M_DEFAULT_MIN)
		return KDF_M_DEFAULT_MIN;
	return quarter > KDF_M_DEFAULT_MAX ? KDF_M_DEFAULT_MAX
					   : (uint32_t)quarter;
}

/* see kdf.h */
int kdf_calibrate(struct kdf_params *p, unsigned int target_ms)
{
	struct kdf_params probe;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	bool fixed_t = p->t_cost != 0, fixed_m = p->m_cost_kib != 0;
	double ms, per_pass;

	if (!p->lanes)
		p->lanes = cpus < 1 ? 1 : cpus > 4 ? 4 : (uint32_t)cpus;
	if (fixed_t && fixed_m)
		return kdf_check_params(p);
	if (!target_ms)
		target_ms = 1;
	/*
	 * One pass at the largest memory we would use; Argon2 time is close
	 * to linear in t_cost * m_cost, so one probe predicts the rest.
	 */
	probe.lanes = p->lanes;
	probe.m_cost_kib = fixed_m ? p->m_cost_kib : default_memory_kib();
	probe.t_cost = 1;
	if (kdf_check_params(&probe))
		return -EINVAL;
	ms = kdf_time_ms(&probe);
	if (ms < 0)
		return -ENOMEM;
	per_pass = ms > 0.01 ? ms : 0.01;

	if (fixed_t) {
		/* scale memory so t_cost passes fit the target */
		double m = probe.m_cost_kib * target_ms /
			   (per_pass * p->t_cost);

		if (m > probe.m_cost_kib)
			m = probe.m_cost_kib;
		if (m < KDF_M_DEFAULT_MIN)
			m = KDF_M_DEFAULT_MIN;
		p->m_cost_kib = (uint32_t)m;
	} else if (fixed_m || per_pass * KDF_T_CALIBRATED_MIN <= target_ms) {
		double t = target_ms / per_pass;

		p->m_cost_kib = probe.m_cost_kib;
		p->t_cost = t < 1 ? 1 : t > KDF_T_MAX ? KDF_T_MAX : (uint32_t)t;
		if (!fixed_m && p->t_cost < KDF_T_CALIBRATED_MIN)
			p->t_cost = KDF_T_CALIBRATED_MIN;
	} else {
		/* too slow for the minimum iterations: use less memory */
		double m = probe.m_cost_kib * target_ms /
			   (per_pass * KDF_T_CALIBRATED_MIN);

		p->t_cost = KDF_T_CALIBRATED_MIN;
		p->m_cost_kib = m < KDF_M_DEFAULT_MIN ? KDF_M_DEFAULT_MIN
						      : (uint32_t)m;
	}
	return kdf_check_params(p);
}

/* see kdf.h */
int kdf_machine_limits(struct kdf_limits *l)
{
	const struct kdf_params probe = {
		.t_cost = 1, .m_cost_kib = KDF_PROBE_KIB, .lanes = 1,
	};
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	struct sysinfo si;
	double ms;

	/*
	 * Half of RAM: mkfs calibrates to at most a quarter (kdf_calibrate),
	 * so a volume made on a machine with half this RAM still opens;
	 * beyond half, one derivation pushes the rest of the system into
	 * swap or the OOM killer.
	 */
	if (sysinfo(&si) == 0 && si.totalram)
		l->mem_kib = (uint64_t)si.totalram * si.mem_unit / 1024 / 2;
	else
		l->mem_kib = UINT64_MAX; /* unknown: judge by time alone */
	l->cpus = cpus < 1 ? 1 : (uint32_t)cpus;
	l->max_ms = (double)KDF_COSTLY_FACTOR * KDF_UNLOCK_MS_DEFAULT;
	ms = kdf_time_ms(&probe);
	if (ms < 0)
		return -ENOMEM;
	/* a clock too coarse for the probe must not make everything free */
	l->ms_per_kib_pass = (ms > 0.01 ? ms : 0.01) / probe.m_cost_kib;
	return 0;
}

/* see kdf.h */
double kdf_estimate_ms(const struct kdf_params *p, const struct kdf_limits *l)
{
	uint32_t par = p->lanes < l->cpus ? p->lanes : l->cpus;

	if (par < 1)
		par = 1;
	return (double)p->t_cost * p->m_cost_kib * l->ms_per_kib_pass / par;
}

/* see kdf.h */
bool kdf_cost_affordable(const struct kdf_params *p,
			 const struct kdf_limits *l)
{
	return p->m_cost_kib <= l->mem_kib &&
	       kdf_estimate_ms(p, l) <= l->max_ms;
}
