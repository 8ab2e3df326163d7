#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The differential permission tester (tests/permtest/permtest.py): a grid
# of operations by root, the owner, group members and another user, over
# modes with sticky, setgid and setuid bits and three name classes, with
# user.*/trusted.* xattrs and POSIX ACLs (issue 17), on an allow_other
# mount and on a plain directory under /tmp (ext4), compared errno for
# errno, mode bit for mode bit and xattr for xattr, then again after a
# remount.
# Callers are bare numeric uids 61001..61004 (no /etc/passwd entries).
# POSIX ACLs are opt-in: the first grid mounts with -o acl and has the ACL
# cells, the second mounts without (the default) and leaves them out.
# XTSFS_PERMTEST_ARGS="--all-names" (or "--filter op=chmod*") changes the
# selection.

load helpers

setup() {
	[ "$(id -u)" -eq 0 ] || skip "needs root (forks callers with other uids)"
	common_setup
	chmod 755 "$T" # mktemp -d made it 0700: the callers must reach both trees
	chmod 600 "$T"/pass*
	mkdir -m 755 "$T/ref"
}
teardown() { common_teardown; }

# run_permtest MOUNTOPTS PERMTESTARGS [mkfs args...]: a fresh volume
# mounted with allow_other and MOUNTOPTS (comma-separated, may be
# empty), the grid (PERMTESTARGS, space-separated) against $T/ref,
# remounting after each batch.
run_permtest() {
	local o="allow_other${1:+,$1}" args=$2
	shift 2
	mkvol "$T/c" "$@"
	mount_vol "$T/c" "$T/m" -o "$o"
	chmod 755 "$T/m"
	# shellcheck disable=SC2086
	run python3 "$BATS_TEST_DIRNAME/../permtest/permtest.py" \
		--a "$T/m/p" --b "$T/ref/p" $args ${XTSFS_PERMTEST_ARGS:-} \
		--remount-cmd "fusermount3 -u '$T/m' && xtsfs --passfile '$T/pass' -o $o '$T/c' '$T/m'"
	echo "$output"
	echo "# $(echo "$output" | tail -1)" >&3
	[ "$status" -eq 0 ]
	[[ "$output" == *" 0 divergences"* ]]
}

@test "permissions: the grid of ops, callers, modes, name classes, xattrs and ACLs matches ext4 (-o acl)" {
	run_permtest acl ""
}

@test "permissions: the same grid but the ACL cells on a plaintext-names volume without -o acl" {
	run_permtest "" --no-acl --plaintext-names
}
