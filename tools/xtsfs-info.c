/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xtsfs-info - show the volume header of a cipher directory: version,
 * ciphers, flags, the state of both header copies and every key slot's
 * Argon2id cost. Needs no passphrase and never prints a secret (salts and
 * wrapped keys are not shown either: they are no use to a reader).
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "volume.h"
#include "xts.h"

#define PROG "xtsfs-info"

static const struct option longopts[] = {
	{ "json", no_argument, NULL, 'j' },
	{ "cipher", required_argument, NULL, 'c' },
	CLI_LONGOPTS,
	{ NULL, 0, NULL, 0 },
};

static const struct cli cli = {
	.prog = PROG,
	.shortopts = "j" CLI_SHORTOPTS,
	.longopts = longopts,
	.column = 20,
	.help =
"Usage: " PROG " [OPTION]... CIPHERDIR\n"
"Show the volume header of an xtsfs cipher directory. No passphrase is\n"
"needed and no secret is shown.\n"
"\n"
"  -j, --json        print one JSON object\n"
"      --cipher=CORE the cipher core to report (default: XTSFS_CIPHER,\n"
"                    else the fastest this CPU runs)\n",
	.help_end =
"\n"
"Example: " PROG " /srv/vault\n"
"\n"
"Exit status: 0 ok, 1 failure, 2 bad usage, 3 cipher core unusable,\n"
"5 no volume, 6 corrupt or unsupported header.\n",
};

static const char *copy_state(const struct vol_read_info *info, int c)
{
	if (info->copy_ok[c])
		return "ok";
	switch (info->copy_err[c]) {
	case -EBADMSG:
		return "damaged (checksum)";
	case -EPROTONOSUPPORT:
		return "unsupported version or feature";
	default:
		return "invalid values";
	}
}

static void print_text(const char *dir, const struct vol_header *h,
		       const struct vol_read_info *info)
{
	char uuid[37];

	vol_uuid_format(uuid, h->uuid);
	printf("xtsfs volume %s\n", dir);
	printf("  format version:  %u\n", h->version);
	printf("  volume uuid:     %s\n", uuid);
	printf("  contents:        aes-256-xts, %d-byte units, %s layout "
	       "(data at lower offset %u)\n", VOL_UNIT_SIZE,
	       h->flags & VOL_FLAG_ALIGNED ? "aligned" : "compact",
	       (unsigned)VOL_DOFF(h->flags));
	printf("  names:           %s\n",
	       h->flags & VOL_FLAG_PLAINTEXT_NAMES ? "plaintext" :
						     "aes-256-siv");
	printf("  flags:           %s%s%s%s\n",
	       h->flags & VOL_FLAG_PLAINTEXT_NAMES ? "plaintext-names " : "",
	       h->flags & VOL_FLAG_REVERSE ? "reverse " : "",
	       h->flags & VOL_FLAG_ALIGNED ? "aligned " : "",
	       h->flags ? "" : "none");
	printf("  header:          seqid %llu; primary copy %s, secondary "
	       "copy %s%s\n", (unsigned long long)h->seqid,
	       copy_state(info, 0), copy_state(info, 1),
	       info->copies_differ ? " (copies differ!)" : "");
	printf("  key slots:       %d of %d in use\n", vol_slot_count(h),
	       VOL_MAX_SLOTS);
	for (int i = 0; i < VOL_MAX_SLOTS; i++) {
		const struct vol_slot *s = &h->slots[i];

		if (!s->active)
			continue;
		printf("    slot %d: argon2id, %u iterations, %u KiB, %u "
		       "lanes\n", i, s->kdf.t_cost, s->kdf.m_cost_kib,
		       s->kdf.lanes);
	}
}

static void print_json(const char *dir, const struct vol_header *h,
		       const struct vol_read_info *info)
{
	char uuid[37];
	bool first = true;

	vol_uuid_format(uuid, h->uuid);
	printf("{\"path\": \"");
	for (const char *p = dir; *p; p++) {
		if (*p == '"' || *p == '\\')
			printf("\\%c", *p);
		else if ((unsigned char)*p < 0x20)
			printf("\\u%04x", *p);
		else
			putchar(*p);
	}
	printf("\", \"version\": %u, \"uuid\": \"%s\", "
	       "\"contents_cipher\": \"aes-256-xts\", \"unit_size\": %d, "
	       "\"layout\": \"%s\", "
	       "\"names_cipher\": %s, \"plaintext_names\": %s, "
	       "\"seqid\": %llu, \"copies\": [\"%s\", \"%s\"], "
	       "\"slots\": [", h->version, uuid, VOL_UNIT_SIZE,
	       h->flags & VOL_FLAG_ALIGNED ? "aligned" : "compact",
	       h->flags & VOL_FLAG_PLAINTEXT_NAMES ? "null" : "\"aes-256-siv\"",
	       h->flags & VOL_FLAG_PLAINTEXT_NAMES ? "true" : "false",
	       (unsigned long long)h->seqid, copy_state(info, 0),
	       copy_state(info, 1));
	for (int i = 0; i < VOL_MAX_SLOTS; i++) {
		const struct vol_slot *s = &h->slots[i];

		if (!s->active)
			continue;
		printf("%s{\"slot\": %d, \"kdf\": \"argon2id\", \"time\": %u, "
		       "\"memory_kib\": %u, \"lanes\": %u}", first ? "" : ", ",
		       i, s->kdf.t_cost, s->kdf.m_cost_kib, s->kdf.lanes);
		first = false;
	}
	printf("]}\n");
}

int main(int argc, char **argv)
{
	struct vol_header *h;
	struct vol_read_info info;
	const struct xts_backend *be;
	const char *cipher = NULL;
	int opt, json = 0, dfd, rc;

	while ((opt = cli_getopt(&cli, argc, argv, &rc)) > 0) {
		switch (opt) {
		case 'c':
			cipher = optarg;
			break;
		case 'j':
			json = 1;
			break;
		}
	}
	if (opt < 0)
		return rc;
	if (optind + 1 != argc)
		return cli_expected(&cli, "one CIPHERDIR");
	if (xts_choose(cipher, &be) != 0) {
		fprintf(stderr, PROG ": %s\n", xts_choose_error());
		return XTSFS_EXIT_CIPHER;
	}
	dfd = open_cipherdir(PROG, argv[optind]);
	if (dfd < 0)
		return errno == ENOENT ? XTSFS_EXIT_NOVOLUME : XTSFS_EXIT_FAILURE;
	h = malloc(sizeof(*h));
	if (!h)
		return XTSFS_EXIT_FAILURE;
	rc = vol_read(dfd, h, &info);
	close(dfd);
	if (rc) {
		fprintf(stderr, PROG ": %s/%s: %s\n", argv[optind],
			VOL_FILE_NAME, vol_strerror(rc));
		free(h);
		return exit_code_for(rc);
	}
	if (!info.copy_ok[0])
		fprintf(stderr, PROG ": warning: the primary header copy is "
			"damaged; showing the secondary (repair with "
			"xtsfs-passwd --repair)\n");
	if (json) {
		print_json(argv[optind], h, &info);
	} else {
		print_text(argv[optind], h, &info);
		printf("  cipher core:     %s on this machine (self-test "
		       "passed)\n", be->name);
	}
	free(h);
	return XTSFS_EXIT_OK;
}
