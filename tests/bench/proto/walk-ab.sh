#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# walk-ab.sh ROUNDS: fsbench's three walks of the tree, cold, on xtsfs
# (build/tools) against another build of it (ALT_BIN=DIR, a prototype),
# interleaved (the order of the two alternates each round). Each arm
# gets one volume with the 12,000-file bench tree extracted into it;
# each round remounts it, drops the caches and times, as fsbench does,
#   find   find MNT/tree | wc -l
#   lsR    ls -lR MNT/tree, right after
#   du     du -s MNT/tree, right after
# with the daemon's CPU ticks of each. Prints one line per cell.
# Results: doc/PERFORMANCE.md, "The tree rows' floor".
set -u
TREE=/var/tmp/xtsfs-bench/cache/tree-12000
W=/var/tmp/walk-ab
XB=${XTSFS_BIN:-$(cd "$(dirname "$0")/../../.." && pwd)/build/tools}
AB=${ALT_BIN:?set ALT_BIN to the other build/tools}
BENCH_PROG=walk-ab
# shellcheck source=tests/bench/lib.sh
. "$(dirname "$0")/../lib.sh"
rounds=${1:-3}
cleanup() {
	local a
	for a in xtsfs alt; do
		if mountpoint -q "$W/$a/m"; then unmount_wait "$W/$a/m"; fi
	done
	rm -rf "$W"
}
trap cleanup EXIT
rm -rf "$W"
mkdir -p "$W"
printf 'pw\n' >"$W/pass"
chmod 600 "$W/pass"

bin() { if [ "$1" = alt ]; then echo "$AB"; else echo "$XB"; fi; }
mnt() { "$(bin "$1")/xtsfs" --passfile "$W/pass" "$W/$1/c" "$W/$1/m"; }
timed() { # NAME ARM CMD...: one line, wall seconds and daemon ticks
	local name=$1 a=$2
	shift 2
	ab_timed "$round $a $name" "$W/$a/m" "$@"
}
count() { find "$1" | wc -l; }

for a in xtsfs alt; do
	mkdir -p "$W/$a/c" "$W/$a/m"
	"$(bin $a)/xtsfs-mkfs" -q --argon2-time 1 --argon2-memory 64 \
		--argon2-lanes 1 --passfile "$W/pass" "$W/$a/c" || exit 1
	mnt $a || exit 1
	tar -xf "$TREE.tar" -C "$W/$a/m" || exit 1
	unmount_wait "$W/$a/m"
done
for round in $(seq 1 "$rounds"); do
	arms=(xtsfs alt)
	[ $((round % 2)) -eq 0 ] && arms=(alt xtsfs)
	for a in "${arms[@]}"; do
		mnt "$a" || exit 1
		sync
		echo 3 >/proc/sys/vm/drop_caches
		timed find "$a" count "$W/$a/m/tree"
		timed lsR "$a" ls -lR "$W/$a/m/tree"
		timed du "$a" du -s "$W/$a/m/tree"
		unmount_wait "$W/$a/m"
	done
done
