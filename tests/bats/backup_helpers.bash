# SPDX-License-Identifier: Apache-2.0
# Helpers for 50-backup.bats: backups of cipher directories (rsync, cp,
# tar) to other filesystems, rsync deltas, and reverse mode.
# Load after helpers:   load helpers; load backup_helpers
#
# Besides the FUSE mounts of helpers.bash (track_mount), a test here may
# mount a tmpfs or a loop-mounted image; backup_teardown unmounts all of
# them, FUSE mounts first (they may sit on an image), and detaches every
# loop device the test attached, even when the test failed.

backup_setup() {
	common_setup
	IMG_MOUNTS=()
	LOOPS=()
}

backup_teardown() {
	local i m n
	for ((i = ${#MOUNTS[@]} - 1; i >= 0; i--)); do
		m=${MOUNTS[i]}
		if mountpoint -q "$m"; then
			fusermount3 -u "$m" 2>/dev/null || fusermount3 -uz "$m" 2>/dev/null || umount -l "$m" || true
		fi
	done
	for ((i = ${#IMG_MOUNTS[@]} - 1; i >= 0; i--)); do
		m=${IMG_MOUNTS[i]}
		# the daemon of a FUSE mount on this filesystem may still be
		# closing its files for a moment after fusermount3 returned
		for n in $(seq 1 50); do
			mountpoint -q "$m" || break
			umount "$m" 2>/dev/null && break
			sleep 0.2
		done
		if mountpoint -q "$m"; then umount -l "$m" || true; fi
	done
	for m in "${LOOPS[@]}"; do
		losetup -d "$m" 2>/dev/null || true
	done
	common_teardown
}

# mount_tmpfs DIR [SIZE]: a tmpfs of its own on DIR.
mount_tmpfs() {
	mkdir -p "$1"
	mount -t tmpfs -o "size=${2:-512m}" xtsfs-bats "$1"
	IMG_MOUNTS+=("$1")
}

# mount_image FSTYPE DIR: a 300 MiB image file in $T made with
# mkfs.FSTYPE, attached to a loop device and mounted on DIR.
mount_image() {
	local fstype=$1 dir=$2 img=$T/$1.img dev
	truncate -s 300M "$img"
	case $fstype in
	ext4) mkfs.ext4 -q -F "$img" ;;
	xfs) mkfs.xfs -q -f "$img" ;;
	*) echo "mount_image: unknown type $fstype" >&2; return 1 ;;
	esac
	dev=$(losetup -f --show "$img")
	LOOPS+=("$dev")
	mkdir -p "$dir"
	mount "$dev" "$dir"
	IMG_MOUNTS+=("$dir")
	[ "$(findmnt -n -o FSTYPE --target "$dir")" = "$fstype" ]
}

# need_mkfs FSTYPE: skip the test when mkfs.FSTYPE is not installed.
need_mkfs() {
	if ! command -v "mkfs.$1" >/dev/null; then
		case $1 in
		xfs) skip "mkfs.xfs not found: install the Debian package xfsprogs" ;;
		*) skip "mkfs.$1 not found: install the Debian package e2fsprogs" ;;
		esac
	fi
}

# figure TEXT: a line in the Bats output (fd 3), for the report.
figure() {
	echo "# $*" >&3
}

# make_port_tree DIR: the reference tree of the portability tests: every
# size class around the 16-byte block and the 4096-byte unit, an empty
# file, a 100 MiB sparse file, hard links, relative and absolute
# symlinks, a fifo, a 200-byte name, a tree 20 directories deep, modes
# 0600/0755/0751 and mtimes with nanoseconds (the directories' last).
make_port_tree() {
	local d=$1 s i p
	mkdir -p "$d/sub/inner"
	for s in 0 1 15 16 17 4095 4096 4097 $((1048576 + 3)); do
		head -c "$s" /dev/urandom >"$d/size-$s"
	done
	: >"$d/empty"
	truncate -s 100M "$d/sparse"
	printf 'in the middle of nowhere' | dd of="$d/sparse" bs=1 seek=52430000 conv=notrunc status=none
	printf 'tail' | dd of="$d/sparse" bs=1 seek=$((100 * 1048576 - 4)) conv=notrunc status=none
	ln "$d/size-4097" "$d/hard-a"
	ln "$d/size-4097" "$d/sub/hard-b"
	ln "$d/size-15" "$d/sub/inner/hard-c"
	ln -s ../size-17 "$d/sub/rel-link"
	ln -s inner "$d/sub/dir-link"
	ln -s /etc/hostname "$d/abs-link"
	ln -s /nonexistent/dangling "$d/sub/dangling"
	mkfifo "$d/fifo"
	head -c 333 /dev/urandom >"$d/$(printf 'L%.0s' $(seq 1 200))"
	p=$d/deep
	for i in $(seq 1 20); do
		p=$p/d$i
	done
	mkdir -p "$p"
	echo "bottom of the deep tree" >"$p/leaf"
	chmod 0600 "$d/size-1" "$d/size-16"
	chmod 0755 "$d/size-15" "$d/deep"
	chmod 0751 "$d/sub" "$d/size-4096"
	chmod 0640 "$d/fifo"
	i=0
	while IFS= read -r -d '' p; do
		i=$((i + 1))
		touch -h -d "2019-05-06 07:08:$((i % 60)).$(printf '%09d' $((123456789 + i)))" "$p"
	done < <(find "$d" -mindepth 1 ! -type d -print0)
	# directories last, deepest first, so creating entries does not
	# change them again
	while IFS= read -r -d '' p; do
		i=$((i + 1))
		touch -d "2020-02-03 04:05:$((i % 60)).$(printf '%09d' $((987654321 - i)))" "$p"
	done < <(find "$d" -mindepth 1 -type d -print0 | sort -rz)
}

# manifest DIR [ns|s] [EXCLUDE...]: one line per object below DIR (and
# DIR itself as "."), sorted: path, type, permission bits, mtime (to the
# nanosecond or to the second), and by type the size, md5 and hard-link
# group (regular files: the first path, in sorted order, of the objects
# sharing the inode), link count, or symlink target. EXCLUDE names
# (paths relative to DIR) are left out. Never opens a fifo.
manifest() {
	python3 - "$@" <<'PY'
import hashlib, os, stat, sys
top = sys.argv[1]
res = sys.argv[2] if len(sys.argv) > 2 else "ns"
excl = set(sys.argv[3:])
ents = []
for dp, dns, fns in os.walk(top):
    for n in dns + fns:
        rel = os.path.relpath(os.path.join(dp, n), top)
        if rel not in excl:
            ents.append(rel)
ents.sort()
groups = {}
for rel in ents:
    st = os.lstat(os.path.join(top, rel))
    if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
        groups.setdefault((st.st_dev, st.st_ino), rel)
for rel in ["."] + ents:
    p = os.path.join(top, rel)
    st = os.lstat(p)
    m = st.st_mtime_ns if res == "ns" else st.st_mtime_ns // 10**9
    t = stat.S_IFMT(st.st_mode)
    line = [rel, "%o" % t, "%04o" % stat.S_IMODE(st.st_mode)]
    if stat.S_ISLNK(st.st_mode):
        # symlink permission bits and times are not portable: not kept
        line = [rel, "%o" % t, os.readlink(p), "size=%d" % st.st_size]
    elif stat.S_ISREG(st.st_mode):
        h = hashlib.md5()
        with open(p, "rb") as f:
            for b in iter(lambda: f.read(1 << 20), b""):
                h.update(b)
        line += [str(m), "size=%d" % st.st_size, h.hexdigest(),
                 "nlink=%d" % st.st_nlink,
                 "group=" + groups.get((st.st_dev, st.st_ino), rel)]
    else:
        line += [str(m)]
    print("\t".join(line))
PY
}

# same_manifest DIR1 DIR2 [ns|s] [EXCLUDE...]: manifest of both, diff.
same_manifest() {
	local a=$1 b=$2
	shift 2
	manifest "$a" "$@" >"$T/manifest.a" || return 1
	manifest "$b" "$@" >"$T/manifest.b" || return 1
	[ "$(wc -l <"$T/manifest.a")" -gt 1 ] || return 1
	diff "$T/manifest.a" "$T/manifest.b"
}

# rsync_stat OUTPUT FIELD: the number after "FIELD:" in rsync --stats
# output, without thousands separators (e.g. "Literal data").
rsync_stat() {
	printf '%s\n' "$1" | sed -n "s/^$2: \([0-9,.]*\).*/\1/p" | head -1 | tr -d ',.'
}

# distinct_blocks N MAX: N distinct random numbers in [0, MAX), one a line.
distinct_blocks() {
	python3 -c 'import random, sys; print("\n".join(map(str, random.sample(range(int(sys.argv[2])), int(sys.argv[1])))))' "$1" "$2"
}

# rsync_block_size LEN: rsync's default block size for a file of LEN
# bytes (generator.c sum_sizes_sqroot, protocol >= 30): 700 up to
# 700*700 bytes, else the square root rounded down to a multiple of 8,
# at most 128 KiB.
rsync_block_size() {
	python3 -c '
import math, sys
n = int(sys.argv[1])
if n <= 700 * 700:
    print(700)
else:
    print(max(700, min(131072, math.isqrt(n) // 8 * 8)))' "$1"
}

# view_of PLAINPATH VIEWDIR: the view path of a plaintext object, found
# by inode number (the view reports the plaintext inode numbers).
view_of() {
	local ino
	ino=$(stat -c %i "$1") || return 1
	find "$2" -inum "$ino" -print -quit
}

# sparse_kib FILE: the KiB a file occupies on disk.
sparse_kib() {
	du -k "$1" | cut -f1
}
