/* SPDX-License-Identifier: Apache-2.0 */
/*
 * content.h - file contents: plaintext ranges <-> the encrypted lower
 * file (doc/FORMAT.md section 3). No FUSE types: every function works on a
 * lower file descriptor, so it is testable on its own.
 *
 * Concurrency: the caller serialises calls per lower file (one lock per
 * lower inode, shared by all its open handles): reads may run in
 * parallel with reads, anything that writes runs alone.
 *
 * Sizes: the plaintext size is always derived from the lower size
 * (content_plain_size), never stored, so there is nothing to keep in sync.
 */
#ifndef XTSFS_CONTENT_H
#define XTSFS_CONTENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "fileheader.h"
#include "layout.h"
#include "xts.h"

/* Older names of constants of layout.h and fileheader.h (used by tests). */
#define CONTENT_HDR_SIZE FILEHDR_SIZE      /* bytes of the per-file header */
#define CONTENT_UNIT LAYOUT_UNIT_SIZE      /* bytes of one data unit */
#define CONTENT_SLOT_OFF FILEHDR_SLOT_OFF  /* header offset of the tail slot */
#define CONTENT_MAX_SIZE LAYOUT_MAX_SIZE   /* largest size a write makes */

/*
 * struct content_hdr - the parts of a file header a reader needs, and
 * the volume's data offset (layout.h), which content_init_header() and
 * content_read_header() set.
 */
struct content_hdr {
	uint8_t id[XTS_ID_SIZE];   /* the file id (tweaks) */
	uint32_t doff;             /* LAYOUT_DOFF_COMPACT or _ALIGNED */
};

/*
 * content_plain_size() - plaintext size of a lower file of @lower bytes
 * under data offset @doff (layout_plain_size()).
 * Return: the size, or -EIO if @lower is 1..39 (no room for the header).
 */
int64_t content_plain_size(uint32_t doff, uint64_t lower);

/*
 * content_init_header() - write a new header with a random file id at
 * the start of @fd (an empty lower file); @doff: the volume's data
 * offset. The aligned layout's hole after the header is made by the first
 * write past it, or a truncate. Return: 0 or -errno.
 */
int content_init_header(int fd, uint32_t doff, struct content_hdr *hdr);

/*
 * content_read_header() - read and check the header of @fd, of a volume
 * with data offset @doff.
 * Return: 0; -ENODATA if the lower file is empty (no header yet);
 * -EIO if it is too short, or its magic or version is wrong.
 */
int content_read_header(int fd, uint32_t doff, struct content_hdr *hdr);

/*
 * content_read() - read up to @len plaintext bytes at @off.
 * @psize: the plaintext size (from the lower size, under the lock).
 * Return: bytes read (0 at or past EOF), or -errno (-EIO for ciphertext
 * that cannot be right, e.g. a torn short tail or a short lower file).
 */
ssize_t content_read(const struct xts_ctx *xts, int fd,
		     const struct content_hdr *hdr, uint64_t psize,
		     uint8_t *buf, size_t len, uint64_t off);

/*
 * content_write() - write @len plaintext bytes at @off: units wholly
 * covered are encrypted straight from @buf, partial units are read,
 * decrypted, patched and re-encrypted; units outside the range are never
 * rewritten, except the old last unit when the file grows past it (it
 * turns from a short unit into a full one). A write that grows the file
 * and fails part-way (ENOSPC, EFBIG) puts back the old size and the old
 * ciphertext it overwrote: it changes nothing. Inside the old size a
 * full disk is found before anything is overwritten: that part of the
 * range is reserved (fallocate) first, unless @flags has
 * CONTENT_HOLES_SEEKABLE and SEEK_HOLE finds no hole in it (allocated
 * already: an overwrite in place needs no space).
 * @psize: in: the size before; out: the size after (unchanged on error).
 * @flags: CONTENT_HOLES_SEEKABLE if the lower filesystem's SEEK_HOLE is
 * exact (ext4, XFS, btrfs, tmpfs, f2fs; the generic lseek of others calls
 * a sparse file all data), else 0.
 * Return: @len or -errno.
 */
#define CONTENT_HOLES_SEEKABLE 1u
ssize_t content_write(const struct xts_ctx *xts, int fd,
		      const struct content_hdr *hdr, uint64_t *psize,
		      const uint8_t *buf, size_t len, uint64_t off,
		      unsigned flags);

/*
 * content_truncate() - set the plaintext size to @size (grow with zeros,
 * which stay sparse). @psize in/out as above. Return: 0 or -errno.
 */
int content_truncate(const struct xts_ctx *xts, int fd,
		     const struct content_hdr *hdr, uint64_t *psize,
		     uint64_t size);

/*
 * content_fallocate() - fallocate(2) on the plaintext: mode 0 and
 * FALLOC_FL_KEEP_SIZE allocate (zeros), FALLOC_FL_PUNCH_HOLE |
 * FALLOC_FL_KEEP_SIZE and FALLOC_FL_ZERO_RANGE zero the range (whole
 * units become holes in the lower file). Other modes: -EOPNOTSUPP.
 * Return: 0 or -errno.
 */
int content_fallocate(const struct xts_ctx *xts, int fd,
		      const struct content_hdr *hdr, uint64_t *psize,
		      int mode, uint64_t off, uint64_t len);

/*
 * content_seek() - SEEK_DATA / SEEK_HOLE on the plaintext, with unit
 * granularity: a unit is a hole if all its stored bytes are zero.
 * Return: the offset, -ENXIO past EOF (as lseek), or -errno.
 */
int64_t content_seek(int fd, uint32_t doff, uint64_t psize, uint64_t off,
		     int whence);


/*
 * content_encrypt_span() - the stored form of plaintext units
 * [@u0, @u0 + @n) of a file id @id and size @psize, as content_write()
 * would store them: @p holds the plaintext of those units back to back
 * (unit k at (k - u0) * 4096, the last unit of the file by its length),
 * @c receives the ciphertext at the same offsets (may equal @p). If the
 * file ends in a short tail within the span, @slot receives the header's
 * tail slot. Units marked in @hole (NULL: none) are stored as zeros, the
 * stored form of a hole. Used by reverse mode.
 */
void content_encrypt_span(const struct xts_ctx *xts, const uint8_t id[16],
			  uint64_t psize, uint64_t u0, uint64_t n,
			  const uint8_t *p, uint8_t *c, uint8_t slot[16],
			  const bool *hole);

#endif /* XTSFS_CONTENT_H */
