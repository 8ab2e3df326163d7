#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# xtsfs-fsck (issue 18): for each way tests/tools/corrupt.py damages a
# volume, fsck names the problem (kind and lower path) with the right
# exit code; --repair -y repairs what is repairable and reports the
# rest; a second fsck is clean or reports only what is left; and a real
# mount afterwards shows exactly the undamaged rest of the tree (its
# listing, checksums, symlink targets and xattrs compared with the tree
# before the damage). Plus: a clean volume, --json, a wrong passphrase,
# a mounted volume, no terminal without -y, bad usage, plaintext names.

bats_require_minimum_version 1.5.0

load helpers
load fs_helpers

CORRUPT=$BATS_TEST_DIRNAME/../tools/corrupt.py
LA=$(printf 'a%.0s' $(seq 1 200))
LB=$(printf 'b%.0s' $(seq 1 200))
TL=$(printf 'a/%.0s' $(seq 1 1550))long

# tree_sum MNT: one line per object below MNT: path, type and contents
# (md5 of a file, the target of a symlink, ERR if it cannot be read),
# and one "path@xattr" line per object with user.* xattrs.
tree_sum() {
	local mnt=$1 p rel x
	(cd "$mnt" && find . -mindepth 1 2>/dev/null | LC_ALL=C sort) |
		while IFS= read -r p; do
			rel=${p#.}
			if [ -L "$mnt$rel" ]; then
				echo "$rel l $(readlink "$mnt$rel" 2>/dev/null | md5sum | cut -c1-32 || echo ERR)"
			elif [ -d "$mnt$rel" ]; then
				echo "$rel d"
			elif [ -f "$mnt$rel" ]; then
				echo "$rel f $(md5sum <"$mnt$rel" 2>/dev/null | cut -c1-32 || echo ERR)"
			else
				echo "$rel ERR"
			fi
			x=$(getfattr -h -d -m '^user\.' "$mnt$rel" 2>&1 | grep -v '^#' | grep . || true)
			[ -z "$x" ] || echo "$rel@xattr $(echo "$x" | md5sum | cut -c1-32)"
		done
}

setup_file() {
	local T=$BATS_FILE_TMPDIR/t0 C M
	export FIX=$BATS_FILE_TMPDIR/fix
	mkdir -p "$T" "$FIX"
	printf 'correct horse battery\n' >"$T/pass"
	chmod 600 "$T/pass"
	C=$FIX/c
	M=$T/m
	mkvol "$C"
	mkdir -p "$M"
	xtsfs --passfile "$T/pass" "$C" "$M"
	echo "$M" >"$FIX/mnt"
	: >"$M/f0"
	printf abc >"$M/f3"
	head -c 5000 /dev/urandom >"$M/f5000"
	head -c 4103 /dev/urandom >"$M/t4103"
	head -c 9000 /dev/urandom >"$M/c1"
	mkdir "$M/d" "$M/e" "$M/L"
	echo A >"$M/d/a"
	echo B >"$M/d/b"
	echo C >"$M/d/c"
	echo LA >"$M/L/$LA"
	echo LB >"$M/L/$LB"
	echo short >"$M/L/short"
	ln -s "$TL" "$M/ls1"
	ln -s f3 "$M/lshort"
	echo x >"$M/x"
	setfattr -n user.color -v red "$M/x"
	# renamed after its mkdir: its dirid is not the one its name derives
	mkdir "$M/r0"
	echo R >"$M/r0/a"
	mv "$M/r0" "$M/r"
	{
		for p in f3 f5000 t4103 c1 d e L d/a "L/$LA" "L/$LB" ls1 x r; do
			l=$(find "$C" -xdev -inum "$(stat -c %i "$M/$p")" -print -quit)
			echo "${l#"$C"/}"
		done
	} >"$FIX/lower"
	tree_sum "$M" >"$FIX/sums"
	fusermount3 -u "$M"
}

teardown_file() {
	local m
	m=$(cat "$FIX/mnt" 2>/dev/null) || return 0
	mountpoint -q "$m" && fusermount3 -uz "$m"
	return 0
}

setup() {
	common_setup
	C=$T/c
	M=$T/m
	cp -a "$FIX/c" "$C"
	mapfile -t LOW <"$FIX/lower"
	LF3=$C/${LOW[0]} LF5000=$C/${LOW[1]} LT4103=$C/${LOW[2]}
	LC1=$C/${LOW[3]} LD=$C/${LOW[4]} LE=$C/${LOW[5]} LL=$C/${LOW[6]}
	LDA=$C/${LOW[7]} LLA=$C/${LOW[8]} LLB=$C/${LOW[9]} LLS1=$C/${LOW[10]}
	LX=$C/${LOW[11]} LR=$C/${LOW[12]}
}

teardown() { common_teardown; }

fsck() {
	xtsfs-fsck --passfile "$T/pass" "$@" "$C"
}

# damage KIND PATH [ARG]: corrupt.py, its output (the damaged lower path,
# relative to $C) in $DAMAGED
damage() {
	local out
	out=$(python3 "$CORRUPT" "$@")
	DAMAGED=${out#"$C"/}
}

# finds KIND [PATH]: the last fsck output has a line of that kind (for
# that lower path, default $DAMAGED)
finds() {
	local line
	line=$(grep -F -- "$1: ${2-$DAMAGED} " <<<"$output") || {
		echo "no '$1: ${2-$DAMAGED}' in:"
		echo "$output"
		return 1
	}
}

# rest_is_intact [PLAINPATH...]: a mount shows the tree as before, but
# for the objects given (damaged beyond repair), which are left out of
# both sides; nothing is there that was not before.
rest_is_intact() {
	local drop=() p
	for p in "$@"; do drop+=(-e "^$p[ @]"); done
	mount_vol "$C" "$M"
	tree_sum "$M" >"$T/after"
	umount_vol "$M"
	if [ ${#drop[@]} -gt 0 ]; then
		grep -v "${drop[@]}" "$FIX/sums" >"$T/want" || true
		grep -v "${drop[@]}" "$T/after" >"$T/got" || true
	else
		cp "$FIX/sums" "$T/want"
		cp "$T/after" "$T/got"
	fi
	diff -u "$T/want" "$T/got"
}

# repaired_case KIND...: fsck finds it (4), --repair -y repairs it (1),
# fsck is clean again (0), and the mount shows the whole tree.
repaired_case() {
	run -4 fsck
	finds "$1"
	run -1 fsck --repair -y
	finds "$1"
	[[ $output == *"[repaired]"* ]]
	run -0 fsck
	rest_is_intact
}

# left_case KIND PLAINPATH...: fsck finds it (4), --repair -y cannot
# repair it (4, reported again), a second fsck still reports it and the
# mount shows everything else as before.
left_case() {
	local kind=$1
	shift
	run -4 fsck
	finds "$kind"
	run -4 fsck --repair -y
	finds "$kind"
	[[ $output != *"[repaired]"* ]]
	run -4 fsck
	finds "$kind"
	rest_is_intact "$@"
}

@test "fsck: a clean volume exits 0 with one line; -q prints nothing" {
	run -0 fsck
	[ "${#lines[@]}" -eq 1 ]
	[[ $output == *": clean ("* ]]
	run -0 fsck -q
	[ -z "$output" ]
}

@test "fsck: a wrong passphrase is an operational error (8)" {
	run -8 xtsfs-fsck --passfile "$T/wrong" "$C"
	[[ $output == *"xtsfs-fsck: "* ]]
}

@test "fsck: no volume, or no directory, is an operational error (8)" {
	mkdir "$T/empty"
	run -8 xtsfs-fsck --passfile "$T/pass" "$T/empty"
	run -8 xtsfs-fsck --passfile "$T/pass" "$T/nonesuch"
	run -8 --separate-stderr xtsfs-fsck --json --passfile "$T/wrong" "$C"
	python3 -c 'import json, sys; d = json.loads(sys.argv[1]); assert d["exit_code"] == 8 and d["problems"] is None' "$output"
	# a reverse-mode plaintext directory is no cipher directory
	mkdir "$T/plain"
	xtsfs-mkfs -q "${KDF[@]}" --passfile "$T/pass" --reverse "$T/plain"
	run -8 xtsfs-fsck --passfile "$T/pass" "$T/plain"
	[[ $output == *"not a cipher directory"* ]]
}

@test "fsck: bad usage exits 16, --help 0" {
	run -16 xtsfs-fsck
	run -16 xtsfs-fsck --passfile "$T/pass" -y "$C"
	run -16 xtsfs-fsck --no-such-option "$C"
	run -0 xtsfs-fsck --help
}

@test "fsck: refuses a mounted volume, by any spelling of its path" {
	mount_vol "$C" "$M"
	run -8 fsck
	[[ $output == *"is mounted on $M"* ]]
	run -8 xtsfs-fsck --passfile "$T/pass" "$C/./"
	run -8 bash -c "cd '$T' && xtsfs-fsck --passfile pass c"
	umount_vol "$M"
	run -0 fsck
	# mounted by a relative path: the mount's source is still the
	# canonical path (and a daemon holding the directory would give it
	# away, too)
	(cd "$T" && xtsfs --passfile pass c m)
	[ "$(findmnt -no SOURCE "$M")" = "$(realpath "$C")" ]
	run -8 bash -c "cd / && xtsfs-fsck --passfile '$T/pass' '$C'"
	[[ $output == *"is mounted on $M"* || $output == *"in use by an xtsfs daemon"* ]]
	umount_vol "$M"
}

@test "fsck: --repair without a terminal and without -y repairs nothing" {
	damage orphan-sidecar "$LL"
	run -4 fsck --repair </dev/null
	[[ $output == *"nothing will be repaired"* ]]
	finds orphan-sidecar
	[[ $output == *"[repairable with --repair]"* ]]
	[ -e "$C/$DAMAGED" ]
}

@test "fsck: --json is one document with kind, paths and repaired" {
	damage orphan-sidecar "$LL"
	damage garbage-name "$LD"
	run -4 fsck --json
	python3 -m json.tool <<<"$output" >/dev/null
	run -5 fsck --json --repair -y
	printf '%s\n' "$output" >"$T/out.json"
	python3 -m json.tool "$T/out.json" >/dev/null
	python3 - "$DAMAGED" "$T/out.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[2]))
kinds = {p['kind']: p for p in doc['problems']}
assert kinds['orphan-sidecar']['repaired'] is True
assert kinds['orphan-sidecar']['plain_path'] is None
assert kinds['orphan-sidecar']['plain_dir'] == '/L'
bad = kinds['undecryptable-name']
assert bad['repaired'] is False and bad['cipher_path'] == sys.argv[1], bad
assert bad['plain_dir'] == '/d'
assert doc['exit_code'] == 5
PY
}

@test "fsck: a removed dirid of an empty directory is rewritten" {
	damage rm-dirid "$LE"
	repaired_case dirid-missing
}

@test "fsck: a truncated dirid of an empty directory is rewritten" {
	damage cut-dirid "$LE"
	repaired_case dirid-damaged
}

@test "fsck: a removed dirid is restored from its sync-conflict copy" {
	damage conflict-dirid "$LD"
	repaired_case dirid-missing
	[ ! -e "$LD/xtsfs.dirid (1)" ]
}

@test "fsck: a replaced dirid is restored from the copy its names prove" {
	damage wrong-dirid "$LD"
	repaired_case dirid-wrong
}

@test "fsck: a removed dirid of a non-empty directory is restored from the dirid its name derives" {
	damage rm-dirid "$LD"
	repaired_case dirid-missing
}

@test "fsck: a removed dirid of a renamed non-empty directory (nothing proves it) is left, reported" {
	damage rm-dirid "$LR"
	left_case dirid-missing /r/a
}

@test "fsck: a garbage name is reported, never removed" {
	damage garbage-name "$LD"
	left_case undecryptable-name
	[ -e "$C/$DAMAGED" ]
}

@test "fsck: a non-canonical name is reported" {
	damage noncanon-name "$LDA"
	left_case non-canonical-name /d/a
}

@test "fsck: an orphaned sidecar is removed" {
	damage orphan-sidecar "$LL"
	repaired_case orphan-sidecar
	[ ! -e "$C/$DAMAGED" ]
}

@test "fsck: a missing sidecar is reported" {
	damage rm-sidecar "$LLA"
	left_case sidecar-missing "/L/$LA"
}

@test "fsck: a sidecar copied over another's is reported" {
	damage wrong-sidecar "$LLA" "$LLB"
	left_case sidecar-damaged "/L/$LA"
}

@test "fsck: an unused long-target file is removed" {
	damage unused-link "$C"
	repaired_case unused-long-target
}

@test "fsck: a long target whose file is gone is reported" {
	local ref
	ref=$(readlink "$LLS1")
	damage rm-link "$C" "$ref"
	DAMAGED=${LOW[10]}
	left_case long-target-missing /ls1
}

@test "fsck: a damaged primary or secondary header copy is rewritten" {
	local c
	for c in 0 1; do
		rm -rf "$C"
		cp -a "$FIX/c" "$C"
		damage header-copy "$C" "$c"
		repaired_case header-copy-damaged
		cmp <(head -c 4096 "$C/xtsfs.volume") \
			<(tail -c 4096 "$C/xtsfs.volume")
	done
}

@test "fsck: no header, opened with the key alone: reported, left to xtsfs-passwd --repair" {
	xtsfs-passwd --print-volume-key --passfile "$T/pass" "$C" >"$T/key"
	chmod 600 "$T/key"
	for how in corrupt delete; do
		if [ $how = delete ]; then
			rm "$C/xtsfs.volume"
		else
			chmod 600 "$C/xtsfs.volume"
			head -c 8192 /dev/zero >"$C/xtsfs.volume"
		fi
		run xtsfs-fsck --volume-key-file "$T/key" "$C"
		[ "$status" -eq 4 ]
		finds header-missing xtsfs.volume
		[ "$(grep -c ']$' <<<"$output")" -eq 1 ] # the one problem
		# --repair cannot write a header (no passphrase for a key slot)
		run xtsfs-fsck --repair -y --volume-key-file "$T/key" "$C"
		[ "$status" -eq 4 ]
		if [ $how = delete ]; then [ ! -e "$C/xtsfs.volume" ]; fi
	done
	xtsfs-passwd -q --repair "${KDF[@]}" --volume-key-file "$T/key" --new-passfile "$T/pass" "$C"
	run fsck
	[ "$status" -eq 0 ]
	rest_is_intact
}

@test "fsck: a valid header copy whose MAC fails is rewritten" {
	damage header-mac "$C"
	repaired_case header-copy-bad-mac
	cmp <(head -c 4096 "$C/xtsfs.volume") <(tail -c 4096 "$C/xtsfs.volume")
}

@test "fsck: on a terminal it asks before each repair; q cancels (32)" {
	local drive=$BATS_TEST_DIRNAME/pty_drive.py
	damage unused-link "$C"
	local link=$C/$DAMAGED
	damage orphan-sidecar "$LL"
	run -5 "$drive" --answer 'repair? [y/N/q]=y' \
		--answer 'repair? [y/N/q]=n' -- \
		xtsfs-fsck --repair --passfile "$T/pass" "$C"
	[[ $output == *"orphan-sidecar: "*"[repaired]"* ]]
	[[ $output == *"unused-long-target: "*"[repairable with --repair]"* ]]
	[ ! -e "$C/$DAMAGED" ]
	[ -e "$link" ]
	run -32 "$drive" --answer 'repair? [y/N/q]=q' -- \
		xtsfs-fsck --repair --passfile "$T/pass" "$C"
	[ -e "$link" ]
}

@test "fsck: files cut inside the header (1, 20, 39 bytes) are reported" {
	local n
	for n in 1 20 39; do
		rm -rf "$C"
		cp -a "$FIX/c" "$C"
		damage cut "$LC1" "$n"
		left_case file-cut-in-header /c1
	done
}

@test "fsck: a file cut to a last unit of 1..15 bytes is found by its tail" {
	damage cut "$LC1" $((DOFF + 4096 + 3))
	left_case torn-tail /c1
}

@test "fsck: a torn short tail is reported" {
	damage torn-tail "$LF3"
	left_case torn-tail /f3 /lshort
}

@test "fsck: a damaged file header is reported" {
	damage bad-header "$LF5000"
	left_case file-header-damaged /f5000
}

@test "fsck: a sync-conflict copy of an entry is a notice, not a problem" {
	local cp=/f5000.sync-conflict-20260101-120000-ABCDEFG
	damage conflict-copy "$LF5000"
	run -0 fsck
	finds "notice: conflict-copy"
	[[ $output == *"$DAMAGED ($cp): a sync tool's conflict copy"* ]]
	[[ $output == *": clean ("* ]]
	[[ $output == *"1 sync conflict copy"* ]]
	run -0 fsck --repair -y
	[ -e "$C/$DAMAGED" ]
	run -0 --separate-stderr fsck --json
	python3 -c 'import json, sys; d = json.loads(sys.argv[1]); c = d["conflicts"]; assert d["problems"] == [] and len(c) == 1 and c[0]["kind"] == "conflict-copy" and c[0]["plain_path"] == sys.argv[2] and c[0]["cipher_path"] == sys.argv[3], d' "$output" "$cp" "$DAMAGED"
	# the mount shows it, with the original's contents
	mount_vol "$C" "$M"
	cmp "$M/f5000" "$M$cp"
	umount_vol "$M"
}

@test "fsck: a stored name with an unknown conflict suffix is reported" {
	damage conflict-unknown "$LF5000"
	left_case foreign-entry
	[[ $output == *"unknown conflict suffix"* ]]
	[ -e "$C/$DAMAGED" ]
}

@test "fsck: a stray temp file is reported" {
	damage temp-file "$LD"
	left_case foreign-entry
}

@test "fsck: an unknown xtsfs.* name is reported" {
	damage unknown-internal "$LD"
	left_case unknown-internal-name
}

@test "fsck: an xattr name that does not decrypt is reported" {
	damage bad-xattr-name "$LX"
	left_case undecryptable-xattr-name
}

@test "fsck: an xattr value that does not decrypt is reported" {
	damage bad-xattr-value "$LX"
	left_case undecryptable-xattr-value /x
}

@test "fsck: repairable and unrepairable damage together: exit 5, then 4" {
	damage orphan-sidecar "$LL"
	damage torn-tail "$LT4103"
	run -4 fsck
	run -5 fsck --repair -y
	finds torn-tail
	run -4 fsck
	[[ $output != *orphan-sidecar* ]]
	rest_is_intact /t4103
}

@test "fsck: stored names in the output are escaped" {
	printf 'x' >"$LD/$(printf 'bad\033[2Jname\xff')"
	run -4 fsck
	[[ $output == *'bad\x1b[2Jname\xff'* ]]
	[[ $output != *$'\033'* ]]
}

@test "fsck: a plaintext-names volume: clean, then a cut file found" {
	local P=$T/p
	mkvol "$P" --plaintext-names
	mount_vol "$P" "$M"
	head -c 5000 /dev/urandom >"$M/file"
	mkdir "$M/xtsfs.long.AAAAAAAAAAAAAAAAAAAAAA"
	umount_vol "$M"
	run -0 xtsfs-fsck --passfile "$T/pass" "$P"
	truncate -s 30 "$P/file"
	run -4 xtsfs-fsck --passfile "$T/pass" "$P"
	finds file-cut-in-header file
}

@test "fsck: a tree nested 2,100 deep is checked to 2,000, then exit 12" {
	python3 - "$LE" <<'PY'
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
for i in range(2100):
    os.mkdir('A' * 43, dir_fd=fd)
    nfd = os.open('A' * 43, os.O_RDONLY, dir_fd=fd)
    os.close(fd)
    fd = nfd
PY
	run -12 fsck
	[[ $output == *"unreadable: "*"nested more than 2000 directories deep"* ]]
	[[ $output == *"undecryptable-name: ${LOW[5]}/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA "* ]]
}
