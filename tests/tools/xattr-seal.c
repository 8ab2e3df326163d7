/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xattr-seal: store an extended attribute on a lower object exactly as
 * the mount will (src/fs/xattr.c, FORMAT.md section 6), for tests that
 * check the format before the FUSE handlers exist (40-format.bats feeds
 * the result to xtsfs-decrypt-ref, which is written from FORMAT.md).
 *
 *   xattr-seal KEYFILE PATH NAME VALUE   encrypt NAME=VALUE onto PATH
 *                                        (not followed if a symlink)
 *   xattr-seal KEYFILE --name NAME       print NAME's stored name
 *
 * KEYFILE holds the raw volume key (xtsfs-mkfs --print-volume-key).
 * VALUE is taken as it is, or as hex after "0x". Exit 0, 1 on failure,
 * 2 on bad usage.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>

#include "names.h"
#include "secmem.h"
#include "volume.h"
#include "xattr.h"

static uint8_t val[XTSFS_XATTR_KERNEL_SIZE_MAX];
static uint8_t stored[XTSFS_XATTR_KERNEL_SIZE_MAX];

/* VALUE as bytes into val; its length, or -1 */
static long parse_value(const char *s)
{
	size_t n = strlen(s);

	if (strncmp(s, "0x", 2)) {
		if (n > sizeof(val))
			return -1;
		memcpy(val, s, n);
		return (long)n;
	}
	s += 2;
	n -= 2;
	if (n % 2 || n / 2 > sizeof(val))
		return -1;
	for (size_t i = 0; i < n / 2; i++) {
		int hi = vol_hexval(s[2 * i]), lo = vol_hexval(s[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -1;
		val[i] = (uint8_t)(hi << 4 | lo);
	}
	return (long)(n / 2);
}

/* the names context of the volume key in @path */
static struct names_ctx *load_key(const char *path)
{
	char text[4 * VOL_KEY_TEXT_SIZE];
	struct names_ctx *ctx = NULL;
	struct vol_keys *k;
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f) {
		perror(path);
		return NULL;
	}
	n = fread(text, 1, sizeof(text), f);
	fclose(f);
	k = secmem_alloc(sizeof(*k));
	if (!k || vol_key_parse(k, NULL, text, n) || names_ctx_new(&ctx, k->names)) {
		fprintf(stderr, "%s: not a usable volume key\n", path);
		ctx = NULL;
	}
	explicit_bzero(text, sizeof(text));
	if (k)
		secmem_free(k);
	return ctx;
}

int main(int argc, char **argv)
{
	char lower[XTSFS_XATTR_NAME_BUF];
	struct names_ctx *ctx;
	ssize_t sn;
	long vn;
	int rc;

	if (argc != 5 && !(argc == 4 && !strcmp(argv[2], "--name"))) {
		fprintf(stderr,
			"usage: %s KEYFILE PATH NAME VALUE\n"
			"       %s KEYFILE --name NAME\n",
			argv[0], argv[0]);
		return 2;
	}
	ctx = load_key(argv[1]);
	if (!ctx)
		return 1;
	rc = xattr_name_enc(ctx, argv[3], lower);
	if (rc) {
		fprintf(stderr, "%s: %s\n", argv[3], strerror(-rc));
		goto fail;
	}
	if (argc == 4) {
		puts(lower);
		names_ctx_free(ctx);
		return 0;
	}
	vn = parse_value(argv[4]);
	if (vn < 0) {
		fprintf(stderr, "bad value\n");
		goto fail;
	}
	sn = xattr_value_enc(ctx, lower, val, (size_t)vn, stored,
			     sizeof(stored));
	if (sn < 0) {
		fprintf(stderr, "%s: %s\n", argv[3], strerror((int)-sn));
		goto fail;
	}
	if (lsetxattr(argv[2], lower, stored, (size_t)sn, 0)) {
		fprintf(stderr, "%s: setxattr %s: %s\n", argv[2], lower,
			strerror(errno));
		goto fail;
	}
	names_ctx_free(ctx);
	return 0;
fail:
	names_ctx_free(ctx);
	return 1;
}
