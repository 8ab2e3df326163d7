#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Mount options: whatever bytes the cipher directory's or the mount
# point's path holds, the mount gets exactly the options asked for
# (issue 14 finding 1: a path used to be pasted into the FUSE option
# list unescaped), and the daemon's command line keeps no --extpass
# command (finding 7). With -o acl (issue 17) the kernel checks
# permissions itself, which mountinfo shows as default_permissions.

bats_require_minimum_version 1.5.0

load helpers
load fs_helpers

setup() {
	common_setup
	chmod 600 "$T/pass"
}
teardown() { common_teardown; }

# Path names that mean something to an option parser or to mountinfo:
# the separator, the escape (also before digits, as an octal escape
# would be, and last), '=', blanks, a newline, bytes that are not
# UTF-8, and the two exploits of the review.
NAMES=('a,b' 'back\slash' 'oct\012al' 'trail\' 'eq=ual' 'sp ace'
	$'new\nline' $'bytes\xff\xfe' 'v,allow_other' 'w,allow_other,suid,dev')

# mount_is MNT SOURCE FSTYPE RW MORE: the one mount on MNT (as in
# /proc/self/mountinfo, with its \ooo escapes undone) has source SOURCE
# and type FSTYPE; its mount options are RW,nosuid,nodev (and the
# kernel's relatime); its superblock options are RW, user_id=, group_id=
# and exactly the comma list MORE, in any order.
mount_is() {
	python3 - "$@" <<'PY'
import os, re, sys
mnt, src, fstype, rw, more = (os.fsencode(a) for a in sys.argv[1:6])
def unesc(b):
    return re.sub(rb'\\([0-7]{3})', lambda m: bytes([int(m.group(1), 8)]), b)
mnt = os.path.realpath(mnt)
found = []
for line in open('/proc/self/mountinfo', 'rb').read().split(b'\n'):
    if not line:
        continue
    f = line.split(b' ')
    sep = f.index(b'-', 6)
    if unesc(f[4]) == mnt:
        found.append((f[5], f[sep + 1], unesc(f[sep + 2]), f[sep + 3]))
if len(found) != 1:
    sys.exit('%d mounts on %r: %r' % (len(found), mnt, found))
mopts, typ, source, sopts = found[0]
errors = []
if source != src:
    errors.append('source %r, not %r' % (source, src))
if typ != fstype:
    errors.append('type %r, not %r' % (typ, fstype))
if set(mopts.split(b',')) - {b'relatime'} != {rw, b'nosuid', b'nodev'}:
    errors.append('mount options %r, not %s,nosuid,nodev' % (mopts, rw))
s = sopts.split(b',')
if s[0] != rw:
    errors.append('superblock options %r do not start with %s' % (sopts, rw))
extra = {o for o in s[1:] if not re.match(rb'(user_id|group_id)=\d+$', o)}
want = set(more.split(b',')) - {b''}
if extra != want:
    errors.append('superblock options %r: %r, not %r' % (sopts, extra, want))
if errors:
    sys.exit('\n'.join(errors))
PY
}

# fwd_vol NAME: a volume in $T/c/NAME, its mount point $T/m/NAME made.
fwd_vol() {
	mkdir -p "$T/c" "$T/m/$1"
	mkvol "$T/c/$1"
}

# rev_dir NAME: a plaintext directory $T/p/NAME with one file, made for
# reverse mode; its view directory $T/v/NAME made.
rev_dir() {
	mkdir -p "$T/p/$1" "$T/v/$1"
	echo plain >"$T/p/$1/file"
	xtsfs-mkfs -q "${KDF[@]}" --reverse --passfile "$T/pass" "$T/p/$1"
}

@test "forward: odd cipher dir and mount point paths get exactly the options asked for" {
	for n in "${NAMES[@]}"; do
		fwd_vol "$n"
		mount_vol "$T/c/$n" "$T/m/$n"
		mount_is "$T/m/$n" "$T/c/$n" fuse.xtsfs rw ""
		echo data >"$T/m/$n/f"
		[ "$(cat "$T/m/$n/f")" = data ]
		umount_vol "$T/m/$n"
	done
}

@test "forward: allow_other, allow_root and ro on odd paths; default_permissions exactly with the first two, or with -o acl" {
	for n in 'v,allow_other' 'back\slash' $'new\nline'; do
		fwd_vol "$n"
		mount_vol "$T/c/$n" "$T/m/$n" -o allow_other
		mount_is "$T/m/$n" "$T/c/$n" fuse.xtsfs rw default_permissions,allow_other
		umount_vol "$T/m/$n"
		# libfuse makes allow_root the kernel's allow_other and
		# refuses everyone but root and the owner itself
		mount_vol "$T/c/$n" "$T/m/$n" -o allow_root
		mount_is "$T/m/$n" "$T/c/$n" fuse.xtsfs rw default_permissions,allow_other
		umount_vol "$T/m/$n"
		mount_vol "$T/c/$n" "$T/m/$n" -o ro
		mount_is "$T/m/$n" "$T/c/$n" fuse.xtsfs ro ""
		umount_vol "$T/m/$n"
		# with POSIX ACLs (issue 17) the kernel checks permissions
		# itself, also for the owner alone; -o noacl undoes -o acl
		mount_vol "$T/c/$n" "$T/m/$n" -o acl
		mount_is "$T/m/$n" "$T/c/$n" fuse.xtsfs rw default_permissions
		umount_vol "$T/m/$n"
		mount_vol "$T/c/$n" "$T/m/$n" -o acl,noacl
		mount_is "$T/m/$n" "$T/c/$n" fuse.xtsfs rw ""
		umount_vol "$T/m/$n"
	done
}

@test "forward: a user's escaped -o option counts as libfuse reads it" {
	# "allo\w_other" is allow_other once libfuse undoes the escape: the
	# kernel must check permissions then, as for the plain word
	fwd_vol c1
	mount_vol "$T/c/c1" "$T/m/c1" -o 'allo\w_other'
	mount_is "$T/m/c1" "$T/c/c1" fuse.xtsfs rw default_permissions,allow_other
}

@test "reverse: odd plaintext dir and view paths get exactly the options asked for" {
	for n in "${NAMES[@]}"; do
		rev_dir "$n"
		track_mount "$T/v/$n"
		xtsfs --reverse --passfile "$T/pass" "$T/p/$n" "$T/v/$n"
		# the view is read-only and always checked by the kernel
		mount_is "$T/v/$n" "$T/p/$n" fuse.xtsfs-reverse ro default_permissions
		[ "$(ls "$T/v/$n" | wc -l)" -eq 2 ] # file and xtsfs.volume
		umount_vol "$T/v/$n"
	done
	n='v,allow_other'
	track_mount "$T/v/$n"
	xtsfs --reverse --passfile "$T/pass" -o allow_other "$T/p/$n" "$T/v/$n"
	mount_is "$T/v/$n" "$T/p/$n" fuse.xtsfs-reverse ro default_permissions,allow_other
}

@test "a mount point named /dev/fd/N is the directory it names" {
	# libfuse takes a mount point /dev/fd/N for a /dev/fuse descriptor
	# that someone else mounted: the path we checked is what we mount
	fwd_vol fd
	track_mount "$T/m/fd"
	xtsfs --passfile "$T/pass" "$T/c/fd" /dev/fd/7 7<"$T/m/fd"
	mount_is "$T/m/fd" "$T/c/fd" fuse.xtsfs rw ""
	echo data >"$T/m/fd/f"
	[ "$(cat "$T/m/fd/f")" = data ]
}

# as_nobody CMD...: run CMD as uid and gid 65534 without groups.
as_nobody() {
	setpriv --reuid 65534 --regid 65534 --clear-groups "$@"
}

@test "exploit: with a cipher dir named v,allow_other, nobody cannot read a root 0600 file" {
	chmod 755 "$T"
	fwd_vol 'v,allow_other'
	mount_vol "$T/c/v,allow_other" "$T/m/v,allow_other"
	M="$T/m/v,allow_other"
	echo qzxcontent >"$M/secret"
	chmod 600 "$M/secret"
	[ "$(cat "$M/secret")" = qzxcontent ]
	# precondition: nobody reaches the mount point's directory
	as_nobody ls "$T/m" >/dev/null
	run as_nobody cat "$M/secret"
	[ "$status" -ne 0 ]
	[[ $output != *qzxcontent* ]]
	run as_nobody chmod 666 "$M/secret"
	[ "$status" -ne 0 ]
	[ "$(stat -c %a "$M/secret")" = 600 ]
}

@test "exploit: with a cipher dir named w,allow_other,suid,dev, a setuid root binary gives nobody nothing" {
	chmod 755 "$T"
	n='w,allow_other,suid,dev'
	fwd_vol "$n"
	mount_vol "$T/c/$n" "$T/m/$n"
	M="$T/m/$n"
	cp /usr/bin/id "$M/id"
	chmod 4755 "$M/id"
	[ "$("$M/id" -u)" = 0 ]
	as_nobody ls "$T/m" >/dev/null
	run as_nobody "$M/id" -u
	[ "$output" != 0 ]
}
# daemon_cmdlines MNT: the NUL-separated command line of every xtsfs
# process whose command line names MNT, one per line (NULs as spaces).
daemon_cmdlines() {
	local p
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/exe" 2>/dev/null)" = "$(readlink -f "$BIN/xtsfs")" ] || continue
		tr '\0' ' ' <"$p/cmdline" 2>/dev/null | grep -aF -- "$1" || true
	done
}

@test "the daemon's command line keeps no --extpass command" {
	fwd_vol x
	cmd="cat $T/pass"
	i=0
	for form in sep eq o; do
		i=$((i + 1))
		mark="qzxmark$i"
		track_mount "$T/m/x"
		case $form in
		sep) xtsfs --extpass "$cmd #$mark" "$T/c/x" "$T/m/x" ;;
		eq) xtsfs --extpass="$cmd #$mark" "$T/c/x" "$T/m/x" ;;
		o) xtsfs -o "ro,extpass=$cmd #$mark,writeback" "$T/c/x" "$T/m/x" ;;
		esac
		mountpoint -q "$T/m/x"
		run daemon_cmdlines "$T/m/x"
		[ "${#lines[@]}" -eq 1 ] # precondition: the daemon is found
		[[ $output != *"$mark"* ]]
		[[ $output != *"cat $T"* ]]
		umount_vol "$T/m/x"
	done
	# -o options next to extpass= still count
	xtsfs -o "ro,extpass=$cmd" "$T/c/x" "$T/m/x"
	mount_is "$T/m/x" "$T/c/x" fuse.xtsfs ro ""
}

@test "-o extpass= and passfile= with a comma written as \\, (and a backslash as \\\\)" {
	fwd_vol e
	cp "$T/pass" "$T/p,ass"
	cp "$T/pass" "$T/p\\ass"
	track_mount "$T/m/e"
	# the command is "cat DIR/p,ass #qzx,mark": one option, all of it run
	xtsfs -o "ro,extpass=cat $T/p\\,ass #qzx\\,mark,allow_other" "$T/c/e" "$T/m/e"
	mount_is "$T/m/e" "$T/c/e" fuse.xtsfs ro default_permissions,allow_other
	# and wiped from the command line up to its last byte
	run daemon_cmdlines "$T/m/e"
	[ "${#lines[@]}" -eq 1 ]
	[[ $output != *mark* ]]
	[[ $output != *"cat $T"* ]]
	[[ $output == *"-o ro,extpass="*",allow_other "* ]]
	umount_vol "$T/m/e"
	xtsfs -o "passfile=$T/p\\,ass" "$T/c/e" "$T/m/e"
	mount_is "$T/m/e" "$T/c/e" fuse.xtsfs rw ""
	umount_vol "$T/m/e"
	xtsfs -o "passfile=$T/p\\\\ass" "$T/c/e" "$T/m/e"
	mount_is "$T/m/e" "$T/c/e" fuse.xtsfs rw ""
	umount_vol "$T/m/e"
	# an escape that libfuse undoes in one of our words: it is ours
	xtsfs --passfile "$T/pass" -o 'r\o,ext\pass=cat /nonexistent' "$T/c/e" "$T/m/e"
	mount_is "$T/m/e" "$T/c/e" fuse.xtsfs ro ""
	run daemon_cmdlines "$T/m/e"
	[[ $output != *nonexistent* ]]
}

@test "-o passfile= that others can read: a warning, and the mount all the same" {
	fwd_vol pf
	track_mount "$T/m/pf"
	chmod 644 "$T/pass"
	run xtsfs -o "passfile=$T/pass" "$T/c/pf" "$T/m/pf"
	[ "$status" -eq 0 ]
	[[ $output == *"xtsfs: warning: $T/pass: this passphrase file can be read by every user (mode 0644)"* ]]
	mountpoint -q "$T/m/pf"
	umount_vol "$T/m/pf"
	chmod 600 "$T/pass"
	run xtsfs -o "passfile=$T/pass" "$T/c/pf" "$T/m/pf"
	[ "$status" -eq 0 ]
	[[ $output != *warning* ]]
	mountpoint -q "$T/m/pf"
}

@test "-o numbers: a bad, empty or out-of-range value is usage (exit 2), named, and nothing is mounted" {
	fwd_vol n
	for opt in read_ahead_kb=abc read_ahead_kb= read_ahead_kb=-1 \
		read_ahead_kb=1048577 read_ahead_kb=4k attr_timeout=86401 \
		attr_timeout=nan entry_timeout=1e9 entry_timeout=' 5x'; do
		run xtsfs --passfile "$T/pass" -o "ro,$opt,writeback" "$T/c/n" "$T/m/n"
		[ "$status" -eq 2 ]
		[[ $output == *"xtsfs: -o $opt: expected a number from "* ]]
		refute mountpoint -q "$T/m/n"
	done
	# the first bad one stops the parse, even if a later one is good
	run xtsfs --passfile "$T/pass" -o attr_timeout=x,attr_timeout=1 "$T/c/n" "$T/m/n"
	[ "$status" -eq 2 ]
	[[ $output == *"-o attr_timeout=x: expected a number from 0 to 86400"* ]]
	# the limits themselves are good
	mount_vol "$T/c/n" "$T/m/n" -o read_ahead_kb=0,attr_timeout=86400,entry_timeout=0.5
	mount_is "$T/m/n" "$T/c/n" fuse.xtsfs rw ""
	umount_vol "$T/m/n"
	mount_vol "$T/c/n" "$T/m/n" -o read_ahead_kb=1048576,attr_timeout=0
	mount_is "$T/m/n" "$T/c/n" fuse.xtsfs rw ""
}

@test "-o: an unknown option, or one of ours without its value, is usage (exit 2) from libfuse" {
	fwd_vol u
	for opt in no_such_option read_ahead_kb attr_timeout passfile writeback=1 ro=1 \
		sharedstorage=1; do
		run xtsfs --passfile "$T/pass" -o "$opt" "$T/c/u" "$T/m/u"
		[ "$status" -eq 2 ]
		[[ $output == *"bad mount options"* ]]
		refute mountpoint -q "$T/m/u"
	done
}

@test "-o: mount(8) words, x-*, comment= and empty words are dropped; ours never reach the kernel" {
	fwd_vol w
	mount_vol "$T/c/w" "$T/m/w" -o ',defaults,auto,noauto,nofail,user,nouser,users,owner,group,_netdev,relatime,diratime,symfollow,nomand,noiversion,nolazytime,loud,x-systemd.automount,x-gvfs-show,comment=systemd.x,,'
	mount_is "$T/m/w" "$T/c/w" fuse.xtsfs rw ""
	umount_vol "$T/m/w"
	mount_vol "$T/c/w" "$T/m/w" -o writeback,read_ahead_kb=128,attr_timeout=1,entry_timeout=1,allow_costly_kdf,sharedstorage
	mount_is "$T/m/w" "$T/c/w" fuse.xtsfs rw ""
	umount_vol "$T/m/w"
	# several -o add up; of ro and rw the last one wins
	mount_vol "$T/c/w" "$T/m/w" -o ro -o allow_other
	mount_is "$T/m/w" "$T/c/w" fuse.xtsfs ro default_permissions,allow_other
	umount_vol "$T/m/w"
	mount_vol "$T/c/w" "$T/m/w" -o ro,rw
	mount_is "$T/m/w" "$T/c/w" fuse.xtsfs rw ""
	umount_vol "$T/m/w"
	mount_vol "$T/c/w" "$T/m/w" -o rw -o ro
	mount_is "$T/m/w" "$T/c/w" fuse.xtsfs ro ""
}

@test "-o passfile= and extpass=: the last one wins; --passfile wins over both" {
	fwd_vol p
	track_mount "$T/m/p"
	run xtsfs -o "extpass=cat $T/wrong,passfile=$T/pass" "$T/c/p" "$T/m/p"
	[ "$status" -eq 0 ]
	umount_vol "$T/m/p"
	run xtsfs -o "passfile=$T/wrong" -o "extpass=cat $T/pass" "$T/c/p" "$T/m/p"
	[ "$status" -eq 0 ]
	umount_vol "$T/m/p"
	run xtsfs -o "passfile=$T/pass,extpass=cat $T/wrong" "$T/c/p" "$T/m/p"
	[ "$status" -eq 4 ]
	refute mountpoint -q "$T/m/p"
	run xtsfs --passfile "$T/pass" -o "passfile=$T/wrong" "$T/c/p" "$T/m/p"
	[ "$status" -eq 0 ]
}
