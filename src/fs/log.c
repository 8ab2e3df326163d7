/* SPDX-License-Identifier: Apache-2.0 */
/*
 * log.c - the mount's log lines (log.h).
 */
#include "log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <syslog.h>
#include <time.h>

#define LINES_PER_SECOND 20

static bool to_syslog;

/* see log.h */
void xlog_to_syslog(void)
{
	to_syslog = true;
}

/* see log.h */
void xlog_escape(char *out, size_t size, const char *in)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

	for (; *in && o + 5 <= size; in++) {
		unsigned char c = (unsigned char)*in;

		if (c == '\\') {
			out[o++] = '\\';
			out[o++] = '\\';
		} else if (c >= 0x20 && c < 0x7f) {
			out[o++] = (char)c;
		} else {
			out[o++] = '\\';
			out[o++] = 'x';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		}
	}
	out[o] = '\0';
}

/* Whether one more line may go out this second. */
static bool within_rate(void)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static time_t window;
	static int count;
	time_t now = time(NULL);
	bool ok;

	pthread_mutex_lock(&lock);
	if (now != window) {
		window = now;
		count = 0;
	}
	ok = ++count <= LINES_PER_SECOND;
	pthread_mutex_unlock(&lock);
	return ok;
}

/* see log.h */
void xlog_v(const char *mountpoint, int prio, const char *fmt, va_list ap)
{
	char raw[1024], msg[4 * sizeof(raw) + 1], mnt[1024];

	if (!within_rate())
		return;
	vsnprintf(raw, sizeof(raw), fmt, ap);
	xlog_escape(msg, sizeof(msg), raw);
	xlog_escape(mnt, sizeof(mnt), mountpoint ? mountpoint : "");
	if (to_syslog)
		syslog(prio, "%s: %s", mnt, msg);
	else
		fprintf(stderr, "xtsfs: %s: %s\n", mnt, msg);
}

/* see log.h */
void xlog(const char *mountpoint, int prio, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	xlog_v(mountpoint, prio, fmt, ap);
	va_end(ap);
}

/* see log.h */
void xtsfs_bug(const char *fmt, ...)
{
	char raw[512], msg[4 * sizeof(raw) + 1];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	xlog_escape(msg, sizeof(msg), raw);
	if (to_syslog)
		syslog(LOG_CRIT, "internal error (a bug in xtsfs): %s", msg);
	fprintf(stderr, "xtsfs: internal error (a bug in xtsfs): %s\n", msg);
	abort();
}
