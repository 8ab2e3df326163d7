/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kdf.h - passphrase to key-encryption key: Argon2id (RFC 9106, version
 * 0x13) through the reference libargon2, with bounds on its parameters
 * and a calibration to a target unlock time on this machine.
 */
#ifndef XTSFS_KDF_H
#define XTSFS_KDF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KDF_SALT_SIZE 32          /* bytes of random salt per key slot */
#define KDF_OUT_SIZE 32           /* bytes of output: an AES-256 KEK */
#define KDF_T_MAX 1000            /* iterations */
#define KDF_M_MAX (4u << 20)      /* KiB: 4 GiB, cryptsetup's ceiling */
#define KDF_LANES_MAX 16          /* parallelism */
#define KDF_M_DEFAULT_MIN (64u << 10)   /* KiB: calibration floor, 64 MiB */
#define KDF_M_DEFAULT_MAX (1u << 20)    /* KiB: calibration ceiling, 1 GiB */
#define KDF_T_CALIBRATED_MIN 3    /* RFC 9106 second recommended option */
#define KDF_UNLOCK_MS_DEFAULT 1000 /* the tools' calibration target */
/*
 * A slot is too costly to try unauthenticated when its estimated time
 * here is above this many times the default target (100 s). Generous on
 * purpose: a volume calibrated to 1 s on a machine ten times faster per
 * lane, estimated by a probe slowed two or three times by a busy machine,
 * is about 30 s; a few-second --unlock-time on a faster machine still
 * fits. What it stops are the hours of t = 1000 at 4 GiB.
 */
#define KDF_COSTLY_FACTOR 100
#define KDF_PROBE_KIB (8u << 10)  /* the speed probe: 8 MiB, one pass */

/* struct kdf_params - the cost of one Argon2id derivation. */
struct kdf_params {
	uint32_t t_cost;      /* iterations (passes over memory), >= 1 */
	uint32_t m_cost_kib;  /* memory in KiB, >= 8 * lanes */
	uint32_t lanes;       /* parallelism (and threads), >= 1 */
};

/*
 * kdf_check_params() - whether @p is within the bounds above. Called on
 * every header before any derivation, so that a hostile header cannot
 * make us allocate or compute without bound.
 * Return: 0 or -EINVAL.
 */
int kdf_check_params(const struct kdf_params *p);

/*
 * kdf_derive() - Argon2id(@pass, @salt, @p) into @out (KDF_OUT_SIZE).
 * @out should be locked memory. The working memory (m_cost_kib) is
 * mmap()ed, mlock()ed if RLIMIT_MEMLOCK allows (else left unlocked),
 * MADV_DONTDUMP, and wiped and unmapped before this returns.
 * Return: 0; -EINVAL for bad parameters; -ENOMEM.
 */
int kdf_derive(uint8_t out[KDF_OUT_SIZE], const char *pass, size_t passlen,
	       const uint8_t salt[KDF_SALT_SIZE], const struct kdf_params *p);

/*
 * kdf_calibrate() - choose the Argon2id cost for this machine.
 * @p:         in: fields the user fixed (non-zero); out: the full choice
 * @target_ms: wanted unlock time
 * If t_cost and m_cost_kib are both set, nothing is measured. Otherwise
 * lanes default to min(4, online CPUs), memory to min(1 GiB, RAM / 4)
 * lowered (not below 64 MiB) until at least KDF_T_CALIBRATED_MIN
 * iterations fit in the target, and t_cost to what fits in the target.
 * A user-given value is never changed.
 * Return: 0; -EINVAL if the fixed values are out of bounds; -ENOMEM.
 */
int kdf_calibrate(struct kdf_params *p, unsigned int target_ms);

/*
 * kdf_time_ms() - wall time of one derivation with @p, in milliseconds
 * (a throw-away passphrase and salt). Return: >= 0, or -1 on error.
 */
double kdf_time_ms(const struct kdf_params *p);

/*
 * struct kdf_limits - the most Argon2id cost this machine pays for a key
 * slot read from a header that is not authenticated yet (its CRC is not
 * keyed: anyone who can write the cipher directory can set the costs).
 */
struct kdf_limits {
	uint64_t mem_kib;        /* most memory: half of physical RAM */
	double max_ms;           /* most estimated time of one derivation */
	double ms_per_kib_pass;  /* measured: one lane, one pass, per KiB */
	uint32_t cpus;           /* online CPUs: lanes beyond run in turn */
};

/*
 * kdf_machine_limits() - measure this machine: one KDF_PROBE_KIB
 * derivation (a few tens of ms) for the speed, sysinfo(2) for the RAM
 * (mem_kib is UINT64_MAX if unknown), online CPUs; max_ms is
 * KDF_COSTLY_FACTOR * KDF_UNLOCK_MS_DEFAULT.
 * Return: 0; -ENOMEM the probe could not run.
 */
int kdf_machine_limits(struct kdf_limits *l);

/*
 * kdf_estimate_ms() - predicted time of one derivation with @p under @l:
 * Argon2 time is close to linear in t_cost * m_cost, and lanes run in
 * parallel on at most l->cpus CPUs. Pure: no measurement.
 */
double kdf_estimate_ms(const struct kdf_params *p, const struct kdf_limits *l);

/*
 * kdf_cost_affordable() - whether @p stays within @l: memory at most
 * l->mem_kib and kdf_estimate_ms() at most l->max_ms. Pure.
 */
bool kdf_cost_affordable(const struct kdf_params *p,
			 const struct kdf_limits *l);

#endif /* XTSFS_KDF_H */
