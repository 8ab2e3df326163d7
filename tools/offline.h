/* SPDX-License-Identifier: Apache-2.0 */
/*
 * offline.h - what the tools that read a volume without a mount share
 * (xtsfs-path, xtsfs-extract): the forward mount's own core (mount.h)
 * opened read-only over the cipher directory, so that they decode the
 * format with the very code the daemon uses and never write a byte of
 * it; plaintext paths walked in it; names printed safely (they are
 * whatever bytes whoever wrote the volume chose).
 */
#ifndef XTSFS_TOOLS_OFFLINE_H
#define XTSFS_TOOLS_OFFLINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "common.h"
#include "mount.h"

/* struct offline - one volume opened by a tool. */
struct offline {
	struct xmount m;           /* read-only, POSIX ACLs passed through */
	struct xts_ctx *xts;       /* contents key (locked memory) */
	struct names_ctx *names;   /* names key (locked memory) */
	bool plain_names;          /* the volume stores names as they are */
	struct caller me;          /* our uid and gid (listxattr's rule) */
};

/*
 * offline_open() - choose the cipher core, unlock @dir with @c's
 * passphrase source or volume key file (common_unlock()), make the keys
 * and set up the core read-only over it (m.readonly: no dirid is made,
 * nothing synced). Messages go to stderr prefixed with @prog.
 * Return: 0, or the exit code (XTSFS_EXIT_NOVOLUME: @dir is no
 * directory or has no header; XTSFS_EXIT_PASSPHRASE; ...).
 */
int offline_open(struct offline *o, const struct common_opts *c,
		 const char *prog, const char *dir);

/* offline_close() - tear down what offline_open() made (also on failure). */
void offline_close(struct offline *o);

/*
 * offline_component() - the next component of path @*p into @name,
 * skipping '/' runs and "." ones; *@p moves past it.
 * Return: 1 a component; 0 the end; -EINVAL ".."; -ENAMETOOLONG over
 * 255 bytes.
 */
int offline_component(const char **p, char name[256]);

/*
 * offline_append() - "/@name" appended to @path (@size bytes), or just
 * @name if @path is empty. Return: 0, or -ENAMETOOLONG (@path as it was).
 */
int offline_append(char *path, size_t size, const char *name);

/*
 * offline_quote() - @s escaped for a message or a line of text output:
 * every byte outside printable ASCII as \xHH, '\' as \\ (xlog_escape()).
 * Returns one of four rotating static buffers, so that one message can
 * quote up to four names. Not thread-safe.
 */
const char *offline_quote(const char *s);

/*
 * offline_last() - whether path rest @p (after offline_component()) has
 * no component left.
 */
bool offline_last(const char *p);

/*
 * json_field() - '"@key": "@s"' on @f, @s as a JSON string (RFC 8259):
 * '"', '\' and control characters escaped, valid UTF-8 as it is, each
 * byte of an invalid UTF-8 sequence as U+FFFD; and then, only for such
 * a string, ', "@key_b64": "..."' with its exact bytes in base64url
 * without '=' (RFC 4648 section 5). @s NULL: null.
 */
void json_field(FILE *f, const char *key, const char *s);

/* json_string() - @s as json_field() prints it. Return: valid UTF-8. */
bool json_string(FILE *f, const char *s);

/* json_b64() - the bytes of @s as json_field()'s _b64 string. */
void json_b64(FILE *f, const char *s);

/*
 * offline_strerror() - what -errno @err from the core means to someone
 * restoring: -EIO a lost dirid, -EBADMSG a name that does not decrypt,
 * else strerror().
 */
const char *offline_strerror(int err);

/* offline_type() - "file", "directory", "symlink", ... for mode @mode. */
const char *offline_type(mode_t mode);

#endif /* XTSFS_TOOLS_OFFLINE_H */
