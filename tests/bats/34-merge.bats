#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Sync-safe directories (issue 19 point 2, FORMAT.md 4.2): two copies of
# a volume in which the same directory path is made independently (two
# machines syncing one folder while apart, or a copy merged back with
# rsync --update both ways) merge without losing a name, because a new
# directory's dirid is derived from its parent's and its name. Also: a
# directory renamed and made again (two directories, one dirid) works,
# and xtsfs-fsck puts back a lost dirid from the derived value.

bats_require_minimum_version 1.5.0

load helpers

LN=$(printf 'd%.0s' $(seq 1 200))

setup() {
	common_setup
	mkvol "$T/v"
	mount_vol "$T/v" "$T/m"
	mkdir "$T/m/shared"
	echo old >"$T/m/shared/old"
	umount_vol "$T/m"
}
teardown() { common_teardown; }

# on_copy COPY MACHINE: as one machine, make the same directory paths as
# the other does, each holding files of this machine's own.
on_copy() {
	local c=$1 who=$2
	mount_vol "$T/$c" "$T/m$c"
	mkdir -p "$T/m$c/proj/src" "$T/m$c/proj/$LN/deeper" "$T/m$c/shared/new"
	echo "$who source" >"$T/m$c/proj/src/$who.c"
	echo "$who notes" >"$T/m$c/proj/notes-$who"
	echo "$who deep" >"$T/m$c/proj/$LN/deeper/$who"
	echo "$who new" >"$T/m$c/shared/new/$who"
	umount_vol "$T/m$c"
}

# listing MNT: every object with its type and contents
listing() {
	(cd "$1" && find . -mindepth 1 | LC_ALL=C sort | while read -r p; do
		if [ -f "$p" ]; then printf '%s %s\n' "$p" "$(cat "$p")"; else printf '%s/\n' "$p"; fi
	done)
}

@test "the same new directories made in two copies merge both ways with every name readable" {
	cp -a "$T/v" "$T/a"
	cp -a "$T/v" "$T/b"
	on_copy a alice
	on_copy b bob
	# each copy's xtsfs.dirid of proj/src is byte for byte the other's
	rsync -a --update "$T/a/" "$T/b/"
	rsync -a --update "$T/b/" "$T/a/"
	# no dirid differs between the two (rsync would have made one win)
	diff <(cd "$T/a" && find . -name xtsfs.dirid -exec sha256sum {} + | sort) \
		<(cd "$T/b" && find . -name xtsfs.dirid -exec sha256sum {} + | sort)
	mount_vol "$T/a" "$T/ma"
	mount_vol "$T/b" "$T/mb"
	listing "$T/ma" >"$T/la"
	listing "$T/mb" >"$T/lb"
	cat "$T/la"
	diff "$T/la" "$T/lb"
	for who in alice bob; do
		grep -qx "./proj/src/$who.c $who source" "$T/la"
		grep -qx "./proj/notes-$who $who notes" "$T/la"
		grep -qx "./proj/$LN/deeper/$who $who deep" "$T/la"
		grep -qx "./shared/new/$who $who new" "$T/la"
	done
	grep -qx "./shared/old old" "$T/la"
	[ "$(grep -vc '/$' "$T/la")" -eq 9 ]
	umount_vol "$T/ma"
	umount_vol "$T/mb"
	run xtsfs-fsck --passfile "$T/pass" "$T/a"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "a directory renamed and made again: both directories, one dirid, work and check clean" {
	mount_vol "$T/v" "$T/m"
	mkdir "$T/m/d"
	echo first >"$T/m/d/f"
	mv "$T/m/d" "$T/m/old"
	mkdir "$T/m/d"
	echo second >"$T/m/d/f"
	[ "$(cat "$T/m/old/f")" = first ] && [ "$(cat "$T/m/d/f")" = second ]
	umount_vol "$T/m"
	# the two lower directories hold equal dirids, and equal stored names
	[ "$(find "$T/v" -name xtsfs.dirid -exec sha256sum {} + | awk '{print $1}' | sort | uniq -d | wc -l)" -eq 1 ]
	mount_vol "$T/v" "$T/m"
	[ "$(cat "$T/m/old/f")" = first ] && [ "$(cat "$T/m/d/f")" = second ]
	mv "$T/m/d/f" "$T/m/old/g"
	[ "$(cat "$T/m/old/g")" = second ] && [ ! -e "$T/m/d/f" ]
	umount_vol "$T/m"
	run xtsfs-fsck --passfile "$T/pass" "$T/v"
	echo "$output"
	[ "$status" -eq 0 ]
	mount_vol "$T/v" "$T/m"
	rm -r "$T/m/old" "$T/m/d"
	[ -z "$(ls -A "$T/m" | grep -vx shared)" ]
}

@test "xtsfs-fsck --repair puts back the lost dirid of a directory from its derived value" {
	mount_vol "$T/v" "$T/m"
	mkdir -p "$T/m/proj/sub"
	echo a >"$T/m/proj/a"
	echo b >"$T/m/proj/sub/b"
	umount_vol "$T/m"
	# proj's lower directory: the one that holds a directory of its own
	local p
	p=$(find "$T/v" -mindepth 2 -maxdepth 2 -type d -printf '%h\n')
	[ -f "$p/xtsfs.dirid" ]
	rm -f "$p/xtsfs.dirid"
	run -4 xtsfs-fsck --passfile "$T/pass" "$T/v"
	[[ $output == *"derived from its name"* ]]
	run -1 xtsfs-fsck --repair -y --passfile "$T/pass" "$T/v"
	run -0 xtsfs-fsck --passfile "$T/pass" "$T/v"
	mount_vol "$T/v" "$T/m"
	[ "$(cat "$T/m/proj/a")" = a ] && [ "$(cat "$T/m/proj/sub/b")" = b ]
}
