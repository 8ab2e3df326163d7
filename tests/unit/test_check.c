/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_check.c - the checker core alone (check.h), on a tree made with
 * the same dirops.c and content.c a mount uses: a clean tree has no
 * problem; then one damage at a time, each found with its kind and
 * lower path, repaired only when asked and only when check.h says it is
 * provable; plus check_escape(), check_kind_name() and check_mounted()
 * on a made-up mountinfo.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "content.h"
#include "dirops.h"
#include "testutil.h"
#include "xts.h"

static struct dirops D;
static struct xts_ctx *X;
static int topfd;
static char top[64];

/* What a walk reported: kinds and lower paths, and the repairs done. */
struct seen {
	int n, repaired;
	enum check_kind kind[32];
	char cipher[32][300];
};

static void on_report(void *arg, const struct check_problem *p)
{
	struct seen *s = arg;

	if (s->n < 32) {
		s->kind[s->n] = p->kind;
		snprintf(s->cipher[s->n], sizeof(s->cipher[0]), "%s",
			 p->cipher);
	}
	s->n++;
	s->repaired += p->repaired;
}

static bool yes(void *arg, const struct check_problem *p)
{
	(void)arg;
	(void)p;
	return true;
}

static const struct aes_cmac_key *Idk; /* the walk's dirid key */

static void walk(struct seen *s, bool repair)
{
	struct check_opts o = {
		.names = D.names, .xts = X, .report = on_report, .idkey = Idk,
		.ask = repair ? yes : NULL, .arg = s,
	};
	struct check_counts c;

	memset(s, 0, sizeof(*s));
	CHECK(check_walk(topfd, &o, &c) == 0, "walk");
	CHECK(c.problems == (uint64_t)s->n, "counts");
}

/* The walk found exactly one problem, of kind @k at lower path @path. */
static void expect_one(const struct seen *s, enum check_kind k,
		       const char *path)
{
	CHECK(s->n == 1, "%d problems, want 1 %s", s->n, check_kind_name(k));
	if (s->n >= 1) {
		CHECK(s->kind[0] == k, "kind %s, want %s",
		      check_kind_name(s->kind[0]), check_kind_name(k));
		CHECK(!path || !strcmp(s->cipher[0], path), "path %s, want %s",
		      s->cipher[0], path);
	}
}

static int root_dirid(void *arg, uint8_t out[NAMES_DIRID_SIZE])
{
	(void)arg;
	memset(out, 0, NAMES_DIRID_SIZE);
	return 0;
}

static const struct dirid_src root_id = { root_dirid, NULL };

/* A file @name of @len bytes in the root, written as a mount writes. */
static void make_file(const char *name, size_t len, struct lname *ln)
{
	uint8_t buf[5000];
	struct content_hdr h;
	uint64_t ps = 0;
	int fd;

	CHECK_OK(dirops_name_enc(&D, &root_id, true, name, ln));
	fd = openat(topfd, ln->stored, O_RDWR | O_CREAT | O_EXCL, 0644);
	CHECK(fd >= 0, "create %s", name);
	memset(buf, 'x', sizeof(buf));
	CHECK_OK(content_init_header(fd, LAYOUT_DOFF_COMPACT, &h));
	CHECK(content_write(X, fd, &h, &ps, buf, len, 0, 0) == (ssize_t)len,
	      "write %s", name);
	close(fd);
}

static void test_tree(void)
{
	struct lname f, d, l, big;
	struct seen s;
	char side[300], path[400];
	int fd;

	make_file("tail", 3, &f);
	make_file("big", 5000, &big);
	CHECK_OK(dirops_name_enc(&D, &root_id, true, "dir", &d));
	CHECK_OK(dirops_mkdir(&D, topfd, &d, 0755, &root_id, "dir"));
	memset(side, 'L', 200);
	side[200] = '\0';
	CHECK_OK(dirops_name_enc(&D, &root_id, true, side, &l));
	CHECK(l.is_long, "a long name");
	CHECK_OK(dirops_mkdir(&D, topfd, &l, 0755, &root_id, side));
	walk(&s, false);
	CHECK(s.n == 0, "clean tree: %d problems (%s)", s.n,
	      s.n ? check_kind_name(s.kind[0]) : "");

	/* a dirid of an empty directory: any new one is right */
	snprintf(path, sizeof(path), "%s/xtsfs.dirid", d.stored);
	CHECK_OK(unlinkat(topfd, path, 0));
	walk(&s, false);
	expect_one(&s, CHECK_DIRID_MISSING, path);
	CHECK(faccessat(topfd, path, F_OK, 0) != 0, "not repaired unasked");
	walk(&s, true);
	CHECK(s.repaired == 1, "repaired");
	walk(&s, false);
	CHECK(s.n == 0, "clean after the dirid repair");

	/* an orphaned sidecar: removed */
	names_long_sidecar(side, "xtsfs.long.AAAAAAAAAAAAAAAAAAAAAA");
	fd = openat(topfd, side, O_WRONLY | O_CREAT, 0444);
	close(fd);
	walk(&s, true);
	expect_one(&s, CHECK_SIDECAR_ORPHAN, side);
	CHECK(s.repaired == 1 && faccessat(topfd, side, F_OK, 0) != 0,
	      "orphan removed");

	/* a missing sidecar: reported, nothing touched */
	names_long_sidecar(side, l.stored);
	CHECK_OK(renameat(topfd, side, topfd, "moved"));
	walk(&s, true);
	CHECK(s.n == 2 && s.repaired == 0, "missing sidecar: %d", s.n);
	CHECK_OK(renameat(topfd, "moved", topfd, side));

	/* a garbage (but canonical base64url) name: reported, kept */
	fd = openat(topfd, "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
		    O_WRONLY | O_CREAT, 0644);
	close(fd);
	walk(&s, true);
	expect_one(&s, CHECK_NAME_BAD, NULL);
	CHECK_OK(unlinkat(topfd, "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
			  0));

	/* a conflict copy beside an entry: foreign */
	snprintf(path, sizeof(path), "%s (1)", big.stored);
	fd = openat(topfd, path, O_WRONLY | O_CREAT, 0644);
	close(fd);
	walk(&s, true);
	expect_one(&s, CHECK_NAME_FOREIGN, path);
	CHECK_OK(unlinkat(topfd, path, 0));

	/* a file cut inside its header, then into a short tail */
	fd = openat(topfd, big.stored, O_WRONLY);
	CHECK_OK(ftruncate(fd, 17));
	walk(&s, false);
	expect_one(&s, CHECK_FILE_CUT_HEADER, big.stored);
	CHECK_OK(ftruncate(fd, 0));
	walk(&s, false);
	CHECK(s.n == 0, "an empty lower file is an empty file");
	close(fd);
	fd = openat(topfd, f.stored, O_WRONLY);
	CHECK_OK(ftruncate(fd, 40 + 2));
	close(fd);
	walk(&s, true);
	expect_one(&s, CHECK_FILE_TAIL, f.stored);
	CHECK(s.repaired == 0, "user data is not repaired");
}

static int sub_dirid(void *arg, uint8_t out[NAMES_DIRID_SIZE])
{
	return dirops_read_dirid(*(int *)arg, out);
}

/*
 * A lost dirid of a directory made by a format 2 writer: its entries
 * authenticate under the dirid derived from its parent and name, so
 * the walk can put it back (with the key; without, it cannot).
 */
static void test_derived_repair(void)
{
	uint8_t hk[32], id[16], want[16], zero[16] = { 0 };
	struct aes_cmac_key k;
	struct lname d, a, b;
	struct seen s;
	char path[400];
	size_t len;
	int fd;
	struct dirid_src sub = { sub_dirid, &fd };

	memset(hk, 0x5a, sizeof(hk));
	aes_cmac_setkey(&k, hk);
	D.idkey = &k;
	CHECK_OK(dirops_name_enc(&D, &root_id, true, "proj", &d));
	CHECK_OK(dirops_mkdir(&D, topfd, &d, 0755, &root_id, "proj"));
	fd = openat(topfd, d.stored, O_RDONLY | O_DIRECTORY);
	CHECK(fd >= 0, "open proj");
	CHECK_OK(dirops_name_enc(&D, &sub, false, "a.c", &a));
	CHECK_OK(dirops_name_enc(&D, &sub, false, "b.c", &b));
	CHECK_OK(dirops_mknod(&D, fd, &a, S_IFREG | 0644, 0));
	CHECK_OK(dirops_mknod(&D, fd, &b, S_IFREG | 0644, 0));
	CHECK_OK(unlinkat(fd, "xtsfs.dirid", 0));
	snprintf(path, sizeof(path), "%s/xtsfs.dirid", d.stored);
	Idk = NULL;
	walk(&s, true);
	expect_one(&s, CHECK_DIRID_MISSING, path);
	CHECK(s.repaired == 0, "not provable without the key");
	Idk = &k;
	walk(&s, true);
	expect_one(&s, CHECK_DIRID_MISSING, path);
	CHECK(s.repaired == 1, "repaired from the derived dirid");
	dirops_derive_dirid(&k, zero, "proj", 4, want);
	CHECK(!dirops_read_small(fd, "xtsfs.dirid", id, 16, &len) &&
	      len == 16 && !memcmp(id, want, 16), "the derived dirid");
	walk(&s, false);
	CHECK(s.n == 0, "clean after the derived repair");
	CHECK_OK(dirops_unlink(&D, fd, &a));
	CHECK_OK(dirops_unlink(&D, fd, &b));
	close(fd);
	CHECK_OK(dirops_rmdir(&D, topfd, &d));
	Idk = NULL;
	D.idkey = NULL;
	aes_cmac_wipe(&k);
}

static void test_escape(void)
{
	char out[64];

	CHECK(!strcmp(check_escape(out, sizeof(out), "a\x1b" "b\xff\\"),
		      "a\\x1bb\\xff\\\\"), "got %s", out);
	CHECK(!strcmp(check_escape(out, sizeof(out), "caf\xc3\xa9"),
		      "caf\xc3\xa9"), "UTF-8 kept: %s", out);
	CHECK(!strcmp(check_escape(out, sizeof(out), "\xc0\x80\xed\xa0\x80"),
		      "\\xc0\\x80\\xed\\xa0\\x80"), "overlong, surrogate: %s",
	      out);
	CHECK(!strcmp(check_escape(out, 8, "\x01\x02\x03"), "\\x01"),
	      "truncated whole: %s", out);
	for (int k = 0; k < CHECK_NKINDS; k++)
		for (int j = 0; j < k; j++)
			CHECK(strcmp(check_kind_name(k), check_kind_name(j)),
			      "kind names %d, %d", j, k);
}

static void test_mounted(void)
{
	char mi[128], dir[128], where[128], cmd[300];
	FILE *f;

	snprintf(dir, sizeof(dir), "%s/c d", top);
	CHECK_OK(mkdir(dir, 0755));
	snprintf(mi, sizeof(mi), "%s/mountinfo", top);
	f = fopen(mi, "w");
	fprintf(f, "22 1 0:21 / /proc rw - proc proc rw\n"
		"40 22 0:40 / /m/x rw - fuse.sshfs %s/c rw\n"
		"41 22 0:41 / /m/y\\040z rw,nosuid - fuse.xtsfs "
		"%s/./c\\040d/ rw\n", top, top);
	fclose(f);
	CHECK(check_mounted(mi, dir, where, sizeof(where)) == 1, "mounted");
	CHECK(!strcmp(where, "/m/y z"), "where %s", where);
	CHECK(check_mounted(mi, top, where, sizeof(where)) == 0, "not");
	CHECK(check_mounted("/nonexistent", dir, where, sizeof(where)) ==
	      -ENOENT, "no mountinfo");
	{
		int dfd = open(dir, O_RDONLY | O_DIRECTORY);
		long pid = 0;

		CHECK(check_held("/proc", "test_check", dir, &pid) == 1 &&
		      pid == (long)getpid(), "held by us: pid %ld", pid);
		close(dfd);
		CHECK(check_held("/proc", "test_check", dir, &pid) == 0,
		      "no longer held");
		CHECK(check_held("/proc", "no-such-comm", top, &pid) == 0,
		      "nobody else's");
	}
	snprintf(cmd, sizeof(cmd), "%s/c d", top);
	rmdir(cmd);
	unlink(mi);
}

int main(void)
{
	const struct xts_backend *be;
	uint8_t key[128];
	struct names_ctx *names;
	char cmd[128];

	rng_seed("test_check");
	rng_bytes(key, sizeof(key));
	if (names_ctx_new(&names, key) || xts_choose("software", &be) ||
	    xts_ctx_new(&X, be, key + 64)) {
		printf("test_check: no keys\n");
		return 1;
	}
	snprintf(top, sizeof(top), "/tmp/xtsfs-check.XXXXXX");
	if (!mkdtemp(top))
		return 1;
	topfd = open(top, O_RDONLY | O_DIRECTORY);
	D.root_fd = topfd;
	D.names = names;
	test_escape();
	test_mounted();
	test_derived_repair();
	test_tree();
	close(topfd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", top);
	names_ctx_free(names);
	xts_ctx_free(X);
	if (test_failures) {
		printf("test_check: %d FAILED\n", test_failures);
		return 1;
	}
	printf("test_check: all passed\n");
	return 0;
}
