# SPDX-License-Identifier: Apache-2.0
# Shared set-up for the Bats tests. Every test gets a fresh temporary
# directory ($T) and tiny Argon2 costs; teardown removes everything it
# made, unmounting first, even when the test failed.

: "${XTSFS_BUILD:=$BATS_TEST_DIRNAME/../../build}"
BIN="$XTSFS_BUILD/tools"
PATH="$BIN:$PATH"
# wrap_tool TOOL ARGS: a wrapper for TOOL ahead in PATH that execs it
# with ARGS (sh words, expanded when it runs) before its own, so that $!
# is still the tool's pid; one per bats run.
wrap_tool() {
	local w="${BATS_RUN_TMPDIR:-${TMPDIR:-/tmp}}/xtsfs-test-wrap-$1"
	if [ ! -x "$w/$1" ]; then
		mkdir -p "$w"
		printf '#!/bin/sh\nexec %q %s "$@"\n' "$BIN/$1" "$2" >"$w/$1.$$"
		chmod +x "$w/$1.$$"
		mv -f "$w/$1.$$" "$w/$1"
	fi
	PATH="$w:$PATH"
}
# XTSFS_TEST_OPTS=OPTS: every xtsfs the tests start gets -o OPTS first
# (tests/run-all.sh runs the core files again with "uring" and "noopen").
if [ -n "${XTSFS_TEST_OPTS:-}" ]; then
	# shellcheck disable=SC2016 # expanded by the wrapper
	wrap_tool xtsfs '-o "$XTSFS_TEST_OPTS"'
fi
# XTSFS_TEST_MKFS_OPTS=OPTS: every xtsfs-mkfs the tests run gets OPTS
# first (tests/run-all.sh runs the core files again on volumes made with
# --layout=aligned).
if [ -n "${XTSFS_TEST_MKFS_OPTS:-}" ]; then
	# shellcheck disable=SC2016
	wrap_tool xtsfs-mkfs '$XTSFS_TEST_MKFS_OPTS'
fi
# DOFF: the data offset of the files of the volumes the tests make
# (FORMAT 3.4): 40, or 4096 in the aligned layout.
DOFF=40
case " ${XTSFS_TEST_MKFS_OPTS:-} " in
*--layout=aligned*) DOFF=4096 ;;
esac

# lower_for S [cut]: the lower size of a file of S plaintext bytes: DOFF +
# S; for 0, 40 (the header a new file gets), or with "cut" (a file
# truncated to 0 after it had data) DOFF.
lower_for() {
	if [ "$1" -gt 0 ]; then
		echo $((DOFF + $1))
	elif [ "${2:-}" = cut ]; then
		echo "$DOFF"
	else
		echo 40
	fi
}

# Tiny costs keep the suite fast; real volumes are calibrated to ~1 s.
KDF=(--argon2-time 1 --argon2-memory 64 --argon2-lanes 1)

common_setup() {
	T=$(mktemp -d /tmp/xtsfs-bats.XXXXXX)
	MOUNTS=()
	# secrets as a careful user keeps them (others' read bits warn)
	(
		umask 077
		printf 'correct horse battery\n' >"$T/pass"
		printf 'second passphrase\n' >"$T/pass2"
		printf 'wrong\n' >"$T/wrong"
	)
}

common_teardown() {
	local m
	for m in "${MOUNTS[@]}"; do
		mountpoint -q "$m" && { fusermount3 -uz "$m" 2>/dev/null || umount -l "$m"; }
	done
	rm -rf "$T"
}

# track_mount DIR: teardown unmounts DIR whatever happens.
track_mount() {
	MOUNTS+=("$1")
}

# mkvol DIR [extra mkfs args]: a volume with the passphrase in $T/pass.
mkvol() {
	local dir=$1
	shift
	xtsfs-mkfs -q "${KDF[@]}" --passfile "$T/pass" "$@" "$dir"
}

# flip_byte FILE OFFSET: invert one byte in place.
flip_byte() {
	python3 - "$1" "$2" <<'PY'
import sys
p, off = sys.argv[1], int(sys.argv[2])
b = bytearray(open(p, 'rb').read())
b[off] ^= 0xff
open(p, 'wb').write(b)
PY
}

# patch_copies FILE OFFSET HEXBYTES: write bytes at OFFSET in both copies
# and recompute each copy's CRC-32C, as an attacker or a newer xtsfs would.
patch_copies() {
	python3 - "$1" "$2" "$3" <<'PY'
import sys
def crc32c(data):
    crc = 0xffffffff
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82f63b78 if crc & 1 else 0)
    return crc ^ 0xffffffff
p, off, hx = sys.argv[1], int(sys.argv[2]), bytes.fromhex(sys.argv[3])
b = bytearray(open(p, 'rb').read())
for base in (0, 4096):
    b[base + off:base + off + len(hx)] = hx
    b[base + 4092:base + 4096] = crc32c(bytes(b[base:base + 4092])).to_bytes(4, 'little')
open(p, 'wb').write(b)
PY
}

# mount_vol DIR MNT [xtsfs options...]: mount with the passphrase in
# $T/pass; teardown unmounts it whatever happens.
mount_vol() {
	local dir=$1 mnt=$2
	shift 2
	mkdir -p "$mnt"
	track_mount "$mnt"
	xtsfs --passfile "$T/pass" "$@" \
		"$dir" "$mnt"
}

# umount_vol MNT: unmount, retrying while the mount is busy (a process
# that just closed a file may still hold it for a moment).
umount_vol() {
	local mnt=$1 i
	for i in $(seq 1 100); do
		mountpoint -q "$mnt" || return 0
		fusermount3 -u "$mnt" 2>/dev/null && return 0
		sleep 0.1
	done
	fusermount3 -u "$mnt"
}

# bench_workdir_args: the --workdir for a benchmark script's short run
# (tests/bench/*.sh refuse tmpfs): the test's temporary directory if it
# is on a disk, else nothing (the script's default under /var/tmp, which
# it cleans up like everything it mounts).
bench_workdir_args() {
	case $(findmnt -n -o FSTYPE --target "$BATS_FILE_TMPDIR" | head -n 1) in
	tmpfs | ramfs) ;;
	*) echo "--workdir $BATS_FILE_TMPDIR/work" ;;
	esac
}

# bench_refuses_tmpfs SCRIPT: SCRIPT --short with a work dir on tmpfs
# exits 2, says why and makes nothing there (skipped without a tmpfs).
bench_refuses_tmpfs() {
	local script=$1 shm dir
	shm=$(findmnt -n -o TARGET -t tmpfs | head -n 1)
	[ -n "$shm" ] || skip "no tmpfs mounted"
	dir=$shm/xtsfs-$(basename "$script" .sh)-bats
	run -2 "$script" --short --xtsfs-bin "$BIN" --workdir "$dir"
	[[ $output == *"is on tmpfs"* ]]
	[ ! -e "$dir" ]
}
