/* SPDX-License-Identifier: Apache-2.0 */
/*
 * volume.h - the volume header: its on-disk form (doc/FORMAT.md section 2),
 * key slots, atomic rewrites, and unlocking. No FUSE, no terminal: the
 * tools and the daemon call these, supply the passphrase (through
 * vol_unlock_req.get_pass) and print the messages.
 *
 * On disk: CIPHERDIR/xtsfs.volume, 8192 bytes = two identical 4096-byte
 * copies. Each copy carries a CRC-32C (checked first, to tell corruption
 * from anything else) and an AES-256-CMAC under the header key from the
 * volume key blob (checked after unlock, so edits without the key, such
 * as a downgrade to plaintext names, are refused).
 */
#ifndef XTSFS_VOLUME_H
#define XTSFS_VOLUME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kdf.h"
#include "layout.h"

#define VOL_FILE_NAME "xtsfs.volume"
#define VOL_TMP_NAME "xtsfs.volume.tmp"
/* In a plaintext directory used by reverse mode (FORMAT.md section 5). */
#define VOL_REVERSE_NAME ".xtsfs.volume"
#define VOL_REVERSE_TMP_NAME ".xtsfs.volume.tmp"
/*
 * Format versions (FORMAT.md 2.2): 2 since directories get derived
 * dirids (4.2); 1 is still read and written (readers treat both alike;
 * version 2 keeps writers that draw random dirids away).
 */
#define VOL_VERSION 2
#define VOL_VERSION_MIN 1
#define VOL_COPY_SIZE 4096
#define VOL_NCOPIES 2
#define VOL_FILE_SIZE (VOL_COPY_SIZE * VOL_NCOPIES)
#define VOL_MAX_SLOTS 8
#define VOL_SLOT_SIZE 256
#define VOL_SLOTS_OFF 128
#define VOL_MAC_OFF 4064
#define VOL_CRC_OFF 4092
#define VOL_BLOB_SIZE 160           /* contents 64 + names 64 + header 32 */
#define VOL_WRAPPED_SIZE (VOL_BLOB_SIZE + 8)
#define VOL_UNIT_SIZE 4096

#define VOL_FLAG_PLAINTEXT_NAMES (1u << 0)
#define VOL_FLAG_REVERSE (1u << 1)  /* made by mkfs --reverse */
#define VOL_FLAG_ALIGNED (1u << 2)  /* the aligned layout (FORMAT 3.4) */
#define VOL_FLAGS_KNOWN (VOL_FLAG_PLAINTEXT_NAMES | VOL_FLAG_REVERSE | \
			 VOL_FLAG_ALIGNED)
/*
 * vol_flags_ok() - @flags has no unknown bit, and not both reverse mode
 * and the aligned layout (a reverse view is compact, FORMAT 5.1).
 */
static inline bool vol_flags_ok(uint32_t flags)
{
	return !(flags & ~VOL_FLAGS_KNOWN) &&
	       !((flags & VOL_FLAG_REVERSE) && (flags & VOL_FLAG_ALIGNED));
}
/* the data offset of a volume's files (layout.h) under @flags */
#define VOL_DOFF(flags) \
	((flags) & VOL_FLAG_ALIGNED ? LAYOUT_DOFF_ALIGNED : LAYOUT_DOFF_COMPACT)

/*
 * struct vol_keys - the volume key blob, as unwrapped. Lives in locked
 * memory (secmem_alloc) only; the layout is the blob's byte layout.
 */
struct vol_keys {
	uint8_t contents[64]; /* XTS Key1 || Key2 for file contents */
	uint8_t names[64];    /* AES-SIV key for names: K_mac || K_ctr */
	uint8_t header[32];   /* AES-256-CMAC key for the header MAC */
};
_Static_assert(sizeof(struct vol_keys) == VOL_BLOB_SIZE, "blob layout");

/* struct vol_slot - one key slot, in memory. */
struct vol_slot {
	bool active;                      /* false: slot is empty */
	struct kdf_params kdf;            /* Argon2id cost */
	uint8_t salt[KDF_SALT_SIZE];      /* random per slot and rewrite */
	uint8_t wrapped[VOL_WRAPPED_SIZE]; /* RFC 3394 wrap of the blob */
};

/* struct vol_header - one parsed copy of the header. Holds no secret. */
struct vol_header {
	uint32_t version;        /* VOL_VERSION_MIN..VOL_VERSION; 0 in a
				  * new header: written as VOL_VERSION */
	uint64_t seqid;          /* 1 at mkfs, +1 at every rewrite */
	uint8_t uuid[16];        /* random volume id, public */
	uint32_t flags;          /* VOL_FLAG_* */
	struct vol_slot slots[VOL_MAX_SLOTS];
	uint8_t raw[VOL_COPY_SIZE]; /* the bytes it was parsed from (MAC) */
	const char *file;        /* VOL_FILE_NAME or VOL_REVERSE_NAME;
				  * NULL means VOL_FILE_NAME */
};

/*
 * struct vol_read_info - what vol_read() found, for messages.
 */
struct vol_read_info {
	int copy_used;           /* 0 primary, 1 secondary */
	bool copy_ok[VOL_NCOPIES]; /* which copies passed every check */
	int copy_err[VOL_NCOPIES]; /* -errno of each failed copy */
	bool copies_differ;      /* both fine, but not identical */
	/*
	 * Why the file itself was refused before any copy was parsed (it
	 * is not a regular file), or NULL.
	 */
	const char *file_refused;
	/*
	 * vol_unlock() only: there is no usable header (header_err says
	 * why: -ENOENT none, -EBADMSG both copies corrupt), and the volume
	 * key text's description stands in for it (FORMAT.md 2.6): the
	 * header then has no key slots, seqid 0, and no raw bytes.
	 */
	bool headerless;
	int header_err;
};

/*
 * vol_from_disk() - parse one 4096-byte copy. Order (cryptsetup's):
 * magic, then the CRC-32C, then version and every size and value against
 * hard bounds (Argon2 costs included, so nothing absurd is ever
 * allocated), then conversion. Reserved bytes must be zero.
 * Return: 0; -EBADMSG bad magic or CRC; -EPROTONOSUPPORT a version or
 * flag this build does not know; -EINVAL a value out of bounds.
 */
int vol_from_disk(struct vol_header *h, const uint8_t copy[VOL_COPY_SIZE]);

/*
 * vol_to_disk() - serialize @h into @copy, MAC it under @keys->header
 * and set the CRC. Also refreshes h->raw.
 */
void vol_to_disk(uint8_t copy[VOL_COPY_SIZE], struct vol_header *h,
		 const struct vol_keys *keys);

/*
 * vol_verify_mac() - whether h->raw carries a valid MAC under @keys.
 * Constant-time comparison.
 */
bool vol_verify_mac(const struct vol_header *h, const struct vol_keys *keys);

/*
 * vol_read() - read CIPHERDIR/xtsfs.volume (or, if there is no valid
 * one, the reverse-mode header .xtsfs.volume of a plaintext directory,
 * which may hold a plaintext file of its own named xtsfs.volume) and parse
 * the best copy: the primary if it is valid, else the secondary. h->file
 * tells which file it was. Opened without blocking and never followed: a
 * symlink, FIFO, device, directory or socket (any of which whoever can
 * write the cipher directory could plant) is refused at once with
 * -EBADMSG (info->file_refused says why). Of a regular file only the
 * first VOL_FILE_SIZE bytes are read, as FORMAT.md 2.5 says.
 * Return: 0; -ENOENT no header file; -EBADMSG the file is refused;
 * otherwise the error of the primary copy (both failed); other -errno
 * from the read.
 */
int vol_read(int dirfd, struct vol_header *h, struct vol_read_info *info);

/*
 * vol_read_path() - vol_read() of a header file anywhere, such as a
 * header backup (FORMAT.md 2.7); symlinks are followed. h->file is NULL.
 * Return: as vol_read().
 */
int vol_read_path(const char *path, struct vol_header *h,
		  struct vol_read_info *info);

/*
 * vol_write() - write @h (both copies, MAC'd with @keys) atomically to
 * h->file: a temp file beside it, fsync, rename over it, fsync the
 * directory. h->seqid is incremented first. On failure nothing but the
 * old header remains (the temp file is removed).
 * Return: 0 or -errno (e.g. -ENOSPC, -EACCES, -EROFS); -EINVAL, and
 * nothing written, for a header without an active key slot (no reader
 * would take it).
 */
int vol_write(int dirfd, struct vol_header *h, const struct vol_keys *keys);

/*
 * vol_keys_new() - fresh random keys from getrandom(2), in locked memory;
 * the contents key halves are redrawn until they differ.
 * Return: 0, -ENOMEM or -errno from getrandom.
 */
int vol_keys_new(struct vol_keys **out);

/* vol_keys_free() - wipe and free; NULL ok. */
void vol_keys_free(struct vol_keys *keys);

/*
 * vol_slot_store() - make slot @slot active for @pass: new random salt,
 * Argon2id with @kdf, wrap of @keys.
 * Return: 0; -EINVAL bad slot or parameters; -ENOMEM.
 */
int vol_slot_store(struct vol_header *h, int slot, const char *pass,
		   size_t passlen, const struct kdf_params *kdf,
		   const struct vol_keys *keys);

/*
 * vol_slot_open() - try @pass on slot @slot.
 * Return: 0 with the keys in *out (locked memory); -EACCES the
 * passphrase does not open this slot; -ENOENT slot empty; -ENOMEM.
 */
int vol_slot_open(const struct vol_header *h, int slot, const char *pass,
		  size_t passlen, struct vol_keys **out);

/* vol_slot_count() - number of active slots. */
int vol_slot_count(const struct vol_header *h);

#define VOL_PASS_MAX 4096 /* bytes in a passphrase vol_unlock() takes */

/*
 * struct vol_unlock_req - how to unlock.
 */
struct vol_unlock_req {
	/*
	 * Supplies the passphrase to try; NULL, with no volume_key_file,
	 * fails with -ENOKEY. Called at most once per vol_unlock(), and
	 * only once the header has been read and a key slot is worth trying
	 * (after the cost check below), so that a missing or hostile header
	 * fails before anyone is asked for a passphrase.
	 * @arg:    get_pass_arg
	 * @buf:    @size (VOL_PASS_MAX) bytes of locked memory: write the
	 *          passphrase there, no NUL needed; vol_unlock() wipes it
	 * @len:    its length in bytes, 1..@size
	 * @err:    on failure, a one-line reason (never the passphrase);
	 *          vol_unlock() passes it on as its own @err
	 * @errlen: size of @err
	 * Return: 0, or a negative errno (vol_unlock() then fails with
	 * -ENOKEY, whatever it was).
	 */
	int (*get_pass)(void *arg, char *buf, size_t size, size_t *len,
			char *err, size_t errlen);
	void *get_pass_arg;              /* passed to get_pass */
	const char *volume_key_file;     /* raw volume key (hex), or NULL */
	int slot;                        /* only this slot; -1 = any */
	/*
	 * Called just before the passphrase is tried on key slot @slot
	 * (one Argon2id derivation with @kdf: about a second each), so a
	 * tool can say what it is waiting for; NULL for none. Gets no secret.
	 */
	void (*on_try_slot)(void *arg, int slot, const struct kdf_params *kdf);
	void *on_try_slot_arg;           /* passed to on_try_slot */
	/*
	 * Try key slots whose Argon2id cost is far above what this machine
	 * can pay (memory beyond a fraction of its RAM, or an estimated
	 * time far above the calibration target). Without it such slots are
	 * skipped, and if no other slot is left vol_unlock() fails with
	 * -E2BIG before get_pass is called: the header's costs are not
	 * authenticated before unlock, so whoever can write the cipher
	 * directory could set them (the tools' --allow-costly-kdf).
	 */
	bool allow_costly_kdf;
};

/*
 * struct vol - an unlocked volume.
 */
struct vol {
	struct vol_header hdr;       /* the copy that was used */
	struct vol_read_info info;   /* how it was read */
	struct vol_keys *keys;       /* locked memory */
	int slot;                    /* slot that opened, -1 = volume key */
};

/*
 * vol_unlock() - the unlock path of every command: read the header at
 * @dirfd, judge the slots' costs, get the passphrase from req->get_pass
 * (or read the volume key file), try the slots, then verify the header
 * MAC under the unwrapped header key. Reads no terminal, prints nothing.
 * With a volume key file and no usable header (none, or both copies
 * corrupt) the key text's description stands in for the header if the
 * directory does not contradict it (vol_probe(); v->info.headerless).
 * @err: a one-line reason on failure, naming @dirpath.
 * Return: 0; -ENOENT no header; -EBADMSG both copies corrupt;
 * -EPROTONOSUPPORT unsupported version; -EINVAL absurd values; -EACCES
 * wrong passphrase or volume key; -EKEYREJECTED the header fails
 * authentication (edited by someone without the key); -ENOKEY no
 * passphrase (req->get_pass failed or is NULL) or an unusable volume key
 * file; -E2BIG every active slot costs far more than this machine can
 * pay (req->allow_costly_kdf not set); other -errno.
 */
int vol_unlock(int dirfd, const char *dirpath, const struct vol_unlock_req *req,
	       struct vol *out, char *err, size_t errlen);

/*
 * vol_unlock_backup() - vol_unlock() of the header backup file at @path
 * (FORMAT.md 2.7) instead of a cipher directory's header: the same
 * passphrase rules, key slots and MAC check. Never headerless.
 */
int vol_unlock_backup(const char *path, const struct vol_unlock_req *req,
		      struct vol *v, char *err, size_t errlen);

/* vol_close() - wipe the keys of @v. */
void vol_close(struct vol *v);

/*
 * struct vol_key_info - what a volume key text says of its volume
 * (FORMAT.md 2.6). Version 1 (bare hex, before xtsfs 0.2) says nothing;
 * version 2 says what the header says, so the key alone can open a
 * volume whose header is lost.
 */
struct vol_key_info {
	int text_version; /* 1 bare hex digits, 2 with a description */
	bool checked;     /* 2: carried a check value, and it matched */
	uint32_t format;  /* 2: the volume's format version */
	uint32_t flags;   /* 2: VOL_FLAG_* */
	uint8_t uuid[16]; /* 2: the volume UUID */
};

/*
 * vol_key_parse() - read a volume key text (FORMAT.md 2.6): version 2
 * ("xtsfs-key v2 format=N flags=0xF uuid=U", 320 hex digits, "check=C";
 * '#' comments) or version 1 (320 hex digits). Either case; blanks, line
 * ends and '-' between digits are ignored. @info (may be NULL) gets what
 * the text says.
 * Return: 0; -EINVAL malformed; -EBADMSG the check value does not match
 * (a typo); -EPROTONOSUPPORT a later text version, format or flag.
 * On failure @out is zeroed.
 */
int vol_key_parse(struct vol_keys *out, struct vol_key_info *info,
		  const char *text, size_t len);

/* vol_key_strerror() - a phrase for vol_key_parse()'s errors. */
const char *vol_key_strerror(int err);

/*
 * vol_key_read_file() - vol_key_parse() of the file at @path: a regular
 * file or a pipe (e.g. <(gpg -d ...)), read to its end but never past
 * 4095 bytes. Opened with O_NONBLOCK, so a FIFO with no writer does not
 * wait in open(); a device, directory or socket is refused unread. On
 * failure *why is a phrase for the message, or NULL (then see the errno).
 * Return: 0; -EINVAL, -EBADMSG, -EPROTONOSUPPORT (*why set); -ENOMEM;
 * -errno from open/read.
 */
int vol_key_read_file(const char *path, struct vol_keys *out,
		      struct vol_key_info *info, const char **why);

/* vol_key_info_of() - the description of the volume whose header is @h. */
void vol_key_info_of(struct vol_key_info *ki, const struct vol_header *h);

/*
 * vol_key_format() - the version 2 key text, for paper backup: the
 * description line of @ki, 10 lines of 4 groups of 8 hex digits, and
 * the check value. @buf needs VOL_KEY_TEXT_SIZE.
 */
#define VOL_KEY_TEXT_SIZE 512
void vol_key_format(char buf[VOL_KEY_TEXT_SIZE], const struct vol_keys *keys,
		    const struct vol_key_info *ki);

/* vol_uuid_format() - @u as 8-4-4-4-12 lowercase hex, NUL-terminated. */
void vol_uuid_format(char out[37], const uint8_t u[16]);

/* vol_hexval() - the value of hex digit @c (either case), or -1. */
int vol_hexval(int c);

/* vol_file_name() - the header file of @h (h->file or the default). */
static inline const char *vol_file_name(const struct vol_header *h)
{
	return h->file ? h->file : VOL_FILE_NAME;
}

/* vol_strerror() - a short phrase for the -errno values above. */
const char *vol_strerror(int err);

#endif /* XTSFS_VOLUME_H */
