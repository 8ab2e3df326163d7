/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_log.c - log lines: every byte outside printable ASCII escaped,
 * truncation only between escapes, the line on stderr in the foreground,
 * at most 20 lines a second.
 */
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "log.h"
#include "testutil.h"

static void expect_escape(const char *in, const char *want)
{
	char out[256];

	xlog_escape(out, sizeof(out), in);
	CHECK(!strcmp(out, want), "escape of \"%s\": \"%s\", want \"%s\"",
	      in, out, want);
}

int main(void)
{
	char out[8], buf[4096];
	FILE *f;
	size_t n;
	int saved, lines = 0;

	expect_escape("plain name.txt", "plain name.txt");
	expect_escape("a\nb", "a\\x0ab");
	expect_escape("\033[31mRED", "\\x1b[31mRED");
	expect_escape("back\\slash", "back\\\\slash");
	expect_escape("\x7f\x80\xff", "\\x7f\\x80\\xff");
	expect_escape("caf\xc3\xa9", "caf\\xc3\\xa9");
	/* room for 5 characters and the NUL: a whole escape or none */
	xlog_escape(out, 6, "ab\ncd");
	CHECK(!strcmp(out, "ab"), "truncated: \"%s\"", out);
	xlog_escape(out, 1, "abc");
	CHECK(out[0] == '\0', "size 1");

	/* the foreground line, from stderr, then the rate limit */
	f = tmpfile();
	CHECK(f != NULL, "tmpfile");
	if (!f)
		return 1;
	fflush(stderr);
	saved = dup(2);
	dup2(fileno(f), 2);
	xlog("/mnt/x\ny", LOG_ERR, "entry %s skipped", "e\033vil");
	for (int i = 0; i < 100; i++)
		xlog("/mnt", LOG_ERR, "burst %d", i);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	CHECK(!strncmp(buf, "xtsfs: /mnt/x\\x0ay: entry e\\x1bvil skipped\n",
		       42), "line: \"%.60s\"", buf);
	for (size_t i = 0; i < n; i++) {
		CHECK(buf[i] == '\n' || (buf[i] >= 0x20 && buf[i] < 0x7f),
		      "raw byte 0x%02x at %zu", (unsigned char)buf[i], i);
		lines += buf[i] == '\n';
	}
	/* 20 a second: some got through, not all (however slow this runs) */
	CHECK(lines >= 20 && lines < 101, "%d lines of 101 got through", lines);
	if (test_failures) {
		printf("test_log: %d FAILED\n", test_failures);
		return 1;
	}
	printf("test_log: all passed\n");
	return 0;
}
