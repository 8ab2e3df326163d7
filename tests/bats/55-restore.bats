#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Restoring without a mount (issue 18): xtsfs-extract decrypts a volume,
# a subtree or one file into a directory and gives what cp -a of a mount
# of the same volume gives (contents, modes, owners, times, hard links,
# holes, symlinks, special files, xattrs, ACLs); xtsfs-path names the
# cipher paths a plaintext path needs, so that a copy holding only them
# restores that file (the remote-fetch workflow of doc/USAGE.md), and
# maps them back.

bats_require_minimum_version 1.5.0

load helpers

setup() { common_setup; }
teardown() { common_teardown; }

LONG=$(printf 'L%.0s' {1..220})
LONGDIR=$(printf 'D%.0s' {1..210})
# a symlink target of 3300 bytes: stored in the root's xtsfs.link.* file
LONGTARGET=$(printf 'x/%.0s' {1..1650})
STAMP='2001-02-03 04:05:06.123456789'

# fill_volume [mkfs args]: a volume in $T/c filled through a mount (with
# -o acl) with every kind of object, and $T/ref, cp -a of that mount:
# the reference. Unmounted after.
fill_volume() {
	local m=$T/m n
	mkvol "$T/c" "$@"
	mount_vol "$T/c" "$m" -o acl
	# no zero bytes: a reference copied with cp --sparse=always would
	# turn a file that happens to be all zeros (size-1: 1 run in 256)
	# into a hole, which extract rightly writes as data
	for n in 0 1 15 16 4095 4096 4097 1048577; do
		head -c "$n" /dev/urandom | tr '\0' '\1' >"$m/size-$n"
	done
	# holes: data at 0, 8 MiB and the last bytes of 20 MiB
	truncate -s 20M "$m/sparse"
	printf head | dd of="$m/sparse" conv=notrunc status=none
	printf mid | dd of="$m/sparse" bs=1M seek=8 conv=notrunc status=none
	printf tail | dd of="$m/sparse" bs=1 seek=$((20 * 1048576 - 4)) conv=notrunc status=none
	mkdir -p "$m/d1/d2/d3" "$m/d1/$LONGDIR"
	printf 'long name\n' >"$m/d1/$LONG"
	printf 'in a long directory\n' >"$m/d1/$LONGDIR/f"
	ln -s "$LONGTARGET" "$m/d1/longlink"
	ln -s ../size-1 "$m/d1/short"
	ln "$m/size-4097" "$m/d1/hard"
	ln "$m/size-4097" "$m/d1/d2/hard"
	mkfifo "$m/d1/fifo"
	mknod "$m/d1/null" c 1 3
	printf x >"$m/d1/d2/d3/deep"
	chown 12345:23456 "$m/size-4095" "$m/d1/d2"
	chmod 4755 "$m/size-1"
	chmod 0 "$m/size-15"
	chmod 0444 "$m/size-16"
	chmod 2710 "$m/d1/d2"
	chmod 1777 "$m/d1/d2/d3"
	chmod 0555 "$m/d1/$LONGDIR"
	setfattr -n user.color -v blue "$m/size-0"
	setfattr -n user.bin -v 0x00ff10 "$m/size-1"
	setfattr -n user.dir -v yes "$m/d1/d2"
	setfattr -n trusted.t -v secret "$m/d1"
	if command -v setfacl >/dev/null; then
		setfacl -m u:nobody:r "$m/size-4096"
		setfacl -d -m g::rx "$m/d1/d2"
	fi
	# contents before the directories that hold them (-depth)
	find "$m" -depth -exec touch -h -d "$STAMP" {} +
	touch -h -d '1999-12-31 23:59:59' "$m/d1/short" "$m/size-0"
	cp -a --sparse=always "$m/." "$T/ref/"
	umount_vol "$m"
}

# tree_report DIR [noowner] [nolinks]: one line per entry below DIR (and
# DIR as "."), sorted: type, mode, owner, mtime (ns), link count, xattrs
# (names and values), and by type: size, sha256, data segments
# (SEEK_DATA/SEEK_HOLE) and allocated blocks; symlink target; device.
tree_report() {
	python3 - "$@" <<'PY'
import hashlib, os, stat, sys
top, opts = sys.argv[1], sys.argv[2:]
def segments(fd, size):
    out, off = [], 0
    while off < size:
        try:
            d = os.lseek(fd, off, os.SEEK_DATA)
        except OSError:
            break
        h = os.lseek(fd, d, os.SEEK_HOLE)
        out.append("%d-%d" % (d, h))
        off = h
    return ",".join(out)
ents = ["."]
for dp, dns, fns in os.walk(top):
    for n in dns + fns:
        ents.append(os.path.relpath(os.path.join(dp, n), top))
for rel in sorted(ents):
    p = os.path.join(top, rel)
    st = os.lstat(p)
    line = [rel, "%o" % stat.S_IFMT(st.st_mode), "%04o" % stat.S_IMODE(st.st_mode),
            str(st.st_mtime_ns)]
    if "noowner" not in opts:
        line.append("%d:%d" % (st.st_uid, st.st_gid))
    if "nolinks" not in opts and not stat.S_ISDIR(st.st_mode):
        line.append("nlink=%d" % st.st_nlink)
    try:
        names = sorted(os.listxattr(p, follow_symlinks=False))
    except OSError:
        names = []
    for n in names:
        line.append("%s=%s" % (n, os.getxattr(p, n, follow_symlinks=False).hex()))
    if stat.S_ISLNK(st.st_mode):
        line.append("-> " + os.readlink(p))
    elif stat.S_ISREG(st.st_mode):
        with open(p, "rb") as f:
            line += ["size=%d" % st.st_size, hashlib.sha256(f.read()).hexdigest(),
                     "data=" + segments(f.fileno(), st.st_size),
                     "blocks=%d" % st.st_blocks]
    elif stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode):
        line.append("rdev=%x" % st.st_rdev)
    print("\t".join(line))
PY
}

# same_tree A B [opts]: tree_report of both equal (and not trivial).
same_tree() {
	local a=$1 b=$2
	shift 2
	tree_report "$a" "$@" >"$T/report.a"
	tree_report "$b" "$@" >"$T/report.b"
	[ "$(wc -l <"$T/report.a")" -gt 3 ]
	diff "$T/report.a" "$T/report.b"
}

# cipher_state DIR: every path, type, size, mtime and content hash of
# the cipher directory (to see that nothing wrote to it).
cipher_state() {
	(cd "$1" && find . -printf '%p %y %s %T@ %m\n' | sort &&
		find . -type f -exec sha256sum {} + | sort)
}

@test "extract the whole volume: what cp -a of a mount gives, the cipher directory untouched" {
	fill_volume
	cipher_state "$T/c" >"$T/state.before"
	run xtsfs-extract --passfile "$T/pass" "$T/c" "$T/out"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	same_tree "$T/ref" "$T/out"
	# the sparse file stays sparse: 3 data units of 20 MiB
	[ "$(stat -c %b "$T/out/sparse")" -lt 100 ]
	grep -q 'sparse.*data=0-4096,8388608-8392704,20967424-20971520' "$T/report.b"
	# the tests could fail: a changed mode is seen
	chmod 0600 "$T/out/size-16"
	run same_tree "$T/ref" "$T/out"
	[ "$status" -ne 0 ]
	cipher_state "$T/c" >"$T/state.after"
	diff "$T/state.before" "$T/state.after"
}

@test "extract with the raw volume key, -v lists each path" {
	fill_volume --print-volume-key >"$T/mkfs.out"
	grep -E '^[0-9a-f]{8}-' "$T/mkfs.out" >"$T/volkey"
	chmod 600 "$T/volkey"
	run --separate-stderr xtsfs-extract -v --volume-key-file "$T/volkey" "$T/c" "$T/out"
	[ "$status" -eq 0 ]
	[[ $output == *"d1/d2/d3/deep"* ]]
	[[ $output == *"d1/$LONG"* ]]
	same_tree "$T/ref" "$T/out"
}

@test "extract a subtree and one file: their paths under DESTDIR, ancestors as in the volume" {
	fill_volume
	run xtsfs-extract --passfile "$T/pass" "$T/c" d1 "$T/sub"
	[ "$status" -eq 0 ]
	same_tree "$T/ref/d1" "$T/sub/d1" nolinks
	# the two links inside the subtree are one inode there
	[ "$(stat -c %i "$T/sub/d1/hard")" = "$(stat -c %i "$T/sub/d1/d2/hard")" ]
	[ "$(stat -c %h "$T/sub/d1/hard")" -eq 2 ]
	[ ! -e "$T/sub/size-1" ]

	run xtsfs-extract --passfile "$T/pass" "$T/c" d1/d2/d3/deep sparse "$T/one"
	[ "$status" -eq 0 ]
	cmp "$T/ref/d1/d2/d3/deep" "$T/one/d1/d2/d3/deep"
	cmp "$T/ref/sparse" "$T/one/sparse"
	[ "$(stat -c '%a %u %g %Y' "$T/ref/d1/d2")" = "$(stat -c '%a %u %g %Y' "$T/one/d1/d2")" ]
	[ "$(stat -c '%a %Y' "$T/ref/sparse")" = "$(stat -c '%a %Y' "$T/one/sparse")" ]
	[ "$(find "$T/one" | wc -l)" -eq 6 ]
}

@test "extract: existing entries refused without --force, replaced with it; a symlink in DESTDIR is never followed" {
	fill_volume
	mkdir -p "$T/out/d1" "$T/elsewhere"
	printf old >"$T/out/size-1"
	ln -s "$T/elsewhere" "$T/out/d1/d2"
	run --separate-stderr xtsfs-extract --passfile "$T/pass" "$T/c" "$T/out"
	[ "$status" -eq 1 ]
	[[ $stderr == *"size-1 (cipher "*"): File exists"* ]]
	[[ $stderr == *"failures (see above)"* ]]
	[ "$(cat "$T/out/size-1")" = old ]
	[ -z "$(ls -A "$T/elsewhere")" ]
	# the rest was extracted
	cmp "$T/ref/size-4097" "$T/out/size-4097"
	run xtsfs-extract --force --passfile "$T/pass" "$T/c" "$T/out"
	[ "$status" -eq 0 ]
	[ -z "$(ls -A "$T/elsewhere")" ]
	[ -d "$T/out/d1/d2" ] && [ ! -L "$T/out/d1/d2" ]
	same_tree "$T/ref" "$T/out"
}

@test "extract and path: wrong passphrase 4, no volume 5, missing PLAINPATH 1, usage 2" {
	mkvol "$T/c"
	run -4 xtsfs-extract --passfile "$T/wrong" "$T/c" "$T/out"
	[ ! -e "$T/out" ]
	run -4 xtsfs-path --passfile "$T/wrong" "$T/c" a
	run -5 xtsfs-extract --passfile "$T/pass" "$T/nothing" "$T/out"
	mkdir "$T/empty"
	run -5 xtsfs-path --passfile "$T/pass" "$T/empty" a
	run --separate-stderr xtsfs-extract --passfile "$T/pass" "$T/c" no/such "$T/out"
	[ "$status" -eq 1 ]
	# named as far as it goes
	[[ $stderr == *": no (cipher "*"): not in the volume: No such file or directory"* ]]
	run -2 xtsfs-extract --passfile "$T/pass" "$T/c"
	# never into the cipher directory itself
	run -2 xtsfs-extract --passfile "$T/pass" "$T/c" "$T/c/restore"
	[[ $output == *"is inside the cipher directory"* ]]
	[ ! -e "$T/c/restore" ]
	run -2 xtsfs-path --passfile "$T/pass" "$T/c"
	run -2 xtsfs-path --json -0 --passfile "$T/pass" "$T/c" a
}

@test "extract goes on past an undecryptable entry and a damaged file, names them escaped, exits 1" {
	mkvol "$T/c"
	mount_vol "$T/c" "$T/m"
	printf good >"$T/m/good"
	printf 'some data' >"$T/m/bad"$'\e'"[31m"
	printf 'more data' >"$T/m/short"
	umount_vol "$T/m"
	# a file cut to less than its header: a mount's reads of it fail;
	# not restored as an empty file
	short=$(xtsfs-path -q --passfile "$T/pass" "$T/c" short | tail -1)
	truncate -s 10 "$T/c/$short"
	lower=$(xtsfs-path -q --passfile "$T/pass" "$T/c" "bad"$'\e'"[31m" | tail -1)
	# a damaged file header (its first byte)
	flip_byte "$T/c/$lower" 0
	# a lower name that decodes but does not authenticate
	: >"$T/c/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
	run --separate-stderr xtsfs-extract --passfile "$T/pass" "$T/c" "$T/out"
	[ "$status" -eq 1 ]
	[[ $stderr == *'bad\x1b[31m (cipher '"$lower"'): cannot be decrypted'* ]]
	[[ $stderr == *'(cipher AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA): an entry does not decrypt; skipped'* ]]
	[[ $stderr != *$'\e'* ]]
	[[ $stderr == *"short (cipher $short): cannot be decrypted"* ]]
	[[ $stderr == *"3 failures"* ]]
	[ "$(cat "$T/out/good")" = good ]
	[ ! -e "$T/out/bad"$'\e'"[31m" ]
	[ ! -e "$T/out/short" ]
}

# same_entry A B: one file or symlink: the same contents or target, mode
# and mtime.
same_entry() {
	if [ -L "$1" ]; then
		[ "$(readlink "$1")" = "$(readlink "$2")" ]
	else
		cmp "$1" "$2"
		[ "$(stat -c '%a %Y' "$1")" = "$(stat -c '%a %Y' "$2")" ]
	fi
}

@test "xtsfs-path: the cipher paths exist; a copy of only them and xtsfs.volume restores the file" {
	fill_volume
	for p in "d1/$LONG" "d1/$LONGDIR/f" d1/longlink size-4097; do
		xtsfs-path --passfile "$T/pass" "$T/c" "$p" >"$T/list"
		head -1 "$T/list" | grep -qx xtsfs.volume
		while read -r c; do
			[ -e "$T/c/$c" ] || [ -L "$T/c/$c" ] || { echo "missing $c"; return 1; }
		done <"$T/list"
		# what is not a directory: the files the copy must hold
		while read -r c; do
			[ -d "$T/c/$c" ] || echo "./$c"
		done <"$T/list" | sort >"$T/files"
		[ "$p" != d1/longlink ] || grep -q '^\./xtsfs\.link\.' "$T/files"
		rm -rf "$T/copy" "$T/got"
		mkdir "$T/copy"
		if command -v rsync >/dev/null; then
			rsync -aAXS --files-from="$T/list" "$T/c/" "$T/copy/"
		else
			(cd "$T/c" && xargs -a "$T/files" cp -a --parents -t "$T/copy/")
		fi
		(cd "$T/copy" && find . ! -type d | sort) | diff "$T/files" -
		run xtsfs-extract --passfile "$T/pass" "$T/copy" "$p" "$T/got"
		[ "$status" -eq 0 ]
		same_entry "$T/ref/$p" "$T/got/$p"
		# and the copy mounts, showing the file
		mount_vol "$T/copy" "$T/m2" -o ro
		same_entry "$T/ref/$p" "$T/m2/$p"
		umount_vol "$T/m2"
	done
}

@test "xtsfs-path on a skeleton (dirs and dirids only): the remote one-file fetch of USAGE.md" {
	command -v rsync >/dev/null || skip "no rsync"
	fill_volume
	rsync -aAX --include='*/' --include='xtsfs.dirid' --include='xtsfs.volume' --exclude='*' "$T/c/" "$T/skel/"
	[ -z "$(find "$T/skel" -type f ! -name xtsfs.dirid ! -name xtsfs.volume)" ]
	run --separate-stderr xtsfs-path --passfile "$T/pass" "$T/skel" "d1/$LONG"
	[ "$status" -eq 0 ]
	[[ $stderr == *"not in this copy"* ]]
	printf '%s\n' "$output" >"$T/list"
	xtsfs-path --passfile "$T/pass" "$T/c" "d1/$LONG" | diff - "$T/list"
	rsync -aAXS --files-from="$T/list" "$T/c/" "$T/skel/"
	run xtsfs-extract --passfile "$T/pass" "$T/skel" "d1/$LONG" "$T/got"
	[ "$status" -eq 0 ]
	cmp "$T/ref/d1/$LONG" "$T/got/d1/$LONG"
	# a long symlink: the entry first, then its target's file
	xtsfs-path -q --passfile "$T/pass" "$T/skel" d1/longlink >"$T/list"
	! grep -q '^xtsfs\.link\.' "$T/list"
	rsync -aAXS --files-from="$T/list" "$T/c/" "$T/skel/"
	xtsfs-path --passfile "$T/pass" "$T/skel" d1/longlink >"$T/list"
	grep -q '^xtsfs\.link\.' "$T/list"
	rsync -aAXS --files-from="$T/list" "$T/c/" "$T/skel/"
	run xtsfs-extract --passfile "$T/pass" "$T/skel" d1/longlink "$T/got"
	[ "$status" -eq 0 ]
	[ "$(readlink "$T/got/d1/longlink")" = "$LONGTARGET" ]
	# a directory: the list, then its cipher path copied recursively
	xtsfs-path --passfile "$T/pass" "$T/skel" d1/d2 >"$T/list"
	rsync -aAXS --files-from="$T/list" "$T/c/" "$T/skel/"
	d=$(tail -n 2 "$T/list" | head -n 1)
	[ "$(tail -n 1 "$T/list")" = "$d/xtsfs.dirid" ]
	rsync -aAXS "$T/c/$d/" "$T/skel/$d/"
	run xtsfs-extract --passfile "$T/pass" "$T/skel" d1/d2 "$T/dir"
	[ "$status" -eq 0 ]
	same_tree "$T/ref/d1/d2" "$T/dir/d1/d2" nolinks
}

@test "xtsfs-path --to-plain round-trips every entry; --json parses, non-UTF-8 names in _b64" {
	fill_volume
	mount_vol "$T/c" "$T/m"
	printf x >"$T/m/d1/"$'\xff\xfe'
	umount_vol "$T/m"
	(cd "$T/ref" && find . -mindepth 1 -printf '%P\n') >"$T/plain"
	printf 'd1/\xff\xfe\n' >>"$T/plain"
	mapfile -t paths <"$T/plain"
	xtsfs-path --json --passfile "$T/pass" "$T/c" "${paths[@]}" >"$T/map.json"
	python3 -m json.tool "$T/map.json" >/dev/null
	python3 - "$T/map.json" >"$T/cipher" <<'PY'
import json, sys
for p in json.load(open(sys.argv[1]))["paths"]:
    assert p["present"], p
    print(p["cipher"])
PY
	[ "$(wc -l <"$T/cipher")" -eq "${#paths[@]}" ]
	mapfile -t cps <"$T/cipher"
	xtsfs-path --to-plain -0 --passfile "$T/pass" "$T/c" "${cps[@]}" | tr '\0' '\n' >"$T/back"
	diff "$T/plain" "$T/back"
	# JSON: the lossy string and the exact bytes
	xtsfs-path --to-plain --json --passfile "$T/pass" "$T/c" "${cps[-1]}" "${cps[-1]}/../x" \
		xtsfs.volume "$(dirname -- "${cps[-1]}")/xtsfs.dirid" >"$T/back.json" || [ $? -eq 1 ]
	python3 - "$T/back.json" <<'PY'
import base64, json, sys
d = json.load(open(sys.argv[1]))
a, b, v, i = d["paths"]
assert a["plain"] == "d1/\ufffd\ufffd", a
raw = base64.urlsafe_b64decode(a["plain_b64"] + "=" * (-len(a["plain_b64"]) % 4))
assert raw == b"d1/\xff\xfe", raw
assert a["kind"] == "entry" and "error" in b, b
assert v["kind"] == "volume" and v["plain"] == "", v
assert i["kind"] == "dirid" and i["plain"] == "d1", i
PY
	# text output escapes what is not printable ASCII
	run xtsfs-path --to-plain --passfile "$T/pass" "$T/c" "${cps[-1]}"
	[ "$output" = 'd1/\xff\xfe' ]
}

@test "a plaintext-names volume: the mapping is the identity, extraction the same" {
	mkvol "$T/c" --plaintext-names
	mount_vol "$T/c" "$T/m"
	mkdir -p "$T/m/a/b"
	printf hello >"$T/m/a/b/f"
	printf dash >"$T/m/-dash"
	cp -a "$T/m/." "$T/ref/"
	umount_vol "$T/m"
	run xtsfs-path --passfile "$T/pass" "$T/c" a/b/f
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf 'xtsfs.volume\na\na/b\na/b/f')" ]
	run xtsfs-path --to-plain --passfile "$T/pass" "$T/c" a/b/f
	[ "$output" = a/b/f ]
	# after CIPHERDIR, a path that looks like an option is a path
	run xtsfs-path --passfile "$T/pass" "$T/c" -dash
	[ "$output" = "$(printf 'xtsfs.volume\n-dash')" ]
	run xtsfs-extract --passfile "$T/pass" "$T/c" -dash "$T/one"
	[ "$status" -eq 0 ]
	[ "$(cat "$T/one/-dash")" = dash ]
	run xtsfs-extract --passfile "$T/pass" "$T/c" "$T/out"
	[ "$status" -eq 0 ]
	same_tree "$T/ref" "$T/out"
}

@test "extract as a user that is not root: everything but owners, devices and trusted.*" {
	[ "$(id -u)" -eq 0 ] || skip "needs root to switch user"
	fill_volume
	uid=$(id -u nobody)
	gid=$(id -g nobody)
	chmod 755 "$T"
	mkdir "$T/u"
	cp -a "$T/c" "$T/u/c"
	cp "$T/pass" "$T/u/pass"
	chown -R "$uid:$gid" "$T/u"
	# a file of mode 0 is unreadable to its owner too: make it 0400
	lower=$(xtsfs-path --passfile "$T/pass" "$T/u/c" size-15 | tail -1)
	chmod 0400 "$T/u/c/$lower"
	# the reference: cp -a of a mount of that copy, less what only root
	# may make
	mount_vol "$T/u/c" "$T/m3" -o ro,acl
	cp -a --sparse=always "$T/m3/." "$T/ref2/"
	umount_vol "$T/m3"
	ts=$(stat -c %y "$T/ref2/d1")
	rm "$T/ref2/d1/null"
	setfattr -x trusted.t "$T/ref2/d1"
	touch -d "$ts" "$T/ref2/d1"
	run --separate-stderr setpriv --reuid="$uid" --regid="$gid" --clear-groups \
		xtsfs-extract --passfile "$T/u/pass" "$T/u/c" "$T/u/out"
	[ "$status" -eq 0 ]
	[[ $stderr == *"d1/null: a device node: skipped"* ]]
	[ -z "$(find "$T/u/out" ! -uid "$uid")" ]
	[ "$(stat -c %a "$T/u/out/size-15")" = 400 ]
	same_tree "$T/ref2" "$T/u/out" noowner
}
