#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The whole test suite: builds what it needs, then runs
#   1. the C unit tests (meson test) on the normal build (build/),
#   2. the same unit tests under ASan+UBSan (build-san/),
#   3. the end-to-end Bats tests on real FUSE mounts (tests/bats/),
#   4. the core filesystem files of 3 again, with every mount over FUSE
#      over io_uring (-o uring; XTSFS_TEST_OPTS): 20-fs, 25-difftest,
#      27-permtest, 30-faults, and 39-locks (its interrupted waits come
#      through /dev/fuse beside the ring). Only where the fuse module offers it
#      (/sys/module/fuse/parameters/enable_uring is Y; .ci/run sets it),
#      else said and skipped.
#   5. those files and 37-coherence again with every mount -o noopen
#      (the kernel opens regular files without OPEN or RELEASE).
#   6. 20-fs, 25-difftest and 30-faults again on volumes of
#      the aligned layout (xtsfs-mkfs --layout=aligned;
#      XTSFS_TEST_MKFS_OPTS).
# The last line is the total "N passed, N failed"; the exit status is
# non-zero if anything failed. Run as root (FUSE mounts).
set -u
cd "$(dirname "$0")/.."
top=$(pwd)
passed=0
failed=0
skipped=0
log() { printf '\n== %s\n' "$*"; }

# meson_suite BUILDDIR [meson setup options...]
meson_suite() {
	local dir=$1
	shift
	if [ ! -f "$dir/build.ninja" ]; then
		meson setup "$dir" "$@" >"$dir.setup.log" 2>&1 || {
			cat "$dir.setup.log"
			echo "meson setup $dir failed"
			failed=$((failed + 1))
			return
		}
	fi
	if ! ninja -C "$dir"; then
		echo "build of $dir failed"
		failed=$((failed + 1))
		return
	fi
	local out outfile
	outfile=$(mktemp)
	meson test -C "$dir" --print-errorlogs 2>&1 | tee "$outfile"
	out=$(cat "$outfile")
	rm -f "$outfile"
	local ok fail timeout
	ok=$(echo "$out" | awk '/^Ok:/ {print $2}')
	fail=$(echo "$out" | awk '/^Fail:/ {print $2}')
	timeout=$(echo "$out" | awk '/^Timeout:/ {print $2}')
	skip=$(echo "$out" | awk '/^Skipped:/ {print $2}')
	if [ -z "$ok" ]; then
		echo "no meson test summary from $dir"
		failed=$((failed + 1))
		return
	fi
	passed=$((passed + ok))
	failed=$((failed + ${fail:-0} + ${timeout:-0}))
	skipped=$((skipped + ${skip:-0}))
}

log "unit tests (build/)"
meson_suite build

log "unit tests under ASan+UBSan (build-san/)"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	meson_suite build-san -Db_sanitize=address,undefined -Db_lundef=false

# bats_run NAME FILES...: run Bats FILES (TAP streamed) and add up.
bats_run() {
	local name=$1 tapfile tap bp bs bf
	shift
	tapfile=$(mktemp)
	# streamed, so a long run shows its progress as it goes
	bats --tap "$@" 2>&1 | tee "$tapfile"
	tap=$(cat "$tapfile")
	rm -f "$tapfile"
	bp=$(echo "$tap" | grep '^ok ' | grep -vc ' # skip')
	bs=$(echo "$tap" | grep '^ok ' | grep -c ' # skip')
	bf=$(echo "$tap" | grep -c '^not ok ')
	if ! echo "$tap" | grep -q '^1\.\.'; then
		echo "bats ($name) produced no plan"
		bf=$((bf + 1))
	fi
	passed=$((passed + bp))
	failed=$((failed + bf))
	skipped=$((skipped + bs))
}

if compgen -G "tests/bats/*.bats" >/dev/null; then
	log "end-to-end tests (tests/bats/)"
	export XTSFS_BUILD="$top/build"
	bats_run all tests/bats

	log "core end-to-end tests again, over FUSE over io_uring (-o uring)"
	if [ "$(cat /sys/module/fuse/parameters/enable_uring 2>/dev/null)" = Y ]; then
		export XTSFS_TEST_OPTS=uring
		bats_run uring tests/bats/20-fs.bats \
			tests/bats/25-difftest.bats tests/bats/27-permtest.bats \
			tests/bats/30-faults.bats tests/bats/39-locks.bats
		unset XTSFS_TEST_OPTS
	else
		echo "skipped: /sys/module/fuse/parameters/enable_uring is not Y"
		skipped=$((skipped + 1))
	fi

	log "core end-to-end tests again, with -o noopen"
	export XTSFS_TEST_OPTS=noopen
	bats_run noopen tests/bats/20-fs.bats tests/bats/25-difftest.bats \
		tests/bats/27-permtest.bats tests/bats/30-faults.bats \
		tests/bats/37-coherence.bats
	unset XTSFS_TEST_OPTS

	log "core end-to-end tests again, on volumes of the aligned layout"
	export XTSFS_TEST_MKFS_OPTS=--layout=aligned
	bats_run aligned tests/bats/20-fs.bats tests/bats/25-difftest.bats \
		tests/bats/30-faults.bats
	unset XTSFS_TEST_MKFS_OPTS
fi

echo
# the last line is the plain total CI reads; skips are named just before
echo "$skipped skipped (reasons in the TAP above)"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
