/* SPDX-License-Identifier: Apache-2.0 */
/*
 * keywrap.h - AES key wrap, RFC 3394 (NIST SP 800-38F "KW", the W/W^-1
 * functions with the default initial value A6A6A6A6A6A6A6A6), with a
 * 256-bit key-encryption key only.
 *
 * The volume header stores the contents keys wrapped under a KEK derived
 * from the passphrase; the 64-bit integrity check is what tells a wrong
 * passphrase (or a damaged header) from a right one. The cipher is the
 * constant-time software AES (aes_ct.h), so no table lookup ever depends
 * on the KEK or on the key data.
 */
#ifndef XTSFS_KEYWRAP_H
#define XTSFS_KEYWRAP_H

#include <stddef.h>
#include <stdint.h>

#define AES_KW_KEK_SIZE 32
/* the integrity check value: wrapped = unwrapped + this many bytes */
#define AES_KW_OVERHEAD 8
/* bounds on the key data (plaintext) length; it must be a multiple of 8 */
#define AES_KW_MIN_LEN 16
#define AES_KW_MAX_LEN 4096

/*
 * aes_kw_wrap() - wrap key data under a KEK (RFC 3394 section 2.2.1).
 * @dst: @len + 8 bytes of output: the check semiblock, then the rest.
 * @src: the key data, @len bytes. @dst and @src may overlap (the data is
 *       copied to @dst before it is processed), so in-place use with
 *       @dst == @src and room for 8 more bytes is fine.
 * @len: a multiple of 8 with AES_KW_MIN_LEN <= @len <= AES_KW_MAX_LEN.
 * @kek: the 32-byte key-encryption key.
 *
 * Deterministic: the same key data under the same KEK always wraps to the
 * same bytes, which is fine for keys (uniformly random) and for nothing
 * else. The expanded KEK and every intermediate block are wiped.
 *
 * Return: 0, or -EINVAL for a bad length or a NULL pointer (then @dst is
 * not written).
 */
int aes_kw_wrap(uint8_t *dst, const uint8_t *src, size_t len,
		const uint8_t kek[32])
	__attribute__((warn_unused_result));

/*
 * aes_kw_unwrap() - unwrap and verify (RFC 3394 section 2.2.2 and 2.2.3).
 * @dst: @len - 8 bytes of output: the key data.
 * @src: the wrapped blob, @len bytes. May overlap @dst, as for wrap.
 * @len: a multiple of 8 with AES_KW_MIN_LEN + 8 <= @len <=
 *       AES_KW_MAX_LEN + 8.
 * @kek: the 32-byte key-encryption key.
 *
 * The recovered check value is compared with A6A6A6A6A6A6A6A6 in constant
 * time. On a mismatch (wrong KEK, or any bit of @src changed) all of @dst
 * is wiped with explicit_bzero() before returning (in place, that is the
 * blob itself), so a caller that ignores the return value finds zeros,
 * never a half-recovered key.
 *
 * Return: 0; -EINVAL for a bad length or a NULL pointer (@dst not
 * written); -EBADMSG if the integrity check failed (@dst wiped).
 */
int aes_kw_unwrap(uint8_t *dst, const uint8_t *src, size_t len,
		  const uint8_t kek[32])
	__attribute__((warn_unused_result));

#endif /* XTSFS_KEYWRAP_H */
