#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The command line every command shares (tools/cli.c): -h/--help on
# stdout with exit 0, -V/--version as one line "NAME VERSION" with exit
# 0, and bad usage (an unknown option, a missing value, wrong operands)
# on stderr with exit 2 (16 for xtsfs-fsck, whose codes are fsck(8)'s).

bats_require_minimum_version 1.5.0

load helpers

CMDS=(xtsfs xtsfs-mkfs xtsfs-passwd xtsfs-info xtsfs-fsck xtsfs-path xtsfs-extract xtsfs-bench)

# usage_status CMD: the exit code of bad usage
usage_status() {
	if [ "$1" = xtsfs-fsck ]; then echo 16; else echo 2; fi
}

setup() { common_setup; }
teardown() { common_teardown; }

@test "every command: -h and --help print the help on stdout and exit 0" {
	for c in "${CMDS[@]}"; do
		for h in -h --help; do
			run --separate-stderr "$c" "$h"
			[ "$status" -eq 0 ]
			[ -z "$stderr" ]
			[[ "${lines[0]}" == "Usage: $c "* ]]
			[[ "$output" == *"  -h, --help "*"show this help and exit"* ]]
			[[ "$output" == *"  -V, --version "*"show the version and exit"* ]]
			[[ "$output" == *"xample"* ]]
			[[ "$output" == *"Exit status: 0 "* ]]
		done
	done
}

@test "every command: -V and --version print one line NAME VERSION and exit 0" {
	for c in "${CMDS[@]}"; do
		for v in -V --version; do
			run --separate-stderr "$c" "$v"
			[ "$status" -eq 0 ]
			[ -z "$stderr" ]
			[ "${#lines[@]}" -eq 1 ]
			[[ "$output" =~ ^$c\ [0-9]+\.[0-9]+\.[0-9]+$ ]]
		done
	done
	# one version for all
	[ "$(for c in "${CMDS[@]}"; do "$c" --version | cut -d' ' -f2; done | sort -u | wc -l)" -eq 1 ]
}

@test "every command: --help and --version win over what follows, not over a bad option before" {
	for c in "${CMDS[@]}"; do
		run --separate-stderr "$c" --help --no-such-option
		[ "$status" -eq 0 ]
		run --separate-stderr "$c" --version /nonexistent extra words
		[ "$status" -eq 0 ]
		[[ "$output" == "$c "* ]]
		run --separate-stderr "$c" --no-such-option --help
		[ "$status" -eq "$(usage_status "$c")" ]
		[ -z "$output" ]
	done
}

@test "every command: an unknown option is usage on stderr, exit 2, stdout empty" {
	for c in "${CMDS[@]}"; do
		for bad in --no-such-option -Z; do
			run --separate-stderr "$c" "$bad"
			[ "$status" -eq "$(usage_status "$c")" ]
			[ -z "$output" ]
			[[ "$stderr" == "$c: "*"option"* ]]
			[[ "$stderr" == *"Usage: $c "* ]]
		done
	done
	run --separate-stderr xtsfs-mkfs --no-such-option
	[[ "${stderr_lines[0]}" == "xtsfs-mkfs: unrecognized option '--no-such-option'" ]]
	run --separate-stderr xtsfs-info -Z
	[[ "${stderr_lines[0]}" == "xtsfs-info: invalid option -- 'Z'" ]]
}

@test "every command: an option without its value is usage, exit 2" {
	run --separate-stderr xtsfs -o
	[ "$status" -eq 2 ]
	[[ "${stderr_lines[0]}" == "xtsfs: option requires an argument -- 'o'" ]]
	run --separate-stderr xtsfs-mkfs --passfile
	[ "$status" -eq 2 ]
	[[ "${stderr_lines[0]}" == "xtsfs-mkfs: option '--passfile' requires an argument" ]]
	run --separate-stderr xtsfs-passwd --remove
	[ "$status" -eq 2 ]
	run --separate-stderr xtsfs-info --cipher
	[ "$status" -eq 2 ]
	run --separate-stderr xtsfs-fsck --passfile
	[ "$status" -eq 16 ]
	run --separate-stderr xtsfs-bench --runs
	[ "$status" -eq 2 ]
	[ -z "$output" ]
}

@test "every command: wrong operands are usage, exit 2, and say what was expected" {
	run --separate-stderr xtsfs "$T"
	[ "$status" -eq 2 ]
	[ "$stderr" = "xtsfs: expected CIPHERDIR and MOUNTPOINT (see --help)" ]
	run --separate-stderr xtsfs-mkfs
	[ "$status" -eq 2 ]
	[ "$stderr" = "xtsfs-mkfs: expected one CIPHERDIR (see --help)" ]
	run --separate-stderr xtsfs-info "$T" "$T"
	[ "$status" -eq 2 ]
	[ "$stderr" = "xtsfs-info: expected one CIPHERDIR (see --help)" ]
	run --separate-stderr xtsfs-fsck "$T" "$T"
	[ "$status" -eq 16 ]
	[ "$stderr" = "xtsfs-fsck: expected one CIPHERDIR (see --help)" ]
	run --separate-stderr xtsfs-passwd "$T"
	[ "$status" -eq 2 ]
	[ "$stderr" = "xtsfs-passwd: expected an action and one CIPHERDIR (see --help)" ]
	# xtsfs-bench takes no operand: its help on stderr
	run --separate-stderr xtsfs-bench extra
	[ "$status" -eq 2 ]
	[ -z "$output" ]
	[[ "${stderr_lines[0]}" == "Usage: xtsfs-bench "* ]]
	# a bad value of a shared option: named, exit 2
	run --separate-stderr xtsfs-mkfs --argon2-time 0 "$T/v"
	[ "$status" -eq 2 ]
	[ "$stderr" = "xtsfs-mkfs: invalid value '0' (see --help for the range)" ]
	[ ! -e "$T/v" ]
}
