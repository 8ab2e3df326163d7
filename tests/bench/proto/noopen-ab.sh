#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# noopen-ab.sh ROUNDS OPTS...: lever 3 for regular files (-o noopen)
# against the default, interleaved (the order of the arms alternates
# each round). Each arm: a fresh volume, then timed
#   untar      tar -xf of the 12,000-file bench tree
#   read-cold  tar -cf - of that tree, piped to wc, after a remount and
#              drop_caches (an OPEN, READs and a RELEASE per file)
#   read-warm  the same again, its pages cached
#   rsync      rsync -a of the bare tree into the mount
# with the daemon's CPU ticks of each phase. An arm is named by its
# mount options, "-" for none: noopen-ab.sh 3 - noopen
set -u
TREE=/var/tmp/xtsfs-bench/cache/tree-12000
W=/var/tmp/noopen-ab
XB=${XTSFS_BIN:-$(cd "$(dirname "$0")/../../.." && pwd)/build/tools}
BENCH_PROG=noopen-ab
# shellcheck source=tests/bench/lib.sh
. "$(dirname "$0")/../lib.sh"
rounds=$1
shift
rm -rf "$W"
mkdir -p "$W"
printf 'pw\n' >"$W/pass"
chmod 600 "$W/pass"

mnt() {
	local o=()
	[ "$2" = - ] || o=(-o "$2")
	"$XB/xtsfs" --passfile "$W/pass" "${o[@]}" "$1/c" "$1/m"
}
timed() { # NAME DIR CMD...: one line, wall seconds and daemon ticks
	local name=$1 d=$2
	shift 2
	ab_timed "$round $arm $name" "$d/m" "$@"
}
read_all() { tar -cf - -C "$1" tree | wc -c; }

for round in $(seq 1 "$rounds"); do
	arms=("$@")
	[ $((round % 2)) -eq 0 ] && mapfile -t arms < <(printf '%s\n' "$@" | tac)
	for arm in "${arms[@]}"; do
		d=$W/$round.$arm
		mkdir -p "$d/c" "$d/m"
		"$XB/xtsfs-mkfs" -q --argon2-time 1 --argon2-memory 64 \
			--argon2-lanes 1 --passfile "$W/pass" "$d/c"
		mnt "$d" "$arm"
		sync
		sleep 2
		timed untar "$d" tar -xf "$TREE.tar" -C "$d/m"
		fusermount3 -u "$d/m"
		sync
		echo 3 >/proc/sys/vm/drop_caches
		mnt "$d" "$arm"
		timed read-cold "$d" read_all "$d/m"
		timed read-warm "$d" read_all "$d/m"
		sync
		sleep 2
		timed rsync "$d" rsync -a "$TREE.d/tree/" "$d/m/rsync/"
		fusermount3 -u "$d/m"
		rm -rf "$d"
	done
done
