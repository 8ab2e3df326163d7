/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_dirops.c - directory operations alone, on a plain directory
 * (dirops.h): every create, remove and rename with short and long names,
 * then every undo path, driven by failures injected into one syscall of
 * a child process (seccomp: the Nth kind of call fails with an errno),
 * after which the directory must hold exactly what it held before.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dirops.h"
#include "testutil.h"

static struct dirops D;
static int topfd; /* the test's root directory, O_PATH */
static char top[64];

/* the root's dirid is zero (FORMAT 4.2); others are read */
static int root_dirid(void *arg, uint8_t out[NAMES_DIRID_SIZE])
{
	(void)arg;
	memset(out, 0, NAMES_DIRID_SIZE);
	return 0;
}

static int sub_dirid(void *arg, uint8_t out[NAMES_DIRID_SIZE])
{
	return dirops_read_dirid(*(int *)arg, out);
}

static const struct dirid_src root_id = { root_dirid, NULL };

static void enc(const char *name, struct lname *ln)
{
	int err = dirops_name_enc(&D, &root_id, true, name, ln);

	CHECK(err == 0, "name_enc %.20s: %d", name, err);
}

/* The root's entries, sorted, joined by '/', into @out. */
static void listing(char *out, size_t size)
{
	struct dirent **list;
	int n = scandir(top, &list, NULL, alphasort);
	size_t o = 0;

	out[0] = '\0';
	for (int i = 0; i < n; i++) {
		if (strcmp(list[i]->d_name, ".") && strcmp(list[i]->d_name, ".."))
			o += (size_t)snprintf(out + o, o < size ? size - o : 0,
					      "%s/", list[i]->d_name);
		free(list[i]);
	}
	free(list);
}

static bool exists(const char *name)
{
	struct stat st;

	return fstatat(topfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

static void sidecar_of(const struct lname *ln, char *out)
{
	names_long_sidecar(out, ln->stored);
}

/* ---- the operations, working ------------------------------------------ */

static void test_ops(void)
{
	static char longname[201], longtarget[3501], out[4096];
	struct lname a, l, b, t;
	char side[NAMES_STORED_MAX + 1], dec[256];
	uint8_t id[16];
	struct stat st;
	int before = test_failures, fd, err;

	memset(longname, 'L', 200);
	memset(longtarget, 'T', 3500);
	enc("dir", &a);
	enc(longname, &l);
	CHECK(!a.is_long && l.is_long, "name classes");
	/* mkdir: the directory and its dirid; a long name its sidecar */
	CHECK(dirops_mkdir(&D, topfd, &a, 0755, &root_id, "dir") == 0, "mkdir short");
	CHECK(dirops_mkdir(&D, topfd, &l, 0700, &root_id, longname) == 0, "mkdir long");
	sidecar_of(&l, side);
	CHECK(exists(side), "long name's sidecar");
	fd = openat(topfd, a.stored, O_RDONLY | O_DIRECTORY);
	CHECK(fd >= 0 && dirops_read_dirid(fd, id) == 0, "new dirid");
	/* the names decrypt back, internal files are skipped */
	CHECK(dirops_name_dec(&D, topfd, &root_id, true, l.stored, dec) == 0 &&
	      !strcmp(dec, longname), "long name decrypts");
	CHECK(dirops_name_dec(&D, topfd, &root_id, true, side, dec) == 1,
	      "sidecar skipped");
	/* in the subdirectory, with its own dirid */
	{
		struct dirid_src sid = { sub_dirid, &fd };
		struct lname n;

		CHECK(dirops_name_enc(&D, &sid, false, "inner", &n) == 0 &&
		      dirops_mknod(&D, fd, &n, S_IFREG | 0640, 0) == 0,
		      "mknod in a subdirectory");
		CHECK(fstatat(fd, n.stored, &st, 0) == 0 && st.st_size == 40,
		      "a regular file gets its 40-byte header");
		CHECK(dirops_name_dec(&D, fd, &sid, false, n.stored, dec) == 0 &&
		      !strcmp(dec, "inner"), "inner decrypts");
		CHECK(dirops_rmdir(&D, topfd, &a) == -ENOTEMPTY, "not empty");
		CHECK(dirops_unlink(&D, fd, &n) == 0, "unlink");
	}
	close(fd);
	/* symlinks, short and long targets */
	enc("s", &b);
	CHECK(dirops_symlink(&D, topfd, &b, longtarget) == 0, "long symlink");
	fd = openat(topfd, b.stored, O_PATH | O_NOFOLLOW);
	CHECK(dirops_readlink(&D, fd, out) == 0 && !strcmp(out, longtarget),
	      "long target reads back");
	close(fd);
	/* link, rename long -> short (the sidecar goes), exchange */
	enc("h", &t);
	fd = openat(topfd, b.stored, O_PATH | O_NOFOLLOW);
	CHECK(dirops_link(&D, fd, topfd, &l) == -EEXIST, "link over a dir");
	CHECK(exists(side), "an existing entry keeps its sidecar");
	close(fd);
	CHECK(dirops_rename(&D, topfd, &l, topfd, &t, 0) == 0 && !exists(side),
	      "rename long to short drops the sidecar");
	CHECK(dirops_rename(&D, topfd, &t, topfd, &l, RENAME_EXCHANGE) == -ENOENT,
	      "exchange with nothing");
	CHECK(dirops_rename(&D, topfd, &t, topfd, &l, 0) == 0 && exists(side),
	      "rename short to long makes the sidecar");
	/* a directory over an empty directory (its dirid goes first) */
	CHECK(dirops_rename(&D, topfd, &l, topfd, &a, 0) == 0 && !exists(side),
	      "directory over an empty directory");
	CHECK(dirops_rmdir(&D, topfd, &a) == 0 && !exists(a.stored), "rmdir");
	/*
	 * A sync tool's copies of the dirid: they go with an otherwise
	 * empty directory, and stay in one that holds anything else (the
	 * listing may show it after them)
	 */
	CHECK(dirops_mkdir(&D, topfd, &a, 0755, &root_id, "dir") == 0,
	      "mkdir again");
	fd = openat(topfd, a.stored, O_RDONLY | O_DIRECTORY);
	{
		static const char *copies[] = {
			"xtsfs (conflicted copy 2026-01-02 030405).dirid",
			"xtsfs_conflict-20260102-030405.dirid",
		};
		int cfd;

		for (size_t i = 0; i < 2; i++) {
			cfd = openat(fd, copies[i], O_WRONLY | O_CREAT, 0444);
			CHECK(cfd >= 0 && write(cfd, id, sizeof(id)) ==
			      (ssize_t)sizeof(id), "copy %zu", i);
			close(cfd);
		}
		cfd = openat(fd, "zz-plain", O_WRONLY | O_CREAT, 0644);
		close(cfd);
		CHECK(dirops_rmdir(&D, topfd, &a) == -ENOTEMPTY &&
		      faccessat(fd, copies[0], F_OK, 0) == 0 &&
		      faccessat(fd, copies[1], F_OK, 0) == 0 &&
		      faccessat(fd, NAMES_DIRID_FILE, F_OK, 0) == 0,
		      "not empty: the copies and the dirid stay");
		CHECK(unlinkat(fd, "zz-plain", 0) == 0, "unlink the plain");
	}
	close(fd);
	CHECK(dirops_rmdir(&D, topfd, &a) == 0 && !exists(a.stored),
	      "rmdir with the dirid's copies");
	CHECK(dirops_unlink(&D, topfd, &b) == 0, "unlink the symlink");
	err = 0;
	{
		char left[1024];

		listing(left, sizeof(left));
		/* only the shared long-target file stays (FORMAT 4.4) */
		CHECK(!strncmp(left, NAMES_LINK_PREFIX, strlen(NAMES_LINK_PREFIX)) &&
		      strchr(left, '/') == left + strlen(left) - 1,
		      "left: %s", left);
	}
	(void)err;
	printf("operations: %s\n", test_failures == before ? "ok" : "FAILED");
}

/* ---- undo paths, by injected failures ----------------------------------- */

/*
 * Make syscall @nr fail with @err in this process from now on, when
 * argument @arg (-1: any) has low 32 bits @val.
 */
static int fail_syscall(int nr, int arg, uint32_t val, int err)
{
	struct sock_filter any[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)nr, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (uint32_t)err),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_filter one[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)nr, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, args[arg < 0 ? 0 : arg])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, val, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (uint32_t)err),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog;

	if (arg < 0) {
		prog.len = sizeof(any) / sizeof(any[0]);
		prog.filter = any;
	} else {
		prog.len = sizeof(one) / sizeof(one[0]);
		prog.filter = one;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
}

enum op { MKDIR, MKNOD_REG, SYMLINK, LINK, RMDIR, RENAME_DIR, RENAME_LONG };

static const char *const op_name[] = {
	"mkdir", "mknod", "symlink", "link", "rmdir", "rename dir over dir",
	"rename to a long name",
};

/* Run @op in a child whose syscall @nr fails as said; its -errno. */
static int in_child(enum op op, int nr, int arg, uint32_t val,
		    struct lname *x, struct lname *y)
{
	pid_t pid = fork();
	int status, fd, err = -EINVAL;

	if (pid == 0) {
		if (fail_syscall(nr, arg, val, EIO) != 0)
			_exit(200);
		/* glibc's renameat2() without flags is the renameat syscall */
		if (nr == __NR_renameat2 &&
		    fail_syscall(__NR_renameat, arg, val, EIO) != 0)
			_exit(200);
		switch (op) {
		case MKDIR:
			err = dirops_mkdir(&D, topfd, x, 0755, &root_id, "x");
			break;
		case MKNOD_REG:
			err = dirops_mknod(&D, topfd, x, S_IFREG | 0644, 0);
			break;
		case SYMLINK:
			err = dirops_symlink(&D, topfd, x, "target");
			break;
		case LINK:
			fd = openat(topfd, y->stored, O_PATH | O_NOFOLLOW);
			err = dirops_link(&D, fd, topfd, x);
			break;
		case RMDIR:
			err = dirops_rmdir(&D, topfd, x);
			break;
		case RENAME_DIR:
		case RENAME_LONG:
			err = dirops_rename(&D, topfd, y, topfd, x, 0);
			break;
		}
		_exit(-err & 0xff);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -999;
	if (WEXITSTATUS(status) == 200)
		return -998;
	return -WEXITSTATUS(status);
}

/* @op fails as injected, and the directory is as it was. */
static void expect_undone(enum op op, int nr, int arg, uint32_t val,
			  struct lname *x, struct lname *y, int want)
{
	char before[2048], after[2048];
	int err;

	listing(before, sizeof(before));
	err = in_child(op, nr, arg, val, x, y);
	if (err == -998) {
		printf("undo: no seccomp here, not checked\n");
		return;
	}
	listing(after, sizeof(after));
	CHECK(err == want, "%s: %d, want %d", op_name[op], err, want);
	CHECK(!strcmp(before, after), "%s left the directory changed:\n"
	      "  before %s\n  after  %s", op_name[op], before, after);
}

static void test_undo(void)
{
	static char longname[201];
	struct lname l, s, dir, src;
	uint8_t id[16], id2[16];
	int before = test_failures, fd;

	memset(longname, 'U', 200);
	enc(longname, &l);
	enc("short", &s);
	/* the dirid write (16 bytes) fails: no directory, no sidecar */
	expect_undone(MKDIR, __NR_write, 2, NAMES_DIRID_SIZE, &l, NULL, -EIO);
	/* the mkdir itself fails: the sidecar made before is gone */
	expect_undone(MKDIR, __NR_mkdirat, -1, 0, &l, NULL, -EIO);
	/* the header write fails: no file, no sidecar */
	expect_undone(MKNOD_REG, __NR_pwrite64, 2, 40, &l, NULL, -EIO);
	expect_undone(SYMLINK, __NR_symlinkat, -1, 0, &l, NULL, -EIO);
	/* a link whose linkat fails, both ways it is tried */
	CHECK(dirops_mknod(&D, topfd, &s, S_IFREG | 0644, 0) == 0, "a file");
	expect_undone(LINK, __NR_linkat, -1, 0, &l, &s, -EIO);
	/* a rename to a long name that fails drops the sidecar it made */
	expect_undone(RENAME_LONG, __NR_renameat2, -1, 0, &l, &s, -EIO);
	CHECK(dirops_unlink(&D, topfd, &s) == 0, "unlink the file");
	/* rmdir whose removal fails: the dirid is put back, byte for byte */
	CHECK(dirops_mkdir(&D, topfd, &l, 0755, &root_id, "l") == 0, "a long directory");
	fd = openat(topfd, l.stored, O_RDONLY | O_DIRECTORY);
	CHECK(fd >= 0 && dirops_read_dirid(fd, id) == 0, "its dirid");
	expect_undone(RMDIR, __NR_unlinkat, 2, AT_REMOVEDIR, &l, NULL, -EIO);
	CHECK(dirops_read_dirid(fd, id2) == 0 && !memcmp(id, id2, 16),
	      "rmdir: the dirid is back");
	close(fd);
	/* a directory over an empty one, the rename failing: dirid back */
	enc("srcdir", &src);
	enc("dstdir", &dir);
	CHECK(dirops_mkdir(&D, topfd, &src, 0755, &root_id, "srcdir") == 0 &&
	      dirops_mkdir(&D, topfd, &dir, 0755, &root_id, "dstdir") == 0, "two directories");
	fd = openat(topfd, dir.stored, O_RDONLY | O_DIRECTORY);
	CHECK(fd >= 0 && dirops_read_dirid(fd, id) == 0, "target's dirid");
	expect_undone(RENAME_DIR, __NR_renameat2, -1, 0, &dir, &src, -EIO);
	CHECK(dirops_read_dirid(fd, id2) == 0 && !memcmp(id, id2, 16),
	      "rename: the target's dirid is back");
	close(fd);
	printf("undo paths: %s\n", test_failures == before ? "ok" : "FAILED");
}

/*
 * Derived dirids (FORMAT 4.2): the worked example's values (computed
 * with OpenSSL's CMAC), and the same directory made in two copies of a
 * volume gets the same dirid, while random ones differ.
 */
static void test_derived(void)
{
	static const uint8_t docs_kat[16] = {
		0x8f, 0x76, 0xae, 0x83, 0x5b, 0x37, 0x58, 0x46,
		0xae, 0x7a, 0xd9, 0x05, 0x76, 0x19, 0x90, 0x11,
	};
	static const uint8_t sub_kat[16] = {
		0xae, 0xa7, 0x58, 0x93, 0x19, 0xbc, 0x78, 0x8b,
		0x50, 0xdf, 0x65, 0x57, 0x78, 0x6d, 0xd6, 0x4e,
	};
	uint8_t hk[32], id[16], id2[16], zero[16] = { 0 };
	struct aes_cmac_key k;
	struct lname a, b;
	int before = test_failures, fd, fd2;
	struct dirid_src docs_id = { sub_dirid, &fd };

	for (int i = 0; i < 32; i++)
		hk[i] = (uint8_t)(0x80 + i);
	aes_cmac_setkey(&k, hk);
	dirops_derive_dirid(&k, zero, "docs", 4, id);
	CHECK(!memcmp(id, docs_kat, 16), "derived dirid: worked example 1");
	dirops_derive_dirid(&k, docs_kat, "sub", 3, id);
	CHECK(!memcmp(id, sub_kat, 16), "derived dirid: worked example 2");

	D.idkey = &k;
	for (int copy = 0; copy < 2; copy++) {
		enc(copy ? "docs2" : "docs", &a);
		CHECK(dirops_mkdir(&D, topfd, &a, 0755, &root_id,
				   copy ? "docs2" : "docs") == 0, "mkdir docs");
		fd = openat(topfd, a.stored, O_RDONLY | O_DIRECTORY);
		CHECK(fd >= 0 && dirops_read_dirid(fd, id) == 0, "its dirid");
		dirops_derive_dirid(&k, zero, copy ? "docs2" : "docs",
				    copy ? 5 : 4, id2);
		CHECK(!memcmp(id, id2, 16), "mkdir stores the derived dirid");
		CHECK(dirops_name_enc(&D, &docs_id, false, "sub", &b) == 0 &&
		      dirops_mkdir(&D, fd, &b, 0755, &docs_id, "sub") == 0,
		      "mkdir docs/sub");
		fd2 = openat(fd, b.stored, O_RDONLY | O_DIRECTORY);
		CHECK(fd2 >= 0 && dirops_read_dirid(fd2, id2) == 0 &&
		      (copy || !memcmp(id2, sub_kat, 16)),
		      "a subdirectory's dirid derives from its parent's");
		close(fd2);
		close(fd);
	}
	/* without the key: random, so two of one name differ */
	D.idkey = NULL;
	enc("rand1", &a);
	enc("rand2", &b);
	CHECK(dirops_mkdir(&D, topfd, &a, 0755, &root_id, "same") == 0 &&
	      dirops_mkdir(&D, topfd, &b, 0755, &root_id, "same") == 0,
	      "two random-dirid directories");
	fd = openat(topfd, a.stored, O_RDONLY | O_DIRECTORY);
	fd2 = openat(topfd, b.stored, O_RDONLY | O_DIRECTORY);
	CHECK(fd >= 0 && fd2 >= 0 && dirops_read_dirid(fd, id) == 0 &&
	      dirops_read_dirid(fd2, id2) == 0 && memcmp(id, id2, 16),
	      "random dirids differ");
	close(fd);
	close(fd2);
	aes_cmac_wipe(&k);
	if (test_failures == before)
		printf("ok: derived dirids\n");
}

int main(void)
{
	uint8_t key[64];
	struct names_ctx *names;

	rng_seed("test_dirops");
	rng_bytes(key, sizeof(key));
	if (names_ctx_new(&names, key)) {
		printf("test_dirops: names_ctx_new failed\n");
		return 1;
	}
	snprintf(top, sizeof(top), "/tmp/xtsfs-dirops.XXXXXX");
	if (!mkdtemp(top)) {
		perror("mkdtemp");
		return 1;
	}
	topfd = open(top, O_RDONLY | O_DIRECTORY);
	D.root_fd = topfd;
	D.names = names;
	D.durable = NULL;
	test_ops();
	test_undo();
	test_derived();
	close(topfd);
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
		if (system(cmd) != 0)
			fprintf(stderr, "cannot remove %s\n", top);
	}
	names_ctx_free(names);
	if (test_failures) {
		printf("test_dirops: %d FAILED\n", test_failures);
		return 1;
	}
	printf("test_dirops: all passed\n");
	return 0;
}
