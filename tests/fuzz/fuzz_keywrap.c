/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_keywrap.c - fuzz target for RFC 3394 key unwrap (keywrap.h) of
 * attacker bytes: a key slot's wrapped blob is read from the volume
 * header before anything authenticates it.
 *
 * Input: a flags byte, then the payload.
 *   bit 0  the KEK is the payload's first 32 bytes (else a fixed test KEK)
 *   bit 1  in place (dst == src)
 *   bit 2  the payload is key data: wrap it, unwrap it, then unwrap it
 *          again with the bit given by the next two bytes flipped
 * Otherwise the payload is a wrapped blob to unwrap. An unwrap that
 * succeeds must have been given the one correct wrap of what it returns
 * under that KEK (wrapping the result again gives back the input), and
 * must fail under any other KEK; one that fails must have wiped its
 * output (-EBADMSG) or not written it at all (-EINVAL, a bad length).
 */
#include <errno.h>

#include "fuzz_common.h"
#include "keywrap.h"

#define MAXW (AES_KW_MAX_LEN + AES_KW_OVERHEAD)
#define CANARY 0xa5

static bool len_ok(size_t len)
{
	return len % 8 == 0 && len >= AES_KW_MIN_LEN + AES_KW_OVERHEAD &&
	       len <= MAXW;
}

/* Unwrap @len bytes at @src under @kek and check every promise. */
static int unwrap_checked(const uint8_t *src, size_t len,
			  const uint8_t kek[32], bool in_place, uint8_t *key)
{
	static uint8_t buf[MAXW + 64], again[MAXW + 64];
	uint8_t kek2[32];
	int rc;

	memset(buf, CANARY, sizeof(buf));
	in_place = in_place && len <= sizeof(buf);
	if (in_place) {
		memcpy(buf, src, len);
		rc = aes_kw_unwrap(buf, buf, len, kek);
	} else {
		rc = aes_kw_unwrap(buf, src, len, kek);
	}
	FUZZ_CHECK(rc == 0 || rc == -EINVAL || rc == -EBADMSG);
	FUZZ_CHECK((rc == -EINVAL) == !len_ok(len));
	if (rc == -EINVAL) {
		/* not written: the canary (or the copied input) is intact */
		for (size_t i = 0; i < sizeof(buf); i++)
			FUZZ_CHECK(buf[i] ==
				   (in_place && i < len ? src[i] : CANARY));
		return rc;
	}
	/* no byte past the @len - 8 of the key data is touched */
	for (size_t i = in_place ? len : len - 8; i < sizeof(buf); i++)
		FUZZ_CHECK(buf[i] == CANARY);
	if (in_place)
		FUZZ_CHECK(!memcmp(buf + len - 8, src + len - 8, 8));
	if (rc == -EBADMSG) {
		FUZZ_CHECK(all_zero(buf, len - 8));
		return rc;
	}
	/* the one blob that unwraps to this key data under this KEK */
	FUZZ_CHECK(aes_kw_wrap(again, buf, len - 8, kek) == 0);
	FUZZ_CHECK(!memcmp(again, src, len));
	/* and no other KEK opens it */
	memcpy(kek2, kek, 32);
	kek2[31] ^= 0x80;
	FUZZ_CHECK(aes_kw_unwrap(again, src, len, kek2) == -EBADMSG);
	FUZZ_CHECK(all_zero(again, len - 8));
	if (key)
		memcpy(key, buf, len - 8);
	return 0;
}

static void wrap_round(const uint8_t *d, size_t size, const uint8_t kek[32],
		       bool in_place)
{
	static uint8_t w[MAXW], key[MAXW];
	size_t flip, len;

	if (size < 2)
		return;
	flip = (size_t)d[0] | (size_t)d[1] << 8;
	d += 2;
	len = size - 2;
	if (aes_kw_wrap(w, d, len, kek) != 0) {
		FUZZ_CHECK(len % 8 || len < AES_KW_MIN_LEN ||
			   len > AES_KW_MAX_LEN);
		return;
	}
	FUZZ_CHECK(len % 8 == 0 && len >= AES_KW_MIN_LEN &&
		   len <= AES_KW_MAX_LEN);
	FUZZ_CHECK(unwrap_checked(w, len + 8, kek, in_place, key) == 0);
	FUZZ_CHECK(!memcmp(key, d, len));
	/* any single changed bit is caught */
	flip %= 8 * (len + 8);
	w[flip / 8] ^= (uint8_t)(1u << (flip % 8));
	FUZZ_CHECK(unwrap_checked(w, len + 8, kek, in_place, NULL) ==
		   -EBADMSG);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t kek[32];
	unsigned flags;

	if (size < 1 || size > 2 * MAXW)
		return 0;
	flags = data[0];
	data++;
	size--;
	if (flags & 1) {
		if (size < 32)
			return 0;
		memcpy(kek, data, 32);
		data += 32;
		size -= 32;
	} else {
		fuzz_key(kek, sizeof(kek), 2);
	}
	if (flags & 4)
		wrap_round(data, size, kek, flags & 2);
	else
		unwrap_checked(data, size, kek, flags & 2, NULL);
	return 0;
}
