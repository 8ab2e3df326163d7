#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# reqcount.sh - which FUSE requests the tree workloads cost xtsfs, by
# opcode and per file: a count, not a timing, so it is the same on a
# busy machine as on a quiet one. The daemon runs with -d (libfuse
# prints every request it reads: "unique: N, opcode: NAME (n), ..."),
# each phase's requests are told apart by where the log stood when the
# phase began (the script waits 1 s between phases, so that what the
# kernel sends late, RELEASE and FORGET, falls in its own phase).
#
# Phases, on the fsbench tree (tests/bench/fsbench.sh builds and caches
# it in WORKDIR/cache; run fsbench once first, any --workloads tree):
#   untar   tar -xf of the tree into the mount
#   find    find MNT/tree | wc -l after a remount (cold)
#   lsR     ls -lR MNT/tree, right after
#   rm      rm -rf MNT/tree
#   rsync   rsync -a of the bare tree into the mount
#
# Usage: tests/bench/reqcount.sh [--xtsfs-bin DIR] [--xtsfs-opts OPTS]
#        [--workdir DIR]
# Prints one table: phase, files in the tree, requests, requests per
# file, then the opcodes of each phase with their counts. Root only.

set -euo pipefail
export LC_ALL=C

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BENCH_PROG=reqcount
# shellcheck source=tests/bench/lib.sh
. "$REPO/tests/bench/lib.sh"

WORKDIR=/var/tmp/xtsfs-bench
XTSFS_BIN=${XTSFS_BIN:-$REPO/build/tools}
XTSFS_OPTS=()
while [ $# -gt 0 ]; do
	case $1 in
	--xtsfs-bin) XTSFS_BIN=${2:?}; shift ;;
	--xtsfs-opts) XTSFS_OPTS=(-o "${2:?}"); shift ;;
	--workdir) WORKDIR=${2:?}; shift ;;
	-h | --help) sed -n '3,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "$BENCH_PROG: unknown argument $1" >&2; exit 2 ;;
	esac
	shift
done

tarball=$(ls "$WORKDIR"/cache/tree-*.tar 2>/dev/null | head -n 1)
srcdir=${tarball%.tar}.d
if [ -z "$tarball" ] || [ ! -d "$srcdir" ]; then
	echo "$BENCH_PROG: no cached tree in $WORKDIR/cache: run" \
		"tests/bench/fsbench.sh --workloads tree --systems bare first" >&2
	exit 2
fi

dir=$(mktemp -d "$WORKDIR/reqcount.XXXXXX")
mnt=$dir/mnt
log=$dir/debug.log
pass=$dir/pass
mkdir -p "$dir/cipher" "$mnt"
printf 'reqcount passphrase\n' >"$pass"
pid=
cleanup() {
	if mountpoint -q "$mnt"; then
		fusermount3 -u "$mnt" 2>/dev/null || fusermount3 -uz "$mnt" || true
	fi
	[ -z "$pid" ] || wait "$pid" 2>/dev/null || true
	rm -rf "$dir"
}
trap cleanup EXIT

"$XTSFS_BIN/xtsfs-mkfs" --argon2-time 1 --argon2-memory 64 \
	--argon2-lanes 1 --passfile "$pass" "$dir/cipher" >/dev/null

start() {
	"$XTSFS_BIN/xtsfs" -d --passfile "$pass" \
		${XTSFS_OPTS[@]+"${XTSFS_OPTS[@]}"} "$dir/cipher" "$mnt" \
		>>"$log" 2>&1 &
	pid=$!
	for _ in $(seq 1 100); do
		mountpoint -q "$mnt" && return 0
		sleep 0.1
	done
	echo "$BENCH_PROG: the mount did not come up" >&2
	exit 1
}
stop() {
	fusermount3 -u "$mnt"
	wait "$pid" || true
	pid=
}
# mark PHASE: the requests logged from now on are PHASE's.
mark() {
	sleep 1
	echo "$1 $(wc -l <"$log")" >>"$dir/marks"
}

start
mark untar
tar -xf "$tarball" -C "$mnt"
mark end
stop
start
mark find
find "$mnt" | wc -l >/dev/null
mark lsR
ls -lR "$mnt" >/dev/null
mark rm
rm -rf "${mnt:?}"/*
mark rsync
rsync -a "$srcdir/" "$mnt/rsync/"
mark end
stop
files=$(find "$srcdir" | wc -l)

awk -v files="$files" '
FNR == NR { start[++np] = $2; name[np] = $1; next }
/^unique: [0-9]+, opcode: / {
	while (k < np && FNR > start[k + 1]) k++
	p = name[k]
	if (k == 0 || p == "end") next
	match($0, /opcode: [A-Z_0-9]+/)
	op = substr($0, RSTART + 8, RLENGTH - 8)
	n[p "," op]++; tot[p]++; seen[op] = 1
}
END {
	printf "objects in the tree (files, directories, links): %d\n\n", files
	printf "%-7s %9s %9s\n", "phase", "requests", "per obj."
	for (i = 1; i <= np; i++)
		if (name[i] != "end")
			printf "%-7s %9d %9.2f\n", name[i], tot[name[i]], tot[name[i]] / files
	printf "\n%-16s", "opcode"
	for (i = 1; i <= np; i++) if (name[i] != "end") printf " %8s", name[i]
	printf "\n"
	for (op in seen) {
		printf "%-16s", op
		for (i = 1; i <= np; i++)
			if (name[i] != "end") printf " %8d", n[name[i] "," op]
		printf "\n"
	}
}' "$dir/marks" "$log"
