/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_mount.c - the forward mount's core (mount.h) driven without FUSE:
 * a volume in a temporary directory, then through the xm_* calls what a
 * mount does: make directories, files (short and long names), symlinks,
 * hard links; write and read back every size class; list; rename;
 * truncate; remove; sync-tool conflict copies (FORMAT 4.8) listed,
 * read, linked, moved and removed; lower subdirectories read ahead
 * (xm_lower_ahead()) give back the node they hold. Each result is
 * checked against what was asked and against the cipher directory
 * itself (names encrypted, sizes = header + plaintext), so the core is
 * known to work on its own, as a checker or a restore tool will use it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mount.h"
#include "mount_int.h"
#include "testutil.h"

#define U 4096

static struct xmount M;
static struct caller Me; /* the test's own uid and gid */
static char top[64];
static struct aes_cmac_key Idkey;

static struct xnode *mkdir_(struct xnode *dir, const char *name)
{
	struct xnode *in = NULL;
	struct stat st;
	int err = xm_mkdir(&M, &Me, dir, name, 0755, &in, &st);

	CHECK(err == 0 && S_ISDIR(st.st_mode), "mkdir %.30s: %d", name, err);
	return in;
}

/* Write @len bytes of pattern @seed to new file @name in @dir; read back. */
static void file_roundtrip(struct xnode *dir, const char *name, size_t len,
			   unsigned seed)
{
	uint8_t *want = malloc(len + 1);
	struct xhandle *h = NULL;
	struct xnode *in = NULL;
	struct stat st;
	const uint8_t *got;
	bool keep;
	size_t done = 0;
	int err;

	for (size_t i = 0; i < len; i++)
		want[i] = (uint8_t)(i * 31 + seed);
	err = xm_create(&M, &Me, dir, name, 0644, O_RDWR | O_CREAT, &in, &st,
			&h, &keep);
	CHECK(err == 0 && st.st_size == 0, "create %.30s: %d", name, err);
	if (err) {
		free(want);
		return;
	}
	/* in odd pieces, so writes start and end inside units */
	while (done < len) {
		size_t n = len - done < 5000 ? len - done : 5000;
		bool killed;
		bool refusing;
		ssize_t w = xm_write(&M, &Me, h, want + done, n, (off_t)done,
				     false, &killed, &refusing);

		CHECK(w == (ssize_t)n && !killed, "write %zu at %zu: %zd", n,
		      done, w);
		if (w != (ssize_t)n)
			break;
		done += n;
	}
	CHECK(xm_getattr(&M, in, &st) == 0 && st.st_size == (off_t)len,
	      "size %zu: %lld", len, (long long)st.st_size);
	for (size_t off = 0; off < len; off += 3 * U + 7) {
		ssize_t n = xm_read(&M, h, 2 * U + 5, (off_t)off, &got);
		size_t exp = len - off < 2 * U + 5 ? len - off : 2 * U + 5;

		CHECK(n == (ssize_t)exp && !memcmp(got, want + off, exp),
		      "read %zu at %zu of %zu: %zd", exp, off, len, n);
	}
	CHECK(xm_read(&M, h, 10, (off_t)len, &got) == 0, "read at EOF");
	CHECK(xm_flush(&M, h) == 0, "flush");
	xm_release(h);
	xm_forget(&M, in, 1);
	free(want);
}

/* The plaintext names of @dir, sorted, joined by '/'. */
static void listing(struct xnode *dir, char *out, size_t size)
{
	char names[16][256];
	struct xm_dirent e;
	struct xdir *d;
	bool keep;
	int n = 0, rc;
	size_t o = 0;

	out[0] = '\0';
	if (xm_opendir(&M, dir, &d, &keep) != 0) {
		CHECK(0, "opendir");
		return;
	}
	while ((rc = xm_dir_peek(&M, dir, d, &e)) == 1) {
		if (strcmp(e.name, ".") && strcmp(e.name, "..") && n < 16)
			snprintf(names[n++], 256, "%s", e.name);
		xm_dir_take(d, &e);
	}
	CHECK(rc == 0, "listing ends cleanly: %d", rc);
	xm_releasedir(d);
	qsort(names, (size_t)n, 256, (int (*)(const void *, const void *))strcmp);
	for (int i = 0; i < n; i++)
		o += (size_t)snprintf(out + o, o < size ? size - o : 0, "%.40s/",
				      names[i]);
}

/* No plaintext name appears in the cipher directory. */
static void no_plain_names(const char *path, const char *const *plain)
{
	DIR *d = opendir(path);
	struct dirent *de;

	CHECK(d != NULL, "opendir %s", path);
	while (d && (de = readdir(d))) {
		for (int i = 0; plain[i]; i++)
			CHECK(strcmp(de->d_name, plain[i]) != 0,
			      "plaintext name %s in the cipher directory",
			      plain[i]);
	}
	if (d)
		closedir(d);
}

static int skips;
static char skipped_name[256];

static void on_skip(void *arg, struct xnode *dir, const char *stored)
{
	(void)arg;
	(void)dir;
	skips++;
	snprintf(skipped_name, sizeof(skipped_name), "%s", stored);
}

/*
 * xm_stored_name() and xm_plain_name(): the names a lookup finds,
 * without a lookup, for entries present and absent, short and long;
 * an undecryptable entry in a listing goes to m->skipped.
 */
static void stored_names(struct xnode *dir, const char *present,
			 const char *longname)
{
	static const char junk[] = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
	char out[256], side[NAMES_STORED_MAX + 1], buf[512];
	struct lname ln;
	struct stat st;
	int fd;

	CHECK(xm_stored_name(&M, dir, present, &ln) == 0 && !ln.is_long &&
	      fstatat(dir->fd, ln.stored, &st, AT_SYMLINK_NOFOLLOW) == 0,
	      "stored name of %s", present);
	CHECK(xm_plain_name(&M, dir, ln.stored, out) == 0 &&
	      !strcmp(out, present), "plain name of %s: %s", present, out);
	CHECK(xm_stored_name(&M, dir, longname, &ln) == 0 && ln.is_long &&
	      fstatat(dir->fd, ln.stored, &st, AT_SYMLINK_NOFOLLOW) == 0,
	      "stored long name");
	names_long_sidecar(side, ln.stored);
	CHECK(fstatat(dir->fd, side, &st, 0) == 0, "its sidecar %s", side);
	CHECK(xm_plain_name(&M, dir, ln.stored, out) == 0 &&
	      !strcmp(out, longname), "plain long name");
	CHECK(xm_plain_name(&M, dir, side, out) == 1, "a sidecar is ours");
	CHECK(xm_plain_name(&M, dir, NAMES_DIRID_FILE, out) == 1, "dirid ours");
	CHECK(xm_plain_name(&M, dir, junk, out) == -EBADMSG, "junk: EBADMSG");
	CHECK(xm_stored_name(&M, dir, "absent", &ln) == 0 &&
	      fstatat(dir->fd, ln.stored, &st, 0) == -1 && errno == ENOENT,
	      "stored name of an absent entry");
	CHECK(xm_stored_name(&M, dir, "a/b", &ln) == -EINVAL, "a '/'");

	fd = openat(dir->fd, junk, O_WRONLY | O_CREAT | O_EXCL, 0600);
	CHECK(fd >= 0, "make junk");
	if (fd >= 0)
		close(fd);
	M.skipped = on_skip;
	listing(dir, buf, sizeof(buf));
	M.skipped = NULL;
	CHECK(skips == 1 && !strcmp(skipped_name, junk), "skipped: %d %s",
	      skips, skipped_name);
	unlinkat(dir->fd, junk, 0);
}

/* ---- sync-tool conflict copies (FORMAT 4.8) -------------------------- */

static const char st_sfx[] = ".sync-conflict-20240131-235959-ABCDEF7";
static const char nc_sfx[] = " (conflicted copy 2024-01-01 101010)";

/*
 * Give entry @name of @dir the lower name a sync tool gives its conflict
 * copy with suffix @sfx: renamed (@keep false) or linked beside it.
 */
static void make_copy(struct xnode *dir, const char *name, const char *sfx,
		      bool keep)
{
	char lower[512];
	struct lname ln;
	size_t len;

	CHECK(xm_stored_name(&M, dir, name, &ln) == 0, "stored %.20s", name);
	len = strlen(ln.stored);
	if (ln.is_long) /* before the "extension" .<V> */
		snprintf(lower, sizeof(lower), "xtsfs.long%s%s", sfx,
			 ln.stored + len - 23);
	else
		snprintf(lower, sizeof(lower), "%s%s", ln.stored, sfx);
	CHECK((keep ? linkat(dir->fd, ln.stored, dir->fd, lower, 0) :
	       renameat(dir->fd, ln.stored, dir->fd, lower)) == 0,
	      "lower copy %s", lower);
}

/* The first @len bytes of file @name of @dir are pattern @seed's. */
static void reads_as(struct xnode *dir, const char *name, size_t len,
		     unsigned seed)
{
	struct xhandle *h = NULL;
	struct xnode *in = NULL;
	const uint8_t *got;
	struct stat st;
	bool keep, same = true;
	ssize_t n = -1;

	CHECK(xm_lookup(&M, dir, name, &in, &st) == 0 &&
	      st.st_size == (off_t)len, "lookup %.50s", name);
	if (!in)
		return;
	if (xm_open(&M, &Me, in, O_RDONLY, &h, &keep) == 0) {
		n = xm_read(&M, h, len, 0, &got);
		for (ssize_t i = 0; i < n && same; i++)
			same = got[i] == (uint8_t)(i * 31 + seed);
		xm_release(h);
	}
	CHECK(n == (ssize_t)len && same, "read %.50s: %zd", name, n);
	xm_forget(&M, in, 1);
}

/* How many entries of @dir's listing are named @name. */
static int listed(struct xnode *dir, const char *name)
{
	struct xm_dirent e;
	struct xdir *d;
	bool keep;
	int n = 0;

	if (xm_opendir(&M, dir, &d, &keep) != 0)
		return -1;
	while (xm_dir_peek(&M, dir, d, &e) == 1) {
		n += !strcmp(e.name, name);
		xm_dir_take(d, &e);
	}
	xm_releasedir(d);
	return n;
}

/* A copy of a short and of a long file: listed, read, moved, removed. */
static void conflict_files(struct xnode *c)
{
	char big[201], name[300];
	struct xnode *in = NULL;
	struct lname ln;
	struct stat st;

	memset(big, 'K', 200);
	big[200] = '\0';
	file_roundtrip(c, "a", 3, 5);
	file_roundtrip(c, big, 100, 6);
	make_copy(c, "a", st_sfx, false);
	make_copy(c, big, nc_sfx, true);
	snprintf(name, sizeof(name), "a%s", st_sfx);
	CHECK(listed(c, name) == 1 && listed(c, "a") == 0, "a's copy listed");
	CHECK(xm_lookup(&M, c, "a", &in, &st) == -ENOENT, "a is gone");
	reads_as(c, name, 3, 5);
	CHECK(xm_lookup(&M, c, name, &in, &st) == 0, "lookup the copy");
	CHECK(in && xm_link(&M, in, c, "hard", &in, &st) == 0 &&
	      st.st_nlink == 2, "hard link of a copy");
	xm_forget(&M, in, 2);
	CHECK(xm_rename(&M, &Me, c, name, c, "b", 0) == 0, "mv copy b");
	CHECK(xm_stored_name(&M, c, "b", &ln) == 0 && !ln.conflict &&
	      fstatat(c->fd, ln.stored, &st, AT_SYMLINK_NOFOLLOW) == 0,
	      "b is stored normally");
	reads_as(c, "b", 3, 5);
	/* a new file of a conflict copy's name gets a normal stored name */
	file_roundtrip(c, name, 2, 8);
	CHECK(xm_stored_name(&M, c, name, &ln) == 0 && !ln.conflict,
	      "new file named like a copy");
	CHECK(xm_unlink(&M, &Me, c, name) == 0, "its unlink");

	/* the long copy shares the sidecar, which outlives the original */
	snprintf(name, sizeof(name), "%s%s", big, nc_sfx);
	CHECK(strlen(name) > 200 && listed(c, name) == 1, "long copy listed");
	CHECK(xm_unlink(&M, &Me, c, big) == 0, "rm the original");
	CHECK(listed(c, name) == 1, "the copy is still listed");
	reads_as(c, name, 100, 6);
	CHECK(xm_rename(&M, &Me, c, name, c, big, 0) == 0, "mv copy back");
	reads_as(c, big, 100, 6);
	CHECK(listed(c, name) == 0 && listed(c, big) == 1, "moved back");
	CHECK(xm_stored_name(&M, c, big, &ln) == 0 && ln.is_long, "long");
	CHECK(xm_unlink(&M, &Me, c, big) == 0, "rm long");
	names_long_sidecar(name, ln.stored);
	CHECK(fstatat(c->fd, name, &st, 0) != 0, "the last user drops %s",
	      name);
}

/* A copy of a directory; a shadowed copy; an unknown suffix. */
static void conflict_others(struct xnode *c)
{
	char name[300], out[256];
	struct xnode *d, *in = NULL;
	struct lname ln;
	struct stat st;

	d = mkdir_(c, "d");
	xm_forget(&M, d, 1);
	make_copy(c, "d", nc_sfx, false);
	snprintf(name, sizeof(name), "d%s", nc_sfx);
	CHECK(xm_lookup(&M, c, name, &d, &st) == 0 && S_ISDIR(st.st_mode),
	      "directory copy");
	if (d) {
		file_roundtrip(d, "inner", 10, 9);
		reads_as(d, "inner", 10, 9);
		CHECK(xm_unlink(&M, &Me, d, "inner") == 0, "rm inner");
		xm_forget(&M, d, 1);
	}
	CHECK(xm_rmdir(&M, &Me, c, name) == 0, "rmdir the copy");

	/* an entry of the copy's very name is what lookup finds */
	file_roundtrip(c, "s", 1, 1);
	snprintf(name, sizeof(name), "s%s", st_sfx);
	file_roundtrip(c, name, 2, 2);
	make_copy(c, "s", st_sfx, false);
	CHECK(listed(c, name) == 1, "listed once");
	reads_as(c, name, 2, 2);

	/* a stored name + junk: not listed, reported */
	file_roundtrip(c, "u", 1, 3);
	make_copy(c, "u", "-junk", false);
	CHECK(xm_stored_name(&M, c, "u", &ln) == 0, "u");
	snprintf(name, sizeof(name), "%s-junk", ln.stored);
	CHECK(xm_plain_name(&M, c, name, out) == -EILSEQ, "unknown suffix");
	skips = 0;
	M.skipped = on_skip;
	CHECK(listed(c, "u") == 0 && skips == 1 &&
	      !strcmp(skipped_name, name), "junk skipped: %d", skips);
	M.skipped = NULL;
	(void)in;
}

/*
 * The note that a directory holds no long copy (dirops.c) must never
 * outlive a copy made behind our back, of whichever entry: removing
 * many long names reads the directory once, not once per name.
 */
static void conflict_memo(struct xnode *c)
{
	char big[4][202], name[300];
	struct xnode *d = mkdir_(c, "memo");

	for (int i = 0; i < 4; i++) {
		memset(big[i], 'M', 200);
		big[i][200] = (char)('0' + i);
		big[i][201] = '\0';
		file_roundtrip(d, big[i], 50, (unsigned)(20 + i));
	}
	/* two removals: the first notes "no copy", the second carries it */
	CHECK(xm_unlink(&M, &Me, d, big[0]) == 0 &&
	      xm_unlink(&M, &Me, d, big[1]) == 0, "rm two long names");
	/* a sync tool copies big[2]; removing big[3] sees the copy */
	make_copy(d, big[2], st_sfx, true);
	CHECK(xm_unlink(&M, &Me, d, big[3]) == 0, "rm another long name");
	{
		struct lname ln;
		struct stat st;
		char side[NAMES_STORED_MAX + 1];

		CHECK(xm_stored_name(&M, d, big[2], &ln) == 0 && ln.is_long,
		      "big[2] is long");
		names_long_sidecar(side, ln.stored);
		CHECK(xm_unlink(&M, &Me, d, big[2]) == 0, "rm the copied one");
		CHECK(fstatat(d->fd, side, &st, AT_SYMLINK_NOFOLLOW) == 0,
		      "the copy's sidecar %s is still there", side);
	}
	snprintf(name, sizeof(name), "%s%s", big[2], st_sfx);
	CHECK(listed(d, name) == 1, "the copy kept its sidecar");
	reads_as(d, name, 50, 22);
	CHECK(xm_unlink(&M, &Me, d, name) == 0, "rm the copy");
	CHECK(listed(d, name) == 0, "gone");
	xm_forget(&M, d, 1);
}

static void conflicts(void)
{
	struct xnode *c = mkdir_(M.root, "conflicts");

	if (!c)
		return;
	conflict_memo(c);
	conflict_files(c);
	conflict_others(c);
	xm_forget(&M, c, 1);
}

static void run(void)
{
	static const size_t sizes[] = { 0, 1, 15, 16, 17, U - 1, U, U + 1,
					U + 15, U + 16, 2 * U, 300000 + 7 };
	static const char *const plain[] = { "docs", "xtsfs.volume", NULL };
	char longname[201], buf[512], target[4096];
	struct xnode *docs, *in = NULL, *sub;
	struct stat st, attr;
	int err;

	docs = mkdir_(M.root, "docs");
	sub = mkdir_(docs, "sub");
	if (!docs || !sub)
		return;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		snprintf(buf, sizeof(buf), "f%zu", i);
		file_roundtrip(docs, buf, sizes[i], (unsigned)i);
	}
	memset(longname, 'L', 200);
	longname[200] = '\0';
	file_roundtrip(sub, longname, 5000, 99);
	err = xm_symlink(&M, &Me, docs, "link", "f3/../f4", &in, &st);
	CHECK(err == 0 && S_ISLNK(st.st_mode) && st.st_size == 8,
	      "symlink: %d, size %lld", err, (long long)st.st_size);
	CHECK(xm_readlink(&M, in, target) == 0 && !strcmp(target, "f3/../f4"),
	      "readlink: %s", target);
	xm_forget(&M, in, 1);

	listing(sub, buf, sizeof(buf));
	CHECK(!strncmp(buf, "LLLL", 4), "long name listed: %s", buf);
	file_roundtrip(sub, "short", 3, 1);
	stored_names(sub, "short", longname);
	CHECK(xm_unlink(&M, &Me, sub, "short") == 0, "unlink short");
	CHECK(xm_lookup(&M, sub, longname, &in, &st) == 0 && st.st_size == 5000,
	      "lookup of the long name");
	xm_forget(&M, in, 1);

	/* hard link, rename over, truncate */
	CHECK(xm_lookup(&M, docs, "f11", &in, &st) == 0, "lookup f11");
	err = xm_link(&M, in, sub, "hard", &in, &st);
	CHECK(err == 0 && st.st_nlink == 2, "link: %d nlink %lu", err,
	      (unsigned long)st.st_nlink);
	xm_forget(&M, in, 2);
	CHECK(xm_rename(&M, &Me, docs, "f1", docs, "f2", 0) == 0, "rename");
	CHECK(xm_lookup(&M, docs, "f1", &in, &st) == -ENOENT, "f1 gone");
	CHECK(xm_lookup(&M, docs, "f2", &in, &st) == 0 && st.st_size == 1,
	      "f2 is the old f1");
	memset(&attr, 0, sizeof(attr));
	attr.st_size = U + 3;
	CHECK(xm_setattr(&M, &Me, in, &attr, XM_SET_SIZE, NULL, &st) == 0 &&
	      st.st_size == U + 3, "truncate up");
	xm_forget(&M, in, 1);
	CHECK(xm_rename(&M, &Me, docs, "f2", docs, "f3",
			RENAME_NOREPLACE) == -EEXIST, "noreplace");
	CHECK(xm_rename(&M, &Me, docs, "f2", docs, "f3", 1u << 20) == -EINVAL,
	      "unknown rename flag");

	listing(docs, buf, sizeof(buf));
	CHECK(!strcmp(buf, "f0/f10/f11/f2/f3/f4/f5/f6/f7/f8/f9/link/sub/"),
	      "docs lists %s", buf);
	/*
	 * With encrypted names the volume's own names are plaintext names
	 * like others: encrypted, they cannot meet the real ones (FORMAT
	 * 4.5).
	 */
	CHECK(xm_lookup(&M, M.root, "xtsfs.volume", &in, &st) == -ENOENT,
	      "xtsfs.volume looked up");
	CHECK(xm_mkdir(&M, &Me, M.root, "xtsfs.volume", 0755, &in, &st) == 0,
	      "xtsfs.volume made");
	xm_forget(&M, in, 1);
	no_plain_names(top, plain);
	CHECK(xm_rmdir(&M, &Me, M.root, "xtsfs.volume") == 0, "its rmdir");

	CHECK(xm_rmdir(&M, &Me, docs, "sub") == -ENOTEMPTY, "rmdir non-empty");
	CHECK(xm_unlink(&M, &Me, sub, longname) == 0, "unlink long name");
	CHECK(xm_unlink(&M, &Me, sub, "hard") == 0, "unlink hard link");
	CHECK(xm_unlink(&M, &Me, sub, "hard") == -ENOENT, "unlink twice");
	xm_forget(&M, sub, 1);
	CHECK(xm_rmdir(&M, &Me, docs, "sub") == 0, "rmdir");
	xm_forget(&M, docs, 1);
}

/*
 * Every directory made through the mount gets its dirid derived from its
 * parent's and its name (FORMAT 4.2); a writable mount with encrypted
 * names and no key to derive them is refused.
 */
/* Whether @in's stored dirid (into @got) is the one derived from @parent
 * and @name. */
static bool dirid_is_derived(struct xnode *in, const uint8_t parent[16],
			     const char *name, uint8_t got[16])
{
	uint8_t want[16];
	int fd = in ? openat(in->fd, ".", O_RDONLY | O_DIRECTORY) : -1;
	bool ok;

	dirops_derive_dirid(&Idkey, parent, name, strlen(name), want);
	ok = fd >= 0 && dirops_read_dirid(fd, got) == 0 &&
	     !memcmp(got, want, 16);
	if (fd >= 0)
		close(fd);
	return ok;
}

static void derived(void)
{
	struct xnode *a = mkdir_(M.root, "derived"), *b;
	uint8_t zero[16] = { 0 }, got[16], got2[16];
	struct xmount bare = { 0 };

	CHECK(dirid_is_derived(a, zero, "derived", got),
	      "mkdir: the derived dirid");
	b = a ? mkdir_(a, "inner") : NULL;
	CHECK(dirid_is_derived(b, got, "inner", got2),
	      "mkdir below: derived from the parent");
	if (b)
		xm_forget(&M, b, 1);
	if (a)
		xm_forget(&M, a, 1);
	bare.names = M.names;
	bare.root_fd = -1;
	CHECK(xm_init(&bare) == -EINVAL, "no dirid key: refused");
}

/* A fresh node for @name in @dir (xm_lookup), or NULL. */
static struct xnode *look(struct xnode *dir, const char *name)
{
	struct xnode *in = NULL;
	struct stat st;

	return xm_lookup(&M, dir, name, &in, &st) ? NULL : in;
}

/* An empty file @name in @dir; Return: 0 or -errno. */
static int touch_(struct xnode *dir, const char *name)
{
	struct xhandle *h = NULL;
	struct xnode *in = NULL;
	struct stat st;
	bool keep;
	int err = xm_create(&M, &Me, dir, name, 0644, O_RDWR | O_CREAT, &in,
			    &st, &h, &keep);

	if (!err) {
		xm_release(h);
		xm_forget(&M, in, 1);
	}
	return err;
}

/* Forget the reference a lookup gave, if it gave one. */
static void drop(struct xnode *in)
{
	if (in)
		xm_forget(&M, in, 1);
}

/* Directory @name of the root, looked up afresh; its listing must be @want. */
static struct xnode *look_listed(const char *name, const char *want)
{
	struct xnode *in = look(M.root, name);
	char list[256];

	CHECK(in != NULL, "%s found", name);
	if (in) {
		listing(in, list, sizeof(list));
		CHECK(!strcmp(list, want), "%s listed: %s", name, list);
	}
	return in;
}

/* @in's state: dirid loaded (1), candidate only (2), neither (0). */
static int id_state(struct xnode *in)
{
	int s;

	pthread_mutex_lock(&in->meta_lock);
	s = in->dirid_ok ? 1 : in->cand_ok ? 2 : 0;
	pthread_mutex_unlock(&in->meta_lock);
	return s;
}

/*
 * Directories found by name read their names under the derived dirid
 * without reading xtsfs.dirid (xm_dir_found()); a renamed one, whose
 * derived dirid is another, falls back on the file; one whose file is
 * lost still reads, and refuses creates.
 */
static void candidates(void)
{
	struct xnode *a = mkdir_(M.root, "cand-a"), *in, *f;
	char list[256];
	int lfd;

	if (!a)
		return;
	CHECK(touch_(a, "f") == 0, "create in cand-a");
	xm_forget(&M, a, 1);
	/* found again by name: the candidate, no file read */
	in = look(M.root, "cand-a");
	CHECK(in && id_state(in) == 2, "found: candidate only");
	f = in ? look(in, "f") : NULL;
	CHECK(f != NULL, "f found under the candidate");
	drop(f);
	if (in) {
		listing(in, list, sizeof(list));
		CHECK(!strcmp(list, "f/"), "listed under it: %s", list);
		CHECK(id_state(in) == 2, "xtsfs.dirid still not read");
		CHECK(touch_(in, "g") == 0 && id_state(in) == 1,
		      "a create reads the file");
		xm_forget(&M, in, 1);
	}
	/* renamed: the name's derived dirid is not its own */
	CHECK(xm_rename(&M, &Me, M.root, "cand-a", M.root, "cand-b", 0) == 0,
	      "rename");
	in = look(M.root, "cand-b");
	CHECK(in && id_state(in) == 2, "renamed, found: candidate only");
	f = in ? look(in, "g") : NULL;
	CHECK(f != NULL && id_state(in) == 1,
	      "a name not under it: the file read, found under that");
	drop(f);
	drop(in);
	in = look_listed("cand-b", "f/g/");
	if (in) {
		CHECK(id_state(in) == 1, "a listing under another id: the file");
		f = look(in, "absent");
		CHECK(f == NULL, "an absent name stays absent");
		xm_forget(&M, in, 1);
	}
	/* xtsfs.dirid lost: names read under the candidate, creates EIO */
	a = mkdir_(M.root, "cand-c");
	CHECK(a && touch_(a, "h") == 0, "create in cand-c");
	lfd = a ? openat(a->fd, ".", O_RDONLY | O_DIRECTORY) : -1;
	CHECK(lfd >= 0 && unlinkat(lfd, NAMES_DIRID_FILE, 0) == 0,
	      "lose cand-c's xtsfs.dirid");
	if (lfd >= 0)
		close(lfd);
	drop(a);
	in = look_listed("cand-c", "h/");
	if (in) {
		f = look(in, "h");
		CHECK(f != NULL, "lost dirid: h found");
		drop(f);
		CHECK(look(in, "nope") == NULL, "lost dirid: absent");
		CHECK(touch_(in, "i") == -EIO, "lost dirid: a create is EIO");
		xm_forget(&M, in, 1);
	}
}

/* Make file @name in the root with @len bytes of @seed, through @h. */
static struct xnode *bare_file(const char *name, size_t len, unsigned seed,
			       struct xhandle **h)
{
	uint8_t buf[9000];
	struct xnode *in = NULL;
	struct stat st;
	bool keep, killed, refusing;
	int err = xm_create(&M, &Me, M.root, name, 0644, O_RDWR | O_CREAT,
			    &in, &st, h, &keep);

	CHECK(err == 0, "create %s: %d", name, err);
	if (err)
		return NULL;
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)(i * 13 + seed);
	CHECK(xm_write(&M, &Me, *h, buf, len, 0, false, &killed,
		       &refusing) == (ssize_t)len, "write %s", name);
	return in;
}

/* Whether @h reads back bare_file()'s @len bytes of @seed. */
static bool bare_reads(struct xhandle *h, size_t len, unsigned seed)
{
	const uint8_t *got;
	ssize_t n = xm_read(&M, h, len, 0, &got);

	if (n != (ssize_t)len)
		return false;
	for (size_t i = 0; i < len; i++)
		if (got[i] != (uint8_t)(i * 13 + seed))
			return false;
	return true;
}

/*
 * -o noopen's handles (xm_bare()): a created file's handle adopted as
 * the node's own, shared by requests, closed out of descriptors only
 * when no request uses it and opened again after; and a lower file
 * rewritten in place with another file's bytes, header and all, read
 * right at once (its ctime moved), and after its header is forgotten
 * (what the notifier does).
 */
static void bare_handles(void)
{
	struct xhandle *h, *b1 = NULL, *b2 = NULL, *g = NULL;
	struct xnode *in = bare_file("bare-f", 9000, 1, &h);
	struct xnode *other = bare_file("bare-g", 9000, 2, &g);
	char lf[64], lg[64];
	int fdf, fdg;
	uint8_t all[9040];

	if (!in || !other)
		return;
	xm_release(g);
	xm_bare_adopt(h);
	CHECK(in->bare == h && in->handles == 0, "adopted, not open");
	CHECK(xm_bare(&M, in, &b1) == 0 && b1 == h, "the same handle");
	CHECK(xm_bare(&M, in, &b2) == 0 && b2 == h && h->users == 2,
	      "shared by two requests");
	CHECK(bare_reads(b1, 9000, 1), "reads through it");
	CHECK(bare_reclaim(&M) == 0 && in->bare == h, "in use: kept");
	xm_bare_put(b1);
	xm_bare_put(b2);
	CHECK(bare_reclaim(&M) >= 1 && !in->bare, "unused: closed");
	CHECK(xm_bare(&M, in, &b1) == 0 && b1 && b1->writable,
	      "opened again, for writing");
	CHECK(b1 && bare_reads(b1, 9000, 1), "reads again");
	/*
	 * The other file's lower bytes over this one's, in place, with no
	 * open or notifier between: the lower ctime moves, and the read
	 * takes its header again. After a clock tick, so that a kernel
	 * without fine-grained timestamps moves the ctime too.
	 */
	nanosleep(&(struct timespec){ .tv_nsec = 20 * 1000 * 1000 }, NULL);
	snprintf(lf, sizeof(lf), "/proc/self/fd/%d", in->fd);
	snprintf(lg, sizeof(lg), "/proc/self/fd/%d", other->fd);
	fdf = open(lf, O_WRONLY | O_CLOEXEC);
	fdg = open(lg, O_RDONLY | O_CLOEXEC);
	CHECK(fdf >= 0 && fdg >= 0 &&
	      pread(fdg, all, sizeof(all), 0) == (ssize_t)sizeof(all) &&
	      pwrite(fdf, all, sizeof(all), 0) == (ssize_t)sizeof(all),
	      "rewrite in place");
	CHECK(b1 && bare_reads(b1, 9000, 2), "rewritten: read with its header");
	header_forget(in); /* what the notifier does */
	CHECK(b1 && bare_reads(b1, 9000, 2), "its header read again: it");
	if (b1)
		xm_bare_put(b1);
	close(fdf);
	close(fdg);
	xm_forget(&M, other, 1);
	xm_forget(&M, in, 1); /* closes the node's handle */
}

/* The lower read-ahead's threads are idle and nothing is queued. */
static bool lower_ahead_idle(void)
{
	struct prefetch *p = &M.lower_ra;
	bool idle;

	pthread_mutex_lock(&p->lock);
	idle = !p->count && p->idle == p->nthreads;
	pthread_mutex_unlock(&p->lock);
	return idle;
}

/*
 * Lower subdirectories read ahead (xm_lower_ahead()), as a listing posts
 * them: whatever the name turns out to be (a subdirectory, a file,
 * nothing at all), the item holds its directory until done and then
 * gives it back, so the directory's node goes when its last user
 * forgets it, and the listing is unchanged.
 */
static void lower_ahead(void)
{
	struct xnode *d = mkdir_(M.root, "ahead");
	char stored[3][256], out[256];
	struct xm_dirent e;
	struct xdir *dh;
	size_t before;
	bool keep;
	int n = 0, w = 0;

	if (!d)
		return;
	if (!M.lower_ra.running)
		printf("test_mount: /tmp is not on a local disk: nothing is "
		       "read ahead, only the references are checked\n");
	drop(mkdir_(d, "sub"));
	CHECK(touch_(d, "file") == 0, "touch ahead/file");
	if (xm_opendir(&M, d, &dh, &keep) == 0) {
		while (xm_dir_peek(&M, d, dh, &e) == 1) {
			if (strcmp(e.name, ".") && strcmp(e.name, "..") && n < 2)
				snprintf(stored[n++], 256, "%s", e.stored);
			xm_dir_take(dh, &e);
		}
		xm_releasedir(dh);
	}
	CHECK(n == 2, "ahead/ lists 2 entries: %d", n);
	snprintf(stored[n++], 256, "%s", "not-there");
	before = itable_count(&M.inodes);
	for (int i = 0; i < 300; i++)
		xm_lower_ahead(&M, d, stored[i % n]);
	while (!lower_ahead_idle() && w++ < 3000)
		usleep(10000);
	CHECK(lower_ahead_idle(), "the read-ahead queue drains");
	listing(d, out, sizeof(out));
	CHECK(!strcmp(out, "file/sub/"), "ahead/ after: %s", out);
	CHECK(itable_count(&M.inodes) == before, "nodes %zu, were %zu",
	      itable_count(&M.inodes), before);
	drop(d);
	CHECK(itable_count(&M.inodes) == before - 1,
	      "ahead/ forgotten: nodes %zu, were %zu",
	      itable_count(&M.inodes), before);
}

int main(void)
{
	uint8_t key[64];
	const struct xts_backend *be;
	struct xts_ctx *xts = NULL;
	struct names_ctx *names = NULL;

	snprintf(top, sizeof(top), "/tmp/test_mount.XXXXXX");
	if (!mkdtemp(top)) {
		perror("mkdtemp");
		return 1;
	}
	for (int i = 0; i < 64; i++)
		key[i] = (uint8_t)(i * 7 + 3);
	if (xts_choose(NULL, &be) || xts_ctx_new(&xts, be, key) ||
	    names_ctx_new(&names, key)) {
		fprintf(stderr, "test_mount: keys\n");
		return 1;
	}
	Me.uid = getuid();
	Me.gid = getgid();
	M.root_fd = open(top, O_PATH | O_DIRECTORY | O_CLOEXEC);
	M.xts = xts;
	M.names = names;
	aes_cmac_setkey(&Idkey, key);
	M.idkey = &Idkey;
	M.mountpoint = top;
	M.cipherdir = top;
	M.attr_timeout = M.entry_timeout = 1;
	if (M.root_fd < 0 || xm_init(&M) != 0) {
		fprintf(stderr, "test_mount: xm_init\n");
		return 1;
	}
	run();
	conflicts();
	derived();
	candidates();
	bare_handles();
	lower_ahead();
	xm_destroy(&M);
	aes_cmac_wipe(&Idkey);
	names_ctx_free(names);
	xts_ctx_free(xts);
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", top);
		CHECK(system(cmd) == 0, "rm -rf %s", top);
	}
	printf("test_mount: %s\n", test_failures ? "FAILED" : "ok");
	return test_failures ? 1 : 0;
}
