#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The whole test suite: builds what it needs, then runs
#   1. the C unit tests (meson test) on the normal build (build/),
#   2. the same unit tests under ASan+UBSan (build-san/),
#   3. the end-to-end Bats tests on real FUSE mounts (tests/bats/).
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

if compgen -G "tests/bats/*.bats" >/dev/null; then
	log "end-to-end tests (tests/bats/)"
	export XTSFS_BUILD="$top/build"
	tapfile=$(mktemp)
	# streamed, so a long run shows its progress as it goes
	bats --tap tests/bats 2>&1 | tee "$tapfile"
	tap=$(cat "$tapfile")
	rm -f "$tapfile"
	bp=$(echo "$tap" | grep '^ok ' | grep -vc ' # skip')
	bs=$(echo "$tap" | grep '^ok ' | grep -c ' # skip')
	bf=$(echo "$tap" | grep -c '^not ok ')
	if ! echo "$tap" | grep -q '^1\.\.'; then
		echo "bats produced no plan"
		bf=$((bf + 1))
	fi
	passed=$((passed + bp))
	failed=$((failed + bf))
	skipped=$((skipped + bs))
fi

echo
# the last line is the plain total CI reads; skips are named just before
echo "$skipped skipped (reasons in the TAP above)"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
