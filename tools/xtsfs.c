/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xtsfs - mount an xtsfs cipher directory: unlock the volume, self-test
 * the cipher core, mount through FUSE, and return once the mount is
 * there (or stay in the foreground with -f).
 *
 * Daemonizing happens *before* unlocking: locked memory is not inherited
 * by a forked child, and our key pages are MADV_WIPEONFORK, so the
 * process that serves the mount must be the one that unlocks. The parent
 * waits on a pipe for the child's verdict and exits with its code.
 */
#define FUSE_USE_VERSION 312

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <syslog.h>
#include <unistd.h>

#include "common.h"
#include "reverse.h"
#include "secmem.h"
#include "volume.h"
#include "fwd.h"
#include "log.h"
#include "names.h"

#define PROG "xtsfs"

/*
 * The mount's readahead window (KiB; see bdi.h): four 1 MiB requests in
 * flight keep both the lower disk and the cipher core busy on sequential
 * reads; the kernel default (128 KiB) costs a round trip per 128 KiB.
 */
#define READ_AHEAD_KB 4096

/*
 * Worker threads serving requests (they never exit; see serve_loop):
 * 4 per online CPU, at least 8, at most 16. Each that served a large
 * write holds 2 MiB (libfuse's request buffer and the ciphertext), so
 * more threads than the CPUs can keep busy only add memory: 16 on a
 * 2-CPU machine made a peak RSS of 47 MiB (doc/PERFORMANCE.md). Lock
 * waits hold no worker (locks.c), so the bound cannot deadlock them.
 */
static unsigned worker_threads(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	long n = cpus > 0 ? 4 * cpus : 16;

	return (unsigned)(n < 8 ? 8 : n > 16 ? 16 : n);
}

/*
 * How long the kernel may trust names and attributes without asking
 * (seconds). Everything done through the mount keeps the kernel's view
 * exact, and every open checks the lower file (a change behind our back
 * drops the cached pages and attributes, a removed file is looked up
 * again); the timeouts only bound how late a stat without an open shows
 * a change made beside the mount (another mount, a sync tool). 1 s for
 * all would cost ls -lR after find three times the time (PERFORMANCE.md,
 * "Coherence"). With -o sharedstorage, where others are expected to
 * write, SHARED_TIMEOUT unless said otherwise.
 */
#define ATTR_TIMEOUT 30.0
#define ENTRY_TIMEOUT 30.0
#define SHARED_TIMEOUT 1.0

static const struct option longopts[] = {
	{ "foreground", no_argument, NULL, 'f' },
	{ "debug", no_argument, NULL, 'd' },
	{ "single-thread", no_argument, NULL, 's' },
	{ "reverse", no_argument, NULL, 'R' },
	CLI_LONGOPTS,
	COMMON_PASS_LONGOPTS,
	COMMON_UNLOCK_LONGOPTS,
	{ NULL, 0, NULL, 0 },
};

static const struct cli cli = {
	.prog = PROG,
	.shortopts = "fdso:" CLI_SHORTOPTS,
	.longopts = longopts,
	.column = COMMON_HELP_COLUMN,
	.help =
"Usage: " PROG " [OPTION]... CIPHERDIR MOUNTPOINT\n"
"       " PROG " --reverse [OPTION]... PLAINDIR VIEWDIR\n"
"Mount the xtsfs volume in CIPHERDIR on MOUNTPOINT (an empty directory).\n"
"Returns once the mount is usable; unmount with: fusermount3 -u MOUNTPOINT\n"
"With --reverse, show PLAINDIR (made with xtsfs-mkfs --reverse) encrypted\n"
"and read-only on VIEWDIR, in the on-disk format of a normal volume: back\n"
"up VIEWDIR with rsync and mount the copy normally.\n"
"\n"
"  -f, --foreground        stay in the foreground (log to stderr); Ctrl-C\n"
"                          or SIGTERM unmounts\n"
"  -d, --debug             foreground, and print every FUSE request\n"
"  -s, --single-thread     serve requests in one thread\n"
"  -o OPT[,OPT...]         mount options: ro, allow_other (other users get\n"
"                          what the file modes allow: permissions are always\n"
"                          checked by the kernel), and the FUSE options of\n"
"                          mount.fuse3(8); also passfile=FILE or extpass=CMD\n"
"                          for /etc/fstab (the last one wins; --passfile and\n"
"                          --extpass win over them), and writeback: the\n"
"                          kernel's writeback cache (faster small and random\n"
"                          writes; off by default: nowriteback), with a\n"
"                          guard that keeps a full disk reported at write(2)\n"
"                          (a reserve in the cipher directory, a dirty\n"
"                          limit; see doc/USAGE.md); nowbguard: writeback\n"
"                          without it (a full disk then shows only at\n"
"                          fsync/close); read_ahead_kb=N\n"
"                          (default 4096; 0 keeps the kernel's),\n"
"                          attr_timeout=S and entry_timeout=S (seconds the\n"
"                          kernel trusts attributes and names; default 30,\n"
"                          1 with sharedstorage); sharedstorage: others\n"
"                          write the cipher directory too (a network\n"
"                          filesystem, two machines): close-to-open as NFS,\n"
"                          every open rereads attributes and pages, every\n"
"                          close syncs what was written, flock and fcntl\n"
"                          locks are taken on the lower file too; nonotify:\n"
"                          no change notification (by default the lower\n"
"                          directories are watched with inotify, so a\n"
"                          change made beside the mount, by another mount\n"
"                          or a sync tool, shows in a stat at once, not\n"
"                          only at the next open or after the timeouts);\n"
"                          noparalleldirops: the kernel serializes lookups\n"
"                          and listings of each directory (for comparison);\n"
"                          dirhandles: every opendir goes to the daemon\n"
"                          (by default, where changes are notified, the\n"
"                          kernel skips OPENDIR and RELEASEDIR and keeps\n"
"                          listings until they change; for comparison);\n"
"                          noopen: where OPENDIR is skipped, the kernel\n"
"                          opens regular files without asking the daemon\n"
"                          too (no OPEN or RELEASE round trips) and trusts\n"
"                          change notification alone for their pages;\n"
"                          uring: requests through io_uring queues, one per\n"
"                          CPU (Linux 6.14+, with the fuse module's\n"
"                          enable_uring parameter set; else logged, and\n"
"                          /dev/fuse as without); uring_unpinned: the same,\n"
"                          its threads not pinned to their queues' CPUs\n"
"                          (faster big-file I/O, slower tree operations);\n"
"                          mount(8) words such as defaults, noauto, nofail,\n"
"                          _netdev, x-* are ignored; acl: POSIX ACLs (off\n"
"                          by default; with them the kernel checks\n"
"                          permissions as with default_permissions);\n"
"                          allow_costly_kdf is\n"
"                          --allow-costly-kdf; in a value, write a comma\n"
"                          as \\, and a backslash as \\\\\n"
COMMON_PASS_HELP
COMMON_UNLOCK_HELP,
	.help_end =
"\n"
"Example:\n"
"  xtsfs-mkfs /srv/vault && " PROG " /srv/vault /mnt/plain\n"
"  ls /mnt/plain; fusermount3 -u /mnt/plain\n"
"\n"
"Exit status: 0 mounted, 1 failure, 2 bad usage, 3 cipher core unusable,\n"
"4 wrong passphrase, 5 no volume, 6 corrupt header (or every key slot too\n"
"costly), 8 no usable passphrase, 9 mount point unusable or mount failed.\n",
};

struct opts {
	struct common_opts c;
	bool foreground;
	bool debug;
	bool single;
	int readonly;          /* -o ro/rw (an int: fuse_opt sets it) */
	bool reverse;          /* --reverse */
	int writeback;         /* -o writeback (an int: fuse_opt sets it) */
	int wbguard;           /* -o wbguard/nowbguard (fuse_opt sets it) */
	int acl;               /* -o acl: POSIX ACLs (fuse_opt sets it) */
	int sharedstorage;     /* -o sharedstorage (fuse_opt sets it) */
	int notify;            /* -o notify/nonotify: inotify (fuse_opt) */
	int pdirops;           /* -o noparalleldirops clears it (fuse_opt) */
	int dirhandles;        /* -o dirhandles: OPENDIR as before (fuse_opt) */
	int noopen;            /* -o noopen: no OPEN of files (fuse_opt) */
	int uring;             /* -o uring (1), uring_unpinned (2) */
	double read_ahead_kb;  /* -o read_ahead_kb= (KiB) */
	double attr_timeout;   /* -o attr_timeout= (seconds; < 0 not said) */
	double entry_timeout;  /* -o entry_timeout= (seconds; < 0 not said) */
	char *fuse_opts;       /* -o options passed on to FUSE, escaped list */
	struct pass_source pass_opt; /* -o passfile=/extpass=, the last one */
	char *pass_opt_arg;    /* owns pass_opt.arg */
	bool bad_opt;          /* -o: a bad value was said on stderr */
	const char *cipherdir;
	const char *mountpoint;
};

/*
 * The next byte of a FUSE option list, read the way libfuse's option
 * parser reads it (fuse_opt.c): the list is split at each comma that no
 * backslash escapes, then "\ooo" is the byte of octal ooo and "\c" is
 * c. Advances *@s past what it read.
 * Return: the byte; OPT_NEXT at the comma that ends an option (*@s is
 * past it); OPT_END at the end of the list.
 */
enum { OPT_NEXT = -1, OPT_END = -2 };

static int opt_byte(const char **s)
{
	const char *p = *s;

	if (!*p)
		return OPT_END;
	*s = p + 1;
	if (*p == ',')
		return OPT_NEXT;
	if (p[0] == '\\' && p[1]) {
		p++;
		if (p[0] >= '0' && p[0] <= '3' && p[1] >= '0' && p[1] <= '7' &&
		    p[2] >= '0' && p[2] <= '7') {
			*s = p + 3;
			return (p[0] - '0') * 64 + (p[1] - '0') * 8 + (p[2] - '0');
		}
		*s = p + 1;
	}
	return (unsigned char)*p;
}

/*
 * A number option NAME=VALUE within [lo, hi]; says what is wrong.
 * Return: 0, or -1 with o->bad_opt set.
 */
static int parse_num(struct opts *o, const char *opt, double lo, double hi,
		     double *out)
{
	const char *val = strchr(opt, '=') + 1;
	char *end;
	double v;

	errno = 0;
	v = strtod(val, &end);
	if (errno || end == val || *end || !(v >= lo && v <= hi)) {
		fprintf(stderr, PROG ": -o %s: expected a number from %g to %g\n",
			opt, lo, hi);
		o->bad_opt = true;
		return -1;
	}
	*out = v;
	return 0;
}

/* -o passfile=FILE or extpass=CMD: the last one wins, as in mount(8). */
static int set_pass_opt(struct opts *o, enum pass_kind kind, const char *opt)
{
	char *dup = strdup(strchr(opt, '=') + 1);

	if (!dup) {
		fprintf(stderr, PROG ": out of memory\n");
		return -1;
	}
	free(o->pass_opt_arg);
	o->pass_opt_arg = dup;
	o->pass_opt.kind = kind;
	o->pass_opt.arg = dup;
	return 0;
}

enum {
	KEY_READ_AHEAD_KB,
	KEY_ATTR_TIMEOUT,
	KEY_ENTRY_TIMEOUT,
	KEY_PASSFILE,
	KEY_EXTPASS,
	KEY_ALLOW_COSTLY_KDF,
};

#define OPT_FLAG(templ, field, value) \
	{ templ, offsetof(struct opts, field), value }

/*
 * The -o words that are ours. ro and rw set o->readonly (the FUSE "ro"
 * is added by session_args()). Then the words mount(8) may hand us that
 * are not FUSE options: fstab and mount(8) keywords, and kernel
 * defaults that libfuse does not know (a FUSE mount gets them anyway);
 * x-* is dropped by mount_opt_proc() (a template cannot say "x-
 * anything"). Options that would change behaviour and that libfuse
 * rejects (strictatime, lazytime, ...) are not here: FUSE refuses them,
 * and so do we. Every other word goes to FUSE.
 */
static const struct fuse_opt mount_opts[] = {
	OPT_FLAG("writeback", writeback, 1),
	OPT_FLAG("nowriteback", writeback, 0),
	OPT_FLAG("wbguard", wbguard, 1),
	OPT_FLAG("nowbguard", wbguard, 0),
	OPT_FLAG("ro", readonly, 1),
	OPT_FLAG("rw", readonly, 0),
	OPT_FLAG("acl", acl, 1),
	OPT_FLAG("noacl", acl, 0),
	OPT_FLAG("sharedstorage", sharedstorage, 1),
	OPT_FLAG("notify", notify, 1),
	OPT_FLAG("nonotify", notify, 0),
	OPT_FLAG("paralleldirops", pdirops, 1),
	OPT_FLAG("noparalleldirops", pdirops, 0),
	OPT_FLAG("dirhandles", dirhandles, 1),
	OPT_FLAG("noopen", noopen, 1),
	OPT_FLAG("uring", uring, 1),
	OPT_FLAG("uring_unpinned", uring, 2),
	OPT_FLAG("nouring", uring, 0),
	FUSE_OPT_KEY("read_ahead_kb=", KEY_READ_AHEAD_KB),
	FUSE_OPT_KEY("attr_timeout=", KEY_ATTR_TIMEOUT),
	FUSE_OPT_KEY("entry_timeout=", KEY_ENTRY_TIMEOUT),
	FUSE_OPT_KEY("passfile=", KEY_PASSFILE),
	FUSE_OPT_KEY("extpass=", KEY_EXTPASS),
	FUSE_OPT_KEY("allow_costly_kdf", KEY_ALLOW_COSTLY_KDF),
	FUSE_OPT_KEY("defaults", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("auto", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("noauto", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("nofail", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("user", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("nouser", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("users", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("owner", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("group", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("_netdev", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("relatime", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("diratime", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("symfollow", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("nomand", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("noiversion", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("nolazytime", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("loud", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("comment=", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_END
};

/*
 * fuse_opt_parse()'s callback for mount_opts[]: @opt is one -o word,
 * its escapes undone. Return: 0 taken (or dropped), 1 keep it for FUSE,
 * -1 stop (bad value or out of memory, said on stderr).
 */
static int mount_opt_proc(void *data, const char *opt, int key,
			  struct fuse_args *outargs)
{
	struct opts *o = data;

	(void)outargs;
	switch (key) {
	case KEY_READ_AHEAD_KB:
		return parse_num(o, opt, 0, 1 << 20, &o->read_ahead_kb);
	case KEY_ATTR_TIMEOUT:
		return parse_num(o, opt, 0, 86400, &o->attr_timeout);
	case KEY_ENTRY_TIMEOUT:
		return parse_num(o, opt, 0, 86400, &o->entry_timeout);
	case KEY_PASSFILE:
		return set_pass_opt(o, PASS_FILE, opt);
	case KEY_EXTPASS:
		return set_pass_opt(o, PASS_EXTPASS, opt);
	case KEY_ALLOW_COSTLY_KDF:
		o->c.allow_costly_kdf = true;
		return 0;
	default: /* FUSE_OPT_KEY_OPT: not in mount_opts[] */
		/* empty words (",," or a trailing comma) mean nothing */
		return *opt && strncmp(opt, "x-", 2) ? 1 : 0;
	}
}

/*
 * Wipe the command of every extpass=CMD in @list, an -o argument in
 * argv, once it is copied (hide_arg()). The word is found as
 * fuse_opt_parse() reads it, escapes undone, so that "ext\pass=" or an
 * escaped comma in CMD hides no part of CMD from the wipe.
 */
static void hide_extpass(char *list)
{
	static const char key[] = "extpass=";
	const size_t keylen = sizeof(key) - 1;
	const char *s = list, *cmd;
	size_t n;
	int c;

	do {
		cmd = NULL;
		for (n = 0; (c = opt_byte(&s)) >= 0; n++) {
			if (n < keylen && c != key[n])
				n = keylen; /* not extpass=: read on to the end */
			else if (n == keylen - 1)
				cmd = s;
		}
		if (cmd)
			hide_arg(list + (cmd - list),
				 (size_t)(s - cmd) - (c == OPT_NEXT));
	} while (c == OPT_NEXT);
}

/*
 * Parse one -o argument @arg with mount_opts[]: our own words are taken
 * out, mount(8) words are dropped, and the rest is added to
 * o->fuse_opts as fuse_opt_parse() keeps them (escaped again with
 * fuse_opt_add_opt_escaped(): libfuse reads them as the user wrote
 * them). The command of extpass= is then wiped in @arg, which is in
 * argv (hide_extpass()).
 * Return: 0, -1 out of memory, -2 a bad value (said on stderr).
 */
static int parse_o(struct opts *o, char *arg)
{
	char *argv[] = { (char *)PROG, (char *)"-o", arg, NULL };
	struct fuse_args args = FUSE_ARGS_INIT(3, argv);
	int rc = 0;

	if (fuse_opt_parse(&args, o, mount_opts, mount_opt_proc) != 0)
		rc = o->bad_opt ? -2 : -1;
	else if (args.argc == 3 && fuse_opt_add_opt(&o->fuse_opts, args.argv[2]))
		rc = -1;
	fuse_opt_free_args(&args);
	hide_extpass(arg);
	return rc;
}

/* The mount point: an empty directory, not inside the cipher dir or v.v. */
static int check_paths(const struct opts *o)
{
	char cd[PATH_MAX], mp[PATH_MAX];
	struct stat st;
	size_t lc, lm;
	int fd;
	DIR *dp;
	struct dirent *de;

	if (!realpath(o->cipherdir, cd)) {
		fprintf(stderr, PROG ": %s: %s\n", o->cipherdir, strerror(errno));
		return errno == ENOENT ? XTSFS_EXIT_NOVOLUME : XTSFS_EXIT_FAILURE;
	}
	if (!realpath(o->mountpoint, mp) || stat(mp, &st) != 0) {
		fprintf(stderr, PROG ": mount point %s: %s\n", o->mountpoint,
			strerror(errno));
		return XTSFS_EXIT_MOUNT;
	}
	if (!S_ISDIR(st.st_mode)) {
		fprintf(stderr, PROG ": mount point %s is not a directory\n",
			o->mountpoint);
		return XTSFS_EXIT_MOUNT;
	}
	lc = strlen(cd);
	lm = strlen(mp);
	if ((!strncmp(cd, mp, lm) && (cd[lm] == '/' || cd[lm] == '\0' || lm == 1)) ||
	    (!strncmp(mp, cd, lc) && (mp[lc] == '/' || mp[lc] == '\0' || lc == 1))) {
		fprintf(stderr, PROG ": the cipher directory %s and the mount "
			"point %s must not contain each other\n", cd, mp);
		return XTSFS_EXIT_MOUNT;
	}
	fd = open(mp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || !(dp = fdopendir(fd))) {
		fprintf(stderr, PROG ": mount point %s: %s\n", mp, strerror(errno));
		if (fd >= 0)
			close(fd);
		return XTSFS_EXIT_MOUNT;
	}
	while ((de = readdir(dp)))
		if (!names_is_dot(de->d_name)) {
			fprintf(stderr, PROG ": mount point %s is not empty\n", mp);
			closedir(dp);
			return XTSFS_EXIT_MOUNT;
		}
	closedir(dp);
	return 0;
}

/*
 * The daemon holds one O_PATH descriptor per inode the kernel knows, so
 * the limit on open files caps how many files can be known at once: a
 * tree of more (a tar or rsync of 30,000 files, with the kernel keeping
 * their inodes) would get EMFILE on a create or lookup. Raise the soft
 * limit to the hard one; with CAP_SYS_RESOURCE (root) raise both to the
 * kernel's ceiling, fs.nr_open, first. The descriptor table grows only
 * as it is used.
 */
static void raise_nofile(void)
{
	struct rlimit rl;
	unsigned long long ceiling = 0;
	FILE *f = fopen("/proc/sys/fs/nr_open", "re");

	if (f) {
		if (fscanf(f, "%llu", &ceiling) != 1)
			ceiling = 0;
		fclose(f);
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return;
	if (ceiling > rl.rlim_max) {
		struct rlimit up = { (rlim_t)ceiling, (rlim_t)ceiling };

		if (setrlimit(RLIMIT_NOFILE, &up) == 0)
			return;
	}
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* Tell the waiting parent how it went (a single byte: the exit code). */
static void report(int fd, int code)
{
	unsigned char c = (unsigned char)code;

	if (fd >= 0) {
		(void)!write(fd, &c, 1);
		close(fd);
	}
}

/*
 * Whether the FUSE option list @list holds @name as a whole option, read
 * the way libfuse's option parser reads it (opt_byte()). Anything
 * simpler (looking at the words as the user typed them) could be fooled
 * by an escape that libfuse undoes: "allo\w_other" is allow_other to
 * libfuse.
 */
static bool has_opt(const char *list, const char *name)
{
	const char *s = list;
	char *word, *d;
	bool found = false;
	int c;

	if (!list)
		return false;
	word = malloc(strlen(list) + 1);
	if (!word)
		return true; /* out of memory: yes, which only adds checks */
	do {
		for (d = word; (c = opt_byte(&s)) >= 0;)
			*d++ = (char)c;
		*d = '\0';
		if (!strcmp(word, name))
			found = true;
	} while (c == OPT_NEXT);
	free(word);
	return found;
}

/*
 * Whether the kernel checks permissions (default_permissions): when other
 * users may use the mount (allow_other, allow_root), and in reverse mode.
 * Otherwise only the user who mounted may enter it, and every lower
 * operation runs with that user's own credentials, so the lower
 * filesystem checks exactly what the kernel would; the kernel's checks
 * would only cost a GETATTR of the directory after every create, unlink
 * or rename in it (it drops the directory's attributes then).
 */
static bool kernel_checks(const struct opts *o, const char *list)
{
	return o->reverse || has_opt(list, "allow_other") ||
	       has_opt(list, "allow_root");
}

/*
 * The FUSE arguments: "-o" with ro (o->readonly), default_permissions
 * where the kernel checks (above), subtype, fsname and the user's
 * options, and -d with --debug.
 *
 * Every value we put in the list is escaped (fuse_opt_add_opt_escaped:
 * "\," and "\\"), so that a path holding commas stays one option: a
 * cipher directory named "v,allow_other" once mounted with allow_other
 * and without default_permissions, and one named "x,suid,dev" without
 * nosuid and nodev (libfuse sets both unless the list says suid, dev).
 * The user's -o words go in as parse_o() kept them, escaped the same
 * way. Whether the kernel checks is decided on that list as libfuse
 * will read it, and ro and default_permissions come first, where no
 * escape before them can swallow their comma.
 */
static int session_args(const struct opts *o, const char *subtype,
			struct fuse_args *args, char **fsopts)
{
	char *rest = NULL, *fsname = NULL, *canon, st[64];
	int rc = -1;

	snprintf(st, sizeof(st), "subtype=%s", subtype);
	/*
	 * The mount's source, as mount(8), findmnt and xtsfs-fsck's
	 * "is it mounted?" see it: the canonical path, so that a mount made
	 * with a relative one is still recognised.
	 */
	canon = realpath(o->cipherdir, NULL);
	if (asprintf(&fsname, "fsname=%s", canon ? canon : o->cipherdir) < 0)
		fsname = NULL;
	free(canon);
	if (fsname && !fuse_opt_add_opt_escaped(&rest, st) &&
	    !fuse_opt_add_opt_escaped(&rest, fsname) &&
	    !(o->fuse_opts && fuse_opt_add_opt(&rest, o->fuse_opts)) &&
	    !(o->readonly && fuse_opt_add_opt(fsopts, "ro")) &&
	    !(kernel_checks(o, rest) &&
	      fuse_opt_add_opt(fsopts, "default_permissions")) &&
	    !fuse_opt_add_opt(fsopts, rest) &&
	    !fuse_opt_add_arg(args, PROG) && !fuse_opt_add_arg(args, "-o") &&
	    !fuse_opt_add_arg(args, *fsopts) &&
	    !(o->debug && fuse_opt_add_arg(args, "-d")))
		rc = 0;
	else
		fprintf(stderr, PROG ": out of memory\n");
	free(rest);
	free(fsname);
	return rc;
}

/*
 * Mount @se on @mnt, the canonical path of the mount point, then, when a
 * parent waits on *@report_fd, tell it and leave the terminal (new
 * session, stdio to /dev/null, logs to syslog).
 *
 * The canonical path, not the one typed: libfuse takes a mount point
 * "/dev/fd/N" for a /dev/fuse descriptor that a parent has mounted, so
 * "xtsfs VOL /dev/fd/7 7<DIR" passed check_paths() (DIR is a directory)
 * and then mounted nothing at all. A canonical path never starts with
 * /dev/fd/ (a symbolic link), and is the directory check_paths() saw.
 * Return: 0, or the exit code of the failure (handlers removed).
 */
static int mount_and_detach(const struct opts *o, struct fuse_session *se,
			    const char *mnt, int *report_fd)
{
	int null;

	if (!mnt) { /* realpath() failed, though check_paths() did not */
		fprintf(stderr, PROG ": mount point %s: cannot resolve it\n",
			o->mountpoint);
		return XTSFS_EXIT_MOUNT;
	}
	if (fuse_set_signal_handlers(se) != 0)
		return XTSFS_EXIT_FAILURE;
	if (fuse_session_mount(se, mnt) != 0) {
		fprintf(stderr, PROG ": cannot mount on %s\n", o->mountpoint);
		fuse_remove_signal_handlers(se);
		return XTSFS_EXIT_MOUNT;
	}
	/*
	 * Forward mounts: no security.capability round trip per write, and
	 * lookups and listings of one directory in parallel.
	 */
	if (glue_session_io(se, (o->reverse ? 0 :
				 GLUE_INIT_KILLPRIV_V2 |
				 GLUE_INIT_DIRECT_IO_ALLOW_MMAP |
				 (o->pdirops ? GLUE_INIT_PARALLEL_DIROPS : 0)) |
			    (o->uring == 2 ? GLUE_URING_UNPINNED :
			     o->uring ? GLUE_INIT_URING : 0),
			    o->mountpoint) != 0)
		fprintf(stderr, PROG ": warning: own FUSE I/O hooks refused; "
			"every write will ask for security.capability\n");
	if (*report_fd < 0)
		return 0;
	null = open("/dev/null", O_RDWR);
	/*
	 * Leave the session first: once told, the parent exits, and if it
	 * led the session (ssh -t, script) the kernel would send us SIGHUP.
	 */
	(void)setsid();
	report(*report_fd, XTSFS_EXIT_OK);
	*report_fd = -1;
	(void)!chdir("/");
	openlog(PROG, LOG_PID, LOG_DAEMON);
	xlog_to_syslog();
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		if (null > 2)
			close(null);
	}
	return 0;
}

/* Serve until unmounted or signalled, then unmount. Return: exit code. */
static int serve_loop(const struct opts *o, struct fuse_session *se)
{
	int rc;

	if (o->single) {
		rc = fuse_session_loop(se);
	} else {
		struct fuse_loop_config *lc = fuse_loop_cfg_create();

		/*
		 * Workers never exit once started (idle limit = maximum): a
		 * burst of readahead requests used to start threads that the
		 * next lull ended, dozens per GiB read, each allocating its
		 * buffers again. At most worker_threads(), each with at most
		 * a few MiB of buffers (content_scratch).
		 */
		unsigned threads = worker_threads();

		fuse_loop_cfg_set_clone_fd(lc, 0);
		fuse_loop_cfg_set_max_threads(lc, threads);
		fuse_loop_cfg_set_idle_threads(lc, threads);
		rc = fuse_session_loop_mt(se, lc);
		fuse_loop_cfg_destroy(lc);
	}
	glue_session_io_stop(); /* -o uring: the ring threads end */
	fuse_session_unmount(se);
	fuse_remove_signal_handlers(se);
	return rc == 0 || rc == SIGINT || rc == SIGTERM || rc == SIGHUP ?
	       XTSFS_EXIT_OK : XTSFS_EXIT_FAILURE;
}

/*
 * The reverse-mode daemon: takes over the unlocked volume @v (closes it),
 * mounts the read-only view and serves it.
 */
static int serve_reverse(struct opts *o, int report_fd,
			 const struct xts_backend *be, struct vol *v)
{
	struct rfs fs = { 0 };
	struct xts_ctx *xts = NULL;
	struct names_ctx *names = NULL;
	struct aes_cmac_key *idkey = common_idkey_new(v);
	struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
	struct fuse_session *se = NULL;
	char *fsopts = NULL, *mnt_canon = NULL;
	const char *clash;
	bool plain_names = v->hdr.flags & VOL_FLAG_PLAINTEXT_NAMES;
	int rc, ret = XTSFS_EXIT_FAILURE;

	rc = idkey ? common_make_keys(v, be, &xts, &names) : -ENOMEM;
	vol_close(v);
	if (rc) {
		fprintf(stderr, PROG ": cannot set up the keys: %s\n",
			strerror(-rc));
		goto out;
	}
	fs.root_fd = open(o->cipherdir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	clash = plain_names && fs.root_fd >= 0 ?
		rfs_reserved_clash(fs.root_fd) : NULL;
	if (clash) {
		fprintf(stderr, PROG ": %s/%s: with plaintext names the view "
			"cannot show a file of this name (the view's header "
			"has it); rename it\n", o->cipherdir, clash);
		ret = XTSFS_EXIT_USAGE;
		goto out;
	}
	fs.xts = xts;
	fs.names = plain_names ? NULL : names;
	fs.xattr_names = names;
	fs.idkey = idkey;
	fs.mountpoint = o->mountpoint;
	fs.readahead.mountpoint = mnt_canon = realpath(o->mountpoint, NULL);
	fs.readahead.read_ahead_kb = (unsigned)o->read_ahead_kb;
	rc = fs.root_fd < 0 ? -errno : rfs_init(&fs);
	if (rc) {
		fprintf(stderr, PROG ": %s: %s\n", o->cipherdir, strerror(-rc));
		goto out;
	}
	o->readonly = true; /* the view is read-only, whatever -o says */
	if (session_args(o, "xtsfs-reverse", &args, &fsopts))
		goto out;
	se = fuse_session_new(&args, &rfs_ops, sizeof(rfs_ops), &fs);
	if (!se) {
		ret = XTSFS_EXIT_USAGE;
		goto out;
	}
	ret = mount_and_detach(o, se, mnt_canon, &report_fd);
	if (!ret)
		ret = serve_loop(o, se);
out:
	if (se)
		fuse_session_destroy(se);
	fuse_opt_free_args(&args);
	free(fsopts);
	free(mnt_canon);
	if (fs.root)
		rfs_destroy(&fs);
	names_ctx_free(names);
	xts_ctx_free(xts);
	common_idkey_free(idkey);
	report(report_fd, ret);
	return ret;
}

/*
 * The timeout @said with -o (seconds; < 0: not said): else @dflt, or
 * SHARED_TIMEOUT with -o sharedstorage (others change the lower files
 * without a word to us: cached attributes must not live long).
 */
static double timeout_of(const struct opts *o, double said, double dflt)
{
	if (said >= 0)
		return said;
	return o->sharedstorage ? SHARED_TIMEOUT : dflt;
}

static int serve(struct opts *o, int report_fd)
{
	struct vol v = { 0 };
	struct fwd fs = { 0 };
	struct xts_ctx *xts = NULL;
	struct names_ctx *names = NULL;
	struct aes_cmac_key *idkey = NULL;
	struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
	struct fuse_session *se = NULL;
	const struct xts_backend *be;
	char *fsopts = NULL, *mnt_canon = NULL;
	int rc, dfd, ret = XTSFS_EXIT_FAILURE;
	bool plain_names;

	if (xts_choose(o->c.cipher, &be) != 0) {
		fprintf(stderr, PROG ": %s\n", xts_choose_error());
		return XTSFS_EXIT_CIPHER;
	}
	dfd = open(o->cipherdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		fprintf(stderr, PROG ": %s: %s\n", o->cipherdir, strerror(errno));
		return XTSFS_EXIT_NOVOLUME;
	}
	ret = common_unlock(&o->c, PROG, dfd, o->cipherdir, -1, &v);
	close(dfd);
	if (ret)
		return ret;
	ret = XTSFS_EXIT_FAILURE;
	/*
	 * A plaintext directory for reverse mode keeps its header as
	 * .xtsfs.volume; a backup of its view has xtsfs.volume and mounts
	 * normally.
	 */
	if (o->reverse && v.info.headerless) {
		fprintf(stderr, PROG ": %s: reverse mode shows the header in "
			"its view, so it needs one: restore .xtsfs.volume from "
			"a header backup\n", o->cipherdir);
		ret = XTSFS_EXIT_NOVOLUME;
		goto out;
	}
	if (o->reverse != !strcmp(vol_file_name(&v.hdr), VOL_REVERSE_NAME)) {
		fprintf(stderr, o->reverse ?
			PROG ": %s is not a plaintext directory made with "
			"xtsfs-mkfs --reverse\n" :
			PROG ": %s is a plaintext directory for reverse mode; "
			"use xtsfs --reverse\n", o->cipherdir);
		ret = XTSFS_EXIT_USAGE;
		goto out;
	}
	if (o->reverse)
		return serve_reverse(o, report_fd, be, &v);
	rc = common_make_keys(&v, be, &xts, &names);
	idkey = rc ? NULL : common_idkey_new(&v);
	if (!rc && !idkey)
		rc = -ENOMEM;
	plain_names = v.hdr.flags & VOL_FLAG_PLAINTEXT_NAMES;
	fs.m.doff = VOL_DOFF(v.hdr.flags);
	vol_close(&v); /* the raw blob is no longer needed */
	if (rc) {
		fprintf(stderr, PROG ": cannot set up the keys: %s\n",
			strerror(-rc));
		goto out;
	}

	fs.m.root_fd = open(o->cipherdir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	fs.m.xts = xts;
	fs.m.names = plain_names ? NULL : names;
	fs.m.xattr_names = names;
	fs.m.idkey = idkey;
	fs.m.acl = o->acl;
	fs.m.readonly = o->readonly;
	fs.m.writeback = o->writeback && !o->readonly;
	fs.m.wbguard = o->wbguard;
	fs.m.sharedstorage = o->sharedstorage;
	fs.m.dir_handles = o->dirhandles;
	fs.m.noopen = o->noopen;
	fs.m.entry_timeout = timeout_of(o, o->entry_timeout, ENTRY_TIMEOUT);
	fs.m.attr_timeout = timeout_of(o, o->attr_timeout, ATTR_TIMEOUT);
	fs.m.mountpoint = o->mountpoint;
	fs.m.cipherdir = o->cipherdir;
	fs.m.readahead.mountpoint = mnt_canon = realpath(o->mountpoint, NULL);
	fs.m.readahead.read_ahead_kb = (unsigned)o->read_ahead_kb;
	if (fs.m.root_fd < 0) {
		fprintf(stderr, PROG ": %s: %s\n", o->cipherdir, strerror(errno));
		goto out;
	}
	rc = xm_init(&fs.m);
	if (rc) {
		fprintf(stderr, PROG ": %s: %s\n", o->cipherdir, strerror(-rc));
		goto out;
	}

	if (session_args(o, "xtsfs", &args, &fsopts))
		goto out;
	se = fuse_session_new(&args, &fwd_ops, sizeof(fwd_ops), &fs);
	fs.se = se;
	if (!se) {
		fprintf(stderr, PROG ": bad mount options: %s\n", o->fuse_opts ?
			o->fuse_opts : "");
		ret = XTSFS_EXIT_USAGE;
		goto out;
	}
	ret = mount_and_detach(o, se, mnt_canon, &report_fd);
	if (ret)
		goto out;
	xm_log(&fs.m, LOG_INFO, "mounted %s (cipher core %s%s)", o->cipherdir,
		be->name, fs.m.names ? "" : ", plaintext names");
	/*
	 * Change notification, before the first request: its thread tells
	 * the kernel through the session, so it stops before the session
	 * goes away.
	 */
	rc = o->notify ? xm_notify_start(&fs.m, &fwd_notify_cb, &fs) : 0;
	if (rc)
		xm_log(&fs.m, LOG_WARNING, "no change notification (inotify: "
		       "%s): changes made beside the mount show at the next "
		       "open, or after the timeouts", strerror(-rc));
	ret = serve_loop(o, se);
	xm_notify_stop(&fs.m);
	xm_log(&fs.m, LOG_INFO, "unmounted");
out:
	if (se)
		fuse_session_destroy(se);
	fuse_opt_free_args(&args);
	free(fsopts);
	free(mnt_canon);
	if (fs.m.root)
		xm_destroy(&fs.m);
	names_ctx_free(names);
	xts_ctx_free(xts);
	common_idkey_free(idkey);
	vol_close(&v);
	report(report_fd, ret);
	return ret;
}

int main(int argc, char **argv)
{
	struct opts o = {
		.read_ahead_kb = READ_AHEAD_KB,
		.notify = 1,
		.pdirops = 1,
		.wbguard = 1,
		.attr_timeout = -1,
		.entry_timeout = -1,
	};
	int opt, rc, pfd[2];
	pid_t pid;
	unsigned char code;

	common_init(&o.c, PROG);
	while ((opt = common_getopt(&cli, &o.c, argc, argv, &rc)) > 0) {
		switch (opt) {
		case 'f':
			o.foreground = true;
			break;
		case 'd':
			o.debug = o.foreground = true;
			break;
		case 's':
			o.single = true;
			break;
		case 'R':
			o.reverse = true;
			break;
		case 'o':
			rc = parse_o(&o, optarg);
			if (rc)
				return rc == -2 ? XTSFS_EXIT_USAGE :
						  XTSFS_EXIT_FAILURE;
			break;
		}
	}
	if (opt < 0)
		return rc;
	if (optind + 2 != argc)
		return cli_expected(&cli, "CIPHERDIR and MOUNTPOINT");
	o.cipherdir = argv[optind];
	o.mountpoint = argv[optind + 1];
	/* --passfile/--extpass beat -o passfile=/extpass= (say, from fstab) */
	if (o.pass_opt_arg && !o.c.pass_given) {
		o.c.pass = o.pass_opt;
		o.c.pass_given = true;
	}
	common_warn_files(&o.c, PROG);
	rc = check_paths(&o);
	if (rc)
		return rc;
	raise_nofile();
	if (o.foreground)
		return serve(&o, -1);

	if (pipe2(pfd, O_CLOEXEC) != 0) {
		perror(PROG ": pipe");
		return XTSFS_EXIT_FAILURE;
	}
	pid = fork();
	if (pid < 0) {
		perror(PROG ": fork");
		return XTSFS_EXIT_FAILURE;
	}
	if (pid == 0) {
		close(pfd[0]);
		_exit(serve(&o, pfd[1]));
	}
	close(pfd[1]);
	/* the child answers once mounted, or dies trying */
	while ((rc = (int)read(pfd[0], &code, 1)) < 0 && errno == EINTR)
		;
	if (rc == 1) {
		if (code != XTSFS_EXIT_OK)
			waitpid(pid, NULL, 0);
		return code;
	}
	/* no verdict: the child exited (or died) before mounting */
	if (waitpid(pid, &rc, 0) == pid && WIFEXITED(rc) && WEXITSTATUS(rc))
		return WEXITSTATUS(rc); /* it already said why on stderr */
	fprintf(stderr, PROG ": the daemon died before mounting\n");
	return XTSFS_EXIT_FAILURE;
}
