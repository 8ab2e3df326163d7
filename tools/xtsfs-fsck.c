/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xtsfs-fsck - check (and with --repair, repair what is provably safe
 * to repair in) an unmounted cipher directory or a copy of one. The
 * checks are check.c's; this file is the command line: unlocking, the
 * mount test, the questions, the output (text or --json) and the exit
 * codes, which are fsck(8)'s and not the other tools' (scripts that run
 * fsck know these): a bitwise OR of 1, 4, 8, or 16 or 32 alone.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "common.h"
#include "names.h"
#include "volume.h"
#include "xts.h"

#define PROG "xtsfs-fsck"

/* fsck(8)'s exit codes */
enum {
	FSCK_OK = 0,           /* no problem found */
	FSCK_CORRECTED = 1,    /* problems found, all of them repaired */
	FSCK_UNCORRECTED = 4,  /* problems left as they are */
	FSCK_OPERROR = 8,      /* cannot read, wrong passphrase, no volume,
				* mounted */
	FSCK_USAGE = 16,       /* bad command line */
	FSCK_CANCELED = 32,    /* stopped by the user (SIGINT, "q") */
};

enum { OPT_REPAIR = OPT_TOOL_BASE };

static const struct option longopts[] = {
	{ "repair", no_argument, NULL, OPT_REPAIR },
	{ "yes", no_argument, NULL, 'y' },
	{ "json", no_argument, NULL, 'j' },
	{ "quiet", no_argument, NULL, 'q' },
	CLI_LONGOPTS,
	COMMON_PASS_LONGOPTS,
	COMMON_UNLOCK_LONGOPTS,
	{ NULL, 0, NULL, 0 },
};

static const struct cli cli = {
	.prog = PROG,
	.shortopts = "yjq" CLI_SHORTOPTS,
	.longopts = longopts,
	.column = COMMON_HELP_COLUMN,
	.help =
"Usage: " PROG " [OPTION]... CIPHERDIR\n"
"Check an unmounted xtsfs cipher directory (or a copy of one): the header,\n"
"every name, dirid, sidecar, long target, file header, short tail and\n"
"xattr. Read-only unless --repair is given.\n"
"\n"
"      --repair            repair what is provably safe: remove orphaned\n"
"                          sidecars and unused long-target files, write a\n"
"                          dirid the names prove, rewrite a damaged header\n"
"                          copy; asks before each on a terminal\n"
"  -y, --yes               with --repair: do not ask (needed without a\n"
"                          terminal; without it nothing is repaired)\n"
"  -j, --json              print one JSON document instead of text\n"
"  -q, --quiet             no progress, no summary of a clean volume\n"
COMMON_PASS_HELP
COMMON_UNLOCK_HELP,
	.help_end =
"\n"
"Examples:\n"
"  " PROG " /srv/vault\n"
"  " PROG " --repair -y --passfile /root/vault.pass /srv/vault\n"
"\n"
"Exit status: 0 clean, 1 problems found and all repaired, 4 problems\n"
"left, 8 operational error (cannot read, no volume, wrong passphrase,\n"
"mounted), 16 bad usage, 32 cancelled; 1, 4 and 8 combine (fsck(8)).\n",
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* struct out - the state of the output. */
struct out {
	const char *dir;          /* CIPHERDIR as given */
	bool json, quiet;         /* --json, --quiet */
	bool progress;            /* progress lines on stderr */
	bool progress_shown;      /* one is on the screen now */
	bool ask;                 /* --repair, asking on the terminal */
	bool yes;                 /* --repair -y */
	bool cancelled;           /* "q" at a question */
	bool summarised;          /* the summary (or JSON document) is out */
	FILE *problems;           /* the JSON array, collected */
	char *pbuf;               /* its buffer */
	size_t plen;
	unsigned nproblems;
	FILE *conflicts;          /* the JSON array of conflict copies */
	char *cbuf;               /* its buffer */
	size_t clen;
	unsigned nconflicts;
};

/* A line of progress is erased before anything else is printed. */
static void clear_progress(struct out *o)
{
	if (o->progress_shown) {
		fputs("\r\033[K", stderr);
		o->progress_shown = false;
	}
}

static void show_progress(void *arg, const struct check_counts *c)
{
	struct out *o = arg;

	if (!o->progress)
		return;
	fprintf(stderr, "\r" PROG ": %llu directories, %llu files, %llu "
		"problems", (unsigned long long)c->dirs,
		(unsigned long long)c->files, (unsigned long long)c->problems);
	o->progress_shown = true;
}

/* @s (escaped: stored names are anyone's bytes) as a JSON string. */
static void json_str(FILE *f, const char *s)
{
	char esc[8192];

	if (!s) {
		fputs("null", f);
		return;
	}
	check_escape(esc, sizeof(esc), s);
	fputc('"', f);
	for (const char *p = esc; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

static const char *state(const struct check_problem *p)
{
	if (p->repaired)
		return "repaired";
	if (p->err)
		return "repair failed";
	return p->repairable ? "repairable with --repair" : "not repairable";
}

static void report_text(struct out *o, const struct check_problem *p)
{
	char c[8192], pl[8200], d[8192];

	(void)o;
	check_escape(c, sizeof(c), p->cipher);
	if (p->plain)
		check_escape(pl, sizeof(pl), p->plain);
	else if (p->plain_dir)
		snprintf(pl, sizeof(pl), "an entry of %s",
			 check_escape(d, sizeof(d), p->plain_dir));
	else
		snprintf(pl, sizeof(pl), "plaintext path unknown");
	printf("%s: %s (%s): %s [%s%s%s]\n", check_kind_name(p->kind), c, pl,
	       p->detail, state(p), p->err ? ": " : "",
	       p->err ? strerror(-p->err) : "");
}

static void report_json(struct out *o, const struct check_problem *p)
{
	FILE *f = o->problems;

	fprintf(f, "%s\n    {\"kind\": \"%s\", \"cipher_path\": ",
		o->nproblems ? "," : "", check_kind_name(p->kind));
	json_str(f, p->cipher);
	fputs(", \"plain_path\": ", f);
	json_str(f, p->plain);
	fputs(", \"plain_dir\": ", f);
	json_str(f, p->plain_dir);
	fputs(", \"detail\": ", f);
	json_str(f, p->detail);
	fprintf(f, ", \"repairable\": %s, \"repaired\": %s}",
		p->repairable ? "true" : "false",
		p->repaired ? "true" : "false");
}

static void report(void *arg, const struct check_problem *p)
{
	struct out *o = arg;

	clear_progress(o);
	if (o->json)
		report_json(o, p);
	else
		report_text(o, p);
	o->nproblems++;
	fflush(stdout);
}

/*
 * A sync tool's conflict copy: no problem (the mount shows it, the user
 * resolves it there), but worth knowing of. Text: a "notice:" line
 * (also with --quiet: the volume is not quite as the user left it);
 * JSON: the "conflicts" array. The exit code does not change.
 */
static void conflict(void *arg, const struct check_problem *p)
{
	struct out *o = arg;
	char c[8192], pl[8192];

	clear_progress(o);
	if (o->json) {
		fprintf(o->conflicts, "%s\n    {\"kind\": \"%s\", "
			"\"cipher_path\": ", o->nconflicts ? "," : "",
			check_kind_name(p->kind));
		json_str(o->conflicts, p->cipher);
		fputs(", \"plain_path\": ", o->conflicts);
		json_str(o->conflicts, p->plain);
		fputs(", \"plain_dir\": ", o->conflicts);
		json_str(o->conflicts, p->plain_dir);
		fputc('}', o->conflicts);
	} else {
		check_escape(c, sizeof(c), p->cipher);
		check_escape(pl, sizeof(pl), p->plain ? p->plain :
			     "plaintext path unknown");
		printf("notice: %s: %s (%s): %s\n", check_kind_name(p->kind),
		       c, pl, p->detail);
	}
	o->nconflicts++;
	fflush(stdout);
}

/* The question before a repair, on the terminal: y, n or q (cancel). */
static bool ask(void *arg, const struct check_problem *p)
{
	struct out *o = arg;
	char c[8192], line[64];

	if (o->yes)
		return true;
	if (!o->ask || o->cancelled || stop)
		return false;
	clear_progress(o);
	fprintf(stderr, PROG ": %s: %s: %s\n" PROG ": repair? [y/N/q] ",
		check_kind_name(p->kind), check_escape(c, sizeof(c), p->cipher),
		p->detail);
	if (!fgets(line, sizeof(line), stdin) || line[0] == 'q' ||
	    line[0] == 'Q') {
		o->cancelled = true;
		stop = 1;
		return false;
	}
	return line[0] == 'y' || line[0] == 'Y';
}

/* struct keys - the contexts check.c needs, from the unlocked volume. */
struct keys {
	struct xts_ctx *xts;
	struct names_ctx *names;
	struct aes_cmac_key *idkey;
};

static int make_keys(const struct common_opts *co, const struct vol *v,
		     struct keys *k)
{
	const struct xts_backend *be;

	if (xts_choose(co->cipher, &be) != 0) {
		fprintf(stderr, PROG ": %s\n", xts_choose_error());
		return FSCK_OPERROR;
	}
	if (common_make_keys(v, be, &k->xts, &k->names) ||
	    !(k->idkey = common_idkey_new(v))) {
		fprintf(stderr, PROG ": cannot set up the keys (out of locked "
			"memory?)\n");
		return FSCK_OPERROR;
	}
	return 0;
}

/* Refuse a mounted volume: a live daemon changes what we look at. */
static int refuse_mounted(const char *dir)
{
	char where[4096], esc[8192];
	long pid;
	int r = check_mounted("/proc/self/mountinfo", dir, where,
			      sizeof(where));

	if (r < 0) {
		fprintf(stderr, PROG ": cannot tell whether %s is mounted: "
			"/proc/self/mountinfo: %s\n", dir, strerror(-r));
		return FSCK_OPERROR;
	}
	if (r) {
		fprintf(stderr, PROG ": %s is mounted on %s: unmount it "
			"first\n", dir, check_escape(esc, sizeof(esc), where));
		return FSCK_OPERROR;
	}
	/*
	 * A daemon started with a relative path names its mount so. One
	 * whose mount is gone may still be exiting: fusermount3 -u returns
	 * before the daemon has closed the cipher directory (on a busy
	 * machine, for a second or more). Wait up to 5 s for it to let go.
	 */
	for (int i = 0; i < 50 && check_held("/proc", "xtsfs", dir, &pid) == 1;
	     i++)
		usleep(100000);
	if (check_held("/proc", "xtsfs", dir, &pid) == 1) {
		fprintf(stderr, PROG ": %s is in use by an xtsfs daemon (pid "
			"%ld): unmount it first\n", dir, pid);
		return FSCK_OPERROR;
	}
	return 0;
}

static int exit_code(const struct check_counts *c, int werr)
{
	int rc = 0;

	if (werr == -EINTR || stop)
		return FSCK_CANCELED;
	if (c->repaired)
		rc |= FSCK_CORRECTED;
	if (c->problems - c->repaired - c->op_errors)
		rc |= FSCK_UNCORRECTED;
	if (c->op_errors || werr)
		rc |= FSCK_OPERROR;
	return rc;
}

/* After the summary line: how many conflict copies the notices named. */
static void conflict_summary(const struct check_counts *c)
{
	if (c->conflicts)
		printf(PROG ": %llu sync conflict cop%s (notices above): not "
		       "problems; resolve them in the mount\n",
		       (unsigned long long)c->conflicts,
		       c->conflicts == 1 ? "y" : "ies");
}

static void summary(struct out *o, const struct check_counts *c, int rc)
{
	clear_progress(o);
	o->summarised = true;
	if (o->json) {
		fflush(o->problems); /* o->pbuf holds all of it now */
		printf("{\"cipherdir\": ");
		json_str(stdout, o->dir);
		fflush(o->conflicts);
		printf(", \"problems\": [%s%s], \"conflicts\": [%s%s], "
		       "\"directories\": %llu, "
		       "\"files\": %llu, \"symlinks\": %llu, \"others\": "
		       "%llu, \"repaired\": %llu, \"exit_code\": %d}\n",
		       o->pbuf ? o->pbuf : "", o->nproblems ? "\n  " : "",
		       o->cbuf ? o->cbuf : "", o->nconflicts ? "\n  " : "",
		       (unsigned long long)c->dirs,
		       (unsigned long long)c->files,
		       (unsigned long long)c->symlinks,
		       (unsigned long long)c->others,
		       (unsigned long long)c->repaired, rc);
		return;
	}
	if (o->quiet && !c->problems)
		return;
	if (!c->problems) {
		printf(PROG ": %s: clean (%llu directories, %llu files, %llu "
		       "symlinks)\n", o->dir, (unsigned long long)c->dirs,
		       (unsigned long long)c->files,
		       (unsigned long long)c->symlinks);
		conflict_summary(c);
		return;
	}
	printf(PROG ": %s: %llu problem%s, %llu repaired (%llu directories, "
	       "%llu files, %llu symlinks)\n", o->dir,
	       (unsigned long long)c->problems, c->problems == 1 ? "" : "s",
	       (unsigned long long)c->repaired, (unsigned long long)c->dirs,
	       (unsigned long long)c->files, (unsigned long long)c->symlinks);
	conflict_summary(c);
}

/*
 * With --json, a check that could not start (mounted, no volume, wrong
 * passphrase) still gives one document, saying so; the reason is on
 * stderr. Return: @rc.
 */
static int json_failed(struct out *o, int rc)
{
	if (!o->json || o->summarised)
		return rc;
	printf("{\"cipherdir\": ");
	json_str(stdout, o->dir);
	printf(", \"problems\": null, \"error\": \"the check could not run "
	       "(see standard error)\", \"exit_code\": %d}\n", rc);
	return rc;
}

/* Unlock, check the header and the tree. Return: the exit code. */
static int run(const struct common_opts *co, struct out *o, int dfd)
{
	struct check_counts c = { 0 }, hc = { 0 };
	struct keys k = { 0 };
	struct check_opts opts = {
		.report = report, .conflict = conflict,
		.progress = show_progress, .arg = o,
		.stop = &stop,
	};
	struct vol v;
	int rc, err;

	if (common_unlock(co, PROG, dfd, o->dir, -1, &v))
		return FSCK_OPERROR;
	rc = FSCK_OPERROR;
	if (v.hdr.file && strcmp(v.hdr.file, VOL_FILE_NAME)) {
		fprintf(stderr, PROG ": %s: a reverse-mode plaintext "
			"directory, not a cipher directory\n", o->dir);
		goto out;
	}
	if (make_keys(co, &v, &k))
		goto out;
	opts.names = k.names;
	opts.idkey = k.idkey;
	opts.xts = k.xts;
	opts.plaintext_names = v.hdr.flags & VOL_FLAG_PLAINTEXT_NAMES;
	opts.doff = VOL_DOFF(v.hdr.flags);
	opts.ask = o->ask || o->yes ? ask : NULL;
	o->problems = open_memstream(&o->pbuf, &o->plen);
	o->conflicts = open_memstream(&o->cbuf, &o->clen);
	if (!o->problems || !o->conflicts) {
		if (o->problems)
			fclose(o->problems);
		if (o->conflicts)
			fclose(o->conflicts);
		goto out;
	}
	err = check_header(dfd, &v, &opts, &hc);
	if (!err)
		err = check_walk(dfd, &opts, &c);
	c.problems += hc.problems;
	c.repaired += hc.repaired;
	rc = exit_code(&c, err);
	if (err && err != -EINTR)
		fprintf(stderr, PROG ": %s: %s\n", o->dir, strerror(-err));
	summary(o, &c, rc);
	fclose(o->problems);
	free(o->pbuf);
	fclose(o->conflicts);
	free(o->cbuf);
out:
	names_ctx_free(k.names);
	xts_ctx_free(k.xts);
	common_idkey_free(k.idkey);
	vol_close(&v);
	return rc;
}

static void catch_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	/* no SA_RESTART: a question's read ends at once */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

int main(int argc, char **argv)
{
	struct common_opts co;
	struct out o = { 0 };
	bool repair = false;
	int opt, rc, dfd;

	common_init(&co, PROG);
	while ((opt = common_getopt(&cli, &co, argc, argv, &rc)) > 0) {
		switch (opt) {
		case OPT_REPAIR:
			repair = true;
			break;
		case 'y':
			o.yes = true;
			break;
		case 'j':
			o.json = true;
			break;
		case 'q':
			o.quiet = co.quiet = true;
			break;
		}
	}
	if (opt < 0)
		return rc == XTSFS_EXIT_OK ? FSCK_OK : FSCK_USAGE;
	if (optind + 1 != argc) {
		cli_expected(&cli, "one CIPHERDIR");
		return FSCK_USAGE;
	}
	if (o.yes && !repair) {
		cli_expected(&cli, "--repair with --yes");
		return FSCK_USAGE;
	}
	o.dir = argv[optind];
	o.progress = !o.quiet && isatty(STDERR_FILENO);
	o.ask = repair && !o.yes && isatty(STDIN_FILENO) &&
		isatty(STDERR_FILENO);
	if (repair && !o.yes && !o.ask)
		fprintf(stderr, PROG ": --repair without a terminal to ask on "
			"and without -y: nothing will be repaired\n");
	common_warn_files(&co, PROG);
	catch_signals();
	if ((rc = refuse_mounted(o.dir)))
		return json_failed(&o, rc);
	dfd = open_cipherdir(PROG, o.dir);
	if (dfd >= 0) {
		rc = run(&co, &o, dfd);
		close(dfd);
	} else {
		rc = FSCK_OPERROR;
	}
	return json_failed(&o, rc);
}
