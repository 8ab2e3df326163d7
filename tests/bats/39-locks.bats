#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# fcntl(2) record locks (issue 19 part 2). With -o sharedstorage they
# are taken on the lower file (src/fs/locks.c): two mounts of one cipher
# directory exclude each other as two machines on NFS do. Within one
# mount, with or without it, they behave as on ext4: the same probes
# through a mount and in a plain directory must give the same answers.
# Processes are driven by tests/tools/locktool.c, step by step; a
# process waiting in F_SETLKW is recognised by its wait for a FUSE answer
# (/proc/PID/wchan), never by a delay.

load helpers
load fs_helpers

setup() {
	common_setup
	C=$T/c
	A=$T/a
	B=$T/b
	P=$T/plain
	LT=$XTSFS_BUILD/tests/locktool
	[ -x "$LT" ]
	mkvol "$C"
	mkdir -p "$P"
	declare -gA PIDS=()
}
teardown() {
	local p
	# a helper left running (a failed test) must not keep a mount busy
	for p in "${PIDS[@]}"; do
		kill -KILL "$p" 2>/dev/null || true
	done
	common_teardown
}

# mounts MODE [xtsfs options...]: A and B on $C, MODE "default" or
# "sharedstorage".
mounts() {
	local opts=()
	[ "$1" = sharedstorage ] && opts=(-o sharedstorage)
	shift
	mount_vol "$C" "$A" "${opts[@]}" "$@"
	mount_vol "$C" "$B" "${opts[@]}" "$@"
}

# bg NAME FILE STEP...: locktool in the background, its output in
# $T/NAME.out, its pid in PIDS[NAME].
bg() {
	local name=$1 file=$2
	shift 2
	rm -f "$T/$name".*
	"$LT" "$file" "$@" >"$T/$name.out" 2>"$T/$name.err" 3>&- &
	PIDS[$name]=$!
}

# await_file NAME PATH: until PATH exists; fails if NAME ended first.
# (A bound against a hang, not a timing assertion.)
await_file() {
	local i
	for i in $(seq 1 600); do
		[ -e "$2" ] && return 0
		if ! kill -0 "${PIDS[$1]}" 2>/dev/null; then
			[ -e "$2" ] && return 0
			echo "$1 ended before $2:" >&2
			cat "$T/$1.out" "$T/$1.err" >&2
			return 1
		fi
		sleep 0.05
	done
	echo "$1 never got to $2" >&2
	return 1
}

# hold NAME FILE STEP...: run the steps in the background and keep the
# process (and what it holds) until let_go NAME.
hold() {
	local name=$1 file=$2
	shift 2
	bg "$name" "$file" "$@" "touch:$T/$name.ready" "await:$T/$name.go"
	await_file "$name" "$T/$name.ready"
}

# finish NAME: wait for NAME; STATUS its exit status, OUT its output.
finish() {
	STATUS=0
	wait "${PIDS[$1]}" || STATUS=$?
	OUT=$(cat "$T/$1.out")
	unset "PIDS[$1]"
}

# let_go NAME: the held process goes on (and ends); then finish NAME.
let_go() {
	touch "$T/$1.go"
	finish "$1"
}

# blocked NAME: until NAME waits for the daemon's answer to a request
# (after its last touch: the F_SETLKW or flock that follows it).
blocked() {
	local i
	for i in $(seq 1 600); do
		[ "$(cat "/proc/${PIDS[$1]}/wchan" 2>/dev/null)" = \
		  request_wait_answer ] && return 0
		kill -0 "${PIDS[$1]}" 2>/dev/null || {
			echo "$1 ended instead of waiting:" >&2
			cat "$T/$1.out" "$T/$1.err" >&2
			return 1
		}
		sleep 0.05
	done
	echo "$1 never waited" >&2
	return 1
}

# lt FILE STEP...: locktool in the foreground (run: $status, $output).
lt() {
	run "$LT" "$@"
}

# ---- two mounts, -o sharedstorage ------------------------------------------

@test "sharedstorage: a write lock through A excludes an overlapping one through B, not a disjoint one; F_GETLK through B shows it" {
	mounts sharedstorage
	echo data >"$A/f"
	hold h "$A/f" open:rw set:w:10:20
	lt "$B/f" open:rw set:w:25:10
	[ "$status" -eq 3 ]
	lt "$B/f" open:rw set:r:0:11
	[ "$status" -eq 3 ]
	lt "$B/f" open:rw ofd:w:29:1
	[ "$status" -eq 3 ]
	lt "$B/f" open:rw set:w:30:10
	[ "$status" -eq 0 ]
	lt "$B/f" open:rw set:w:0:10 set:r:30:0
	[ "$status" -eq 0 ]
	# type and range; the holder's process is not known from another
	# mount: pid 0 (USAGE.md); F_OFD_GETLK always says -1
	lt "$B/f" open:r get:r:0:0
	[ "$output" = "w 10 20 0" ]
	lt "$B/f" open:r ofdget:w:29:5
	[ "$output" = "w 10 20 -1" ]
	lt "$B/f" open:r get:w:30:0
	[ "$output" = none ]
	# through A, by another process: the holder, as on ext4
	lt "$A/f" open:r get:w:0:0
	[ "$output" = "w 10 20 ${PIDS[h]}" ]
	let_go h
	[ "$STATUS" -eq 0 ]
	lt "$B/f" open:rw set:w:0:0
	[ "$status" -eq 0 ]
	lt "$B/f" open:r get:w:0:0
	[ "$output" = none ]
}

@test "sharedstorage: a lock through B excludes A too (OFD locks as well)" {
	mounts sharedstorage
	echo data >"$A/f"
	hold h "$B/f" open:rw ofd:w:0:5 ofd:r:100:0
	lt "$A/f" open:rw set:w:4:1
	[ "$status" -eq 3 ]
	lt "$A/f" open:rw set:r:200:1
	[ "$status" -eq 0 ]
	lt "$A/f" open:rw set:w:200:1
	[ "$status" -eq 3 ]
	lt "$A/f" open:rw set:w:5:95
	[ "$status" -eq 0 ]
	let_go h
	lt "$A/f" open:rw set:w:0:0
	[ "$status" -eq 0 ]
}

@test "sharedstorage: read locks are shared across mounts, and keep a writer out until both go" {
	mounts sharedstorage
	echo data >"$A/f"
	hold r1 "$A/f" open:r set:r:0:100
	hold r2 "$B/f" open:r set:r:50:100
	lt "$B/f" open:rw set:r:0:0
	[ "$status" -eq 0 ]
	lt "$B/f" open:rw set:w:0:1
	[ "$status" -eq 3 ]
	lt "$A/f" open:rw set:w:120:1
	[ "$status" -eq 3 ]
	let_go r1
	lt "$B/f" open:rw set:w:0:50
	[ "$status" -eq 0 ]
	lt "$A/f" open:rw set:w:60:1
	[ "$status" -eq 3 ]
	let_go r2
	lt "$A/f" open:rw set:w:0:0
	[ "$status" -eq 0 ]
}

@test "sharedstorage: a lock goes when its process exits, is killed, or closes any descriptor of the file (not an OFD lock)" {
	mounts sharedstorage
	echo data >"$A/f"
	# exit
	hold h "$A/f" open:rw set:w:0:10
	let_go h
	lt "$B/f" open:rw set:w:0:10
	[ "$status" -eq 0 ]
	# killed
	hold h "$A/f" open:rw set:w:0:10
	kill -KILL "${PIDS[h]}"
	finish h
	lt "$B/f" open:rw set:w:0:10
	[ "$status" -eq 0 ]
	# the process lives on, its descriptor closed
	bg h "$A/f" open:rw set:w:0:10 touch:"$T/locked" await:"$T/close" \
		close touch:"$T/closed" await:"$T/h.go"
	await_file h "$T/locked"
	lt "$B/f" open:rw set:w:0:10
	[ "$status" -eq 3 ]
	touch "$T/close"
	await_file h "$T/closed"
	lt "$B/f" open:rw set:w:0:10
	[ "$status" -eq 0 ]
	let_go h
	# another descriptor of the file closed (POSIX: all its locks go)
	bg h "$A/f" open:rw set:w:0:10 touch:"$T/locked2" await:"$T/close2" \
		open:r close touch:"$T/closed2" await:"$T/h.go"
	await_file h "$T/locked2"
	lt "$B/f" open:rw set:w:0:10
	[ "$status" -eq 3 ]
	touch "$T/close2"
	await_file h "$T/closed2"
	lt "$B/f" open:rw set:w:0:10
	[ "$status" -eq 0 ]
	let_go h
	# an OFD lock stays until its own open file is closed
	bg h "$A/f" open:rw ofd:w:0:10 open:r close touch:"$T/other" \
		await:"$T/close3" close touch:"$T/closed3" await:"$T/h.go"
	await_file h "$T/other"
	lt "$B/f" open:rw set:w:0:10
	[ "$status" -eq 3 ]
	touch "$T/close3"
	await_file h "$T/closed3"
	lt "$B/f" open:rw set:w:0:10
	[ "$status" -eq 0 ]
	let_go h
}

@test "sharedstorage: F_SETLKW through B waits for A's lock and gets it when A lets go" {
	mounts sharedstorage
	echo data >"$A/f"
	hold h "$A/f" open:rw set:w:0:10
	bg w "$B/f" open:rw touch:"$T/w.start" setw:w:5:1 touch:"$T/w.got" \
		get:w:0:0
	await_file w "$T/w.start"
	blocked w
	[ ! -e "$T/w.got" ]
	bg o "$B/f" open:rw touch:"$T/o.start" ofdw:r:0:1 touch:"$T/o.got"
	await_file o "$T/o.start"
	blocked o
	let_go h
	finish w
	[ "$STATUS" -eq 0 ]
	[ -e "$T/w.got" ]
	finish o
	[ "$STATUS" -eq 0 ]
	# gone with its process: A can lock the range again
	lt "$A/f" open:rw set:w:0:0
	[ "$status" -eq 0 ]
}

@test "sharedstorage: a waiting F_SETLKW ends on a signal (EINTR, or killed), takes nothing, and the mount goes on" {
	mounts sharedstorage
	echo data >"$A/f"
	hold h "$A/f" open:rw set:w:0:10
	bg w "$B/f" open:rw intr touch:"$T/w.start" setw:w:0:1 touch:"$T/w.got"
	await_file w "$T/w.start"
	blocked w
	kill -USR1 "${PIDS[w]}"
	finish w
	[ "$STATUS" -eq 4 ]
	[ "$OUT" = interrupted ]
	[ ! -e "$T/w.got" ]
	bg k "$B/f" open:rw touch:"$T/k.start" setw:w:0:1 touch:"$T/k.got"
	await_file k "$T/k.start"
	blocked k
	kill -TERM "${PIDS[k]}"
	finish k
	[ "$STATUS" -eq 143 ]
	[ ! -e "$T/k.got" ]
	# B still serves, its locks too
	[ "$(cat "$B/f")" = data ]
	lt "$B/f" open:rw set:w:10:1
	[ "$status" -eq 0 ]
	let_go h
	# the interrupted waits hold nothing
	lt "$A/f" open:rw set:w:0:0
	[ "$status" -eq 0 ]
	lt "$A/f" open:r get:w:0:0
	[ "$output" = none ]
}

@test "sharedstorage, one session thread (-s): a wait holds no thread, for fcntl and flock" {
	mounts sharedstorage -s
	echo data >"$A/f"
	# the holder in the same mount: its unlock needs the one thread
	hold h "$B/f" open:rw set:w:0:10
	bg w "$B/f" open:rw touch:"$T/w.start" setw:w:0:1 touch:"$T/w.got"
	await_file w "$T/w.start"
	blocked w
	run timeout 20 cat "$B/f"
	[ "$output" = data ]
	lt "$B/f" open:rw set:w:20:1
	[ "$status" -eq 0 ]
	let_go h
	finish w
	[ "$STATUS" -eq 0 ]
	[ -e "$T/w.got" ]
	# a blocking flock (before, it kept the only thread until the
	# daemon was killed)
	hold fh "$B/f" open:rw flock:ex
	bg fw "$B/f" open:rw touch:"$T/fw.start" flock:ex touch:"$T/fw.got"
	await_file fw "$T/fw.start"
	blocked fw
	run timeout 20 cat "$B/f"
	[ "$output" = data ]
	let_go fh
	finish fw
	[ "$STATUS" -eq 0 ]
	[ -e "$T/fw.got" ]
}

@test "sharedstorage: data written under a lock in A is what B reads under the lock, B's cached pages dropped" {
	mounts sharedstorage
	echo version-1 >"$A/f"
	# B keeps the file open and its pages cached
	bg r "$B/f" open:r cat touch:"$T/r.read" await:"$T/r.next" setw:r:0:0 \
		cat
	await_file r "$T/r.read"
	lt "$A/f" open:rw set:w:0:0
	[ "$status" -eq 0 ]
	# same size: nothing but the lock tells B's kernel
	printf 'version-2\n' | dd of="$A/f" conv=notrunc status=none
	touch "$T/r.next"
	finish r
	[ "$STATUS" -eq 0 ]
	[ "$OUT" = "$(printf 'version-1\nversion-2')" ]
}

@test "sharedstorage: flock and fcntl locks stay independent, as on ext4" {
	mounts sharedstorage
	for f in "$P/f" "$A/f"; do
		echo data >"$f"
	done
	for f in "$P/f" "$A/f"; do
		other=$f
		[ "$f" = "$A/f" ] && other=$B/f
		hold h "$f" open:rw flock:ex
		lt "$other" open:rw set:w:0:0
		[ "$status" -eq 0 ]
		lt "$other" open:rw flock-nb:sh
		[ "$status" -eq 3 ]
		let_go h
		hold h "$f" open:rw set:w:0:0
		lt "$other" open:rw flock-nb:ex
		[ "$status" -eq 0 ]
		lt "$other" open:rw set:r:0:1
		[ "$status" -eq 3 ]
		let_go h
	done
}

# open_fds PID: the descriptors of PID other than O_PATH ones. Those are
# the nodes' own, which come and go with the kernel's cache (change
# notification makes it drop and look up entries again); what locks open
# (an owner's description of the lower file) is O_RDWR or O_RDONLY.
open_fds() {
	local f n=0
	for f in /proc/"$1"/fdinfo/*; do
		(( (8#$(awk '/^flags:/ {print $2}' "$f") & 8#10000000) == 0 )) && n=$((n + 1))
	done
	echo "$n"
}

@test "sharedstorage: no descriptor leaks in the daemon after locks, unlocks, closes and interrupted waits" {
	mount_vol "$C" "$A" -o sharedstorage
	start_fg "$C" "$B" -o sharedstorage
	echo data >"$A/f"
	lt "$B/f" open:rw set:w:0:1 # B knows the file (its node's descriptor)
	[ "$status" -eq 0 ]
	before=$(open_fds "$DAEMON_PID")
	for i in $(seq 1 40); do
		"$LT" "$B/f" open:rw set:w:0:10 set:u:0:5 ofd:r:20:5 open:r \
			set:r:40:1 get:w:0:0 close set:w:50:1 open:rw ofd:w:60:1 \
			flock:ex >/dev/null
		"$LT" "$B/f" open:r set:r:0:0 open:rw set:u:0:0 >/dev/null
	done
	hold h "$A/f" open:rw set:w:0:0
	for i in 1 2 3; do
		bg w "$B/f" open:rw touch:"$T/w.start" setw:w:0:1
		await_file w "$T/w.start"
		blocked w
		kill -TERM "${PIDS[w]}"
		finish w
		[ "$STATUS" -eq 143 ]
	done
	let_go h
	after=$(open_fds "$DAEMON_PID")
	echo "# daemon descriptors: $before before, $after after" >&3
	[ "$after" -eq "$before" ]
}

# ---- within one mount: as on ext4 ------------------------------------------

# lock_rules FILE: what other processes see of one process's locks on
# FILE, one line per probe (the holder's pid written as HOLDER).
lock_rules() {
	local f=$1 probe
	echo data >"$f"
	# merged, split, upgraded and downgraded by one owner
	hold h "$f" open:rw set:w:0:100 set:u:40:20 set:r:200:50 open:rw \
		set:w:300:10 set:r:300:5 ofd:w:400:10
	for probe in set:w:0:1 set:w:39:1 set:w:40:20 set:w:59:2 set:r:60:1 \
		set:r:200:10 set:w:249:1 set:w:250:1 set:r:300:5 set:r:305:1 \
		set:w:300:10 ofd:w:45:5 ofd:r:220:5 ofd:w:405:1 set:r:400:1 \
		get:w:0:0 get:r:0:0 get:r:100:0 get:w:200:0 get:w:240:100 \
		get:r:250:0 get:r:303:10 ofdget:w:401:0; do
		run "$LT" "$f" open:rw "$probe"
		[[ $output =~ ^(.*\ )${PIDS[h]}$ ]] &&
			output="${BASH_REMATCH[1]}HOLDER"
		echo "$probe: $status $output"
	done
	let_go h
	run "$LT" "$f" open:rw set:w:0:0
	echo "after exit: $status $output"
	# one process: its POSIX locks are one owner, its OFD locks one per
	# open file; closing any descriptor drops the POSIX ones only
	run "$LT" "$f" open:rw set:w:0:10 open:rw set:w:5:10
	echo "two descriptors, POSIX: $status $output"
	run "$LT" "$f" open:rw ofd:w:0:10 open:rw ofd:w:5:10
	echo "two descriptors, OFD: $status $output"
	run "$LT" "$f" open:rw set:w:0:10 open:rw ofd:w:5:10
	echo "POSIX then OFD: $status $output"
	hold h "$f" open:rw set:w:0:10 ofd:w:20:10 open:r close
	run "$LT" "$f" open:rw set:w:0:10
	echo "after a close, POSIX: $status $output"
	run "$LT" "$f" open:rw set:w:20:10
	echo "after a close, OFD: $status $output"
	let_go h
}

# same_as_ext4 DIR: lock_rules in DIR and in the plain directory agree.
same_as_ext4() {
	lock_rules "$P/f" >"$T/rules.plain"
	lock_rules "$1/f" >"$T/rules.mount"
	grep -q busy "$T/rules.plain"
	grep -q HOLDER "$T/rules.plain"
	diff -u "$T/rules.plain" "$T/rules.mount"
}

@test "sharedstorage: within one mount, two processes' locks meet as on ext4" {
	mounts sharedstorage
	same_as_ext4 "$A"
}

@test "default: within one mount, locks meet as on ext4 (the kernel's own)" {
	mounts default
	same_as_ext4 "$A"
}

@test "default: record locks stay local to a mount (USAGE.md)" {
	mounts default
	echo data >"$A/f"
	hold h "$A/f" open:rw set:w:0:0
	lt "$A/f" open:rw set:w:0:1
	[ "$status" -eq 3 ]
	lt "$B/f" open:rw set:w:0:1
	let_go h
	[ "$status" -eq 0 ]
}
