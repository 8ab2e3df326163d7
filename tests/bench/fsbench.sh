#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# fsbench.sh - filesystem benchmark: the bare lower directory, xtsfs and
# gocryptfs, measured in one invocation, with the same data, on the same
# lower filesystem.
#
# What it measures (each workload on every system, --runs N times; the
# table gives the median and the [min-max] spread of the N runs):
#   seq_write      dd of a pre-generated random file (in the page cache,
#                  so the source costs nothing and no compression or
#                  zero-detection trick can help) to MNT/big, bs=1M,
#                  conv=fsync                                      MB/s
#   seq_read_cold  dd of MNT/big to /dev/null after a cold start: FUSE
#                  systems are unmounted and mounted again, then
#                  sync; echo 3 > /proc/sys/vm/drop_caches         MB/s
#   seq_read_warm  the same read again, at once                    MB/s
#                  (then MNT/big is compared with the source: cmp)
#   rand_read      fio, psync, bs=4k, numjobs=1, buffered, on a file laid
#                  out beforehand from the random source, after a cold
#                  start as above                                  IOPS
#   rand_write     fio randwrite on the same file, end_fsync=1     IOPS
#   tree_extract   tar -xf of a tar of ~10,000 small files (a copy of
#                  /usr/include and /usr/share/doc, trimmed or padded;
#                  made once and cached in the work dir)           seconds
#                  (then tar -d checks contents and metadata, untimed)
#   tree_find      find MNT/tree | wc -l after a cold start        seconds
#   tree_lsR       ls -lR MNT/tree > /dev/null, right after        seconds
#   tree_rm        rm -rf MNT/tree                                 seconds
# MB/s is 10^6 bytes per second, from the wall-clock time of the command.
# Runs are interleaved: for each run, for each workload group, every
# system in turn, so slow drifts of a shared machine hit all systems alike.
#
# Systems (each on a fresh empty directory under WORKDIR/run.PID):
#   bare       the plain lower directory
#   xtsfs      xtsfs-mkfs (cheap Argon2id: time 1, 64 KiB, 1 lane) + xtsfs
#   gocryptfs  gocryptfs -init -scryptn 10 + gocryptfs
# Adding a system: write setup_NAME DIR (make the volume in DIR, set
# MNT[NAME], mount it and register_mount it), teardown_NAME, and, for a
# FUSE system, remount_NAME (used for the cold starts); add NAME to
# KNOWN_SYSTEMS and, if it needs a program, to check_prereqs.
#
# Usage: tests/bench/fsbench.sh [--short] [--runs N] [--systems LIST]
#        [--workloads seq,fio,tree] [--workdir DIR] [--json FILE]
# Needs root (FUSE mounts, drop_caches). See tests/bench/README.md.

set -euo pipefail
shopt -s inherit_errexit
export LC_ALL=C

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# ---------------------------------------------------------------- settings
WORKDIR=/var/tmp/xtsfs-bench
RUNS=3
RUNS_SET=0
SYSTEMS_ARG=bare,xtsfs,gocryptfs
GROUPS_ARG=seq,fio,tree
SHORT=0
JSON_OUT=
XTSFS_BIN=${XTSFS_BIN:-$REPO/build/tools}

KNOWN_SYSTEMS=(bare xtsfs gocryptfs)
KNOWN_GROUPS=(seq fio tree)

# Workloads: id, group, label, unit, which way is better.
WL_IDS=(seq_write seq_read_cold seq_read_warm rand_read rand_write
	tree_extract tree_find tree_lsR tree_rm)
declare -A WL_GROUP=(
	[seq_write]=seq [seq_read_cold]=seq [seq_read_warm]=seq
	[rand_read]=fio [rand_write]=fio
	[tree_extract]=tree [tree_find]=tree [tree_lsR]=tree [tree_rm]=tree)
declare -A WL_UNIT=(
	[seq_write]=MB/s [seq_read_cold]=MB/s [seq_read_warm]=MB/s
	[rand_read]=IOPS [rand_write]=IOPS
	[tree_extract]=s [tree_find]=s [tree_lsR]=s [tree_rm]=s)
declare -A WL_LABEL # filled in by set_sizes

usage() {
	cat <<EOF
Usage: $0 [OPTION]...
Benchmark the bare lower filesystem, xtsfs and gocryptfs with the same
workloads (sequential dd, random 4 KiB fio, tar of many small files).
Run as root.

  --short             tiny sizes for CI (32 MiB files, 500 small files,
                      1 run, fio 2 s): checks that the script works
  --runs N            repetitions of every workload (default 3; 1 with
                      --short); the table shows median [min-max]
  --systems LIST      comma-separated, from: ${KNOWN_SYSTEMS[*]}
                      (default $SYSTEMS_ARG)
  --workloads LIST    comma-separated groups, from: ${KNOWN_GROUPS[*]}
                      (default $GROUPS_ARG)
  --workdir DIR       where the volumes live, on a disk filesystem, not
                      tmpfs (default $WORKDIR); DIR/cache keeps the
                      random source file and the tar between invocations
  --xtsfs-bin DIR     directory with xtsfs and xtsfs-mkfs
                      (default \$XTSFS_BIN or $REPO/build/tools)
  --json FILE         also write every raw number to FILE
  -h, --help          show this help

Exit status: 0 if every selected workload ran and checked out on every
system (fio rows are skipped, not failed, when fio is not installed),
1 if any failed, 2 on bad usage or missing prerequisites.
EOF
}

die() {
	echo "fsbench: $*" >&2
	exit 2
}

parse_args() {
	while [ $# -gt 0 ]; do
		case $1 in
		--short) SHORT=1 ;;
		--runs) RUNS=${2:?--runs needs N}; RUNS_SET=1; shift ;;
		--runs=*) RUNS=${1#*=}; RUNS_SET=1 ;;
		--systems) SYSTEMS_ARG=${2:?--systems needs a list}; shift ;;
		--systems=*) SYSTEMS_ARG=${1#*=} ;;
		--workloads) GROUPS_ARG=${2:?--workloads needs a list}; shift ;;
		--workloads=*) GROUPS_ARG=${1#*=} ;;
		--workdir) WORKDIR=${2:?--workdir needs DIR}; shift ;;
		--workdir=*) WORKDIR=${1#*=} ;;
		--xtsfs-bin) XTSFS_BIN=${2:?--xtsfs-bin needs DIR}; shift ;;
		--xtsfs-bin=*) XTSFS_BIN=${1#*=} ;;
		--json) JSON_OUT=${2:?--json needs FILE}; shift ;;
		--json=*) JSON_OUT=${1#*=} ;;
		-h | --help) usage; exit 0 ;;
		*) usage >&2; die "unknown argument: $1" ;;
		esac
		shift
	done
	[[ $RUNS =~ ^[1-9][0-9]*$ ]] || die "--runs: not a positive number: $RUNS"
	if [ "$SHORT" = 1 ] && [ "$RUNS_SET" = 0 ]; then
		RUNS=1
	fi
	IFS=, read -r -a SYSTEMS <<<"$SYSTEMS_ARG"
	IFS=, read -r -a GROUPS_SEL <<<"$GROUPS_ARG"
	[ ${#SYSTEMS[@]} -gt 0 ] || die "--systems: empty list"
	[ ${#GROUPS_SEL[@]} -gt 0 ] || die "--workloads: empty list"
	local s g
	for s in "${SYSTEMS[@]}"; do
		declare -F "setup_$s" >/dev/null ||
			die "--systems: unknown system '$s' (known: ${KNOWN_SYSTEMS[*]})"
	done
	for g in "${GROUPS_SEL[@]}"; do
		declare -F "phase_$g" >/dev/null ||
			die "--workloads: unknown group '$g' (known: ${KNOWN_GROUPS[*]})"
	done
	if [ -n "$JSON_OUT" ]; then
		JSON_OUT=$(realpath -m -- "$JSON_OUT")
	fi
}

set_sizes() {
	if [ "$SHORT" = 1 ]; then
		SEQ_MIB=32 FIO_MIB=32 FIO_SECS=2 TREE_FILES=500
	else
		SEQ_MIB=1024 FIO_MIB=256 FIO_SECS=15 TREE_FILES=10000
	fi
	local seq
	if [ "$SEQ_MIB" -ge 1024 ]; then
		seq="$((SEQ_MIB / 1024)) GiB"
	else
		seq="$SEQ_MIB MiB"
	fi
	WL_LABEL=(
		[seq_write]="seq write $seq (dd bs=1M, fsync)"
		[seq_read_cold]="seq read $seq, cold"
		[seq_read_warm]="seq read $seq, warm"
		[rand_read]="rand read 4k, $FIO_MIB MiB file (fio ${FIO_SECS}s)"
		[rand_write]="rand write 4k, $FIO_MIB MiB file (fio ${FIO_SECS}s)"
		[tree_extract]="tar -x $TREE_FILES small files"
		[tree_find]="find tree | wc -l, cold"
		[tree_lsR]="ls -lR tree"
		[tree_rm]="rm -rf tree")
}

# ---------------------------------------------------------- prerequisites
have() { command -v "$1" >/dev/null 2>&1; }

check_prereqs() {
	local missing=() s
	[ "$(id -u)" = 0 ] ||
		missing+=("root (FUSE mounts and /proc/sys/vm/drop_caches)")
	[ -c /dev/fuse ] || missing+=("/dev/fuse (FUSE kernel module)")
	local tool pkg
	while read -r tool pkg; do
		have "$tool" || missing+=("$tool (Debian package $pkg)")
	done <<-EOF
		dd coreutils
		sort coreutils
		realpath coreutils
		tar tar
		find findutils
		cmp diffutils
		awk mawk
		findmnt util-linux
		mountpoint util-linux
	EOF
	for s in "${SYSTEMS[@]}"; do
		case $s in
		xtsfs | gocryptfs)
			have fusermount3 || missing+=("fusermount3 (Debian package fuse3)") ;;
		esac
		case $s in
		xtsfs)
			[ -x "$XTSFS_BIN/xtsfs" ] && [ -x "$XTSFS_BIN/xtsfs-mkfs" ] ||
				missing+=("$XTSFS_BIN/xtsfs and xtsfs-mkfs (build: meson setup build && ninja -C build, or --xtsfs-bin DIR)") ;;
		gocryptfs)
			have gocryptfs || missing+=("gocryptfs (Debian package gocryptfs)") ;;
		esac
	done
	if [ ${#missing[@]} -gt 0 ]; then
		echo "fsbench: missing prerequisites:" >&2
		printf '  - %s\n' "${missing[@]}" >&2
		exit 2
	fi
	HAVE_FIO=1
	if ! have fio; then
		HAVE_FIO=0
		if in_list fio "${GROUPS_SEL[@]}"; then
			echo "fsbench: NOTE: fio is not installed: the random 4 KiB rows are" \
				"skipped (apt-get install -y fio to get them)" >&2
		fi
	fi
}

in_list() {
	local x=$1 y
	shift
	for y in "$@"; do
		[ "$x" = "$y" ] && return 0
	done
	return 1
}

# Refuse memory-backed work dirs; print the type.
check_workdir() {
	local probe=$WORKDIR
	while [ ! -e "$probe" ]; do # the nearest existing ancestor
		probe=$(dirname -- "$probe")
	done
	FSTYPE=$(findmnt -n -o FSTYPE --target "$probe" | head -n 1)
	FSSOURCE=$(findmnt -n -o SOURCE --target "$probe" | head -n 1)
	case $FSTYPE in
	tmpfs | ramfs | devtmpfs | fuse* | squashfs | proc | sysfs)
		die "$WORKDIR is on $FSTYPE: use --workdir on a disk filesystem (ext4, xfs, btrfs...)" ;;
	ext2 | ext3 | ext4 | xfs | btrfs | f2fs | zfs | bcachefs) ;;
	*) echo "fsbench: WARNING: $WORKDIR is on '$FSTYPE', which may not be a plain disk filesystem" >&2 ;;
	esac
	mkdir -p "$WORKDIR"
	WORKDIR=$(cd "$WORKDIR" && pwd -P)
	# room: the source file, one big file, the tar and its extraction, margin
	local need_kib avail_kib
	need_kib=$(((2 * SEQ_MIB + FIO_MIB + 1024) * 1024))
	avail_kib=$(df -Pk "$WORKDIR" | awk 'NR == 2 {print $4}')
	[ "$avail_kib" -ge "$need_kib" ] ||
		die "$WORKDIR has $((avail_kib / 1024)) MiB free, needs about $((need_kib / 1024)) MiB"
}

# ---------------------------------------------------------- mounts, cleanup
MOUNTS=()
RUN_DIR=
declare -A MNT SYSDIR

register_mount() { MOUNTS+=("$1"); }

# PIDs of processes with exactly $1 among their arguments: the FUSE
# daemon serving that mount point (the paths are unique to this run).
daemon_pids() {
	local p args
	for p in /proc/[0-9]*; do
		{ mapfile -d '' -t args <"$p/cmdline"; } 2>/dev/null || continue
		if [ ${#args[@]} -gt 0 ] && in_list "$1" "${args[@]}"; then
			echo "${p#/proc/}"
		fi
	done
}

# Unmount a FUSE mount point and wait until its daemon has exited, so the
# next mount never races with a daemon still flushing the lower files.
fuse_unmount() {
	local mnt=$1 pids i pid
	mountpoint -q "$mnt" || return 0
	pids=$(daemon_pids "$mnt")
	for i in 1 2 3 4 5 6 7 8 9 10; do
		fusermount3 -u "$mnt" 2>/dev/null && break
		sleep 0.5
	done
	if mountpoint -q "$mnt"; then
		echo "fsbench: $mnt busy; lazy unmount" >&2
		fusermount3 -uz "$mnt" || true
	fi
	for pid in $pids; do
		for i in $(seq 1 300); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
	done
	! mountpoint -q "$mnt"
}

cleanup() {
	local rc=$? m busy=0
	set +e
	trap - INT TERM
	for m in "${MOUNTS[@]}"; do
		fuse_unmount "$m" || busy=1
	done
	if [ -n "$RUN_DIR" ] && [ -d "$RUN_DIR" ]; then
		if [ "$busy" = 0 ]; then
			rm -rf --one-file-system "$RUN_DIR"
		else
			echo "fsbench: left $RUN_DIR (a mount could not be removed)" >&2
		fi
	fi
	exit "$rc"
}

# ---------------------------------------------------------------- systems
# setup_NAME DIR: make a fresh volume under the empty directory DIR and
# mount it; set MNT[NAME] to the directory the workloads use.
# remount_NAME: unmount and mount again (cold start); absent for bare.
# teardown_NAME: unmount. The caller removes DIR.

setup_bare() {
	mkdir -p "$1/dir"
	MNT[bare]=$1/dir
}
teardown_bare() { :; }

setup_xtsfs() {
	mkdir -p "$1/cipher" "$1/mnt"
	"$XTSFS_BIN/xtsfs-mkfs" --argon2-time 1 --argon2-memory 64 \
		--argon2-lanes 1 --passfile "$PASSFILE" "$1/cipher" >"$1/mkfs.log"
	XTSFS_CORE=$(awk -F: '/cipher core/ {sub(/^ +/, "", $2); print $2}' "$1/mkfs.log")
	MNT[xtsfs]=$1/mnt
	register_mount "$1/mnt"
	mount_xtsfs
}
mount_xtsfs() {
	"$XTSFS_BIN/xtsfs" --passfile "$PASSFILE" "${SYSDIR[xtsfs]}/cipher" "${MNT[xtsfs]}"
}
remount_xtsfs() {
	fuse_unmount "${MNT[xtsfs]}"
	mount_xtsfs
}
teardown_xtsfs() { fuse_unmount "${MNT[xtsfs]}"; }

GOCRYPTFS_PW=()
setup_gocryptfs() {
	mkdir -p "$1/cipher" "$1/mnt"
	if gocryptfs -help 2>&1 | grep -- '-passfile' >/dev/null; then
		GOCRYPTFS_PW=(-passfile "$PASSFILE")
	else
		GOCRYPTFS_PW=(-extpass "cat $PASSFILE")
	fi
	gocryptfs -init -q -scryptn 10 "${GOCRYPTFS_PW[@]}" "$1/cipher"
	MNT[gocryptfs]=$1/mnt
	register_mount "$1/mnt"
	mount_gocryptfs
}
mount_gocryptfs() {
	gocryptfs -q -nosyslog "${GOCRYPTFS_PW[@]}" "${SYSDIR[gocryptfs]}/cipher" "${MNT[gocryptfs]}"
}
remount_gocryptfs() {
	fuse_unmount "${MNT[gocryptfs]}"
	mount_gocryptfs
}
teardown_gocryptfs() { fuse_unmount "${MNT[gocryptfs]}"; }

# Cold start: remount a FUSE system, flush, drop the page cache.
cold_cache() {
	if declare -F "remount_$1" >/dev/null; then
		"remount_$1"
	fi
	sync
	echo 3 >/proc/sys/vm/drop_caches
}

# ------------------------------------------------------------- test data
SRC=
TAR=
TREE_COUNT=

make_source() {
	SRC=$CACHE/random-${SEQ_MIB}M.bin
	local bytes=$((SEQ_MIB * 1048576))
	if [ "$(stat -c %s "$SRC" 2>/dev/null || echo 0)" != "$bytes" ]; then
		echo "making $SRC ($SEQ_MIB MiB of random bytes)"
		head -c "$bytes" /dev/urandom >"$SRC.tmp"
		mv "$SRC.tmp" "$SRC"
	fi
}

# A tar of TREE_FILES small files (< 256 KiB each): the first of
# /usr/include and /usr/share/doc in name order, padded with random
# files if there are not enough. TAR.count is what find | wc -l gives.
make_tree_tar() {
	TAR=$CACHE/tree-$TREE_FILES.tar
	if ! [ -s "$TAR" ] || ! [ -s "$TAR.count" ]; then
		echo "making $TAR ($TREE_FILES files)"
		local stage=$RUN_DIR/stage n i
		mkdir -p "$stage/tree"
		find /usr/include /usr/share/doc -type f -size -256k 2>/dev/null |
			sort | awk -v n="$TREE_FILES" 'NR <= n {print substr($0, 2)}' >"$stage/list"
		tar -C / -cf - --verbatim-files-from --files-from="$stage/list" | tar -C "$stage/tree" -xf -
		n=$(wc -l <"$stage/list")
		for ((i = n + 1; i <= TREE_FILES; i++)); do
			mkdir -p "$stage/tree/pad/d$((i / 100))"
			head -c $((100 + (i * 2657) % 16384)) "$SRC" >"$stage/tree/pad/d$((i / 100))/f$i"
		done
		tar -C "$stage" -cf "$TAR.tmp" tree
		find "$stage/tree" | wc -l >"$TAR.count.tmp"
		mv "$TAR.tmp" "$TAR"
		mv "$TAR.count.tmp" "$TAR.count"
		rm -rf "$stage"
	fi
	TREE_COUNT=$(cat "$TAR.count")
}

# Read a file so it is in the page cache.
warm_file() { cat "$1" >/dev/null; }

# ------------------------------------------------------------ measuring
ELAPSED=
# timed CMD...: run CMD, set ELAPSED to its wall-clock seconds.
timed() {
	local t0=$EPOCHREALTIME t1
	"$@"
	t1=$EPOCHREALTIME
	ELAPSED=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.6f", b - a}')
}

mbps() { awk -v b="$1" -v t="$2" 'BEGIN {printf "%.1f", b / 1e6 / t}'; }

# record WORKLOAD SYSTEM RUN VALUE
record() {
	printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >>"$RESULTS"
	printf '  %-14s %-10s %s %s\n' "$1" "$2" "$4" "${WL_UNIT[$1]}"
}

fail() {
	echo "fsbench: FAIL: $*" >&2
	return 1
}

count_tree() { find "$1" | wc -l >"$RUN_DIR/count"; }
list_tree() { ls -lR "$1" >/dev/null; }

# fio_iops RW FILE: one fio job, prints its IOPS.
fio_iops() {
	local rw=$1 f=$2 out extra=()
	[ "$rw" = randwrite ] && extra=(--end_fsync=1)
	out=$(fio --name="$rw" --filename="$f" --size="${FIO_MIB}m" --bs=4k \
		--rw="$rw" --ioengine=psync --numjobs=1 --iodepth=1 \
		--time_based --runtime="$FIO_SECS" "${extra[@]}" \
		--output-format=terse --terse-version=3)
	# terse v3: field 5 error, 8 read IOPS, 49 write IOPS
	echo "$out" | awk -F';' -v rw="$rw" '
		$1 == 3 {
			if ($5 != 0) { print "fio error " $5 > "/dev/stderr"; exit 1 }
			print (rw == "randread" ? $8 : $49); found = 1
		}
		END { if (!found) exit 1 }'
}

# ----------------------------------------------------------- workloads
# phase_GROUP SYSTEM RUN: runs in a subshell with set -e; any error
# (or failed check) marks the group's missing rows FAIL for that run.

phase_seq() {
	local s=$1 r=$2 m=${MNT[$1]} bytes=$((SEQ_MIB * 1048576))
	warm_file "$SRC"
	timed dd if="$SRC" of="$m/big" bs=1M conv=fsync status=none
	record seq_write "$s" "$r" "$(mbps "$bytes" "$ELAPSED")"
	[ "$(stat -c %s "$m/big")" = "$bytes" ] || fail "$s: $m/big has the wrong size"
	cold_cache "$s"
	timed dd if="$m/big" of=/dev/null bs=1M status=none
	record seq_read_cold "$s" "$r" "$(mbps "$bytes" "$ELAPSED")"
	timed dd if="$m/big" of=/dev/null bs=1M status=none
	record seq_read_warm "$s" "$r" "$(mbps "$bytes" "$ELAPSED")"
	cmp "$SRC" "$m/big" || fail "$s: $m/big differs from $SRC"
	rm -f "$m/big"
}

phase_fio() {
	local s=$1 r=$2 m=${MNT[$1]} f iops
	f=${MNT[$1]}/fio.dat
	if [ "$HAVE_FIO" = 0 ]; then
		return 0
	fi
	dd if="$SRC" of="$f" bs=1M count="$FIO_MIB" conv=fsync status=none
	cold_cache "$s"
	iops=$(fio_iops randread "$f")
	record rand_read "$s" "$r" "$iops"
	iops=$(fio_iops randwrite "$f")
	record rand_write "$s" "$r" "$iops"
	[ "$(stat -c %s "$f")" = $((FIO_MIB * 1048576)) ] || fail "$s: $f changed size"
	rm -f "$f"
	[ -z "$(ls -A "$m")" ] || fail "$s: $m not empty after rm"
}

phase_tree() {
	local s=$1 r=$2 m=${MNT[$1]} n
	warm_file "$TAR"
	timed tar -C "$m" -xf "$TAR"
	record tree_extract "$s" "$r" "$ELAPSED"
	(cd "$m" && tar -df "$TAR") || fail "$s: tar -d: the extracted tree differs from $TAR"
	cold_cache "$s"
	timed count_tree "$m/tree"
	record tree_find "$s" "$r" "$ELAPSED"
	n=$(cat "$RUN_DIR/count")
	[ "$n" = "$TREE_COUNT" ] || fail "$s: find saw $n entries, expected $TREE_COUNT"
	timed list_tree "$m/tree"
	record tree_lsR "$s" "$r" "$ELAPSED"
	timed rm -rf "$m/tree"
	record tree_rm "$s" "$r" "$ELAPSED"
	[ -z "$(ls -A "$m")" ] || fail "$s: $m not empty after rm -rf"
}

FAILED=0
run_phase() {
	local g=$1 s=$2 r=$3 rc w
	set +e
	(
		set -e
		"phase_$g" "$s" "$r"
	)
	rc=$?
	set -e
	[ "$rc" = 0 ] && return 0
	[ "$rc" -ge 128 ] && exit "$rc" # interrupted
	FAILED=1
	echo "fsbench: FAIL: group $g on $s, run $r (exit $rc)" >&2
	for w in "${WL_IDS[@]}"; do
		[ "${WL_GROUP[$w]}" = "$g" ] || continue
		awk -F'\t' -v w="$w" -v s="$s" -v r="$r" \
			'$1 == w && $2 == s && $3 == r {f = 1} END {exit !f}' "$RESULTS" ||
			printf '%s\t%s\t%s\tFAIL\n' "$w" "$s" "$r" >>"$RESULTS"
	done
	# bring a broken FUSE mount back, and empty it, for the next groups
	if declare -F "remount_$s" >/dev/null; then
		"remount_$s" || echo "fsbench: could not remount $s" >&2
	fi
	find "${MNT[$s]}" -mindepth 1 -delete 2>/dev/null ||
		echo "fsbench: could not empty ${MNT[$s]}" >&2
}

# ------------------------------------------------------------- reporting
# stats W S: "median min max n" of the numbers recorded, "FAIL" if any
# run failed, "" if none.
stats() {
	awk -F'\t' -v w="$1" -v s="$2" '$1 == w && $2 == s {print $4}' "$RESULTS" |
		sort -g | awk '
		$1 == "FAIL" { bad = 1; next }
		{ v[n++] = $1 }
		END {
			if (bad) { print "FAIL"; exit }
			if (n == 0) exit
			med = (n % 2) ? v[int(n / 2)] : (v[n / 2 - 1] + v[n / 2]) / 2
			print med, v[0], v[n - 1], n
		}'
}

fmt_num() {
	awk -v x="$1" -v u="$2" 'BEGIN {
		if (u == "s") printf (x < 0.1 ? "%.3f" : "%.2f"), x
		else if (u == "IOPS") printf "%.0f", x
		else printf (x < 100 ? "%.1f" : "%.0f"), x
	}'
}

print_table() {
	local w s st med min max cell ratio others=() o
	for s in "${SYSTEMS[@]}"; do
		[ "$s" = xtsfs ] || others+=("$s")
	done
	{
		printf 'workload\tunit\tbetter'
		for s in "${SYSTEMS[@]}"; do printf '\t%s' "$s"; done
		if in_list xtsfs "${SYSTEMS[@]}"; then
			for o in "${others[@]}"; do printf '\txtsfs/%s' "$o"; done
		fi
		printf '\n'
		for w in "${WL_IDS[@]}"; do
			in_list "${WL_GROUP[$w]}" "${GROUPS_SEL[@]}" || continue
			printf '%s\t%s\t%s' "${WL_LABEL[$w]}" "${WL_UNIT[$w]}" \
				"$([ "${WL_UNIT[$w]}" = s ] && echo lower || echo higher)"
			if [ "${WL_GROUP[$w]}" = fio ] && [ "$HAVE_FIO" = 0 ]; then
				for s in "${SYSTEMS[@]}"; do printf '\t%s' "skipped (no fio)"; done
				printf '\n'
				continue
			fi
			declare -A MED=()
			for s in "${SYSTEMS[@]}"; do
				st=$(stats "$w" "$s")
				if [ -z "$st" ]; then
					cell=-
				elif [ "$st" = FAIL ]; then
					cell=FAIL
				else
					read -r med min max _ <<<"$st"
					MED[$s]=$med
					cell="$(fmt_num "$med" "${WL_UNIT[$w]}")"
					if [ "$RUNS" -gt 1 ]; then
						cell+=" [$(fmt_num "$min" "${WL_UNIT[$w]}")-$(fmt_num "$max" "${WL_UNIT[$w]}")]"
					fi
				fi
				printf '\t%s' "$cell"
			done
			if in_list xtsfs "${SYSTEMS[@]}"; then
				for o in "${others[@]}"; do
					if [ -n "${MED[xtsfs]:-}" ] && [ -n "${MED[$o]:-}" ]; then
						ratio=$(awk -v a="${MED[xtsfs]}" -v b="${MED[$o]}" \
							'BEGIN {if (b > 0) printf "%.2f", a / b; else print "-"}')
					else
						ratio=-
					fi
					printf '\t%s' "$ratio"
				done
			fi
			printf '\n'
			unset MED
		done
	} | awk -F'\t' '
		{ for (i = 1; i <= NF; i++) { c[NR, i] = $i; if (length($i) > wd[i]) wd[i] = length($i) }
		  if (NF > nf) nf = NF }
		END {
			for (r = 1; r <= NR; r++) {
				line = ""
				for (i = 1; i <= nf; i++)
					line = line sprintf(i == 1 ? "%-*s" : "  %-*s", wd[i], c[r, i])
				sub(/ +$/, "", line); print line
				if (r == 1) { dash = line; gsub(/./, "-", dash); print dash }
			}
		}'
}

json_str() {
	local s=$1
	s=${s//\\/\\\\}
	s=${s//\"/\\\"}
	printf '"%s"' "$s"
}

write_json() {
	local w s first_w=1 first_s vals st
	{
		printf '{\n  "meta": {\n'
		printf '    "date": %s,\n' "$(json_str "$START_DATE")"
		printf '    "kernel": %s,\n' "$(json_str "$(uname -r)")"
		printf '    "cpu": %s,\n' "$(json_str "$CPU")"
		printf '    "nproc": %s,\n' "$(nproc)"
		printf '    "loadavg_start": %s,\n' "$(json_str "$LOAD_START")"
		printf '    "loadavg_end": %s,\n' "$(json_str "$(cat /proc/loadavg)")"
		printf '    "workdir": %s,\n' "$(json_str "$WORKDIR")"
		printf '    "fstype": %s,\n' "$(json_str "$FSTYPE")"
		printf '    "short": %s,\n' "$([ "$SHORT" = 1 ] && echo true || echo false)"
		printf '    "runs": %s,\n' "$RUNS"
		printf '    "seq_mib": %s, "fio_mib": %s, "fio_seconds": %s, "tree_files": %s,\n' \
			"$SEQ_MIB" "$FIO_MIB" "$FIO_SECS" "$TREE_FILES"
		printf '    "fio": %s,\n' "$([ "$HAVE_FIO" = 1 ] && echo true || echo false)"
		printf '    "versions": {'
		printf '"xtsfs": %s, ' "$(json_str "$XTSFS_VERSION")"
		printf '"xtsfs_cipher_core": %s, ' "$(json_str "${XTSFS_CORE:-}")"
		printf '"gocryptfs": %s, ' "$(json_str "$GOCRYPTFS_VERSION")"
		printf '"fio": %s},\n' "$(json_str "$FIO_VERSION")"
		printf '    "systems": ['
		first_s=1
		for s in "${SYSTEMS[@]}"; do
			[ $first_s = 1 ] || printf ', '
			first_s=0
			json_str "$s"
		done
		printf ']\n  },\n  "workloads": {\n'
		for w in "${WL_IDS[@]}"; do
			in_list "${WL_GROUP[$w]}" "${GROUPS_SEL[@]}" || continue
			[ $first_w = 1 ] || printf ',\n'
			first_w=0
			printf '    "%s": {"label": %s, "unit": %s, "better": "%s", "results": {' \
				"$w" "$(json_str "${WL_LABEL[$w]}")" "$(json_str "${WL_UNIT[$w]}")" \
				"$([ "${WL_UNIT[$w]}" = s ] && echo lower || echo higher)"
			first_s=1
			for s in "${SYSTEMS[@]}"; do
				[ $first_s = 1 ] || printf ', '
				first_s=0
				# raw values in run order; null for a failed run
				vals=$(awk -F'\t' -v w="$w" -v s="$s" '$1 == w && $2 == s {print $3, $4}' "$RESULTS" |
					sort -n | awk '{printf "%s%s", (NR > 1 ? ", " : ""), ($2 == "FAIL" ? "null" : $2)}')
				st=$(stats "$w" "$s")
				printf '"%s": {"runs": [%s]' "$s" "$vals"
				if [ -n "$st" ] && [ "$st" != FAIL ]; then
					read -r med min max _ <<<"$st"
					printf ', "median": %s, "min": %s, "max": %s' "$med" "$min" "$max"
				fi
				printf '}'
			done
			printf '}}'
		done
		printf '\n  }\n}\n'
	} >"$JSON_OUT"
}

# ------------------------------------------------------------------ main
main() {
	parse_args "$@"
	set_sizes
	check_prereqs
	check_workdir

	CACHE=$WORKDIR/cache
	mkdir -p "$CACHE"
	RUN_DIR=$WORKDIR/run.$$
	trap cleanup EXIT
	trap 'echo "fsbench: interrupted" >&2; exit 130' INT TERM
	rm -rf --one-file-system "$RUN_DIR"
	mkdir -p "$RUN_DIR"
	RESULTS=$RUN_DIR/results.tsv
	: >"$RESULTS"
	PASSFILE=$RUN_DIR/passfile
	echo "fsbench-passphrase-not-secret" >"$PASSFILE"
	chmod 600 "$PASSFILE"

	START_DATE=$(date -u '+%Y-%m-%d %H:%M:%S UTC')
	CPU=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
	LOAD_START=$(cat /proc/loadavg)
	XTSFS_VERSION='' GOCRYPTFS_VERSION='' FIO_VERSION=''
	if [ -x "$XTSFS_BIN/xtsfs" ]; then
		XTSFS_VERSION=$("$XTSFS_BIN/xtsfs" --version 2>&1 | head -n 1)
	fi
	if have gocryptfs; then
		GOCRYPTFS_VERSION=$(gocryptfs -version 2>&1 | head -n 1)
	fi
	if have fio; then
		FIO_VERSION=$(fio --version 2>&1 | head -n 1)
	fi

	echo "fsbench: $START_DATE, $(uname -r), $CPU, $(nproc) CPUs"
	echo "  load average at start: $LOAD_START"
	echo "  work dir: $WORKDIR on $FSTYPE ($FSSOURCE)"
	echo "  mode: $([ "$SHORT" = 1 ] && echo short || echo full), $RUNS run(s);" \
		"seq $SEQ_MIB MiB, fio $FIO_MIB MiB ${FIO_SECS}s, tree $TREE_FILES files"
	echo "  systems: ${SYSTEMS[*]}; workloads: ${GROUPS_SEL[*]}"
	echo "  versions: xtsfs ${XTSFS_VERSION:-?}; ${GOCRYPTFS_VERSION:-gocryptfs ?}; ${FIO_VERSION:-fio not installed}"

	make_source
	if in_list tree "${GROUPS_SEL[@]}"; then
		make_tree_tar
		echo "  tree: $TAR ($TREE_COUNT entries, $(du -sh "$TAR" | cut -f1))"
	fi

	# snapshot the xtsfs binaries: a rebuild during the run changes nothing
	if in_list xtsfs "${SYSTEMS[@]}"; then
		mkdir -p "$RUN_DIR/bin"
		cp "$XTSFS_BIN/xtsfs" "$XTSFS_BIN/xtsfs-mkfs" "$RUN_DIR/bin/"
		XTSFS_BIN=$RUN_DIR/bin
	fi

	local s g r t0
	for s in "${SYSTEMS[@]}"; do
		SYSDIR[$s]=$RUN_DIR/$s
		mkdir -p "${SYSDIR[$s]}"
		"setup_$s" "${SYSDIR[$s]}"
	done
	[ -n "${XTSFS_CORE:-}" ] && echo "  xtsfs cipher core: $XTSFS_CORE"

	for ((r = 1; r <= RUNS; r++)); do
		for g in "${GROUPS_SEL[@]}"; do
			echo "run $r/$RUNS, $g:"
			for s in "${SYSTEMS[@]}"; do
				t0=$SECONDS
				run_phase "$g" "$s" "$r"
				echo "  ($g on $s took $((SECONDS - t0)) s)"
			done
		done
	done

	for s in "${SYSTEMS[@]}"; do
		"teardown_$s"
	done

	echo
	echo "Results: median of $RUNS run(s) [min-max]. MB/s = 10^6 bytes/s."
	echo "Ratios are xtsfs/other on the medians: for MB/s and IOPS higher is"
	echo "better (>1 = xtsfs faster); for seconds lower is better (<1 = xtsfs faster)."
	echo "Load average at end: $(cat /proc/loadavg) (start: $LOAD_START)"
	echo
	print_table
	if [ -n "$JSON_OUT" ]; then
		write_json
		echo
		echo "raw numbers: $JSON_OUT"
	fi
	if [ "$FAILED" != 0 ]; then
		echo "fsbench: some workloads FAILED (see the messages above)" >&2
		exit 1
	fi
}

main "$@"
