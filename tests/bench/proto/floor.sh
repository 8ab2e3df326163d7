#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# floor.sh ROUNDS [SYSTEM...]: random 4 KiB I/O on xtsfs against the FUSE
# floor (nullfs.c, built here), interleaved, fio 10 s per cell on a
# 256 MiB file, caches dropped and the file system mounted afresh before
# each cell. Systems: mem (nullfs, bytes in memory), lower0 (nullfs, one
# pread/pwrite per request on a lower file at the same offset), lower40
# (the same, 40 bytes further on, where xtsfs keeps byte 0), lower40w
# (lower40 asking for the range with POSIX_FADV_WILLNEED first), xtsfs;
# over io_uring (needs the tree built: nullfs links xtsfs's glue; sets
# the fuse module's enable_uring for the run and puts it back): mem-uring
# and xtsfs-uring (threads pinned, xtsfs's -o uring), mem-unpinned and
# xtsfs-unpinned (-o uring_unpinned), lower0-uring and lower40-uring.
# Prints one line per cell: IOPS and the daemon's CPU per request.
# WARM=1: the lower files are read into the page cache before each cell
# instead of the caches being dropped. RW="randwrite" (or randread) and
# JOBS="1" limit the cells; XOPTS="-o ..." are mount options added to
# every xtsfs system (xtsfs, xtsfs-uring, xtsfs-unpinned, aligned,
# aligned-uring). Systems aligned and aligned-uring are xtsfs and
# xtsfs-uring on a volume of the aligned layout (xtsfs-mkfs
# --layout=aligned). ALT_BIN=DIR: systems alt and alt-uring are xtsfs
# and xtsfs-uring run from another build's tools (a prototype).
# mem-single is nullfs with one thread (libfuse's loop), mem-spin and
# lower40-spin one thread that polls /dev/fuse without sleeping for
# SPIN_US (default 50) µs after each request; securefs is the peer, in
# its default format (a reference for the targets).
# PIN=CPU: the daemon (every thread) and fio both run on that one CPU
# (taskset). HALTPOLL_NS=N: the guest's cpuidle halt polling
# (/sys/module/haltpoll/parameters/guest_halt_poll_ns) set to N for the
# run and put back after.
# Results: doc/PERFORMANCE.md, "The FUSE floor" and "The floor is the
# vCPUs' wake-ups".
set -u
R=${1:-3}
shift
SYSTEMS=("$@")
[ ${#SYSTEMS[@]} = 0 ] && SYSTEMS=(mem lower0 lower40 xtsfs)
HERE=$(cd "$(dirname "$0")" && pwd)
XB=${XTSFS_BIN:-$HERE/../../../build/tools}
SRC=${SRC:-/var/tmp/xtsfs-bench/cache/random-1024M.bin}
W=/var/tmp/xtsfs-floor
NULLFS=$W/nullfs
read -r -a XO <<<"${XOPTS:-}"
BENCH_PROG=floor
# shellcheck source=tests/bench/lib.sh
. "$HERE/../lib.sh"

URING_PARAM=/sys/module/fuse/parameters/enable_uring
URING_WAS=
HALTPOLL_PARAM=/sys/module/haltpoll/parameters/guest_halt_poll_ns
HALTPOLL_WAS=
cleanup() {
	local s
	for s in "${SYSTEMS[@]}"; do
		if mountpoint -q "$W/$s/m"; then fusermount3 -u "$W/$s/m"; fi
	done
	rm -rf "$W"
	[ -z "$HALTPOLL_WAS" ] || echo "$HALTPOLL_WAS" >"$HALTPOLL_PARAM"
	if [ -n "$URING_WAS" ]; then
		case $URING_WAS in Y | 1) echo 1 ;; *) echo 0 ;; esac >"$URING_PARAM"
	fi
}
trap cleanup EXIT
mkdir -p "$W"
echo pw >"$W/pass"
chmod 600 "$W/pass"
floor_build "$HERE/nullfs.c" "$NULLFS" "$HERE/../../../build/src/fs" || exit 1
case " ${SYSTEMS[*]} " in
*-uring\ * | *-unpinned\ *)
	URING_WAS=$(cat "$URING_PARAM") || exit 1
	echo 1 >"$URING_PARAM" || exit 1 ;;
esac
if [ -n "${HALTPOLL_NS:-}" ]; then
	HALTPOLL_WAS=$(cat "$HALTPOLL_PARAM") || exit 1
	echo "$HALTPOLL_NS" >"$HALTPOLL_PARAM" || exit 1
fi
# xt_of SYSTEM: the tools (XT_BIN) and transport options (XT_OPT) of an
# xtsfs system
xt_of() {
	XT_BIN=$XB
	XT_OPT=()
	XT_MKFS=()
	case $1 in alt*) XT_BIN=${ALT_BIN:?set ALT_BIN to a build/tools} ;; esac
	case $1 in aligned*) XT_MKFS=(--layout=aligned) ;; esac
	case $1 in
	*-uring) XT_OPT=(-o uring) ;;
	*-unpinned) XT_OPT=(-o uring_unpinned) ;;
	esac
}
mnt() {
	case $1 in
	mem) "$NULLFS" "$W/$1/m" 256 & ;;
	lower0) "$NULLFS" -l "$W/$1/c/f" -O 0 "$W/$1/m" 256 & ;;
	lower40) "$NULLFS" -l "$W/$1/c/f" -O 40 "$W/$1/m" 256 & ;;
	lower40w) "$NULLFS" -l "$W/$1/c/f" -O 40 -W "$W/$1/m" 256 & ;;
	mem-single) "$NULLFS" -s "$W/$1/m" 256 & ;;
	mem-spin) "$NULLFS" -S "${SPIN_US:-50}" "$W/$1/m" 256 & ;;
	lower40-spin) "$NULLFS" -S "${SPIN_US:-50}" -l "$W/$1/c/f" -O 40 "$W/$1/m" 256 & ;;
	mem-uring) "$NULLFS" -u "$W/$1/m" 256 & ;;
	mem-unpinned) "$NULLFS" -U "$W/$1/m" 256 & ;;
	lower0-uring) "$NULLFS" -u -l "$W/$1/c/f" -O 0 "$W/$1/m" 256 & ;;
	lower40-uring) "$NULLFS" -u -l "$W/$1/c/f" -O 40 "$W/$1/m" 256 & ;;
	securefs) securefs mount -b --pass pw "$W/$1/c" "$W/$1/m" >/dev/null 2>&1 ;;
	xtsfs | xtsfs-uring | xtsfs-unpinned | aligned | aligned-uring | alt | alt-uring)
		xt_of "$1"
		"$XT_BIN/xtsfs" --passfile "$W/pass" "${XT_OPT[@]}" "${XO[@]}" "$W/$1/c" "$W/$1/m" ;;
	esac
	for _ in $(seq 50); do
		mountpoint -q "$W/$1/m" && return 0
		sleep 0.1
	done
	echo "floor: $1 did not mount" >&2
	return 1
}
for s in "${SYSTEMS[@]}"; do
	mkdir -p "$W/$s/m" "$W/$s/c"
	case $s in
	mem | mem-single | mem-spin | mem-uring | mem-unpinned) ;;
	securefs)
		securefs create --pbkdf pkcs5-pbkdf2-hmac-sha256 --rounds 1 \
			--pass pw "$W/$s/c" >/dev/null || exit 1
		mnt "$s" || exit 1
		dd if="$SRC" of="$W/$s/m/f" bs=1M count=256 conv=fsync status=none
		fusermount3 -u "$W/$s/m" ;;
	lower0 | lower0-uring) head -c 256M "$SRC" >"$W/$s/c/f" ;;
	lower40 | lower40w | lower40-spin | lower40-uring) { head -c 40 /dev/zero; head -c 256M "$SRC"; } >"$W/$s/c/f" ;;
	xtsfs | xtsfs-uring | xtsfs-unpinned | aligned | aligned-uring | alt | alt-uring)
		xt_of "$s"
		"$XT_BIN/xtsfs-mkfs" -q --argon2-time 1 --argon2-memory 64 --argon2-lanes 1 \
			"${XT_MKFS[@]}" --passfile "$W/pass" "$W/$s/c"
		"$XT_BIN/xtsfs" --passfile "$W/pass" "${XO[@]}" "$W/$s/c" "$W/$s/m"
		dd if="$SRC" of="$W/$s/m/f" bs=1M count=256 conv=fsync status=none
		fusermount3 -u "$W/$s/m" ;;
	*) echo "floor: unknown system $s" >&2; exit 2 ;;
	esac
done
for r in $(seq "$R"); do
	for rw in ${RW:-randread randwrite}; do
		for j in ${JOBS:-1 2}; do
			for s in "${SYSTEMS[@]}"; do
				sync
				echo 3 >/proc/sys/vm/drop_caches
				if [ "${WARM:-0}" = 1 ]; then
					find "$W/$s/c" -type f -size +1M -exec cat {} + >/dev/null
				fi
				mnt "$s" || exit 1
				if [ -n "${PIN:-}" ]; then
					for p in $(daemon_pids "$W/$s/m"); do
						taskset -a -p -c "$PIN" "$p" >/dev/null
					done
				fi
				read -r iops us <<<"$(fio_cell "$rw" "$j" "$W/$s/m/f" "$W/$s/m")"
				echo "round $r $rw ${j}j $s: $iops IOPS, daemon $us us/op"
				fusermount3 -u "$W/$s/m"
				sleep 0.5
			done
		done
	done
done
