#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# untar-ab.sh ROUNDS SYSTEM...: wall time and daemon CPU of tar -x of the
# 12,000-file bench tree, each system on a fresh volume, interleaved.
# Systems: xtsfs, xtsfs-OPT (mounted with -o OPT), gocryptfs,
# fuse-overlayfs, securefs.
set -u
TAR=/var/tmp/xtsfs-bench/cache/tree-12000.tar
W=/var/tmp/untar-ab
HERE=$(cd "$(dirname "$0")" && pwd)
XB=${XTSFS_BIN:-$HERE/../../../build/tools}
BENCH_PROG=untar-ab
# shellcheck source=tests/bench/lib.sh
. "$HERE/../lib.sh"
rounds=$1
shift
rm -rf "$W"
mkdir -p "$W"
echo pw >"$W/pass"
chmod 600 "$W/pass"
for r in $(seq 1 "$rounds"); do
	for sys in "$@"; do
		d=$W/$sys.$r
		mkdir -p "$d/c" "$d/m" "$d/u" "$d/w"
		case $sys in
		xtsfs*)
			"$XB/xtsfs-mkfs" -q --argon2-time 1 --argon2-memory 64 --argon2-lanes 1 \
				--passfile "$W/pass" "$d/c"
			opts=()
			[ "$sys" != xtsfs ] && opts=(-o "${sys#xtsfs-}")
			"$XB/xtsfs" --passfile "$W/pass" "${opts[@]}" "$d/c" "$d/m" ;;
		gocryptfs)
			gocryptfs -q -init -scryptn 10 -passfile "$W/pass" "$d/c" >/dev/null
			gocryptfs -q -passfile "$W/pass" "$d/c" "$d/m" ;;
		fuse-overlayfs)
			mkdir -p "$d/l"
			fuse-overlayfs -o "lowerdir=$d/l,upperdir=$d/u,workdir=$d/w" "$d/m" ;;
		securefs)
			securefs create --pass pw "$d/c" >/dev/null 2>&1
			securefs mount -b --pass pw "$d/c" "$d/m" >/dev/null 2>&1
			sleep 1 ;;
		*) echo "untar-ab: unknown system $sys" >&2; exit 2 ;;
		esac
		sync
		sleep 2
		c0=$(mount_ticks "$d/m")
		t0=$(date +%s.%N)
		tar -C "$d/m" -xf "$TAR"
		t1=$(date +%s.%N)
		c1=$(mount_ticks "$d/m")
		echo "$r $sys wall $(echo "$t1 - $t0" | bc | cut -c1-6) s daemon_cpu $((c1 - c0)) ticks"
		fusermount3 -u "$d/m"
		sleep 1
		rm -rf "$d"
	done
done
