/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xtsfs-extract - decrypt a volume, a subtree or one file into a
 * plaintext directory without a mount (no FUSE: a container, a rescue
 * system, a remote copy fetched with rsync), with modes, owners (as
 * root), times, hard links, holes, symlinks, special files, xattrs and
 * POSIX ACLs. It reads through the forward mount's own core opened
 * read-only (offline.h), so there is one implementation of the format;
 * the cipher directory is never written.
 *
 * Everything in DESTDIR is made relative to descriptors of directories
 * this run made or entered (mkdirat, openat with O_NOFOLLOW, *at calls
 * with AT_SYMLINK_NOFOLLOW): a symlink found in DESTDIR is never
 * followed. Each plaintext path is recreated under DESTDIR as it is in
 * the volume (DESTDIR/docs/a for docs/a).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <search.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "offline.h"

#define PROG "xtsfs-extract"

/* longest cipher or plaintext path below the volume root we handle */
#define EX_PATH_MAX 16384
/* bytes asked of xm_read() at once */
#define EX_CHUNK (1u << 20)

enum { OPT_FORCE = OPT_TOOL_BASE };

static const struct option longopts[] = {
	{ "force", no_argument, NULL, 'f' },
	{ "verbose", no_argument, NULL, 'v' },
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
	.shortopts = "+fvq" CLI_SHORTOPTS,
	.longopts = longopts,
	.column = COMMON_HELP_COLUMN,
	.help =
"Usage: " PROG " [OPTION]... CIPHERDIR [PLAINPATH]... DESTDIR\n"
"Decrypt the volume in CIPHERDIR, or each PLAINPATH of it (a file or a\n"
"subtree, relative to the volume root), into the plaintext directory\n"
"DESTDIR (made if missing), without a mount. PLAINPATH a/b becomes\n"
"DESTDIR/a/b. Modes, times, hard links, holes, symlinks, fifos, xattrs\n"
"and POSIX ACLs are kept; owners, device nodes and trusted.* xattrs when\n"
"run as root. The cipher directory is never written.\n"
"\n"
"  -f, --force             replace existing entries in DESTDIR (never a\n"
"                          non-empty directory by a non-directory);\n"
"                          default: refuse each one, go on with the rest\n"
"  -v, --verbose           print each plaintext path as it is extracted\n"
"  -q, --quiet             no progress line on a terminal\n"
COMMON_PASS_HELP COMMON_UNLOCK_HELP,
	.help_end =
"\n"
"Example: " PROG " /srv/vault docs/report.pdf /tmp/restore\n"
"\n"
"Exit status: 0 ok, 1 an entry failed (each is reported) or another\n"
"failure, 2 bad usage, 3 cipher core unusable, 4 wrong passphrase or key,\n"
"5 no volume, 6 corrupt header, 8 no usable passphrase.\n",
};

/* struct ex - one run. */
struct ex {
	struct offline o;          /* the volume, read-only */
	int dest_fd;               /* DESTDIR */
	bool force, verbose, quiet;
	bool root;                 /* euid 0: owners, devices, trusted.* */
	bool progress;             /* a progress line on stderr (a tty) */
	bool line_open;            /* the progress line is on screen */
	double last_ms;            /* when it was last drawn */
	unsigned long failures;    /* entries reported */
	unsigned long entries;     /* entries extracted */
	uint64_t bytes;            /* file data written */
	void *links;               /* tsearch() tree of struct link */
	char plain[EX_PATH_MAX];   /* plaintext path of the current entry,
				    * also its path below DESTDIR */
	char cipher[EX_PATH_MAX];  /* its cipher path below CIPHERDIR */
	char xbuf[XATTR_LIST_MAX]; /* a list of xattr names */
	char vbuf[XATTR_SIZE_MAX]; /* one xattr value */
};

/* struct link - the first path extracted of a lower inode with links. */
struct link {
	dev_t dev;
	ino_t ino;
	char *path;                /* below DESTDIR */
};

/* Take the progress line off the screen before another message. */
static void progress_clear(struct ex *x)
{
	if (x->line_open)
		fputs("\r\033[K", stderr);
	x->line_open = false;
}

/* Redraw the progress line, at most 5 times a second. */
static void progress_tick(struct ex *x)
{
	double now;

	if (!x->progress)
		return;
	now = now_ms();
	if (x->line_open && now - x->last_ms < 200)
		return;
	x->last_ms = now;
	fprintf(stderr, "\r\033[K" PROG ": %lu entries, %.1f MiB", x->entries,
		(double)x->bytes / (1024 * 1024));
	x->line_open = true;
}

/* Report the current entry: "PLAIN (cipher CIPHER): @what: @err". */
static void fail(struct ex *x, const char *what, int err)
{
	progress_clear(x);
	fprintf(stderr, PROG ": %s (cipher %s): %s%s%s\n",
		*x->plain ? offline_quote(x->plain) : ".",
		*x->cipher ? offline_quote(x->cipher) : ".", what,
		what[0] ? ": " : "", offline_strerror(err));
	x->failures++;
}

/* m->skipped: an entry of the directory being listed does not decrypt. */
static void on_skipped(void *arg, struct xnode *dir, const char *stored)
{
	struct ex *x = arg;

	(void)dir;
	progress_clear(x);
	fprintf(stderr, PROG ": %s (cipher %s%s%s): an entry does not decrypt; "
		"skipped\n", *x->plain ? offline_quote(x->plain) : ".",
		offline_quote(x->cipher), *x->cipher ? "/" : "",
		offline_quote(stored));
	x->failures++;
}

/* Enter "@stored" / "@name" below the current paths; undo with leave(). */
static int enter(struct ex *x, const char *name, const char *stored,
		 size_t *plen, size_t *clen)
{
	*plen = strlen(x->plain);
	*clen = strlen(x->cipher);
	if (offline_append(x->plain, sizeof(x->plain), name) ||
	    offline_append(x->cipher, sizeof(x->cipher), stored)) {
		x->plain[*plen] = x->cipher[*clen] = '\0';
		return -ENAMETOOLONG;
	}
	return 0;
}

static void leave(struct ex *x, size_t plen, size_t clen)
{
	x->plain[plen] = '\0';
	x->cipher[clen] = '\0';
}

/*
 * Make room for a new entry @name of type @type in @dfd: 0 free (an old
 * one removed with --force), 1 an existing directory to fill (@type is
 * a directory too, and --force), -EEXIST without --force, -EISDIR a
 * directory where a non-directory is to go.
 */
static int make_room(struct ex *x, int dfd, const char *name, mode_t type)
{
	struct stat st;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return errno == ENOENT ? 0 : -errno;
	if (!x->force)
		return -EEXIST;
	if (S_ISDIR(st.st_mode))
		return S_ISDIR(type) ? 1 : -EISDIR;
	return unlinkat(dfd, name, 0) ? -errno : 0;
}

/*
 * Copy the xattrs the core shows for @in (user.*, trusted.* as root,
 * system.posix_acl_*) to the new object @path (/proc/self/fd/N of an
 * O_PATH descriptor: a symlink's own, as the core reads them).
 */
static void copy_xattrs(struct ex *x, struct xnode *in, const char *path)
{
	ssize_t n = xm_listxattr(&x->o.m, &x->o.me, in, x->xbuf,
				 sizeof(x->xbuf));

	if (n < 0) {
		if (n != -ENOTSUP)
			fail(x, "cannot list its extended attributes", (int)n);
		return;
	}
	for (char *name = x->xbuf; name < x->xbuf + n;
	     name += strlen(name) + 1) {
		ssize_t len = xm_getxattr(&x->o.m, in, name, x->vbuf,
					  sizeof(x->vbuf));

		if (len == -ENODATA)
			continue; /* gone since the listing */
		if (len < 0) {
			fail(x, offline_quote(name), (int)len);
			continue;
		}
		if (setxattr(path, name, x->vbuf, (size_t)len, 0) != 0)
			fail(x, offline_quote(name), -errno);
	}
}

/*
 * Give new object @name in @dfd the owner (as root), mode, xattrs and
 * times of @in (@st): chown first (it drops set-id bits), times last
 * (the rest changes ctime only).
 */
static void set_meta(struct ex *x, struct xnode *in, const struct stat *st,
		     int dfd, const char *name)
{
	struct timespec ts[2] = { st->st_atim, st->st_mtim };
	char path[DIROPS_FD_PATH_SIZE];
	struct stat now;
	int fd = openat(dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &now) != 0 ||
	    (now.st_mode & S_IFMT) != (st->st_mode & S_IFMT)) {
		fail(x, "cannot set its attributes", fd < 0 ? -errno : -ESTALE);
		if (fd >= 0)
			close(fd);
		return;
	}
	dirops_fd_path(path, fd);
	if (x->root && fchownat(fd, "", st->st_uid, st->st_gid,
				AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0)
		fail(x, "cannot set its owner", -errno);
	if (!S_ISLNK(st->st_mode) && chmod(path, st->st_mode & 07777) != 0)
		fail(x, "cannot set its mode", -errno);
	copy_xattrs(x, in, path);
	if (utimensat(dfd, name, ts, AT_SYMLINK_NOFOLLOW) != 0)
		fail(x, "cannot set its times", -errno);
	close(fd);
}

/* Write [@off, @end) of open file @h to @fd. */
static int copy_range(struct ex *x, struct xhandle *h, int fd, off_t off,
		      off_t end)
{
	while (off < end) {
		size_t want = end - off < EX_CHUNK ? (size_t)(end - off) :
			      EX_CHUNK;
		const uint8_t *data;
		ssize_t n = xm_read(&x->o.m, h, want, off, &data);

		if (n <= 0)
			return n < 0 ? (int)n : -EIO; /* shorter than its size */
		for (ssize_t done = 0; done < n;) {
			ssize_t w = pwrite(fd, data + done, (size_t)(n - done),
					   off + done);

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				return w < 0 ? -errno : -EIO;
			done += w;
		}
		off += n;
		x->bytes += (uint64_t)n;
		progress_tick(x);
	}
	return 0;
}

/*
 * The contents of @h (plaintext size @size) into @fd: only its data
 * regions (SEEK_DATA/SEEK_HOLE of the core), so holes stay holes, then
 * the size. A lower filesystem without SEEK_HOLE reports one region.
 */
static int copy_data(struct ex *x, struct xhandle *h, int fd, off_t size)
{
	off_t off = 0;
	int err = 0;

	while (!err && off < size) {
		int64_t data = xm_lseek(&x->o.m, h, off, SEEK_DATA), hole;

		if (data == -ENXIO)
			break; /* a hole to the end */
		if (data < 0)
			return (int)data;
		hole = xm_lseek(&x->o.m, h, data, SEEK_HOLE);
		if (hole < 0)
			return (int)hole;
		if (hole > size)
			hole = size;
		err = copy_range(x, h, fd, data, hole);
		off = hole;
	}
	if (!err && ftruncate(fd, size) != 0)
		err = -errno;
	return err;
}

/* Open @in for reading without touching its atime when we may. */
static int open_lower(struct ex *x, struct xnode *in, struct xhandle **h)
{
	bool keep;
	int err = xm_open(&x->o.m, &x->o.me, in, O_RDONLY | O_NOATIME, h,
			  &keep);

	if (err == -EPERM) /* O_NOATIME: only the owner or root */
		err = xm_open(&x->o.m, &x->o.me, in, O_RDONLY, h, &keep);
	return err;
}

/* Regular file @in (@st) as new file @name of @dfd. */
static int make_file(struct ex *x, struct xnode *in, const struct stat *st,
		     int dfd, const char *name)
{
	struct xhandle *h;
	int fd, err = open_lower(x, in, &h);

	if (err)
		return err;
	fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
		    O_CLOEXEC, 0600);
	if (fd < 0) {
		err = -errno;
		xm_release(h);
		return err;
	}
	err = copy_data(x, h, fd, st->st_size);
	xm_release(h);
	if (close(fd) != 0 && !err)
		err = -errno;
	if (err)
		unlinkat(dfd, name, 0); /* no half file that looks whole */
	return err;
}

static int link_cmp(const void *a, const void *b)
{
	const struct link *l = a, *r = b;

	if (l->dev != r->dev)
		return l->dev < r->dev ? -1 : 1;
	return l->ino < r->ino ? -1 : l->ino > r->ino;
}

static void link_free(void *p)
{
	struct link *l = p;

	free(l->path);
	free(l);
}

/*
 * A lower inode with more links that this run extracted already: link
 * @name of @dfd to it (1), else remember the current path for it (0).
 */
static int hard_link(struct ex *x, const struct stat *st, int dfd,
		     const char *name)
{
	struct link key = { st->st_dev, st->st_ino, NULL }, *l, **found;

	if (S_ISDIR(st->st_mode) || st->st_nlink < 2)
		return 0;
	found = tfind(&key, &x->links, link_cmp);
	if (found)
		return linkat(x->dest_fd, (*found)->path, dfd, name, 0) ?
		       -errno : 1;
	l = malloc(sizeof(*l));
	if (!l || !(l->path = strdup(x->plain))) {
		free(l);
		return -ENOMEM;
	}
	*l = (struct link){ st->st_dev, st->st_ino, l->path };
	if (!tsearch(l, &x->links, link_cmp)) {
		link_free(l);
		return -ENOMEM;
	}
	return 0;
}

/* Symlink @in as new symlink @name of @dfd. */
static int make_symlink(struct ex *x, struct xnode *in, int dfd,
			const char *name)
{
	char target[4096];
	int err = xm_readlink(&x->o.m, in, target);

	if (err)
		return err;
	return symlinkat(target, dfd, name) ? -errno : 0;
}

/* A fifo, socket or (as root) device node like @st as @name of @dfd. */
static int make_special(struct ex *x, const struct stat *st, int dfd,
			const char *name)
{
	if ((S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode)) && !x->root) {
		progress_clear(x);
		fprintf(stderr, PROG ": %s: a device node: skipped (only root "
			"can make one)\n", offline_quote(x->plain));
		return 1;
	}
	return mknodat(dfd, name, (st->st_mode & S_IFMT) | 0600,
		       st->st_rdev) ? -errno : 0;
}

static void extract_dir(struct ex *x, struct xnode *dir, const struct stat *st,
			int dfd, const char *name, bool made);

/* Make one non-directory @in (@st) as @name of @dfd: 0, 1 skipped, -errno. */
static int make_nondir(struct ex *x, struct xnode *in, const struct stat *st,
		       int dfd, const char *name)
{
	switch (st->st_mode & S_IFMT) {
	case S_IFREG:
		return make_file(x, in, st, dfd, name);
	case S_IFLNK:
		return make_symlink(x, in, dfd, name);
	default:
		return make_special(x, st, dfd, name);
	}
}

/* The object @in (@st, named @name) as @name of DESTDIR directory @dfd. */
static void extract_obj(struct ex *x, struct xnode *in, const struct stat *st,
			int dfd, const char *name)
{
	int linked, err = make_room(x, dfd, name, st->st_mode);

	if (err < 0) {
		fail(x, "", err);
		return;
	}
	if (S_ISDIR(st->st_mode)) {
		extract_dir(x, in, st, dfd, name, err == 0);
		return;
	}
	linked = hard_link(x, st, dfd, name);
	err = linked < 0 ? linked : linked ? 0 : make_nondir(x, in, st, dfd,
							     name);
	if (err < 0) {
		fail(x, "", err);
		return;
	}
	if (err == 1)
		return; /* skipped, and said why */
	x->entries++;
	if (x->verbose)
		printf("%s\n", offline_quote(x->plain));
	if (!linked) /* a link shares its inode's attributes */
		set_meta(x, in, st, dfd, name);
	progress_tick(x);
}

/* Entry @stored (plaintext @name) of @dir as @name of DESTDIR's @dfd. */
static void extract_child(struct ex *x, struct xnode *dir, const char *name,
			  const char *stored, int dfd)
{
	struct xnode *in;
	struct stat st;
	size_t plen, clen;
	int err = enter(x, name, stored, &plen, &clen);

	if (err) {
		fail(x, offline_quote(name), err);
		return;
	}
	err = xm_lookup_stored(&x->o.m, dir, stored, 0, &in, &st);
	if (err) {
		fail(x, "", err);
	} else {
		extract_obj(x, in, &st, dfd, name);
		xm_forget(&x->o.m, in, 1);
	}
	leave(x, plen, clen);
}

/* Every entry of @dir into DESTDIR directory @dfd. */
static void extract_children(struct ex *x, struct xnode *dir, int dfd)
{
	char name[256], stored[NAMES_STORED_MAX + 1];
	struct xm_dirent e;
	struct xdir *d;
	bool keep;
	int rc = xm_opendir(&x->o.m, dir, &d, &keep);

	if (rc) {
		fail(x, "cannot list it", rc);
		return;
	}
	while ((rc = xm_dir_peek(&x->o.m, dir, d, &e)) == 1) {
		snprintf(name, sizeof(name), "%s", e.name);
		snprintf(stored, sizeof(stored), "%s", e.stored);
		xm_dir_take(d, &e);
		if (!names_is_dot(name))
			extract_child(x, dir, name, stored, dfd);
	}
	if (rc < 0)
		fail(x, "cannot list it", rc);
	xm_releasedir(d);
}

/*
 * Directory @dir (@st) as @name of @dfd, made (@made) or, with --force,
 * one that is there filled; its attributes set once it is full (adding
 * entries changes a directory's mtime; a mode without w would stop us).
 */
static void extract_dir(struct ex *x, struct xnode *dir, const struct stat *st,
			int dfd, const char *name, bool made)
{
	int cfd;

	if (made && mkdirat(dfd, name, 0700) != 0) {
		fail(x, "", -errno);
		return;
	}
	cfd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		     O_CLOEXEC);
	if (cfd < 0) {
		fail(x, "", -errno);
		return;
	}
	x->entries++;
	if (x->verbose)
		printf("%s/\n", offline_quote(x->plain));
	extract_children(x, dir, cfd);
	set_meta(x, dir, st, dfd, name);
	close(cfd);
}

/*
 * An ancestor directory @name (@in, @st) of a PLAINPATH in @dfd: made
 * (*@made) or, if a directory is there, entered as it is. Return: its
 * descriptor, or -errno.
 */
static int ancestor(int dfd, const char *name, bool *made)
{
	int fd;

	*made = mkdirat(dfd, name, 0700) == 0;
	if (!*made && errno != EEXIST)
		return -errno;
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/*
 * The rest @path of a PLAINPATH below @dir into DESTDIR directory @dfd:
 * the ancestors made as they are in the volume, the last component
 * extracted.
 */
static void extract_path(struct ex *x, struct xnode *dir, int dfd,
			 const char *path)
{
	char name[256];
	struct xnode *in;
	struct lname ln;
	struct stat st;
	size_t plen, clen;
	bool made;
	int cfd, err = offline_component(&path, name);

	if (err <= 0) {
		if (err < 0)
			fail(x, "", err);
		return;
	}
	err = xm_stored_name(&x->o.m, dir, name, &ln);
	if (err || (err = enter(x, name, ln.stored, &plen, &clen))) {
		fail(x, offline_quote(name), err);
		return;
	}
	err = xm_lookup_stored(&x->o.m, dir, ln.stored, 0, &in, &st);
	if (err) {
		fail(x, "not in the volume", err);
	} else if (offline_last(path)) {
		extract_obj(x, in, &st, dfd, name);
	} else if (!S_ISDIR(st.st_mode)) {
		fail(x, "not in the volume", -ENOTDIR);
	} else if ((cfd = ancestor(dfd, name, &made)) < 0) {
		fail(x, "", cfd);
	} else {
		extract_path(x, in, cfd, path); /* leaves us at this level */
		if (made)
			set_meta(x, in, &st, dfd, name);
		close(cfd);
	}
	if (!err)
		xm_forget(&x->o.m, in, 1);
	leave(x, plen, clen);
}

/*
 * DESTDIR @dest, made if missing (*@made): its descriptor, or -1 after a
 * message.
 */
static int open_dest(const char *dest, bool *made)
{
	int fd;

	*made = mkdir(dest, 0700) == 0;
	if (!*made && errno != EEXIST) {
		fprintf(stderr, PROG ": %s: %s\n", offline_quote(dest),
			strerror(errno));
		return -1;
	}
	fd = open(dest, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		fprintf(stderr, PROG ": %s: %s\n", offline_quote(dest),
			strerror(errno));
	return fd;
}

/*
 * The whole volume into DESTDIR @dest; the root's attributes go to
 * DESTDIR only if this run made it, or with --force.
 */
static void extract_all(struct ex *x, const char *dest, bool made)
{
	struct xnode *root = x->o.m.root;
	struct stat st;
	int err = xm_getattr(&x->o.m, root, &st);

	if (err) {
		fail(x, "", err);
		return;
	}
	extract_children(x, root, x->dest_fd);
	if (made || x->force)
		set_meta(x, root, &st, AT_FDCWD, dest);
}

/* Room for a descriptor per level of a deep tree (3 each). */
static void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/*
 * Whether directory @dest is @dir or below it: plaintext written into
 * the cipher directory would be read back as (undecryptable) entries of
 * the volume while it is being extracted.
 */
static bool dest_inside(const char *dest, const char *dir)
{
	char *d = realpath(dest, NULL), *c = realpath(dir, NULL);
	size_t len = c ? strlen(c) : 0;
	bool in = d && c && !strncmp(d, c, len) &&
		  (d[len] == '\0' || d[len] == '/' || len == 1);

	free(d);
	free(c);
	return in;
}

/* Extract @paths (@n; none: everything) into @dest; the exit code. */
static int run(struct ex *x, char **paths, int n, const char *dest)
{
	bool made;

	x->dest_fd = open_dest(dest, &made);
	if (x->dest_fd < 0)
		return XTSFS_EXIT_FAILURE;
	if (dest_inside(dest, x->o.m.cipherdir)) {
		fprintf(stderr, PROG ": %s is inside the cipher directory %s\n",
			offline_quote(dest), offline_quote(x->o.m.cipherdir));
		close(x->dest_fd);
		if (made)
			rmdir(dest);
		return XTSFS_EXIT_USAGE;
	}
	for (int i = 0; i < n; i++)
		if (!offline_last(paths[i]))
			extract_path(x, x->o.m.root, x->dest_fd, paths[i]);
		else
			extract_all(x, dest, made); /* "." or "/" */
	if (n == 0)
		extract_all(x, dest, made);
	close(x->dest_fd);
	progress_clear(x);
	if (x->failures) {
		fprintf(stderr, PROG ": %lu failure%s (see above); %lu entries "
			"extracted\n", x->failures, x->failures == 1 ? "" : "s",
			x->entries);
		return XTSFS_EXIT_FAILURE;
	}
	return XTSFS_EXIT_OK;
}

int main(int argc, char **argv)
{
	struct common_opts c;
	struct ex *x = calloc(1, sizeof(*x));
	int opt, rc;

	if (!x)
		return XTSFS_EXIT_FAILURE;
	common_init(&c, PROG);
	while ((opt = common_getopt(&cli, &c, argc, argv, &rc)) > 0) {
		switch (opt) {
		case 'f':
			x->force = true;
			break;
		case 'v':
			x->verbose = true;
			break;
		case 'q':
			x->quiet = c.quiet = true;
			break;
		}
	}
	if (opt >= 0 && argc - optind < 2)
		rc = cli_expected(&cli, "CIPHERDIR [PLAINPATH]... DESTDIR");
	if (opt < 0 || argc - optind < 2) {
		free(x);
		return rc;
	}
	common_warn_files(&c, PROG);
	raise_nofile();
	rc = offline_open(&x->o, &c, PROG, argv[optind]);
	if (!rc) {
		x->o.m.skipped = on_skipped;
		x->o.m.skipped_arg = x;
		x->root = geteuid() == 0;
		x->progress = !x->quiet && !x->verbose && isatty(STDERR_FILENO);
		rc = run(x, argv + optind + 1, argc - optind - 2,
			 argv[argc - 1]);
	}
	offline_close(&x->o);
	tdestroy(x->links, link_free);
	free(x);
	return rc;
}
