/* SPDX-License-Identifier: Apache-2.0 */
/*
 * passphrase.h - how every xtsfs command obtains a passphrase.
 *
 * A passphrase comes from one of four sources: the terminal (without
 * echo), the first line of a file (--passfile), the first line of what a
 * command prints (--extpass), or the first line of standard input. It is
 * read with read(2) straight into memory from secmem_alloc() (locked,
 * never dumped, wiped on free): no stdio buffer, heap copy or unwiped
 * stack copy of it ever exists, and no error message ever contains it.
 *
 * The terminal sources change the terminal settings and signal handlers
 * of the process for the duration of the read, so pass_read() must not
 * be called by two threads at once.
 */
#ifndef XTSFS_PASSPHRASE_H
#define XTSFS_PASSPHRASE_H

#include <stdbool.h>
#include <stddef.h>

/*
 * enum pass_kind - where a passphrase comes from.
 * @PASS_AUTO:    the terminal (/dev/tty, no echo) if stdin is a terminal,
 *                else the first line of stdin
 * @PASS_FILE:    --passfile FILE: the first line of the file
 * @PASS_EXTPASS: --extpass CMD: the first line of the standard output of
 *                `/bin/sh -c CMD`; CMD inherits stdin and stderr
 * @PASS_STDIN:   the first line of stdin, even if it is a terminal (read
 *                without echo then, the prompt written to that terminal)
 */
enum pass_kind {
	PASS_AUTO,
	PASS_FILE,
	PASS_EXTPASS,
	PASS_STDIN,
};

/*
 * struct pass_source - a passphrase source, as given on the command line.
 * @kind: see enum pass_kind
 * @arg:  the FILE of PASS_FILE or the CMD of PASS_EXTPASS; NULL for
 *        PASS_AUTO and PASS_STDIN
 */
struct pass_source {
	enum pass_kind kind;
	const char *arg;
};

#define PASS_MAX 4096 /* bytes in a passphrase, excluding the NUL */

/*
 * pass_read() - read one passphrase into locked memory.
 * @src:     where from (see enum pass_kind)
 * @prompt:  shown on the terminal (terminal sources only), e.g.
 *           "Passphrase for /srv/vol: "; NULL means "Passphrase: "
 * @confirm: on a terminal, ask a second time ("Repeat passphrase: ") and
 *           require equality; ignored for the other sources (read once)
 * @out:     on success, a NUL-terminated passphrase in memory from
 *           secmem_alloc(), to be freed with pass_free(); NULL on error
 * @len:     on success, its length in bytes (1..PASS_MAX); 0 on error
 * @err:     on error, a one-line reason (never the passphrase); may be
 *           NULL if @errlen is 0
 * @errlen:  size of @err
 *
 * "First line" means the bytes up to the first '\n', without it and
 * without one '\r' just before it. More lines after it in a passfile or
 * extpass output are ignored, with a warning on stderr. Standard input
 * is read byte by byte, so nothing after the first line is consumed and
 * a second call reads the second line.
 *
 * While echo is off, SIGINT, SIGTERM, SIGHUP and SIGQUIT restore the
 * terminal and then take their default action (unless they were
 * ignored); the previous handlers are back when pass_read() returns.
 *
 * Return: 0, or a negative errno with a reason in @err:
 *   -ENODATA  empty passphrase (after stripping the line end)
 *   -EMSGSIZE longer than PASS_MAX bytes (or an extpass command printed
 *             more than 1 MiB)
 *   -EINVAL   the two terminal entries differ, the passphrase contains
 *             a NUL byte, or a bad argument
 *   -ECHILD   the extpass command failed (non-zero exit or killed)
 *   -ENXIO    the terminal was wanted but /dev/tty could not be opened
 *   other -errno from open/read/fork (e.g. -ENOENT: no such passfile),
 *   or from secmem_alloc() (-ENOMEM, -EPERM, -EAGAIN: RLIMIT_MEMLOCK)
 */
int pass_read(const struct pass_source *src, const char *prompt, bool confirm,
	      char **out, size_t *len, char *err, size_t errlen);

/* pass_free() - wipe and free a passphrase from pass_read(); NULL ok. */
void pass_free(char *pass);

#endif /* XTSFS_PASSPHRASE_H */
