#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Coherence between two mounts of one cipher directory (issue 19 part 1):
# a change made through mount A, or directly in the cipher directory as a
# sync tool makes it, shows in mount B within a bounded wait, and the old
# state never comes back after that. B's view is warmed first (stat,
# read, a negative lookup), so that what is measured is how long B's
# caches lie. Correctness is asserted, not speed: the wait allowed is
# 3 s; the window measured (from the change to the start of the first
# check that saw it) is printed as a figure line.
#
# Every scenario runs twice. By default B's next open sees any change
# (contents, size, a removed or replaced file) and new names show within
# 1 s (negative entries), but a stat without an open may show cached
# attributes up to attr_timeout (30 s): those checks run only with
# -o sharedstorage, where every stat is at most 1 s old (USAGE.md).

load helpers
load fs_helpers

setup() {
	common_setup
	C=$T/c
	A=$T/a
	B=$T/b
	mkvol "$C"
}
teardown() { common_teardown; }

MAX_WAIT=3

figure() {
	echo "# $*" >&3
}

now_ms() {
	echo $(($(date +%s%N) / 1000000))
}

# mounts MODE: A and B on $C, MODE "default" or "sharedstorage". Sets
# STAT=1 when stat (without an open) must converge too.
mounts() {
	local opts=()
	MODE=$1
	STAT=
	if [ "$MODE" = sharedstorage ]; then
		opts=(-o sharedstorage)
		STAT=1
	fi
	mount_vol "$C" "$A" "${opts[@]}"
	mount_vol "$C" "$B" "${opts[@]}"
}

# converge WHAT CMD...: poll CMD until it succeeds, at most $MAX_WAIT s,
# then check that it keeps succeeding (the old state never returns);
# print the window as a figure line.
converge() {
	local what=$1 t0 ts i polls=0
	shift
	t0=$(now_ms)
	while ts=$(now_ms); ! "$@" 2>/dev/null; do
		if ((ts - t0 > MAX_WAIT * 1000)); then
			echo "$MODE: $what: B still stale after $MAX_WAIT s" >&2
			return 1
		fi
		polls=$((polls + 1))
		sleep 0.02
	done
	for i in 1 2 3 4 5 6 7 8 9 10; do
		"$@" || { echo "$MODE: $what: the old state came back" >&2; return 1; }
		sleep 0.03
	done
	figure "$MODE: $what: B saw it after $((ts - t0)) ms ($polls stale checks)"
}

# stat_converge WHAT CMD...: converge, if stat must (see mounts).
stat_converge() {
	[ -z "$STAT" ] || converge "$@"
}

size_is() { [ "$(stat -c %s "$1")" = "$2" ]; }
cat_is() { [ "$(cat "$1")" = "$2" ]; }
mode_is() { [ "$(stat -c %a "$1")" = "$2" ]; }
no_open() { ! cat "$1" >/dev/null 2>&1; }
no_stat() { ! stat "$1" >/dev/null 2>&1; }
is_dir() { [ -d "$1" ]; }
# opened CMD FILE ARGS...: CMD after an open of FILE
opened() { cat "$2" >/dev/null && "$@"; }

# warm FILE CONTENT: B has FILE's attributes, entry and pages cached.
warm() {
	cat_is "$1" "$2"
	size_is "$1" $((${#2} + 1))
	cat_is "$1" "$2"
}

# append in A: B sees it
scenario_0() {
	echo one >"$A/f"
	warm "$B/f" one
	echo more >>"$A/f"
	stat_converge "append, stat" size_is "$B/f" 9
	converge "append, read" cat_is "$B/f" "$(printf 'one\nmore')"
}
@test "default: append in A: B sees it" {
	mounts default
	scenario_0
}
@test "sharedstorage: append in A: B sees it" {
	mounts sharedstorage
	scenario_0
}

# append in A: B's read sees it (no stat first)
scenario_1() {
	echo one >"$A/f"
	warm "$B/f" one
	echo more >>"$A/f"
	converge "append, read only" cat_is "$B/f" "$(printf 'one\nmore')"
}
@test "default: append in A: B's read sees it (no stat first)" {
	mounts default
	scenario_1
}
@test "sharedstorage: append in A: B's read sees it (no stat first)" {
	mounts sharedstorage
	scenario_1
}

# overwrite in place, same size, in A: B reads the new bytes
scenario_2() {
	echo aaaa >"$A/f"
	warm "$B/f" aaaa
	printf bbbb | dd of="$A/f" conv=notrunc status=none
	converge "overwrite same size, read" cat_is "$B/f" bbbb
}
@test "default: overwrite in place, same size, in A: B reads the new bytes" {
	mounts default
	scenario_2
}
@test "sharedstorage: overwrite in place, same size, in A: B reads the new bytes" {
	mounts sharedstorage
	scenario_2
}

# truncate in A: B sees it
scenario_3() {
	echo abcdefgh >"$A/f"
	warm "$B/f" abcdefgh
	truncate -s 3 "$A/f"
	stat_converge "truncate, stat" size_is "$B/f" 3
	converge "truncate, read" cat_is "$B/f" abc
}
@test "default: truncate in A: B sees it" {
	mounts default
	scenario_3
}
@test "sharedstorage: truncate in A: B sees it" {
	mounts sharedstorage
	scenario_3
}

# rm in A: B no longer finds or reads the file
scenario_4() {
	echo gone >"$A/f"
	warm "$B/f" gone
	rm "$A/f"
	stat_converge "rm, stat" no_stat "$B/f"
	converge "rm, open" no_open "$B/f"
	converge "rm, stat after an open" no_stat "$B/f"
}
@test "default: rm in A: B no longer finds or reads the file" {
	mounts default
	scenario_4
}
@test "sharedstorage: rm in A: B no longer finds or reads the file" {
	mounts sharedstorage
	scenario_4
}

# rename in A: B sees the new name and not the old
scenario_5() {
	echo moved >"$A/f"
	warm "$B/f" moved
	! stat "$B/g" 2>/dev/null # a negative entry for the new name
	mv "$A/f" "$A/g"
	# The file keeps its lower inode: by default B's cached entry for
	# the old name still opens it (the same file, now named g) until
	# entry_timeout; no stale bytes, but a stale name (USAGE.md).
	stat_converge "rename, old name, stat" no_stat "$B/f"
	stat_converge "rename, old name, open" no_open "$B/f"
	converge "rename, new name" cat_is "$B/g" moved
}
@test "default: rename in A: B sees the new name and not the old" {
	mounts default
	scenario_5
}
@test "sharedstorage: rename in A: B sees the new name and not the old" {
	mounts sharedstorage
	scenario_5
}

# mkdir in A: B finds the directory
scenario_6() {
	! stat "$B/d" 2>/dev/null
	ls "$B" >/dev/null
	mkdir "$A/d"
	converge "mkdir" is_dir "$B/d"
	converge "mkdir, listing" bash -c "ls '$B' | grep -qx d"
}
@test "default: mkdir in A: B finds the directory" {
	mounts default
	scenario_6
}
@test "sharedstorage: mkdir in A: B finds the directory" {
	mounts sharedstorage
	scenario_6
}

# chmod in A: B sees the mode
scenario_7() {
	echo x >"$A/f"
	chmod 644 "$A/f"
	warm "$B/f" x
	mode_is "$B/f" 644
	chmod 600 "$A/f"
	stat_converge "chmod, stat" mode_is "$B/f" 600
	converge "chmod, stat after an open" opened mode_is "$B/f" 600
}
@test "default: chmod in A: B sees the mode" {
	mounts default
	scenario_7
}
@test "sharedstorage: chmod in A: B sees the mode" {
	mounts sharedstorage
	scenario_7
}

# a lower file replaced by a copy (sync tool): B reads the copy
scenario_8() {
	echo version-1 >"$A/f"
	# the cipher file as a backup keeps it, timestamps and all
	lower=$(lower_of "$A/f")
	[ -n "$lower" ]
	cp -p "$lower" "$T/saved"
	echo version-2 >"$A/f"
	warm "$B/f" version-2
	# restored as rsync does: a temporary copy renamed over the file
	cp -p "$T/saved" "$lower.tmp"
	mv "$lower.tmp" "$lower"
	converge "lower replaced, read" cat_is "$B/f" version-1
	converge "lower replaced, stat" size_is "$B/f" 10
}
@test "default: a lower file replaced by a copy (sync tool): B reads the copy" {
	mounts default
	scenario_8
}
@test "sharedstorage: a lower file replaced by a copy (sync tool): B reads the copy" {
	mounts sharedstorage
	scenario_8
}

# a lower file rewritten in place, size and mtime kept: B reads it
scenario_9() {
	echo version-1 >"$A/f"
	lower=$(lower_of "$A/f")
	cp -p "$lower" "$T/saved"
	echo version-2 >"$A/f"
	warm "$B/f" version-2
	# rsync --inplace -t: same inode, same size, the old mtime back
	dd if="$T/saved" of="$lower" conv=notrunc status=none
	touch -r "$T/saved" "$lower"
	converge "lower rewritten in place, mtime kept, read" \
		cat_is "$B/f" version-1
}
@test "default: a lower file rewritten in place, size and mtime kept: B reads it" {
	mounts default
	scenario_9
}
@test "sharedstorage: a lower file rewritten in place, size and mtime kept: B reads it" {
	mounts sharedstorage
	scenario_9
}

# held_in FILE: a flock of FILE held by a background process until
# $T/release exists; waits until it holds it.
held_in() {
	rm -f "$T/release" "$T/held"
	flock -x "$1" bash -c "touch '$T/held'; while [ ! -e '$T/release' ]; do sleep 0.05; done" &
	HOLDER=$!
	for i in $(seq 1 100); do
		[ -e "$T/held" ] && return 0
		sleep 0.05
	done
	return 1
}

@test "sharedstorage: a flock in A excludes B (taken on the lower file), and a waiting one gets it" {
	mounts sharedstorage
	echo x >"$A/f"
	held_in "$A/f"
	run flock -n "$B/f" true
	[ "$status" -ne 0 ]
	run flock -n -s "$B/f" true
	[ "$status" -ne 0 ]
	# a blocking flock in B waits, and gets the lock once A lets go
	flock -x -w 20 "$B/f" touch "$T/b-had-it" &
	waiter=$!
	sleep 0.3
	[ ! -e "$T/b-had-it" ]
	touch "$T/release"
	wait "$HOLDER"
	wait "$waiter"
	[ -e "$T/b-had-it" ]
	# a wait ended by a signal ends (FUSE_INTERRUPT)
	held_in "$A/f"
	flock -x "$B/f" true &
	waiter=$!
	sleep 0.3
	kill "$waiter"
	run wait "$waiter"
	[ "$status" -ne 0 ]
	touch "$T/release"
	wait "$HOLDER"
}

@test "default: flocks stay local to a mount (USAGE.md)" {
	mounts default
	echo x >"$A/f"
	held_in "$A/f"
	run flock -n "$B/f" true
	touch "$T/release"
	wait "$HOLDER"
	[ "$status" -eq 0 ]
}
