/* SPDX-License-Identifier: Apache-2.0 */
/*
 * probe.c - does a cipher directory fit a volume key (see probe.h)?
 */
#include "probe.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dirops.h"
#include "names.h"

/* Directories of the root looked into for an xtsfs.dirid (plaintext). */
#define PROBE_SUBDIRS 64

struct probe {
	const struct names_ctx *names;
	int dirfd;
	unsigned long tried;    /* root entries that could be stored names */
	bool saw_plain;         /* a root entry that cannot be one */
	unsigned int subdirs;   /* subdirectories looked into */
};

static const uint8_t root_dirid[NAMES_DIRID_SIZE];

/* Whether @name in the root decrypts under the root dirid. */
static bool decrypts(const struct probe *p, const char *name)
{
	char out[256], side[NAMES_STORED_MAX + 1], full[NAMES_FULL_MAX];
	size_t outlen, len;

	if (!names_is_long(name))
		return names_decrypt(p->names, root_dirid, name, strlen(name),
				     out, &outlen) == 0;
	names_long_sidecar(side, name);
	if (dirops_read_small(p->dirfd, side, full, sizeof(full) - 1, &len))
		return false;
	return names_decrypt_long(p->names, root_dirid, name, full, len, out,
				  &outlen) == 0;
}

/* Whether the subdirectory @name of the root holds an xtsfs.dirid. */
static bool has_dirid(struct probe *p, const char *name)
{
	struct stat st;
	int fd;
	bool found;

	if (p->subdirs >= PROBE_SUBDIRS)
		return false;
	fd = openat(p->dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC);
	if (fd < 0)
		return false;
	p->subdirs++;
	found = fstatat(fd, NAMES_DIRID_FILE, &st, AT_SYMLINK_NOFOLLOW) == 0;
	close(fd);
	return found;
}

/*
 * Whether @n could be a stored name of 4.1: base64url of at least 32
 * bytes (43 characters). Anything else in the root (lost+found, a
 * desktop's .DS_Store) says nothing about the key.
 */
static bool looks_stored(const char *n)
{
	size_t len = strlen(n);

	return len >= 43 && names_is_b64(n, len);
}

/*
 * One root entry. Return: 1 proof, 0 nothing, -EKEYREJECTED (@why) a
 * contradiction.
 */
static int probe_entry(struct probe *p, const struct dirent *de, bool plain,
		       const char **why)
{
	const char *n = de->d_name;

	if (names_is_dot(n) || !strncmp(n, ".xtsfs.volume", 13) ||
	    (names_is_internal(n) && !names_is_long(n)))
		return 0;
	if (!plain) {
		if (!names_is_long(n) && !looks_stored(n)) {
			/* lost+found: the root of an ext4 filesystem */
			if (strcmp(n, "lost+found"))
				p->saw_plain = true;
			return 0;
		}
		p->tried++;
		return decrypts(p, n) ? 1 : 0;
	}
	if (names_is_long(n)) {
		*why = "the root holds xtsfs.long.* entries, which only a "
		       "volume with encrypted names has";
		return -EKEYREJECTED;
	}
	if (looks_stored(n) && decrypts(p, n)) {
		*why = "names in the root decrypt with this key: the volume "
		       "has encrypted names, not plaintext names";
		return -EKEYREJECTED;
	}
	if ((de->d_type == DT_DIR || de->d_type == DT_UNKNOWN) &&
	    has_dirid(p, n)) {
		*why = "its directories hold xtsfs.dirid files, which only a "
		       "volume with encrypted names has";
		return -EKEYREJECTED;
	}
	return 0;
}

/* see probe.h */
int vol_probe(int dirfd, const struct vol_keys *keys, uint32_t flags,
	      const char **why)
{
	struct names_ctx *names = NULL;
	struct probe p = { .dirfd = dirfd };
	bool plain = flags & VOL_FLAG_PLAINTEXT_NAMES;
	struct dirent *de;
	DIR *d;
	int rc;

	*why = NULL;
	rc = names_ctx_new(&names, keys->names);
	if (rc)
		return rc;
	p.names = names;
	rc = dirops_opendir(dirfd, &d);
	if (rc) {
		names_ctx_free(names);
		return rc;
	}
	rc = 0;
	while (rc == 0 && (de = readdir(d)))
		rc = probe_entry(&p, de, plain, why);
	closedir(d);
	names_ctx_free(names);
	if (rc == 0 && p.tried) {
		*why = "none of the names in its root decrypts with this key "
		       "(a key of another volume, or a volume with plaintext "
		       "names)";
		rc = -EKEYREJECTED;
	} else if (rc == 0 && p.saw_plain) {
		*why = "its root holds names that are not encrypted, and none "
		       "that is (a volume with plaintext names?)";
		rc = -EKEYREJECTED;
	}
	return rc;
}
