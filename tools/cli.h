/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cli.h - the command line every xtsfs command shares: -h/--help,
 * -V/--version and bad usage, answered in one way by all of them.
 * Needs nothing but libc (xtsfs-bench links it without the volume
 * library).
 */
#ifndef XTSFS_TOOLS_CLI_H
#define XTSFS_TOOLS_CLI_H

#include <getopt.h>
#include <stdio.h>

/*
 * In every command's short options and long-option table (the table
 * uses no flag pointers: getopt_long() never returns 0).
 */
#define CLI_SHORTOPTS "hV"
#define CLI_LONGOPTS                                                        \
	{ "help", no_argument, NULL, 'h' },                                 \
	{ "version", no_argument, NULL, 'V' }

/*
 * struct cli - a command, as cli_getopt() and cli_usage() see it.
 * @prog: its name, in messages and in the --version line
 * @help: the start of --help: "Usage: ..." and the options, one
 *	  per line, each text starting at column @column
 * @column: where the option texts of @help start (the -h and -V lines
 *	    are printed to match)
 * @help_end: the rest, after the -h and -V lines (examples, exit status)
 * @shortopts, @longopts: for getopt_long(), with CLI_SHORTOPTS and
 *	     CLI_LONGOPTS among them
 */
struct cli {
	const char *prog;
	const char *help;
	int column;
	const char *help_end;
	const char *shortopts;
	const struct option *longopts;
};

/* cli_usage() - the command's --help on @f. */
void cli_usage(const struct cli *cli, FILE *f);

/*
 * cli_getopt() - the next option of @argc/@argv (getopt_long(), optarg
 * as usual), the shared ones answered here: -h/--help prints the help
 * on stdout, -V/--version the line "PROG VERSION"; an unknown option
 * or one without its value (getopt_long() has said which on stderr)
 * prints the help on stderr.
 * Return: the option, one of the command's own (> 0); 0 at the end of
 * the options (optind is at the first operand); or -1 when the command
 * is to exit now with *@exit_code: XTSFS_EXIT_OK after --help or
 * --version, XTSFS_EXIT_USAGE after bad usage.
 */
int cli_getopt(const struct cli *cli, int argc, char **argv, int *exit_code);

/*
 * cli_expected() - bad operands: "PROG: expected WHAT (see --help)" on
 * stderr. Return: XTSFS_EXIT_USAGE.
 */
int cli_expected(const struct cli *cli, const char *what);

#endif /* XTSFS_TOOLS_CLI_H */
