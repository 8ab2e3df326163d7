#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# wbguard-dirty.sh RUNS SIZE [elsewhere]: how much of a -o writeback
# mount is dirty or under writeback at once, against its dirty bound
# (doc/DESIGN.md, "Writeback cache"). Each run: a fresh tmpfs of SIZE, a
# volume on it mounted -o writeback in the foreground, then one process
# stores 50 KB through a shared mapping of a file on the mount (msync),
# with "elsewhere" writes 50 KB to a file on the filesystem of /var/tmp,
# and then writes 64 KiB at a time to a new file until write() fails,
# fsyncs and closes it. Meanwhile the mount's counters in debugfs
# (/sys/kernel/debug/bdi/MAJ:MIN/stats; debugfs is mounted for the run
# if it was not) are read every 2 ms. Per run one line: the most seen
# dirty + under writeback, the bdi's bound then, what the writer was
# told (bytes accepted, the errors of write and fsync) and the guard's
# summary from the daemon's log. A writer whose fsync fails lost pages
# it was told were written.
#
# Found with it (2026-12-05): with "elsewhere", 4,096 KiB on a bound of
# about 1 MiB; without, at most 1,216 KiB.
set -u
runs=$1 size=$2 elsewhere=${3:-}
XB=${XTSFS_BIN:-$(cd "$(dirname "$0")/../../.." && pwd)/build/tools}
W=$(mktemp -d /var/tmp/wbguard-dirty.XXXXXX)
printf 'pw\n' >"$W/pass"
chmod 600 "$W/pass"
mkdir -p "$W/t" "$W/m"
DEBUGFS_MOUNTED=
if [ ! -d /sys/kernel/debug/bdi ]; then
	mount -t debugfs none /sys/kernel/debug && DEBUGFS_MOUNTED=1
fi
cleanup() {
	mountpoint -q "$W/m" && { fusermount3 -u "$W/m" || umount -l "$W/m"; }
	mountpoint -q "$W/t" && umount "$W/t"
	[ -n "$DEBUGFS_MOUNTED" ] && umount /sys/kernel/debug
	rm -rf "$W"
}
trap cleanup EXIT

for run in $(seq 1 "$runs"); do
	mount -t tmpfs -o size="$size" tmpfs "$W/t"
	"$XB/xtsfs-mkfs" -q --argon2-time 1 --argon2-memory 64 \
		--argon2-lanes 1 --passfile "$W/pass" "$W/t/c" >/dev/null
	"$XB/xtsfs" -f --passfile "$W/pass" -o writeback "$W/t/c" "$W/m" \
		2>"$W/log" &
	pid=$!
	for _ in $(seq 100); do
		mountpoint -q "$W/m" && break
		sleep 0.05
	done
	head -c 262144 /dev/zero >"$W/m/mapped"
	rm -f "$W/stop"
	python3 - "/sys/kernel/debug/bdi/$(mountpoint -d "$W/m")/stats" \
		"$W/stop" >"$W/max" <<'PY' &
import os, re, sys, time
stats, stop = sys.argv[1:3]
best = (0, 0)
while not os.path.exists(stop):
    s = open(stats).read()
    n = lambda k: int(re.search(k + r":\s+(\d+)", s).group(1))
    d = n("BdiWriteback") + n("BdiReclaimable")
    if d > best[0]:
        best = (d, n("BdiDirtyThresh"))
    time.sleep(0.002)
print("max %d KiB dirty or under writeback (bound %d KiB)" % best)
PY
	sampler=$!
	python3 - "$W/m" "${elsewhere:+/var/tmp/wbguard-dirty.$$}" >"$W/out" <<'PY'
import mmap, os, sys
mnt, elsewhere = sys.argv[1:3]
fd = os.open(mnt + "/mapped", os.O_RDWR)
mm = mmap.mmap(fd, 262144, mmap.MAP_SHARED)
mm[1000:51000] = b"A" * 50000
mm.flush()
mm.close()
os.close(fd)
if elsewhere:
    with open(elsewhere, "wb") as f:
        f.write(b"e" * 50000)
    os.unlink(elsewhere)
fd = os.open(mnt + "/fill", os.O_WRONLY | os.O_CREAT, 0o644)
n, err = 0, "none"
try:
    while True:
        n += os.write(fd, b"f" * 65536)
except OSError as e:
    err = e.strerror.replace(" ", "_")
try:
    os.fsync(fd)
    fs = "ok"
except OSError as e:
    fs = e.strerror.replace(" ", "_")
os.close(fd)
print("accepted %d write:%s fsync:%s" % (n, err, fs))
PY
	touch "$W/stop"
	wait "$sampler"
	fusermount3 -u "$W/m"
	wait "$pid"
	sum=$(sed -n 's/.*writeback guard: the reserve covered \(.*\)/\1/p' "$W/log")
	echo "run $run: $(cat "$W/max"); $(cat "$W/out"); ${sum:-the reserve was not used}"
	umount "$W/t"
done
