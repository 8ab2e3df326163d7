/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kdf.h - passphrase to key-encryption key: Argon2id (RFC 9106, version
 * 0x13) through the reference libargon2, with bounds on its parameters
 * and a calibration to a target unlock time on this machine.
 */
#ifndef XTSFS_KDF_H
#define XTSFS_KDF_H

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

#endif /* XTSFS_KDF_H */
