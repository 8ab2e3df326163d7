#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Backups: a cipher directory copied with rsync, cp and tar to other
# filesystems mounts there and reads back byte-identical; rsync sends
# about what changed; reverse mode gives a read-only, deterministic
# encrypted view whose copy is an ordinary volume.
#
# Figures (rsync's literal data) are printed to fd 3, so they show in
# the Bats output.

bats_require_minimum_version 1.5.0

load helpers
load backup_helpers

# Every rsync here compares times to the nanosecond (--modify-window=-1):
# by default rsync compares whole seconds, so a copy made within the
# second its source was written may skip setting a time, or skip a file
# whose mtime changed within that second, on any filesystem.

setup() { backup_setup; }
teardown() { backup_teardown; }

# ---- portability --------------------------------------------------------------

# port_volume: the reference tree in $T/src, written through a mount of a
# new volume in $T/c with cp -a, then unmounted.
port_volume() {
	mkdir "$T/src"
	make_port_tree "$T/src"
	mkvol "$T/c"
	mount_vol "$T/c" "$T/m"
	cp -a "$T/src/." "$T/m/"
	# precondition: the mount itself keeps everything, to the ns
	same_manifest "$T/src" "$T/m" ns
	umount_vol "$T/m"
	# precondition: holes stay holes in the cipher directory
	big=$(find "$T/c" -type f -size +50M)
	[ "$(echo "$big" | wc -l)" -eq 1 ]
	[ "$(stat -c %s "$big")" -eq "$(lower_for $((100 * 1048576)))" ]
	[ "$(sparse_kib "$big")" -lt 1024 ]
}

# no_xattrs DIR: getfattr finds no extended attribute below DIR. A user
# xattr on a scratch file first proves that getfattr would show one.
no_xattrs() {
	local out
	: >"$T/xattr-probe"
	setfattr -n user.probe -v 1 "$T/xattr-probe"
	getfattr -d -m - "$T/xattr-probe" | grep -q user.probe
	out=$(getfattr -h -d -m - -R "$1" 2>/dev/null)
	[ -z "$out" ] || { echo "xattrs in $1: $out"; return 1; }
}

# portability METHOD FS: copy the cipher directory with METHOD (rsync,
# cp, tar) to a fresh filesystem FS (tmpfs, ext4, xfs), at another path,
# mount the copy and compare it with the reference tree.
portability() {
	local method=$1 fs=$2 dst=$T/dst res=ns
	if [ "$fs" = tmpfs ]; then
		mount_tmpfs "$dst"
	else
		need_mkfs "$fs"
		mount_image "$fs" "$dst"
	fi
	port_volume
	no_xattrs "$T/c"
	case $method in
	rsync) rsync --modify-window=-1 -aHS "$T/c/" "$dst/copy/" ;;
	cp) cp -a "$T/c" "$dst/copy" ;;
	tar)
		mkdir "$dst/copy"
		tar -C "$T/c" --sparse -cf - . | tar -C "$dst/copy" --sparse -xf -
		# GNU tar's default (gnu) format keeps whole seconds only
		res=s
		;;
	esac
	# nothing the copy could carry over from the host: no xattrs, another
	# filesystem, other inode numbers, another absolute path
	no_xattrs "$dst/copy"
	[ "$(stat -c %d "$T/c")" != "$(stat -c %d "$dst/copy")" ]
	(cd "$T/c" && find . -printf '%i %p\n' | sort -k2) >"$T/ino.c"
	(cd "$dst/copy" && find . -printf '%i %p\n' | sort -k2) >"$T/ino.copy"
	run ! cmp -s "$T/ino.c" "$T/ino.copy"
	[ "$(cut -d' ' -f2- "$T/ino.c")" = "$(cut -d' ' -f2- "$T/ino.copy")" ]

	mount_vol "$dst/copy" "$T/m2"
	same_manifest "$T/src" "$T/m2" "$res"
	# hard links: one inode for the three names, nlink 3
	[ "$(stat -c %i "$T/m2/size-4097")" = "$(stat -c %i "$T/m2/sub/hard-b")" ]
	[ "$(stat -c %h "$T/m2/hard-a")" -eq 3 ]
	[ "$(readlink "$T/m2/abs-link")" = /etc/hostname ]
	cmp "$T/m2/sub/rel-link" "$T/src/size-17"
	[ -p "$T/m2/fifo" ]
	if [ "$res" = s ]; then
		if same_manifest "$T/src" "$T/m2" ns >/dev/null; then
			figure "$method to $fs: mtimes kept to the nanosecond"
		else
			figure "$method to $fs: mtimes kept to the second"
		fi
	fi

	big=$(find "$dst/copy" -type f -size +50M)
	kib=$(sparse_kib "$big")
	figure "$method to $fs: the 100 MiB sparse file takes $kib KiB in the copy"
	case $method in
	rsync | tar) [ "$kib" -lt 1024 ] ;;
	esac
	umount_vol "$T/m2"
}

@test "portability: rsync --modify-window=-1 -aHS of the cipher dir to a tmpfs" {
	portability rsync tmpfs
}

@test "portability: cp -a of the cipher dir to a tmpfs" {
	portability cp tmpfs
}

@test "portability: tar -S of the cipher dir to a tmpfs" {
	portability tar tmpfs
}

@test "portability: rsync --modify-window=-1 -aHS of the cipher dir to ext4 on a loop device" {
	portability rsync ext4
}

@test "portability: cp -a of the cipher dir to ext4 on a loop device" {
	portability cp ext4
}

@test "portability: tar -S of the cipher dir to ext4 on a loop device" {
	portability tar ext4
}

@test "portability: rsync --modify-window=-1 -aHS of the cipher dir to xfs on a loop device" {
	portability rsync xfs
}

@test "portability: cp -a of the cipher dir to xfs on a loop device" {
	portability cp xfs
}

@test "portability: tar -S of the cipher dir to xfs on a loop device" {
	portability tar xfs
}

# ---- rsync efficiency -----------------------------------------------------------

# change_blocks K FILE...: overwrite K distinct random 4 KiB blocks of a
# 64 MiB file in place, the same bytes in each FILE.
change_blocks() {
	local k=$1 b f
	shift
	for b in $(distinct_blocks "$k" 16384); do
		head -c 4096 /dev/urandom >"$T/blk"
		for f in "$@"; do
			dd if="$T/blk" of="$f" bs=4096 seek="$b" count=1 conv=notrunc status=none
		done
	done
}

@test "rsync: k changed 4 KiB blocks of a 64 MiB file send about k x 4 KiB" {
	mkvol "$T/c"
	mount_vol "$T/c" "$T/m"
	head -c 64M /dev/urandom >"$T/ref"
	cp "$T/ref" "$T/m/big"
	umount_vol "$T/m"
	rsync --modify-window=-1 -a "$T/c/" "$T/b/"
	lower=$(find "$T/c" -type f -size +1M)
	size=$(stat -c %s "$lower")
	[ "$size" -eq "$(lower_for $((64 * 1048576)))" ]
	for k in 1 8 64; do
		mount_vol "$T/c" "$T/m"
		change_blocks "$k" "$T/m/big" "$T/ref"
		umount_vol "$T/m"
		run rsync --modify-window=-1 -a --no-whole-file --block-size=4096 --stats "$T/c/" "$T/b/"
		[ "$status" -eq 0 ]
		lit=$(rsync_stat "$output" "Literal data")
		[ -n "$lit" ]
		figure "rsync delta (--block-size=4096): k=$k blocks changed -> literal $lit bytes (file $size bytes)"
		# a changed unit lies across at most two rsync blocks (the 40-byte
		# header shifts units against them), plus the file's last block
		[ "$lit" -le $((k * 8192 + 8192)) ]
		[ "$lit" -ge $((k * 2048)) ]
		[ "$lit" -lt $((size / 16)) ]
		cmp "$lower" "$T/b/${lower#"$T/c/"}"
	done
	# and once with rsync's own block size
	bs=$(rsync_block_size "$size")
	k=8
	mount_vol "$T/c" "$T/m"
	change_blocks "$k" "$T/m/big" "$T/ref"
	umount_vol "$T/m"
	run rsync --modify-window=-1 -a --no-whole-file --stats "$T/c/" "$T/b/"
	[ "$status" -eq 0 ]
	lit=$(rsync_stat "$output" "Literal data")
	[ -n "$lit" ]
	figure "rsync delta (default block size $bs): k=$k blocks changed -> literal $lit bytes"
	[ "$lit" -le $((k * (2 * bs + 4096))) ]
	[ "$lit" -ge $((k * 2048)) ]
	# the backup is the volume
	mount_vol "$T/b" "$T/mb"
	cmp "$T/mb/big" "$T/ref"
}

@test "rsync: rewriting files in place with identical content sends no literal data" {
	mkvol "$T/c"
	mount_vol "$T/c" "$T/m"
	head -c $((64 * 1048576)) /dev/urandom >"$T/m/big"
	# one that ends in a short tail (FORMAT 3.5) and one with a partial unit
	head -c $((1048576 + 7)) /dev/urandom >"$T/m/tail"
	head -c $((1048576 + 1000)) /dev/urandom >"$T/m/part"
	cp "$T/m/big" "$T/m/tail" "$T/m/part" "$T"/
	umount_vol "$T/m"
	rsync --modify-window=-1 -a "$T/c/" "$T/b/"
	(cd "$T/c" && find . -type f -exec md5sum {} + | sort -k2) >"$T/md5.before"
	(cd "$T/c" && find . -type f -printf '%T@ %p\n' | sort -k2) >"$T/mtime.before"
	mount_vol "$T/c" "$T/m"
	for f in big tail part; do
		dd if="$T/$f" of="$T/m/$f" bs=1M conv=notrunc status=none
	done
	umount_vol "$T/m"
	(cd "$T/c" && find . -type f -printf '%T@ %p\n' | sort -k2) >"$T/mtime.after"
	# the files were written (so rsync has to look at them) ...
	run ! cmp -s "$T/mtime.before" "$T/mtime.after"
	# ... and XTS, deterministic per position, gave the same ciphertext
	(cd "$T/c" && find . -type f -exec md5sum {} + | sort -k2) >"$T/md5.after"
	diff "$T/md5.before" "$T/md5.after"
	run rsync --modify-window=-1 -a --no-whole-file --stats "$T/c/" "$T/b/"
	[ "$status" -eq 0 ]
	lit=$(rsync_stat "$output" "Literal data")
	matched=$(rsync_stat "$output" "Matched data")
	nreg=$(rsync_stat "$output" "Number of regular files transferred")
	figure "rsync after an identical rewrite of 3 files: $nreg files transferred, literal $lit bytes, matched $matched bytes"
	[ "$nreg" -eq 3 ]
	[ "$lit" -eq 0 ]
	[ "$matched" -eq $((64 * 1048576 + 2 * 1048576 + 1007 + 3 * DOFF)) ]
}

@test "rsync --checksum: two backups of an unchanged volume are identical" {
	port_volume
	rsync --modify-window=-1 -aHS "$T/c/" "$T/b1/"
	# mounting and unmounting changes nothing either
	mount_vol "$T/c" "$T/m"
	umount_vol "$T/m"
	rsync --modify-window=-1 -aHS "$T/c/" "$T/b2/"
	run rsync --modify-window=-1 -a --checksum --stats --dry-run "$T/b1/" "$T/b2/"
	[ "$status" -eq 0 ]
	[[ "$output" == *"Number of regular files transferred: 0"* ]]
	nfiles=$(rsync_stat "$output" "Number of files")
	[ "$nfiles" -gt 40 ]
	# the check can fail: one changed byte is found
	lo=$(find "$T/b2" -type f -size +1000k -size -1100k)
	[ -f "$lo" ]
	flip_byte "$lo" 100
	touch -r "$T/b1/${lo#"$T/b2/"}" "$lo"
	run rsync --modify-window=-1 -a --checksum --stats --dry-run "$T/b1/" "$T/b2/"
	[[ "$output" == *"Number of regular files transferred: 1"* ]]
}

@test "rsync: listing and reading everything through a mount leaves the cipher dir unchanged" {
	port_volume
	rsync --modify-window=-1 -aHS "$T/c/" "$T/b/"
	mount_vol "$T/c" "$T/m"
	ls -laR "$T/m" >/dev/null
	find "$T/m" -type f -exec cat {} + >/dev/null
	find "$T/m" -type l -exec readlink {} + >/dev/null
	find "$T/m" -exec stat {} + >/dev/null
	same_manifest "$T/src" "$T/m" ns
	umount_vol "$T/m"
	run rsync --modify-window=-1 -aHS -i --stats "$T/c/" "$T/b/"
	[ "$status" -eq 0 ]
	[[ "$output" == *"Number of regular files transferred: 0"* ]]
	# -i itemizes every changed object (times, modes too): none
	items=$(printf '%s\n' "$output" | grep -E '^[<>.ch*][fdLDS]' || true)
	[ -z "$items" ] || { echo "changed: $items"; false; }
	run rsync --modify-window=-1 -aHS --checksum --dry-run --stats "$T/c/" "$T/b/"
	[[ "$output" == *"Number of regular files transferred: 0"* ]]
}

# ---- reverse mode ---------------------------------------------------------------

MARK=QZXMARKER

# make_reverse_tree DIR: the portability tree plus names of 1..255 bytes,
# a 3500-byte symlink target, and a marker string in names, contents and
# targets; then xtsfs-mkfs --reverse on it.
make_reverse_tree() {
	local d=$1 n long
	mkdir -p "$d"
	make_port_tree "$d"
	mkdir "$d/names" "$d/$MARK-dir"
	long=$(printf "$MARK-%.0s" $(seq 1 26))
	for ((n = 1; n <= 255; n++)); do
		printf '%s %d\n' "$MARK" "$n" >"$d/names/${long:0:n}"
	done
	for n in 1 2 3; do
		printf "$MARK%.0s" $(seq 1 1000) >"$d/$MARK-dir/rep$n"
	done
	echo "$MARK" >"$d/$MARK"
	ln -s "$(printf "$MARK/%.0s" $(seq 1 350))end" "$d/very-long-target"
	[ "$(readlink "$d/very-long-target" | wc -c)" -eq 3504 ]
	ln -s "$MARK-target" "$d/$MARK-dir/short-target"
	head -c $((16 * 1048576)) /dev/urandom >"$d/large"
	xtsfs-mkfs -q "${KDF[@]}" --reverse --passfile "$T/pass" "$d"
}

# rv_mount PLAIN VIEW: mount the reverse view; teardown unmounts it.
rv_mount() {
	mkdir -p "$2"
	track_mount "$2"
	xtsfs --reverse --passfile "$T/pass" "$1" "$2"
}

@test "reverse: the view is an encrypted volume with no plaintext name or content" {
	make_reverse_tree "$T/p"
	rv_mount "$T/p" "$T/v"
	# the header, shown under its volume name
	[ -f "$T/v/xtsfs.volume" ]
	[ ! -e "$T/v/.xtsfs.volume" ]
	cmp "$T/v/xtsfs.volume" "$T/p/.xtsfs.volume"
	[ ! -e "$T/v/xtsfs.dirid" ]
	# every directory but the root has a 16-byte dirid
	ndirs=$(find "$T/p" -mindepth 1 -type d | wc -l)
	[ "$(find "$T/v" -mindepth 1 -type d | wc -l)" -eq "$ndirs" ]
	[ "$(find "$T/v" -mindepth 2 -name xtsfs.dirid -type f -size 16c | wc -l)" -eq "$ndirs" ]
	# long names (4.3) and the long target (4.4)
	[ "$(find "$T/v" -name 'xtsfs.long.*.name' | wc -l)" -gt 90 ]
	[ "$(find "$T/v" -maxdepth 1 -name 'xtsfs.link.*' | wc -l)" -eq 1 ]
	# as many user entries as in the plaintext
	np=$(find "$T/p" -mindepth 1 ! -name .xtsfs.volume | wc -l)
	nv=$(find "$T/v" -mindepth 1 ! -name xtsfs.volume ! -name xtsfs.dirid \
		! -name 'xtsfs.long.*.name' ! -name 'xtsfs.link.*' | wc -l)
	[ "$np" -eq "$nv" ]
	# the marker is everywhere in the plaintext ...
	[ "$(grep -r -a -l -D skip "$MARK" "$T/p" | wc -l)" -gt 250 ]
	[ "$(find "$T/p" -name "*$MARK*" | wc -l)" -gt 240 ]
	find "$T/p" -type l -printf '%l\n' | grep -q "$MARK"
	# ... and nowhere in the view: contents, names, symlink targets
	run grep -r -a -l -D skip "$MARK" "$T/v"
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[ "$(find "$T/v" -name "*$MARK*" | wc -l)" -eq 0 ]
	[ "$(find "$T/v" -type l -printf '%l\n' | grep -c "$MARK")" -eq 0 ]
	# no plaintext name at all appears as a view name
	find "$T/p" -mindepth 1 -printf '%f\n' | LC_ALL=C sort -u >"$T/pn"
	find "$T/v" -mindepth 1 -printf '%f\n' | LC_ALL=C sort -u >"$T/vn"
	[ -z "$(LC_ALL=C comm -12 "$T/pn" "$T/vn")" ]
	# a repeated plaintext gives no repeated 16-byte block, and equal
	# files in one directory differ in the view (their own file ids)
	python3 - "$(view_of "$T/p/$MARK-dir/rep1" "$T/v")" "$(view_of "$T/p/$MARK-dir/rep2" "$T/v")" \
		"$T/p/$MARK-dir/rep1" <<'PY'
import sys
a, b, p = (open(x, "rb").read() for x in sys.argv[1:])
blocks = lambda d: [d[i:i + 16] for i in range(0, len(d) - 15, 16)]
assert len(set(blocks(p))) < len(blocks(p)) / 2, "the plaintext repeats"
assert len(set(blocks(a[40:]))) == len(blocks(a[40:])), "repeated ciphertext block"
assert a[40:] != b[40:] and a[8:24] != b[8:24], "equal files encrypt alike"
PY
}

@test "reverse: the view is the same at every mount" {
	make_reverse_tree "$T/p"
	rv_mount "$T/p" "$T/v"
	manifest "$T/v" ns >"$T/view1"
	fusermount3 -u "$T/v"
	rv_mount "$T/p" "$T/v"
	manifest "$T/v" ns >"$T/view2"
	[ "$(wc -l <"$T/view1")" -gt 300 ]
	diff "$T/view1" "$T/view2"
	# and the names (a second listing, by itself)
	(cd "$T/v" && echo . && find . -mindepth 1 -printf '%P\n') | LC_ALL=C sort >"$T/names2"
	[ "$(cut -f1 "$T/view1" | LC_ALL=C sort)" = "$(cat "$T/names2")" ]
}

@test "reverse: a copy of the view mounts as a normal volume and matches the plaintext" {
	make_reverse_tree "$T/p"
	rv_mount "$T/p" "$T/v"
	rsync --modify-window=-1 -aHS "$T/v/" "$T/b/"
	mount_vol "$T/b" "$T/mb"
	same_manifest "$T/p" "$T/mb" ns .xtsfs.volume
	diff -r --no-dereference -x .xtsfs.volume "$T/p" "$T/mb" 2>&1 | grep -v 'is a fifo while' | { ! grep .; }
	# holes in the plaintext stayed holes through the view and rsync -S
	big=$(find "$T/b" -type f -size +50M)
	[ "$(stat -c %s "$big")" -eq "$(lower_for $((100 * 1048576)))" ]
	kib=$(sparse_kib "$big")
	figure "reverse view copied with rsync --modify-window=-1 -aHS: the 100 MiB sparse file takes $kib KiB"
	[ "$kib" -lt 1024 ]
	# the copy refuses --reverse: it is a volume, not a plaintext dir
	mkdir "$T/v2"
	track_mount "$T/v2"
	run xtsfs --reverse --passfile "$T/pass" "$T/b" "$T/v2"
	[ "$status" -ne 0 ]
	[[ "$output" == *"not a plaintext directory made with xtsfs-mkfs --reverse"* ]]
}

@test "reverse: user.* and trusted.* xattrs show in stored form; rsync -aX of the view carries them to a forward mount (issue 17)" {
	make_reverse_tree "$T/p"
	mkfifo "$T/p/$MARK-fifo"
	setfattr -n user.colour -v "$MARK-blue" "$T/p/$MARK"
	setfattr -n user.empty "$T/p/$MARK"
	setfattr -n trusted.note -v 0x00ff00 "$T/p/$MARK-dir"
	setfattr -h -n trusted.link -v "$MARK-l" "$T/p/$MARK-fifo"
	rv_mount "$T/p" "$T/v"
	# nothing of a name or value in the view; stored names only
	run getfattr -R -h -d -m - -e hex "$T/v"
	[[ "$output" == *"user.xtsfs."* && "$output" == *"trusted.xtsfs."* ]]
	run getfattr -R -h -d -m - "$T/v"
	[[ "$output" != *colour* && "$output" != *"$MARK"* ]]
	[[ "$output" != *note* ]]
	rsync --modify-window=-1 -aHSX "$T/v/" "$T/b/"
	mount_vol "$T/b" "$T/mb"
	[ "$(getfattr --only-values -n user.colour "$T/mb/$MARK")" = "$MARK-blue" ]
	run getfattr -n user.empty "$T/mb/$MARK"
	[ "$status" -eq 0 ]
	getfattr -e hex -n trusted.note "$T/mb/$MARK-dir" | grep -qx 'trusted.note=0x00ff00'
	[ "$(getfattr -h --only-values -n trusted.link "$T/mb/$MARK-fifo")" = "$MARK-l" ]
	# the same list as the plaintext, object by object
	for f in "$MARK" "$MARK-dir"; do
		[ "$(getfattr -d -m - -e hex "$T/p/$f" | sed 1d)" = \
		  "$(getfattr -d -m - -e hex "$T/mb/$f" | sed 1d)" ]
	done
}

@test "reverse: reads at any offset and length equal the same range of the copy" {
	make_reverse_tree "$T/p"
	rv_mount "$T/p" "$T/v"
	rsync --modify-window=-1 -aHS "$T/v/" "$T/b/"
	fusermount3 -u "$T/v"
	rv_mount "$T/p" "$T/v" # a fresh mount: nothing cached
	run python3 - "$T/v" "$T/b" <<'PY'
import os, random, sys
view, copy = sys.argv[1], sys.argv[2]
rnd = random.Random()
files = []
for dp, dns, fns in os.walk(view):
    for n in fns:
        p = os.path.join(dp, n)
        if os.path.isfile(p) and not os.path.islink(p) and os.path.getsize(p) > 0:
            files.append(os.path.relpath(p, view))
assert len(files) > 250, len(files)
# every size class, the sparse file and the large one, plus a sample
big = sorted(files, key=lambda r: -os.path.getsize(os.path.join(view, r)))[:12]
pick = big + rnd.sample(files, 30)
edges = [0, 1, 23, 24, 39, 40, 41, 55, 56, 4095, 4096, 4135, 4136, 4137,
         8191, 8192, 8231, 8232]
reads = 0
for rel in pick:
    size = os.path.getsize(os.path.join(view, rel))
    with open(os.path.join(copy, rel), "rb") as f:
        ref = f.read()
    assert len(ref) == size, rel
    offs = edges + [size - 1, size, size + 5] + [rnd.randrange(size) for _ in range(20)]
    lens = [1, 15, 16, 17, 40, 4095, 4096, 4097, 12345, 70000]
    for direct in (False, True):
        flags = os.O_RDONLY | (os.O_DIRECT if direct else 0)
        fd = os.open(os.path.join(view, rel), flags)
        try:
            for off in offs:
                for ln in rnd.sample(lens, 4) + [rnd.randrange(1, 9000)]:
                    if not direct:
                        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                    got = os.pread(fd, ln, off)
                    want = ref[off:off + ln]
                    if got != want:
                        print("MISMATCH %s off=%d len=%d direct=%s: got %d bytes" %
                              (rel, off, ln, direct, len(got)))
                        sys.exit(1)
                    reads += 1
        finally:
            os.close(fd)
print("reads=%d files=%d" % (reads, len(pick)))
PY
	echo "$output"
	[ "$status" -eq 0 ]
	figure "reverse random reads: $output"
}

@test "reverse: every write to the view fails with EROFS and changes nothing" {
	make_reverse_tree "$T/p"
	manifest "$T/p" ns >"$T/before"
	rv_mount "$T/p" "$T/v"
	f=$(view_of "$T/p/size-4097" "$T/v")
	d=$(view_of "$T/p/sub" "$T/v")
	[ -f "$f" ]
	[ -d "$d" ]
	run touch "$T/v/newfile"
	[ "$status" -ne 0 ]
	[[ "$output" == *"Read-only file system"* ]]
	run bash -c "echo more >>'$f'"
	[ "$status" -ne 0 ]
	[[ "$output" == *"Read-only file system"* ]]
	run dd if=/dev/zero of="$f" bs=1 count=1 conv=notrunc status=none
	[ "$status" -ne 0 ]
	[[ "$output" == *"Read-only file system"* ]]
	run mkdir "$T/v/newdir"
	[ "$status" -ne 0 ]
	[[ "$output" == *"Read-only file system"* ]]
	run rm -f "$f"
	[ "$status" -ne 0 ]
	[[ "$output" == *"Read-only file system"* ]]
	run rm -rf "$d"
	[ "$status" -ne 0 ]
	[[ "$output" == *"Read-only file system"* ]]
	# the rest, by errno
	run python3 - "$T/v" "$f" "$d" <<'PY'
import errno, os, sys
v, f, d = sys.argv[1:]
ops = {
    "create": lambda: os.open(v + "/x", os.O_CREAT | os.O_WRONLY, 0o644),
    "open-write": lambda: os.open(f, os.O_WRONLY),
    "open-trunc": lambda: os.open(f, os.O_RDONLY | os.O_TRUNC),
    "truncate": lambda: os.truncate(f, 1),
    "chmod": lambda: os.chmod(f, 0o600),
    "chown": lambda: os.chown(f, 1, 1),
    "utime": lambda: os.utime(f, (1, 1)),
    "rename": lambda: os.rename(f, v + "/renamed"),
    "link": lambda: os.link(f, v + "/hard"),
    "symlink": lambda: os.symlink("t", v + "/sym"),
    "mkfifo": lambda: os.mkfifo(v + "/fifo2"),
    "rmdir": lambda: os.rmdir(d),
    "unlink-volume": lambda: os.unlink(v + "/xtsfs.volume"),
    "write-dirid": lambda: os.open(d + "/xtsfs.dirid", os.O_WRONLY),
    "setxattr": lambda: os.setxattr(f, "user.x", b"1"),
}
bad = []
for name, op in ops.items():
    try:
        op()
        bad.append(name + ": succeeded")
    except OSError as e:
        if e.errno != errno.EROFS:
            bad.append("%s: %s" % (name, os.strerror(e.errno)))
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
	echo "$output"
	[ "$status" -eq 0 ]
	fusermount3 -u "$T/v"
	manifest "$T/p" ns >"$T/after"
	diff "$T/before" "$T/after"
}

@test "reverse: one changed 4 KiB block of a large plaintext file is a small rsync delta" {
	make_reverse_tree "$T/p"
	# 64 MiB: rsync's own block size for it is 8 KiB
	head -c $((64 * 1048576)) /dev/urandom >"$T/p/huge"
	rv_mount "$T/p" "$T/v"
	rsync --modify-window=-1 -aHS "$T/v/" "$T/b/"
	vl=$(view_of "$T/p/huge" "$T/v")
	size=$(stat -c %s "$vl")
	[ "$size" -eq "$(lower_for $((64 * 1048576)))" ]
	for bsopt in --block-size=4096 ""; do
		blk=$(distinct_blocks 1 16384)
		head -c 4096 /dev/urandom | dd of="$T/p/huge" bs=4096 seek="$blk" count=1 conv=notrunc status=none
		sleep 2 # the kernel caches attributes for 1 s
		run rsync --modify-window=-1 -aHS --no-whole-file --stats $bsopt "$T/v/" "$T/b/"
		[ "$status" -eq 0 ]
		lit=$(rsync_stat "$output" "Literal data")
		nreg=$(rsync_stat "$output" "Number of regular files transferred")
		bs=${bsopt#--block-size=}
		[ -n "$bs" ] || bs=$(rsync_block_size "$size")
		figure "reverse rsync delta (block size $bs): 1 block changed -> literal $lit bytes, $nreg file(s) (file $size bytes)"
		[ "$nreg" -eq 1 ]
		[ "$lit" -ge 2048 ]
		[ "$lit" -le $((2 * bs + 4096)) ]
	done
	mount_vol "$T/b" "$T/mb"
	same_manifest "$T/p" "$T/mb" ns .xtsfs.volume
}

@test "reverse: a renamed plaintext file keeps its view contents; rsync --delete keeps the copy right" {
	make_reverse_tree "$T/p"
	head -c $((4 * 1048576)) /dev/urandom >"$T/p/sub/movable"
	rv_mount "$T/p" "$T/v"
	rsync --modify-window=-1 -aHS --delete "$T/v/" "$T/b/"
	old=$(view_of "$T/p/sub/movable" "$T/v")
	sum=$(md5sum <"$old")
	size=$(stat -c %s "$old")
	# The view name is the encrypted name, so it changes with the name;
	# the contents do not: the file id comes from the inode number and
	# birth time, which a rename keeps (FORMAT 5.2).
	mv "$T/p/sub/movable" "$T/p/sub/moved"
	sleep 2
	new=$(view_of "$T/p/sub/moved" "$T/v")
	[ "$(dirname "$new")" = "$(dirname "$old")" ]
	[ "$(basename "$new")" != "$(basename "$old")" ]
	[ ! -e "$old" ]
	[ "$(md5sum <"$new")" = "$sum" ]
	# Without --fuzzy rsync has no basis for the new name: it sends the
	# whole file again and deletes the old name.
	run rsync --modify-window=-1 -aHS --delete --no-whole-file --stats "$T/v/" "$T/b/"
	[ "$status" -eq 0 ]
	lit=$(rsync_stat "$output" "Literal data")
	figure "reverse rsync after a rename, without --fuzzy: literal $lit bytes (file $size bytes)"
	[ "$lit" -ge $((size / 2)) ]
	mount_vol "$T/b" "$T/mb"
	same_manifest "$T/p" "$T/mb" ns .xtsfs.volume
	umount_vol "$T/mb"
	# With --fuzzy the old file (same size and mtime, same directory) is
	# the basis, so almost nothing is sent; --delete-after keeps the old
	# name until then (a plain --delete could remove it first).
	mv "$T/p/sub/moved" "$T/p/sub/moved-again"
	sleep 2
	run rsync --modify-window=-1 -aHS --delete-after --fuzzy --no-whole-file --stats "$T/v/" "$T/b/"
	[ "$status" -eq 0 ]
	lit=$(rsync_stat "$output" "Literal data")
	figure "reverse rsync after a rename, with --fuzzy: literal $lit bytes (file $size bytes)"
	[ "$lit" -le 65536 ]
	mount_vol "$T/b" "$T/mb"
	same_manifest "$T/p" "$T/mb" ns .xtsfs.volume
	[ ! -e "$T/mb/sub/moved" ]
	cmp "$T/mb/sub/moved-again" "$T/p/sub/moved-again"
}

@test "reverse: a renamed plaintext directory keeps its children's view names" {
	make_reverse_tree "$T/p"
	rv_mount "$T/p" "$T/v"
	dv=$(view_of "$T/p/sub" "$T/v")
	[ -d "$dv" ]
	# names and contents of everything below it, as the view shows them
	(cd "$dv" && find . -type f -exec md5sum {} + && find . ! -type f) | LC_ALL=C sort >"$T/before"
	[ "$(wc -l <"$T/before")" -ge 8 ]
	mv "$T/p/sub" "$T/p/renamed-sub"
	sleep 2 # the kernel caches entries and attributes for 1 s
	for pass in same-mount remount; do
		dv2=$(view_of "$T/p/renamed-sub" "$T/v")
		[ -d "$dv2" ]
		# the directory's own view name changes with its name ...
		[ "$(basename "$dv2")" != "$(basename "$dv")" ]
		[ ! -e "$dv" ]
		# ... and nothing below it does (the dirid comes from the inode
		# number and birth time, FORMAT 5.2)
		(cd "$dv2" && find . -type f -exec md5sum {} + && find . ! -type f) | LC_ALL=C sort >"$T/after"
		diff "$T/before" "$T/after"
		fusermount3 -u "$T/v"
		rv_mount "$T/p" "$T/v"
	done
}

@test "reverse: refuses a directory without a header, a forward volume, and the reverse" {
	mkdir "$T/plain" "$T/v"
	echo data >"$T/plain/file"
	track_mount "$T/v"
	run xtsfs --reverse --passfile "$T/pass" "$T/plain" "$T/v"
	echo "$output"
	[ "$status" -eq 5 ]
	run ! mountpoint -q "$T/v"
	# a normal cipher directory is not a plaintext directory
	mkvol "$T/c"
	run xtsfs --reverse --passfile "$T/pass" "$T/c" "$T/v"
	echo "$output"
	[ "$status" -ne 0 ]
	[[ "$output" == *"$T/c is not a plaintext directory made with xtsfs-mkfs --reverse"* ]]
	run ! mountpoint -q "$T/v"
	# a plaintext directory for reverse mode is not a cipher directory
	xtsfs-mkfs -q "${KDF[@]}" --reverse --passfile "$T/pass" "$T/plain"
	[ -f "$T/plain/.xtsfs.volume" ]
	run xtsfs --passfile "$T/pass" "$T/plain" "$T/v"
	echo "$output"
	[ "$status" -ne 0 ]
	[[ "$output" == *"$T/plain is a plaintext directory for reverse mode; use xtsfs --reverse"* ]]
	run ! mountpoint -q "$T/v"
	# and with --reverse it mounts
	run xtsfs --reverse --passfile "$T/pass" "$T/plain" "$T/v"
	[ "$status" -eq 0 ]
	mountpoint -q "$T/v"
}

@test "reverse: plaintext files named xtsfs.volume and xtsfs.volume.tmp are data, restored intact from a copy of the view" {
	mkdir "$T/p"
	echo "my own file" >"$T/p/xtsfs.volume"
	echo "another" >"$T/p/xtsfs.volume.tmp"
	echo other >"$T/p/other"
	xtsfs-mkfs -q "${KDF[@]}" --reverse --passfile "$T/pass" "$T/p"
	rv_mount "$T/p" "$T/v"
	cmp "$T/v/xtsfs.volume" "$T/p/.xtsfs.volume"
	[ ! -e "$T/v/xtsfs.volume.tmp" ]
	rsync -a "$T/v/" "$T/b/"
	mount_vol "$T/b" "$T/mb"
	[ "$(cat "$T/mb/xtsfs.volume")" = "my own file" ]
	[ "$(cat "$T/mb/xtsfs.volume.tmp")" = another ]
	[ "$(cat "$T/mb/other")" = other ]
	# the header is found past the plaintext file of that name
	run xtsfs-passwd --test --passfile "$T/pass" "$T/p"
	[ "$status" -eq 0 ]
}

@test "reverse with plaintext names: a root file named xtsfs.volume or xtsfs.volume.tmp is refused clearly, not lost" {
	mkdir "$T/p" "$T/v"
	track_mount "$T/v"
	echo data >"$T/p/xtsfs.volume.tmp"
	run xtsfs-mkfs -q "${KDF[@]}" --reverse --plaintext-names --passfile "$T/pass" "$T/p"
	[ "$status" -eq 7 ]
	[[ "$output" == *"$T/p/xtsfs.volume.tmp: with plaintext names, reverse mode cannot show a file of this name"* ]]
	[ ! -e "$T/p/.xtsfs.volume" ]
	mv "$T/p/xtsfs.volume.tmp" "$T/p/renamed"
	xtsfs-mkfs -q "${KDF[@]}" --reverse --plaintext-names --passfile "$T/pass" "$T/p"
	# made after mkfs: the mount refuses
	echo data >"$T/p/xtsfs.volume"
	run xtsfs --reverse --passfile "$T/pass" "$T/p" "$T/v"
	[ "$status" -eq 2 ]
	[[ "$output" == *"$T/p/xtsfs.volume: with plaintext names the view cannot show a file of this name"* ]]
	! mountpoint -q "$T/v"
	rm "$T/p/xtsfs.volume"
	xtsfs --reverse --passfile "$T/pass" "$T/p" "$T/v"
	# made while mounted: not shown (and logged), never shown twice
	echo data >"$T/p/xtsfs.volume.tmp"
	[ "$(ls -A "$T/v" | LC_ALL=C sort | tr '\n' ' ')" = "renamed xtsfs.volume " ]
	[ ! -e "$T/v/xtsfs.volume.tmp" ]
	cmp "$T/v/xtsfs.volume" "$T/p/.xtsfs.volume"
}
