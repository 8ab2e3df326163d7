/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xtsfs-passwd - manage the key slots of an xtsfs volume: add a
 * passphrase, remove one, change one, or rewrite a damaged header. The
 * volume keys never change, so no data is re-encrypted; every change is
 * one atomic rewrite of the header (doc/FORMAT.md 2.1).
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "volume.h"

#define PROG "xtsfs-passwd"

enum {
	OPT_ADD = OPT_TOOL_BASE,
	OPT_REMOVE,
	OPT_CHANGE,
	OPT_REPAIR,
	OPT_TEST,
	OPT_SLOT,
	OPT_NEW_PASSFILE,
};

enum action { ACT_NONE, ACT_ADD, ACT_REMOVE, ACT_CHANGE, ACT_REPAIR, ACT_TEST };

static const struct option longopts[] = {
	{ "add", no_argument, NULL, 'a' },
	{ "remove", required_argument, NULL, 'r' },
	{ "change", no_argument, NULL, 'c' },
	{ "repair", no_argument, NULL, OPT_REPAIR },
	{ "test", no_argument, NULL, 't' },
	{ "slot", required_argument, NULL, 's' },
	{ "new-passfile", required_argument, NULL, OPT_NEW_PASSFILE },
	{ "quiet", no_argument, NULL, 'q' },
	CLI_LONGOPTS,
	COMMON_PASS_LONGOPTS,
	COMMON_UNLOCK_LONGOPTS,
	COMMON_KDF_LONGOPTS,
	{ NULL, 0, NULL, 0 },
};

static const struct cli cli = {
	.prog = PROG,
	.shortopts = "ar:cts:q" CLI_SHORTOPTS,
	.longopts = longopts,
	.column = COMMON_HELP_COLUMN,
	.help =
"Usage: " PROG " ACTION [OPTION]... CIPHERDIR\n"
"Manage the passphrases (key slots) of an xtsfs volume without\n"
"re-encrypting anything. Every action first unlocks the volume with an\n"
"existing passphrase (or the raw volume key).\n"
"\n"
"Actions:\n"
"  -a, --add               add a passphrase in a free key slot\n"
"  -r, --remove=SLOT       remove key slot SLOT (0..7); never the last one\n"
"  -c, --change            change the passphrase of the slot that opens\n"
"                          (with --volume-key-file: of --slot N)\n"
"      --repair            rewrite both header copies from the good one\n"
"  -t, --test              only check that the passphrase opens the volume\n"
"                          and say which key slot it opens\n"
"\n"
"Options:\n"
"  -s, --slot=N            unlock with slot N only; with --add: use slot N\n"
"      --new-passfile=FILE read the new passphrase from the first line of\n"
"                          FILE (default: the terminal, asked twice, or\n"
"                          stdin if it is not a terminal and not already\n"
"                          used for the current passphrase)\n"
"  -q, --quiet             print nothing but errors (no progress lines)\n"
COMMON_PASS_HELP
COMMON_UNLOCK_HELP
COMMON_KDF_HELP,
	.help_end =
"\n"
"Examples:\n"
"  " PROG " --add /srv/vault\n"
"  " PROG " --remove 1 --passfile /root/vault.pass /srv/vault\n"
"\n"
"Exit status: 0 ok, 1 failure, 2 bad usage, 4 wrong passphrase, 5 no\n"
"volume, 6 corrupt header (or every key slot too costly), 8 no usable\n"
"passphrase.\n",
};

static int parse_slot(const char *arg)
{
	char *end;
	long v = strtol(arg, &end, 10);

	if (end == arg || *end || v < 0 || v >= VOL_MAX_SLOTS)
		return -1;
	return (int)v;
}

/* The new passphrase: --new-passfile, else the terminal (twice)/stdin. */
static int read_new_pass(const struct common_opts *o, const char *newfile,
			 const char *dir, char **pass, size_t *len)
{
	struct pass_source src = { .kind = PASS_AUTO };
	char prompt[4200], err[512];
	int rc;

	if (newfile) {
		src.kind = PASS_FILE;
		src.arg = newfile;
	} else if (!isatty(STDIN_FILENO) && !o->pass_given &&
		   !o->volume_key_file) {
		fprintf(stderr, PROG ": the current passphrase came from stdin; "
			"give the new one with --new-passfile\n");
		return XTSFS_EXIT_USAGE;
	}
	snprintf(prompt, sizeof(prompt), "New passphrase for %s: ", dir);
	rc = pass_read(&src, prompt, true, pass, len, err, sizeof(err));
	if (rc) {
		fprintf(stderr, PROG ": %s\n", err);
		return XTSFS_EXIT_NOPASS;
	}
	return 0;
}

/* --remove @n: empty slot @n, unless it is empty or the last one. */
static int remove_slot_of(struct vol *v, int n)
{
	if (!v->hdr.slots[n].active) {
		fprintf(stderr, PROG ": key slot %d is not in use\n", n);
		return XTSFS_EXIT_USAGE;
	}
	if (vol_slot_count(&v->hdr) == 1) {
		fprintf(stderr, PROG ": key slot %d is the last one; add another "
			"passphrase before removing it\n", n);
		return XTSFS_EXIT_USAGE;
	}
	memset(&v->hdr.slots[n], 0, sizeof(v->hdr.slots[n]));
	return 0;
}

/*
 * The slot --add or --change writes: for --change the one that opened
 * (or --slot with a volume key), for --add --slot if free, else the first
 * free one. Return: the slot, or -(exit code).
 */
static int target_slot(const struct vol *v, enum action act, int slot)
{
	int t;

	if (act == ACT_CHANGE) {
		t = v->slot >= 0 ? v->slot : slot;
		if (t < 0) {
			fprintf(stderr, PROG ": with --volume-key-file, --change "
				"needs --slot N\n");
			return -XTSFS_EXIT_USAGE;
		}
		return t;
	}
	if (slot >= 0) {
		if (v->hdr.slots[slot].active) {
			fprintf(stderr, PROG ": key slot %d is in use; pick a "
				"free one or use --change\n", slot);
			return -XTSFS_EXIT_USAGE;
		}
		return slot;
	}
	for (t = 0; t < VOL_MAX_SLOTS; t++)
		if (!v->hdr.slots[t].active)
			return t;
	fprintf(stderr, PROG ": all %d key slots are in use; remove one "
		"first\n", VOL_MAX_SLOTS);
	return -XTSFS_EXIT_FAILURE;
}

/*
 * --add / --change: read the new passphrase, calibrate Argon2id, store
 * the slot; *@slot becomes the slot written. Return: 0 or an exit code.
 */
static int store_slot(struct common_opts *o, struct vol *v, enum action act,
		      int *slot, const char *newfile, const char *dir,
		      char **pass, size_t *passlen)
{
	int target = target_slot(v, act, *slot), ret, rc;

	if (target < 0)
		return -target;
	ret = read_new_pass(o, newfile, dir, pass, passlen);
	if (ret)
		return ret;
	if (!(o->kdf.t_cost && o->kdf.m_cost_kib))
		progress_start(o, PROG ": calibrating Argon2id for a %u ms "
			       "unlock", o->unlock_ms);
	rc = kdf_calibrate(&o->kdf, o->unlock_ms);
	progress_done();
	if (!rc) {
		progress_kdf(o, PROG, "making", target, &o->kdf);
		rc = vol_slot_store(&v->hdr, target, *pass, *passlen, &o->kdf,
				    v->keys);
		progress_done();
	}
	if (rc) {
		fprintf(stderr, PROG ": cannot store key slot %d: %s\n", target,
			strerror(-rc));
		return XTSFS_EXIT_FAILURE;
	}
	*slot = target;
	return 0;
}

/* The line that says what was done to slot @slot. */
static void say_done(const struct common_opts *o, const struct vol *v,
		     enum action act, int slot, const char *dir)
{
	if (act == ACT_ADD)
		printf("Added key slot %d (argon2id, %u iterations, %u KiB, %u "
		       "lanes)\n", slot, o->kdf.t_cost, o->kdf.m_cost_kib,
		       o->kdf.lanes);
	else if (act == ACT_CHANGE)
		printf("Changed the passphrase of key slot %d\n", slot);
	else if (act == ACT_REMOVE)
		printf("Removed key slot %d\n", slot);
	else
		printf("Rewrote both copies of %s/%s\n", dir,
		       vol_file_name(&v->hdr));
}

int main(int argc, char **argv)
{
	struct common_opts o;
	enum action act = ACT_NONE;
	int slot = -1, remove_slot = -1, opt, rc, dfd;
	int ret = XTSFS_EXIT_FAILURE;
	const char *dir, *newfile = NULL;
	struct vol v = { 0 };
	char *pass = NULL;
	size_t passlen = 0;

	common_init(&o, PROG);
	while ((opt = common_getopt(&cli, &o, argc, argv, &rc)) > 0) {
		switch (opt) {
		case 'a':
		case 'c':
		case 'r':
		case 't':
		case OPT_REPAIR:
			if (act != ACT_NONE) {
				fprintf(stderr, PROG ": give one action\n");
				return XTSFS_EXIT_USAGE;
			}
			act = opt == 'a' ? ACT_ADD : opt == 'c' ? ACT_CHANGE :
			      opt == 'r' ? ACT_REMOVE : opt == 't' ? ACT_TEST :
			      ACT_REPAIR;
			if (opt == 'r' && (remove_slot = parse_slot(optarg)) < 0) {
				fprintf(stderr, PROG ": --remove: a slot "
					"number 0..%d\n", VOL_MAX_SLOTS - 1);
				return XTSFS_EXIT_USAGE;
			}
			break;
		case 's':
			slot = parse_slot(optarg);
			if (slot < 0) {
				fprintf(stderr, PROG ": --slot: a slot number "
					"0..%d\n", VOL_MAX_SLOTS - 1);
				return XTSFS_EXIT_USAGE;
			}
			break;
		case OPT_NEW_PASSFILE:
			newfile = optarg;
			break;
		case 'q':
			o.quiet = true;
			break;
		}
	}
	if (opt < 0)
		return rc;
	if (act == ACT_NONE || optind + 1 != argc)
		return cli_expected(&cli, "an action and one CIPHERDIR");
	dir = argv[optind];
	common_warn_files(&o, PROG);
	warn_secret_file(PROG, "passphrase", newfile);
	/* the same cipher-core rules as every tool (--cipher, XTSFS_CIPHER) */
	rc = common_choose_cipher(&o, PROG, NULL);
	if (rc)
		return rc;
	dfd = open_cipherdir(PROG, dir);
	if (dfd < 0)
		return errno == ENOENT ? XTSFS_EXIT_NOVOLUME : XTSFS_EXIT_FAILURE;

	/* With --add, --slot names the destination, not the key to try. */
	ret = common_unlock(&o, PROG, dfd, dir, act == ACT_ADD ? -1 : slot, &v);
	if (ret)
		goto out;
	ret = XTSFS_EXIT_FAILURE;

	switch (act) {
	case ACT_TEST:
		if (!o.quiet) {
			if (v.slot >= 0)
				printf("The passphrase opens key slot %d of %s\n",
				       v.slot, dir);
			else
				printf("The volume key opens %s\n", dir);
		}
		ret = XTSFS_EXIT_OK;
		goto out;
	case ACT_REPAIR:
		break;
	case ACT_REMOVE:
		ret = remove_slot_of(&v, remove_slot);
		if (ret)
			goto out;
		break;
	case ACT_ADD:
	case ACT_CHANGE:
		ret = store_slot(&o, &v, act, &slot, newfile, dir, &pass,
				 &passlen);
		if (ret)
			goto out;
		break;
	case ACT_NONE:
		goto out;
	}
	ret = XTSFS_EXIT_FAILURE;
	rc = vol_write(dfd, &v.hdr, v.keys);
	if (rc) {
		fprintf(stderr, PROG ": cannot write %s/%s: %s (the old header "
			"is unchanged)\n", dir, vol_file_name(&v.hdr), strerror(-rc));
		goto out;
	}
	if (!o.quiet)
		say_done(&o, &v, act, act == ACT_REMOVE ? remove_slot : slot,
			 dir);
	ret = XTSFS_EXIT_OK;
out:
	pass_free(pass);
	vol_close(&v);
	close(dfd);
	return ret;
}
