/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_passfile.c - fuzz target for passphrase lines (pass_read(),
 * passphrase.h): a --passfile given as a file, or the same bytes on a
 * standard input that is not a terminal. The bytes go into a memfd,
 * opened by name (/proc/self/fd/N) for PASS_FILE and made fd 0 for
 * PASS_STDIN.
 *
 * Input: a flags byte (bit 0: standard input, else a file), then the
 * file's content. The result is compared with the rule of passphrase.h:
 * the bytes up to the first '\n', without it and one '\r' before it;
 * -ENODATA if that is empty, -EMSGSIZE if longer than PASS_MAX bytes,
 * -EINVAL if it holds a NUL. Standard input is read no further than the
 * '\n'. A message never holds the passphrase.
 */
#include <errno.h>
#include <fcntl.h>

#include "fuzz_common.h"
#include "passphrase.h"

#define LINE_CAP (PASS_MAX + 2) /* the passphrase, one '\r', the '\n' */

/* what pass_read() must give for @d: the length or -errno */
static long expect(const uint8_t *d, size_t size, size_t *next)
{
	const uint8_t *nl = memchr(d, '\n', size < LINE_CAP ? size : LINE_CAP);
	size_t n;

	if (!nl && size >= LINE_CAP)
		return -EMSGSIZE;
	n = nl ? (size_t)(nl - d) : size;
	*next = nl ? n + 1 : size;
	if (n && d[n - 1] == '\r')
		n--;
	if (n > PASS_MAX)
		return -EMSGSIZE;
	if (n == 0)
		return -ENODATA;
	if (memchr(d, '\0', n))
		return -EINVAL;
	return (long)n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pass_source src;
	char path[64], err[256];
	char *pass = (char *)1;
	size_t len = 12345, next = 0;
	bool use_stdin;
	long want;
	int fd, saved = -1, rc;

	if (size < 1 || size > 3 * LINE_CAP)
		return 0;
	use_stdin = data[0] & 1;
	data++;
	size--;
	want = expect(data, size, &next);

	fd = fuzz_memfd(data, size);
	if (use_stdin) {
		saved = dup(STDIN_FILENO);
		if (saved < 0 || dup2(fd, STDIN_FILENO) != STDIN_FILENO) {
			perror("dup2");
			exit(2);
		}
		src = (struct pass_source){ PASS_STDIN, NULL };
	} else {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		src = (struct pass_source){ PASS_FILE, path };
	}
	memset(err, 0x5a, sizeof(err));
	rc = pass_read(&src, NULL, false, &pass, &len, err, sizeof(err));
	if (use_stdin) {
		/* nothing after the first line is consumed */
		if (rc == 0)
			FUZZ_CHECK(lseek(STDIN_FILENO, 0, SEEK_CUR) ==
				   (off_t)next);
		if (dup2(saved, STDIN_FILENO) != STDIN_FILENO) {
			perror("dup2");
			exit(2);
		}
		close(saved);
	}
	close(fd);

	if (want >= 0) {
		FUZZ_CHECK(rc == 0 && pass && len == (size_t)want);
		FUZZ_CHECK(!memcmp(pass, data, len) && pass[len] == '\0');
		FUZZ_CHECK(err[0] == '\0');
		pass_free(pass);
		return 0;
	}
	FUZZ_CHECK(rc == (int)want);
	FUZZ_CHECK(pass == NULL && len == 0);
	/* a one-line reason, printable, without the passphrase in it */
	FUZZ_CHECK(memchr(err, '\0', sizeof(err)) && err[0]);
	for (const char *c = err; *c; c++)
		FUZZ_CHECK(*c >= 0x20 && *c < 0x7f);
	if (size >= 40)
		FUZZ_CHECK(!memmem(err, strlen(err), data, 40));
	return 0;
}
