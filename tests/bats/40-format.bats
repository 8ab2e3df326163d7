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

@test "a tree written through the mount decrypts with the independent decryptor" {
	mkvol "$T/c" --print-volume-key | grep -E '^[0-9a-f]{8}-' >"$T/key"
	mkdir "$T/m" "$T/src"
	make_tree "$T/src"
	xtsfs --passfile "$T/pass" "$T/c" "$T/m"
	track_mount "$T/m"
	cp -a "$T/src/." "$T/m/"
	# rewrite some files in place, as a user would
	printf 'changed' | dd of="$T/m/size-4097" bs=1 seek=4090 conv=notrunc status=none
	printf 'changed' | dd of="$T/src/size-4097" bs=1 seek=4090 conv=notrunc status=none
	truncate -s 3 "$T/m/size-16" "$T/src/size-16"
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
