#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# FUSE over io_uring (-o uring): the ring really carries the requests,
# /dev/fuse beside it still brings every FORGET, ordinary operations
# work through it, and so do unmount, remount, a
# lock answered later by another thread, a killed daemon, and the
# fallback to /dev/fuse when the kernel does not offer it. The fuse
# module's enable_uring parameter (Linux 6.14+) is set for this file and
# put back as it was afterwards. (tests/run-all.sh also runs the core
# files 20, 25, 27 and 30, and 39-locks, again over the ring.)

load helpers
load fs_helpers

PARAM=/sys/module/fuse/parameters/enable_uring

setup_file() {
	if [ -w "$PARAM" ]; then
		cat "$PARAM" >"$BATS_FILE_TMPDIR/enable_uring.was"
		echo 1 >"$PARAM"
	fi
}

teardown_file() {
	if [ -f "$BATS_FILE_TMPDIR/enable_uring.was" ]; then
		cat "$BATS_FILE_TMPDIR/enable_uring.was" >"$PARAM"
	fi
}

setup() {
	common_setup
	[ -w "$PARAM" ] || skip "this kernel has no FUSE over io_uring ($PARAM)"
	C=$T/c
	M=$T/m
	R=$T/ref
	mkdir -p "$R"
	mkvol "$C"
}

teardown() {
	common_teardown
	# a test that turned it off may have failed before turning it on
	[ ! -w "$PARAM" ] || echo 1 >"$PARAM"
}

# served: the count the daemon logged at its end (after wait $DAEMON_PID).
served() {
	sed -n 's/.*io_uring: \([0-9]*\) requests served through the ring.*/\1/p' \
		"$T/daemon.log"
}

# stop_fg: unmount $M (a hang is bounded, not timed) and wait for the
# foreground daemon to exit 0.
stop_fg() {
	timeout 60 fusermount3 -u "$M"
	timeout 60 tail --pid="$DAEMON_PID" -f /dev/null
	wait "$DAEMON_PID"
}

# reads_of PID: read(2)-like calls the process made so far (all threads).
reads_of() {
	awk '/^syscr:/ { print $2 }' "/proc/$1/io"
}

@test "-o uring: the ring serves the requests, /dev/fuse sees few reads" {
	local before after n without with
	# without the ring: one read of /dev/fuse per request at least
	start_fg "$C" "$M" -o nonotify
	before=$(reads_of "$DAEMON_PID")
	for i in $(seq 1 200); do : >"$M/a$i"; done
	after=$(reads_of "$DAEMON_PID")
	without=$((after - before))
	echo "without: $without reads for 200 creates"
	[ "$without" -ge 600 ] # LOOKUP, CREATE, RELEASE each
	stop_fg
	[ -z "$(served)" ]

	start_fg "$C" "$M" -o nonotify,uring
	grep -q "FUSE over io_uring: [0-9]* queues, [0-9]* threads each" \
		"$T/daemon.log"
	before=$(reads_of "$DAEMON_PID")
	for i in $(seq 1 200); do : >"$M/b$i"; done
	after=$(reads_of "$DAEMON_PID")
	with=$((after - before))
	echo "with: $with reads for 200 creates"
	# the daemon's own reads stay (a create reads one lower block)
	[ "$with" -le $((without - 400)) ]
	stop_fg
	n=$(served)
	echo "served: $n"
	[ -n "$n" ]
	[ "$n" -ge 200 ]
	[ "$(ls "$C" | grep -vc '^xtsfs\.')" -eq 400 ]
}

# fds_of PID: the descriptors the process holds.
fds_of() {
	ls "/proc/$1/fd" | wc -l
}

# wait_fds PID N: until PID holds N descriptors or fewer (bounded: 30 s).
wait_fds() {
	for _ in $(seq 1 300); do
		[ "$(fds_of "$1")" -le "$2" ] && return 0
		sleep 0.1
	done
	echo "still $(fds_of "$1") descriptors, wanted $2 or fewer"
	return 1
}

@test "-o uring: /dev/fuse still brings every FORGET, after a quiet spell and in a burst" {
	local base before after
	start_fg "$C" "$M" -o nonotify,uring
	grep -q "FUSE over io_uring" "$T/daemon.log"
	base=$(fds_of "$DAEMON_PID")
	# the kernel knows each file: the daemon holds a descriptor for each
	for i in $(seq 1 400); do : >"$M/b$i"; done
	: >"$M/q1"
	: >"$M/q2"
	[ "$(fds_of "$DAEMON_PID")" -ge $((base + 402)) ]
	# the first FORGET may go to a thread that began its read before the
	# ring served; the second is read by the one reader there is then,
	# which has slept until it came: no request on /dev/fuse for longer
	# than it polls (fuse_uring.c, uring_dev_read)
	rm "$M/q1"
	wait_fds "$DAEMON_PID" $((base + 401))
	sleep 0.2
	rm "$M/q2"
	wait_fds "$DAEMON_PID" $((base + 400))
	before=$(reads_of "$DAEMON_PID")
	rm "$M"/b*
	wait_fds "$DAEMON_PID" "$base"
	after=$(reads_of "$DAEMON_PID")
	# a measure, not a bound: one read per FORGET before they were
	# batched (about 300 then, 7 to 18 batched, 2026-12-06)
	echo "reads for 400 FORGETs: $((after - before))"
	[ -z "$(ls "$M")" ]
	[ "$(ls "$C" | grep -vc '^xtsfs\.')" -eq 0 ]
	stop_fg
}

# pinned_threads PID: the daemon's threads allowed on one CPU only.
pinned_threads() {
	grep -h '^Cpus_allowed_list:' /proc/"$1"/task/*/status |
		awk '$2 ~ /^[0-9]+$/' | wc -l
}

@test "-o uring pins each ring thread to its queue's CPU; -o uring_unpinned does not" {
	local n
	[ "$(nproc)" -ge 2 ] || skip "one CPU: every thread is on it anyway"
	start_fg "$C" "$M" -o uring
	grep -q "FUSE over io_uring: .* pinned to its CPU" "$T/daemon.log"
	n=$(pinned_threads "$DAEMON_PID")
	echo "pinned: $n"
	[ "$n" -ge "$(nproc)" ] # at least one per queue
	stop_fg

	start_fg "$C" "$M" -o uring_unpinned
	grep -q "FUSE over io_uring: .* on any CPU" "$T/daemon.log"
	echo "pinned: $(pinned_threads "$DAEMON_PID")"
	[ "$(pinned_threads "$DAEMON_PID")" -eq 0 ]
	mkdata "$R/f" 1048576 5
	cp "$R/f" "$M/f"
	cmp "$R/f" "$M/f"
	stop_fg
	n=$(served)
	echo "served: $n"
	[ -n "$n" ] && [ "$n" -gt 0 ]
}

@test "-o uring: contents, names, links, xattrs, holes; read back over /dev/fuse" {
	local s
	start_fg "$C" "$M" -o uring
	for s in 0 1 4095 4097 1048576 3145733; do
		mkdata "$R/f$s" "$s" "$s"
		cp "$R/f$s" "$M/f$s"
	done
	for s in 0 1 4095 4097 1048576 3145733; do
		cmp "$M/f$s" "$R/f$s"
	done
	mkdir -p "$M/a/b/c"
	echo deep >"$M/a/b/c/x"
	mv "$M/a/b" "$M/moved"
	[ "$(cat "$M/moved/c/x")" = deep ]
	ln -s moved/c/x "$M/sym"
	[ "$(readlink "$M/sym")" = moved/c/x ]
	[ "$(cat "$M/sym")" = deep ]
	ln "$M/f4097" "$M/hard"
	[ "$(stat -c %h "$M/f4097")" -eq 2 ]
	setfattr -n user.color -v blue "$M/f1"
	[ "$(getfattr --only-values -n user.color "$M/f1")" = blue ]
	truncate -s 10000 "$M/f4095"
	truncate -s 10000 "$R/f4095"
	cmp "$M/f4095" "$R/f4095"
	dd if=/dev/zero of="$M/sparse" bs=1 count=1 seek=5000000 2>/dev/null
	[ "$(stat -c %s "$M/sparse")" -eq 5000001 ]
	rm "$M/f0" "$M/hard"
	rmdir "$M/a"
	[ "$(ls "$M" | LC_ALL=C sort | tr '\n' ' ')" = \
	  "f1 f1048576 f3145733 f4095 f4097 moved sparse sym " ]
	stop_fg
	[ "$(served)" -gt 0 ]

	mount_vol "$C" "$M"
	for s in 1 4095 4097 1048576 3145733; do
		cmp "$M/f$s" "$R/f$s"
	done
	[ "$(cat "$M/moved/c/x")" = deep ]
	[ "$(getfattr --only-values -n user.color "$M/f1")" = blue ]
	umount_vol "$M"
}

@test "-o uring: unmount, remount, unmount again" {
	mkdata "$R/f" 2000000 7
	mount_vol "$C" "$M" -o uring
	cp "$R/f" "$M/f"
	timeout 60 fusermount3 -u "$M"
	refute mountpoint -q "$M"
	mount_vol "$C" "$M" -o uring
	cmp "$M/f" "$R/f"
	echo more >>"$M/f"
	echo more >>"$R/f"
	timeout 60 fusermount3 -u "$M"
	refute mountpoint -q "$M"
	mount_vol "$C" "$M" -o uring
	cmp "$M/f" "$R/f"
	timeout 60 fusermount3 -u "$M"
	refute mountpoint -q "$M"
}

@test "-o uring: a blocking lock is answered later, through the ring" {
	start_fg "$C" "$M" -o uring,sharedstorage
	: >"$M/lockf"
	mkfifo "$T/go" "$T/held"
	# the holder takes the lock, says so, and keeps it until told
	python3 - "$M/lockf" "$T/go" "$T/held" <<'PY' &
import fcntl, sys
f = open(sys.argv[1])
fcntl.flock(f, fcntl.LOCK_EX)
open(sys.argv[3], 'w').write('held\n')
open(sys.argv[2]).read()
PY
	local holder=$!
	[ "$(cat "$T/held")" = held ]
	# a waiter, which the daemon answers from its lock thread later
	flock -x "$M/lockf" -c "echo got >'$T/out'" &
	local waiter=$!
	sleep 0.5 # let the request reach the daemon (not a timing check)
	kill -0 "$waiter" # it cannot have the lock yet
	[ ! -e "$T/out" ]
	echo release >"$T/go"
	wait "$holder"
	timeout 60 tail --pid="$waiter" -f /dev/null
	wait "$waiter"
	[ "$(cat "$T/out")" = got ]
	# the mount still answers on every CPU's queue
	for i in $(seq 1 50); do echo "$i" >"$M/after$i"; done
	[ "$(cat "$M/after50")" = 50 ]
	stop_fg
	[ "$(served)" -gt 50 ]
}

@test "-o uring: a killed daemon ends the mount, no hang" {
	start_fg "$C" "$M" -o uring
	mkdata "$R/f" 100000 3
	cp "$R/f" "$M/f"
	kill -KILL "$DAEMON_PID"
	wait "$DAEMON_PID" || true
	run timeout 60 stat "$M/f"
	echo "$output"
	# the teardown's mountpoint(1) cannot see a dead mount: unmount here
	timeout 60 fusermount3 -u "$M"
	[ "$status" -ne 0 ]
	[ "$status" -ne 124 ]
	# ENOTCONN, or ECONNABORTED for a request the ring held
	[[ "$output" == *"not connected"* ||
	   "$output" == *"connection abort"* ]]
	refute mountpoint -q "$M"
	mount_vol "$C" "$M" -o uring
	cmp "$M/f" "$R/f"
	umount_vol "$M"
}

@test "-o uring without the kernel's consent: one log line, /dev/fuse" {
	echo 0 >"$PARAM"
	start_fg "$C" "$M" -o uring
	echo "$(cat "$T/daemon.log")"
	grep -q "the kernel offers no FUSE over io_uring.*serving /dev/fuse" \
		"$T/daemon.log"
	[ "$(grep -c "uring" "$T/daemon.log")" -eq 1 ]
	mkdata "$R/f" 300000 5
	cp "$R/f" "$M/f"
	cmp "$M/f" "$R/f"
	stop_fg
	[ -z "$(served)" ]
	echo 1 >"$PARAM"
}

@test "-o uring in reverse mode" {
	local P=$T/plain V=$T/view
	mkdir "$P"
	xtsfs-mkfs -q "${KDF[@]}" --passfile "$T/pass" --reverse "$P"
	mkdata "$P/f" 300000 9
	mkdir -p "$V" "$T/back"
	track_mount "$V"
	xtsfs -f --reverse --passfile "$T/pass" -o uring "$P" "$V" \
		</dev/null 2>"$T/daemon.log" 3>&- &
	DAEMON_PID=$!
	for i in $(seq 1 600); do
		mountpoint -q "$V" && break
		sleep 0.1
	done
	mountpoint -q "$V"
	cp -a "$V/." "$T/back/"
	M=$V
	stop_fg
	[ "$(served)" -gt 0 ]
	mount_vol "$T/back" "$T/m2"
	cmp "$T/m2/f" "$P/f"
	umount_vol "$T/m2"
}
