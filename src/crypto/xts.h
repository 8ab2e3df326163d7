/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xts.h - the AES-256-XTS cipher layer: one interface, several cores.
 *
 * This is the only crypto header the rest of xtsfs includes for file
 * contents. A *core* (struct xts_backend) is a table of functions that
 * implement IEEE Std 1619-2018 XTS-AES-256 on one class of CPU:
 *   "software"  portable C, bitsliced, constant-time (xts_soft.c)
 *   "aesni"     AES-NI + SSE, 12 blocks in flight (xts_aesni.c)
 *   "vaes"      VAES + VPCLMULQDQ + AVX2, 2 blocks per ymm (xts_vaes.c)
 *   "zmm"       VAES + VPCLMULQDQ + AVX-512, 4 blocks per zmm (xts_zmm.c)
 * The dispatcher (xts.c) is the only place that validates arguments and
 * picks a core; cores trust their callers completely.
 *
 * Terms (see doc/FORMAT.md section "Contents"):
 *   key        64 bytes: Key1 (bytes 0..31, encrypts data) || Key2
 *              (bytes 32..63, encrypts the tweak). Key1 != Key2.
 *   data unit  the XTS unit; a file's unit i is plaintext bytes
 *              [4096 i, 4096 i + 4096). Full units are XTSFS_UNIT_SIZE.
 *   tweak_in   the 16-byte tweak *input* (IEEE 1619 "i", OpenSSL "IV"),
 *              encrypted with Key2 to give the initial tweak T.
 *   file id    16 random bytes per file. The tweak input of unit u of a
 *              file is  id XOR (LE64(u) || 0^64): the unit index, as a
 *              little-endian 64-bit integer, XORed into bytes 0..7.
 */
#ifndef XTSFS_XTS_H
#define XTSFS_XTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define XTS_KEY_SIZE 64          /* bytes: two AES-256 keys */
#define XTS_ID_SIZE 16           /* bytes: a file identity */
#define XTS_BLOCK_SIZE 16        /* bytes: one AES block */
#define XTSFS_UNIT_SIZE 4096     /* bytes: one full data unit */
#define XTS_MAX_UNIT_LEN (16u << 20) /* IEEE 1619: at most 2^20 blocks */
#define XTS_CTX_STATE_SIZE 2048  /* bytes reserved for a core's keys */

struct xts_ctx;

/*
 * struct xts_backend - one XTS-AES-256 core.
 *
 * A core keeps its expanded keys in ctx->state (XTS_CTX_STATE_SIZE bytes,
 * 64-byte aligned) and owns no pointers, so wiping the context wipes every
 * secret. None of the functions below validate anything.
 *
 * Buffers: src and dst may be the same pointer (in place) or not overlap
 * at all; partial overlap is not allowed. No alignment is required.
 */
struct xts_backend {
	/*
	 * "software", "aesni", "vaes" or "zmm": the value of
	 * XTSFS_CIPHER/--cipher
	 */
	const char *name;
	/* one line for users: the CPU features the core needs */
	const char *requires;
	/* true if this CPU *and* OS can run the core (CPUID, XGETBV) */
	bool (*probe)(void);
	/*
	 * NULL, or false where the core runs (probe passed) but "auto"
	 * must pass it over for the next one in xts_backends[]: zmm on
	 * CPUs that lower their clock for 512-bit vectors. A forced core
	 * ignores it.
	 */
	bool (*preferred)(void);
	/*
	 * Expand @key (Key1 || Key2, 64 bytes) into ctx->state. The caller
	 * has checked that the halves differ.
	 */
	void (*setkey)(struct xts_ctx *ctx, const uint8_t key[XTS_KEY_SIZE]);
	/*
	 * Encrypt @nunits consecutive full data units (4096 bytes each) of
	 * the file @id, the first being unit @first_unit: unit k of the
	 * buffer uses tweak_in = id XOR LE64(first_unit + k). @nunits >= 1;
	 * first_unit + nunits does not overflow.
	 */
	void (*encrypt_units)(const struct xts_ctx *ctx, uint8_t *dst,
			      const uint8_t *src, size_t nunits,
			      const uint8_t id[XTS_ID_SIZE], uint64_t first_unit);
	/* the inverse of encrypt_units, same contract */
	void (*decrypt_units)(const struct xts_ctx *ctx, uint8_t *dst,
			      const uint8_t *src, size_t nunits,
			      const uint8_t id[XTS_ID_SIZE], uint64_t first_unit);
	/*
	 * Encrypt one data unit of @len bytes, 16 <= len <= XTS_MAX_UNIT_LEN,
	 * under the raw 16-byte tweak input @tweak_in, with IEEE 1619
	 * ciphertext stealing when len is not a multiple of 16.
	 */
	void (*encrypt_one)(const struct xts_ctx *ctx, uint8_t *dst,
			    const uint8_t *src, size_t len,
			    const uint8_t tweak_in[XTS_BLOCK_SIZE]);
	/* the inverse of encrypt_one, same contract */
	void (*decrypt_one)(const struct xts_ctx *ctx, uint8_t *dst,
			    const uint8_t *src, size_t len,
			    const uint8_t tweak_in[XTS_BLOCK_SIZE]);
};

/*
 * struct xts_ctx - a keyed core. Lives in locked memory (secmem.c) and is
 * wiped by xts_ctx_free(). Cores cast @state to their own key struct and
 * pin its size with _Static_assert(sizeof(...) <= XTS_CTX_STATE_SIZE).
 */
struct xts_ctx {
	const struct xts_backend *be;    /* the core that set the key */
	_Alignas(64) unsigned char state[XTS_CTX_STATE_SIZE]; /* its keys */
};

/* The cores. A core's table exists on every build; its probe says if it runs. */
extern const struct xts_backend xts_backend_software;
extern const struct xts_backend xts_backend_aesni;
extern const struct xts_backend xts_backend_vaes;
extern const struct xts_backend xts_backend_zmm;

/*
 * xts_backends - every core, fastest first, NULL-terminated.
 */
extern const struct xts_backend *const xts_backends[];

/*
 * xts_backend_find() - the core called @name, or NULL if there is none.
 */
const struct xts_backend *xts_backend_find(const char *name);

/*
 * xts_choose() - pick the core to use and self-test it.
 * @want: a core name, "auto" or NULL. NULL means: the XTSFS_CIPHER
 *        environment variable if set and not empty, else "auto".
 *        "auto" is the first core in xts_backends[] whose probe passes
 *        and that is preferred on this CPU (see struct xts_backend).
 * @out:  the chosen core.
 *
 * A forced core that this CPU cannot run is an error, never a silent
 * fallback. The chosen core must pass its known-answer self-test
 * (xts_selftest()) before it is returned.
 *
 * Return: 0; -ENOENT for an unknown name; -ENOTSUP if the CPU or OS
 * cannot run it; -EIO if its self-test failed. xts_choose_error()
 * describes the last failure in one line for the user.
 */
int xts_choose(const char *want, const struct xts_backend **out)
	__attribute__((warn_unused_result));
const char *xts_choose_error(void);

/*
 * xts_selftest() - known-answer test of @be (IEEE 1619 vectors, including
 * ciphertext stealing, and one multi-unit call against unit-by-unit
 * results). Uses only fixed public test keys. Return: 0 or -EIO.
 */
int xts_selftest(const struct xts_backend *be)
	__attribute__((warn_unused_result));

/*
 * xts_ctx_new() - a keyed context in locked memory.
 * @key: Key1 || Key2. The two halves must differ (IEEE 1619-2018 5.1,
 *       FIPS 140 IG C.I); they are compared in constant time.
 * Return: 0; -EINVAL for equal halves; -ENOMEM.
 */
int xts_ctx_new(struct xts_ctx **out, const struct xts_backend *be,
		const uint8_t key[XTS_KEY_SIZE])
	__attribute__((warn_unused_result));

/* xts_ctx_free() - wipe and free @ctx; NULL is allowed. */
void xts_ctx_free(struct xts_ctx *ctx);

/*
 * xts_encrypt_units() / xts_decrypt_units() - @nunits full 4096-byte
 * units of file @id starting at unit @first_unit. nunits == 0 is a no-op.
 * Return: 0; -EINVAL if first_unit + nunits overflows 2^64.
 */
int xts_encrypt_units(const struct xts_ctx *ctx, uint8_t *dst,
		      const uint8_t *src, size_t nunits,
		      const uint8_t id[XTS_ID_SIZE], uint64_t first_unit)
	__attribute__((warn_unused_result));
int xts_decrypt_units(const struct xts_ctx *ctx, uint8_t *dst,
		      const uint8_t *src, size_t nunits,
		      const uint8_t id[XTS_ID_SIZE], uint64_t first_unit)
	__attribute__((warn_unused_result));

/*
 * xts_encrypt_one() / xts_decrypt_one() - one data unit of @len bytes
 * under the raw tweak input @tweak_in, with ciphertext stealing.
 * Return: 0; -EINVAL if len < 16 or len > XTS_MAX_UNIT_LEN.
 */
int xts_encrypt_one(const struct xts_ctx *ctx, uint8_t *dst,
		    const uint8_t *src, size_t len,
		    const uint8_t tweak_in[XTS_BLOCK_SIZE])
	__attribute__((warn_unused_result));
int xts_decrypt_one(const struct xts_ctx *ctx, uint8_t *dst,
		    const uint8_t *src, size_t len,
		    const uint8_t tweak_in[XTS_BLOCK_SIZE])
	__attribute__((warn_unused_result));

/*
 * xts_unit_tweak() - the tweak input of unit @unit of file @id:
 * id XOR (LE64(unit) || 0^64). Shared by every core and by the tests.
 */
static inline void xts_unit_tweak(uint8_t dst[XTS_BLOCK_SIZE],
				  const uint8_t id[XTS_ID_SIZE], uint64_t unit)
{
	for (int b = 0; b < 8; b++)
		dst[b] = id[b] ^ (uint8_t)(unit >> (8 * b));
	for (int b = 8; b < 16; b++)
		dst[b] = id[b];
}

#endif /* XTSFS_XTS_H */
