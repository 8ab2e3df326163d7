#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# fsbench.sh - filesystem benchmark: the bare lower directory,
# fuse-overlayfs (a FUSE passthrough without crypto), gocryptfs, securefs
# and xtsfs, measured in one invocation, with the same data, on the same
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
#   rand_read_1j   fio, psync, bs=4k, buffered, on a file laid out
#                  beforehand from the random source, after a cold
#                  start as above; 1 job                           IOPS
#   rand_read_2j   the same with 2 jobs on the SAME file (numjobs=2,
#                  group_reporting: the IOPS of both jobs summed)  IOPS
#   rand_write_1j  fio randwrite on the same file, end_fsync=1,
#   rand_write_2j  after a cold start; 1 job, then 2 jobs          IOPS
#   (every timed write of the tree rows starts after a sync, so that it
#   does not pay for the writeback of what ran before it)
#   tree_extract   tar -xf of a tar of ~12,000 small files (a copy of
#                  /usr/include and /usr/share/doc, trimmed or padded;
#                  made once and cached in the work dir)           seconds
#                  (then tar -d checks contents and metadata, untimed)
#   tree_find      find MNT/tree | wc -l after a cold start        seconds
#   tree_lsR       ls -lR MNT/tree > /dev/null, right after        seconds
#   tree_du        du -s MNT/tree > /dev/null, right after         seconds
#   tree_rm        rm -rf MNT/tree                                 seconds
#   tree_rsync     rsync -a of the same tree, from a bare copy in the
#                  work dir's cache (read into the page cache first), to
#                  MNT/rsync; checked with rsync -n -c -i, then removed
#                                                                  seconds
# MB/s is 10^6 bytes per second, from the wall-clock time of the command.
# Runs are interleaved: for each run, for each workload group, every
# system in turn, so slow drifts of a shared machine hit all systems alike;
# run r starts with the r-th system of --systems and wraps around.
#
# For every FUSE system it also reports its daemon's CPU time (utime +
# stime from /proc/PID/stat) per GiB written by the seq write and per GiB
# read by the cold seq read, and its peak RSS (VmHWM, sampled just before
# every unmount: each cold start starts a new daemon). xtsfs's results are
# compared with the targets of issue #20 in a second table (a report only:
# a missed target does not change the exit status).
#
# Systems (each on a fresh empty directory under WORKDIR/run.PID):
#   bare            the plain lower directory
#   fuse-overlayfs  fuse-overlayfs, lowerdir an empty directory, upperdir
#                   and workdir on the lower disk: FUSE cost without crypto
#   gocryptfs       gocryptfs -init -scryptn 10 + gocryptfs
#   securefs        securefs create (its default format; PBKDF2, 1 round)
#                   + securefs mount -b, default options
#   xtsfs           xtsfs-mkfs (cheap Argon2id: time 1, 64 KiB, 1 lane) + xtsfs
#   xtsfs-uring     the same, mounted with -o uring (FUSE over io_uring);
#                   sets /sys/module/fuse/parameters/enable_uring to Y for
#                   the run and puts back what it found. Not selected by
#                   default: add it to --systems for the A/B in one run
#   xtsfs-noopen    xtsfs mounted with -o noopen (no OPEN or RELEASE of
#                   regular files); likewise not selected by default
#   xtsfs-aligned   xtsfs on a volume of the aligned layout (xtsfs-mkfs
#                   --layout=aligned); not selected by default
#   xtsfs-aligned-uring  the same, mounted with -o uring
#   memfs           the FUSE floor: tests/bench/proto/memfs.c, built for
#                   the run, a file system in the daemon's memory that
#                   asks the kernel for what xtsfs asks (the same libfuse
#                   loop, INIT flags, no OPENDIR, no FLUSH) and does no
#                   other work; no FUSE daemon does the same rows faster.
#                   Its cold starts only drop the kernel's caches (a
#                   remount would lose the files). Not selected by default
#   memfs-uring     the same over FUSE's io_uring (pinned, as -o uring)
# Adding a system: write setup_NAME DIR (make the volume in DIR, set
# MNT[NAME], mount it and register_mount it), teardown_NAME, and, for a
# FUSE system, remount_NAME (used for the cold starts); a '-' in NAME is
# '_' in the function names. Add NAME to KNOWN_SYSTEMS and, if it needs a
# program, to check_prereqs; an encrypting peer of xtsfs goes in ENC_PEERS.
#
# Usage: tests/bench/fsbench.sh [--short] [--runs N] [--systems LIST]
#        [--workloads seq,fio,tree] [--workdir DIR] [--json FILE]
# Needs root (FUSE mounts, drop_caches). See tests/bench/README.md.

set -euo pipefail
shopt -s inherit_errexit
export LC_ALL=C

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BENCH_PROG=fsbench
# shellcheck source=tests/bench/lib.sh
. "$REPO/tests/bench/lib.sh"

# ---------------------------------------------------------------- settings
WORKDIR=/var/tmp/xtsfs-bench
RUNS=3
RUNS_SET=0
SYSTEMS_ARG=bare,fuse-overlayfs,gocryptfs,securefs,xtsfs
GROUPS_ARG=seq,fio,tree
SHORT=0
JSON_OUT=
XTSFS_BIN=${XTSFS_BIN:-$REPO/build/tools}
XTSFS_OPTS=()

KNOWN_SYSTEMS=(bare fuse-overlayfs gocryptfs securefs xtsfs xtsfs-uring xtsfs-noopen
	xtsfs-aligned xtsfs-aligned-uring memfs memfs-uring)
KNOWN_GROUPS=(seq fio tree)
# xtsfs's peers for the "best peer" targets: the other encrypting ones.
ENC_PEERS=(gocryptfs securefs)

# Workloads: id, group, label, unit, which way is better.
WL_IDS=(seq_write seq_read_cold seq_read_warm
	rand_read_1j rand_read_2j rand_write_1j rand_write_2j
	tree_extract tree_find tree_lsR tree_du tree_rm tree_rsync)
declare -A WL_GROUP=(
	[seq_write]=seq [seq_read_cold]=seq [seq_read_warm]=seq
	[rand_read_1j]=fio [rand_read_2j]=fio [rand_write_1j]=fio [rand_write_2j]=fio
	[tree_extract]=tree [tree_find]=tree [tree_lsR]=tree [tree_du]=tree
	[tree_rm]=tree [tree_rsync]=tree)
declare -A WL_UNIT=(
	[seq_write]=MB/s [seq_read_cold]=MB/s [seq_read_warm]=MB/s
	[rand_read_1j]=IOPS [rand_read_2j]=IOPS [rand_write_1j]=IOPS [rand_write_2j]=IOPS
	[tree_extract]=s [tree_find]=s [tree_lsR]=s [tree_du]=s [tree_rm]=s [tree_rsync]=s)
declare -A WL_LABEL # filled in by set_sizes

# Targets of issue #20 for xtsfs: reference (bare, or "peer": the best of
# ENC_PEERS on that row), and the bound on xtsfs/reference. For MB/s and
# IOPS the ratio must be >= the bound, for seconds <= the bound. The
# reads may meet theirs instead against fuse-overlayfs (TARGET_ALT_X:
# "where the kernel allows; otherwise >= 1.1x fuse-overlayfs"), and every
# row must also be at least fuse-overlayfs's (FUSE without crypto).
declare -A TARGET_REF=(
	[seq_write]=bare [seq_read_cold]=bare [seq_read_warm]=bare
	[rand_read_1j]=peer [rand_read_2j]=peer [rand_write_1j]=peer [rand_write_2j]=peer
	[tree_extract]=peer [tree_rm]=peer [tree_rsync]=peer
	[tree_find]=peer [tree_lsR]=peer [tree_du]=peer)
declare -A TARGET_X=(
	[seq_write]=1.0 [seq_read_cold]=0.9 [seq_read_warm]=0.7
	[rand_read_1j]=2 [rand_read_2j]=2 [rand_write_1j]=3 [rand_write_2j]=3
	[tree_extract]=0.6 [tree_rm]=0.6 [tree_rsync]=0.6
	[tree_find]=0.6 [tree_lsR]=0.6 [tree_du]=0.6)
declare -A TARGET_ALT_X=([seq_read_cold]=1.1 [seq_read_warm]=1.1)
TARGET_OVERLAY=fuse-overlayfs
TARGET_RSS_MIB=43
TARGET_CPU_S_PER_GIB=0.5

usage() {
	cat <<EOF
Usage: $0 [OPTION]...
Benchmark the bare lower filesystem, fuse-overlayfs, gocryptfs, securefs
and xtsfs with the same workloads (sequential dd, random 4 KiB fio with 1
and 2 jobs, tar/find/ls/du/rm/rsync of many small files). Run as root.

  --short             tiny sizes for CI (32 MiB files, 500 small files,
                      1 run, fio 1 s): checks that the script works
  --runs N            repetitions of every workload (default 3; 1 with
                      --short); the table shows median [min-max]
  --systems LIST      comma-separated, from: ${KNOWN_SYSTEMS[*]}
                      (default $SYSTEMS_ARG)
  --workloads LIST    comma-separated groups, from: ${KNOWN_GROUPS[*]}
                      (default $GROUPS_ARG)
  --workdir DIR       where the volumes live, on a disk filesystem, not
                      tmpfs (default $WORKDIR); DIR/cache keeps the
                      random source file and the tree between invocations
  --xtsfs-bin DIR     directory with xtsfs and xtsfs-mkfs
                      (default \$XTSFS_BIN or $REPO/build/tools)
  --xtsfs-opts OPTS   mount xtsfs with -o OPTS (e.g. writeback); the
                      JSON meta records them
  --json FILE         also write every raw number to FILE
  -h, --help          show this help

Exit status: 0 if every selected workload ran and checked out on every
system (fio rows are skipped, not failed, when fio is not installed),
1 if any failed, 2 on bad usage or missing prerequisites. Missed
performance targets do not change it.
EOF
}

die() {
	echo "fsbench: $*" >&2
	exit 2
}

# fn PREFIX SYSTEM: the function name for SYSTEM ('-' becomes '_').
fn() { echo "$1_${2//-/_}"; }

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
		--xtsfs-opts) XTSFS_OPTS=(-o "${2:?--xtsfs-opts needs OPTS}"); shift ;;
		--xtsfs-opts=*) XTSFS_OPTS=(-o "${1#*=}") ;;
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
		in_list "$s" "${KNOWN_SYSTEMS[@]}" ||
			die "--systems: unknown system '$s' (known: ${KNOWN_SYSTEMS[*]})"
	done
	for g in "${GROUPS_SEL[@]}"; do
		in_list "$g" "${KNOWN_GROUPS[@]}" ||
			die "--workloads: unknown group '$g' (known: ${KNOWN_GROUPS[*]})"
	done
	if [ -n "$JSON_OUT" ]; then
		JSON_OUT=$(realpath -m -- "$JSON_OUT")
	fi
}

set_sizes() {
	if [ "$SHORT" = 1 ]; then
		SEQ_MIB=32 FIO_MIB=32 FIO_SECS=1 TREE_FILES=500
	else
		SEQ_MIB=1024 FIO_MIB=256 FIO_SECS=15 TREE_FILES=12000
	fi
	local seq fio="$FIO_MIB MiB file, fio ${FIO_SECS}s"
	if [ "$SEQ_MIB" -ge 1024 ]; then
		seq="$((SEQ_MIB / 1024)) GiB"
	else
		seq="$SEQ_MIB MiB"
	fi
	WL_LABEL=(
		[seq_write]="seq write $seq (dd bs=1M, fsync)"
		[seq_read_cold]="seq read $seq, cold"
		[seq_read_warm]="seq read $seq, warm"
		[rand_read_1j]="rand read 4k, 1 job ($fio)"
		[rand_read_2j]="rand read 4k, 2 jobs, same file"
		[rand_write_1j]="rand write 4k, 1 job ($fio)"
		[rand_write_2j]="rand write 4k, 2 jobs, same file"
		[tree_extract]="tar -x $TREE_FILES small files"
		[tree_find]="find tree | wc -l, cold"
		[tree_lsR]="ls -lR tree"
		[tree_du]="du -s tree"
		[tree_rm]="rm -rf tree"
		[tree_rsync]="rsync -a tree into the mount")
}

# ---------------------------------------------------------- prerequisites

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
		du coreutils
		getconf libc-bin
		tar tar
		find findutils
		cmp diffutils
		awk mawk
		findmnt util-linux
		mountpoint util-linux
	EOF
	if in_list tree "${GROUPS_SEL[@]}"; then
		have rsync || missing+=("rsync (Debian package rsync)")
	fi
	for s in "${SYSTEMS[@]}"; do
		case $s in
		bare) ;;
		*) have fusermount3 || missing+=("fusermount3 (Debian package fuse3)") ;;
		esac
		case $s in
		xtsfs*)
			[ -x "$XTSFS_BIN/xtsfs" ] && [ -x "$XTSFS_BIN/xtsfs-mkfs" ] ||
				missing+=("$XTSFS_BIN/xtsfs and xtsfs-mkfs (build: meson setup build && ninja -C build, or --xtsfs-bin DIR)") ;;
		memfs*)
			have cc && pkg-config --exists fuse3 2>/dev/null ||
				missing+=("cc and pkg-config fuse3 to build memfs (Debian packages gcc, pkg-config, libfuse3-dev)") ;;
		gocryptfs | securefs | fuse-overlayfs)
			have "$s" || missing+=("$s (Debian package $s; or leave it out of --systems)") ;;
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
	# ext4 without a journal has no directory under /proc/fs/jbd2
	EXT4_NOJOURNAL=0
	EXT4_JOURNAL_JSON=null
	if [ "$FSTYPE" = ext4 ] && [ -b "$FSSOURCE" ]; then
		EXT4_JOURNAL_JSON=true
		if ! compgen -G "/proc/fs/jbd2/$(basename -- "$(readlink -f -- "$FSSOURCE")")-*" >/dev/null; then
			EXT4_NOJOURNAL=1
			EXT4_JOURNAL_JSON=false
		fi
	fi
	mkdir -p "$WORKDIR"
	WORKDIR=$(cd "$WORKDIR" && pwd -P)
	# room, for the groups selected: the source file and one big file
	# (seq), the fio file (fio); the tar, its bare copy for rsync, one
	# extraction and a margin (always)
	local need_mib=1024 need_kib avail_kib
	in_list seq "${GROUPS_SEL[@]}" && need_mib=$((need_mib + 2 * SEQ_MIB))
	in_list fio "${GROUPS_SEL[@]}" && need_mib=$((need_mib + FIO_MIB))
	need_kib=$((need_mib * 1024))
	avail_kib=$(df -Pk "$WORKDIR" | awk 'NR == 2 {print $4}')
	[ "$avail_kib" -ge "$need_kib" ] ||
		die "$WORKDIR has $((avail_kib / 1024)) MiB free, needs about $((need_kib / 1024)) MiB"
}

# ---------------------------------------------------------- mounts, cleanup
MOUNTS=()
RUN_DIR=
PHASE_PID=
declare -A MNT SYSDIR

register_mount() { MOUNTS+=("$1"); }



# The system whose FUSE mount point is $1 (empty if none).
mount_system() {
	local s
	for s in "${!MNT[@]}"; do
		[ "${MNT[$s]}" = "$1" ] && echo "$s"
	done
	return 0
}

# ---- daemon CPU and memory
# Lines "SYSTEM KIND RUN VALUE" in $DAEMON_LOG (a file: the workloads run
# in subshells): cpu_write / cpu_read in CPU seconds per GiB, rss in KiB.
DAEMON_LOG=

# daemon_ticks SYSTEM: utime + stime (clock ticks) of SYSTEM's daemon
# process(es), all threads; nothing for a system without a daemon.
daemon_ticks() {
	[ -n "${MNT[$1]:-}" ] || return 0
	mount_ticks "${MNT[$1]}" || true
}

# daemon_cpu SYSTEM KIND RUN TICKS0 TICKS1 BYTES: log CPU s per GiB.
daemon_cpu() {
	[ -n "$4" ] && [ -n "$5" ] || return 0
	awk -v s="$1" -v k="$2" -v r="$3" -v t0="$4" -v t1="$5" -v b="$6" -v hz="$CLK_TCK" \
		'BEGIN {printf "%s\t%s\t%s\t%.4f\n", s, k, r, (t1 - t0) / hz / (b / 1073741824)}' \
		>>"$DAEMON_LOG"
}

# daemon_rss MOUNTPOINT: log the peak RSS (VmHWM) of its daemon, if any.
daemon_rss() {
	local s pid kib
	[ -n "$DAEMON_LOG" ] && [ -f "$DAEMON_LOG" ] || return 0
	s=$(mount_system "$1")
	[ -n "$s" ] || return 0
	for pid in $(daemon_pids "$1"); do
		kib=$(awk '/^VmHWM:/ {print $2}' "/proc/$pid/status" 2>/dev/null) || continue
		if [ -n "$kib" ]; then
			printf '%s\trss\t-\t%s\n' "$s" "$kib" >>"$DAEMON_LOG"
		fi
	done
	return 0
}

# Unmount a FUSE mount point and wait until its daemon has exited
# (lib.sh), after sampling the daemon's peak RSS.
fuse_unmount() {
	mountpoint -q "$1" || return 0
	daemon_rss "$1"
	unmount_wait "$1"
}

# wait_mounted DIR: wait (up to 10 s) for a daemon that mounts DIR in
# the background.
wait_mounted() {
	local i
	for i in $(seq 1 100); do
		mountpoint -q "$1" && return 0
		sleep 0.1
	done
	echo "fsbench: $1 did not get mounted" >&2
	return 1
}

# kill_tree PID: SIGTERM PID, then its descendants (listed before PID is
# signalled, so none is missed by being reparented).
kill_tree() {
	local pid=$1 child children
	children=$(ps -o pid= --ppid "$pid" 2>/dev/null || true)
	kill -TERM "$pid" 2>/dev/null || true
	for child in $children; do
		kill_tree "$child"
	done
}

cleanup() {
	local rc=$? m busy=0 i
	set +e
	trap - INT TERM
	if [ -n "$PHASE_PID" ] && pid_alive "$PHASE_PID"; then
		kill_tree "$PHASE_PID"
		for i in $(seq 1 50); do
			pid_alive "$PHASE_PID" || break
			sleep 0.1
		done
	fi
	for m in "${MOUNTS[@]}"; do
		fuse_unmount "$m" || busy=1
	done
	if [ -n "$URING_PARAM_WAS" ]; then
		echo "$URING_PARAM_WAS" >"$URING_PARAM"
	fi
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

# fuse-overlayfs over an empty lower layer: every file lives in upperdir,
# on the lower disk, and every request goes through a FUSE daemon.
setup_fuse_overlayfs() {
	mkdir -p "$1/empty" "$1/upper" "$1/work" "$1/mnt"
	MNT[fuse-overlayfs]=$1/mnt
	register_mount "$1/mnt"
	mount_fuse_overlayfs
}
mount_fuse_overlayfs() {
	local d=${SYSDIR[fuse-overlayfs]}
	fuse-overlayfs -o "lowerdir=$d/empty,upperdir=$d/upper,workdir=$d/work" \
		"$d/mnt" >>"$d/mount.log" 2>&1
	wait_mounted "$d/mnt"
}
remount_fuse_overlayfs() {
	fuse_unmount "${MNT[fuse-overlayfs]}"
	mount_fuse_overlayfs
}
teardown_fuse_overlayfs() { fuse_unmount "${MNT[fuse-overlayfs]}"; }

# xtsfs_volume SYSTEM DIR [MKFS_OPTION...]: a volume in DIR/cipher (its
# mkfs output in DIR/mkfs.log), mounted on DIR/mnt by xtsfs_mount for
# SYSTEM.
xtsfs_volume() {
	local s=$1 d=$2
	shift 2
	mkdir -p "$d/cipher" "$d/mnt"
	"$XTSFS_BIN/xtsfs-mkfs" --argon2-time 1 --argon2-memory 64 \
		--argon2-lanes 1 "$@" --passfile "$PASSFILE" "$d/cipher" >"$d/mkfs.log"
	MNT[$s]=$d/mnt
	register_mount "$d/mnt"
}
# xtsfs_mount SYSTEM [OPTION...]: mount SYSTEM's volume.
xtsfs_mount() {
	local s=$1
	shift
	"$XTSFS_BIN/xtsfs" --passfile "$PASSFILE" ${XTSFS_OPTS[@]+"${XTSFS_OPTS[@]}"} \
		"$@" "${SYSDIR[$s]}/cipher" "${MNT[$s]}"
}

setup_xtsfs() {
	xtsfs_volume xtsfs "$1"
	XTSFS_CORE=$(awk -F: '/cipher core/ {sub(/^ +/, "", $2); print $2}' "$1/mkfs.log")
	mount_xtsfs
}
mount_xtsfs() { xtsfs_mount xtsfs; }
remount_xtsfs() {
	fuse_unmount "${MNT[xtsfs]}"
	mount_xtsfs
}
teardown_xtsfs() { fuse_unmount "${MNT[xtsfs]}"; }

# xtsfs-uring: xtsfs with -o uring. The daemon falls back to /dev/fuse
# with a log line when the kernel refuses the ring; a benchmark of that
# would be a mislabelled copy of the xtsfs row, so the mount must show an
# io_uring descriptor in the daemon or the setup fails.
URING_PARAM=/sys/module/fuse/parameters/enable_uring
URING_PARAM_WAS=
# uring_on SYSTEM: set enable_uring for the run (put back at the end)
uring_on() {
	if [ -z "$URING_PARAM_WAS" ]; then
		[ -w "$URING_PARAM" ] || die "$1: $URING_PARAM is not writable (kernel 6.14+ needed)"
		URING_PARAM_WAS=$(cat "$URING_PARAM")
		echo 1 >"$URING_PARAM"
	fi
}
setup_xtsfs_uring() {
	uring_on xtsfs-uring
	xtsfs_volume xtsfs-uring "$1"
	mount_xtsfs_uring
}
mount_xtsfs_uring() { xtsfs_mount_uring xtsfs-uring; }
# xtsfs_mount_uring SYSTEM: mount it with -o uring, and fail unless the
# daemon really serves a ring
xtsfs_mount_uring() {
	local s=$1 pid fd
	xtsfs_mount "$s" -o uring
	# xtsfs returns once mounted, before the kernel's INIT is answered,
	# and the rings are made while answering it: a statfs waits for INIT
	# (the kernel holds every request until then)
	stat -f "${MNT[$s]}" >/dev/null
	pid=$(daemon_pids "${MNT[$s]}")
	for fd in /proc/"${pid:-none}"/fd/*; do
		[ "$(readlink "$fd" 2>/dev/null)" = "anon_inode:[io_uring]" ] && return 0
	done
	# the daemon's reason went to syslog; the likeliest one is visible
	if [ "$(cat "$URING_PARAM")" != Y ]; then
		fail "$s: $URING_PARAM was set back to $(cat "$URING_PARAM") during the run (by another program?): the daemon (pid ${pid:-?}) serves /dev/fuse"
		return
	fi
	fail "$s: the daemon (pid ${pid:-?}) has no io_uring descriptor: it fell back to /dev/fuse (its reason is in syslog)"
}
remount_xtsfs_uring() {
	fuse_unmount "${MNT[xtsfs-uring]}"
	mount_xtsfs_uring
}
teardown_xtsfs_uring() { fuse_unmount "${MNT[xtsfs-uring]}"; }

# xtsfs-noopen: xtsfs with -o noopen (the daemon logs it if the mount
# cannot have it: not here, with change notification on a local lower)
setup_xtsfs_noopen() {
	xtsfs_volume xtsfs-noopen "$1"
	mount_xtsfs_noopen
}
mount_xtsfs_noopen() { xtsfs_mount xtsfs-noopen -o noopen; }
remount_xtsfs_noopen() {
	fuse_unmount "${MNT[xtsfs-noopen]}"
	mount_xtsfs_noopen
}
teardown_xtsfs_noopen() { fuse_unmount "${MNT[xtsfs-noopen]}"; }

# xtsfs-aligned, xtsfs-aligned-uring: volumes of the aligned layout
setup_xtsfs_aligned() {
	xtsfs_volume xtsfs-aligned "$1" --layout=aligned
	mount_xtsfs_aligned
}
mount_xtsfs_aligned() { xtsfs_mount xtsfs-aligned; }
remount_xtsfs_aligned() {
	fuse_unmount "${MNT[xtsfs-aligned]}"
	mount_xtsfs_aligned
}
teardown_xtsfs_aligned() { fuse_unmount "${MNT[xtsfs-aligned]}"; }
setup_xtsfs_aligned_uring() {
	uring_on xtsfs-aligned-uring
	xtsfs_volume xtsfs-aligned-uring "$1" --layout=aligned
	mount_xtsfs_aligned_uring
}
mount_xtsfs_aligned_uring() { xtsfs_mount_uring xtsfs-aligned-uring; }
remount_xtsfs_aligned_uring() {
	fuse_unmount "${MNT[xtsfs-aligned-uring]}"
	mount_xtsfs_aligned_uring
}
teardown_xtsfs_aligned_uring() { fuse_unmount "${MNT[xtsfs-aligned-uring]}"; }

# memfs, memfs-uring: the FUSE floor (tests/bench/proto/memfs.c), built
# once per run, with xtsfs's glue (INIT flags, the ring) from the build
# whose tools --xtsfs-bin names
MEMFS=
XTSFS_LIBS=
memfs_build() {
	local libs=$XTSFS_LIBS
	[ -z "$MEMFS" ] || return 0
	MEMFS=$RUN_DIR/bin/memfs
	mkdir -p "$RUN_DIR/bin"
	[ -e "$libs/libxtsfs-fuse.a" ] ||
		die "memfs: $libs/libxtsfs-fuse.a is not built (ninja -C the build of --xtsfs-bin)"
	floor_build "$REPO/tests/bench/proto/memfs.c" "$MEMFS" "$libs"
}
# memfs_setup SYSTEM DIR [OPTION...]: start a memfs daemon on DIR/mnt
memfs_setup() {
	local s=$1 d=$2
	shift 2
	memfs_build
	mkdir -p "$d/mnt"
	MNT[$s]=$d/mnt
	register_mount "$d/mnt"
	setsid "$MEMFS" "$@" "$d/mnt" </dev/null >>"$d/memfs.log" 2>&1 &
	wait_mounted "$d/mnt"
	# the ring is set up while INIT is answered: a statfs waits for it
	stat -f "$d/mnt" >/dev/null
}
setup_memfs() { memfs_setup memfs "$1"; }
teardown_memfs() { fuse_unmount "${MNT[memfs]}"; }
setup_memfs_uring() {
	uring_on memfs-uring
	memfs_setup memfs-uring "$1" -u
}
teardown_memfs_uring() { fuse_unmount "${MNT[memfs-uring]}"; }

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

# securefs: its default format and options; only the KDF is made cheap
# (PBKDF2, 1 round: the KDF does not matter here). The passphrase is not
# secret, so --pass on the command line is fine.
SECUREFS_FORMAT=
setup_securefs() {
	mkdir -p "$1/cipher" "$1/mnt"
	securefs create --pbkdf pkcs5-pbkdf2-hmac-sha256 --rounds 1 \
		--pass "$(cat "$PASSFILE")" "$1/cipher" >"$1/create.log" 2>&1 ||
		{ cat "$1/create.log" >&2; return 1; }
	SECUREFS_FORMAT=$(awk -F: '/"version"/ {gsub(/[^0-9]/, "", $2); print $2}' \
		"$1/cipher/.securefs.json")
	MNT[securefs]=$1/mnt
	register_mount "$1/mnt"
	mount_securefs
}
mount_securefs() {
	local d=${SYSDIR[securefs]}
	# -b: it forks into the background once mounted
	securefs mount -b --pass "$(cat "$PASSFILE")" "$d/cipher" "$d/mnt" \
		>>"$d/mount.log" 2>&1 || { cat "$d/mount.log" >&2; return 1; }
	wait_mounted "$d/mnt"
}
remount_securefs() {
	fuse_unmount "${MNT[securefs]}"
	mount_securefs
}
teardown_securefs() { fuse_unmount "${MNT[securefs]}"; }

# Cold start: remount a FUSE system, flush, drop the page cache.
cold_cache() {
	if declare -F "$(fn remount "$1")" >/dev/null; then
		"$(fn remount "$1")"
	fi
	sync
	echo 3 >/proc/sys/vm/drop_caches
}

# ------------------------------------------------------------- test data
SRC=
TAR=
TREE_COUNT=
STAGE=

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
# STAGE/tree is the same tree extracted on the lower filesystem: the
# source of the rsync row.
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
	STAGE=$CACHE/tree-$TREE_FILES.d
	if ! [ "$STAGE/.complete" -nt "$TAR" ]; then
		echo "extracting $TAR to $STAGE (the rsync source)"
		rm -rf --one-file-system "$STAGE"
		mkdir -p "$STAGE"
		tar -C "$STAGE" -xf "$TAR"
		touch "$STAGE/.complete"
	fi
}

# Read a file so it is in the page cache.
warm_file() { cat "$1" >/dev/null; }
# settle: write back every dirty page first, so that a timed write phase
# does not pay for the previous one's (another system's rsync and rm -rf
# of 12,000 files, whose ext4 writeback and journal commits otherwise
# land in the next system's tar -x).
settle() { sync; }
# Read every file of a tree (through a pipe: GNU tar skips reading the
# files when it writes to /dev/null itself).
warm_tree() { tar -C "$1" -cf - . | cat >/dev/null; }

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
	printf '  %-14s %-15s %s %s\n' "$1" "$2" "$4" "${WL_UNIT[$1]}"
}

fail() {
	echo "fsbench: FAIL: $*" >&2
	return 1
}

# note SYSTEM TEXT: a deviation that is not a failure, listed after the
# tables (and in the JSON); the same note from several runs is shown once.
note() {
	printf '%s: %s\n' "$1" "$2" >>"$NOTES"
	echo "fsbench: NOTE: $1: $2" >&2
}

# check_tar SYSTEM DIR: tar -d of the extracted tree. Any difference fails
# xtsfs; a peer whose only differences are file mtimes (securefs 0.13
# keeps the time of its last write, not the one tar sets) gets a note.
check_tar() {
	local s=$1 out other
	out=$(cd "$2" && tar -df "$TAR" 2>&1) && return 0
	other=$(echo "$out" | grep -v ': Mod time differs$' || true)
	if [[ $s == xtsfs* ]] || [ -n "$other" ]; then
		echo "$out" | head -n 10 >&2
		fail "$s: tar -d: the extracted tree differs from $TAR ($(echo "$out" | wc -l) lines)"
	fi
	note "$s" "after tar -x, tar -d finds $(echo "$out" | wc -l) files with another mtime than in the tar (only mtimes differ; a failure for xtsfs, a note for a peer)"
}

# check_rsync SYSTEM DIR: after rsync -a, rsync -n -c -i sees nothing to
# do (contents, modes, owners, times, no extra files). As for tar, a
# peer whose only differences are times gets a note.
check_rsync() {
	local s=$1 out other
	out=$(rsync -a -n -c -i --delete "$STAGE/tree/" "$2/")
	[ -n "$out" ] || return 0
	other=$(echo "$out" | grep -Ev '^\.[fdL]\.\.[tT]\.+ ' || true)
	if [[ $s == xtsfs* ]] || [ -n "$other" ]; then
		echo "$out" | head -n 10 >&2
		fail "$s: after rsync -a, rsync -n -c -i still sees $(echo "$out" | wc -l) differences"
	fi
	note "$s" "after rsync -a, rsync -n -c -i sees $(echo "$out" | wc -l) entries with other times (only times differ; a failure for xtsfs, a note for a peer)"
}

count_tree() { find "$1" | wc -l >"$RUN_DIR/count"; }
list_tree() { ls -lR "$1" >/dev/null; }
du_tree() { du -s "$1" >/dev/null; }

# fio_iops RW JOBS FILE: fio with JOBS jobs on the one FILE, prints the
# total IOPS of all jobs.
fio_iops() {
	local rw=$1 jobs=$2 file=$3 out extra=()
	[ "$rw" = randwrite ] && extra=(--end_fsync=1)
	out=$(fio --name="$rw" --filename="$file" --size="${FIO_MIB}m" --bs=4k \
		--rw="$rw" --ioengine=psync --numjobs="$jobs" --group_reporting \
		--iodepth=1 --time_based --runtime="$FIO_SECS" "${extra[@]}" \
		--output-format=terse --terse-version=3)
	# terse v3: field 5 error, 8 read IOPS, 49 write IOPS; with
	# group_reporting one line for all jobs
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
	local s=$1 r=$2 m=${MNT[$1]} bytes=$((SEQ_MIB * 1048576)) c0 c1
	warm_file "$SRC"
	c0=$(daemon_ticks "$s")
	timed dd if="$SRC" of="$m/big" bs=1M conv=fsync status=none
	c1=$(daemon_ticks "$s")
	record seq_write "$s" "$r" "$(mbps "$bytes" "$ELAPSED")"
	daemon_cpu "$s" cpu_write "$r" "$c0" "$c1" "$bytes"
	[ "$(stat -c %s "$m/big")" = "$bytes" ] || fail "$s: $m/big has the wrong size"
	cold_cache "$s"
	c0=$(daemon_ticks "$s")
	timed dd if="$m/big" of=/dev/null bs=1M status=none
	c1=$(daemon_ticks "$s")
	record seq_read_cold "$s" "$r" "$(mbps "$bytes" "$ELAPSED")"
	daemon_cpu "$s" cpu_read "$r" "$c0" "$c1" "$bytes"
	timed dd if="$m/big" of=/dev/null bs=1M status=none
	record seq_read_warm "$s" "$r" "$(mbps "$bytes" "$ELAPSED")"
	cmp "$SRC" "$m/big" || fail "$s: $m/big differs from $SRC"
	rm -f "$m/big"
}

# Both 2-job rows run two fio jobs on the same file (not one file each):
# concurrent requests on one file, as a database would make them.
phase_fio() {
	local s=$1 r=$2 m=${MNT[$1]} f iops rw jobs
	f=${MNT[$1]}/fio.dat
	if [ "$HAVE_FIO" = 0 ]; then
		return 0
	fi
	dd if="$SRC" of="$f" bs=1M count="$FIO_MIB" conv=fsync status=none
	for rw in randread randwrite; do
		for jobs in 1 2; do
			cold_cache "$s"
			iops=$(fio_iops "$rw" "$jobs" "$f")
			record "rand_${rw#rand}_${jobs}j" "$s" "$r" "$iops"
		done
	done
	[ "$(stat -c %s "$f")" = $((FIO_MIB * 1048576)) ] || fail "$s: $f changed size"
	rm -f "$f"
	[ -z "$(ls -A "$m")" ] || fail "$s: $m not empty after rm"
}

phase_tree() {
	local s=$1 r=$2 m=${MNT[$1]} n
	warm_file "$TAR"
	settle
	timed tar -C "$m" -xf "$TAR"
	record tree_extract "$s" "$r" "$ELAPSED"
	check_tar "$s" "$m"
	cold_cache "$s"
	timed count_tree "$m/tree"
	record tree_find "$s" "$r" "$ELAPSED"
	n=$(cat "$RUN_DIR/count")
	[ "$n" = "$TREE_COUNT" ] || fail "$s: find saw $n entries, expected $TREE_COUNT"
	timed list_tree "$m/tree"
	record tree_lsR "$s" "$r" "$ELAPSED"
	timed du_tree "$m/tree"
	record tree_du "$s" "$r" "$ELAPSED"
	timed rm -rf "$m/tree"
	record tree_rm "$s" "$r" "$ELAPSED"
	[ -z "$(ls -A "$m")" ] || fail "$s: $m not empty after rm -rf"
	warm_tree "$STAGE/tree"
	settle
	timed rsync -a "$STAGE/tree/" "$m/rsync/"
	record tree_rsync "$s" "$r" "$ELAPSED"
	check_rsync "$s" "$m/rsync"
	rm -rf "$m/rsync"
	[ -z "$(ls -A "$m")" ] || fail "$s: $m not empty after rm -rf"
}

FAILED=0
# run_phase GROUP SYSTEM RUN: the phase runs in a background subshell
# that main waits for, so SIGINT/SIGTERM reach the trap at once (bash runs
# a trap only when a foreground command ends, but interrupts wait); the
# exit trap then kills the phase's processes before unmounting.
run_phase() {
	local g=$1 s=$2 r=$3 rc w
	set +e
	(
		set -e
		"phase_$g" "$s" "$r"
	) &
	PHASE_PID=$!
	wait "$PHASE_PID"
	rc=$?
	PHASE_PID=
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
	if declare -F "$(fn remount "$s")" >/dev/null; then
		"$(fn remount "$s")" || echo "fsbench: could not remount $s" >&2
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

# median W S: the median, or nothing if the row failed or did not run.
median() {
	local st
	st=$(stats "$1" "$2")
	[ -n "$st" ] && [ "$st" != FAIL ] && echo "${st%% *}"
	return 0
}

# best_peer W: "SYSTEM MEDIAN" of the best selected encrypting peer on W
# (highest for MB/s and IOPS, lowest for seconds); nothing if none ran.
best_peer() {
	local p v
	for p in "${ENC_PEERS[@]}"; do
		in_list "$p" "${SYSTEMS[@]}" || continue
		v=$(median "$1" "$p")
		if [ -n "$v" ]; then
			echo "$p $v"
		fi
	done | awk -v lower="$([ "${WL_UNIT[$1]}" = s ] && echo 1 || echo 0)" '
		NR == 1 || (lower ? $2 < best : $2 > best) { best = $2; name = $1 }
		END { if (NR) print name, best }'
}

ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN {if (b > 0) printf "%.2f", a / b; else print "-"}'
}

fmt_num() {
	awk -v x="$1" -v u="$2" 'BEGIN {
		if (u == "s") printf (x < 0.1 ? "%.3f" : "%.2f"), x
		else if (u == "IOPS") printf "%.0f", x
		else printf (x < 100 ? "%.1f" : "%.0f"), x
	}'
}


# Which ratio columns the main table has: xtsfs against bare and
# fuse-overlayfs, if selected, and against the best encrypting peer.
have_peers() {
	local p
	for p in "${ENC_PEERS[@]}"; do
		in_list "$p" "${SYSTEMS[@]}" && return 0
	done
	return 1
}

print_table() {
	local w s st med min max cell o bp x
	local refs=()
	if in_list xtsfs "${SYSTEMS[@]}"; then
		for o in bare fuse-overlayfs; do
			in_list "$o" "${SYSTEMS[@]}" && refs+=("$o")
		done
	fi
	{
		printf 'workload\tunit\tbetter'
		for s in "${SYSTEMS[@]}"; do printf '\t%s' "$s"; done
		for o in "${refs[@]}"; do printf '\txtsfs/%s' "$o"; done
		if in_list xtsfs "${SYSTEMS[@]}" && have_peers; then
			printf '\txtsfs/best enc. peer'
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
			for s in "${SYSTEMS[@]}"; do
				st=$(stats "$w" "$s")
				if [ -z "$st" ]; then
					cell=-
				elif [ "$st" = FAIL ]; then
					cell=FAIL
				else
					read -r med min max _ <<<"$st"
					cell="$(fmt_num "$med" "${WL_UNIT[$w]}")"
					if [ "$RUNS" -gt 1 ]; then
						cell+=" [$(fmt_num "$min" "${WL_UNIT[$w]}")-$(fmt_num "$max" "${WL_UNIT[$w]}")]"
					fi
				fi
				printf '\t%s' "$cell"
			done
			x=
			in_list xtsfs "${SYSTEMS[@]}" && x=$(median "$w" xtsfs)
			for o in "${refs[@]}"; do
				med=$(median "$w" "$o")
				if [ -n "$x" ] && [ -n "$med" ]; then
					printf '\t%s' "$(ratio "$x" "$med")"
				else
					printf '\t-'
				fi
			done
			if in_list xtsfs "${SYSTEMS[@]}" && have_peers; then
				bp=$(best_peer "$w")
				if [ -n "$x" ] && [ -n "$bp" ]; then
					printf '\t%s (%s)' "$(ratio "$x" "${bp#* }")" "${bp%% *}"
				else
					printf '\t-'
				fi
			fi
			printf '\n'
		done
	} | columns left
}

# The xtsfs arm the targets are evaluated for: xtsfs, then the others.
TSYS=xtsfs

# target_eval W [REF BOUND]: "RATIO BOUND REF_NAME REF_VALUE VERDICT" for
# $TSYS on W against W's target, or against system REF with BOUND (RATIO
# "-" when it cannot be computed); nothing if W has no target.
target_eval() {
	local w=$1 x ref refv bound=${3:-${TARGET_X[$1]:-}} op
	[ -n "$bound" ] || return 0
	[ "${WL_UNIT[$w]}" = s ] && op='<=' || op='>='
	x=$(median "$w" "$TSYS")
	if [ -n "${2:-}" ] || [ "${TARGET_REF[$w]}" = bare ]; then
		ref=${2:-bare}
		refv=
		in_list "$ref" "${SYSTEMS[@]}" && refv=$(median "$w" "$ref")
	else
		read -r ref refv <<<"$(best_peer "$w")"
		ref=${ref:-peer}
	fi
	if [ -z "$x" ] || [ -z "$refv" ]; then
		echo "- $op$bound $ref ${refv:--} n/a"
		return 0
	fi
	awk -v x="$x" -v r="$refv" -v b="$bound" -v op="$op" -v ref="$ref" 'BEGIN {
		q = (r > 0) ? x / r : 0
		ok = (op == ">=") ? (q >= b) : (q <= b)
		printf "%.2f %s%s %s %s %s\n", q, op, b, ref, r, (ok ? "met" : "NOT-MET")
	}'
}

# Peak RSS in KiB of SYSTEM's daemons (max over every instance).
peak_rss() {
	awk -F'\t' -v s="$1" '$1 == s && $2 == "rss" && $4 > m {m = $4} END {if (m) print m}' \
		"$DAEMON_LOG"
}

# daemon_median SYSTEM KIND: the median of the logged values.
daemon_median() {
	awk -F'\t' -v s="$1" -v k="$2" '$1 == s && $2 == k {print $4}' "$DAEMON_LOG" |
		sort -g | awk '{v[n++] = $1} END {
			if (n) printf "%.2f", (n % 2) ? v[int(n / 2)] : (v[n / 2 - 1] + v[n / 2]) / 2 }'
}

print_targets() {
	for TSYS in xtsfs xtsfs-uring xtsfs-noopen xtsfs-aligned xtsfs-aligned-uring; do
		in_list "$TSYS" "${SYSTEMS[@]}" || continue
		print_targets_of
	done
	TSYS=xtsfs
}

# print_targets_of: the targets table of $TSYS.
print_targets_of() {
	local w t ratio bound ref refv verdict x rss ov ovr k v alt
	echo
	echo "$TSYS against the targets of issue #20 (a report: a missed target does"
	echo "not fail the run). Reference: bare, or the best encrypting peer on"
	echo "that row (best of: ${ENC_PEERS[*]}, among those selected and not failed);"
	echo "the cold and warm reads may meet theirs as >= 1.1x $TARGET_OVERLAY instead."
	echo "Every row must also be at least $TARGET_OVERLAY's (the last two columns)."
	echo
	{
		printf 'target\t%s\treference\t%s/ref\ttarget\tverdict\t%s/%s\tverdict\n' "$TSYS" "$TSYS" "$TSYS" "$TARGET_OVERLAY"
		for w in "${WL_IDS[@]}"; do
			in_list "${WL_GROUP[$w]}" "${GROUPS_SEL[@]}" || continue
			t=$(target_eval "$w")
			[ -n "$t" ] || continue
			read -r ratio bound ref refv verdict <<<"$t"
			alt=${TARGET_ALT_X[$w]:-}
			if [ "$verdict" != met ] && [ -n "$alt" ]; then
				read -r _ _ _ _ v <<<"$(target_eval "$w" "$TARGET_OVERLAY" "$alt")"
				[ "$v" = met ] && verdict="met(>=${alt}x:$TARGET_OVERLAY)"
			fi
			read -r ovr _ _ _ ov <<<"$(target_eval "$w" "$TARGET_OVERLAY" 1)"
			x=$(median "$w" "$TSYS")
			[ -n "$x" ] && x="$(fmt_num "$x" "${WL_UNIT[$w]}") ${WL_UNIT[$w]}"
			[ "$refv" != - ] && refv="$(fmt_num "$refv" "${WL_UNIT[$w]}") ${WL_UNIT[$w]}"
			printf '%s\t%s\t%s %s\t%s\t%sx\t%s\t%s\t%s\n' "${WL_LABEL[$w]}" "${x:-FAIL}" \
				"$ref" "$refv" "$ratio" "$bound" "${verdict/NOT-/NOT }" "$ovr" "${ov/NOT-/NOT }"
		done
		rss=$(peak_rss "$TSYS")
		if [ -n "$rss" ]; then
			printf '%s daemon peak RSS\t%s MiB\t-\t-\t<=%s MiB\t%s\t\t\n' "$TSYS" \
				"$(awk -v k="$rss" 'BEGIN {printf "%.1f", k / 1024}')" "$TARGET_RSS_MIB" \
				"$([ "$rss" -le $((TARGET_RSS_MIB * 1024)) ] && echo met || echo "NOT MET")"
		fi
		for k in cpu_write cpu_read; do
			v=$(daemon_median "$TSYS" "$k")
			[ -n "$v" ] || continue
			printf '%s daemon CPU per GiB %s\t%s s\t-\t-\t<=%s s\t%s\t\t\n' "$TSYS" \
				"${k#cpu_}" "$v" "$TARGET_CPU_S_PER_GIB" \
				"$(awk -v v="$v" -v b="$TARGET_CPU_S_PER_GIB" 'BEGIN {print (v <= b) ? "met" : "NOT MET"}')"
		done
	} | columns left
}

print_daemons() {
	local s any=0 rss
	for s in "${SYSTEMS[@]}"; do
		if [ -n "$(peak_rss "$s")" ]; then
			any=1
		fi
	done
	[ "$any" = 1 ] || return 0
	echo
	echo "FUSE daemons: CPU seconds (user + system, all threads) per GiB moved by"
	echo "the seq write and by the cold seq read (median of the runs), and peak"
	echo "RSS (VmHWM, the largest over every daemon instance: one per mount)."
	echo
	{
		printf 'daemon\tCPU s/GiB written\tCPU s/GiB read\tpeak RSS MiB\n'
		for s in "${SYSTEMS[@]}"; do
			rss=$(peak_rss "$s")
			[ -n "$rss" ] || continue
			printf '%s\t%s\t%s\t%s\n' "$s" "$(daemon_median "$s" cpu_write)" \
				"$(daemon_median "$s" cpu_read)" \
				"$(awk -v k="$rss" 'BEGIN {printf "%.1f", k / 1024}')"
		done
	} | columns left
}

json_str() {
	local s=$1
	s=${s//\\/\\\\}
	s=${s//\"/\\\"}
	printf '"%s"' "$s"
}

# json_num X: X, or null if it is not a number.
json_num() {
	if [[ $1 =~ ^-?[0-9]+(\.[0-9]+)?$ ]]; then
		printf '%s' "$1"
	else
		printf null
	fi
}

write_json() {
	local w s first_w=1 first_s vals st t ratio bound ref refv verdict x
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
		printf '    "ext4_journal": %s,\n' "$EXT4_JOURNAL_JSON"
		printf '    "short": %s,\n' "$([ "$SHORT" = 1 ] && echo true || echo false)"
		printf '    "runs": %s,\n' "$RUNS"
		printf '    "seq_mib": %s, "fio_mib": %s, "fio_seconds": %s, "tree_files": %s,\n' \
			"$SEQ_MIB" "$FIO_MIB" "$FIO_SECS" "$TREE_FILES"
		printf '    "fio_2_jobs": "one shared file",\n'
		printf '    "fio": %s,\n' "$([ "$HAVE_FIO" = 1 ] && echo true || echo false)"
		printf '    "versions": {'
		printf '"xtsfs": %s, ' "$(json_str "$XTSFS_VERSION")"
		printf '"xtsfs_cipher_core": %s, ' "$(json_str "${XTSFS_CORE:-}")"
		printf '"xtsfs_mount_options": %s, ' "$(json_str "${XTSFS_OPTS[1]:-}")"
		printf '"fuse-overlayfs": %s, ' "$(json_str "$OVERLAY_VERSION")"
		printf '"gocryptfs": %s, ' "$(json_str "$GOCRYPTFS_VERSION")"
		printf '"securefs": %s, ' "$(json_str "$SECUREFS_VERSION")"
		printf '"securefs_format": %s, ' "$(json_str "${SECUREFS_FORMAT:-}")"
		printf '"rsync": %s, ' "$(json_str "$RSYNC_VERSION")"
		printf '"fio": %s},\n' "$(json_str "$FIO_VERSION")"
		printf '    "systems": ['
		first_s=1
		for s in "${SYSTEMS[@]}"; do
			[ $first_s = 1 ] || printf ', '
			first_s=0
			json_str "$s"
		done
		printf '],\n    "encrypting_peers": ['
		first_s=1
		for s in "${ENC_PEERS[@]}"; do
			in_list "$s" "${SYSTEMS[@]}" || continue
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
			printf '}'
			if in_list xtsfs "${SYSTEMS[@]}"; then
				# xtsfs/other on the medians, as in the table
				x=$(median "$w" xtsfs)
				printf ', "xtsfs_ratio": {'
				first_s=1
				for s in "${SYSTEMS[@]}"; do
					[ "$s" != xtsfs ] || continue
					st=$(median "$w" "$s")
					[ $first_s = 1 ] || printf ', '
					first_s=0
					if [ -n "$x" ] && [ -n "$st" ]; then
						printf '"%s": %s' "$s" "$(json_num "$(ratio "$x" "$st")")"
					else
						printf '"%s": null' "$s"
					fi
				done
				printf '}'
				t=$(target_eval "$w")
				if [ -n "$t" ]; then
					read -r ratio bound ref refv verdict <<<"$t"
					printf ', "target": {"bound": %s, "reference": %s, "reference_value": %s, "ratio": %s, "met": %s}' \
						"$(json_str "${bound}x")" "$(json_str "$ref")" "$(json_num "$refv")" \
						"$(json_num "$ratio")" \
						"$(case $verdict in met) echo true ;; NOT-MET) echo false ;; *) echo null ;; esac)"
				fi
			fi
			printf '}'
		done
		printf '\n  },\n  "daemons": {'
		first_s=1
		for s in "${SYSTEMS[@]}"; do
			st=$(peak_rss "$s")
			[ -n "$st" ] || continue
			[ $first_s = 1 ] || printf ','
			first_s=0
			printf '\n    "%s": {"peak_rss_kib": %s' "$s" "$st"
			for t in cpu_write cpu_read; do
				vals=$(awk -F'\t' -v s="$s" -v k="$t" '$1 == s && $2 == k {print $3, $4}' "$DAEMON_LOG" |
					sort -n | awk '{printf "%s%s", (NR > 1 ? ", " : ""), $2}')
				printf ', "%s_s_per_gib": [%s]' "$t" "$vals"
			done
			printf '}'
		done
		printf '\n  }'
		if in_list xtsfs "${SYSTEMS[@]}"; then
			st=$(peak_rss xtsfs)
			printf ',\n  "rss_target": {"bound": "<=%s MiB", "xtsfs_peak_rss_kib": %s, "met": %s}' \
				"$TARGET_RSS_MIB" "$(json_num "$st")" \
				"$(if [ -z "$st" ]; then echo null; elif [ "$st" -le $((TARGET_RSS_MIB * 1024)) ]; then echo true; else echo false; fi)"
		fi
		printf ',\n  "notes": ['
		first_s=1
		while IFS= read -r t; do
			[ $first_s = 1 ] || printf ', '
			first_s=0
			json_str "$t"
		done < <(sort -u "$NOTES")
		printf ']\n}\n'
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
	DAEMON_LOG=$RUN_DIR/daemons.tsv
	: >"$DAEMON_LOG"
	NOTES=$RUN_DIR/notes.txt
	: >"$NOTES"
	CLK_TCK=$(getconf CLK_TCK)
	PASSFILE=$RUN_DIR/passfile
	echo "fsbench-passphrase-not-secret" >"$PASSFILE"
	chmod 600 "$PASSFILE"

	START_DATE=$(date -u '+%Y-%m-%d %H:%M:%S UTC')
	CPU=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
	LOAD_START=$(cat /proc/loadavg)
	XTSFS_VERSION='' GOCRYPTFS_VERSION='' FIO_VERSION='' SECUREFS_VERSION=''
	OVERLAY_VERSION='' RSYNC_VERSION=''
	if [ -x "$XTSFS_BIN/xtsfs" ]; then
		XTSFS_VERSION=$("$XTSFS_BIN/xtsfs" --version 2>&1 | head -n 1)
	fi
	if have gocryptfs; then
		GOCRYPTFS_VERSION=$(gocryptfs -version 2>&1 | head -n 1)
	fi
	if have securefs; then
		# its own --version says "GIT-NOTFOUND" in the Debian build
		# shellcheck disable=SC2016 # ${Version} is dpkg-query's
		SECUREFS_VERSION=$(dpkg-query -W -f='securefs ${Version} (Debian)' securefs 2>/dev/null) ||
			SECUREFS_VERSION=$(securefs version 2>&1 | head -n 1)
	fi
	if have fuse-overlayfs; then
		OVERLAY_VERSION=$(fuse-overlayfs --version 2>&1 | awk '/^fuse-overlayfs/ && !n++')
	fi
	if have rsync; then
		RSYNC_VERSION=$(rsync --version | awk 'NR == 1')
	fi
	if have fio; then
		FIO_VERSION=$(fio --version 2>&1 | head -n 1)
	fi

	echo "fsbench: $START_DATE, $(uname -r), $CPU, $(nproc) CPUs"
	echo "  load average at start: $LOAD_START"
	echo "  work dir: $WORKDIR on $FSTYPE ($FSSOURCE)"
	if [ "$EXT4_NOJOURNAL" = 1 ]; then
		echo "  NOTE: this ext4 has no journal: it reuses no inode freed in the last"
		echo "  60-300 s (fs/ext4/ialloc.c, recently_deleted), so a system's untar and"
		echo "  rsync right after the previous one's rm -rf pay a scan of the freed"
		echo "  inodes, and the tree rows depend on the order of the systems (each"
		echo "  run starts one system further on; take runs that are a multiple of"
		echo "  the number of systems to give each the same places)"
	fi
	echo "  mode: $([ "$SHORT" = 1 ] && echo short || echo full), $RUNS run(s);" \
		"seq $SEQ_MIB MiB, fio $FIO_MIB MiB ${FIO_SECS}s (2 jobs: one shared file)," \
		"tree $TREE_FILES files"
	echo "  systems: ${SYSTEMS[*]}; workloads: ${GROUPS_SEL[*]}"
	[ ${#XTSFS_OPTS[@]} -eq 0 ] || echo "  xtsfs mount options: ${XTSFS_OPTS[1]}"
	echo "  versions: xtsfs ${XTSFS_VERSION:-?}; ${OVERLAY_VERSION:-fuse-overlayfs ?};" \
		"${GOCRYPTFS_VERSION:-gocryptfs ?}; ${SECUREFS_VERSION:-securefs ?};" \
		"${FIO_VERSION:-fio not installed}; ${RSYNC_VERSION:-rsync ?}"

	make_source
	if in_list tree "${GROUPS_SEL[@]}"; then
		make_tree_tar
		echo "  tree: $TAR ($TREE_COUNT entries, $(du -sh "$TAR" | cut -f1))"
	fi

	# memfs links the glue of the build the xtsfs tools come from
	XTSFS_LIBS=$(dirname "$XTSFS_BIN")/src/fs
	# snapshot the xtsfs binaries: a rebuild during the run changes nothing
	if [[ " ${SYSTEMS[*]} " == *" xtsfs"* ]]; then
		mkdir -p "$RUN_DIR/bin"
		cp "$XTSFS_BIN/xtsfs" "$XTSFS_BIN/xtsfs-mkfs" "$RUN_DIR/bin/"
		XTSFS_BIN=$RUN_DIR/bin
	fi

	local s g r t0
	for s in "${SYSTEMS[@]}"; do
		SYSDIR[$s]=$RUN_DIR/$s
		mkdir -p "${SYSDIR[$s]}"
		"$(fn setup "$s")" "${SYSDIR[$s]}"
	done
	if [ -n "${XTSFS_CORE:-}" ]; then
		echo "  xtsfs cipher core: $XTSFS_CORE"
	fi
	if [ -n "$SECUREFS_FORMAT" ]; then
		echo "  securefs: format $SECUREFS_FORMAT (its default), default mount options"
	fi

	# Run r starts with the r-th system and wraps around, so that no
	# system always follows the same one: each phase inherits the state
	# (dirty pages, freed inodes, caches) the one before it left.
	local -a order
	local k n=${#SYSTEMS[@]}
	for ((r = 1; r <= RUNS; r++)); do
		k=$(((r - 1) % n))
		order=("${SYSTEMS[@]:k}" "${SYSTEMS[@]:0:k}")
		for g in "${GROUPS_SEL[@]}"; do
			echo "run $r/$RUNS, $g (in this order: ${order[*]}):"
			for s in "${order[@]}"; do
				t0=$SECONDS
				run_phase "$g" "$s" "$r"
				echo "  ($g on $s took $((SECONDS - t0)) s)"
			done
		done
	done

	for s in "${SYSTEMS[@]}"; do
		"$(fn teardown "$s")"
	done

	echo
	echo "Results: median of $RUNS run(s) [min-max]. MB/s = 10^6 bytes/s."
	echo "Ratios are xtsfs/other on the medians: for MB/s and IOPS higher is"
	echo "better (>1 = xtsfs faster); for seconds lower is better (<1 = xtsfs faster)."
	echo "The best encrypting peer is the best of ${ENC_PEERS[*]} on each row."
	echo "Load average at end: $(cat /proc/loadavg) (start: $LOAD_START)"
	echo
	print_table
	print_daemons
	print_targets
	if [ -s "$NOTES" ]; then
		echo
		echo "Notes (deviations of peers that are not counted as failures):"
		sort -u "$NOTES" | sed 's/^/  /'
	fi
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
