#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The admin's ways in: mount -t fuse.xtsfs through mount.fuse3, an
# /etc/fstab line (mount --fstab), and the systemd units in
# contrib/systemd/ (systemd-analyze verify; the template's ExecStart and
# ExecStop lines run as systemd would run them).

load helpers
load fs_helpers

SRC="$BATS_TEST_DIRNAME/../.."

setup() {
	common_setup
	C="$T/cipher"
	M="$T/mnt"
	mkdir "$C" "$M"
	mkvol "$C"
}
teardown() { common_teardown; }

# sysmount ARGS...: run mount(8) ARGS with the xtsfs under test as the
# helper's "xtsfs"; teardown unmounts $M whatever happens.
#
# mount(8) clears PATH for its helpers, so the /bin/sh that mount.fuse3
# starts looks "xtsfs" up in the shell's default path
# (/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin), never
# in $BIN. So mount(8) runs in a private mount namespace where $T/sbin
# is bound over /usr/local/sbin; $T/sbin/xtsfs logs its arguments to
# $T/argv and re-enters the test's mount namespace before it runs
# $BIN/xtsfs, so the mount appears where the test and teardown see it.
sysmount() {
	[ -d /usr/local/sbin ] || skip "no /usr/local/sbin to bind over"
	command -v unshare nsenter >/dev/null ||
		skip "unshare and nsenter (util-linux) are needed"
	if [ ! -x "$T/sbin/xtsfs" ]; then
		mkdir -p "$T/sbin"
		cat >"$T/sbin/xtsfs" <<-EOF
		#!/bin/sh
		printf '%s\n' "\$@" >"$T/argv"
		exec nsenter --mount=/proc/$$/ns/mnt -- "$BIN/xtsfs" "\$@"
		EOF
		chmod 755 "$T/sbin/xtsfs"
	fi
	track_mount "$M"
	unshare --mount --propagation private sh -c \
		'mount --bind "$1" /usr/local/sbin && shift && exec mount "$@"' \
		sh "$T/sbin" "$@"
}

@test "mount -t fuse.xtsfs -o passfile=: mounted, detached, usable; umount" {
	run sysmount -t fuse.xtsfs "$C" "$M" -o "passfile=$T/pass"
	[ "$status" -eq 0 ]
	# mount.fuse3 runs: xtsfs CIPHERDIR MOUNTPOINT -o OPTIONS
	[ "$(sed -n 1,3p "$T/argv")" = "$(printf '%s\n' "$C" "$M" -o)" ]
	[[ "$(sed -n 4p "$T/argv")" == *"passfile=$T/pass"* ]]
	mountpoint -q "$M"
	[ "$(findmnt -no FSTYPE,SOURCE "$M")" = "fuse.xtsfs $C" ]
	# mount(8) returned: the daemon runs on, in its own session
	pid=$(pgrep -f "^$BIN/xtsfs $C $M " | head -1)
	[ -n "$pid" ]
	[ "$(ps -o sid= -p "$pid" | tr -d ' ')" = "$pid" ]
	echo 'through mount(8)' >"$M/f"
	[ "$(cat "$M/f")" = 'through mount(8)' ]
	refute grep -rq 'through mount' "$C"
	umount "$M"
	refute mountpoint -q "$M"
	mount_vol "$C" "$M"
	[ "$(cat "$M/f")" = 'through mount(8)' ]
}

@test "mount -t fuse.xtsfs: wrong passphrase, missing passfile: xtsfs's code and message" {
	run sysmount -t fuse.xtsfs "$C" "$M" -o "passfile=$T/wrong"
	[ "$status" -eq 4 ]
	[[ "$output" == *"wrong passphrase"* ]]
	refute mountpoint -q "$M"
	run sysmount -t fuse.xtsfs "$C" "$M" -o "passfile=$T/nope"
	[ "$status" -eq 8 ]
	[[ "$output" == *"$T/nope"*"No such file"* ]]
	refute mountpoint -q "$M"
	# no passphrase source and no terminal: stdin, which is empty
	run sysmount -t fuse.xtsfs "$C" "$M" </dev/null
	[ "$status" -eq 8 ]
	refute mountpoint -q "$M"
	# an option FUSE would have to honour but cannot: refused, not ignored
	run sysmount -t fuse.xtsfs "$C" "$M" -o "passfile=$T/pass,strictatime"
	[ "$status" -eq 2 ]
	[[ "$output" == *"bad mount options"* ]]
	refute mountpoint -q "$M"
}

@test "an fstab line with noauto,nofail,relatime,x-systemd.*: mount --fstab; mount -a skips it" {
	chmod 755 "$T"
	printf '# test fstab\n%s %s fuse.xtsfs %s 0 0\n' "$C" "$M" \
		"passfile=$T/pass,noauto,nofail,relatime,noatime,nodev,x-systemd.device-timeout=5s,allow_other" \
		>"$T/fstab"
	run sysmount -a --fstab "$T/fstab"
	[ "$status" -eq 0 ]
	refute mountpoint -q "$M"
	[ ! -e "$T/argv" ]
	run sysmount --fstab "$T/fstab" "$M"
	[ "$status" -eq 0 ]
	mountpoint -q "$M"
	# mount(8) and mount.fuse3 keep their own words; the rest reaches us
	opts=$(sed -n 4p "$T/argv")
	[[ ",$opts," != *,noauto,* && ",$opts," != *,nofail,* ]]
	[[ ",$opts," == *,allow_other,* && ",$opts," == *,relatime,* ]]
	kopts=$(findmnt -no OPTIONS "$M")
	[[ ",$kopts," == *,allow_other,* ]]
	[[ ",$kopts," == *,noatime,* && ",$kopts," == *,nodev,* ]]
	chmod 755 "$M"
	echo shared >"$M/open"
	chmod 644 "$M/open"
	run su nobody -s /bin/sh -c "cat '$M/open'"
	[ "$status" -eq 0 ]
	[ "$output" = shared ]
	umount "$M"
	refute mountpoint -q "$M"
}

@test "fstab: ro, and extpass= with a space written as \\040" {
	printf '%s %s fuse.xtsfs extpass=cat\\040%s,ro,noauto 0 0\n' \
		"$C" "$M" "$T/pass" >"$T/fstab"
	run sysmount --fstab "$T/fstab" "$M"
	[ "$status" -eq 0 ]
	mountpoint -q "$M"
	[[ ",$(findmnt -no OPTIONS "$M")," == *,ro,* ]]
	run touch "$M/x"
	[ "$status" -ne 0 ]
	[[ "$output" == *"Read-only file system"* ]]
	umount "$M"
	# the command line's -o comes after fstab's: rw wins over ro
	run sysmount --fstab "$T/fstab" "$M" -o rw
	[ "$status" -eq 0 ]
	touch "$M/x"
	umount "$M"
}

@test "fstab and mount -o: extpass= with a comma written as \\," {
	cp "$T/pass" "$T/p,ass"
	printf '%s %s fuse.xtsfs extpass=cat\\040%s,ro,noauto 0 0\n' \
		"$C" "$M" "$T/p\\,ass" >"$T/fstab"
	run sysmount --fstab "$T/fstab" "$M"
	[ "$status" -eq 0 ]
	mountpoint -q "$M"
	[[ ",$(findmnt -no OPTIONS "$M")," == *,ro,* ]]
	umount "$M"
	run sysmount -t fuse.xtsfs "$C" "$M" -o "extpass=cat $T/p\\,ass"
	[ "$status" -eq 0 ]
	mountpoint -q "$M"
	umount "$M"
}

# unit_for_test NAME: contrib/systemd's NAME as meson configured it, with
# the installed bindir replaced by the build's tools directory (verify
# checks that ExecStart's program exists).
unit_for_test() {
	local f=$XTSFS_BUILD/contrib/$1 bindir
	[ -f "$f" ] || f=$SRC/contrib/systemd/$1
	bindir=$(sed -n 's|^ExecStart=\(/[^ ]*\)/xtsfs .*|\1|p' "$f")
	mkdir -p "$T/units"
	if [ -n "$bindir" ]; then
		sed "s|^ExecStart=$bindir/|ExecStart=$BIN/|" "$f" >"$T/units/$1"
	else
		cp "$f" "$T/units/$1"
	fi
	echo "$T/units/$1"
}

@test "systemd-analyze verify: xtsfs@.service and mnt-secret.mount" {
	command -v systemd-analyze >/dev/null ||
		skip "systemd-analyze is not installed"
	svc=$(unit_for_test xtsfs@.service)
	mnt=$(unit_for_test mnt-secret.mount)
	grep -q "^ExecStart=$BIN/xtsfs " "$svc"
	# unknown or misspelt settings are only warnings: fail on any line
	# about our units, too
	run systemd-analyze verify --man=no "$svc" "$mnt"
	echo "$output"
	[ "$status" -eq 0 ]
	refute grep -q 'xtsfs@\|mnt-secret' <<<"$output"
	# and verify does catch a broken unit
	sed 's|^Where=.*|Where=/mnt/elsewhere|' "$mnt" >"$T/units/bad.mount"
	run systemd-analyze verify --man=no "$T/units/bad.mount"
	[ "$status" -ne 0 ]
}

@test "xtsfs@.service: ExecStart mounts (passphrase from systemd-ask-password), ExecStop unmounts" {
	svc=$(unit_for_test xtsfs@.service)
	# a stand-in for systemd-ask-password: logs its arguments, prints
	# the passphrase
	mkdir "$T/fakebin"
	cat >"$T/fakebin/systemd-ask-password" <<-EOF
	#!/bin/sh
	printf '%s\n' "\$@" >"$T/askpass-argv"
	cat "$T/pass"
	EOF
	chmod 755 "$T/fakebin/systemd-ask-password"
	printf 'CIPHERDIR=%s\nMOUNTPOINT=%s\nOPTIONS="-o ro"\n' "$C" "$M" \
		>"$T/vault.conf"
	# what systemd does, for this unit: the instance for %i, the
	# environment file for ${VAR} (one word) and $VAR (split at spaces);
	# its quoting rules agree with the shell's on these lines
	cmdline() {
		sed -n "s/^$1=//p" "$svc" | sed -e 's/%[iI]/vault/g' \
			-e 's/\${\([A-Z]*\)}/"${\1}"/g'
	}
	[ "$(sed -n 's/^Type=//p' "$svc")" = forking ]
	track_mount "$M"
	run env -i PATH="$T/fakebin:$PATH" bash -c \
		'set -a; . "$1"; set +a; eval "$2" </dev/null' \
		x "$T/vault.conf" "$(cmdline ExecStart)"
	[ "$status" -eq 0 ]
	# Type=forking: the command returned, and the mount is there
	mountpoint -q "$M"
	[[ ",$(findmnt -no OPTIONS "$M")," == *,ro,* ]]
	[ "$(sed -n 1p "$T/askpass-argv")" = "--id=xtsfs:vault" ]
	[ "$(sed -n 2p "$T/askpass-argv")" = "Passphrase for xtsfs volume vault:" ]
	# the daemon's command line has neither the command (it may hold a
	# secret: wiped once parsed) nor the passphrase
	pid=$(pgrep -f "^$BIN/xtsfs --extpass=.* $C $M\$" | head -1)
	[ -n "$pid" ]
	refute grep -q 'systemd-ask-password' "/proc/$pid/cmdline"
	refute grep -q 'correct horse' "/proc/$pid/cmdline"
	run env -i PATH="$PATH" bash -c 'set -a; . "$1"; set +a; eval "$2"' \
		x "$T/vault.conf" "$(cmdline ExecStop)"
	[ "$status" -eq 0 ]
	refute mountpoint -q "$M"
}
