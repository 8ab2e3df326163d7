#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# A hostile cipher directory (issue 14). The daemon usually runs as root,
# often with allow_other; whoever can write the cipher directory (a sync
# peer, a backup host) must not be able to hang it, make it read or write
# outside the cipher directory, or forge its log lines.
#
# For each file xtsfs owns (doc/FORMAT.md 4.2-4.4, 2.1) and for a regular
# file's own lower file, the case tests put a hostile object in its place
# (a fifo, a socket, char devices 1:5 and 1:3, a symlink and a hard link
# to a file outside, a 1 GiB sparse file, the file one byte longer, an
# empty file, a copy of another entry's file), first while mounted, then
# before a new mount, and use the mount: ls, ls -l, stat, cat, readlink,
# a create. Each step must end in bounded time (within, see
# hostile_helpers.bash) in EIO or a skipped entry, with the daemon alive,
# the rest of the volume readable and no byte of the outside file ever
# coming back.

load helpers
load fs_helpers
load hostile_helpers

setup() { hostile_setup; }
teardown() { hostile_teardown; }

LA=$(printf 'a%.0s' $(seq 1 200))
LB=$(printf 'b%.0s' $(seq 1 200))
LC=$(printf 'c%.0s' $(seq 1 200))
# long symlink targets (over 3040 bytes: an xtsfs.link.* file each)
T1=$(printf 'a/%.0s' $(seq 1 1550))one
T2=$(printf 'a/%.0s' $(seq 1 1550))two

# The fixture's volume, made once for the file (setup_file) in $HFIX/c
# through a mount that is gone again, with the lower paths the cases
# damage in $HFIX/lower (relative to the cipher directory): directories
# y and x, the long entries of $LA/$LB in L, files f and g, and the
# xtsfs.link.* files of ls1 and ls2.
setup_file() {
	export HFIX=$BATS_FILE_TMPDIR/fix
	local T=$HFIX C=$HFIX/c M=$HFIX/m MOUNTS=() p
	mkdir -p "$T"
	printf 'correct horse battery\n' >"$T/pass"
	chmod 600 "$T/pass"
	mkvol "$C"
	mount_vol "$C" "$M"
	echo good >"$M/good"
	mkdir "$M/d" "$M/x" "$M/y" "$M/L" "$M/r0"
	echo in-d >"$M/d/a"
	echo in-x >"$M/x/xf"
	echo in-y >"$M/y/yf"
	# r keeps the dirid derived from its first name, r0 (FORMAT 4.2)
	echo in-r >"$M/r0/rf"
	mv "$M/r0" "$M/r"
	echo A >"$M/L/$LA"
	echo B >"$M/L/$LB"
	echo short >"$M/L/short"
	echo contents of f >"$M/f"
	echo contents of g >"$M/g"
	ln -s "$T1" "$M/ls1"
	ln -s "$T2" "$M/ls2"
	ln -s good "$M/lshort"
	{
		for p in x y "L/$LA" "L/$LB" f g; do
			p=$(lower_of "$M/$p") && echo "${p#"$C"/}"
		done
		for p in ls1 ls2; do readlink "$(lower_of "$M/$p")"; done
		p=$(lower_of "$M/r") && echo "${p#"$C"/}"
	} >"$HFIX/lower"
	umount_vol "$M"
}

teardown_file() {
	mountpoint -q "$HFIX/m" && fusermount3 -uz "$HFIX/m"
	return 0
}

# fixture: a copy of the file's volume in $C, its lower paths in LY, LX,
# LLA/LLB, LF, LG, REF1/REF2 (see setup_file); $OUT is a file outside the
# cipher directory, on the same filesystem.
fixture() {
	local low
	C=$T/c
	M=$T/m
	mkdir "$T/outside"
	OUT=$T/outside/secret
	for i in $(seq 1 200); do echo "$MARKER $i"; done >"$OUT"
	OUT_SUM=$(md5 "$OUT")
	cp -a "$HFIX/c" "$C"
	mapfile -t low <"$HFIX/lower"
	LX=$C/${low[0]} LY=$C/${low[1]} LLA=$C/${low[2]} LLB=$C/${low[3]}
	LF=$C/${low[4]} LG=$C/${low[5]} REF1=$C/${low[6]} REF2=$C/${low[7]}
	LR=$C/${low[8]}
	# the mount shows lower inode numbers
	INO_A=$(stat -c %i "$LLA")
	[ -f "$LLA.name" ] && [ -f "$LLB.name" ] && [ -f "$REF1" ] && [ -f "$REF2" ]
}

# the rest of the volume, whatever was damaged
rest_ok() {
	xrun 10 cat "$M/good"
	[ "$output" = good ] || { echo "good: $output" >&2; return 1; }
	xrun 10 cat "$M/x/xf"
	[ "$output" = in-x ] || { echo "x/xf: $output" >&2; return 1; }
	xrun 10 cat "$M/d/a"
	[ "$output" = in-d ] || { echo "d/a: $output" >&2; return 1; }
	xrun 10 readlink -v "$M/lshort"
	[ "$output" = good ] || { echo "lshort: $output" >&2; return 1; }
}

# every phase ends so: nothing from outside, the outside file untouched,
# a walk of the whole mount ends, the daemon alive, its log clean
phase_end() {
	# grep -r reads every regular file, skips fifos, sockets, devices
	xrun 60 grep -r -a -D skip -l "$MARKER" "$M"
	[ "$status" -ne 0 ] || { echo "$MARKER found: $output" >&2; return 1; }
	xrun 30 ls -lRA "$M"
	no_marker
	[ "$(md5 "$OUT")" = "$OUT_SUM" ] || {
		echo "the file outside the cipher directory changed" >&2
		return 1
	}
	alive
	log_clean
}

# ---- the targets ---------------------------------------------------------
# ex_TARGET KIND PHASE: use the mount on the damaged TARGET and check.

# the root has no xtsfs.dirid (its dirid is 16 zero bytes): one put there
# is ignored, everything works as before
ex_rootdirid() {
	xrun 10 ls -A "$M"
	expect_ok "ls the root"
	[ "$(sorted_out)" = "L d f g good ls1 ls2 lshort r x y " ] || {
		echo "root listing: $(sorted_out)" >&2
		return 1
	}
	xrun 10 ls -lA "$M"
	expect_ok "ls -l the root"
	xrun 10 stat -c "%F %s %i" "$M/good"
	expect_ok "stat good"
	xrun 10 touch "$M/new-$2"
	expect_ok "create in the root"
	xrun 10 ls -A "$M/y"
	[ "$output" = yf ]
	rest_ok
	xrun 10 rm "$M/new-$2"
}

# directory y's xtsfs.dirid, and renamed directory r's the same way. y
# was never renamed: its names authenticate under the dirid derived from
# its name (FORMAT 4.2), which xtsfs reads them with before it reads the
# file, so listing, lookups and reads work; a create needs the file's id:
# EIO, nothing made (with x's dirid copied in: made under x's id, and
# removable). r's derived id is its old name's: its names need the file,
# so listing and lookups fail with EIO (with x's dirid: r looks empty).
ex_dirid() {
	local kind=$1 before beforer
	before=$(lower_names "$LY")
	beforer=$(lower_names "$LR")
	xrun 10 ls -A "$M"
	expect_ok "ls the root"
	[[ " $(sorted_out) " == *" y "* && " $(sorted_out) " == *" r "* ]]
	xrun 10 ls -A "$M/y"
	expect_ok "ls y"
	[ "$output" = yf ] || { echo "ls y: $output" >&2; return 1; }
	xrun 10 ls -lA "$M/y"
	expect_ok "ls -l y"
	xrun 10 cat "$M/y/yf"
	expect_ok "cat y/yf"
	[ "$output" = in-y ] || { echo "y/yf: $output" >&2; return 1; }
	xrun 10 ls -A "$M/r"
	if [ "$kind" = copy ]; then
		expect_ok "ls r"
		[ -z "$output" ] || { echo "ls r with x's dirid: $output" >&2; return 1; }
	else
		expect_eio "ls r"
	fi
	xrun 10 ls -lA "$M/r"
	# rf neither listed (" rf") nor named in an error ("/r/rf"); a bare
	# *rf* could match the test directory's random name
	[[ $output != *" rf"* && $output != *"/r/rf"* ]]
	xrun 10 stat -c "%F %s %i" "$M/r/rf"
	expect_fail "stat r/rf"
	xrun 10 cat "$M/r/rf"
	expect_fail "cat r/rf"
	for d in y r; do
		xrun 10 touch "$M/$d/new-$2"
		if [ "$kind" != copy ]; then
			expect_eio "create in $d"
		else
			# made with x's dirid, consistently: it can be removed
			expect_ok "create in $d with x's dirid"
			xrun 10 rm "$M/$d/new-$2"
			expect_ok "rm $d/new-$2"
		fi
	done
	[ "$(lower_names "$LY")" = "$before" ] && [ "$(lower_names "$LR")" = "$beforer" ] || {
		echo "a create left something in y or r" >&2
		return 1
	}
	xrun 10 ls -A "$M/x"
	[ "$output" = xf ]
	rest_ok
}

# long name B's sidecar: B is skipped by readdir; A, whose sidecar is
# intact, is shown once, as itself, with its own inode and contents
ex_sidecar() {
	local kind=$1 n
	xrun 10 ls -A "$M/L"
	expect_ok "ls L"
	[ "$(sorted_out)" = "$LA short " ] || {
		echo "ls L: $(sorted_out)" >&2
		return 1
	}
	xrun 10 ls -liA "$M/L"
	expect_ok "ls -li L"
	n=$(printf '%s\n' "$output" | grep -c " $LA\$" || true)
	[ "$n" -eq 1 ] || { echo "$LA listed $n times: $output" >&2; return 1; }
	[ "$(printf '%s\n' "$output" | grep " $LA\$" | awk '{print $1}')" = "$INO_A" ] || {
		echo "$LA listed with another inode: $output (want $INO_A)" >&2
		return 1
	}
	[ "$(printf '%s\n' "$output" | grep -c '^ *[0-9]')" -eq 2 ]
	xrun 10 cat "$M/L/$LA"
	[ "$output" = A ]
	# B by its name: its entry is genuine, so either its contents or an
	# error; never A's
	xrun 10 cat "$M/L/$LB"
	[ "$status" -ne 0 ] || [ "$output" = B ]
	xrun 10 stat -c %i "$M/L/$LB"
	[ "$status" -ne 0 ] || [ "$output" != "$INO_A" ]
	xrun 10 touch "$M/L/new-$2"
	expect_ok "create in L"
	xrun 10 bash -c "echo C >'$M/L/$LC-$2'"
	expect_ok "create a long name in L"
	xrun 10 cat "$M/L/$LC-$2"
	[ "$output" = C ]
	xrun 10 rm "$M/L/new-$2" "$M/L/$LC-$2"
	expect_ok "rm in L"
	rest_ok
}

# ls2's xtsfs.link.* file: readlink ls2 fails with EIO (never another
# target), ls1 is intact
ex_link() {
	local kind=$1
	xrun 10 ls -lA "$M"
	[[ $output == *" good"* ]] || { echo "ls -l: $output" >&2; return 1; }
	[[ $output != *"ls2 -> $T1"* ]]
	xrun 10 readlink -v "$M/ls2"
	expect_eio "readlink ls2"
	xrun 10 stat -c "%F %s %i" "$M/ls2"
	expect_ok "stat ls2"
	xrun 10 cat "$M/ls2"
	expect_fail "cat ls2"
	xrun 10 readlink -v "$M/ls1"
	expect_ok "readlink ls1"
	[ "$output" = "$T1" ]
	# a new symlink to the same target shares the damaged file: EIO or
	# the target, never another
	xrun 10 ln -s "$T2" "$M/ls3-$2"
	xrun 10 readlink -v "$M/ls3-$2"
	[ "$status" -ne 0 ] || [ "$output" = "$T2" ]
	xrun 10 ln -s newtarget "$M/ls4-$2"
	expect_ok "create a symlink"
	xrun 10 readlink -v "$M/ls4-$2"
	[ "$output" = newtarget ]
	rest_ok
}

# f's own lower file: whatever it became, its use through the mount ends;
# a hard link to an outside file reads and writes EIO, not that file
ex_file() {
	local kind=$1
	xrun 10 ls -lA "$M"
	# a symlink now: ls says it cannot read it (EIO), and lists it
	[ "$kind" = symlink ] && expect_eio "ls -l, f a symlink" || expect_ok "ls -l the root"
	[[ $output == *" f"* ]]
	xrun 10 stat -c "%F %s %i" "$M/f"
	expect_ok "stat f"
	# non-blocking: a fifo shown as a fifo may block a reader legitimately
	rm -f "$T/read.out"
	xrun 10 python3 -c "$PY_NBREAD" "$M/f" "$T/read.out"
	# (the "before" phase sees what the append below wrote)
	case $kind:$2 in
	hardlink:* | sparse:*) expect_fail "read f" ;;
	empty:mounted) [ "$output" = "read 0 bytes" ] ;;
	copy:mounted) [ "$(cat "$T/read.out")" = "contents of g" ] ;;
	esac
	no_marker "$T/read.out"
	xrun 10 python3 -c "$PY_NBAPPEND" "$M/f"
	case $kind in
	hardlink | sparse) expect_fail "append to f" ;;
	esac
	xrun 10 touch "$M/new-$2"
	expect_ok "create in the root"
	xrun 10 cat "$M/g"
	[ "$output" = "contents of g" ]
	xrun 10 rm "$M/new-$2"
	rest_ok
}

# xtsfs.volume: a mount that has it keeps working; a new mount fails with
# a message and a non-zero exit (or, for what FORMAT 2.5 accepts, mounts)
ex_volume() {
	xrun 10 ls -A "$M"
	expect_ok "ls the root"
	rest_ok
}

# ---- the case driver ------------------------------------------------------

# hostile_case TARGET KIND
hostile_case() {
	local target=$1 kind=$2 path src
	fixture
	case $target in
	rootdirid) path=$C/xtsfs.dirid src=$LX/xtsfs.dirid ;;
	dirid) path=$LY/xtsfs.dirid src=$LX/xtsfs.dirid ;;
	sidecar) path=$LLB.name src=$LLA.name ;;
	link) path=$REF2 src=$REF1 ;;
	file) path=$LF src=$LG ;;
	volume)
		path=$C/xtsfs.volume
		mkvol "$T/other"
		src=$T/other/xtsfs.volume
		;;
	esac
	# while mounted: the daemon has looked at nothing yet
	start_daemon "$C" "$M"
	replace "$path" "$kind" "$src"
	# a renamed directory's the same way (ex_dirid)
	[ "$target" != dirid ] || replace "$LR/xtsfs.dirid" "$kind" "$src"
	after=$(snapshot "$path")
	echo "$path is now: $after"
	"ex_$target" "$kind" mounted
	phase_end
	stop_daemon
	if [ "$target" = volume ]; then
		volume_mount "$kind"
	else
		# before mounting: the daemon starts on the damaged directory
		start_daemon "$C" "$M"
		"ex_$target" "$kind" before
		phase_end
		stop_daemon
	fi
	if [ "$target" != file ]; then
		[ "$(snapshot "$path")" = "$after" ] || {
			echo "$path was changed through the mount" >&2
			return 1
		}
	fi
	[ "$(md5 "$OUT")" = "$OUT_SUM" ]
}

# volume_mount KIND: mount the volume whose header is damaged, as a
# daemon and in the foreground
volume_mount() {
	local kind=$1
	xrun 20 xtsfs --passfile "$T/pass" "$C" "$M"
	case $kind in
	over)
		# FORMAT 2.5: readers use the first 8192 bytes
		expect_ok "mount with one byte more"
		xrun 10 cat "$M/good"
		[ "$output" = good ]
		xrun 10 fusermount3 -u "$M"
		;;
	copy)
		# another volume's header, same passphrase: its keys open none
		# of these names
		if [ "$status" -eq 0 ]; then
			xrun 10 ls -A "$M"
			[ -z "$output" ] || { echo "listing: $output" >&2; return 1; }
			xrun 10 fusermount3 -u "$M"
		fi
		;;
	*)
		expect_fail "mount"
		[[ $output == *xtsfs.volume* || $output == *volume* ]] || {
			echo "no clear message: $output" >&2
			return 1
		}
		refute is_mounted "$M"
		[ -z "$(daemons_of "$M")" ] || { echo "a daemon is left" >&2; return 1; }
		xrun 20 xtsfs -f --passfile "$T/pass" "$C" "$M"
		expect_fail "mount -f"
		refute is_mounted "$M"
		xrun 10 xtsfs-info "$C"
		;;
	esac
}

# ---- log lines -------------------------------------------------------------

@test "log lines: lower names with a newline, ESC and BEL are logged escaped, one line each" {
	C=$T/c
	M=$T/m
	mkvol "$C"
	mount_vol "$C" "$M"
	mkdir "$M/d"
	echo ok >"$M/d/ok"
	LD=$(lower_of "$M/d")
	umount_vol "$M"
	evil=$'abc\n\033[31mFORGED xtsfs: forged line'
	echo junk >"$C/$evil"
	echo junk >"$LD/$evil"
	mkdir "$C/"$'\033]0;title\007\rFORGED2'
	# a long entry with no sidecar, and a sidecar name with a newline
	echo junk >"$C/xtsfs.long.AAAAAAAAAAAAAAAAAAAAAA"
	echo junk >"$C/xtsfs.long."$'\nFORGED3.name'
	start_daemon "$C" "$M"
	xrun 10 ls -A "$M"
	expect_ok "ls the root"
	[ "$output" = d ] || { echo "root: $output" >&2; return 1; }
	xrun 10 ls -lA "$M/d"
	expect_ok "ls -l d"
	[[ $output == *" ok" ]]
	xrun 10 cat "$M/d/ok"
	[ "$output" = ok ]
	alive
	cat "$T/daemon.log"
	log_clean
	# each problem on a line of its own, the forged text inside it
	[ "$(grep -c 'FORGED' "$T/daemon.log")" -ge 3 ] || {
		echo "no line about the entries" >&2
		return 1
	}
	if grep 'FORGED' "$T/daemon.log" | grep -v -q 'cannot be decrypted'; then
		echo "a line the entry name made:" >&2
		grep 'FORGED' "$T/daemon.log" | grep -v 'cannot be decrypted' >&2
		return 1
	fi
	[ "$(grep -c '^xtsfs: ' "$T/daemon.log")" -eq "$(wc -l <"$T/daemon.log")" ]
	grep 'FORGED xtsfs' "$T/daemon.log" | grep -q 'abc'
	grep -q 'xtsfs.long.AAAAAAAAAAAAAAAAAAAAAA' "$T/daemon.log"
}

# ---- finding 3: checks the kernel could not make --------------------------

# two_mounts: $C mounted on $M (daemon in the foreground, allow_other)
# and on $M2 (another daemon: what it does is "behind $M's back"), a
# sticky world-writable directory pub on both and in the reference $R.
two_mounts() {
	C=$T/c
	M=$T/m
	M2=$T/m2
	R=$T/ref
	chmod 755 "$T"
	chmod 600 "$T"/pass*
	mkdir -p "$R"
	mkvol "$C"
	start_daemon "$C" "$M" -o allow_other
	mount_vol "$C" "$M2"
	chmod 755 "$M" "$R"
	mkdir -m 1777 "$M/pub" "$R/pub"
	[ "$(stat -c %a "$M/pub")" = 1777 ]
}

NOBODY=(setpriv --reuid 65534 --regid 65534 --clear-groups --)

@test "finding 3a: a stale negative entry: another user's O_RDWR|O_CREAT open of a root 0600 file fails with EACCES" {
	two_mounts
	# native: the reference
	xrun 10 "${NOBODY[@]}" stat "$R/pub/victim"
	expect_fail "stat (native)"
	(umask 077 && echo SECRET >"$R/pub/victim")
	xrun 10 "${NOBODY[@]}" "$PY" -c "$PY_OPENRW" "$R/pub/victim"
	ref=$output
	[ "$ref" = "open: EACCES" ]
	# through the mount: nobody's lookup leaves a negative entry in the
	# kernel; root's file appears behind it (through the other mount)
	xrun 10 "${NOBODY[@]}" stat "$M/pub/victim"
	expect_fail "stat"
	(umask 077 && echo SECRET >"$M2/pub/victim")
	[ "$(stat -c '%U %a' "$M2/pub/victim")" = "root 600" ]
	xrun 10 "${NOBODY[@]}" "$PY" -c "$PY_OPENRW" "$M/pub/victim"
	echo "native: $ref; xtsfs: $output"
	[ "$output" = "$ref" ] || {
		echo "nobody opened root's 0600 file: $output" >&2
		return 1
	}
	[[ $output != *SECRET* ]]
	# (the kernel may still hold its negative entry here: not checked)
	xrun 10 cat "$M/pub/victim"
	echo "root's cat through the first mount: $output"
	umount_vol "$M2"
	mount_vol "$C" "$M2"
	[ "$(cat "$M2/pub/victim")" = SECRET ]
	[ "$(stat -c '%U %a' "$M2/pub/victim")" = "root 600" ]
	alive
}

@test "finding 3b: rename over a name the kernel did not know, in a sticky directory: EPERM as native; the other's file intact" {
	two_mounts
	for d in "$R" "$M"; do
		other=$R
		[ "$d" = "$M" ] && other=$M2
		xrun 10 "${NOBODY[@]}" stat "$d/pub/target"
		expect_fail "stat $d/pub/target"
		xrun 10 "${NOBODY[@]}" sh -c "echo mine >'$d/pub/mine'"
		expect_ok "nobody's create in $d"
		echo ROOTDATA >"$other/pub/target"
		chmod 644 "$other/pub/target"
		xrun 10 "${NOBODY[@]}" "$PY" -c "$PY_RENAME" "$d/pub/mine" "$d/pub/target"
		if [ "$d" = "$R" ]; then
			ref=$output
		else
			got=$output
		fi
	done
	same_as_native "rename: EPERM" "nobody's rename over root's file"
	# root's file is still there under its name, nobody's under its own
	umount_vol "$M2"
	mount_vol "$C" "$M2"
	[ "$(cat "$M2/pub/target")" = ROOTDATA ]
	[ "$(stat -c %U "$M2/pub/target")" = root ]
	[ "$(cat "$M2/pub/mine")" = mine ]
	alive
}

@test "finding 3c: a stale positive entry: another user's unlink or rename of a name root's file took behind the mount: EPERM as native; root's files intact" {
	two_mounts
	for d in "$R" "$M"; do
		other=$R
		[ "$d" = "$M" ] && other=$M2
		xrun 10 "${NOBODY[@]}" sh -c "echo mine >'$d/pub/u' && echo mine >'$d/pub/r'"
		expect_ok "nobody's creates in $d"
		# the kernel knows both names as nobody's files now
		xrun 10 "${NOBODY[@]}" stat "$d/pub/u" "$d/pub/r"
		expect_ok "stat as nobody"
		# root replaces both, behind the first mount
		rm "$other/pub/u" "$other/pub/r"
		echo ROOTDATA >"$other/pub/u"
		echo ROOTDATA >"$other/pub/r"
		xrun 10 "${NOBODY[@]}" "$PY" -c "$PY_UNLINK" "$d/pub/u"
		un=$output
		xrun 10 "${NOBODY[@]}" "$PY" -c "$PY_RENAME" "$d/pub/r" "$d/pub/r2"
		if [ "$d" = "$R" ]; then
			ref="$un; $output"
		else
			got="$un; $output"
		fi
	done
	same_as_native "unlink: EPERM; rename: EPERM" \
		"nobody removed or moved root's files"
	umount_vol "$M2"
	mount_vol "$C" "$M2"
	[ "$(cat "$M2/pub/u")" = ROOTDATA ]
	[ "$(cat "$M2/pub/r")" = ROOTDATA ]
	[ ! -e "$M2/pub/r2" ]
	alive
}

# ---- the cases ------------------------------------------------------------
@test "hostile xtsfs.dirid in the root: a fifo" { hostile_case rootdirid fifo; }
@test "hostile xtsfs.dirid in the root: a unix socket" { hostile_case rootdirid socket; }
@test "hostile xtsfs.dirid in the root: char device 1:5 (endless zeros)" { hostile_case rootdirid zero; }
@test "hostile xtsfs.dirid in the root: char device 1:3" { hostile_case rootdirid null; }
@test "hostile xtsfs.dirid in the root: a symlink to a file outside" { hostile_case rootdirid symlink; }
@test "hostile xtsfs.dirid in the root: a hard link to a file outside" { hostile_case rootdirid hardlink; }
@test "hostile xtsfs.dirid in the root: a 1 GiB sparse file" { hostile_case rootdirid sparse; }
@test "hostile xtsfs.dirid in the root: one byte too long" { hostile_case rootdirid over; }
@test "hostile xtsfs.dirid in the root: an empty file" { hostile_case rootdirid empty; }
@test "hostile xtsfs.dirid in the root: a copy of another directory's dirid" { hostile_case rootdirid copy; }
@test "hostile a subdirectory's xtsfs.dirid: a fifo" { hostile_case dirid fifo; }
@test "hostile a subdirectory's xtsfs.dirid: a unix socket" { hostile_case dirid socket; }
@test "hostile a subdirectory's xtsfs.dirid: char device 1:5 (endless zeros)" { hostile_case dirid zero; }
@test "hostile a subdirectory's xtsfs.dirid: char device 1:3" { hostile_case dirid null; }
@test "hostile a subdirectory's xtsfs.dirid: a symlink to a file outside" { hostile_case dirid symlink; }
@test "hostile a subdirectory's xtsfs.dirid: a hard link to a file outside" { hostile_case dirid hardlink; }
@test "hostile a subdirectory's xtsfs.dirid: a 1 GiB sparse file" { hostile_case dirid sparse; }
@test "hostile a subdirectory's xtsfs.dirid: one byte too long" { hostile_case dirid over; }
@test "hostile a subdirectory's xtsfs.dirid: an empty file" { hostile_case dirid empty; }
@test "hostile a subdirectory's xtsfs.dirid: a copy of directory x's dirid" { hostile_case dirid copy; }
@test "hostile a long name's sidecar: a fifo" { hostile_case sidecar fifo; }
@test "hostile a long name's sidecar: a unix socket" { hostile_case sidecar socket; }
@test "hostile a long name's sidecar: char device 1:5 (endless zeros)" { hostile_case sidecar zero; }
@test "hostile a long name's sidecar: char device 1:3" { hostile_case sidecar null; }
@test "hostile a long name's sidecar: a symlink to a file outside" { hostile_case sidecar symlink; }
@test "hostile a long name's sidecar: a hard link to a file outside" { hostile_case sidecar hardlink; }
@test "hostile a long name's sidecar: a 1 GiB sparse file" { hostile_case sidecar sparse; }
@test "hostile a long name's sidecar: one byte too long" { hostile_case sidecar over; }
@test "hostile a long name's sidecar: an empty file" { hostile_case sidecar empty; }
@test "hostile a long name's sidecar: a copy of name A's sidecar (finding 5: A once, as itself)" { hostile_case sidecar copy; }
@test "hostile an xtsfs.link.* file: a fifo" { hostile_case link fifo; }
@test "hostile an xtsfs.link.* file: a unix socket" { hostile_case link socket; }
@test "hostile an xtsfs.link.* file: char device 1:5 (endless zeros)" { hostile_case link zero; }
@test "hostile an xtsfs.link.* file: char device 1:3" { hostile_case link null; }
@test "hostile an xtsfs.link.* file: a symlink to a file outside" { hostile_case link symlink; }
@test "hostile an xtsfs.link.* file: a hard link to a file outside" { hostile_case link hardlink; }
@test "hostile an xtsfs.link.* file: a 1 GiB sparse file" { hostile_case link sparse; }
@test "hostile an xtsfs.link.* file: one byte too long" { hostile_case link over; }
@test "hostile an xtsfs.link.* file: an empty file" { hostile_case link empty; }
@test "hostile an xtsfs.link.* file: a copy of another target's file (finding 5: EIO, not the other target)" { hostile_case link copy; }
@test "hostile xtsfs.volume: a fifo" { hostile_case volume fifo; }
@test "hostile xtsfs.volume: a unix socket" { hostile_case volume socket; }
@test "hostile xtsfs.volume: char device 1:5 (endless zeros)" { hostile_case volume zero; }
@test "hostile xtsfs.volume: char device 1:3" { hostile_case volume null; }
@test "hostile xtsfs.volume: a symlink to a file outside" { hostile_case volume symlink; }
@test "hostile xtsfs.volume: a hard link to a file outside" { hostile_case volume hardlink; }
@test "hostile xtsfs.volume: a 1 GiB sparse file" { hostile_case volume sparse; }
@test "hostile xtsfs.volume: one byte too long" { hostile_case volume over; }
@test "hostile xtsfs.volume: an empty file" { hostile_case volume empty; }
@test "hostile xtsfs.volume: a copy of another volume's header" { hostile_case volume copy; }
@test "hostile a regular file's lower file: a fifo" { hostile_case file fifo; }
@test "hostile a regular file's lower file: a unix socket" { hostile_case file socket; }
@test "hostile a regular file's lower file: char device 1:5 (endless zeros)" { hostile_case file zero; }
@test "hostile a regular file's lower file: char device 1:3" { hostile_case file null; }
@test "hostile a regular file's lower file: a symlink to a file outside" { hostile_case file symlink; }
@test "hostile a regular file's lower file: a hard link to a file outside" { hostile_case file hardlink; }
@test "hostile a regular file's lower file: a 1 GiB sparse file" { hostile_case file sparse; }
@test "hostile a regular file's lower file: one byte too long" { hostile_case file over; }
@test "hostile a regular file's lower file: an empty file" { hostile_case file empty; }
@test "hostile a regular file's lower file: a copy of another file's lower file" { hostile_case file copy; }
