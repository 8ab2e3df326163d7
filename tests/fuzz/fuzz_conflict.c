/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_conflict.c - fuzz target for the conflict-suffix parser
 * (conflict.h): lower names from the cipher directory.
 *
 * Input: the bytes of a name (any bytes, NULs included). Checks: the
 * suffix is never the whole name; it depends only on its own bytes (the
 * same suffix is found after any other prefix, which lookup relies on);
 * conflict_long() and conflict_internal() of the name up to its first
 * NUL agree with conflict_suffix() and stay inside the name.
 */
#include "conflict.h"
#include "names.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *name = (const char *)data;
	char buf[NAMES_STORED_MAX + 64], entry[34];
	size_t k = conflict_suffix(name, size), k2, n;

	FUZZ_CHECK(k < size || k == 0);
	FUZZ_CHECK(k <= CONFLICT_SUFFIX_MAX);
	if (k) {
		/* other prefixes (short; long, digits and parentheses), the
		 * same suffix */
		static const char *const pre[] = {
			"Q", "2024-01-01 101010 (conflicted copy 9 (x's 1-",
		};

		for (size_t i = 0; i < 2; i++) {
			size_t pl = strlen(pre[i]);

			if (pl + k > sizeof(buf))
				continue;
			memcpy(buf, pre[i], pl);
			memcpy(buf + pl, name + size - k, k);
			k2 = conflict_suffix(buf, pl + k);
			FUZZ_CHECK(k2 == k);
		}
	}
	n = strnlen(name, size);
	if (n > NAMES_STORED_MAX)
		return 0;
	memcpy(buf, name, n);
	buf[n] = '\0';
	if (conflict_long(buf, &k2, entry)) {
		FUZZ_CHECK(k2 && 10 + k2 + 23 == n);
		FUZZ_CHECK(names_is_long(entry));
		FUZZ_CHECK(conflict_suffix(buf, 10 + k2) == k2);
	}
	if (conflict_internal(buf))
		FUZZ_CHECK(!strncmp(buf, "xtsfs", 5) && memchr(buf, '.', n));
	return 0;
}
