/* SPDX-License-Identifier: Apache-2.0 */
/*
 * check_priv.h - what the files of the checker (check.c, check_obj.c,
 * check_util.c) share and nobody else needs.
 */
#ifndef XTSFS_CHECK_PRIV_H
#define XTSFS_CHECK_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "check.h"

/* struct walk - the state of one check_walk(). */
struct walk {
	const struct check_opts *o;  /* keys, callbacks */
	struct check_counts *c;      /* what was seen */
	int rootfd;                  /* the cipher directory */
	char **linkfiles;            /* the root's xtsfs.link.* files */
	size_t nlinkfiles, caplinkfiles;
	char **linkrefs;             /* the long targets symlinks use */
	size_t nlinkrefs, caplinkrefs;
	uint64_t entries;            /* objects seen, for progress */
	unsigned depth;              /* directories open above this one */
};

/*
 * How deep the walk descends: each level holds a directory descriptor
 * and a stack frame or two (about 2 KiB), so a hostile tree nested
 * deeper is reported as unreadable there, not followed into a crash.
 */
#define CHECK_MAX_DEPTH 2000

/*
 * struct wpath - where the walk is: one object, by its lower path and,
 * where every name on the way decrypted, its plaintext path.
 */
struct wpath {
	char *cipher;   /* relative to the cipher directory; "." the root */
	char *plain;    /* "/", "/a/b", or NULL: not known */
	bool root;      /* this is the cipher directory itself */
	const uint8_t *pdirid; /* dirid of the directory holding it, NULL:
				* the root itself, or not known */
};

/* struct ents - the names of one directory, sorted. */
struct ents {
	char **v;
	size_t n, cap;
};

/* ---- check.c ---- */

/* check_dir() - check directory @dfd at @wp and all below it. */
int check_dir(struct walk *w, int dfd, const struct wpath *wp);

/* ---- check_obj.c ---- */

/*
 * check_object() - check entry @name of directory @dfd, at @wp (its own
 * path): by type, contents or target, its xattrs, and below it.
 * Return: 0, or -ENOMEM / -EINTR to end the walk.
 */
int check_object(struct walk *w, int dfd, const char *name,
		 const struct wpath *wp);

/*
 * check_xattrs() - the xattrs of the object at @wp: of descriptor @fd
 * (opened for reading), or if it is -1 of @path (not followed).
 */
int check_xattrs(struct walk *w, int fd, const char *path,
		 const struct wpath *wp);

/* ---- check_util.c ---- */

/* strv_add() - append a copy of @s to a growing array. 0 or -ENOMEM. */
int strv_add(char ***v, size_t *n, size_t *cap, const char *s);

/* strv_free() - free the @n strings of @v and @v. */
void strv_free(char **v, size_t n);

/*
 * wpath_child() - the path of entry @name of the directory at @wp; its
 * plaintext path only if @plain (its decrypted name) and @wp's are
 * known. 0 or -ENOMEM.
 */
int wpath_child(struct wpath *child, const struct wpath *wp,
		const char *name, const char *plain);

/* wpath_free() - free the strings of @wp. */
void wpath_free(struct wpath *wp);

/*
 * want_fix() - fill in @p's paths (entry @name of the directory at @wp,
 * or @wp itself if @name is NULL) and ask the caller whether to repair
 * it. False if it is not repairable or nobody may be asked.
 */
bool want_fix(struct walk *w, struct check_problem *p, const struct wpath *wp,
	      const char *name);

/* emit() - fill in @p's paths as want_fix() does, count and report it. */
void emit(struct walk *w, struct check_problem *p, const struct wpath *wp,
	  const char *name);

/*
 * notice_conflict() - tell of conflict copy @name (shown as @plain in
 * the directory @wp): counted and given to the conflict callback, not a
 * problem.
 */
void notice_conflict(struct walk *w, const struct wpath *wp,
		     const char *name, const char *plain);

/* simple() - emit() an unrepairable problem of kind @k. */
void simple(struct walk *w, enum check_kind k, const struct wpath *wp,
	    const char *name, const char *detail);

/*
 * op_error() - report that @name at @wp (or @wp) could not be read
 * (@err): an operational error. Return: @err if the walk must end
 * (-ENOMEM), else 0.
 */
int op_error(struct walk *w, const struct wpath *wp, const char *name,
	     int err);

#endif /* XTSFS_CHECK_PRIV_H */
