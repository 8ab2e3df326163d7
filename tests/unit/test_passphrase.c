/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_passphrase.c - pass_read() from every source: passfiles (line
 * ends, several lines, empty, 4096 and 4097 bytes, missing, NUL inside),
 * extpass commands (output, spaces, exit status, signals, big output, a
 * background process holding the pipe, no zombies left), stdin from a
 * pipe (one line per call), and the terminal for real on a pty from
 * forkpty(): prompt shown, nothing echoed, confirmation, settings and
 * signal handlers restored, and ^C while echo is off; and -ENXIO when
 * stdin is a terminal but there is no controlling terminal.
 *
 * Exit status: 0 if every check passed, 1 otherwise.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "passphrase.h"
#include "testutil.h"

#define PTY_PROMPT "Passphrase for /srv/vol: "
#define PTY_REPEAT "Repeat passphrase: "
#define PTY_TIMEOUT_MS 10000

static char tmpdir[] = "/tmp/xtsfs-pass-XXXXXX";
static char *created[64];
static size_t ncreated;

/* a file under tmpdir holding @len bytes of @data; its path */
static const char *mkfile(const char *name, const void *data, size_t len)
{
	char *path = NULL;
	int fd;

	if (asprintf(&path, "%s/%s", tmpdir, name) < 0 || !path ||
	    ncreated == sizeof(created) / sizeof(created[0])) {
		fprintf(stderr, "out of memory or test files\n");
		exit(1);
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, data, len) != (ssize_t)len || close(fd)) {
		perror(path);
		exit(1);
	}
	created[ncreated++] = path;
	return path;
}

static void cleanup(void)
{
	for (size_t i = 0; i < ncreated; i++) {
		unlink(created[i]);
		free(created[i]);
	}
	ncreated = 0;
	rmdir(tmpdir);
}

/*
 * One pass_read() call. @want_pass: the passphrase expected if @want_rc
 * is 0. @want_msg: a substring the error must contain. @secret: a string
 * that must not appear in the error.
 */
static void expect(const char *name, const struct pass_source *src,
		   int want_rc, const char *want_pass, const char *want_msg,
		   const char *secret)
{
	char err[512], *pass = (char *)1;
	size_t len = 12345;
	int rc;

	memset(err, 'x', sizeof(err));
	rc = pass_read(src, "Passphrase: ", true, &pass, &len, err,
		       sizeof(err));
	CHECK(rc == want_rc, "%s: got %d (%s), want %d", name, rc,
	      rc ? err : "ok", want_rc);
	if (rc == 0) {
		CHECK(pass != NULL && pass != (char *)1, "%s: no buffer", name);
		if (want_pass && pass && pass != (char *)1) {
			CHECK(len == strlen(want_pass) &&
				      memcmp(pass, want_pass, len) == 0,
			      "%s: wrong passphrase (%zu bytes, want %zu)",
			      name, len, strlen(want_pass));
			CHECK(pass[len] == '\0', "%s: not NUL-terminated",
			      name);
		}
		pass_free(pass);
		return;
	}
	CHECK(pass == NULL && len == 0, "%s: *out/*len set on error", name);
	CHECK(memchr(err, '\0', sizeof(err)) && err[0],
	      "%s: no error message", name);
	err[sizeof(err) - 1] = '\0';
	CHECK(!strchr(err, '\n'), "%s: message is not one line: %s", name,
	      err);
	if (want_msg)
		CHECK(strstr(err, want_msg), "%s: message \"%s\" lacks \"%s\"",
		      name, err, want_msg);
	if (secret)
		CHECK(!strstr(err, secret), "%s: message leaks the secret: %s",
		      name, err);
	printf("  %s: %s\n", name, err);
}

/* stderr into tmpdir/stderr until stderr_end(), which reads it back */
static char stderr_text[4096];

static int stderr_begin(void)
{
	const char *path = mkfile("stderr", "", 0);
	int saved = dup(STDERR_FILENO);
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);

	if (saved < 0 || fd < 0 || dup2(fd, STDERR_FILENO) < 0) {
		perror("stderr capture");
		exit(1);
	}
	close(fd);
	return saved;
}

static void stderr_end(int saved)
{
	char path[64];
	ssize_t n;
	int fd;

	dup2(saved, STDERR_FILENO);
	close(saved);
	snprintf(path, sizeof(path), "%s/stderr", tmpdir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd < 0 ? -1 : read(fd, stderr_text, sizeof(stderr_text) - 1);
	stderr_text[n < 0 ? 0 : n] = '\0';
	if (fd >= 0)
		close(fd);
	/* Shown again: it may hold FAIL lines of the checks run meanwhile. */
	fputs(stderr_text, stderr);
}

static void test_passfile(void)
{
	static char big[PASS_MAX + 3];
	struct pass_source src = { PASS_FILE, NULL };
	char missing[64];
	int saved;

	printf("passfile:\n");
	src.arg = mkfile("lf", "secret\n", 7);
	expect("secret\\n", &src, 0, "secret", NULL, NULL);
	src.arg = mkfile("crlf", "secret\r\n", 8);
	expect("secret\\r\\n", &src, 0, "secret", NULL, NULL);
	src.arg = mkfile("nolf", "secret", 6);
	expect("secret (no newline)", &src, 0, "secret", NULL, NULL);
	src.arg = mkfile("spaces", " a b \n", 6);
	expect("spaces kept", &src, 0, " a b ", NULL, NULL);
	src.arg = mkfile("cr2", "secret\r\r\n", 9);
	expect("only one \\r stripped", &src, 0, "secret\r", NULL, NULL);

	src.arg = mkfile("twolines", "alpha\nbravo\n", 12);
	saved = stderr_begin();
	expect("two lines", &src, 0, "alpha", NULL, NULL);
	stderr_end(saved);
	CHECK(strstr(stderr_text, "only the first line is used") &&
		      strstr(stderr_text, src.arg),
	      "no warning about the second line: \"%s\"", stderr_text);
	CHECK(!strstr(stderr_text, "alpha") && !strstr(stderr_text, "bravo"),
	      "warning shows file contents: \"%s\"", stderr_text);
	src.arg = mkfile("lf-lf", "first\n\r\n\n", 9);
	saved = stderr_begin();
	expect("first line, then empty lines", &src, 0, "first", NULL, NULL);
	stderr_end(saved);
	CHECK(stderr_text[0] == '\0', "warning for empty lines: \"%s\"",
	      stderr_text);

	src.arg = mkfile("empty", "", 0);
	expect("empty file", &src, -ENODATA, NULL, "empty", NULL);
	src.arg = mkfile("justlf", "\n", 1);
	expect("\\n", &src, -ENODATA, NULL, "empty", NULL);
	src.arg = mkfile("justcrlf", "\r\nsecond\n", 9);
	expect("\\r\\n then a line", &src, -ENODATA, NULL, "empty", "second");

	memset(big, 'a', sizeof(big));
	big[PASS_MAX] = '\0';
	src.arg = mkfile("4096", big, PASS_MAX);
	expect("4096 bytes", &src, 0, big, NULL, NULL);
	memcpy(big + PASS_MAX, "\r\n", 2);
	src.arg = mkfile("4096crlf", big, PASS_MAX + 2);
	big[PASS_MAX] = '\0';
	expect("4096 bytes + \\r\\n", &src, 0, big, NULL, NULL);
	big[PASS_MAX] = 'a';
	src.arg = mkfile("4097", big, PASS_MAX + 1);
	expect("4097 bytes", &src, -EMSGSIZE, NULL, "4096", "aaaa");
	big[PASS_MAX + 1] = '\n';
	src.arg = mkfile("4097lf", big, PASS_MAX + 2);
	expect("4097 bytes + \\n", &src, -EMSGSIZE, NULL, "4096", NULL);
	big[PASS_MAX + 1] = '\r';
	big[PASS_MAX + 2] = '\n';
	src.arg = mkfile("4097crlf", big, PASS_MAX + 3);
	expect("4097 bytes + \\r\\n", &src, -EMSGSIZE, NULL, "4096", NULL);

	snprintf(missing, sizeof(missing), "%s/missing", tmpdir);
	src.arg = missing;
	expect("missing file", &src, -ENOENT, NULL, missing, NULL);
	CHECK(pass_read(&src, NULL, false, &(char *){ NULL }, &(size_t){ 0 },
			NULL, 0) == -ENOENT,
	      "err NULL: wrong result");
	src.arg = tmpdir;
	expect("a directory", &src, -EISDIR, NULL, tmpdir, NULL);
	src.arg = mkfile("nul", "sec\0ret\n", 8);
	expect("NUL inside", &src, -EINVAL, NULL, "NUL", "ret");
	src.arg = "";
	expect("no file name", &src, -EINVAL, NULL, NULL, NULL);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void test_extpass(void)
{
	struct pass_source src = { PASS_EXTPASS, NULL };
	static char big[PASS_MAX + 1];
	double t0;
	int saved, st;

	printf("extpass:\n");
	src.arg = "echo hunter2";
	expect("echo hunter2", &src, 0, "hunter2", NULL, NULL);
	src.arg = "printf 'a b c\\n'";
	expect("printf 'a b c\\n'", &src, 0, "a b c", NULL, NULL);
	src.arg = "printf 'crlf\\r\\n'";
	expect("\\r\\n", &src, 0, "crlf", NULL, NULL);
	src.arg = "printf nonewline";
	expect("no newline", &src, 0, "nonewline", NULL, NULL);
	src.arg = "echo hunter2; exit 3";
	expect("exit 3", &src, -ECHILD, NULL, "status 3", "hunter2");
	src.arg = "exit 3";
	expect("exit 3 (no output)", &src, -ECHILD, NULL, "status 3", NULL);
	src.arg = "echo hunter2; kill -9 $$";
	expect("killed", &src, -ECHILD, NULL, "signal 9", "hunter2");
	src.arg = "/nonexistent/xtsfs-extpass 2>/dev/null";
	expect("command not found", &src, -ECHILD, NULL, "status 127", NULL);
	src.arg = "true";
	expect("true (empty)", &src, -ENODATA, NULL, "empty", NULL);
	src.arg = "echo";
	expect("echo (empty line)", &src, -ENODATA, NULL, "empty", NULL);
	src.arg = "printf 'ab\\000cd\\n'";
	expect("NUL inside", &src, -EINVAL, NULL, "NUL", NULL);

	memset(big, 'x', sizeof(big));
	big[PASS_MAX] = '\0';
	src.arg = "head -c 4096 /dev/zero | tr '\\000' x";
	expect("4096 bytes", &src, 0, big, NULL, NULL);
	src.arg = "head -c 4097 /dev/zero | tr '\\000' x";
	expect("4097 bytes", &src, -EMSGSIZE, NULL, "4096", "xxxx");

	src.arg = "echo first; echo second";
	saved = stderr_begin();
	expect("two lines", &src, 0, "first", NULL, NULL);
	stderr_end(saved);
	CHECK(strstr(stderr_text, "only the first line is used") &&
		      !strstr(stderr_text, "second"),
	      "wrong warning about the second line: \"%s\"", stderr_text);
	/* Bigger than a pipe buffer: must be read, not killed by SIGPIPE. */
	src.arg = "seq 1 100000";
	saved = stderr_begin();
	expect("600 KB of output", &src, 0, "1", NULL, NULL);
	stderr_end(saved);
	src.arg = "seq 1 300000";
	expect("2 MB of output", &src, -EMSGSIZE, NULL, "more than", NULL);
	/* A background process holding the pipe must not make us wait. */
	src.arg = "echo bg; sleep 3 2>/dev/null &";
	t0 = now();
	expect("background holder", &src, 0, "bg", NULL, NULL);
	CHECK(now() - t0 < 2.5, "waited %.1f s for a background process",
	      now() - t0);
	src.arg = NULL;
	expect("no command", &src, -EINVAL, NULL, NULL, NULL);

	errno = 0;
	CHECK(waitpid(-1, &st, WNOHANG) < 0 && errno == ECHILD,
	      "a child was left behind (zombie or still running)");
}

/* @data on a pipe as stdin until stdin_end() */
static int stdin_begin(const char *data)
{
	int saved = dup(STDIN_FILENO), p[2];

	if (saved < 0 || pipe(p) || write(p[1], data, strlen(data)) < 0 ||
	    dup2(p[0], STDIN_FILENO) < 0) {
		perror("stdin pipe");
		exit(1);
	}
	close(p[0]);
	close(p[1]);
	return saved;
}

static void stdin_end(int saved)
{
	dup2(saved, STDIN_FILENO);
	close(saved);
}

static void test_stdin(void)
{
	struct pass_source src = { PASS_STDIN, NULL };
	struct pass_source autosrc = { PASS_AUTO, NULL };
	struct pass_source ext = { PASS_EXTPASS, "head -n 1" };
	int saved;

	printf("stdin:\n");
	saved = stdin_begin("one\ntwo 2\r\n\nthree");
	expect("line 1", &src, 0, "one", NULL, NULL);
	expect("line 2 (nothing read past line 1)", &src, 0, "two 2", NULL,
	       NULL);
	expect("empty line 3", &src, -ENODATA, NULL, "empty", NULL);
	expect("auto, not a tty: line 4", &autosrc, 0, "three", NULL, NULL);
	expect("at EOF", &src, -ENODATA, NULL, "empty", NULL);
	stdin_end(saved);

	saved = stdin_begin("fromstdin\n");
	expect("extpass inherits stdin", &ext, 0, "fromstdin", NULL, NULL);
	stdin_end(saved);
}

/* ------------------------------------------------------------------ */
/* the terminal, on a pty */

struct pty_report {
	int rc;
	size_t len;
	char pass[32];
	char err[256];
	int echo_restored; /* ECHO set again after pass_read() */
	int handler_kept;  /* our SIGINT handler back after pass_read() */
	int killed_by;     /* set by the parent: the child's fatal signal */
};

static void dummy_handler(int sig)
{
	(void)sig;
}

/* the child: pass_read() on its controlling pty; the result on @wfd */
static void pty_child(enum pass_kind kind, bool confirm, int wfd)
{
	struct pass_source src = { kind, NULL };
	struct sigaction sa, cur;
	struct pty_report rep;
	struct termios tio;
	char *pass = NULL;

	memset(&rep, 0, sizeof(rep));
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = dummy_handler;
	sigaction(SIGINT, &sa, NULL);
	rep.rc = pass_read(&src, PTY_PROMPT, confirm, &pass, &rep.len,
			   rep.err, sizeof(rep.err));
	if (pass && rep.len < sizeof(rep.pass))
		memcpy(rep.pass, pass, rep.len);
	pass_free(pass);
	rep.echo_restored = tcgetattr(STDIN_FILENO, &tio) == 0 &&
			    (tio.c_lflag & ECHO);
	rep.handler_kept = sigaction(SIGINT, NULL, &cur) == 0 &&
			   cur.sa_handler == dummy_handler;
	if (write(wfd, &rep, sizeof(rep)) != sizeof(rep))
		_exit(2);
	_exit(0);
}

/*
 * Read the pty into @buf until @text shows up (NULL: until the child
 * closes it). Return: true if found (or closed).
 */
static bool pty_wait(int master, char *buf, size_t cap, size_t *n,
		     const char *text)
{
	double end = now() + PTY_TIMEOUT_MS / 1000.0;

	while (!text || !strstr(buf, text)) {
		struct pollfd p = { .fd = master, .events = POLLIN };
		int left = (int)((end - now()) * 1000);
		ssize_t r;

		if (left <= 0 || poll(&p, 1, left) <= 0)
			return false;
		r = read(master, buf + *n, cap - 1 - *n);
		if (r <= 0)
			return !text; /* EIO: the child closed the pty */
		*n += (size_t)r;
		buf[*n] = '\0';
	}
	return true;
}

static bool pty_echo_on(int master)
{
	struct termios tio;

	/* On Linux, the master reports the slave's settings. */
	return tcgetattr(master, &tio) == 0 && (tio.c_lflag & ECHO);
}

/*
 * Run pass_read(@kind, @confirm) in a child on a new pty, answer the
 * first prompt with @in1 and the repeat prompt (if @in2) with @in2.
 * Return: the child's report, or rc 1 if something went wrong.
 */
static struct pty_report pty_run(const char *name, enum pass_kind kind,
				 bool confirm, const char *in1, const char *in2)
{
	struct pty_report rep = { .rc = 1 };
	char out[8192] = "";
	int master, rp[2], st = 0;
	size_t n = 0;
	pid_t pid;

	if (pipe2(rp, O_CLOEXEC)) {
		perror("pipe2");
		exit(1);
	}
	fflush(NULL);
	pid = forkpty(&master, NULL, NULL, NULL);
	if (pid < 0) {
		CHECK(pid >= 0, "%s: forkpty: %s", name, strerror(errno));
		close(rp[0]);
		close(rp[1]);
		return rep;
	}
	if (pid == 0) {
		close(rp[0]);
		pty_child(kind, confirm, rp[1]);
	}
	close(rp[1]);

	if (!pty_wait(master, out, sizeof(out), &n, PTY_PROMPT)) {
		CHECK(0, "%s: no prompt; pty shows \"%s\"", name, out);
		goto kill_child;
	}
	CHECK(!pty_echo_on(master), "%s: echo on at the prompt", name);
	if (write(master, in1, strlen(in1)) < 0)
		goto kill_child;
	if (in2) {
		if (!pty_wait(master, out, sizeof(out), &n, PTY_REPEAT)) {
			CHECK(0, "%s: no repeat prompt; pty shows \"%s\"",
			      name, out);
			goto kill_child;
		}
		CHECK(!pty_echo_on(master), "%s: echo on at the repeat prompt",
		      name);
		if (write(master, in2, strlen(in2)) < 0)
			goto kill_child;
	}
	if (!pty_wait(master, out, sizeof(out), &n, NULL)) {
		CHECK(0, "%s: child did not finish; pty shows \"%s\"", name,
		      out);
		goto kill_child;
	}
	waitpid(pid, &st, 0);
	if (WIFSIGNALED(st)) {
		rep.killed_by = WTERMSIG(st);
		rep.echo_restored = pty_echo_on(master);
		goto close_master;
	}
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: child status %#x",
	      name, st);
	if (read(rp[0], &rep, sizeof(rep)) != sizeof(rep)) {
		CHECK(0, "%s: no report from the child", name);
		rep.rc = 1;
	}
	rep.err[sizeof(rep.err) - 1] = '\0';
	CHECK(!strstr(out, "pw1") && !strstr(out, "pw2"),
	      "%s: passphrase echoed: \"%s\"", name, out);
	CHECK(strstr(out, PTY_PROMPT), "%s: prompt not shown", name);
	CHECK(!strstr(rep.err, "pw1") && !strstr(rep.err, "pw2"),
	      "%s: message leaks the passphrase", name);
	goto close_master;

kill_child:
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
close_master:
	close(master);
	close(rp[0]);
	return rep;
}

static void test_tty(void)
{
	struct pty_report rep;

	printf("terminal (pty):\n");
	rep = pty_run("auto, confirmed", PASS_AUTO, true, "pw1\n", "pw1\n");
	CHECK(rep.rc == 0, "auto, confirmed: rc %d (%s)", rep.rc, rep.err);
	CHECK(rep.len == 3 && memcmp(rep.pass, "pw1", 3) == 0,
	      "auto, confirmed: wrong passphrase (%zu bytes)", rep.len);
	CHECK(rep.echo_restored, "auto, confirmed: echo not restored");
	CHECK(rep.handler_kept, "auto, confirmed: SIGINT handler not restored");

	rep = pty_run("auto, different", PASS_AUTO, true, "pw1\n", "pw2\n");
	CHECK(rep.rc == -EINVAL, "auto, different: rc %d (%s)", rep.rc,
	      rep.err);
	CHECK(strstr(rep.err, "match"), "auto, different: message \"%s\"",
	      rep.err);
	CHECK(rep.echo_restored, "auto, different: echo not restored");
	CHECK(rep.handler_kept, "auto, different: SIGINT handler not restored");
	printf("  different entries: %s\n", rep.err);

	rep = pty_run("auto, empty", PASS_AUTO, true, "\r\n", NULL);
	CHECK(rep.rc == -ENODATA, "auto, empty: rc %d (%s)", rep.rc, rep.err);
	CHECK(rep.echo_restored, "auto, empty: echo not restored");

	rep = pty_run("stdin on a tty", PASS_STDIN, false, "pw1 x\n", NULL);
	CHECK(rep.rc == 0 && rep.len == 5 && !memcmp(rep.pass, "pw1 x", 5),
	      "stdin on a tty: rc %d (%s), %zu bytes", rep.rc, rep.err,
	      rep.len);
	CHECK(rep.echo_restored, "stdin on a tty: echo not restored");

	/* ^C while echo is off: settings restored, then killed by SIGINT. */
	rep = pty_run("^C", PASS_AUTO, true, "\003", NULL);
	CHECK(rep.killed_by == SIGINT,
	      "^C: child not killed by SIGINT (signal %d, rc %d)",
	      rep.killed_by, rep.rc);
	CHECK(rep.echo_restored, "^C: echo left off");
}

/* stdin is a terminal but there is no controlling terminal: -ENXIO */
static void test_no_ctty(void)
{
	int master, slave, st = 0;
	pid_t pid;

	printf("no controlling terminal:\n");
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		struct pass_source src = { PASS_AUTO, NULL };
		char err[256], *pass = NULL;
		size_t len;
		int rc;

		alarm(10);
		/* A new session has no terminal; openpty() uses O_NOCTTY. */
		if (setsid() < 0 ||
		    openpty(&master, &slave, NULL, NULL, NULL) != 0 ||
		    dup2(slave, STDIN_FILENO) < 0)
			_exit(3);
		rc = pass_read(&src, NULL, false, &pass, &len, err,
			       sizeof(err));
		printf("  %s\n", rc ? err : "(read a passphrase?)");
		fflush(NULL);
		_exit(rc == -ENXIO ? 0 : 1);
	}
	CHECK(pid > 0, "fork: %s", strerror(errno));
	if (pid < 0)
		return;
	waitpid(pid, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	      "no -ENXIO without a controlling terminal (status %#x)", st);
}

/* open file descriptors of this process */
static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

int main(void)
{
	int fds = count_fds();

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	test_passfile();
	test_extpass();
	test_stdin();
	test_tty();
	test_no_ctty();
	cleanup();
	CHECK(count_fds() == fds, "file descriptors leaked: %d open, was %d",
	      count_fds(), fds);
	if (test_failures) {
		printf("test_passphrase: %d check(s) FAILED\n", test_failures);
		return 1;
	}
	printf("test_passphrase: all checks passed\n");
	return 0;
}
