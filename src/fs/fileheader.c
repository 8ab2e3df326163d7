/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fileheader.c - the per-file header codec (doc/FORMAT.md 3.4; see
 * fileheader.h). Bounds first, then every fixed byte, then the copy out
 * (cryptsetup's order), so a refused header leaves the output untouched.
 */
#include "fileheader.h"

#include <errno.h>
#include <string.h>

static const uint8_t magic[4] = { 'x', 't', 's', 'f' };

/* see fileheader.h */
void fileheader_encode(uint8_t dst[FILEHDR_SIZE], const struct fileheader *h)
{
	memset(dst, 0, FILEHDR_SIZE);
	memcpy(dst, magic, sizeof(magic));
	dst[4] = FILEHDR_VERSION; /* LE16, high byte 0 */
	memcpy(dst + FILEHDR_ID_OFF, h->id, XTS_ID_SIZE);
	memcpy(dst + FILEHDR_SLOT_OFF, h->slot, FILEHDR_SLOT_SIZE);
}

/* see fileheader.h */
int fileheader_decode(struct fileheader *h, const uint8_t *src, size_t len)
{
	if (len < FILEHDR_SIZE)
		return -EIO;
	if (memcmp(src, magic, sizeof(magic)))
		return -EIO;
	/* a newer version is refused as corrupt: there is no other yet */
	if (src[4] != FILEHDR_VERSION || src[5] || src[6] || src[7])
		return -EIO;
	memcpy(h->id, src + FILEHDR_ID_OFF, XTS_ID_SIZE);
	memcpy(h->slot, src + FILEHDR_SLOT_OFF, FILEHDR_SLOT_SIZE);
	return 0;
}
