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
# Every scenario runs three times. By default the lower directories are
# watched (inotify, src/fs/notify.c), so a stat without an open sees a
# change too, and every check runs. With -o nonotify B's next open sees
# any change (contents, size, a removed or replaced file) and new names
# show within 1 s (negative entries), but a stat without an open may show
# cached attributes up to attr_timeout (30 s): there those checks are
# left out. With -o sharedstorage every stat is at most 1 s old anyway
# (USAGE.md).

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

# mounts MODE: A and B on $C, MODE "default", "nonotify" or
# "sharedstorage". Sets STAT=1 when stat (without an open) must converge
# too.
mounts() {
	local opts=()
	MODE=$1
	STAT=1
	if [ "$MODE" != default ]; then
		opts=(-o "$MODE")
	fi
	if [ "$MODE" = nonotify ]; then
		STAT=
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
owner_is() { [ "$(stat -c %u:%g "$1")" = "$2" ]; }
mtime_is() { [ "$(stat -c %Y "$1")" = "$2" ]; }
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
@test "nonotify: append in A: B sees it" {
	mounts nonotify
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
@test "nonotify: append in A: B's read sees it (no stat first)" {
	mounts nonotify
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
@test "nonotify: overwrite in place, same size, in A: B reads the new bytes" {
	mounts nonotify
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
@test "nonotify: truncate in A: B sees it" {
	mounts nonotify
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
@test "nonotify: rm in A: B no longer finds or reads the file" {
	mounts nonotify
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
	# a negative entry for the new name (it must not exist yet)
	[ ! -e "$B/g" ]
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
@test "nonotify: rename in A: B sees the new name and not the old" {
	mounts nonotify
	scenario_5
}
@test "sharedstorage: rename in A: B sees the new name and not the old" {
	mounts sharedstorage
	scenario_5
}

# mkdir in A: B finds the directory
scenario_6() {
	[ ! -e "$B/d" ] # a negative entry
	ls "$B" >/dev/null
	mkdir "$A/d"
	converge "mkdir" is_dir "$B/d"
	converge "mkdir, listing" bash -c "ls '$B' | grep -qx d"
}
@test "default: mkdir in A: B finds the directory" {
	mounts default
	scenario_6
}
@test "nonotify: mkdir in A: B finds the directory" {
	mounts nonotify
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
@test "nonotify: chmod in A: B sees the mode" {
	mounts nonotify
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
@test "nonotify: a lower file replaced by a copy (sync tool): B reads the copy" {
	mounts nonotify
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
@test "nonotify: a lower file rewritten in place, size and mtime kept: B reads it" {
	mounts nonotify
	scenario_9
}
@test "sharedstorage: a lower file rewritten in place, size and mtime kept: B reads it" {
	mounts sharedstorage
	scenario_9
}

# held_is FD TEXT: what open descriptor FD reads from its start.
held_is() {
	[ "$(python3 -c 'import os, sys
sys.stdout.write(os.pread(int(sys.argv[1]), 4096, 0).decode(errors="replace"))' "$1")" = "$2" ]
}

# a file held open in B; its lower file rewritten in place by another
# file's (a new header: another file id), size and mtime kept
scenario_9b() {
	echo version-1 >"$A/f"
	echo version-2 >"$A/g"
	lf=$(lower_of "$A/f")
	lg=$(lower_of "$A/g")
	exec 5<"$B/f"
	held_is 5 version-1
	cp -p "$lf" "$T/saved"
	dd if="$lg" of="$lf" conv=notrunc status=none
	touch -r "$T/saved" "$lf"
	converge "lower rewritten in place, read through a held descriptor" \
		held_is 5 version-2
	exec 5<&-
	cat_is "$B/f" version-2
}
@test "default: a file held open in B, rewritten in place with another header, size and mtime kept: B's descriptor reads it" {
	mounts default
	scenario_9b
}
@test "noopen: a file held open in B, rewritten in place with another header, size and mtime kept: B's descriptor reads it" {
	mounts noopen
	scenario_9b
}
@test "noopen: a lower file rewritten in place, size and mtime kept: B reads it" {
	mounts noopen
	scenario_9
}

# a lower file replaced by an older copy of another size, no open in B
scenario_10() {
	echo short >"$A/f"
	lower=$(lower_of "$A/f")
	[ -n "$lower" ]
	cp -p "$lower" "$T/saved"
	echo "a much longer version" >"$A/f"
	size_is "$B/f" 22
	# restored as rsync does, straight into the cipher directory
	cp -p "$T/saved" "$lower.tmp"
	mv "$lower.tmp" "$lower"
	stat_converge "lower replaced, stat (no open)" size_is "$B/f" 6
	converge "lower replaced, read" cat_is "$B/f" short
}
@test "default: a lower file replaced by a copy, stat only: B sees its size" {
	mounts default
	scenario_10
}
@test "nonotify: a lower file replaced by a copy, stat only: B sees its size" {
	mounts nonotify
	scenario_10
}
@test "sharedstorage: a lower file replaced by a copy, stat only: B sees its size" {
	mounts sharedstorage
	scenario_10
}

# a new file in A after B cached its absence: stat and ls in B find it;
# also a long name (stored with a sidecar), a name in a subdirectory,
# and a name renamed into place as a sync tool does (a temporary name
# first, B having looked the final name up before)
scenario_11() {
	local l
	l=$(printf 'n%.0s' $(seq 1 200))
	mkdir "$A/sub"
	refute stat "$B/n"
	refute stat "$B/$l"
	refute stat "$B/sub/n"
	refute stat "$B/moved"
	ls "$B" >/dev/null
	echo new >"$A/n"
	converge "new file, stat" size_is "$B/n" 4
	converge "new file, listing" bash -c "ls '$B' | grep -qx n"
	echo long >"$A/$l"
	converge "new long name, stat" size_is "$B/$l" 5
	echo deeper >"$A/sub/n"
	converge "new file in a subdirectory, stat" size_is "$B/sub/n" 7
	echo sync >"$A/.moved.tmp"
	mv "$A/.moved.tmp" "$A/moved"
	converge "renamed into place, stat" size_is "$B/moved" 5
}
@test "default: a new file in A after a negative lookup in B: B finds it" {
	mounts default
	scenario_11
}
@test "nonotify: a new file in A after a negative lookup in B: B finds it" {
	mounts nonotify
	scenario_11
}
@test "sharedstorage: a new file in A after a negative lookup in B: B finds it" {
	mounts sharedstorage
	scenario_11
}

# names B never looked up, made and removed in A while B keeps the
# listings (cached by the kernel, with or without OPENDIR): B's next
# listing shows them, in the root and in a subdirectory, and a name
# removed in A leaves B's listing (a long name too). Listed without a
# stat of the directory (ls would stat it, and the kernel, which drops
# a directory's atime after reading it, would then ask for its
# attributes and see the new mtime by itself), after a stat that made
# B's attributes of both directories fresh: only what B is told, or an
# opendir that looks at the lower directory, can show the change.
lsdir() {
	python3 -c 'import os, sys; print("\n".join(sorted(os.listdir(sys.argv[1]))))' "$1"
}
scenario_11l() {
	local l
	l=$(printf 'L%.0s' $(seq 1 220))
	mkdir "$A/sub"
	echo old >"$A/sub/old"
	echo gone >"$A/$l"
	lsdir "$B" >/dev/null
	lsdir "$B/sub" >/dev/null
	stat "$B" "$B/sub" >/dev/null
	echo new >"$A/fresh"
	converge "new name never looked up, listing" \
		bash -c "$(declare -f lsdir); lsdir '$B' | grep -qx fresh"
	echo new >"$A/sub/fresh"
	converge "new name in a subdirectory, listing" \
		bash -c "$(declare -f lsdir); lsdir '$B/sub' | grep -qx fresh"
	rm "$A/sub/old"
	converge "removed name, listing" \
		bash -c "$(declare -f lsdir); ! lsdir '$B/sub' | grep -qx old"
	rm "$A/$l"
	converge "removed long name, listing" \
		bash -c "$(declare -f lsdir); ! lsdir '$B' | grep -qx '$l'"
	[ "$(lsdir "$B" | tr '\n' ' ')" = "fresh sub " ]
	[ "$(lsdir "$B/sub")" = fresh ]
}
@test "default: names made and removed in A that B never looked up: B's listings" {
	mounts default
	scenario_11l
}
@test "nonotify: names made and removed in A that B never looked up: B's listings" {
	mounts nonotify
	scenario_11l
}
@test "sharedstorage: names made and removed in A that B never looked up: B's listings" {
	mounts sharedstorage
	scenario_11l
}

# chown and touch -d in A: B's stat sees owner and mtime
scenario_12() {
	echo x >"$A/f"
	warm "$B/f" x
	mkdir "$A/d"
	stat "$B/d" >/dev/null
	chown 1234:5678 "$A/f"
	stat_converge "chown, stat" owner_is "$B/f" 1234:5678
	touch -d '2001-01-01 00:00:00 UTC' "$A/f"
	stat_converge "touch -d, stat" mtime_is "$B/f" 978307200
	chmod 700 "$A/d"
	stat_converge "chmod of a directory, stat" mode_is "$B/d" 700
	converge "chown, touch -d: stat after an open" opened owner_is "$B/f" 1234:5678
	converge "touch -d, stat after an open" opened mtime_is "$B/f" 978307200
}
@test "default: chown, touch -d, chmod of a directory in A: B's stat sees them" {
	mounts default
	scenario_12
}
@test "nonotify: chown, touch -d, chmod of a directory in A: B's stat sees them" {
	mounts nonotify
	scenario_12
}
@test "sharedstorage: chown, touch -d, chmod of a directory in A: B's stat sees them" {
	mounts sharedstorage
	scenario_12
}

# a file in a subdirectory removed in A, a directory renamed: B's stat
scenario_13() {
	mkdir -p "$A/d/e"
	echo x >"$A/d/e/f"
	warm "$B/d/e/f" x
	rm "$A/d/e/f"
	stat_converge "rm in a subdirectory, stat" no_stat "$B/d/e/f"
	mv "$A/d/e" "$A/d/e2"
	stat_converge "directory renamed, old name, stat" no_stat "$B/d/e"
	converge "directory renamed, new name" is_dir "$B/d/e2"
}
@test "default: rm and a directory rename in a subdirectory of A: B's stat" {
	mounts default
	scenario_13
}
@test "nonotify: rm and a directory rename in a subdirectory of A: B's stat" {
	mounts nonotify
	scenario_13
}
@test "sharedstorage: rm and a directory rename in a subdirectory of A: B's stat" {
	mounts sharedstorage
	scenario_13
}

# a long name (stored with a sidecar, FORMAT 4.3) removed and renamed in A
scenario_14() {
	local l k
	l=$(printf 'l%.0s' $(seq 1 200))
	k=$(printf 'k%.0s' $(seq 1 200))
	echo x >"$A/$l"
	echo y >"$A/$k"
	warm "$B/$l" x
	warm "$B/$k" y
	rm "$A/$l"
	stat_converge "long name removed, stat" no_stat "$B/$l"
	mv "$A/$k" "$A/short"
	stat_converge "long name renamed, old name, stat" no_stat "$B/$k"
	converge "long name renamed, new name" cat_is "$B/short" y
}
@test "default: a long name removed and renamed in A: B's stat" {
	mounts default
	scenario_14
}
@test "nonotify: a long name removed and renamed in A: B's stat" {
	mounts nonotify
	scenario_14
}
@test "sharedstorage: a long name removed and renamed in A: B's stat" {
	mounts sharedstorage
	scenario_14
}

# daemon_of MNT: the pid of the daemon serving MNT.
daemon_of() {
	local p
	for p in $(pgrep -x xtsfs); do
		if tr '\0' '\n' </proc/$p/cmdline | grep -qxF "$1"; then
			echo "$p"
			return 0
		fi
	done
	return 1
}

# rchar PID: the bytes PID has read, all descriptors (/proc/PID/io).
rchar() { awk '/^rchar:/ {print $2}' "/proc/$1/io"; }

@test "default: one notifier thread; -o nonotify: none" {
	mounts default
	mount_vol "$C" "$T/n" -o nonotify
	pa=$(daemon_of "$A")
	pn=$(daemon_of "$T/n")
	[ -n "$pa" ] && [ -n "$pn" ]
	[ "$(cat /proc/$pa/task/*/comm | grep -cx xtsfs-notify)" = 1 ]
	[ "$(cat /proc/$pn/task/*/comm | grep -cx xtsfs-notify)" = 0 ]
}

# B's page cache survives what does not change its files: changes in A to
# other files, and B's own writes (which raise inotify events too: the
# notifier must know them for its own). Measured by what B's daemon
# reads: a re-read from B's page cache reads nothing of the lower file.
@test "default: B keeps its page cache through others' changes elsewhere and its own writes" {
	mounts default
	pb=$(daemon_of "$B")
	[ -n "$pb" ]
	head -c $((1024 * 1024)) /dev/urandom >"$A/big"
	cat "$B/big" >/dev/null
	dd if=/dev/urandom of="$B/own" bs=64k count=16 status=none
	cat "$B/own" >/dev/null # (written pages are read once more)
	# B's own changes: attributes of a cached file, writes and names
	chmod 600 "$B/own"
	touch "$B/own"
	chown 1234 "$B/own"
	dd if=/dev/urandom of="$B/w" bs=64k count=16 status=none
	dd if=/dev/urandom of="$B/w" bs=64k count=4 seek=4 conv=notrunc status=none
	truncate -s 100k "$B/w"
	mkdir "$B/bd"
	mv "$B/w" "$B/bd/w"
	rm -r "$B/bd"
	echo x >"$A/other"
	echo y >>"$A/other"
	mkdir "$A/dd"
	# a sentinel only the notifier can show at once (a cached positive
	# stat): once B sees it, every event before it has been handled
	echo s >"$A/sentinel"
	chmod 644 "$A/sentinel"
	stat "$B/sentinel" >/dev/null
	chmod 600 "$A/sentinel"
	converge "sentinel" mode_is "$B/sentinel" 600
	r0=$(rchar "$pb")
	cat "$B/big" "$B/own" >/dev/null
	r1=$(rchar "$pb")
	figure "default: B's daemon read $((r1 - r0)) bytes to re-read 2 MiB it had cached"
	[ $((r1 - r0)) -lt $((256 * 1024)) ]
	# and a file that did change is read anew
	echo more >>"$A/big"
	converge "append, stat" size_is "$B/big" $((1024 * 1024 + 5))
	r0=$(rchar "$pb")
	cat "$B/big" >/dev/null
	r1=$(rchar "$pb")
	[ $((r1 - r0)) -ge $((1024 * 1024)) ]
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
