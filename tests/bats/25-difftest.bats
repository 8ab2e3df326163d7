#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The randomized differential tester (tests/difftest/difftest.py): the
# same reproducible sequence of operations on a real mount and on a plain
# directory, compared byte for byte, with remounts in between. About a
# minute in all; XTSFS_DIFFTEST_MINUTES=N runs each seed for N minutes
# (soak mode), XTSFS_DIFFTEST_SEEDS="1 2 3" picks the seeds.

load helpers

setup() {
	common_setup
	mkvol "$T/c"
	mkdir "$T/m" "$T/ref"
	xtsfs --passfile "$T/pass" "$T/c" "$T/m"
	track_mount "$T/m"
}
teardown() { common_teardown; }

run_difftest() {
	local seed=$1 ops=$2
	local args=(--seed "$seed" --ops "$ops")

	if [ -n "${XTSFS_DIFFTEST_MINUTES:-}" ]; then
		args=(--seed "$seed" --minutes "$XTSFS_DIFFTEST_MINUTES")
	fi
	run python3 "$BATS_TEST_DIRNAME/../difftest/difftest.py" "${args[@]}" \
		--a "$T/m/s$seed" --b "$T/ref/s$seed" --remount-every 250 \
		--remount-cmd "fusermount3 -u '$T/m' && xtsfs --passfile '$T/pass' '$T/c' '$T/m'"
	echo "$output" | tail -25
	echo "# $(echo "$output" | tail -1)" >&3
	[ "$status" -eq 0 ]
	[[ "$output" == *"0 divergences"* ]]
}

@test "differential test against a plain directory, with remounts" {
	for seed in ${XTSFS_DIFFTEST_SEEDS:-7 11 2026}; do
		run_difftest "$seed" 1500
	done
}
