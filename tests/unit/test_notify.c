/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_notify.c - the change notifier (notify.c) without FUSE: a volume
 * in a temporary directory driven through the core (mount.h) as a mount
 * would, the notifier's words to "the kernel" recorded by callbacks.
 * Changes made through the core are its own and must raise nothing;
 * changes made straight in the cipher directory (as another mount or a
 * sync tool makes them) must raise exactly the invalidations that make
 * the kernel look again: the object's attributes (its pages too when
 * the contents changed), or the entry under its plaintext name. No
 * timing: xm_notify_flush() waits until every queued event is handled.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mount.h"
#include "testutil.h"

static struct xmount M;
static struct caller Me;
static char top[64];
static struct aes_cmac_key Idkey;

/* What the notifier said since the last take(). */
static struct said {
	int inodes, pages, entries, expired;
	struct xnode *last_in;
	struct xnode *last_dir;
	char last_name[256];
} Said;

static void on_inode(void *arg, struct xnode *in, bool pages)
{
	(void)arg;
	Said.inodes++;
	Said.pages += pages;
	Said.last_in = in;
}

static void on_entry(void *arg, struct xnode *dir, const char *name,
		     size_t len, bool expire)
{
	(void)arg;
	Said.entries++;
	Said.expired += expire;
	Said.last_dir = dir;
	snprintf(Said.last_name, sizeof(Said.last_name), "%.*s", (int)len,
		 name);
}

/* What the notifier asked the kernel to forget. */
static struct pruned {
	int calls, nodes;
	struct xnode *seen[64];
} Pruned;

static int on_prune(void *arg, struct xnode *const *in, size_t n)
{
	(void)arg;
	Pruned.calls++;
	for (size_t i = 0; i < n; i++)
		if (Pruned.nodes < 64)
			Pruned.seen[Pruned.nodes++] = in[i];
	return 0;
}

static const struct xm_notify_cb Cb = { on_inode, on_entry, on_prune };

/* Wait for the notifier, then what it said (and forget it). */
static struct said take(void)
{
	struct said s;

	xm_notify_flush(&M);
	s = Said;
	memset(&Said, 0, sizeof(Said));
	return s;
}

/* The lower path of @name in the root, into @out. */
static void lower_path(const char *name, char *out, size_t size)
{
	struct lname ln;

	CHECK(xm_stored_name(&M, M.root, name, &ln) == 0, "stored %s", name);
	snprintf(out, size, "%s/%s", top, ln.stored);
}

/* A file made, written and closed through the core; the kernel told. */
static struct xnode *own_file(const char *name, const char *data)
{
	struct xhandle *h = NULL;
	struct xnode *in = NULL;
	struct stat st;
	bool keep, killed, refusing;

	CHECK(xm_create(&M, &Me, M.root, name, 0644, O_RDWR | O_CREAT, &in,
			&st, &h, &keep) == 0, "create %s", name);
	if (!in)
		return NULL;
	xm_told(in, &st);
	CHECK(xm_write(&M, &Me, h, (const uint8_t *)data, strlen(data), 0,
		       false, &killed, &refusing) == (ssize_t)strlen(data),
	      "write %s", name);
	xm_release(h);
	return in;
}

/* Our own changes raise nothing. */
static void own_changes(struct xnode **f_out)
{
	struct xnode *f, *d = NULL;
	struct stat st, attr = { .st_mode = 0600 };
	struct said s;

	f = own_file("f", "hello");
	CHECK(xm_mkdir(&M, &Me, M.root, "d", 0755, &d, &st) == 0, "mkdir");
	xm_told(d, &st);
	CHECK(xm_setattr(&M, &Me, f, &attr, XM_SET_MODE, NULL, &st) == 0,
	      "chmod");
	xm_told(f, &st);
	CHECK(xm_rename(&M, &Me, M.root, "f", M.root, "g", 0) == 0, "rename");
	s = take();
	CHECK(s.inodes == 0 && s.entries == 0,
	      "own create, write, mkdir, chmod, rename: %d inodes, %d entries",
	      s.inodes, s.entries);
	CHECK(xm_rmdir(&M, &Me, M.root, "d") == 0, "rmdir");
	xm_forget(&M, d, 1);
	s = take();
	CHECK(s.inodes == 0 && s.entries == 0, "own rmdir: %d, %d", s.inodes,
	      s.entries);
	*f_out = f;
}

/* Changes in the cipher directory beside the core are told. */
static void beside(struct xnode *g)
{
	char p[512], q[512];
	struct said s;
	int fd;

	/* an append to the lower file: attributes and pages */
	lower_path("g", p, sizeof(p));
	fd = open(p, O_WRONLY | O_APPEND);
	CHECK(fd >= 0 && write(fd, "0123456789abcdef", 16) == 16, "append");
	if (fd >= 0)
		close(fd);
	s = take();
	CHECK(s.inodes == 1 && s.pages == 1 && s.last_in == g &&
	      s.entries == 0, "append beside: %d inodes, %d pages, %d entries",
	      s.inodes, s.pages, s.entries);
	/* the same state again is nothing new */
	CHECK(utimensat(AT_FDCWD, p, (struct timespec[2]){ { 0, UTIME_OMIT },
		{ 0, UTIME_OMIT } }, 0) == 0, "touch nothing");
	s = take();
	CHECK(s.inodes == 0, "no change, no word: %d", s.inodes);
	/* chmod: attributes only */
	CHECK(chmod(p, 0640) == 0, "chmod beside");
	s = take();
	CHECK(s.inodes == 1 && s.pages == 0 && s.last_in == g,
	      "chmod beside: %d inodes, %d pages", s.inodes, s.pages);
	/* a new name */
	lower_path("new", q, sizeof(q));
	fd = open(q, O_WRONLY | O_CREAT | O_EXCL, 0644);
	CHECK(fd >= 0, "create beside");
	if (fd >= 0)
		close(fd);
	s = take();
	CHECK(s.entries == 1 && s.last_dir == M.root &&
	      !strcmp(s.last_name, "new"), "create beside: %d entries, %s",
	      s.entries, s.last_name);
	/* only expired: the kernel may have looked the new name up already */
	CHECK(s.expired == 1, "create beside: %d expired", s.expired);
	/* and the directory's listing, which no OPENDIR would drop */
	CHECK(s.inodes == 1 && s.pages == 1 && s.last_in == M.root,
	      "create beside: the listing: %d inodes, %d pages", s.inodes,
	      s.pages);
	/* a rename: both names */
	lower_path("moved", q, sizeof(q));
	CHECK(rename(p, q) == 0, "rename beside");
	s = take();
	CHECK(s.entries == 2 && !strcmp(s.last_name, "moved"),
	      "rename beside: %d entries, last %s", s.entries, s.last_name);
	/* the name that went is dropped, the one that came expired */
	CHECK(s.expired == 1, "rename beside: %d expired", s.expired);
	/* two names of one directory: its listing once */
	CHECK(s.inodes == 1 && s.last_in == M.root,
	      "rename beside: the listing once: %d inodes", s.inodes);
	/* removed */
	CHECK(unlink(q) == 0, "unlink beside");
	s = take();
	CHECK(s.entries == 1 && !strcmp(s.last_name, "moved"),
	      "unlink beside: %d entries, %s", s.entries, s.last_name);
	CHECK(s.expired == 0, "unlink beside: %d expired", s.expired);
	/* our own files (the root has a header, directories a dirid) */
	snprintf(p, sizeof(p), "%s/xtsfs.volume", top);
	CHECK(utimensat(AT_FDCWD, p, NULL, 0) == 0, "touch the header");
	s = take();
	CHECK(s.inodes == 0 && s.entries == 0, "internal file: %d, %d",
	      s.inodes, s.entries);
}

/*
 * A long name (FORMAT 4.3) removed beside the core, its sidecar with it:
 * told by the plaintext the kernel knew.
 */
static void long_gone(void)
{
	char name[201], p[512];
	struct xnode *in;
	struct lname ln;
	struct said s;

	memset(name, 'L', 200);
	name[200] = '\0';
	in = own_file(name, "long");
	CHECK(xm_stored_name(&M, M.root, name, &ln) == 0 && ln.is_long,
	      "a long stored name");
	s = take();
	CHECK(s.inodes == 0 && s.entries == 0, "own long file: %d, %d",
	      s.inodes, s.entries);
	snprintf(p, sizeof(p), "%s/%s", top, ln.stored);
	CHECK(unlink(p) == 0, "unlink the long entry beside");
	snprintf(p, sizeof(p), "%s/%s.name", top, ln.stored);
	CHECK(unlink(p) == 0, "and its sidecar");
	s = take();
	CHECK(s.entries == 1 && !strcmp(s.last_name, name),
	      "long name removed beside: %d entries, %.20s...", s.entries,
	      s.last_name);
	if (in)
		xm_forget(&M, in, 1);
}

/* What the kernel never saw is nothing to tell of. */
static void untold(void)
{
	struct xhandle *h = NULL;
	struct xnode *in = NULL;
	struct stat st;
	struct said s;
	char p[512];
	bool keep;
	int fd;

	CHECK(xm_create(&M, &Me, M.root, "quiet", 0644, O_RDWR | O_CREAT,
			&in, &st, &h, &keep) == 0, "create quiet");
	if (!in)
		return;
	xm_release(h);
	(void)take();
	lower_path("quiet", p, sizeof(p));
	fd = open(p, O_WRONLY | O_APPEND);
	CHECK(fd >= 0 && write(fd, "x", 1) == 1, "append to quiet");
	if (fd >= 0)
		close(fd);
	s = take();
	CHECK(s.inodes == 0, "never told: %d", s.inodes);
	xm_forget(&M, in, 1);
}

/*
 * Out of descriptors: the notifier offers the kernel every node we have
 * no handle open on, in one batch, and never one with a handle.
 */
static void prune_unused(void)
{
	struct xhandle *h = NULL;
	struct xnode *open_in = NULL, *idle;
	struct stat st;
	bool keep, in_open = false, in_idle = false;

	idle = own_file("idle", "x");
	CHECK(xm_create(&M, &Me, M.root, "busy", 0644, O_RDWR | O_CREAT,
			&open_in, &st, &h, &keep) == 0, "create busy");
	memset(&Pruned, 0, sizeof(Pruned));
	CHECK(xm_notify_prune(&M), "a notifier to prune");
	(void)take();
	for (int i = 0; i < Pruned.nodes; i++) {
		in_open |= Pruned.seen[i] == open_in;
		in_idle |= Pruned.seen[i] == idle;
	}
	CHECK(Pruned.calls == 1 && in_idle && !in_open,
	      "prune: %d calls, %d nodes, the idle file %s, the open one %s",
	      Pruned.calls, Pruned.nodes, in_idle ? "in" : "out",
	      in_open ? "in" : "out");
	if (h)
		xm_release(h);
	if (open_in)
		xm_forget(&M, open_in, 1);
	if (idle)
		xm_forget(&M, idle, 1);
}

int main(void)
{
	uint8_t key[64];
	const struct xts_backend *be;
	struct xts_ctx *xts = NULL;
	struct names_ctx *names = NULL;
	struct xm_notify_stats st;
	struct xnode *g = NULL;
	char cmd[128];
	int hfd;

	snprintf(top, sizeof(top), "/tmp/test_notify.XXXXXX");
	if (!mkdtemp(top)) {
		perror("mkdtemp");
		return 1;
	}
	for (int i = 0; i < 64; i++)
		key[i] = (uint8_t)(i * 5 + 1);
	if (xts_choose(NULL, &be) || xts_ctx_new(&xts, be, key) ||
	    names_ctx_new(&names, key)) {
		fprintf(stderr, "test_notify: keys\n");
		return 1;
	}
	snprintf(cmd, sizeof(cmd), "%s/xtsfs.volume", top);
	hfd = open(cmd, O_WRONLY | O_CREAT, 0444); /* stands for the header */
	if (hfd >= 0)
		close(hfd);
	Me.uid = getuid();
	Me.gid = getgid();
	M.root_fd = open(top, O_PATH | O_DIRECTORY | O_CLOEXEC);
	M.xts = xts;
	M.names = names;
	aes_cmac_setkey(&Idkey, key);
	M.idkey = &Idkey;
	M.mountpoint = top;
	M.cipherdir = top;
	M.attr_timeout = M.entry_timeout = 30;
	if (M.root_fd < 0 || xm_init(&M) != 0 ||
	    xm_notify_start(&M, &Cb, NULL) != 0) {
		fprintf(stderr, "test_notify: xm_init, xm_notify_start\n");
		return 1;
	}
	own_changes(&g);
	if (g)
		beside(g);
	untold();
	long_gone();
	prune_unused();
	xm_notify_stats(&M, &st);
	CHECK(st.events > 0 && st.own > 0 && st.overflows == 0,
	      "stats: %llu events, %llu own, %llu overflows", st.events,
	      st.own, st.overflows);
	if (g)
		xm_forget(&M, g, 1);
	xm_notify_stop(&M);
	xm_destroy(&M);
	aes_cmac_wipe(&Idkey);
	names_ctx_free(names);
	xts_ctx_free(xts);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", top);
	CHECK(system(cmd) == 0, "rm -rf %s", top);
	printf("test_notify: %s\n", test_failures ? "FAILED" : "ok");
	return test_failures ? 1 : 0;
}
