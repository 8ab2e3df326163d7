/* SPDX-License-Identifier: Apache-2.0 */
/*
 * passphrase.c - read a passphrase from the terminal, a file, a command
 * or standard input (see passphrase.h).
 *
 * Every source ends up in read_line(): read(2) into a secmem buffer of
 * PASS_MAX + 3 bytes (the passphrase, one '\r', the '\n', the NUL) until
 * a '\n' or the end of input, then finish_line() strips the line end,
 * checks the length and NUL bytes, terminates the string and wipes the
 * rest of the buffer. Anything read past the first line (the rest of a
 * passfile or of extpass output) only goes through a small stack buffer
 * that is wiped before it goes out of scope.
 *
 * Terminal: echo is turned off *before* the prompt is written, so that
 * whoever answers the prompt can never race the tcsetattr() and have the
 * answer echoed (or flushed by TCSAFLUSH). Echo stays off for both
 * entries when confirming. Signals that would kill the process while
 * echo is off get a handler that restores the settings first; the
 * handler state is global, hence the one-thread rule in passphrase.h.
 */
#include "passphrase.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "secmem.h"

#define LINE_CAP (PASS_MAX + 2)   /* the passphrase, one '\r', the '\n' */
#define BUF_SIZE (LINE_CAP + 1)   /* ... and the NUL */
#define SCRATCH_SIZE 4096         /* stack buffer for what follows line 1 */
#define PASSFILE_PEEK (64 * 1024) /* bytes of a passfile looked at after it */
#define EXTPASS_MAX (1024 * 1024) /* total extpass output we accept */

#define DEFAULT_PROMPT "Passphrase: "
#define REPEAT_PROMPT "Repeat passphrase: "

/* how read_line() reads */
enum read_mode {
	READ_CHUNKS, /* files, pipes: as much as fits */
	READ_BYTES,  /* stdin: byte by byte, never past the '\n' */
	READ_TTY,    /* canonical terminal: one read() is one line */
};

/*
 * struct line - the first line of some input, in secmem memory.
 * @buf:     BUF_SIZE bytes from secmem_alloc()
 * @got:     bytes read into @buf (the line and maybe some of what follows)
 * @end:     index of the '\n', or @got if there was none
 * @newline: a '\n' was read
 * @eof:     the end of the input was reached
 */
struct line {
	char *buf;
	size_t got;
	size_t end;
	bool newline;
	bool eof;
};

/* the signals that restore the terminal before they kill us */
static const int tty_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
#define N_TTY_SIGNALS (sizeof(tty_signals) / sizeof(tty_signals[0]))

/*
 * struct tty - a terminal whose echo pass_read() turned off.
 * @in:        the terminal fd read from and whose settings change
 * @out:       where the prompts go (the same terminal)
 * @saved:     the settings to restore
 * @old:       the signal handlers to restore
 * @installed: which of @old were replaced
 */
struct tty {
	int in;
	int out;
	struct termios saved;
	struct sigaction old[N_TTY_SIGNALS];
	bool installed[N_TTY_SIGNALS];
};

/* for the signal handler: the terminal to restore, -1 if none */
static volatile sig_atomic_t sig_tty_in = -1;
static volatile sig_atomic_t sig_tty_out = -1;
static struct termios sig_tty_saved;

__attribute__((format(printf, 3, 4)))
static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* write all of @s to @fd; async-signal-safe. Return: 0 or -errno. */
static int write_str(int fd, const char *s)
{
	size_t n = strlen(s);

	while (n) {
		ssize_t w = write(fd, s, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

/*
 * read_line() - read the first line of @fd into @l->buf, stopping at the
 * first '\n', at the end of input, or when LINE_CAP bytes are in.
 * Return: 0 or -errno from read(2).
 */
static int read_line(int fd, enum read_mode mode, struct line *l)
{
	l->got = 0;
	l->newline = false;
	l->eof = false;
	while (l->got < LINE_CAP) {
		size_t want = mode == READ_BYTES ? 1 : LINE_CAP - l->got;
		ssize_t n = read(fd, l->buf + l->got, want);
		char *nl;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0) {
			l->eof = true;
			break;
		}
		nl = memchr(l->buf + l->got, '\n', (size_t)n);
		l->got += (size_t)n;
		if (nl) {
			l->newline = true;
			l->end = (size_t)(nl - l->buf);
			return 0;
		}
		/* A canonical read without '\n' was ended by ^D: a line. */
		if (mode == READ_TTY)
			break;
	}
	l->end = l->got;
	return 0;
}

/*
 * finish_line() - turn the line read into a passphrase: strip the line
 * end, check it, NUL-terminate it and wipe everything after it.
 * @what, @name: the source for messages ("passphrase file", "/x/y")
 * Return: 0 with *@len set, or -ENODATA, -EMSGSIZE, -EINVAL.
 */
static int finish_line(struct line *l, const char *what, const char *name,
		       size_t *len, char *err, size_t errlen)
{
	const char *sep = name ? " " : "";
	size_t n = l->end;

	if (!name)
		name = "";
	/* Buffer full and no '\n': at least PASS_MAX + 1 bytes even without
	 * a '\r' at the end. */
	if (!l->newline && !l->eof && l->got == LINE_CAP)
		goto too_long;
	if (n && l->buf[n - 1] == '\r')
		n--;
	if (n > PASS_MAX)
		goto too_long;
	if (n == 0) {
		set_err(err, errlen, "empty passphrase from %s%s%s", what, sep,
			name);
		return -ENODATA;
	}
	if (memchr(l->buf, '\0', n)) {
		set_err(err, errlen,
			"the passphrase from %s%s%s contains a NUL byte", what,
			sep, name);
		return -EINVAL;
	}
	explicit_bzero(l->buf + n, BUF_SIZE - n);
	*len = n;
	return 0;
too_long:
	set_err(err, errlen,
		"the passphrase from %s%s%s is longer than %d bytes", what, sep,
		name, PASS_MAX);
	return -EMSGSIZE;
}

/* true if @p holds anything but line ends */
static bool has_content(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != '\n' && p[i] != '\r')
			return true;
	return false;
}

/* the part of l->buf after the first line */
static bool rest_has_content(const struct line *l)
{
	return l->newline && has_content(l->buf + l->end + 1,
					 l->got - l->end - 1);
}

static int line_alloc(struct line *l, char *err, size_t errlen)
{
	l->buf = secmem_alloc(BUF_SIZE);
	if (!l->buf) {
		int rc = -errno;

		set_err(err, errlen,
			"cannot lock memory for the passphrase: %s (see "
			"ulimit -l)", strerror(-rc));
		return rc;
	}
	return 0;
}

/* -------------------------------------------------------------------- */
/* terminal */

static void tty_on_signal(int sig)
{
	int saved_errno = errno;
	struct sigaction dfl;

	if (sig_tty_in >= 0) {
		tcsetattr(sig_tty_in, TCSAFLUSH, &sig_tty_saved);
		(void)write_str(sig_tty_out, "\n");
	}
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	sigaction(sig, &dfl, NULL);
	/* Blocked while we run: delivered, and fatal, when we return. */
	raise(sig);
	errno = saved_errno;
}

static void tty_block_signals(sigset_t *old)
{
	sigset_t set;

	sigemptyset(&set);
	for (size_t i = 0; i < N_TTY_SIGNALS; i++)
		sigaddset(&set, tty_signals[i]);
	sigprocmask(SIG_BLOCK, &set, old);
}

static void tty_restore_handlers(struct tty *t)
{
	for (size_t i = 0; i < N_TTY_SIGNALS; i++) {
		if (t->installed[i])
			sigaction(tty_signals[i], &t->old[i], NULL);
		t->installed[i] = false;
	}
}

/*
 * tty_echo_off() - save the settings of t->in, install the signal
 * handlers, then turn echo off (canonical mode stays on).
 * Return: 0 or -errno.
 */
static int tty_echo_off(struct tty *t)
{
	struct termios noecho;
	struct sigaction sa;
	sigset_t oldmask;
	int rc = 0;

	tty_block_signals(&oldmask);
	if (tcgetattr(t->in, &t->saved) != 0) {
		rc = -errno;
		goto unblock;
	}
	sig_tty_saved = t->saved;
	sig_tty_out = t->out;
	sig_tty_in = t->in;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = tty_on_signal;
	sigfillset(&sa.sa_mask);
	for (size_t i = 0; i < N_TTY_SIGNALS; i++) {
		t->installed[i] = false;
		if (sigaction(tty_signals[i], NULL, &t->old[i]) != 0)
			continue;
		/* Ignored (nohup, background job): stays ignored. */
		if (!(t->old[i].sa_flags & SA_SIGINFO) &&
		    t->old[i].sa_handler == SIG_IGN)
			continue;
		if (sigaction(tty_signals[i], &sa, NULL) == 0)
			t->installed[i] = true;
	}

	noecho = t->saved;
	noecho.c_lflag &= ~(tcflag_t)(ECHO | ECHONL);
	noecho.c_lflag |= ICANON;
	while (tcsetattr(t->in, TCSAFLUSH, &noecho) != 0) {
		if (errno == EINTR)
			continue;
		rc = -errno;
		goto restore_handlers;
	}
	goto unblock;

restore_handlers:
	tty_restore_handlers(t);
	sig_tty_in = -1;
unblock:
	sigprocmask(SIG_SETMASK, &oldmask, NULL);
	return rc;
}

/* tty_echo_on() - undo tty_echo_off(): settings, then handlers. */
static void tty_echo_on(struct tty *t)
{
	sigset_t oldmask;

	/* Blocked: a signal now goes to the caller's handler afterwards. */
	tty_block_signals(&oldmask);
	while (tcsetattr(t->in, TCSAFLUSH, &t->saved) != 0 && errno == EINTR)
		;
	sig_tty_in = -1;
	tty_restore_handlers(t);
	sigprocmask(SIG_SETMASK, &oldmask, NULL);
}

/* one entry: prompt, line, newline (echo is off) */
static int tty_entry(struct tty *t, const char *prompt, struct line *l,
		     size_t *len, char *err, size_t errlen)
{
	int rc;

	rc = write_str(t->out, prompt);
	if (rc) {
		set_err(err, errlen, "cannot write to the terminal: %s",
			strerror(-rc));
		return rc;
	}
	rc = read_line(t->in, READ_TTY, l);
	/* The Enter (or ^D) was not echoed. */
	(void)write_str(t->out, "\n");
	if (rc) {
		set_err(err, errlen, "cannot read from the terminal: %s",
			strerror(-rc));
		return rc;
	}
	return finish_line(l, "the terminal", NULL, len, err, errlen);
}

/*
 * tty_read() - read from the terminal t->in with echo off, twice with
 * @confirm. On success *@out is the secmem buffer of the first entry.
 */
static int tty_read(struct tty *t, const char *prompt, bool confirm,
		    char **out, size_t *len, char *err, size_t errlen)
{
	struct line first = { 0 }, second = { 0 };
	size_t len2 = 0;
	int rc;

	rc = line_alloc(&first, err, errlen);
	if (rc)
		return rc;
	if (confirm) {
		rc = line_alloc(&second, err, errlen);
		if (rc)
			goto free_first;
	}
	rc = tty_echo_off(t);
	if (rc) {
		set_err(err, errlen, "cannot turn off echo on the terminal: %s",
			strerror(-rc));
		goto free_second;
	}
	rc = tty_entry(t, prompt, &first, len, err, errlen);
	if (rc || !confirm)
		goto echo_on;
	rc = tty_entry(t, REPEAT_PROMPT, &second, &len2, err, errlen);
	if (rc)
		goto echo_on;
	if (len2 != *len || !ct_memeq(first.buf, second.buf, *len)) {
		set_err(err, errlen, "the passphrases do not match");
		rc = -EINVAL;
	}
echo_on:
	tty_echo_on(t);
free_second:
	secmem_free(second.buf); /* wipes the second entry */
	if (!rc) {
		*out = first.buf;
		return 0;
	}
free_first:
	secmem_free(first.buf);
	*len = 0;
	return rc;
}

/* -------------------------------------------------------------------- */
/* file, stdin, extpass */

static int file_read(const char *path, char **out, size_t *len, char *err,
		     size_t errlen)
{
	char scratch[SCRATCH_SIZE];
	struct line l = { 0 };
	bool more, peek;
	struct stat st;
	int fd, rc;

	rc = line_alloc(&l, err, errlen);
	if (rc)
		return rc;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		rc = -errno;
		set_err(err, errlen, "cannot read passphrase file %s: %s", path,
			strerror(-rc));
		goto free_buf;
	}
	rc = read_line(fd, READ_CHUNKS, &l);
	if (rc) {
		set_err(err, errlen, "cannot read passphrase file %s: %s", path,
			strerror(-rc));
		goto close_fd;
	}
	/*
	 * Is there more than line ends after the first line? Only a regular
	 * file is read further: a FIFO's writer may never close it.
	 */
	more = rest_has_content(&l);
	peek = l.newline && !more && fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
	for (size_t seen = 0; peek && !more && seen < PASSFILE_PEEK;) {
		ssize_t n = read(fd, scratch, sizeof(scratch));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		more = has_content(scratch, (size_t)n);
		seen += (size_t)n;
	}
	explicit_bzero(scratch, sizeof(scratch));
	rc = finish_line(&l, "passphrase file", path, len, err, errlen);
	if (rc)
		goto close_fd;
	if (more)
		fprintf(stderr, "xtsfs: %s: only the first line is used\n",
			path);
	close(fd);
	*out = l.buf;
	return 0;

close_fd:
	close(fd);
free_buf:
	secmem_free(l.buf);
	return rc;
}

static int stdin_read(char **out, size_t *len, char *err, size_t errlen)
{
	struct line l = { 0 };
	int rc;

	rc = line_alloc(&l, err, errlen);
	if (rc)
		return rc;
	rc = read_line(STDIN_FILENO, READ_BYTES, &l);
	if (rc) {
		set_err(err, errlen, "cannot read standard input: %s",
			strerror(-rc));
		goto free_buf;
	}
	rc = finish_line(&l, "standard input", NULL, len, err, errlen);
	if (rc)
		goto free_buf;
	*out = l.buf;
	return 0;

free_buf:
	secmem_free(l.buf);
	return rc;
}

/* in the child: stdout to @wfd, then the shell; never returns */
static void extpass_exec(const char *cmd, int wfd)
{
	struct sigaction dfl;
	sigset_t none;

	/* The command gets the usual signals, whatever we block or ignore. */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigaction(SIGPIPE, &dfl, NULL);
	if (wfd == STDOUT_FILENO) {
		if (fcntl(wfd, F_SETFD, 0) != 0)
			_exit(127);
	} else if (dup2(wfd, STDOUT_FILENO) < 0) {
		_exit(127);
	}
	execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
	_exit(127);
}

/*
 * extpass_drain() - read what follows the first line, so that a command
 * printing more than one line is never killed by SIGPIPE (closing the
 * pipe early races even with "echo a; echo b"): until the end of output
 * or, once the command @pid has exited, until the pipe is empty (so a
 * background process it left holding the pipe cannot hang us).
 * Return: 0, or -EMSGSIZE if more than EXTPASS_MAX bytes came in all.
 */
static int extpass_drain(int fd, pid_t pid, struct line *l, bool *more)
{
	char scratch[SCRATCH_SIZE];
	size_t total = l->got;
	bool exited = false;
	int pidfd = -1;
	int rc = 0;

#ifdef SYS_pidfd_open
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0); /* -1: drain to EOF */
#else
	(void)pid;
#endif
	while (!l->eof) {
		struct pollfd pfd[2] = {
			{ .fd = fd, .events = POLLIN },
			{ .fd = pidfd, .events = POLLIN },
		};
		nfds_t nfds = pidfd >= 0 && !exited ? 2 : 1;
		ssize_t n;
		int ready;

		ready = poll(pfd, nfds, exited ? 0 : -1);
		if (ready < 0 && errno == EINTR)
			continue;
		if (ready < 0)
			break; /* a failure here loses only ignored output */
		if (nfds == 2 && pfd[1].revents)
			exited = true;
		if (!pfd[0].revents) {
			if (exited && nfds == 1)
				break; /* exited and nothing left */
			continue;
		}
		n = read(fd, scratch, sizeof(scratch));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (total + (size_t)n > EXTPASS_MAX) {
			rc = -EMSGSIZE;
			break;
		}
		total += (size_t)n;
		if (!*more)
			*more = has_content(scratch, (size_t)n);
	}
	explicit_bzero(scratch, sizeof(scratch));
	if (pidfd >= 0)
		close(pidfd);
	return rc;
}

static int extpass_read(const char *cmd, char **out, size_t *len, char *err,
			size_t errlen)
{
	struct line l = { 0 };
	int pfd[2], status, rc, drain_rc;
	bool more = false;
	pid_t pid;

	rc = line_alloc(&l, err, errlen);
	if (rc)
		return rc;
	if (pipe2(pfd, O_CLOEXEC) != 0) {
		rc = -errno;
		set_err(err, errlen, "cannot start the extpass command: %s",
			strerror(-rc));
		goto free_buf;
	}
	pid = fork();
	if (pid < 0) {
		rc = -errno;
		set_err(err, errlen, "cannot start the extpass command: %s",
			strerror(-rc));
		goto close_pipe;
	}
	if (pid == 0)
		extpass_exec(cmd, pfd[1]);
	close(pfd[1]);
	pfd[1] = -1;

	rc = read_line(pfd[0], READ_CHUNKS, &l);
	more = rest_has_content(&l);
	drain_rc = rc ? 0 : extpass_drain(pfd[0], pid, &l, &more);
	close(pfd[0]);
	pfd[0] = -1;

	/* The command is never named: it may hold a secret ("echo pw"). */
	while (waitpid(pid, &status, 0) < 0) {
		if (errno == EINTR)
			continue;
		rc = -errno;
		set_err(err, errlen,
			"cannot get the exit status of the extpass command: %s",
			strerror(-rc));
		goto free_buf;
	}
	if (rc) {
		set_err(err, errlen,
			"cannot read the output of the extpass command: %s",
			strerror(-rc));
		goto free_buf;
	}
	if (drain_rc) {
		rc = drain_rc;
		set_err(err, errlen,
			"the extpass command printed more than %d bytes",
			EXTPASS_MAX);
		goto free_buf;
	}
	if (WIFSIGNALED(status)) {
		rc = -ECHILD;
		set_err(err, errlen,
			"the extpass command was killed by signal %d (%s)",
			WTERMSIG(status), strsignal(WTERMSIG(status)));
		goto free_buf;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		rc = -ECHILD;
		set_err(err, errlen,
			"the extpass command failed with exit status %d",
			WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		goto free_buf;
	}
	rc = finish_line(&l, "the extpass command", NULL, len, err, errlen);
	if (rc)
		goto free_buf;
	if (more)
		fprintf(stderr,
			"xtsfs: extpass: only the first line is used\n");
	*out = l.buf;
	return 0;

close_pipe:
	close(pfd[0]);
	close(pfd[1]);
free_buf:
	secmem_free(l.buf);
	return rc;
}

/* -------------------------------------------------------------------- */

/* see passphrase.h */
int pass_read(const struct pass_source *src, const char *prompt, bool confirm,
	      char **out, size_t *len, char *err, size_t errlen)
{
	struct tty t = { .in = -1, .out = -1 };
	int rc, fl;

	if (err && errlen)
		err[0] = '\0';
	if (out)
		*out = NULL;
	if (len)
		*len = 0;
	if (!src || !out || !len) {
		set_err(err, errlen, "pass_read: invalid argument");
		return -EINVAL;
	}
	if (!prompt)
		prompt = DEFAULT_PROMPT;

	switch (src->kind) {
	case PASS_FILE:
		if (!src->arg || !*src->arg) {
			set_err(err, errlen, "no passphrase file given");
			return -EINVAL;
		}
		return file_read(src->arg, out, len, err, errlen);
	case PASS_EXTPASS:
		if (!src->arg || !*src->arg) {
			set_err(err, errlen, "no extpass command given");
			return -EINVAL;
		}
		return extpass_read(src->arg, out, len, err, errlen);
	case PASS_STDIN:
		if (!isatty(STDIN_FILENO))
			return stdin_read(out, len, err, errlen);
		/* Prompt on stdin itself if it is open for writing. */
		t.in = STDIN_FILENO;
		fl = fcntl(STDIN_FILENO, F_GETFL);
		t.out = fl >= 0 && (fl & O_ACCMODE) == O_RDWR ? STDIN_FILENO :
								STDERR_FILENO;
		return tty_read(&t, prompt, confirm, out, len, err, errlen);
	case PASS_AUTO:
		if (!isatty(STDIN_FILENO))
			return stdin_read(out, len, err, errlen);
		t.in = open("/dev/tty", O_RDWR | O_CLOEXEC);
		if (t.in < 0) {
			set_err(err, errlen,
				"cannot open the terminal /dev/tty: %s",
				strerror(errno));
			return -ENXIO;
		}
		t.out = t.in;
		rc = tty_read(&t, prompt, confirm, out, len, err, errlen);
		close(t.in);
		return rc;
	}
	set_err(err, errlen, "pass_read: unknown passphrase source %d",
		(int)src->kind);
	return -EINVAL;
}

/* see passphrase.h */
void pass_free(char *pass)
{
	secmem_free(pass);
}
