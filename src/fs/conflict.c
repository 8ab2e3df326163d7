/* SPDX-License-Identifier: Apache-2.0 */
/*
 * conflict.c - sync-tool conflict suffixes (conflict.h). Every parser
 * reads from the end of the name backwards and only as far as its
 * suffix reaches, so the result depends on the suffix's bytes alone.
 *
 * Sources for the forms: Syncthing lib/model (conflictName():
 * ".sync-conflict-" + time "20060102-150405" + "-" + the 7-character
 * ShortID of the device, base32); the Nextcloud desktop client
 * (Utility::makeConflictFileName(): " (conflicted copy " [+ user + " "]
 * + "yyyy-MM-dd hhmmss" + ")", parentheses in the user replaced by
 * '_'); the ownCloud client before 2.5 ("_conflict-yyyyMMdd-hhmmss");
 * Dropbox's help pages ("(OWNER's conflicted copy YYYY-MM-DD)").
 */
#include "conflict.h"

#include <string.h>

#include "names.h"

#define ST_LIT ".sync-conflict-"
#define OC_LIT "_conflict-"
#define NC_LIT " (conflicted copy "
#define DB_LIT "'s conflicted copy "

static size_t lit_len(const char *lit)
{
	return strlen(lit);
}

/* @n decimal digits at @s, their value in *@v. */
static bool digits(const char *s, size_t n, unsigned *v)
{
	*v = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		*v = *v * 10 + (unsigned)(s[i] - '0');
	}
	return true;
}

/* A calendar date as YYYYMMDD (@sep 0) or YYYY-MM-DD (@sep '-'). */
static bool date_ok(const char *s, char sep)
{
	size_t w = sep ? 1 : 0;
	unsigned y, mo, d;

	if (sep && (s[4] != sep || s[7] != sep))
		return false;
	return digits(s, 4, &y) && digits(s + 4 + w, 2, &mo) &&
	       digits(s + 6 + 2 * w, 2, &d) && mo >= 1 && mo <= 12 &&
	       d >= 1 && d <= 31;
}

/* A time of day as HHMMSS. */
static bool time_ok(const char *s)
{
	unsigned h, mi, se;

	return digits(s, 2, &h) && digits(s + 2, 2, &mi) &&
	       digits(s + 4, 2, &se) && h <= 23 && mi <= 59 && se <= 59;
}

/* ".sync-conflict-YYYYMMDD-HHMMSS-DDDDDDD": 38 bytes. */
static size_t syncthing(const char *name, size_t len)
{
	const size_t l = lit_len(ST_LIT) + 8 + 1 + 6 + 1 + 7;
	const char *s;

	if (len <= l)
		return 0;
	s = name + len - l;
	if (memcmp(s, ST_LIT, lit_len(ST_LIT)))
		return 0;
	s += lit_len(ST_LIT);
	if (!date_ok(s, 0) || s[8] != '-' || !time_ok(s + 9) || s[15] != '-')
		return 0;
	for (size_t i = 16; i < 23; i++)
		if (!((s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '2' && s[i] <= '7')))
			return 0;
	return l;
}

/* "_conflict-YYYYMMDD-HHMMSS": 25 bytes. */
static size_t owncloud_old(const char *name, size_t len)
{
	const size_t l = lit_len(OC_LIT) + 8 + 1 + 6;
	const char *s;

	if (len <= l)
		return 0;
	s = name + len - l;
	if (memcmp(s, OC_LIT, lit_len(OC_LIT)))
		return 0;
	s += lit_len(OC_LIT);
	return date_ok(s, 0) && s[8] == '-' && time_ok(s + 9) ? l : 0;
}

/*
 * The '(' that opens a free-text part (a user or owner name) ending
 * before @end: the nearest one, with no ')', '/' or NUL between, at
 * most CONFLICT_SUFFIX_MAX back, preceded by " " and by at least one
 * more byte. Its index, or 0.
 */
static size_t open_paren(const char *name, size_t end)
{
	size_t stop = end > CONFLICT_SUFFIX_MAX ? end - CONFLICT_SUFFIX_MAX : 0;

	for (size_t i = end; i > stop; i--) {
		char c = name[i - 1];

		if (c == ')' || c == '/' || c == '\0')
			return 0;
		if (c == '(')
			return i - 1 >= 2 && name[i - 2] == ' ' ? i - 1 : 0;
	}
	return 0;
}

/* " (conflicted copy [USER ]YYYY-MM-DD HHMMSS)". */
static size_t nextcloud(const char *name, size_t len)
{
	const size_t nl = lit_len(NC_LIT), tl = 17 + 1;
	size_t p, q;

	if (len <= nl + tl || name[len - 1] != ')')
		return 0;
	p = len - tl; /* the date */
	if (!date_ok(name + p, '-') || name[p + 10] != ' ' ||
	    !time_ok(name + p + 11))
		return 0;
	if (!memcmp(name + p - nl, NC_LIT, nl))
		return p - nl >= 1 ? nl + tl : 0;
	/* with a user: " (conflicted copy " USER " " */
	if (name[p - 1] != ' ')
		return 0;
	q = open_paren(name, p - 1);
	if (!q || q + nl - 1 >= p - 1 ||
	    memcmp(name + q - 1, NC_LIT, nl))
		return 0;
	return len - (q - 1);
}

/* " (OWNER's conflicted copy YYYY-MM-DD[ (N)])". */
static size_t dropbox(const char *name, size_t len)
{
	const size_t dl = lit_len(DB_LIT);
	size_t e = len - 1, q;

	if (len < 2 + 1 + dl + 10 + 1 + 1 || name[len - 1] != ')')
		return 0;
	if (name[len - 2] == ')') {
		/* the counter: " (N)", N 1..9999 without leading zeros */
		size_t d = len - 2, n = 0;

		while (d > 0 && n < 5 && name[d - 1] >= '0' &&
		       name[d - 1] <= '9')
			d--, n++;
		if (n < 1 || n > 4 || name[d] == '0' || d < 2 ||
		    name[d - 1] != '(' || name[d - 2] != ' ')
			return 0;
		e = d - 2;
	}
	if (e < dl + 10 + 3 || !date_ok(name + e - 10, '-') ||
	    memcmp(name + e - 10 - dl, DB_LIT, dl))
		return 0;
	q = open_paren(name, e - 10 - dl);
	/* the owner is not empty */
	if (!q || q + 1 >= e - 10 - dl)
		return 0;
	return len - (q - 1);
}

/* see conflict.h */
size_t conflict_suffix(const char *name, size_t len)
{
	size_t k;

	if (!name || !len)
		return 0;
	if ((k = syncthing(name, len)) || (k = owncloud_old(name, len)) ||
	    (k = nextcloud(name, len)) || (k = dropbox(name, len)))
		return k < len ? k : 0;
	return 0;
}

/* see conflict.h */
bool conflict_long(const char *name, size_t *suf_len, char entry[34])
{
	const size_t pl = lit_len(NAMES_LONG_PREFIX) - 1; /* "xtsfs.long" */
	size_t len = strnlen(name, NAMES_STORED_MAX + 1);

	*suf_len = 0;
	if (len > NAMES_STORED_MAX || len <= pl + 23 ||
	    memcmp(name, NAMES_LONG_PREFIX, pl) || name[len - 23] != '.')
		return false;
	memcpy(entry, NAMES_LONG_PREFIX, pl + 1);
	memcpy(entry + pl + 1, name + len - 22, 22);
	entry[pl + 23] = '\0';
	if (!names_is_long(entry) ||
	    conflict_suffix(name, len - 23) != len - 23 - pl)
		return false;
	*suf_len = len - 23 - pl;
	return true;
}

/* see conflict.h */
bool conflict_internal(const char *name)
{
	size_t len = strnlen(name, NAMES_STORED_MAX + 1);
	const char *dot;

	if (len > NAMES_STORED_MAX || strncmp(name, "xtsfs", 5))
		return false;
	dot = memrchr(name, '.', len);
	if (!dot || dot - name <= 5)
		return false;
	return conflict_suffix(name, (size_t)(dot - name)) ==
	       (size_t)(dot - name) - 5;
}
