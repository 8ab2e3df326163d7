#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# A lost volume header (FORMAT.md 2.6, 2.7): the volume key alone opens
# the volume and writes a new header; header backups and restores; every
# wrong guess refused, never mounted as garbage.

load helpers

setup() {
	common_setup
	chmod 600 "$T/pass" "$T/pass2" "$T/wrong"
}
teardown() { common_teardown; }

# vol_with_data DIR [mkfs args...]: a volume with a few files through a
# mount, its version 2 key text in $T/key (mode 0600).
vol_with_data() {
	local dir=$1
	shift
	mkvol "$dir" --print-volume-key "$@" >"$T/mkfs.out"
	sed -n '/^xtsfs-key v2/,/^check=/p' "$T/mkfs.out" >"$T/key"
	chmod 600 "$T/key"
	mount_vol "$dir" "$T/m"
	echo hello >"$T/m/a.txt"
	mkdir "$T/m/sub"
	head -c 100000 /dev/urandom >"$T/m/sub/big"
	(cd "$T/m" && sha256sum a.txt sub/big) >"$dir.sums"
	umount_vol "$T/m"
}

# key_mount DIR KEY: run xtsfs with the key file KEY on $T/m (tracked).
key_mount() {
	mkdir -p "$T/m"
	track_mount "$T/m"
	run xtsfs --volume-key-file "$2" "$1" "$T/m"
}

# check_data MNT [DIR]: the files vol_with_data DIR (default $T/v)
# wrote, unchanged.
check_data() {
	(cd "$1" && sha256sum -c --quiet "${2:-$T/v}.sums")
}

@test "mkfs prints a version 2 key text: description, 10 lines, check value" {
	vol_with_data "$T/v"
	[ "$(wc -l <"$T/key")" -eq 12 ]
	uuid=$(xtsfs-info --json "$T/v" | python3 -c 'import json,sys; print(json.load(sys.stdin)["uuid"])')
	head -1 "$T/key" | grep -qx "xtsfs-key v2 format=2 flags=0x00000000 uuid=$uuid"
	tail -1 "$T/key" | grep -qE '^check=[0-9a-f]{8}$'
	run xtsfs-passwd --test --volume-key-file "$T/key" "$T/v"
	[ "$status" -eq 0 ]
	# and passwd prints the same text again
	run xtsfs-passwd --print-volume-key --passfile "$T/pass" "$T/v"
	[ "$status" -eq 0 ]
	[ "$output" = "$(cat "$T/key")" ]
}

@test "a deleted header: the key alone mounts, then --repair writes a new header with the same UUID" {
	vol_with_data "$T/v"
	uuid=$(xtsfs-info --json "$T/v" | python3 -c 'import json,sys; print(json.load(sys.stdin)["uuid"])')
	rm "$T/v/xtsfs.volume"
	run xtsfs --passfile "$T/pass" "$T/v" "$T/m"
	[ "$status" -eq 5 ]
	key_mount "$T/v" "$T/key"
	[ "$status" -eq 0 ]
	[[ "$output" == *"warning: $T/v has no volume header; opened with the volume key alone"* ]]
	[[ "$output" == *"xtsfs-passwd --repair --volume-key-file $T/key $T/v"* ]]
	check_data "$T/m"
	echo more >"$T/m/new"
	umount_vol "$T/m"
	# other actions want a header first
	run xtsfs-passwd --add --volume-key-file "$T/key" --new-passfile "$T/pass2" "$T/v"
	[ "$status" -eq 5 ]
	[[ "$output" == *"has no usable header; write one first"* ]]
	run xtsfs-passwd --backup-header "$T/hb" --volume-key-file "$T/key" "$T/v"
	[ "$status" -eq 5 ]
	[ ! -e "$T/hb" ]
	run xtsfs-passwd --repair "${KDF[@]}" --volume-key-file "$T/key" --new-passfile "$T/pass2" "$T/v"
	[ "$status" -eq 0 ]
	[[ "$output" == *"Wrote a new header $T/v/xtsfs.volume with key slot 0"* ]]
	run xtsfs-info --json "$T/v"
	echo "$output" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["uuid"]=="'"$uuid"'" and d["plaintext_names"] is False and d["copies"]==["ok","ok"], d'
	# the new passphrase mounts; the old header's passphrase is gone with it
	run xtsfs-passwd --test --passfile "$T/pass" "$T/v"
	[ "$status" -eq 4 ]
	xtsfs --passfile "$T/pass2" "$T/v" "$T/m"
	check_data "$T/m"
	[ "$(cat "$T/m/new")" = more ]
	umount_vol "$T/m"
	# and the key text still fits the new header
	run xtsfs-passwd --test --volume-key-file "$T/key" "$T/v"
	[ "$status" -eq 0 ]
}

@test "both header copies corrupt: the key stands in as for a deleted header" {
	vol_with_data "$T/v"
	chmod 600 "$T/v/xtsfs.volume"
	head -c 8192 /dev/urandom >"$T/v/xtsfs.volume"
	run xtsfs-passwd --test --passfile "$T/pass" "$T/v"
	[ "$status" -eq 6 ]
	key_mount "$T/v" "$T/key"
	[ "$status" -eq 0 ]
	[[ "$output" == *"a volume header corrupt in both copies"* ]]
	check_data "$T/m"
	umount_vol "$T/m"
	run xtsfs-passwd --repair "${KDF[@]}" --volume-key-file "$T/key" --new-passfile "$T/pass" "$T/v"
	[ "$status" -eq 0 ]
	run xtsfs-passwd --test --passfile "$T/pass" "$T/v"
	[ "$status" -eq 0 ]
}

@test "a plaintext-names volume: the key's flags say so, and a deleted header is rebuilt with them" {
	vol_with_data "$T/v" --plaintext-names
	head -1 "$T/key" | grep -q 'flags=0x00000001'
	rm "$T/v/xtsfs.volume"
	key_mount "$T/v" "$T/key"
	[ "$status" -eq 0 ]
	[[ "$output" == *"(plaintext names)"* ]]
	check_data "$T/m" "$T/v"
	umount_vol "$T/m"
	xtsfs-passwd -q --repair "${KDF[@]}" --volume-key-file "$T/key" --new-passfile "$T/pass" "$T/v"
	run xtsfs-info "$T/v"
	[[ "$output" == *"names:           plaintext"* ]]
}

@test "wrong guesses are refused, not mounted as garbage" {
	vol_with_data "$T/p" --plaintext-names
	cp "$T/key" "$T/pkey"
	rm "$T/p/xtsfs.volume"
	vol_with_data "$T/v"
	rm "$T/v/xtsfs.volume"
	mkdir -p "$T/m"
	track_mount "$T/m"
	# the flags edited by hand under the old check value: a typo
	sed '1s/flags=0x00000000/flags=0x00000001/' "$T/key" >"$T/k1"
	chmod 600 "$T/k1"
	run xtsfs --volume-key-file "$T/k1" "$T/v" "$T/m"
	[ "$status" -eq 8 ]
	[[ "$output" == *"the check value does not match the key"* ]]
	# one digit of the key copied wrong
	python3 - "$T/key" "$T/k2" <<'PY'
import sys
lines = open(sys.argv[1]).read().split('\n')
c = lines[4][0]
lines[4] = ('1' if c == '0' else '0') + lines[4][1:]
open(sys.argv[2], 'w').write('\n'.join(lines))
PY
	chmod 600 "$T/k2"
	run xtsfs --volume-key-file "$T/k2" "$T/v" "$T/m"
	[ "$status" -eq 8 ]
	# plaintext names guessed by hand, without a check value
	sed '1s/flags=0x00000000/flags=0x00000001/; /^check=/d' "$T/key" >"$T/k3"
	chmod 600 "$T/k3"
	run xtsfs --volume-key-file "$T/k3" "$T/v" "$T/m"
	[ "$status" -eq 4 ]
	[[ "$output" == *"the volume has encrypted names, not plaintext names"* ]]
	# encrypted names guessed for a plaintext-names volume
	sed '1s/flags=0x00000001/flags=0x00000000/; /^check=/d' "$T/pkey" >"$T/k4"
	chmod 600 "$T/k4"
	run xtsfs --volume-key-file "$T/k4" "$T/p" "$T/m"
	[ "$status" -eq 4 ]
	[[ "$output" == *"names that are not encrypted"* ]]
	# another volume's key
	run xtsfs --volume-key-file "$T/pkey" "$T/v" "$T/m"
	[ "$status" -eq 4 ]
	! mountpoint -q "$T/m"
}

@test "a version 1 key (bare hex): enough when the names prove it, refused on an empty volume" {
	vol_with_data "$T/v"
	grep -E '^[0-9a-f]{8}-' "$T/key" >"$T/k1"
	chmod 600 "$T/k1"
	rm "$T/v/xtsfs.volume"
	mkdir -p "$T/m"
	track_mount "$T/m"
	xtsfs --volume-key-file "$T/k1" "$T/v" "$T/m"
	check_data "$T/m"
	umount_vol "$T/m"
	# no UUID in a version 1 key: --print-volume-key wants a header first
	run xtsfs-passwd --print-volume-key --volume-key-file "$T/k1" "$T/v"
	[ "$status" -eq 5 ]
	xtsfs-passwd -q --repair "${KDF[@]}" --volume-key-file "$T/k1" --new-passfile "$T/pass" "$T/v"
	run xtsfs-passwd --print-volume-key --passfile "$T/pass" "$T/v"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "xtsfs-key v2 format=2 flags=0x00000000 uuid="* ]]
	# an empty volume proves nothing
	mkvol "$T/e" --print-volume-key | grep -E '^[0-9a-f]{8}-' >"$T/ke"
	chmod 600 "$T/ke"
	rm "$T/e/xtsfs.volume"
	run xtsfs --volume-key-file "$T/ke" "$T/e" "$T/m"
	[ "$status" -eq 5 ]
	[[ "$output" == *"it is a version 1 key (bare hex digits)"* ]]
}

@test "header backup and restore: checked, this volume's only, old passphrases come back" {
	vol_with_data "$T/v"
	vol_with_data "$T/w"
	run xtsfs-passwd --backup-header "$T/hb" --passfile "$T/pass" "$T/v"
	[ "$status" -eq 0 ]
	[[ "$output" == *"Saved the header of $T/v (UUID "*", 1 key slot) to $T/hb"* ]]
	[ "$(stat -c '%s %a' "$T/hb")" = "8192 600" ]
	cmp "$T/hb" "$T/v/xtsfs.volume"
	# never over an existing file
	run xtsfs-passwd --backup-header "$T/hb" --passfile "$T/pass" "$T/v"
	[ "$status" -eq 1 ]
	[[ "$output" == *"File exists"* ]]
	# change the passphrase, then lose the header
	xtsfs-passwd -q --change "${KDF[@]}" --passfile "$T/pass" --new-passfile "$T/pass2" "$T/v"
	rm "$T/v/xtsfs.volume"
	run xtsfs-passwd --restore-header "$T/hb" --passfile "$T/wrong" "$T/v"
	[ "$status" -eq 4 ]
	[ ! -e "$T/v/xtsfs.volume" ]
	run xtsfs-passwd --restore-header "$T/hb" --passfile "$T/pass" "$T/v"
	[ "$status" -eq 0 ]
	[[ "$output" == *"Restored $T/v/xtsfs.volume from $T/hb"* ]]
	mount_vol "$T/v" "$T/m"
	check_data "$T/m"
	umount_vol "$T/m"
	# a backup of another volume: refused by UUID, or by the names
	run xtsfs-passwd --restore-header "$T/hb" --passfile "$T/pass" "$T/w"
	[ "$status" -eq 2 ]
	[[ "$output" == *"is a header of the volume with UUID"* ]]
	rm "$T/w/xtsfs.volume"
	run xtsfs-passwd --restore-header "$T/hb" --passfile "$T/pass" "$T/w"
	[ "$status" -eq 2 ]
	[[ "$output" == *"none of the names in its root decrypts"* ]]
	[ ! -e "$T/w/xtsfs.volume" ]
	# a damaged backup is refused before any passphrase is asked for
	head -c 8192 /dev/zero >"$T/bad"
	run xtsfs-passwd --restore-header "$T/bad" --passfile "$T/pass" "$T/v"
	[ "$status" -eq 6 ]
}

@test "a reverse-mode plaintext directory without its header: refused, restored from a backup" {
	mkdir "$T/plain"
	echo data >"$T/plain/file"
	mkvol "$T/plain" --reverse --print-volume-key >"$T/mkfs.out"
	sed -n '/^xtsfs-key v2/,/^check=/p' "$T/mkfs.out" >"$T/key"
	chmod 600 "$T/key"
	xtsfs-passwd -q --backup-header "$T/hb" --passfile "$T/pass" "$T/plain"
	rm "$T/plain/.xtsfs.volume"
	mkdir -p "$T/m"
	track_mount "$T/m"
	# never mounted forward as if the plaintext were ciphertext
	run xtsfs --volume-key-file "$T/key" "$T/plain" "$T/m"
	[ "$status" -eq 4 ]
	! mountpoint -q "$T/m"
	run xtsfs --reverse --volume-key-file "$T/key" "$T/plain" "$T/m"
	[ "$status" -ne 0 ]
	! mountpoint -q "$T/m"
	xtsfs-passwd -q --restore-header "$T/hb" --passfile "$T/pass" "$T/plain"
	[ -f "$T/plain/.xtsfs.volume" ]
	xtsfs --reverse --passfile "$T/pass" "$T/plain" "$T/m"
	[ -f "$T/m/xtsfs.volume" ]
	umount_vol "$T/m"
}

@test "a deleted header: xtsfs-path and xtsfs-extract work with the key alone too" {
	vol_with_data "$T/v"
	rm "$T/v/xtsfs.volume"
	run xtsfs-extract --volume-key-file "$T/key" "$T/v" "$T/out"
	[ "$status" -eq 0 ]
	[[ "$output" == *"no volume header; opened with the volume key alone"* ]]
	check_data "$T/out"
	run xtsfs-path --volume-key-file "$T/key" "$T/v" sub/big
	[ "$status" -eq 0 ]
	[[ "$output" == *"/xtsfs.dirid"* ]]
	for p in $(printf '%s\n' "$output" | grep -v '^xtsfs-path:'); do
		[ -e "$T/v/$p" ] || [ "$p" = xtsfs.volume ]
	done
	# and a wrong guess is refused there as in the mount
	sed '1s/flags=0x00000000/flags=0x00000001/; /^check=/d' "$T/key" >"$T/k3"
	chmod 600 "$T/k3"
	run xtsfs-extract --volume-key-file "$T/k3" "$T/v" "$T/out2"
	[ "$status" -eq 4 ]
	[ ! -e "$T/out2/a.txt" ]
}
