#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# netbench.sh [--runs N] [--mib N] BUILDDIR: throughput of xtsfs on network
# storage against the same storage without xtsfs (issue 19), on the
# loopback services of tests/net/services.sh: sshfs and one GlusterFS
# client. Rows: sequential write of N MiB + fsync, sequential read cold
# (page caches dropped), 4 KiB random reads (fio, if installed, 10 s),
# untar of a small tree (the xtsfs source, 2 copies). Each row is run
# N times (default 3), the two systems interleaved; the medians are
# printed as a Markdown table. A benchmark, not a test. Run as root.
set -eu
runs=3
mib=256
while [ $# -gt 1 ]; do
	case $1 in
	--runs) runs=$2; shift 2 ;;
	--mib) mib=$2; shift 2 ;;
	*) break ;;
	esac
done
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")/../.." && pwd)
W=$(mktemp -d /var/tmp/xtsfs-netbench.XXXXXX)
S=$W/services
mounts=()
cleanup() {
	local m
	for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do
		m=${mounts[$i]}
		mountpoint -q "$m" && { fusermount3 -u "$m" 2>/dev/null || umount -l "$m"; }
	done
	"$here/tests/net/services.sh" stop "$S" >/dev/null 2>&1 || true
	rm -rf "$W"
}
trap cleanup EXIT
"$here/tests/net/services.sh" start "$S"
# shellcheck disable=SC1091
. "$S/env"
printf 'netbench\n' >"$W/pass"
chmod 600 "$W/pass"
mkdir -p "$W/sshfs" "$W/gluster" "$W/tarsrc"
mounts+=("$W/sshfs")
sshfs -F "$NET_SSH_CONFIG" "$NET_SSH_HOST:$NET_SSH_EXPORT" "$W/sshfs"
mounts+=("$W/gluster")
glusterfs --volfile-server="$NET_GLUSTER_SERVER" \
	--volfile-id="$NET_GLUSTER_VOLUME" -l "$W/gluster.log" "$W/gluster"
sleep 1
tar -C "$here" -cf "$W/tree.tar" src tools doc tests/unit
# dir_for LOWER SYSTEM: a directory to work in; xtsfs is mounted on LOWER
dir_for() {
	local low=$W/$1 sys=$2
	if [ "$sys" = bare ]; then
		mkdir -p "$low/bare"
		echo "$low/bare"
		return
	fi
	if [ ! -d "$W/x-$1" ]; then
		"$build/tools/xtsfs-mkfs" -q --passfile "$W/pass" "$low/cipher"
		mkdir "$W/x-$1"
		mounts+=("$W/x-$1")
		"$build/tools/xtsfs" --passfile "$W/pass" -o sharedstorage \
			"$low/cipher" "$W/x-$1"
	fi
	echo "$W/x-$1"
}
secs() { python3 -c 'import sys, time; t = time.monotonic(); import subprocess; subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); print("%.3f" % (time.monotonic() - t))' "$@"; }
drop() { sync; echo 3 >/proc/sys/vm/drop_caches; }
declare -A res
for r in $(seq 1 "$runs"); do
	for low in sshfs gluster; do
		for sys in bare xtsfs; do
			d=$(dir_for "$low" "$sys")
			rm -f "$d/seq"
			t=$(secs dd if=/dev/zero of="$d/seq" bs=1M count="$mib" conv=fsync)
			res[$low,$sys,write]+="$(python3 -c "print($mib / $t)") "
			drop
			t=$(secs dd if="$d/seq" of=/dev/null bs=1M)
			res[$low,$sys,read]+="$(python3 -c "print($mib / $t)") "
			if command -v fio >/dev/null; then
				drop
				iops=$(fio --name=r --filename="$d/seq" --rw=randread --bs=4k \
					--runtime=10 --time_based --ioengine=psync \
					--output-format=terse | cut -d';' -f8)
				res[$low,$sys,rand]+="$iops "
			fi
			rm -rf "$d/tree"
			mkdir "$d/tree"
			t=$(secs tar -C "$d/tree" -xf "$W/tree.tar")
			res[$low,$sys,untar]+="$t "
			rm -rf "$d/tree" "$d/seq"
		done
	done
done
median() { printf '%s\n' $1 | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
echo "| lower | row | without xtsfs | xtsfs -o sharedstorage | ratio |"
echo "| --- | --- | --- | --- | --- |"
for low in sshfs gluster; do
	for row in write read rand untar; do
		[ -n "${res[$low,bare,$row]:-}" ] || continue
		b=$(median "${res[$low,bare,$row]}")
		x=$(median "${res[$low,xtsfs,$row]}")
		unit="MiB/s"
		[ $row = rand ] && unit="IOPS"
		[ $row = untar ] && unit="s"
		printf '| %s | %s (%s) | %.1f | %.1f | %.2f |\n' "$low" "$row" "$unit" "$b" "$x" \
			"$(python3 -c "print($x / $b)")"
	done
done
