/* SPDX-License-Identifier: Apache-2.0 */
/*
 * exitcodes.h - the exit codes every xtsfs command uses, one table for
 * all of them (documented in README.md and in each man page). Scripts
 * may rely on these values: never renumber, only add.
 */
#ifndef XTSFS_EXITCODES_H
#define XTSFS_EXITCODES_H

enum xtsfs_exit {
	XTSFS_EXIT_OK = 0,          /* success */
	XTSFS_EXIT_FAILURE = 1,     /* other failure: I/O error, out of memory */
	XTSFS_EXIT_USAGE = 2,       /* bad command line */
	XTSFS_EXIT_CIPHER = 3,      /* cipher core unknown, unavailable on this
				     * CPU, or failed its self-test */
	XTSFS_EXIT_PASSPHRASE = 4,  /* wrong passphrase or volume key */
	XTSFS_EXIT_NOVOLUME = 5,    /* no volume header in the directory */
	XTSFS_EXIT_CORRUPT = 6,     /* header corrupt (every copy) or of an
				     * unsupported version or feature */
	XTSFS_EXIT_EXISTS = 7,      /* mkfs: directory not empty or already
				     * holds a volume */
	XTSFS_EXIT_NOPASS = 8,      /* no usable passphrase: empty, entries
				     * differ, source unreadable */
	XTSFS_EXIT_MOUNT = 9,       /* mount point unusable or mount failed */
};

#endif /* XTSFS_EXITCODES_H */
