#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# netbench.sh - xtsfs on network storage against the same storage
# without xtsfs (issue 19 point 4): sshfs and a GlusterFS client, both
# served on loopback by tests/net/services.sh (started and stopped here,
# state in the work dir). A benchmark: it measures, it asserts nothing
# about speed; it fails only if a step fails or data read back differs.
#
# Systems (each on a directory of its own on the network storage; the
# sshfs and GlusterFS client mounts are this script's own):
#   sshfs          a directory on an sshfs mount of the loopback sshd
#   sshfs+xtsfs    an xtsfs volume on another sshfs mount of it
#   gluster        a directory on a GlusterFS client mount (one brick)
#   gluster+xtsfs  an xtsfs volume on another client mount of it
# xtsfs is mounted with its defaults unless --xtsfs-opts says otherwise
# (one client: no -o sharedstorage, see doc/USAGE.md); sshfs with its
# defaults.
#
# Workloads (each run: every workload on every system in turn, so the
# drifts of a shared machine hit all four alike; the table gives the
# median of the runs):
#   seq_write      dd of a random file of --mib MiB (in the page cache)
#                  to MNT/big, bs=1M, conv=fsync                MB/s
#   seq_read_cold  dd of MNT/big to /dev/null after a cold start: every
#                  mount of the system (xtsfs and the client below it)
#                  unmounted, sync, drop_caches, mounted again     MB/s
#                  (then compared with the source: cmp, untimed)
#   rand_read      fio randread, bs=4k, psync, buffered, 1 job, on a
#                  64 MiB file, after a cold start            IOPS
#   rand_write     fio randwrite on the same file, end_fsync=1  IOPS
#                  (skipped, with a note, when fio is not installed)
#   untar          tar -xf of a tar of the first 1500 files of
#                  /usr/include (about 15 MiB), no sync      seconds
#                  (then tar -d checks it, untimed)
# MB/s is 10^6 bytes per second of wall-clock time.
#
# Usage: netbench.sh [--runs N] [--mib N] [--fio-seconds N] [--short]
#                    [--xtsfs-bin DIR] [--xtsfs-opts OPTS] [--workdir DIR]
#   --runs N         runs per workload and system (default 3)
#   --mib N          size of the sequential file (default 256)
#   --fio-seconds N  length of each fio run (default 5)
#   --short          1 run, 16 MiB, 1 s of fio, 200 files: a smoke test
#   --xtsfs-bin DIR  where xtsfs and xtsfs-mkfs are (default build/tools)
#   --xtsfs-opts OPTS  mount xtsfs with -o OPTS (e.g. writeback)
#   --workdir DIR    on a disk, not tmpfs (default: a new directory
#                    under /var/tmp); everything made there is removed
# Run as root (FUSE and client mounts, drop_caches).
set -eu

here=$(cd "$(dirname "$0")/../.." && pwd)
BENCH_PROG=netbench.sh
# shellcheck source=tests/bench/lib.sh
. "$here/tests/bench/lib.sh"

runs=3
mib=256
fio_s=5
files=1500
bin=$here/build/tools
xopts=()
workdir=
while [ $# -gt 0 ]; do
	case $1 in
	--runs) runs=$2; shift 2 ;;
	--mib) mib=$2; shift 2 ;;
	--fio-seconds) fio_s=$2; shift 2 ;;
	--short) runs=1; mib=16; fio_s=1; files=200; shift ;;
	--xtsfs-bin) bin=$2; shift 2 ;;
	--xtsfs-opts) xopts=(-o "$2"); shift 2 ;;
	--workdir) workdir=$2; shift 2 ;;
	-h | --help) sed -n '3,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "$BENCH_PROG: unknown argument $1 (--help)" >&2; exit 2 ;;
	esac
done
for p in "$bin/xtsfs" "$bin/xtsfs-mkfs"; do
	[ -x "$p" ] || { echo "$BENCH_PROG: $p not found (--xtsfs-bin)" >&2; exit 2; }
done
[ "$(id -u)" -eq 0 ] || { echo "$BENCH_PROG: run as root" >&2; exit 2; }
why=$("$here/tests/net/services.sh" check) || { echo "$BENCH_PROG: $why" >&2; exit 2; }
if [ -z "$workdir" ]; then
	W=$(mktemp -d /var/tmp/xtsfs-netbench.XXXXXX)
else
	case $(findmnt -n -o FSTYPE --target "$(dirname "$workdir")" | head -n 1) in
	tmpfs | ramfs) echo "$BENCH_PROG: $workdir is on tmpfs: use a disk" >&2; exit 2 ;;
	esac
	mkdir "$workdir"
	W=$(cd "$workdir" && pwd)
fi
S=$W/services
MOUNTS=()
cleanup() {
	local i m
	for ((i = ${#MOUNTS[@]} - 1; i >= 0; i--)); do
		m=${MOUNTS[i]}
		mountpoint -q "$m" && unmount_wait "$m"
	done
	"$here/tests/net/services.sh" stop "$S" >/dev/null 2>&1 || true
	rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

"$here/tests/net/services.sh" start "$S"
# shellcheck disable=SC1091
. "$S/env"
(umask 077 && printf 'netbench passphrase\n' >"$W/pass")

SYSTEMS=(sshfs sshfs+xtsfs gluster gluster+xtsfs)
declare -A LOW MNT

# mount_system SYS: its client mount (and xtsfs on it); MNT[SYS] is
# where the workloads run
mount_system() {
	local sys=$1 low=$W/low/$1 name=${1//+/-}
	mkdir -p "$low"
	case $sys in
	sshfs*)
		mkdir -p "$NET_SSH_EXPORT/$name"
		sshfs -F "$NET_SSH_CONFIG" "$NET_SSH_HOST:$NET_SSH_EXPORT/$name" "$low"
		;;
	gluster*)
		glusterfs --volfile-server="$NET_GLUSTER_SERVER" --volfile-id="$NET_GLUSTER_VOLUME" \
			-l "$W/gluster-$name.log" "$low"
		local i
		for i in $(seq 1 50); do stat "$low/." >/dev/null 2>&1 && break; sleep 0.1; done
		;;
	esac
	MOUNTS+=("$low")
	LOW[$sys]=$low/$name
	mkdir -p "${LOW[$sys]}"
	case $sys in
	*+xtsfs)
		[ -e "${LOW[$sys]}/c" ] || "$bin/xtsfs-mkfs" -q --argon2-time 1 --argon2-memory 64 \
			--argon2-lanes 1 --passfile "$W/pass" "${LOW[$sys]}/c"
		mkdir -p "$W/mnt/$name"
		"$bin/xtsfs" --passfile "$W/pass" ${xopts[@]+"${xopts[@]}"} \
			"${LOW[$sys]}/c" "$W/mnt/$name"
		MOUNTS+=("$W/mnt/$name")
		MNT[$sys]=$W/mnt/$name
		;;
	*) MNT[$sys]=${LOW[$sys]} ;;
	esac
}

# unmount_system SYS: xtsfs first, then the client below it
unmount_system() {
	local sys=$1 name=${1//+/-}
	case $sys in *+xtsfs) unmount_wait "$W/mnt/$name" ;; esac
	unmount_wait "$W/low/$sys"
}

# cold SYS: a cold start of every layer of SYS
cold() {
	unmount_system "$1"
	sync
	echo 3 >/proc/sys/vm/drop_caches
	mount_system "$1"
}

now_ns() { date +%s%N; }
# mbps NS: MB/s (10^6 bytes a second) of --mib MiB in NS nanoseconds
mbps() { python3 -c 'import sys; print("%.0f" % (int(sys.argv[1]) * 1e3 / int(sys.argv[2])))' $((mib * 1048576)) "$1"; }

# the sources: a random file and a tar, both in the page cache
head -c $((mib * 1048576)) /dev/urandom >"$W/src"
(cd / && find usr/include -type f | LC_ALL=C sort | head -n "$files" |
	tar -cf "$W/tree.tar" -T -)
cat "$W/src" "$W/tree.tar" >/dev/null
have fio || echo "$BENCH_PROG: fio not found: rand_read and rand_write left out" >&2

declare -A RES
# record SYS WORKLOAD VALUE
record() { RES[$1,$2]="${RES[$1,$2]:-} $3"; }

# fio_iops SYS RW: IOPS of one fio run on MNT/fio.dat
fio_iops() {
	local extra=()
	[ "$2" = randwrite ] && extra=(--end_fsync=1)
	fio --name=net --filename="${MNT[$1]}/fio.dat" --size=64m --rw="$2" --bs=4k \
		--ioengine=psync --numjobs=1 --runtime="$fio_s" --time_based "${extra[@]}" \
		--output-format=json --output="$W/fio.json" >/dev/null
	python3 -c 'import json, sys; j = json.load(open(sys.argv[1]))["jobs"][0]
print("%.0f" % (j["read"]["iops"] + j["write"]["iops"]))' "$W/fio.json"
}

for sys in "${SYSTEMS[@]}"; do mount_system "$sys"; done
for run in $(seq 1 "$runs"); do
	echo "$BENCH_PROG: run $run of $runs" >&2
	for sys in "${SYSTEMS[@]}"; do
		m=${MNT[$sys]}
		t0=$(now_ns)
		dd if="$W/src" of="$m/big" bs=1M conv=fsync status=none
		t1=$(now_ns)
		record "$sys" seq_write "$(mbps $((t1 - t0)))"
	done
	for sys in "${SYSTEMS[@]}"; do
		cold "$sys"
		m=${MNT[$sys]}
		t0=$(now_ns)
		dd if="$m/big" of=/dev/null bs=1M status=none
		t1=$(now_ns)
		record "$sys" seq_read_cold "$(mbps $((t1 - t0)))"
		cmp "$W/src" "$m/big"
		rm -f "$m/big"
	done
	if have fio; then
		for sys in "${SYSTEMS[@]}"; do
			# lay the file out (untimed), then read it cold
			fio --name=lay --filename="${MNT[$sys]}/fio.dat" --size=64m --rw=write \
				--bs=1m --end_fsync=1 --output=/dev/null >/dev/null
			cold "$sys"
			record "$sys" rand_read "$(fio_iops "$sys" randread)"
		done
		for sys in "${SYSTEMS[@]}"; do
			cold "$sys"
			record "$sys" rand_write "$(fio_iops "$sys" randwrite)"
			rm -f "${MNT[$sys]}/fio.dat"
		done
	fi
	for sys in "${SYSTEMS[@]}"; do
		m=${MNT[$sys]}
		mkdir "$m/tree"
		t0=$(now_ns)
		tar -C "$m/tree" -xf "$W/tree.tar"
		t1=$(now_ns)
		record "$sys" untar "$(python3 -c 'import sys; print("%.2f" % (int(sys.argv[1]) / 1e9))' $((t1 - t0)))"
		tar -C "$m/tree" -df "$W/tree.tar"
		rm -rf "$m/tree"
	done
done

median() { printf '%s\n' "$@" | LC_ALL=C sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

echo
echo "netbench: $runs run(s), medians; seq $mib MiB, fio ${fio_s} s on 64 MiB, untar of $files files"
[ ${#xopts[@]} -eq 0 ] || echo "xtsfs mounted with ${xopts[*]}"
echo
echo "| workload | sshfs | sshfs+xtsfs | ratio | gluster | gluster+xtsfs | ratio |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
for w in seq_write seq_read_cold rand_read rand_write untar; do
	[ -n "${RES[sshfs,$w]:-}" ] || continue
	row="| $w"
	case $w in seq_*) unit="MB/s" ;; rand_*) unit=IOPS ;; *) unit=s ;; esac
	row="$row ($unit)"
	for pair in "sshfs sshfs+xtsfs" "gluster gluster+xtsfs"; do
		read -r a b <<<"$pair"
		# shellcheck disable=SC2086
		ma=$(median ${RES[$a,$w]})
		# shellcheck disable=SC2086
		mb=$(median ${RES[$b,$w]})
		row="$row | $ma | $mb | $(python3 -c 'import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); print("%.2f" % (b / a if a else 0))' "$ma" "$mb")"
	done
	echo "$row |"
done
echo
echo "ratio: xtsfs on top / the same storage without it (for untar, seconds: above 1 is slower)"
echo "all runs:"
for w in seq_write seq_read_cold rand_read rand_write untar; do
	for sys in "${SYSTEMS[@]}"; do
		[ -n "${RES[$sys,$w]:-}" ] && echo "  $w $sys:${RES[$sys,$w]}"
	done
done
