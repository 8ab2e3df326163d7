/* SPDX-License-Identifier: Apache-2.0 */
/*
 * log.h - messages for the user from a running mount, forward or
 * reverse: to syslog once the daemon is in the background, to stderr
 * before, each line prefixed with the mount point, escaped, and
 * rate-limited. No FUSE types.
 */
#ifndef XTSFS_LOG_H
#define XTSFS_LOG_H

#include <stdarg.h>
#include <stddef.h>

/*
 * xlog() - one line for the user about the mount at @mountpoint. At most
 * 20 lines a second get through (a corrupt tree must not flood the log).
 * Every byte outside printable ASCII, in the message and the mount point,
 * is written as \xHH and '\' as \\: lower names come from whoever can
 * write the cipher directory, and a raw newline would forge a log line,
 * an ESC sequence would drive the terminal of whoever reads it. Never
 * pass a secret.
 */
void xlog(const char *mountpoint, int prio, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* xlog_v() - xlog() with a va_list. */
void xlog_v(const char *mountpoint, int prio, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

/* xlog_to_syslog() - send every later line to syslog (after detaching). */
void xlog_to_syslog(void);

/*
 * xlog_escape() - @in, NUL-terminated, into @out (@size bytes, at least
 * 1; NUL-terminated, truncated whole escapes only) escaped as xlog() does.
 */
void xlog_escape(char *out, size_t size, const char *in);

/*
 * xtsfs_bug() - a broken internal invariant: a bug in xtsfs, never the
 * fault of the data (bad data is an error code). Logs the message, as
 * xlog() would, naming it a bug, and aborts: going on could write
 * garbage where the user's data is.
 */
_Noreturn void xtsfs_bug(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

#endif /* XTSFS_LOG_H */
