/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_wbguard.c - the writeback guard (wbguard.c): its sizes for small
 * and large filesystems and dirty limits, the modes, the largest global
 * dirty limit (bdi.c), and a real reserve file in a temporary directory:
 * made whole, used in pieces (refusing from the first), refilled, used
 * up, closed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bdi.h"
#include "testutil.h"
#include "wbguard.h"

#define KiB 1024ull
#define MiB (1024ull * KiB)
#define GiB (1024ull * MiB)

static void test_plan(void)
{
	struct wbguard_plan p;
	uint64_t limit = 4800 * MiB; /* 20 % of 24 GiB */

	CHECK(wbguard_plan(4 * MiB, 0, &p) == -EINVAL, "no dirty limit");

	/* a 4 MiB filesystem: the smallest bound, rounded up to a ppm */
	CHECK_OK(wbguard_plan(4 * MiB, limit, &p));
	CHECK(p.dirty_max >= WBGUARD_DIRTY_MIN, "dirty %llu",
	      (unsigned long long)p.dirty_max);
	CHECK(p.dirty_max < WBGUARD_DIRTY_MIN + limit / 1000000 + 1,
	      "dirty %llu", (unsigned long long)p.dirty_max);
	CHECK(p.dirty_ppm == ((uint64_t)WBGUARD_DIRTY_MIN * 1000000 + limit - 1) / limit,
	      "ppm %u", p.dirty_ppm);
	/* the reserve covers two lower blocks per dirty page, and more */
	CHECK(p.reserve >= p.dirty_max * 5 / 2, "reserve %llu",
	      (unsigned long long)p.reserve);
	CHECK(p.reserve % (64 * KiB) == 0, "reserve %llu",
	      (unsigned long long)p.reserve);
	CHECK(p.low == p.reserve, "low %llu", (unsigned long long)p.low);

	/* 1 GiB: 1/64 of it */
	CHECK_OK(wbguard_plan(GiB, limit, &p));
	CHECK(p.dirty_max >= 16 * MiB && p.dirty_max < 16 * MiB + 8 * KiB,
	      "dirty %llu", (unsigned long long)p.dirty_max);

	/* a large filesystem: the largest bound */
	CHECK_OK(wbguard_plan(1000 * GiB, limit, &p));
	CHECK(p.dirty_max >= WBGUARD_DIRTY_MAX &&
	      p.dirty_max < WBGUARD_DIRTY_MAX + 8 * KiB, "dirty %llu",
	      (unsigned long long)p.dirty_max);

	/* a tiny dirty limit: at least 1 ppm, at most all of it */
	CHECK_OK(wbguard_plan(GiB, 1000, &p));
	CHECK(p.dirty_ppm == 1000000 && p.dirty_max == 1000, "ppm %u max %llu",
	      p.dirty_ppm, (unsigned long long)p.dirty_max);
	/* a huge one: whole ppm give more than asked, and the plan says so */
	CHECK_OK(wbguard_plan(4 * MiB, 1000000 * GiB, &p));
	CHECK(p.dirty_ppm == 1 && p.dirty_max == GiB, "ppm %u max %llu",
	      p.dirty_ppm, (unsigned long long)p.dirty_max);
	CHECK(p.reserve >= p.dirty_max * 5 / 2, "reserve %llu",
	      (unsigned long long)p.reserve);
}

static void test_modes(void)
{
	struct wbguard_plan p = { .reserve = 640 * KiB, .low = 640 * KiB };

	CHECK(wbguard_mode_of(&p, 10 * MiB, 640 * KiB) == WBG_NORMAL, "normal");
	CHECK(wbguard_mode_of(&p, 640 * KiB, 640 * KiB) == WBG_NORMAL,
	      "at the mark");
	CHECK(wbguard_mode_of(&p, 100 * KiB, 640 * KiB) == WBG_LOW, "low");
	CHECK(wbguard_mode_of(&p, 0, 640 * KiB) == WBG_LOW, "full, reserve");
	/* a reserve not whole refuses, however much is free */
	CHECK(wbguard_mode_of(&p, 10 * MiB, 576 * KiB) == WBG_REFUSING,
	      "dipped");
	CHECK(wbguard_mode_of(&p, 0, 0) == WBG_REFUSING, "used up");
}

static void test_limit(void)
{
	uint64_t b = 0;

	CHECK(bdi_limit_from(64 * MiB, 20, 24 * GiB) == 64 * MiB, "bytes");
	CHECK(bdi_limit_from(0, 20, 1000 * MiB) == 200 * MiB, "ratio");
	CHECK(bdi_limit_from(0, 0, GiB) == 0, "none");
	/* this machine's: some memory, some ratio */
	CHECK_OK(bdi_limit_max(&b));
	CHECK(b > 0, "limit %llu", (unsigned long long)b);
}

/* Bytes allocated to the reserve file of @g. */
static uint64_t allocated(const struct wbguard *g)
{
	struct stat st;

	return fstat(g->fd, &st) == 0 ? (uint64_t)st.st_blocks * 512 : 0;
}

static void test_reserve(void)
{
	char dir[] = "/tmp/xtsfs-wbguard.XXXXXX";
	struct wbguard g = { 0 };
	bool entered = true;
	int fd, err, i;

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		test_failures++;
		return;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(fd >= 0, "open %s", dir);
	err = wbguard_start(&g, fd, 4800 * MiB);
	if (err == -EOPNOTSUPP) {
		printf("no O_TMPFILE or fallocate in /tmp: reserve not tested\n");
		rmdir(dir);
		return;
	}
	CHECK(err == 0, "start: %d", err);
	if (err) {
		rmdir(dir);
		return;
	}
	/* whole, unnamed (the directory stays empty), normal */
	CHECK(g.reserved >= g.plan.reserve, "reserved %llu of %llu",
	      (unsigned long long)g.reserved,
	      (unsigned long long)g.plan.reserve);
	CHECK(allocated(&g) == g.reserved, "allocated %llu",
	      (unsigned long long)allocated(&g));
	CHECK(rmdir(dir) == 0, "the directory is empty: %s", strerror(errno));
	CHECK(wbguard_check(&g, &entered) == WBG_NORMAL && !entered, "normal");

	/* a written-back write finds no space: the first dip refuses */
	CHECK_OK(wbguard_dip(&g, 100 * KiB, &entered));
	CHECK(entered, "entered refusing");
	CHECK(atomic_load(&g.mode) == WBG_REFUSING, "refusing");
	CHECK(g.reserved <= g.plan.reserve - 100 * KiB &&
	      g.reserved >= g.plan.reserve - 104 * KiB, "reserved %llu",
	      (unsigned long long)g.reserved);
	CHECK_OK(wbguard_dip(&g, 1, &entered));
	CHECK(!entered, "already refusing");
	CHECK(g.dips == 2, "dips %llu", g.dips);

	/* space is there (a big /tmp): the reserve fills up, refusing ends */
	CHECK(wbguard_check(&g, &entered) == WBG_NORMAL && !entered,
	      "refilled");
	CHECK(g.reserved >= g.plan.reserve, "reserved %llu",
	      (unsigned long long)g.reserved);

	/* used up in pieces: then -ENOSPC, and nothing is left */
	for (i = 0; i < 1000 && wbguard_dip(&g, 256 * KiB, &entered) == 0; i++)
		;
	CHECK(i > 0 && i < 1000, "dips until empty: %d", i);
	CHECK(g.reserved == 0 && allocated(&g) == 0, "left %llu",
	      (unsigned long long)g.reserved);
	CHECK(wbguard_dip(&g, 1, &entered) == -ENOSPC, "empty");
	wbguard_lost(&g);
	CHECK(g.lost == 1, "lost %llu", g.lost);

	/* given up: nothing held, normal */
	CHECK(wbguard_check(&g, &entered) == WBG_NORMAL, "refilled again");
	wbguard_disable(&g);
	CHECK(atomic_load(&g.off) && g.reserved == 0 && allocated(&g) == 0,
	      "disabled");
	wbguard_stop(&g);
	CHECK(g.fd == -1 && g.dirfd == -1, "closed");
}

int main(void)
{
	test_plan();
	test_modes();
	test_limit();
	test_reserve();
	if (test_failures)
		fprintf(stderr, "%d failure(s)\n", test_failures);
	return test_failures ? 1 : 0;
}
