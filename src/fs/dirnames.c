/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dirnames.c - the names of the forward mount (mount.h, mount_int.h):
 * each directory's dirid, loaded from xtsfs.dirid or read ahead, and the
 * candidate derived from the name a directory was found by, which its
 * names are read under until the file is needed (FORMAT 4.2); names
 * encrypted and decrypted under them.
 */
#include "mount_int.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

/*
 * dirid[] of @dir was just loaded: the candidate has served. Return
 * whether names were shown under it although it is not the dirid: two
 * directories of one path merged (a rename on one copy of the volume, a
 * mkdir on another), or entries moved by hand. Locked (meta_lock).
 */
static bool cand_settle(struct xnode *dir)
{
	bool merged = dir->cand_ok && dir->cand_seen &&
		      memcmp(dir->cand, dir->dirid, NAMES_DIRID_SIZE) != 0;

	if (merged)
		dir->cand_stale = true;
	dir->cand_ok = dir->cand_seen = false;
	explicit_bzero(dir->cand, sizeof(dir->cand));
	return merged;
}

static void prefetch_post_dir(struct xmount *m, struct xnode *dir);

/*
 * After cand_settle() said so: log it, and have a prefetch thread tell
 * the kernel to drop the listing (else the next OPENDIR does).
 */
static void say_merged(struct xmount *m, struct xnode *dir)
{
	report_bad(m, dir->node.k2, NAMES_DIRID_FILE, "holds another id than "
		   "the one derived from the directory's name, under which "
		   "names were shown (two directories of one path merged?); "
		   "from now on only names under the file's id are shown");
	prefetch_post_dir(m, dir);
}

/* see mount_int.h */
bool dir_take_stale(struct xnode *dir)
{
	bool stale;

	pthread_mutex_lock(&dir->meta_lock);
	stale = dir->cand_stale;
	dir->cand_stale = false;
	pthread_mutex_unlock(&dir->meta_lock);
	return stale;
}

/*
 * Load the dirid of directory @dir (FORMAT 4.2). @quiet: a failure is not
 * logged (a prefetch: the request that needs it will log).
 */
static int dirid_load(struct xmount *m, struct xnode *dir, uint8_t out[16],
		      bool quiet)
{
	bool merged = false;
	int err = 0;

	pthread_mutex_lock(&dir->meta_lock);
	if (!dir->dirid_ok) {
		for (int tries = 0;; tries++) {
			err = dirops_read_dirid(dir->fd, dir->dirid);
			if (!xm_fd_retry(m, err, tries))
				break;
		}
		if (!err) {
			dir->dirid_ok = true;
			merged = cand_settle(dir);
		}
		/* -EMFILE and the like: not read, nothing to say of it */
		else if (err == -EIO && !quiet)
			report_bad(m, dir->node.k2, NAMES_DIRID_FILE,
				   "is missing or damaged: nothing can be "
				   "made in the directory, and of its names "
				   "only those under the dirid derived from "
				   "its name (if never renamed) can be read");
	}
	if (!err)
		memcpy(out, dir->dirid, NAMES_DIRID_SIZE);
	pthread_mutex_unlock(&dir->meta_lock);
	if (merged)
		say_merged(m, dir);
	return err;
}

static int dirid_get(struct xmount *m, struct xnode *dir, uint8_t out[16])
{
	return dirid_load(m, dir, out, false);
}

/* see mount_int.h */
void dirid_prefetch_run(void *ctx, void *item)
{
	struct xmount *m = ctx;
	struct xnode *dir = item;
	uint8_t dirid[NAMES_DIRID_SIZE];

	(void)dirid_load(m, dir, dirid, true);
	explicit_bzero(dirid, sizeof(dirid));
	notify_listing_stale(m, dir);
	xm_forget(m, dir, 1);
}

/* see mount_int.h */
void dirid_prefetch_drop(void *ctx, void *item)
{
	xm_forget(ctx, item, 1);
}

/* Queue @dir for a prefetch thread (dirid_prefetch_run()), if room. */
static void prefetch_post_dir(struct xmount *m, struct xnode *dir)
{
	node_hold(m, dir);
	if (!prefetch_post(&m->prefetch, dir))
		xm_forget(m, dir, 1);
}

/* see mount.h */
void xm_prefetch_dir(struct xmount *m, struct xnode *in)
{
	bool want;

	if (in->type != S_IFDIR || !m->names)
		return;
	pthread_mutex_lock(&in->meta_lock);
	/*
	 * A candidate spares the read, unless candidates have mostly been
	 * wrong here (a volume of a version 1 writer, renamed trees)
	 */
	want = !in->dirid_ok &&
	       (!in->cand_ok ||
		__atomic_load_n(&m->cand_wrong, __ATOMIC_RELAXED) >
			__atomic_load_n(&m->cand_right, __ATOMIC_RELAXED));
	pthread_mutex_unlock(&in->meta_lock);
	if (want)
		prefetch_post_dir(m, in);
}

/* see mount.h */
void xm_dir_found(struct xmount *m, struct xnode *dir, struct xnode *in,
		  const char *name)
{
	uint8_t parent[NAMES_DIRID_SIZE];
	bool have;

	if (in->type != S_IFDIR || !m->names || !m->idkey || in == m->root)
		return;
	/* the parent's id its name was found under (one lock at a time) */
	pthread_mutex_lock(&dir->meta_lock);
	have = dir->dirid_ok || dir->cand_ok;
	if (have)
		memcpy(parent, dir->dirid_ok ? dir->dirid : dir->cand,
		       sizeof(parent));
	pthread_mutex_unlock(&dir->meta_lock);
	if (!have)
		return;
	pthread_mutex_lock(&in->meta_lock);
	if (!in->dirid_ok && !in->cand_ok) {
		dirops_derive_dirid(m->idkey, parent, name, strlen(name),
				    in->cand);
		in->cand_ok = true;
	}
	pthread_mutex_unlock(&in->meta_lock);
	explicit_bzero(parent, sizeof(parent));
}

/*
 * dirid_src for @dir: its dirid, loaded once (dirops.h); for reading
 * names (dir_read_get()) its candidate while that is not loaded.
 */
struct dir_ref {
	struct xmount *m;
	struct xnode *dir;
	bool used_cand;                  /* dir_read_get() gave cand[] */
	uint8_t cand[NAMES_DIRID_SIZE];
};

static int dir_ref_get(void *arg, uint8_t out[NAMES_DIRID_SIZE])
{
	struct dir_ref *r = arg;

	return dirid_get(r->m, r->dir, out);
}

static int dir_read_get(void *arg, uint8_t out[NAMES_DIRID_SIZE])
{
	struct dir_ref *r = arg;
	struct xnode *dir = r->dir;
	bool cand;

	pthread_mutex_lock(&dir->meta_lock);
	cand = !dir->dirid_ok && dir->cand_ok;
	if (cand) {
		memcpy(out, dir->cand, NAMES_DIRID_SIZE);
		memcpy(r->cand, dir->cand, NAMES_DIRID_SIZE);
	}
	pthread_mutex_unlock(&dir->meta_lock);
	if (!cand)
		return dirid_get(r->m, dir, out);
	r->used_cand = true;
	return 0;
}

/*
 * A name authenticated under the candidate @r used: it is @r->dir's
 * dirid, or (loaded meanwhile, another) a merge.
 */
static void cand_confirmed(struct dir_ref *r)
{
	struct xnode *dir = r->dir;
	bool merged = false, first = false;

	pthread_mutex_lock(&dir->meta_lock);
	if (dir->cand_ok && !memcmp(dir->cand, r->cand, NAMES_DIRID_SIZE)) {
		first = !dir->cand_seen;
		dir->cand_seen = true;
	} else if (dir->dirid_ok &&
		 memcmp(dir->dirid, r->cand, NAMES_DIRID_SIZE) != 0)
		merged = dir->cand_stale = true;
	pthread_mutex_unlock(&dir->meta_lock);
	explicit_bzero(r->cand, sizeof(r->cand));
	if (first)
		__atomic_add_fetch(&r->m->cand_right, 1, __ATOMIC_RELAXED);
	if (merged)
		say_merged(r->m, dir);
}

/*
 * A name did not authenticate, or was not there, under the candidate @r
 * used: read xtsfs.dirid. Return: 1 it holds another id (try again with
 * it: the directory was renamed, or made by a version 1 writer), 0 the
 * same (the candidate was right: the name is bad, or absent), or -errno
 * (-EIO: it is missing or damaged, as when no candidate is tried).
 */
static int cand_refuted(struct dir_ref *r)
{
	uint8_t id[NAMES_DIRID_SIZE];
	int err = dirid_get(r->m, r->dir, id);

	if (!err)
		err = memcmp(id, r->cand, NAMES_DIRID_SIZE) != 0;
	if (err > 0)
		__atomic_add_fetch(&r->m->cand_wrong, 1, __ATOMIC_RELAXED);
	explicit_bzero(id, sizeof(id));
	explicit_bzero(r->cand, sizeof(r->cand));
	r->used_cand = false;
	return err;
}

/* see mount_int.h */
int name_enc(struct xmount *m, struct xnode *dir, const char *name,
	     struct lname *ln)
{
	struct dir_ref r = { m, dir, false, { 0 } };
	struct dirid_src id = { dir_ref_get, &r };
	int err = dirops_name_enc(&m->dops, &id, dir == m->root, name, ln);

	if (!err && ln->is_long)
		notify_long_name(m, dir, ln->stored, name);
	return err;
}

/* see mount_int.h */
int mkdir_in(struct xmount *m, struct xnode *dir, const struct lname *ln,
	     mode_t mode, const char *name)
{
	struct dir_ref r = { m, dir, false, { 0 } };
	struct dirid_src id = { dir_ref_get, &r };
	int err;

	/* a failed mkdir leaves nothing: it can be made again */
	for (int tries = 0;; tries++) {
		err = dirops_mkdir(&m->dops, dir->fd, ln, mode, &id, name);
		if (!xm_fd_retry(m, err, tries))
			return err;
	}
}

/* see mount_int.h */
int name_find(struct xmount *m, struct xnode *dir, const char *name,
	      struct lname *ln)
{
	struct dir_ref r = { m, dir, false, { 0 } };
	struct dirid_src id = { dir_read_get, &r };
	int err = dirops_name_find(&m->dops, dir->fd, &id, dir == m->root,
				   name, ln);
	struct stat st;

	/*
	 * Under the candidate: there (it is confirmed), or absent (ask
	 * xtsfs.dirid); anything else is left to the caller's own stat.
	 */
	if (!err && r.used_cand) {
		if (!fstatat(dir->fd, ln->stored, &st, AT_SYMLINK_NOFOLLOW))
			cand_confirmed(&r);
		else if (errno == ENOENT && (err = cand_refuted(&r)) > 0)
			err = dirops_name_find(&m->dops, dir->fd, &id,
					       dir == m->root, name, ln);
	}

	if (!err && ln->is_long)
		notify_long_name(m, dir, ln->stored, name);
	return err;
}

/* see mount_int.h */
int name_enc_existing(struct xmount *m, struct xnode *dir, const char *name,
		      struct lname *ln)
{
	int err = name_find(m, dir, name, ln);

	return err == -EPERM ? -ENOENT : err;
}

/* see mount.h */
int xm_stored_name(struct xmount *m, struct xnode *dir, const char *name,
		   struct lname *ln)
{
	return name_enc_existing(m, dir, name, ln);
}

/* see mount.h */
int xm_plain_name(struct xmount *m, struct xnode *dir, const char *stored,
		  char out[256])
{
	return name_dec(m, dir, stored, out);
}

/* see mount_int.h */
int name_dec(struct xmount *m, struct xnode *dir, const char *lower,
	     char out[256])
{
	struct dir_ref r = { m, dir, false, { 0 } };
	struct dirid_src id = { dir_read_get, &r };
	int rc = dirops_name_dec(&m->dops, dir->fd, &id, dir == m->root,
				 lower, out);

	/* -EILSEQ: part of it authenticated (a damaged conflict copy) */
	if (r.used_cand && (rc >= 0 || rc == -EILSEQ))
		cand_confirmed(&r);
	else if (r.used_cand && rc == -EBADMSG) {
		int again = cand_refuted(&r);

		if (again < 0)
			rc = again;
		else if (again)
			rc = dirops_name_dec(&m->dops, dir->fd, &id,
					     dir == m->root, lower, out);
	}

	if (!rc && names_is_long(lower))
		notify_long_name(m, dir, lower, out); /* a listing shows it */
	return rc;
}
