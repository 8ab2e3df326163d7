/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xtsfs-passwd - manage the key slots of an xtsfs volume: add a
 * passphrase, remove one, change one, or rewrite a damaged header. The
 * volume keys never change, so no data is re-encrypted; every change is
 * one atomic rewrite of the header (doc/FORMAT.md 2.1).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "common.h"
#include "probe.h"
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
	OPT_BACKUP,
	OPT_RESTORE,
	OPT_PRINT_KEY,
	OPT_UPGRADE,
};

enum action {
	ACT_NONE, ACT_ADD, ACT_REMOVE, ACT_CHANGE, ACT_REPAIR, ACT_TEST,
	ACT_BACKUP, ACT_RESTORE, ACT_PRINT_KEY, ACT_UPGRADE,
};

static const struct option longopts[] = {
	{ "add", no_argument, NULL, 'a' },
	{ "remove", required_argument, NULL, 'r' },
	{ "change", no_argument, NULL, 'c' },
	{ "repair", no_argument, NULL, OPT_REPAIR },
	{ "test", no_argument, NULL, 't' },
	{ "backup-header", required_argument, NULL, OPT_BACKUP },
	{ "restore-header", required_argument, NULL, OPT_RESTORE },
	{ "print-volume-key", no_argument, NULL, OPT_PRINT_KEY },
	{ "upgrade", no_argument, NULL, OPT_UPGRADE },
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
"      --repair            rewrite both header copies from the good one;\n"
"                          with --volume-key-file and no usable header,\n"
"                          write a new header (new passphrase, same keys)\n"
"  -t, --test              only check that the passphrase opens the volume\n"
"                          and say which key slot it opens\n"
"      --backup-header=FILE  save the header to FILE (a new file) and\n"
"                          check that the copy opens\n"
"      --restore-header=FILE  put the header saved in FILE back, once a\n"
"                          passphrase opens it and it is this volume's\n"
"      --print-volume-key  print the raw volume key (version 2 text)\n"
"      --upgrade           mark a format 1 volume as format 2, so that\n"
"                          xtsfs before format 2 no longer writes to it\n"
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
"  " PROG " --backup-header /media/usb/vault.header /srv/vault\n"
"  " PROG " --repair --volume-key-file vault.key /srv/vault\n"
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
	else if (act == ACT_UPGRADE)
		printf("%s is now format version %u\n", dir, v->hdr.version);
	else
		printf("Rewrote both copies of %s/%s\n", dir,
		       vol_file_name(&v->hdr));
}

/*
 * --repair of a volume opened by its key alone (no usable header): a new
 * header from the key text's description, with a new passphrase in
 * key slot 0 (or --slot). The UUID is the key text's; a version 1 key
 * has none, so the header gets a new one.
 */
static int new_header(struct common_opts *o, struct vol *v, int *slot,
		      const char *newfile, const char *dir, char **pass,
		      size_t *passlen)
{
	static const uint8_t zero[16];

	v->hdr.file = NULL; /* xtsfs.volume: a forward volume */
	if (!memcmp(v->hdr.uuid, zero, 16) &&
	    getrandom(v->hdr.uuid, 16, 0) != 16) {
		fprintf(stderr, PROG ": getrandom: %s\n", strerror(errno));
		return XTSFS_EXIT_FAILURE;
	}
	return store_slot(o, v, ACT_ADD, slot, newfile, dir, pass, passlen);
}

/*
 * write_new_file() - @len bytes to a new file @path (mode 0600, never
 * over an existing one), fsynced.
 */
static int write_new_file(const char *path, const uint8_t *p, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	int err = 0;

	if (fd < 0)
		return -errno;
	while (len && !err) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno != EINTR)
			err = -errno;
		else if (n > 0) {
			p += n;
			len -= (size_t)n;
		}
	}
	if (!err && fsync(fd) != 0)
		err = -errno;
	if (close(fd) != 0 && !err)
		err = -errno;
	if (err)
		unlink(path);
	return err;
}

/*
 * --backup-header FILE: both copies as the copy in use (FORMAT.md 2.7),
 * then read back: it must parse, carry this volume's UUID and pass the
 * MAC under this volume's header key.
 */
static int backup_header(const struct common_opts *o, const struct vol *v,
			 const char *dir, const char *file)
{
	uint8_t buf[VOL_FILE_SIZE];
	struct vol_header h;
	struct vol_read_info info;
	char uuid[37];
	int rc;

	memcpy(buf, v->hdr.raw, VOL_COPY_SIZE);
	memcpy(buf + VOL_COPY_SIZE, v->hdr.raw, VOL_COPY_SIZE);
	rc = write_new_file(file, buf, sizeof(buf));
	if (rc) {
		fprintf(stderr, PROG ": %s: %s%s\n", file, strerror(-rc),
			rc == -EEXIST ? " (a backup never replaces a file)" : "");
		return XTSFS_EXIT_FAILURE;
	}
	rc = vol_read_path(file, &h, &info);
	if (rc || !info.copy_ok[0] || !info.copy_ok[1] ||
	    memcmp(h.uuid, v->hdr.uuid, 16) || !vol_verify_mac(&h, v->keys)) {
		fprintf(stderr, PROG ": %s: the backup does not read back as "
			"this volume's header (%s); removed\n", file,
			rc ? vol_strerror(rc) : "it differs");
		unlink(file);
		return XTSFS_EXIT_FAILURE;
	}
	vol_uuid_format(uuid, h.uuid);
	if (!o->quiet)
		printf("Saved the header of %s (UUID %s, %d key slot%s) to %s.\n"
		       "It opens with the passphrases the volume has now, even "
		       "after they are\nremoved from the volume: keep it as "
		       "safe as the volume key.\n", dir, uuid,
		       vol_slot_count(&h), vol_slot_count(&h) == 1 ? "" : "s",
		       file);
	return 0;
}

/*
 * Whether the header backup @b belongs to the cipher directory @dfd:
 * its current header, if one copy still reads, has the same UUID; else
 * its root's names must not contradict the backup's keys and flags.
 * *@file: the header file name to write.
 */
static int backup_belongs(int dfd, const char *dir, const struct vol *b,
			  const char *bfile, const char **file)
{
	struct vol_header cur;
	struct vol_read_info info;
	char want[37], have[37];
	const char *why;
	int rc = vol_read(dfd, &cur, &info);

	*file = rc == -ENOENT ? NULL : cur.file;
	if (rc == 0 && memcmp(cur.uuid, b->hdr.uuid, 16)) {
		vol_uuid_format(want, b->hdr.uuid);
		vol_uuid_format(have, cur.uuid);
		fprintf(stderr, PROG ": %s is a header of the volume with UUID "
			"%s; %s is %s: refusing\n", bfile, want, dir, have);
		return XTSFS_EXIT_USAGE;
	}
	if (rc == 0)
		return 0;
	rc = vol_probe(dfd, b->keys, b->hdr.flags, &why);
	/*
	 * A reverse-mode header belongs either in a copy of a view (its
	 * names decrypt) or in the plaintext directory, as .xtsfs.volume:
	 * there, nothing is encrypted to prove or contradict the keys.
	 */
	if (rc != 1 && (b->hdr.flags & VOL_FLAG_REVERSE) && !*file &&
	    vol_probe(dfd, b->keys, VOL_FLAG_PLAINTEXT_NAMES, &why) == 0) {
		*file = VOL_REVERSE_NAME;
		return 0;
	}
	if (rc < 0) {
		fprintf(stderr, PROG ": %s does not fit %s: %s\n", bfile, dir,
			rc == -EKEYREJECTED ? why : strerror(-rc));
		return rc == -EKEYREJECTED ? XTSFS_EXIT_USAGE : XTSFS_EXIT_FAILURE;
	}
	return 0;
}

/*
 * --restore-header FILE: unlock the backup (the passphrase must open
 * one of its slots), check that it is this volume's, then write it as
 * the header (both copies, atomically).
 */
static int restore_header(const struct common_opts *o, int dfd,
			  const char *dir, const char *bfile, int slot)
{
	struct vol b = { 0 };
	const char *file;
	int ret = common_unlock_backup(o, PROG, bfile, slot, &b), rc;

	if (ret)
		return ret;
	ret = backup_belongs(dfd, dir, &b, bfile, &file);
	if (!ret) {
		b.hdr.file = file;
		rc = vol_write(dfd, &b.hdr, b.keys);
		if (rc) {
			fprintf(stderr, PROG ": cannot write %s/%s: %s\n", dir,
				vol_file_name(&b.hdr), strerror(-rc));
			ret = XTSFS_EXIT_FAILURE;
		} else if (!o->quiet) {
			printf("Restored %s/%s from %s: the passphrases saved "
			       "in it open the volume now.\n", dir,
			       vol_file_name(&b.hdr), bfile);
		}
	}
	vol_close(&b);
	return ret;
}

/* --print-volume-key: the version 2 text (FORMAT.md 2.6) on stdout. */
static int print_key(const struct vol *v)
{
	static const uint8_t zero[16];
	struct vol_key_info ki;
	char text[VOL_KEY_TEXT_SIZE];

	if (v->info.headerless && !memcmp(v->hdr.uuid, zero, 16)) {
		fprintf(stderr, PROG ": the volume has no header, and the key "
			"text does not say its UUID: write a header first "
			"(--repair), then print the key\n");
		return XTSFS_EXIT_NOVOLUME;
	}
	vol_key_info_of(&ki, &v->hdr);
	vol_key_format(text, v->keys, &ki);
	fputs(text, stdout);
	explicit_bzero(text, sizeof(text));
	return fflush(stdout) ? XTSFS_EXIT_FAILURE : 0;
}

/* The command line, parsed. */
struct args {
	enum action act;
	int slot, remove_slot;
	const char *newfile;
	const char *file; /* --backup-header, --restore-header */
	const char *dir;
};

static int set_action(struct args *a, int opt, const char *arg)
{
	static const struct { int opt; enum action act; } map[] = {
		{ 'a', ACT_ADD }, { 'c', ACT_CHANGE }, { 'r', ACT_REMOVE },
		{ 't', ACT_TEST }, { OPT_REPAIR, ACT_REPAIR },
		{ OPT_BACKUP, ACT_BACKUP }, { OPT_RESTORE, ACT_RESTORE },
		{ OPT_PRINT_KEY, ACT_PRINT_KEY }, { OPT_UPGRADE, ACT_UPGRADE },
	};

	if (a->act != ACT_NONE) {
		fprintf(stderr, PROG ": give one action\n");
		return XTSFS_EXIT_USAGE;
	}
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (map[i].opt == opt)
			a->act = map[i].act;
	if (opt == OPT_BACKUP || opt == OPT_RESTORE)
		a->file = arg;
	if (opt == 'r' && (a->remove_slot = parse_slot(arg)) < 0) {
		fprintf(stderr, PROG ": --remove: a slot number 0..%d\n",
			VOL_MAX_SLOTS - 1);
		return XTSFS_EXIT_USAGE;
	}
	return 0;
}

/*
 * Return: 1 go on; 0 stop with exit code *@code (--help, --version, bad
 * usage: the message is printed).
 */
static int parse_args(struct common_opts *o, struct args *a, int argc,
		      char **argv, int *code)
{
	int opt, rc;

	while ((opt = common_getopt(&cli, o, argc, argv, &rc)) > 0) {
		if (opt == 'a' || opt == 'c' || opt == 'r' || opt == 't' ||
		    opt == OPT_REPAIR ||
		    opt == OPT_BACKUP || opt == OPT_RESTORE ||
		    opt == OPT_PRINT_KEY || opt == OPT_UPGRADE) {
			*code = set_action(a, opt, optarg);
			if (*code)
				return 0;
		} else if (opt == 's' && (a->slot = parse_slot(optarg)) < 0) {
			fprintf(stderr, PROG ": --slot: a slot number 0..%d\n",
				VOL_MAX_SLOTS - 1);
			*code = XTSFS_EXIT_USAGE;
			return 0;
		} else if (opt == OPT_NEW_PASSFILE) {
			a->newfile = optarg;
		} else if (opt == 'q') {
			o->quiet = true;
		}
	}
	if (opt < 0) {
		*code = rc;
		return 0;
	}
	if (a->act == ACT_NONE || optind + 1 != argc) {
		*code = cli_expected(&cli, "an action and one CIPHERDIR");
		return 0;
	}
	a->dir = argv[optind];
	return 1;
}

/*
 * The actions that change the header: the new header in v->hdr, to be
 * written. Return: 0, or the exit code.
 */
static int change(struct common_opts *o, struct args *a, struct vol *v,
		  char **pass, size_t *passlen)
{
	if (v->info.headerless && a->act != ACT_REPAIR) {
		fprintf(stderr, PROG ": %s has no usable header; write one "
			"first: " PROG " --repair --volume-key-file %s %s\n",
			a->dir, o->volume_key_file, a->dir);
		return XTSFS_EXIT_NOVOLUME;
	}
	switch (a->act) {
	case ACT_REPAIR:
		return v->info.headerless ?
		       new_header(o, v, &a->slot, a->newfile, a->dir, pass,
				  passlen) : 0;
	case ACT_REMOVE:
		return remove_slot_of(v, a->remove_slot);
	case ACT_UPGRADE:
		v->hdr.version = VOL_VERSION;
		return 0;
	case ACT_ADD:
	case ACT_CHANGE:
		return store_slot(o, v, a->act, &a->slot, a->newfile, a->dir,
				  pass, passlen);
	default:
		return XTSFS_EXIT_FAILURE;
	}
}

/* Whether action @a only reads (@v is unlocked). */
static bool reads_only(const struct args *a, const struct vol *v)
{
	return a->act == ACT_TEST || a->act == ACT_BACKUP ||
	       a->act == ACT_PRINT_KEY ||
	       (a->act == ACT_UPGRADE && !v->info.headerless &&
		v->hdr.version == VOL_VERSION);
}

/*
 * The actions that only read: --test, --backup-header, --print-volume-key,
 * and --upgrade of a volume that has the current format already.
 */
static int inspect(const struct common_opts *o, const struct args *a,
		   const struct vol *v)
{
	if (a->act == ACT_PRINT_KEY)
		return print_key(v);
	if (a->act == ACT_UPGRADE) {
		if (!o->quiet)
			printf("%s is format version %u already\n", a->dir,
			       v->hdr.version);
		return 0;
	}
	if (v->info.headerless) {
		fprintf(stderr, PROG ": %s has no usable header%s\n", a->dir,
			a->act == ACT_BACKUP ? " to back up" : "");
		if (a->act == ACT_BACKUP)
			return XTSFS_EXIT_NOVOLUME;
	}
	if (a->act == ACT_BACKUP)
		return backup_header(o, v, a->dir, a->file);
	if (!o->quiet && v->slot >= 0)
		printf("The passphrase opens key slot %d of %s\n", v->slot,
		       a->dir);
	else if (!o->quiet)
		printf("The volume key opens %s\n", a->dir);
	return 0;
}

int main(int argc, char **argv)
{
	struct common_opts o;
	struct args a = { .slot = -1, .remove_slot = -1 };
	struct vol v = { 0 };
	char *pass = NULL;
	size_t passlen = 0;
	int ret, rc, dfd;
	bool was_headerless;

	common_init(&o, PROG);
	if (!parse_args(&o, &a, argc, argv, &ret))
		return ret;
	common_warn_files(&o, PROG);
	warn_secret_file(PROG, "passphrase", a.newfile);
	/* the same cipher-core rules as every tool (--cipher, XTSFS_CIPHER) */
	ret = common_choose_cipher(&o, PROG, NULL);
	if (ret)
		return ret;
	dfd = open_cipherdir(PROG, a.dir);
	if (dfd < 0)
		return errno == ENOENT ? XTSFS_EXIT_NOVOLUME : XTSFS_EXIT_FAILURE;
	if (a.act == ACT_RESTORE) {
		ret = restore_header(&o, dfd, a.dir, a.file, a.slot);
		close(dfd);
		return ret;
	}
	/* With --add, --slot names the destination, not the key to try. */
	ret = common_unlock(&o, PROG, dfd, a.dir, a.act == ACT_ADD ? -1 : a.slot,
			    &v);
	if (ret)
		goto out;
	if (reads_only(&a, &v)) {
		ret = inspect(&o, &a, &v);
		goto out;
	}
	was_headerless = v.info.headerless;
	ret = change(&o, &a, &v, &pass, &passlen);
	if (ret)
		goto out;
	ret = XTSFS_EXIT_FAILURE;
	rc = vol_write(dfd, &v.hdr, v.keys);
	if (rc) {
		fprintf(stderr, PROG ": cannot write %s/%s: %s (the old header "
			"is unchanged)\n", a.dir, vol_file_name(&v.hdr),
			strerror(-rc));
		goto out;
	}
	if (!o.quiet && was_headerless)
		printf("Wrote a new header %s/%s with key slot %d\n", a.dir,
		       vol_file_name(&v.hdr), a.slot);
	else if (!o.quiet)
		say_done(&o, &v, a.act, a.act == ACT_REMOVE ? a.remove_slot :
			 a.slot, a.dir);
	ret = XTSFS_EXIT_OK;
out:
	pass_free(pass);
	vol_close(&v);
	close(dfd);
	return ret;
}
