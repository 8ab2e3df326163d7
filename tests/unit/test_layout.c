/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_layout.c - the block mapping (layout.c, doc/FORMAT.md 3.3-3.5) and
 * the per-file header codec (fileheader.c, 3.4), on their own: no file,
 * no key. Every function is checked against a reference written here
 * with 128-bit arithmetic (so it cannot wrap where layout.c must not), at
 * every size class and at the unit and tail boundaries (0, 1, 15, 16, 17,
 * 4095, 4096, 4097, 4096 + 15, 4096 + 16, ...), near 2^40 and at the
 * 64-bit top; the size conversions round trip; spans are checked at every
 * boundary offset and length; out-of-contract inputs at the top abort
 * (assert) instead of wrapping, checked in a child. The header codec
 * round trips, matches a hand-written golden header, refuses short
 * input, and every single-byte corruption is refused (magic, version,
 * reserved) or decodes to exactly that change (id, slot: not
 * authenticated, by design; see fileheader.h).
 * Exit 0 on success, 1 on any failure.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fileheader.h"
#include "layout.h"
#include "testutil.h"

__extension__ typedef unsigned __int128 u128;

#define U 4096u
/* the data offset under test: 40 (compact), then 4096 (aligned) */
static uint32_t H = LAYOUT_DOFF_COMPACT;

static unsigned long checks;

#define CK(cond, ...)                                                       \
	do {                                                                \
		checks++;                                                   \
		CHECK(cond, __VA_ARGS__);                                   \
	} while (0)

/* ---- references: FORMAT 3.4 and 3.5 read literally, in 128 bits -------- */

static u128 ref_nunits(uint64_t s)
{
	return ((u128)s + U - 1) / U;
}

static uint32_t ref_unit_len(uint64_t s, uint64_t u)
{
	u128 start = (u128)u * U, end = start + U;

	if (start >= s)
		return 0;
	return (uint32_t)((end < s ? end : s) - start);
}

static uint64_t ref_span_len(uint64_t s, uint64_t off, uint64_t len)
{
	u128 u0 = off / U, u1 = ((u128)off + len - 1) / U;
	u128 end = (u1 + 1) * U;

	return (uint64_t)((end < s ? end : s) - u0 * U);
}

/* Sizes at every class boundary, including the top of 64 bits. */
static const uint64_t sizes[] = {
	0, 1, 2, 15, 16, 17, 31, 32, 4079, 4080, 4081, 4095, 4096, 4097,
	4096 + 15, 4096 + 16, 4096 + 17, 8191, 8192, 8193, 8192 + 15,
	3 * 4096 + 1,
	(UINT64_C(1) << 40) - 1, UINT64_C(1) << 40, (UINT64_C(1) << 40) + 1,
	(UINT64_C(1) << 40) + 15, (UINT64_C(1) << 40) + 16,
	(UINT64_C(1) << 40) + 4095,
	LAYOUT_MAX_SIZE - 1, LAYOUT_MAX_SIZE, LAYOUT_MAX_SIZE + 1,
	(uint64_t)INT64_MAX - 40, (uint64_t)INT64_MAX - 39,
	(uint64_t)INT64_MAX - 4096, (uint64_t)INT64_MAX - 4095,
	(uint64_t)INT64_MAX, UINT64_C(1) << 63, (UINT64_C(1) << 63) + 15,
	UINT64_MAX - 4096, UINT64_MAX - 4095, UINT64_MAX - 16, UINT64_MAX - 15,
	UINT64_MAX - 1, UINT64_MAX,
};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

/* ---- constants ------------------------------------------------------------ */

static void test_constants(void)
{
	CK(LAYOUT_UNIT_SIZE == 4096, "unit size");
	CK(LAYOUT_HDR_SIZE == 40 && FILEHDR_SIZE == 40, "header size");
	CK(LAYOUT_TAIL_MAX == 15, "tail max");
	CK(FILEHDR_SLOT_OFF == 24 && FILEHDR_ID_OFF == 8, "field offsets");
	/* the lower size of the largest file, plus a unit, fits off_t */
	CK(layout_coff(LAYOUT_DOFF_ALIGNED, LAYOUT_MAX_SIZE) + U ==
	   (uint64_t)INT64_MAX, "LAYOUT_MAX_SIZE");
	CK(layout_doff_ok(40) && layout_doff_ok(4096) && !layout_doff_ok(0) &&
	   !layout_doff_ok(41) && !layout_doff_ok(8192), "data offsets");
}

/* ---- offsets -------------------------------------------------------------- */

static void test_offsets(void)
{
	const uint64_t us[] = { 0, 1, 2, 255, 256, 1u << 20,
				(UINT64_C(1) << 40) / U, UINT64_C(1) << 40,
				UINT64_C(1) << 51, (UINT64_MAX - H) / U,
				UINT64_MAX / U };
	const uint64_t pos[] = { 0, 1, 15, 16, 17, 4095, 4096, 4097,
				 4096 + 15, 4096 + 16, 8191, 8192,
				 UINT64_C(1) << 40, UINT64_MAX - H,
				 UINT64_MAX - 1, UINT64_MAX };

	for (size_t i = 0; i < sizeof(us) / sizeof(us[0]); i++) {
		uint64_t u = us[i], s = layout_unit_start(u);

		CK((u128)s == (u128)u * U, "unit_start(%llu)",
		   (unsigned long long)u);
		CK(layout_unit_of(s) == u, "unit_of(start(%llu))",
		   (unsigned long long)u);
		CK(layout_unit_of(s + U - 1) == u, "unit_of(end(%llu))",
		   (unsigned long long)u);
		if (u)
			CK(layout_unit_of(s - 1) == u - 1, "unit_of(%llu - 1)",
			   (unsigned long long)s);
		if (u <= (UINT64_MAX - H) / U) {
			CK((u128)layout_unit_coff(H, u) == (u128)u * U + H,
			   "unit_coff(%llu)", (unsigned long long)u);
			CK(layout_poff(H, layout_unit_coff(H, u)) == s, "poff(coff)");
		}
	}
	for (size_t i = 0; i < sizeof(pos) / sizeof(pos[0]); i++) {
		uint64_t p = pos[i];

		CK(layout_unit_of(p) == p / U, "unit_of(%llu)",
		   (unsigned long long)p);
		if (p <= UINT64_MAX - H) {
			CK(layout_coff(H, p) == p + H, "coff(%llu)",
			   (unsigned long long)p);
			CK(layout_poff(H, layout_coff(H, p)) == p, "poff(coff(%llu))",
			   (unsigned long long)p);
		}
	}
	/* unit u of the lower file: D + 4096u (FORMAT 3.4) */
	if (H == 40)
		CK(layout_unit_coff(H, 0) == 40 &&
		   layout_unit_coff(H, 1) == 4136 &&
		   layout_unit_coff(H, 2) == 8232, "unit_coff small");
	else
		CK(layout_unit_coff(H, 0) == 4096 &&
		   layout_unit_coff(H, 1) == 8192 &&
		   layout_unit_coff(H, 2) == 12288, "unit_coff small, aligned");
}

/* ---- sizes and unit lengths ----------------------------------------------- */

static void check_size(uint64_t s)
{
	u128 nu = ref_nunits(s);
	bool tail = s % U >= 1 && s % U <= 15;
	const uint64_t probe[] = { 0, 1, 2 };
	u128 sum = 0;

	CK((u128)layout_nunits(s) == nu, "nunits(%llu)", (unsigned long long)s);
	CK(layout_has_tail(s) == tail, "has_tail(%llu)", (unsigned long long)s);
	if (s) {
		uint64_t last = layout_last_unit(s);

		CK(last == (s - 1) / U && (u128)last + 1 == nu,
		   "last_unit(%llu)", (unsigned long long)s);
		CK(layout_is_tail_len(layout_unit_len(s, last)) == tail,
		   "has_tail agrees with the last unit's length, %llu",
		   (unsigned long long)s);
	}
	/* the first units, the last ones, the first past the end, the top */
	for (size_t i = 0; i < 3; i++) {
		uint64_t u = probe[i];

		CK(layout_unit_len(s, u) == ref_unit_len(s, u),
		   "unit_len(%llu, %llu)", (unsigned long long)s,
		   (unsigned long long)u);
		if (nu >= 1 + i) {
			u = (uint64_t)(nu - 1 - i);
			CK(layout_unit_len(s, u) == ref_unit_len(s, u),
			   "unit_len(%llu, %llu)", (unsigned long long)s,
			   (unsigned long long)u);
		}
		u = (uint64_t)nu + i;
		CK(layout_unit_len(s, u) == 0, "unit_len past the end, %llu",
		   (unsigned long long)s);
	}
	CK(layout_unit_len(s, UINT64_MAX) == 0 &&
	   layout_unit_len(s, UINT64_MAX / U + 1) == 0,
	   "unit_len(%llu, huge) must not wrap", (unsigned long long)s);
	/* the units add up to the size (small files: all of them) */
	if (s <= 64 * U) {
		for (uint64_t u = 0; u <= nu; u++)
			sum += layout_unit_len(s, u);
		CK(sum == s, "units of %llu add up", (unsigned long long)s);
	}
}

static void test_sizes(void)
{
	for (size_t i = 0; i < NSIZES; i++)
		check_size(sizes[i]);
	/* every size of the first three units and a bit, exhaustively */
	for (uint64_t s = 0; s <= 3 * U + 64; s++)
		check_size(s);
	for (uint32_t n = 0; n <= 4097; n++)
		CK(layout_is_tail_len(n) == (n >= 1 && n <= 15),
		   "is_tail_len(%u)", n);
	CK(!layout_is_tail_len(UINT32_MAX), "is_tail_len(max)");
}

/* plain -> lower -> plain, lower -> plain -> lower, and what is refused */
static void test_round_trips(void)
{
	for (size_t i = 0; i < NSIZES; i++) {
		uint64_t s = sizes[i];

		if (s > (uint64_t)INT64_MAX - H)
			continue; /* the lower size would not be a file size */
		CK(layout_plain_size(H, layout_lower_size(H, s)) == (int64_t)s,
		   "plain(lower(%llu))", (unsigned long long)s);
		CK(layout_plain_size(H, layout_coff(H, s)) == (int64_t)s,
		   "plain(header + %llu)", (unsigned long long)s);
	}
	CK(layout_lower_size(H, 0) == 0, "an empty file has no header");
	CK(layout_lower_size(H, 1) == H + 1 &&
	   layout_lower_size(H, 4096) == H + 4096, "lower_size");
	CK(layout_lower_size(H, UINT64_MAX - H) == UINT64_MAX, "lower_size top");
	for (uint64_t l = 40; l <= H; l++)
		CK(layout_plain_size(H, l) == 0, "0 and 40..%u are all empty: "
		   "%llu", H, (unsigned long long)l);
	CK(layout_plain_size(H, 0) == 0, "0 is empty");
	for (uint64_t l = 1; l < 40; l++)
		CK(layout_plain_size(H, l) == -EIO, "plain_size(%llu)",
		   (unsigned long long)l);
	for (uint64_t l = H + 1; l < 3 * U + H; l++) {
		int64_t p = layout_plain_size(H, l);

		CK(p == (int64_t)(l - H) &&
		   layout_lower_size(H, (uint64_t)p) == l, "lower(plain(%llu))",
		   (unsigned long long)l);
	}
	/* 40..D map to 0 and 0 back to 0: the lower sizes not restored */
	CK(layout_lower_size(H, (uint64_t)layout_plain_size(H, 40)) == 0 &&
	   layout_lower_size(H, (uint64_t)layout_plain_size(H, H)) == 0,
	   "40 and D -> 0");
	CK(layout_plain_size(H, (uint64_t)INT64_MAX) == INT64_MAX - H,
	   "plain_size(INT64_MAX)");
	CK(layout_plain_size(H, (uint64_t)INT64_MAX + 1) == -EIO &&
	   layout_plain_size(H, UINT64_MAX) == -EIO, "no file is that large");
}

/* ---- spans ---------------------------------------------------------------- */

static void check_span(uint64_t s, uint64_t off, uint64_t len)
{
	struct layout_span sp;
	u128 u0 = off / U, u1 = ((u128)off + len - 1) / U;

	layout_span(&sp, s, off, len);
	CK(sp.u0 == u0 && sp.n == u1 - u0 + 1 &&
	   sp.len == ref_span_len(s, off, len),
	   "span(%llu, %llu, %llu): u0 %llu n %llu len %llu",
	   (unsigned long long)s, (unsigned long long)off,
	   (unsigned long long)len, (unsigned long long)sp.u0,
	   (unsigned long long)sp.n, (unsigned long long)sp.len);
	CK(sp.len == layout_units_len(s, sp.u0, sp.n), "span = units_len");
	/* the span covers the range and no more than its units */
	CK(layout_unit_start(sp.u0) <= off &&
	   (u128)layout_unit_start(sp.u0) + sp.len >= (u128)off + len,
	   "span covers the range");
}

static void test_spans(void)
{
	const uint64_t d[] = { 0, 1, 15, 16, 17, 4095, 4096, 4097,
			       4096 + 15, 4096 + 16, 8191, 8192, 8193 };
	const size_t nd = sizeof(d) / sizeof(d[0]);

	for (size_t i = 0; i < NSIZES; i++) {
		uint64_t s = sizes[i];

		if (!s)
			continue;
		/* offsets at boundaries from the start and from the end */
		for (size_t a = 0; a < 2 * nd; a++) {
			uint64_t off = a < nd ? d[a] : s - 1 - d[a - nd];

			if (a < nd ? d[a] >= s : d[a - nd] >= s)
				continue;
			for (size_t b = 0; b < nd; b++) {
				uint64_t len = d[b] ? d[b] : s - off;

				if (len <= s - off)
					check_span(s, off, len);
			}
			check_span(s, off, s - off); /* to the end */
		}
	}
	/* small files: every offset and length */
	for (uint64_t s = 1; s <= 2 * U + 20; s += s < 40 ? 1 : 397)
		for (uint64_t off = 0; off < s; off++)
			for (uint64_t len = 1; len <= s - off;
			     len += len < 20 ? 1 : 251)
				check_span(s, off, len);
	/* units_len: every run ending at the last unit or before it */
	for (size_t i = 0; i < NSIZES; i++) {
		uint64_t s = sizes[i], nu;

		if (!s)
			continue;
		nu = layout_nunits(s);
		for (uint64_t n = 1; n <= 3 && n <= nu; n++)
			for (uint64_t k = 0; k < 3 && k + n <= nu; k++) {
				uint64_t u0 = nu - n - k;

				CK(layout_units_len(s, u0, n) ==
				   ref_span_len(s, u0 * U, 1 + (n - 1) * U),
				   "units_len(%llu, %llu, %llu)",
				   (unsigned long long)s,
				   (unsigned long long)u0,
				   (unsigned long long)n);
			}
	}
}

/* ---- contracts at the top: assert, never wrap ---------------------------- */

static uint64_t call_start_top(void)
{
	return layout_unit_start(UINT64_MAX / U + 1);
}

static uint64_t call_coff_top(void)
{
	return layout_coff(H, UINT64_MAX - H + 1);
}

static uint64_t call_unit_coff_top(void)
{
	return layout_unit_coff(H, (UINT64_MAX - H) / U + 1);
}

static uint64_t call_poff_header(void)
{
	return layout_poff(H, H - 1);
}

static uint64_t call_bad_doff(void)
{
	return layout_coff(4095, 0);
}

static uint64_t call_last_empty(void)
{
	return layout_last_unit(0);
}

static uint64_t call_units_past(void)
{
	return layout_units_len(4097, 1, 2);
}

static uint64_t call_span_past(void)
{
	struct layout_span sp;

	layout_span(&sp, 4096, 4000, 97);
	return sp.len;
}

static uint64_t call_span_empty(void)
{
	struct layout_span sp;

	layout_span(&sp, 4096, 0, 0);
	return sp.len;
}

static bool aborts(uint64_t (*fn)(void))
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		(void)!freopen("/dev/null", "w", stderr);
		(void)fn();
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return false;
	return WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT;
}

static void test_contracts(void)
{
	static const struct {
		const char *what;
		uint64_t (*fn)(void);
	} cases[] = {
		{ "unit_start(2^52)", call_start_top },
		{ "coff(2^64 - D)", call_coff_top },
		{ "a data offset that is no layout's", call_bad_doff },
		{ "unit_coff past the top", call_unit_coff_top },
		{ "poff before the data", call_poff_header },
		{ "last_unit(0)", call_last_empty },
		{ "units_len past the end", call_units_past },
		{ "span past the end", call_span_past },
		{ "span of 0 bytes", call_span_empty },
	};

#ifdef NDEBUG
	printf("NDEBUG: contract asserts compiled out, not checked\n");
	return;
#endif
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CK(aborts(cases[i].fn), "%s must abort", cases[i].what);
	/* the last valid inputs do not */
	CK(layout_unit_start(UINT64_MAX / U) == UINT64_MAX - (U - 1),
	   "top unit start");
	CK(layout_coff(H, UINT64_MAX - H) == UINT64_MAX, "top coff");
	CK(layout_poff(H, H) == 0, "poff(D)");
}

/* ---- the header codec ----------------------------------------------------- */

static void rand_header(struct fileheader *h)
{
	for (size_t i = 0; i < sizeof(h->id); i++)
		h->id[i] = (uint8_t)rng_next();
	for (size_t i = 0; i < sizeof(h->slot); i++)
		h->slot[i] = (uint8_t)rng_next();
}

static void test_header_golden(void)
{
	/* FORMAT 3.4 by hand: "xtsf", LE16 1, 0 0, id 00..0f, slot 0 */
	uint8_t want[40], got[41];
	struct fileheader h = { 0 }, d;

	test_unhex(want, "78747366 0100 0000"
			 "000102030405060708090a0b0c0d0e0f"
			 "00000000000000000000000000000000");
	for (int i = 0; i < 16; i++)
		h.id[i] = (uint8_t)i;
	memset(got, 0xa5, sizeof(got));
	fileheader_encode(got, &h);
	test_memeq("golden header", got, want, 40);
	CK(got[40] == 0xa5, "encode writes exactly 40 bytes");
	CK(fileheader_decode(&d, want, 40) == 0 &&
	   !memcmp(d.id, h.id, 16) && test_all_zero(d.slot, 16),
	   "golden decodes");
}

static void test_header_codec(void)
{
	uint8_t buf[64];
	struct fileheader h, d;

	for (int r = 0; r < 100; r++) {
		rand_header(&h);
		fileheader_encode(buf, &h);
		CK(!memcmp(buf, "xtsf\1\0\0\0", 8), "fixed bytes");
		CK(!memcmp(buf + 8, h.id, 16) && !memcmp(buf + 24, h.slot, 16),
		   "id and slot placed");
		CK(fileheader_decode(&d, buf, 40) == 0 &&
		   !memcmp(&d, &h, sizeof(h)), "round trip");
		/* bytes past the header are data: ignored */
		for (size_t i = 40; i < sizeof(buf); i++)
			buf[i] = (uint8_t)rng_next();
		CK(fileheader_decode(&d, buf, sizeof(buf)) == 0 &&
		   !memcmp(&d, &h, sizeof(h)), "longer input");
	}
	/* truncated: every length short of 40 is corrupt, output untouched */
	rand_header(&h);
	fileheader_encode(buf, &h);
	for (size_t len = 0; len < 40; len++) {
		memset(&d, 0x5a, sizeof(d));
		CK(fileheader_decode(&d, buf, len) == -EIO &&
		   d.id[0] == 0x5a && d.slot[15] == 0x5a,
		   "decode of %zu bytes", len);
	}
}

/*
 * Every single-byte corruption: bytes 0..7 (magic, version, reserved)
 * are refused, and the output is left alone; bytes 8..39 (id, slot) are
 * not checkable here and decode to exactly the corrupted value.
 */
static void test_header_corruption(void)
{
	uint8_t good[40], bad[40];
	struct fileheader h, d;
	unsigned refused = 0, passed = 0;

	rand_header(&h);
	fileheader_encode(good, &h);
	for (size_t pos = 0; pos < 40; pos++) {
		for (unsigned x = 1; x < 256; x++) {
			int r;

			memcpy(bad, good, 40);
			bad[pos] ^= (uint8_t)x;
			memset(&d, 0x5a, sizeof(d));
			r = fileheader_decode(&d, bad, 40);
			if (pos < FILEHDR_ID_OFF) {
				CK(r == -EIO && d.id[0] == 0x5a,
				   "byte %zu ^ %02x refused", pos, x);
				refused += r == -EIO;
				continue;
			}
			CK(r == 0, "byte %zu ^ %02x decodes", pos, x);
			CK(!memcmp(&d, bad + FILEHDR_ID_OFF, sizeof(d)),
			   "byte %zu ^ %02x: exactly that change", pos, x);
			passed += r == 0;
		}
	}
	CK(refused == 8 * 255 && passed == 32 * 255, "corruption counts");
}

int main(void)
{
	rng_seed("layout");
	test_constants();
	for (int l = 0; l < 2; l++) {
		H = l ? LAYOUT_DOFF_ALIGNED : LAYOUT_DOFF_COMPACT;
		test_offsets();
		test_round_trips();
		test_contracts();
	}
	test_sizes();
	test_spans();
	test_header_golden();
	test_header_codec();
	test_header_corruption();
	printf("layout: %lu checks, %d failures\n", checks, test_failures);
	return test_failures ? 1 : 0;
}
