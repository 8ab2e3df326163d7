#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Sync-tool conflict copies on real FUSE mounts (issue 19, FORMAT.md
# 4.8): for each tool's suffix, a file, a directory and a long-named
# file made through a mount are renamed (or copied) in the cipher
# directory as the tool does it; a new mount shows each as its name +
# the suffix, readable, movable to a plain name (surviving a remount),
# linkable and removable. An unknown suffix is hidden and logged once;
# conflict copies of xtsfs's own files stay hidden; xtsfs-fsck lists the
# known ones as notices and reports the unknown one.

bats_require_minimum_version 1.5.0

load helpers
load fs_helpers

LN=$(printf 'n%.0s' $(seq 1 200))

setup() {
	common_setup
	C=$T/c
	M=$T/m
	mkvol "$C"
}
teardown() { common_teardown; }

# make_tree: through a mount of $C: file f, directory dd holding a
# file, and a file with a 200-byte name; their lower paths in LF, LDD,
# LL. Unmounted afterwards.
make_tree() {
	mount_vol "$C" "$M"
	printf 'contents of f\n' >"$M/f"
	mkdir "$M/dd"
	printf 'inner\n' >"$M/dd/inner"
	printf 'long one\n' >"$M/$LN"
	LF=$(lower_of "$M/f")
	LDD=$(lower_of "$M/dd")
	LL=$(lower_of "$M/$LN")
	umount_vol "$M"
}

# as_tool SUFFIX: what the sync tool leaves: f and dd renamed with
# SUFFIX appended, the long entry copied beside the original with
# SUFFIX before its "extension" (".<V>" of xtsfs.long.<V>).
as_tool() {
	local sfx=$1 b
	mv "$LF" "$LF$sfx"
	mv "$LDD" "$LDD$sfx"
	b=${LL##*/}
	cp -p "$LL" "$C/xtsfs.long$sfx.${b#xtsfs.long.}"
}

# conflict_case SUFFIX: the whole round for one tool's suffix.
conflict_case() {
	local sfx=$1
	make_tree
	as_tool "$sfx"
	mount_vol "$C" "$M"
	run ls -A "$M"
	[ "$status" -eq 0 ]
	[ "$(printf '%s\n' "$output" | LC_ALL=C sort)" = "$(printf '%s\n' "dd$sfx" "f$sfx" "$LN" "$LN$sfx" | LC_ALL=C sort)" ]
	[ "$(cat "$M/f$sfx")" = "contents of f" ]
	[ "$(cat "$M/dd$sfx/inner")" = inner ]
	[ "$(cat "$M/$LN$sfx")" = "long one" ]
	[ -d "$M/dd$sfx" ]
	refute test -e "$M/f"
	# writable and linkable like any file
	printf 'more\n' >>"$M/f$sfx"
	ln "$M/f$sfx" "$M/hard"
	[ "$(stat -c %h "$M/f$sfx")" -eq 2 ]
	rm "$M/hard"
	# resolved: moved to plain names, one copy removed
	mv "$M/f$sfx" "$M/f"
	mv "$M/dd$sfx" "$M/dd"
	rm "$M/$LN$sfx"
	remount "$C" "$M"
	[ "$(printf '%s\n' "$(ls -A "$M")" | LC_ALL=C sort | tr '\n' /)" = "$(printf '%s\n' dd f "$LN" | LC_ALL=C sort | tr '\n' /)" ]
	[ "$(cat "$M/f")" = "$(printf 'contents of f\nmore')" ]
	[ "$(cat "$M/dd/inner")" = inner ]
	[ "$(cat "$M/$LN")" = "long one" ]
	umount_vol "$M"
	# nothing left in conflict form, the long entry's sidecar kept
	refute grep -qF -- "$sfx" <(ls -A "$C")
	[ -f "$LL.name" ]
	run -0 xtsfs-fsck --passfile "$T/pass" "$C"
	refute grep -q notice <<<"$output"
}

@test "conflicts: Syncthing's .sync-conflict-YYYYMMDD-HHMMSS-DEVICE" {
	conflict_case .sync-conflict-20260102-030405-ABCDEF7
}

@test "conflicts: Nextcloud's (conflicted copy YYYY-MM-DD HHMMSS)" {
	conflict_case " (conflicted copy 2026-01-02 030405)"
}

@test "conflicts: Nextcloud's (conflicted copy USER YYYY-MM-DD HHMMSS)" {
	conflict_case " (conflicted copy alice 2026-01-02 030405)"
}

@test "conflicts: the old ownCloud client's _conflict-YYYYMMDD-HHMMSS" {
	conflict_case _conflict-20260102-030405
}

@test "conflicts: Dropbox's (OWNER's conflicted copy YYYY-MM-DD)" {
	conflict_case " (Joe's conflicted copy 2026-01-02)"
}

@test "conflicts: Dropbox's (OWNER's conflicted copy YYYY-MM-DD (N))" {
	conflict_case " (Joe's conflicted copy 2026-01-02 (1))"
}

@test "conflicts: removing the original keeps the long copy's sidecar" {
	local sfx=.sync-conflict-20260102-030405-ABCDEF7
	make_tree
	as_tool "$sfx"
	mount_vol "$C" "$M"
	rm "$M/$LN"
	remount "$C" "$M"
	[ "$(ls -A "$M" | grep -c -F -- "$LN")" -eq 1 ]
	[ "$(cat "$M/$LN$sfx")" = "long one" ]
	mv "$M/$LN$sfx" "$M/$LN"
	remount "$C" "$M"
	[ "$(cat "$M/$LN")" = "long one" ]
	umount_vol "$M"
	run -0 xtsfs-fsck --passfile "$T/pass" "$C"
}

@test "conflicts: fsck lists known copies as notices, exit 0" {
	make_tree
	as_tool " (conflicted copy 2026-01-02 030405)"
	run -0 xtsfs-fsck --passfile "$T/pass" "$C"
	[ "$(grep -c '^notice: conflict-copy: ' <<<"$output")" -eq 3 ]
	grep -qF "(/f (conflicted copy 2026-01-02 030405))" <<<"$output"
	grep -q "3 sync conflict copies" <<<"$output"
}

@test "conflicts: an unknown suffix is hidden, logged once, reported by fsck" {
	local bad=.sync-conflict-2026
	make_tree
	cp "$LF" "$LF$bad"
	# conflict copies of xtsfs's own files stay hidden, unlogged
	cp "$LDD/xtsfs.dirid" "$LDD/xtsfs (conflicted copy 2026-01-02 030405).dirid"
	cp "$LL.name" "$LL.sync-conflict-20260102-030405-ABCDEF7.name"
	start_fg "$C" "$M"
	[ "$(ls -A "$M" | LC_ALL=C sort | tr '\n' /)" = "$(printf '%s\n' dd f "$LN" | LC_ALL=C sort | tr '\n' /)" ]
	[ "$(ls -A "$M/dd")" = inner ]
	ls -lA "$M" >/dev/null
	ls -A "$M" >/dev/null
	refute test -e "$M/f$bad"
	[ "$(grep -c "unknown conflict suffix" "$T/daemon.log")" -eq 1 ]
	grep -qF -e "${LF##*/}$bad\" is a stored name with an unknown conflict suffix" "$T/daemon.log"
	refute grep -q "cannot be decrypted" "$T/daemon.log"
	umount_vol "$M"
	run -4 xtsfs-fsck --passfile "$T/pass" "$C"
	grep -q "^foreign-entry: ${LF##*/}$bad .*unknown conflict suffix" <<<"$output"
}

@test "conflicts: a directory whose dirid has conflict copies is removed once empty (rmdir, rm -r, a rename over it)" {
	make_tree
	for sfx in " (conflicted copy 2026-01-02 030405)" \
		".sync-conflict-20260102-030405-ABCDEF7" " (Joe's conflicted copy 2026-01-02)"; do
		cp "$LDD/xtsfs.dirid" "$LDD/xtsfs$sfx.dirid"
	done
	mount_vol "$C" "$M"
	mkdir "$M/e" "$M/g"
	le=$(lower_of "$M/e")
	lg=$(lower_of "$M/g")
	cp "$le/xtsfs.dirid" "$le/xtsfs_conflict-20260102-030405.dirid"
	cp "$lg/xtsfs.dirid" "$lg/xtsfs (conflicted copy 2026-01-02 030405).dirid"
	# not empty: refused, and the copies stay
	run rmdir "$M/dd"
	[ "$status" -ne 0 ]
	grep -q 'not empty' <<<"$output"
	[ -e "$LDD/xtsfs (Joe's conflicted copy 2026-01-02).dirid" ]
	rm "$M/dd/inner"
	rmdir "$M/dd"
	refute test -e "$M/dd"
	refute test -e "$LDD"
	rm -r "$M/e"
	refute test -e "$le"
	mkdir "$M/h"
	mv -T "$M/h" "$M/g"
	[ -d "$M/g" ]
	refute test -e "$M/h"
	umount_vol "$M"
	run -0 xtsfs-fsck --passfile "$T/pass" "$C"
}
