# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
#
# lib.sh - helpers shared by fsbench.sh, scaling.sh and the proto/
# scripts, sourced by each.
# The caller sets BENCH_PROG, its name for messages.

have() { command -v "$1" >/dev/null 2>&1; }

# in_list X ITEM...: X is one of the items.
in_list() {
	local x=$1 y
	shift
	for y in "$@"; do
		[ "$x" = "$y" ] && return 0
	done
	return 1
}

# PIDs of processes with exactly $1 among their arguments: the FUSE
# daemon serving that mount point (the paths are unique to a run).
daemon_pids() {
	local p args
	for p in /proc/[0-9]*; do
		{ mapfile -d '' -t args <"$p/cmdline"; } 2>/dev/null || continue
		if [ ${#args[@]} -gt 0 ] && in_list "$1" "${args[@]}"; then
			echo "${p#/proc/}"
		fi
	done
}

# mount_ticks MOUNTPOINT: utime + stime (clock ticks), all threads, of
# the daemon(s) serving MOUNTPOINT (daemon_pids); prints nothing and
# fails when there is none.
mount_ticks() {
	local pid st fld sum=0 found=0
	for pid in $(daemon_pids "$1"); do
		st=$(cat "/proc/$pid/stat" 2>/dev/null) || continue
		st=${st##*) } # fields from 3 (state) on: utime is 14, stime 15
		read -r -a fld <<<"$st"
		sum=$((sum + fld[11] + fld[12]))
		found=1
	done
	[ "$found" = 1 ] && echo "$sum"
}

# ab_timed LABEL MOUNTPOINT CMD...: run CMD (its output dropped) and
# print one line for the proto/ A/B scripts: LABEL, the wall seconds and
# the CPU ticks of the daemon serving MOUNTPOINT meanwhile.
ab_timed() {
	local label=$1 m=$2 c0 t0 t1
	shift 2
	c0=$(mount_ticks "$m")
	t0=$(date +%s.%N)
	"$@" >/dev/null
	t1=$(date +%s.%N)
	printf '%s wall %.3f cpu %d\n' "$label" "$(echo "$t1 - $t0" | bc)" \
		$(($(mount_ticks "$m") - c0))
}

# floor_build SRC OUT LIBS: compile a floor daemon (proto/nullfs.c,
# proto/memfs.c) into OUT, with xtsfs's glue (INIT flags, io_uring:
# proto/floor_loop.h) when LIBS, a build's src/fs, has it built, else
# without.
floor_build() {
	local src=$1 out=$2 libs=$3 top
	top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
	if [ -e "$libs/libxtsfs-fuse.a" ]; then
		# shellcheck disable=SC2046 # pkg-config prints several words
		cc -O2 -Wall -DFLOOR_GLUE -I"$top/src/fs" -o "$out" "$src" \
			"$libs/libxtsfs-fuse.a" "$libs/libxtsfs-core.a" \
			$(pkg-config --cflags --libs fuse3) -luring -lpthread
	else
		# shellcheck disable=SC2046
		cc -O2 -Wall -o "$out" "$src" $(pkg-config --cflags --libs fuse3) -lpthread
	fi
}

# fio_cell RW JOBS FILE MOUNTPOINT: 10 s of fio, psync 4 KiB RW
# (randread or randwrite), JOBS jobs on the 256 MiB FILE; prints its IOPS
# and the CPU per request (µs) of the daemon serving MOUNTPOINT. PIN=CPU:
# fio runs on that CPU only. For the proto/ scripts (fsbench has its own
# rows).
fio_cell() {
	local rw=$1 jobs=$2 file=$3 mnt=$4 c0 c1 out field iops
	c0=$(mount_ticks "$mnt")
	out=$(${PIN:+taskset -c "$PIN"} fio --name=t --filename="$file" --rw="$rw" --bs=4k --size=256M \
		--numjobs="$jobs" --group_reporting --time_based --runtime=10 \
		--ioengine=psync --output-format=terse --terse-version=3)
	c1=$(mount_ticks "$mnt")
	# terse v3: field 8 read IOPS, 49 write IOPS; ticks are 1/100 s
	if [ "$rw" = randread ]; then field=8; else field=49; fi
	iops=$(echo "$out" | cut -d';' -f"$field")
	echo "$iops $(echo "scale=1; ($c1 - $c0) * 10000 / ($iops * 10)" | bc)"
}

# pid_alive PID: the process exists and is not a zombie.
pid_alive() {
	local st
	st=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	st=${st##*) }
	[ "${st%% *}" != Z ]
}

# unmount_wait MNT: unmount a FUSE mount point (lazily if it stays busy)
# and wait up to 30 s until its daemon has exited, so the next mount
# never races with a daemon still flushing the lower files.
unmount_wait() {
	local mnt=$1 pids pid
	mountpoint -q "$mnt" || return 0
	pids=$(daemon_pids "$mnt")
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		fusermount3 -u "$mnt" 2>/dev/null && break
		sleep 0.5
	done
	if mountpoint -q "$mnt"; then
		echo "$BENCH_PROG: $mnt busy; lazy unmount" >&2
		fusermount3 -uz "$mnt" || true
	fi
	for pid in $pids; do
		for _ in $(seq 1 300); do
			pid_alive "$pid" || break
			sleep 0.1
		done
	done
	! mountpoint -q "$mnt"
}

# columns left|right: tab-separated lines on stdin, aligned into
# columns, with a dashed line under the first; every column but the
# first is left- or right-aligned.
columns() {
	local right=0
	[ "$1" = right ] && right=1
	awk -F'\t' -v right="$right" '
		{ for (i = 1; i <= NF; i++) { c[NR, i] = $i; if (length($i) > wd[i]) wd[i] = length($i) }
		  if (NF > nf) nf = NF }
		END {
			for (r = 1; r <= NR; r++) {
				line = ""
				for (i = 1; i <= nf; i++)
					line = line sprintf(i == 1 ? "%-*s" : right ? "  %*s" : "  %-*s", wd[i], c[r, i])
				sub(/ +$/, "", line); print line
				if (r == 1) { dash = line; gsub(/./, "-", dash); print dash }
			}
		}'
}
