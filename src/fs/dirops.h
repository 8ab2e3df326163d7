/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dirops.h - directory operations on lower descriptors, FUSE-free: the
 * encrypted-directory plumbing of doc/FORMAT.md section 4 (dirids,
 * long-name sidecars, long symlink targets, reserved names) and the
 * creates, removes and renames that keep it consistent, each undoing
 * what it did when a later step fails. Every function returns 0 or
 * -errno; none replies to anyone and none checks permissions (the front
 * end has, or the kernel has).
 *
 * The front end keeps the dirids (it caches them per inode) and hands
 * them in through a struct dirid_src, asked only when a name needs it:
 * internal names, "." and plaintext-names volumes never read a dirid.
 */
#ifndef XTSFS_DIROPS_H
#define XTSFS_DIROPS_H

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../crypto/cmac.h"
#include "durable.h"
#include "names.h"

/* struct dirops - what every operation of one volume needs. */
struct dirops {
	int root_fd;                   /* cipher directory (long targets) */
	const struct names_ctx *names; /* names key; NULL: plaintext names */
	struct durable *durable;       /* notes new dirids and sidecars */
	/* header key: new dirids derived from parent and name (FORMAT
	 * 4.2); NULL: drawn at random, as format 1 writers did */
	const struct aes_cmac_key *idkey;
};

/* struct dirid_src - the dirid of one directory, on demand. */
struct dirid_src {
	/* 0 with the dirid in @out, or -EIO (missing or damaged) */
	int (*get)(void *arg, uint8_t out[NAMES_DIRID_SIZE]);
	void *arg;
};

/* struct lname - a plaintext name as stored in one directory. */
struct lname {
	char stored[NAMES_STORED_MAX + 1]; /* the lower entry name */
	char full[NAMES_FULL_MAX];         /* sidecar content if is_long */
	bool is_long;                      /* stored is xtsfs.long.* */
	bool conflict;                     /* a sync tool's conflict copy
					    * (conflict.h): stored is the
					    * copy's, full and the sidecar
					    * the original's */
};

/*
 * dirops_read_small() - read the whole of xtsfs's own small file @name
 * in @dirfd (a dirid, a sidecar, a long-target file): at most @max bytes
 * into @buf, *@len of them. Whoever can write the cipher directory may
 * have put anything there, so the open neither blocks (a FIFO) nor takes
 * a controlling terminal nor follows a symlink, and only a regular file
 * of at most @max bytes is read.
 * Return: 0; -ENOENT absent; -EIO anything but such a file; other -errno.
 */
int dirops_read_small(int dirfd, const char *name, void *buf, size_t max,
		      size_t *len);

/*
 * dirops_opendir() - a directory stream of directory @fd (any descriptor,
 * O_PATH included; @fd stays open and untouched) in *@out, for closedir().
 * Return: 0 or -errno (-ENOMEM if no stream could be made).
 */
int dirops_opendir(int fd, DIR **out);

/*
 * dirops_fd_path() - "/proc/self/fd/N" for descriptor @fd: how an O_PATH
 * descriptor is reopened for real, or named to the calls that take a
 * path (the *xattr calls, utimensat of a symlink's target, linkat
 * without CAP_DAC_READ_SEARCH). Following that one link reaches the
 * object itself, a symlink included.
 */
#define DIROPS_FD_PATH_SIZE 32
void dirops_fd_path(char buf[DIROPS_FD_PATH_SIZE], int fd);

/*
 * dirops_read_dirid() - the dirid of lower directory @dirfd (FORMAT 4.2).
 * Return: 0; -EIO missing or damaged (not exactly 16 bytes, not a file);
 * -EMFILE, -ENFILE or -ENOMEM as they came (the file was not read).
 */
int dirops_read_dirid(int dirfd, uint8_t out[NAMES_DIRID_SIZE]);

/*
 * dirops_name_enc() - the stored form of plaintext @name in the directory
 * whose dirid @id gives (@root: it is the volume's root).
 * Return: 0; -ENAMETOOLONG; -EINVAL an illegal name; -EPERM a name the
 * volume reserves (plaintext names: xtsfs.volume in the root); -EIO the
 * dirid cannot be read.
 */
int dirops_name_enc(const struct dirops *d, const struct dirid_src *id,
		    bool root, const char *name, struct lname *ln);

/*
 * dirops_name_find() - the stored form of plaintext @name that names an
 * existing entry of directory @dirfd: dirops_name_enc()'s, unless no
 * entry has that name, @name ends in a known conflict suffix (conflict.h)
 * and the conflict copy "stored form of the rest + suffix" exists (for
 * a long rest: "xtsfs.long" + suffix + "." + V); then that copy, with
 * @ln->conflict set. What dirops_name_dec() shows, this finds.
 * Return: as dirops_name_enc().
 */
int dirops_name_find(const struct dirops *d, int dirfd,
		     const struct dirid_src *id, bool root, const char *name,
		     struct lname *ln);

/*
 * dirops_name_dec() - the plaintext name of lower entry @lower of
 * directory @dirfd into @out. A conflict copy of an entry (a stored
 * name + a known suffix, FORMAT 4.8) gives the entry's name + the
 * suffix, unless an entry of that very name exists (lookup finds that
 * one: the copy is not listed then).
 * Return: 0; 1 an entry of xtsfs's own (or a conflict copy of one),
 * never shown; -EIO the dirid cannot be read (no name here can be);
 * -EBADMSG this entry does not decrypt (its sidecar is missing, foreign
 * or damaged, or its name is); -EILSEQ it is a stored name followed by
 * text that is no known conflict suffix (not shown either).
 */
int dirops_name_dec(const struct dirops *d, int dirfd,
		    const struct dirid_src *id, bool root, const char *lower,
		    char out[256]);

/*
 * dirops_stored_prefix() - whether lower name @lower (@len bytes, any
 * bytes) begins with a stored name of the directory of @dirid followed
 * by more: one of the ten lengths a short stored name has (FORMAT 4.1)
 * decrypts. How a conflict copy with an unknown suffix is told from
 * other foreign names (dirops_name_dec(), xtsfs-fsck).
 */
bool dirops_stored_prefix(const struct names_ctx *names,
			  const uint8_t dirid[NAMES_DIRID_SIZE],
			  const char *lower, size_t len);

/*
 * dirops_readlink() - the plaintext target of the lower symlink @fd (an
 * O_PATH descriptor) into @out.
 * Return: 0; -EIO it does not decrypt (or its long-target file is
 * missing, foreign or damaged); -ENAMETOOLONG; -ENOMEM; other -errno.
 */
int dirops_readlink(const struct dirops *d, int fd, char out[4096]);

/*
 * The creates: each makes the sidecar of a long name first and the
 * entry after (FORMAT 4.3: never an entry without its sidecar), and on
 * failure removes what it made: nothing is left but a sidecar that an
 * existing entry of that name uses (-EEXIST). The new object is not
 * chowned and not looked up: that is the front end's part, and
 * dirops_undo_make() removes the object if that part fails.
 */

/*
 * dirops_derive_dirid() - the dirid of a directory named @name (@len
 * bytes, at most NAME_MAX) made in the directory of dirid @parent
 * (FORMAT 4.2): AES-CMAC under @idkey of "xtsfs dirid\0" || @parent ||
 * @name. The same directory made on two machines gets the same dirid.
 */
void dirops_derive_dirid(const struct aes_cmac_key *idkey,
			 const uint8_t parent[NAMES_DIRID_SIZE],
			 const char *name, size_t len,
			 uint8_t out[NAMES_DIRID_SIZE]);

/*
 * dirops_mkdir() - directory @ln, plaintext @name, in @dirfd (whose
 * dirid @parent gives) with its new dirid: derived (d->idkey set) or
 * random. Plaintext-names volumes ask for no dirid.
 */
int dirops_mkdir(const struct dirops *d, int dirfd, const struct lname *ln,
		 mode_t mode, const struct dirid_src *parent,
		 const char *name);

/* dirops_mknod() - any type; a regular file gets its header at once. */
int dirops_mknod(const struct dirops *d, int dirfd, const struct lname *ln,
		 mode_t mode, dev_t rdev);

/*
 * dirops_symlink() - a symlink to plaintext @target. A long target's
 * file in the root is content-addressed and shared: it stays.
 * Return: as above; -ENAMETOOLONG a target over 4095 bytes.
 */
int dirops_symlink(const struct dirops *d, int dirfd, const struct lname *ln,
		   const char *target);

/* dirops_link() - a hard link to the object of O_PATH descriptor @fd. */
int dirops_link(const struct dirops *d, int fd, int dirfd,
		const struct lname *ln);

/* dirops_undo_make() - remove a new object nobody was told about. */
void dirops_undo_make(int dirfd, const struct lname *ln, bool isdir);

/*
 * The sidecar of @ln, if it is long: made (same text exists: fine),
 * dropped. A sidecar serves an entry and its conflict copies: it is
 * dropped only when none of them is left in @dirfd.
 */
int dirops_sidecar_make(const struct dirops *d, int dirfd,
			const struct lname *ln);
void dirops_sidecar_drop(int dirfd, const struct lname *ln);

/* dirops_unlink() - remove a non-directory, then its sidecar. */
int dirops_unlink(const struct dirops *d, int dirfd, const struct lname *ln);

/*
 * dirops_rmdir() - remove an empty directory (empty but for its dirid),
 * then its sidecar; if the removal fails the dirid is put back.
 * Return: 0; -ENOTEMPTY; other -errno.
 */
int dirops_rmdir(const struct dirops *d, int dirfd, const struct lname *ln);

/*
 * dirops_rename() - renameat2() of @l1 in @d1fd to @l2 in @d2fd with
 * @flags (RENAME_NOREPLACE, RENAME_EXCHANGE, RENAME_WHITEOUT). A
 * directory replacing an empty directory first loses that one's dirid,
 * put back if the rename fails. Sidecars follow the names: the target's
 * is made before, a moved-away long name's dropped after (not on
 * exchange, not for a whiteout, which keeps the old name). If the rename
 * fails, a sidecar this call made is dropped again.
 */
int dirops_rename(const struct dirops *d, int d1fd, const struct lname *l1,
		  int d2fd, const struct lname *l2, unsigned int flags);

#endif /* XTSFS_DIROPS_H */
