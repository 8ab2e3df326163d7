/* SPDX-License-Identifier: Apache-2.0 */
/*
 * check.h - the consistency check of an unmounted cipher directory
 * (xtsfs-fsck): a walk of the lower tree that holds every entry against
 * doc/FORMAT.md sections 3, 4 and 6 through the decoders that a mount
 * uses (names.c, fileheader.c, content.c, xattr.c, dirops.c), reports
 * each problem, and repairs the few that can be repaired provably
 * (check_walk()). The volume header (section 2) is checked by the caller
 * around vol_unlock(): check_header() judges what vol_read() saw.
 *
 * What is provable and what is not (the man page repeats it): names,
 * sidecars, long targets and xattrs are authenticated (AES-SIV), so any
 * change to them is found. File contents are not (XTS has no integrity):
 * only the 40-byte header's fixed fields, lower sizes of 1..39 bytes, and
 * short tails (whose zero padding works as a 16 - n byte check) can be
 * judged. A file cut at a unit boundary, or to a last unit of 16..4095
 * bytes, or with changed ciphertext, decodes to other bytes without any
 * error: no checker can see it.
 *
 * Repairs touch only xtsfs's own metadata, never a user's entry: they
 * remove orphaned sidecars and unused long-target files, and write a
 * dirid where the directory's entries prove it (check_walk()). Nothing
 * that fails to decrypt is removed. No FUSE here; no output either: the
 * caller gets each problem through a callback and prints it.
 */
#ifndef XTSFS_CHECK_H
#define XTSFS_CHECK_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct names_ctx;
struct xts_ctx;
struct vol_read_info;

/*
 * enum check_kind - the kinds of problem; check_kind_name() gives each a
 * stable name for --json and scripts (never renamed, only added to).
 */
enum check_kind {
	CHECK_HDR_COPY = 0,     /* a header copy fails its checks */
	CHECK_HDR_DIFFER,       /* both copies valid but not identical */
	CHECK_HDR_MAC,          /* the unused copy fails its MAC */
	CHECK_NAME_FOREIGN,     /* not a name xtsfs writes (sync conflict
				 * copy, temp file, not base64url) */
	CHECK_NAME_INTERNAL,    /* an unknown "xtsfs.*" name */
	CHECK_NAME_NONCANON,    /* base64url alphabet, not canonical */
	CHECK_NAME_BAD,         /* decodes, but does not authenticate or
				 * unpad under the directory's dirid */
	CHECK_DIRID_MISSING,    /* no xtsfs.dirid in a directory */
	CHECK_DIRID_BAD,        /* xtsfs.dirid not a 16-byte regular file */
	CHECK_DIRID_WRONG,      /* 16 bytes, but no entry authenticates */
	CHECK_SIDECAR_MISSING,  /* a long entry without its .name file */
	CHECK_SIDECAR_BAD,      /* a .name file that is not its entry's */
	CHECK_SIDECAR_ORPHAN,   /* a .name file without its entry */
	CHECK_LINK_UNUSED,      /* an xtsfs.link.* file no symlink uses */
	CHECK_LINK_MISSING,     /* a long target's file is missing/invalid */
	CHECK_TARGET_BAD,       /* a stored symlink target does not decrypt */
	CHECK_FILE_CUT_HEADER,  /* a lower file of 1..39 bytes */
	CHECK_FILE_HEADER,      /* bad magic, version or reserved bytes */
	CHECK_FILE_TAIL,        /* a short tail whose padding is not zero */
	CHECK_XATTR_NAME,       /* a marked xattr name does not decrypt */
	CHECK_XATTR_VALUE,      /* an xattr value does not decrypt */
	CHECK_UNREADABLE,       /* an entry could not be read (I/O error) */
	CHECK_HDR_MISSING,      /* no usable header: opened by the key alone */
	CHECK_CONFLICT_COPY,    /* not a problem: a sync tool's conflict
				 * copy, shown by a mount (FORMAT 4.8);
				 * given to @conflict, never to @report */
	CHECK_NKINDS,
};

/* check_kind_name() - the stable name of @k, e.g. "orphan-sidecar". */
const char *check_kind_name(enum check_kind k);

/*
 * struct check_problem - one problem, as the report callback gets it.
 * The strings are valid during the call only.
 */
struct check_problem {
	enum check_kind kind;   /* what */
	const char *cipher;     /* lower path, relative to the cipher dir */
	const char *plain;      /* plaintext path from the root ("/a/b")
				 * of the object, or NULL where a name on
				 * the way is not known (undecryptable,
				 * no dirid) or it has none (a sidecar) */
	const char *plain_dir;  /* for a problem of an entry (its name,
				 * its sidecar): the plaintext path of
				 * the directory holding it, or NULL */
	const char *detail;     /* one line for people, no secret */
	bool repairable;        /* a repair is provably safe */
	bool repaired;          /* it was done */
	int err;                /* -errno of a failed repair, else 0 */
};

/* struct check_counts - what was walked (for the summary). */
struct check_counts {
	uint64_t dirs;          /* directories */
	uint64_t files;         /* regular files */
	uint64_t symlinks;      /* symlinks */
	uint64_t others;        /* fifos, sockets, devices */
	uint64_t problems;      /* problems reported */
	uint64_t repaired;      /* of them, repaired */
	uint64_t op_errors;     /* directories or files that could not be
				 * read at all (operational errors) */
	uint64_t conflicts;     /* conflict copies seen (not problems) */
};

/*
 * struct check_opts - what check_walk() needs and calls.
 * @names:  the names key (also on a plaintext-names volume: xattrs)
 * @xts:    the contents key
 * @plaintext_names: flag bit 0 of the header: no dirids, no long names
 * @doff:   the files' data offset (layout.h), from flag bit 2 of the
 *          header; 0: LAYOUT_DOFF_COMPACT
 * @report: called once per problem, after any repair (@p->repaired)
 * @conflict: called once per sync-tool conflict copy of an entry
 *          (kind CHECK_CONFLICT_COPY, @p->plain its name in a mount),
 *          which is no problem: the user resolves it in the mount. NULL:
 *          only counted.
 * @ask:    called before each repair, with @p->repaired false: true to
 *          do it. NULL: repair nothing (read-only, the default).
 * @progress: called every 1000 entries and at the end, or NULL
 * @stop:   set (by a signal handler) to stop the walk early; or NULL
 */
struct check_opts {
	const struct names_ctx *names;
	const struct aes_cmac_key *idkey; /* header key: derived dirids
					   * (FORMAT 4.2); NULL: none */
	const struct xts_ctx *xts;
	bool plaintext_names;
	uint32_t doff;
	void (*report)(void *arg, const struct check_problem *p);
	void (*conflict)(void *arg, const struct check_problem *p);
	bool (*ask)(void *arg, const struct check_problem *p);
	void (*progress)(void *arg, const struct check_counts *c);
	void *arg;
	volatile sig_atomic_t *stop;
};

/*
 * check_walk() - check the whole tree below the cipher directory @rootfd.
 *
 * Repairs, each only with @o->ask's consent:
 * - an orphaned sidecar (no "xtsfs.long.*" entry of its name) is removed;
 * - an "xtsfs.link.*" file in the root that no symlink of the tree uses
 *   is removed, only if every directory could be read (else a symlink
 *   that uses it may not have been seen);
 * - a directory whose dirid is missing, damaged or wrong gets one when
 *   its entries prove it: if it has no entry whose name depends on the
 *   dirid (encrypted names, long entries, sidecars), any new random
 *   dirid is correct; else a 16-byte regular file in it whose name
 *   starts with "xtsfs.dirid" (a sync tool's conflict copy such as
 *   "xtsfs.dirid (1)") is renamed over it if every such entry
 *   authenticates under its bytes, or the dirid derived from the
 *   directory's parent and name (@o->idkey) is written if every such
 *   entry authenticates under it. A new dirid is the derived one too. AES-SIV makes a wrong candidate fail
 *   every name, so this never names anything wrongly. Otherwise nothing
 *   is written.
 * Return: 0 when the walk finished (problems or not: see @c), -EINTR if
 * *@o->stop was set, -ENOMEM.
 */
int check_walk(int rootfd, const struct check_opts *o, struct check_counts *c);

/*
 * check_header() - the header problems of unlocked volume @v (FORMAT
 * 2.5), reported through @o->report: a copy that fails its checks
 * (vol_read() found it), copies that are both valid but differ, and a
 * valid copy other than the one used whose MAC fails under the header
 * key (re-read here from @rootfd; vol_unlock() verified only the copy
 * it used). Each is repaired, if @o->ask agrees, by rewriting both
 * copies from the one in use with vol_write(): that copy passed every
 * check and its MAC, so it is the volume's header.
 * Return: 0, or -errno if the header file cannot be re-read.
 */
struct vol;
int check_header(int rootfd, struct vol *v, const struct check_opts *o,
		 struct check_counts *c);

/*
 * check_escape() - @in as printable text for a terminal or a log: bytes
 * of valid UTF-8 that are not control characters as they are, a
 * backslash as "\\", everything else (control bytes, DEL, bytes that
 * are not UTF-8) as "\xNN". Stored names are chosen by whoever can
 * write the cipher directory: they must not reach a terminal raw.
 * @out: room for @outsize bytes, NUL-terminated (truncated, never
 * overflowed). Return: @out.
 */
char *check_escape(char *out, size_t outsize, const char *in);

/*
 * check_mounted() - whether @mountinfo (a /proc/PID/mountinfo file)
 * lists a FUSE mount (type "fuse" or "fuse.*") whose source is the
 * directory @dir: the canonical paths (realpath(3)) of both are
 * compared, so "./v" and "/srv/v/" are the same. The daemon passes
 * its CIPHERDIR as the mount's fsname (its source) as it was given.
 * @where: the mount point of the first match (output), @wsize bytes.
 * Return: 1 mounted, 0 not, -errno if @mountinfo cannot be read or
 * @dir has no canonical path.
 */
int check_mounted(const char *mountinfo, const char *dir, char *where,
		  size_t wsize);

/*
 * check_held() - whether a process named @comm (/proc/PID/comm, e.g.
 * "xtsfs") holds a descriptor of the directory @dir: a daemon serving
 * it. This finds the mounts check_mounted() cannot: the daemon names
 * its mount's source by the path it was given, which may be relative
 * to a working directory only it knows. Processes whose descriptors
 * cannot be read (another user's, without privilege) are not seen.
 * @proc: the proc mount ("/proc"); @pid: the first such process (output).
 * Return: 1 held, 0 not, -errno if @proc cannot be read or @dir has
 * no canonical path.
 */
int check_held(const char *proc, const char *comm, const char *dir,
	       long *pid);

#endif /* XTSFS_CHECK_H */
