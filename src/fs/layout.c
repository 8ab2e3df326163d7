/* SPDX-License-Identifier: Apache-2.0 */
/*
 * layout.c - the block mapping of a regular file (doc/FORMAT.md 3.3-3.5;
 * see layout.h). Pure arithmetic, written so that no input wraps: where a
 * product could exceed 64 bits the contract forbids the input and an
 * assert() holds the caller to it (a bug, not bad data).
 */
#include "layout.h"

#include <assert.h>
#include <errno.h>

#include "volume.h"
#include "xts.h"

#define U LAYOUT_UNIT_SIZE
#define H LAYOUT_HDR_SIZE

/*
 * One unit size, three layers: the cipher cores encrypt XTSFS_UNIT_SIZE
 * bytes per full unit, the volume header records VOL_UNIT_SIZE as the
 * data unit size (FORMAT 2.2, offset 56), and this file maps offsets by
 * LAYOUT_UNIT_SIZE. They are the same quantity and must move together.
 */
_Static_assert(LAYOUT_UNIT_SIZE == XTSFS_UNIT_SIZE, "cipher unit size");
_Static_assert(LAYOUT_UNIT_SIZE == VOL_UNIT_SIZE, "volume header unit size");
_Static_assert(LAYOUT_TAIL_MAX + 1 == XTS_BLOCK_SIZE, "XTS needs one block");
_Static_assert(LAYOUT_UNIT_SIZE % XTS_BLOCK_SIZE == 0, "whole blocks");

/* see layout.h */
uint64_t layout_unit_of(uint64_t poff)
{
	return poff / U;
}

/* see layout.h */
uint64_t layout_unit_start(uint64_t u)
{
	assert(u <= UINT64_MAX / U);
	return u * U;
}

/* see layout.h */
bool layout_doff_ok(uint32_t d)
{
	return d == LAYOUT_DOFF_COMPACT || d == LAYOUT_DOFF_ALIGNED;
}

/* see layout.h */
uint64_t layout_coff(uint32_t d, uint64_t poff)
{
	assert(layout_doff_ok(d) && poff <= UINT64_MAX - d);
	return d + poff;
}

/* see layout.h */
uint64_t layout_unit_coff(uint32_t d, uint64_t u)
{
	assert(layout_doff_ok(d) && u <= (UINT64_MAX - d) / U);
	return d + u * U;
}

/* see layout.h */
uint64_t layout_poff(uint32_t d, uint64_t coff)
{
	assert(layout_doff_ok(d) && coff >= d);
	return coff - d;
}

/* see layout.h */
uint64_t layout_lower_size(uint32_t d, uint64_t psize)
{
	return psize ? layout_coff(d, psize) : 0;
}

/* see layout.h */
int64_t layout_plain_size(uint32_t d, uint64_t lower)
{
	assert(layout_doff_ok(d));
	if (lower == 0)
		return 0;
	if (lower < H || lower > INT64_MAX)
		return -EIO;
	return lower <= d ? 0 : (int64_t)(lower - d);
}

/* see layout.h */
uint64_t layout_nunits(uint64_t psize)
{
	/* not (psize + 4095) / 4096: that wraps for the top 4095 sizes */
	return psize / U + (psize % U != 0);
}

/* see layout.h */
uint64_t layout_last_unit(uint64_t psize)
{
	assert(psize > 0);
	return (psize - 1) / U;
}

/* see layout.h */
uint32_t layout_unit_len(uint64_t psize, uint64_t u)
{
	/* u < nunits bounds u * 4096 by psize: no wrap for any u */
	if (u >= layout_nunits(psize))
		return 0;
	if (psize - u * U >= U)
		return U;
	return (uint32_t)(psize - u * U);
}

/* see layout.h */
bool layout_is_tail_len(uint32_t len)
{
	return len != 0 && len <= LAYOUT_TAIL_MAX;
}

/* see layout.h */
bool layout_has_tail(uint64_t psize)
{
	return layout_is_tail_len((uint32_t)(psize % U));
}

/* see layout.h */
uint64_t layout_units_len(uint64_t psize, uint64_t u0, uint64_t n)
{
	uint64_t last;

	assert(n >= 1 && u0 < layout_nunits(psize));
	assert(n - 1 < layout_nunits(psize) - u0);
	last = u0 + n - 1;
	/* a span ending before the last unit is whole units; else up to S */
	if (last < layout_last_unit(psize))
		return n * U;
	return psize - u0 * U;
}

/* see layout.h */
void layout_span(struct layout_span *sp, uint64_t psize, uint64_t off,
		 uint64_t len)
{
	assert(len >= 1 && off <= psize && len <= psize - off);
	sp->u0 = off / U;
	sp->n = (off + len - 1) / U - sp->u0 + 1;
	sp->len = layout_units_len(psize, sp->u0, sp->n);
}
