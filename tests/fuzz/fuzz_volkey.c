/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_volkey.c - fuzz target for the volume-key text (vol_key_parse(),
 * volume.h): what --volume-key-file gives, up to the 4095 bytes
 * vol_unlock() reads of it.
 *
 * Input: the text. It must parse exactly when it is 320 hex digits
 * (either case) with nothing else but the separators ' ', '\n', '\t',
 * '\r' and '-'; then the key is those digits, and vol_key_format() of it
 * parses back to the same key. A failed parse leaves the key zeroed.
 */
#include <errno.h>

#include "fuzz_common.h"
#include "volume.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct vol_keys k, k2;
	uint8_t want[VOL_BLOB_SIZE];
	char text[VOL_KEY_TEXT_SIZE];
	const char *s = (const char *)data;
	size_t digits = 0, lines = 0;
	bool ok = true;
	int rc;

	if (size > 4095)
		return 0;
	for (size_t i = 0; i < size && ok; i++) {
		int v = vol_hexval(s[i]);

		if (strchr(" \n\t\r-", s[i]) && s[i])
			continue;
		if (v < 0 || digits == 2 * VOL_BLOB_SIZE) {
			ok = false;
			break;
		}
		if (digits % 2 == 0)
			want[digits / 2] = (uint8_t)(v << 4);
		else
			want[digits / 2] |= (uint8_t)v;
		digits++;
	}
	ok = ok && digits == 2 * VOL_BLOB_SIZE;

	memset(&k, 0x5a, sizeof(k));
	rc = vol_key_parse(&k, s, size);
	FUZZ_CHECK(rc == 0 || rc == -EINVAL);
	FUZZ_CHECK((rc == 0) == ok);
	if (rc) {
		FUZZ_CHECK(all_zero(&k, sizeof(k)));
		return 0;
	}
	FUZZ_CHECK(!memcmp(&k, want, sizeof(want)));

	/* the paper form: 10 lines of 4 groups of 8 digits, and back */
	memset(text, 0, sizeof(text));
	vol_key_format(text, &k);
	FUZZ_CHECK(strlen(text) < sizeof(text));
	for (const char *l = text; *l; lines++) {
		const char *nl = strchr(l, '\n');

		FUZZ_CHECK(nl && nl - l == 4 * 8 + 3);
		for (int g = 0; g < 4; g++)
			FUZZ_CHECK(strspn(l + 9 * g, "0123456789abcdef") == 8 &&
				   l[9 * g + 8] == (g < 3 ? '-' : '\n'));
		l = nl + 1;
	}
	FUZZ_CHECK(lines == 10);
	FUZZ_CHECK(vol_key_parse(&k2, text, strlen(text)) == 0);
	FUZZ_CHECK(!memcmp(&k, &k2, sizeof(k)));
	return 0;
}
