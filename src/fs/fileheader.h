/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fileheader.h - the 40-byte header at the start of every non-empty lower
 * file (doc/FORMAT.md 3.4): its byte form and its validation, in one
 * place. Pure: content.c reads and writes it on a lower file, reverse.c
 * synthesises it for the view, both through these two functions, so the
 * two can never disagree on a byte.
 *
 *   offset size field
 *   0      4    magic "xtsf"
 *   4      2    file format version, LE16: 1
 *   6      2    reserved, zero
 *   8      16   file id (the tweaks, FORMAT 3.3)
 *   24     16   tail slot (FORMAT 3.5): zero unless the file ends in a
 *               short tail
 *
 * Nothing here is authenticated (XTS has no integrity): a changed id or
 * slot decodes fine and shows as wrong plaintext, or, for the slot of a
 * short tail, as EIO when the tail's padding check fails (content.c).
 */
#ifndef XTSFS_FILEHEADER_H
#define XTSFS_FILEHEADER_H

#include <stddef.h>
#include <stdint.h>

#include "layout.h"
#include "xts.h"

#define FILEHDR_SIZE LAYOUT_HDR_SIZE /* bytes of the header */
#define FILEHDR_VERSION 1            /* the only version there is */
#define FILEHDR_ID_OFF 8             /* offset of the file id */
#define FILEHDR_SLOT_OFF 24          /* offset of the tail slot */
#define FILEHDR_SLOT_SIZE XTS_BLOCK_SIZE /* the slot completes one block */

_Static_assert(FILEHDR_ID_OFF + XTS_ID_SIZE == FILEHDR_SLOT_OFF,
	       "the slot follows the id");
_Static_assert(FILEHDR_SLOT_OFF + FILEHDR_SLOT_SIZE == FILEHDR_SIZE,
	       "the slot ends the header");

/* struct fileheader - a header in memory (the fields that carry data). */
struct fileheader {
	uint8_t id[XTS_ID_SIZE];          /* file id: tweak inputs (3.3) */
	uint8_t slot[FILEHDR_SLOT_SIZE];  /* tail slot (3.5), or zeros */
};

/* ---- fileheader.c --------------------------------------------------------- */

/*
 * fileheader_encode() - the 40 bytes of header @h at @dst: magic,
 * version 1, reserved bytes zero, @h->id, @h->slot. Never fails.
 */
void fileheader_encode(uint8_t dst[FILEHDR_SIZE], const struct fileheader *h);

/*
 * fileheader_decode() - check and parse the first @len bytes of a lower
 * file at @src into @h. Checked: @len >= 40, the magic, the version (1)
 * and the reserved bytes 6..7 (zero); a header failing any of them is
 * corrupt. The id and the slot are not checkable here (see above).
 * Bytes past 40 are ignored (they are data). @h is written only on
 * success. Return: 0, or -EIO for a corrupt or truncated header.
 */
int fileheader_decode(struct fileheader *h, const uint8_t *src, size_t len);

#endif /* XTSFS_FILEHEADER_H */
