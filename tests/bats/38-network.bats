#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# xtsfs on real network storage (issue 19 point 4), served on loopback by
# tests/net/services.sh: a cipher directory on sshfs (a local sshd), on
# GlusterFS (glusterd, one brick, two client mounts with an xtsfs mount
# on each; flock and POSIX locks exclusive across them), two sshfs
# clients (no locks across: SFTP has none) and backed up with rclone to
# an SFTP remote (rclone serve): what survives rclone, and what not.
# .ci/run starts the services and passes their state in $XTSFS_NET; run
# by hand, this file starts and stops them itself.

bats_require_minimum_version 1.5.0

load helpers

NETSH=$BATS_TEST_DIRNAME/../net/services.sh

setup_file() {
	local why
	if [ -n "${XTSFS_NET:-}" ]; then
		export NETDIR=$XTSFS_NET OWN_NET=
	elif why=$("$NETSH" check); then
		export NETDIR=$BATS_FILE_TMPDIR/net OWN_NET=1
		"$NETSH" start "$NETDIR"
	else
		export NET_SKIP="$why"
	fi
}

teardown_file() {
	[ -n "${OWN_NET:-}" ] && "$NETSH" stop "$NETDIR"
	return 0
}

setup() {
	[ -z "${NET_SKIP:-}" ] || skip "$NET_SKIP"
	common_setup
	# shellcheck disable=SC1091
	. "$NETDIR/env"
}
teardown() { common_teardown; }

# sshfs_mount DIR [SSHFS-OPTIONS...]: the sshd's export (a subdirectory
# of the test's own, the same for every mount of one test) at DIR
sshfs_mount() {
	local sub dir=$1
	shift
	sub=$(basename "$T")
	mkdir -p "$NET_SSH_EXPORT/$sub" "$dir"
	track_mount "$dir"
	sshfs -F "$NET_SSH_CONFIG" "$@" "$NET_SSH_HOST:$NET_SSH_EXPORT/$sub" "$dir"
}

# gluster_mount DIR: a new GlusterFS client of the volume at DIR
gluster_mount() {
	mkdir -p "$1"
	track_mount "$1"
	glusterfs --volfile-server="$NET_GLUSTER_SERVER" \
		--volfile-id="$NET_GLUSTER_VOLUME" -l "$T/gluster-$(basename "$1").log" "$1"
	# the client answers once connected to the brick
	local i
	for i in $(seq 1 50); do stat "$1" >/dev/null 2>&1 && return 0; sleep 0.1; done
	return 1
}

# make_tree DIR: sizes around a unit, a long name, a symlink, a hole
make_tree() {
	local d=$1 s
	mkdir -p "$d/sub/deeper"
	for s in 0 1 4095 4096 4097 70001; do head -c "$s" /dev/urandom >"$d/size-$s"; done
	echo long >"$d/sub/$(printf 'n%.0s' $(seq 1 200))"
	truncate -s 3M "$d/sparse"
	echo tail >>"$d/sparse"
	echo deep >"$d/sub/deeper/f"
	ln -s sub/deeper/f "$d/link"
	chmod 0750 "$d/sub"
	touch -d '2026-01-02 03:04:05' "$d/size-1"
}

# tree_list DIR: type, mode, size, mtime (seconds; not of symlinks:
# sshfs cannot set those) and name of each object, and link targets
tree_list() {
	(cd "$1" && find . \( -type l -printf '%y %m %s - %p -> %l\n' \) -o \
		-printf '%y %m %s %TY-%Tm-%Td+%TH:%TM:%TS %p\n' |
		sed 's/\(+[0-9:]*\)\.[0-9]* /\1 /' | LC_ALL=C sort)
}

# same_tree A B: names, types, modes, sizes, mtimes, contents, targets
same_tree() {
	diff <(tree_list "$1") <(tree_list "$2")
	diff -r --no-dereference "$1" "$2"
}

# backup_round_trip LOWER RSYNC-OPTIONS...: a volume on LOWER written
# through a mount, copied out with rsync, back to a new directory on
# LOWER, mounted: the same tree
backup_round_trip() {
	local low=$1
	shift
	mkdir "$T/src"
	make_tree "$T/src"
	mkvol "$low/c"
	mount_vol "$low/c" "$T/m"
	# no owners, no symlink times: SFTP's setstat follows symlinks, so
	# sshfs can set neither on one (ENOENT); the files are root's anyway
	rsync -rlptD --omit-link-times "$T/src/" "$T/m/"
	umount_vol "$T/m"
	rsync "$@" "$low/c/" "$T/backup/"
	rsync "$@" "$T/backup/" "$low/restored/"
	mount_vol "$low/restored" "$T/r"
	same_tree "$T/src" "$T/r"
}

@test "sshfs lower: a tree written, remounted, backed up with rsync and restored reads back the same" {
	sshfs_mount "$T/s"
	backup_round_trip "$T/s" -aHS --omit-link-times
}

@test "sshfs lower: hard links are refused (SFTP has no inode numbers), everything else works" {
	sshfs_mount "$T/s"
	mkvol "$T/s/c"
	mount_vol "$T/s/c" "$T/m"
	echo a >"$T/m/a"
	run ln "$T/m/a" "$T/m/b"
	[ "$status" -ne 0 ]
	[[ $output == *"Operation not permitted"* ]]
	[ ! -e "$T/m/b" ] && [ "$(cat "$T/m/a")" = a ]
	mv "$T/m/a" "$T/m/c"
	echo more >>"$T/m/c"
	mkdir "$T/m/d"
	mv "$T/m/c" "$T/m/d/e"
	umount_vol "$T/m"
	mount_vol "$T/s/c" "$T/m"
	[ "$(cat "$T/m/d/e")" = "a
more" ]
	[ "$(ls -A "$T/m")" = d ]
}

# difftest LOWER DIFFTEST-OPTIONS...: the randomized differential tester
# on a volume on LOWER against a plain directory, three seeds, remounts
difftest() {
	local low=$1 seed
	shift
	mkvol "$low/c"
	mkdir "$T/ref"
	mount_vol "$low/c" "$T/m"
	for seed in 7 11 2026; do
		run python3 "$BATS_TEST_DIRNAME/../difftest/difftest.py" "$@" \
			--seed "$seed" --ops 1000 --a "$T/m/s$seed" --b "$T/ref/s$seed" \
			--remount-every 250 --remount-cmd \
			"fusermount3 -u '$T/m' && '$BIN/xtsfs' --passfile '$T/pass' '$low/c' '$T/m'"
		echo "$output" | tail -15
		echo "# $(echo "$output" | tail -1)" >&3
		[ "$status" -eq 0 ] && [[ $output == *"0 divergences"* ]]
	done
}

@test "sshfs lower: the differential tester (no hard links, rmdir, utime: what SFTP cannot do)" {
	# sshfs has no link counts and no hard links (refused, above), keeps
	# a removed open file as .fuse_hidden* (its directory stays
	# non-empty: rmdir fails natively too), and setstat follows symlinks
	sshfs_mount "$T/s"
	difftest "$T/s" --skip link,rmdir,rmtree,utime --no-nlink
}

@test "GlusterFS lower: a tree written, remounted, backed up with rsync -aHSAX and restored reads back the same" {
	gluster_mount "$T/g"
	mkdir "$T/g/$(basename "$T")"
	backup_round_trip "$T/g/$(basename "$T")" -aHSAX
	setfattr -n user.note -v kept "$T/r/size-1"
	umount_vol "$T/r"
	mount_vol "$T/g/$(basename "$T")/restored" "$T/r"
	[ "$(getfattr --only-values -n user.note "$T/r/size-1")" = kept ]
}

@test "GlusterFS lower: the differential tester (link counts not compared: GlusterFS keeps them stale)" {
	gluster_mount "$T/g"
	mkdir "$T/g/$(basename "$T")"
	difftest "$T/g/$(basename "$T")" --no-nlink
}

# poll CMD...: until CMD succeeds, at most 5 s (GlusterFS's md-cache
# keeps a stat up to 1 s); the window seen goes to fd 3
poll() {
	local i
	for i in $(seq 1 50); do
		"$@" && { echo "# seen after $((i - 1))00 ms: ${*//$'\n'/\\n}" >&3; return 0; }
		sleep 0.1
	done
	"$@"
}

# has FILE TEXT: FILE holds exactly TEXT (read anew at each poll)
has() { [ "$(cat "$1" 2>/dev/null)" = "$2" ]; }
# size_is FILE N: stat (no open) shows N bytes
size_is() { [ "$(stat -c %s "$1" 2>/dev/null)" = "$2" ]; }

# hold_flock FILE: a process holds an exclusive flock on FILE (returns
# once it does) until release_flock; it gives up by itself after 60 s
hold_flock() {
	rm -f "$T/flocked" "$T/unflock"
	flock -n "$1" sh -c ': >"$1"; i=0
		while [ ! -e "$2" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done' \
		sh "$T/flocked" "$T/unflock" &
	FLOCK_HOLDER=$!
	poll test -e "$T/flocked"
}
release_flock() {
	touch "$T/unflock"
	wait "$FLOCK_HOLDER"
}

@test "GlusterFS, two clients, -o sharedstorage: writes, appends, renames, deletes seen across, flock and POSIX locks exclusive; nothing lost" {
	local sub
	sub=$(basename "$T")
	gluster_mount "$T/g1"
	gluster_mount "$T/g2"
	mkdir "$T/g1/$sub"
	mkvol "$T/g1/$sub/c"
	mount_vol "$T/g1/$sub/c" "$T/a" -o sharedstorage
	mount_vol "$T/g2/$sub/c" "$T/b" -o sharedstorage
	echo one >"$T/a/f"
	poll has "$T/b/f" one
	echo two >>"$T/b/f"
	poll has "$T/a/f" "one
two"
	head -c 100000 /dev/urandom >"$T/src"
	cp "$T/src" "$T/a/big"
	poll cmp -s "$T/src" "$T/b/big"
	mkdir "$T/b/dir"
	echo in >"$T/b/dir/x"
	poll has "$T/a/dir/x" in
	mv "$T/a/f" "$T/a/dir/g"
	poll has "$T/b/dir/g" "one
two"
	poll test ! -e "$T/b/f"
	rm "$T/b/big"
	poll test ! -e "$T/a/big"
	# flock: exclusive across the two mounts
	hold_flock "$T/a/dir/x"
	run -1 flock -n "$T/b/dir/x" true
	release_flock
	run -0 flock -n "$T/b/dir/x" true
	# POSIX record locks: exclusive across the two mounts too
	local lt=$XTSFS_BUILD/tests/locktool
	"$lt" "$T/a/dir/x" open:rw set:w:0:0 touch:"$T/held" await:"$T/release" >/dev/null &
	local holder=$!
	poll test -e "$T/held"
	run -3 "$lt" "$T/b/dir/x" open:rw set:w:0:10
	run -0 "$lt" "$T/b/dir/x" open:rw get:w:0:0
	[[ $output == "w 0 0 "* ]]
	touch "$T/release"
	wait "$holder"
	run -0 "$lt" "$T/b/dir/x" open:rw set:w:0:10
	umount_vol "$T/a"
	umount_vol "$T/b"
	mount_vol "$T/g2/$sub/c" "$T/a"
	[ "$(cat "$T/a/dir/g")" = "one
two" ] && [ "$(cat "$T/a/dir/x")" = in ]
	[ "$(cd "$T/a" && find . | sort | tr '\n' ' ')" = ". ./dir ./dir/g ./dir/x " ]
}

# Two sshfs clients of one export: what xtsfs gets there. sshfs caches
# names and attributes itself (20 s by default): with dir_cache=no the
# only cache left is xtsfs's own, 1 s under sharedstorage (with the
# default, a stat, rename or rm made through A took about 20 s to show
# in B). SFTP has no locks: each sshfs mount locks for itself only, so
# neither flock nor fcntl locks exclude across two sshfs clients.
@test "sshfs, two clients (dir_cache=no), -o sharedstorage: writes, appends, renames, deletes seen across; no locks across (SFTP has none); nothing lost" {
	local lt=$XTSFS_BUILD/tests/locktool holder
	sshfs_mount "$T/s1" -o dir_cache=no
	sshfs_mount "$T/s2" -o dir_cache=no
	mkvol "$T/s1/c"
	mount_vol "$T/s1/c" "$T/a" -o sharedstorage
	mount_vol "$T/s2/c" "$T/b" -o sharedstorage
	echo one >"$T/a/f"
	poll has "$T/b/f" one
	echo two >>"$T/b/f"
	poll has "$T/a/f" "one
two"
	# seen by a stat alone, without an open
	echo three >>"$T/a/f"
	poll size_is "$T/b/f" 14
	mkdir "$T/b/dir"
	echo in >"$T/b/dir/x"
	poll has "$T/a/dir/x" in
	mv "$T/a/f" "$T/a/dir/g"
	poll has "$T/b/dir/g" "one
two
three"
	poll test ! -e "$T/b/f"
	echo gone >"$T/b/dir/tmp"
	poll has "$T/a/dir/tmp" gone
	rm "$T/b/dir/tmp"
	poll test ! -e "$T/a/dir/tmp"
	# locks: each mount's own (the same calls exclude on GlusterFS, above)
	hold_flock "$T/a/dir/x"
	run -0 flock -n "$T/b/dir/x" true
	release_flock
	"$lt" "$T/a/dir/x" open:rw set:w:0:0 touch:"$T/held" await:"$T/release" >/dev/null &
	holder=$!
	poll test -e "$T/held"
	run -0 "$lt" "$T/b/dir/x" open:rw set:w:0:10
	touch "$T/release"
	wait "$holder"
	umount_vol "$T/a"
	umount_vol "$T/b"
	mount_vol "$T/s2/c" "$T/a"
	[ "$(cat "$T/a/dir/g")" = "one
two
three" ] && [ "$(cat "$T/a/dir/x")" = in ]
	[ "$(cd "$T/a" && find . | sort | tr '\n' ' ')" = ". ./dir ./dir/g ./dir/x " ]
}

# What a cipher directory keeps through an rclone backup (rclone 1.60,
# Debian 12) to an SFTP remote and back, found by trying: contents,
# names, empty directories (every cipher directory holds its
# xtsfs.dirid, so none is empty and --create-empty-src-dirs changes
# nothing), symlinks only with --links (stored as NAME.rclonelink), file
# mtimes to the second (SFTP carries whole seconds). Lost: modes (the
# restore's umask gives 0644 and 0755, the header included), set-id
# bits, owners, xattrs and ACLs (xtsfs keeps a file's xattrs as xattrs
# of its lower file: doc/FORMAT.md 6), hard links (two independent
# files), fifos (skipped), holes (written out) and directory mtimes.

# rclone_volume: a volume in $T/c written through a mount with -o acl
# with what a backup has to carry: make_tree's sizes, long name, hole
# and symlink, and an empty directory, modes 0600 (with an ACL) and
# 4755, another owner, a user xattr, a hard link, an absolute dangling
# symlink, a fifo, and mtimes with nanoseconds on a file and a directory
rclone_volume() {
	local m=$T/m
	mkvol "$T/c"
	mount_vol "$T/c" "$m" -o acl
	make_tree "$m"
	mkdir "$m/empty"
	echo secret >"$m/secret"
	chmod 0600 "$m/secret"
	setfattr -n user.note -v kept "$m/secret"
	setfacl -m u:1234:r "$m/secret"
	echo x >"$m/suid"
	chmod 4755 "$m/suid"
	echo o >"$m/owned"
	chown 1234:4321 "$m/owned"
	ln "$m/size-4097" "$m/sub/hard"
	ln -s /nonexistent/dangling "$m/abs-link"
	mkfifo "$m/fifo"
	touch -d '2020-01-02 03:04:05.123456789' "$m/secret" "$m/sub"
	umount_vol "$m"
}

# rclone_round_trip NAME RCLONE-OPTIONS...: $T/c synced to the remote
# (NAME below the test's own directory there) and copied back to $T/NAME,
# with umask 022
rclone_round_trip() {
	local dst=$NET_RCLONE_REMOTE$(basename "$T")/$1 back=$T/$1
	shift
	rclone --config "$NET_RCLONE_CONFIG" sync "$@" "$T/c" "$dst"
	(umask 022 && rclone --config "$NET_RCLONE_CONFIG" copy "$@" "$dst" "$back")
}

mtime_ns() { python3 -c 'import os, sys; print(os.lstat(sys.argv[1]).st_mtime_ns)' "$1"; }

# the original ($T/c, read-only) at $T/m, the copy ($T/back) at $T/r
mount_both() {
	mount_vol "$T/c" "$T/m" -o ro,acl
	mount_vol "$T/back" "$T/r" -o acl
}

@test "rclone --links to an SFTP remote and back: contents, names, symlinks, empty dirs, file mtimes (to the second) kept; modes, owners, xattrs, ACLs, hard links, fifos, holes, dir mtimes lost" {
	local f big
	rclone_volume
	rclone_round_trip back --links
	# rclone keeps no modes: the header must be made private again
	[ "$(stat -c %a "$T/back/xtsfs.volume")" = 644 ]
	chmod 0400 "$T/back/xtsfs.volume"
	run -0 xtsfs-fsck --passfile "$T/pass" "$T/back"
	mount_both
	# kept: every name but the fifo's, contents, symlink targets
	[ -p "$T/m/fifo" ] && [ ! -e "$T/r/fifo" ]
	diff -r --no-dereference -x fifo "$T/m" "$T/r"
	[ "$(readlink "$T/r/link")" = sub/deeper/f ]
	[ "$(readlink "$T/r/abs-link")" = /nonexistent/dangling ]
	[ -d "$T/r/empty" ] && [ -z "$(ls -A "$T/r/empty")" ]
	# kept: file mtimes, to the second
	for f in size-1 size-70001 secret sub/hard sparse; do
		[ "$(stat -c %Y "$T/r/$f")" = "$(stat -c %Y "$T/m/$f")" ]
	done
	[ $(($(mtime_ns "$T/m/secret") % 1000000000)) -eq 123456789 ]
	[ $(($(mtime_ns "$T/r/secret") % 1000000000)) -eq 0 ]
	# lost: modes (the umask's), set-id bits, owners
	[ "$(stat -c %a "$T/m/secret") $(stat -c %a "$T/m/suid") $(stat -c %a "$T/m/sub")" = "640 4755 750" ]
	[ "$(find "$T/r" ! -type l -printf '%m %y\n' | sort -u | tr '\n' ' ')" = "644 f 755 d " ]
	[ "$(stat -c %u:%g "$T/m/owned")" = 1234:4321 ]
	[ "$(stat -c %u:%g "$T/r/owned")" = 0:0 ]
	# lost: xattrs and ACLs
	[ "$(getfattr --only-values -n user.note "$T/m/secret")" = kept ]
	run ! getfattr -n user.note "$T/r/secret"
	[[ $(getfacl -c "$T/m/secret") == *user:1234:r--* ]]
	[[ $(getfacl -c "$T/r/secret") != *user:1234* ]]
	# lost: hard links (two files of the same bytes, changed apart)
	[ "$(stat -c %h "$T/m/sub/hard")" = 2 ] && [ "$(stat -c %h "$T/r/sub/hard")" = 1 ]
	[ "$(stat -c %i "$T/r/sub/hard")" != "$(stat -c %i "$T/r/size-4097")" ]
	echo changed >>"$T/r/sub/hard"
	cmp "$T/r/size-4097" "$T/m/size-4097"
	# lost: holes (the 3 MiB hole is written out); directory mtimes
	big=$(find "$T/back" -type f -size +2M)
	[ "$(du -k "$big" | cut -f1)" -ge 3072 ]
	big=$(find "$T/c" -type f -size +2M)
	[ "$(du -k "$big" | cut -f1)" -lt 1024 ]
	[ "$(stat -c %Y "$T/m/sub")" != "$(stat -c %Y "$T/r/sub")" ]
}

@test "rclone without --links: the symlinks are left out (rclone says so), the rest comes back as with --links" {
	rclone_volume
	run -0 rclone_round_trip back
	[[ $output == *"Can't follow symlink without -L/--copy-links"* ]]
	chmod 0400 "$T/back/xtsfs.volume"
	mount_both
	[ -L "$T/m/link" ] && [ -L "$T/m/abs-link" ]
	[ ! -L "$T/r/link" ] && [ ! -L "$T/r/abs-link" ] && [ ! -e "$T/r/link" ]
	diff -r --no-dereference -x fifo -x link -x abs-link "$T/m" "$T/r"
}

@test "rclone --links with a getfacl/getfattr dump of the cipher dir beside it: modes, set-id bits, owners, ACLs and xattrs come back too" {
	local dst=$NET_RCLONE_REMOTE$(basename "$T")/meta
	rclone_volume
	# the dump: files and directories only (rclone carries no others)
	mkdir "$T/meta"
	(cd "$T/c" && find . \( -type f -o -type d \) -print0 | xargs -0 getfacl -n -- >"$T/meta/acl")
	(cd "$T/c" && find . \( -type f -o -type d \) -print0 |
		xargs -0 getfattr -h -d -m - -e hex -- >"$T/meta/xattr")
	rclone --config "$NET_RCLONE_CONFIG" copy "$T/meta" "$dst"
	rclone_round_trip back --links
	rclone --config "$NET_RCLONE_CONFIG" copy "$dst" "$T/meta-back"
	(cd "$T/back" && setfacl --restore="$T/meta-back/acl" &&
		setfattr -h --restore="$T/meta-back/xattr")
	[ "$(stat -c %a "$T/back/xtsfs.volume")" = 400 ]
	[ "$(stat -c %a "$T/back")" = "$(stat -c %a "$T/c")" ]
	run -0 xtsfs-fsck --passfile "$T/pass" "$T/back"
	mount_both
	diff -r --no-dereference -x fifo "$T/m" "$T/r"
	diff <(cd "$T/m" && find . ! -type l ! -type p -printf '%p %m %u:%g\n' | LC_ALL=C sort) \
		<(cd "$T/r" && find . ! -type l -printf '%p %m %u:%g\n' | LC_ALL=C sort)
	[ "$(stat -c %a "$T/r/suid")" = 4755 ]
	[ "$(getfattr --only-values -n user.note "$T/r/secret")" = kept ]
	[ "$(getfacl -c "$T/r/secret")" = "$(getfacl -c "$T/m/secret")" ]
}
