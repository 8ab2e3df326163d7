/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuse_ops.c - the FUSE low-level operations of xtsfs: thin handlers that
 * translate a request, call names.c / content.c, and reply exactly once.
 * Helpers named do_* return 0 or -errno; handlers named xfs_* reply.
 *
 * Every inode holds an O_PATH descriptor of its lower object. Names are
 * encrypted with the dirid of the parent directory (doc/FORMAT.md 4);
 * regular files go through content.c under a per-inode read-write lock
 * shared by every handle of that lower inode (hard links included).
 */
#include "xfs.h"

#include "dirops.h"
#include "fuse_glue.h"
#include "log.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/vfs.h>
#include <sys/xattr.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#define ROOT_DIRID_ZERO 1

/*
 * New dirids and sidecars are synced at most this long after they were
 * written, if no fsync through the mount did it before (durable.h).
 */
#define DURABLE_DELAY_MS 1000

/*
 * Dirids read ahead (prefetch.h): threads, so that several small reads are
 * in flight at once, and queued directories, beyond which a listing's
 * subdirectories are left to the requests that open them.
 */
#define PREFETCH_THREADS 4
#define PREFETCH_DEPTH 1024

/* The magic number (statfs f_type) of the filesystem of @fd, 0 if unknown. */
static unsigned long lower_fs_type(int fd)
{
	struct statfs sf;

	return fstatfs(fd, &sf) == 0 ? (unsigned long)sf.f_type : 0;
}

/*
 * Whether a lower filesystem of @type cannot report anything at close()
 * (no ->flush in the kernel): ext2/3/4, XFS, tmpfs. On them a FLUSH at
 * every close would be a round trip for nothing, so opens say
 * FOPEN_NOFLUSH. Network filesystems (NFS, CIFS) report delayed write
 * errors at close: they, and anything not known here, keep FLUSH
 * (xfs_flush).
 */
static bool close_reports_nothing(unsigned long type)
{
	switch (type) {
	case 0xEF53UL:     /* EXT2/3/4_SUPER_MAGIC */
	case 0x58465342UL: /* XFS_SUPER_MAGIC */
	case 0x01021994UL: /* TMPFS_MAGIC */
		return true;
	default:
		return false;
	}
}

/*
 * Whether SEEK_HOLE on a lower filesystem of @type reports holes exactly
 * (ext4, XFS, btrfs, tmpfs, f2fs), so that writes in place may skip the
 * reservation of ranges without holes (CONTENT_HOLES_SEEKABLE). The
 * generic lseek of other filesystems calls every byte of a file data,
 * sparse or not: there every overwrite keeps its fallocate. (ext2 and ext3
 * volumes mounted by the ext4 driver share its magic and its lseek; the
 * old ext2 driver has no fallocate, so its answer changes nothing.)
 */
static bool holes_seekable(unsigned long type)
{
	switch (type) {
	case 0xEF53UL:     /* EXT2/3/4_SUPER_MAGIC */
	case 0x58465342UL: /* XFS_SUPER_MAGIC */
	case 0x9123683EUL: /* BTRFS_SUPER_MAGIC */
	case 0x01021994UL: /* TMPFS_MAGIC */
	case 0xF2F52010UL: /* F2FS_SUPER_MAGIC */
		return true;
	default:
		return false;
	}
}

/* struct xinode - one lower object the kernel knows. */
struct xinode {
	struct itable_node node;   /* first: (0, st_dev, st_ino), kernel refs */
	int fd;                    /* O_PATH | O_NOFOLLOW of the lower object */
	mode_t type;               /* S_IFMT bits */
	pthread_mutex_t meta_lock; /* dirid and header loading */
	bool dirid_ok;             /* dirid[] is loaded; meta_lock */
	uint8_t dirid[NAMES_DIRID_SIZE]; /* directories; meta_lock */
	bool hdr_ok;               /* hdr is loaded; meta_lock */
	struct content_hdr hdr;    /* regular files; meta_lock */
	pthread_rwlock_t lock;     /* contents: read shared, write alone */
	pthread_mutex_t seen_lock; /* the three below */
	bool seen_ok;              /* seen_* describe the lower object */
	struct timespec seen_mtime; /* lower mtime as last seen or written */
	off_t seen_size;           /* lower size as last seen or written */
};

/* struct xhandle - one open regular file. */
struct xhandle {
	int fd;                    /* lower fd, O_RDONLY or O_RDWR */
	struct xinode *in;         /* its inode (kernel holds a lookup) */
	bool writable;             /* opened for writing */
};

/*
 * struct xdir - one open directory: the lower directory read with
 * getdents64 straight into our buffer (a DIR stream costs two more
 * syscalls at every opendir, and one more getdents at the end).
 */
struct xdir {
	int fd;                    /* the lower directory, O_RDONLY */
	off_t offset;              /* position the next readdir expects */
	bool eof;                  /* getdents said the end, at offset */
	size_t pos, len;           /* unread entries: buf[pos..len) */
	struct dirent64 *entry;    /* an entry read but not yet returned */
	char buf[32768];           /* what getdents64 returned */
};

/* see xfs.h */
void xfs_log_to_syslog(void)
{
	xlog_to_syslog();
}

/* see xfs.h */
void xfs_log(const struct xfs *fs, int prio, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	xlog_v(fs->mountpoint, prio, fmt, ap);
	va_end(ap);
}

static struct xfs *xfs_of(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

static struct xinode *inode_of(struct xfs *fs, fuse_ino_t ino)
{
	return ino == FUSE_ROOT_ID ? fs->root : (struct xinode *)(uintptr_t)ino;
}

/* /proc/self/fd/N: how an O_PATH descriptor is reopened for real. */
static void proc_path(char buf[64], int fd)
{
	snprintf(buf, 64, "/proc/self/fd/%d", fd);
}

/* ---- the inode table (itable.h) ------------------------------------------ */

static struct xinode *xinode_of(struct itable_node *n)
{
	return (struct xinode *)(void *)n; /* node is the first member */
}

static struct xinode *inode_new(int fd, const struct stat *st)
{
	struct xinode *in = calloc(1, sizeof(*in));

	if (!in)
		return NULL;
	in->fd = fd;
	in->node.k1 = st->st_dev; /* kind 0: a lower object */
	in->node.k2 = st->st_ino;
	in->type = st->st_mode & S_IFMT;
	pthread_mutex_init(&in->meta_lock, NULL);
	pthread_rwlock_init(&in->lock, NULL);
	pthread_mutex_init(&in->seen_lock, NULL);
	return in;
}

static void inode_free(struct xinode *in)
{
	close(in->fd);
	pthread_mutex_destroy(&in->meta_lock);
	pthread_rwlock_destroy(&in->lock);
	pthread_mutex_destroy(&in->seen_lock);
	free(in);
}

static void inode_free_node(struct itable_node *n)
{
	inode_free(xinode_of(n));
}

/* The inode of lower object (@dev, @ino) with one more reference, or NULL. */
static struct xinode *inode_ref(struct xfs *fs, dev_t dev, ino_t ino)
{
	struct itable_node *n = itable_ref(&fs->inodes, 0, dev, ino);

	return n ? xinode_of(n) : NULL;
}

/* One more reference to @in, which the caller holds one on already. */
static void inode_hold(struct xfs *fs, struct xinode *in)
{
	if (in != fs->root)
		itable_hold(&fs->inodes, &in->node);
}

/*
 * The inode for lower object @fd (whose stat is @st), taking one kernel
 * reference. @fd is consumed: kept in a new inode or closed.
 */
static struct xinode *inode_get(struct xfs *fs, int fd, const struct stat *st)
{
	struct xinode *in = inode_new(fd, st), *got;

	if (!in) {
		close(fd);
		return NULL;
	}
	got = xinode_of(itable_insert(&fs->inodes, &in->node));
	if (got != in)
		inode_free(in); /* closes fd: the table had this object */
	return got;
}

static void inode_forget(struct xfs *fs, struct xinode *in, uint64_t n)
{
	if (in != fs->root && itable_forget(&fs->inodes, &in->node, n))
		inode_free(in);
}

static void prefetch_dirid(void *ctx, void *item);
static void prefetch_drop(void *ctx, void *item);

/* see xfs.h */
int xfs_init(struct xfs *fs)
{
	struct stat st;
	unsigned long fstype;
	int err;

	/*
	 * Modes arrive from the kernel with the caller's umask already
	 * applied (no FUSE_DONT_MASK): the daemon's own must not take more
	 * bits away (a daemon started under umask 022 made every file
	 * created 0666 come out 0644). Our own files ask for 0444 exactly.
	 */
	umask(0);
	fs->dops.root_fd = fs->root_fd;
	fs->dops.names = fs->names;
	fs->dops.durable = fs->readonly ? NULL : &fs->durable;
	err = itable_init(&fs->inodes, 1024);
	if (err)
		return err;
	if (fstatat(fs->root_fd, "", &st, AT_EMPTY_PATH) != 0)
		return -errno;
	/* the root is never in the table: FUSE_ROOT_ID names it, forever */
	fs->root = inode_new(fs->root_fd, &st);
	if (!fs->root)
		return -ENOMEM;
	/* The root's dirid is 16 zero bytes (FORMAT 4.2). */
	fs->root->dirid_ok = true;
	fstype = lower_fs_type(fs->root_fd);
	fs->noflush = close_reports_nothing(fstype);
	fs->write_flags = holes_seekable(fstype) ? CONTENT_HOLES_SEEKABLE : 0;
	/* plaintext names need no dirid */
	err = fs->names ? prefetch_start(&fs->prefetch, PREFETCH_THREADS,
					 PREFETCH_DEPTH, prefetch_dirid,
					 prefetch_drop, fs) : 0;
	if (err)
		return err;
	if (!fs->readonly) {
		/* syncfs() needs a real descriptor, not an O_PATH one */
		int fd = openat(fs->root_fd, ".", O_RDONLY | O_DIRECTORY |
				O_CLOEXEC);

		if (fd < 0)
			return -errno;
		return durable_start(&fs->durable, fd, NULL,
				     DURABLE_DELAY_MS);
	}
	return 0;
}

/* see xfs.h */
void xfs_destroy(struct xfs *fs)
{
	int err;

	prefetch_stop(&fs->prefetch); /* its items hold inodes */
	err = durable_stop(&fs->durable);

	if (err)
		xfs_log(fs, LOG_ERR, "cannot sync the cipher directory: %s",
			strerror(-err));
	itable_destroy(&fs->inodes, inode_free_node);
	if (fs->root)
		inode_free(fs->root); /* closes root_fd */
	fs->root = NULL;
}

/* ---- names -------------------------------------------------------------- */

/*
 * Load the dirid of directory @dir (FORMAT 4.2). @quiet: a failure is not
 * logged (a prefetch: the request that needs it will log).
 */
static int dirid_load(struct xfs *fs, struct xinode *dir, uint8_t out[16],
		      bool quiet)
{
	int err = 0;

	pthread_mutex_lock(&dir->meta_lock);
	if (!dir->dirid_ok) {
		err = dirops_read_dirid(dir->fd, dir->dirid);
		if (!err) {
			dir->dirid_ok = true;
		} else {
			if (!quiet)
				xfs_log(fs, LOG_ERR, "directory (lower inode "
					"%llu): %s missing or damaged: its names "
					"cannot be decrypted",
					(unsigned long long)dir->node.k2,
					NAMES_DIRID_FILE);
			err = -EIO;
		}
	}
	if (!err)
		memcpy(out, dir->dirid, NAMES_DIRID_SIZE);
	pthread_mutex_unlock(&dir->meta_lock);
	return err;
}

static int dirid_get(struct xfs *fs, struct xinode *dir, uint8_t out[16])
{
	return dirid_load(fs, dir, out, false);
}

/*
 * The prefetch threads (prefetch.h): load the dirid of a directory that a
 * listing showed, then drop the reference the listing took for us.
 */
static void prefetch_dirid(void *ctx, void *item)
{
	struct xfs *fs = ctx;
	struct xinode *dir = item;
	uint8_t dirid[NAMES_DIRID_SIZE];

	(void)dirid_load(fs, dir, dirid, true);
	explicit_bzero(dirid, sizeof(dirid));
	inode_forget(fs, dir, 1);
}

static void prefetch_drop(void *ctx, void *item)
{
	inode_forget(ctx, item, 1);
}

/*
 * Have the dirid of @in read ahead if it is a directory whose dirid is
 * not loaded yet.
 */
static void prefetch_post_dir(struct xfs *fs, struct xinode *in)
{
	bool want;

	if (in->type != S_IFDIR || !fs->names)
		return;
	pthread_mutex_lock(&in->meta_lock);
	want = !in->dirid_ok;
	pthread_mutex_unlock(&in->meta_lock);
	if (!want)
		return;
	inode_hold(fs, in);
	if (!prefetch_post(&fs->prefetch, in))
		inode_forget(fs, in, 1);
}

/* dirid_src for @dir: its dirid, loaded once (dirops.h). */
struct dir_ref {
	struct xfs *fs;
	struct xinode *dir;
};

static int dir_ref_get(void *arg, uint8_t out[NAMES_DIRID_SIZE])
{
	struct dir_ref *r = arg;

	return dirid_get(r->fs, r->dir, out);
}

static int name_enc(struct xfs *fs, struct xinode *dir, const char *name,
		    struct lname *ln)
{
	struct dir_ref r = { fs, dir };
	struct dirid_src id = { dir_ref_get, &r };

	return dirops_name_enc(&fs->dops, &id, dir == fs->root, name, ln);
}

/*
 * Decrypt lower entry @lower of @dir into @out. Return 0, 1 to skip it
 * silently (our own files), or -errno (logged by the caller).
 */
static int name_dec(struct xfs *fs, struct xinode *dir, const char *lower,
		    char out[256])
{
	struct dir_ref r = { fs, dir };
	struct dirid_src id = { dir_ref_get, &r };

	return dirops_name_dec(&fs->dops, dir->fd, &id, dir == fs->root, lower,
			       out);
}

/* ---- attributes ---------------------------------------------------------- */

/* The plaintext length of symlink @fd (O_PATH of the lower symlink). */
static int64_t link_size(struct xfs *fs, int fd);

/* Turn lower attributes into the plaintext view the kernel gets. */
static int attr_fix(struct xfs *fs, int fd, struct stat *st)
{
	if (S_ISREG(st->st_mode)) {
		int64_t ps = content_plain_size((uint64_t)st->st_size);

		st->st_size = ps < 0 ? 0 : ps;
		/* a 1..39-byte lower file: shown empty; reads say EIO */
	} else if (S_ISLNK(st->st_mode) && fs->names) {
		int64_t n = link_size(fs, fd);

		st->st_size = n < 0 ? 0 : n;
	}
	return 0;
}

static int stat_inode(struct xfs *fs, struct xinode *in, struct stat *st)
{
	int locked = S_ISREG(in->type);

	/* Under the content lock, so a size never shows a half-done write. */
	if (locked)
		pthread_rwlock_rdlock(&in->lock);
	if (fstatat(in->fd, "", st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) {
		int err = -errno;

		if (locked)
			pthread_rwlock_unlock(&in->lock);
		return err;
	}
	if (locked)
		pthread_rwlock_unlock(&in->lock);
	return attr_fix(fs, in->fd, st);
}

/* ---- lookup ------------------------------------------------------------- */

/*
 * Look up the lower entry @stored in @dir and fill @e (one reference).
 * @listed_reg: the inode number a directory listing gave for @stored when
 * it is a regular file, else 0.
 */
static int do_lookup_stored(struct xfs *fs, struct xinode *dir,
			    const char *stored, ino_t listed_reg,
			    struct fuse_entry_param *e)
{
	struct xinode *in;
	int fd, err;

	memset(e, 0, sizeof(*e));
	/*
	 * An object we hold already (listed again, looked up again) needs no
	 * new descriptor: its inode number finds it. The table's O_PATH
	 * descriptor keeps it alive, so the number cannot name another. A
	 * listing gives the number (a regular file cannot be a mount point,
	 * whose listed number is the covered directory's); a lookup asks
	 * the lower filesystem.
	 */
	if (listed_reg) {
		in = inode_ref(fs, dir->node.k1, listed_reg);
	} else {
		if (fstatat(dir->fd, stored, &e->attr, AT_SYMLINK_NOFOLLOW))
			return -errno;
		in = inode_ref(fs, e->attr.st_dev, e->attr.st_ino);
	}
	if (!in) {
		fd = openat(dir->fd, stored, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		/* the object opened, which a rename may have swapped */
		if (fstatat(fd, "", &e->attr, AT_EMPTY_PATH |
			    AT_SYMLINK_NOFOLLOW) != 0) {
			err = -errno;
			close(fd);
			return err;
		}
		in = inode_get(fs, fd, &e->attr);
		if (!in)
			return -ENOMEM;
		/*
		 * A new inode (it kept our descriptor): nothing can be
		 * writing to it through the mount yet, so the attributes just
		 * read are current. One the table had (a concurrent lookup)
		 * is stat'ed again below, under its content lock.
		 */
		if (in->fd == fd) {
			err = attr_fix(fs, in->fd, &e->attr);
			goto done;
		}
	}
	err = stat_inode(fs, in, &e->attr);
done:
	if (err) {
		inode_forget(fs, in, 1);
		return err;
	}
	e->ino = (fuse_ino_t)(uintptr_t)in;
	e->attr_timeout = fs->attr_timeout;
	e->entry_timeout = fs->entry_timeout;
	return 0;
}

static int do_lookup(struct xfs *fs, struct xinode *dir, const char *name,
		     struct fuse_entry_param *e)
{
	struct lname ln;
	int err = name_enc(fs, dir, name, &ln);

	if (err == -EPERM)
		return -ENOENT; /* a reserved name simply is not there */
	if (err)
		return err;
	return do_lookup_stored(fs, dir, ln.stored, 0, e);
}

static void xfs_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct xfs *fs = xfs_of(req);
	struct fuse_entry_param e;
	int err = do_lookup(fs, inode_of(fs, parent), name, &e);

	if (err == -ENOENT) {
		/* a negative entry the kernel may cache as long as others */
		memset(&e, 0, sizeof(e));
		e.entry_timeout = fs->entry_timeout;
		fuse_reply_entry(req, &e);
		return;
	}
	if (err)
		fuse_reply_err(req, -err);
	else
		fuse_reply_entry(req, &e);
}

static void xfs_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	struct xfs *fs = xfs_of(req);

	inode_forget(fs, inode_of(fs, ino), nlookup);
	fuse_reply_none(req);
}

static void xfs_forget_multi(fuse_req_t req, size_t count,
			     struct fuse_forget_data *forgets)
{
	struct xfs *fs = xfs_of(req);

	for (size_t i = 0; i < count; i++)
		inode_forget(fs, inode_of(fs, forgets[i].ino), forgets[i].nlookup);
	fuse_reply_none(req);
}

static void xfs_getattr(fuse_req_t req, fuse_ino_t ino,
			struct fuse_file_info *fi)
{
	struct xfs *fs = xfs_of(req);
	struct stat st;
	int err = stat_inode(fs, inode_of(fs, ino), &st);

	(void)fi;
	if (err)
		fuse_reply_err(req, -err);
	else
		fuse_reply_attr(req, &st, fs->attr_timeout);
}

/* ---- making entries ----------------------------------------------------- */

/*
 * Permission checks the daemon makes itself. The kernel checks the
 * objects it knows (default_permissions), but its view can be stale: a
 * negative entry cached for entry_timeout hides a name that appeared in
 * the cipher directory since (another mount, a sync client), and a
 * cached positive entry may name a lower object that was replaced. Where
 * the daemon acts on a lower object the kernel may not have checked, it
 * applies the same rules for the caller (generic_permission without
 * ACLs: the mount has none; a root caller passes as CAP_DAC_OVERRIDE and
 * CAP_FOWNER would let it).
 */

/* Whether the caller of @req is in group @gid (primary or supplementary). */
static bool caller_in_group(fuse_req_t req, gid_t gid)
{
	gid_t small[64], *list = small;
	int n, i;
	bool in = false;

	if (fuse_req_ctx(req)->gid == gid)
		return true;
	n = fuse_req_getgroups(req, 64, small);
	if (n > 64) {
		list = malloc((size_t)n * sizeof(*list));
		if (!list)
			return false;
		n = fuse_req_getgroups(req, n, list);
	}
	for (i = 0; i < n && !in; i++)
		in = list[i] == gid;
	if (list != small)
		free(list);
	return in;
}

/* Whether the caller may open the existing object @st with @flags. */
static bool caller_may_open(fuse_req_t req, const struct stat *st, int flags)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	int acc = flags & O_ACCMODE;
	mode_t want = 0, bits;

	if (acc != O_WRONLY)
		want |= 4;
	if (acc != O_RDONLY || (flags & O_TRUNC))
		want |= 2;
	if (ctx->uid == 0)
		return true;
	if (ctx->uid == st->st_uid)
		bits = (st->st_mode >> 6) & 7;
	else if (caller_in_group(req, st->st_gid))
		bits = (st->st_mode >> 3) & 7;
	else
		bits = st->st_mode & 7;
	return (bits & want) == want;
}

/*
 * Whether the caller may remove or replace entry @stored of lower
 * directory @dirfd as far as the sticky bit goes (the kernel's
 * check_sticky): 0, -EPERM, or 0 when @stored does not exist.
 */
static int caller_may_delete(fuse_req_t req, int dirfd, const char *stored)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	struct stat d, st;

	if (ctx->uid == 0)
		return 0; /* CAP_FOWNER; and no syscall on a root's mount */
	if (fstatat(dirfd, "", &d, AT_EMPTY_PATH) != 0 || !(d.st_mode & S_ISVTX))
		return 0;
	if (fstatat(dirfd, stored, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return 0;
	return st.st_uid == ctx->uid || d.st_uid == ctx->uid ? 0 : -EPERM;
}

/*
 * Give a new lower object, made with @mode, to the caller, as the kernel
 * would have. The chown clears set-user-ID and set-group-ID bits of
 * what is not a directory (chown_common kills them even for root), but
 * the caller asked for them at creation, where ext4 keeps them (the VFS
 * has already dropped a set-group-ID bit the caller may not set): put
 * them back.
 */
static void own_by_caller(fuse_req_t req, int dirfd, const char *stored,
			  mode_t mode)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	struct stat dir;
	gid_t gid = ctx->gid;

	if (geteuid() != 0 || (ctx->uid == 0 && ctx->gid == 0))
		return;
	/* in a setgid directory the new object keeps the inherited group */
	if (fstatat(dirfd, "", &dir, AT_EMPTY_PATH) == 0 &&
	    (dir.st_mode & S_ISGID))
		gid = (gid_t)-1;
	if (fchownat(dirfd, stored, ctx->uid, gid, AT_SYMLINK_NOFOLLOW) != 0)
		return;
	if ((mode & (S_ISUID | S_ISGID)) && !S_ISDIR(mode) && !S_ISLNK(mode))
		(void)fchmodat(dirfd, stored, mode & 07777, 0);
}

/*
 * After a write, truncate or chown by the caller of @req of regular file
 * @in, whose mode was @mode and group @gid before it: clear the
 * set-user-ID and set-group-ID bits as the VFS does on ext4
 * (should_remove_suid, setattr_should_drop_sgid). A caller other than
 * root loses S_ISUID, and S_ISGID if the file is group-executable or the
 * caller is not in its group. The kernel clears them itself before such
 * requests, but by the older rule (S_ISGID only when group-executable),
 * and for open(O_TRUNC) not at all: the daemon truncates there
 * (atomic_o_trunc) and the kernel's mode change is dropped with the
 * truncation it skips.
 */
static void kill_priv(fuse_req_t req, const struct xinode *in, mode_t mode,
		      gid_t gid)
{
	mode_t kill = 0;
	char path[64];

	if (fuse_req_ctx(req)->uid == 0 || !S_ISREG(mode) ||
	    !(mode & (S_ISUID | S_ISGID)))
		return;
	if (mode & S_ISUID)
		kill |= S_ISUID;
	if ((mode & S_ISGID) && ((mode & S_IXGRP) || !caller_in_group(req, gid)))
		kill |= S_ISGID;
	if (!kill)
		return;
	proc_path(path, in->fd);
	(void)chmod(path, mode & 07777 & ~kill);
}

/* kill_priv() for what the lower file @fd (of @in) is now. */
static void kill_priv_fd(fuse_req_t req, const struct xinode *in, int fd)
{
	struct stat st;

	if (fuse_req_ctx(req)->uid != 0 && fstat(fd, &st) == 0)
		kill_priv(req, in, st.st_mode, st.st_gid);
}

/*
 * The end of every create: give the new object @ln in @dir (made with
 * @mode) to the caller and look it up into @e; if the lookup fails
 * (out of descriptors or memory), remove the object nobody was told of.
 */
static int made(fuse_req_t req, struct xinode *dir, const struct lname *ln,
		mode_t mode, struct fuse_entry_param *e)
{
	struct xfs *fs = xfs_of(req);
	int err;

	own_by_caller(req, dir->fd, ln->stored, mode);
	err = do_lookup_stored(fs, dir, ln->stored, 0, e);
	if (err)
		dirops_undo_make(dir->fd, ln, S_ISDIR(mode));
	return err;
}

static void reply_entry_or_err(fuse_req_t req, int err,
			       const struct fuse_entry_param *e)
{
	if (err)
		fuse_reply_err(req, -err);
	else
		fuse_reply_entry(req, e);
}

static void xfs_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name,
		      mode_t mode)
{
	struct xfs *fs = xfs_of(req);
	struct xinode *dir = inode_of(fs, parent);
	struct fuse_entry_param e;
	struct lname ln;
	int err = name_enc(fs, dir, name, &ln);

	if (!err)
		err = dirops_mkdir(&fs->dops, dir->fd, &ln, mode);
	if (!err)
		err = made(req, dir, &ln, S_IFDIR | mode, &e);
	reply_entry_or_err(req, err, &e);
}

static void xfs_mknod(fuse_req_t req, fuse_ino_t parent, const char *name,
		      mode_t mode, dev_t rdev)
{
	struct xfs *fs = xfs_of(req);
	struct xinode *dir = inode_of(fs, parent);
	struct fuse_entry_param e;
	struct lname ln;
	int err = name_enc(fs, dir, name, &ln);

	if (!err)
		err = dirops_mknod(&fs->dops, dir->fd, &ln, mode, rdev);
	if (!err)
		err = made(req, dir, &ln, mode, &e);
	reply_entry_or_err(req, err, &e);
}

static void xfs_symlink(fuse_req_t req, const char *target, fuse_ino_t parent,
			const char *name)
{
	struct xfs *fs = xfs_of(req);
	struct xinode *dir = inode_of(fs, parent);
	struct fuse_entry_param e;
	struct lname ln;
	int err = name_enc(fs, dir, name, &ln);

	if (!err)
		err = dirops_symlink(&fs->dops, dir->fd, &ln, target);
	if (!err)
		err = made(req, dir, &ln, S_IFLNK, &e);
	reply_entry_or_err(req, err, &e);
}

static int64_t link_size(struct xfs *fs, int fd)
{
	char out[4096];
	int err = dirops_readlink(&fs->dops, fd, out);

	return err ? err : (int64_t)strlen(out);
}

static void xfs_readlink(fuse_req_t req, fuse_ino_t ino)
{
	struct xfs *fs = xfs_of(req);
	struct xinode *in = inode_of(fs, ino);
	char out[4096];
	int err = dirops_readlink(&fs->dops, in->fd, out);

	if (err == -EIO)
		xfs_log(fs, LOG_ERR, "symlink (lower inode %llu): target "
			"cannot be decrypted", (unsigned long long)in->node.k2);
	if (err)
		fuse_reply_err(req, -err);
	else
		fuse_reply_readlink(req, out);
}

static void xfs_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent,
		     const char *newname)
{
	struct xfs *fs = xfs_of(req);
	struct xinode *in = inode_of(fs, ino), *dir = inode_of(fs, newparent);
	struct fuse_entry_param e;
	struct lname ln;
	int err = name_enc(fs, dir, newname, &ln);

	if (!err)
		err = dirops_link(&fs->dops, in->fd, dir->fd, &ln);
	if (!err) {
		err = do_lookup_stored(fs, dir, ln.stored, 0, &e);
		if (err)
			dirops_undo_make(dir->fd, &ln, false);
	}
	reply_entry_or_err(req, err, &e);
}

/* ---- removing and renaming ---------------------------------------------- */

/* The lower name of @name in @dir for a removal: reserved ones are absent. */
static int name_enc_existing(struct xfs *fs, struct xinode *dir,
			     const char *name, struct lname *ln)
{
	int err = name_enc(fs, dir, name, ln);

	return err == -EPERM ? -ENOENT : err;
}

static void xfs_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct xfs *fs = xfs_of(req);
	struct xinode *dir = inode_of(fs, parent);
	struct lname ln;
	int err = name_enc_existing(fs, dir, name, &ln);

	/* the kernel checked the sticky bit against what it last saw */
	if (!err)
		err = caller_may_delete(req, dir->fd, ln.stored);
	if (!err)
		err = dirops_unlink(&fs->dops, dir->fd, &ln);
	fuse_reply_err(req, -err);
}

static void xfs_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct xfs *fs = xfs_of(req);
	struct xinode *dir = inode_of(fs, parent);
	struct lname ln;
	int err = name_enc_existing(fs, dir, name, &ln);

	if (!err)
		err = caller_may_delete(req, dir->fd, ln.stored);
	if (!err)
		err = dirops_rmdir(&fs->dops, dir->fd, &ln);
	fuse_reply_err(req, -err);
}

static void xfs_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
		       fuse_ino_t newparent, const char *newname,
		       unsigned int flags)
{
	struct xfs *fs = xfs_of(req);
	struct xinode *d1 = inode_of(fs, parent), *d2 = inode_of(fs, newparent);
	struct lname l1, l2;
	int err;

	/*
	 * RENAME_WHITEOUT (overlayfs on an xtsfs upper layer; the kernel
	 * has checked CAP_MKNOD): the lower rename leaves the whiteout, a
	 * 0/0 character device, under the old stored name, which decrypts
	 * to the old name; so a long old name keeps its sidecar.
	 */
	if (flags & ~(RENAME_NOREPLACE | RENAME_EXCHANGE | RENAME_WHITEOUT)) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	err = name_enc_existing(fs, d1, name, &l1);
	if (!err)
		err = name_enc(fs, d2, newname, &l2);
	/*
	 * The kernel checked the sticky bit only for a target it knew of:
	 * one that appeared behind its negative entry would be replaced
	 * unchecked. Both ends, against the objects there now.
	 */
	if (!err)
		err = caller_may_delete(req, d1->fd, l1.stored);
	if (!err && !(flags & RENAME_NOREPLACE))
		err = caller_may_delete(req, d2->fd, l2.stored);
	if (!err)
		err = dirops_rename(&fs->dops, d1->fd, &l1, d2->fd, &l2, flags);
	if (!err && (flags & RENAME_WHITEOUT))
		own_by_caller(req, d1->fd, l1.stored, S_IFCHR); /* as ext4 */
	fuse_reply_err(req, -err);
}

/* ---- attributes, set ---------------------------------------------------- */

static int reopen(const struct xinode *in, int flags)
{
	char path[64];
	int fd;

	proc_path(path, in->fd);
	fd = open(path, flags | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/*
 * seen_check() - whether lower object @fd has the mtime and size last
 * seen (only if @compare), then remember them; a state whose mtime is
 * less than @min_age seconds old is remembered as unknown.
 */
static bool seen_check(struct xinode *in, int fd, bool compare,
		       time_t min_age)
{
	struct timespec now = { 0 };
	struct stat st;
	bool same;

	if (fstat(fd, &st) != 0 ||
	    (min_age && clock_gettime(CLOCK_REALTIME, &now) != 0))
		return false;
	pthread_mutex_lock(&in->seen_lock);
	same = compare && in->seen_ok && in->seen_size == st.st_size &&
	       in->seen_mtime.tv_sec == st.st_mtim.tv_sec &&
	       in->seen_mtime.tv_nsec == st.st_mtim.tv_nsec;
	in->seen_ok = !min_age || now.tv_sec - st.st_mtim.tv_sec >= min_age;
	in->seen_mtime = st.st_mtim;
	in->seen_size = st.st_size;
	pthread_mutex_unlock(&in->seen_lock);
	return same;
}

/*
 * Record the lower file as we leave it (after our own writes), and tell
 * whether it is still as we last saw it: only then may an open keep the
 * kernel's page cache (nobody changed the cipher file behind our back).
 */
static bool seen_update(struct xinode *in, int fd, bool compare)
{
	return seen_check(in, fd, compare, 0);
}

/* Load the header of regular file @in (opened as @fd) if not loaded. */
static int header_get(struct xfs *fs, struct xinode *in, int fd, bool create)
{
	int err = 0;

	pthread_mutex_lock(&in->meta_lock);
	if (!in->hdr_ok) {
		err = content_read_header(fd, &in->hdr);
		if (err == -ENODATA && create)
			err = content_init_header(fd, &in->hdr);
		if (!err)
			in->hdr_ok = true;
		else if (err == -EIO)
			xfs_log(fs, LOG_ERR, "file (lower inode %llu): header "
				"corrupt or truncated",
				(unsigned long long)in->node.k2);
	}
	pthread_mutex_unlock(&in->meta_lock);
	return err;
}

/* The plaintext size of lower file @fd; @st (may be NULL) gets its stat. */
static int lower_psize_st(int fd, uint64_t *psize, struct stat *st)
{
	struct stat tmp;
	int64_t ps;

	if (!st)
		st = &tmp;
	if (fstat(fd, st) != 0)
		return -errno;
	ps = content_plain_size((uint64_t)st->st_size);
	if (ps < 0)
		return (int)ps;
	*psize = (uint64_t)ps;
	return 0;
}

static int lower_psize(int fd, uint64_t *psize)
{
	return lower_psize_st(fd, psize, NULL);
}

static int do_truncate(struct xfs *fs, struct xinode *in, int fd,
		       uint64_t size)
{
	uint64_t ps;
	int err;

	pthread_rwlock_wrlock(&in->lock);
	err = lower_psize(fd, &ps);
	if (!err && size != ps) {
		err = header_get(fs, in, fd, true);
		if (!err)
			err = content_truncate(fs->xts, fd, &in->hdr, &ps, size);
		(void)seen_update(in, fd, false);
	}
	pthread_rwlock_unlock(&in->lock);
	return err;
}

static int do_setattr(struct xfs *fs, struct xinode *in, struct stat *attr,
		      int valid, struct fuse_file_info *fi)
{
	char path[64];
	int err;

	proc_path(path, in->fd);
	if (valid & FUSE_SET_ATTR_MODE) {
		if (in->type == S_IFLNK)
			return -EOPNOTSUPP;
		if (chmod(path, attr->st_mode & 07777) != 0)
			return -errno;
	}
	if (valid & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) {
		uid_t uid = valid & FUSE_SET_ATTR_UID ? attr->st_uid : (uid_t)-1;
		gid_t gid = valid & FUSE_SET_ATTR_GID ? attr->st_gid : (gid_t)-1;

		if (fchownat(in->fd, "", uid, gid,
			     AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0)
			return -errno;
	}
	if (valid & FUSE_SET_ATTR_SIZE) {
		int fd = fi ? ((struct xhandle *)(uintptr_t)fi->fh)->fd : -1;
		bool own = false;

		if (in->type != S_IFREG)
			return -EINVAL;
		if (fd < 0 || (fi && !((struct xhandle *)(uintptr_t)fi->fh)->writable)) {
			fd = reopen(in, O_RDWR);
			if (fd < 0)
				return fd;
			own = true;
		}
		err = do_truncate(fs, in, fd, (uint64_t)attr->st_size);
		if (own)
			close(fd);
		if (err)
			return err;
	}
	if (valid & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME)) {
		struct timespec tv[2];

		tv[0].tv_sec = 0;
		tv[1].tv_sec = 0;
		tv[0].tv_nsec = UTIME_OMIT;
		tv[1].tv_nsec = UTIME_OMIT;
		if (valid & FUSE_SET_ATTR_ATIME_NOW)
			tv[0].tv_nsec = UTIME_NOW;
		else if (valid & FUSE_SET_ATTR_ATIME)
			tv[0] = attr->st_atim;
		if (valid & FUSE_SET_ATTR_MTIME_NOW)
			tv[1].tv_nsec = UTIME_NOW;
		else if (valid & FUSE_SET_ATTR_MTIME)
			tv[1] = attr->st_mtim;
		if (utimensat(in->fd, "", tv, AT_EMPTY_PATH) != 0 &&
		    (in->type == S_IFLNK || utimensat(AT_FDCWD, path, tv, 0) != 0))
			return -errno;
	}
	return 0;
}

static void xfs_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
			int valid, struct fuse_file_info *fi)
{
	struct xfs *fs = xfs_of(req);
	struct xinode *in = inode_of(fs, ino);
	struct stat st, before;
	bool kill = in->type == S_IFREG && fuse_req_ctx(req)->uid != 0 &&
		    (valid & (FUSE_SET_ATTR_SIZE | FUSE_SET_ATTR_UID |
			      FUSE_SET_ATTR_GID)) &&
		    fstatat(in->fd, "", &before, AT_EMPTY_PATH) == 0;
	int err = do_setattr(fs, in, attr, valid, fi);

	/* by the group the file had before a chown (kill_priv) */
	if (!err && kill && fstatat(in->fd, "", &st, AT_EMPTY_PATH) == 0)
		kill_priv(req, in, st.st_mode, before.st_gid);
	if (!err)
		err = stat_inode(fs, in, &st);
	if (err)
		fuse_reply_err(req, -err);
	else
		fuse_reply_attr(req, &st, fs->attr_timeout);
}

/* ---- files -------------------------------------------------------------- */

/* Lower open flags for plaintext open flags @flags. */
static int lower_flags(int flags, bool *writable)
{
	int acc = flags & O_ACCMODE;

	*writable = acc != O_RDONLY;
	/*
	 * O_APPEND would make the lower pwrite ignore our offsets; O_TRUNC
	 * would drop the header; writers need to read for partial units.
	 */
	flags &= ~(O_APPEND | O_TRUNC | O_CREAT | O_EXCL | O_NOFOLLOW |
		   O_DIRECT | O_ACCMODE | O_NOCTTY);
	return flags | (*writable ? O_RDWR : O_RDONLY) | O_CLOEXEC;
}

static int handle_open(struct xfs *fs, struct xinode *in, int fd, int flags,
		       bool writable, struct fuse_file_info *fi)
{
	struct xhandle *h;
	bool same = seen_update(in, fd, true);
	int err;

	err = bdi_tune_once(&fs->readahead);
	if (err)
		xfs_log(fs, LOG_INFO, "readahead window left at the kernel "
			"default: %s", strerror(-err));
	/*
	 * A lower file changed behind our back may be a different file
	 * altogether (another id): read its header again.
	 */
	if (!same) {
		pthread_mutex_lock(&in->meta_lock);
		in->hdr_ok = false;
		pthread_mutex_unlock(&in->meta_lock);
	}
	err = header_get(fs, in, fd, writable);
	if (err == -ENODATA)
		err = 0; /* an empty read-only file: no header needed yet */
	if (!err && (flags & O_TRUNC)) {
		/*
		 * Linux truncates even for O_RDONLY | O_TRUNC (the kernel has
		 * checked write permission): use a writable descriptor then.
		 */
		int wfd = writable ? fd : reopen(in, O_RDWR);

		err = wfd < 0 ? wfd : do_truncate(fs, in, wfd, 0);
		if (!err && !writable)
			err = header_get(fs, in, wfd, true);
		if (wfd >= 0 && wfd != fd)
			close(wfd);
	}
	if (err)
		return err;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->fd = fd;
	h->in = in;
	h->writable = writable;
	fi->fh = (uint64_t)(uintptr_t)h;
	fi->keep_cache = same && !(flags & O_TRUNC);
	fi->noflush = fs->noflush;
	(void)seen_update(in, fd, false); /* after our own truncation */
	return 0;
}

static void xfs_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct xfs *fs = xfs_of(req);
	struct xinode *in = inode_of(fs, ino);
	bool writable;
	int fd, err;

	if (in->type != S_IFREG) {
		fuse_reply_err(req, in->type == S_IFDIR ? EISDIR : EINVAL);
		return;
	}
	fd = reopen(in, lower_flags(fi->flags, &writable));
	if (fd < 0) {
		fuse_reply_err(req, -fd);
		return;
	}
	err = handle_open(fs, in, fd, fi->flags, writable, fi);
	if (err) {
		close(fd);
		fuse_reply_err(req, -err);
		return;
	}
	if (fi->flags & O_TRUNC)
		kill_priv_fd(req, in, fd);
	fuse_reply_open(req, fi);
}

static void xfs_create(fuse_req_t req, fuse_ino_t parent, const char *name,
		       mode_t mode, struct fuse_file_info *fi)
{
	struct xfs *fs = xfs_of(req);
	struct xinode *dir = inode_of(fs, parent);
	struct fuse_entry_param e;
	struct xinode *in;
	struct lname ln;
	bool writable, made = false;
	int fd = -1, err, lflags;

	err = name_enc(fs, dir, name, &ln);
	if (!err)
		err = dirops_sidecar_make(&fs->dops, dir->fd, &ln);
	if (err)
		goto fail;
	lflags = (lower_flags(fi->flags, &writable) & ~O_ACCMODE) | O_RDWR |
		 O_NOFOLLOW;
	/* know whether we made the file, to remove it if the rest fails */
	fd = openat(dir->fd, ln.stored, lflags | O_CREAT | O_EXCL, mode & 07777);
	made = fd >= 0;
	if (fd < 0 && errno == EEXIST && !(fi->flags & O_EXCL)) {
		/*
		 * The kernel thought the name absent (a stale negative
		 * entry), so it checked nothing of the file that is there:
		 * check the caller's access to it before opening it as root.
		 */
		struct stat st;

		fd = openat(dir->fd, ln.stored, lflags);
		if (fd >= 0 && (fstat(fd, &st) != 0 ||
				!caller_may_open(req, &st, fi->flags))) {
			close(fd);
			fd = -1;
			errno = EACCES;
		}
	}
	if (fd < 0) {
		err = -errno;
		if (err != -EEXIST)
			dirops_sidecar_drop(dir->fd, &ln);
		goto fail;
	}
	if (made)
		own_by_caller(req, dir->fd, ln.stored, S_IFREG | mode);
	err = do_lookup_stored(fs, dir, ln.stored, 0, &e);
	if (err) {
		if (made)
			dirops_undo_make(dir->fd, &ln, false);
		goto fail;
	}
	in = inode_of(fs, e.ino);
	err = handle_open(fs, in, fd, fi->flags, true, fi);
	if (err) {
		inode_forget(fs, in, 1);
		if (made) { /* e.g. no space for the header: leave nothing */
			unlinkat(dir->fd, ln.stored, 0);
			dirops_sidecar_drop(dir->fd, &ln);
		}
		goto fail;
	}
	if (!made && (fi->flags & O_TRUNC))
		kill_priv_fd(req, in, fd);
	/* the header was just written: report the (empty) size again */
	(void)stat_inode(fs, in, &e.attr);
	fuse_reply_create(req, &e, fi);
	return;
fail:
	if (fd >= 0)
		close(fd);
	fuse_reply_err(req, -err);
}

static void xfs_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	struct xfs *fs = xfs_of(req);
	struct xhandle *h = (struct xhandle *)(uintptr_t)fi->fh;
	struct xinode *in = h->in;
	uint8_t *buf = NULL;
	uint64_t ps;
	ssize_t n;
	int err;

	(void)ino;
	pthread_rwlock_rdlock(&in->lock);
	err = lower_psize(h->fd, &ps);
	if (!err && ps > 0 && !in->hdr_ok)
		err = header_get(fs, in, h->fd, false);
	if (err) {
		pthread_rwlock_unlock(&in->lock);
		if (err == -EIO)
			xfs_log(fs, LOG_ERR, "file (lower inode %llu): too "
				"short for its header", (unsigned long long)in->node.k2);
		fuse_reply_err(req, -err);
		return;
	}
	if ((uint64_t)off >= ps) {
		pthread_rwlock_unlock(&in->lock);
		fuse_reply_buf(req, NULL, 0);
		return;
	}
	buf = content_scratch(SCRATCH_REPLY, size);
	if (!buf) {
		pthread_rwlock_unlock(&in->lock);
		fuse_reply_err(req, ENOMEM);
		return;
	}
	n = content_read(fs->xts, h->fd, &in->hdr, ps, buf, size, (uint64_t)off);
	pthread_rwlock_unlock(&in->lock);
	if (n < 0) {
		if (n == -EIO)
			xfs_log(fs, LOG_ERR, "file (lower inode %llu): corrupt "
				"data near offset %lld", (unsigned long long)in->node.k2,
				(long long)off);
		fuse_reply_err(req, (int)-n);
	} else {
		fuse_reply_buf(req, (const char *)buf, (size_t)n);
	}
}

/*
 * With the writeback cache the kernel owns the mtime of regular files and
 * sends it to us (setattr) when it flushes; a WRITE it sends may carry
 * data dirtied before a later utimensat(), so our own pwrite must not
 * move the lower mtime: put back the one it had.
 */
static void keep_mtime(const struct xfs *fs, int fd, const struct stat *before)
{
	struct timespec tv[2] = { { 0, UTIME_OMIT }, before->st_mtim };

	if (fs->writeback_on)
		(void)futimens(fd, tv);
}

static void xfs_write(fuse_req_t req, fuse_ino_t ino, const char *buf,
		      size_t size, off_t off, struct fuse_file_info *fi)
{
	struct xfs *fs = xfs_of(req);
	struct xhandle *h = (struct xhandle *)(uintptr_t)fi->fh;
	struct xinode *in = h->in;
	struct stat before;
	uint64_t ps;
	ssize_t n;
	int err;

	(void)ino;
	pthread_rwlock_wrlock(&in->lock);
	err = lower_psize_st(h->fd, &ps, &before);
	if (!err)
		err = header_get(fs, in, h->fd, true);
	if (err) {
		pthread_rwlock_unlock(&in->lock);
		fuse_reply_err(req, -err);
		return;
	}
	kill_priv(req, in, before.st_mode, before.st_gid);
	n = content_write(fs->xts, h->fd, &in->hdr, &ps, (const uint8_t *)buf,
			  size, (uint64_t)off, fs->write_flags);
	keep_mtime(fs, h->fd, &before);
	(void)seen_update(in, h->fd, false);
	pthread_rwlock_unlock(&in->lock);
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else
		fuse_reply_write(req, (size_t)n);
}

static void xfs_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct xhandle *h = (struct xhandle *)(uintptr_t)fi->fh;
	int fd = dup(h->fd);

	(void)ino;
	/* close() of a dup reports delayed write errors of NFS and the like */
	fuse_reply_err(req, fd < 0 ? errno : close(fd) ? errno : 0);
}

static void xfs_release(fuse_req_t req, fuse_ino_t ino,
			struct fuse_file_info *fi)
{
	struct xhandle *h = (struct xhandle *)(uintptr_t)fi->fh;

	(void)ino;
	close(h->fd);
	free(h);
	fuse_reply_err(req, 0);
}

/*
 * fsync or fdatasync of lower file or directory @fd for @req, after the
 * names on the way to it (durable.h); replies.
 */
static void reply_sync(fuse_req_t req, int fd, int datasync)
{
	int rc = durable_barrier(&xfs_of(req)->durable);

	if (!rc)
		rc = (datasync ? fdatasync(fd) : fsync(fd)) ? -errno : 0;
	fuse_reply_err(req, -rc);
}

static void xfs_fsync(fuse_req_t req, fuse_ino_t ino, int datasync,
		      struct fuse_file_info *fi)
{
	struct xhandle *h = (struct xhandle *)(uintptr_t)fi->fh;

	(void)ino;
	reply_sync(req, h->fd, datasync);
}

static void xfs_fallocate(fuse_req_t req, fuse_ino_t ino, int mode,
			  off_t off, off_t len, struct fuse_file_info *fi)
{
	struct xfs *fs = xfs_of(req);
	struct xhandle *h = (struct xhandle *)(uintptr_t)fi->fh;
	struct xinode *in = h->in;
	uint64_t ps;
	int err;

	(void)ino;
	if (off < 0 || len <= 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	pthread_rwlock_wrlock(&in->lock);
	err = lower_psize(h->fd, &ps);
	if (!err)
		err = header_get(fs, in, h->fd, true);
	if (!err)
		err = content_fallocate(fs->xts, h->fd, &in->hdr, &ps, mode,
					(uint64_t)off, (uint64_t)len);
	(void)seen_update(in, h->fd, false);
	pthread_rwlock_unlock(&in->lock);
	fuse_reply_err(req, -err);
}

static void xfs_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence,
		      struct fuse_file_info *fi)
{
	struct xfs *fs = xfs_of(req);
	struct xhandle *h = (struct xhandle *)(uintptr_t)fi->fh;
	struct xinode *in = h->in;
	uint64_t ps;
	int64_t r;
	int err;

	if (whence != SEEK_DATA && whence != SEEK_HOLE) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	if (off < 0) {
		fuse_reply_err(req, ENXIO);
		return;
	}
	/*
	 * With the writeback cache, written data may still sit in the
	 * kernel's dirty pages. Invalidating the inode makes the kernel
	 * write them back first (and wait for it), so that holes and data
	 * are decided on what was really written. Another worker thread
	 * serves those writes: never hold the content lock here.
	 */
	if (fs->writeback_on && fs->se)
		(void)fuse_lowlevel_notify_inval_inode(fs->se, ino, 0, 0);
	pthread_rwlock_rdlock(&in->lock);
	err = lower_psize(h->fd, &ps);
	r = err ? err : content_seek(h->fd, ps, (uint64_t)off, whence);
	pthread_rwlock_unlock(&in->lock);
	if (r < 0)
		fuse_reply_err(req, (int)-r);
	else
		fuse_reply_lseek(req, (off_t)r);
}

/* ---- directories -------------------------------------------------------- */

/*
 * Whether lower directory @fd is unchanged since the previous call (same
 * mtime and size), and remember it. Timestamps are coarse: an entry
 * added in the same tick as the last change leaves the mtime as it was,
 * so a state whose mtime is less than 2 s old is not remembered (the
 * next call says "changed"), as git does with its index.
 */
static bool dir_unchanged(struct xinode *in, int fd)
{
	return seen_check(in, fd, true, 2);
}

/* @d's stream state for lower position @offset, nothing read yet. */
static void xdir_reset(struct xdir *d, off_t offset)
{
	d->offset = offset;
	d->eof = false;
	d->pos = d->len = 0;
	d->entry = NULL;
}

static void xfs_opendir(fuse_req_t req, fuse_ino_t ino,
			struct fuse_file_info *fi)
{
	struct xfs *fs = xfs_of(req);
	struct xinode *in = inode_of(fs, ino);
	/* not calloc: the 32 KiB buffer needs no zeroing */
	struct xdir *d = malloc(sizeof(*d));
	int fd;

	if (!d) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	fd = openat(in->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		int err = errno;

		free(d);
		fuse_reply_err(req, err);
		return;
	}
	d->fd = fd;
	xdir_reset(d, 0);
	fi->fh = (uint64_t)(uintptr_t)d;
	/*
	 * Let the kernel keep this directory's listing (its own changes
	 * drop it) while the lower directory is what we last listed.
	 */
	fi->cache_readdir = 1;
	fi->keep_cache = dir_unchanged(in, fd);
	fuse_reply_open(req, fi);
}

/*
 * The next lower entry of @d, or NULL at the end (*@err 0) or on an error
 * (*@err -errno).
 */
static struct dirent64 *xdir_next(struct xdir *d, int *err)
{
	struct dirent64 *de;

	*err = 0;
	if (d->pos >= d->len) {
		ssize_t n;

		if (d->eof)
			return NULL;
		n = getdents64(d->fd, d->buf, sizeof(d->buf));
		if (n <= 0) {
			/* the end stays the end until the kernel seeks */
			if (n < 0)
				*err = -errno;
			else
				d->eof = true;
			return NULL;
		}
		d->pos = 0;
		d->len = (size_t)n;
	}
	de = (struct dirent64 *)(void *)(d->buf + d->pos);
	d->pos += de->d_reclen;
	return de;
}

/* Go to position @offset (0 or a d_off that getdents64 gave). */
static int xdir_seek(struct xdir *d, off_t offset)
{
	xdir_reset(d, offset);
	return lseek(d->fd, offset, SEEK_SET) < 0 ? -errno : 0;
}

static void do_readdir(fuse_req_t req, fuse_ino_t ino, size_t size,
		       off_t offset, struct fuse_file_info *fi, bool plus)
{
	struct xfs *fs = xfs_of(req);
	struct xinode *dir = inode_of(fs, ino);
	struct xdir *d = (struct xdir *)(uintptr_t)fi->fh;
	char *buf = (char *)content_scratch(SCRATCH_REPLY, size), *p = buf;
	size_t rem = size;
	int err = 0;

	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	if (offset != d->offset && (err = xdir_seek(d, offset))) {
		fuse_reply_err(req, -err);
		return;
	}
	for (;;) {
		struct fuse_entry_param e;
		struct stat st;
		char name[256];
		size_t need;
		off_t next;
		int rc;

		if (!d->entry && !(d->entry = xdir_next(d, &err)))
			break;
		next = d->entry->d_off;
		if (!strcmp(d->entry->d_name, ".") ||
		    !strcmp(d->entry->d_name, "..")) {
			snprintf(name, sizeof(name), "%s", d->entry->d_name);
			rc = 0;
		} else {
			rc = name_dec(fs, dir, d->entry->d_name, name);
		}
		if (rc == -EIO) {
			/* no dirid: no name here can be decrypted */
			err = rc;
			break;
		}
		if (rc) {
			if (rc < 0)
				xfs_log(fs, LOG_WARNING, "directory (lower inode "
					"%llu): entry %s cannot be decrypted; "
					"skipped", (unsigned long long)dir->node.k2,
					d->entry->d_name);
			d->entry = NULL;
			d->offset = next;
			continue;
		}
		if (plus) {
			bool dot = name[0] == '.' && (!name[1] ||
					(name[1] == '.' && !name[2]));

			memset(&e, 0, sizeof(e));
			if (dot) {
				e.attr.st_ino = d->entry->d_ino;
				e.attr.st_mode = (mode_t)d->entry->d_type << 12;
			} else if ((rc = do_lookup_stored(fs, dir, d->entry->d_name,
					d->entry->d_type == DT_REG ?
					d->entry->d_ino : 0, &e))) {
				if (rc == -ENOENT) {
					/* vanished meanwhile: skip it */
					d->entry = NULL;
					d->offset = next;
					continue;
				}
				/*
				 * Out of descriptors or memory: list the name
				 * anyway, with no inode (ino 0: the kernel
				 * looks it up when it needs it).
				 */
				memset(&e, 0, sizeof(e));
				e.attr.st_ino = d->entry->d_ino;
				e.attr.st_mode = (mode_t)d->entry->d_type << 12;
				dot = true; /* no reference to drop */
			}
			need = fuse_add_direntry_plus(req, p, rem, name, &e, next);
			if (need > rem) {
				if (!dot)
					inode_forget(fs, inode_of(fs, e.ino), 1);
				break;
			}
			/* a walk of the tree will open it soon */
			if (!dot)
				prefetch_post_dir(fs, inode_of(fs, e.ino));
		} else {
			memset(&st, 0, sizeof(st));
			st.st_ino = d->entry->d_ino;
			st.st_mode = (mode_t)d->entry->d_type << 12;
			need = fuse_add_direntry(req, p, rem, name, &st, next);
			if (need > rem)
				break;
		}
		p += need;
		rem -= need;
		d->entry = NULL;
		d->offset = next;
	}
	if (err && rem == size)
		fuse_reply_err(req, -err);
	else
		fuse_reply_buf(req, buf, size - rem);
}

static void xfs_readdir(fuse_req_t req, fuse_ino_t ino, size_t size,
			off_t offset, struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, offset, fi, false);
}

static void xfs_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size,
			    off_t offset, struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, offset, fi, true);
}

static void xfs_releasedir(fuse_req_t req, fuse_ino_t ino,
			   struct fuse_file_info *fi)
{
	struct xdir *d = (struct xdir *)(uintptr_t)fi->fh;

	(void)ino;
	close(d->fd);
	free(d);
	fuse_reply_err(req, 0);
}

static void xfs_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync,
			 struct fuse_file_info *fi)
{
	struct xdir *d = (struct xdir *)(uintptr_t)fi->fh;

	(void)ino;
	reply_sync(req, d->fd, datasync);
}

/*
 * access(2) and chdir, asked only without default_permissions, when the
 * mounting user alone uses the mount: the lower object answers for that
 * user (the daemon's own credentials), modes being the same there.
 */
static void xfs_access(fuse_req_t req, fuse_ino_t ino, int mask)
{
	struct xinode *in = inode_of(xfs_of(req), ino);
	char path[64];

	proc_path(path, in->fd);
	fuse_reply_err(req, faccessat(AT_FDCWD, path, mask, 0) ? errno : 0);
}

static void xfs_statfs(fuse_req_t req, fuse_ino_t ino)
{
	(void)ino;
	glue_reply_statfs(req, xfs_of(req)->root_fd);
}

/*
 * Extended attributes are refused (doc/DESIGN.md) by not implementing
 * them: the kernel then answers ENOTSUP itself and stops asking, which
 * also saves the security.capability lookup it would send before every
 * write.
 */

/* ---- session ------------------------------------------------------------ */

static void xfs_init_conn(void *userdata, struct fuse_conn_info *conn)
{
	struct xfs *fs = userdata;

	/*
	 * Writeback cache: writes land in the page cache and reach us as
	 * large, unit-aligned WRITEs, so most need no read-modify-write.
	 * The kernel then owns size and mtime of regular files (it sends
	 * them to us with setattr), handles O_APPEND itself, and may read
	 * through a write-only handle, which is why writers always open the
	 * lower file read-write.
	 */
	if (fs->writeback && (conn->capable & FUSE_CAP_WRITEBACK_CACHE)) {
		conn->want |= FUSE_CAP_WRITEBACK_CACHE;
		fs->writeback_on = true;
	} else {
		conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;
	}
	/* big requests: fewer round trips, many units per core call */
	glue_conn_common(conn);
	if (conn->capable & FUSE_CAP_READDIRPLUS)
		conn->want |= FUSE_CAP_READDIRPLUS;
	/* let the kernel apply the umask before create/mkdir */
	conn->want &= ~FUSE_CAP_DONT_MASK;
}

const struct fuse_lowlevel_ops xfs_ops = {
	.init = xfs_init_conn,
	.lookup = xfs_lookup,
	.forget = xfs_forget,
	.forget_multi = xfs_forget_multi,
	.getattr = xfs_getattr,
	.setattr = xfs_setattr,
	.readlink = xfs_readlink,
	.mknod = xfs_mknod,
	.mkdir = xfs_mkdir,
	.unlink = xfs_unlink,
	.rmdir = xfs_rmdir,
	.symlink = xfs_symlink,
	.rename = xfs_rename,
	.link = xfs_link,
	.open = xfs_open,
	.create = xfs_create,
	.read = xfs_read,
	.write = xfs_write,
	.flush = xfs_flush,
	.release = xfs_release,
	.fsync = xfs_fsync,
	.opendir = xfs_opendir,
	.readdir = xfs_readdir,
	.readdirplus = xfs_readdirplus,
	.releasedir = xfs_releasedir,
	.fsyncdir = xfs_fsyncdir,
	.statfs = xfs_statfs,
	.access = xfs_access,
	.fallocate = xfs_fallocate,
	.lseek = xfs_lseek,
};
