#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# xtsfs-mkfs, xtsfs-passwd and xtsfs-info on real directories: every
# command, every bad input of the volume-header work, crash safety.

load helpers

setup() {
	common_setup
	# the tools warn about a passfile that others can read
	chmod 600 "$T/pass" "$T/pass2" "$T/wrong"
}
teardown() { common_teardown; }

@test "mkfs makes an 8 KiB header, mode 0400, and says what it chose" {
	run xtsfs-mkfs "${KDF[@]}" --passfile "$T/pass" "$T/v"
	[ "$status" -eq 0 ]
	[[ "$output" == *"cipher core:"*"self-test passed"* ]]
	[[ "$output" == *"argon2id, 1 iterations, 64 KiB, 1 lanes"* ]]
	[[ "$output" == *"unlock time:"*"ms on this machine"* ]]
	[ "$(stat -c %s "$T/v/xtsfs.volume")" -eq 8192 ]
	[ "$(stat -c %a "$T/v/xtsfs.volume")" = 400 ]
	[ ! -e "$T/v/xtsfs.volume.tmp" ]
	run xtsfs-passwd --test --passfile "$T/pass" "$T/v"
	[ "$status" -eq 0 ]
}

@test "mkfs calibrates Argon2id to --unlock-time with at least 64 MiB" {
	run xtsfs-mkfs --unlock-time 300 --argon2-lanes 1 --passfile "$T/pass" "$T/v"
	[ "$status" -eq 0 ]
	mem=$(xtsfs-info --json "$T/v" | python3 -c 'import json,sys; print(json.load(sys.stdin)["slots"][0]["memory_kib"])')
	[ "$mem" -ge 65536 ]
}

@test "mkfs refuses a directory that already holds a volume" {
	mkvol "$T/v"
	run xtsfs-mkfs "${KDF[@]}" --passfile "$T/pass" --force "$T/v"
	[ "$status" -eq 7 ]
	[[ "$output" == *"already holds an xtsfs volume"* ]]
}

@test "mkfs refuses a non-empty directory unless --force" {
	mkdir "$T/v"
	echo data >"$T/v/file"
	run xtsfs-mkfs "${KDF[@]}" --passfile "$T/pass" "$T/v"
	[ "$status" -eq 7 ]
	[[ "$output" == *"is not empty"* ]]
	[ ! -e "$T/v/xtsfs.volume" ]
	run xtsfs-mkfs "${KDF[@]}" --passfile "$T/pass" --force "$T/v"
	[ "$status" -eq 0 ]
}

@test "mkfs refuses an empty passphrase" {
	: >"$T/empty"
	run xtsfs-mkfs "${KDF[@]}" --passfile "$T/empty" "$T/v"
	[ "$status" -eq 8 ]
	[ ! -e "$T/v/xtsfs.volume" ]
	run bash -c "printf '\n' | xtsfs-mkfs ${KDF[*]} $T/w"
	[ "$status" -eq 8 ]
}

@test "mkfs on a terminal asks twice without echo and refuses entries that differ" {
	drive="$BATS_TEST_DIRNAME/pty_drive.py"
	run "$drive" --answer "New passphrase for $T/v: =qzxfirstentry" --answer "Repeat passphrase: =qzxsecondentry" \
		-- xtsfs-mkfs "${KDF[@]}" "$T/v"
	[ "$status" -eq 8 ]
	[[ "$output" == *"Repeat passphrase"* ]]
	[[ "$output" != *qzx* ]]
	[ ! -e "$T/v/xtsfs.volume" ]
	run "$drive" --answer "New passphrase for $T/v: =same pass" --answer "Repeat passphrase: =same pass" \
		-- xtsfs-mkfs "${KDF[@]}" "$T/v"
	[ "$status" -eq 0 ]
	[[ "$output" != *"same pass"* ]]
	printf 'same pass\n' >"$T/p3"
	run xtsfs-passwd --test --passfile "$T/p3" "$T/v"
	[ "$status" -eq 0 ]
	run "$drive" --answer "Passphrase for $T/v: =same pass" -- xtsfs-passwd --test "$T/v"
	[ "$status" -eq 0 ]
	[[ "$output" != *"same pass"* ]]
}

@test "passphrase sources: stdin, --extpass, never argv" {
	run bash -c "printf 'via stdin\n' | xtsfs-mkfs ${KDF[*]} $T/v"
	[ "$status" -eq 0 ]
	run xtsfs-passwd --test --extpass "printf 'via stdin\n'" "$T/v"
	[ "$status" -eq 0 ]
	run xtsfs-passwd --test --extpass "exit 3" "$T/v"
	[ "$status" -eq 8 ]
	run xtsfs-mkfs --passphrase secret "$T/w"
	[ "$status" -eq 2 ]
}

@test "the --extpass command is not left in argv" {
	# the daemon's /proc/PID/cmdline is in 12-options.bats; here every
	# tool that takes --extpass, seen from the command it runs
	mkvol "$T/v"
	# $PPID of the extpass shell is the tool
	ext="tr '\\0' ' ' </proc/\$PPID/cmdline >&2; cat $T/pass"
	run xtsfs-passwd --test --extpass "$ext #qzxmark1" "$T/v"
	[ "$status" -eq 0 ]
	[[ $output == *"xtsfs-passwd --test "* ]] # precondition: it is argv
	[[ $output != *qzxmark* ]]
	run xtsfs-passwd --test --extpass="$ext #qzxmark2" "$T/v"
	[ "$status" -eq 0 ]
	[[ $output == *"xtsfs-passwd --test --extpass="* ]]
	[[ $output != *qzxmark* ]]
	run xtsfs-mkfs "${KDF[@]}" --extpass "$ext #qzxmark3" "$T/w"
	[ "$status" -eq 0 ]
	[[ $output == *"xtsfs-mkfs --argon2-time "* ]]
	[[ $output != *qzxmark* ]]
}

@test "a passphrase or key file that others can read or another user owns: a warning, not an error" {
	mkvol "$T/v" --print-volume-key >"$T/mkfs.out"
	grep -E '^[0-9a-f]{8}-' "$T/mkfs.out" >"$T/volkey"
	chmod 600 "$T/volkey"
	run xtsfs-passwd --test --passfile "$T/pass" "$T/v"
	[ "$status" -eq 0 ]
	[[ $output != *warning* ]]
	run xtsfs-passwd --test --volume-key-file "$T/volkey" "$T/v"
	[ "$status" -eq 0 ]
	[[ $output != *warning* ]]
	chmod 644 "$T/pass" "$T/volkey"
	run xtsfs-passwd --test --passfile "$T/pass" "$T/v"
	[ "$status" -eq 0 ]
	[[ $output == *"xtsfs-passwd: warning: $T/pass: this passphrase file can be read by every user (mode 0644)"* ]]
	run xtsfs-passwd --test --volume-key-file "$T/volkey" "$T/v"
	[ "$status" -eq 0 ]
	[[ $output == *"warning: $T/volkey: this volume key file can be read by every user (mode 0644)"* ]]
	run xtsfs-mkfs "${KDF[@]}" --passfile "$T/pass" "$T/w"
	[ "$status" -eq 0 ]
	[[ $output == *"xtsfs-mkfs: warning: $T/pass: this passphrase file can be read"* ]]
	# the new passphrase's file too, and only the file that is open
	chmod 600 "$T/pass"
	chmod 640 "$T/pass2"
	run xtsfs-passwd --add "${KDF[@]}" --passfile "$T/pass" --new-passfile "$T/pass2" "$T/v"
	[ "$status" -eq 0 ]
	[[ $output == *"warning: $T/pass2: this passphrase file can be read by its group (mode 0640)"* ]]
	[[ $output != *"$T/pass:"* ]]
	# another user's file, even 0600
	chown 65534 "$T/pass"
	run xtsfs-passwd --test --passfile "$T/pass" "$T/v"
	[ "$status" -eq 0 ]
	[[ $output == *"warning: $T/pass: this passphrase file belongs to another user (uid 65534)"* ]]
	chown 0 "$T/pass"
	run xtsfs-passwd --test --passfile "$T/pass" "$T/v"
	[ "$status" -eq 0 ]
	[[ $output != *warning* ]]
}

# Slot 0 at t = 1000, m = 4 GiB, p = 16 (FORMAT.md 2.3): hours on any
# machine, so --allow-costly-kdf is shown to reach vol_unlock() by what
# it does first: read the passphrase (a missing file stops it there).
@test "--allow-costly-kdf and -o allow_costly_kdf: a too costly slot is tried; without: exit 6" {
	mkvol "$T/v"
	patch_copies "$T/v/xtsfs.volume" 136 e80300000000400010000000
	run timeout 300 xtsfs-passwd --test --passfile "$T/missing" "$T/v"
	[ "$status" -eq 6 ]
	[[ $output == *"--allow-costly-kdf"* ]]
	[[ $output != *missing* ]]
	run timeout 300 xtsfs-passwd --test --allow-costly-kdf --passfile "$T/missing" "$T/v"
	[ "$status" -eq 8 ]
	[[ $output == *"$T/missing"* ]]
	mkdir "$T/mnt"
	track_mount "$T/mnt"
	run timeout 300 xtsfs --passfile "$T/missing" "$T/v" "$T/mnt"
	[ "$status" -eq 6 ]
	[[ $output == *"--allow-costly-kdf"* ]]
	run timeout 300 xtsfs --allow-costly-kdf --passfile "$T/missing" "$T/v" "$T/mnt"
	[ "$status" -eq 8 ]
	[[ $output == *"$T/missing"* ]]
	run timeout 300 xtsfs -o ro,allow_costly_kdf --passfile "$T/missing" "$T/v" "$T/mnt"
	[ "$status" -eq 8 ]
	[[ $output == *"$T/missing"* ]]
	run mountpoint -q "$T/mnt"
	[ "$status" -ne 0 ]
	# the -o word is ours, not FUSE's: an ordinary volume mounts with it
	mkvol "$T/w"
	mount_vol "$T/w" "$T/mw" -o allow_costly_kdf
	mountpoint -q "$T/mw"
	# mkfs unlocks nothing
	run xtsfs-mkfs "${KDF[@]}" --allow-costly-kdf --passfile "$T/pass" "$T/x"
	[ "$status" -eq 2 ]
}

@test "wrong passphrase: exit 4 and a clear message" {
	mkvol "$T/v"
	run xtsfs-passwd --test --passfile "$T/wrong" "$T/v"
	[ "$status" -eq 4 ]
	[[ "$output" == *"$T/v: wrong passphrase"* ]]
}

@test "passwd --add, --change and --remove, without touching anything else" {
	mkvol "$T/v"
	echo keep >"$T/v/other"
	run xtsfs-passwd --add "${KDF[@]}" --passfile "$T/pass" --new-passfile "$T/pass2" "$T/v"
	[ "$status" -eq 0 ]
	[[ "$output" == *"Added key slot 1"* ]]
	run xtsfs-passwd --test --passfile "$T/pass2" "$T/v"
	[ "$status" -eq 0 ]
	[[ "$output" == *"slot 1"* ]]
	printf 'third one\n' >"$T/pass3"
	run xtsfs-passwd --change "${KDF[@]}" --passfile "$T/pass2" --new-passfile "$T/pass3" "$T/v"
	[ "$status" -eq 0 ]
	run xtsfs-passwd --test --passfile "$T/pass2" "$T/v"
	[ "$status" -eq 4 ]
	run xtsfs-passwd --test --passfile "$T/pass3" "$T/v"
	[ "$status" -eq 0 ]
	run xtsfs-passwd --remove 0 --passfile "$T/pass3" "$T/v"
	[ "$status" -eq 0 ]
	run xtsfs-passwd --test --passfile "$T/pass" "$T/v"
	[ "$status" -eq 4 ]
	run xtsfs-info "$T/v"
	[[ "$output" == *"1 of 8 in use"* ]]
	[ "$(cat "$T/v/other")" = keep ]
}

@test "passwd never removes the last key slot" {
	mkvol "$T/v"
	run xtsfs-passwd --remove 0 --passfile "$T/pass" "$T/v"
	[ "$status" -eq 2 ]
	[[ "$output" == *"last one"* ]]
	run xtsfs-passwd --test --passfile "$T/pass" "$T/v"
	[ "$status" -eq 0 ]
}

@test "all 8 slots full: --add says so" {
	mkvol "$T/v"
	for i in 1 2 3 4 5 6 7; do
		printf 'p%s\n' "$i" >"$T/n$i"
		xtsfs-passwd -q --add "${KDF[@]}" --passfile "$T/pass" --new-passfile "$T/n$i" "$T/v"
	done
	run xtsfs-passwd --add "${KDF[@]}" --passfile "$T/pass" --new-passfile "$T/pass2" "$T/v"
	[ "$status" -eq 1 ]
	[[ "$output" == *"all 8 key slots are in use"* ]]
	run xtsfs-passwd --test --passfile "$T/n7" "$T/v"
	[ "$status" -eq 0 ]
}

@test "info shows the header and never a secret" {
	mkvol "$T/v" --print-volume-key >"$T/mkfs.out"
	key=$(grep -E '^[0-9a-f]{8}-' "$T/mkfs.out" | head -1 | cut -c1-8)
	[ -n "$key" ]
	run xtsfs-info "$T/v"
	[ "$status" -eq 0 ]
	[[ "$output" == *"format version:  2"* ]]
	[[ "$output" == *"aes-256-xts, 4096-byte units"* ]]
	[[ "$output" == *"names:           aes-256-siv"* ]]
	[[ "$output" == *"slot 0: argon2id, 1 iterations, 64 KiB, 1 lanes"* ]]
	[[ "$output" != *"$key"* ]]
	run xtsfs-info --json "$T/v"
	[ "$status" -eq 0 ]
	echo "$output" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["version"]==2 and d["slots"][0]["lanes"]==1 and d["copies"]==["ok","ok"]'
	[[ "$output" != *"$key"* ]]
}

@test "--layout: compact by default, aligned recorded in the header (flag bit 2); bad values and --reverse refused" {
	mkvol "$T/c" --layout=compact
	run xtsfs-info "$T/c"
	[[ "$output" == *"compact layout (data at lower offset 40)"* ]]
	[[ "$output" == *"flags:           none"* ]]
	mkvol "$T/a" --layout=aligned
	run xtsfs-info "$T/a"
	[[ "$output" == *"aligned layout (data at lower offset 4096)"* ]]
	[[ "$output" == *"flags:           aligned"* ]]
	run xtsfs-info --json "$T/a"
	echo "$output" | python3 -c 'import json,sys; assert json.load(sys.stdin)["layout"] == "aligned"'
	# FORMAT 2.2: flags, LE32 at offset 60 of both copies
	[ "$(od -An -tu4 -j60 -N4 "$T/a/xtsfs.volume" | tr -d ' ')" = 4 ]
	[ "$(od -An -tu4 -j4156 -N4 "$T/a/xtsfs.volume" | tr -d ' ')" = 4 ]
	[ "$(od -An -tu4 -j60 -N4 "$T/c/xtsfs.volume" | tr -d ' ')" = 0 ]
	run xtsfs-mkfs -q "${KDF[@]}" --passfile "$T/pass" --layout=sparse "$T/b"
	[ "$status" -eq 2 ]
	[[ "$output" == *"'sparse' is not a layout (compact or aligned)"* ]]
	[ ! -e "$T/b/xtsfs.volume" ]
	mkdir "$T/p"
	run xtsfs-mkfs -q "${KDF[@]}" --passfile "$T/pass" --reverse --layout=aligned "$T/p"
	[ "$status" -eq 2 ]
	[[ "$output" == *"cannot be used with --reverse"* ]]
	[ ! -e "$T/p/.xtsfs.volume" ]
}

@test "--plaintext-names is recorded in the header" {
	mkvol "$T/v" --plaintext-names
	run xtsfs-info "$T/v"
	[[ "$output" == *"names:           plaintext"* ]]
}

@test "recovery with the raw volume key when every passphrase is lost" {
	mkvol "$T/v" --print-volume-key >"$T/mkfs.out"
	grep -E '^[0-9a-f]{8}-' "$T/mkfs.out" >"$T/volkey"
	[ "$(wc -l <"$T/volkey")" -eq 10 ]
	run xtsfs-passwd --add "${KDF[@]}" --volume-key-file "$T/volkey" --new-passfile "$T/pass2" "$T/v"
	[ "$status" -eq 0 ]
	run xtsfs-passwd --test --passfile "$T/pass2" "$T/v"
	[ "$status" -eq 0 ]
	# a key of another volume is refused
	mkvol "$T/w" --print-volume-key | grep -E '^[0-9a-f]{8}-' >"$T/otherkey"
	run xtsfs-passwd --test --volume-key-file "$T/otherkey" "$T/v"
	[ "$status" -eq 4 ]
	[[ "$output" == *"does not belong"* ]]
	echo nonsense >"$T/badkey"
	run xtsfs-passwd --test --volume-key-file "$T/badkey" "$T/v"
	[ "$status" -eq 8 ]
	[[ "$output" == *"not a volume key"* ]]
}

@test "missing header: exit 5" {
	mkdir "$T/v"
	run xtsfs-info "$T/v"
	[ "$status" -eq 5 ]
	[[ "$output" == *"no xtsfs volume header"* ]]
	run xtsfs-passwd --test --passfile "$T/pass" "$T/v"
	[ "$status" -eq 5 ]
	run xtsfs-info "$T/nonexistent"
	[ "$status" -eq 5 ]
}

@test "damaged primary copy: the secondary is used with a warning, --repair fixes it" {
	mkvol "$T/v"
	chmod 600 "$T/v/xtsfs.volume"
	flip_byte "$T/v/xtsfs.volume" 200
	run xtsfs-info "$T/v"
	[ "$status" -eq 0 ]
	[[ "$output" == *"primary copy damaged (checksum), secondary copy ok"* ]]
	[[ "$output" == *"warning"* ]]
	run xtsfs-passwd --test --passfile "$T/pass" "$T/v"
	[ "$status" -eq 0 ]
	[[ "$output" == *"primary header copy is damaged"* ]]
	run xtsfs-passwd --repair --passfile "$T/pass" "$T/v"
	[ "$status" -eq 0 ]
	run xtsfs-info "$T/v"
	[[ "$output" == *"primary copy ok, secondary copy ok"* ]]
	[[ "$output" != *"warning"* ]]
}

@test "damaged secondary copy alone changes nothing for the user" {
	mkvol "$T/v"
	chmod 600 "$T/v/xtsfs.volume"
	flip_byte "$T/v/xtsfs.volume" 6000
	run xtsfs-passwd --test --passfile "$T/pass" "$T/v"
	[ "$status" -eq 0 ]
}

@test "both copies bit-flipped, zero-filled or truncated: exit 6, named file" {
	mkvol "$T/v"
	f="$T/v/xtsfs.volume"
	chmod 600 "$f"
	cp "$f" "$T/good"
	flip_byte "$f" 200
	flip_byte "$f" 4296
	run xtsfs-passwd --test --passfile "$T/pass" "$T/v"
	[ "$status" -eq 6 ]
	[[ "$output" == *"$f: the volume header is corrupt in both copies"* ]]
	head -c 8192 /dev/zero >"$f"
	run xtsfs-info "$T/v"
	[ "$status" -eq 6 ]
	head -c 1000 "$T/good" >"$f"
	run xtsfs-info "$T/v"
	[ "$status" -eq 6 ]
	: >"$f"
	run xtsfs-info "$T/v"
	[ "$status" -eq 6 ]
	# truncated to the primary copy only: still fine
	head -c 4096 "$T/good" >"$f"
	run xtsfs-passwd --test --passfile "$T/pass" "$T/v"
	[ "$status" -eq 0 ]
}

@test "a header from a future version: exit 6, says so" {
	mkvol "$T/v"
	chmod 600 "$T/v/xtsfs.volume"
	patch_copies "$T/v/xtsfs.volume" 8 03000000
	run xtsfs-info "$T/v"
	[ "$status" -eq 6 ]
	[[ "$output" == *"format version or feature this xtsfs does not support"* ]]
}

@test "absurd Argon2 costs are refused before anything is allocated" {
	mkvol "$T/v"
	chmod 600 "$T/v/xtsfs.volume"
	cp "$T/v/xtsfs.volume" "$T/good"
	# slot 0 memory = 0xffffffff KiB (16 TiB): refused on sight, not tried
	patch_copies "$T/v/xtsfs.volume" 140 ffffffff
	run timeout 10 xtsfs-passwd --test --passfile "$T/pass" "$T/v"
	[ "$status" -eq 6 ]
	[[ "$output" == *"impossible values"* ]]
	cp "$T/good" "$T/v/xtsfs.volume"
	patch_copies "$T/v/xtsfs.volume" 136 ffffff7f
	run timeout 10 xtsfs-info "$T/v"
	[ "$status" -eq 6 ]
	cp "$T/good" "$T/v/xtsfs.volume"
	patch_copies "$T/v/xtsfs.volume" 144 00010000
	run timeout 10 xtsfs-info "$T/v"
	[ "$status" -eq 6 ]
}

@test "a downgrade to plaintext names without the key is refused" {
	mkvol "$T/v"
	chmod 600 "$T/v/xtsfs.volume"
	# flags = plaintext names, names cipher zeroed, CRCs recomputed
	patch_copies "$T/v/xtsfs.volume" 60 0100000000000000000000000000000000000000
	run xtsfs-info "$T/v"
	[ "$status" -eq 0 ]
	[[ "$output" == *"plaintext"* ]]
	run xtsfs-passwd --test --passfile "$T/pass" "$T/v"
	[ "$status" -eq 6 ]
	[[ "$output" == *"fails authentication"* ]]
}

@test "mkfs into a full filesystem leaves nothing behind" {
	mkdir "$T/small"
	mount -t tmpfs -o size=64k tmpfs "$T/small"
	track_mount "$T/small"
	mkdir "$T/small/v"
	dd if=/dev/zero of="$T/small/fill" bs=4k 2>/dev/null || true
	run xtsfs-mkfs "${KDF[@]}" --passfile "$T/pass" "$T/small/v"
	[ "$status" -eq 1 ]
	[[ "$output" == *"No space left on device"* ]]
	[ ! -e "$T/small/v/xtsfs.volume" ]
	[ ! -e "$T/small/v/xtsfs.volume.tmp" ]
	umount "$T/small"
}

@test "passwd on a full filesystem keeps the old header" {
	mkdir "$T/small"
	mount -t tmpfs -o size=64k tmpfs "$T/small"
	track_mount "$T/small"
	mkvol "$T/small/v"
	dd if=/dev/zero of="$T/small/fill" bs=4k 2>/dev/null || true
	run xtsfs-passwd --add "${KDF[@]}" --passfile "$T/pass" --new-passfile "$T/pass2" "$T/small/v"
	[ "$status" -eq 1 ]
	[[ "$output" == *"No space left on device"*"old header is unchanged"* ]]
	[ ! -e "$T/small/v/xtsfs.volume.tmp" ]
	rm "$T/small/fill"
	run xtsfs-passwd --test --passfile "$T/pass" "$T/small/v"
	[ "$status" -eq 0 ]
	run xtsfs-passwd --test --passfile "$T/pass2" "$T/small/v"
	[ "$status" -eq 4 ]
	umount "$T/small"
}

@test "mkfs and passwd on a read-only filesystem fail cleanly" {
	mkdir -p "$T/ro"
	mkvol "$T/ro/v"
	mount --bind "$T/ro" "$T/ro"
	track_mount "$T/ro"
	mount -o remount,bind,ro "$T/ro"
	run xtsfs-mkfs "${KDF[@]}" --passfile "$T/pass" "$T/ro/w"
	[ "$status" -eq 1 ]
	[[ "$output" == *"Read-only file system"* ]]
	run xtsfs-passwd --add "${KDF[@]}" --passfile "$T/pass" --new-passfile "$T/pass2" "$T/ro/v"
	[ "$status" -eq 1 ]
	[[ "$output" == *"Read-only file system"* ]]
	umount "$T/ro"
	run xtsfs-passwd --test --passfile "$T/pass" "$T/ro/v"
	[ "$status" -eq 0 ]
}

# crash_shim: $T/crash.so, which kills a tool around the header's rename
# (XTSFS_TEST_CRASH, see crash_rename.c); no xtsfs binary has such a hook.
crash_shim() {
	cc -shared -fPIC -o "$T/crash.so" "$BATS_TEST_DIRNAME/crash_rename.c" -ldl
}

@test "a passphrase change killed before the rename keeps the old passphrase" {
	mkvol "$T/v"
	crash_shim
	run env LD_PRELOAD="$T/crash.so" XTSFS_TEST_CRASH=tmp-written xtsfs-passwd --change "${KDF[@]}" \
		--passfile "$T/pass" --new-passfile "$T/pass2" "$T/v"
	[ "$status" -eq 137 ]
	[ -e "$T/v/xtsfs.volume.tmp" ]
	run xtsfs-passwd --test --passfile "$T/pass" "$T/v"
	[ "$status" -eq 0 ]
	run xtsfs-passwd --test --passfile "$T/pass2" "$T/v"
	[ "$status" -eq 4 ]
	# the next rewrite replaces the stale temp file
	run xtsfs-passwd --change "${KDF[@]}" --passfile "$T/pass" --new-passfile "$T/pass2" "$T/v"
	[ "$status" -eq 0 ]
	[ ! -e "$T/v/xtsfs.volume.tmp" ]
	run xtsfs-passwd --test --passfile "$T/pass2" "$T/v"
	[ "$status" -eq 0 ]
}

@test "a passphrase change killed after the rename has the new passphrase" {
	mkvol "$T/v"
	crash_shim
	run env LD_PRELOAD="$T/crash.so" XTSFS_TEST_CRASH=renamed xtsfs-passwd --change "${KDF[@]}" \
		--passfile "$T/pass" --new-passfile "$T/pass2" "$T/v"
	[ "$status" -eq 137 ]
	run xtsfs-passwd --test --passfile "$T/pass2" "$T/v"
	[ "$status" -eq 0 ]
	run xtsfs-passwd --test --passfile "$T/pass" "$T/v"
	[ "$status" -eq 4 ]
}

@test "every command has --help with an example, and --version" {
	for c in xtsfs-mkfs xtsfs-passwd xtsfs-info xtsfs-bench; do
		run "$c" --help
		[ "$status" -eq 0 ]
		[[ "$output" == *"Usage: $c"* ]]
		[[ "$output" == *"xample"* ]]
		run "$c" --version
		[ "$status" -eq 0 ]
		[[ "$output" == "$c "* ]]
		run "$c" --no-such-option
		[ "$status" -eq 2 ]
	done
}

@test "--cipher: a core this CPU lacks is an error, not a fallback" {
	run env XTSFS_CPU_MASK=vaes,aesni xtsfs-mkfs "${KDF[@]}" --cipher vaes --passfile "$T/pass" "$T/v"
	[ "$status" -eq 3 ]
	[[ "$output" == *"cannot run on this CPU"* ]]
	[ ! -e "$T/v/xtsfs.volume" ]
	run xtsfs-mkfs "${KDF[@]}" --cipher software --passfile "$T/pass" "$T/v"
	[ "$status" -eq 0 ]
	[[ "$output" == *"cipher core:  software"* ]]
}

@test "on a terminal, mkfs and passwd say what Argon2id is doing; -q hides it" {
	drive="$BATS_TEST_DIRNAME/pty_drive.py"
	cheap=(--unlock-time 100 --argon2-memory 64 --argon2-lanes 1)
	run "$drive" -- xtsfs-mkfs "${cheap[@]}" --passfile "$T/pass" "$T/v"
	[ "$status" -eq 0 ]
	[[ "$output" =~ "xtsfs-mkfs: calibrating Argon2id for a 100 ms unlock... "[0-9]+\.[0-9]" s" ]]
	[[ "$output" =~ "xtsfs-mkfs: making key slot 0 (Argon2id, 64 KiB, "[0-9]+" iteration"s?")... "[0-9]+\.[0-9]" s" ]]
	[[ "$output" == *"Created an xtsfs volume"* ]]
	run "$drive" -- xtsfs-passwd --add "${KDF[@]}" --passfile "$T/pass" --new-passfile "$T/pass2" "$T/v"
	[ "$status" -eq 0 ]
	[[ "$output" =~ "xtsfs-passwd: trying key slot 0 (Argon2id, 64 KiB, "[0-9]+" iteration"s?")... "[0-9]+\.[0-9]" s" ]]
	[[ "$output" == *"xtsfs-passwd: making key slot 1 (Argon2id, 64 KiB, 1 iteration)... "* ]]
	[[ "$output" != *calibrating* ]] # both costs given: nothing measured
	# a wrong passphrase tries every slot, and the error comes on its own line
	run "$drive" -- xtsfs-passwd --test --passfile "$T/wrong" "$T/v"
	[ "$status" -eq 4 ]
	[[ "$output" == *"trying key slot 0 "*"trying key slot 1 "* ]]
	[[ "$output" == *$' s\r\nxtsfs-passwd: '*"wrong passphrase"* ]]
	run "$drive" -- xtsfs-mkfs -q "${cheap[@]}" --passfile "$T/pass" "$T/w"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	run "$drive" -- xtsfs-passwd -q --test --passfile "$T/pass2" "$T/v"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "without a terminal, mkfs and passwd print no progress at all" {
	cheap=(--unlock-time 100 --argon2-memory 64 --argon2-lanes 1)
	xtsfs-mkfs "${cheap[@]}" --passfile "$T/pass" "$T/v" >"$T/out" 2>"$T/err"
	[ ! -s "$T/err" ]
	grep -q "Created an xtsfs volume" "$T/out"
	xtsfs-passwd --add "${cheap[@]}" --passfile "$T/pass" --new-passfile "$T/pass2" "$T/v" \
		>"$T/out" 2>"$T/err"
	[ ! -s "$T/err" ]
	grep -q "Added key slot 1" "$T/out"
	run xtsfs-passwd --test --passfile "$T/wrong" "$T/v"
	[ "$status" -eq 4 ]
	[ "$output" = "xtsfs-passwd: $T/v: wrong passphrase (no key slot opens with it)" ]
}

# Slot 0's Argon2 costs at offset 128 + 8 (FORMAT.md 2.3): t = 1000,
# m = 4 GiB, p = 16, the most the bounds allow; hours on any machine.
# timeout only turns a regression (a real derivation) into a failure.
@test "a header asking the maximum Argon2 cost is refused before the passphrase" {
	mkvol "$T/v" --print-volume-key | grep -E '^[0-9a-f]{8}-' >"$T/volkey"
	patch_copies "$T/v/xtsfs.volume" 136 e80300000000400010000000
	run timeout 300 xtsfs-passwd --test --passfile "$T/pass" "$T/v"
	[ "$status" -eq 6 ]
	[[ "$output" == *"$T/v: key slot 0 asks for Argon2id with 4096 MiB, 1000 iterations, 16 lanes"* ]]
	[[ "$output" == *"this machine allows"*"--allow-costly-kdf tries anyway"* ]]
	mkdir "$T/mnt"
	track_mount "$T/mnt"
	run timeout 300 xtsfs --passfile "$T/pass" "$T/v" "$T/mnt"
	[ "$status" -eq 6 ]
	[[ "$output" == *"key slot 0 asks for Argon2id with 4096 MiB"*"--allow-costly-kdf"* ]]
	run mountpoint -q "$T/mnt"
	[ "$status" -ne 0 ]
	# the volume key needs no Argon2: not judged; the MAC catches the edit
	run timeout 300 xtsfs-passwd --test --volume-key-file "$T/volkey" "$T/v"
	[ "$status" -eq 4 ]
	[[ "$output" == *"does not belong"* ]]
}

@test "a costly slot beside a cheap one is skipped; the edit is then caught by the MAC" {
	mkvol "$T/v"
	xtsfs-passwd --add "${KDF[@]}" --passfile "$T/pass" --new-passfile "$T/pass2" "$T/v"
	patch_copies "$T/v/xtsfs.volume" 136 e80300000000400010000000
	run timeout 300 xtsfs-passwd --test --passfile "$T/pass2" "$T/v"
	[ "$status" -eq 6 ]
	[[ "$output" == *"fails authentication"* ]]
	run timeout 300 xtsfs-passwd --test --passfile "$T/wrong" "$T/v"
	[ "$status" -eq 4 ]
	[[ "$output" == *"wrong passphrase"*"1 slot too costly"*"--allow-costly-kdf"* ]]
}
