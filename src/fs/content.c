/* SPDX-License-Identifier: Apache-2.0 */
/*
 * content.c - plaintext ranges on an encrypted lower file
 * (doc/FORMAT.md 3.4-3.6; see content.h).
 *
 * Terms: "unit" u covers plaintext [4096u, 4096u + len(u)) and is stored
 * at lower offset D + 4096u with the same length, D the volume's data
 * offset (content_hdr.doff: 40, or 4096 in the aligned layout; layout.h).
 * len(u) is 4096 except
 * for the last unit of the file. The last unit is encrypted with XTS
 * ciphertext stealing when it has 16..4095 bytes, and as a *short tail*
 * (a 16-byte block split between the data and the header's tail slot)
 * when it has 1..15 bytes. A unit whose stored bytes are all zero is a
 * hole and reads as zeros.
 */
#include "content.h"
#include "log.h"
#include "scratch.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

/* Shorthand for buffer sizes; every offset comes from layout.h. */
#define U LAYOUT_UNIT_SIZE

/* ---- small helpers ---------------------------------------------------- */

static bool all_zero(const uint8_t *p, size_t len)
{
	/* Ciphertext is almost never zero at byte 0: this exits at once. */
	for (size_t i = 0; i < len; i++)
		if (p[i])
			return false;
	return true;
}

static ssize_t pread_full(int fd, void *buf, size_t len, uint64_t off)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = pread(fd, (uint8_t *)buf + got, len - got,
				  (off_t)(off + got));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

static int pwrite_full(int fd, const void *buf, size_t len, uint64_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pwrite(fd, (const uint8_t *)buf + done, len - done,
				   (off_t)(off + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		done += (size_t)n;
	}
	return 0;
}

/* A short pread of data the size says exists: the file changed under us. */
static int read_exact(int fd, void *buf, size_t len, uint64_t off)
{
	ssize_t n = pread_full(fd, buf, len, off);

	if (n < 0)
		return (int)n;
	return (size_t)n == len ? 0 : -EIO;
}

/* ---- one unit ----------------------------------------------------------- */

/*
 * The cipher calls. Each fails only on arguments outside its contract
 * (a unit index that wraps 2^64, a unit length outside 16..2^24): no
 * file can make them, units being bounded by file sizes, so a failure is
 * a bug here, not bad data.
 */
static void enc_units(const struct xts_ctx *xts, uint8_t *c, const uint8_t *p,
		      uint64_t n, const uint8_t id[16], uint64_t u)
{
	if (xts_encrypt_units(xts, c, p, (size_t)n, id, u) != 0)
		xtsfs_bug("xts_encrypt_units: %llu units at unit %llu",
			  (unsigned long long)n, (unsigned long long)u);
}

static void dec_units(const struct xts_ctx *xts, uint8_t *p, const uint8_t *c,
		      uint64_t n, const uint8_t id[16], uint64_t u)
{
	if (xts_decrypt_units(xts, p, c, (size_t)n, id, u) != 0)
		xtsfs_bug("xts_decrypt_units: %llu units at unit %llu",
			  (unsigned long long)n, (unsigned long long)u);
}

static void enc_one(const struct xts_ctx *xts, uint8_t *c, const uint8_t *p,
		    size_t len, const uint8_t tw[16])
{
	if (xts_encrypt_one(xts, c, p, len, tw) != 0)
		xtsfs_bug("xts_encrypt_one: %zu bytes", len);
}

static void dec_one(const struct xts_ctx *xts, uint8_t *p, const uint8_t *c,
		    size_t len, const uint8_t tw[16])
{
	if (xts_decrypt_one(xts, p, c, len, tw) != 0)
		xtsfs_bug("xts_decrypt_one: %zu bytes", len);
}

/* Tweak input of the short tail of @n bytes in unit @u (FORMAT 3.5). */
static void tail_tweak(uint8_t tw[16], const uint8_t id[16], uint64_t u,
		       uint32_t n)
{
	uint64_t v = (UINT64_C(1) << 63) + n;

	xts_unit_tweak(tw, id, u);
	for (int b = 0; b < 8; b++)
		tw[8 + b] ^= (uint8_t)(v >> (8 * b));
}

/*
 * Decrypt unit @u of @len bytes from @c into @p (may be the same).
 * @slot: the header's tail slot (only read when len < 16).
 */
static int unit_decrypt(const struct xts_ctx *xts, const uint8_t id[16],
			uint64_t u, uint32_t len, const uint8_t *c,
			const uint8_t slot[16], uint8_t *p)
{
	uint8_t tw[16], blk[16];

	if (!layout_is_tail_len(len)) {
		if (all_zero(c, len)) {
			memset(p, 0, len);
			return 0;
		}
		if (len == U) {
			dec_units(xts, p, c, 1, id, u);
			return 0;
		}
		xts_unit_tweak(tw, id, u);
		dec_one(xts, p, c, len, tw);
		return 0;
	}
	memcpy(blk, c, len);
	memcpy(blk + len, slot + len, 16 - len);
	if (all_zero(blk, 16)) {
		memset(p, 0, len);
		return 0;
	}
	tail_tweak(tw, id, u, len);
	dec_one(xts, blk, blk, 16, tw);
	if (!all_zero(blk + len, 16 - len)) {
		explicit_bzero(blk, sizeof(blk));
		return -EIO; /* torn or tampered tail: no plaintext we trust */
	}
	memcpy(p, blk, len);
	explicit_bzero(blk, sizeof(blk));
	return 0;
}

/*
 * Encrypt unit @u of @len bytes from @p into @c. For a short tail,
 * @slot receives the new tail slot.
 */
static void unit_encrypt(const struct xts_ctx *xts, const uint8_t id[16],
			 uint64_t u, uint32_t len, const uint8_t *p,
			 uint8_t *c, uint8_t slot[16])
{
	uint8_t tw[16], blk[16];

	if (len == U) {
		enc_units(xts, c, p, 1, id, u);
		return;
	}
	if (!layout_is_tail_len(len)) {
		xts_unit_tweak(tw, id, u);
		enc_one(xts, c, p, len, tw);
		return;
	}
	memset(blk, 0, sizeof(blk));
	memcpy(blk, p, len);
	tail_tweak(tw, id, u, len);
	enc_one(xts, blk, blk, 16, tw);
	memcpy(c, blk, len);
	memset(slot, 0, 16);
	memcpy(slot + len, blk + len, 16 - len);
}

static int read_slot(int fd, uint8_t slot[16])
{
	return read_exact(fd, slot, FILEHDR_SLOT_SIZE, FILEHDR_SLOT_OFF);
}

static int write_slot(int fd, const uint8_t slot[16])
{
	return pwrite_full(fd, slot, FILEHDR_SLOT_SIZE, FILEHDR_SLOT_OFF);
}

/*
 * Read and decrypt unit @u of a file of @size bytes (data offset @d) into
 * @p (4096 bytes, zero-filled past the unit's length). @slot: the current
 * tail slot.
 */
static int unit_load(const struct xts_ctx *xts, int fd, uint32_t d,
		     const uint8_t id[16], uint64_t size, uint64_t u,
		     const uint8_t slot[16], uint8_t p[U])
{
	uint32_t len = layout_unit_len(size, u);
	int err;

	memset(p, 0, U);
	if (!len)
		return 0;
	err = read_exact(fd, p, len, layout_unit_coff(d, u));
	if (err)
		return err;
	return unit_decrypt(xts, id, u, len, p, slot, p);
}

/* unit_load() of the old last unit @u (@len bytes), read already into @c. */
static int old_last_plain(const struct xts_ctx *xts, const uint8_t id[16],
			  uint64_t u, uint32_t len, const uint8_t *c,
			  const uint8_t slot[16], uint8_t p[U])
{
	memset(p, 0, U);
	return unit_decrypt(xts, id, u, len, c, slot, p);
}

/* ---- header ------------------------------------------------------------- */

/* see content.h */
int64_t content_plain_size(uint32_t doff, uint64_t lower)
{
	return layout_plain_size(doff, lower);
}

/* see content.h */
int content_init_header(int fd, uint32_t doff, struct content_hdr *hdr)
{
	struct fileheader fh = { 0 }; /* no tail yet: the slot is zeros */
	uint8_t buf[FILEHDR_SIZE];
	size_t got = 0;

	while (got < sizeof(hdr->id)) {
		ssize_t n = getrandom(hdr->id + got, sizeof(hdr->id) - got, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		got += (size_t)n;
	}
	memcpy(fh.id, hdr->id, sizeof(fh.id));
	hdr->doff = doff;
	fileheader_encode(buf, &fh);
	return pwrite_full(fd, buf, sizeof(buf), 0);
}

/* see content.h */
int content_read_header(int fd, uint32_t doff, struct content_hdr *hdr)
{
	uint8_t buf[FILEHDR_SIZE];
	ssize_t n = pread_full(fd, buf, sizeof(buf), 0);
	struct fileheader fh;
	int err;

	if (n < 0)
		return (int)n;
	if (n == 0)
		return -ENODATA;
	err = fileheader_decode(&fh, buf, (size_t)n);
	if (err)
		return err;
	memcpy(hdr->id, fh.id, sizeof(hdr->id));
	hdr->doff = doff;
	return 0;
}

/* ---- read --------------------------------------------------------------- */

/* see content.h */
ssize_t content_read(const struct xts_ctx *xts, int fd,
		     const struct content_hdr *hdr, uint64_t psize,
		     uint8_t *buf, size_t len, uint64_t off)
{
	uint8_t slot[16] = { 0 };
	struct layout_span sp;
	uint64_t u0, u1, u, span;
	uint8_t *cb;
	int err;

	if (off >= psize || len == 0)
		return 0;
	if (len > psize - off)
		len = (size_t)(psize - off);
	layout_span(&sp, psize, off, len);
	u0 = sp.u0;
	u1 = sp.u0 + sp.n - 1;
	span = sp.len;
	/* Unit-aligned reads decrypt in place in the caller's buffer. */
	if (off == layout_unit_start(u0) && len == span)
		cb = buf;
	else if (!(cb = scratch_get(SCRATCH_WRITE, span)))
		return -ENOMEM;
	err = read_exact(fd, cb, span, layout_unit_coff(hdr->doff, u0));
	if (err)
		return err;
	if (layout_has_tail(psize) && u1 == layout_last_unit(psize)) {
		err = read_slot(fd, slot);
		if (err)
			return err;
	}
	for (u = u0; u <= u1;) {
		uint32_t ulen = layout_unit_len(psize, u);
		uint8_t *p = cb + (u - u0) * U;
		uint64_t run = 0;

		/* Consecutive full data units go to the core in one call. */
		while (u + run <= u1 && layout_unit_len(psize, u + run) == U &&
		       !all_zero(p + run * U, U))
			run++;
		if (run) {
			dec_units(xts, p, p, run, hdr->id, u);
			u += run;
			continue;
		}
		err = unit_decrypt(xts, hdr->id, u, ulen, p, slot, p);
		if (err)
			return err;
		u++;
	}
	if (cb != buf)
		memcpy(buf, cb + (off - layout_unit_start(u0)), len);
	return (ssize_t)len;
}

/* ---- write -------------------------------------------------------------- */

/*
 * Reserve lower space for [start, start + len) without changing the size,
 * so a full disk fails here, before anything is overwritten. Filesystems
 * without fallocate simply skip this. With @seekable (the lower
 * filesystem's SEEK_HOLE is exact: CONTENT_HOLES_SEEKABLE), a range with
 * no hole that ends inside the file is already allocated and needs no new
 * space: one lseek instead of a fallocate, which on ext4 costs a journal
 * handle and an inode update per call (up to a third of a warm random
 * 4 KiB overwrite's time). Unwritten extents without cached data look
 * like holes: those still get the (then harmless) fallocate. The lseek
 * moves the file offset, which nothing here uses (every access is
 * positioned).
 */
static int reserve(int fd, uint64_t start, uint64_t len, bool seekable)
{
	off_t hole;

	if (!len)
		return 0;
	if (seekable) {
		hole = lseek(fd, (off_t)start, SEEK_HOLE);
		if (hole >= 0 && (uint64_t)hole >= start + len)
			return 0;
	}
	if (fallocate(fd, FALLOC_FL_KEEP_SIZE, (off_t)start, (off_t)len) == 0)
		return 0;
	if (errno == EOPNOTSUPP || errno == ENOSYS)
		return 0;
	return -errno;
}

/* struct wr - one content_write() on its way. */
struct wr {
	const struct xts_ctx *xts;
	const uint8_t *id;        /* the file id */
	int fd;
	uint32_t d;               /* the data offset */
	uint64_t old, size;       /* plaintext size before and after */
	uint64_t off, len;        /* the plaintext written */
	uint64_t u0, u1, span;    /* its units, inclusive, and their bytes */
	uint64_t uo;              /* growing: the old last unit ... */
	uint32_t lo;              /* ... and its length */
	bool short_last;          /* ... which is shorter than a unit */
	bool fix;                 /* ... and lies before the write */
	uint64_t ks, kl;          /* old plaintext range [ks, ks+kl) kept */
	uint8_t *kc;              /* ... its old ciphertext */
	uint8_t *cb;              /* the new ciphertext of the span */
	bool tail_written;        /* the span ends in a new short tail */
	uint8_t old_slot[16], new_slot[16];
};

/*
 * A write that grows the file can fail part-way (ENOSPC, EFBIG) after it
 * has overwritten what it overlaps of the old file; the restore then
 * puts back the old size and the old ciphertext of [ks, old), so a
 * failed write changes nothing. That is the part of the span inside the
 * old size and, when the old last unit is short, that unit: growing
 * turns it into a full one, encrypted anew in place, whether the write
 * starts in it or beyond it (fix: then it is re-encrypted on its own);
 * the old, shorter file would read the first bytes of the new ciphertext
 * as its last unit. Appends at the end keep at most that short unit: one
 * read.
 */
static int wr_keep(struct wr *w)
{
	if (w->size > w->old && w->old > 0) {
		w->uo = layout_last_unit(w->old);
		w->lo = layout_unit_len(w->old, w->uo);
		w->short_last = w->lo < U;
		w->fix = w->short_last && w->uo < w->u0;
		w->ks = layout_unit_start(w->u0) < w->old ?
			layout_unit_start(w->u0) :
			w->short_last ? layout_unit_start(w->uo) : w->old;
		w->kl = w->old - w->ks;
	}
	if (!w->kl)
		return 0;
	w->kc = scratch_get(SCRATCH_KEEP, w->kl);
	if (!w->kc)
		return -ENOMEM;
	return read_exact(w->fd, w->kc, w->kl, layout_coff(w->d, w->ks));
}

/* The new ciphertext of the span into w->cb, from @buf. */
static int wr_encrypt(struct wr *w, const uint8_t *buf)
{
	const uint64_t off = w->off, len = w->len;
	uint8_t tmp[U];
	int err = 0;

	for (uint64_t u = w->u0; u <= w->u1;) {
		uint32_t nlen = layout_unit_len(w->size, u);
		uint64_t start = layout_unit_start(u);
		uint8_t *c = w->cb + (u - w->u0) * U;

		if (off <= start && off + len >= start + nlen) {
			/* wholly covered: encrypt straight from the caller */
			uint64_t run = 0;

			while (u + run <= w->u1 &&
			       layout_unit_len(w->size, u + run) == U &&
			       off + len >= layout_unit_start(u + run + 1))
				run++;
			if (run) {
				enc_units(w->xts, c, buf + (start - off), run,
					  w->id, u);
				u += run;
				continue;
			}
			unit_encrypt(w->xts, w->id, u, nlen, buf + (start - off),
				     c, w->new_slot);
		} else {
			/* partial: read, decrypt, patch, re-encrypt */
			uint64_t from = off > start ? off : start;
			uint64_t to = off + len < start + nlen ? off + len
							       : start + nlen;

			err = w->short_last && u == w->uo ?
				old_last_plain(w->xts, w->id, w->uo, w->lo,
					       w->kc + (start - w->ks),
					       w->old_slot, tmp) :
				unit_load(w->xts, w->fd, w->d, w->id, w->old,
					  u, w->old_slot, tmp);
			if (err)
				break;
			memcpy(tmp + (from - start), buf + (from - off),
			       to - from);
			unit_encrypt(w->xts, w->id, u, nlen, tmp, c,
				     w->new_slot);
		}
		if (layout_is_tail_len(nlen))
			w->tail_written = true;
		u++;
	}
	explicit_bzero(tmp, sizeof(tmp));
	return err;
}

/*
 * Fail on a full disk before overwriting anything: reserve the part of
 * the span inside the old size (holes in it need space too; with
 * CONTENT_HOLES_SEEKABLE a part without holes is skipped), and the old
 * short last unit a write beyond it rewrites in place (on a copy-on-write
 * filesystem even that needs space). What lies beyond the old size needs
 * no reservation: if writing it fails, the restore truncates it away and
 * puts the old last unit back, so an append (most writes) costs no
 * fallocate, and the lower filesystem keeps its delayed allocation.
 */
static int wr_reserve(const struct wr *w, bool seekable)
{
	uint64_t s0 = layout_unit_start(w->u0);
	int err = w->old > s0 ?
		  reserve(w->fd, layout_unit_coff(w->d, w->u0),
			  w->old - s0 < w->span ? w->old - s0 : w->span,
			  seekable) : 0;

	if (!err && w->fix)
		err = reserve(w->fd, layout_unit_coff(w->d, w->uo), U,
			      seekable);
	return err;
}

/*
 * Put back the old ciphertext the write overwrote and the old size (a
 * longer file would reinterpret the old last unit).
 */
static void wr_restore(const struct wr *w)
{
	if (w->kl)
		(void)pwrite_full(w->fd, w->kc, w->kl, layout_coff(w->d, w->ks));
	if (w->size > w->old)
		(void)!ftruncate(w->fd, (off_t)layout_coff(w->d, w->old));
	if (layout_has_tail(w->old))
		(void)write_slot(w->fd, w->old_slot);
}

/* Store what wr_encrypt() made; on failure put the old file back. */
static int wr_store(struct wr *w)
{
	uint8_t fix_new[U];
	int err = 0;

	if (w->fix) {
		err = old_last_plain(w->xts, w->id, w->uo, w->lo, w->kc,
				     w->old_slot, fix_new);
		if (err)
			return err;
		unit_encrypt(w->xts, w->id, w->uo, U, fix_new, fix_new, NULL);
		err = pwrite_full(w->fd, fix_new, U,
				  layout_unit_coff(w->d, w->uo));
	}
	if (!err)
		err = pwrite_full(w->fd, w->cb, w->span,
				  layout_unit_coff(w->d, w->u0));
	/* a new tail slot, or zeros: no tail any more */
	if (!err && (w->tail_written ||
		     (layout_has_tail(w->old) && !layout_has_tail(w->size))))
		err = write_slot(w->fd, w->new_slot);
	if (err)
		wr_restore(w);
	return err;
}

/* see content.h */
ssize_t content_write(const struct xts_ctx *xts, int fd,
		      const struct content_hdr *hdr, uint64_t *psize,
		      const uint8_t *buf, size_t len, uint64_t off,
		      unsigned flags)
{
	struct wr w = { .xts = xts, .id = hdr->id, .fd = fd, .d = hdr->doff,
			.old = *psize, .off = off, .len = len };
	struct layout_span sp;
	int err;

	if (len == 0)
		return 0;
	if (off > CONTENT_MAX_SIZE || len > CONTENT_MAX_SIZE - off)
		return -EFBIG;
	w.size = off + len > w.old ? off + len : w.old;
	layout_span(&sp, w.size, off, len);
	w.u0 = sp.u0;
	w.u1 = sp.u0 + sp.n - 1;
	w.span = sp.len;
	err = layout_has_tail(w.old) ? read_slot(fd, w.old_slot) : 0;
	if (!err)
		err = wr_keep(&w);
	if (err)
		return err;
	w.cb = scratch_get(SCRATCH_WRITE, w.span);
	if (!w.cb)
		return -ENOMEM;
	err = wr_encrypt(&w, buf);
	if (!err)
		err = wr_reserve(&w, flags & CONTENT_HOLES_SEEKABLE);
	if (!err)
		err = wr_store(&w);
	if (err)
		return err;
	*psize = w.size;
	return (ssize_t)len;
}

/* ---- truncate ----------------------------------------------------------- */

/* see content.h */
int content_truncate(const struct xts_ctx *xts, int fd,
		     const struct content_hdr *hdr, uint64_t *psize,
		     uint64_t size)
{
	const uint64_t old = *psize;
	const uint32_t d = hdr->doff;
	uint8_t old_slot[16] = { 0 }, new_slot[16] = { 0 };
	uint8_t p[U], c[U], saved[U];
	uint64_t u;
	uint32_t olen = 0, nlen = 0;
	bool rewrite = false;
	int err;

	if (size > CONTENT_MAX_SIZE)
		return -EFBIG;
	if (size == old)
		return 0;
	if (layout_has_tail(old)) {
		err = read_slot(fd, old_slot);
		if (err)
			return err;
	}
	if (size < old) {
		/* the unit the new end falls in is re-encrypted shorter */
		u = layout_unit_of(size);
		nlen = layout_unit_len(size, u);
		rewrite = nlen != 0;
	} else {
		/* the old last unit, if short, is re-encrypted longer */
		u = old ? layout_last_unit(old) : 0;
		nlen = layout_unit_len(size, u);
		rewrite = old % U != 0;
	}
	if (rewrite) {
		olen = layout_unit_len(old, u);
		err = read_exact(fd, saved, olen, layout_unit_coff(d, u));
		if (!err)
			err = unit_load(xts, fd, d, hdr->id, old, u, old_slot,
					p);
		if (err)
			return err;
		unit_encrypt(xts, hdr->id, u, nlen, p, c, new_slot);
		explicit_bzero(p, sizeof(p));
		if (size > old) {
			/* from the old end to the new end of unit u */
			err = reserve(fd, layout_coff(d, old),
				      layout_unit_coff(d, u) + nlen -
				      layout_coff(d, old), false);
			if (err)
				return err;
		}
		err = pwrite_full(fd, c, nlen, layout_unit_coff(d, u));
		if (err)
			goto restore;
	}
	if (ftruncate(fd, (off_t)layout_coff(d, size)) != 0) {
		err = -errno;
		goto restore;
	}
	if (layout_has_tail(size) || layout_has_tail(old)) {
		/* new tail: its slot; no tail any more: zeros */
		if (!(rewrite && layout_is_tail_len(nlen)))
			memset(new_slot, 0, sizeof(new_slot));
		err = write_slot(fd, new_slot);
		if (err)
			goto restore;
	}
	*psize = size;
	return 0;
restore:
	if (rewrite)
		(void)pwrite_full(fd, saved, olen, layout_unit_coff(d, u));
	(void)!ftruncate(fd, (off_t)layout_coff(d, old));
	if (layout_has_tail(old))
		(void)write_slot(fd, old_slot);
	return err;
}

/* ---- fallocate ---------------------------------------------------------- */

/*
 * Lower bytes [@d + @start, @d + @start + @len) become zeros: one punch,
 * so that every lower block wholly inside is freed (in the compact layout
 * units do not start on block boundaries: a punch per unit would free
 * none), or written zeros where the lower filesystem cannot punch.
 */
static int punch_units(int fd, uint32_t d, uint64_t start, uint64_t len)
{
	static const uint8_t zeros[U];
	uint64_t done;
	int err;

	if (!len)
		return 0;
	if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
		      (off_t)layout_coff(d, start), (off_t)len) == 0)
		return 0;
	if (errno != EOPNOTSUPP)
		return -errno;
	for (done = 0; done < len; done += U) {
		err = pwrite_full(fd, zeros, len - done < U ? len - done : U,
				  layout_coff(d, start + done));
		if (err)
			return err;
	}
	return 0;
}

/* Zero plaintext [a, b), a < b <= size: whole units become lower holes. */
static int zero_range(const struct xts_ctx *xts, int fd, uint32_t d,
		      const uint8_t id[16], uint64_t size, uint64_t a,
		      uint64_t b)
{
	uint8_t slot[16] = { 0 }, new_slot[16], p[U];
	uint64_t u, ua = layout_unit_of(a), ub = layout_unit_of(b - 1);
	uint64_t run_start = 0, run_len = 0;
	bool tail = layout_has_tail(size), run_tail = false;
	int err;

	if (tail) {
		err = read_slot(fd, slot);
		if (err)
			return err;
	}
	for (u = ua; u <= ub; u++) {
		uint32_t len = layout_unit_len(size, u);
		uint64_t start = layout_unit_start(u);

		if (a <= start && b >= start + len) {
			/* whole unit: punched with the run it belongs to */
			if (!run_len)
				run_start = start;
			run_len += len;
			run_tail = layout_is_tail_len(len);
			continue;
		}
		err = unit_load(xts, fd, d, id, size, u, slot, p);
		if (err)
			return err;
		/*
		 * Already zeros (often a hole): nothing changes, and a rewrite
		 * would need space there, and tear the unit on a full disk.
		 */
		if (all_zero(p, len))
			continue;
		{
			uint64_t from = a > start ? a : start;
			uint64_t to = b < start + len ? b : start + len;

			memset(p + (from - start), 0, to - from);
		}
		unit_encrypt(xts, id, u, len, p, p, new_slot);
		err = pwrite_full(fd, p, len, layout_coff(d, start));
		if (!err && layout_is_tail_len(len))
			err = write_slot(fd, new_slot);
		if (err)
			return err;
	}
	/* the whole units lie between the partial first and last ones */
	err = punch_units(fd, d, run_start, run_len);
	if (!err && run_tail) {
		/* a tail of zeros: its slot is zeros too */
		memset(slot, 0, sizeof(slot));
		err = write_slot(fd, slot);
	}
	return err;
}

/* see content.h */
int content_fallocate(const struct xts_ctx *xts, int fd,
		      const struct content_hdr *hdr, uint64_t *psize,
		      int mode, uint64_t off, uint64_t len)
{
	uint64_t end;
	int err;

	if (mode & ~(FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE |
		     FALLOC_FL_ZERO_RANGE))
		return -EOPNOTSUPP;
	if (len == 0)
		return -EINVAL;
	if (off > CONTENT_MAX_SIZE || len > CONTENT_MAX_SIZE - off)
		return -EFBIG;
	end = off + len;
	if (mode & FALLOC_FL_PUNCH_HOLE) {
		/* as the kernel: punching must keep the size */
		if (!(mode & FALLOC_FL_KEEP_SIZE) || (mode & FALLOC_FL_ZERO_RANGE))
			return -EOPNOTSUPP;
		if (off >= *psize)
			return 0;
		return zero_range(xts, fd, hdr->doff, hdr->id, *psize, off,
				  end < *psize ? end : *psize);
	}
	/* allocate first, so ENOSPC changes nothing */
	if (fallocate(fd, FALLOC_FL_KEEP_SIZE,
		      (off_t)layout_coff(hdr->doff, off),
		      (off_t)len) != 0 &&
	    errno != EOPNOTSUPP)
		return -errno;
	if (mode & FALLOC_FL_ZERO_RANGE && off < *psize) {
		err = zero_range(xts, fd, hdr->doff, hdr->id, *psize, off,
				 end < *psize ? end : *psize);
		if (err)
			return err;
	}
	if (!(mode & FALLOC_FL_KEEP_SIZE) && end > *psize)
		return content_truncate(xts, fd, hdr, psize, end);
	return 0;
}

/* ---- reverse mode ------------------------------------------------------- */

/* see content.h */
void content_encrypt_span(const struct xts_ctx *xts, const uint8_t id[16],
			  uint64_t psize, uint64_t u0, uint64_t n,
			  const uint8_t *p, uint8_t *c, uint8_t slot[16],
			  const bool *hole)
{
	uint64_t k = 0;

	while (k < n) {
		uint64_t u = u0 + k, run = 0;
		uint32_t len = layout_unit_len(psize, u);

		if (hole && hole[k]) {
			memset(c + k * U, 0, len);
			if (layout_is_tail_len(len))
				memset(slot, 0, 16);
			k++;
			continue;
		}
		while (k + run < n && layout_unit_len(psize, u + run) == U &&
		       !(hole && hole[k + run]))
			run++;
		if (run) {
			enc_units(xts, c + k * U, p + k * U, run, id, u);
			k += run;
			continue;
		}
		if (len)
			unit_encrypt(xts, id, u, len, p + k * U, c + k * U, slot);
		k++;
	}
}

/* ---- lseek -------------------------------------------------------------- */

/* Is unit @u of a file of @size bytes a hole (all stored bytes zero)? */
static int unit_is_hole(int fd, uint32_t d, uint64_t size, uint64_t u)
{
	uint8_t c[U], slot[16];
	uint32_t len = layout_unit_len(size, u);
	int err = read_exact(fd, c, len, layout_unit_coff(d, u));

	if (err)
		return err;
	if (!all_zero(c, len))
		return 0;
	if (layout_is_tail_len(len)) {
		err = read_slot(fd, slot);
		if (err)
			return err;
		return all_zero(slot + len, 16 - len);
	}
	return 1;
}

/*
 * The first hole unit in [@u, @ulast] of a file of @size bytes, or -ENOENT.
 * Reads in chunks of up to 256 units; a unit can only be a hole if its
 * first 16 bytes are zero (real ciphertext: probability 2^-128), and
 * only those candidates are checked whole.
 */
static int64_t scan_for_hole(int fd, uint32_t d, uint64_t size, uint64_t u,
			     uint64_t ulast)
{
	while (u <= ulast) {
		uint64_t n = ulast - u + 1 > 256 ? 256 : ulast - u + 1;
		uint64_t bytes = layout_units_len(size, u, n);
		uint8_t *c = scratch_get(SCRATCH_WRITE, bytes);
		int err;

		if (!c)
			return -ENOMEM;
		err = read_exact(fd, c, bytes, layout_unit_coff(d, u));
		if (err)
			return err;
		for (uint64_t k = 0; k < n; k++) {
			uint32_t len = layout_unit_len(size, u + k);
			int hole;

			if (!all_zero(c + k * U, len < 16 ? len : 16))
				continue;
			hole = unit_is_hole(fd, d, size, u + k);
			if (hole < 0)
				return hole;
			if (hole)
				return (int64_t)(u + k);
		}
		u += n;
	}
	return -ENOENT;
}

/* see content.h */
int64_t content_seek(int fd, uint32_t doff, uint64_t psize, uint64_t off,
		     int whence)
{
	uint64_t pos = off;

	if (off >= psize)
		return -ENXIO;
	if (whence == SEEK_DATA) {
		while (pos < psize) {
			off_t d = lseek(fd, (off_t)layout_coff(doff, pos),
					SEEK_DATA);
			uint64_t u;
			int hole;

			if (d < 0)
				return errno == ENXIO ? -ENXIO : -errno;
			if ((uint64_t)d >= layout_coff(doff, psize))
				return -ENXIO;
			u = layout_unit_of(layout_poff(doff, (uint64_t)d));
			hole = unit_is_hole(fd, doff, psize, u);
			if (hole < 0)
				return hole;
			if (!hole)
				return (int64_t)(layout_unit_start(u) > pos ?
						 layout_unit_start(u) : pos);
			pos = layout_unit_start(u + 1);
		}
		return -ENXIO;
	}
	if (whence != SEEK_HOLE)
		return -EINVAL;
	while (pos < psize) {
		off_t h = lseek(fd, (off_t)layout_coff(doff, pos), SEEK_HOLE);
		uint64_t u, ulast;
		int64_t found;

		if (h < 0)
			return -errno;
		/*
		 * In the compact layout units straddle lower blocks (the
		 * header shifts them by 40 bytes), and a hole punched into
		 * one unit frees no whole lower block, so the lower "data"
		 * before the lower hole may hold all-zero units: scan them,
		 * up to the unit after the one where the lower hole starts.
		 * (Zeros written as data look so in either layout.)
		 */
		u = layout_unit_of(pos);
		ulast = (uint64_t)h >= layout_coff(doff, psize) ?
			layout_last_unit(psize) :
			layout_unit_of(layout_poff(doff, (uint64_t)h)) + 1;
		if (ulast >= layout_nunits(psize))
			ulast = layout_last_unit(psize);
		found = scan_for_hole(fd, doff, psize, u, ulast);
		if (found < 0 && found != -ENOENT)
			return found;
		if (found >= 0) {
			uint64_t at = layout_unit_start((uint64_t)found);

			return (int64_t)(at > off ? at : off);
		}
		pos = layout_unit_start(ulast + 1);
	}
	return (int64_t)psize;
}
