#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Extended attributes and POSIX ACLs through a forward mount (issue 17,
# ACLs with -o acl),
# compared with a plain reference directory $R next to the cipher
# directory on the same lower filesystem, wherever they should behave
# alike. $T is under /tmp, which is ext4 with 4 KiB blocks here (the
# first test says so, as the value-size limits depend on it): all of a
# file's xattrs share about one 4 KiB block, so a single short-named
# value holds 4040 bytes natively and 3976 through xtsfs (FORMAT 6.3).
# Other lower filesystems (XFS, tmpfs) are made as loop images or
# mounts inside $T. Reverse mode does not show xattrs yet: not tested.
#
# Calls go through tests/bats/xattr_tool.py (os.*xattr and libc through
# ctypes, never following a final symlink), which prints "ok", the value
# or the errno name, so both trees can be compared line for line.

load helpers
load fs_helpers

# A fresh volume $C mounted on $M with -o acl (POSIX ACLs are opt-in),
# an empty reference directory $R. Every mount here passes -o acl but
# the test of the default (noacl).
setup() {
	[ "$(id -u)" -eq 0 ] || skip "needs root (trusted.*, mknod, other uids)"
	common_setup
	C=$T/c
	M=$T/m
	R=$T/ref
	mkdir -p "$R"
	mkvol "$C"
	mount_vol "$C" "$M" -o acl
	XT="$BATS_TEST_DIRNAME/xattr_tool.py"
}

# the system's Python: a pyenv shim costs half a second a call, and
# uid 65534 may not run it
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
export PY

# unmount in the reverse order of mounting: a mount made on a loop image
# or tmpfs goes before what it sits on
teardown() {
	local i m
	for ((i = ${#MOUNTS[@]} - 1; i >= 0; i--)); do
		m=${MOUNTS[i]}
		mountpoint -q "$m" && { fusermount3 -u "$m" 2>/dev/null ||
			umount "$m" 2>/dev/null || fusermount3 -uz "$m" 2>/dev/null ||
			umount -l "$m"; }
	done
	common_teardown
}

xt() { "$PY" "$XT" "$@"; }

# gf GETFATTR-ARGS...: getfattr with each file's lines sorted (listxattr
# has no defined order; ext4's is not the mount's)
gf() {
	getfattr "$@" 2>&1 | "$PY" -c '
import sys
for blk in sys.stdin.read().rstrip("\n").split("\n\n"):
    ls = blk.split("\n")
    print("\n".join(ls[:1] + sorted(ls[1:])) + "\n")'
}

# same CMD...: CMD run in $R and in $M (relative paths) prints the same
# and exits the same; otherwise show both and fail.
same() {
	local a b
	a=$(cd "$R" && { "$@" && echo "rc=0" || echo "rc=$?"; } 2>&1)
	b=$(cd "$M" && { "$@" && echo "rc=0" || echo "rc=$?"; } 2>&1)
	[ "$a" = "$b" ] && return 0
	echo "differs from the plain directory: $* (--- ref, +++ mount)" >&2
	diff -u <(printf '%s\n' "$a") <(printf '%s\n' "$b") >&2
	return 1
}

# both CMD...: CMD in $R, then in $M; fails if either fails.
both() {
	(cd "$R" && "$@") && (cd "$M" && "$@")
}

# nob CMD...: CMD as uid and gid 65534 (nobody) without groups.
nob() {
	setpriv --reuid 65534 --regid 65534 --clear-groups "$@"
}

# nxt ARGS...: xattr_tool.py as nobody
nxt() {
	nob "$PY" "$XT" "$@"
}

# tree_acls DIR: getfacl of everything under DIR but symlinks, sorted,
# numeric.
tree_acls() {
	local p
	find "$1" | LC_ALL=C sort | while IFS= read -r p; do
		[ -L "$p" ] || getfacl -n -P -- "$p" 2>&1
	done
}

# tree_modes DIR: type, mode, owner and name of everything under DIR.
tree_modes() {
	find "$1" -printf '%y %m %U:%G %p\n' | LC_ALL=C sort -k4
}

# xdump DIR: every xattr under DIR, sorted (xattr_tool.py dump).
xdump() {
	xt dump "$1"
}

# same_trees A B: the same xattrs, ACLs, modes and owners under A and B.
same_trees() {
	diff -u <(xdump "$1") <(xdump "$2") >&2 || return 1
	diff -u <(cd "$1" && tree_acls .) <(cd "$2" && tree_acls .) >&2 || return 1
	diff -u <(cd "$1" && tree_modes .) <(cd "$2" && tree_modes .) >&2 || return 1
}

# lower_xattrs PATH: the lower object's xattrs, as getfattr dumps them.
lower_xattrs() {
	getfattr -h -d -m - -e hex --absolute-names "$(lower_of "$1")"
}

# objects DIR: one of each kind of object in DIR: regular file f,
# directory d, symlink l, fifo p, character device c.
objects() {
	mkdir -p "$1"
	echo data >"$1/f"
	mkdir "$1/d"
	ln -s f "$1/l"
	mkfifo "$1/p"
	mknod "$1/c" c 1 3
}

# populate DIR: a tree with xattrs and ACLs of every kind the mount
# takes: both namespaces, empty, binary and 3000-byte values, names of
# 1 to 160 bytes, ACLs and default ACLs, symlinks, fifos, devices,
# hard links, a 200-byte file name.
populate() {
	local d=$1 long
	long=$(printf 'L%.0s' $(seq 1 200))
	objects "$d"
	mkdir "$d/d/sub"
	echo hard >"$d/d/h1"
	ln "$d/d/h1" "$d/d/h2"
	echo long >"$d/$long"
	setfattr -n user.plain -v hello "$d/f"
	setfattr -n user.empty "$d/f"
	setfattr -n user.bin -v 0x00ff0000fe01 "$d/f"
	setfattr -n "user.$(printf 'n%.0s' $(seq 1 160))" -v longname "$d/f"
	setfattr -n trusted.t -v "trusted value" "$d/f"
	"$PY" -c 'import os,sys; os.setxattr(sys.argv[1], "user.big", bytes(range(256)) * 11 + b"x" * 184)' "$d/d"
	setfattr -n user.dir -v "of a directory" "$d/d"
	setfattr -h -n trusted.link -v "of a symlink" "$d/l"
	setfattr -n trusted.fifo -v "of a fifo" "$d/p"
	setfattr -n trusted.dev -v "of a device" "$d/c"
	setfattr -n user.hard -v "of both links" "$d/d/h1"
	setfattr -n user.longname -v "of a 200-byte name" "$d/$long"
	setfattr -n user.sp -v 'space and UTF-8: é' "$d/d/sub"
	setfacl -m u:65534:rw,g:65534:r "$d/f"
	setfacl -m u:65534:rwx "$d/d"
	setfacl -d -m u:65534:rx,g:65534:rwx "$d/d/sub"
	setfacl -m g:65534:rw "$d/d/h1"
}

# ---- the lower filesystem ----------------------------------------------------

@test "the tests' lower filesystem is ext4 with 4 KiB blocks; a plain file takes a 4040-byte value, not 4041" {
	# what the limit tests below assume; if this fails, they need new numbers
	[ "$(stat -f -c %T "$T")" = ext2/ext3 ]
	[ "$(findmnt -n -o FSTYPE --target "$T")" = ext4 ]
	[ "$(stat -f -c %S "$T")" -eq 4096 ]
	touch "$R/f"
	[ "$(xt try set "$R/f" user.v n:4040:1)" = ok ]
	[ "$(xt try set "$R/f" user.v n:4041:1)" = ENOSPC ]
}

# ---- objects -----------------------------------------------------------------

@test "user.* and trusted.*, step by step, on a file, directory, symlink, fifo and device node: as on ext4" {
	objects "$R/o"
	objects "$M/o"
	for o in f d l p c; do
		for ns in user trusted; do
			same xt seq "o/$o" "$ns"
		done
	done
	# and what ext4 does, spelled out
	run xt seq "$M/o/f" user
	[[ $output == *"user get missing: ENODATA"* ]]
	[[ $output == *"user remove missing: ENODATA"* ]]
	[[ $output == *"user get empty: ok 0 "* ]]
	[[ $output == *"user get 1 byte: ok 1 78"* ]]
	[[ $output == *"user get NULs: ok 6 00610000ff00"* ]]
	[[ $output == *"user get 3900: ok 3900 sha:"* ]]
	[[ $output == *"user create existing: EEXIST"* ]]
	[[ $output == *"user replace missing: ENODATA"* ]]
	[[ $output == *"user create new: ok"* ]]
	[[ $output == *"user replace existing: ok"* ]]
	[[ $output == *"user get replaced: ok 8 7265706c61636564"* ]]
	[[ $output == *"user list two: ok user.other,user.xt"* ]]
	[[ $output == *"user get removed: ENODATA"* ]]
	[[ $output == *"user list after remove: ok "* ]]
	# user.* on a symlink, fifo or device: EPERM as on ext4; trusted.* works
	for o in l p c; do
		[ "$(xt try set "$M/o/$o" user.x 01)" = EPERM ]
		[ "$(xt try get "$M/o/$o" user.x)" = ENODATA ]
		[ "$(xt try set "$M/o/$o" trusted.x 01)" = ok ]
		[ "$(xt try get "$M/o/$o" trusted.x)" = "ok 1 01" ]
	done
	# the symlink's own xattrs, not its target's
	[ "$(xt try get "$M/o/f" trusted.x)" = ENODATA ]
}

@test "getfattr and setfattr on every kind of object: the same output and exit codes as on ext4" {
	objects "$R/o"
	objects "$M/o"
	for o in f d l p c; do
		same setfattr -h -n user.a -v "value of $o" "o/$o"
		same setfattr -h -n trusted.b -v 0x00010203 "o/$o"
		same setfattr -h -n user.e "o/$o"
	done
	same gf -h -d -m - o/f o/d o/l o/p o/c
	same gf -h -d -m - -e hex o/f o/d o/l o/p o/c
	same getfattr -h -n user.a o/f
	same getfattr -h -n user.missing o/f
	same setfattr -h -x user.missing o/f
	same setfattr -h -x user.a o/f
	same setfattr -h -x user.a o/l
	same gf -h -d -m - o/f o/l
	# -h on a symlink: user.* refused
	run setfattr -h -n user.a -v 1 "$M/o/l"
	[ "$status" -ne 0 ]
	[[ $output == *"Operation not permitted"* ]]
	# without -h, the target's
	same setfattr -n user.via -v link o/l
	same getfattr -n user.via o/f
}

@test "size probes: getxattr and listxattr with size 0, a buffer too small (ERANGE) and the exact size, as on ext4" {
	objects "$R/o"
	objects "$M/o"
	both setfattr -n user.ten -v 0123456789 o/f
	both setfattr -n user.zero o/f
	both setfattr -n "user.$(printf 'q%.0s' $(seq 1 160))" -v 0x00 o/f
	both setfattr -n trusted.big -v "0x$(printf 'ab%.0s' $(seq 1 3000))" o/d
	both setfattr -h -n trusted.l -v abc o/l
	for args in "o/f user.ten" "o/f user.zero" "o/f user.$(printf 'q%.0s' $(seq 1 160))" \
		"o/f user.missing" "o/d trusted.big" "o/l trusted.l" "o/p trusted.none"; do
		# shellcheck disable=SC2086
		same xt probe $args
	done
	run xt probe "$M/o/f" user.ten
	[[ $output == *"getxattr size 0: 10"* ]]
	[[ $output == *"getxattr size 9: ERANGE"* ]]
	[[ $output == *"getxattr size 10: 10 30313233343536373839"* ]]
	[[ $output == *"getxattr size 110: 10"* ]]
	# plaintext names: user.ten + user.zero + user.q*160, each with its NUL
	[[ $output == *"listxattr size 0: $((9 + 10 + 166))"* ]]
	[[ $output == *"listxattr size $((9 + 10 + 165)): ERANGE"* ]]
	run xt probe "$M/o/f" user.missing
	[[ $output == *"getxattr size 0: ENODATA"* ]]
}

@test "listxattr: the same names as on ext4 (sorted sets), for 1 to 160-byte names and both namespaces, after a remount too" {
	touch "$R/f" "$M/f"
	mkdir "$R/d" "$M/d"
	names=(a Ab 0123456789abcde 0123456789abcdef 0123456789abcdefg "with space" "é-utf8"
		"$(printf 'x%.0s' $(seq 1 31))" "$(printf 'y%.0s' $(seq 1 32))" "$(printf 'z%.0s' $(seq 1 33))"
		"$(printf 'm%.0s' $(seq 1 100))" "$(printf 'k%.0s' $(seq 1 159))" "$(printf 'j%.0s' $(seq 1 160))")
	for n in "${names[@]}"; do
		both setfattr -n "user.$n" -v 1 f
		both setfattr -n "trusted.$n" -v 2 d
	done
	both setfattr -n user.dir -v 3 d
	both setfacl -m u:65534:r f
	same xt names f
	same xt names d
	same xt probe f user.a
	[ "$(xt names "$M/f" | wc -l)" -eq $((${#names[@]} + 1)) ]
	xt names "$M/f" | grep -qx system.posix_acl_access
	remount "$C" "$M" -o acl
	same xt names f
	same xt names d
	same xt dump .
}

# ---- limits ------------------------------------------------------------------

@test "name limits: 160 bytes after the prefix work, 161 and 255 give ERANGE (ext4 takes 255); a bare prefix gives EINVAL as on ext4" {
	touch "$M/f" "$R/f"
	n160=$(printf 'a%.0s' $(seq 1 160))
	n161=$(printf 'b%.0s' $(seq 1 161))
	n250=$(printf 'c%.0s' $(seq 1 250))
	for ns in user trusted; do
		[ "$(xt try set "$M/f" "$ns.$n160" 76)" = ok ]
		[ "$(xt try get "$M/f" "$ns.$n160")" = "ok 1 76" ]
		xt names "$M/f" | grep -qx "$ns.$n160"
		# documented (FORMAT 6.2): longer than 160 is ERANGE, what Linux
		# answers past its own 255
		[ "$(xt try set "$M/f" "$ns.$n161" 76)" = ERANGE ]
		[ "$(xt try set "$M/f" "$ns.$n161" 76 create)" = ERANGE ]
		[ "$(xt try set "$M/f" "$ns.$n250" 76)" = ERANGE ]
		# such a name can never be there
		[ "$(xt try get "$M/f" "$ns.$n161")" = ENODATA ]
		[ "$(xt try remove "$M/f" "$ns.$n161")" = ENODATA ]
		# past Linux's 255 the kernel answers, as everywhere
		same xt try set f "$ns.$(printf 'd%.0s' $(seq 1 256))" 76
		same xt try get f "$ns.$(printf 'd%.0s' $(seq 1 256))"
		[ "$(xt try remove "$M/f" "$ns.$n160")" = ok ]
		# ext4 for comparison: 161 is fine there
		[ "$(xt try set "$R/f" "$ns.$n161" 76)" = ok ]
	done
	# nothing was left behind by the refused ones
	[ "$(xt names "$M/f")" = "" ]
	[ "$(getfattr -d -m - --absolute-names "$(lower_of "$M/f")" | grep -c -E '^(user|trusted)\.')" -eq 0 ]
	# a bare prefix, as on ext4 (fs/xattr.c, xattr_resolve_name)
	for ns in user trusted; do
		same xt try set f "$ns." 76
		same xt try get f "$ns."
		same xt try remove f "$ns."
		same xt try set f "$ns." 76 create
	done
}

@test "value limits on ext4 (4 KiB block): 3976 bytes work, 3977 give ENOSPC, 65520 ENOSPC or E2BIG, 65521 E2BIG; nothing half-set" {
	touch "$M/f" "$M/g"
	# FORMAT 6.3: 4040 natively, less the 16 bytes of V and 48 of the
	# longer stored name
	[ "$(xt try set "$M/f" user.v n:3976:1)" = ok ]
	touch "$R/f"
	xt try set "$R/f" user.v n:3976:1
	[ "$(xt try get "$M/f" user.v)" = "$(xt try get "$R/f" user.v)" ]
	for n in 3977 4000 4040; do
		[ "$(xt try set "$M/f" user.v "n:$n:2")" = ENOSPC ]
		[ "$(xt try set "$M/g" user.w "n:$n:2")" = ENOSPC ]
	done
	# the old value is whole, the new name absent, on the mount and below
	[ "$(xt try get "$M/f" user.v | cut -d' ' -f1-2)" = "ok 3976" ]
	[ "$(xt try get "$M/g" user.w)" = ENODATA ]
	[ "$(xt names "$M/g")" = "" ]
	[ "$(getfattr -d -m - --absolute-names "$(lower_of "$M/g")" | grep -c -E '^(user|trusted)\.')" -eq 0 ]
	for n in 65520 65536; do
		r=$(xt try set "$M/g" user.w "n:$n:3")
		[ "$r" = ENOSPC ] || [ "$r" = E2BIG ]
	done
	[ "$(xt try set "$M/g" user.w n:65521:3)" = E2BIG ]
	[ "$(xt try set "$M/g" user.w n:65537:3)" = E2BIG ]
	[ "$(xt try get "$M/g" user.w)" = ENODATA ]
	[ "$(xt names "$M/g")" = "" ]
	# all of a file's xattrs share the block: each costs 64 bytes more
	[ "$(xt try set "$M/g" user.a n:2000:4)" = ok ]
	[ "$(xt try set "$M/g" user.b n:2000:5)" = ENOSPC ]
	[ "$(xt names "$M/g")" = user.a ]
	remount "$C" "$M" -o acl
	[ "$(xt try get "$M/f" user.v | cut -d' ' -f1-2)" = "ok 3976" ]
	[ "$(xt names "$M/g")" = user.a ]
}

# ---- what the cipher directory shows --------------------------------------

@test "no plaintext xattr name or value in the cipher directory; stored names marked, values 16 bytes longer, deterministic" {
	# a marker long enough not to turn up in random base64 by chance
	mk=qzxMARK7f3e
	mkdir "$M/d"
	echo x >"$M/f"
	echo y >"$M/f2"
	ln -s f "$M/l"
	mkfifo "$M/p"
	setfattr -n "user.${mk}n1" -v "${mk}-v1" "$M/f"
	setfattr -n "user.${mk}n1" -v "${mk}-v1" "$M/f2"
	setfattr -n "trusted.${mk}n2" -v "${mk}-value-two" "$M/d"
	setfattr -h -n "trusted.${mk}n3" -v "${mk}-value-three" "$M/l"
	setfattr -n "trusted.${mk}n4" -v "${mk}-value-four" "$M/p"
	hex=$(printf '%s' "$mk" | od -An -tx1 | tr -d ' \n')
	setfattr -n "user.${mk}n5" -v "0x00${hex}00" "$M/d"
	lo=$(lower_of "$M/f")
	umount_vol "$M"
	getfattr -h -d -m - -R --absolute-names "$C" >"$T/dump"
	getfattr -h -d -m - -R -e hex --absolute-names "$C" >"$T/dump.hex"
	cat "$T/dump"
	refute grep -a -e "$mk" "$T/dump"
	refute grep -a -e "$hex" "$T/dump.hex"
	refute grep -r -a -l -e "$mk" "$C"
	# every user.* and trusted.* name below is a marked, encrypted one
	# shellcheck disable=SC2143 # (! grep is no test in Bats)
	[ -z "$(grep -a '^[a-z]*\.' "$T/dump" | grep -a -v -E '^(user|trusted)\.xtsfs\.[A-Za-z0-9_-]{43}=')" ]
	[ "$(grep -a -c -E '^(user|trusted)\.xtsfs\.' "$T/dump")" -eq 6 ]
	# a value of 14 bytes is stored in 30 (0x and 60 hex digits)
	a=$(getfattr -d -m - -e hex --absolute-names "$lo" | grep '^user\.')
	v=${a#*=}
	[ "${#v}" -eq $((2 + 2 * (14 + 16))) ]
	# the same name and value on two files: the same stored name and value
	mount_vol "$C" "$M" -o acl
	a2=$(lower_xattrs "$M/f" | grep '^user\.')
	b2=$(lower_xattrs "$M/f2" | grep '^user\.')
	[ "$a2" = "$b2" ]
	[ "$a" = "$a2" ]
	[ "$(getfattr --only-values -n "user.${mk}n1" "$M/f2")" = "${mk}-v1" ]
}

@test "ACLs are the lower object's own: getfacl of the lower object equals the mount's" {
	echo x >"$M/f"
	mkdir "$M/d"
	setfacl -m u:65534:rw,g:65534:r "$M/f"
	setfacl -m u:65534:rwx -d -m g:65534:rx "$M/d"
	[ "$(getfacl -n -c "$M/f")" = "$(getfacl -n -c "$(lower_of "$M/f")")" ]
	[ "$(getfacl -n -c "$M/d")" = "$(getfacl -n -c "$(lower_of "$M/d")")" ]
	getfacl -n -c "$M/d" | grep -qx 'default:group:65534:r-x'
}

@test "security.* and other namespaces: EOPNOTSUPP (documented), never passed to the lower object" {
	touch "$M/f"
	for n in security.selinux security.foo security.ima system.foo system.posix_acl_bogus foo.bar; do
		# (Python names errno 95 ENOTSUP: the same number on Linux)
		[ "$(xt try set "$M/f" "$n" 01)" = ENOTSUP ]
		[ "$(xt try get "$M/f" "$n")" = ENOTSUP ]
		[ "$(xt try remove "$M/f" "$n")" = ENOTSUP ]
	done
	# a file capability (cap_net_raw+ep, VFS_CAP_REVISION_2): the kernel
	# checks the value first, then passes it on like any other
	cap=0x0100000200200000000000000000000000000000
	[ "$(xt try set "$M/f" security.capability "${cap#0x}")" = ENOTSUP ]
	[ "$(xt try get "$M/f" security.capability)" = ENOTSUP ]
	run setfattr -n security.foo -v 1 "$M/f"
	[ "$status" -ne 0 ]
	[[ $output == *"Operation not supported"* ]]
	[ -z "$(getfattr -d -m - --absolute-names "$(lower_of "$M/f")")" ]
	# ext4 would take them (what xtsfs refuses by design)
	touch "$R/f"
	[ "$(xt try set "$R/f" security.foo 01)" = ok ]
	[ "$(xt try set "$R/f" security.capability "${cap#0x}")" = ok ]
}

@test "xattrs of the lower object that xtsfs did not make are not shown and left alone; a value moved to another name gives EIO" {
	echo x >"$M/f"
	echo y >"$M/g"
	setfattr -n user.mine -v mine "$M/f"
	setfattr -n user.other -v other "$M/g"
	lo=$(lower_of "$M/f")
	lg=$(lower_of "$M/g")
	# a file manager's or rsync --fake-super's, set on the cipher dir
	setfattr -n user.xdg.origin.url -v http://example "$lo"
	setfattr -n trusted.foreign -v 1 "$lo"
	[ "$(xt names "$M/f")" = user.mine ]
	[ "$(xt try get "$M/f" user.xdg.origin.url)" = ENODATA ]
	setfattr -n user.more -v more "$M/f"
	setfattr -x user.mine "$M/f"
	[ "$(getfattr --only-values --absolute-names -n user.xdg.origin.url "$lo")" = http://example ]
	[ "$(getfattr --only-values --absolute-names -n trusted.foreign "$lo")" = 1 ]
	# g's stored value copied under f's stored name for user.more
	sn=$(getfattr -d -m '^user\.xtsfs\.' --absolute-names "$lo" | grep '^user\.xtsfs\.' | cut -d= -f1)
	sv=$(getfattr -d -m '^user\.xtsfs\.' -e hex --absolute-names "$lg" | grep '^user\.xtsfs\.' | cut -d= -f2)
	setfattr -n "$sn" -v "$sv" "$lo"
	remount "$C" "$M" -o acl
	[ "$(xt try get "$M/f" user.more)" = EIO ]
	# a stored name that is marked but does not decrypt: not shown
	setfattr -n user.xtsfs.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA -v 0x00 "$lo"
	remount "$C" "$M" -o acl
	[ "$(xt names "$M/f")" = user.more ]
}

@test "a plaintext-names volume encrypts xattr names and values too" {
	umount_vol "$M"
	rm -rf "$C"
	mkvol "$C" --plaintext-names
	mount_vol "$C" "$M" -o acl
	echo x >"$M/f"
	setfattr -n user.qzxname -v qzxvalue "$M/f"
	[ "$(getfattr --only-values -n user.qzxname "$M/f")" = qzxvalue ]
	refute grep -a -e qzx <(getfattr -d -m - -R --absolute-names "$C")
	[ "$(getfattr -d -m - --absolute-names "$C/f" | grep -c '^user\.xtsfs\.')" -eq 1 ]
}

# ---- xattrs follow their object -----------------------------------------------

@test "xattrs and ACLs follow their object: rename (short and 200-byte names), hard links, a deleted open file, the mount's root" {
	long=$(printf 'L%.0s' $(seq 1 200))
	for d in "$R" "$M"; do
		mkdir "$d/w"
		echo x >"$d/w/f"
		setfattr -n user.a -v 1 "$d/w/f"
		setfacl -m u:65534:r "$d/w/f"
		mv "$d/w/f" "$d/w/$long"
		setfattr -n user.b -v 2 "$d/w/$long"
		ln "$d/w/$long" "$d/w/link"
		setfattr -n user.c -v 3 "$d/w/link"
		mkdir "$d/w/sub"
		mv "$d/w/$long" "$d/w/sub/short"
		setfattr -n user.dir -v 4 "$d/w/sub"
		mv "$d/w/sub" "$d/w/$long"
	done
	same xt dump w
	same tree_acls w
	remount "$C" "$M" -o acl
	same xt dump w
	[ "$(xt names "$M/w/link" | tr '\n' ' ')" = "system.posix_acl_access user.a user.b user.c " ]
	# a file unlinked while open keeps its xattrs through the descriptor
	for d in "$R" "$M"; do
		"$PY" - "$d/w/gone" >"$d.out" <<'PY'
import os, sys
fd = os.open(sys.argv[1], os.O_CREAT | os.O_RDWR, 0o644)
os.setxattr(fd, "user.before", b"1")
os.unlink(sys.argv[1])
os.setxattr(fd, "user.after", b"2")
print(sorted(os.listxattr(fd)), os.getxattr(fd, "user.before"), os.getxattr(fd, "user.after"))
os.removexattr(fd, "user.before")
print(sorted(os.listxattr(fd)))
PY
	done
	diff "$R.out" "$M.out"
	# the mount's root directory is an object like any other
	setfattr -n user.root -v r "$M"
	setfattr -n trusted.root -v t "$M"
	remount "$C" "$M" -o acl
	[ "$(getfattr --only-values -n user.root "$M")" = r ]
	[ "$(getfattr --only-values -n trusted.root "$M")" = t ]
}

@test "xattrs and ACLs survive a remount" {
	populate "$M/w"
	xdump "$M/w" >"$T/before"
	(cd "$M/w" && tree_acls .) >"$T/acl.before"
	remount "$C" "$M" -o acl
	diff -u "$T/before" <(xdump "$M/w")
	diff -u "$T/acl.before" <(cd "$M/w" && tree_acls .)
	# and equal to what ext4 keeps of the same commands
	populate "$R/w"
	same xt dump w
	same tree_acls w
	same tree_modes w
}

# ---- the cipher directory copied ------------------------------------------------

# check_copy DIR: DIR, a copy of $C, mounts on $T/m2 and shows the tree
# as $M/w showed it ($T/expect.*); unmounts it again.
check_copy() {
	local dir=$1
	mount_vol "$dir" "$T/m2" -o acl
	diff -u "$T/expect.x" <(xdump "$T/m2/w")
	diff -u "$T/expect.acl" <(cd "$T/m2/w" && tree_acls .)
	diff -u "$T/expect.modes" <(cd "$T/m2/w" && tree_modes .)
	umount_vol "$T/m2"
}

save_expect() {
	xdump "$M/w" >"$T/expect.x"
	(cd "$M/w" && tree_acls .) >"$T/expect.acl"
	(cd "$M/w" && tree_modes .) >"$T/expect.modes"
	# the tree is what ext4 makes of the same commands
	populate "$R/w"
	diff -u <(xdump "$R/w") "$T/expect.x"
	diff -u <(cd "$R/w" && tree_acls .) "$T/expect.acl"
	[ "$(grep -c . "$T/expect.x")" -ge 19 ]
}

@test "a cipher directory copied with rsync -aHSXA, cp -a and tar --xattrs --acls mounts with every xattr and ACL intact" {
	populate "$M/w"
	save_expect
	umount_vol "$M"
	rsync -aHSXA "$C/" "$T/c-rsync/"
	check_copy "$T/c-rsync"
	cp -a "$C" "$T/c-cp"
	check_copy "$T/c-cp"
	tar --xattrs --acls --xattrs-include='*' -cSpf "$T/c.tar" -C "$C" .
	mkdir "$T/c-tar"
	tar --xattrs --acls --xattrs-include='*' -xpf "$T/c.tar" -C "$T/c-tar"
	check_copy "$T/c-tar"
	# the copy's lower xattrs are the original's, byte for byte
	diff <(cd "$C" && xt dump .) <(cd "$T/c-rsync" && xt dump .)
	diff <(cd "$C" && xt dump .) <(cd "$T/c-tar" && xt dump .)
	# rsync again: no xattr is seen as changed
	[ -z "$(rsync -aHSXAi "$C/" "$T/c-rsync/")" ]
}

@test "tar --xattrs --acls of a cipher directory, extracted without --xattrs-include: trusted.* lost (GNU tar restores user.* only), as for a plain tree" {
	populate "$M/w"
	umount_vol "$M"
	tar --xattrs --acls -cpf "$T/c.tar" -C "$C" .
	mkdir "$T/c-tar"
	tar --xattrs --acls -xpf "$T/c.tar" -C "$T/c-tar"
	mount_vol "$T/c-tar" "$T/m2" -o acl
	# user.* and the ACLs are there, trusted.* are not
	[ "$(getfattr --only-values -n user.plain "$T/m2/w/f")" = hello ]
	getfacl -n "$T/m2/w/f" | grep -qx 'user:65534:rw-'
	[ "$(xt try get "$T/m2/w/f" trusted.t)" = ENODATA ]
	[ "$(xt try get "$T/m2/w/l" trusted.link)" = ENODATA ]
	# the same for the plain tree
	populate "$R/w"
	tar --xattrs --acls -cpf "$T/r.tar" -C "$R" w
	mkdir "$T/r-tar"
	tar --xattrs --acls -xpf "$T/r.tar" -C "$T/r-tar"
	[ "$(xt try get "$T/r-tar/w/f" trusted.t)" = ENODATA ]
	[ "$(getfattr --only-values -n user.plain "$T/r-tar/w/f")" = hello ]
}

# mk_xfs DIR: an XFS loop image mounted on DIR (teardown unmounts it).
mk_xfs() {
	truncate -s 320M "$T/xfs.img"
	mkfs.xfs -q "$T/xfs.img"
	mkdir -p "$1"
	track_mount "$1"
	mount -o loop "$T/xfs.img" "$1"
}

# mk_tmpfs DIR: a small tmpfs on DIR (teardown unmounts it).
mk_tmpfs() {
	mkdir -p "$1"
	track_mount "$1"
	mount -t tmpfs -o size=64m,mode=0755 xtsfs-bats "$1"
}

@test "a cipher directory copied with rsync -aHSXA and cp -a onto XFS (loop image) and tmpfs mounts with every xattr and ACL intact" {
	command -v mkfs.xfs
	populate "$M/w"
	save_expect
	umount_vol "$M"
	mk_xfs "$T/xfs"
	[ "$(findmnt -n -o FSTYPE "$T/xfs")" = xfs ]
	# As root, rsync 3.5 sees XFS's own names for the ACLs
	# (trusted.SGI_ACL_FILE/DEFAULT) on the receiving side, removes them
	# as not in the source and so drops a directory's ACL, natively too:
	# the filter keeps rsync's hands off them.
	rsync -aHSXA --filter='-x trusted.SGI_ACL_*' "$C/" "$T/xfs/c/"
	check_copy "$T/xfs/c"
	cp -a "$C" "$T/xfs/c-cp"
	check_copy "$T/xfs/c-cp"
	mk_tmpfs "$T/tmpfs"
	rsync -aHSXA "$C/" "$T/tmpfs/c/"
	check_copy "$T/tmpfs/c"
	# and back to ext4, from tmpfs and from XFS
	rsync -aHSXA "$T/tmpfs/c/" "$T/c-back/"
	check_copy "$T/c-back"
	rsync -aHSXA --filter='-x trusted.SGI_ACL_*' "$T/xfs/c/" "$T/c-back2/"
	check_copy "$T/c-back2"
}

# xfs_volume: instead of $M, a volume on an XFS loop image mounted on
# $T/xm, with a file f there and in a reference directory $T/xfs/ref
xfs_volume() {
	command -v mkfs.xfs
	umount_vol "$M"
	mk_xfs "$T/xfs"
	mkvol "$T/xfs/c"
	mount_vol "$T/xfs/c" "$T/xm" -o acl
	mkdir "$T/xfs/ref"
	touch "$T/xm/f" "$T/xfs/ref/f"
}

@test "on XFS, 65520-byte values work and 65521 give E2BIG (FORMAT 6.3: XFS takes 64 KiB)" {
	xfs_volume
	[ "$(xt try set "$T/xm/f" user.big n:65520:9)" = ok ]
	[ "$(xt try set "$T/xm/f" trusted.big n:65520:10)" = ok ]
	[ "$(xt try set "$T/xm/f" user.big2 n:65521:9)" = E2BIG ]
	[ "$(xt try get "$T/xm/f" user.big2)" = ENODATA ]
	[ "$(xt try set "$T/xfs/ref/f" user.big n:65520:9)" = ok ]
	[ "$(xt try get "$T/xm/f" user.big)" = "$(xt try get "$T/xfs/ref/f" user.big)" ]
	umount_vol "$T/xm"
	mount_vol "$T/xfs/c" "$T/xm" -o acl
	[ "$(xt try get "$T/xm/f" user.big)" = "$(xt try get "$T/xfs/ref/f" user.big)" ]
	[ "$(xt try get "$T/xm/f" trusted.big | cut -d' ' -f1-2)" = "ok 65520" ]
}

@test "on XFS, an object whose plaintext xattr list fits in 64 KiB stays listable (or its setxattr is refused), on the mount and below" {
	xfs_volume
	# 300 names of 164 bytes (+ NUL): 49,500 bytes of list, under
	# Linux's XATTR_LIST_MAX of 65536; stored, each name is 246 bytes
	"$PY" - "$T/xm/f" "$T/xfs/ref/f" >"$T/out" <<'PY'
import errno, os, sys
for p in sys.argv[1:]:
    refused = None
    for i in range(300):
        try:
            os.setxattr(p, "user.%03d" % i + "a" * 157, b"v")
        except OSError as e:
            refused = (i, errno.errorcode[e.errno])
            break
    try:
        n = len(os.listxattr(p))
    except OSError as e:
        n = errno.errorcode[e.errno]
    print(p, "refused:", refused, "listed:", n)
PY
	cat "$T/out"
	grep -qx "$T/xfs/ref/f refused: None listed: 300" "$T/out"
	# xtsfs may refuse a setxattr (ENOSPC or E2BIG), but what it took
	# must stay listable: getfattr -d, rsync -X and cp -a need the list
	line=$(grep "^$T/xm/f " "$T/out")
	if [[ $line == *"refused: None"* ]]; then
		[[ $line == *"listed: 300" ]]
	else
		[[ $line =~ refused:\ \(([0-9]+),\ \'(ENOSPC|E2BIG)\'\)\ listed:\ ([0-9]+)$ ]]
		[ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[3]}" ]
	fi
	# and the cipher directory can still be backed up with its xattrs
	umount_vol "$T/xm"
	rsync -aHSXA "$T/xfs/c/" "$T/xfs/c2/"
}

# ---- ACLs ----------------------------------------------------------------------

@test "without -o acl (the default): user.* and trusted.* work, ACLs are refused and not shown, the umask applies, lower ACLs survive" {
	echo x >"$M/f"
	mkdir "$M/d"
	setfacl -m u:65534:rw "$M/f"
	setfacl -d -m u:65534:rx "$M/d"
	setfattr -n user.a -v 1 "$M/f"
	remount "$C" "$M"
	# the default mount: no ACLs
	[ "$(xt names "$M/f")" = user.a ]
	[ "$(xt names "$M/d")" = "" ]
	[ "$(xt try get "$M/f" system.posix_acl_access)" = ENOTSUP ]
	[ "$(xt try get "$M/d" system.posix_acl_default)" = ENOTSUP ]
	run setfacl -m u:65534:r "$M/f"
	[ "$status" -ne 0 ]
	[[ $output == *"Operation not supported"* ]]
	[ "$(xt try remove "$M/f" system.posix_acl_access)" = ENOTSUP ]
	setfattr -n user.b -v 2 "$M/f"
	setfattr -n trusted.c -v 3 "$M/f"
	[ "$(xt names "$M/f" | tr '\n' ' ')" = "trusted.c user.a user.b " ]
	# the umask is the kernel's again: modes as on ext4 (no ACLs there)
	for u in 000 002 077; do
		# shellcheck disable=SC2016
		both sh -c 'umask "$1"; mkdir w$1; touch w$1/f; mkdir w$1/d; mkfifo w$1/p' sh "$u"
		same tree_modes "w$u"
	done
	# the lower ACLs were left alone: there again with -o acl
	remount "$C" "$M" -o acl
	getfacl -n "$M/f" | grep -qx 'user:65534:rw-'
	getfacl -n "$M/d" | grep -qx 'default:user:65534:r-x'
	[ "$(xt names "$M/f" | tr '\n' ' ')" = "system.posix_acl_access trusted.c user.a user.b " ]
}

@test "setfacl and getfacl on a file and a directory as on ext4; chmod afterwards updates the mask as on ext4" {
	for d in "$R" "$M"; do
		echo x >"$d/f"
		mkdir "$d/d"
	done
	same setfacl -m u:65534:rw f
	same getfacl -n f
	same stat -c %a f
	for step in "chmod 640 f" "chmod 600 f" "chmod 664 f" "setfacl -m m::r f" \
		"chmod g+w f" "setfacl -m g:65534:rwx f" "chmod 700 f" "setfacl -x u:65534 f" \
		"setfacl -b f" "setfacl -m u:0:r,o::- f" "setfacl -k d" \
		"setfacl -m u:65534:rwx,d:u:65534:rx d" "chmod 750 d" "setfacl -m d:m::r d" \
		"setfacl -x d:u:65534 d" "setfacl -k d" "setfacl -m u:65534:rwx d" "setfacl -b d"; do
		# shellcheck disable=SC2086
		same $step
		same getfacl -n f d
		same stat -c '%a %n' f d
	done
	# an ACL set through the mount is the lower's, after a remount too
	same setfacl -m u:65534:r,g:65534:rw f
	remount "$C" "$M" -o acl
	same getfacl -n f d
	same stat -c '%a %n' f d
	# setfacl --restore of the ref's dump
	getfacl -n "$R/f" >"$T/acl.dump"
	sed -i "s|^# file: .*|# file: f|" "$T/acl.dump"
	both setfacl -b f
	(cd "$M" && setfacl --restore="$T/acl.dump")
	(cd "$R" && setfacl --restore="$T/acl.dump")
	same getfacl -n f
}

@test "default ACLs are inherited by new files, directories, fifos and devices as on ext4, under umask 022 and 077" {
	for d in "$R" "$M"; do
		mkdir "$d/w"
		setfacl -d -m u:65534:rwx,g:65534:r-x,o::r-- "$d/w"
		mkdir "$d/w2"
		setfacl -d -m u:65534:rw,m::rwx "$d/w2"
	done
	for u in 022 077 000; do
		for w in w w2; do
			# shellcheck disable=SC2016
			both sh -c 'umask "$1"; cd "$2"; touch f$1; mkdir d$1; mkdir -m 0750 dm$1; mkfifo p$1; mknod c$1 c 1 3
				"$PY" -c "import os; os.close(os.open(\"x$1\", os.O_CREAT | os.O_WRONLY, 0o640))"
				"$PY" -c "import os; os.close(os.open(\"y$1\", os.O_CREAT | os.O_WRONLY, 0o755))"
				mkdir d$1/sub; touch d$1/sub/f; ln -s f l$1' sh "$u" "$w"
		done
	done
	same tree_acls w
	same tree_acls w2
	same tree_modes w
	same tree_modes w2
	remount "$C" "$M" -o acl
	same tree_acls w
	same tree_modes w2
	# the inherited entry is really there
	getfacl -n "$M/w/f077" | grep -q '^user:65534:rwx'
	getfacl -n "$M/w/d077/sub/f" | grep -q '^user:65534:rwx'
}

@test "without a default ACL the umask applies: modes as on ext4 under umask 0, 002, 022 and 077" {
	for u in 000 002 022 077; do
		# shellcheck disable=SC2016
		both sh -c 'umask "$1"; mkdir w$1; cd w$1; touch f; mkdir d; mkdir -m 0777 d777; mkfifo p; mknod c c 1 3
			"$PY" -c "import os; os.close(os.open(\"x\", os.O_CREAT | os.O_WRONLY, 0o777))"
			"$PY" -c "import os; os.close(os.open(\"s\", os.O_CREAT | os.O_WRONLY, 0o6777))"
			"$PY" -c "import os; os.mkdir(\"k\", 0o1777)"
			cp /dev/null cp; ln -s f l' sh "$u"
		same tree_modes "w$u"
		same tree_acls "w$u"
	done
	[ "$(stat -c %a "$M/w002/f")" = 664 ]
	[ "$(stat -c %a "$M/w000/d")" = 777 ]
	[ "$(stat -c %a "$M/w077/x")" = 700 ]
	# a directory whose default ACL was removed goes back to the umask
	for d in "$R" "$M"; do
		mkdir "$d/k"
		setfacl -d -m u:65534:rwx "$d/k"
		setfacl -k "$d/k"
	done
	both sh -c 'umask 027; touch k/f; mkdir k/d'
	same tree_modes k
}

@test "ACLs are enforced for other users (allow_other): a named-user entry grants and denies, the mask limits, as on ext4" {
	umount_vol "$M"
	chmod 755 "$T"
	mount_vol "$C" "$M" -o allow_other,acl
	chmod 755 "$M" "$R"
	both sh -c 'echo secret >s; chmod 600 s; setfacl -m u:65534:r s'
	# root's 0600 file with u:65534:r: readable by nobody, not writable
	same nob cat s
	[ "$(nob cat "$M/s")" = secret ]
	same nob sh -c 'echo x >>s'
	refute nob sh -c "echo x >>'$M/s'"
	[ "$(cat "$M/s")" = secret ]
	# rw: writable
	both setfacl -m u:65534:rw s
	same nob sh -c 'echo more >>s'
	same cat s
	# the mask limits the named entry
	both setfacl -m m::r s
	same nob sh -c 'echo x >>s'
	same nob cat s
	# chmod of the group bits is the mask: 0600 makes it ---
	both chmod 600 s
	same getfacl -n s
	same nob cat s
	refute nob cat "$M/s"
	both chmod 660 s
	same nob cat s
	# the entry removed: unreadable again
	both setfacl -x u:65534 s
	same nob cat s
	refute nob cat "$M/s"
	# a named group entry
	both setfacl -m g:65534:r s
	same nob cat s
	[ "$(nob cat "$M/s" | head -1)" = secret ]
	both setfacl -x g:65534 s
	same nob cat s
	# an entry denying what "other" would allow
	both sh -c 'echo open >o; chmod 644 o'
	same nob cat o
	both setfacl -m u:65534:- o
	same nob cat o
	refute nob cat "$M/o"
	both setfacl -m g:65534:- o
	both setfacl -x u:65534 o
	same nob cat o
	refute nob cat "$M/o"
	# a directory: search and write granted by an entry
	both sh -c 'mkdir -m 700 dd; echo in >dd/f'
	same nob ls dd
	both setfacl -m u:65534:rx dd
	same nob ls dd
	same nob cat dd/f
	same nob touch dd/new
	both setfacl -m u:65534:rwx dd
	same nob touch dd/new
	same nob mkdir dd/nd
	same tree_modes dd
	both setfacl -x u:65534 dd
	same nob ls dd
	refute nob ls "$M/dd"
	# what nobody makes under a default ACL
	both sh -c 'mkdir -m 777 dflt; setfacl -d -m u:0:rwx,g::r-x,o::- dflt'
	same nob sh -c 'umask 022; touch dflt/f; mkdir dflt/d; mkfifo dflt/p'
	same tree_acls dflt
	same tree_modes dflt
	# nobody may not set an ACL on root's file, but on its own
	same nob setfacl -m u:65534:rwx s
	same nob setfacl -m u:0:r dflt/f
	same getfacl -n dflt/f
}

@test "user.* xattrs for other users (allow_other): write permission on the file is needed, reading needs read, as on ext4" {
	umount_vol "$M"
	chmod 755 "$T"
	mount_vol "$C" "$M" -o allow_other,acl
	chmod 755 "$M" "$R"
	# shellcheck disable=SC2016
	both sh -c 'for m in 600 644 666 604 606; do echo x >f$m; chmod $m f$m; setfattr -n user.a -v 1 f$m; done
		mkdir -m 1777 sticky; echo y >sticky/root; chmod 666 sticky/root
		setpriv --reuid 65534 --regid 65534 --clear-groups sh -c "echo z >sticky/mine"; chmod 666 sticky/mine
		echo acl >facl; chmod 600 facl; setfacl -m u:65534:rw facl
		mkdir -m 1777 sd; setfattr -n user.a -v 1 sd
		mkdir -m 777 d777; setfattr -n user.a -v 1 d777
		mkdir -m 1777 sdn; chown 65534 sdn; setfattr -n user.a -v 1 sdn'
	# user.* on a sticky directory: only its owner (fs/xattr.c,
	# xattr_permission), whatever the mode says
	for f in f600 f644 f666 f604 f606 sticky/root sticky/mine facl sd d777 sdn; do
		same nxt try get "$f" user.a
		same nxt try set "$f" user.b 02
		same nxt try remove "$f" user.a
		same nxt try list "$f"
	done
	same xt dump .
	[ "$(nxt try set "$M/sd" user.b 02)" = EPERM ]
	[ "$(nxt try set "$M/d777" user.b 02)" = ok ]
	[ "$(nxt try set "$M/f666" user.c 02)" = ok ]
	[ "$(nxt try set "$M/f644" user.c 02)" = EACCES ]
}

@test "trusted.* for other users (allow_other): hidden from their listxattr and getfattr -d, refused to get and set, as on ext4" {
	umount_vol "$M"
	chmod 755 "$T"
	mount_vol "$C" "$M" -o allow_other,acl
	chmod 755 "$M" "$R"
	both sh -c 'echo x >f; chmod 644 f; setfattr -n user.u -v 1 f; setfattr -n trusted.t -v 2 f
		mkdir d; setfattr -n trusted.t -v 3 d; ln -s f l; setfattr -h -n trusted.t -v 4 l'
	for o in f d l; do
		same nxt try list "$o"
		same nxt try get "$o" trusted.t
		same nxt try set "$o" trusted.n 01
	done
	same nob getfattr -h -d -m - f d l
	# ext4 (fs/ext4/xattr_trusted.c: listed only with CAP_SYS_ADMIN)
	[ "$(nxt try list "$R/f")" = "ok user.u" ]
	[ "$(nxt try list "$M/f")" = "ok user.u" ]
	# root sees them
	[ "$(xt try list "$M/f")" = "ok trusted.t,user.u" ]
}

# ---- copying into the mount ------------------------------------------------------

@test "rsync -aX, rsync -aHSXA, cp -a and tar --xattrs --acls INTO the mount: every xattr and ACL arrives, rsync exits 0" {
	populate "$T/src"
	# rsync -aX: as into a plain directory (it exited 23 before issue 17)
	rsync -aX "$T/src/" "$R/rs-aX/"
	run rsync -aX "$T/src/" "$M/rs-aX/"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	same xt dump rs-aX
	same tree_acls rs-aX
	# the complete copies: equal to the source
	run rsync -aHSXA "$T/src/" "$M/rs/"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	same_trees "$T/src" "$M/rs"
	[ "$(stat -c %i "$M/rs/d/h1")" = "$(stat -c %i "$M/rs/d/h2")" ]
	# again: nothing to do, no xattr seen as changed
	[ -z "$(rsync -aHSXAi "$T/src/" "$M/rs/")" ]
	run cp -a "$T/src" "$M/cp"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	same_trees "$T/src" "$M/cp"
	tar --xattrs --acls --xattrs-include='*' -cpf "$T/src.tar" -C "$T/src" .
	mkdir "$M/tar"
	run tar --xattrs --acls --xattrs-include='*' -xpf "$T/src.tar" -C "$M/tar"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	same_trees "$T/src" "$M/tar"
	# what the mount was given, it keeps
	remount "$C" "$M" -o acl
	same_trees "$T/src" "$M/rs"
	same_trees "$T/src" "$M/cp"
	same_trees "$T/src" "$M/tar"
}

@test "tar --xattrs --acls and rsync -aHSXA OUT of the mount into a plain directory: equal to the source" {
	populate "$M/w"
	populate "$T/src"
	run tar --xattrs --acls --xattrs-include='*' -cpf "$T/m.tar" -C "$M/w" .
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	mkdir "$T/out"
	tar --xattrs --acls --xattrs-include='*' -xpf "$T/m.tar" -C "$T/out"
	same_trees "$T/src" "$T/out"
	run rsync -aHSXA "$M/w/" "$T/out2/"
	[ "$status" -eq 0 ]
	same_trees "$T/src" "$T/out2"
	run cp -a "$M/w" "$T/out3"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	same_trees "$T/src" "$T/out3"
}

@test "a lower filesystem without xattrs (ramfs): the same clean ENOTSUP (EOPNOTSUPP) as natively, and the file is fine" {
	umount_vol "$M"
	mkdir "$T/ram"
	mount -t ramfs ramfs "$T/ram"
	track_mount "$T/ram"
	mkvol "$T/ram/c"
	mount_vol "$T/ram/c" "$T/rm"
	echo data >"$T/rm/f"
	echo data >"$T/ram/native"
	[ "$(xt try set "$T/ram/native" user.a 01)" = ENOTSUP ]
	[ "$(xt try set "$T/rm/f" user.a 01)" = ENOTSUP ]
	[ "$(xt try get "$T/rm/f" user.a)" = "$(xt try get "$T/ram/native" user.a)" ]
	[ "$(xt names "$T/rm/f")" = "$(xt names "$T/ram/native")" ]
	[ "$(cat "$T/rm/f")" = data ]
	umount_vol "$T/rm"
}
