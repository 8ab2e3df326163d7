/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xtsfs-path - map plaintext paths of a volume to the cipher paths they
 * need, and cipher paths back to plaintext, without a mount: for a
 * backup tool, or to fetch one file from a remote copy (doc/USAGE.md,
 * "Restoring without a mount"). Names are computed from the dirids
 * (FORMAT 4.1, 4.3), so a copy that holds only xtsfs.volume, the
 * directories and their xtsfs.dirid files is enough to map a path.
 * Uses the forward mount's own core, read-only (offline.h).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "offline.h"
#include "volume.h"

#define PROG "xtsfs-path"

enum { OPT_TO_PLAIN = OPT_TOOL_BASE };

static const struct option longopts[] = {
	{ "to-plain", no_argument, NULL, OPT_TO_PLAIN },
	{ "json", no_argument, NULL, 'j' },
	{ "null", no_argument, NULL, '0' },
	{ "quiet", no_argument, NULL, 'q' },
	CLI_LONGOPTS,
	COMMON_PASS_LONGOPTS,
	COMMON_UNLOCK_LONGOPTS,
	{ NULL, 0, NULL, 0 },
};

static const struct cli cli = {
	.prog = PROG,
	/*
	 * '+': options end at the first operand. Cipher names are base64url,
	 * which may start with '-', and plaintext names may too: after
	 * CIPHERDIR every argument is a path.
	 */
	.shortopts = "+j0q" CLI_SHORTOPTS,
	.longopts = longopts,
	.column = COMMON_HELP_COLUMN,
	.help =
"Usage: " PROG " [OPTION]... CIPHERDIR PLAINPATH...\n"
"  or:  " PROG " --to-plain [OPTION]... CIPHERDIR CIPHERPATH...\n"
"Print every cipher path (relative to CIPHERDIR) that each plaintext path\n"
"(relative to the volume root) needs: xtsfs.volume, each directory on the\n"
"way with its xtsfs.dirid, a long name's .name sidecar, the entry, and a\n"
"long symlink target's xtsfs.link.* file. CIPHERDIR may be a copy of only\n"
"xtsfs.volume, the directories and their xtsfs.dirid files. With\n"
"--to-plain, print the plaintext path of each cipher path instead.\n"
"\n"
"      --to-plain          map cipher paths to plaintext paths\n"
"  -j, --json              print one JSON document\n"
"  -0, --null              end each path with NUL, not newline, and print\n"
"                          it as it is (default: bytes outside printable\n"
"                          ASCII as \\xHH, '\\' as \\\\)\n"
"  -q, --quiet             no warning for an entry absent from this copy,\n"
"                          no progress lines\n"
COMMON_PASS_HELP COMMON_UNLOCK_HELP,
	.help_end =
"\n"
"Example: " PROG " /srv/vault docs/report.pdf\n"
"\n"
"Exit status: 0 ok, 1 a path failed (each is reported), 2 bad usage,\n"
"3 cipher core unusable, 4 wrong passphrase or key, 5 no volume, 6 corrupt\n"
"header, 8 no usable passphrase.\n",
};

/* struct strlist - cipher paths, in order, each once. */
struct strlist {
	char **v;
	size_t n, cap;
};

static int strlist_add(struct strlist *l, const char *s)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i], s))
			return 0;
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;
		char **v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n] = strdup(s);
	return l->v[l->n++] ? 0 : -ENOMEM;
}

static void strlist_free(struct strlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* struct mapping - what one plaintext path needs. */
struct mapping {
	struct strlist needs;      /* cipher paths, ancestors first */
	char entry[PATH_MAX];      /* the entry's cipher path; at a failure,
				    * the deepest one reached */
	struct stat st;            /* its plaintext attributes if present */
	bool present;              /* the entry is in this copy */
};

/* Add "@dir/@name" to @mp's needs. */
static int need(struct mapping *mp, const char *dir, const char *name)
{
	char p[PATH_MAX];
	int err;

	snprintf(p, sizeof(p), "%s", dir);
	err = offline_append(p, sizeof(p), name);

	return err ? err : strlist_add(&mp->needs, p);
}

/* After the entry @in (present): its dirid, or its long target's file. */
static int need_after(struct offline *o, struct xnode *in, struct mapping *mp)
{
	char target[PATH_MAX];
	ssize_t n;

	if (o->plain_names)
		return 0;
	if (S_ISDIR(mp->st.st_mode))
		return need(mp, mp->entry, NAMES_DIRID_FILE);
	if (!S_ISLNK(mp->st.st_mode))
		return 0;
	n = readlinkat(in->fd, "", target, sizeof(target) - 1);
	if (n < 0)
		return -errno;
	target[n] = '\0';
	return names_is_link_ref(target) ? need(mp, "", target) : 0;
}

/* One step of map_plain(): @name in @dir, which is at mp->entry. */
static int map_step(struct offline *o, struct xnode *dir, const char *name,
		    struct mapping *mp, struct xnode **in)
{
	char side[NAMES_STORED_MAX + 1];
	struct lname ln;
	int err;

	if (!S_ISDIR(mp->st.st_mode))
		return -ENOTDIR;
	err = xm_stored_name(&o->m, dir, name, &ln);
	if (err)
		return err == -ENOENT ? -EINVAL : err; /* a reserved name */
	if (ln.is_long) {
		names_long_sidecar(side, ln.stored);
		err = need(mp, mp->entry, side);
	}
	if (!err)
		err = offline_append(mp->entry, sizeof(mp->entry), ln.stored);
	if (!err)
		err = strlist_add(&mp->needs, mp->entry);
	return err ? err : xm_lookup_stored(&o->m, dir, ln.stored, 0, in,
					     &mp->st);
}

/*
 * The cipher paths plaintext @path needs, into @mp. An absent last
 * component is no failure (mp->present false): its names are computed.
 */
static int map_plain(struct offline *o, const char *path, struct mapping *mp)
{
	struct xnode *dir = o->m.root, *in = NULL;
	char name[256];
	int rc, err;

	mp->present = true;
	mp->entry[0] = '\0';
	err = strlist_add(&mp->needs, VOL_FILE_NAME);
	if (!err)
		err = xm_getattr(&o->m, dir, &mp->st);
	while (!err && (rc = offline_component(&path, name)) != 0) {
		err = rc < 0 ? rc : map_step(o, dir, name, mp, &in);
		if (dir != o->m.root)
			xm_forget(&o->m, dir, 1);
		dir = err ? o->m.root : in;
		if (err == -ENOENT && offline_last(path)) {
			mp->present = false;
			return 0;
		}
		if (!err && S_ISDIR(mp->st.st_mode) && !offline_last(path) &&
		    !o->plain_names)
			err = need(mp, mp->entry, NAMES_DIRID_FILE);
	}
	if (!err && dir != o->m.root)
		err = need_after(o, dir, mp);
	if (dir != o->m.root)
		xm_forget(&o->m, dir, 1);
	return err;
}

/* struct unmapping - what one cipher path is. */
struct unmapping {
	char plain[PATH_MAX];      /* its plaintext path ("" the root) */
	const char *kind;          /* "entry", "dirid", "sidecar", ... */
	bool has_plain;            /* false: no one plaintext path (a long
				    * target's file, shared) */
};

/*
 * The kind of xtsfs's own file @name as the last component of a cipher
 * path in @dir, and the plaintext name it belongs to into @name (empty:
 * the directory itself). Return: 0, 1 not one of ours, -errno.
 */
static int own_file(struct offline *o, struct xnode *dir, char name[256],
		    struct unmapping *u)
{
	size_t len = strlen(name), sl = strlen(NAMES_LONG_SUFFIX);
	bool root = dir == o->m.root;
	char entry[256];

	if (root && !strcmp(name, VOL_FILE_NAME)) {
		u->kind = "volume";
	} else if (o->plain_names || !names_is_internal(name) ||
		   names_is_long(name)) {
		return 1;
	} else if (!strcmp(name, NAMES_DIRID_FILE) && !root) {
		u->kind = "dirid";
	} else if (root && names_is_link_ref(name)) {
		u->kind = "link-target";
		u->has_plain = false;
	} else if (len > sl && !strcmp(name + len - sl, NAMES_LONG_SUFFIX)) {
		snprintf(entry, sizeof(entry), "%.*s", (int)(len - sl), name);
		if (!names_is_long(entry))
			return -EINVAL;
		u->kind = "sidecar";
		return xm_plain_name(&o->m, dir, entry, name) ? -EBADMSG : 0;
	} else {
		return -EINVAL; /* a name xtsfs keeps but never makes here */
	}
	name[0] = '\0';
	return 0;
}

/* One component @stored of a cipher path, in @dir (at u->plain). */
static int unmap_step(struct offline *o, struct xnode *dir, const char *stored,
		      bool last, struct unmapping *u, struct xnode **in)
{
	char name[256];
	struct stat st;
	int err;

	snprintf(name, sizeof(name), "%s", stored);
	err = last ? own_file(o, dir, name, u) : 1;
	if (err == 1) {
		err = xm_plain_name(&o->m, dir, stored, name);
		if (err == 1)
			return -EINVAL; /* our own file, not a directory */
	}
	if (err)
		return err;
	if (*name)
		err = offline_append(u->plain, sizeof(u->plain), name);
	if (err || last)
		return err;
	err = xm_lookup_stored(&o->m, dir, stored, 0, in, &st);
	if (!err && !S_ISDIR(st.st_mode)) {
		xm_forget(&o->m, *in, 1);
		err = -ENOTDIR;
	}
	return err;
}

/* The plaintext path of cipher path @path into @u. */
static int unmap(struct offline *o, const char *path, struct unmapping *u)
{
	struct xnode *dir = o->m.root, *in = NULL;
	char stored[256];
	int rc, err = 0;

	u->plain[0] = '\0';
	u->kind = "entry";
	u->has_plain = true;
	while (!err && (rc = offline_component(&path, stored)) != 0) {
		err = rc < 0 ? rc : unmap_step(o, dir, stored,
					       offline_last(path), u, &in);
		if (dir != o->m.root)
			xm_forget(&o->m, dir, 1);
		dir = err || offline_last(path) ? o->m.root : in;
	}
	if (dir != o->m.root)
		xm_forget(&o->m, dir, 1);
	return err;
}

/* struct out - how results are printed. */
struct out {
	bool json;                 /* one JSON document */
	bool null;                 /* NUL-terminated, raw */
	bool quiet;                /* no warning for absent entries */
	bool first;                /* no JSON element printed yet */
	struct strlist all;        /* text: every cipher path, once */
};

/* One path as a line of text: escaped, or raw with -0. */
static void put_line(const struct out *w, const char *s)
{
	if (w->null)
		fwrite(s, 1, strlen(s) + 1, stdout);
	else
		printf("%s\n", offline_quote(s));
}

/* The JSON element of a path that failed: @key's value, the error. */
static void json_error(struct out *w, const char *key, const char *path,
		       const char *at, int err)
{
	printf("%s{", w->first ? "" : ", ");
	json_field(stdout, key, path);
	printf(", ");
	json_field(stdout, "at", at);
	printf(", ");
	json_field(stdout, "error", offline_strerror(err));
	printf("}");
	w->first = false;
}

static void put_mapping(struct out *w, const char *plain,
			const struct mapping *mp)
{
	bool valid = true;

	if (!w->json) {
		for (size_t i = 0; i < mp->needs.n; i++)
			(void)strlist_add(&w->all, mp->needs.v[i]);
		return;
	}
	printf("%s{", w->first ? "" : ", ");
	json_field(stdout, "plain", plain);
	printf(", ");
	json_field(stdout, "cipher", mp->entry);
	printf(", \"present\": %s, \"type\": ", mp->present ? "true" : "false");
	if (mp->present)
		printf("\"%s\"", offline_type(mp->st.st_mode));
	else
		printf("null");
	printf(", \"needs\": [");
	for (size_t i = 0; i < mp->needs.n; i++) {
		printf("%s", i ? ", " : "");
		valid &= json_string(stdout, mp->needs.v[i]);
	}
	printf("]");
	/* as json_field() does for one string: the exact bytes of all */
	for (size_t i = 0; !valid && i < mp->needs.n; i++) {
		printf("%s", i ? ", " : ", \"needs_b64\": [");
		json_b64(stdout, mp->needs.v[i]);
	}
	printf("%s}", valid ? "" : "]");
	w->first = false;
}

static void put_unmapping(struct out *w, const char *cipher,
			  const struct unmapping *u)
{
	if (!w->json) {
		if (u->has_plain)
			put_line(w, *u->plain ? u->plain : ".");
		return;
	}
	printf("%s{", w->first ? "" : ", ");
	json_field(stdout, "cipher", cipher);
	printf(", ");
	json_field(stdout, "plain", u->has_plain ? u->plain : NULL);
	printf(", \"kind\": \"%s\"}", u->kind);
	w->first = false;
}

/* Map each of @paths (@n) either way; return the exit code. */
static int run(struct offline *o, struct out *w, bool to_plain,
	       char **paths, int n)
{
	int ret = XTSFS_EXIT_OK, err;

	for (int i = 0; i < n; i++) {
		struct mapping mp = { 0 };
		struct unmapping u;

		err = to_plain ? unmap(o, paths[i], &u) : map_plain(o, paths[i],
								   &mp);
		if (err) {
			fprintf(stderr, PROG ": %s: %s%s%s\n",
				offline_quote(paths[i]), offline_strerror(err),
				to_plain || !*mp.entry ? "" : " at cipher path ",
				to_plain ? "" : offline_quote(mp.entry));
			if (w->json)
				json_error(w, to_plain ? "cipher" : "plain",
					   paths[i], to_plain ? NULL : mp.entry,
					   err);
			ret = XTSFS_EXIT_FAILURE;
		} else if (to_plain) {
			put_unmapping(w, paths[i], &u);
		} else {
			if (!mp.present && !w->quiet)
				fprintf(stderr, PROG ": %s: not in this copy "
					"(its cipher paths are computed)\n",
					offline_quote(paths[i]));
			put_mapping(w, paths[i], &mp);
		}
		strlist_free(&mp.needs);
	}
	return ret;
}

int main(int argc, char **argv)
{
	struct common_opts c;
	struct offline o;
	struct out w = { .first = true };
	bool to_plain = false;
	int opt, rc;

	common_init(&c, PROG);
	while ((opt = common_getopt(&cli, &c, argc, argv, &rc)) > 0) {
		switch (opt) {
		case OPT_TO_PLAIN:
			to_plain = true;
			break;
		case 'j':
			w.json = true;
			break;
		case '0':
			w.null = true;
			break;
		case 'q':
			w.quiet = c.quiet = true;
			break;
		}
	}
	if (opt < 0)
		return rc;
	if (argc - optind < 2)
		return cli_expected(&cli, to_plain ? "CIPHERDIR and CIPHERPATH..."
				    : "CIPHERDIR and PLAINPATH...");
	if (w.json && w.null)
		return cli_expected(&cli, "--json or --null, not both");
	common_warn_files(&c, PROG);
	rc = offline_open(&o, &c, PROG, argv[optind]);
	if (rc) {
		offline_close(&o);
		return rc;
	}
	if (w.json) {
		printf("{");
		json_field(stdout, "cipherdir", argv[optind]);
		printf(", \"plaintext_names\": %s, \"paths\": [",
		       o.plain_names ? "true" : "false");
	}
	rc = run(&o, &w, to_plain, argv + optind + 1, argc - optind - 1);
	if (w.json)
		printf("]}\n");
	for (size_t i = 0; i < w.all.n; i++)
		put_line(&w, w.all.v[i]);
	strlist_free(&w.all);
	offline_close(&o);
	return rc;
}
