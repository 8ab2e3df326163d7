#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# scaling.sh - does xtsfs scale? Three questions, each measured on the
# bare lower directory and on an xtsfs mount in one invocation:
#
#   1. throughput vs file size: sequential write (dd bs=1M, conv=fsync)
#      and cold sequential read (FUSE remounted, sync, drop_caches) of
#      files of 1 MiB, 16 MiB, 256 MiB, 1 GiB, 4 GiB, 8 GiB (up to
#      --max-size). Small sizes are repeated (distinct files, each its
#      own dd) until a point totals >= 256 MiB; one cold start precedes
#      the reads of all of them.                                   MB/s
#      Source: a random file of min(max-size, 1 GiB), read into the page
#      cache first; bigger files are fed from a FIFO into which `cat`
#      repeats that file (the pipe's own rate is measured and shown).
#   2. listing a directory of N empty files, N = 1,000, 10,000, 100,000
#      (up to --max-entries): time to create them (one python3 process),
#      then, each after a cold start, `ls -f DIR | wc -l` (readdir only)
#      and `ls -l DIR > /dev/null` (readdir + stat).     s and us/entry
#   3. memory of the xtsfs daemon (VmRSS and VmHWM from /proc/PID/status,
#      PID = the process with the mount point among its arguments): on a
#      fresh mount; after `ls -l` of N files (a fresh daemon for each N);
#      after `echo 2 > drop_caches`, which makes the kernel FORGET the
#      inodes; while a python3 process holds 1000 files open (O_RDWR);
#      after it closes them.                                         KiB
#
# MB/s is 10^6 bytes per second of wall-clock time, measured around the
# dd processes (so it includes their start and, for writes, the create
# and the fsync of each file: the per-file cost shows at small sizes on
# both systems). Any failed check (size, content, entry count, daemon
# found) stops the run with exit status 1; the trap always unmounts and
# removes the volumes.
#
# The mount and unmount helpers follow tests/bench/fsbench.sh (copied,
# not sourced: that script runs its main when sourced).
#
# Usage: tests/bench/scaling.sh [--short] [--max-size SIZE]
#        [--max-entries N] [--handles N] [--parts LIST] [--workdir DIR]
#        [--xtsfs-bin DIR] [--json FILE] [--plot DIR]
# Needs root (FUSE mounts, drop_caches). See tests/bench/README.md.

set -euo pipefail
shopt -s inherit_errexit
export LC_ALL=C

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BENCH_PROG=scaling
# shellcheck source=tests/bench/lib.sh
. "$REPO/tests/bench/lib.sh"

# ---------------------------------------------------------------- settings
WORKDIR=/var/tmp/xtsfs-scaling
MAX_SIZE_ARG=8G
MAX_ENTRIES=100000
HANDLES=
NOFILE=
SHORT=0
JSON_OUT=
PLOT_DIR=
PARTS_ARG=throughput,listing,memory
XTSFS_BIN=${XTSFS_BIN:-$REPO/build/tools}
# the system's interpreter if there is one: a pyenv shim costs ~1 s a start
PYTHON=${PYTHON:-$(command -v /usr/bin/python3 || command -v python3 || echo python3)}
KNOWN_PARTS=(throughput listing memory)
SYSTEMS=(bare xtsfs)

usage() {
	cat <<EOF
Usage: $0 [OPTION]...
Scaling benchmark of xtsfs against the bare lower directory: sequential
throughput vs file size, directory listing time vs number of entries,
and the daemon's memory vs number of cached inodes and open files.
Run as root.

  --short             tiny sizes for CI (1 and 16 MiB files, 32 MiB per
                      point; 100 and 1000 entries; 100 handles): < 1 min,
                      only checks that the script works
  --max-size SIZE     largest file, with suffix M or G (default $MAX_SIZE_ARG);
                      sizes are 1M 16M 256M 1G 4G 8G (then doubling) up
                      to SIZE
  --max-entries N     largest directory (default $MAX_ENTRIES); N = 1000,
                      10000, 100000... up to N
  --handles N         files held open in part 3 (default 1000, 100 with
                      --short)
  --nofile N          start the xtsfs daemon with RLIMIT_NOFILE N (soft
                      and hard; default: this shell's limits; above the
                      hard limit needs CAP_SYS_RESOURCE). The daemon
                      holds one fd per inode the kernel has cached
  --parts LIST        comma-separated, from: ${KNOWN_PARTS[*]}
                      (default $PARTS_ARG)
  --workdir DIR       where the volumes live, on a disk filesystem, not
                      tmpfs (default $WORKDIR); everything made there is
                      removed at exit
  --xtsfs-bin DIR     directory with xtsfs and xtsfs-mkfs
                      (default \$XTSFS_BIN or $REPO/build/tools)
  --json FILE         also write every raw number to FILE
  --plot DIR          also write PNG charts to DIR with gnuplot:
                      scaling-throughput.png, scaling-listing.png,
                      scaling-memory.png
  -h, --help          show this help

Exit status: 0 if every measurement ran and its checks passed, 1 if one
failed, 2 on bad usage, missing prerequisites or too little disk space.
EOF
}

die() {
	echo "scaling: $*" >&2
	exit 2
}

# to_mib SIZE: 512M, 4G, 4096 (MiB) -> MiB
to_mib() {
	local v=$1
	case $v in
	*[gG] | *[gG]i[bB] | *[gG][bB]) v=${v%%[gG]*}; [[ $v =~ ^[0-9]+$ ]] && echo $((v * 1024)) ;;
	*[mM] | *[mM]i[bB] | *[mM][bB]) v=${v%%[mM]*}; [[ $v =~ ^[0-9]+$ ]] && echo "$v" ;;
	*) [[ $v =~ ^[0-9]+$ ]] && echo "$v" ;;
	esac
}

parse_args() {
	local handles_set=0
	while [ $# -gt 0 ]; do
		case $1 in
		--short) SHORT=1 ;;
		--max-size) MAX_SIZE_ARG=${2:?--max-size needs SIZE}; shift ;;
		--max-size=*) MAX_SIZE_ARG=${1#*=} ;;
		--max-entries) MAX_ENTRIES=${2:?--max-entries needs N}; shift ;;
		--max-entries=*) MAX_ENTRIES=${1#*=} ;;
		--handles) HANDLES=${2:?--handles needs N}; handles_set=1; shift ;;
		--handles=*) HANDLES=${1#*=}; handles_set=1 ;;
		--nofile) NOFILE=${2:?--nofile needs N}; shift ;;
		--nofile=*) NOFILE=${1#*=} ;;
		--parts) PARTS_ARG=${2:?--parts needs a list}; shift ;;
		--parts=*) PARTS_ARG=${1#*=} ;;
		--workdir) WORKDIR=${2:?--workdir needs DIR}; shift ;;
		--workdir=*) WORKDIR=${1#*=} ;;
		--xtsfs-bin) XTSFS_BIN=${2:?--xtsfs-bin needs DIR}; shift ;;
		--xtsfs-bin=*) XTSFS_BIN=${1#*=} ;;
		--json) JSON_OUT=${2:?--json needs FILE}; shift ;;
		--json=*) JSON_OUT=${1#*=} ;;
		--plot) PLOT_DIR=${2:?--plot needs DIR}; shift ;;
		--plot=*) PLOT_DIR=${1#*=} ;;
		-h | --help) usage; exit 0 ;;
		*) usage >&2; die "unknown argument: $1" ;;
		esac
		shift
	done
	MAX_MIB=$(to_mib "$MAX_SIZE_ARG") || true
	if [ -z "$MAX_MIB" ] || [ "$MAX_MIB" -lt 1 ]; then
		die "--max-size: not a size like 512M or 4G: $MAX_SIZE_ARG"
	fi
	[[ $MAX_ENTRIES =~ ^[1-9][0-9]*$ ]] ||
		die "--max-entries: not a positive number: $MAX_ENTRIES"
	if [ "$handles_set" = 1 ]; then
		[[ $HANDLES =~ ^[1-9][0-9]*$ ]] || die "--handles: not a positive number: $HANDLES"
	fi
	if [ -n "$NOFILE" ] && ! [[ $NOFILE =~ ^[1-9][0-9]*$ ]]; then
		die "--nofile: not a positive number: $NOFILE"
	fi
	IFS=, read -r -a PARTS <<<"$PARTS_ARG"
	[ ${#PARTS[@]} -gt 0 ] || die "--parts: empty list"
	local p
	for p in "${PARTS[@]}"; do
		in_list "$p" "${KNOWN_PARTS[@]}" ||
			die "--parts: unknown part '$p' (known: ${KNOWN_PARTS[*]})"
	done
	if [ -n "$JSON_OUT" ]; then
		JSON_OUT=$(realpath -m -- "$JSON_OUT")
	fi
	if [ -n "$PLOT_DIR" ]; then
		PLOT_DIR=$(realpath -m -- "$PLOT_DIR")
	fi
}

# SIZES (MiB), PER_POINT_MIB, ENTRIES, HANDLES, SRC_MIB
set_sizes() {
	local s n
	SIZES=()
	ENTRIES=()
	if [ "$SHORT" = 1 ]; then
		for s in 1 16; do
			[ "$s" -le "$MAX_MIB" ] && SIZES+=("$s")
		done
		PER_POINT_MIB=32
		for n in 100 1000; do
			[ "$n" -le "$MAX_ENTRIES" ] && ENTRIES+=("$n")
		done
		HANDLES=${HANDLES:-100}
	else
		for s in 1 16 256 1024 4096; do
			[ "$s" -le "$MAX_MIB" ] && SIZES+=("$s")
		done
		for ((s = 8192; s <= MAX_MIB; s *= 2)); do
			SIZES+=("$s")
		done
		PER_POINT_MIB=256
		for ((n = 1000; n <= MAX_ENTRIES; n *= 10)); do
			ENTRIES+=("$n")
		done
		HANDLES=${HANDLES:-1000}
	fi
	[ ${#SIZES[@]} -gt 0 ] || SIZES=(1)
	[ ${#ENTRIES[@]} -gt 0 ] || die "--max-entries: must be at least $([ "$SHORT" = 1 ] && echo 100 || echo 1000)"
	BIG_MIB=${SIZES[-1]}
	SRC_MIB=$((BIG_MIB < 1024 ? BIG_MIB : 1024))
}


# ---------------------------------------------------------- prerequisites

check_prereqs() {
	local missing=() tool pkg
	[ "$(id -u)" = 0 ] ||
		missing+=("root (FUSE mounts and /proc/sys/vm/drop_caches)")
	[ -c /dev/fuse ] || missing+=("/dev/fuse (FUSE kernel module)")
	while read -r tool pkg; do
		have "$tool" || missing+=("$tool (Debian package $pkg)")
	done <<-EOF
		dd coreutils
		realpath coreutils
		timeout coreutils
		cmp diffutils
		awk mawk
		findmnt util-linux
		mountpoint util-linux
		fusermount3 fuse3
	EOF
	have "$PYTHON" || missing+=("$PYTHON (Debian package python3)")
	[ -x "$XTSFS_BIN/xtsfs" ] && [ -x "$XTSFS_BIN/xtsfs-mkfs" ] ||
		missing+=("$XTSFS_BIN/xtsfs and xtsfs-mkfs (build: meson setup build && ninja -C build, or --xtsfs-bin DIR)")
	if [ -n "$PLOT_DIR" ]; then
		have gnuplot || missing+=("gnuplot, for --plot (Debian package gnuplot-nox)")
	fi
	if [ -n "$NOFILE" ] && ! (ulimit -n "$NOFILE") 2>/dev/null; then
		missing+=("permission to set RLIMIT_NOFILE to $NOFILE for --nofile (the hard limit is $(ulimit -Hn); raising it needs CAP_SYS_RESOURCE)")
	fi
	if [ ${#missing[@]} -gt 0 ]; then
		echo "scaling: missing prerequisites:" >&2
		printf '  - %s\n' "${missing[@]}" >&2
		exit 2
	fi
}

# Refuse memory-backed work dirs and too little free space.
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
	*) echo "scaling: WARNING: $WORKDIR is on '$FSTYPE', which may not be a plain disk filesystem" >&2 ;;
	esac
	# Room at the same time: the source, the biggest file (one system at a
	# time; xtsfs adds 40 bytes per file), the directories (a few hundred
	# bytes of lower directory per entry, twice), and 1 GiB of margin.
	local need_mib=0 avail_mib n ents=0
	if in_list throughput "${PARTS[@]}"; then
		need_mib=$((SRC_MIB + BIG_MIB))
	fi
	for n in "${ENTRIES[@]}"; do
		ents=$((ents + n))
	done
	need_mib=$((need_mib + ents * 2 * 512 / 1048576 + 1024))
	avail_mib=$(($(df -Pk "$probe" | awk 'NR == 2 {print $4}') / 1024))
	if [ "$avail_mib" -lt "$need_mib" ]; then
		die "$probe ($FSTYPE) has $avail_mib MiB free; --max-size $MAX_SIZE_ARG needs about $need_mib MiB: free some space, use a smaller --max-size (e.g. 4G) or another --workdir"
	fi
	NEED_MIB=$need_mib
	AVAIL_MIB=$avail_mib
}

# ---------------------------------------------------------- mounts, cleanup
RUN_DIR=
CIPHER=
MADE_WORKDIR=0
HOLDER_PID=
declare -A MNT



cleanup() {
	local rc=$? busy=0
	set +e
	trap - INT TERM
	if [ -n "$HOLDER_PID" ]; then
		kill "$HOLDER_PID" 2>/dev/null
		wait "$HOLDER_PID" 2>/dev/null
	fi
	if [ -n "${MNT[xtsfs]:-}" ]; then
		unmount_wait "${MNT[xtsfs]}" || busy=1
	fi
	if [ -n "$RUN_DIR" ] && [ -d "$RUN_DIR" ]; then
		if [ "$busy" = 0 ]; then
			rm -rf --one-file-system "$RUN_DIR"
			[ "$MADE_WORKDIR" = 1 ] && rmdir "$WORKDIR" 2>/dev/null
		else
			echo "scaling: left $RUN_DIR (the mount could not be removed)" >&2
		fi
	fi
	exit "$rc"
}

setup_systems() {
	mkdir -p "$RUN_DIR/bare" "$RUN_DIR/cipher" "$RUN_DIR/mnt"
	MNT[bare]=$RUN_DIR/bare
	CIPHER=$RUN_DIR/cipher
	"$XTSFS_BIN/xtsfs-mkfs" --argon2-time 1 --argon2-memory 64 \
		--argon2-lanes 1 --passfile "$PASSFILE" "$CIPHER" >"$RUN_DIR/mkfs.log"
	XTSFS_CORE=$(awk -F: '/cipher core/ {sub(/^ +/, "", $2); print $2}' "$RUN_DIR/mkfs.log")
	MNT[xtsfs]=$RUN_DIR/mnt
	mount_xtsfs
}
mount_xtsfs() {
	if [ -n "$NOFILE" ]; then
		(ulimit -n "$NOFILE" && exec "$XTSFS_BIN/xtsfs" --passfile "$PASSFILE" "$CIPHER" "${MNT[xtsfs]}")
	else
		"$XTSFS_BIN/xtsfs" --passfile "$PASSFILE" "$CIPHER" "${MNT[xtsfs]}"
	fi
}

# Cold start: remount xtsfs (a fresh daemon), flush, drop the page cache.
cold_cache() {
	if [ "$1" = xtsfs ]; then
		unmount_wait "${MNT[xtsfs]}"
		mount_xtsfs
	fi
	sync
	echo 3 >/proc/sys/vm/drop_caches
	warm_tools
}

# Load the timed programs again after drop_caches, so that a cold
# measurement times the filesystem, not the loading of ls or dd.
warm_tools() {
	# shellcheck disable=SC2012
	ls -f / | wc -l >/dev/null
	ls -l / >/dev/null
	dd if=/dev/null of=/dev/null status=none
}

# ------------------------------------------------------------ measuring
ELAPSED=
T0=
# tick; ...; tock: ELAPSED = wall-clock seconds in between.
tick() { T0=$EPOCHREALTIME; }
tock() {
	local t1=$EPOCHREALTIME
	ELAPSED=$(awk -v a="$T0" -v b="$t1" 'BEGIN {printf "%.6f", b - a}')
}

mbps() { awk -v m="$1" -v t="$2" 'BEGIN {printf "%.1f", m * 1048576 / 1e6 / t}'; }

fail() {
	echo "scaling: FAIL: $*" >&2
	exit 1
}

# record PART METRIC SYSTEM X VALUE
record() {
	printf '%s\t%s\t%s\t%s\t%s\n' "$@" >>"$RESULTS"
}

# get PART METRIC SYSTEM X: the recorded value, or empty
get() {
	awk -F'\t' -v p="$1" -v m="$2" -v s="$3" -v x="$4" \
		'$1 == p && $2 == m && $3 == s && $4 == x {v = $5} END {print v}' "$RESULTS"
}

# ------------------------------------------------------- 1. throughput
SRC=

make_source() {
	SRC=$RUN_DIR/random-${SRC_MIB}M.bin
	echo "making the source: $SRC_MIB MiB of random bytes"
	head -c $((SRC_MIB * 1048576)) /dev/urandom >"$SRC"
	FIFO=$RUN_DIR/fifo
	mkfifo "$FIFO"
}

# feed MIB: write MIB MiB (a multiple of SRC_MIB) of repeated SRC to FIFO,
# in the background; FEEDER is its pid.
FEEDER=
feed() {
	local n=$(($1 / SRC_MIB))
	(for ((i = 0; i < n; i++)); do cat "$SRC"; done >"$FIFO") &
	FEEDER=$!
}

# write_one FILE MIB: the timed unit of the write test.
write_one() {
	if [ "$2" -le "$SRC_MIB" ]; then
		dd if="$SRC" of="$1" bs=1M count="$2" conv=fsync status=none
	else
		feed "$2"
		dd if="$FIFO" of="$1" bs=1M count="$2" iflag=fullblock conv=fsync status=none
		wait "$FEEDER"
	fi
}

# The rate at which the FIFO delivers repeated SRC, to /dev/null: the
# ceiling the sizes above SRC_MIB are written at.
measure_pipe() {
	local mib=$((SRC_MIB * 2))
	cat "$SRC" >/dev/null
	tick
	feed "$mib"
	dd if="$FIFO" of=/dev/null bs=1M count="$mib" iflag=fullblock status=none
	wait "$FEEDER"
	tock
	PIPE_MBPS=$(mbps "$mib" "$ELAPSED")
	record throughput pipe_source - "$mib" "$PIPE_MBPS"
	echo "  source FIFO (cat of the cached $SRC_MIB MiB file, repeated) to /dev/null: $PIPE_MBPS MB/s"
}

tp_point() {
	local s=$1 mib=$2 reps=$3 d=${MNT[$1]}/tp i bytes wr rd
	bytes=$((mib * 1048576))
	mkdir "$d"
	cat "$SRC" >/dev/null # in the page cache
	tick
	for ((i = 1; i <= reps; i++)); do
		write_one "$d/f$i" "$mib"
	done
	tock
	wr=$(mbps $((mib * reps)) "$ELAPSED")
	record throughput write "$s" "$mib" "$wr"
	for ((i = 1; i <= reps; i++)); do
		[ "$(stat -c %s "$d/f$i")" = "$bytes" ] || fail "$s: $d/f$i has the wrong size"
	done
	cold_cache "$s"
	d=${MNT[$s]}/tp
	tick
	for ((i = 1; i <= reps; i++)); do
		dd if="$d/f$i" of=/dev/null bs=1M status=none
	done
	tock
	rd=$(mbps $((mib * reps)) "$ELAPSED")
	record throughput read_cold "$s" "$mib" "$rd"
	printf '  %-6s %8s x%-4s write %8s MB/s   cold read %8s MB/s\n' \
		"$s" "$(fmt_size "$mib")" "$reps" "$wr" "$rd"
	# contents (untimed): whole files up to SRC_MIB, else the last SRC_MIB
	for ((i = 1; i <= reps; i++)); do
		if [ "$mib" -le "$SRC_MIB" ]; then
			cmp -n "$bytes" "$SRC" "$d/f$i" || fail "$s: $d/f$i differs from the source"
		else
			cmp -i $((bytes - SRC_MIB * 1048576)):0 "$d/f$i" "$SRC" ||
				fail "$s: the end of $d/f$i differs from the source"
		fi
	done
	rm -rf "$d"
}

part_throughput() {
	local mib reps s
	echo "1. throughput vs file size"
	make_source
	if [ "$BIG_MIB" -gt "$SRC_MIB" ]; then
		measure_pipe
	fi
	for mib in "${SIZES[@]}"; do
		reps=$(((PER_POINT_MIB + mib - 1) / mib))
		record throughput reps - "$mib" "$reps"
		for s in "${SYSTEMS[@]}"; do
			tp_point "$s" "$mib" "$reps"
		done
	done
	rm -f "$SRC"
}

# ---------------------------------------------------------- 2. listing
# mkfiles DIR N: N empty files f0000000... in DIR, one python3 process;
# prints the seconds the creates took (without the interpreter's start)
# and the number of stalls. A stall: a create failed with EMFILE or
# ENFILE (the xtsfs daemon keeps one lower fd per inode the kernel holds,
# so it runs out at its RLIMIT_NOFILE); the helper then makes the kernel
# forget its unused inodes (echo 2 > drop_caches), waits 0.5 s for the
# FORGETs and tries again; the stalls are timed with the creates. A
# create that failed may have made the file all the same: EEXIST on the
# retry counts it as made.
mkfiles() {
	"$PYTHON" - "$1" "$2" <<'PY'
import errno, os, sys, time
d, n = sys.argv[1], int(sys.argv[2])
stalls = 0
t0 = time.monotonic()
i = tries = 0
while i < n:
    try:
        os.close(os.open("%s/f%07d" % (d, i), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
    except OSError as e:
        if e.errno == errno.EEXIST and tries > 0:
            pass  # made by the create that failed
        elif e.errno in (errno.EMFILE, errno.ENFILE) and tries < 10:
            stalls += 1
            tries += 1
            with open("/proc/sys/vm/drop_caches", "w") as f:
                f.write("2\n")
            time.sleep(0.5)
            continue
        else:
            raise
    i += 1
    tries = 0
print("%.6f %d" % (time.monotonic() - t0, stalls))
PY
}

# The listings: stdout counted or dropped; errors (one line each on
# stderr) are kept in RUN_DIR/err and counted by ls_errors, not fatal:
# ls goes on after a failed stat.
# ls -f itself is what is measured (readdir, no stat, no sorting)
# shellcheck disable=SC2012
count_ls() { { ls -f "$1" 2>"$RUN_DIR/err" || true; } | wc -l >"$RUN_DIR/count"; }
long_ls() { { ls -l "$1" 2>"$RUN_DIR/err" || true; } | wc -l >"$RUN_DIR/count"; }
# ls_l_listed: how many entries the last long_ls printed (not "total")
ls_l_listed() { awk '{print ($1 > 0 ? $1 - 1 : 0)}' "$RUN_DIR/count"; }
# ls_errors: how many errors the last listing printed, and a sample
ls_errors() {
	local n
	n=$(wc -l <"$RUN_DIR/err")
	if [ "$n" != 0 ]; then
		echo "scaling: $n errors from ls, e.g.: $(head -n 1 "$RUN_DIR/err")" >&2
	fi
	echo "$n"
}

FAILED=0
FAILURES=()
# soft_fail MESSAGE: a result that is wrong but measured: noted, the run
# goes on, the exit status will be 1.
soft_fail() {
	echo "scaling: FAIL: $*" >&2
	FAILED=1
	FAILURES+=("$*")
}

# make_dir SYSTEM N: MNT/dN with N empty files, unless there already.
make_dir() {
	local d=${MNT[$1]}/d$2
	[ -d "$d" ] && return 0
	local secs stalls
	mkdir "$d.tmp"
	read -r secs stalls < <(mkfiles "$d.tmp" "$2")
	[ -n "$stalls" ] || fail "$1: could not create $2 files in $d.tmp"
	mv "$d.tmp" "$d"
	record listing create "$1" "$2" "$secs"
	record listing create_stalls "$1" "$2" "$stalls"
	if [ "$stalls" != 0 ]; then
		soft_fail "$1: creating $2 files: $stalls creates failed with EMFILE/ENFILE until the kernel dropped its inodes"
	fi
}

ls_point() {
	local s=$1 n=$2 d c e
	cold_cache "$s" # every create starts with no inodes held
	make_dir "$s" "$n"
	d=${MNT[$s]}/d$n
	cold_cache "$s"
	tick
	count_ls "$d"
	tock
	record listing ls_f "$s" "$n" "$ELAPSED"
	c=$(cat "$RUN_DIR/count")
	e=$(ls_errors)
	record listing ls_f_errors "$s" "$n" "$e"
	if [ "$c" != $((n + 2)) ] || [ "$e" != 0 ]; then
		soft_fail "$s: ls -f of $n entries: $c lines (expected $((n + 2))), $e errors"
	fi
	cold_cache "$s"
	tick
	long_ls "$d"
	tock
	record listing ls_l "$s" "$n" "$ELAPSED"
	c=$(ls_l_listed)
	e=$(ls_errors)
	record listing ls_l_errors "$s" "$n" "$e"
	if [ "$c" != "$n" ] || [ "$e" != 0 ]; then
		soft_fail "$s: ls -l of $n entries: $c listed, $e errors"
	fi
	printf '  %-6s N=%-7s create %8.3f s   ls -f %8.3f s   ls -l %8.3f s\n' "$s" "$n" \
		"$(get listing create "$s" "$n")" "$(get listing ls_f "$s" "$n")" "$ELAPSED"
}

part_listing() {
	local n s
	echo "2. listing a directory of N entries"
	for n in "${ENTRIES[@]}"; do
		for s in "${SYSTEMS[@]}"; do
			ls_point "$s" "$n"
		done
		rm -rf "${MNT[bare]:?}/d$n" # xtsfs's stay for part 3
	done
}

# ----------------------------------------------------------- 3. memory
# mem_sample STATE N: record the daemon's VmRSS and VmHWM (KiB).
mem_sample() {
	local pids pid rss hwm fds
	pids=$(daemon_pids "${MNT[xtsfs]}")
	if [ -z "$pids" ] || [ "$(wc -w <<<"$pids")" != 1 ]; then
		fail "expected one xtsfs daemon for ${MNT[xtsfs]}, found: ${pids:-none}"
	fi
	pid=$pids
	read -r rss hwm < <(awk '/^VmRSS:/ {r = $2} /^VmHWM:/ {h = $2} END {print r, h}' \
		"/proc/$pid/status")
	fds=$(find "/proc/$pid/fd" -mindepth 1 -maxdepth 1 | wc -l)
	record memory rss "$1" "$2" "$rss"
	record memory hwm "$1" "$2" "$hwm"
	record memory fds "$1" "$2" "$fds"
	printf '  %-14s N=%-7s VmRSS %8s KiB   VmHWM %8s KiB   fds %7s\n' \
		"$1" "$2" "$rss" "$hwm" "$fds"
}

# Opens argv[2] files of directory argv[1] O_RDWR, says "ready", holds
# them until stdin reaches EOF, closes them, says "closed".
HOLDER_PY='
import os, resource, sys
d, n = sys.argv[1], int(sys.argv[2])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
if soft < n + 16:
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(n + 16, hard), hard))
names = sorted(os.listdir(d))[:n]
fds = [os.open(os.path.join(d, x), os.O_RDWR) for x in names]
print("ready", len(fds), flush=True)
sys.stdin.read()
for fd in fds:
    os.close(fd)
print("closed", flush=True)
'

hold_files() {
	local d=$1 n=$2 ctl=$RUN_DIR/holder.ctl out=$RUN_DIR/holder.out fd i
	rm -f "$ctl" "$out"
	mkfifo "$ctl"
	"$PYTHON" -c "$HOLDER_PY" "$d" "$n" <"$ctl" >"$out" &
	HOLDER_PID=$!
	exec {fd}>"$ctl"
	for ((i = 0; i < 600; i++)); do
		grep -q '^ready' "$out" 2>/dev/null && break
		kill -0 "$HOLDER_PID" 2>/dev/null || break
		sleep 0.1
	done
	grep -q "^ready $n\$" "$out" || fail "the holder did not open $n files in $d"
	mem_sample handles_open "$n"
	exec {fd}>&-
	wait "$HOLDER_PID" || fail "the holder failed"
	HOLDER_PID=
	grep -q '^closed' "$out" || fail "the holder did not close its files"
	sleep 1 # RELEASE is sent on close; let the daemon finish
	mem_sample handles_closed "$n"
}

part_memory() {
	local n hd=${MNT[xtsfs]}/handles
	echo "3. xtsfs daemon memory"
	cold_cache xtsfs # no inodes held (even [ -d ] needs a lookup)
	for n in "${ENTRIES[@]}"; do
		make_dir xtsfs "$n"
	done
	cold_cache xtsfs # no inodes held: room for the new ones
	[ -d "$hd" ] || { mkdir "$hd" && mkfiles "$hd" "$HANDLES" >/dev/null; }
	cold_cache xtsfs
	mem_sample mounted 0
	for n in "${ENTRIES[@]}"; do
		cold_cache xtsfs
		mem_sample fresh "$n"
		long_ls "${MNT[xtsfs]}/d$n"
		mem_sample stat "$n"
		record memory ls_l_listed stat "$n" "$(ls_l_listed)"
		record memory ls_l_errors stat "$n" "$(ls_errors)"
		echo 2 >/proc/sys/vm/drop_caches
		sleep 1 # FORGET arrives asynchronously
		mem_sample forget "$n"
	done
	cold_cache xtsfs
	mem_sample fresh_handles "$HANDLES"
	hold_files "$hd" "$HANDLES"
}

# ------------------------------------------------------------- reporting
fmt_size() {
	if [ "$1" -ge 1024 ]; then
		echo "$(($1 / 1024)) GiB"
	else
		echo "$1 MiB"
	fi
}


ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN {if (a != "" && b > 0) printf "%.2f", a / b; else print "-"}'
}

table_throughput() {
	local mib
	echo "Throughput vs file size (MB/s = 10^6 B/s; write: dd bs=1M conv=fsync;"
	echo "read: cold, dd bs=1M; 'files' = distinct files per point)"
	[ -n "${PIPE_MBPS:-}" ] &&
		echo "Sizes above $(fmt_size "$SRC_MIB") are written from a FIFO that delivers $PIPE_MBPS MB/s to /dev/null."
	echo
	{
		printf 'size\tfiles\tbare write\txtsfs write\tratio\tbare read\txtsfs read\tratio\n'
		for mib in "${SIZES[@]}"; do
			local bw xw br xr
			bw=$(get throughput write bare "$mib")
			xw=$(get throughput write xtsfs "$mib")
			br=$(get throughput read_cold bare "$mib")
			xr=$(get throughput read_cold xtsfs "$mib")
			printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(fmt_size "$mib")" \
				"$(get throughput reps - "$mib")" "$bw" "$xw" "$(ratio "$xw" "$bw")" \
				"$br" "$xr" "$(ratio "$xr" "$br")"
		done
	} | columns right
}

# The marginal columns are the slope between this N and the previous
# one, (t(N) - t(Nprev)) / (N - Nprev): the per-entry cost without the
# fixed cost of a cold start (path lookup, first disk reads).
table_listing() {
	local n s prev=
	echo "Listing a directory of N empty files (cold: remount + drop_caches"
	echo "before each ls; us/entry = seconds / N; marginal = slope from the"
	echo "previous N, which leaves out the fixed cost of a cold start;"
	echo "errors: create stalls on EMFILE / ls -f errors / ls -l errors)"
	echo
	{
		printf 'N\tsystem\tcreate s\tcreate us/e\tls -f s\tls -f us/e\tls -f marg\tls -l s\tls -l us/e\tls -l marg\terrors\n'
		for n in "${ENTRIES[@]}"; do
			for s in "${SYSTEMS[@]}"; do
				awk -v n="$n" -v s="$s" -v c="$(get listing create "$s" "$n")" \
					-v f="$(get listing ls_f "$s" "$n")" -v l="$(get listing ls_l "$s" "$n")" \
					-v pn="$prev" -v pf="$(get listing ls_f "$s" "$prev")" \
					-v pl="$(get listing ls_l "$s" "$prev")" \
					-v err="$(get listing create_stalls "$s" "$n")/$(get listing ls_f_errors "$s" "$n")/$(get listing ls_l_errors "$s" "$n")" '
					function marg(t, pt) {
						return pn == "" ? "-" : sprintf("%.2f", (t - pt) / (n - pn) * 1e6)
					}
					BEGIN {printf "%d\t%s\t%.3f\t%.1f\t%.3f\t%.2f\t%s\t%.3f\t%.2f\t%s\t%s\n",
						n, s, c, c / n * 1e6, f, f / n * 1e6, marg(f, pf),
						l, l / n * 1e6, marg(l, pl), err}'
			done
			prev=$n
		done
	} | columns right
}

# mem_row STATE LABEL N BASE: a row of the memory table
mem_row() {
	local rss hwm fds err listed
	rss=$(get memory rss "$1" "$3")
	hwm=$(get memory hwm "$1" "$3")
	fds=$(get memory fds "$1" "$3")
	err=$(get memory ls_l_errors "$1" "$3")
	listed=$(get memory ls_l_listed "$1" "$3")
	awk -v l="$2" -v n="$3" -v r="$rss" -v h="$hwm" -v b="$4" -v f="$fds" \
		-v e="${listed:--}/${err:--}" \
		'BEGIN {printf "%s\t%d\t%d\t%d\t%+d\t%.0f\t%d\t%s\n", l, n, r, h, r - b, (r - b) * 1024 / n, f, e}'
}
# mem_plain STATE LABEL N: a row without a delta
mem_plain() {
	printf '%s\t%s\t%s\t%s\t-\t-\t%s\t-\n' "$2" "$3" "$(get memory rss "$1" "$4")" \
		"$(get memory hwm "$1" "$4")" "$(get memory fds "$1" "$4")"
}

table_memory() {
	local n base
	echo "xtsfs daemon memory (KiB; delta = VmRSS minus that of the fresh daemon"
	echo "just before the step; per entry = delta / N, in bytes; fds = the"
	echo "daemon's open file descriptors (one per inode the kernel holds, one"
	echo "per open file); listed/errs = entries that ls -l printed / errors it"
	echo "printed)."
	echo "The daemon's RLIMIT_NOFILE: $DAEMON_NOFILE."
	echo
	{
		printf 'state\tN\tVmRSS KiB\tVmHWM KiB\tdelta KiB\tbytes/entry\tfds\tlisted/errs\n'
		mem_plain mounted mounted - 0
		for n in "${ENTRIES[@]}"; do
			base=$(get memory rss fresh "$n")
			mem_plain fresh "fresh mount" "$n" "$n"
			mem_row stat "after ls -l" "$n" "$base"
			mem_row forget "after drop_caches 2" "$n" "$base"
		done
		base=$(get memory rss fresh_handles "$HANDLES")
		mem_plain fresh_handles "fresh mount" "$HANDLES" "$HANDLES"
		mem_row handles_open "files held open" "$HANDLES" "$base"
		mem_row handles_closed "after closing them" "$HANDLES" "$base"
	} | columns right
}

# json_list STRING...: a JSON array of strings
json_list() {
	"$PYTHON" -c 'import json, sys; print(json.dumps(sys.argv[1:]))' "$@"
}

write_json() {
	M_DATE=$START_DATE M_KERNEL=$(uname -r) M_CPU=$CPU M_NPROC=$(nproc) \
	M_MEM=$(awk '/^MemTotal:/ {print $2}' /proc/meminfo) \
	M_LOAD0=$LOAD_START M_LOAD1=$(cut -d' ' -f1-3 /proc/loadavg) \
	M_WORKDIR=$WORKDIR M_FSTYPE=$FSTYPE M_SHORT=$SHORT M_COMMIT=$COMMIT \
	M_VERSION=$XTSFS_VERSION M_CORE=${XTSFS_CORE:-} M_COMMAND=$COMMAND \
	M_NOFILE=$DAEMON_NOFILE M_NOFILE_OPT=$NOFILE M_FAILURES=$(json_list "${FAILURES[@]}") \
	M_SRC=$SRC_MIB M_PER_POINT=$PER_POINT_MIB M_HANDLES=$HANDLES M_PARTS=$PARTS_ARG \
		"$PYTHON" - "$RESULTS" "$JSON_OUT" <<'PY'
import json, os, sys
e = os.environ
def num(v):
    f = float(v)
    return int(f) if f.is_integer() and "." not in v else f
out = {
    "meta": {
        "date": e["M_DATE"], "kernel": e["M_KERNEL"], "cpu": e["M_CPU"],
        "nproc": int(e["M_NPROC"]), "mem_total_kib": int(e["M_MEM"]),
        "loadavg_start": e["M_LOAD0"], "loadavg_end": e["M_LOAD1"],
        "workdir": e["M_WORKDIR"], "fstype": e["M_FSTYPE"], "short": e["M_SHORT"] == "1",
        "commit": e["M_COMMIT"], "xtsfs_version": e["M_VERSION"],
        "xtsfs_cipher_core": e["M_CORE"], "command": e["M_COMMAND"],
        "source_mib": int(e["M_SRC"]), "per_point_mib": int(e["M_PER_POINT"]),
        "handles": int(e["M_HANDLES"]), "parts": e["M_PARTS"].split(","),
        "daemon_rlimit_nofile": e["M_NOFILE"], "nofile_option": e["M_NOFILE_OPT"], "failures": json.loads(e["M_FAILURES"]),
    },
    "throughput": {"unit": "MB/s", "pipe_source_MBps": None, "points": []},
    "listing": {"unit": "s", "points": []},
    "memory": {"unit": "KiB", "samples": []},
}
tp, ls, mem = {}, {}, {}
for line in open(sys.argv[1]):
    part, metric, system, x, v = line.rstrip("\n").split("\t")
    if part == "throughput":
        if metric == "pipe_source":
            out["throughput"]["pipe_source_MBps"] = num(v)
        elif metric == "reps":
            tp.setdefault(int(x), {})["files"] = num(v)
        else:
            tp.setdefault(int(x), {}).setdefault(system, {})[metric + "_MBps"] = num(v)
    elif part == "listing":
        key = metric + "_s" if metric in ("create", "ls_f", "ls_l") else metric
        ls.setdefault(int(x), {}).setdefault(system, {})[key] = num(v)
    elif part == "memory":
        key = {"rss": "vmrss_kib", "hwm": "vmhwm_kib"}.get(metric, metric)
        mem.setdefault((system, int(x)), {"state": system, "n": int(x)})[key] = num(v)
for mib in sorted(tp):
    out["throughput"]["points"].append(dict(size_mib=mib, **tp[mib]))
for n in sorted(ls):
    out["listing"]["points"].append(dict(entries=n, **ls[n]))
out["memory"]["samples"] = list(mem.values())
with open(sys.argv[2], "w") as f:
    json.dump(out, f, indent=2)
    f.write("\n")
PY
}

# --------------------------------------------------------------- plots
# gnuplot_png NAME SCRIPT: SCRIPT after the terminal and output lines.
gnuplot_png() {
	local term
	if gnuplot -e 'set terminal' 2>&1 | grep -q pngcairo; then
		term="pngcairo size 900,560 font 'sans,10'"
	else
		term="png size 900,560"
	fi
	gnuplot <<-EOF
		set terminal $term
		set output '$PLOT_DIR/$1'
		set termoption noenhanced
		set grid
		set key below
		set xlabel offset 0,0.6
		$2
	EOF
	echo "  $PLOT_DIR/$1"
}

write_plots() {
	local dat=$RUN_DIR/plot mib n s sub
	mkdir -p "$PLOT_DIR" "$dat"
	sub="$(date -u +%Y-%m-%d), $(uname -r), $(nproc) CPUs, $FSTYPE lower"
	echo "charts:"
	if in_list throughput "${PARTS[@]}"; then
		for mib in "${SIZES[@]}"; do
			printf '%s %s %s %s %s\n' "$mib" \
				"$(get throughput write bare "$mib")" "$(get throughput read_cold bare "$mib")" \
				"$(get throughput write xtsfs "$mib")" "$(get throughput read_cold xtsfs "$mib")"
		done >"$dat/tp.dat"
		gnuplot_png scaling-throughput.png "
			set title \"Sequential throughput vs file size (dd bs=1M; write with fsync, cold read)\n$sub\"
			set logscale x 2
			set xrange [0.7:$((BIG_MIB * 3 / 2))]
			set xlabel 'file size (MiB, log scale)'
			set ylabel 'MB/s (1 MB/s = 10^6 bytes/s)'
			set yrange [0:*]
			set xtics ('1M' 1, '16M' 16, '256M' 256, '1G' 1024, '4G' 4096, '8G' 8192, '16G' 16384)
			plot '$dat/tp.dat' u 1:3 w lp lw 2 pt 7 lc rgb '#1f77b4' t 'bare read (cold)', \
			     '' u 1:5 w lp lw 2 pt 7 lc rgb '#d62728' t 'xtsfs read (cold)', \
			     '' u 1:2 w lp lw 2 pt 5 dt 2 lc rgb '#1f77b4' t 'bare write', \
			     '' u 1:4 w lp lw 2 pt 5 dt 2 lc rgb '#d62728' t 'xtsfs write'"
	fi
	if in_list listing "${PARTS[@]}"; then
		for n in "${ENTRIES[@]}"; do
			printf '%s' "$n"
			for s in "${SYSTEMS[@]}"; do # a listing with errors is not drawn
				awk -v n="$n" -v f="$(get listing ls_f "$s" "$n")" -v l="$(get listing ls_l "$s" "$n")" \
					-v fe="$(get listing ls_f_errors "$s" "$n")" -v le="$(get listing ls_l_errors "$s" "$n")" \
					'BEGIN {
						if (fe > 0) printf " ?"; else printf " %.3f", f / n * 1e6
						if (le > 0) printf " ?"; else printf " %.3f", l / n * 1e6
					}'
			done
			printf '\n'
		done >"$dat/ls.dat"
		gnuplot_png scaling-listing.png "
			set title \"Cold directory listing: time per entry vs entries (listings with errors not drawn)\n$sub\"
			set datafile missing '?'
			set logscale x 10
			set xrange [${ENTRIES[0]} / 1.5:${ENTRIES[-1]} * 1.5]
			set xlabel 'entries in the directory (log scale)'
			set ylabel 'microseconds per entry'
			set yrange [0:*]
			plot '$dat/ls.dat' u 1:3 w lp lw 2 pt 7 lc rgb '#1f77b4' t 'bare ls -l', \
			     '' u 1:5 w lp lw 2 pt 7 lc rgb '#d62728' t 'xtsfs ls -l', \
			     '' u 1:2 w lp lw 2 pt 5 dt 2 lc rgb '#1f77b4' t 'bare ls -f | wc -l', \
			     '' u 1:4 w lp lw 2 pt 5 dt 2 lc rgb '#d62728' t 'xtsfs ls -f | wc -l'"
	fi
	if in_list memory "${PARTS[@]}"; then
		for n in "${ENTRIES[@]}"; do
			awk -v n="$n" -v f="$(get memory rss fresh "$n")" -v s="$(get memory rss stat "$n")" \
				-v g="$(get memory rss forget "$n")" -v h="$(get memory hwm stat "$n")" \
				'BEGIN {printf "%d %.2f %.2f %.2f %.2f\n", n, f / 1024, s / 1024, g / 1024, h / 1024}'
		done >"$dat/mem.dat"
		gnuplot_png scaling-memory.png "
			set title \"xtsfs daemon memory vs inodes looked up (ls -l of N files, a fresh daemon for each N)\n$sub\"
			set logscale x 10
			set xrange [${ENTRIES[0]} / 1.5:${ENTRIES[-1]} * 1.5]
			set xlabel 'files stat-ed (log scale)'
			set ylabel 'MiB'
			set yrange [0:*]
			plot '$dat/mem.dat' u 1:3 w lp lw 2 pt 7 lc rgb '#d62728' t 'VmRSS after ls -l', \
			     '' u 1:5 w lp lw 2 pt 6 dt 3 lc rgb '#ff7f0e' t 'VmHWM (peak)', \
			     '' u 1:4 w lp lw 2 pt 5 dt 2 lc rgb '#2ca02c' t 'VmRSS after drop_caches 2 (FORGET)', \
			     '' u 1:2 w lp lw 2 pt 4 dt 4 lc rgb '#7f7f7f' t 'VmRSS of the fresh daemon'"
	fi
}

# ------------------------------------------------------------------ main
main() {
	COMMAND="$0 $*"
	parse_args "$@"
	set_sizes
	check_prereqs
	check_workdir

	if [ ! -d "$WORKDIR" ]; then
		mkdir -p "$WORKDIR"
		MADE_WORKDIR=1
	fi
	WORKDIR=$(cd "$WORKDIR" && pwd -P)
	RUN_DIR=$WORKDIR/run.$$
	trap cleanup EXIT
	trap 'echo "scaling: interrupted" >&2; exit 130' INT TERM
	rm -rf --one-file-system "$RUN_DIR"
	mkdir -p "$RUN_DIR"
	RESULTS=$RUN_DIR/results.tsv
	: >"$RESULTS"
	PASSFILE=$RUN_DIR/passfile
	echo "scaling-passphrase-not-secret" >"$PASSFILE"
	chmod 600 "$PASSFILE"

	START_DATE=$(date -u '+%Y-%m-%d %H:%M:%S UTC')
	CPU=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
	LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
	XTSFS_VERSION=$("$XTSFS_BIN/xtsfs" --version 2>&1 | head -n 1)
	COMMIT=$(git -C "$REPO" describe --always --dirty 2>/dev/null || echo unknown)

	echo "scaling: $START_DATE, $(uname -r), $CPU, $(nproc) CPUs"
	echo "  load average at start: $LOAD_START"
	echo "  work dir: $WORKDIR on $FSTYPE ($FSSOURCE), $AVAIL_MIB MiB free, needs ~$NEED_MIB MiB"
	echo "  mode: $([ "$SHORT" = 1 ] && echo short || echo full); parts: ${PARTS[*]}"
	echo "  sizes (MiB): ${SIZES[*]}, >= $PER_POINT_MIB MiB per point;" \
		"entries: ${ENTRIES[*]}; handles: $HANDLES"
	echo "  xtsfs: $XTSFS_VERSION, commit $COMMIT"

	# snapshot the xtsfs binaries: a rebuild during the run changes nothing
	mkdir -p "$RUN_DIR/bin"
	cp "$XTSFS_BIN/xtsfs" "$XTSFS_BIN/xtsfs-mkfs" "$RUN_DIR/bin/"
	XTSFS_BIN=$RUN_DIR/bin
	setup_systems
	echo "  xtsfs cipher core: ${XTSFS_CORE:-?}"
	DAEMON_NOFILE=$(awk '/^Max open files/ {print $4 " soft, " $5 " hard"}' \
		"/proc/$(daemon_pids "${MNT[xtsfs]}" | head -n 1)/limits")
	echo "  xtsfs daemon RLIMIT_NOFILE: $DAEMON_NOFILE"

	local p t0
	for p in "${KNOWN_PARTS[@]}"; do
		in_list "$p" "${PARTS[@]}" || continue
		t0=$SECONDS
		"part_$p"
		echo "  ($p took $((SECONDS - t0)) s)"
	done
	unmount_wait "${MNT[xtsfs]}"

	echo
	echo "Load average at end: $(cut -d' ' -f1-3 /proc/loadavg) (start: $LOAD_START)"
	for p in "${KNOWN_PARTS[@]}"; do
		in_list "$p" "${PARTS[@]}" || continue
		echo
		"table_$p"
	done
	if [ -n "$JSON_OUT" ]; then
		write_json
		echo
		echo "raw numbers: $JSON_OUT"
	fi
	if [ -n "$PLOT_DIR" ]; then
		echo
		write_plots
	fi
	if [ "$FAILED" != 0 ]; then
		echo
		echo "scaling: FAILED (measured, but wrong):" >&2
		printf '  - %s\n' "${FAILURES[@]}" >&2
		exit 1
	fi
}

main "$@"
