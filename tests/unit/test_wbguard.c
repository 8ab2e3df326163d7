/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_wbguard.c - the writeback guard (wbguard.c): its sizes for small
 * and large filesystems and dirty limits, the modes, what each writer
 * adds, the largest global dirty limit (bdi.c), and a real reserve file
 * in a temporary directory: made whole, grown for writers and for a
 * higher rate and given back after them, used in pieces (refusing from
 * the first), refilled, used up, closed.
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
	uint64_t t = 640 * KiB;

	CHECK(wbguard_mode_of(&p, 10 * MiB, 640 * KiB, t) == WBG_NORMAL,
	      "normal");
	CHECK(wbguard_mode_of(&p, 640 * KiB, 640 * KiB, t) == WBG_NORMAL,
	      "at the mark");
	CHECK(wbguard_mode_of(&p, 100 * KiB, 640 * KiB, t) == WBG_LOW, "low");
	CHECK(wbguard_mode_of(&p, 0, 640 * KiB, t) == WBG_LOW, "full, reserve");
	/* a reserve short of its target refuses, however much is free */
	CHECK(wbguard_mode_of(&p, 10 * MiB, 576 * KiB, t) == WBG_REFUSING,
	      "dipped");
	CHECK(wbguard_mode_of(&p, 0, 0, t) == WBG_REFUSING, "used up");
	CHECK(wbguard_mode_of(&p, 10 * MiB, 2 * MiB, 3 * MiB) == WBG_REFUSING,
	      "a writer's share missing");
}

static void test_target(void)
{
	struct wbguard_plan p;

	/*
	 * 4800 MiB of global limit, 1,228,800 pages: the kernel looks at a
	 * task every 2^(20 / 2) pages in free run, 4 MiB
	 */
	CHECK_OK(wbguard_plan(4 * MiB, 4800 * MiB, &p));
	CHECK(p.poll == 4 * MiB, "poll %llu", (unsigned long long)p.poll);
	CHECK(wbguard_overshoot(&p, 0) == 4 * MiB, "no rate yet");
	/* a fast mount: 10 ms of its rate, in 64 KiB */
	CHECK(wbguard_overshoot(&p, 1000 * MiB) == 10240 * KiB,
	      "1000 MiB/s: %llu",
	      (unsigned long long)wbguard_overshoot(&p, 1000 * MiB));
	CHECK(wbguard_overshoot(&p, 1000 * MiB + 1) % (64 * KiB) == 0,
	      "rounded");
	/* no writer: the base; each writer two blocks per page of its share */
	CHECK(wbguard_target(&p, 0, 0) == p.reserve, "base");
	CHECK(wbguard_target(&p, 1, 0) == p.reserve + 8 * MiB, "one writer");
	CHECK(wbguard_target(&p, 3, 1000 * MiB) == p.reserve + 60 * MiB,
	      "three writers, 1000 MiB/s");
	/* 3 pages odd: 2^(ilog2(3) / 2) = 1 page; 64 MiB: 2^(14 / 2) */
	CHECK_OK(wbguard_plan(4 * MiB, 3 * 4096, &p));
	CHECK(p.poll == 4096, "poll %llu", (unsigned long long)p.poll);
	CHECK_OK(wbguard_plan(4 * MiB, 64 * MiB, &p));
	CHECK(p.poll == 512 * KiB, "poll %llu", (unsigned long long)p.poll);
	/* then the kernel's first rate rules: 10 ms of 100 MiB/s */
	CHECK(wbguard_overshoot(&p, 0) == 1024 * KiB, "floor %llu",
	      (unsigned long long)wbguard_overshoot(&p, 0));
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

	/* writers: each grows the reserve by its share, taken whole */
	CHECK(wbguard_admit(&g) && !wbguard_untold(&g), "first writer");
	CHECK(wbguard_admit(&g) && !wbguard_untold(&g), "second writer");
	CHECK(g.writers == 2, "writers %u", g.writers);
	CHECK(g.reserved >= wbguard_target(&g.plan, 2, 0) &&
	      allocated(&g) == g.reserved, "reserved %llu",
	      (unsigned long long)g.reserved);
	/* written-back pages: far from full, no look needed yet */
	CHECK(!wbguard_wrote(&g, 64 * KiB), "no look due");
	/* a rate past the floor (1000 MiB/s in a window): look at once */
	g.win_ns -= 60 * 1000000ll;
	g.win_bytes = 60 * MiB;
	CHECK(wbguard_wrote(&g, 64 * KiB), "a higher rate: look due");
	CHECK(g.rate >= 900 * MiB, "rate %llu", (unsigned long long)g.rate);
	CHECK(wbguard_check(&g, &entered) == WBG_NORMAL && !entered,
	      "grown for the rate");
	CHECK(g.reserved >= wbguard_target(&g.plan, 2, g.rate), "reserved %llu",
	      (unsigned long long)g.reserved);
	/* writers gone: held a while (opens come in runs), then given back */
	wbguard_leave(&g);
	wbguard_leave(&g);
	g.rate = 0;
	CHECK(wbguard_check(&g, &entered) == WBG_NORMAL, "kept");
	CHECK(g.reserved > g.plan.reserve, "kept %llu",
	      (unsigned long long)g.reserved);
	g.admit_ns -= 3000 * 1000000ll;
	CHECK(wbguard_check(&g, &entered) == WBG_NORMAL, "shrunk");
	CHECK(g.reserved == g.plan.reserve && allocated(&g) == g.plan.reserve,
	      "back to the base: %llu", (unsigned long long)g.reserved);

	/*
	 * a writer's pages dipped into it, then the writer left: with room
	 * on the disk the share it no longer needs goes back like any other
	 */
	CHECK(wbguard_admit(&g), "a writer again");
	CHECK_OK(wbguard_dip(&g, 100 * KiB, &entered));
	CHECK(entered && wbguard_untold(&g) && !wbguard_untold(&g),
	      "the refusal told once");
	wbguard_leave(&g);
	g.admit_ns -= 3000 * 1000000ll;
	CHECK(wbguard_check(&g, &entered) == WBG_NORMAL && !g.short_since,
	      "whole again without the writer");
	CHECK(g.reserved == g.plan.reserve, "back to the base: %llu",
	      (unsigned long long)g.reserved);

	/* a written-back write finds no space: the first dip refuses */
	CHECK_OK(wbguard_dip(&g, 100 * KiB, &entered));
	CHECK(entered, "entered refusing");
	CHECK(atomic_load(&g.mode) == WBG_REFUSING, "refusing");
	CHECK(g.reserved <= g.plan.reserve - 100 * KiB &&
	      g.reserved >= g.plan.reserve - 104 * KiB, "reserved %llu",
	      (unsigned long long)g.reserved);
	CHECK_OK(wbguard_dip(&g, 1, &entered));
	CHECK(!entered, "already refusing");
	CHECK(g.dips == 3, "dips %llu", g.dips); /* one above */

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
	test_target();
	test_limit();
	test_reserve();
	if (test_failures)
		fprintf(stderr, "%d failure(s)\n", test_failures);
	return test_failures ? 1 : 0;
}
