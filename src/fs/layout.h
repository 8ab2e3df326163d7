/* SPDX-License-Identifier: Apache-2.0 */
/*
 * layout.h - where the bytes of a regular file live (doc/FORMAT.md 3.3-3.5):
 * plaintext offsets <-> data units <-> lower (ciphertext) offsets, the
 * plaintext size <-> the lower size, the length of each unit, and the
 * short-tail rule. Pure functions: no I/O, no keys, no state, so every
 * caller (content.c for a mount, reverse.c for a view) maps bytes the same
 * way and the mapping is tested on its own (tests/unit/test_layout.c).
 *
 * The mapping: plaintext unit u is bytes [4096u, min(4096u + 4096, S)) of
 * a file of S bytes; it is stored at lower offset D + 4096u with the same
 * length, where D, the *data offset*, is the volume's (FORMAT 3.4): 40 in
 * the compact layout, right after the 40-byte file header (fileheader.h);
 * 4096 in the aligned layout, where the header is alone in the first
 * lower block and each unit fills one lower block. Every unit is
 * 4096 bytes except the last, which has S mod 4096 bytes when that is not
 * 0; a last unit of 1..15 bytes is a *short tail* (FORMAT 3.5), part of
 * whose ciphertext lives in the header's tail slot.
 *
 * Limits: a unit index is at most 2^52 (2^64 / 4096), so u * 4096 never
 * wraps; the functions that multiply assert that. Sizes up to UINT64_MAX
 * are accepted where no offset is computed from them; files a writer may
 * make are bounded by LAYOUT_MAX_SIZE so that the lower size fits off_t.
 */
#ifndef XTSFS_LAYOUT_H
#define XTSFS_LAYOUT_H

#include <stdbool.h>
#include <stdint.h>

#define LAYOUT_UNIT_SIZE 4096 /* bytes of one full data unit */
#define LAYOUT_HDR_SIZE 40    /* bytes of the per-file header */
#define LAYOUT_DOFF_COMPACT 40   /* data offset D: the compact layout */
#define LAYOUT_DOFF_ALIGNED 4096 /* ... the aligned layout */
#define LAYOUT_TAIL_MAX 15    /* longest short tail: XTS needs >= 16 bytes */
/*
 * The largest plaintext size a writer makes, in either layout: its lower
 * size (data offset added) stays below INT64_MAX (off_t) with a unit to
 * spare, so the end of any unit of such a file is representable as an
 * off_t too.
 */
#define LAYOUT_MAX_SIZE \
	((uint64_t)INT64_MAX - LAYOUT_DOFF_ALIGNED - LAYOUT_UNIT_SIZE)

/*
 * layout_doff_ok() - true if @d is a data offset: LAYOUT_DOFF_COMPACT or
 * LAYOUT_DOFF_ALIGNED. The functions below that take one assert it.
 */
bool layout_doff_ok(uint32_t d);

/* ---- offsets (layout.c) --------------------------------------------------- */

/*
 * layout_unit_of() - the unit that holds plaintext offset @poff (any
 * value). Return: @poff / 4096.
 */
uint64_t layout_unit_of(uint64_t poff);

/*
 * layout_unit_start() - plaintext offset of the first byte of unit @u.
 * @u: at most UINT64_MAX / 4096 (asserted). Return: 4096 * @u.
 */
uint64_t layout_unit_start(uint64_t u);

/*
 * layout_coff() - lower offset of plaintext offset @poff under data
 * offset @d. @poff: at most UINT64_MAX - @d (asserted). Return: @d + @poff.
 * Also the lower size of a file with a header and @poff plaintext bytes.
 */
uint64_t layout_coff(uint32_t d, uint64_t poff);

/*
 * layout_unit_coff() - lower offset of the first byte of unit @u.
 * @u: at most (UINT64_MAX - @d) / 4096 (asserted).
 * Return: @d + 4096 * @u.
 */
uint64_t layout_unit_coff(uint32_t d, uint64_t u);

/*
 * layout_poff() - plaintext offset of lower offset @coff.
 * @coff: at least @d, i.e. not inside the header or the space after it
 * (asserted). Return: @coff - @d.
 */
uint64_t layout_poff(uint32_t d, uint64_t coff);

/* ---- sizes (layout.c) ----------------------------------------------------- */

/*
 * layout_lower_size() - lower size of a plaintext file of @psize bytes
 * as a writer leaves it when it never had a header: 0 for 0 (an empty
 * lower file has no header yet, FORMAT 3.4), else @d + @psize. Reverse
 * mode shows exactly this. A file truncated to 0 keeps its header (lower
 * size @d): that is layout_coff(@d, 0).
 * @psize: at most UINT64_MAX - @d (asserted). Return: the lower size.
 */
uint64_t layout_lower_size(uint32_t d, uint64_t psize);

/*
 * layout_plain_size() - plaintext size of a lower file of @lower bytes
 * under data offset @d.
 * @lower: a file size (any value; above INT64_MAX is no file size and is
 * refused). Return: 0 for 0 (no header yet) and for 40..@d (a header,
 * and in the aligned layout a hole, or nothing yet, after it); @lower -
 * @d above that; -EIO for 1..39 (no room for the header) and for @lower >
 * INT64_MAX.
 */
int64_t layout_plain_size(uint32_t d, uint64_t lower);

/*
 * layout_nunits() - number of units of a file of @psize bytes (any
 * value), the last one possibly short. Return: ceil(@psize / 4096),
 * computed without overflow (0 for an empty file).
 */
uint64_t layout_nunits(uint64_t psize);

/*
 * layout_last_unit() - index of the last unit of a file of @psize bytes.
 * @psize: > 0 (asserted: an empty file has no units).
 * Return: (@psize - 1) / 4096.
 */
uint64_t layout_last_unit(uint64_t psize);

/*
 * layout_unit_len() - stored (and plaintext) length of unit @u of a file
 * of @psize bytes. Any @u and @psize: no overflow.
 * Return: 4096 for a full unit, 1..4095 for a short last unit, 0 for a
 * unit at or past the end of the file.
 */
uint32_t layout_unit_len(uint64_t psize, uint64_t u);

/* ---- the short-tail rule (layout.c) --------------------------------------- */

/*
 * layout_is_tail_len() - true if a unit of @len bytes is a short tail
 * (FORMAT 3.5): 1 <= @len <= 15, too short for XTS on its own, so it is
 * encrypted as a zero-padded 16-byte block whose excess ciphertext lives
 * in the header's tail slot. Units of 16..4096 bytes are plain XTS units
 * (ciphertext stealing for 16..4095); 0 bytes is no unit.
 */
bool layout_is_tail_len(uint32_t len);

/*
 * layout_has_tail() - true if a file of @psize bytes (any value) ends in
 * a short tail: @psize mod 4096 is 1..15. Only then is the header's tail
 * slot in use; otherwise it is all zero.
 */
bool layout_has_tail(uint64_t psize);

/* ---- spans (layout.c) ----------------------------------------------------- */

/*
 * layout_units_len() - bytes stored for units [@u0, @u0 + @n) of a file of
 * @psize bytes, back to back from unit @u0's start: 4096 per unit, the
 * last unit of the file by its length.
 * @n: >= 1; @u0 + @n - 1 must be a unit of the file, i.e. less than
 * layout_nunits(@psize) (asserted). Return: the byte count (>= 1).
 */
uint64_t layout_units_len(uint64_t psize, uint64_t u0, uint64_t n);

/*
 * struct layout_span - the whole units a plaintext byte range touches.
 */
struct layout_span {
	uint64_t u0;   /* first unit touched */
	uint64_t n;    /* number of units touched, >= 1 */
	uint64_t len;  /* bytes stored for them (layout_units_len) */
};

/*
 * layout_span() - the units plaintext bytes [@off, @off + @len) touch in
 * a file of @psize bytes: the range a read-modify-write must load and
 * store, aligned to unit starts and ending at the end of the last unit
 * touched (the end of the file, for the last unit).
 * @len: >= 1; @off + @len <= @psize, without overflow (asserted): callers
 * clip reads to the size first, and writers pass the size after the
 * write. Return: the span in @sp.
 */
void layout_span(struct layout_span *sp, uint64_t psize, uint64_t off,
		 uint64_t len);

#endif /* XTSFS_LAYOUT_H */
