/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xattr.h - the extended-attribute codec of doc/FORMAT.md section 6:
 * plaintext xattr names and values <-> the names and values stored on
 * the lower object. Pure computation, no I/O and no FUSE types: the
 * getxattr/setxattr/listxattr/removexattr handlers call these around
 * their calls on the lower object.
 *
 * Only the user.* and trusted.* namespaces are encrypted. A name keeps
 * its namespace on the lower object, so the lower filesystem applies its
 * own rules unchanged (user.* only on regular files and directories,
 * trusted.* only with CAP_SYS_ADMIN, its own size limits):
 *
 *   user.NAME  ->  user.xtsfs.<base64url(V || C)>
 *   V || C     =   AES-SIV(names key, AD = ["xtsfs-xattr-name", "user."],
 *                          NAME zero-padded as names are, FORMAT 4.1)
 *
 * and a value is stored as the raw AES-SIV output V || C (16 bytes more
 * than the plaintext) with AD = ["xtsfs-xattr-value", the lower name].
 * Both are deterministic (an unchanged xattr keeps its stored bytes, for
 * rsync) and independent of the object they are on (see SECURITY.md).
 * security.* and system.* (SELinux labels, capabilities, POSIX ACLs) are
 * the caller's to decide: xattr_namespace() classifies a name, and the
 * list functions copy the namespaces the caller asks for as they are.
 *
 * The names key is needed even on a plaintext-names volume (whose
 * daemon has no names context for entry names): xattr names and values
 * are encrypted on every volume, so the caller makes a names_ctx from
 * the key blob's names key for this codec alone in that case.
 *
 * Plaintext names and values are secret: every temporary copy made here
 * is wiped, and outputs are zeroed when a call fails.
 */
#ifndef XTSFS_XATTR_H
#define XTSFS_XATTR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "names.h"

/* the Linux limits (linux/limits.h), which the encoding must fit in */
#define XTSFS_XATTR_KERNEL_NAME_MAX 255   /* XATTR_NAME_MAX */
#define XTSFS_XATTR_KERNEL_SIZE_MAX 65536 /* XATTR_SIZE_MAX */
#define XTSFS_XATTR_KERNEL_LIST_MAX 65536 /* XATTR_LIST_MAX */

/* what follows the namespace prefix of every stored name we make */
#define XTSFS_XATTR_MARKER "xtsfs."
/* the first AD component of names (16 bytes) and of values (17 bytes) */
#define XTSFS_XATTR_NAME_AD "xtsfs-xattr-name"
#define XTSFS_XATTR_VALUE_AD "xtsfs-xattr-value"

/*
 * The longest plaintext name after its namespace prefix: 160 bytes pad
 * to 160, and "trusted." "xtsfs." + base64url(16 + 160 bytes) is 8 + 6 +
 * 235 = 249 characters, within 255; 161 bytes pad to 176, which would
 * need 8 + 6 + 256 = 270. (user.* could reach no further: 5 + 6 + 256 is
 * 267.) Longer names are refused with ERANGE, the kernel's answer to a
 * name over XATTR_NAME_MAX.
 */
#define XTSFS_XATTR_SUFFIX_MAX 160
/* the longest whole plaintext names: "user." + 160, "trusted." + 160 */
#define XTSFS_XATTR_USER_NAME_MAX 165
#define XTSFS_XATTR_TRUSTED_NAME_MAX 168
/* the longest stored names: "user.xtsfs." + 235, "trusted.xtsfs." + 235 */
#define XTSFS_XATTR_USER_LOWER_MAX 246
#define XTSFS_XATTR_TRUSTED_LOWER_MAX 249
/* room for any plaintext or stored name this codec takes or gives, + NUL */
#define XTSFS_XATTR_NAME_BUF 256

/*
 * A stored value is the plaintext value and 16 bytes (V); the lower
 * value can be XATTR_SIZE_MAX bytes, so the plaintext can be 65520.
 * Larger values are refused with E2BIG, as the kernel refuses a value
 * over XATTR_SIZE_MAX. The lower filesystem may allow less (ext4 keeps
 * all of an inode's xattrs in about one block): its ENOSPC or E2BIG for
 * the stored value is the answer then.
 */
#define XTSFS_XATTR_VALUE_OVERHEAD 16
#define XTSFS_XATTR_VALUE_MAX                                                  \
	(XTSFS_XATTR_KERNEL_SIZE_MAX - XTSFS_XATTR_VALUE_OVERHEAD)

/*
 * enum xattr_ns - the namespace of an xattr name, from its prefix.
 * @XATTR_NS_OTHER:    none Linux knows (it answers EOPNOTSUPP for those).
 * @XATTR_NS_USER:     "user.": encrypted here.
 * @XATTR_NS_TRUSTED:  "trusted.": encrypted here.
 * @XATTR_NS_SECURITY: "security.": the caller decides.
 * @XATTR_NS_SYSTEM:   "system." (POSIX ACLs): the caller decides.
 */
enum xattr_ns {
	XATTR_NS_OTHER = 0,
	XATTR_NS_USER,
	XATTR_NS_TRUSTED,
	XATTR_NS_SECURITY,
	XATTR_NS_SYSTEM,
};

/* the bit of @ns in the @pass masks of the list functions */
#define XATTR_NS_BIT(ns) (1u << (ns))

/*
 * xattr_namespace() - the namespace a name's prefix puts it in. Only
 * the prefix counts: "user." alone is XATTR_NS_USER (and refused by
 * xattr_name_enc()). Works on plaintext and stored names alike.
 * @name: NUL-terminated.
 */
enum xattr_ns xattr_namespace(const char *name);

/*
 * xattr_ns_encrypted() - true for the namespaces this codec encrypts,
 * user and trusted.
 */
bool xattr_ns_encrypted(enum xattr_ns ns);

/*
 * xattr_lower_is_ours() - true if a stored name is one xattr_name_enc()
 * could have made: "user.xtsfs." or "trusted.xtsfs." and more. Such a
 * name that xattr_name_dec() refuses is damaged or from another volume.
 * @lower: NUL-terminated.
 */
bool xattr_lower_is_ours(const char *lower);

/*
 * xattr_name_enc() - the stored name of a plaintext xattr name.
 * @ctx:   the names key.
 * @name:  the plaintext name, NUL-terminated: "user.*" or "trusted.*".
 * @lower: the stored name, NUL-terminated (output; zeroed on failure).
 *
 * Deterministic: the same name gives the same stored name on every
 * object of the volume, so setxattr's XATTR_CREATE/XATTR_REPLACE,
 * removexattr and ENODATA work on the lower object as they are.
 *
 * Return: 0; -EOPNOTSUPP for a name in no encrypted namespace (the
 * caller handles security.* and system.* itself, and Linux refuses
 * other names so); -EINVAL for a bare prefix ("user."), as Linux
 * refuses it; -ERANGE for a name of more than XTSFS_XATTR_SUFFIX_MAX
 * bytes after its prefix (longer than 255 bytes included).
 */
int xattr_name_enc(const struct names_ctx *ctx, const char *name,
		   char lower[XTSFS_XATTR_NAME_BUF]);

/*
 * xattr_name_dec() - the plaintext name of a stored xattr name, as
 * listxattr on the lower object gives them.
 * @ctx:   the names key.
 * @lower: the stored name, NUL-terminated, any length.
 * @name:  the plaintext name, NUL-terminated (output; zeroed unless 0
 *         is returned).
 *
 * Strict, as names_decrypt() is: only the exact stored form
 * xattr_name_enc() makes decrypts (canonical base64url, minimal
 * padding, the namespace it was made in), so listxattr never shows a
 * name that getxattr of it would not find.
 *
 * Return: 0; 1 for a name that is not ours (no "xtsfs." marker after
 * user. or trusted., or another namespace): skip it, or for security.*
 * and system.* decide; -EBADMSG for one that has the marker but does not
 * decode, authenticate or unpad (damaged, or from another volume): skip
 * it and log.
 */
int xattr_name_dec(const struct names_ctx *ctx, const char *lower,
		   char name[XTSFS_XATTR_NAME_BUF]);

/*
 * xattr_value_enc() - the stored value of a plaintext value.
 * @ctx:     the names key.
 * @lower:   the stored name the value goes under (from xattr_name_enc()),
 *           NUL-terminated: the value is bound to it.
 * @val:     @len bytes; NULL is allowed when @len is 0.
 * @len:     0..XTSFS_XATTR_VALUE_MAX.
 * @out:     @len + 16 bytes of output, V || C. Must not overlap @val.
 * @outsize: room at @out.
 *
 * Return: @len + 16; -E2BIG if @len > XTSFS_XATTR_VALUE_MAX; -ERANGE if
 * @outsize < @len + 16 (nothing written then).
 */
ssize_t xattr_value_enc(const struct names_ctx *ctx, const char *lower,
			const void *val, size_t len, void *out, size_t outsize);

/*
 * xattr_value_dec() - the plaintext of a stored value, with getxattr's
 * size rules, so that a handler can pass the caller's buffer and size
 * straight through.
 * @ctx:     the names key.
 * @lower:   the stored name the value was read from, NUL-terminated.
 * @in:      the stored value, @inlen bytes.
 * @inlen:   its length.
 * @out:     the plaintext, @inlen - 16 bytes (output; all @outsize
 *           bytes zeroed on failure); may be NULL when @outsize is 0.
 *           Must not overlap @in.
 * @outsize: room at @out; 0 asks for the size only (getxattr's probe).
 *
 * The size probe decrypts too (into memory of its own, wiped), so a
 * damaged value gives EIO to the probe as to the read. A buffer too
 * small gives ERANGE before anything is decrypted: sizes are public.
 *
 * Return: the plaintext length, @inlen - 16; -EIO if @inlen is below 16
 * or above XTSFS_XATTR_KERNEL_SIZE_MAX, or the value does not
 * authenticate under this name (damaged, moved from another name, or
 * from another volume); -ERANGE if 0 < @outsize < @inlen - 16; -ENOMEM
 * (a probe only) if there is no memory to decrypt into.
 */
ssize_t xattr_value_dec(const struct names_ctx *ctx, const char *lower,
			const void *in, size_t inlen, void *out,
			size_t outsize);

/*
 * struct xattr_list_stats - what a list conversion left out, so that the
 * caller can log once per call rather than once per name.
 * @foreign: xattr_list_dec(): user.* and trusted.* names without the
 *           marker (set on the cipher directory by someone else).
 * @corrupt: xattr_list_dec(): names with the marker that do not decrypt
 *           (xattr_name_dec() gave -EBADMSG): worth a log line.
 * @toolong: xattr_list_enc(): user.* and trusted.* names that have no
 *           stored form (longer than XTSFS_XATTR_SUFFIX_MAX after the
 *           prefix, or a bare prefix).
 * Names of namespaces not passed are dropped without being counted.
 */
struct xattr_list_stats {
	size_t foreign;
	size_t corrupt;
	size_t toolong;
};

/*
 * xattr_list_dec() - the plaintext list of a lower listxattr result,
 * with listxattr's size rules.
 * @ctx:      the names key.
 * @lower:    the lower list: names, each NUL-terminated, back to back.
 * @lowerlen: its length in bytes (0: no names).
 * @out:      the plaintext list in the same form (output; zeroed if
 *            -ERANGE); may be NULL when @outsize is 0.
 * @outsize:  room at @out; 0 asks for the size only (listxattr's probe).
 * @pass:     XATTR_NS_BIT()s of the namespaces whose names are copied as
 *            they are (e.g. security and system, if the caller passes
 *            those through); user and trusted bits are ignored: those
 *            names are always decrypted, and shown only if they decrypt.
 * @st:       what was left out (output; may be NULL).
 *
 * The lower order is kept. The plaintext list is never longer than the
 * lower one (each stored name is longer than its plaintext), so it fits
 * in XATTR_LIST_MAX whenever the lower list did; and the probe's answer
 * is exact: a call with that much room succeeds for the same lower list.
 *
 * Return: the length of the plaintext list; -EIO if @lower is not such
 * a list (an empty name, or a last name without its NUL), whatever the
 * room; -ERANGE if it does not fit in a non-zero @outsize.
 */
ssize_t xattr_list_dec(const struct names_ctx *ctx, const char *lower,
		       size_t lowerlen, char *out, size_t outsize,
		       unsigned pass, struct xattr_list_stats *st);

/*
 * xattr_list_enc() - the stored list of a plaintext listxattr result:
 * the inverse of xattr_list_dec(), for reverse mode's view of a
 * plaintext tree. user.* and trusted.* names are encrypted (those with
 * no stored form are left out and counted in @st->toolong), the
 * namespaces in @pass are copied, other names are dropped.
 * @plain, @plainlen: the plaintext list, as @lower of xattr_list_dec().
 * Otherwise as xattr_list_dec(). The stored list is longer than the
 * plaintext one and may exceed XATTR_LIST_MAX: the kernel then answers
 * E2BIG, as for any list that large.
 *
 * Return: the length of the stored list; -ERANGE if it does not fit in
 * a non-zero @outsize; -EIO if @plain is not a list.
 */
ssize_t xattr_list_enc(const struct names_ctx *ctx, const char *plain,
		       size_t plainlen, char *out, size_t outsize,
		       unsigned pass, struct xattr_list_stats *st);

/*
 * xattr_give() - hand @n bytes at @src to a getxattr(2) or listxattr(2)
 * caller with room @size: the count alone for a probe (@size 0),
 * -ERANGE if @size is too small, else copied to @out. Return: @n or
 * -ERANGE.
 */
ssize_t xattr_give(void *out, size_t size, const void *src, size_t n);

/*
 * xattr_list_drop() - remove the names of namespace @ns from list @list
 * (@len bytes, as listxattr gives it; the names are NUL-terminated), in
 * place. Return: the new length.
 */
size_t xattr_list_drop(char *list, size_t len, enum xattr_ns ns);

#endif /* XTSFS_XATTR_H */
