/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_durable.c - batched syncs (durable.c): nothing to sync means no
 * sync; a barrier covers every earlier note with one sync; a failed sync
 * leaves the notes pending and reports the error; the background thread
 * syncs a burst of notes by itself (waited for, not timed); stop syncs
 * what is left and closes the descriptor; and the real syncfs works on a
 * plain descriptor.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <unistd.h>

#include "durable.h"
#include "testutil.h"

static atomic_int syncs;
static atomic_int fail_with; /* -errno the stand-in returns, 0 = success */

static int fake_sync(int fd)
{
	(void)fd;
	atomic_fetch_add(&syncs, 1);
	return atomic_load(&fail_with);
}

static int open_dir(void)
{
	return open("/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

/* A delay long enough that the thread never fires during the test. */
#define NEVER_MS 600000

static void barrier_semantics(void)
{
	struct durable d;
	int fd = open_dir();

	CHECK(durable_start(&d, fd, fake_sync, NEVER_MS) == 0, "start");
	CHECK(durable_barrier(&d) == 0 && syncs == 0, "nothing pending: "
	      "%d syncs", syncs);

	for (int i = 0; i < 5; i++)
		durable_note(&d);
	CHECK(durable_pending(&d) == 5, "5 pending");
	CHECK(durable_barrier(&d) == 0, "barrier");
	CHECK(syncs == 1, "one sync for five notes, got %d", syncs);
	CHECK(durable_pending(&d) == 0, "none pending after the barrier");
	CHECK(durable_barrier(&d) == 0 && syncs == 1, "a second barrier "
	      "with nothing new does not sync (%d)", syncs);

	/* a failing sync: reported, and the note stays pending */
	durable_note(&d);
	atomic_store(&fail_with, -EIO);
	CHECK(durable_barrier(&d) == -EIO, "EIO passed on");
	CHECK(durable_pending(&d) == 1, "still pending after a failure");
	atomic_store(&fail_with, 0);
	CHECK(durable_barrier(&d) == 0 && durable_pending(&d) == 0,
	      "retried and covered");

	/* stop syncs what is left and closes the descriptor */
	durable_note(&d);
	syncs = 0;
	CHECK(durable_stop(&d) == 0, "stop");
	CHECK(syncs == 1, "stop synced the pending note (%d)", syncs);
	CHECK(fcntl(fd, F_GETFD) == -1 && errno == EBADF,
	      "descriptor closed by stop");
	CHECK(durable_stop(&d) == 0, "a second stop is harmless");
}

static void background_thread(void)
{
	struct durable d;
	int waited;

	syncs = 0;
	CHECK(durable_start(&d, open_dir(), fake_sync, 10) == 0, "start");
	for (int i = 0; i < 100; i++)
		durable_note(&d);
	/* wait for the thread (up to 30 s; it should take ~10 ms) */
	for (waited = 0; durable_pending(&d) && waited < 3000; waited++)
		usleep(10000);
	CHECK(durable_pending(&d) == 0, "the thread synced by itself");
	CHECK(syncs >= 1 && syncs <= 100, "%d syncs for a burst of 100",
	      syncs);
	CHECK(durable_stop(&d) == 0, "stop");
}

static void zeroed_and_real(void)
{
	struct durable z = { .fd = -1 };
	struct durable d;

	/* never started (a read-only mount): everything does nothing */
	durable_note(&z);
	CHECK(durable_pending(&z) == 0, "nothing pending");
	CHECK(durable_barrier(&z) == 0, "barrier of a never-started one");
	CHECK(durable_stop(&z) == 0, "stop of a never-started one");

	CHECK(durable_start(&d, open_dir(), NULL, NEVER_MS) == 0, "start");
	durable_note(&d);
	CHECK(durable_barrier(&d) == 0, "syncfs(2) on /tmp");
	CHECK(durable_stop(&d) == 0, "stop");
}

int main(void)
{
	barrier_semantics();
	background_thread();
	zeroed_and_real();
	return test_failures ? 1 : 0;
}
