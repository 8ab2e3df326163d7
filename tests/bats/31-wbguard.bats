#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The writeback guard (doc/DESIGN.md, "The daemon"; src/fs/wbguard.h):
# with the kernel's writeback cache, a full lower filesystem must still
# fail write(2) with ENOSPC, promptly, and every byte write(2) accepted
# must be stored: fsync and close report nothing, and it reads back
# after a remount. Each test fills a small tmpfs under the volume.
# With -o nowbguard the same tests fail (the writes succeed and fsync
# or close reports the full disk): 30-faults checks that trade.

load helpers
load fs_helpers

setup() {
	common_setup
	M=$T/m
	R=$T/ref
	mkdir -p "$R"
}
teardown() { common_teardown; }

# guard_vol [SIZE] [XTSFS OPTION...]: a volume on a tmpfs of SIZE (64m:
# room for the reserve of two writers through the cache, 8 MiB each on
# a machine with 24 GiB; doc/DESIGN.md) at $T/small, mounted on $M with the writeback cache and its guard
# (daemon in the foreground, its log in $T/daemon.log).
guard_vol() {
	local size=${1:-64m}
	shift || true
	mkdir "$T/small"
	mount -t tmpfs -o size="$size" tmpfs "$T/small"
	track_mount "$T/small"
	C=$T/small/c
	mkvol "$C"
	start_fg "$C" "$M" -o writeback "$@"
	# umount order: the FUSE mount first, then the tmpfs under it
	MOUNTS=("$M" "$T/small")
	grep -q "writeback guard: at most" "$T/daemon.log"
}

# free_kb: the tmpfs's free KiB.
free_kb() {
	df -k --output=avail "$T/small" | tail -n 1 | tr -d ' '
}

# writer.py: write FILE... in round robin, CHUNK bytes of each file's own
# pattern at a time, until every file got an error; then fsync and close
# each. Prints "NAME accepted N error E" per file and "NAME fsync ..."
# and "NAME close ...". The pattern of file k at offset o is byte
# (o + 7 k) % 251, so a reader can check what came back.
writer() {
	python3 - "$@" <<'PY'
import os, sys
chunk = int(sys.argv[1])
names = sys.argv[2:]
fds = [os.open(n, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644) for n in names]
done = [0] * len(names)
err = [None] * len(names)
def data(k, off, n):
    return bytes((off + i + 7 * k) % 251 for i in range(n))
while any(e is None for e in err):
    for k, fd in enumerate(fds):
        if err[k] is not None:
            continue
        try:
            n = os.write(fd, data(k, done[k], chunk))
            done[k] += n
        except OSError as e:
            err[k] = e.strerror
for k, n in enumerate(names):
    print(os.path.basename(n), "accepted", done[k], "error", err[k])
for k, n in enumerate(names):
    for what, call in (("fsync", os.fsync), ("close", os.close)):
        try:
            call(fds[k])
            print(os.path.basename(n), what, "ok")
        except OSError as e:
            print(os.path.basename(n), what, e.strerror)
PY
}

# check_pattern FILE K SIZE: FILE is SIZE bytes of writer's pattern K.
check_pattern() {
	python3 - "$@" <<'PY'
import sys
path, k, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
b = open(path, 'rb').read()
assert len(b) == size, (path, len(b), size)
want = bytes((i + 7 * k) % 251 for i in range(size))
bad = [i for i in range(size) if b[i] != want[i]]
assert not bad, (path, "first bad byte", bad[0])
PY
}

@test "wbguard: a full disk fails write() with ENOSPC; every accepted byte is stored" {
	guard_vol
	run writer 65536 "$M/big"
	echo "$output"
	[ "$status" -eq 0 ]
	# write() said so, and nothing later complains
	[ "${lines[0]%% accepted*}" = big ]
	[[ ${lines[0]} == *"error No space left on device" ]]
	[ "${lines[1]}" = "big fsync ok" ]
	[ "${lines[2]}" = "big close ok" ]
	n=$(awk '{print $3; exit}' <<<"$output")
	# most of the 4 MiB was accepted (the reserve and the dirty bound
	# are a few hundred KiB here)
	[ "$n" -gt $((2 * 1024 * 1024)) ]
	[ "$(lsize "$M/big")" -eq "$n" ]
	# the reserve had to be used: the guard did the work, not luck
	grep -q "writeback guard: the cipher directory's filesystem is full" \
		"$T/daemon.log"
	check_pattern "$M/big" 0 "$n"
	# a new file on the full disk: its create or its first write fails
	run python3 -c 'import os,sys
try:
    fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT, 0o644)
    os.write(fd, b"x" * 100000); print("wrote")
except OSError as e:
    print(e.strerror)' "$M/late"
	[ "$output" = "No space left on device" ]
	remount "$C" "$M"
	check_pattern "$M/big" 0 "$n"
	[ ! -e "$M/late" ] || [ "$(lsize "$M/late")" -eq 0 ]
	# space again: the reserve is refilled first, then writes go on
	rm "$M/big"
	writer 4096 "$M/again" | head -n 1 | grep -q "error No space left"
	umount_vol "$M"
	refute grep -q "the reserve is used up" "$T/daemon.log"
}

@test "wbguard: two files written at once; both told, both stored" {
	guard_vol
	run writer 16384 "$M/a" "$M/b"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ ${lines[0]} == "a accepted "*" error No space left on device" ]]
	[[ ${lines[1]} == "b accepted "*" error No space left on device" ]]
	[ "${lines[2]}" = "a fsync ok" ]
	[ "${lines[3]}" = "a close ok" ]
	[ "${lines[4]}" = "b fsync ok" ]
	[ "${lines[5]}" = "b close ok" ]
	na=$(awk 'NR == 1 {print $3}' <<<"$output")
	nb=$(awk 'NR == 2 {print $3}' <<<"$output")
	[ "$na" -gt 1000000 ]
	[ "$nb" -gt 1000000 ]
	remount "$C" "$M"
	check_pattern "$M/a" 0 "$na"
	check_pattern "$M/b" 1 "$nb"
	umount_vol "$M"
	refute grep -q "the reserve is used up" "$T/daemon.log"
}

@test "wbguard: a writer that wrote to another filesystem just before, on a nearly full disk: every fsync succeeds" {
	# The kernel looks at a task dirtying pages only every
	# nr_dirtied_pause pages, a count of the task that its last look on
	# any filesystem set: after a write to ext4 (no strict limit, free
	# run) about 4 MiB here, four times the mount's dirty bound, all
	# dirtied before the kernel first throttles it. The reserve holds
	# that for each writer through the cache (or the open bypasses the
	# cache). On 16 MiB the bound is 256 KiB and the reserve 640 KiB;
	# rounds with 256 KiB to 2 MiB free past the low-water mark when the
	# writer starts. Before, the first round lost pages (fsync: ENOSPC).
	guard_vol 16m
	low=$(sed -n 's/.*writeback guard: at most .* dirty, \([0-9]*\) KiB reserved.*/\1/p' \
		"$T/daemon.log")
	[ "$low" -gt 0 ]
	head -c 262144 /dev/zero >"$M/mapped"
	for extra in 256 512 1024 2048; do
		# another program leaves that much free beside the volume
		head -c $(( ($(free_kb) - low - extra) * 1024 )) /dev/zero \
			>"$T/small/filler"
		run python3 - "$M/fill" "$T/elsewhere" "$M/mapped" <<'PY'
import mmap, os, sys
fill, elsewhere, mapped = sys.argv[1:4]
# a store through a shared mapping here, then a write to ext4
fd = os.open(mapped, os.O_RDWR)
mm = mmap.mmap(fd, 262144, mmap.MAP_SHARED)
mm[1000:51000] = b"A" * 50000
mm.flush()
mm.close()
os.close(fd)
with open(elsewhere, "wb") as f:
    f.write(b"e" * 50000)
fd = os.open(fill, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
block = bytes(i % 251 for i in range(65536))
n, err = 0, None
try:
    while True:  # as fast as it can: the pages are dirtied in a burst
        n += os.write(fd, block[n % 65536:])
except OSError as e:
    err = e.strerror
print("accepted", n, "error", err)
os.fsync(fd)
os.close(fd)
print("synced")
PY
		echo "$extra KiB past the mark: $output"
		[ "$status" -eq 0 ]
		[[ ${lines[0]} == "accepted "*" error No space left on device" ]]
		[ "${lines[1]}" = synced ]
		n=$(awk '{print $2; exit}' <<<"$output")
		python3 - "$M/fill" "$n" <<'PY'
import sys
b = open(sys.argv[1], "rb").read()
n = int(sys.argv[2])
block = bytes(i % 251 for i in range(65536))
assert len(b) == n, (len(b), n)
assert b == (block * (n // 65536 + 1))[:n], "contents differ"
PY
		rm "$M/fill" "$T/small/filler"
	done
	umount_vol "$M"
	refute grep -q "the reserve is used up" "$T/daemon.log"
}

@test "wbguard: after the refusal, stat, ls -l and reads leave writes refused and reads working" {
	guard_vol
	mkdata "$R/keep" 100000 41
	cp "$R/keep" "$M/keep"
	# an O_RDWR handle opened while there is space: it writes through the
	# cache; another file fills the disk
	run python3 - "$M/keep" "$M/fill" "$M" <<'PY'
import os, sys, subprocess
keep, fill, mnt = sys.argv[1:4]
rw = os.open(keep, os.O_RDWR)
fd = os.open(fill, os.O_WRONLY | os.O_CREAT, 0o644)
try:
    while True:
        os.write(fd, b"f" * 65536)
except OSError as e:
    print("fill", e.strerror)
def attempt(what):
    try:
        os.pwrite(rw, b"w" * 8192, 200000)
        print(what, "write accepted")
    except OSError as e:
        print(what, "write", e.strerror)
attempt("first")
# fresh attributes from elsewhere must not let cached writes in
os.stat(keep)
attempt("after stat")
subprocess.run(["ls", "-l", mnt], stdout=subprocess.DEVNULL, check=True)
attempt("after ls")
# reads and seeks on the same handle still work
print("read", len(os.pread(rw, 4096, 0)), len(os.pread(rw, 4096, 99000)))
print("seek", os.lseek(rw, 0, os.SEEK_END))
os.close(rw)
os.fsync(fd)
os.close(fd)
print("done")
PY
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "fill No space left on device" ]
	[ "${lines[1]}" = "first write No space left on device" ]
	[ "${lines[2]}" = "after stat write No space left on device" ]
	[ "${lines[3]}" = "after ls write No space left on device" ]
	[ "${lines[4]}" = "read 4096 1000" ]
	[ "${lines[5]}" = "seek 100000" ]
	[ "${lines[6]}" = done ]
	remount "$C" "$M"
	cmp "$M/keep" "$R/keep"
}

@test "wbguard: mmap writes are stored; a file opened on the full disk can still be mapped shared" {
	guard_vol
	mkdata "$R/m1" 262144 42
	cp "$R/m1" "$M/m1"
	run python3 - "$M/m1" "$M/fill" "$R/m1" <<'PY'
import mmap, os, sys
m1, fill, ref = sys.argv[1:4]
def store(path, refpath, off, data):
    fd = os.open(path, os.O_RDWR)
    mm = mmap.mmap(fd, 262144, mmap.MAP_SHARED)
    mm[off:off + len(data)] = data
    mm.flush()               # msync(MS_SYNC): errors would show here
    mm.close()
    os.close(fd)
    with open(refpath, "r+b") as r:
        r.seek(off); r.write(data)
# with space
store(m1, ref, 1000, b"A" * 50000)
print("stored with space")
fd = os.open(fill, os.O_WRONLY | os.O_CREAT, 0o644)
try:
    while True:
        os.write(fd, b"f" * 65536)
except OSError as e:
    print("fill", e.strerror)
os.fsync(fd)
os.close(fd)
# on the full disk: the open bypasses the cache (FOPEN_DIRECT_IO), the
# shared mapping still works, and stores over allocated data need no
# space
store(m1, ref, 100000, b"B" * 60000)
print("stored on the full disk")
PY
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "stored with space" ]
	[ "${lines[1]}" = "fill No space left on device" ]
	[ "${lines[2]}" = "stored on the full disk" ]
	cmp "$M/m1" "$R/m1"
	remount "$C" "$M"
	cmp "$M/m1" "$R/m1"
}

@test "wbguard: the reserve is an unnamed file, gone at unmount and when the daemon is killed" {
	mkdir "$T/small"
	mount -t tmpfs -o size=8m tmpfs "$T/small"
	track_mount "$T/small"
	C=$T/small/c
	mkvol "$C"
	before=$(free_kb)
	start_fg "$C" "$M" -o writeback
	MOUNTS=("$M" "$T/small")
	held=$(sed -n 's/.*writeback guard: at most .* dirty, \([0-9]*\) KiB reserved.*/\1/p' "$T/daemon.log")
	[ "$held" -gt 0 ]
	[ "$(free_kb)" -le $((before - held)) ]
	[ -z "$(find "$C" -newer "$T/pass" -type f ! -name 'xtsfs.*')" ]
	umount_vol "$M"
	wait "$DAEMON_PID" || true
	[ "$(free_kb)" -eq "$before" ]
	# without the guard, nothing is held
	start_fg "$C" "$M" -o writeback,nowbguard
	[ "$(free_kb)" -eq "$before" ]
	refute grep -q "writeback guard: at most" "$T/daemon.log"
	umount_vol "$M"
	wait "$DAEMON_PID" || true
	# a killed daemon leaves nothing behind
	start_fg "$C" "$M" -o writeback
	[ "$(free_kb)" -lt "$before" ]
	kill -KILL "$DAEMON_PID"
	wait "$DAEMON_PID" || true
	fusermount3 -u "$M" 2>/dev/null || umount -l "$M"
	[ "$(free_kb)" -eq "$before" ]
}

@test "wbguard: a disk nearly full at mount: every write goes through the daemon, ENOSPC at write()" {
	mkdir "$T/small"
	mount -t tmpfs -o size=4m tmpfs "$T/small"
	track_mount "$T/small"
	C=$T/small/c
	mkvol "$C"
	# leave less than the reserve free
	head -c $((3700 * 1024)) /dev/zero >"$T/small/filler"
	start_fg "$C" "$M" -o writeback
	MOUNTS=("$M" "$T/small")
	grep -q "writeback guard: less than .* KiB free: files are opened without the writeback cache" \
		"$T/daemon.log"
	# nothing is held: the disk can be written to its last page
	[ "$(free_kb)" -gt 0 ]
	run writer 4096 "$M/f"
	echo "$output"
	[[ ${lines[0]} == "f accepted "*" error No space left on device" ]]
	[ "${lines[1]}" = "f fsync ok" ]
	[ "${lines[2]}" = "f close ok" ]
	n=$(awk '{print $3; exit}' <<<"$output")
	umount_vol "$M"
	wait "$DAEMON_PID" || true
	start_fg "$C" "$M" -o writeback
	check_pattern "$M/f" 0 "$n"
	[ "$(free_kb)" -eq 0 ]
	# space again: the reserve is taken whole, writes are cached again
	rm "$T/small/filler"
	echo back >"$M/g"
	[ "$(cat "$M/g")" = back ]
	grep -q "writeback guard: space again, the reserve is whole" \
		"$T/daemon.log"
	umount_vol "$M"
	refute grep -q "the reserve is used up" "$T/daemon.log"
}

@test "wbguard: another program fills the disk behind the mount; fallocate, truncate and O_DIRECT then" {
	guard_vol
	mkdata "$R/old" 200000 43
	cp "$R/old" "$M/old"
	run python3 - "$M/f" "$T/small/filler" "$M/old" <<'PY'
import mmap, os, sys
path, filler, old = sys.argv[1:4]
fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
done = 0
def data(off, n):
    return bytes((off + i) % 251 for i in range(n))
# a few MiB through the cache while there is room
for _ in range(32):
    done += os.write(fd, data(done, 65536))
# another program takes every byte left, beside the volume
with open(filler, "wb") as f:
    try:
        while True:
            f.write(b"z" * 65536)
            f.flush()
    except OSError:
        pass
# this writer goes on: the kernel's pages find the disk full, the
# reserve takes them, and a later write is refused
err = None
for _ in range(200):
    try:
        done += os.write(fd, data(done, 65536))
    except OSError as e:
        err = e.strerror
        break
print("accepted", done, "error", err)
os.fsync(fd)
os.close(fd)
# what needs new space fails at once; what does not, works
o = os.open(old, os.O_RDWR)
try:
    os.posix_fallocate(o, 200000, 1 << 20)
    print("fallocate ok")
except OSError as e:
    print("fallocate", e.strerror)
# shrinking, then growing from a unit boundary: holes, no space needed
os.ftruncate(o, 196608)
os.ftruncate(o, 300000)
os.close(o)
d = os.open(old, os.O_RDWR | os.O_DIRECT)
buf = mmap.mmap(-1, 4096)
buf.write(b"D" * 4096)
print("direct overwrite", os.pwrite(d, buf, 4096))
os.close(d)
print("done")
PY
	echo "$output"
	[ "$status" -eq 0 ]
	[[ ${lines[0]} == "accepted "*" error No space left on device" ]]
	[ "${lines[1]}" = "fallocate No space left on device" ]
	[ "${lines[2]}" = "direct overwrite 4096" ]
	[ "${lines[3]}" = done ]
	n=$(awk '{print $2; exit}' <<<"$output")
	python3 - "$R/old" <<'PY'
import sys
with open(sys.argv[1], "r+b") as f:
    f.truncate(196608); f.truncate(300000)
    f.seek(4096); f.write(b"D" * 4096)
PY
	remount "$C" "$M"
	python3 - "$M/f" "$n" <<'PY'
import sys
b = open(sys.argv[1], "rb").read()
n = int(sys.argv[2])
assert len(b) == n, (len(b), n)
assert b == bytes(i % 251 for i in range(n)), "contents differ"
PY
	cmp "$M/old" "$R/old"
	umount_vol "$M"
	refute grep -q "the reserve is used up" "$T/daemon.log"
	grep -q "writeback guard: the cipher directory's filesystem is full" \
		"$T/daemon.log"
}

@test "wbguard: one write() larger than the reserve, under way when the disk fills: ENOSPC or a short count" {
	skip "KNOWN LIMITATION (doc/DESIGN.md, doc/USAGE.md): the write copies on past its GETATTR; what the reserve cannot hold fails at writeback (100 MB into 64 MiB: write() returns 100000000, fsync says ENOSPC)"
	guard_vol
	run python3 - "$M/f" <<'PY'
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT, 0o644)
try:
    print("write", os.write(fd, b"x" * 100000000))
except OSError as e:
    print("write", e.strerror)
os.fsync(fd)
os.close(fd)
print("synced")
PY
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[1]}" = synced ]
	[ "${lines[0]}" != "write 100000000" ]
}
