#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The format test: a tree written through a real mount is decrypted by
# tests/tools/xtsfs-decrypt-ref, an independent program written from
# doc/FORMAT.md alone (OpenSSL, no code from src/), and must match.

load helpers

setup() {
	common_setup
	REF="$XTSFS_BUILD/tests/xtsfs-decrypt-ref"
	[ -x "$REF" ] || skip "built without OpenSSL 3: no reference decryptor"
}
teardown() { common_teardown; }

# make_tree DIR: every size class, long names, holes, links, a fifo
make_tree() {
	local d=$1 s
	mkdir -p "$d/sub/deeper"
	for s in 0 1 15 16 17 4095 4096 4097 $((1048576 + 3)); do
		head -c "$s" /dev/urandom >"$d/size-$s"
	done
	head -c 5 /dev/urandom >"$d/sub/$(printf 'n%.0s' $(seq 1 160))"
	head -c 9 /dev/urandom >"$d/sub/$(printf 'l%.0s' $(seq 1 255))"
	truncate -s 10M "$d/sparse"
	printf 'middle' | dd of="$d/sparse" bs=1 seek=5000000 conv=notrunc status=none
	echo "deep" >"$d/sub/deeper/file with spaces"
	ln -s sub/deeper "$d/link"
	ln -s "$(printf 'x/%.0s' $(seq 1 1600))y" "$d/longlink"
	ln "$d/size-17" "$d/hardlink"
	mkfifo "$d/fifo"
	chmod 0751 "$d/sub"
	touch -d '2020-01-02 03:04:05' "$d/size-1"
}

# compare DIR1 DIR2: same names, types, contents, link targets
compare_trees() {
	(cd "$1" && find . -printf '%y %p %s %m\n' | sort) >"$T/a.lst"
	(cd "$2" && find . -printf '%y %p %s %m\n' | sort) >"$T/b.lst"
	diff "$T/a.lst" "$T/b.lst"
	diff -r --no-dereference "$1" "$2" 2>&1 | grep -v 'fifo' | { ! grep .; }
}

# write_tree: make_tree in $T/src, mount $T/c on $T/m and copy it in,
# then rewrite some files in place in both, as a user would; left mounted
write_tree() {
	mkdir "$T/m" "$T/src"
	make_tree "$T/src"
	xtsfs --passfile "$T/pass" "$T/c" "$T/m"
	track_mount "$T/m"
	cp -a "$T/src/." "$T/m/"
	printf 'changed' | dd of="$T/m/size-4097" bs=1 seek=4090 conv=notrunc status=none
	printf 'changed' | dd of="$T/src/size-4097" bs=1 seek=4090 conv=notrunc status=none
	truncate -s 3 "$T/m/size-16" "$T/src/size-16"
}

@test "a tree written through the mount decrypts with the independent decryptor" {
	# the whole version 2 key text (2.6), a comment added by its owner
	{ echo '# vault key, printed 2026-12-02'; mkvol "$T/c" --print-volume-key |
		sed -n '/^xtsfs-key v2/,/^check=/p'; } >"$T/key"
	[ "$(wc -l <"$T/key")" -eq 13 ]
	write_tree
	fusermount3 -u "$T/m"
	run "$REF" --volume-key-file "$T/key" "$T/c" "$T/out"
	echo "$output"
	[ "$status" -eq 0 ]
	compare_trees "$T/src" "$T/out"
	[ "$(stat -c %Y "$T/out/size-1")" = "$(stat -c %Y "$T/src/size-1")" ]
}

@test "plaintext-names volume: the independent decryptor agrees too" {
	mkvol "$T/c" --plaintext-names --print-volume-key | grep -E '^[0-9a-f]{8}-' >"$T/key"
	mkdir "$T/m" "$T/src"
	make_tree "$T/src"
	rm "$T/src/longlink" # plaintext names: targets stored as they are
	xtsfs --passfile "$T/pass" "$T/c" "$T/m"
	track_mount "$T/m"
	cp -a "$T/src/." "$T/m/"
	fusermount3 -u "$T/m"
	run "$REF" --volume-key-file "$T/key" "$T/c" "$T/out"
	echo "$output"
	[ "$status" -eq 0 ]
	compare_trees "$T/src" "$T/out"
}

@test "aligned layout: the independent decryptor agrees; each unit is one lower block, after a header block with a hole" {
	mkvol "$T/c" --layout=aligned --print-volume-key |
		sed -n '/^xtsfs-key v2/,/^check=/p' >"$T/key"
	grep -q 'flags=0x00000004' "$T/key"
	write_tree
	# FORMAT 3.4: 4096 + S bytes (40 for a new empty file)
	for s in 0 1 15 17 4095 4096 $((1048576 + 3)); do
		lo=$(find "$T/c" -inum "$(stat -c %i "$T/m/size-$s")" -print -quit)
		[ "$(stat -c %s "$lo")" -eq $((s ? 4096 + s : 40)) ]
	done
	# bytes [40, 4096) are zeros, and a hole: the 1 MiB file takes no
	# more than its data, the header's block and a block of slack
	lo=$(find "$T/c" -inum "$(stat -c %i "$T/m/size-$((1048576 + 3))")" -print -quit)
	cmp -n 4056 <(tail -c +41 "$lo") /dev/zero
	[ "$(stat -c %b "$lo")" -le $(((4096 + 1048576 + 4096 + 4096) / 512)) ]
	# rewriting plaintext block 100 rewrites lower block 101 and no other
	big="size-$((1048576 + 3))"
	cp "$lo" "$T/before"
	head -c 4096 /dev/urandom >"$T/blk"
	for d in "$T/m" "$T/src"; do
		dd if="$T/blk" of="$d/$big" bs=4096 seek=100 conv=notrunc status=none
	done
	fusermount3 -u "$T/m"
	changed=$(cmp -l "$T/before" "$lo" | awk '{print int(($1 - 1) / 4096)}' | sort -u)
	[ "$changed" = 101 ]
	run "$REF" --volume-key-file "$T/key" "$T/c" "$T/out"
	echo "$output"
	[ "$status" -eq 0 ]
	compare_trees "$T/src" "$T/out"
}

@test "the independent decryptor refuses a tampered header and a wrong key" {
	mkvol "$T/c" --print-volume-key | grep -E '^[0-9a-f]{8}-' >"$T/key"
	mkvol "$T/c2" --print-volume-key | grep -E '^[0-9a-f]{8}-' >"$T/key2"
	run "$REF" --volume-key-file "$T/key2" "$T/c" "$T/out"
	[ "$status" -ne 0 ]
	chmod 600 "$T/c/xtsfs.volume"
	patch_copies "$T/c/xtsfs.volume" 60 0100000000000000000000000000000000000000
	run "$REF" --volume-key-file "$T/key" "$T/c" "$T/out2"
	[ "$status" -ne 0 ]
}

# xattr_tree MNT: a directory with a file, a symlink and a fifo, made
# through the mount at MNT, which is then unmounted. Sets LD, LF, LL, LP
# to their lower objects (the one directory of the cipher directory's
# root, and in it the one file, symlink and fifo).
xattr_tree() {
	mkdir "$1/d"
	echo hello >"$1/d/f"
	ln -s f "$1/d/l"
	mkfifo "$1/d/p"
	fusermount3 -u "$1"
	LD=$(find "$T/c" -mindepth 1 -maxdepth 1 -type d)
	LF=$(find "$LD" -mindepth 1 -maxdepth 1 -type f ! -name 'xtsfs.*')
	LL=$(find "$LD" -mindepth 1 -maxdepth 1 -type l)
	LP=$(find "$LD" -mindepth 1 -maxdepth 1 -type p)
	[ -d "$LD" ] && [ -f "$LF" ] && [ -L "$LL" ] && [ -p "$LP" ]
}

# xattr_dump DIR: the user.* and trusted.* xattrs of DIR and d, d/f,
# d/l, d/p below it, values in hex, symlinks not followed
xattr_dump() {
	local p
	for p in . d d/f d/l d/p; do
		echo "== $p"
		(cd "$1" && getfattr -h -d -m '^(user|trusted)\.' -e hex "$p" 2>/dev/null |
			grep -v '^# file:' | sed '/^$/d')
	done
}

# xattr_roundtrip [mkfs args]: xattrs of every kind of object, sealed
# onto the lower objects by the codec, decrypt with the reference
xattr_roundtrip() {
	SEAL="$XTSFS_BUILD/tests/xattr-seal"
	mkvol "$T/c" --print-volume-key "$@" | grep -E '^[0-9a-f]{8}-' >"$T/key"
	mkdir "$T/m"
	xtsfs --passfile "$T/pass" "$T/c" "$T/m"
	track_mount "$T/m"
	xattr_tree "$T/m"
	# the same tree, with the same xattrs in plaintext, for comparison
	mkdir -p "$T/src/d"
	echo hello >"$T/src/d/f"
	ln -s f "$T/src/d/l"
	mkfifo "$T/src/d/p"
	long="user.$(printf 'n%.0s' $(seq 1 160))"
	big="0x$(head -c 3000 /dev/urandom | od -An -v -tx1 | tr -d ' \n')"
	set_both() { # LOWER PLAIN NAME VALUE
		"$SEAL" "$T/key" "$1" "$3" "$4"
		setfattr -h -n "$3" -v "${4:-""}" "$2"
	}
	set_both "$LF" "$T/src/d/f" user.mime_type text/plain
	set_both "$LF" "$T/src/d/f" "$long" "$big"
	set_both "$LF" "$T/src/d/f" trusted.t 0x00ff00
	set_both "$LD" "$T/src/d" user.dir 1
	set_both "$T/c" "$T/src" trusted.root rootvalue
	set_both "$LL" "$T/src/d/l" trusted.link x
	set_both "$LP" "$T/src/d/p" trusted.fifo y
	# an empty value: setfattr stores it with no -v
	"$SEAL" "$T/key" "$LF" user.empty ""
	setfattr -n user.empty "$T/src/d/f"
	# not ours: left alone, and not an error
	setfattr -n user.foreign -v 1 "$LF"
	setfattr -n trusted.overlay.x -v 1 "$LD"
	# nothing of a name or value is visible in the cipher directory
	! getfattr -R -d -m - "$T/c" 2>/dev/null | grep -E 'mime|text/plain|rootvalue|user\.dir'
	run "$REF" --volume-key-file "$T/key" "$T/c" "$T/out"
	echo "$output"
	[ "$status" -eq 0 ]
	xattr_dump "$T/src" >"$T/want"
	xattr_dump "$T/out" >"$T/got"
	diff "$T/want" "$T/got"
	grep -q 'user.empty' "$T/got"
	grep -q "^$long=" "$T/got"
}

@test "xattrs stored by the codec decrypt with the independent decryptor" {
	[ "$(id -u)" = 0 ] || skip "trusted.* xattrs need root"
	xattr_roundtrip
}

@test "plaintext-names volume: xattrs are encrypted all the same" {
	[ "$(id -u)" = 0 ] || skip "trusted.* xattrs need root"
	xattr_roundtrip --plaintext-names
	getfattr -d -m - "$T/c/d/f" | grep -q '^user\.xtsfs\.'
}

@test "the independent decryptor refuses a damaged xattr name and a value moved to another name" {
	SEAL="$XTSFS_BUILD/tests/xattr-seal"
	mkvol "$T/c" --print-volume-key | grep -E '^[0-9a-f]{8}-' >"$T/key"
	mkdir "$T/m"
	xtsfs --passfile "$T/pass" "$T/c" "$T/m"
	track_mount "$T/m"
	xattr_tree "$T/m"
	"$SEAL" "$T/key" "$LF" user.a one
	run "$REF" --volume-key-file "$T/key" "$T/c" "$T/out"
	[ "$status" -eq 0 ]
	# user.a's stored value under user.b's stored name
	la=$("$SEAL" "$T/key" --name user.a)
	lb=$("$SEAL" "$T/key" --name user.b)
	v=$(getfattr --absolute-names -n "$la" -e hex "$LF" | sed -n "s/^$la=//p")
	[ -n "$v" ]
	setfattr -n "$lb" -v "$v" "$LF"
	run "$REF" --volume-key-file "$T/key" "$T/c" "$T/out2"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"user.b: value does not authenticate"* ]]
	setfattr -x "$lb" "$LF"
	# the same for an empty value (V alone)
	"$SEAL" "$T/key" "$LF" user.e ""
	le=$("$SEAL" "$T/key" --name user.e)
	lf=$("$SEAL" "$T/key" --name user.f)
	v=$(getfattr --absolute-names -n "$le" -e hex "$LF" | sed -n "s/^$le=//p")
	[ "${#v}" -eq 34 ]
	setfattr -n "$lf" -v "$v" "$LF"
	run "$REF" --volume-key-file "$T/key" "$T/c" "$T/out4"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"user.f: value does not authenticate"* ]]
	[[ "$output" != *"user.e:"* ]]
	setfattr -x "$lf" "$LF"
	# a marked name that does not decrypt (one character changed)
	bad="${la:0:20}$([ "${la:20:1}" = A ] && echo B || echo A)${la:21}"
	setfattr -n "$bad" -v 0x00112233445566778899aabbccddeeff "$LF"
	run "$REF" --volume-key-file "$T/key" "$T/c" "$T/out3"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"undecryptable xattr name"* ]]
}
