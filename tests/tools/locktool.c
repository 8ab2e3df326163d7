/* SPDX-License-Identifier: Apache-2.0 */
/*
 * locktool - fcntl(2) record locks step by step, for
 * tests/bats/39-locks.bats: `locktool FILE STEP...` runs each step in
 * order on one descriptor of FILE and prints what the queries found.
 *
 *   open:rw | open:r        open FILE (again: the old descriptor stays)
 *   close                   close the last descriptor opened
 *   set:T:START:LEN         F_SETLK of type T (r, w, u) on the range
 *   setw:T:START:LEN        F_SETLKW
 *   ofd:T:START:LEN         F_OFD_SETLK, ofdw:... F_OFD_SETLKW
 *   get:T:START:LEN         F_GETLK: prints "none", or "T START LEN PID"
 *   ofdget:T:START:LEN      F_OFD_GETLK, likewise
 *   flock:sh|ex|un          flock(2), blocking; flock-nb:... not
 *   cat                     print what the descriptor reads from offset 0
 *                           (up to 4 KiB; a read through the page cache)
 *   touch:PATH              make PATH (tells the test we got here)
 *   await:PATH              wait until PATH exists (at most 120 s)
 *   intr                    from now on SIGUSR1 interrupts a waiting
 *                           F_SETLKW (a handler without SA_RESTART)
 *
 * Exit: 0; 3 a lock is held elsewhere (EAGAIN, EACCES: "busy" printed);
 * 4 a wait was interrupted (EINTR: "interrupted" printed); 1 otherwise.
 */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

/* Whether step @s, whose name is @n bytes long, is @name. */
static int is(const char *s, size_t n, const char *name)
{
	return strlen(name) == n && !strncmp(s, name, n);
}

static void on_usr1(int sig)
{
	(void)sig;
}

static int fail(const char *step, int err)
{
	if (err == EAGAIN || err == EACCES) {
		printf("busy\n");
		exit(3);
	}
	if (err == EINTR) {
		printf("interrupted\n");
		exit(4);
	}
	fprintf(stderr, "locktool: %s: %s\n", step, strerror(err));
	exit(1);
}

static short type_of(char c, const char *step)
{
	switch (c) {
	case 'r': return F_RDLCK;
	case 'w': return F_WRLCK;
	case 'u': return F_UNLCK;
	}
	fprintf(stderr, "locktool: %s: type r, w or u\n", step);
	exit(1);
}

static char name_of(short type)
{
	return type == F_RDLCK ? 'r' : type == F_WRLCK ? 'w' : 'u';
}

/* The lock "T:START:LEN" after the step's name. */
static struct flock lock_of(const char *arg, const char *step)
{
	struct flock l;
	long long start, len;
	char t;

	memset(&l, 0, sizeof(l));
	if (sscanf(arg, "%c:%lld:%lld", &t, &start, &len) != 3) {
		fprintf(stderr, "locktool: %s: T:START:LEN\n", step);
		exit(1);
	}
	l.l_type = type_of(t, step);
	l.l_whence = SEEK_SET;
	l.l_start = (off_t)start;
	l.l_len = (off_t)len;
	return l;
}

static void await(const char *path)
{
	const struct timespec tick = { 0, 10 * 1000 * 1000 };

	/* a bound against a hung test, not a timing assertion */
	for (int i = 0; i < 12000; i++) {
		if (access(path, F_OK) == 0)
			return;
		nanosleep(&tick, NULL);
	}
	fprintf(stderr, "locktool: %s never came\n", path);
	exit(1);
}

int main(int argc, char **argv)
{
	const char *file;
	int fds[16], nfd = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: locktool FILE STEP...\n");
		return 1;
	}
	setvbuf(stdout, NULL, _IONBF, 0);
	file = argv[1];
	for (int i = 2; i < argc; i++) {
		const char *s = argv[i], *arg = strchr(s, ':');
		size_t n = arg ? (size_t)(arg - s) : strlen(s);
		int fd = nfd ? fds[nfd - 1] : -1;

		arg = arg ? arg + 1 : "";
		if (is(s, n, "open")) {
			if (nfd == 16)
				return fail(s, EMFILE);
			fd = open(file, strcmp(arg, "r") ? O_RDWR : O_RDONLY);
			if (fd < 0)
				return fail(s, errno);
			fds[nfd++] = fd;
		} else if (is(s, n, "close")) {
			if (!nfd || close(fds[--nfd]))
				return fail(s, nfd ? errno : EBADF);
		} else if (is(s, n, "cat")) {
			char buf[4096];
			ssize_t got = pread(fd, buf, sizeof(buf), 0);

			if (got < 0)
				return fail(s, errno);
			fwrite(buf, 1, (size_t)got, stdout);
		} else if (is(s, n, "touch")) {
			int t = open(arg, O_WRONLY | O_CREAT, 0644);

			if (t < 0)
				return fail(s, errno);
			close(t);
		} else if (is(s, n, "await")) {
			await(arg);
		} else if (is(s, n, "intr")) {
			struct sigaction sa;

			memset(&sa, 0, sizeof(sa));
			sa.sa_handler = on_usr1; /* no SA_RESTART */
			sigaction(SIGUSR1, &sa, NULL);
		} else if (is(s, n, "flock") || is(s, n, "flock-nb")) {
			int op = !strcmp(arg, "sh") ? LOCK_SH :
				 !strcmp(arg, "ex") ? LOCK_EX : LOCK_UN;

			if (n == 8)
				op |= LOCK_NB;
			if (flock(fd, op))
				return fail(s, errno == EWOULDBLOCK ? EAGAIN :
					    errno);
		} else if (is(s, n, "get") || is(s, n, "ofdget")) {
			struct flock l = lock_of(arg, s);

			if (fcntl(fd, n == 3 ? F_GETLK : F_OFD_GETLK, &l))
				return fail(s, errno);
			if (l.l_type == F_UNLCK)
				printf("none\n");
			else
				printf("%c %lld %lld %d\n", name_of(l.l_type),
				       (long long)l.l_start,
				       (long long)l.l_len, (int)l.l_pid);
		} else {
			static const struct { const char *name; int cmd; } c[] = {
				{ "set", F_SETLK }, { "setw", F_SETLKW },
				{ "ofd", F_OFD_SETLK }, { "ofdw", F_OFD_SETLKW },
			};
			struct flock l;
			size_t k;

			for (k = 0; k < sizeof(c) / sizeof(*c); k++)
				if (is(s, n, c[k].name))
					break;
			if (k == sizeof(c) / sizeof(*c)) {
				fprintf(stderr, "locktool: %s: no such step\n",
					s);
				return 1;
			}
			l = lock_of(arg, s);
			if (fcntl(fd, c[k].cmd, &l))
				return fail(s, errno);
		}
	}
	return 0;
}
