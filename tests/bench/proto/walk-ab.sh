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
# Optional: REFS="bare securefs" adds those as arms (the tree extracted
# into a plain directory, and into a securefs volume of fsbench's
# settings); MKFS_OPTS (both xtsfs arms' xtsfs-mkfs), XTSFS_OPTS and
# ALT_OPTS (each arm's mount options, e.g. "-o uring": set the fuse
# module's enable_uring yourself), ALT_ENV ("NAME=VALUE ..." in the alt
# daemon's environment), WALK_DIR (the work directory, e.g. on a
# loop-mounted journaled ext4; default /var/tmp/walk-ab).
# Each arm has a volume of its own, and where each tree lies on the disk
# can weigh as much as a change in the lower reads: for those, time both
# builds on one volume in turn (doc/PERFORMANCE.md, "Cold find: lower
# subdirectories read ahead").
# Results: doc/PERFORMANCE.md, "The tree rows' floor" and "Cold find:
# the dirid read, taken apart".
set -u
TREE=/var/tmp/xtsfs-bench/cache/tree-12000
W=${WALK_DIR:-/var/tmp/walk-ab}
read -r -a REF_ARMS <<<"${REFS:-}"
read -r -a MKFS_O <<<"${MKFS_OPTS:-}"
read -r -a XTSFS_O <<<"${XTSFS_OPTS:-}"
read -r -a ALT_O <<<"${ALT_OPTS:-}"
read -r -a ALT_E <<<"${ALT_ENV:-}"
XB=${XTSFS_BIN:-$(cd "$(dirname "$0")/../../.." && pwd)/build/tools}
AB=${ALT_BIN:?set ALT_BIN to the other build/tools}
BENCH_PROG=walk-ab
# shellcheck source=tests/bench/lib.sh
. "$(dirname "$0")/../lib.sh"
rounds=${1:-3}
cleanup() {
	local a
	for a in xtsfs alt securefs; do
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
mnt() {
	case $1 in
	bare) ;;
	securefs)
		securefs mount -b --pass pw "$W/securefs/c" "$W/securefs/m" \
			>>"$W/securefs/log" 2>&1 || return 1
		# -b returns before the mount is there
		for _ in $(seq 1 100); do
			mountpoint -q "$W/securefs/m" && return 0
			sleep 0.05
		done
		return 1 ;;
	alt) env "${ALT_E[@]}" "$AB/xtsfs" --passfile "$W/pass" "${ALT_O[@]}" \
		"$W/alt/c" "$W/alt/m" ;;
	*) "$XB/xtsfs" --passfile "$W/pass" "${XTSFS_O[@]}" "$W/$1/c" "$W/$1/m" ;;
	esac
}
umnt() { if [ "$1" != bare ]; then unmount_wait "$W/$1/m"; fi; }
timed() { # NAME ARM CMD...: one line, wall seconds and daemon ticks
	local name=$1 a=$2
	shift 2
	ab_timed "$round $a $name" "$W/$a/m" "$@"
}
count() { find "$1" | wc -l; }

for a in xtsfs alt; do
	mkdir -p "$W/$a/c" "$W/$a/m"
	"$(bin $a)/xtsfs-mkfs" -q "${MKFS_O[@]}" --argon2-time 1 \
		--argon2-memory 64 --argon2-lanes 1 --passfile "$W/pass" \
		"$W/$a/c" || exit 1
	mnt $a || exit 1
	tar -xf "$TREE.tar" -C "$W/$a/m" || exit 1
	unmount_wait "$W/$a/m"
done
for a in "${REF_ARMS[@]}"; do
	mkdir -p "$W/$a/c" "$W/$a/m"
	if [ "$a" = securefs ]; then
		securefs create --pbkdf pkcs5-pbkdf2-hmac-sha256 --rounds 1 \
			--pass pw "$W/$a/c" >"$W/$a/log" 2>&1 || exit 1
	fi
	mnt "$a" || exit 1
	tar -xf "$TREE.tar" -C "$W/$a/m" || exit 1
	umnt "$a"
done
all=(xtsfs alt "${REF_ARMS[@]}")
for round in $(seq 1 "$rounds"); do
	# each round starts one arm further on
	arms=("${all[@]:$(((round - 1) % ${#all[@]}))}" \
	      "${all[@]:0:$(((round - 1) % ${#all[@]}))}")
	for a in "${arms[@]}"; do
		mnt "$a" || exit 1
		sync
		echo 3 >/proc/sys/vm/drop_caches
		timed find "$a" count "$W/$a/m/tree"
		timed lsR "$a" ls -lR "$W/$a/m/tree"
		timed du "$a" du -s "$W/$a/m/tree"
		umnt "$a"
	done
done
