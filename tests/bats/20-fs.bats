#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# End-to-end tests on real FUSE mounts: every filesystem operation,
# checked against doc/FORMAT.md and, where that is the simplest oracle,
# against a plain reference directory ($R) that gets the same operations.

load helpers
load fs_helpers

setup() {
	common_setup
	vol_setup
}
teardown() { common_teardown; }

# ---- contents ---------------------------------------------------------------

SIZES=(0 1 15 16 17 4095 4096 4097 1048579)

check_sizes() {
	local s lo
	for s in "${SIZES[@]}"; do
		[ "$(lsize "$M/f$s")" -eq "$s" ]
		lo=$(lower_of "$M/f$s")
		[ -n "$lo" ]
		# FORMAT 3.4: data offset D (40 after the header, or 4096 in
		# the aligned layout) + S bytes; a file created through the
		# mount gets its 40-byte header at once, so an empty one is 40
		[ "$(lsize "$lo")" -eq "$(lower_for "$s")" ]
		[ "$(md5 "$M/f$s")" = "$(md5 "$R/f$s")" ]
		cmp "$M/f$s" "$R/f$s"
	done
}

@test "file size classes: plaintext size, lower size D+S (D the data offset: 40, aligned 4096), contents, after remount" {
	for s in "${SIZES[@]}"; do
		mkdata "$R/f$s" "$s" "$s"
		cp "$R/f$s" "$M/f$s"
	done
	check_sizes
	remount "$C" "$M"
	check_sizes
	# the header starts with the magic "xtsf", version 1
	lo=$(lower_of "$M/f17")
	[ "$(head -c 6 "$lo" | od -An -tx1 | tr -d ' \n')" = 787473660100 ]
}

@test "a lower file of 0 bytes is an empty file and gets its header with the first data" {
	printf 'x' >"$M/e"
	lo=$(lower_of "$M/e")
	umount_vol "$M"
	: >"$lo"
	mount_vol "$C" "$M"
	[ "$(lsize "$M/e")" -eq 0 ]
	[ "$(cat "$M/e" | wc -c)" -eq 0 ]
	printf 'hello' >>"$M/e"
	[ "$(cat "$M/e")" = hello ]
	[ "$(lsize "$lo")" -eq "$(lower_for 5)" ]
	remount "$C" "$M"
	[ "$(cat "$M/e")" = hello ]
}

@test "no plaintext contents or names in the cipher directory" {
	marker="qzx-MARKER-7f3e9a1c-plaintext-must-not-leak"
	name="qzxsecretfilename"
	mkdir "$M/qzxsecretdirname"
	for i in $(seq 1 50); do echo "$marker $i"; done >"$M/$name"
	echo "$marker" >"$M/qzxsecretdirname/$name.txt"
	ln -s "qzxsecrettarget" "$M/qzxsecretlink"
	umount_vol "$M"
	run grep -r -a -l -e "$marker" -e qzxsecret "$C"
	[ "$status" -eq 1 ]
	run bash -c "find '$C' | grep -e qzxsecret"
	[ "$status" -eq 1 ]
	# the data is there, just not readable
	[ "$(find "$C" -type f ! -name 'xtsfs.*' | wc -l)" -eq 2 ]
	[ "$(readlink "$(find "$C" -type l)" | grep -c qzxsecret)" -eq 0 ]
}

# ---- names ------------------------------------------------------------------

@test "name lengths 1, 160 (plain scheme), 161, 255 (long-name scheme with a sidecar)" {
	for len in 1 160 161 255; do
		n=$(printf 'n%.0s' $(seq 1 "$len"))
		mkdir "$M/d$len"
		echo "content $len" >"$M/d$len/$n"
		[ "$(cat "$M/d$len/$n")" = "content $len" ]
		[ "$(ls -A "$M/d$len")" = "$n" ]
		lo=$(lower_of "$M/d$len")
		if [ "$len" -le 160 ]; then
			[ "$(lower_names "$lo" | grep -vc '^xtsfs\.dirid$')" -eq 1 ]
			[ "$(lower_names "$lo" | grep -c '^xtsfs\.long\.')" -eq 0 ]
			stored=$(user_names "$lo")
			# FORMAT 4.1: ceil((16 + p) * 4 / 3) characters
			p=$(((len + 15) / 16 * 16))
			[ "${#stored}" -eq $(((4 * (16 + p) + 2) / 3)) ]
		else
			[ "$(lower_names "$lo" | wc -l)" -eq 3 ]
			long=$(lower_names "$lo" | grep '^xtsfs\.long\.' | grep -v '\.name$')
			[ -n "$long" ]
			[ "${#long}" -eq 33 ]
			[ -f "$lo/$long" ]
			[ -f "$lo/$long.name" ]
			[ "$(lsize "$lo/$long.name")" -gt 255 ]
		fi
	done
	remount "$C" "$M"
	for len in 1 160 161 255; do
		n=$(printf 'n%.0s' $(seq 1 "$len"))
		[ "$(cat "$M/d$len/$n")" = "content $len" ]
		[ "$(ls -A "$M/d$len")" = "$n" ]
	done
}

@test "a 256-byte name fails with ENAMETOOLONG, for files, directories and links" {
	n=$(printf 'x%.0s' $(seq 1 256))
	run touch "$M/$n"
	[ "$status" -ne 0 ]
	[[ "$output" == *"File name too long"* ]]
	run mkdir "$M/$n"
	[[ "$output" == *"File name too long"* ]]
	echo a >"$M/a"
	run ln -s a "$M/$n"
	[[ "$output" == *"File name too long"* ]]
	run mv "$M/a" "$M/$n"
	[[ "$output" == *"File name too long"* ]]
	[ "$(ls -A "$M")" = a ]
}

@test "odd names: spaces, UTF-8, leading dash, dots; readdir shows exactly the plaintext names" {
	names=("with space" "  two  leading" "trailing " "-leading-dash" "--" "ünïcødé ✓ 名前"
		".hidden" "..dots" "a.b.c" "tab	in" "new
line" "xtsfs" "UPPER lower" "$(printf 'L%.0s' $(seq 1 200))")
	mkdir "$M/d"
	for n in "${names[@]}"; do
		echo "$n" >"$M/d/$n"
		echo "$n" >"$R/$n"
	done
	mkdir "$M/d/sub dir" "$R/sub dir"
	diff <(ls -A "$M/d" | LC_ALL=C sort) <(ls -A "$R" | LC_ALL=C sort)
	for n in "${names[@]}"; do
		[ "$(cat "$M/d/$n")" = "$n" ]
	done
	# no internals in any listing, at any depth
	run bash -c "find '$M' -name 'xtsfs.*'"
	[ -z "$output" ]
	remount "$C" "$M"
	diff <(ls -A "$M/d" | LC_ALL=C sort) <(ls -A "$R" | LC_ALL=C sort)
	[ "$(ls -A "$M")" = d ]
}

@test "the same name in two directories has different lower names" {
	mkdir "$M/a" "$M/b"
	echo 1 >"$M/a/same"
	echo 2 >"$M/b/same"
	la=$(user_names "$(lower_of "$M/a")")
	lb=$(user_names "$(lower_of "$M/b")")
	[ -n "$la" ]
	[ -n "$lb" ]
	[ "$la" != "$lb" ]
	# but deterministic: the same name in the same directory again
	rm "$M/a/same"
	echo 3 >"$M/a/same"
	[ "$(user_names "$(lower_of "$M/a")")" = "$la" ]
}

@test "xtsfs.dirid and xtsfs.volume are ordinary plaintext names" {
	mkdir "$M/d"
	for dir in "$M" "$M/d"; do
		echo "plain dirid" >"$dir/xtsfs.dirid"
		echo "plain volume" >"$dir/xtsfs.volume"
		mkdir "$dir/xtsfs.long.x"
		[ "$(cat "$dir/xtsfs.dirid")" = "plain dirid" ]
		[ "$(cat "$dir/xtsfs.volume")" = "plain volume" ]
	done
	[ "$(lsize "$C/xtsfs.volume")" -eq 8192 ]
	ld=$(lower_of "$M/d")
	[ "$(lsize "$ld/xtsfs.dirid")" -eq 16 ]
	remount "$C" "$M"
	for dir in "$M" "$M/d"; do
		[ "$(cat "$dir/xtsfs.dirid")" = "plain dirid" ]
		[ "$(cat "$dir/xtsfs.volume")" = "plain volume" ]
		[ -d "$dir/xtsfs.long.x" ]
	done
	[ "$(ls -A "$M/d" | LC_ALL=C sort | tr '\n' ' ')" = "xtsfs.dirid xtsfs.long.x xtsfs.volume " ]
	rm "$M/xtsfs.volume" "$M/d/xtsfs.dirid"
	[ "$(lsize "$C/xtsfs.volume")" -eq 8192 ]
	# a stale header temp file is never shown
	echo stale >"$C/xtsfs.volume.tmp"
	[ "$(ls -A "$M" | LC_ALL=C sort | tr '\n' ' ')" = "d xtsfs.dirid xtsfs.long.x " ]
	[ "$(lsize "$ld/xtsfs.dirid")" -eq 16 ]
	remount "$C" "$M"
	[ "$(cat "$M/d/xtsfs.volume")" = "plain volume" ]
}

@test "--plaintext-names: names as they are; xtsfs.volume hidden and reserved in the root" {
	umount_vol "$M"
	C=$T/p
	mkvol "$C" --plaintext-names
	mount_vol "$C" "$M"
	mkdir "$M/dir one"
	echo hi >"$M/dir one/file ü.txt"
	ln -s "dir one" "$M/lnk"
	[ -d "$C/dir one" ]
	[ -f "$C/dir one/file ü.txt" ]
	[ "$(readlink "$C/lnk")" = "dir one" ]
	# no dirids on such a volume
	[ ! -e "$C/dir one/xtsfs.dirid" ]
	[ "$(lsize "$C/dir one/file ü.txt")" -eq "$(lower_for 3)" ]
	refute grep -q hi "$C/dir one/file ü.txt"
	[ "$(ls -A "$M" | LC_ALL=C sort | tr '\n' ' ')" = "dir one lnk " ]
	run stat "$M/xtsfs.volume"
	[ "$status" -ne 0 ]
	run bash -c "echo x >'$M/xtsfs.volume'"
	[ "$status" -ne 0 ]
	run mkdir "$M/xtsfs.volume.tmp"
	[ "$status" -ne 0 ]
	run mv "$M/lnk" "$M/xtsfs.volume"
	[ "$status" -ne 0 ]
	run rm -f "$M/xtsfs.volume"
	[ "$(lsize "$C/xtsfs.volume")" -eq 8192 ]
	[ ! -e "$C/xtsfs.volume.tmp" ]
	# only in the root: elsewhere it is just a name
	echo sub >"$M/dir one/xtsfs.volume"
	[ "$(cat "$M/dir one/xtsfs.volume")" = sub ]
	remount "$C" "$M"
	[ "$(cat "$M/dir one/file ü.txt")" = hi ]
}

# ---- directories ------------------------------------------------------------

@test "mkdir, nested directories, rmdir of empty and non-empty directories" {
	mkdir -p "$M/a/b/c/d/e"
	echo deep >"$M/a/b/c/d/e/f"
	[ "$(cat "$M/a/b/c/d/e/f")" = deep ]
	[ "$(stat -c %F "$M/a/b/c")" = directory ]
	# every directory but the root has a 16-byte dirid
	lo=$(lower_of "$M/a/b/c")
	[ "$(lsize "$lo/xtsfs.dirid")" -eq 16 ]
	[ "$(stat -c %a "$lo/xtsfs.dirid")" = 444 ]
	run rmdir "$M/a/b/c/d/e"
	[ "$status" -ne 0 ]
	[[ "$output" == *"Directory not empty"* ]]
	[ -d "$M/a/b/c/d/e" ]
	[ "$(cat "$M/a/b/c/d/e/f")" = deep ]
	rm "$M/a/b/c/d/e/f"
	rmdir "$M/a/b/c/d/e"
	[ ! -e "$M/a/b/c/d/e" ]
	[ "$(ls -A "$M/a/b/c/d")" = "" ]
	# nothing left behind in the lower parent (no dirid, no sidecar)
	[ "$(user_names "$(lower_of "$M/a/b/c/d")")" = "" ]
	rm -r "$M/a"
	[ "$(ls -A "$M")" = "" ]
	[ "$(lower_names "$C")" = xtsfs.volume ]
	# a long-named directory: its sidecar goes with it
	n=$(printf 'D%.0s' $(seq 1 200))
	mkdir "$M/$n"
	[ "$(lower_names "$C" | grep -c '^xtsfs\.long\.')" -eq 2 ]
	rmdir "$M/$n"
	[ "$(lower_names "$C")" = xtsfs.volume ]
	remount "$C" "$M"
	[ "$(ls -A "$M")" = "" ]
}

@test "renaming a directory keeps its dirid and the lower names of its children" {
	mkdir -p "$M/dir/sub" "$M/other"
	for i in 1 2 3; do echo "$i" >"$M/dir/f$i"; done
	echo s >"$M/dir/sub/s"
	before=$(lower_names "$(lower_of "$M/dir")")
	id_before=$(od -An -tx1 "$(lower_of "$M/dir")/xtsfs.dirid")
	mv "$M/dir" "$M/renamed"
	[ "$(lower_names "$(lower_of "$M/renamed")")" = "$before" ]
	mv "$M/renamed" "$M/other/moved"
	[ "$(lower_names "$(lower_of "$M/other/moved")")" = "$before" ]
	[ "$(od -An -tx1 "$(lower_of "$M/other/moved")/xtsfs.dirid")" = "$id_before" ]
	remount "$C" "$M"
	[ "$(cat "$M/other/moved/f2")" = 2 ]
	[ "$(cat "$M/other/moved/sub/s")" = s ]
	[ ! -e "$M/dir" ]
}

@test "renamed directories, cold after a remount: looked up, listed, written, removed" {
	# their dirids are their first names' (FORMAT 4.2), not the ones
	# derived from where they are now: the names must come from the file
	mkdir -p "$M/a/b/c"
	echo 1 >"$M/a/b/c/f"
	echo 2 >"$M/a/b/g"
	mv "$M/a/b" "$M/a/bb"
	mv "$M/a" "$M/aa"
	remount "$C" "$M"
	# a lookup first, no listing
	[ "$(cat "$M/aa/bb/c/f")" = 1 ]
	remount "$C" "$M"
	# a create first: the name is absent under the derived id too
	echo new >"$M/aa/bb/new"
	[ "$(ls "$M/aa/bb" | tr '\n' ' ')" = "c g new " ]
	remount "$C" "$M"
	[ "$(cd "$M" && find . | LC_ALL=C sort | tr '\n' ' ')" = ". ./aa ./aa/bb ./aa/bb/c ./aa/bb/c/f ./aa/bb/g ./aa/bb/new " ]
	[ "$(cat "$M/aa/bb/new")" = new ]
	# the old name again: a new directory with aa's dirid (allowed)
	mkdir "$M/a"
	echo z >"$M/a/z"
	[ "$(od -An -tx1 "$(lower_of "$M/a")/xtsfs.dirid")" = "$(od -An -tx1 "$(lower_of "$M/aa")/xtsfs.dirid")" ]
	remount "$C" "$M"
	[ "$(ls "$M/a")" = z ] && [ "$(ls "$M/aa")" = bb ]
	rm "$M/aa/bb/new" "$M/a/z"
	rmdir "$M/a"
	remount "$C" "$M"
	[ "$(ls -A "$M")" = aa ] && [ "$(ls "$M/aa/bb" | tr '\n' ' ')" = "c g " ]
}

@test "a directory with names under its derived id and under its xtsfs.dirid (a merge after a rename)" {
	mkdir "$M/d"
	echo f >"$M/d/f"
	mv "$M/d" "$M/keep"
	mkdir "$M/old"
	echo g >"$M/old/g"
	lk=$(lower_of "$M/keep")
	lo=$(lower_of "$M/old")
	lg=$(lower_of "$M/old/g")
	umount_vol "$M"
	# what a sync tool's merge leaves: old's lower directory holds keep's
	# dirid (derived from "d") and name f, and g, written under the id
	# derived from "old"
	mv "$lg" "$lk/"
	rm "$lo/xtsfs.dirid"
	rmdir "$lo"
	mv "$lk" "$lo"
	start_fg "$C" "$M"
	# g authenticates under the id derived from "old": found
	[ "$(cat "$M/old/g")" = g ]
	# f, under the file's id, is always listed and read
	ls -A "$M/old" | grep -qx f
	[ "$(cat "$M/old/f")" = f ]
	grep -q 'holds another id than the one derived' "$T/daemon.log"
	# once the file's id is known only its names are listed (as any
	# reader that takes the dirid from the file does), and a create
	# goes under it
	echo h >"$M/old/h"
	[ "$(ls -A "$M/old" | LC_ALL=C sort | tr '\n' ' ')" = "f h " ]
	kill -0 "$DAEMON_PID"
}

@test "a directory of 1500 entries (some long names): listed whole, removed whole" {
	mkdir "$M/big"
	python3 - "$M/big" "$R" <<'PY'
import os, sys
for d in sys.argv[1:]:
    for i in range(1500):
        n = ('file-%0100d' % i) if i % 30 else ('long-%0200d' % i)
        open(os.path.join(d, n), 'w').close()
PY
	diff <(ls -A "$M/big" | LC_ALL=C sort) <(ls -A "$R" | LC_ALL=C sort)
	[ "$(find "$M/big" -type f | wc -l)" -eq 1500 ]
	remount "$C" "$M"
	diff <(ls -A "$M/big" | LC_ALL=C sort) <(ls -A "$R" | LC_ALL=C sort)
	rm -r "$M/big"
	[ ! -e "$M/big" ]
	[ "$(lower_names "$C")" = xtsfs.volume ]
}

@test "a walk with subdirectories read ahead: exact while the lower tree changes under it; an unmount with read-ahead queued exits 0" {
	# 800 subdirectories (some long names): a listing queues each one's
	# lower inode and first block to be read ahead (local disks only)
	mkdir "$M/ra" "$R/ra"
	python3 - "$M/ra" "$R/ra" <<'PY'
import os, sys
for d in sys.argv[1:]:
    for i in range(800):
        sub = os.path.join(d, 'd%04d-%s' % (i, 'y' * (i % 150)))
        os.mkdir(sub)
        open(os.path.join(sub, 'f'), 'w').close()
PY
	remount "$C" "$M"
	diff <(cd "$M/ra" && find . | LC_ALL=C sort) <(cd "$R/ra" && find . | LC_ALL=C sort)
	# the read-ahead queued by a listing, then three subdirectories go
	# from the lower tree (as another machine's sync would) and the
	# daemon is stopped at once
	gone=()
	for i in 0003 0400 0799; do
		gone+=("$(lower_of "$M/ra/d$i-"*)")
		rm -r "$R/ra/d$i-"*
	done
	umount_vol "$M"
	start_fg "$C" "$M"
	ls -f "$M/ra" >/dev/null
	rm -r "${gone[@]}"
	kill -TERM "$DAEMON_PID"
	rc=0
	wait "$DAEMON_PID" || rc=$?
	[ "$rc" -eq 0 ]
	refute mountpoint -q "$M"
	mount_vol "$C" "$M"
	diff <(cd "$M/ra" && find . | LC_ALL=C sort) <(cd "$R/ra" && find . | LC_ALL=C sort)
}

@test "directory positions: telldir/seekdir resume anywhere, also after the end; rewinddir sees new entries; two handles are independent" {
	# 3000 entries with long names: many getdents buffers and READDIR
	# replies, so positions cross both; right after the creates (the
	# lower directory under 2 s old), so the kernel's listing cache is
	# dropped at each opendir and seeks reach the daemon
	mkdir "$M/pos"
	run python3 - "$M/pos" <<'PY'
import ctypes, os, sys

d = sys.argv[1]
names = {"e%04d-%s" % (i, "x" * (i % 150)) for i in range(3000)}
for n in names:
    open(os.path.join(d, n), "w").close()

class Dirent(ctypes.Structure):
    _fields_ = [("d_ino", ctypes.c_uint64), ("d_off", ctypes.c_int64),
                ("d_reclen", ctypes.c_ushort), ("d_type", ctypes.c_ubyte),
                ("d_name", ctypes.c_char * 256)]

libc = ctypes.CDLL(None, use_errno=True)
libc.opendir.restype = ctypes.c_void_p
libc.opendir.argtypes = [ctypes.c_char_p]
libc.readdir.restype = ctypes.POINTER(Dirent)
libc.readdir.argtypes = [ctypes.c_void_p]
libc.telldir.restype = ctypes.c_long
libc.telldir.argtypes = [ctypes.c_void_p]
libc.seekdir.argtypes = [ctypes.c_void_p, ctypes.c_long]
libc.rewinddir.argtypes = [ctypes.c_void_p]
libc.closedir.argtypes = [ctypes.c_void_p]

def nxt(h):
    e = libc.readdir(h)
    return e.contents.d_name.decode() if e else None

def rest(h):
    out = []
    while (n := nxt(h)) is not None:
        out.append(n)
    return out

h = libc.opendir(d.encode())
assert h
listing = []  # (position before the entry, name)
while True:
    pos = libc.telldir(h)
    n = nxt(h)
    if n is None:
        break
    listing.append((pos, n))
got = [n for _, n in listing]
assert sorted(got) == sorted(names | {".", ".."}), "listing differs"
assert len(got) == len(set(got)), "an entry listed twice"
# after the end: back to every 250th position, then to the end again
for k in list(range(0, len(listing), 250)) + [len(listing) - 1]:
    libc.seekdir(h, listing[k][0])
    assert rest(h) == got[k:], "resume at %d differs" % k
# rewinddir: a new entry shows
open(os.path.join(d, "new-after-end"), "w").close()
libc.rewinddir(h)
again = rest(h)
assert sorted(again) == sorted(got + ["new-after-end"]), "rewinddir"
libc.closedir(h)
# two handles: one read half-way, the other whole, the first finished
h1, h2 = libc.opendir(d.encode()), libc.opendir(d.encode())
first = [nxt(h1) for _ in range(1500)]
whole = rest(h2)
assert sorted(first + rest(h1)) == sorted(whole) == sorted(again), "two handles"
libc.closedir(h1)
libc.closedir(h2)
print("ok", len(got))
PY
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = "ok 3002" ]
}

@test "rename of a directory over an existing empty directory" {
	mkdir "$M/a" "$M/b"
	echo x >"$M/a/f"
	mv -T "$M/a" "$M/b"
	[ ! -e "$M/a" ]
	[ "$(cat "$M/b/f")" = x ]
	mkdir "$M/c"
	python3 -c 'import os, sys; os.rename(sys.argv[1], sys.argv[2])' "$M/b" "$M/c"
	[ "$(cat "$M/c/f")" = x ]
	[ "$(ls -A "$M")" = c ]
	# over an empty directory with a long name: its sidecar stays in use
	L=$(printf 'D%.0s' $(seq 1 200))
	mkdir "$M/$L"
	mv -T "$M/c" "$M/$L"
	[ "$(cat "$M/$L/f")" = x ]
	sidecars_ok "$C"
	# exchanging two directories keeps each one's dirid and children
	mkdir "$M/e"
	echo y >"$M/e/g"
	renameat2 "$M/e" "$M/$L" exchange
	[ "$(cat "$M/e/f")" = x ]
	[ "$(cat "$M/$L/g")" = y ]
	remount "$C" "$M"
	[ "$(cat "$M/e/f")" = x ]
	[ "$(cat "$M/$L/g")" = y ]
	[ "$(ls -A "$M" | LC_ALL=C sort | tr '\n' ' ')" = "$L e " ]
}

@test "rename of a directory over a non-empty directory fails with ENOTEMPTY" {
	mkdir "$M/a" "$M/b"
	echo x >"$M/a/f"
	echo y >"$M/b/g"
	run python3 -c 'import os, sys; os.rename(sys.argv[1], sys.argv[2])' "$M/a" "$M/b"
	[[ "$output" == *"Directory not empty"* ]]
	[ "$(cat "$M/a/f")" = x ]
	[ "$(cat "$M/b/g")" = y ]
}

# ---- rename -----------------------------------------------------------------

# sidecars_ok LOWERDIR: every long entry has its sidecar and vice versa.
sidecars_ok() {
	local e
	for e in "$1"/xtsfs.long.*; do
		[ -e "$e" ] || continue
		case $e in
		*.name) [ -e "${e%.name}" ] || { echo "stale sidecar $e" >&2; return 1; } ;;
		*) [ -f "$e.name" ] || { echo "no sidecar for $e" >&2; return 1; } ;;
		esac
	done
}

@test "rename: plain, over an existing file, across directories" {
	mkdir "$M/a" "$M/b" "$R/a" "$R/b"
	for d in "$M" "$R"; do
		echo one >"$d/a/one"
		echo two >"$d/a/two"
		echo three >"$d/b/three"
		mv "$d/a/one" "$d/a/uno"
		mv "$d/a/two" "$d/a/uno"
		mv "$d/a/uno" "$d/b/moved"
		mv "$d/b/three" "$d/b/moved2"
		mv "$d/b/moved2" "$d/three"
	done
	diff -r "$M" "$R"
	[ "$(cat "$M/b/moved")" = two ]
	[ "$(user_names "$(lower_of "$M/a")")" = "" ]
	[ "$(user_names "$(lower_of "$M/b")" | wc -l)" -eq 1 ]
	remount "$C" "$M"
	diff -r "$M" "$R"
}

@test "renameat2: RENAME_NOREPLACE and RENAME_EXCHANGE" {
	echo A >"$M/a"
	echo B >"$M/b"
	run renameat2 "$M/a" "$M/b" noreplace
	[ "$status" -ne 0 ]
	[[ "$output" == *EEXIST* ]]
	[ "$(cat "$M/a")" = A ]
	[ "$(cat "$M/b")" = B ]
	renameat2 "$M/a" "$M/c" noreplace
	[ ! -e "$M/a" ]
	[ "$(cat "$M/c")" = A ]
	renameat2 "$M/b" "$M/c" exchange
	[ "$(cat "$M/c")" = B ]
	[ "$(cat "$M/b")" = A ]
	# exchange a file with a directory, across directories
	mkdir -p "$M/d/inner"
	echo I >"$M/d/inner/x"
	renameat2 "$M/b" "$M/d/inner" exchange
	[ -f "$M/d/inner" ]
	[ "$(cat "$M/d/inner")" = A ]
	[ -d "$M/b" ]
	[ "$(cat "$M/b/x")" = I ]
	run renameat2 "$M/nonexistent" "$M/c" exchange
	[[ "$output" == *ENOENT* ]]
	remount "$C" "$M"
	[ "$(cat "$M/c")" = B ]
	[ "$(cat "$M/d/inner")" = A ]
	[ "$(cat "$M/b/x")" = I ]
}

@test "renameat2: RENAME_WHITEOUT leaves a 0/0 character device at the old name, as on a plain directory" {
	local long d n
	long=$(printf 'w%.0s' $(seq 1 200))
	for d in "$M" "$R"; do
		echo A >"$d/a"
		echo L >"$d/$long"
		echo O >"$d/over"
		renameat2 "$d/a" "$d/b" whiteout
		renameat2 "$d/$long" "$d/long2" whiteout
		renameat2 "$d/b" "$d/over" whiteout
	done
	for n in a b "$long"; do
		[ "$(stat -c '%F %t:%T %a %U' "$M/$n")" = \
			"$(stat -c '%F %t:%T %a %U' "$R/$n")" ]
	done
	[ "$(stat -c '%F %t:%T' "$M/a")" = "character special file 0:0" ]
	[ "$(cat "$M/long2")" = L ]
	[ "$(cat "$M/over")" = A ]
	[ "$(ls -A "$M" | LC_ALL=C sort)" = "$(ls -A "$R" | LC_ALL=C sort)" ]
	remount "$C" "$M"
	[ "$(stat -c '%F %t:%T' "$M/$long")" = "character special file 0:0" ]
	[ "$(ls -A "$M" | LC_ALL=C sort)" = "$(ls -A "$R" | LC_ALL=C sort)" ]
	# the whiteouts can be removed like any entry; no sidecar is left
	rm "$M/a" "$M/b" "$M/$long"
	[ -z "$(ls -A "$C" | grep '^xtsfs\.long\.')" ]
}

@test "rename of long names: sidecars follow, none left stale" {
	L1=$(printf 'a%.0s' $(seq 1 200))
	L2=$(printf 'b%.0s' $(seq 1 255))
	L3=$(printf 'c%.0s' $(seq 1 170))
	mkdir "$M/d"
	ld=$(lower_of "$M/d")
	echo 1 >"$M/$L1"
	mv "$M/$L1" "$M/$L2"            # long -> long
	sidecars_ok "$C"
	[ "$(lower_names "$C" | grep -c '^xtsfs\.long\.')" -eq 2 ]
	mv "$M/$L2" "$M/short"          # long -> short
	sidecars_ok "$C"
	[ "$(lower_names "$C" | grep -c '^xtsfs\.long\.')" -eq 0 ]
	mv "$M/short" "$M/d/$L3"        # short -> long, across directories
	sidecars_ok "$C"
	sidecars_ok "$ld"
	[ "$(lower_names "$ld" | grep -c '^xtsfs\.long\.')" -eq 2 ]
	echo 2 >"$M/$L1"
	mv "$M/d/$L3" "$M/$L1"          # long over an existing long name
	sidecars_ok "$C"
	sidecars_ok "$ld"
	[ "$(lower_names "$C" | grep -c '^xtsfs\.long\.')" -eq 2 ]
	[ "$(lower_names "$ld" | grep -c '^xtsfs\.long\.')" -eq 0 ]
	echo 3 >"$M/d/$L2"
	renameat2 "$M/$L1" "$M/d/$L2" exchange
	sidecars_ok "$C"
	sidecars_ok "$ld"
	[ "$(cat "$M/$L1")" = 3 ]
	[ "$(cat "$M/d/$L2")" = 1 ]
	# rename onto itself: nothing may be lost
	python3 -c 'import os, sys; os.rename(sys.argv[1], sys.argv[1])' "$M/$L1"
	sidecars_ok "$C"
	[ "$(cat "$M/$L1")" = 3 ]
	remount "$C" "$M"
	[ "$(ls -A "$M" | LC_ALL=C sort | tr '\n' ' ')" = "$L1 d " ]
	[ "$(ls -A "$M/d")" = "$L2" ]
	[ "$(cat "$M/d/$L2")" = 1 ]
}

# ---- links ------------------------------------------------------------------

@test "hard links: link count, inode, shared contents, unlink keeps the other" {
	mkdir "$M/d"
	echo original >"$M/f"
	ln "$M/f" "$M/d/g"
	long=$(printf 'h%.0s' $(seq 1 220))
	ln "$M/f" "$M/$long"
	[ "$(stat -c %h "$M/f")" -eq 3 ]
	[ "$(stat -c %h "$M/d/g")" -eq 3 ]
	[ "$(stat -c %i "$M/f")" = "$(stat -c %i "$M/d/g")" ]
	[ "$(stat -c %i "$M/f")" = "$(stat -c %i "$M/$long")" ]
	echo changed >"$M/d/g"
	[ "$(cat "$M/f")" = changed ]
	printf 'appended\n' >>"$M/$long"
	[ "$(cat "$M/f")" = "$(printf 'changed\nappended')" ]
	rm "$M/f"
	[ "$(stat -c %h "$M/d/g")" -eq 2 ]
	rm "$M/$long"
	sidecars_ok "$C"
	[ "$(lower_names "$C" | grep -c '^xtsfs\.long\.')" -eq 0 ]
	[ "$(stat -c %h "$M/d/g")" -eq 1 ]
	remount "$C" "$M"
	[ "$(cat "$M/d/g")" = "$(printf 'changed\nappended')" ]
}

@test "symlinks: relative, absolute, dangling, to a directory; size is the target length" {
	mkdir "$M/dir"
	echo data >"$M/dir/file"
	ln -s dir/file "$M/rel"
	ln -s "$M/dir/file" "$M/abs"
	ln -s "does/not/exist" "$M/dangling"
	ln -s dir "$M/dl"
	ln -s "ü ✓ spaces/../x" "$M/odd"
	[ "$(readlink "$M/rel")" = dir/file ]
	[ "$(readlink "$M/abs")" = "$M/dir/file" ]
	[ "$(readlink "$M/dangling")" = does/not/exist ]
	[ "$(cat "$M/rel")" = data ]
	[ "$(cat "$M/abs")" = data ]
	[ "$(cat "$M/dl/file")" = data ]
	run cat "$M/dangling"
	[[ "$output" == *"No such file or directory"* ]]
	[ "$(stat -c %s "$M/rel")" -eq 8 ]
	[ "$(stat -c %s "$M/abs")" -eq $((${#M} + 9)) ]
	[ "$(stat -c %s "$M/dangling")" -eq 14 ]
	[ "$(stat -c %s "$M/odd")" -eq "$(printf '%s' "ü ✓ spaces/../x" | wc -c)" ]
	[ "$(stat -c %F "$M/dl")" = "symbolic link" ]
	# the lower targets are encrypted
	[ "$(readlink "$(lower_of "$M/rel")")" != dir/file ]
	remount "$C" "$M"
	[ "$(readlink "$M/odd")" = "ü ✓ spaces/../x" ]
	[ "$(cat "$M/rel")" = data ]
	mv "$M/rel" "$M/dir/moved"
	[ "$(readlink "$M/dir/moved")" = dir/file ]
}

@test "symlink targets up to 4095 bytes; over 3040 bytes an xtsfs.link.* file in the root" {
	mkdir "$M/d"
	t3040=$(python3 -c 'print("a/"*1519+"bc")')
	t3041=$(python3 -c 'print("a/"*1520+"b")')
	t4095=$(python3 -c 'print("a/"*2047+"b")')
	[ ${#t3040} -eq 3040 ]
	[ ${#t3041} -eq 3041 ]
	[ ${#t4095} -eq 4095 ]
	ln -s "$t3040" "$M/d/l3040"
	[ "$(lower_names "$C" | grep -c '^xtsfs\.link\.')" -eq 0 ]
	ln -s "$t3041" "$M/d/l3041"
	[ "$(lower_names "$C" | grep -c '^xtsfs\.link\.')" -eq 1 ]
	ln -s "$t4095" "$M/d/l4095"
	[ "$(lower_names "$C" | grep -c '^xtsfs\.link\.')" -eq 2 ]
	# content-addressed: the same target again shares the file
	ln -s "$t4095" "$M/l4095again"
	[ "$(lower_names "$C" | grep -c '^xtsfs\.link\.')" -eq 2 ]
	for l in l3040 l3041 l4095; do
		n=${l#l}
		v=t$n
		[ "$(readlink "$M/d/$l")" = "${!v}" ]
		[ "$(stat -c %s "$M/d/$l")" -eq "$n" ]
	done
	[ "$(ls -A "$M" | LC_ALL=C sort | tr '\n' ' ')" = "d l4095again " ]
	# 4096 bytes is more than a symlink can hold
	run ln -s "${t4095}x" "$M/too"
	[ "$status" -ne 0 ]
	remount "$C" "$M"
	[ "$(readlink "$M/d/l4095")" = "$t4095" ]
	[ "$(readlink "$M/l4095again")" = "$t4095" ]
	[ "$(readlink "$M/d/l3041")" = "$t3041" ]
	rm "$M/d/l4095"
	[ "$(readlink "$M/l4095again")" = "$t4095" ]
}

# ---- special files ----------------------------------------------------------

@test "mknod: a fifo passes data between two processes" {
	mkfifo "$M/fifo"
	[ "$(stat -c %F "$M/fifo")" = fifo ]
	[ -p "$(lower_of "$M/fifo")" ]
	cat "$M/fifo" >"$T/fifo.out" &
	reader=$!
	seq 1 10000 >"$M/fifo"
	wait "$reader"
	seq 1 10000 | cmp - "$T/fifo.out"
}

@test "mknod: a unix socket can be bound and connected through the mount" {
	run python3 - "$M/sock" <<'PY'
import os, socket, stat, sys
p = sys.argv[1]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(p)
s.listen(1)
assert stat.S_ISSOCK(os.lstat(p).st_mode)
c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
c.connect(p)
a, _ = s.accept()
c.sendall(b'over the socket')
print(a.recv(100).decode())
PY
	[ "$status" -eq 0 ]
	[ "$output" = "over the socket" ]
	[ "$(stat -c %F "$M/sock")" = socket ]
	[ -S "$(lower_of "$M/sock")" ]
	remount "$C" "$M"
	[ -S "$M/sock" ]
}

@test "mknod: a character device (as root)" {
	mknod "$M/null" c 1 3
	[ "$(stat -c '%F %t %T' "$M/null")" = "character special file 1 3" ]
	lo=$(lower_of "$M/null")
	[ "$(stat -c '%F %t %T' "$lo")" = "character special file 1 3" ]
	mknod "$M/blk" b 7 0
	[ "$(stat -c '%F %t %T' "$M/blk")" = "block special file 7 0" ]
	remount "$C" "$M"
	[ "$(stat -c '%F %t %T' "$M/null")" = "character special file 1 3" ]
	[ "$(ls -A "$M" | LC_ALL=C sort | tr '\n' ' ')" = "blk null " ]
}

# ---- attributes -------------------------------------------------------------

@test "chmod, chown, nanosecond times" {
	echo x >"$M/f"
	mkdir "$M/d"
	chmod 0640 "$M/f"
	chmod 1750 "$M/d"
	[ "$(stat -c %a "$M/f")" = 640 ]
	[ "$(stat -c %a "$M/d")" = 1750 ]
	chown nobody:nogroup "$M/f"
	[ "$(stat -c %U:%G "$M/f")" = nobody:nogroup ]
	[ "$(stat -c %U "$(lower_of "$M/f")")" = nobody ]
	touch -d '2001-02-03 04:05:06.123456789 +0000' "$M/f"
	[[ "$(TZ=UTC stat -c %y "$M/f")" == "2001-02-03 04:05:06.123456789"* ]]
	touch -a -d '2002-03-04 05:06:07.987654321 +0000' "$M/f"
	[[ "$(TZ=UTC stat -c %x "$M/f")" == "2002-03-04 05:06:07.987654321"* ]]
	[[ "$(TZ=UTC stat -c %y "$M/f")" == "2001-02-03 04:05:06.123456789"* ]]
	touch -h -d '2003-01-01 00:00:00.5 +0000' "$M/d"
	ln -s f "$M/l"
	touch -h -d '2004-01-01 00:00:00.25 +0000' "$M/l"
	[[ "$(TZ=UTC stat -c %y "$M/l")" == "2004-01-01 00:00:00.250000000"* ]]
	[[ "$(TZ=UTC stat -c %y "$M/f")" == "2001-02-03 04:05:06.123456789"* ]]
	chown -h nobody "$M/l"
	[ "$(stat -c %U "$M/l")" = nobody ]
	[ "$(stat -c %U "$M/f")" = nobody ]
	chown root "$M/f"
	[ "$(stat -c %U "$M/l")" = nobody ]
	chown nobody "$M/f"
	remount "$C" "$M"
	[ "$(stat -c %a "$M/f")" = 640 ]
	[ "$(stat -c %U:%G "$M/f")" = nobody:nogroup ]
	[[ "$(TZ=UTC stat -c %y "$M/f")" == "2001-02-03 04:05:06.123456789"* ]]
	[[ "$(TZ=UTC stat -c %y "$M/d")" == "2003-01-01 00:00:00.500000000"* ]]
	[[ "$(TZ=UTC stat -c %y "$M/l")" == "2004-01-01 00:00:00.250000000"* ]]
	# a write changes mtime
	touch -d '2001-01-01' "$M/f"
	echo y >>"$M/f"
	[ "$(stat -c %Y "$M/f")" -gt 1000000000 ]
	[ "$(stat -c %Y "$M/f")" -ne "$(date -d 2001-01-01 +%s)" ]
}

@test "truncate grow and shrink across units and short tails, against a reference file" {
	mkdata "$R/f" 20000 7
	cp "$R/f" "$M/f"
	for s in 15000 12289 12288 8200 8192 4111 4100 4097 4096 4095 16 15 1 0 7 4096 13 9000 100000 3; do
		truncate -s "$s" "$M/f"
		truncate -s "$s" "$R/f"
		[ "$(lsize "$M/f")" -eq "$s" ]
		cmp "$M/f" "$R/f"
		# overwrite a few bytes in the middle, so the next shrink
		# re-encrypts real data, not zeros
		if [ "$s" -gt 10 ]; then
			printf 'zz' | dd of="$M/f" bs=1 seek=$((s / 2)) conv=notrunc status=none
			printf 'zz' | dd of="$R/f" bs=1 seek=$((s / 2)) conv=notrunc status=none
		fi
	done
	[ "$(lsize "$(lower_of "$M/f")")" -eq "$(lower_for 3)" ]
	remount "$C" "$M"
	cmp "$M/f" "$R/f"
}

@test "truncate -s 10G stays sparse and reads zeros" {
	echo head >"$M/big"
	truncate -s 10G "$M/big"
	[ "$(lsize "$M/big")" -eq 10737418240 ]
	lo=$(lower_of "$M/big")
	[ "$(lsize "$lo")" -eq "$(lower_for 10737418240)" ]
	[ "$(du -k "$lo" | cut -f1)" -lt 1024 ]
	[ "$(head -c 5 "$M/big")" = head ]
	dd if="$M/big" bs=1M skip=5000 count=2 status=none | cmp - <(head -c 2097152 /dev/zero)
	tail -c 4097 "$M/big" | cmp - <(head -c 4097 /dev/zero)
	remount "$C" "$M"
	[ "$(lsize "$M/big")" -eq 10737418240 ]
	[ "$(du -k "$lo" | cut -f1)" -lt 1024 ]
	truncate -s 5 "$M/big"
	[ "$(cat "$M/big")" = head ]
}

@test "writes past EOF leave holes that read as zeros and stay sparse" {
	for d in "$M" "$R"; do
		printf 'start' >"$d/h"
		printf 'middle' | dd of="$d/h" bs=1 seek=3000000 conv=notrunc status=none
		printf 'end' | dd of="$d/h" bs=1 seek=9000001 conv=notrunc status=none
	done
	cmp "$M/h" "$R/h"
	[ "$(lsize "$M/h")" -eq 9000004 ]
	lo=$(lower_of "$M/h")
	[ "$(du -k "$lo" | cut -f1)" -lt 200 ]
	remount "$C" "$M"
	cmp "$M/h" "$R/h"
}

@test "fallocate: allocate, punch a hole (keeps the size), zero a range" {
	fallocate -l 1M "$M/a"
	[ "$(lsize "$M/a")" -eq 1048576 ]
	cmp "$M/a" <(head -c 1048576 /dev/zero)
	mkdata "$R/p" 30000 3
	cp "$R/p" "$M/p"
	for d in "$M" "$R"; do
		fallocate -p -o 4096 -l 8192 "$d/p"  # two whole units
		fallocate -p -o 100 -l 1000 "$d/p"   # inside a unit
		fallocate -p -o 16000 -l 5000 "$d/p" # straddling units
		fallocate -p -o 29990 -l 100 "$d/p"  # into the last unit, past EOF
	done
	[ "$(lsize "$M/p")" -eq 30000 ]
	cmp "$M/p" "$R/p"
	cmp <(dd if="$M/p" bs=4096 skip=1 count=2 status=none) <(head -c 8192 /dev/zero)
	mkdata "$R/z" 30000 4
	cp "$R/z" "$M/z"
	for d in "$M" "$R"; do
		fallocate -z -o 5000 -l 10000 "$d/z"
		fallocate -z -o 28000 -l 5000 "$d/z" # past EOF: grows
	done
	[ "$(lsize "$M/z")" -eq "$(lsize "$R/z")" ]
	cmp "$M/z" "$R/z"
	# -n (keep size) past EOF
	fallocate -n -o 40000 -l 10000 "$M/z"
	[ "$(lsize "$M/z")" -eq "$(lsize "$R/z")" ]
	remount "$C" "$M"
	cmp "$M/p" "$R/p"
	cmp "$M/z" "$R/z"
	cmp "$M/a" <(head -c 1048576 /dev/zero)
}

@test "SEEK_DATA and SEEK_HOLE see a hole at a 4096-aligned plaintext range" {
	python3 - "$M/s" <<'PY'
import os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
os.pwrite(fd, b'\x01' * 4096, 0)             # unit 0: data
os.pwrite(fd, b'\x02' * 4096, 5 * 4096)      # units 1..4: a hole; unit 5 data
os.pwrite(fd, b'\x03' * 100, 10 * 4096)      # units 6..9: a hole; unit 10 data
os.close(fd)
PY
	run python3 - "$M/s" <<'PY'
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
r = []
r.append(os.lseek(fd, 0, os.SEEK_DATA))
r.append(os.lseek(fd, 0, os.SEEK_HOLE))
r.append(os.lseek(fd, 4096, os.SEEK_DATA))
r.append(os.lseek(fd, 5000, os.SEEK_DATA))
r.append(os.lseek(fd, 5 * 4096, os.SEEK_HOLE))
r.append(os.lseek(fd, 7 * 4096, os.SEEK_DATA))
r.append(os.lseek(fd, 10 * 4096, os.SEEK_HOLE))
try:
    os.lseek(fd, 10 * 4096 + 100, os.SEEK_DATA)
    r.append('no ENXIO')
except OSError as e:
    r.append(e.strerror)
print(' '.join(map(str, r)))
PY
	[ "$status" -eq 0 ]
	[ "$output" = "0 4096 20480 20480 24576 40960 41060 No such device or address" ]
	# and the hole reads as zeros
	cmp <(dd if="$M/s" bs=4096 skip=1 count=4 status=none) <(head -c 16384 /dev/zero)
}

@test "random writes, truncates, punches and zeroings match a reference file" {
	for seed in 1 2 3; do
		python3 - "$M/r$seed" "$R/r$seed" "$seed" 300 <<'PY'
import ctypes, os, random, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]
KEEP, PUNCH, ZERO = 1, 2, 16
a, b, seed, n = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
r = random.Random(seed)
fa = os.open(a, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
fb = os.open(b, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
def pick_off():
    if r.random() < 0.4:  # near unit borders and short-tail lengths
        return r.randrange(0, 12) * 4096 + r.choice([0, 1, 15, 16, 17, 4080, 4095])
    return r.randrange(0, 50000)
for i in range(n):
    op = r.choice('wwwwtpza')
    off = pick_off()
    ln = r.choice([1, 2, 15, 16, 17, 100, 4095, 4096, 4097, 8192, r.randrange(1, 20000)])
    for fd in (fa, fb):
        if op == 'w':
            os.pwrite(fd, random.Random(i).randbytes(ln), off)
        elif op == 't':
            os.ftruncate(fd, off)
        else:
            mode = {'p': PUNCH | KEEP, 'z': ZERO, 'a': 0}[op]
            if libc.fallocate(fd, mode, off, ln) != 0:
                sys.exit(f'op {i} {op} {off} {ln}: {os.strerror(ctypes.get_errno())}')
    sa, sb = os.fstat(fa).st_size, os.fstat(fb).st_size
    da, db = os.pread(fa, sa + 10, 0), os.pread(fb, sb + 10, 0)
    if sa != sb or da != db:
        first = next((k for k in range(min(len(da), len(db))) if da[k] != db[k]), None)
        sys.exit(f'op {i} {op} off {off} len {ln}: size {sa} vs {sb}, first difference at {first}')
PY
	done
	remount "$C" "$M"
	for seed in 1 2 3; do
		cmp "$M/r$seed" "$R/r$seed"
		[ "$(lsize "$(lower_of "$M/r$seed")")" -eq "$(lower_for "$(lsize "$R/r$seed")" cut)" ]
	done
}

@test "writes far past 4 GiB: unit numbers above 2^20" {
	printf 'far away' | dd of="$M/far" bs=1 seek=$((6 * 1073741824 + 123)) conv=notrunc status=none
	printf 'farther' | dd of="$M/far" bs=1 seek=$((7 * 1073741824 + 4090)) conv=notrunc status=none
	[ "$(lsize "$M/far")" -eq $((7 * 1073741824 + 4097)) ]
	remount "$C" "$M"
	[ "$(dd if="$M/far" bs=1 skip=$((6 * 1073741824 + 123)) count=8 status=none)" = "far away" ]
	[ "$(tail -c 7 "$M/far")" = farther ]
	[ "$(du -k "$(lower_of "$M/far")" | cut -f1)" -lt 1024 ]
}

@test "an unlinked file stays usable through an open descriptor" {
	run python3 - "$M/gone" <<'PY'
import os, sys
p = sys.argv[1]
fd = os.open(p, os.O_RDWR | os.O_CREAT, 0o644)
os.write(fd, b'hello world' * 1000)
os.unlink(p)
assert not os.path.exists(p)
os.pwrite(fd, b'AFTER', 5)
st = os.fstat(fd)
print(os.pread(fd, 20, 0).decode(), st.st_size, st.st_nlink)
os.ftruncate(fd, 3)
print(os.pread(fd, 20, 0).decode(), os.fstat(fd).st_size)
os.close(fd)
PY
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "helloAFTERdhello wor 11000 0" ]
	[ "${lines[1]}" = "hel 3" ]
	[ "$(user_names "$C")" = "" ]
}

@test "mknod(2) of a regular file gets its header at once" {
	python3 -c 'import os, stat, sys; os.mknod(sys.argv[1], stat.S_IFREG | 0o640)' "$M/reg"
	[ "$(lsize "$M/reg")" -eq 0 ]
	[ "$(stat -c %a "$M/reg")" = 640 ]
	[ "$(lsize "$(lower_of "$M/reg")")" -eq "$(lower_for 0)" ]
	printf abc >>"$M/reg"
	[ "$(cat "$M/reg")" = abc ]
}

# ---- open flags, mmap, sync ---------------------------------------------------

@test "O_APPEND: interleaved appenders give the concatenation" {
	exec 5>>"$M/log" 6>>"$M/log"
	for i in 1 2 3 4 5; do
		echo "first $i" >&5
		echo "second $i" >&6
	done
	exec 5>&- 6>&-
	for i in 1 2 3 4 5; do echo "first $i"; echo "second $i"; done >"$R/log"
	cmp "$M/log" "$R/log"
	# two processes appending at once: every line whole, none lost
	(for i in $(seq 1 300); do echo "process-a line $i"; done >>"$M/log") &
	pa=$!
	(for i in $(seq 1 300); do echo "process-b line $i"; done >>"$M/log") &
	pb=$!
	wait "$pa" "$pb"
	[ "$(wc -l <"$M/log")" -eq 610 ]
	diff <(grep process-a "$M/log") <(for i in $(seq 1 300); do echo "process-a line $i"; done)
	diff <(grep process-b "$M/log") <(for i in $(seq 1 300); do echo "process-b line $i"; done)
	head -10 "$M/log" | cmp - "$R/log"
}

@test "O_TRUNC and O_EXCL" {
	mkdata "$M/f" 10000 1
	: >"$M/f"
	[ "$(lsize "$M/f")" -eq 0 ]
	[ "$(lsize "$(lower_of "$M/f")")" -eq "$(lower_for 0 cut)" ]
	echo new >"$M/f"
	[ "$(cat "$M/f")" = new ]
	run python3 -c "import os,sys; os.open(sys.argv[1], os.O_WRONLY|os.O_CREAT|os.O_EXCL)" "$M/f"
	[ "$status" -ne 0 ]
	[[ "$output" == *FileExistsError* ]]
	[ "$(cat "$M/f")" = new ]
	python3 -c "import os,sys; os.close(os.open(sys.argv[1], os.O_WRONLY|os.O_CREAT|os.O_EXCL, 0o600))" "$M/g"
	[ "$(stat -c %a "$M/g")" = 600 ]
	run bash -c "set -o noclobber; echo x >'$M/f'"
	[ "$status" -ne 0 ]
	[ "$(cat "$M/f")" = new ]
}

@test "shared writable mmap: writes reach other descriptors and the lower file" {
	mkdata "$R/m" 20000 5
	cp "$R/m" "$M/m"
	python3 - "$M/m" "$R/m" <<'PY'
import mmap, os, sys
for p in sys.argv[1:]:
    fd = os.open(p, os.O_RDWR)
    mm = mmap.mmap(fd, 20000, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
    mm[10:20] = b'0123456789'
    mm[4090:4110] = b'across-a-unit-border!'[:20]
    mm[19990:20000] = b'the end..!'
    mm.flush()
    other = os.open(p, os.O_RDONLY)
    got = os.pread(other, 20000, 0)
    assert got[10:20] == b'0123456789', got[10:20]
    assert got[19990:20000] == b'the end..!'
    mm.close()
    os.close(other)
    os.close(fd)
PY
	cmp "$M/m" "$R/m"
	remount "$C" "$M"
	cmp "$M/m" "$R/m"
}

@test "fsync and fdatasync on files and directories" {
	mkdir "$M/d"
	python3 - "$M/d/f" "$M/d" "$M" <<'PY'
import os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
os.write(fd, b'synced data' * 1000)
os.fsync(fd)
os.fdatasync(fd)
os.close(fd)
for d in sys.argv[2:]:
    dfd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
    os.fsync(dfd)
    os.fdatasync(dfd)
    os.close(dfd)
PY
	[ "$(lsize "$M/d/f")" -eq 11000 ]
	sync -f "$M/d/f"
}

@test "statfs: df works and the name limit is 255" {
	run df -P "$M"
	[ "$status" -eq 0 ]
	[[ "$output" == *"$M"* ]]
	[ "$(stat -f -c %l "$M")" -eq 255 ]
	[ "$(stat -f -c %b "$M")" -gt 0 ]
	[ "$(df --output=fstype "$M" | tail -1)" = fuse.xtsfs ]
}

# ---- concurrency --------------------------------------------------------------

@test "parallel writers on disjoint ranges of one file, with readers meanwhile" {
	N=4
	CH=300007 # ranges share units: writers patch the same units
	mkdata "$R/f" $((N * CH)) 11
	: >"$M/f"
	: >"$T/readerr"
	(
		while [ ! -e "$T/done" ]; do
			cat "$M/f" >/dev/null 2>>"$T/readerr" || echo "read failed" >>"$T/readerr"
			stat "$M/f" >/dev/null 2>>"$T/readerr" || echo "stat failed" >>"$T/readerr"
		done
	) &
	reader=$!
	pids=()
	for k in $(seq 0 $((N - 1))); do
		python3 - "$R/f" "$M/f" "$k" "$CH" <<'PY' &
import os, sys
src, dst, k, ch = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
data = open(src, 'rb').read()[k * ch:(k + 1) * ch]
fd = os.open(dst, os.O_WRONLY)
off, step = 0, 777 + 1000 * k
while off < len(data):
    os.pwrite(fd, data[off:off + step], k * ch + off)
    off += step
os.close(fd)
PY
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p"; done
	touch "$T/done"
	wait "$reader"
	[ ! -s "$T/readerr" ] || { cat "$T/readerr"; false; }
	cmp "$M/f" "$R/f"
	remount "$C" "$M"
	cmp "$M/f" "$R/f"
}

@test "parallel dd writers on disjoint 1 MiB ranges" {
	mkdata "$R/src" $((4 * 1048576)) 12
	: >"$M/f"
	for k in 0 1 2 3; do
		dd if="$R/src" of="$M/f" bs=64k skip=$((k * 16)) seek=$((k * 16)) count=16 conv=notrunc status=none &
	done
	wait
	cmp "$M/f" "$R/src"
}

@test "parallel creates, renames, links, unlinks, mkdirs in one directory stay consistent" {
	mkdir "$M/d"
	for k in 1 2 3 4 5 6; do
		python3 - "$M/d" "$k" <<'PY' >"$T/meta.$k" 2>&1 &
import errno, os, random, sys
d, k = sys.argv[1], int(sys.argv[2])
r = random.Random(k)
names = ['s%d' % i for i in range(10)] + [('L%d' % i) * 90 for i in range(10)]
ok = (errno.ENOENT, errno.EEXIST, errno.EISDIR, errno.ENOTDIR, errno.ENOTEMPTY, errno.EPERM)
for i in range(800):
    a, b = os.path.join(d, r.choice(names)), os.path.join(d, r.choice(names))
    op = r.choice(['create', 'write', 'rename', 'unlink', 'mkdir', 'rmdir', 'link'])
    try:
        if op == 'create': open(a, 'a').close()
        elif op == 'write':
            with open(a, 'ab') as f: f.write(b'x' * r.randrange(1, 5000))
        elif op == 'rename': os.rename(a, b)
        elif op == 'unlink': os.unlink(a)
        elif op == 'mkdir': os.mkdir(a)
        elif op == 'rmdir': os.rmdir(a)
        elif op == 'link': os.link(a, b)
    except OSError as e:
        if e.errno not in ok:
            print(op, e)
PY
	done
	wait
	cat "$T"/meta.*
	[ -z "$(cat "$T"/meta.*)" ]
	ld=$(lower_of "$M/d")
	sidecars_ok "$ld"
	n=$(ls -A "$M/d" | wc -l)
	[ "$n" -eq $(($(user_names "$ld" | wc -l) + $(lower_names "$ld" | grep -c '^xtsfs\.long\..*\.name$'))) ]
	remount "$C" "$M"
	[ "$(ls -A "$M/d" | wc -l)" -eq "$n" ]
	rm -r "$M/d"
	[ "$(lower_names "$C")" = xtsfs.volume ]
}

@test "O_DIRECT reads and writes" {
	mkdata "$R/src" 1000000 13
	dd if="$R/src" of="$M/d" bs=4096 oflag=direct status=none
	cmp "$M/d" "$R/src"
	dd if="$M/d" of="$T/out" bs=4096 iflag=direct status=none
	cmp "$T/out" "$R/src"
	cp "$R/src" "$R/d"
	mkdata "$T/patch" 2560 15
	for d in "$M" "$R"; do
		# 512-byte direct writes not aligned to the 4096-byte units
		dd if="$T/patch" of="$d/d" bs=512 seek=3 count=5 oflag=direct conv=notrunc status=none
	done
	[ "$(lsize "$M/d")" -eq 1000000 ]
	cmp "$M/d" "$R/d"
	remount "$C" "$M"
	cmp "$M/d" "$R/d"
}

@test "umask applies to new files and directories; single-thread mode works" {
	umount_vol "$M"
	mount_vol "$C" "$M" -s
	(
		umask 027
		for d in "$M" "$R"; do
			touch "$d/f"
			mkdir "$d/dir"
			mkfifo "$d/p"
		done
	)
	for n in f dir p; do
		[ "$(stat -c %a "$M/$n")" = "$(stat -c %a "$R/$n")" ]
	done
	[ "$(stat -c %a "$M/f")" = 640 ]
	[ "$(stat -c %a "$M/dir")" = 750 ]
	mkdata "$R/data" 300000 14
	cp "$R/data" "$M/data"
	cmp "$M/data" "$R/data"
}

# make_all DIR: one object of every create path, each asking for a mode
# that a daemon umask of 022 or 077 would change: open(O_CREAT), mknod
# of a regular file and a fifo, mkdir, a bound socket, names of 161 and
# 255 bytes (the long-name scheme), a symlink.
make_all() {
	python3 - "$1" <<'PY'
import os, socket, stat, sys
d = sys.argv[1]
long161, long255 = "m" * 161, "n" * 255
os.close(os.open(f"{d}/open666", os.O_CREAT | os.O_WRONLY, 0o666))
os.close(os.open(f"{d}/open777", os.O_CREAT | os.O_RDWR | os.O_EXCL, 0o777))
os.close(os.open(f"{d}/{long255}", os.O_CREAT | os.O_WRONLY, 0o620))
os.mknod(f"{d}/mknodreg", stat.S_IFREG | 0o666)
os.mkfifo(f"{d}/fifo", 0o666)
os.mkdir(f"{d}/dir777", 0o777)
os.mkdir(f"{d}/{long161}", 0o770)
os.mkdir(f"{d}/sticky", 0o1777)
os.mkdir(f"{d}/setgid", 0o2775)
s = socket.socket(socket.AF_UNIX)
s.bind(f"{d}/sock")
s.close()
os.symlink("target", f"{d}/link")
PY
}

@test "modes of new objects arrive exactly as asked, every create path, under any umask of the caller or the daemon" {
	local um dum n want got
	for dum in 022 077; do
		umount_vol "$M"
		(umask "$dum" && mount_vol "$C" "$M")
		for um in 000 002 077; do
			rm -rf "$M/u$um" "$R/u$um"
			mkdir -m 777 "$M/u$um" "$R/u$um"
			(umask "$um" && make_all "$M/u$um" && make_all "$R/u$um")
			for n in $(ls -A "$R/u$um"); do
				want=$(stat -c '%A %F' "$R/u$um/$n")
				got=$(stat -c '%A %F' "$M/u$um/$n")
				[ "$got" = "$want" ] || {
					echo "daemon umask $dum, caller umask $um," \
						"${n:0:20}: $got, the reference directory gives $want"
					return 1
				}
			done
		done
		# the first round's objects read back the same after a remount
		[ "$(stat -c %a "$M/u000/open666")" = 666 ]
		[ "$(stat -c %a "$M/u000/dir777")" = 777 ]
		[ "$(stat -c %a "$M/u002/open666")" = 664 ]
	done
}

# ---- tools --------------------------------------------------------------------

# mktree DIR: a small tree with the file types tools care about.
mktree() {
	local d=$1
	mkdir -p "$d"
	cp -r "$BATS_TEST_DIRNAME/../../src" "$d/src"
	cp -r "$BATS_TEST_DIRNAME/../../doc" "$d/doc"
	mkdir -p "$d/empty/dir" "$d/long"
	mkdata "$d/bin" 300000 9
	: >"$d/zero"
	echo secret >"$d/private"
	chmod 600 "$d/private"
	ln -s src/fs "$d/link"
	ln -s nowhere "$d/dangling"
	ln "$d/bin" "$d/hardlink"
	echo long >"$d/long/$(printf 'L%.0s' $(seq 1 240))"
	touch -d '2010-10-10 10:10:10.123456789' "$d/zero"
}

@test "tar: extract into and create from the mount" {
	mktree "$T/tree"
	tar -C "$T/tree" -cf "$T/in.tar" .
	mkdir "$M/x"
	tar -C "$M/x" -xf "$T/in.tar"
	diff -r --no-dereference "$T/tree" "$M/x"
	tar -C "$T/tree" -df "$T/in.tar"
	tar -C "$M/x" -df "$T/in.tar"
	tar -C "$M/x" -cf "$T/out.tar" .
	mkdir "$R/y"
	tar -C "$R/y" -xf "$T/out.tar"
	diff -r --no-dereference "$T/tree" "$R/y"
	tar -C "$T/tree" -df "$T/out.tar"
	[ "$(stat -c %h "$M/x/bin")" -eq 2 ]
	remount "$C" "$M"
	tar -C "$M/x" -df "$T/in.tar"
}

@test "cp -a and rsync -a a tree in; diff -r, modes, times" {
	# --modify-window=-1: rsync compares times to the nanosecond (by
	# default to the second, and then may not set a symlink's time)
	mktree "$T/tree"
	cp -a "$T/tree" "$M/cp"
	diff -r --no-dereference "$T/tree" "$M/cp"
	diff <(cd "$T/tree" && find . ! -type d -printf '%P %y %m %s %T@ %l\n' | LC_ALL=C sort) \
	     <(cd "$M/cp" && find . ! -type d -printf '%P %y %m %s %T@ %l\n' | LC_ALL=C sort)
	rsync --modify-window=-1 -aH "$T/tree/" "$M/rs/"
	diff -r --no-dereference "$T/tree" "$M/rs"
	diff <(cd "$T/tree" && find . ! -type d -printf '%P %y %m %s %T@ %l\n' | LC_ALL=C sort) \
	     <(cd "$M/rs" && find . ! -type d -printf '%P %y %m %s %T@ %l\n' | LC_ALL=C sort)
	# a second rsync finds nothing to do
	[ -z "$(rsync --modify-window=-1 -aHi "$T/tree/" "$M/rs/")" ]
	# changed file: rsync's delta transfer in place
	mkdata "$T/tree/bin" 300000 10
	rsync --modify-window=-1 -aH --inplace "$T/tree/" "$M/rs/"
	cmp "$T/tree/bin" "$M/rs/bin"
	rsync --modify-window=-1 -aH "$M/rs/" "$R/back/"
	diff -r --no-dereference "$T/tree" "$R/back"
	remount "$C" "$M"
	diff -r --no-dereference "$T/tree" "$M/rs"
}

@test "git: init, add, commit, clone, fsck inside the mount" {
	command -v git || skip "git is not installed"
	mktree "$M/repo"
	cd "$M/repo"
	git init -q
	git add -A
	git -c user.name=t -c user.email=t@example.org commit -qm "first"
	echo change >>doc/FORMAT.md
	git -c user.name=t -c user.email=t@example.org commit -qam "second"
	[ "$(git rev-list --count HEAD)" -eq 2 ]
	git fsck --strict
	git gc -q
	git fsck --strict
	cd "$M"
	git clone -q repo clone
	# git keeps no empty directories
	diff -r --no-dereference --exclude=.git --exclude=empty repo clone
	[ "$(git -C clone log --format=%s | tr '\n' ' ')" = "second first " ]
	cd /
	remount "$C" "$M"
	git -C "$M/clone" fsck --strict
	[ -z "$(git -C "$M/repo" status --porcelain)" ]
}

@test "compile and run a C program inside the mount" {
	cat >"$M/hello.c" <<'C'
#include <stdio.h>
int main(void) { puts("hello from xtsfs"); return 0; }
C
	cc -O1 -o "$M/hello" "$M/hello.c"
	[ "$("$M/hello")" = "hello from xtsfs" ]
	remount "$C" "$M"
	[ "$("$M/hello")" = "hello from xtsfs" ]
}

@test "sqlite3: a database in the mount, rollback journal and WAL" {
	command -v sqlite3 || skip "sqlite3 is not installed"
	for mode in delete wal; do
		db="$M/$mode.db"
		sqlite3 "$db" "PRAGMA journal_mode=$mode; CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT);" >/dev/null
		sqlite3 "$db" "BEGIN; WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x<5000) INSERT INTO t SELECT x, hex(randomblob(50)) FROM c; COMMIT;"
		sqlite3 "$db" "UPDATE t SET b='changed' WHERE a % 7 = 0; DELETE FROM t WHERE a % 11 = 0;"
		[ "$(sqlite3 "$db" 'PRAGMA integrity_check;')" = ok ]
		[ "$(sqlite3 "$db" 'SELECT count(*) FROM t;')" -eq 4546 ]
	done
	remount "$C" "$M"
	for mode in delete wal; do
		[ "$(sqlite3 "$M/$mode.db" 'PRAGMA integrity_check;')" = ok ]
		[ "$(sqlite3 "$M/$mode.db" "SELECT count(*) FROM t WHERE b='changed';")" -eq 650 ]
	done
}

# ---- xattrs, read-only, mount options ------------------------------------------

@test "xattrs: user.* works (issue 17); security.* is refused; the cipher directory shows no plaintext of either" {
	echo x >"$M/f"
	setfattr -n user.colour -v ultramarine "$M/f"
	[ "$(getfattr --only-values -n user.colour "$M/f")" = ultramarine ]
	run getfattr -n user.missing "$M/f"
	[ "$status" -ne 0 ]
	[[ "$output" == *"No such attribute"* ]]
	run setfattr -n security.test -v 1 "$M/f"
	[ "$status" -ne 0 ]
	[[ "$output" == *"Operation not supported"* ]]
	run getfattr -d -m - "$M/f"
	[[ "$output" == *"user.colour"* ]]
	[[ "$output" != *"security."* ]]
	run getfattr -R -d -m - "$T/c"
	[[ "$output" != *colour* && "$output" != *ultramarine* ]]
	[[ "$output" == *"user.xtsfs."* ]]
}

@test "-o ro: reads work, every write fails with EROFS" {
	mkdir "$M/d"
	echo data >"$M/f"
	umount_vol "$M"
	mount_vol "$C" "$M" -o ro
	[ "$(cat "$M/f")" = data ]
	[ "$(ls -A "$M" | LC_ALL=C sort | tr '\n' ' ')" = "d f " ]
	for cmd in "echo x >'$M/f'" "echo x >>'$M/f'" "echo x >'$M/new'" "mkdir '$M/e'" \
		"rm '$M/f'" "rmdir '$M/d'" "mv '$M/f' '$M/g'" "chmod 600 '$M/f'" \
		"truncate -s 0 '$M/f'" "touch '$M/f'" "ln -s x '$M/l'" "ln '$M/f' '$M/h'"; do
		run bash -c "$cmd"
		[ "$status" -ne 0 ]
		[[ "$output" == *"Read-only file system"* ]] || { echo "$cmd: $output"; false; }
	done
	[ "$(cat "$M/f")" = data ]
	lo=$(lower_of "$M/f")
	[ "$(lsize "$lo")" -eq "$(lower_for 5)" ]
}

@test "mount refusals: mount point unusable (9); with -f: no volume (5), wrong passphrase (4)" {
	umount_vol "$M"
	mkdir -p "$T/full"
	echo x >"$T/full/file"
	run xtsfs --passfile "$T/pass" "$C" "$T/full"
	[ "$status" -eq 9 ]
	[[ "$output" == *"not empty"* ]]
	: >"$T/afile"
	run xtsfs --passfile "$T/pass" "$C" "$T/afile"
	[ "$status" -eq 9 ]
	run xtsfs --passfile "$T/pass" "$C" "$T/missing"
	[ "$status" -eq 9 ]
	mkdir "$C/inside"
	run xtsfs --passfile "$T/pass" "$C" "$C/inside"
	[ "$status" -eq 9 ]
	[[ "$output" == *"contain each other"* ]]
	rmdir "$C/inside"
	mkdir -p "$T/outer"
	mkvol "$T/outer/c2"
	run xtsfs --passfile "$T/pass" "$T/outer/c2" "$T/outer"
	[ "$status" -eq 9 ]
	[[ "$output" == *"contain each other"* ]]
	run xtsfs --passfile "$T/pass" "$C" "$C"
	[ "$status" -eq 9 ]
	# in the foreground, the unlock errors give their codes
	mkdir "$T/plain" "$T/m2"
	run xtsfs -f --passfile "$T/pass" "$T/plain" "$T/m2"
	[ "$status" -eq 5 ]
	[[ "$output" == *"no xtsfs volume header"* ]]
	run xtsfs -f --passfile "$T/wrong" "$C" "$T/m2"
	[ "$status" -eq 4 ]
	[[ "$output" == *"wrong passphrase"* ]]
	for d in "$T/full" "$T/m2" "$T/outer" "$M"; do
		refute mountpoint -q "$d"
	done
}

@test "mount refusals as a daemon: no volume (5), wrong passphrase (4), nothing mounted" {
	umount_vol "$M"
	mkdir "$T/plain" "$T/m2"
	run xtsfs --passfile "$T/pass" "$T/plain" "$T/m2"
	[ "$status" -eq 5 ]
	[[ "$output" == *"no xtsfs volume header"* ]]
	[[ "$output" != *"died"* ]]
	run xtsfs --passfile "$T/pass" "$T/nonexistent" "$T/m2"
	[ "$status" -eq 5 ]
	run xtsfs --passfile "$T/wrong" "$C" "$T/m2"
	[ "$status" -eq 4 ]
	[[ "$output" == *"wrong passphrase"* ]]
	[[ "$output" != *"died"* ]]
	refute mountpoint -q "$T/m2"
	refute mountpoint -q "$M"
}

@test "passphrase sources for the mount: -o passfile=, stdin, --volume-key-file; bad -o is usage" {
	echo data >"$M/f"
	umount_vol "$M"
	xtsfs -o passfile="$T/pass" "$C" "$M"
	[ "$(cat "$M/f")" = data ]
	umount_vol "$M"
	xtsfs "$C" "$M" <"$T/pass"
	[ "$(cat "$M/f")" = data ]
	umount_vol "$M"
	mkvol "$T/k" --print-volume-key | grep -E '^[0-9a-f]{8}-' >"$T/volkey"
	mkdir "$T/km"
	track_mount "$T/km"
	xtsfs --volume-key-file "$T/volkey" "$T/k" "$T/km"
	echo keyed >"$T/km/g"
	umount_vol "$T/km"
	xtsfs --passfile "$T/pass" "$T/k" "$T/km"
	[ "$(cat "$T/km/g")" = keyed ]
	run xtsfs --passfile "$T/pass" -o no_such_option "$C" "$M"
	[ "$status" -eq 2 ]
	refute mountpoint -q "$M"
}

@test "xtsfs -f in the background; SIGTERM unmounts cleanly and exits 0" {
	umount_vol "$M"
	start_fg "$C" "$M"
	echo data >"$M/f"
	[ "$(cat "$M/f")" = data ]
	kill -TERM "$DAEMON_PID"
	rc=0
	wait "$DAEMON_PID" || rc=$?
	[ "$rc" -eq 0 ]
	refute mountpoint -q "$M"
	[ -z "$(ls -A "$M")" ]
	mount_vol "$C" "$M"
	[ "$(cat "$M/f")" = data ]
}

@test "allow_other with default_permissions: modes are enforced for other users" {
	umount_vol "$M"
	chmod 755 "$T"
	mount_vol "$C" "$M" -o allow_other
	chmod 755 "$M"
	echo private >"$M/secret"
	chmod 600 "$M/secret"
	echo public >"$M/open"
	chmod 644 "$M/open"
	mkdir -m 700 "$M/closed"
	echo in >"$M/closed/f"
	run su nobody -s /bin/sh -c "cat '$M/secret'"
	[ "$status" -ne 0 ]
	[[ "$output" == *"Permission denied"* ]]
	run su nobody -s /bin/sh -c "cat '$M/open'"
	[ "$status" -eq 0 ]
	[ "$output" = public ]
	run su nobody -s /bin/sh -c "ls '$M/closed'"
	[ "$status" -ne 0 ]
	[[ "$output" == *"Permission denied"* ]]
	run su nobody -s /bin/sh -c "echo x >>'$M/open'"
	[[ "$output" == *"Permission denied"* ]]
	[ "$(cat "$M/open")" = public ]
	# a file nobody creates in a directory it may write belongs to nobody
	mkdir -m 777 "$M/shared"
	su nobody -s /bin/sh -c "echo mine >'$M/shared/n'; mkdir '$M/shared/nd'"
	[ "$(stat -c %U "$M/shared/n")" = nobody ]
	[ "$(stat -c %U "$(lower_of "$M/shared/n")")" = nobody ]
	[ "$(stat -c %U "$M/shared/nd")" = nobody ]
}

@test "set-user-ID and set-group-ID bits go as on a native filesystem: chown, another user's write, truncate or O_TRUNC open, root's write" {
	umount_vol "$M"
	chmod 755 "$T"
	mount_vol "$C" "$M" -o allow_other
	chmod 755 "$M" "$R"
	for d in "$M" "$R"; do
		printf x >"$d/chowned"
		chmod 6755 "$d/chowned"
		chown nobody "$d/chowned"
		printf x >"$d/written"
		chmod 6777 "$d/written"
		su nobody -s /bin/sh -c "printf y >>'$d/written'"
		printf x >"$d/truncated"
		chmod 6777 "$d/truncated"
		su nobody -s /bin/sh -c "truncate -s 0 '$d/truncated'"
		printf x >"$d/otrunc"
		chmod 6777 "$d/otrunc"
		su nobody -s /bin/sh -c ": >'$d/otrunc'"
		printf x >"$d/rootwrite"
		chmod 6755 "$d/rootwrite"
		printf y >>"$d/rootwrite"
	done
	for f in chowned written truncated otrunc rootwrite; do
		echo "$f: $(stat -c %a "$M/$f") here, $(stat -c %a "$R/$f") native"
		[ "$(stat -c %a "$M/$f")" = "$(stat -c %a "$R/$f")" ]
		# and what the lower file says (after the kernel's attribute cache)
		[ "$(stat -c %a "$(lower_of "$M/$f")")" = "$(stat -c %a "$R/$f")" ]
	done
	[ "$(stat -c %a "$R/rootwrite")" = 6755 ] # root keeps them
}

@test "allow_other: what another user creates in a setgid directory gets the directory's group" {
	umount_vol "$M"
	chmod 755 "$T"
	mount_vol "$C" "$M" -o allow_other
	chmod 755 "$M"
	for d in "$M" "$R"; do
		mkdir "$d/sg"
		chgrp users "$d/sg"
		chmod 2777 "$d/sg"
	done
	chmod 755 "$R"
	for d in "$M" "$R"; do
		su nobody -s /bin/sh -c "touch '$d/sg/f'; mkdir '$d/sg/d'; mkfifo '$d/sg/p'; ln -s x '$d/sg/l'"
	done
	for n in f d p l; do
		[ "$(stat -c '%U %G %A' "$M/sg/$n")" = "$(stat -c '%U %G %A' "$R/sg/$n")" ]
	done
	[ "$(stat -c %G "$M/sg/f")" = users ]
}


# Since the daemon asks for FUSE_PARALLEL_DIROPS, the kernel sends the
# lookups and listings of one directory in parallel: each must still get
# exactly what the directory holds (short and long names, subdirectories,
# symlinks), also while a node is found by a lookup and a listing at once.
@test "parallel lookups and listings of one directory give exact answers" {
	long=$(printf 'L%.0s' $(seq 1 200))
	for d in "$M" "$R"; do
		mkdir "$d/d"
		for i in $(seq 1 600); do
			printf '%s' "$i" >"$d/d/f$i"
		done
		for i in $(seq 1 40); do
			printf '%s' "$i" >"$d/d/$long$i"
			mkdir "$d/d/sub$i"
			ln -s "f$i" "$d/d/l$i"
		done
	done
	for pass in cold warm; do
		[ "$pass" = cold ] && remount "$C" "$M"
		for d in "$M" "$R"; do
			(cd "$d/d" && ls -A | LC_ALL=C sort) >"$T/names.$pass"
			pids=()
			for j in 0 1 2 3; do
				(cd "$d/d" && awk -v j=$j 'NR % 4 == j' "$T/names.$pass" |
					xargs stat -c '%n %s %F %h' >"$T/stat.$j.$(basename "$d")") &
				pids+=($!)
			done
			for j in 0 1; do
				(cd "$d/d" && ls -lA --time-style=+ | awk '{print $1, $2, $5, $NF}' |
					LC_ALL=C sort >"$T/ls.$j.$(basename "$d")") &
				pids+=($!)
			done
			for p in "${pids[@]}"; do wait "$p"; done
		done
		for j in 0 1 2 3; do
			diff "$T/stat.$j.ref" "$T/stat.$j.m"
			[ -s "$T/stat.$j.m" ]
		done
		for j in 0 1; do
			# ls's "total" sums the blocks the files take, which in
			# the aligned layout are the lower files' own (a small
			# file's header takes a block of its own): not ext4's
			if [ "$DOFF" != 40 ]; then
				sed -i '/^total /d' "$T/ls.$j.ref" "$T/ls.$j.m"
			fi
			diff "$T/ls.$j.ref" "$T/ls.$j.m"
		done
		[ "$(wc -l <"$T/names.$pass")" -eq 720 ]
	done
}

# count_ops LOG OPCODE: how many requests of OPCODE a -d log shows.
count_ops() {
	grep -c "opcode: $2 " "$1" || true
}

# listing_run OPTS...: mount $C on $M with -d and OPTS, list and sync
# directories, unmount; the requests in $T/daemon.log, the listings in
# $O/list ($O: not $T, whose mtime shows as the root's "..").
listing_run() {
	start_fg "$C" "$M" -d "$@"
	{
		find "$M" | LC_ALL=C sort
		ls -laR --time-style=full-iso "$M" | sed "s|$M||"
		ls -la "$M/big" | wc -l
		# seekdir back to a position telldir gave, in the big directory
		python3 - "$M/big" <<'PY'
import ctypes, ctypes.util, sys
libc = ctypes.CDLL(ctypes.util.find_library("c"))
libc.opendir.restype = ctypes.c_void_p
libc.readdir.restype = ctypes.c_void_p
libc.readdir.argtypes = [ctypes.c_void_p]
libc.telldir.restype = ctypes.c_long
libc.telldir.argtypes = [ctypes.c_void_p]
libc.seekdir.argtypes = [ctypes.c_void_p, ctypes.c_long]
libc.closedir.argtypes = [ctypes.c_void_p]
d = libc.opendir(sys.argv[1].encode())
name = lambda e: ctypes.string_at(e + 19).decode()
for _ in range(700):
    libc.readdir(d)
pos = libc.telldir(d)
a = [name(libc.readdir(d)) for _ in range(5)]
libc.seekdir(d, pos)
b = [name(libc.readdir(d)) for _ in range(5)]
libc.closedir(d)
assert a == b, (a, b)
print("seekdir ok")
PY
		# fsync of a directory (FSYNCDIR, with or without a handle)
		python3 -c 'import os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); os.fsync(fd); os.close(fd); print("fsyncdir ok")' "$M/big"
	} >"$O/list"
	fusermount3 -u "$M"
	wait "$DAEMON_PID"
	cp "$T/daemon.log" "$O/d.log"
}

@test "listings without OPENDIR where changes are notified: the same answers as with a handle per opendir, and none sent" {
	long=$(printf 'N%.0s' $(seq 1 230))
	mkdir -p "$M/big" "$M/a/b/c"
	# more entries than one READDIR reply holds: the listing resumes at
	# the kernel's offsets, each time in a newly opened lower directory
	for i in $(seq 1 1500); do
		: >"$M/big/file-$i"
	done
	for i in $(seq 1 30); do
		: >"$M/big/$long$i"
		ln -s "file-$i" "$M/a/b/c/l$i"
	done
	umount_vol "$M"
	O=$T/out
	mkdir "$O"
	listing_run
	mv "$O/list" "$O/list.default"
	mv "$O/d.log" "$O/log.default"
	for o in dirhandles nonotify sharedstorage; do
		listing_run -o "$o"
		diff "$O/list.default" "$O/list"
		# each opendir went to the daemon, and was released
		[ "$(count_ops "$O/d.log" OPENDIR)" -ge 8 ]
		[ "$(count_ops "$O/d.log" RELEASEDIR)" -eq "$(count_ops "$O/d.log" OPENDIR)" ]
	done
	grep -qx 'seekdir ok' "$O/list.default"
	grep -qx 'fsyncdir ok' "$O/list.default"
	[ "$(grep -c "/big/file-" "$O/list.default")" -eq 1500 ]
	[ "$(grep -c "/big/$long" "$O/list.default")" -eq 30 ]
	# by default one OPENDIR, answered ENOSYS, and no RELEASEDIR: the
	# kernel opens directories by itself from then on
	[ "$(count_ops "$O/log.default" OPENDIR)" -eq 1 ]
	[ "$(count_ops "$O/log.default" RELEASEDIR)" -eq 0 ]
	[ "$(count_ops "$O/log.default" FSYNCDIR)" -eq 1 ]
	[ "$(count_ops "$O/log.default" READDIRPLUS)" -gt 0 ]
}

# noopen_ops DIR: the same file operations in DIR (the mount, or $R): each
# size class read, overwritten with O_TRUNC, appended to, written in the
# middle, cut, grown, copied, and a file made; what ends in DIR is then
# compared.
noopen_ops() {
	local d=$1 s
	for s in "${SIZES[@]}"; do
		cat "$d/f$s" >/dev/null
	done
	echo short >"$d/f4097"
	printf 'more' >>"$d/f4096"
	printf 'XYZ' | dd of="$d/f1048579" bs=1 seek=5000 conv=notrunc status=none
	truncate -s 3000 "$d/f4095"
	truncate -s 70000 "$d/f17"
	cp "$d/f1048579" "$d/copy"
	mkdata "$d/new" 12345 7
	: >"$d/f16"
}

@test "-o noopen: files read, written, cut and made with no OPEN or RELEASE, and the same contents as ext4's" {
	for s in "${SIZES[@]}"; do
		mkdata "$R/f$s" "$s" "$s"
		cp "$R/f$s" "$M/f$s"
	done
	umount_vol "$M"
	start_fg "$C" "$M" -d -o noopen
	noopen_ops "$M"
	noopen_ops "$R"
	for f in "$R"/*; do
		cmp "$f" "$M/${f##*/}"
	done
	[ "$(ls "$M" | wc -l)" -eq "$(ls "$R" | wc -l)" ]
	fusermount3 -u "$M"
	wait "$DAEMON_PID"
	# one OPEN, answered ENOSYS, one FLUSH likewise; the kernel opens
	# and closes files by itself from then on, the made ones too
	[ "$(count_ops "$T/daemon.log" OPEN)" -eq 1 ]
	[ "$(count_ops "$T/daemon.log" FLUSH)" -eq 1 ]
	[ "$(count_ops "$T/daemon.log" RELEASE)" -eq 0 ]
	[ "$(count_ops "$T/daemon.log" CREATE)" -eq 2 ]
	[ "$(count_ops "$T/daemon.log" READ)" -gt 0 ]
	# and what was written is what a mount with OPEN reads
	mount_vol "$C" "$M"
	for f in "$R"/*; do
		cmp "$f" "$M/${f##*/}"
	done
}

@test "-o noopen out of descriptors: the handles of files read are closed first, and the kernel keeps their pages" {
	mkdir "$M/d"
	for i in $(seq 1 150); do echo "file $i" >"$M/d/f$i"; done
	umount_vol "$M"
	start_fg "$C" "$M" -d -o noopen
	# a descriptor per file the kernel knows and one per file read: 300
	# wanted, 200 allowed
	prlimit --pid "$DAEMON_PID" --nofile=200:200
	for i in $(seq 1 150); do
		[ "$(cat "$M/d/f$i")" = "file $i" ]
	done
	reads=$(count_ops "$T/daemon.log" READ)
	[ "$reads" -ge 150 ]
	# read again: from the kernel's cache, nothing forgotten (without
	# bare_reclaim() the kernel is told to forget, and all 150 are read
	# again). Now and then 6.18 sends a READ for a page that fincore(1)
	# showed resident just before, with no attribute change, no
	# notification, FORGET or page reclaim in between, with or without
	# the descriptor limit: 1 to 5 of the 150, in 1 run in 10 as written
	# and 6 in 20 with a stat and a 1.2 s pause before (2026-12-05)
	for i in $(seq 1 150); do
		[ "$(cat "$M/d/f$i")" = "file $i" ]
	done
	again=$(($(count_ops "$T/daemon.log" READ) - reads))
	echo "read again: $again of 150"
	[ "$again" -le 10 ]
	# and writes still find a descriptor
	for i in $(seq 1 150); do echo "again $i" >>"$M/d/f$i"; done
	[ "$(tail -n 1 "$M/d/f150")" = "again 150" ]
	fusermount3 -u "$M"
	wait "$DAEMON_PID"
	# the kernel was never asked to forget a file (the unmount's summary
	# would say so), nor did a request fail for want of a descriptor
	refute grep -q "file descriptors" "$T/daemon.log"
}
