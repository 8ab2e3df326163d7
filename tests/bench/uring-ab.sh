#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# uring-ab.sh - issue 20, lever 2: xtsfs over /dev/fuse against xtsfs
# -o uring (FUSE over io_uring), interleaved in one run, on round-trip
# bound work:
#   - fsbench.sh --systems xtsfs --workloads fio,tree --runs 1, once
#     per mode per round (random 4 KiB reads and writes with 1 and 2 fio
#     jobs, and the tree rows: untar of ~12,000 files, find, ls -lR, du,
#     rm, rsync);
#   - creates: on a fresh mount, create N empty files in one directory
#     (open O_CREAT + close each), stat them after a cold remount, and
#     unlink them, each phase timed (seconds).
# Each round runs both modes, the mode first in it alternating; the
# summary gives, per row, the median of the rounds for each mode and
# the ratio. Needs root, fio, and /sys/module/fuse/parameters/
# enable_uring, which is set for the run and put back as found.
#
# Usage: tests/bench/uring-ab.sh [--rounds N] [--files N] [--workdir DIR]
#        [--out DIR]
# (defaults: 3 rounds, 5,000 files, /var/tmp/xtsfs-bench-uring, and the
# raw JSON and logs in WORKDIR/results)

set -euo pipefail
export LC_ALL=C

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BIN=${XTSFS_BIN:-$REPO/build/tools}
ROUNDS=3
FILES=5000
WORKDIR=/var/tmp/xtsfs-bench-uring
OUT=
PARAM=/sys/module/fuse/parameters/enable_uring

die() {
	echo "uring-ab: $*" >&2
	exit 2
}

while [ $# -gt 0 ]; do
	case $1 in
		--rounds) ROUNDS=${2:?}; shift ;;
		--files) FILES=${2:?}; shift ;;
		--workdir) WORKDIR=${2:?}; shift ;;
		--out) OUT=${2:?}; shift ;;
		-h|--help) sed -n '3,25p' "$0"; exit 0 ;;
		*) die "unknown argument: $1" ;;
	esac
	shift
done
[ "$(id -u)" = 0 ] || die "needs root"
[ -w "$PARAM" ] || die "this kernel has no FUSE over io_uring ($PARAM)"
OUT=${OUT:-$WORKDIR/results}
mkdir -p "$WORKDIR" "$OUT"

was=$(cat "$PARAM")
MNT=$WORKDIR/mnt
cleanup() {
	mountpoint -q "$MNT" 2>/dev/null && fusermount3 -u "$MNT"
	rm -rf "$WORKDIR/cvol"
	echo "$was" >"$PARAM"
}
trap cleanup EXIT
echo 1 >"$PARAM"

printf 'bench pass\n' >"$WORKDIR/pass"
chmod 600 "$WORKDIR/pass"

# mount_x OPTS: mount the creates volume on $MNT (OPTS: "" or uring)
mount_x() {
	mkdir -p "$MNT"
	"$BIN/xtsfs" --passfile "$WORKDIR/pass" -o "nonotify${1:+,$1}" \
		"$WORKDIR/cvol" "$MNT"
}

# creates MODE ROUND: the create/stat/unlink rows, appended to the TSV
creates() {
	local mode=$1 round=$2 opt=
	[ "$mode" = uring ] && opt=uring
	rm -rf "$WORKDIR/cvol"
	mkdir "$WORKDIR/cvol"
	"$BIN/xtsfs-mkfs" -q --argon2-time 1 --argon2-memory 64 \
		--argon2-lanes 1 --passfile "$WORKDIR/pass" "$WORKDIR/cvol"
	mount_x "$opt"
	mkdir "$MNT/d"
	python3 - "$MNT/d" "$FILES" create >>"$OUT/creates.tsv" <<PY
import os, sys, time
d, n = sys.argv[1], int(sys.argv[2])
t = time.perf_counter()
for i in range(n):
    os.close(os.open(f"{d}/f{i:06d}", os.O_CREAT | os.O_WRONLY, 0o644))
print("create_${FILES}\t$mode\t$round\t%.4f" % (time.perf_counter() - t))
PY
	fusermount3 -u "$MNT"
	sync
	echo 3 >/proc/sys/vm/drop_caches
	mount_x "$opt"
	python3 - "$MNT/d" "$FILES" >>"$OUT/creates.tsv" <<PY
import os, sys, time
d, n = sys.argv[1], int(sys.argv[2])
t = time.perf_counter()
for i in range(n):
    os.stat(f"{d}/f{i:06d}")
print("stat_cold_${FILES}\t$mode\t$round\t%.4f" % (time.perf_counter() - t))
t = time.perf_counter()
for i in range(n):
    os.unlink(f"{d}/f{i:06d}")
print("unlink_${FILES}\t$mode\t$round\t%.4f" % (time.perf_counter() - t))
PY
	fusermount3 -u "$MNT"
}

# fsb MODE ROUND: one fsbench run of the fio and tree rows
fsb() {
	local mode=$1 round=$2 opts=()
	[ "$mode" = uring ] && opts=(--xtsfs-opts uring)
	"$REPO/tests/bench/fsbench.sh" --systems xtsfs --workloads fio,tree \
		--runs 1 --workdir "$WORKDIR/fsbench" "${opts[@]}" \
		--json "$OUT/fsbench.$mode.$round.json" \
		>"$OUT/fsbench.$mode.$round.log" 2>&1 ||
		echo "fsbench $mode $round failed: see $OUT/fsbench.$mode.$round.log" >&2
}

: >"$OUT/creates.tsv"
for round in $(seq 1 "$ROUNDS"); do
	if [ $((round % 2)) = 1 ]; then order="dev uring"; else order="uring dev"; fi
	for mode in $order; do
		echo "round $round: $mode ($(date +%T), load $(cut -d' ' -f1-3 /proc/loadavg))"
		creates "$mode" "$round"
		fsb "$mode" "$round"
	done
done

python3 - "$OUT" <<'PY'
import glob, json, os, statistics, sys
out = sys.argv[1]
rows = {}   # row -> mode -> [values]
units = {}
for line in open(os.path.join(out, "creates.tsv")):
    w, mode, _, v = line.split("\t")
    rows.setdefault(w, {}).setdefault(mode, []).append(float(v))
    units[w] = "s"
for f in sorted(glob.glob(os.path.join(out, "fsbench.*.json"))):
    mode = os.path.basename(f).split(".")[1]
    j = json.load(open(f))
    for w, r in j["workloads"].items():
        v = r["results"]["xtsfs"]["runs"]
        if v and v[0] is not None:
            rows.setdefault(w, {}).setdefault(mode, []).append(float(v[0]))
            units[w] = r["unit"]
print("| row | unit | /dev/fuse (median) | -o uring (median) | uring vs /dev/fuse | runs /dev/fuse | runs uring |")
print("| --- | --- | --- | --- | --- | --- | --- |")
for w in rows:
    d, u = rows[w].get("dev", []), rows[w].get("uring", [])
    if not d or not u:
        continue
    md, mu = statistics.median(d), statistics.median(u)
    # > 1: uring better (faster: fewer seconds, more IOPS)
    gain = md / mu if units[w] == "s" else mu / md
    fmt = lambda xs: " / ".join("%.3g" % x for x in xs)
    print(f"| {w} | {units[w]} | {md:.4g} | {mu:.4g} | {gain:.2f}x | {fmt(d)} | {fmt(u)} |")
PY
