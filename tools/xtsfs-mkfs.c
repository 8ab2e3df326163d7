/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xtsfs-mkfs - make a new xtsfs volume: random volume keys, one key slot
 * for the passphrase (Argon2id calibrated to this machine), and the
 * volume header written atomically (doc/FORMAT.md section 2).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "names.h"
#include "rview.h"
#include "volume.h"

#define PROG "xtsfs-mkfs"

enum { OPT_PLAINTEXT = OPT_TOOL_BASE, OPT_PRINT_KEY, OPT_REVERSE,
       OPT_LAYOUT };

static const struct option longopts[] = {
	{ "force", no_argument, NULL, 'f' },
	{ "layout", required_argument, NULL, OPT_LAYOUT },
	{ "plaintext-names", no_argument, NULL, OPT_PLAINTEXT },
	{ "print-volume-key", no_argument, NULL, OPT_PRINT_KEY },
	{ "reverse", no_argument, NULL, OPT_REVERSE },
	{ "quiet", no_argument, NULL, 'q' },
	CLI_LONGOPTS,
	COMMON_PASS_LONGOPTS,
	COMMON_KDF_LONGOPTS,
	{ NULL, 0, NULL, 0 },
};

static const struct cli cli = {
	.prog = PROG,
	.shortopts = "fq" CLI_SHORTOPTS,
	.longopts = longopts,
	.column = COMMON_HELP_COLUMN,
	.help =
"Usage: " PROG " [OPTION]... CIPHERDIR\n"
"Make a new xtsfs volume in CIPHERDIR (created if missing; must be empty).\n"
"Asks for the passphrase twice on a terminal, without echo.\n"
"\n"
"  -f, --force             accept a CIPHERDIR that is not empty\n"
"      --layout=LAYOUT     where file data lives in the lower files:\n"
"                          compact (the default: right after each file's\n"
"                          40-byte header; the lower file is 40 bytes\n"
"                          longer) or aligned (from offset 4096: each\n"
"                          4 KiB block is one lower block, for faster\n"
"                          random writes; up to 4 KiB more disk per file)\n"
"      --plaintext-names   do not encrypt file names (contents still are)\n"
"      --print-volume-key  print the raw volume key once, for a paper\n"
"                          backup (whoever has it can read the volume)\n"
"      --reverse           CIPHERDIR is a plaintext directory to be shown\n"
"                          encrypted by xtsfs --reverse: keep the header in\n"
"                          it as .xtsfs.volume (the directory may hold data)\n"
"  -q, --quiet             print nothing but errors (no progress lines)\n"
COMMON_PASS_HELP
COMMON_KDF_HELP,
	.help_end =
"\n"
"Example:\n"
"  " PROG " /srv/vault && xtsfs /srv/vault /mnt/plain\n"
"  " PROG " --reverse ~/data && xtsfs --reverse ~/data /mnt/view\n"
"\n"
"Exit status: 0 ok, 1 failure, 2 bad usage, 3 cipher core unusable,\n"
"7 directory not empty or already a volume, 8 no usable passphrase.\n",
};

/* Is @fd an empty directory (ignoring our stale temp file)? */
static int dir_is_empty(int fd)
{
	int dup_fd = dup(fd);
	DIR *d;
	struct dirent *e;
	int empty = 1;

	if (dup_fd < 0)
		return -errno;
	d = fdopendir(dup_fd);
	if (!d) {
		close(dup_fd);
		return -errno;
	}
	while ((e = readdir(d))) {
		if (names_is_dot(e->d_name))
			continue;
		empty = 0;
		break;
	}
	closedir(d);
	return empty;
}

/*
 * Whether a volume may be made in @dir (open as @dfd): no header there
 * yet, empty unless @reverse or @force, writable. Return: 0 or the exit
 * code, said on stderr.
 */
/* Whether @name in @dfd begins as a volume header does (its magic). */
static bool looks_like_header(int dfd, const char *name)
{
	char magic[8];
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
			O_NOCTTY | O_CLOEXEC);
	bool yes = false;

	if (fd >= 0) {
		yes = read(fd, magic, 8) == 8 && !memcmp(magic, "XTSFSVOL", 8);
		close(fd);
	}
	return yes;
}

static int check_dir(int dfd, const char *dir, bool reverse, bool plaintext,
		     bool force)
{
	struct stat st;
	const char *clash;
	int rc;

	/*
	 * Any header, even a damaged one; but in a plaintext directory a
	 * file of the user's that only has the name xtsfs.volume is data,
	 * for reverse mode to show encrypted.
	 */
	if (fstatat(dfd, VOL_REVERSE_NAME, &st, AT_SYMLINK_NOFOLLOW) == 0 ||
	    (reverse ? looks_like_header(dfd, VOL_FILE_NAME) :
	     fstatat(dfd, VOL_FILE_NAME, &st, AT_SYMLINK_NOFOLLOW) == 0)) {
		fprintf(stderr, PROG ": %s already holds an xtsfs volume "
			"header; refusing to overwrite it\n", dir);
		return XTSFS_EXIT_EXISTS;
	}
	clash = reverse && plaintext ? rfs_reserved_clash(dfd) : NULL;
	if (clash) {
		fprintf(stderr, PROG ": %s/%s: with plaintext names, reverse "
			"mode cannot show a file of this name (the view's header "
			"has it); rename it first\n", dir, clash);
		return XTSFS_EXIT_EXISTS;
	}
	/* reverse mode encrypts a directory that already holds the data */
	rc = reverse ? 1 : dir_is_empty(dfd);
	if (rc < 0) {
		fprintf(stderr, PROG ": %s: %s\n", dir, strerror(-rc));
		return XTSFS_EXIT_FAILURE;
	}
	if (!rc && !force) {
		fprintf(stderr, PROG ": %s is not empty; use --force to make "
			"a volume there anyway\n", dir);
		return XTSFS_EXIT_EXISTS;
	}
	/* Fail early, before asking anything, if we cannot write here. */
	if (faccessat(dfd, ".", W_OK, AT_EACCESS) != 0) {
		fprintf(stderr, PROG ": %s: %s\n", dir, strerror(errno));
		return XTSFS_EXIT_FAILURE;
	}
	return 0;
}

/* What was made, unless --quiet; the volume key if @keys (--print-key). */
static void say_made(const struct common_opts *o, const char *dir,
		     const char *core, bool plaintext, bool reverse, bool aligned,
		     double unlock_ms, const struct vol_header *h,
		     const struct vol_keys *keys)
{
	char keytext[VOL_KEY_TEXT_SIZE];
	struct vol_key_info ki;

	if (!o->quiet) {
		printf("Created an xtsfs volume in %s\n", dir);
		printf("  cipher core:  %s (self-test passed)\n", core);
		printf("  contents:     aes-256-xts, 4096-byte units, %s "
		       "layout\n", aligned ? "aligned" : "compact");
		printf("  names:        %s\n", plaintext ? "plaintext "
		       "(not encrypted)" : "aes-256-siv (encrypted)");
		printf("  key slot 0:   argon2id, %u iterations, %u KiB, %u "
		       "lanes\n", o->kdf.t_cost, o->kdf.m_cost_kib,
		       o->kdf.lanes);
		printf("  unlock time:  %.0f ms on this machine\n", unlock_ms);
	}
	if (keys) {
		vol_key_info_of(&ki, h);
		vol_key_format(keytext, keys, &ki);
		printf("\nVolume key (write it down and keep it safe; anyone "
		       "who has it can read\nthis volume, with or without a "
		       "passphrase):\n\n%s\n", keytext);
		explicit_bzero(keytext, sizeof(keytext));
	}
	if (!o->quiet && reverse)
		printf("Show it encrypted with: xtsfs --reverse %s VIEWDIR\n",
		       dir);
	else if (!o->quiet)
		printf("Mount it with: xtsfs %s MOUNTPOINT\n", dir);
}

int main(int argc, char **argv)
{
	struct common_opts o;
	bool force = false, plaintext = false, print_key = false, reverse = false;
	bool aligned = false;
	const char *dir, *core;
	struct vol_header *h = NULL;
	struct vol_keys *keys = NULL;
	char *pass = NULL, err[512];
	size_t passlen;
	double t0, unlock_ms;
	int opt, rc, dfd = -1, ret = XTSFS_EXIT_FAILURE;

	common_init(&o, PROG);
	while ((opt = common_getopt(&cli, &o, argc, argv, &rc)) > 0) {
		switch (opt) {
		case 'f':
			force = true;
			break;
		case OPT_PLAINTEXT:
			plaintext = true;
			break;
		case OPT_PRINT_KEY:
			print_key = true;
			break;
		case OPT_REVERSE:
			reverse = true;
			break;
		case OPT_LAYOUT:
			if (strcmp(optarg, "compact") && strcmp(optarg, "aligned")) {
				fprintf(stderr, PROG ": --layout: '%s' is not "
					"a layout (compact or aligned)\n", optarg);
				return XTSFS_EXIT_USAGE;
			}
			aligned = !strcmp(optarg, "aligned");
			break;
		case 'q':
			o.quiet = true;
			break;
		}
	}
	if (opt < 0)
		return rc;
	if (optind + 1 != argc)
		return cli_expected(&cli, "one CIPHERDIR");
	if (o.volume_key_file) {
		fprintf(stderr, PROG ": --volume-key-file makes no sense here: "
			"mkfs makes new keys (to write a new header for a volume whose "
			"header is lost: xtsfs-passwd --repair "
			"--volume-key-file FILE DIR)\n");
		return XTSFS_EXIT_USAGE;
	}
	if (reverse && aligned) {
		fprintf(stderr, PROG ": --layout=aligned cannot be used with "
			"--reverse: a reverse view shows the compact layout\n");
		return XTSFS_EXIT_USAGE;
	}
	dir = argv[optind];
	common_warn_files(&o, PROG);
	rc = common_choose_cipher(&o, PROG, &core);
	if (rc)
		return rc;

	if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
		fprintf(stderr, PROG ": cannot create %s: %s\n", dir,
			strerror(errno));
		return XTSFS_EXIT_FAILURE;
	}
	dfd = open_cipherdir(PROG, dir);
	if (dfd < 0)
		return XTSFS_EXIT_FAILURE;
	ret = check_dir(dfd, dir, reverse, plaintext, force);
	if (ret)
		goto out;
	ret = XTSFS_EXIT_FAILURE;

	{
		char prompt[4200];

		snprintf(prompt, sizeof(prompt), "New passphrase for %s: ", dir);
		rc = pass_read(&o.pass, prompt, true, &pass, &passlen, err,
			       sizeof(err));
	}
	if (rc) {
		fprintf(stderr, PROG ": %s\n", err);
		ret = XTSFS_EXIT_NOPASS;
		goto out;
	}

	if (!(o.kdf.t_cost && o.kdf.m_cost_kib))
		progress_start(&o, PROG ": calibrating Argon2id for a %u ms "
			       "unlock", o.unlock_ms);
	rc = kdf_calibrate(&o.kdf, o.unlock_ms);
	progress_done();
	if (rc) {
		fprintf(stderr, PROG ": Argon2id parameters: %s\n",
			rc == -ENOMEM ? "out of memory" : "out of range");
		goto out;
	}

	h = calloc(1, sizeof(*h));
	rc = h ? vol_keys_new(&keys) : -ENOMEM;
	if (rc) {
		fprintf(stderr, PROG ": cannot make keys: %s\n", strerror(-rc));
		goto out;
	}
	if (getrandom(h->uuid, sizeof(h->uuid), 0) != sizeof(h->uuid)) {
		fprintf(stderr, PROG ": getrandom: %s\n", strerror(errno));
		goto out;
	}
	h->flags = (plaintext ? VOL_FLAG_PLAINTEXT_NAMES : 0) |
		   (reverse ? VOL_FLAG_REVERSE : 0) |
		   (aligned ? VOL_FLAG_ALIGNED : 0);
	h->file = reverse ? VOL_REVERSE_NAME : VOL_FILE_NAME;
	progress_kdf(&o, PROG, "making", 0, &o.kdf);
	t0 = now_ms();
	rc = vol_slot_store(h, 0, pass, passlen, &o.kdf, keys);
	unlock_ms = now_ms() - t0; /* one derivation = one unlock */
	progress_done();
	pass_free(pass);
	pass = NULL;
	if (rc) {
		fprintf(stderr, PROG ": cannot store the key slot: %s\n",
			strerror(-rc));
		goto out;
	}
	rc = vol_write(dfd, h, keys);
	if (rc) {
		fprintf(stderr, PROG ": cannot write %s/%s: %s (nothing was "
			"written)\n", dir, vol_file_name(h), strerror(-rc));
		goto out;
	}
	say_made(&o, dir, core, plaintext, reverse, aligned, unlock_ms, h,
		 print_key ? keys : NULL);
	ret = XTSFS_EXIT_OK;
out:
	pass_free(pass);
	vol_keys_free(keys);
	free(h);
	if (dfd >= 0)
		close(dfd);
	return ret;
}
