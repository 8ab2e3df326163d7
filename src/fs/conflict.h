/* SPDX-License-Identifier: Apache-2.0 */
/*
 * conflict.h - the conflict suffixes sync tools add to a file's name
 * when two replicas changed it (doc/FORMAT.md 4.8). A stored name
 * (base64url, no '.') followed by one of them is a conflict copy: a
 * mount shows it as the decrypted name followed by the same suffix.
 *
 * Known forms, each inserted before the last '.' of the name (the
 * "extension"), appended when there is none (so always appended to a
 * stored name, and inserted after "xtsfs.long" in a long entry):
 *   Syncthing   ".sync-conflict-YYYYMMDD-HHMMSS-DDDDDDD" (D: the first
 *               7 characters of the device id, base32 A-Z 2-7)
 *   Nextcloud and the ownCloud desktop client
 *               " (conflicted copy [USER ]YYYY-MM-DD HHMMSS)" (USER
 *               without parentheses)
 *   ownCloud before 2.5
 *               "_conflict-YYYYMMDD-HHMMSS"
 *   Dropbox     " (OWNER's conflicted copy YYYY-MM-DD)", optionally
 *               " (N)" before the closing parenthesis (OWNER without
 *               parentheses)
 * Dates and times are checked digit by digit and for their ranges, the
 * literal text byte by byte: a name merely ending in something similar
 * is not a conflict copy.
 *
 * Pure computation on attacker-chosen bytes: lengths are given, nothing
 * needs a NUL, nothing is read outside [name, name + len).
 */
#ifndef XTSFS_CONFLICT_H
#define XTSFS_CONFLICT_H

#include <stdbool.h>
#include <stddef.h>

/* the longest suffix conflict_suffix() accepts (owner and user names) */
#define CONFLICT_SUFFIX_MAX 200

/*
 * conflict_suffix() - the length of the known conflict suffix @name ends
 * with, or 0.
 * @name: @len bytes, need not be NUL-terminated.
 *
 * The suffix is never the whole name (something must precede it), and
 * it depends only on the bytes it covers: a suffix found at the end of
 * a lower name is found again at the end of any other name ending in
 * the same bytes (what lookup relies on to find what readdir showed).
 */
size_t conflict_suffix(const char *name, size_t len);

/*
 * conflict_long() - whether @name is a conflict copy of a long entry
 * (FORMAT 4.3): "xtsfs.long" + a known suffix + "." + 22 base64url
 * characters.
 * @name:    NUL-terminated lower name.
 * @suf_len: the suffix's length (output); it starts at @name + 10.
 * @entry:   the original entry name "xtsfs.long.<V>" (output), whose
 *           sidecar names this copy too.
 */
bool conflict_long(const char *name, size_t *suf_len, char entry[34]);

/*
 * conflict_internal() - whether @name is a conflict copy of one of
 * xtsfs's own files that does not start with "xtsfs." (those are
 * internal anyway): "xtsfs" + a known suffix + "." + anything, as
 * " (conflicted copy ...)" makes of "xtsfs.dirid". Never shown.
 * @name: NUL-terminated lower name.
 */
bool conflict_internal(const char *name);

#endif /* XTSFS_CONFLICT_H */
