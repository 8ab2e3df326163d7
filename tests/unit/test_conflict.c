/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_conflict.c - the sync-tool conflict suffixes (conflict.h): every
 * known form found with its exact length, near misses (a digit too
 * many or too few, impossible dates, wrong literal text, missing parts,
 * nothing before the suffix) refused, and the long-entry and internal
 * forms.
 */
#include "conflict.h"
#include "testutil.h"

static size_t suf(const char *s)
{
	return conflict_suffix(s, strlen(s));
}

/* @base + @sfx must yield exactly strlen(@sfx). */
static void want(const char *base, const char *sfx)
{
	char buf[512];

	snprintf(buf, sizeof(buf), "%s%s", base, sfx);
	CHECK(suf(buf) == strlen(sfx), "'%s': %zu, not %zu", buf, suf(buf),
	      strlen(sfx));
}

static void refuse(const char *s)
{
	CHECK(suf(s) == 0, "'%s' taken as %zu bytes of suffix", s, suf(s));
}

static void test_known(void)
{
	want("abc", ".sync-conflict-20240131-235959-ABCDEF7");
	want("a.b", ".sync-conflict-19991201-000000-Z234567");
	want("abc", " (conflicted copy 2024-02-29 120000)");
	want("abc", " (conflicted copy alice 2024-02-29 120000)");
	want("a (b)", " (conflicted copy Alice Smith 2024-02-29 120000)");
	want("abc", "_conflict-20130101-010203");
	want("abc", " (Joe's conflicted copy 2012-10-05)");
	want("abc", " (Joe Smith's MacBook's conflicted copy 2012-10-05)");
	want("abc", " (Joe's conflicted copy 2012-10-05 (1))");
	want("abc", " (Joe's conflicted copy 2012-10-05 (9999))");
	/* the outermost suffix only */
	want("a (conflicted copy 2024-01-01 000000)",
	     ".sync-conflict-20240131-235959-ABCDEF7");
}

static void test_near_misses(void)
{
	refuse("");
	refuse("abc");
	/* nothing before the suffix */
	refuse(".sync-conflict-20240131-235959-ABCDEF7");
	refuse(" (conflicted copy 2024-02-29 120000)");
	refuse("_conflict-20130101-010203");
	refuse(" (Joe's conflicted copy 2012-10-05)");
	/* digit counts, ranges, alphabet */
	refuse("a.sync-conflict-2024013-235959-ABCDEF7");
	refuse("a.sync-conflict-20240131-23595-ABCDEF7");
	refuse("a.sync-conflict-20240131-235959-ABCDEF");
	refuse("a.sync-conflict-20240131-235959-abcdef7");
	refuse("a.sync-conflict-20240131-235959-ABCDEF8");
	refuse("a.sync-conflict-20241331-235959-ABCDEF7");
	refuse("a.sync-conflict-20240132-235959-ABCDEF7");
	refuse("a.sync-conflict-20240131-245959-ABCDEF7");
	refuse("a.sync-conflict-20240131-236059-ABCDEF7");
	refuse("a.sync-conflict-2024013x-235959-ABCDEF7");
	refuse("a.sync_conflict-20240131-235959-ABCDEF7");
	refuse("a.sync-conflict-20240131_235959-ABCDEF7");
	refuse("a (conflicted copy 2024-02-29 12000)");
	refuse("a (conflicted copy 2024-02-29 1200000)");
	refuse("a (conflicted copy 2024-2-29 120000)");
	refuse("a (conflicted copy 2024-02-29 120000");
	refuse("a (conflicted copy 2024-02-29-120000)");
	refuse("a (Conflicted copy 2024-02-29 120000)");
	refuse("a(conflicted copy 2024-02-29 120000)");
	refuse("a (conflicted copy 2024-02-29  120000)");
	refuse("a (conflicted copy  2024-02-29 120000)");
	refuse("a (conflicted copy al)ce 2024-02-29 120000)");
	refuse("a_conflict-2013010-010203");
	refuse("a_conflict-20130101-0102034");
	refuse("a_conflict-20130100-010203");
	refuse("a (Joe's conflicted copy 2012-10-5)");
	refuse("a (Joe's conflicted copy 2012-10-05 (0))");
	refuse("a (Joe's conflicted copy 2012-10-05 (01))");
	refuse("a (Joe's conflicted copy 2012-10-05 (10000))");
	refuse("a (Joe's conflicted copy 2012-10-05 ())");
	refuse("a (Joe's conflicted copy 2012-10-05(1))");
	refuse("a ('s conflicted copy 2012-10-05)");
	refuse("a (Joes conflicted copy 2012-10-05)");
	refuse("a (Joe's conflicted copy 2012-10-05");
	refuse("a Joe's conflicted copy 2012-10-05)");
	refuse("a (Jo)e's conflicted copy 2012-10-05)");
	refuse("a (Joe's conflicted copy 2012-10-05 12)");
	refuse("))))");
	refuse("(((( ))))");
}

/* Exactly @len bytes are read: the parser is given no NUL. */
static void test_bounds(void)
{
	static const char s[] = "xx.sync-conflict-20240131-235959-ABCDEF7";
	char *p = malloc(sizeof(s) - 1);

	if (!p)
		return;
	memcpy(p, s, sizeof(s) - 1);
	CHECK(conflict_suffix(p, sizeof(s) - 1) == 38, "no NUL");
	CHECK(conflict_suffix(p, sizeof(s) - 2) == 0, "cut");
	CHECK(conflict_suffix(NULL, 0) == 0, "NULL");
	free(p);
}

static void test_long_and_internal(void)
{
	static const char v[] = "AAAAAAAAAAAAAAAAAAAAAA";
	char name[300], entry[34];
	size_t k = 0;

	snprintf(name, sizeof(name), "xtsfs.long.sync-conflict-"
		 "20240131-235959-ABCDEF7.%s", v);
	CHECK(conflict_long(name, &k, entry) && k == 38, "%s", name);
	CHECK(!strcmp(entry, "xtsfs.long.AAAAAAAAAAAAAAAAAAAAAA"), "%s", entry);
	snprintf(name, sizeof(name), "xtsfs.long (conflicted copy "
		 "2024-01-01 101010).%s", v);
	CHECK(conflict_long(name, &k, entry) && k == 36, "%s", name);
	snprintf(name, sizeof(name), "xtsfs.long.%s", v);
	CHECK(!conflict_long(name, &k, entry), "the entry itself");
	snprintf(name, sizeof(name), "xtsfs.long (junk).%s", v);
	CHECK(!conflict_long(name, &k, entry), "junk");
	snprintf(name, sizeof(name), "xtsfs.long_conflict-20130101-010203.%s"
		 "A", v);
	CHECK(!conflict_long(name, &k, entry), "23-character V");
	snprintf(name, sizeof(name), "xtsfs.long.%s.sync-conflict-20240131-"
		 "235959-ABCDEF7.name", v);
	CHECK(!conflict_long(name, &k, entry), "a sidecar's copy");
	CHECK(conflict_internal("xtsfs (conflicted copy 2024-01-01 101010)"
				".dirid"), "dirid copy");
	CHECK(conflict_internal("xtsfs (Joe's conflicted copy 2012-10-05)"
				".volume"), "header copy");
	CHECK(!conflict_internal("xtsfs.dirid"), "the dirid");
	CHECK(!conflict_internal("xtsfsX (conflicted copy 2024-01-01 "
				 "101010).dirid"), "not xtsfs's");
	CHECK(!conflict_internal("xtsfs (conflicted copy 2024-01-01 101010)"),
	      "no extension");
}

int main(void)
{
	test_known();
	test_near_misses();
	test_bounds();
	test_long_and_internal();
	if (test_failures)
		fprintf(stderr, "%d failure(s)\n", test_failures);
	return test_failures ? 1 : 0;
}
