#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# xtsfs on real network storage (issue 19 point 4), served on loopback by
# tests/net/services.sh: a cipher directory on sshfs (a local sshd), on
# GlusterFS (glusterd, one brick, two client mounts with an xtsfs mount
# on each; flock and POSIX locks exclusive across them) and backed up with rclone to an SFTP remote (rclone serve).
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

# sshfs_mount DIR: the sshd's export (a fresh subdirectory) at DIR
sshfs_mount() {
	local sub
	sub=$(basename "$T")
	mkdir -p "$NET_SSH_EXPORT/$sub" "$1"
	track_mount "$1"
	sshfs -F "$NET_SSH_CONFIG" "$NET_SSH_HOST:$NET_SSH_EXPORT/$sub" "$1"
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
	flock -n "$T/a/dir/x" sleep 3 &
	sleep 0.5
	run flock -n "$T/b/dir/x" true
	[ "$status" -ne 0 ]
	wait
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

@test "rclone: a cipher directory copied to an SFTP remote and back mounts with contents, names, modes and mtimes" {
	mkdir "$T/src"
	make_tree "$T/src"
	mkvol "$T/c"
	mount_vol "$T/c" "$T/m"
	cp -a "$T/src/." "$T/m/"
	umount_vol "$T/m"
	local dst=$NET_RCLONE_REMOTE$(basename "$T")
	# --links: symlinks as .rclonelink files; empty directories too
	rclone --config "$NET_RCLONE_CONFIG" copy --links --create-empty-src-dirs "$T/c" "$dst"
	rclone --config "$NET_RCLONE_CONFIG" copy --links --create-empty-src-dirs "$dst" "$T/back"
	# rclone keeps no modes: the header must stay private, as mkfs made it
	chmod 0400 "$T/back/xtsfs.volume"
	mount_vol "$T/back" "$T/r"
	# modes are not kept by rclone's sftp backend: compare the rest
	diff -r --no-dereference "$T/src" "$T/r"
	[ "$(stat -c %Y "$T/r/size-1")" = "$(stat -c %Y "$T/src/size-1")" ]
	[ "$(readlink "$T/r/link")" = sub/deeper/f ]
}
