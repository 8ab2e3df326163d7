/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_volkey.c - fuzz target for the volume-key text (vol_key_parse(),
 * volume.h; FORMAT.md 2.6): what --volume-key-file gives, up to the
 * 4095 bytes vol_unlock() reads of it.
 *
 * Input: the text. Unless its first word (after blanks and '#' comments)
 * is "xtsfs-key" (a version 2
 * text), it must parse exactly when it is 320 hex digits (either case)
 * with nothing else but the separators ' ', '\n', '\t', '\r' and '-';
 * then the key is those digits. Any text that parses is formatted
 * (version 2) and must parse back to the same key and description, with
 * a matching check value. A failed parse leaves the key zeroed.
 */
#include <errno.h>
#include <string.h>
#include <strings.h>

#include "fuzz_common.h"
#include "volume.h"

/* The version 1 rule, written out: *@ok, and the digits in @want. */
static bool v1_model(const char *s, size_t size, uint8_t want[VOL_BLOB_SIZE])
{
	size_t digits = 0;

	for (size_t i = 0; i < size; i++) {
		int v = vol_hexval(s[i]);

		if (strchr(" \n\t\r-", s[i]) && s[i])
			continue;
		if (v < 0 || digits == 2 * VOL_BLOB_SIZE)
			return false;
		if (digits % 2 == 0)
			want[digits / 2] = (uint8_t)(v << 4);
		else
			want[digits / 2] |= (uint8_t)v;
		digits++;
	}
	return digits == 2 * VOL_BLOB_SIZE;
}

/*
 * The first word, after blanks and '#' comments, is "xtsfs-key" (a
 * version 2 text, well formed or not).
 */
static bool is_v2(const char *s, size_t size)
{
	size_t i = 0;

	while (i < size && ((strchr(" \n\t\r", s[i]) && s[i]) || s[i] == '#'))
		if (s[i++] == '#')
			while (i < size && s[i] != '\n')
				i++;
	return size - i >= 9 && !strncasecmp(s + i, "xtsfs-key", 9) &&
	       (size - i == 9 || strchr(" \n\t\r#", s[i + 9]));
}

/* The paper form: description, 10 lines of 4 groups of 8, check value. */
static void check_layout(const char *text)
{
	const char *l = strchr(text, '\n');
	size_t lines = 0;

	FUZZ_CHECK(!strncmp(text, "xtsfs-key v2 format=", 20) &&
		   (text[20] == '1' || text[20] == '2') &&
		   !strncmp(text + 21, " flags=0x", 9) && l);
	for (l++; *l && strncmp(l, "check=", 6); lines++) {
		const char *nl = strchr(l, '\n');

		FUZZ_CHECK(nl && nl - l == 4 * 8 + 3);
		for (int g = 0; g < 4; g++)
			FUZZ_CHECK(strspn(l + 9 * g, "0123456789abcdef") == 8 &&
				   l[9 * g + 8] == (g < 3 ? '-' : '\n'));
		l = nl + 1;
	}
	FUZZ_CHECK(lines == 10);
	FUZZ_CHECK(strspn(l + 6, "0123456789abcdef") == 8 && !strcmp(l + 14, "\n"));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct vol_keys k, k2;
	struct vol_key_info ki, ki2;
	uint8_t want[VOL_BLOB_SIZE];
	char text[VOL_KEY_TEXT_SIZE];
	const char *s = (const char *)data;
	bool v2 = is_v2(s, size), ok;
	int rc;

	if (size > 4095)
		return 0;
	ok = !v2 && v1_model(s, size, want);
	memset(&k, 0x5a, sizeof(k));
	rc = vol_key_parse(&k, &ki, s, size);
	FUZZ_CHECK(rc == 0 || rc == -EINVAL || (v2 && (rc == -EBADMSG ||
		   rc == -EPROTONOSUPPORT)));
	if (!v2)
		FUZZ_CHECK((rc == 0) == ok);
	if (rc) {
		FUZZ_CHECK(all_zero(&k, sizeof(k)));
		return 0;
	}
	FUZZ_CHECK(ki.text_version == (v2 ? 2 : 1));
	if (!v2) {
		FUZZ_CHECK(!memcmp(&k, want, sizeof(want)));
		memset(&ki, 0, sizeof(ki));
		ki.format = VOL_VERSION;
	}
	FUZZ_CHECK(ki.format >= VOL_VERSION_MIN && ki.format <= VOL_VERSION &&
		   !(ki.flags & ~VOL_FLAGS_KNOWN));

	memset(text, 0, sizeof(text));
	vol_key_format(text, &k, &ki);
	FUZZ_CHECK(strlen(text) < sizeof(text));
	check_layout(text);
	FUZZ_CHECK(vol_key_parse(&k2, &ki2, text, strlen(text)) == 0);
	FUZZ_CHECK(!memcmp(&k, &k2, sizeof(k)));
	FUZZ_CHECK(ki2.text_version == 2 && ki2.checked &&
		   ki2.format == ki.format && ki2.flags == ki.flags &&
		   !memcmp(ki2.uuid, ki.uuid, 16));
	/* one digit changed: the check value catches it */
	text[strlen(text) - 3] ^= text[strlen(text) - 3] == '0' ? 1 : 3;
	rc = vol_key_parse(&k2, NULL, text, strlen(text));
	FUZZ_CHECK(rc == -EBADMSG || rc == -EINVAL);
	return 0;
}
