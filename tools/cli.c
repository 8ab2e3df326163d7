/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cli.c - the command line every xtsfs command shares (cli.h).
 */
#include "cli.h"

#include "config.h"
#include "exitcodes.h"

/* see cli.h */
void cli_usage(const struct cli *cli, FILE *f)
{
	int w = cli->column > 2 ? cli->column - 2 : 0;

	fputs(cli->help, f);
	fprintf(f, "  %-*s%s\n", w, "-h, --help", "show this help and exit");
	fprintf(f, "  %-*s%s\n", w, "-V, --version",
		"show the version and exit");
	fputs(cli->help_end, f);
}

/* see cli.h */
int cli_getopt(const struct cli *cli, int argc, char **argv, int *exit_code)
{
	int opt = getopt_long(argc, argv, cli->shortopts, cli->longopts, NULL);

	switch (opt) {
	case -1:
		return 0;
	case 'h':
		cli_usage(cli, stdout);
		*exit_code = XTSFS_EXIT_OK;
		return -1;
	case 'V':
		printf("%s %s\n", cli->prog, XTSFS_VERSION);
		*exit_code = XTSFS_EXIT_OK;
		return -1;
	case '?':
	case ':':
		cli_usage(cli, stderr);
		*exit_code = XTSFS_EXIT_USAGE;
		return -1;
	default:
		return opt;
	}
}

/* see cli.h */
int cli_expected(const struct cli *cli, const char *what)
{
	fprintf(stderr, "%s: expected %s (see --help)\n", cli->prog, what);
	return XTSFS_EXIT_USAGE;
}
