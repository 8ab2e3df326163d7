#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# fsck.sh - how long xtsfs-fsck takes on a volume of many real files
# (issue 18: 100,000 files in under a minute). The files are made
# through a FUSE mount, so every name, dirid, sidecar, header, tail and
# xattr is what xtsfs writes; then the volume is unmounted and checked
# --runs times, cold (caches dropped) and warm. A benchmark, not a test:
# it prints the figures and the median, and exits 1 only if a check
# finds a problem on the fresh volume (which would be a bug).
#
#   tests/bench/fsck.sh                    # 100,000 files, 3 runs
#   tests/bench/fsck.sh --files 20000 --runs 5
#   tests/bench/fsck.sh --short            # 2,000 files, 1 run
#
# Options: --files N, --runs N, --short, --workdir DIR (default
# /var/tmp/xtsfs-fsck-bench; kept: cache/ holds the volume between
# invocations, keyed by the file count), --xtsfs-bin DIR (default
# $XTSFS_BIN, else build/tools). As root (mount, drop_caches).
set -euo pipefail

BENCH_PROG=fsck.sh
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$HERE/lib.sh"

files=100000 runs=3 workdir=/var/tmp/xtsfs-fsck-bench
bin=${XTSFS_BIN:-$HERE/../../build/tools}
while [ $# -gt 0 ]; do
	case $1 in
	--files) files=$2; shift ;;
	--runs) runs=$2; shift ;;
	--short) files=2000 runs=1 ;;
	--workdir) workdir=$2; shift ;;
	--xtsfs-bin) bin=$2; shift ;;
	*) echo "$BENCH_PROG: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
for t in xtsfs xtsfs-mkfs xtsfs-fsck; do
	[ -x "$bin/$t" ] || { echo "$BENCH_PROG: no $bin/$t (build first)" >&2; exit 2; }
done

mkdir -p "$workdir/cache"
vol=$workdir/cache/vol-$files
mnt=$workdir/mnt.$$
pass=$workdir/cache/pass
cleanup() { unmount_wait "$mnt" 2>/dev/null || true; rmdir "$mnt" 2>/dev/null || true; }
trap cleanup EXIT INT TERM
(umask 077; printf 'bench passphrase\n' >"$pass")

# make_tree: $files files in directories of 1,000 through a mount: one in
# four with a short tail (1..15 bytes in its last unit), sizes 0..9000,
# one in 100 with a long name (a sidecar), one in 50 with an xattr, and
# one symlink per directory.
make_tree() {
	rm -rf "$vol"
	"$bin/xtsfs-mkfs" -q --argon2-time 1 --argon2-memory 64 \
		--argon2-lanes 1 --passfile "$pass" "$vol"
	mkdir -p "$mnt"
	"$bin/xtsfs" --passfile "$pass" "$vol" "$mnt"
	python3 - "$mnt" "$files" <<'PY'
import os, sys
mnt, n = sys.argv[1], int(sys.argv[2])
data = os.urandom(9000)
for i in range(n):
    # the daemon holds a descriptor per inode the kernel knows (up to
    # RLIMIT_NOFILE's hard limit): let the kernel forget them now and then
    if i % 5000 == 4999:
        with open('/proc/sys/vm/drop_caches', 'w') as f:
            f.write('2')
    d = os.path.join(mnt, 'd%03d' % (i // 1000))
    if i % 1000 == 0:
        os.mkdir(d)
        os.symlink('f0', os.path.join(d, 'link'))
    name = ('long-%d-' % i).ljust(200, 'x') if i % 100 == 7 else 'f%d' % i
    size = (i * 7919) % 9000
    if i % 4 == 1:
        size = size // 4096 * 4096 + 1 + i % 15
    p = os.path.join(d, name)
    with open(p, 'wb') as f:
        f.write(data[:size])
    if i % 50 == 3:
        os.setxattr(p, 'user.tag', b'bench')
PY
	unmount_wait "$mnt"
	echo "$files" >"$vol.done"
}

if [ ! -e "$vol.done" ]; then
	echo "$BENCH_PROG: making $files files through a mount (once; kept in $vol)" >&2
	t0=$(date +%s.%N)
	make_tree
	printf '%s: made in %.1f s\n' "$BENCH_PROG" "$(echo "$(date +%s.%N) - $t0" | bc)" >&2
fi

# one_run cold|warm: seconds of one check (which must find nothing)
one_run() {
	local t0 t1
	if [ "$1" = cold ]; then
		sync
		echo 3 >/proc/sys/vm/drop_caches
	fi
	t0=$(date +%s.%N)
	"$bin/xtsfs-fsck" -q --passfile "$pass" "$vol" || {
		echo "$BENCH_PROG: fsck found problems on a fresh volume" >&2
		exit 1
	}
	t1=$(date +%s.%N)
	printf '%.2f\n' "$(echo "$t1 - $t0" | bc)"
}

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

cold=() warm=()
for r in $(seq 1 "$runs"); do
	cold+=("$(one_run cold)")
	warm+=("$(one_run warm)")
	echo "$BENCH_PROG: run $r: cold ${cold[-1]} s, warm ${warm[-1]} s" >&2
done
printf 'case\tmedian s\truns\n%s\t%s\t%s\n%s\t%s\t%s\n' \
	"fsck, $files files, cold" "$(printf '%s\n' "${cold[@]}" | median)" "${cold[*]}" \
	"fsck, $files files, warm" "$(printf '%s\n' "${warm[@]}" | median)" "${warm[*]}" |
	columns left
