/* SPDX-License-Identifier: Apache-2.0 */
/*
 * crash_rename.c - an LD_PRELOAD shim for the crash tests of
 * 10-volume.bats, which builds it with cc. It kills the process with
 * SIGKILL around the rename that replaces a volume header, as a power
 * cut would:
 *   XTSFS_TEST_CRASH=tmp-written  just before renameat() onto
 *                                 xtsfs.volume (the temp file is written
 *                                 and fsynced),
 *   XTSFS_TEST_CRASH=renamed      just after it succeeded (before the
 *                                 directory fsync).
 * It lives here rather than as a hook in vol_write(), so that no binary
 * xtsfs builds or installs can be made to kill itself by an environment
 * variable. If vol_write() ever stops calling renameat(), the crash tests
 * see exit 0 instead of 137 and fail.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool crash_at(const char *where, const char *newpath)
{
	const char *want = getenv("XTSFS_TEST_CRASH");
	const char *base = strrchr(newpath, '/');

	return want && !strcmp(want, where) &&
	       !strcmp(base ? base + 1 : newpath, "xtsfs.volume");
}

int renameat(int olddirfd, const char *oldpath, int newdirfd,
	     const char *newpath)
{
	int (*real)(int, const char *, int, const char *);
	int rc;

	*(void **)&real = dlsym(RTLD_NEXT, "renameat");
	if (!real)
		abort();
	if (crash_at("tmp-written", newpath))
		raise(SIGKILL);
	rc = real(olddirfd, oldpath, newdirfd, newpath);
	if (rc == 0 && crash_at("renamed", newpath))
		raise(SIGKILL);
	return rc;
}
