# SPDX-License-Identifier: Apache-2.0
# Helpers for the end-to-end tests on real FUSE mounts (20-fs, 30-faults).
# Load after helpers:   load helpers; load fs_helpers
#
# Conventions: $C is the cipher directory, $M the mount point, $R a plain
# reference directory on the same filesystem as $T (the oracle).

# remount DIR MNT [xtsfs options...]: unmount and mount again, so every
# later read comes from the lower files, not from a cache.
remount() {
	local dir=$1 mnt=$2
	shift 2
	umount_vol "$mnt" || return 1
	xtsfs --passfile "$T/pass" "$@" \
		"$dir" "$mnt"
}

# vol_setup [mkfs args...]: a fresh volume in $C mounted on $M, and an
# empty reference directory $R.
vol_setup() {
	C=$T/c
	M=$T/m
	R=$T/ref
	mkdir -p "$R"
	mkvol "$C" "$@"
	mount_vol "$C" "$M"
}

# lower_of PATH: the lower object (in $C) of the plaintext PATH (on $M),
# found by inode number: xtsfs reports the lower inode numbers.
lower_of() {
	local ino
	ino=$(stat -c %i "$1") || return 1
	find "$C" -xdev -inum "$ino" -print -quit
}

# lower_names DIR: the entries of a lower directory, one a line, sorted.
lower_names() {
	ls -A "$1" | LC_ALL=C sort
}

# user_names LOWERDIR: the lower entries that are not xtsfs internals.
user_names() {
	ls -A "$1" | grep -v '^xtsfs\.' | LC_ALL=C sort
}

# md5 FILE: just the digest.
md5() {
	md5sum "$1" | cut -d' ' -f1
}

# lsize FILE: size in bytes.
lsize() {
	stat -c %s "$1"
}

# start_fg DIR MNT [xtsfs options...]: run the daemon in the foreground
# in the background, its stderr to $T/daemon.log, and wait until the
# mount is there. Sets DAEMON_PID. Fails if the daemon exits first.
start_fg() {
	local dir=$1 mnt=$2 i
	shift 2
	mkdir -p "$mnt"
	track_mount "$mnt"
	# fd 3 closed: bats must not wait for the daemon's end
	xtsfs -f --passfile "$T/pass" "$@" \
		"$dir" "$mnt" \
		</dev/null >"$T/daemon.out" 2>"$T/daemon.log" 3>&- &
	DAEMON_PID=$!
	# a safety bound against a hang, not a timing assertion
	for i in $(seq 1 600); do
		mountpoint -q "$mnt" && return 0
		kill -0 "$DAEMON_PID" 2>/dev/null || {
			cat "$T/daemon.log" >&2
			return 1
		}
		sleep 0.1
	done
	echo "daemon never mounted $mnt" >&2
	return 1
}

# refute CMD...: fail if CMD succeeds. (A bare "! CMD" never fails a
# Bats test: bash's errexit ignores negated commands.)
refute() {
	if "$@"; then
		echo "unexpectedly succeeded: $*" >&2
		return 1
	fi
	return 0
}

# mkdata FILE SIZE [SEED]: SIZE reproducible pseudo-random bytes.
mkdata() {
	python3 - "$1" "$2" "${3:-1}" <<'PY'
import random, sys
p, n, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
r = random.Random(seed)
open(p, 'wb').write(r.randbytes(n) if n else b'')
PY
}

# renameat2 DIR OLD NEW FLAGS: the renameat2(2) system call, FLAGS
# "noreplace" or "exchange". Prints nothing; exits with errno on failure
# and prints the error name on stderr.
renameat2() {
	python3 - "$@" <<'PY'
import ctypes, errno, os, sys
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD = -100
flags = {'noreplace': 1, 'exchange': 2, 'whiteout': 4, 'none': 0}[sys.argv[3]]
fn = getattr(libc, 'renameat2', None)
if fn is not None:
    rc = fn(AT_FDCWD, sys.argv[1].encode(), AT_FDCWD, sys.argv[2].encode(), flags)
else:
    rc = libc.syscall(316, AT_FDCWD, sys.argv[1].encode(), AT_FDCWD,
                      sys.argv[2].encode(), flags)
if rc != 0:
    e = ctypes.get_errno()
    print(errno.errorcode.get(e, str(e)), file=sys.stderr)
    sys.exit(e)
PY
}
