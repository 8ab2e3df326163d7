#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Volumes of an earlier format keep working (issue 19: the format 2 bump
# of FORMAT.md 4.2). tests/golden/format1.tar.gz was written by the code
# of the last format 1 commit (tests/golden/make-format1.sh); today's
# code must show exactly tests/golden/format1.manifest, check it clean,
# write to it without changing its version, decrypt it with the
# independent decryptor, and upgrade it only when asked.

bats_require_minimum_version 1.5.0

load helpers

G=$BATS_TEST_DIRNAME/../golden

# golden NAME: $T/v is tests/golden/NAME.tar.gz, and nothing else
golden() {
	rm -rf "$T/v" && mkdir "$T/v"
	tar -C "$T/v" --xattrs --xattrs-include='*' --acls --numeric-owner \
		-xzf "$G/$1.tar.gz"
}

setup() {
	common_setup
	golden format1
	cp "$G/format1.pass" "$T/gpass"
	chmod 600 "$T/gpass"
}
teardown() { common_teardown; }

gmount() {
	mkdir -p "$T/m"
	track_mount "$T/m"
	xtsfs --passfile "$T/gpass" "$@" "$T/v" "$T/m"
}

version_of() { od -A n -t u4 -j 8 -N 4 "$T/v/xtsfs.volume" | tr -d ' '; }

# ref_reads REF KEYLINE: the independent decryptor REF, given the volume
# key of $T/v (whose first line matches the regex KEYLINE), reads it as
# format1.manifest says. It makes no hard links and no xattrs: all but
# those are compared.
ref_reads() {
	xtsfs-passwd --print-volume-key --passfile "$T/gpass" "$T/v" >"$T/key"
	grep -q "$2" "$T/key"
	run "$1" --volume-key-file "$T/key" "$T/v" "$T/out"
	echo "$output"
	[ "$status" -eq 0 ]
	local same='/^xattr /d; s/^([a-z] [0-7]+) [0-9]+ /\1 - /'
	"$G/manifest.sh" "$T/out" | sed -E "$same" | LC_ALL=C sort >"$T/got"
	sed -E "$same" "$G/format1.manifest" | LC_ALL=C sort | diff - "$T/got"
}

@test "the format 1 golden volume mounts and shows exactly its manifest" {
	[ "$(version_of)" -eq 1 ]
	gmount -o ro
	"$G/manifest.sh" "$T/m" >"$T/got"
	diff "$G/format1.manifest" "$T/got"
	run xtsfs-info "$T/v"
	[[ $output == *"format version:  1"* ]]
}

@test "format 1: checks clean, takes writes, stays format 1, and its old and new directories work" {
	run -0 xtsfs-fsck --passfile "$T/gpass" "$T/v"
	gmount
	mkdir "$T/m/docs/made-today" "$T/m/new-top"
	echo today >"$T/m/docs/made-today/f"
	echo top >"$T/m/new-top/g"
	mv "$T/m/docs/sub" "$T/m/new-top/sub"
	echo more >>"$T/m/docs/a.txt"
	fusermount3 -u "$T/m"
	[ "$(version_of)" -eq 1 ]
	# a passphrase change keeps the version too
	xtsfs-passwd -q --add "${KDF[@]}" --passfile "$T/gpass" \
		--new-passfile "$T/pass2" "$T/v"
	[ "$(version_of)" -eq 1 ]
	run -0 xtsfs-fsck --passfile "$T/pass2" "$T/v"
	gmount
	[ "$(cat "$T/m/docs/made-today/f")" = today ]
	[ "$(cat "$T/m/new-top/g")" = top ]
	[ "$(sha256sum <"$T/m/new-top/sub/13000" | cut -d' ' -f1)" = \
		"$(awk '$2 == "docs/sub/13000" {print $1}' "$G/format1.manifest")" ]
	[ "$(tail -1 "$T/m/docs/a.txt")" = more ]
}

@test "format 1: the independent decryptor reads it, byte for byte as the mount shows" {
	local ref="$XTSFS_BUILD/tests/xtsfs-decrypt-ref"
	[ -x "$ref" ] || skip "built without OpenSSL 3: no reference decryptor"
	ref_reads "$ref" '^xtsfs-key v2 format=1 '
}

@test "xtsfs-passwd --upgrade: format 1 becomes 2, once; everything still reads" {
	run -0 xtsfs-passwd --upgrade --passfile "$T/gpass" "$T/v"
	[[ $output == *"is now format version 2"* ]]
	[ "$(version_of)" -eq 2 ]
	run -0 xtsfs-passwd --upgrade --passfile "$T/gpass" "$T/v"
	[[ $output == *"is format version 2 already"* ]]
	run -4 xtsfs-passwd --upgrade --passfile "$T/wrong" "$T/v"
	[ "$(version_of)" -eq 2 ]
	gmount -o ro
	"$G/manifest.sh" "$T/m" >"$T/got"
	diff "$G/format1.manifest" "$T/got"
}

# The aligned layout (FORMAT.md 3.4, flag bit 2): tests/golden/aligned.tar.gz
# was made by the commit that added it (tests/golden/make-aligned.sh),
# with populate.sh's tree, so its mount shows format1.manifest too.
@test "the aligned golden volume mounts, shows its tree, checks clean and takes writes" {
	golden aligned
	[ "$(od -A n -t u4 -j 60 -N 4 "$T/v/xtsfs.volume" | tr -d ' ')" -eq 4 ]
	# its data: 4096 + S bytes (FORMAT 3.4), e.g. docs/sub/13000
	[ -n "$(find "$T/v" -type f -size 17096c)" ]
	gmount -o ro
	"$G/manifest.sh" "$T/m" >"$T/got"
	diff "$G/format1.manifest" "$T/got"
	fusermount3 -u "$T/m"
	run -0 xtsfs-fsck --passfile "$T/gpass" "$T/v"
	gmount
	echo more >>"$T/m/docs/a.txt"
	head -c 5000 /dev/urandom >"$T/f"
	cp "$T/f" "$T/m/docs/sub/new"
	fusermount3 -u "$T/m"
	[ -n "$(find "$T/v" -type f -size 9096c)" ]
	gmount -o ro
	cmp "$T/f" "$T/m/docs/sub/new"
	[ "$(tail -1 "$T/m/docs/a.txt")" = more ]
}

@test "the aligned golden volume: the independent decryptor reads it as the mount shows" {
	local ref="$XTSFS_BUILD/tests/xtsfs-decrypt-ref"
	[ -x "$ref" ] || skip "built without OpenSSL 3: no reference decryptor"
	golden aligned
	ref_reads "$ref" '^xtsfs-key v2 format=2 flags=0x00000004 '
}

@test "a volume of a format newer than 2 is refused with a clear message" {
	chmod 600 "$T/v/xtsfs.volume"
	patch_copies "$T/v/xtsfs.volume" 8 03000000
	mkdir "$T/m"
	run -6 xtsfs --passfile "$T/gpass" "$T/v" "$T/m"
	[[ $output == *"format version or feature this xtsfs does not support"* ]]
	! mountpoint -q "$T/m"
}
