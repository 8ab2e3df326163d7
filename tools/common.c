/* SPDX-License-Identifier: Apache-2.0 */
/*
 * common.c - shared option handling, messages and exit codes (common.h).
 */
#include "common.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cmac.h"
#include "names.h"
#include "secmem.h"
#include "volume.h"
#include "xts.h"

_Static_assert(PASS_MAX <= VOL_PASS_MAX,
	       "vol_unlock() must take every passphrase pass_read() gives");

static int parse_u32(const char *arg, uint32_t min, uint32_t max,
		     uint32_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno || end == arg || *end || v < min || v > max)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

/* see common.h */
void common_init(struct common_opts *o, const char *prog)
{
	memset(o, 0, sizeof(*o));
	o->pass.kind = PASS_AUTO;
	o->unlock_ms = 1000;
	/* No core dump or ptrace of a process that will hold keys. */
	if (secmem_harden_process() != 0)
		fprintf(stderr, "%s: warning: cannot disable core dumps\n",
			prog);
}

/* see common.h */
void hide_arg(char *p, size_t n)
{
	explicit_bzero(p, n);
}

/*
 * The copy of the --extpass command that o->pass.arg points to, for the
 * life of the process (a static, so that leak checkers see it in use).
 */
static char *extpass_copy;

/* see common.h */
int common_opt(struct common_opts *o, int opt, char *arg, const char *prog)
{
	uint32_t v;

	switch (opt) {
	case OPT_PASSFILE:
	case OPT_EXTPASS:
		if (o->pass_given) {
			fprintf(stderr, "%s: give only one of --passfile and "
				"--extpass\n", prog);
			return -1;
		}
		o->pass.kind = opt == OPT_PASSFILE ? PASS_FILE : PASS_EXTPASS;
		o->pass.arg = arg;
		o->pass_given = true;
		if (opt == OPT_EXTPASS) {
			extpass_copy = strdup(arg);
			if (!extpass_copy) {
				fprintf(stderr, "%s: out of memory\n", prog);
				return -1;
			}
			o->pass.arg = extpass_copy;
			hide_arg(arg, strlen(arg));
		}
		return 1;
	case OPT_VOLUME_KEY_FILE:
		o->volume_key_file = arg;
		return 1;
	case OPT_CIPHER:
		o->cipher = arg;
		return 1;
	case OPT_ALLOW_COSTLY_KDF:
		o->allow_costly_kdf = true;
		return 1;
	case OPT_ARGON2_TIME:
		if (parse_u32(arg, 1, KDF_T_MAX, &v))
			goto bad;
		o->kdf.t_cost = v;
		return 1;
	case OPT_ARGON2_MEMORY:
		if (parse_u32(arg, 8, KDF_M_MAX, &v))
			goto bad;
		o->kdf.m_cost_kib = v;
		return 1;
	case OPT_ARGON2_LANES:
		if (parse_u32(arg, 1, KDF_LANES_MAX, &v))
			goto bad;
		o->kdf.lanes = v;
		return 1;
	case OPT_UNLOCK_TIME:
		if (parse_u32(arg, 1, 600000, &v))
			goto bad;
		o->unlock_ms = v;
		return 1;
	default:
		return 0;
	}
bad:
	fprintf(stderr, "%s: invalid value '%s' (see --help for the range)\n",
		prog, arg);
	return -1;
}

/* see common.h */
int common_getopt(const struct cli *cli, struct common_opts *o, int argc,
		  char **argv, int *exit_code)
{
	int opt, rc;

	while ((opt = cli_getopt(cli, argc, argv, exit_code)) > 0) {
		rc = common_opt(o, opt, optarg, cli->prog);
		if (rc < 0) {
			*exit_code = XTSFS_EXIT_USAGE;
			return -1;
		}
		if (rc == 0)
			return opt;
	}
	return opt;
}

/* see common.h */
int common_choose_cipher(const struct common_opts *o, const char *prog,
			 const char **name)
{
	const struct xts_backend *be;

	if (xts_choose(o->cipher, &be) != 0) {
		fprintf(stderr, "%s: %s\n", prog, xts_choose_error());
		return XTSFS_EXIT_CIPHER;
	}
	if (name)
		*name = be->name;
	return 0;
}

/* see common.h */
void warn_secret_file(const char *prog, const char *what, const char *path)
{
	struct stat st;

	if (!path || stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return;
	if (st.st_mode & (S_IRGRP | S_IROTH))
		fprintf(stderr, "%s: warning: %s: this %s file can be read by "
			"%s (mode %04o): chmod go-r it\n", prog, path, what,
			st.st_mode & S_IROTH ? "every user" : "its group",
			(unsigned)(st.st_mode & 07777));
	if (st.st_uid != geteuid() && st.st_uid != 0)
		fprintf(stderr, "%s: warning: %s: this %s file belongs to "
			"another user (uid %u)\n", prog, path, what,
			(unsigned)st.st_uid);
}

/* see common.h */
void common_warn_files(const struct common_opts *o, const char *prog)
{
	if (o->pass.kind == PASS_FILE)
		warn_secret_file(prog, "passphrase", o->pass.arg);
	warn_secret_file(prog, "volume key", o->volume_key_file);
}

/* see common.h */
int common_get_pass(void *arg, char *buf, size_t size, size_t *len,
		    char *err, size_t errlen)
{
	const struct common_pass *cp = arg;
	const struct pass_source autosrc = { .kind = PASS_AUTO };
	char prompt[4200], *pass = NULL;
	size_t passlen = 0;
	int rc;

	snprintf(prompt, sizeof(prompt), "Passphrase for %s: ", cp->dir);
	rc = pass_read(cp->src ? cp->src : &autosrc, prompt, false, &pass,
		       &passlen, err, errlen);
	if (rc)
		return rc;
	if (passlen > size) {
		snprintf(err, errlen, "the passphrase is longer than %zu bytes",
			 size);
		rc = -EMSGSIZE;
	} else {
		memcpy(buf, pass, passlen);
		*len = passlen;
	}
	pass_free(pass);
	return rc;
}

struct try_slot_arg {
	const struct common_opts *o;
	const char *prog;
};

/* vol_unlock() hook: each slot tried costs one Argon2id derivation. */
static void show_try_slot(void *arg, int slot, const struct kdf_params *kdf)
{
	const struct try_slot_arg *t = arg;

	progress_kdf(t->o, t->prog, "trying", slot, kdf);
}

/*
 * unlock() - common_unlock() and common_unlock_backup(): @dfd >= 0
 * unlocks the cipher directory, else the header backup at @dir.
 */
static int unlock(const struct common_opts *o, const char *prog, int dfd,
		  const char *dir, int slot, struct vol *v)
{
	struct common_pass cpass = {
		.src = o->pass_given ? &o->pass : NULL,
		.dir = dir,
	};
	struct try_slot_arg t = { o, prog };
	struct vol_unlock_req req = {
		.get_pass = common_get_pass,
		.get_pass_arg = &cpass,
		.volume_key_file = o->volume_key_file,
		.slot = o->volume_key_file ? -1 : slot,
		.allow_costly_kdf = o->allow_costly_kdf,
		.on_try_slot = show_try_slot,
		.on_try_slot_arg = &t,
	};
	char err[1024];
	int rc;

	rc = dfd >= 0 ? vol_unlock(dfd, dir, &req, v, err, sizeof(err)) :
	     vol_unlock_backup(dir, &req, v, err, sizeof(err));
	progress_done();
	if (rc)
		fprintf(stderr, "%s: %s\n", prog, err);
	return rc ? exit_code_for(rc) : 0;
}

/* see common.h */
int common_unlock_backup(const struct common_opts *o, const char *prog,
			 const char *path, int slot, struct vol *v)
{
	return unlock(o, prog, -1, path, slot, v);
}

/* see common.h */
int common_unlock(const struct common_opts *o, const char *prog, int dfd,
		  const char *dir, int slot, struct vol *v)
{
	int rc = unlock(o, prog, dfd, dir, slot, v);

	if (rc)
		return rc;
	if (v->info.headerless)
		fprintf(stderr, "%s: warning: %s has %s; opened with the volume "
			"key alone, as its text describes the volume (%s "
			"names). Write a new header: xtsfs-passwd --repair "
			"--volume-key-file %s %s\n", prog, dir,
			v->info.header_err == -ENOENT ? "no volume header" :
			"a volume header corrupt in both copies",
			v->hdr.flags & VOL_FLAG_PLAINTEXT_NAMES ? "plaintext" :
			"encrypted", o->volume_key_file, dir);
	else if (!v->info.copy_ok[0] && v->info.copy_ok[1])
		fprintf(stderr, "%s: warning: %s/%s: the primary header copy "
			"is damaged; the secondary was used (xtsfs-passwd "
			"--repair rewrites both)\n", prog, dir,
			vol_file_name(&v->hdr));
	return 0;
}

/* see common.h */
int exit_code_for(int err)
{
	switch (err) {
	case 0:
		return XTSFS_EXIT_OK;
	case -ENOENT:
		return XTSFS_EXIT_NOVOLUME;
	case -EBADMSG:
	case -EPROTONOSUPPORT:
	case -EINVAL:
	case -EKEYREJECTED:
	/*
	 * Every key slot asks for more Argon2id than this machine pays
	 * before the header is authenticated: like an unsupported feature,
	 * the header asks for something we refuse (not a wrong passphrase:
	 * none was read). --allow-costly-kdf overrides.
	 */
	case -E2BIG:
		return XTSFS_EXIT_CORRUPT;
	case -EACCES:
		return XTSFS_EXIT_PASSPHRASE;
	case -ENOKEY:
		return XTSFS_EXIT_NOPASS;
	default:
		return XTSFS_EXIT_FAILURE;
	}
}

/* The open progress line: its start time in ms, or < 0 for none. */
static double progress_t0 = -1;

/* see common.h */
double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* see common.h */
void progress_start(const struct common_opts *o, const char *fmt, ...)
{
	va_list ap;

	progress_done();
	if (o->quiet || !isatty(STDERR_FILENO))
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("...", stderr);
	fflush(stderr);
	progress_t0 = now_ms();
}

/* see common.h */
void progress_done(void)
{
	if (progress_t0 < 0)
		return;
	fprintf(stderr, " %.1f s\n", (now_ms() - progress_t0) / 1e3);
	progress_t0 = -1;
}

/* see common.h */
void progress_kdf(const struct common_opts *o, const char *prog,
		  const char *verb, int slot, const struct kdf_params *kdf)
{
	bool mib = kdf->m_cost_kib >= 1024;

	progress_start(o, "%s: %s key slot %d (Argon2id, %u %s, %u iteration%s)",
		       prog, verb, slot, mib ? kdf->m_cost_kib / 1024 :
		       kdf->m_cost_kib, mib ? "MiB" : "KiB", kdf->t_cost,
		       kdf->t_cost == 1 ? "" : "s");
}

/* see common.h */
int common_make_keys(const struct vol *v, const struct xts_backend *be,
		     struct xts_ctx **xts, struct names_ctx **names)
{
	int rc = xts_ctx_new(xts, be, v->keys->contents);

	return rc ? rc : names_ctx_new(names, v->keys->names);
}

/* see common.h */
struct aes_cmac_key *common_idkey_new(const struct vol *v)
{
	struct aes_cmac_key *k = secmem_alloc(sizeof(*k));

	if (k)
		aes_cmac_setkey(k, v->keys->header);
	return k;
}

/* see common.h */
void common_idkey_free(struct aes_cmac_key *k)
{
	if (k)
		aes_cmac_wipe(k);
	secmem_free(k);
}

/* see common.h */
int open_cipherdir(const char *prog, const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
	return fd;
}
