/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_check.c - fuzz target for the two parsers of xtsfs-fsck's core
 * (check.h) that see bytes no other decoder sees: check_escape(), which
 * turns stored names (anyone's bytes) into text for a terminal or JSON,
 * and check_mounted(), which reads a mountinfo file.
 *
 * Input: a mode byte, then the bytes.
 * - mode even: the bytes up to the first NUL are escaped into a buffer
 *   of (mode / 2) % 64 + 1 bytes and into one large enough. Checked: the
 *   result is NUL-terminated within the buffer; it holds no control byte
 *   (below 0x20, or DEL) and no byte that is not part of valid UTF-8;
 *   the large one un-escapes ("\\" -> "\", "\xNN" -> byte) to exactly the
 *   input; the small one is a prefix of the large one.
 * - mode odd: the bytes are a mountinfo file (in a memfd, read through
 *   /proc/self/fd/N); check_mounted() of "/" must return 0 or 1 and
 *   give a NUL-terminated mount point.
 */
#include <errno.h>

#include "check.h"
#include "fuzz_common.h"

#define BIG (4 * 4096 + 1)

/* Whether @s is valid UTF-8 without C0/C1 controls or DEL. */
static bool clean_text(const unsigned char *s)
{
	while (*s) {
		size_t n = *s < 0x80 ? 1 : (*s & 0xe0) == 0xc0 ? 2 :
			   (*s & 0xf0) == 0xe0 ? 3 : (*s & 0xf8) == 0xf0 ? 4 :
									0;

		if (n == 0 || (n == 1 && (*s < 0x20 || *s == 0x7f)))
			return false;
		for (size_t i = 1; i < n; i++)
			if ((s[i] & 0xc0) != 0x80)
				return false;
		s += n;
	}
	return true;
}

static int hexval(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ?
	       c - 'a' + 10 : -1;
}

/* Un-escape @s into @out; its length, or -1 if it is not escaped text. */
static long unescape(uint8_t *out, const char *s)
{
	long n = 0;

	while (*s) {
		if (*s != '\\') {
			out[n++] = (uint8_t)*s++;
		} else if (s[1] == '\\') {
			out[n++] = '\\';
			s += 2;
		} else if (s[1] == 'x' && hexval(s[2]) >= 0 &&
			   hexval(s[3]) >= 0) {
			out[n++] = (uint8_t)(hexval(s[2]) << 4 | hexval(s[3]));
			s += 4;
		} else {
			return -1;
		}
	}
	return n;
}

static void fuzz_escape(const uint8_t *d, size_t size, unsigned mode)
{
	size_t small_size = (mode / 2) % 64 + 1, len = strnlen((const char *)d,
							       size);
	char *in = malloc(len + 1), *big = malloc(BIG), small[64];
	uint8_t *back = malloc(BIG);

	FUZZ_CHECK(in && big && back);
	memcpy(in, d, len);
	in[len] = '\0';
	check_escape(big, BIG, in);
	check_escape(small, small_size, in);
	FUZZ_CHECK(memchr(small, '\0', small_size));
	FUZZ_CHECK(clean_text((const unsigned char *)big));
	FUZZ_CHECK(clean_text((const unsigned char *)small));
	FUZZ_CHECK(!strncmp(big, small, strlen(small)));
	if (len * 4 + 1 < BIG) {
		long n = unescape(back, big);

		FUZZ_CHECK(n == (long)len && !memcmp(back, in, len));
	}
	free(in);
	free(big);
	free(back);
}

static void fuzz_mountinfo(const uint8_t *d, size_t size)
{
	char path[64], where[256];
	int fd = fuzz_memfd(d, size), r;

	FUZZ_CHECK(fd >= 0);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	where[0] = '\0';
	r = check_mounted(path, "/", where, sizeof(where));
	FUZZ_CHECK(r == 0 || r == 1);
	FUZZ_CHECK(memchr(where, '\0', sizeof(where)));
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	if (data[0] & 1)
		fuzz_mountinfo(data + 1, size - 1);
	else
		fuzz_escape(data + 1, size - 1, data[0]);
	return 0;
}
