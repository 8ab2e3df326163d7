/* SPDX-License-Identifier: Apache-2.0 */
/*
 * volume.c - the volume header (doc/FORMAT.md section 2; see volume.h).
 */
#include "volume.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmac.h"
#include "crc32c.h"
#include "keywrap.h"
#include "probe.h"
#include "secmem.h"

static const uint8_t vol_magic[8] = { 'X', 'T', 'S', 'F', 'S', 'V', 'O', 'L' };
static const char contents_cipher[16] = "aes-256-xts";
static const char names_cipher[16] = "aes-256-siv";

/* Byte offsets inside one copy (doc/FORMAT.md 2.2). */
enum {
	OFF_MAGIC = 0,
	OFF_VERSION = 8,
	OFF_COPY_SIZE = 12,
	OFF_SEQID = 16,
	OFF_UUID = 24,
	OFF_CONTENTS = 40,
	OFF_UNIT = 56,
	OFF_FLAGS = 60,
	OFF_NAMES = 64,
	OFF_BLOB_SIZE = 80,
	OFF_NSLOTS = 84,
	OFF_RESERVED0 = 88,     /* .. 128 */
	OFF_RESERVED1 = VOL_SLOTS_OFF + VOL_MAX_SLOTS * VOL_SLOT_SIZE, /* .. MAC */
	OFF_RESERVED2 = VOL_MAC_OFF + 16,                           /* .. CRC */
};

/* Byte offsets inside one key slot (doc/FORMAT.md 2.3). */
enum {
	SLOT_STATE = 0,
	SLOT_KDF = 4,
	SLOT_T = 8,
	SLOT_M = 12,
	SLOT_LANES = 16,
	SLOT_RESERVED0 = 20,    /* .. 24 */
	SLOT_SALT = 24,
	SLOT_WRAPPED = 56,
	SLOT_RESERVED1 = 56 + VOL_WRAPPED_SIZE, /* .. 256 */
};

#define SLOT_STATE_EMPTY 0
#define SLOT_STATE_ACTIVE 1
#define SLOT_KDF_ARGON2ID 1

_Static_assert(OFF_RESERVED1 <= VOL_MAC_OFF, "slots overlap the MAC");
_Static_assert(SLOT_RESERVED1 <= VOL_SLOT_SIZE, "slot overflow");

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

static bool all_zero(const uint8_t *p, size_t len)
{
	uint8_t acc = 0;

	for (size_t i = 0; i < len; i++)
		acc |= p[i];
	return acc == 0;
}

static int slot_from_disk(struct vol_slot *s, const uint8_t *d)
{
	uint32_t state = get32(d + SLOT_STATE);

	memset(s, 0, sizeof(*s));
	if (state == SLOT_STATE_EMPTY)
		return all_zero(d, VOL_SLOT_SIZE) ? 0 : -EINVAL;
	if (state != SLOT_STATE_ACTIVE)
		return -EPROTONOSUPPORT;
	if (get32(d + SLOT_KDF) != SLOT_KDF_ARGON2ID)
		return -EPROTONOSUPPORT;
	if (!all_zero(d + SLOT_RESERVED0, SLOT_SALT - SLOT_RESERVED0) ||
	    !all_zero(d + SLOT_RESERVED1, VOL_SLOT_SIZE - SLOT_RESERVED1))
		return -EPROTONOSUPPORT;
	s->kdf.t_cost = get32(d + SLOT_T);
	s->kdf.m_cost_kib = get32(d + SLOT_M);
	s->kdf.lanes = get32(d + SLOT_LANES);
	/* Bound the cost before anything could ever be allocated for it. */
	if (kdf_check_params(&s->kdf))
		return -EINVAL;
	memcpy(s->salt, d + SLOT_SALT, KDF_SALT_SIZE);
	memcpy(s->wrapped, d + SLOT_WRAPPED, VOL_WRAPPED_SIZE);
	s->active = true;
	return 0;
}

/* see volume.h */
int vol_from_disk(struct vol_header *h, const uint8_t copy[VOL_COPY_SIZE])
{
	int err;

	memset(h, 0, sizeof(*h));
	if (memcmp(copy + OFF_MAGIC, vol_magic, sizeof(vol_magic)))
		return -EBADMSG;
	/* The CRC sits in the last 4 bytes in every version. */
	if (crc32c(copy, VOL_CRC_OFF) != get32(copy + VOL_CRC_OFF))
		return -EBADMSG;
	h->version = get32(copy + OFF_VERSION);
	if (h->version < VOL_VERSION_MIN || h->version > VOL_VERSION)
		return -EPROTONOSUPPORT;
	if (get32(copy + OFF_COPY_SIZE) != VOL_COPY_SIZE ||
	    memcmp(copy + OFF_CONTENTS, contents_cipher, 16) ||
	    get32(copy + OFF_UNIT) != VOL_UNIT_SIZE ||
	    get32(copy + OFF_BLOB_SIZE) != VOL_BLOB_SIZE ||
	    get32(copy + OFF_NSLOTS) != VOL_MAX_SLOTS)
		return -EPROTONOSUPPORT;
	h->flags = get32(copy + OFF_FLAGS);
	if (!vol_flags_ok(h->flags))
		return -EPROTONOSUPPORT;
	if (h->flags & VOL_FLAG_PLAINTEXT_NAMES) {
		if (!all_zero(copy + OFF_NAMES, 16))
			return -EPROTONOSUPPORT;
	} else if (memcmp(copy + OFF_NAMES, names_cipher, 16)) {
		return -EPROTONOSUPPORT;
	}
	if (!all_zero(copy + OFF_RESERVED0, VOL_SLOTS_OFF - OFF_RESERVED0) ||
	    !all_zero(copy + OFF_RESERVED1, VOL_MAC_OFF - OFF_RESERVED1) ||
	    !all_zero(copy + OFF_RESERVED2, VOL_CRC_OFF - OFF_RESERVED2))
		return -EPROTONOSUPPORT;
	h->seqid = get64(copy + OFF_SEQID);
	memcpy(h->uuid, copy + OFF_UUID, 16);
	for (int i = 0; i < VOL_MAX_SLOTS; i++) {
		err = slot_from_disk(&h->slots[i], copy + VOL_SLOTS_OFF +
						   i * VOL_SLOT_SIZE);
		if (err)
			return err;
	}
	if (vol_slot_count(h) == 0)
		return -EINVAL; /* a header nobody can open is no header */
	memcpy(h->raw, copy, VOL_COPY_SIZE);
	return 0;
}

static void slot_to_disk(uint8_t *d, const struct vol_slot *s)
{
	memset(d, 0, VOL_SLOT_SIZE);
	if (!s->active)
		return;
	put32(d + SLOT_STATE, SLOT_STATE_ACTIVE);
	put32(d + SLOT_KDF, SLOT_KDF_ARGON2ID);
	put32(d + SLOT_T, s->kdf.t_cost);
	put32(d + SLOT_M, s->kdf.m_cost_kib);
	put32(d + SLOT_LANES, s->kdf.lanes);
	memcpy(d + SLOT_SALT, s->salt, KDF_SALT_SIZE);
	memcpy(d + SLOT_WRAPPED, s->wrapped, VOL_WRAPPED_SIZE);
}

static void header_mac(uint8_t mac[16], const uint8_t *copy,
		       const struct vol_keys *keys)
{
	struct aes_cmac_key k;

	aes_cmac_setkey(&k, keys->header);
	aes_cmac(&k, mac, copy, VOL_MAC_OFF);
	aes_cmac_wipe(&k);
}

/* see volume.h */
void vol_to_disk(uint8_t copy[VOL_COPY_SIZE], struct vol_header *h,
		 const struct vol_keys *keys)
{
	memset(copy, 0, VOL_COPY_SIZE);
	memcpy(copy + OFF_MAGIC, vol_magic, sizeof(vol_magic));
	if (h->version < VOL_VERSION_MIN || h->version > VOL_VERSION)
		h->version = VOL_VERSION; /* a new header */
	put32(copy + OFF_VERSION, h->version);
	put32(copy + OFF_COPY_SIZE, VOL_COPY_SIZE);
	put64(copy + OFF_SEQID, h->seqid);
	memcpy(copy + OFF_UUID, h->uuid, 16);
	memcpy(copy + OFF_CONTENTS, contents_cipher, 16);
	put32(copy + OFF_UNIT, VOL_UNIT_SIZE);
	put32(copy + OFF_FLAGS, h->flags);
	if (!(h->flags & VOL_FLAG_PLAINTEXT_NAMES))
		memcpy(copy + OFF_NAMES, names_cipher, 16);
	put32(copy + OFF_BLOB_SIZE, VOL_BLOB_SIZE);
	put32(copy + OFF_NSLOTS, VOL_MAX_SLOTS);
	for (int i = 0; i < VOL_MAX_SLOTS; i++)
		slot_to_disk(copy + VOL_SLOTS_OFF + i * VOL_SLOT_SIZE,
			     &h->slots[i]);
	header_mac(copy + VOL_MAC_OFF, copy, keys);
	put32(copy + VOL_CRC_OFF, crc32c(copy, VOL_CRC_OFF));
	memcpy(h->raw, copy, VOL_COPY_SIZE);
}

/* see volume.h */
bool vol_verify_mac(const struct vol_header *h, const struct vol_keys *keys)
{
	uint8_t mac[16];
	bool ok;

	header_mac(mac, h->raw, keys);
	ok = ct_memeq(mac, h->raw + VOL_MAC_OFF, 16);
	explicit_bzero(mac, sizeof(mac));
	return ok;
}

/*
 * O_NONBLOCK: opening a FIFO planted in the cipher directory must not
 * wait for a writer; O_NOCTTY: nor may a terminal device become ours.
 * Neither changes how a regular file reads.
 */
#define HDR_OPEN_FLAGS (O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)

/*
 * pick_copy() - parse the copies in the @got bytes of @buf, as
 * vol_read() says: the primary if it is valid, else the secondary.
 */
static int pick_copy(const uint8_t *buf, size_t got, struct vol_header *h,
		     struct vol_read_info *info)
{
	struct vol_header *alt = malloc(sizeof(*alt));
	int err;

	if (!alt)
		return -ENOMEM;
	/* A truncated file keeps whatever whole copies it still has. */
	for (int c = 0; c < VOL_NCOPIES; c++) {
		struct vol_header *dst = c == 0 ? h : alt;

		if (got < (size_t)(c + 1) * VOL_COPY_SIZE)
			info->copy_err[c] = -EBADMSG;
		else
			info->copy_err[c] = vol_from_disk(dst,
							  buf + c * VOL_COPY_SIZE);
		info->copy_ok[c] = info->copy_err[c] == 0;
	}
	if (info->copy_ok[0]) {
		info->copy_used = 0;
		info->copies_differ = info->copy_ok[1] &&
				      memcmp(h->raw, alt->raw, VOL_COPY_SIZE);
		err = 0;
	} else if (info->copy_ok[1]) {
		info->copy_used = 1;
		memcpy(h, alt, sizeof(*h));
		err = 0;
	} else {
		/* Report the more telling failure: "new version" beats "bad". */
		err = info->copy_err[0];
		if (info->copy_err[1] == -EPROTONOSUPPORT)
			err = -EPROTONOSUPPORT;
	}
	free(alt);
	return err;
}

/*
 * read_copies() - read and parse the header file open at @fd (closed
 * here), as vol_read() says.
 */
static int read_copies(int fd, struct vol_header *h, struct vol_read_info *info)
{
	uint8_t buf[VOL_FILE_SIZE];
	ssize_t got = 0, n;
	struct stat st;
	int err;

	if (fstat(fd, &st) != 0) {
		err = -errno;
		close(fd);
		return err;
	}
	/* A FIFO, device or socket could block or never end: refuse it. */
	if (!S_ISREG(st.st_mode)) {
		info->file_refused = "not a regular file";
		close(fd);
		return -EBADMSG;
	}
	/* FORMAT.md 2.5: readers use the first 8192 bytes; no more is read. */
	while (got < (ssize_t)sizeof(buf)) {
		n = read(fd, buf + got, sizeof(buf) - (size_t)got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			close(fd);
			return err;
		}
		if (n == 0)
			break;
		got += n;
	}
	close(fd);
	return pick_copy(buf, (size_t)got, h, info);
}

/* read_copies() of the header file @file in @dirfd, as vol_read() says. */
static int read_named(int dirfd, const char *file, struct vol_header *h,
		      struct vol_read_info *info)
{
	int fd, rc;

	memset(info, 0, sizeof(*info));
	h->file = file;
	fd = openat(dirfd, file, HDR_OPEN_FLAGS | O_NOFOLLOW);
	if (fd < 0 && errno == ELOOP)
		info->file_refused = "a symbolic link, not a regular file";
	if (fd < 0)
		return errno == ELOOP ? -EBADMSG : -errno;
	rc = read_copies(fd, h, info);
	h->file = file;
	return rc;
}

/* see volume.h */
int vol_read(int dirfd, struct vol_header *h, struct vol_read_info *info)
{
	struct vol_header *alt;
	struct vol_read_info alt_info;
	int rc = read_named(dirfd, VOL_FILE_NAME, h, info);

	if (rc == 0)
		return 0;
	/*
	 * No valid xtsfs.volume: a plaintext directory for reverse mode
	 * keeps .xtsfs.volume, and may hold a file of its own named
	 * xtsfs.volume (with encrypted names the view shows it encrypted).
	 */
	alt = malloc(sizeof(*alt));
	if (!alt)
		return -ENOMEM;
	if (read_named(dirfd, VOL_REVERSE_NAME, alt, &alt_info) == 0 ||
	    rc == -ENOENT) {
		rc = read_named(dirfd, VOL_REVERSE_NAME, h, info);
		if (rc == -ENOENT)
			h->file = VOL_FILE_NAME;
	}
	free(alt);
	return rc;
}

/* see volume.h */
int vol_read_path(const char *path, struct vol_header *h,
		  struct vol_read_info *info)
{
	int fd;

	memset(info, 0, sizeof(*info));
	fd = open(path, HDR_OPEN_FLAGS);
	if (fd < 0)
		return -errno;
	return read_copies(fd, h, info);
}

static int write_all(int fd, const uint8_t *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* see volume.h */
int vol_write(int dirfd, struct vol_header *h, const struct vol_keys *keys)
{
	uint8_t buf[VOL_FILE_SIZE];
	const char *file = vol_file_name(h);
	const char *tmp = strcmp(file, VOL_REVERSE_NAME) ? VOL_TMP_NAME
							 : VOL_REVERSE_TMP_NAME;
	int fd, err;

	/* FORMAT.md 2.5: no reader takes a header without an active slot */
	if (vol_slot_count(h) == 0)
		return -EINVAL;
	h->seqid++;
	vol_to_disk(buf, h, keys);
	for (int c = 1; c < VOL_NCOPIES; c++)
		memcpy(buf + c * VOL_COPY_SIZE, buf, VOL_COPY_SIZE);
	/* A temp file left by a crash is stale by definition: replace it. */
	(void)unlinkat(dirfd, tmp, 0);
	fd = openat(dirfd, tmp,
		    O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0400);
	if (fd < 0)
		return -errno;
	err = write_all(fd, buf, sizeof(buf));
	if (!err && fsync(fd) != 0)
		err = -errno;
	if (close(fd) != 0 && !err)
		err = -errno;
	if (err)
		goto out_unlink;
	/*
	 * 10-volume.bats kills us just before and just after this rename
	 * (tests/bats/crash_rename.c, an LD_PRELOAD shim): no hook here.
	 */
	if (renameat(dirfd, tmp, dirfd, file) != 0) {
		err = -errno;
		goto out_unlink;
	}
	/* The rename is durable only once the directory is synced. */
	if (fsync(dirfd) != 0)
		return -errno;
	return 0;
out_unlink:
	(void)unlinkat(dirfd, tmp, 0);
	h->seqid--;
	return err;
}

/* see volume.h */
int vol_keys_new(struct vol_keys **out)
{
	struct vol_keys *k = secmem_alloc(sizeof(*k));
	uint8_t *p;
	size_t got = 0;

	*out = NULL;
	if (!k)
		return -ENOMEM;
	p = (uint8_t *)k;
	do {
		got = 0;
		while (got < sizeof(*k)) {
			ssize_t n = getrandom(p + got, sizeof(*k) - got, 0);

			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0) {
				int err = -errno;

				secmem_free(k);
				return err;
			}
			got += (size_t)n;
		}
	} while (ct_memeq(k->contents, k->contents + 32, 32));
	*out = k;
	return 0;
}

/* see volume.h */
void vol_keys_free(struct vol_keys *keys)
{
	secmem_free(keys);
}

/* see volume.h */
int vol_slot_count(const struct vol_header *h)
{
	int n = 0;

	for (int i = 0; i < VOL_MAX_SLOTS; i++)
		n += h->slots[i].active;
	return n;
}

/* see volume.h */
int vol_slot_store(struct vol_header *h, int slot, const char *pass,
		   size_t passlen, const struct kdf_params *kdf,
		   const struct vol_keys *keys)
{
	struct vol_slot s = { .active = true, .kdf = *kdf };
	uint8_t *kek;
	int err;

	if (slot < 0 || slot >= VOL_MAX_SLOTS || kdf_check_params(kdf))
		return -EINVAL;
	if (getrandom(s.salt, sizeof(s.salt), 0) != sizeof(s.salt))
		return -EIO;
	kek = secmem_alloc(KDF_OUT_SIZE);
	if (!kek)
		return -ENOMEM;
	err = kdf_derive(kek, pass, passlen, s.salt, kdf);
	if (!err)
		err = aes_kw_wrap(s.wrapped, (const uint8_t *)keys,
				  VOL_BLOB_SIZE, kek);
	secmem_free(kek);
	if (!err)
		h->slots[slot] = s;
	return err;
}

/* see volume.h */
int vol_slot_open(const struct vol_header *h, int slot, const char *pass,
		  size_t passlen, struct vol_keys **out)
{
	const struct vol_slot *s;
	struct vol_keys *k;
	uint8_t *kek;
	int err;

	*out = NULL;
	if (slot < 0 || slot >= VOL_MAX_SLOTS)
		return -EINVAL;
	s = &h->slots[slot];
	if (!s->active)
		return -ENOENT;
	kek = secmem_alloc(KDF_OUT_SIZE);
	k = secmem_alloc(sizeof(*k));
	if (!kek || !k) {
		err = -ENOMEM;
		goto out;
	}
	err = kdf_derive(kek, pass, passlen, s->salt, &s->kdf);
	if (err)
		goto out;
	/* RFC 3394's integrity check is what tells a wrong passphrase. */
	err = aes_kw_unwrap((uint8_t *)k, s->wrapped, VOL_WRAPPED_SIZE, kek);
	if (err == -EBADMSG)
		err = -EACCES;
out:
	secmem_free(kek);
	if (err)
		secmem_free(k);
	else
		*out = k;
	return err;
}

/* fmt_kib() - @kib as "N MiB" or, below 1 MiB, "N KiB". */
static const char *fmt_kib(char *buf, size_t len, uint64_t kib)
{
	if (kib >= 1024)
		snprintf(buf, len, "%llu MiB", (unsigned long long)(kib / 1024));
	else
		snprintf(buf, len, "%llu KiB", (unsigned long long)kib);
	return buf;
}

/*
 * judge_costs() - which slots vol_unlock() would try (@only, or every
 * active one if < 0) cost more than this machine pays for a header not
 * authenticated yet: one bit per slot in *costly. Runs before the
 * passphrase is read, so a hostile header fails a boot-time mount at once.
 * Return: 0; -E2BIG with @err if every slot to try is too costly; -ENOMEM
 * the speed probe could not run.
 */
static int judge_costs(const struct vol_header *h, int only,
		       const char *dirpath, unsigned int *costly, char *err,
		       size_t errlen)
{
	struct kdf_limits lim;
	const struct kdf_params *k = NULL;
	char asked[32], allowed[32];
	int n = 0, ncostly = 0, first = -1, rc;

	*costly = 0;
	rc = kdf_machine_limits(&lim);
	if (rc) {
		snprintf(err, errlen, "%s: cannot measure this machine's "
			 "Argon2id speed: %s", dirpath, strerror(-rc));
		return rc;
	}
	for (int i = 0; i < VOL_MAX_SLOTS; i++) {
		if (!h->slots[i].active || (only >= 0 && only != i))
			continue;
		n++;
		if (kdf_cost_affordable(&h->slots[i].kdf, &lim))
			continue;
		*costly |= 1u << i;
		ncostly++;
		if (first < 0)
			first = i;
	}
	if (!n || ncostly < n)
		return 0;
	k = &h->slots[first].kdf;
	snprintf(err, errlen, "%s: key slot %d%s asks for Argon2id with %s, "
		 "%u iterations, %u lanes (about %.0f s here); this machine "
		 "allows %s and about %.0f s per slot before the header is "
		 "authenticated (was it tampered with?); --allow-costly-kdf "
		 "tries anyway", dirpath, first,
		 ncostly > 1 ? " (like every other slot)" : "",
		 fmt_kib(asked, sizeof(asked), k->m_cost_kib), k->t_cost,
		 k->lanes, kdf_estimate_ms(k, &lim) / 1000,
		 lim.mem_kib == UINT64_MAX ? "any memory" :
		 fmt_kib(allowed, sizeof(allowed), lim.mem_kib),
		 lim.max_ms / 1000);
	return -E2BIG;
}

/* The volume key file of @req into v->keys (locked memory), and *@ki. */
static int read_key(const struct vol_unlock_req *req, struct vol *v,
		    struct vol_key_info *ki, char *err, size_t errlen)
{
	const char *why;
	int rc;

	v->keys = secmem_alloc(sizeof(*v->keys));
	if (!v->keys)
		return -ENOMEM;
	rc = vol_key_read_file(req->volume_key_file, v->keys, ki, &why);
	if (rc) {
		snprintf(err, errlen, "%s: %s", req->volume_key_file,
			 why ? why : strerror(-rc));
		return -ENOKEY; /* no usable key, like a bad passfile */
	}
	return 0;
}

/*
 * unlock_with_key() - the volume key file of @req opens the header in
 * @v: its description, if it has one, must be this volume's, and the
 * header MAC is the proof that the key is the right one.
 */
static int unlock_with_key(const char *dirpath, const struct vol_unlock_req *req,
			   struct vol *v, char *err, size_t errlen)
{
	struct vol_key_info ki;
	char want[37], have[37];
	int rc;

	rc = read_key(req, v, &ki, err, errlen);
	if (rc)
		return rc;
	if (ki.text_version == 2 && memcmp(ki.uuid, v->hdr.uuid, 16)) {
		vol_uuid_format(want, ki.uuid);
		vol_uuid_format(have, v->hdr.uuid);
		snprintf(err, errlen, "%s: this volume key is for the volume "
			 "with UUID %s; %s is %s", req->volume_key_file, want,
			 dirpath, have);
		return -EACCES;
	}
	if (!vol_verify_mac(&v->hdr, v->keys)) {
		snprintf(err, errlen, "%s: this volume key does not belong to "
			 "%s", req->volume_key_file, dirpath);
		return -EACCES;
	}
	if (ki.text_version == 2 && ki.flags != v->hdr.flags) {
		snprintf(err, errlen, "%s: the key text says flags 0x%x, the "
			 "header of %s (which the key authenticates) says 0x%x",
			 req->volume_key_file, ki.flags, dirpath, v->hdr.flags);
		return -EKEYREJECTED;
	}
	return 0;
}

/*
 * unlock_headerless() - no usable header at @dirfd (@why: -ENOENT or
 * -EBADMSG), but a volume key file: a version 2 text describes the
 * volume by itself (FORMAT.md 2.6), a version 1 text only when the
 * names in the root prove encrypted names. Either way the directory
 * must not contradict the description (vol_probe()).
 */
static int unlock_headerless(int dirfd, const char *dirpath, int why_none,
			     const struct vol_unlock_req *req, struct vol *v,
			     char *err, size_t errlen)
{
	struct vol_key_info ki;
	const char *why;
	int rc;

	rc = read_key(req, v, &ki, err, errlen);
	if (rc)
		return rc;
	if (ki.text_version == 1)
		ki.flags = 0; /* to be proven by the names */
	rc = vol_probe(dirfd, v->keys, ki.flags, &why);
	/*
	 * Unproven is enough only for what the key text fully describes:
	 * not a version 1 key, and not a reverse-mode volume, whose
	 * plaintext directory (header .xtsfs.volume) must never be mounted
	 * as if it held ciphertext.
	 */
	if (rc == 0 && ki.text_version == 1)
		why = "it is a version 1 key (bare hex digits), which does not "
		      "say how the volume was made, and no name in the root "
		      "proves encrypted names; print a version 2 key from a "
		      "header backup (xtsfs-passwd --print-volume-key), or "
		      "add its first line by hand (doc/FORMAT.md 2.6)";
	else if (rc == 0 && (ki.flags & VOL_FLAG_REVERSE))
		why = "the volume was made for reverse mode, and no name in "
		      "the root proves that this is a copy of its view rather "
		      "than its plaintext directory; restore the header from "
		      "a backup";
	else if (rc == 0)
		why = NULL;
	if (rc < 0 || (rc == 0 && why)) {
		snprintf(err, errlen, "%s has no usable volume header (%s), "
			 "and %s cannot stand in for it: %s", dirpath,
			 why_none == -ENOENT ? "none" : "both copies corrupt",
			 req->volume_key_file, rc == -EKEYREJECTED ||
			 rc == 0 ? why : strerror(-rc));
		return rc == 0 ? -ENOENT : rc == -EKEYREJECTED ? -EACCES : rc;
	}
	memset(&v->hdr, 0, sizeof(v->hdr));
	v->hdr.version = ki.format;
	v->hdr.flags = ki.flags;
	memcpy(v->hdr.uuid, ki.uuid, 16);
	memset(&v->info, 0, sizeof(v->info));
	v->info.headerless = true;
	v->info.header_err = why_none;
	return 0;
}

/*
 * ask_pass() - the passphrase from req->get_pass, in locked memory
 * (*@pass, secmem_free() it). Return: 0, or -ENOKEY with @err.
 */
static int ask_pass(const char *dirpath, const struct vol_unlock_req *req,
		    char **pass, size_t *passlen, char *err, size_t errlen)
{
	int rc;

	if (!req->get_pass) {
		snprintf(err, errlen, "%s: no passphrase given", dirpath);
		return -ENOKEY;
	}
	*pass = secmem_alloc(VOL_PASS_MAX);
	if (!*pass) {
		snprintf(err, errlen, "cannot lock memory for the passphrase: "
			 "%s (see ulimit -l)", strerror(errno));
		return -ENOKEY;
	}
	if (errlen)
		err[0] = '\0';
	rc = req->get_pass(req->get_pass_arg, *pass, VOL_PASS_MAX, passlen,
			   err, errlen);
	if (!rc && (*passlen == 0 || *passlen > VOL_PASS_MAX)) {
		snprintf(err, errlen, "%s: the passphrase source gave %zu "
			 "bytes (1..%d allowed)", dirpath, *passlen,
			 VOL_PASS_MAX);
		rc = -EINVAL;
	}
	if (rc) {
		secmem_free(*pass);
		*pass = NULL;
		if (errlen && !err[0])
			snprintf(err, errlen, "%s: no passphrase: %s", dirpath,
				 strerror(-rc));
		return -ENOKEY; /* @err says why */
	}
	return 0;
}

/*
 * unlock_slots() - ask for the passphrase and try it on the key slots of
 * the header in @v, then verify the header MAC.
 */
static int unlock_slots(const char *dirpath, const struct vol_unlock_req *req,
			struct vol *v, char *err, size_t errlen)
{
	char *pass = NULL;
	size_t passlen = 0;
	unsigned int costly = 0; /* slots too costly to try (judge_costs) */
	int rc, nskipped = 0;

	if (req->slot >= VOL_MAX_SLOTS ||
	    (req->slot >= 0 && !v->hdr.slots[req->slot].active)) {
		snprintf(err, errlen, "%s: key slot %d is not in use", dirpath,
			 req->slot);
		return -ENOENT;
	}
	if (!req->allow_costly_kdf) {
		rc = judge_costs(&v->hdr, req->slot, dirpath, &costly, err,
				 errlen);
		if (rc)
			return rc;
	}
	rc = ask_pass(dirpath, req, &pass, &passlen, err, errlen);
	if (rc)
		return rc;
	rc = -EACCES;
	for (int i = 0; i < VOL_MAX_SLOTS && rc == -EACCES; i++) {
		if (!v->hdr.slots[i].active || (req->slot >= 0 && req->slot != i))
			continue;
		if (costly & 1u << i) {
			nskipped++;
			continue;
		}
		if (req->on_try_slot)
			req->on_try_slot(req->on_try_slot_arg, i,
					 &v->hdr.slots[i].kdf);
		rc = vol_slot_open(&v->hdr, i, pass, passlen, &v->keys);
		if (!rc)
			v->slot = i;
	}
	secmem_free(pass); /* wipes it */
	if (rc == -EACCES && nskipped) {
		snprintf(err, errlen, "%s: wrong passphrase (no key slot opens "
			 "with it; %d slot%s too costly for this machine %s not "
			 "tried: --allow-costly-kdf tries %s)", dirpath, nskipped,
			 nskipped == 1 ? "" : "s", nskipped == 1 ? "was" : "were",
			 nskipped == 1 ? "it" : "them");
		return rc;
	}
	if (rc) {
		snprintf(err, errlen, rc == -EACCES ?
			 "%s: wrong passphrase (no key slot opens with it)" :
			 "%s: cannot unlock: %s", dirpath, strerror(-rc));
		return rc;
	}
	if (!vol_verify_mac(&v->hdr, v->keys)) {
		snprintf(err, errlen, "%s/%s: the header fails authentication: "
			 "it was modified without the volume key; refusing it",
			 dirpath, vol_file_name(&v->hdr));
		return -EKEYREJECTED;
	}
	return 0;
}

static int unlock_read(int dirfd, const char *dirpath, int rc,
		       const struct vol_unlock_req *req, struct vol *v,
		       char *err, size_t errlen)
{
	if ((rc == -ENOENT || rc == -EBADMSG) && req->volume_key_file)
		return unlock_headerless(dirfd, dirpath, rc, req, v, err,
					 errlen);
	if (rc) {
		snprintf(err, errlen, "%s/%s: %s%s", dirpath,
			 rc == -ENOENT ? VOL_FILE_NAME : vol_file_name(&v->hdr),
			 v->info.file_refused ? "refused: " : "",
			 v->info.file_refused ? v->info.file_refused :
			 vol_strerror(rc));
		return rc;
	}
	if (req->volume_key_file)
		return unlock_with_key(dirpath, req, v, err, errlen);
	return unlock_slots(dirpath, req, v, err, errlen);
}

/* see volume.h */
int vol_unlock(int dirfd, const char *dirpath, const struct vol_unlock_req *req,
	       struct vol *v, char *err, size_t errlen)
{
	int rc;

	memset(v, 0, sizeof(*v));
	v->slot = -1;
	rc = vol_read(dirfd, &v->hdr, &v->info);
	rc = unlock_read(dirfd, dirpath, rc, req, v, err, errlen);
	if (rc)
		vol_close(v);
	return rc;
}

/* see volume.h */
int vol_unlock_backup(const char *path, const struct vol_unlock_req *req,
		      struct vol *v, char *err, size_t errlen)
{
	int rc;

	memset(v, 0, sizeof(*v));
	v->slot = -1;
	rc = vol_read_path(path, &v->hdr, &v->info);
	if (rc) {
		snprintf(err, errlen, "%s: %s%s", path, v->info.file_refused ?
			 "refused: " : "", v->info.file_refused ?
			 v->info.file_refused : rc == -ENOENT ? strerror(ENOENT) :
			 vol_strerror(rc));
	} else {
		rc = req->volume_key_file ?
		     unlock_with_key(path, req, v, err, errlen) :
		     unlock_slots(path, req, v, err, errlen);
	}
	if (rc)
		vol_close(v);
	return rc;
}

/* see volume.h */
void vol_close(struct vol *v)
{
	vol_keys_free(v->keys);
	v->keys = NULL;
}

/* see volume.h */
const char *vol_strerror(int err)
{
	switch (err) {
	case -ENOENT:
		return "no xtsfs volume header here (not an xtsfs cipher "
		       "directory, or the header was deleted)";
	case -EBADMSG:
		return "the volume header is corrupt in both copies";
	case -EPROTONOSUPPORT:
		return "the volume header uses a format version or feature "
		       "this xtsfs does not support (a newer xtsfs made it?)";
	case -EINVAL:
		return "the volume header holds impossible values";
	case -EACCES:
		return "wrong passphrase";
	case -EKEYREJECTED:
		return "the volume header fails authentication";
	case -E2BIG:
		return "every key slot asks for more Argon2id memory or time "
		       "than this machine allows before authentication";
	default:
		return strerror(-err);
	}
}
