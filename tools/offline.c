/* SPDX-License-Identifier: Apache-2.0 */
/*
 * offline.c - a volume opened read-only by a tool, without FUSE, through
 * the forward mount's core (offline.h).
 */
#include "offline.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "names.h"
#include "volume.h"
#include "xts.h"

/* Unlock @dir into @v: 0 or the exit code (messages printed). */
static int unlock_dir(const struct common_opts *c, const char *prog,
		      const char *dir, struct vol *v)
{
	int dfd = open_cipherdir(prog, dir), rc;

	if (dfd < 0)
		return errno == ENOENT || errno == ENOTDIR ?
		       XTSFS_EXIT_NOVOLUME : XTSFS_EXIT_FAILURE;
	rc = common_unlock(c, prog, dfd, dir, -1, v);
	close(dfd);
	if (rc)
		return rc;
	/* a plaintext directory for reverse mode is no cipher directory */
	if (!strcmp(vol_file_name(&v->hdr), VOL_REVERSE_NAME)) {
		fprintf(stderr, "%s: %s is a plaintext directory for reverse "
			"mode, not a cipher directory\n", prog, dir);
		vol_close(v);
		return XTSFS_EXIT_USAGE;
	}
	return 0;
}

/* see offline.h */
int offline_open(struct offline *o, const struct common_opts *c,
		 const char *prog, const char *dir)
{
	const struct xts_backend *be;
	struct vol v = { 0 };
	int rc;

	memset(o, 0, sizeof(*o));
	o->m.root_fd = -1;
	if (xts_choose(c->cipher, &be) != 0) {
		fprintf(stderr, "%s: %s\n", prog, xts_choose_error());
		return XTSFS_EXIT_CIPHER;
	}
	rc = unlock_dir(c, prog, dir, &v);
	if (rc)
		return rc;
	rc = common_make_keys(&v, be, &o->xts, &o->names);
	o->plain_names = v.hdr.flags & VOL_FLAG_PLAINTEXT_NAMES;
	o->m.doff = VOL_DOFF(v.hdr.flags);
	vol_close(&v); /* the raw blob is no longer needed */
	if (rc) {
		fprintf(stderr, "%s: cannot set up the keys: %s\n", prog,
			strerror(-rc));
		return XTSFS_EXIT_FAILURE;
	}
	o->me.uid = geteuid();
	o->me.gid = getegid();
	o->m.xts = o->xts;
	o->m.names = o->plain_names ? NULL : o->names;
	o->m.xattr_names = o->names;
	o->m.readonly = true; /* no durable thread: nothing is ever written */
	o->m.acl = true;      /* system.posix_acl_* listed and read */
	o->m.mountpoint = dir; /* the core's log lines name the volume */
	o->m.cipherdir = dir;
	o->m.root_fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	rc = o->m.root_fd < 0 ? -errno : xm_init(&o->m);
	if (rc) {
		fprintf(stderr, "%s: %s: %s\n", prog, dir, strerror(-rc));
		return XTSFS_EXIT_FAILURE;
	}
	return 0;
}

/* see offline.h */
void offline_close(struct offline *o)
{
	if (o->m.root)
		xm_destroy(&o->m); /* closes root_fd */
	else if (o->m.root_fd >= 0)
		close(o->m.root_fd);
	o->m.root_fd = -1;
	names_ctx_free(o->names);
	xts_ctx_free(o->xts);
	o->names = NULL;
	o->xts = NULL;
}

/* see offline.h */
int offline_component(const char **p, char name[256])
{
	const char *s = *p, *e;
	size_t len;

	for (;;) {
		while (*s == '/')
			s++;
		if (!*s) {
			*p = s;
			return 0;
		}
		e = strchrnul(s, '/');
		len = (size_t)(e - s);
		*p = e;
		if (len == 1 && s[0] == '.') {
			s = e;
			continue;
		}
		if (len == 2 && s[0] == '.' && s[1] == '.')
			return -EINVAL;
		if (len > NAMES_NAME_MAX)
			return -ENAMETOOLONG;
		memcpy(name, s, len);
		name[len] = '\0';
		return 1;
	}
}

/* see offline.h */
int offline_append(char *path, size_t size, const char *name)
{
	size_t len = strlen(path), nl = strlen(name), sep = len ? 1 : 0;

	if (len + sep + nl >= size)
		return -ENAMETOOLONG;
	if (sep)
		path[len] = '/';
	memcpy(path + len + sep, name, nl + 1);
	return 0;
}

/* see offline.h */
const char *offline_quote(const char *s)
{
	static char bufs[4][4 * PATH_MAX + 1];
	static unsigned next;
	char *b = bufs[next++ % 4];

	xlog_escape(b, sizeof(bufs[0]), s);
	return b;
}

/* The length of the valid UTF-8 sequence at @s, or 0 (RFC 3629). */
static size_t utf8_len(const unsigned char *s)
{
	size_t n = s[0] < 0x80 ? 1 : s[0] >= 0xc2 && s[0] <= 0xdf ? 2 :
		   s[0] >= 0xe0 && s[0] <= 0xef ? 3 :
		   s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : 0;

	for (size_t i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	/* no overlong forms, no surrogates, nothing above U+10FFFF */
	if ((n == 3 && s[0] == 0xe0 && s[1] < 0xa0) ||
	    (n == 3 && s[0] == 0xed && s[1] >= 0xa0) ||
	    (n == 4 && s[0] == 0xf0 && s[1] < 0x90) ||
	    (n == 4 && s[0] == 0xf4 && s[1] >= 0x90))
		return 0;
	return n;
}

/* see offline.h */
bool json_string(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	bool valid = true;

	putc('"', f);
	while (*p) {
		size_t n = utf8_len(p);

		if (n == 0) {
			fputs("\\ufffd", f);
			valid = false;
			p++;
		} else if (*p == '"' || *p == '\\') {
			fprintf(f, "\\%c", *p++);
		} else if (*p < 0x20) {
			fprintf(f, "\\u%04x", *p++);
		} else {
			fwrite(p, 1, n, f);
			p += n;
		}
	}
	putc('"', f);
	return valid;
}

/* see offline.h */
void json_b64(FILE *f, const char *s)
{
	size_t len = strlen(s);
	char *b = malloc((4 * len + 2) / 3 + 1);

	if (!b) {
		fputs("null", f);
		return;
	}
	names_b64_encode(b, (const uint8_t *)s, len);
	fprintf(f, "\"%s\"", b);
	free(b);
}

/* see offline.h */
void json_field(FILE *f, const char *key, const char *s)
{
	fprintf(f, "\"%s\": ", key);
	if (!s) {
		fputs("null", f);
		return;
	}
	if (json_string(f, s))
		return;
	fprintf(f, ", \"%s_b64\": ", key);
	json_b64(f, s);
}

/* see offline.h */
bool offline_last(const char *p)
{
	char name[256];

	return offline_component(&p, name) == 0;
}

/* see offline.h */
const char *offline_strerror(int err)
{
	switch (err) {
	case -EIO:
		return "cannot be decrypted (damaged, or a directory's "
		       NAMES_DIRID_FILE " is missing or damaged)";
	case -EBADMSG:
		return "name does not decrypt (damaged, foreign, or its "
		       "sidecar is missing)";
	case -EINVAL:
		return "not a path of this volume (\"..\", an illegal name, "
		       "or one of xtsfs's own files)";
	default:
		return strerror(-err);
	}
}

/* see offline.h */
const char *offline_type(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG:
		return "file";
	case S_IFDIR:
		return "directory";
	case S_IFLNK:
		return "symlink";
	case S_IFIFO:
		return "fifo";
	case S_IFSOCK:
		return "socket";
	case S_IFCHR:
		return "char-device";
	case S_IFBLK:
		return "block-device";
	default:
		return "unknown";
	}
}
