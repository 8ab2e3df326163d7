/* SPDX-License-Identifier: Apache-2.0 */
/*
 * names.h - the name transform of doc/FORMAT.md section 4: plaintext
 * names <-> stored (lower) names, and symlink targets <-> stored targets.
 *
 * A name is zero-padded to a multiple of 16 bytes (at least 16),
 * encrypted with AES-SIV (siv.h) under the names key with the 16-byte
 * dirid of its directory as the one associated-data component, and
 * written as base64url without padding (4.1). Stored names longer than
 * 255 characters are replaced by "xtsfs.long.<base64url(V)>", the full
 * form going to a ".name" sidecar file (4.3). Symlink targets work the
 * same way with the fixed AD "xtsfs-symlink-target" and the 4095-byte
 * limit of a target instead (4.4). Every name xtsfs keeps for itself
 * starts with "xtsfs." (4.5); base64url never produces a '.'.
 *
 * Pure computation: no I/O here. The caller reads and writes dirid and
 * sidecar files.
 */
#ifndef XTSFS_NAMES_H
#define XTSFS_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NAMES_DIRID_SIZE 16
#define NAMES_DIRID_FILE "xtsfs.dirid"
/* longest stored (on-disk) name: NAME_MAX of the lower file system */
#define NAMES_STORED_MAX 255
/* buffer for the full stored name of a 255-byte name (363 chars), + NUL */
#define NAMES_FULL_MAX 400
/* buffer for the stored form of a 4095-byte target (5483 chars), + NUL */
#define NAMES_TARGET_MAX 5500

/* the prefixes of 4.3-4.5 */
#define NAMES_INTERNAL_PREFIX "xtsfs."
#define NAMES_LONG_PREFIX "xtsfs.long."
#define NAMES_LONG_SUFFIX ".name"
#define NAMES_LINK_PREFIX "xtsfs.link."

/* the single AD component of symlink targets (4.4), 20 bytes, no NUL */
#define NAMES_TARGET_AD "xtsfs-symlink-target"

/* longest plaintext name and symlink target */
#define NAMES_NAME_MAX 255
#define NAMES_TARGET_LEN_MAX 4095

/* The SIV key, in locked memory. Opaque. */
struct names_ctx;
struct siv_ad;

/*
 * names_ctx_new() - a context holding the names key.
 * @out: the new context (output); NULL on failure.
 * @key: the 64-byte names key of the volume key blob (FORMAT.md 2.4):
 *       K_mac || K_ctr.
 *
 * The expanded key lives in mlock()ed, undumpable memory (secmem_alloc()).
 * The context is read-only afterwards: any number of threads may use it.
 *
 * Return: 0, or -ENOMEM (also when the memory cannot be locked, e.g.
 * RLIMIT_MEMLOCK is too low).
 */
int names_ctx_new(struct names_ctx **out, const uint8_t key[64]);

/*
 * names_ctx_free() - wipe and free a context; NULL is allowed.
 */
void names_ctx_free(struct names_ctx *ctx);

/*
 * names_encrypt() - the stored name of a plaintext name (4.1, 4.3).
 * @ctx:     the names key.
 * @dirid:   the dirid of the directory holding the entry (4.2).
 * @name:    the plaintext name, @len bytes, need not be NUL-terminated.
 * @len:     1..255.
 * @stored:  the lower entry name, NUL-terminated (output).
 * @full:    the full stored name of 4.1, NUL-terminated (output): the
 *           content of the ".name" sidecar when *@is_long, else a copy of
 *           @stored.
 * @is_long: set if the full stored name has more than 255 characters;
 *           @stored is then "xtsfs.long.<base64url(V)>" (33 characters).
 *
 * Names of up to 160 bytes are stored inline (padded to at most 160
 * bytes, 235 characters); 161..255 bytes are long.
 *
 * Return: 0; -EINVAL for an illegal name (empty, ".", "..", containing
 * '/' or NUL); -ENAMETOOLONG if @len > 255.
 */
int names_encrypt(const struct names_ctx *ctx,
		  const uint8_t dirid[NAMES_DIRID_SIZE], const char *name,
		  size_t len, char stored[NAMES_STORED_MAX + 1],
		  char full[NAMES_FULL_MAX], bool *is_long);

/*
 * names_decrypt() - the plaintext name of a full stored name (4.1).
 * @ctx:    the names key.
 * @dirid:  the dirid of the directory the entry was found in.
 * @stored: the full stored name, @len characters, need not be
 *          NUL-terminated. Not an "xtsfs.long.*" entry name: for those the
 *          caller reads the sidecar and passes its content.
 * @len:    its length.
 * @out:    the plaintext name, NUL-terminated (output).
 * @outlen: its length, 1..255 (output).
 *
 * Strict: exactly one stored name decrypts to a given name in a given
 * directory, the one names_encrypt() makes. So the base64url must be
 * canonical (no padding, zero trailing bits) and the padding minimal
 * (fewer than 16 zero bytes, or 16 - n for an n-byte name shorter than 16).
 * Anything else would show in readdir but not be found by lookup.
 *
 * Return: 0, or -EBADMSG for anything that does not decode, authenticate
 * or unpad to a legal name (non-zero padding, a NUL inside, empty, ".",
 * "..", a '/'); then @out is zeroed.
 */
int names_decrypt(const struct names_ctx *ctx,
		  const uint8_t dirid[NAMES_DIRID_SIZE], const char *stored,
		  size_t len, char out[256], size_t *outlen);

/*
 * names_decrypt_long() - the plaintext name of a long entry (4.3).
 * @long_name: the lower entry name, "xtsfs.long.<base64url(V)>".
 * @sidecar:   the content of its sidecar, @len characters (need not be
 *             NUL-terminated): the full stored name.
 * Otherwise as names_decrypt(). The sidecar must hold the ciphertext
 * whose V the entry's name gives, and be longer than 255 characters:
 * a sidecar copied over another's (by a sync tool, by hand) is refused,
 * not shown under the other entry's inode.
 * Return: 0, or -EBADMSG (then @out is zeroed).
 */
int names_decrypt_long(const struct names_ctx *ctx,
		       const uint8_t dirid[NAMES_DIRID_SIZE],
		       const char *long_name, const char *sidecar, size_t len,
		       char out[256], size_t *outlen);

/*
 * names_is_internal() - true for lower names xtsfs keeps for itself
 * (4.5): all of them start with "xtsfs.". Such entries are never shown
 * as they are; "xtsfs.long.*" entries are shown under their decrypted
 * name (names_is_long()).
 * @lower_name: a NUL-terminated lower name.
 */
bool names_is_internal(const char *lower_name);

/*
 * names_is_dot() - true for "." and "..": a directory's own entries,
 * the same in plaintext and lower listings, never a stored name.
 * @name: a NUL-terminated name.
 */
static inline bool names_is_dot(const char *name)
{
	return name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2]));
}

/*
 * names_is_long() - true for a long-name entry (4.3): "xtsfs.long."
 * followed by exactly 22 base64url characters (a 16-byte V). False for
 * its ".name" sidecar and for anything else.
 * @lower_name: a NUL-terminated lower name.
 */
bool names_is_long(const char *lower_name);

/*
 * names_long_sidecar() - the sidecar file name of a long entry:
 * @long_name + ".name" (4.3).
 * @out:       the result, NUL-terminated (truncated, never overflowed,
 *             if @long_name is longer than 250 characters).
 * @long_name: a NUL-terminated "xtsfs.long.*" name.
 */
void names_long_sidecar(char out[NAMES_STORED_MAX + 1],
			const char *long_name);

/*
 * names_encrypt_target() - the stored form of a symlink target (4.4).
 * @ctx:     the names key.
 * @target:  the plaintext target, @len bytes (any bytes but NUL; '/' and
 *           ".." are fine), need not be NUL-terminated.
 * @len:     1..4095.
 * @stored:  the lower symlink's target, NUL-terminated (output).
 * @full:    base64url(V || C), NUL-terminated (output): the content of the
 *           "xtsfs.link.*" file when *@is_long, else a copy of @stored.
 * @is_long: set if base64url(V || C) is longer than 4095 characters
 *           (targets of 3041 bytes or more); @stored is then
 *           "xtsfs.link.<base64url(V)>" (33 characters), which is also the
 *           name of the file in the symlink's directory that holds @full.
 *
 * Return: 0; -EINVAL for an empty target or one containing NUL;
 * -ENAMETOOLONG if @len > 4095.
 */
int names_encrypt_target(const struct names_ctx *ctx, const char *target,
			 size_t len, char stored[NAMES_TARGET_MAX],
			 char full[NAMES_TARGET_MAX], bool *is_long);

/*
 * names_decrypt_target() - the plaintext of a stored target (4.4).
 * @ctx:    the names key.
 * @stored: base64url(V || C), @len characters: the lower symlink's
 *          target, or for an "xtsfs.link.*" reference the content of the
 *          file it names (the caller reads it).
 * @len:    its length.
 * @out:    the plaintext target, NUL-terminated (output).
 * @outlen: its length, 1..4095 (output).
 *
 * Return: 0, or -EBADMSG for anything that does not decode (canonically),
 * authenticate or unpad (minimal zero padding, no NUL inside, non-empty);
 * then @out is zeroed.
 */
int names_decrypt_target(const struct names_ctx *ctx, const char *stored,
			 size_t len, char out[4096], size_t *outlen);

/*
 * names_decrypt_target_ref() - the plaintext of a long target (4.4).
 * @ref:     the lower symlink's target, "xtsfs.link.<base64url(V)>".
 * @content: the content of the root's file of that name, @len characters
 *           (need not be NUL-terminated): base64url(V || C).
 * Otherwise as names_decrypt_target(). The file must hold the ciphertext
 * whose V @ref gives, and be longer than 4095 characters.
 * Return: 0, or -EBADMSG (then @out is zeroed).
 */
int names_decrypt_target_ref(const struct names_ctx *ctx, const char *ref,
			     const char *content, size_t len, char out[4096],
			     size_t *outlen);

/*
 * names_is_link_ref() - true if a lower symlink target is a reference
 * to a long-target file: "xtsfs.link." followed by exactly 22 base64url
 * characters (4.4).
 * @lower_target: the NUL-terminated lower target.
 */
bool names_is_link_ref(const char *lower_target);

/*
 * names_is_b64() - whether each of the @len bytes at @s is in the
 * base64url alphabet (A-Z a-z 0-9 - _), as every stored name's are.
 */
bool names_is_b64(const char *s, size_t len);

/*
 * names_b64_encode() - base64url (RFC 4648 section 5) without '='.
 * @out: room for (4 * @len + 2) / 3 characters and a NUL (output).
 * @in:  @len bytes; NULL is allowed when @len is 0.
 * @len: any length.
 *
 * Return: the number of characters written, not counting the NUL.
 */
size_t names_b64_encode(char *out, const uint8_t *in, size_t len);

/*
 * names_b64_decode() - the inverse of names_b64_encode(), strict.
 * @out:    the bytes (output).
 * @outmax: room at @out.
 * @in:     @len characters, need not be NUL-terminated.
 * @len:    their number.
 * @outlen: bytes written (output).
 *
 * Only the canonical encoding is accepted, so that each byte string has
 * exactly one text: no '=' and no other character outside A-Z a-z 0-9 - _,
 * no length of the form 4k + 1, and the unused low bits of the last
 * character zero.
 *
 * Return: 0; -EINVAL on bad input; -ERANGE if the result would not fit
 * in @outmax bytes (nothing is written then).
 */
int names_b64_decode(uint8_t *out, size_t outmax, const char *in,
		     size_t len, size_t *outlen);

/*
 * names_pad_len() - the padded length of 4.1 step 1: @len rounded up to
 * a multiple of 16, at least 16.
 */
size_t names_pad_len(size_t len);

/*
 * names_unpad() - the plaintext length in a decrypted buffer that was
 * padded as names_pad_len() pads.
 * @buf: @p decrypted bytes.
 * @p:   their number.
 * @max: the longest legal plaintext.
 * @len: the plaintext length (output; untouched on failure).
 *
 * The plaintext is what precedes the trailing zero bytes (a legal
 * plaintext has no NUL, so they are all padding). It must be 1..@max
 * bytes, contain no NUL, and names_pad_len() of it must be @p: the
 * padding is minimal, so each plaintext has exactly one stored form.
 *
 * Return: 0, or -EBADMSG.
 */
int names_unpad(const uint8_t *buf, size_t p, size_t max, size_t *len);

/*
 * names_siv_encrypt(), names_siv_decrypt() - aes_siv_encrypt() and
 * aes_siv_decrypt() of siv.h, with the same contracts, under the names
 * key of @ctx. For the other stored forms FORMAT.md keys with the names
 * key (xattr.c, FORMAT.md section 6), so that the key never leaves
 * names.c and its locked memory.
 */
void names_siv_encrypt(const struct names_ctx *ctx, uint8_t *out,
		       const uint8_t *in, size_t len,
		       const struct siv_ad *ad, size_t nad);
int names_siv_decrypt(const struct names_ctx *ctx, uint8_t *out,
		      const uint8_t *in, size_t len, const struct siv_ad *ad,
		      size_t nad) __attribute__((warn_unused_result));

#endif /* XTSFS_NAMES_H */
