/* SPDX-License-Identifier: Apache-2.0 */
/*
 * durable.h - making the small files that names depend on durable, in
 * batches.
 *
 * A new directory's dirid file and a long name's sidecar (FORMAT 4) must
 * reach the disk no later than the entries that need them: without its
 * dirid, every name in a directory is lost. An fsync per file made that
 * sure at the cost of two journal commits per mkdir (untar of 1,753
 * directories: ~2 s of 6 on ext4). Instead each such write is noted
 * here, and the whole lower filesystem is synced once (syncfs) for every
 * batch:
 *
 *  - before any fsync or fsyncdir through the mount returns (so a program
 *    that syncs a file also has the names on the path to it), and at
 *    unmount;
 *  - by a background thread, at most @delay_ms after a note, so without
 *    any fsync the window in which a crash could leave entries without
 *    their dirid is about a second, instead of the kernel's writeback
 *    delay (30 s and more).
 */
#ifndef XTSFS_DURABLE_H
#define XTSFS_DURABLE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

/* struct durable - the pending notes of one mount. */
struct durable {
	int fd;                   /* a plain (not O_PATH) descriptor on the
				   * lower filesystem, owned */
	int (*sync)(int fd);      /* syncfs, or a test's stand-in */
	unsigned delay_ms;        /* background sync this long after a note */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	uint64_t noted;           /* notes so far */
	uint64_t synced;          /* notes covered by a successful sync */
	bool stop;
	bool running;             /* the thread was started */
	pthread_t thread;
};

/*
 * durable_start() - set up @d over @fd (taken over: closed by
 * durable_stop) and start the background thread. @sync NULL means
 * syncfs(2). Return: 0 or -errno (then @fd is closed already).
 */
int durable_start(struct durable *d, int fd, int (*sync)(int fd),
		  unsigned delay_ms);

/* durable_note() - one more file that must become durable soon. */
void durable_note(struct durable *d);

/*
 * durable_barrier() - make every file noted before this call durable.
 * Return: 0 (also when nothing was pending, or @d was never started, as
 * on a read-only mount), or the -errno of the sync.
 */
int durable_barrier(struct durable *d);

/* durable_pending() - notes not yet covered by a successful sync (0 if
 * never started). */
uint64_t durable_pending(struct durable *d);

/*
 * durable_stop() - stop the thread, sync what is pending, close the
 * descriptor. Safe on a zeroed or never-started @d.
 * Return: as durable_barrier().
 */
int durable_stop(struct durable *d);

#endif /* XTSFS_DURABLE_H */
