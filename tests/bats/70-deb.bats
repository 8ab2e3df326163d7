#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The Debian package: contrib/build-deb.sh builds it from this tree
# (unit tests included) and lintian finds no error; installed with apt-get
# it puts working tools in /usr/bin (a volume made, mounted, written and
# read with them), and a purge removes every file again.
#
# This installs a package on the machine running the tests: teardown
# always purges it, and the whole file is skipped if an xtsfs package or
# /usr/bin/xtsfs is already there (we would replace and then remove it).
# Every other test runs the build directory's tools (helpers.bash puts
# them first in PATH); here every installed tool is called by full path.

bats_require_minimum_version 1.5.0

load helpers

CMDS=(xtsfs xtsfs-mkfs xtsfs-passwd xtsfs-info xtsfs-fsck xtsfs-path xtsfs-extract xtsfs-bench)
SRC="$BATS_TEST_DIRNAME/../.."

# pkg_installed: is the xtsfs package installed (even half, or config only)?
pkg_installed() {
	local st
	st=$(dpkg-query -W -f='${db:Status-Status}' xtsfs 2>/dev/null) || return 1
	[ -n "$st" ] && [ "$st" != not-installed ]
}

purge_pkg() {
	if pkg_installed; then
		DEBIAN_FRONTEND=noninteractive apt-get remove --purge -y -q xtsfs \
			>/dev/null 2>&1 || dpkg --purge xtsfs >/dev/null 2>&1
	fi
}

# why_skip: the reason the tests of this file cannot run here, if any.
why_skip() {
	local tool
	if [ "$(id -u)" -ne 0 ]; then
		echo "needs root to install the package"
		return
	fi
	for tool in dpkg-buildpackage:dpkg-dev dh:debhelper lintian:lintian \
		    apt-get:apt; do
		if ! command -v "${tool%%:*}" >/dev/null; then
			echo "${tool#*:} is not installed (no ${tool%%:*})"
			return
		fi
	done
	if pkg_installed || [ -e /usr/bin/xtsfs ]; then
		echo "an xtsfs package or /usr/bin/xtsfs is already installed;" \
		     "not replacing it"
	fi
}

# Bats 1.8 cannot skip from setup_file: it leaves the reason for setup().
setup_file() {
	why_skip >"$BATS_FILE_TMPDIR/skip"
	[ ! -s "$BATS_FILE_TMPDIR/skip" ] || return 0
	touch "$BATS_FILE_TMPDIR/armed" # from here on, teardown_file purges
	export DEB_OUT="$BATS_FILE_TMPDIR/deb"
	# Build once for both tests; the first one reports the result. The
	# unit tests (dh_auto_test) are skipped to save half a minute:
	# run-all.sh runs them anyway. XTSFS_DEB_CHECK=1 runs them here too.
	if [ "${XTSFS_DEB_CHECK:-0}" = 1 ]; then
		unset DEB_BUILD_OPTIONS
	else
		export DEB_BUILD_OPTIONS=nocheck
	fi
	"$SRC/contrib/build-deb.sh" "$DEB_OUT" >"$BATS_FILE_TMPDIR/build.log" 2>&1
	echo $? >"$BATS_FILE_TMPDIR/build.status"
}

teardown_file() {
	# not after a skip: the package there may be the user's
	if [ -e "$BATS_FILE_TMPDIR/armed" ]; then
		purge_pkg
	fi
}

setup() {
	[ ! -s "$BATS_FILE_TMPDIR/skip" ] || skip "$(cat "$BATS_FILE_TMPDIR/skip")"
	common_setup
}

teardown() {
	[ -n "${T:-}" ] || return 0 # skipped before setup made anything
	common_teardown # unmounts first
	purge_pkg
}

@test "contrib/build-deb.sh builds a lintian-clean .deb with every file" {
	cat "$BATS_FILE_TMPDIR/build.log"
	[ "$(cat "$BATS_FILE_TMPDIR/build.status")" -eq 0 ]
	run ! grep '^E: ' "$BATS_FILE_TMPDIR/build.log"
	debs=("$DEB_OUT"/xtsfs_*.deb)
	[ "${#debs[@]}" -eq 1 ] && [ -f "${debs[0]}" ]
	run dpkg-deb -f "${debs[0]}" Package Depends
	[[ "$output" == *"Package: xtsfs"* ]]
	[[ "$output" == *fuse3* ]]
	[[ "$output" == *libfuse3* ]]
	[[ "$output" == *libargon2* ]]
	dpkg-deb -c "${debs[0]}" | awk '{ print $6 }' >"$T/files"
	for c in "${CMDS[@]}"; do
		grep -qx "./usr/bin/$c" "$T/files"
		grep -qx "./usr/share/man/man1/$c.1.gz" "$T/files"
		grep -qx "./usr/share/bash-completion/completions/$c" "$T/files"
	done
	# every doc of contrib/debian/docs; dh_compress gzips those over 4 KiB
	# (Debian policy 12.3), so each may be there as NAME or NAME.gz
	for d in README.md FORMAT.md SECURITY.md USAGE.md; do
		grep -qxE "\./usr/share/doc/xtsfs/$d(\.gz)?" "$T/files" ||
			{ echo "no $d in the package"; return 1; }
	done
}

@test "the installed package makes, mounts and uses a volume; purge removes it" {
	debs=("$DEB_OUT"/xtsfs_*.deb)
	[ -f "${debs[0]}" ] || skip "no .deb was built (see the test before)"
	# apt-get wants a path with a slash to take a local file
	run env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${debs[0]}"
	echo "$output"
	[ "$status" -eq 0 ]
	for c in "${CMDS[@]}"; do
		[ -x "/usr/bin/$c" ]
		run "/usr/bin/$c" --version
		[ "$status" -eq 0 ]
		[[ "$output" == "$c "* ]]
	done
	[ "$(man -w xtsfs-mkfs)" = /usr/share/man/man1/xtsfs-mkfs.1.gz ]
	# the other tests' tools still come from the build directory
	[ "$(command -v xtsfs)" = "$BIN/xtsfs" ]

	/usr/bin/xtsfs-mkfs -q "${KDF[@]}" --passfile "$T/pass" "$T/c"
	/usr/bin/xtsfs-info "$T/c" >/dev/null
	mkdir "$T/m"
	track_mount "$T/m"
	/usr/bin/xtsfs --passfile "$T/pass" "$T/c" "$T/m"
	mountpoint -q "$T/m"
	head -c 100000 /dev/urandom >"$T/ref"
	cp "$T/ref" "$T/m/file"
	echo hello >"$T/m/small"
	umount_vol "$T/m"
	/usr/bin/xtsfs --passfile "$T/pass" -o ro "$T/c" "$T/m"
	cmp "$T/ref" "$T/m/file"
	[ "$(cat "$T/m/small")" = hello ]
	umount_vol "$T/m"

	run env DEBIAN_FRONTEND=noninteractive apt-get remove --purge -y -q xtsfs
	echo "$output"
	[ "$status" -eq 0 ]
	run ! pkg_installed
	for c in "${CMDS[@]}"; do
		[ ! -e "/usr/bin/$c" ]
		[ ! -e "/usr/share/man/man1/$c.1.gz" ]
		[ ! -e "/usr/share/bash-completion/completions/$c" ]
	done
	[ ! -e /usr/share/doc/xtsfs ]
}
