/* SPDX-License-Identifier: Apache-2.0 */
/*
 * check_util.c - the checker's entry points besides the walk itself:
 * check_walk() (the root, then the unused long-target files), the
 * header check, problem reporting, the escaping of stored names for
 * output, and the is-it-mounted test. See check.h.
 */
#include "check_priv.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dirops.h"
#include "names.h"
#include "volume.h"

static const char *const kind_names[CHECK_NKINDS] = {
	[CHECK_HDR_COPY] = "header-copy-damaged",
	[CHECK_HDR_DIFFER] = "header-copies-differ",
	[CHECK_HDR_MAC] = "header-copy-bad-mac",
	[CHECK_NAME_FOREIGN] = "foreign-entry",
	[CHECK_NAME_INTERNAL] = "unknown-internal-name",
	[CHECK_NAME_NONCANON] = "non-canonical-name",
	[CHECK_NAME_BAD] = "undecryptable-name",
	[CHECK_DIRID_MISSING] = "dirid-missing",
	[CHECK_DIRID_BAD] = "dirid-damaged",
	[CHECK_DIRID_WRONG] = "dirid-wrong",
	[CHECK_SIDECAR_MISSING] = "sidecar-missing",
	[CHECK_SIDECAR_BAD] = "sidecar-damaged",
	[CHECK_SIDECAR_ORPHAN] = "orphan-sidecar",
	[CHECK_LINK_UNUSED] = "unused-long-target",
	[CHECK_LINK_MISSING] = "long-target-missing",
	[CHECK_TARGET_BAD] = "undecryptable-target",
	[CHECK_FILE_CUT_HEADER] = "file-cut-in-header",
	[CHECK_FILE_HEADER] = "file-header-damaged",
	[CHECK_FILE_TAIL] = "torn-tail",
	[CHECK_XATTR_NAME] = "undecryptable-xattr-name",
	[CHECK_XATTR_VALUE] = "undecryptable-xattr-value",
	[CHECK_UNREADABLE] = "unreadable",
	[CHECK_HDR_MISSING] = "header-missing",
	[CHECK_CONFLICT_COPY] = "conflict-copy",
};

/* see check.h */
const char *check_kind_name(enum check_kind k)
{
	return (unsigned)k < CHECK_NKINDS ? kind_names[k] : "unknown";
}

/* ---- strings and paths ---------------------------------------------- */

/* see check_priv.h */
int strv_add(char ***v, size_t *n, size_t *cap, const char *s)
{
	if (*n == *cap) {
		size_t nc = *cap ? 2 * *cap : 64;
		char **nv = realloc(*v, nc * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		*v = nv;
		*cap = nc;
	}
	if (!((*v)[*n] = strdup(s)))
		return -ENOMEM;
	(*n)++;
	return 0;
}

/* see check_priv.h */
void strv_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* @dir + "/" + @name, or @name alone when @dir is the root @rootname */
static char *join(const char *dir, const char *name, const char *rootname)
{
	char *s;

	if (!strcmp(dir, rootname))
		return asprintf(&s, "%s%s", !strcmp(rootname, "/") ? "/" : "",
				name) < 0 ? NULL : s;
	return asprintf(&s, "%s/%s", dir, name) < 0 ? NULL : s;
}

/* see check_priv.h */
int wpath_child(struct wpath *child, const struct wpath *wp,
		const char *name, const char *plain)
{
	child->root = false;
	child->plain = NULL;
	child->pdirid = NULL;
	child->cipher = join(wp->cipher, name, ".");
	if (!child->cipher)
		return -ENOMEM;
	if (plain && wp->plain && !(child->plain = join(wp->plain, plain,
							"/"))) {
		free(child->cipher);
		return -ENOMEM;
	}
	return 0;
}

/* see check_priv.h */
void wpath_free(struct wpath *wp)
{
	free(wp->cipher);
	free(wp->plain);
}

/* ---- problems ------------------------------------------------------- */

/* The paths of @p; the string to free afterwards, or NULL. */
static char *fill(struct check_problem *p, const struct wpath *wp,
		  const char *name)
{
	char *s = NULL;

	if (!name) {
		p->cipher = wp->cipher;
		if (!p->plain)
			p->plain = wp->plain;
		return NULL;
	}
	s = join(wp->cipher, name, ".");
	p->cipher = s ? s : name;
	p->plain_dir = wp->plain;
	return s;
}

/* see check_priv.h */
bool want_fix(struct walk *w, struct check_problem *p, const struct wpath *wp,
	      const char *name)
{
	char *s;
	bool yes;

	if (!p->repairable || !w->o->ask)
		return false;
	s = fill(p, wp, name);
	yes = w->o->ask(w->o->arg, p);
	free(s);
	return yes;
}

/* see check_priv.h */
void emit(struct walk *w, struct check_problem *p, const struct wpath *wp,
	  const char *name)
{
	char *s = fill(p, wp, name);

	w->c->problems++;
	if (p->repaired)
		w->c->repaired++;
	if (p->kind == CHECK_UNREADABLE)
		w->c->op_errors++;
	if (w->o->report)
		w->o->report(w->o->arg, p);
	free(s);
}

/* see check_priv.h */
void notice_conflict(struct walk *w, const struct wpath *wp,
		     const char *name, const char *plain)
{
	struct check_problem p = {
		.kind = CHECK_CONFLICT_COPY,
		.detail = "a sync tool's conflict copy: shown in a mount under "
			  "the original's name and the tool's suffix; compare "
			  "the two there, then remove or rename one",
	};
	char *s = fill(&p, wp, name);
	char *pl = wp->plain ? join(wp->plain, plain, "/") : NULL;

	p.plain = pl;
	w->c->conflicts++;
	if (w->o->conflict)
		w->o->conflict(w->o->arg, &p);
	free(pl);
	free(s);
}

/* see check_priv.h */
void simple(struct walk *w, enum check_kind k, const struct wpath *wp,
	    const char *name, const char *detail)
{
	struct check_problem p = { .kind = k, .detail = detail };

	emit(w, &p, wp, name);
}

/* see check_priv.h */
int op_error(struct walk *w, const struct wpath *wp, const char *name,
	     int err)
{
	if (err == -ENOMEM || err == -EINTR)
		return err;
	simple(w, CHECK_UNREADABLE, wp, name, strerror(-err));
	return 0;
}

/* ---- the walk -------------------------------------------------------- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The root's long-target files that no symlink uses are removed, but
 * only after a walk that saw every symlink: a directory left unread may
 * hold the one that does.
 */
static void unused_links(struct walk *w, const struct wpath *root)
{
	if (w->nlinkrefs)
		qsort(w->linkrefs, w->nlinkrefs, sizeof(char *), cmp_str);
	for (size_t i = 0; i < w->nlinkfiles; i++) {
		const char *f = w->linkfiles[i];
		struct check_problem p = {
			.kind = CHECK_LINK_UNUSED,
			.detail = "a long symlink target's file that no "
				  "symlink uses",
			.repairable = !w->c->op_errors,
		};

		if (w->nlinkrefs && bsearch(&f, w->linkrefs, w->nlinkrefs,
					    sizeof(char *), cmp_str))
			continue;
		if (want_fix(w, &p, root, f)) {
			p.err = unlinkat(w->rootfd, f, 0) ? -errno : 0;
			p.repaired = !p.err;
		}
		emit(w, &p, root, f);
	}
}

/* see check.h */
int check_walk(int rootfd, const struct check_opts *o, struct check_counts *c)
{
	struct walk w = { .o = o, .c = c, .rootfd = rootfd };
	char rc[] = ".", rp[] = "/";
	struct wpath root = { .cipher = rc, .plain = rp, .root = true };
	int err;

	memset(c, 0, sizeof(*c));
	c->dirs = 1;
	err = check_xattrs(&w, rootfd, NULL, &root);
	if (!err)
		err = check_dir(&w, rootfd, &root);
	if (!err)
		unused_links(&w, &root);
	if (o->progress)
		o->progress(o->arg, c);
	strv_free(w.linkfiles, w.nlinkfiles);
	strv_free(w.linkrefs, w.nlinkrefs);
	return err;
}

/* ---- the header ------------------------------------------------------ */

/* Whether the copy @v did not use is valid but fails its MAC. */
static bool other_copy_bad_mac(int rootfd, const struct vol *v)
{
	int other = !v->info.copy_used;
	struct vol_header *h;
	uint8_t *buf;
	bool bad = false;
	int fd;

	if (!v->info.copy_ok[other])
		return false;
	h = malloc(sizeof(*h));
	buf = malloc(VOL_COPY_SIZE);
	fd = openat(rootfd, vol_file_name(&v->hdr), O_RDONLY | O_NOFOLLOW |
		    O_NONBLOCK | O_CLOEXEC);
	if (h && buf && fd >= 0 &&
	    pread(fd, buf, VOL_COPY_SIZE, (off_t)other * VOL_COPY_SIZE) ==
		    VOL_COPY_SIZE &&
	    !vol_from_disk(h, buf))
		bad = !vol_verify_mac(h, v->keys);
	if (fd >= 0)
		close(fd);
	free(buf);
	free(h);
	return bad;
}

/* One header problem: repaired by rewriting both copies from @v's. */
static void header_problem(struct walk *w, struct vol *v, enum check_kind k,
			   const char *detail)
{
	char name[32];
	struct wpath wp = { .cipher = name };
	struct check_problem p = {
		.kind = k, .detail = detail, .repairable = true,
	};

	snprintf(name, sizeof(name), "%s", vol_file_name(&v->hdr));
	if (want_fix(w, &p, &wp, NULL)) {
		p.err = vol_write(w->rootfd, &v->hdr, v->keys);
		p.repaired = !p.err;
	}
	emit(w, &p, &wp, NULL);
}

/* see check.h */
int check_header(int rootfd, struct vol *v, const struct check_opts *o,
		 struct check_counts *c)
{
	struct walk w = { .o = o, .c = c, .rootfd = rootfd };
	const char *which[VOL_NCOPIES] = { "the primary", "the secondary" };
	char detail[160];

	if (v->info.headerless) {
		/*
		 * The key text stood in (FORMAT.md 2.8). A header needs a key
		 * slot, so a new passphrase: xtsfs-passwd's to write, not ours.
		 */
		char name[32];
		struct wpath wp = { .cipher = name };
		struct check_problem p = {
			.kind = CHECK_HDR_MISSING,
			.detail = v->info.header_err == -ENOENT ?
				  "there is no volume header; xtsfs-passwd "
				  "--repair --volume-key-file writes one" :
				  "both header copies are corrupt; xtsfs-passwd "
				  "--repair --volume-key-file writes a new header",
		};

		snprintf(name, sizeof(name), "%s", VOL_FILE_NAME);
		emit(&w, &p, &wp, NULL);
		return 0;
	}
	for (int i = 0; i < VOL_NCOPIES; i++) {
		if (v->info.copy_ok[i])
			continue;
		snprintf(detail, sizeof(detail), "%s copy is damaged (%s); "
			 "%s is good", which[i],
			 vol_strerror(v->info.copy_err[i]), which[!i]);
		header_problem(&w, v, CHECK_HDR_COPY, detail);
		return 0; /* one rewrite repairs it all */
	}
	if (other_copy_bad_mac(rootfd, v)) {
		snprintf(detail, sizeof(detail), "%s copy fails its MAC "
			 "(changed without the key)",
			 which[!v->info.copy_used]);
		header_problem(&w, v, CHECK_HDR_MAC, detail);
	} else if (v->info.copies_differ) {
		header_problem(&w, v, CHECK_HDR_DIFFER, "both copies are "
			       "valid but differ; the primary is used");
	}
	return 0;
}

/* ---- output helpers -------------------------------------------------- */

/* The length of the valid UTF-8 sequence at @s (1..4), or 0. */
static size_t utf8_len(const unsigned char *s)
{
	size_t n = s[0] < 0x80 ? 1 : (s[0] & 0xe0) == 0xc0 ? 2 :
		   (s[0] & 0xf0) == 0xe0 ? 3 : (s[0] & 0xf8) == 0xf0 ? 4 : 0;
	uint32_t cp;

	if (n == 0 || (n == 2 && s[0] < 0xc2) || (n == 4 && s[0] > 0xf4))
		return 0;
	for (size_t i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if (n == 3) {
		cp = (uint32_t)(s[0] & 0x0f) << 12 | (s[1] & 0x3f) << 6;
		if (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))
			return 0; /* overlong, or a surrogate */
	}
	if (n == 4) {
		cp = (uint32_t)(s[0] & 0x07) << 18 | (uint32_t)(s[1] & 0x3f)
								 << 12;
		if (cp < 0x10000 || cp > 0x10ffff)
			return 0;
	}
	/* C1 controls (U+0080..U+009F) are escaped too */
	if (n == 2 && s[0] == 0xc2 && s[1] < 0xa0)
		return 0;
	return n;
}

/* see check.h */
char *check_escape(char *out, size_t outsize, const char *in)
{
	const unsigned char *s = (const unsigned char *)in;
	size_t o = 0;

	while (*s && o + 5 < outsize) {
		size_t n = utf8_len(s);

		if (n == 1 && (*s < 0x20 || *s == 0x7f))
			n = 0;
		if (*s == '\\') {
			out[o++] = '\\';
			out[o++] = '\\';
			s++;
		} else if (n == 0) {
			o += (size_t)snprintf(out + o, outsize - o, "\\x%02x",
					      *s++);
		} else if (o + n < outsize) {
			memcpy(out + o, s, n);
			o += n;
			s += n;
		} else {
			break;
		}
	}
	if (outsize)
		out[o < outsize ? o : outsize - 1] = '\0';
	return out;
}

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unoctal(char *s)
{
	char *d = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' &&
		    s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*d++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 |
				      (s[3] - '0'));
			s += 3;
		} else {
			*d++ = *s;
		}
	}
	*d = '\0';
}

/*
 * Whether mountinfo line @line is a FUSE mount of @canon; its mount
 * point into @where.
 */
static bool line_matches(char *line, const char *canon, char *where,
			 size_t wsize)
{
	char *sep = strstr(line, " - "), *mp, *type, *src, *save;
	char real[PATH_MAX];

	if (!sep)
		return false;
	*sep = '\0';
	strtok_r(line, " ", &save);                 /* mount id */
	for (int i = 0; i < 3; i++)
		strtok_r(NULL, " ", &save);         /* parent, dev, root */
	mp = strtok_r(NULL, " ", &save);
	type = strtok_r(sep + 3, " ", &save);
	src = strtok_r(NULL, " ", &save);
	if (!mp || !type || !src ||
	    (strcmp(type, "fuse") && strncmp(type, "fuse.", 5)))
		return false;
	unoctal(src);
	unoctal(mp);
	if (!realpath(src, real) || strcmp(real, canon))
		return false;
	snprintf(where, wsize, "%s", mp);
	return true;
}

/* see check.h */
int check_mounted(const char *mountinfo, const char *dir, char *where,
		  size_t wsize)
{
	char canon[PATH_MAX], *line = NULL;
	size_t cap = 0;
	int found = 0;
	FILE *f;

	if (!realpath(dir, canon))
		return -errno;
	f = fopen(mountinfo, "re");
	if (!f)
		return -errno;
	while (!found && getline(&line, &cap, f) > 0) {
		line[strcspn(line, "\n")] = '\0';
		found = line_matches(line, canon, where, wsize);
	}
	free(line);
	fclose(f);
	return found;
}

/* Whether process @pid is called @comm and has @canon open. */
static bool pid_holds(const char *proc, const char *pid, const char *comm,
		      const char *canon)
{
	char path[PATH_MAX], link[PATH_MAX], name[64] = "";
	struct dirent *de;
	bool found = false;
	ssize_t n;
	FILE *f;
	DIR *d;

	snprintf(path, sizeof(path), "%s/%s/comm", proc, pid);
	if (!(f = fopen(path, "re")))
		return false;
	if (!fgets(name, sizeof(name), f))
		name[0] = '\0';
	fclose(f);
	name[strcspn(name, "\n")] = '\0';
	if (strcmp(name, comm))
		return false;
	snprintf(path, sizeof(path), "%s/%s/fd", proc, pid);
	if (!(d = opendir(path)))
		return false;
	while (!found && (de = readdir(d))) {
		snprintf(path, sizeof(path), "%s/%s/fd/%s", proc, pid,
			 de->d_name);
		n = readlink(path, link, sizeof(link) - 1);
		if (n > 0) {
			link[n] = '\0';
			found = !strcmp(link, canon);
		}
	}
	closedir(d);
	return found;
}

/* see check.h */
int check_held(const char *proc, const char *comm, const char *dir,
	       long *pid)
{
	char canon[PATH_MAX];
	struct dirent *de;
	int found = 0;
	DIR *d;

	if (!realpath(dir, canon))
		return -errno;
	if (!(d = opendir(proc)))
		return -errno;
	while (!found && (de = readdir(d))) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		found = pid_holds(proc, de->d_name, comm, canon);
		if (found)
			*pid = strtol(de->d_name, NULL, 10);
	}
	closedir(d);
	return found;
}
