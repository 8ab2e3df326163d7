/* SPDX-License-Identifier: Apache-2.0 */
/*
 * check.c - the walk of check.h: every directory, entry name, sidecar,
 * dirid, long target, file header, short tail and xattr of a cipher
 * directory against doc/FORMAT.md sections 3, 4 and 6. Every byte is
 * judged by the decoder a mount uses (names.c, dirops.c, content.c,
 * xattr.c): there is no second reading of the format here, only the
 * bookkeeping a mount does not need (which sidecar has an entry, which
 * long-target file a symlink uses, which dirid the names prove).
 */
#include "check.h"
#include "check_priv.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conflict.h"
#include "content.h"
#include "dirops.h"
#include "layout.h"
#include "names.h"

/* ---- the entries of one directory ----------------------------------- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* All names of directory @dfd but "." and "..", sorted (for lookups). */
static int ents_load(struct ents *es, int dfd)
{
	struct dirent *de;
	DIR *d;
	int err = dirops_opendir(dfd, &d);

	memset(es, 0, sizeof(*es));
	if (err)
		return err;
	while ((errno = 0, de = readdir(d))) {
		if (names_is_dot(de->d_name))
			continue;
		err = strv_add(&es->v, &es->n, &es->cap, de->d_name);
		if (err)
			break;
	}
	if (!err && errno)
		err = -errno;
	closedir(d);
	if (es->n)
		qsort(es->v, es->n, sizeof(*es->v), cmp_str);
	return err;
}

static bool ents_has(const struct ents *es, const char *name)
{
	return es->n && bsearch(&name, es->v, es->n, sizeof(*es->v),
				cmp_str) != NULL;
}

static void ents_free(struct ents *es)
{
	strv_free(es->v, es->n);
}

/* ---- classifying names -------------------------------------------- */

/* A long entry's sidecar: "xtsfs.long.<22 chars>.name". */
static bool is_sidecar(const char *name, char entry[NAMES_STORED_MAX + 1])
{
	size_t len = strlen(name), sl = strlen(NAMES_LONG_SUFFIX);

	if (len <= sl || len > NAMES_STORED_MAX ||
	    strcmp(name + len - sl, NAMES_LONG_SUFFIX))
		return false;
	memcpy(entry, name, len - sl);
	entry[len - sl] = '\0';
	return names_is_long(entry);
}

/* What a name that is not xtsfs's own is: an encrypted name or not. */
enum name_class { NC_CIPHER, NC_NONCANON, NC_FOREIGN };

static enum name_class classify_n(const char *name, size_t len)
{
	uint8_t buf[NAMES_STORED_MAX];
	size_t n;

	if (!names_b64_decode(buf, sizeof(buf), name, len, &n) &&
	    n >= 32 && n % 16 == 0)
		return NC_CIPHER;
	return names_is_b64(name, len) ? NC_NONCANON : NC_FOREIGN;
}

static enum name_class classify(const char *name)
{
	return classify_n(name, strlen(name));
}

/*
 * A conflict copy of a short entry (FORMAT 4.8): a known suffix after
 * something shaped like an encrypted name; its length in *@plen.
 */
static bool conflict_short(const char *name, size_t *plen)
{
	size_t len = strlen(name), k = conflict_suffix(name, len);

	*plen = len - k;
	return k && !names_is_internal(name) &&
	       classify_n(name, len - k) == NC_CIPHER;
}

/*
 * Whether entry @name of directory @dfd authenticates under @dirid:
 * 1 yes, 0 no, -1 it does not depend on a dirid at all.
 */
static int name_auth(const struct walk *w, int dfd, const char *name,
		     const uint8_t dirid[NAMES_DIRID_SIZE], char out[256])
{
	char full[NAMES_FULL_MAX], side[NAMES_STORED_MAX + 1];
	size_t len, outlen;

	if (names_is_long(name)) {
		names_long_sidecar(side, name);
		if (dirops_read_small(dfd, side, full, sizeof(full) - 1, &len))
			return 0;
		return !names_decrypt_long(w->o->names, dirid, name, full, len,
					   out, &outlen);
	}
	if (conflict_long(name, &len, side))
		return name_auth(w, dfd, side, dirid, out);
	if (conflict_short(name, &len))
		return !names_decrypt(w->o->names, dirid, name, len, out,
				      &outlen);
	if (names_is_internal(name) || classify(name) != NC_CIPHER)
		return -1;
	return !names_decrypt(w->o->names, dirid, name, strlen(name), out,
			      &outlen);
}

/*
 * How many entries of @es depend on the dirid (*@ndep) and how many of
 * them authenticate under @dirid (returned); with @first, stop at the
 * first that does.
 */
static size_t auth_count(const struct walk *w, int dfd, const struct ents *es,
			 const uint8_t dirid[NAMES_DIRID_SIZE], bool first,
			 size_t *ndep)
{
	char out[256];
	size_t ok = 0;

	*ndep = 0;
	for (size_t i = 0; i < es->n; i++) {
		int r = name_auth(w, dfd, es->v[i], dirid, out);

		if (r < 0)
			continue;
		(*ndep)++;
		ok += (size_t)r;
		if (first && ok)
			break;
	}
	explicit_bzero(out, sizeof(out));
	return ok;
}

/* How many entries of @es have names that depend on the dirid. */
static size_t dep_count(const struct ents *es)
{
	size_t n = 0;

	char e[34];
	size_t k;

	/* conflict copies too: a new random dirid would lose them */
	for (size_t i = 0; i < es->n; i++)
		n += names_is_long(es->v[i]) ||
		     (!names_is_internal(es->v[i]) &&
		      classify(es->v[i]) == NC_CIPHER) ||
		     conflict_long(es->v[i], &k, e) ||
		     conflict_short(es->v[i], &k);
	return n;
}

/* ---- dirids (FORMAT 4.2) -------------------------------------------- */

/* Write @id as the dirid of @dfd, replacing a damaged one. */
static int dirid_write(int dfd, const uint8_t id[NAMES_DIRID_SIZE])
{
	int fd, err = 0;

	if (unlinkat(dfd, NAMES_DIRID_FILE, 0) && errno != ENOENT)
		return -errno;
	fd = openat(dfd, NAMES_DIRID_FILE, O_WRONLY | O_CREAT | O_EXCL |
		    O_CLOEXEC | O_NOFOLLOW, 0444);
	if (fd < 0)
		return -errno;
	if (write(fd, id, NAMES_DIRID_SIZE) != NAMES_DIRID_SIZE ||
	    fsync(fd))
		err = errno ? -errno : -EIO;
	close(fd);
	if (!err && fsync(dfd))
		err = -errno;
	return err;
}

/*
 * A candidate for the dirid among @es: a 16-byte regular file named
 * "xtsfs.dirid<something>" under which all @ndep dependent entries
 * authenticate. Its index, or -1.
 */
static long dirid_candidate(const struct walk *w, int dfd,
			    const struct ents *es, size_t ndep,
			    uint8_t id[NAMES_DIRID_SIZE])
{
	size_t fl = strlen(NAMES_DIRID_FILE), len, dep;

	for (size_t i = 0; i < es->n && ndep; i++) {
		const char *nm = es->v[i];

		if (strncmp(nm, NAMES_DIRID_FILE, fl) || !nm[fl])
			continue;
		if (dirops_read_small(dfd, nm, id, NAMES_DIRID_SIZE, &len) ||
		    len != NAMES_DIRID_SIZE)
			continue;
		if (auth_count(w, dfd, es, id, false, &dep) == ndep)
			return (long)i;
	}
	return -1;
}

/* cand of dirid_fix(): the derived dirid, a new one (else: a copy) */
#define CAND_DERIVED (-2)
#define CAND_NEW (-1)

/*
 * The dirid the directory at @wp would have been given at its mkdir by
 * a format 2 writer (FORMAT 4.2) into @id; false if it cannot be known
 * (no key, no plaintext name, the parent's dirid unknown).
 */
static bool dirid_derived(const struct walk *w, const struct wpath *wp,
			  uint8_t id[NAMES_DIRID_SIZE])
{
	const char *base = wp->plain ? strrchr(wp->plain, '/') : NULL;

	if (!w->o->idkey || !wp->pdirid || !base || !base[1])
		return false;
	dirops_derive_dirid(w->o->idkey, wp->pdirid, base + 1,
			    strlen(base + 1), id);
	return true;
}

/* The repair of a dirid problem, as dirid_judge() found it provable. */
static int dirid_fix(const struct walk *w, int dfd, const struct ents *es,
		     const struct wpath *wp, long cand,
		     uint8_t id[NAMES_DIRID_SIZE])
{
	if (cand == CAND_DERIVED)
		return dirid_write(dfd, id);
	if (cand < 0) {
		/* nothing depends on it: as a new mkdir would have it */
		if (!dirid_derived(w, wp, id) &&
		    getrandom(id, NAMES_DIRID_SIZE, 0) != NAMES_DIRID_SIZE)
			return -EIO;
		return dirid_write(dfd, id);
	}
	/* the conflict copy becomes the dirid: one rename, nothing lost */
	if (renameat(dfd, es->v[cand], dfd, NAMES_DIRID_FILE))
		return -errno;
	return fsync(dfd) ? -errno : 0;
}

/* Which dirid problem @dfd has, if any; *@id is read in any case. */
static int dirid_state(const struct walk *w, int dfd, const struct ents *es,
		       uint8_t id[NAMES_DIRID_SIZE], size_t *ndep)
{
	uint8_t buf[NAMES_DIRID_SIZE + 1];
	size_t len = 0;
	int err = dirops_read_small(dfd, NAMES_DIRID_FILE, buf, sizeof(buf),
				    &len);

	*ndep = dep_count(es);
	if (err == -ENOENT)
		return CHECK_DIRID_MISSING;
	if (err || len != NAMES_DIRID_SIZE)
		return CHECK_DIRID_BAD;
	memcpy(id, buf, NAMES_DIRID_SIZE);
	/* one undecryptable entry is a bad name; all of two or more, a
	 * wrong dirid */
	if (!auth_count(w, dfd, es, id, true, ndep) && *ndep >= 2)
		return CHECK_DIRID_WRONG;
	return -1;
}

/*
 * Judge the dirid of directory @dfd (not the root) and repair it if
 * provable and wanted; *@gone is then the index of the conflict copy
 * that became the dirid (it is gone), else untouched. Return: true if
 * *@id is the dirid its names use.
 */
static bool dirid_judge(struct walk *w, int dfd, const struct ents *es,
			const struct wpath *wp, uint8_t id[NAMES_DIRID_SIZE],
			long *gone)
{
	struct check_problem p = { 0 };
	char detail[160];
	size_t ndep, dep;
	long cand = CAND_NEW;
	int kind = dirid_state(w, dfd, es, id, &ndep);

	if (kind < 0)
		return true;
	if (ndep)
		cand = dirid_candidate(w, dfd, es, ndep, id);
	if (ndep && cand < 0 && dirid_derived(w, wp, id) &&
	    auth_count(w, dfd, es, id, false, &dep) == ndep)
		cand = CAND_DERIVED;
	p.repairable = !ndep || cand != CAND_NEW;
	snprintf(detail, sizeof(detail), "%s; %zu entr%s here cannot be "
		 "named without it%s", kind == CHECK_DIRID_MISSING ? "missing" :
		 kind == CHECK_DIRID_BAD ? "not a 16-byte regular file" :
		 "no entry authenticates under it", ndep, ndep == 1 ? "y" :
		 "ies", !ndep ? " (none: a new dirid is correct)" : cand >= 0 ?
		 " (a conflict copy of it names them all)" :
		 cand == CAND_DERIVED ? " (the dirid derived from its name "
		 "names them all)" : "");
	p.kind = (enum check_kind)kind;
	p.detail = detail;
	p.plain = wp->plain; /* the directory's problem */
	if (want_fix(w, &p, wp, NAMES_DIRID_FILE)) {
		p.err = dirid_fix(w, dfd, es, wp, cand, id);
		p.repaired = !p.err;
		if (p.repaired && cand >= 0)
			*gone = cand; /* renamed to xtsfs.dirid */
	}
	emit(w, &p, wp, NAMES_DIRID_FILE);
	return p.repaired;
}

/* ---- entries ------------------------------------------------------- */

/* A long entry: its sidecar must exist and be its own (FORMAT 4.3). */
static bool long_entry(struct walk *w, int dfd, const char *name,
		       const uint8_t *dirid, const struct wpath *wp,
		       char out[256])
{
	char full[NAMES_FULL_MAX], side[NAMES_STORED_MAX + 1];
	size_t len, outlen;
	int err;

	if (!dirid)
		return false;
	names_long_sidecar(side, name);
	err = dirops_read_small(dfd, side, full, sizeof(full) - 1, &len);
	if (err == -ENOENT) {
		simple(w, CHECK_SIDECAR_MISSING, wp, name,
		       "a long-name entry without its .name sidecar");
		return false;
	}
	if (err || names_decrypt_long(w->o->names, dirid, name, full, len,
				      out, &outlen)) {
		simple(w, CHECK_SIDECAR_BAD, wp, name, "its .name sidecar "
		       "is damaged or belongs to another entry");
		return false;
	}
	return true;
}

/* An orphaned sidecar is removed: it names nothing (FORMAT 4.3). */
static void orphan(struct walk *w, int dfd, const char *name,
		   const struct wpath *wp)
{
	struct check_problem p = {
		.kind = CHECK_SIDECAR_ORPHAN,
		.detail = "a long-name sidecar without its entry",
		.repairable = true,
	};

	if (want_fix(w, &p, wp, name)) {
		p.err = unlinkat(dfd, name, 0) ? -errno : 0;
		p.repaired = !p.err;
	}
	emit(w, &p, wp, name);
}

/* A name that is not base64url of an encrypted name, nor xtsfs's own. */
static void not_ours(struct walk *w, const char *name, enum name_class nc,
		     const struct wpath *wp)
{
	if (nc == NC_NONCANON)
		simple(w, CHECK_NAME_NONCANON, wp, name, "base64url, but not "
		       "the canonical form of any encrypted name");
	else if (names_is_internal(name))
		simple(w, CHECK_NAME_INTERNAL, wp, name, "a name xtsfs never "
		       "writes (a sync tool's copy of its own file?)");
	else
		simple(w, CHECK_NAME_FOREIGN, wp, name, "not an encrypted "
		       "name (a sync conflict copy, a temp file, another "
		       "program's file?); not shown by a mount");
}

/* Whether @es holds a conflict copy of long entry @entry. */
static bool has_copy(const struct ents *es, const char *entry)
{
	char e[34];
	size_t k;

	for (size_t i = 0; i < es->n; i++)
		if (conflict_long(es->v[i], &k, e) && !strcmp(e, entry))
			return true;
	return false;
}

/*
 * Conflict copy @name whose original is named @out: shown in a mount as
 * @out + suffix @sfx (@k bytes), which goes to @out. 1, or 0 (too long).
 */
static int conflict_named(struct walk *w, const char *name, const char *sfx,
			  size_t k, const struct wpath *wp, char out[256])
{
	size_t n = strlen(out);

	if (n + k > NAMES_NAME_MAX) {
		simple(w, CHECK_NAME_FOREIGN, wp, name, "a conflict copy "
		       "whose name would be longer than 255 bytes; not shown "
		       "by a mount");
		return 0;
	}
	memcpy(out + n, sfx, k);
	out[n + k] = '\0';
	notice_conflict(w, wp, name, out);
	return 1;
}

/*
 * A name that is not an encrypted name (class @nc): a conflict copy of
 * one (named, 1), a stored name + an unknown suffix, or anything else
 * (reported, -1).
 */
static int other_entry(struct walk *w, const char *name, const uint8_t *dirid,
		       const struct wpath *wp, char out[256],
		       enum name_class nc)
{
	size_t plen, outlen;

	if (conflict_short(name, &plen) &&
	    !names_decrypt(w->o->names, dirid, name, plen, out, &outlen))
		return conflict_named(w, name, name + plen, strlen(name) - plen,
				      wp, out);
	if (dirops_stored_prefix(w->o->names, dirid, name, strlen(name))) {
		simple(w, CHECK_NAME_FOREIGN, wp, name, "a stored name with an "
		       "unknown conflict suffix (a sync tool's copy?); not "
		       "shown by a mount");
		return -1;
	}
	not_ours(w, name, nc, wp);
	return -1;
}

/*
 * The plaintext name of entry @name of an encrypted directory into
 * @out, problems reported. Return: 1 named; 0 a real entry whose name
 * is unknown (check below it anyway); -1 skip it (xtsfs's own files,
 * foreign names: a mount shows nothing there).
 */
static int entry_name(struct walk *w, int dfd, const struct ents *es,
		      const char *name, const uint8_t *dirid,
		      const struct wpath *wp, char out[256])
{
	char entry[NAMES_STORED_MAX + 1];
	size_t outlen, k;
	enum name_class nc;

	if (names_is_long(name))
		return long_entry(w, dfd, name, dirid, wp, out);
	if (is_sidecar(name, entry)) {
		if (!ents_has(es, entry) && !has_copy(es, entry))
			orphan(w, dfd, name, wp);
		return -1;
	}
	if (conflict_long(name, &k, entry)) {
		if (!long_entry(w, dfd, entry, dirid, wp, out))
			return 0;
		return conflict_named(w, name, name + 10, k, wp, out);
	}
	if (wp->root && names_is_link_ref(name)) {
		strv_add(&w->linkfiles, &w->nlinkfiles, &w->caplinkfiles,
			 name);
		return -1;
	}
	if (!wp->root && !strcmp(name, NAMES_DIRID_FILE))
		return -1;
	nc = names_is_internal(name) ? NC_FOREIGN : classify(name);
	if (nc != NC_CIPHER && dirid && !names_is_internal(name))
		return other_entry(w, name, dirid, wp, out, nc);
	if (nc != NC_CIPHER) {
		not_ours(w, name, nc, wp);
		return -1;
	}
	if (!dirid)
		return 0;
	if (names_decrypt(w->o->names, dirid, name, strlen(name), out,
			  &outlen)) {
		simple(w, CHECK_NAME_BAD, wp, name, "does not decrypt under "
		       "the directory's dirid (damaged, or from elsewhere)");
		return 0;
	}
	return 1;
}

/* The entries of the root that are the volume header's (FORMAT 2.1). */
static bool header_file(const char *name)
{
	return !strcmp(name, "xtsfs.volume") ||
	       !strcmp(name, "xtsfs.volume.tmp");
}

/* Check entry @name of directory @dfd and what lies below it. */
static int check_entry(struct walk *w, int dfd, const struct ents *es,
		       const char *name, const uint8_t *dirid,
		       const struct wpath *wp)
{
	char plain[256];
	int named = 1, err;
	struct wpath child;

	if (wp->root && header_file(name))
		return 0;
	if (!w->o->plaintext_names) {
		named = entry_name(w, dfd, es, name, dirid, wp, plain);
		if (named < 0)
			return 0;
	} else {
		snprintf(plain, sizeof(plain), "%s", name);
	}
	err = wpath_child(&child, wp, name, named ? plain : NULL);
	explicit_bzero(plain, sizeof(plain));
	if (err)
		return err;
	child.pdirid = dirid;
	err = check_object(w, dfd, name, &child);
	wpath_free(&child);
	return err;
}

/* see check_priv.h */
int check_dir(struct walk *w, int dfd, const struct wpath *wp)
{
	uint8_t id[NAMES_DIRID_SIZE] = { 0 };
	const uint8_t *dirid = id;
	struct ents es;
	long gone = -1;
	int err = ents_load(&es, dfd);

	if (err) {
		ents_free(&es);
		return op_error(w, wp, NULL, err);
	}
	if (!w->o->plaintext_names && !wp->root &&
	    !dirid_judge(w, dfd, &es, wp, id, &gone))
		dirid = NULL;
	for (size_t i = 0; i < es.n && !err; i++) {
		if ((long)i == gone)
			continue;
		if (w->o->stop && *w->o->stop)
			err = -EINTR;
		else
			err = check_entry(w, dfd, &es, es.v[i], dirid, wp);
	}
	explicit_bzero(id, sizeof(id));
	ents_free(&es);
	return err;
}
