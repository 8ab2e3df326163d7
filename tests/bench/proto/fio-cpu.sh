#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# fio-cpu.sh RW JOBS SYSTEM...: IOPS and daemon CPU per request, 10 s fio
# on a 256 MiB file laid out beforehand, after a remount and drop_caches.
# Systems: xtsfs, xtsfs-OPT (mounted with -o OPT; xtsfs-uring sets the
# fuse module's enable_uring for its run), securefs, fuse-overlayfs.
set -u
rw=$1 jobs=$2
shift 2
W=/var/tmp/fio-cpu
HERE=$(cd "$(dirname "$0")" && pwd)
XB=${XTSFS_BIN:-$HERE/../../../build/tools}
BENCH_PROG=fio-cpu
# shellcheck source=tests/bench/lib.sh
. "$HERE/../lib.sh"
rm -rf "$W"
mkdir -p "$W"
echo pw >"$W/pass"
chmod 600 "$W/pass"
mnt() {
	local sys=$1 d=$2 opts=()
	case $sys in
	xtsfs*)
		[ "$sys" != xtsfs ] && opts=(-o "${sys#xtsfs-}")
		"$XB/xtsfs" --passfile "$W/pass" "${opts[@]}" "$d/c" "$d/m" ;;
	securefs)
		securefs mount -b --pass pw "$d/c" "$d/m" >/dev/null 2>&1
		sleep 1 ;;
	fuse-overlayfs)
		fuse-overlayfs -o "lowerdir=$d/l,upperdir=$d/u,workdir=$d/w" "$d/m" ;;
	*) echo "fio-cpu: unknown system $sys" >&2; exit 2 ;;
	esac
}
for sys in "$@"; do
	d=$W/$sys
	mkdir -p "$d/c" "$d/m" "$d/u" "$d/w" "$d/l"
	case $sys in
	xtsfs*)
		"$XB/xtsfs-mkfs" -q --argon2-time 1 --argon2-memory 64 --argon2-lanes 1 \
			--passfile "$W/pass" "$d/c" ;;
	securefs) securefs create --pass pw "$d/c" >/dev/null 2>&1 ;;
	esac
	[ "$sys" = xtsfs-uring ] && echo 1 >/sys/module/fuse/parameters/enable_uring
	mnt "$sys" "$d"
	dd if=/var/tmp/xtsfs-bench/cache/random-1024M.bin of="$d/m/f" bs=1M count=256 \
		conv=fsync status=none
	fusermount3 -u "$d/m"
	sleep 1
	sync
	echo 3 >/proc/sys/vm/drop_caches
	mnt "$sys" "$d"
	read -r iops us <<<"$(fio_cell "$rw" "$jobs" "$d/m/f" "$d/m")"
	echo "$sys $rw $jobs: $iops IOPS, daemon CPU $us us/op"
	fusermount3 -u "$d/m"
	sleep 1
	[ "$sys" = xtsfs-uring ] && echo N >/sys/module/fuse/parameters/enable_uring
done
rm -rf "$W"
