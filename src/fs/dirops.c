/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dirops.c - directory operations on lower descriptors (dirops.h).
 */
#include "dirops.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conflict.h"
#include "content.h"

/* see dirops.h */
int dirops_read_small(int dirfd, const char *name, void *buf, size_t max,
		      size_t *len)
{
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW |
			O_NONBLOCK | O_NOCTTY);
	struct stat st;
	ssize_t n = 0;
	size_t got = 0;

	*len = 0;
	if (fd < 0)
		return errno == ELOOP || errno == ENXIO || errno == ENODEV ||
		       errno == EOPNOTSUPP ? -EIO : -errno;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 0 ||
	    (uint64_t)st.st_size > max) {
		close(fd);
		return -EIO;
	}
	/*
	 * These files are small: one read gets it all, and a read of a
	 * regular file that returns less than asked is at the end (no
	 * second read to see 0).
	 */
	while (got < max) {
		size_t want = max - got;

		n = read(fd, (char *)buf + got, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
		if ((size_t)n < want)
			break; /* short: the end */
	}
	n = n < 0 ? -errno : 0;
	close(fd);
	*len = got;
	return (int)n;
}

/* see dirops.h */
void dirops_fd_path(char buf[DIROPS_FD_PATH_SIZE], int fd)
{
	snprintf(buf, DIROPS_FD_PATH_SIZE, "/proc/self/fd/%d", fd);
}

/* see dirops.h */
int dirops_opendir(int fd, DIR **out)
{
	int dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (dfd < 0)
		return -errno;
	*out = fdopendir(dfd);
	if (!*out) {
		close(dfd);
		return -ENOMEM;
	}
	return 0;
}

/* see dirops.h */
int dirops_read_dirid(int dirfd, uint8_t out[NAMES_DIRID_SIZE])
{
	uint8_t buf[NAMES_DIRID_SIZE + 1];
	size_t len = 0;
	int err = dirops_read_small(dirfd, NAMES_DIRID_FILE, buf, sizeof(buf),
				    &len);

	if (err || len != NAMES_DIRID_SIZE) {
		explicit_bzero(buf, sizeof(buf));
		/* out of descriptors or memory says nothing of the file */
		if (err == -EMFILE || err == -ENFILE || err == -ENOMEM)
			return err;
		return -EIO;
	}
	memcpy(out, buf, NAMES_DIRID_SIZE);
	explicit_bzero(buf, sizeof(buf));
	return 0;
}

/*
 * Write @len bytes to a new file @name in @dirfd (mode 0444): a dirid or
 * a sidecar, which names depend on. Not fsynced here: noted, so that the
 * next fsync through the mount, the background sync a moment later or
 * the unmount makes it durable (durable.h).
 */
static int write_new_at(const struct dirops *d, int dirfd, const char *name,
			const void *buf, size_t len)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC |
			O_NOFOLLOW, 0444);
	ssize_t n;
	int err = 0;

	if (fd < 0)
		return -errno;
	n = write(fd, buf, len);
	if (n != (ssize_t)len)
		err = n < 0 ? -errno : -EIO;
	close(fd);
	if (err)
		unlinkat(dirfd, name, 0);
	else if (d->durable)
		durable_note(d->durable);
	return err;
}

/* FORMAT 4.2: the label, with its terminating zero (12 bytes). */
static const char dirid_label[] = "xtsfs dirid";

/* see dirops.h */
void dirops_derive_dirid(const struct aes_cmac_key *idkey,
			 const uint8_t parent[NAMES_DIRID_SIZE],
			 const char *name, size_t len,
			 uint8_t out[NAMES_DIRID_SIZE])
{
	uint8_t msg[sizeof(dirid_label) + NAMES_DIRID_SIZE + NAME_MAX];
	size_t o = sizeof(dirid_label);

	if (len > NAME_MAX)
		len = NAME_MAX; /* callers have refused longer names */
	memcpy(msg, dirid_label, o);
	memcpy(msg + o, parent, NAMES_DIRID_SIZE);
	memcpy(msg + o + NAMES_DIRID_SIZE, name, len);
	aes_cmac(idkey, out, msg, o + NAMES_DIRID_SIZE + len);
	explicit_bzero(msg, sizeof(msg)); /* a plaintext name */
}

/* The dirid of new directory @name in the directory @parent names. */
static int new_dirid(const struct dirops *d, int dirfd,
		     const struct dirid_src *parent, const char *name)
{
	uint8_t id[NAMES_DIRID_SIZE], pid[NAMES_DIRID_SIZE];
	int err;

	if (d->idkey) {
		err = parent->get(parent->arg, pid);
		if (err)
			return err;
		dirops_derive_dirid(d->idkey, pid, name, strlen(name), id);
	} else if (getrandom(id, sizeof(id), 0) != sizeof(id)) {
		return -EIO;
	}
	return write_new_at(d, dirfd, NAMES_DIRID_FILE, id, sizeof(id));
}

/* Names a plaintext-names volume keeps for itself (FORMAT 4.5). */
static bool reserved_plain(bool root, const char *name)
{
	return root && (!strcmp(name, "xtsfs.volume") ||
			!strcmp(name, "xtsfs.volume.tmp"));
}

/* see dirops.h */
int dirops_name_enc(const struct dirops *d, const struct dirid_src *id,
		    bool root, const char *name, struct lname *ln)
{
	uint8_t dirid[NAMES_DIRID_SIZE];
	size_t len = strlen(name);
	int err;

	ln->conflict = false;
	if (len > NAMES_NAME_MAX)
		return -ENAMETOOLONG;
	if (!d->names) {
		if (reserved_plain(root, name))
			return -EPERM;
		memcpy(ln->stored, name, len + 1);
		ln->is_long = false;
		return 0;
	}
	err = id->get(id->arg, dirid);
	if (err)
		return err;
	return names_encrypt(d->names, dirid, name, len, ln->stored, ln->full,
			     &ln->is_long);
}

/*
 * @ln: the conflict copy, suffix @sfx (@k bytes), of the entry @base
 * names (FORMAT 4.8). Return: 0, or -ENAMETOOLONG (no such copy can be).
 */
static int conflict_lname(const struct lname *base, const char *sfx,
			  size_t k, struct lname *ln)
{
	const int pl = (int)strlen(NAMES_LONG_PREFIX) - 1;
	int n;

	*ln = *base;
	ln->conflict = true;
	if (!base->is_long)
		n = snprintf(ln->stored, sizeof(ln->stored), "%s%.*s",
			     base->stored, (int)k, sfx);
	else /* the suffix before the "extension" .<V> */
		n = snprintf(ln->stored, sizeof(ln->stored), "%.*s%.*s%s", pl,
			     base->stored, (int)k, sfx, base->stored + pl);
	return n > 0 && n <= NAMES_STORED_MAX ? 0 : -ENAMETOOLONG;
}

/* see dirops.h */
int dirops_name_find(const struct dirops *d, int dirfd,
		     const struct dirid_src *id, bool root, const char *name,
		     struct lname *ln)
{
	char base[NAMES_NAME_MAX + 1];
	struct lname b, c;
	struct stat st;
	size_t len, k;
	int err = dirops_name_enc(d, id, root, name, ln);

	if (err || !d->names)
		return err;
	len = strlen(name);
	k = conflict_suffix(name, len);
	/* an entry of this name, or anything but its absence: that one */
	if (!k || !fstatat(dirfd, ln->stored, &st, AT_SYMLINK_NOFOLLOW) ||
	    errno != ENOENT)
		return 0;
	memcpy(base, name, len - k);
	base[len - k] = '\0';
	if (!dirops_name_enc(d, id, root, base, &b) &&
	    !conflict_lname(&b, name + len - k, k, &c) &&
	    !fstatat(dirfd, c.stored, &st, AT_SYMLINK_NOFOLLOW))
		*ln = c;
	explicit_bzero(base, sizeof(base));
	return 0;
}

/*
 * A conflict copy's name: the decrypted @out (@outlen bytes) + suffix
 * @sfx (@k bytes). Return 0; 1 an entry of that very name exists (lookup
 * finds it, not the copy: listing both would show one name twice);
 * -EBADMSG too long to show.
 */
static int conflict_shown(const struct dirops *d, int dirfd,
			  const uint8_t dirid[NAMES_DIRID_SIZE], char out[256],
			  size_t outlen, const char *sfx, size_t k)
{
	char stored[NAMES_STORED_MAX + 1], full[NAMES_FULL_MAX];
	struct stat st;
	bool is_long;

	if (outlen + k > NAMES_NAME_MAX) {
		explicit_bzero(out, 256);
		return -EBADMSG;
	}
	memcpy(out + outlen, sfx, k);
	out[outlen + k] = '\0';
	if (names_encrypt(d->names, dirid, out, outlen + k, stored, full,
			  &is_long))
		return -EBADMSG;
	/* the rule of dirops_name_find(), the other way round */
	if (!fstatat(dirfd, stored, &st, AT_SYMLINK_NOFOLLOW) ||
	    errno != ENOENT)
		return 1;
	return 0;
}

/* see dirops.h */
bool dirops_stored_prefix(const struct names_ctx *names,
			  const uint8_t dirid[NAMES_DIRID_SIZE],
			  const char *lower, size_t len)
{
	char out[256];
	size_t outlen;
	bool ok = false;

	for (size_t p = 16; p <= 160 && !ok; p += 16) {
		size_t n = (4 * (16 + p) + 2) / 3;

		ok = n < len && !names_decrypt(names, dirid, lower, n, out,
					       &outlen);
	}
	explicit_bzero(out, sizeof(out));
	return ok;
}

/* The conflict copy of a short entry (dirops_name_dec() after the rest). */
static int dec_conflict(const struct dirops *d, int dirfd,
			const uint8_t dirid[NAMES_DIRID_SIZE],
			const char *lower, char out[256])
{
	size_t len = strlen(lower), k = conflict_suffix(lower, len), outlen;

	if (!k || names_decrypt(d->names, dirid, lower, len - k, out,
				&outlen))
		return dirops_stored_prefix(d->names, dirid, lower, len) ?
		       -EILSEQ : -EBADMSG;
	return conflict_shown(d, dirfd, dirid, out, outlen, lower + len - k,
			      k);
}

/*
 * A long entry @entry ("xtsfs.long.<V>") decrypted through its sidecar
 * into @out. Return: 0, -EBADMSG, or -EIO (no dirid).
 */
static int dec_long(const struct dirops *d, int dirfd,
		    const struct dirid_src *id, const char *entry,
		    uint8_t dirid[NAMES_DIRID_SIZE], char out[256],
		    size_t *outlen)
{
	char full[NAMES_FULL_MAX], side[NAMES_STORED_MAX + 1];
	size_t len;
	int err;

	names_long_sidecar(side, entry);
	err = dirops_read_small(dirfd, side, full, sizeof(full) - 1, &len);
	if (err)
		return -EBADMSG; /* this entry only */
	err = id->get(id->arg, dirid);
	if (err)
		return err;
	/* the sidecar must be this entry's, not a copy of another's */
	return names_decrypt_long(d->names, dirid, entry, full, len, out,
				  outlen);
}

/*
 * "xtsfs.long" + something + "." + V with a valid sidecar for V but no
 * known suffix: -EILSEQ (reported); anything else of ours: 1 (silent).
 */
static int long_unknown(const struct dirops *d, int dirfd,
			const struct dirid_src *id, const char *lower)
{
	size_t len = strlen(lower), pl = strlen(NAMES_LONG_PREFIX) - 1, n;
	uint8_t dirid[NAMES_DIRID_SIZE];
	char entry[NAMES_STORED_MAX + 1], out[256];
	int rc = 1;

	if (len <= pl + 23 || len > NAMES_STORED_MAX ||
	    strncmp(lower, NAMES_LONG_PREFIX, pl) || lower[len - 23] != '.')
		return 1;
	snprintf(entry, sizeof(entry), "%s%s", NAMES_LONG_PREFIX,
		 lower + len - 22);
	if (names_is_long(entry) &&
	    !dec_long(d, dirfd, id, entry, dirid, out, &n))
		rc = -EILSEQ;
	explicit_bzero(out, sizeof(out));
	return rc;
}

/* see dirops.h */
int dirops_name_dec(const struct dirops *d, int dirfd,
		    const struct dirid_src *id, bool root, const char *lower,
		    char out[256])
{
	uint8_t dirid[NAMES_DIRID_SIZE];
	char entry[34];
	size_t outlen, k;
	int err;

	if (!d->names) {
		if (reserved_plain(root, lower))
			return 1;
		snprintf(out, 256, "%s", lower);
		return 0;
	}
	if (names_is_long(lower))
		return dec_long(d, dirfd, id, lower, dirid, out, &outlen);
	if (conflict_long(lower, &k, entry)) {
		/* "xtsfs.long" + suffix + ".<V>": the suffix after 10 bytes */
		err = dec_long(d, dirfd, id, entry, dirid, out, &outlen);
		return err ? err : conflict_shown(d, dirfd, dirid, out, outlen,
						  lower + 10, k);
	}
	if (conflict_internal(lower))
		return 1; /* a copy of a dirid or header: xtsfs-fsck's */
	if (names_is_internal(lower))
		return long_unknown(d, dirfd, id, lower);
	err = id->get(id->arg, dirid);
	if (err)
		return err;
	err = names_decrypt(d->names, dirid, lower, strlen(lower), out,
			    &outlen);
	return err == -EBADMSG ? dec_conflict(d, dirfd, dirid, lower, out) :
	       err;
}

/* see dirops.h */
int dirops_readlink(const struct dirops *d, int fd, char out[4096])
{
	char *buf = malloc(NAMES_TARGET_MAX);
	ssize_t n;
	size_t len;
	int err = 0;

	if (!buf)
		return -ENOMEM;
	n = readlinkat(fd, "", buf, NAMES_TARGET_MAX - 1);
	if (n < 0) {
		err = -errno;
		goto out;
	}
	buf[n] = '\0';
	if (!d->names) {
		if (n > 4095)
			err = -ENAMETOOLONG;
		else
			memcpy(out, buf, (size_t)n + 1);
		goto out;
	}
	if (names_is_link_ref(buf)) {
		char ref[NAMES_STORED_MAX + 1];

		snprintf(ref, sizeof(ref), "%s", buf);
		err = dirops_read_small(d->root_fd, ref, buf,
					NAMES_TARGET_MAX - 1, &len);
		/* the file must be this target's, not a copy of another's */
		if (!err)
			err = names_decrypt_target_ref(d->names, ref, buf, len,
						       out, &len);
	} else {
		err = names_decrypt_target(d->names, buf, (size_t)n, out,
					   &len);
	}
	if (err)
		err = -EIO;
out:
	free(buf);
	return err;
}

/* The sidecar of @ln: its own, or for a conflict copy the entry's. */
static void lname_sidecar(char side[NAMES_STORED_MAX + 1],
			  const struct lname *ln)
{
	size_t len = strlen(ln->stored);

	if (ln->conflict && len >= 22)
		snprintf(side, NAMES_STORED_MAX + 1, "%s%s%s",
			 NAMES_LONG_PREFIX, ln->stored + len - 22,
			 NAMES_LONG_SUFFIX);
	else
		names_long_sidecar(side, ln->stored);
}

/*
 * Directories known to hold no long conflict copy, each as of one state
 * (mtime, ctime, size, links) of the directory: removing many long names
 * (rm -rf) then reads the directory once, not once per name, which made
 * removal quadratic. Our own removals carry the note over to the state
 * they leave (unlink_noted()); any other change to the directory drops
 * it. A change by someone else within the same timestamp tick as our
 * own goes unseen: a sync tool would have to make a copy of exactly
 * that entry within those microseconds.
 */
#define NOCOPY_SLOTS 64

static struct nocopy {
	dev_t dev;
	ino_t ino;
	struct timespec mtime, ctime;
	off_t size;
	nlink_t nlink;
	bool ok;
} nocopy[NOCOPY_SLOTS];
static pthread_mutex_t nocopy_lock = PTHREAD_MUTEX_INITIALIZER;

static bool ts_eq(struct timespec a, struct timespec b)
{
	return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

/* Whether slot @n describes @st exactly. Under nocopy_lock. */
static bool nocopy_is(const struct nocopy *n, const struct stat *st)
{
	return n->ok && n->dev == st->st_dev && n->ino == st->st_ino &&
	       ts_eq(n->mtime, st->st_mtim) && ts_eq(n->ctime, st->st_ctim) &&
	       n->size == st->st_size && n->nlink == st->st_nlink;
}

static void nocopy_set(struct nocopy *n, const struct stat *st)
{
	*n = (struct nocopy){ st->st_dev, st->st_ino, st->st_mtim,
			      st->st_ctim, st->st_size, st->st_nlink, true };
}

/*
 * nocopy_known() - whether the directory in state @st is known to hold
 * no long conflict copy; nocopy_note() notes that it holds none.
 */
static bool nocopy_known(const struct stat *st)
{
	bool known;

	pthread_mutex_lock(&nocopy_lock);
	known = nocopy_is(&nocopy[st->st_ino % NOCOPY_SLOTS], st);
	pthread_mutex_unlock(&nocopy_lock);
	return known;
}

static void nocopy_note(const struct stat *st)
{
	pthread_mutex_lock(&nocopy_lock);
	nocopy_set(&nocopy[st->st_ino % NOCOPY_SLOTS], st);
	pthread_mutex_unlock(&nocopy_lock);
}

/*
 * unlink_noted() - unlinkat(@dirfd, @name) that keeps a note of
 * nocopy_known(): removing an entry makes no copy.
 * Return: 0 or -errno.
 */
static int unlink_noted(int dirfd, const char *name)
{
	struct stat before, after;
	bool have = fstat(dirfd, &before) == 0;
	struct nocopy *n;

	if (unlinkat(dirfd, name, 0) != 0)
		return -errno;
	if (!have || fstat(dirfd, &after) != 0)
		return 0;
	pthread_mutex_lock(&nocopy_lock);
	n = &nocopy[before.st_ino % NOCOPY_SLOTS];
	if (nocopy_is(n, &before))
		nocopy_set(n, &after);
	pthread_mutex_unlock(&nocopy_lock);
	return 0;
}

/*
 * Whether sidecar @side of @dirfd still serves an entry: the long entry
 * of its name, or a conflict copy of that entry, which sync tools make
 * without copying the sidecar. Only a long name's removal asks, so only
 * that reads the directory. Unsure (it cannot be read): in use, as an
 * orphaned sidecar is harmless and a missing one hides an entry.
 */
static bool sidecar_in_use(int dirfd, const char *side)
{
	char entry[NAMES_STORED_MAX + 1], e[34];
	size_t len = strlen(side), sl = strlen(NAMES_LONG_SUFFIX), k;
	struct dirent *de;
	struct stat st;
	bool used = false, any = false; /* any long copy, of whichever entry */
	DIR *dp;

	if (len <= sl)
		return false;
	memcpy(entry, side, len - sl);
	entry[len - sl] = '\0';
	if (!fstatat(dirfd, entry, &st, AT_SYMLINK_NOFOLLOW) ||
	    errno != ENOENT || fstat(dirfd, &st) != 0)
		return true;
	if (nocopy_known(&st))
		return false;
	if (dirops_opendir(dirfd, &dp))
		return true;
	while (!used && (de = readdir(dp))) {
		if (!conflict_long(de->d_name, &k, e))
			continue;
		any = true;
		used = !strcmp(e, entry);
	}
	closedir(dp);
	/* as before the scan: a change since drops the note */
	if (!any)
		nocopy_note(&st);
	return used;
}

/*
 * The sidecar of @ln, made if it is long and not there: *@made says
 * whether this call made it (and an undo may drop it).
 */
static int sidecar_new(const struct dirops *d, int dirfd,
		       const struct lname *ln, bool *made)
{
	char side[NAMES_STORED_MAX + 1];
	int err;

	*made = false;
	if (!ln->is_long)
		return 0;
	lname_sidecar(side, ln);
	err = write_new_at(d, dirfd, side, ln->full, strlen(ln->full));
	*made = !err;
	return err == -EEXIST ? 0 : err;
}

/* see dirops.h */
int dirops_sidecar_make(const struct dirops *d, int dirfd,
			const struct lname *ln)
{
	bool made;

	return sidecar_new(d, dirfd, ln, &made);
}

/* see dirops.h */
void dirops_sidecar_drop(int dirfd, const struct lname *ln)
{
	char side[NAMES_STORED_MAX + 1];

	if (!ln->is_long)
		return;
	lname_sidecar(side, ln);
	if (!sidecar_in_use(dirfd, side))
		(void)unlink_noted(dirfd, side);
}

/*
 * A create of @ln failed with @err after its sidecar was made: drop the
 * sidecar unless an existing entry of that name (-EEXIST) uses it.
 */
static int made_nothing(int dirfd, const struct lname *ln, int err)
{
	if (err != -EEXIST)
		dirops_sidecar_drop(dirfd, ln);
	return err;
}

/* see dirops.h */
void dirops_undo_make(int dirfd, const struct lname *ln, bool isdir)
{
	char p[NAME_MAX + sizeof("/" NAMES_DIRID_FILE) + 1];

	/* by path: no descriptor may be left (out of descriptors) */
	if (isdir) {
		snprintf(p, sizeof(p), "%s/%s", ln->stored, NAMES_DIRID_FILE);
		(void)unlinkat(dirfd, p, 0);
	}
	(void)unlinkat(dirfd, ln->stored, isdir ? AT_REMOVEDIR : 0);
	dirops_sidecar_drop(dirfd, ln);
}

/* see dirops.h */
int dirops_mkdir(const struct dirops *d, int dirfd, const struct lname *ln,
		 mode_t mode, const struct dirid_src *parent,
		 const char *name)
{
	int err = dirops_sidecar_make(d, dirfd, ln), fd;

	if (err)
		return err;
	if (mkdirat(dirfd, ln->stored, mode) != 0)
		return made_nothing(dirfd, ln, -errno);
	if (!d->names)
		return 0;
	fd = openat(dirfd, ln->stored, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC);
	err = fd < 0 ? -errno : new_dirid(d, fd, parent, name);
	if (fd >= 0)
		close(fd);
	if (err) {
		(void)unlinkat(dirfd, ln->stored, AT_REMOVEDIR);
		dirops_sidecar_drop(dirfd, ln);
	}
	return err;
}

/* see dirops.h */
int dirops_mknod(const struct dirops *d, int dirfd, const struct lname *ln,
		 mode_t mode, dev_t rdev)
{
	int err = dirops_sidecar_make(d, dirfd, ln), fd;

	if (err)
		return err;
	if (!S_ISREG(mode)) {
		if (mknodat(dirfd, ln->stored, mode, rdev) != 0)
			return made_nothing(dirfd, ln, -errno);
		return 0;
	}
	/* a regular file gets its header at once (FORMAT 3.4) */
	fd = openat(dirfd, ln->stored, O_WRONLY | O_CREAT | O_EXCL |
		    O_CLOEXEC | O_NOFOLLOW, mode & 07777);
	if (fd < 0)
		return made_nothing(dirfd, ln, -errno);
	{
		struct content_hdr h;

		/* the same 40 bytes in either layout; @h is not kept */
		err = content_init_header(fd, LAYOUT_DOFF_COMPACT, &h);
	}
	close(fd);
	if (err) {
		(void)unlinkat(dirfd, ln->stored, 0);
		dirops_sidecar_drop(dirfd, ln);
	}
	return err;
}

/* Write a long symlink target's file into the root (FORMAT 4.4). */
static int link_file_make(const struct dirops *d, const char *stored,
			  const char *full)
{
	int err = write_new_at(d, d->root_fd, stored, full, strlen(full));

	return err == -EEXIST ? 0 : err; /* shared by equal targets */
}

/* see dirops.h */
int dirops_symlink(const struct dirops *d, int dirfd, const struct lname *ln,
		   const char *target)
{
	char *stored_t = NULL, *full_t = NULL;
	const char *lower_target = target;
	bool tlong = false;
	int err = 0;

	if (d->names) {
		stored_t = malloc(NAMES_TARGET_MAX);
		full_t = malloc(NAMES_TARGET_MAX);
		if (!stored_t || !full_t) {
			err = -ENOMEM;
			goto out;
		}
		err = names_encrypt_target(d->names, target, strlen(target),
					   stored_t, full_t, &tlong);
		if (err == -EINVAL)
			err = -ENAMETOOLONG;
		if (!err && tlong)
			err = link_file_make(d, stored_t, full_t);
		if (err)
			goto out;
		lower_target = stored_t;
	}
	err = dirops_sidecar_make(d, dirfd, ln);
	if (!err && symlinkat(lower_target, dirfd, ln->stored) != 0)
		err = made_nothing(dirfd, ln, -errno);
out:
	free(stored_t);
	free(full_t);
	return err;
}

/* see dirops.h */
int dirops_link(const struct dirops *d, int fd, int dirfd,
		const struct lname *ln)
{
	char path[DIROPS_FD_PATH_SIZE];
	int err = dirops_sidecar_make(d, dirfd, ln);

	if (err)
		return err;
	/* /proc/self/fd needs no CAP_DAC_READ_SEARCH, AT_EMPTY_PATH does */
	dirops_fd_path(path, fd);
	if (linkat(AT_FDCWD, path, dirfd, ln->stored, AT_SYMLINK_FOLLOW) != 0 &&
	    linkat(fd, "", dirfd, ln->stored, AT_EMPTY_PATH) != 0)
		return made_nothing(dirfd, ln, -errno);
	return 0;
}

/* see dirops.h */
int dirops_unlink(const struct dirops *d, int dirfd, const struct lname *ln)
{
	int err;

	(void)d;
	if (!ln->is_long)
		return unlinkat(dirfd, ln->stored, 0) != 0 ? -errno : 0;
	err = unlink_noted(dirfd, ln->stored);
	if (!err)
		dirops_sidecar_drop(dirfd, ln);
	return err;
}

/*
 * Remove the xtsfs.dirid of lower directory @fd before it is removed or
 * replaced, without touching its times: a program holding the directory
 * open sees the mtime it had, as on any other filesystem.
 */
static int unlink_dirid(int fd)
{
	struct stat st;
	bool have = fstat(fd, &st) == 0;

	if (unlinkat(fd, NAMES_DIRID_FILE, 0) != 0 && errno != ENOENT)
		return -errno;
	if (have) {
		struct timespec tv[2] = { st.st_atim, st.st_mtim };

		(void)futimens(fd, tv);
	}
	return 0;
}

/*
 * Whether lower name @name is a sync tool's conflict copy of a dirid
 * ("xtsfs (conflicted copy 2026-01-02 030405).dirid"): a directory that
 * holds nothing else is empty, and the copy goes with it. No entry can
 * need it then: one encrypted under it would still be there.
 */
static bool dirid_copy(const char *name)
{
	size_t n = strlen(name);

	return n > 6 && !strcmp(name + n - 6, ".dirid") &&
	       conflict_internal(name);
}

/*
 * Call @fn(@arg, @fd, name) for each entry of lower directory @fd from
 * where its position stands, read with getdents64 on @fd itself (a DIR
 * stream would cost another open and three more calls). Return: the
 * first nonzero @fn returned (it stops there), 0 at the end, or -errno.
 */
static int each_entry(int fd, int (*fn)(void *arg, int fd, const char *name),
		      void *arg)
{
	_Alignas(struct dirent64) char buf[4096];
	ssize_t n;

	while ((n = getdents64(fd, buf, sizeof(buf))) > 0) {
		for (size_t p = 0; p < (size_t)n;) {
			const struct dirent64 *de = (const void *)(buf + p);
			int rc;

			p += de->d_reclen;
			rc = fn(arg, fd, de->d_name);
			if (rc)
				return rc;
		}
	}
	return n < 0 ? -errno : 0;
}

/* each_entry(): 1 at a name not ours; *(bool *)@arg: a dirid copy seen */
static int not_internal(void *arg, int fd, const char *name)
{
	(void)fd;
	if (names_is_dot(name) || !strcmp(name, NAMES_DIRID_FILE))
		return 0;
	if (!dirid_copy(name))
		return 1;
	*(bool *)arg = true;
	return 0;
}

/* each_entry(): remove a dirid copy; *(int *)@arg: the last failure */
static int drop_copy(void *arg, int fd, const char *name)
{
	if (dirid_copy(name) && unlinkat(fd, name, 0) != 0 && errno != ENOENT)
		*(int *)arg = -errno;
	return 0;
}

/*
 * Is lower directory @fd (a new descriptor: read from the start) empty
 * but for our own files? 1, 0 or -errno. If it is, the dirid's conflict
 * copies are removed on the way, in a second pass made only when there
 * are copies, after nothing else was seen: a directory that holds
 * anything else keeps its copies.
 */
static int dir_only_internal(int fd)
{
	bool copies = false;
	int err = 0, rc = each_entry(fd, not_internal, &copies);

	if (rc)
		return rc == 1 ? 0 : rc;
	if (!copies)
		return 1;
	if (lseek(fd, 0, SEEK_SET) < 0)
		return -errno;
	rc = each_entry(fd, drop_copy, &err);
	return rc ? rc : err ? err : 1;
}

/*
 * A directory @fd that is about to be removed or replaced: empty but for
 * its dirid, which is kept in @id (*@idlen bytes) to be put back and then
 * removed. Return: 0, -ENOTEMPTY or -errno.
 */
static int dirid_take(int fd, uint8_t id[NAMES_DIRID_SIZE + 1], size_t *idlen)
{
	int err = dir_only_internal(fd);

	*idlen = 0;
	if (err == 0)
		return -ENOTEMPTY;
	if (err < 0)
		return err;
	(void)dirops_read_small(fd, NAMES_DIRID_FILE, id, NAMES_DIRID_SIZE + 1,
				idlen);
	return unlink_dirid(fd);
}

/* Put back what dirid_take() took from @fd. */
static void dirid_restore(const struct dirops *d, int fd,
			  const uint8_t id[NAMES_DIRID_SIZE + 1], size_t idlen)
{
	if (idlen == NAMES_DIRID_SIZE)
		(void)write_new_at(d, fd, NAMES_DIRID_FILE, id, idlen);
}

/* see dirops.h */
int dirops_rmdir(const struct dirops *d, int dirfd, const struct lname *ln)
{
	uint8_t id[NAMES_DIRID_SIZE + 1];
	size_t idlen;
	int err, fd;

	if (!d->names)
		return unlinkat(dirfd, ln->stored, AT_REMOVEDIR) ? -errno : 0;
	fd = openat(dirfd, ln->stored, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = dirid_take(fd, id, &idlen);
	if (!err && unlinkat(dirfd, ln->stored, AT_REMOVEDIR) != 0) {
		err = -errno;
		dirid_restore(d, fd, id, idlen);
	}
	if (!err)
		dirops_sidecar_drop(dirfd, ln);
	close(fd);
	explicit_bzero(id, sizeof(id));
	return err;
}

/*
 * renameat2(); a directory over an empty directory: the lower target
 * still holds its xtsfs.dirid, so drop that first (as rmdir does) and
 * put it back if the rename fails.
 */
static int rename_lower(const struct dirops *d, int d1fd, const char *s1,
			int d2fd, const char *s2, unsigned int flags)
{
	uint8_t id[NAMES_DIRID_SIZE + 1];
	struct stat a, b;
	size_t idlen = 0;
	int tfd, err;

	if (renameat2(d1fd, s1, d2fd, s2, flags) == 0)
		return 0;
	err = -errno;
	/* sshfs reports SFTP's generic failure, a non-empty target too,
	 * as EPERM */
	if (err != -ENOTEMPTY && err != -EEXIST && err != -EPERM)
		return err;
	if (!d->names || (flags & (RENAME_EXCHANGE | RENAME_NOREPLACE)) ||
	    fstatat(d1fd, s1, &a, AT_SYMLINK_NOFOLLOW) != 0 ||
	    fstatat(d2fd, s2, &b, AT_SYMLINK_NOFOLLOW) != 0 ||
	    !S_ISDIR(a.st_mode) || !S_ISDIR(b.st_mode))
		return err;
	tfd = openat(d2fd, s2, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (tfd < 0)
		return err;
	err = dirid_take(tfd, id, &idlen);
	if (!err && renameat2(d1fd, s1, d2fd, s2, flags) != 0) {
		err = -errno;
		dirid_restore(d, tfd, id, idlen);
	}
	close(tfd);
	explicit_bzero(id, sizeof(id));
	return err;
}

/* see dirops.h */
int dirops_rename(const struct dirops *d, int d1fd, const struct lname *l1,
		  int d2fd, const struct lname *l2, unsigned int flags)
{
	bool made1 = false, made2;
	int err = sidecar_new(d, d2fd, l2, &made2);

	if (!err && (flags & RENAME_EXCHANGE))
		err = sidecar_new(d, d1fd, l1, &made1);
	if (!err)
		err = rename_lower(d, d1fd, l1->stored, d2fd, l2->stored, flags);
	if (err) {
		/* only what this call made: an existing entry uses the rest */
		if (made2)
			dirops_sidecar_drop(d2fd, l2);
		if (made1)
			dirops_sidecar_drop(d1fd, l1);
		return err;
	}
	/*
	 * Names stay with their slots; only a moved-away long name drops
	 * its sidecar. A whiteout keeps the old name, so its sidecar too.
	 */
	if (!(flags & (RENAME_EXCHANGE | RENAME_WHITEOUT)) &&
	    !(d1fd == d2fd && !strcmp(l1->stored, l2->stored)))
		dirops_sidecar_drop(d1fd, l1);
	return 0;
}
