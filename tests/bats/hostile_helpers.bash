# SPDX-License-Identifier: Apache-2.0
# Helpers for 35-hostile.bats: a cipher directory written by someone else
# (a sync peer, a backup host). Load after helpers and fs_helpers.
#
# Nothing that touches a mount may hang the test: every such step runs
# under within(), and teardown recovers even from a daemon that never
# answers (a process in D state on a FUSE request, fusermount3 -u EBUSY):
# it aborts the test's own FUSE connections, kills the test's own
# daemons by their process ids, and lazily unmounts what the test mounted.

# The string put in every file outside the cipher directory: it must
# never come back through a mount.
MARKER=XTSFS-HOSTILE-OUTSIDE-MARKER

hostile_setup() {
	common_setup
	chmod 600 "$T"/pass*
	DAEMONS=()
	: >"$T/seen"
}

# mount_src_of MNT: the MAJ:MIN of MNT if it is a FUSE mount now, from
# /proc/self/mountinfo (no stat: a hung daemon would hang it).
fuse_devno_of() {
	awk -v m="$1" '$5 == m && $0 ~ / - fuse/ { print $3 }' /proc/self/mountinfo |
		tail -n 1
}

# is_mounted MNT: whether MNT is a mount point now (no stat either).
is_mounted() {
	awk -v m="$1" '$5 == m { f = 1 } END { exit !f }' /proc/self/mountinfo
}

# daemons_of MNT: the pids of xtsfs processes that have MNT as their last
# argument (the daemons this test started on MNT, foreground or not).
daemons_of() {
	local pid a last
	for pid in $(pgrep -x xtsfs); do
		last=
		while IFS= read -r -d '' a; do last=$a; done 2>/dev/null <"/proc/$pid/cmdline" || continue
		[ "$last" = "$1" ] && echo "$pid"
	done
	return 0
}

# abort_mounts: end every FUSE connection this test made, whatever state
# its daemon is in: the fusectl abort file when fusectl is mounted, and
# SIGKILL of the test's own daemons (closing /dev/fuse aborts as well).
abort_mounts() {
	local m dev pid
	for m in "${MOUNTS[@]}"; do
		dev=$(fuse_devno_of "$m")
		[ -n "$dev" ] || continue
		if [ -w "/sys/fs/fuse/connections/${dev#*:}/abort" ]; then
			echo 1 >"/sys/fs/fuse/connections/${dev#*:}/abort"
		fi
		for pid in $(daemons_of "$m"); do
			kill -KILL "$pid" 2>/dev/null || true
		done
	done
	for pid in "${DAEMONS[@]}"; do
		kill -KILL "$pid" 2>/dev/null || true
	done
}

hostile_teardown() {
	local m pid i
	# a clean unmount where the daemon still answers, then the hard way
	for m in "${MOUNTS[@]}"; do
		is_mounted "$m" && timeout -k 2 5 fusermount3 -u "$m" 2>/dev/null
	done
	abort_mounts
	for pid in "${DAEMONS[@]}"; do
		# a bounded wait: it ended or was killed
		for i in $(seq 1 100); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.05
		done
	done
	for m in "${MOUNTS[@]}"; do
		is_mounted "$m" && umount -l "$m" 2>/dev/null
	done
	common_teardown
}

# within SECS CMD...: run the external command CMD (stdin /dev/null,
# stdout and stderr together) under timeout(1): SIGTERM after SECS
# seconds, SIGKILL a moment later. timeout does not wait for a process
# that even SIGKILL cannot end (D state on a FUSE request the daemon never
# answers), so then the test's FUSE connections are aborted, which frees
# it. After a timeout the status is 124 and the output ends with
# "HUNG: ...". What CMD printed is also appended to $T/seen (checked for
# $MARKER).
within() {
	local secs=$1 out rc=0
	shift
	out=$(mktemp "$T/within.XXXXXX")
	timeout -k 2 "$secs" "$@" </dev/null >"$out" 2>&1 3>&- || rc=$?
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		echo "HUNG: more than ${secs}s (status $rc): $*" >>"$out"
		abort_mounts
		rc=124
	fi
	cat "$out" >>"$T/seen"
	cat "$out"
	rm -f "$out"
	return "$rc"
}

# xrun SECS CMD...: bats' run of within; fails the test (with the output)
# if the step hung.
xrun() {
	run within "$@"
	if [ "$status" -eq 124 ] || [[ $output == *"HUNG: "* ]]; then
		echo "step hung: ${*:2}" >&2
		printf '%s\n' "$output" >&2
		return 1
	fi
	return 0
}

# expect_eio WHAT: the last xrun failed with EIO.
expect_eio() {
	if [ "$status" -eq 0 ] || [[ $output != *"Input/output error"* ]]; then
		echo "$1: expected EIO, got status $status: $output" >&2
		return 1
	fi
}

# expect_ok WHAT: the last xrun succeeded.
expect_ok() {
	if [ "$status" -ne 0 ]; then
		echo "$1: expected success, got status $status: $output" >&2
		return 1
	fi
}

# expect_fail WHAT: the last xrun failed (any error), without a hang.
expect_fail() {
	if [ "$status" -eq 0 ]; then
		echo "$1: expected a failure, got success: $output" >&2
		return 1
	fi
}

# start_daemon DIR MNT [options]: start_fg, remembering the daemon's pid
# for teardown.
start_daemon() {
	local rc=0
	start_fg "$@" || rc=$?
	[ -n "${DAEMON_PID:-}" ] && DAEMONS+=("$DAEMON_PID")
	return "$rc"
}

# same_as_native WANT WHAT: the native directory's result $ref is WANT
# and the mount's $got is the same; else say WHAT happened and fail.
same_as_native() {
	echo "native: $ref; xtsfs: $got"
	[ "$ref" = "$1" ] || {
		echo "the native directory gave $ref, not $1" >&2
		return 1
	}
	[ "$got" = "$ref" ] || {
		echo "$2: $got (native: $ref)" >&2
		return 1
	}
}

# alive: the last daemon still runs and its mount is there.
alive() {
	if ! kill -0 "$DAEMON_PID" 2>/dev/null; then
		echo "the daemon died; its log:" >&2
		cat "$T/daemon.log" >&2
		return 1
	fi
	is_mounted "$M" || {
		echo "$M is not mounted any more" >&2
		return 1
	}
}

# stop_daemon: unmount $M (bounded) and wait for the daemon's end.
stop_daemon() {
	local i
	xrun 10 fusermount3 -u "$M"
	expect_ok "fusermount3 -u $M"
	for i in $(seq 1 200); do
		kill -0 "$DAEMON_PID" 2>/dev/null || return 0
		sleep 0.05
	done
	echo "the daemon did not exit after the unmount" >&2
	return 1
}

# no_marker: nothing from outside the cipher directory came back.
no_marker() {
	if grep -a -q "$MARKER" "$T/seen" "$@"; then
		echo "bytes from outside the cipher directory came through the mount:" >&2
		grep -a "$MARKER" "$T/seen" "$@" | head -n 5 >&2
		return 1
	fi
}

# log_clean: the daemon's log holds only printable ASCII lines.
log_clean() {
	if LC_ALL=C grep -q -P '[^\x20-\x7e]' "$T/daemon.log"; then
		echo "raw control or non-ASCII bytes in the daemon's log:" >&2
		LC_ALL=C grep -n -P '[^\x20-\x7e]' "$T/daemon.log" | od -c | head -n 20 >&2
		return 1
	fi
}

# sorted_ls: the last xrun's output as sorted words on one line.
sorted_out() {
	printf '%s\n' "$output" | LC_ALL=C sort | tr '\n' ' '
}

# as_nobody CMD...: CMD as uid/gid 65534 with no groups.
as_nobody() {
	setpriv --reuid 65534 --regid 65534 --clear-groups -- "$@"
}
# the system's python (root's PATH may hold a python nobody cannot run)
PY=/usr/bin/python3

# pyrun: run a small python program given as $1 with arguments.
PY_NBREAD='
import os, sys
p, outp = sys.argv[1], sys.argv[2]
try:
    fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK)
except OSError as e:
    print("open:", os.strerror(e.errno)); sys.exit(1)
got = b""
try:
    while len(got) < (1 << 20):
        b = os.read(fd, 65536)
        if not b:
            break
        got += b
except BlockingIOError:
    pass
except OSError as e:
    print("read:", os.strerror(e.errno)); open(outp, "ab").write(got); sys.exit(2)
open(outp, "ab").write(got)
print("read", len(got), "bytes")
'
PY_NBAPPEND='
import os, sys
p = sys.argv[1]
try:
    fd = os.open(p, os.O_WRONLY | os.O_APPEND | os.O_NONBLOCK)
    os.write(fd, b"appended\n")
    os.close(fd)
except OSError as e:
    print("append:", os.strerror(e.errno)); sys.exit(1)
print("appended")
'
PY_BIND='
import os, socket, sys
d, n = os.path.split(sys.argv[1])
os.chdir(d)  # sun_path is short; the lower paths are long
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(n)
'
# open O_RDWR|O_CREAT (no O_EXCL), print what is there, append a line
PY_OPENRW='
import errno, os, sys
try:
    fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o666)
except OSError as e:
    print("open:", errno.errorcode[e.errno]); sys.exit(1)
print("opened; contents:", os.read(fd, 4096))
os.lseek(fd, 0, os.SEEK_END)
os.write(fd, b"written by nobody\n")
sys.exit(0)
'
PY_UNLINK='
import errno, os, sys
try:
    os.unlink(sys.argv[1])
except OSError as e:
    print("unlink:", errno.errorcode[e.errno]); sys.exit(1)
print("unlinked")
'
PY_RENAME='
import errno, os, sys
try:
    os.rename(sys.argv[1], sys.argv[2])
except OSError as e:
    print("rename:", errno.errorcode[e.errno]); sys.exit(1)
print("renamed")
'

# replace PATH KIND [SOURCE]: put a hostile object at PATH (an existing
# file xtsfs owns, or a name it would own). KIND: fifo, socket, zero
# (char device 1:5), null (char device 1:3), symlink and hardlink (to
# $OUT, outside the cipher directory), sparse (a new 1 GiB sparse file),
# over (the file one byte longer), empty, copy (of SOURCE).
replace() {
	local p=$1 kind=$2 src=${3:-}
	case $kind in
	fifo) rm -f "$p" && mkfifo "$p" ;;
	socket) rm -f "$p" && python3 -c "$PY_BIND" "$p" ;;
	zero) rm -f "$p" && mknod "$p" c 1 5 ;;
	null) rm -f "$p" && mknod "$p" c 1 3 ;;
	symlink) rm -f "$p" && ln -s "$OUT" "$p" ;;
	hardlink) rm -f "$p" && ln "$OUT" "$p" ;;
	sparse) rm -f "$p" && truncate -s 1G "$p" ;;
	over) printf A >>"$p" ;;
	empty) rm -f "$p" && : >"$p" ;;
	copy) cp -f "$src" "$p" ;;
	*) echo "replace: unknown kind $kind" >&2; return 1 ;;
	esac
}

# snapshot PATH: what PATH is (type, and contents for a regular file), to
# see that nobody "repaired" it.
snapshot() {
	local t
	t=$(stat -c %F "$1") || return 1
	if [ "$t" = "regular file" ]; then
		echo "$t $(stat -c %s "$1") $(head -c 1M "$1" | md5sum | cut -d' ' -f1)"
	else
		echo "$t"
	fi
}
