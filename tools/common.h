/* SPDX-License-Identifier: Apache-2.0 */
/*
 * common.h - what every xtsfs command shares: the passphrase-source
 * options, the cipher-core option, messages and exit codes.
 */
#ifndef XTSFS_TOOLS_COMMON_H
#define XTSFS_TOOLS_COMMON_H

#include <stdbool.h>
#include <stdio.h>

#include "cli.h"
#include "exitcodes.h"
#include "kdf.h"
#include "passphrase.h"

/* Options every command that reads a passphrase accepts. */
struct common_opts {
	struct pass_source pass;       /* --passfile / --extpass / auto */
	bool pass_given;               /* one of them was on the command line */
	const char *volume_key_file;   /* --volume-key-file */
	const char *cipher;            /* --cipher, or NULL (XTSFS_CIPHER/auto) */
	struct kdf_params kdf;         /* --argon2-*; 0 = calibrate */
	unsigned int unlock_ms;        /* --unlock-time, default 1000 */
	bool quiet;                    /* --quiet */
	bool allow_costly_kdf;         /* --allow-costly-kdf */
};

/* Long-option ids shared by the tools (above any short option char). */
enum {
	OPT_PASSFILE = 256,
	OPT_EXTPASS,
	OPT_VOLUME_KEY_FILE,
	OPT_CIPHER,
	OPT_ARGON2_TIME,
	OPT_ARGON2_MEMORY,
	OPT_ARGON2_LANES,
	OPT_UNLOCK_TIME,
	OPT_ALLOW_COSTLY_KDF,
	OPT_TOOL_BASE, /* first id free for a tool's own options */
};

#define COMMON_PASS_LONGOPTS                                                \
	{ "passfile", required_argument, NULL, OPT_PASSFILE },              \
	{ "extpass", required_argument, NULL, OPT_EXTPASS },                \
	{ "volume-key-file", required_argument, NULL, OPT_VOLUME_KEY_FILE }, \
	{ "cipher", required_argument, NULL, OPT_CIPHER }

/* For the commands that unlock a volume (vol_unlock). */
#define COMMON_UNLOCK_LONGOPTS                                              \
	{ "allow-costly-kdf", no_argument, NULL, OPT_ALLOW_COSTLY_KDF }

#define COMMON_KDF_LONGOPTS                                                 \
	{ "argon2-time", required_argument, NULL, OPT_ARGON2_TIME },        \
	{ "argon2-memory", required_argument, NULL, OPT_ARGON2_MEMORY },    \
	{ "argon2-lanes", required_argument, NULL, OPT_ARGON2_LANES },      \
	{ "unlock-time", required_argument, NULL, OPT_UNLOCK_TIME }

/* The help text for the options above. */
#define COMMON_PASS_HELP                                                    \
"Passphrase (never on the command line):\n"                                 \
"      --passfile=FILE     read it from the first line of FILE\n"           \
"      --extpass=CMD       run CMD (with /bin/sh) and read its first line\n" \
"                          of output, e.g. --extpass='systemd-ask-password x'\n" \
"                          default: the terminal without echo, or stdin if\n" \
"                          it is not a terminal\n"                          \
"      --volume-key-file=FILE  use the raw volume key saved from\n"         \
"                          xtsfs-mkfs --print-volume-key instead\n"         \
"      --cipher=CORE       cipher core: auto, zmm, vaes, aesni or software\n"    \
"                          (default: XTSFS_CIPHER, else auto)\n"

#define COMMON_UNLOCK_HELP                                                  \
"      --allow-costly-kdf  try key slots whose Argon2id cost is far above\n" \
"                          what this machine can pay (the header's costs\n" \
"                          are not authenticated before unlock: whoever\n" \
"                          can write the cipher directory can set them);\n" \
"                          by default they are skipped\n"

#define COMMON_KDF_HELP                                                     \
"Argon2id cost of a new key slot (calibrated to --unlock-time unless both\n" \
"--argon2-time and --argon2-memory are given):\n"                           \
"      --argon2-time=N     iterations (1..1000)\n"                          \
"      --argon2-memory=KiB memory in KiB (default: up to 1 GiB, at least\n" \
"                          64 MiB when calibrated)\n"                       \
"      --argon2-lanes=N    parallelism (1..16, default min(4, CPUs))\n"     \
"      --unlock-time=MS    target unlock time on this machine (default 1000)\n"

/* Where the option texts of COMMON_*_HELP start (struct cli.column). */
#define COMMON_HELP_COLUMN 26

/*
 * common_getopt() - cli_getopt(), and the shared options of @o handled
 * here too (common_opt()); a bad value of one is bad usage.
 * Return: as cli_getopt().
 */
int common_getopt(const struct cli *cli, struct common_opts *o, int argc,
		  char **argv, int *exit_code);

/*
 * common_opt() - handle @opt if it is a shared option. @arg is optarg,
 * inside argv: the command of --extpass is copied and then wiped there
 * (hide_arg()).
 * Return: 1 handled, 0 not a shared option, -1 bad value (message printed).
 */
int common_opt(struct common_opts *o, int opt, char *arg, const char *prog);

/*
 * hide_arg() - overwrite the @n bytes at @p, part of a command-line
 * argument that has been copied, with NULs: /proc/PID/cmdline (ps, top)
 * shows argv's memory as it is now, for as long as the process lives,
 * to every user, and an --extpass command may hold a secret (a token, a
 * key file's name). ps then shows blanks in its place.
 */
void hide_arg(char *p, size_t n);

/* common_init() - defaults; also hardens the process (no core dumps). */
void common_init(struct common_opts *o, const char *prog);

/*
 * common_choose_cipher() - pick and self-test the cipher core; prints the
 * error and returns XTSFS_EXIT_CIPHER on failure, else 0.
 */
int common_choose_cipher(const struct common_opts *o, const char *prog,
			 const char **name);

/*
 * warn_secret_file() - a warning on stderr, as ssh gives for a key, when
 * the regular file @path, which holds @what ("passphrase", "volume
 * key"), can be read by its group or by others, or belongs to a user
 * other than us and root (who could change it, or its mode, at will).
 * Not an error: the file is still read. Nothing for a pipe or a device
 * (/dev/stdin, <(cmd)) or a path that cannot be stat()ed (the reader
 * says why).
 */
void warn_secret_file(const char *prog, const char *what, const char *path);

/* common_warn_files() - warn_secret_file() for @o's passfile and key file. */
void common_warn_files(const struct common_opts *o, const char *prog);

/*
 * struct common_pass - the get_pass_arg of common_get_pass().
 * @src: where the passphrase comes from; NULL means PASS_AUTO
 * @dir: the cipher directory, named in the terminal prompt
 */
struct common_pass {
	const struct pass_source *src;
	const char *dir;
};

/*
 * common_get_pass() - vol_unlock_req.get_pass for the tools: pass_read()
 * from @arg (a struct common_pass) with the prompt "Passphrase for DIR: ",
 * no confirmation, copied into @buf and wiped. @err gets pass_read()'s
 * reason.
 * Return: 0, or pass_read()'s -errno (-EMSGSIZE if over @size bytes).
 */
int common_get_pass(void *arg, char *buf, size_t size, size_t *len,
		    char *err, size_t errlen);

/*
 * common_unlock() - vol_unlock() as every command does it: the
 * passphrase from @o's source (or the terminal, or stdin), @o's volume
 * key file and cost rule, progress on a terminal for each key slot
 * tried. Prints the reason on failure, and a warning when the primary
 * header copy is damaged.
 * @dfd:  the cipher directory, @dir its name for messages
 * @slot: try only this key slot, or -1 for any
 * Return: 0 with @v unlocked (vol_close() it), else the exit code.
 */
struct vol;
int common_unlock(const struct common_opts *o, const char *prog, int dfd,
		  const char *dir, int slot, struct vol *v);

/*
 * common_unlock_backup() - common_unlock() of the header backup file at
 * @path (FORMAT.md 2.7) rather than of a cipher directory.
 */
int common_unlock_backup(const struct common_opts *o, const char *prog,
			 const char *path, int slot, struct vol *v);

/*
 * common_make_keys() - the contents key (for core @be) and the names key
 * of unlocked @v, in locked memory: *@xts, *@names (free them with
 * xts_ctx_free() and names_ctx_free(), also after a failure). The names
 * key is made on plaintext-names volumes too: xattr names are encrypted
 * even where entry names are not.
 * Return: 0 or -errno.
 */
struct xts_backend;
struct xts_ctx;
struct names_ctx;
int common_make_keys(const struct vol *v, const struct xts_backend *be,
		     struct xts_ctx **xts, struct names_ctx **names);

/*
 * common_idkey_new() - the header key of unlocked @v as a CMAC key in
 * locked memory, for derived dirids (FORMAT 4.2, 5.2); NULL out of
 * locked memory. common_idkey_free() wipes and frees it (NULL is fine).
 */
struct aes_cmac_key;
struct aes_cmac_key *common_idkey_new(const struct vol *v);
void common_idkey_free(struct aes_cmac_key *k);

/* exit_code_for() - the exit code for a -errno from the volume layer. */
int exit_code_for(int err);

/*
 * progress_start() - on a terminal, unless --quiet: print "PROG: <what>..."
 * to stderr, without a newline, for a step that takes a while (Argon2id).
 * An unfinished line is finished first. Not a terminal: nothing at all,
 * so scripts and logs see only results and errors.
 */
void progress_start(const struct common_opts *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* now_ms() - CLOCK_MONOTONIC in milliseconds. */
double now_ms(void);

/* progress_done() - finish the line of progress_start(): " 1.2 s". */
void progress_done(void);

/*
 * progress_kdf() - progress_start() for one Argon2id derivation with @kdf
 * on key slot @slot: "PROG: <verb> key slot N (Argon2id, 64 MiB, 3
 * iterations)...". @verb: "trying" (unlock) or "making" (a new slot).
 */
void progress_kdf(const struct common_opts *o, const char *prog,
		  const char *verb, int slot, const struct kdf_params *kdf);

/*
 * open_cipherdir() - open @path as a directory (O_DIRECTORY|O_PATH is not
 * enough: we fsync it). Prints "prog: path: reason" on failure.
 * Return: fd or -1.
 */
int open_cipherdir(const char *prog, const char *path);

#endif /* XTSFS_TOOLS_COMMON_H */
