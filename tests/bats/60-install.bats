#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# meson install into a DESTDIR: the eight tools, their man pages (when
# scdoc was found at configure time), the bash completion and the systemd
# units; the man pages render without warnings and the completion
# completes.

load helpers

CMDS=(xtsfs xtsfs-mkfs xtsfs-passwd xtsfs-info xtsfs-fsck xtsfs-path xtsfs-extract xtsfs-bench)
SRC="$BATS_TEST_DIRNAME/../.."

setup() { common_setup; }
teardown() { common_teardown; }

# buildopt NAME: the configured value of a meson option (prefix, bindir...).
buildopt() {
	meson introspect "$XTSFS_BUILD" --buildoptions | python3 -c '
import json, sys
print([o["value"] for o in json.load(sys.stdin) if o["name"] == sys.argv[1]][0])' "$1"
}

# installed PATTERN: the install paths meson plans that match PATTERN.
installed() {
	meson introspect "$XTSFS_BUILD" --installed | python3 -c '
import fnmatch, json, sys
for dst in json.load(sys.stdin).values():
    if fnmatch.fnmatch(dst, sys.argv[1]):
        print(dst)' "$1"
}

# absdir DIR: an install directory option made absolute under the prefix.
absdir() {
	local prefix d
	prefix=$(buildopt prefix)
	d=$(buildopt "$1")
	[[ $d == /* ]] && echo "$d" || echo "$prefix/$d"
}

have_man_pages() {
	[ -n "$(installed '*/man1/xtsfs.1')" ]
}

# complete FUNC WORDS...: run a completion function from the source tree's
# script on WORDS (the last one is being completed); print COMPREPLY.
complete_words() {
	local fn=$1
	shift
	bash -c 'source /usr/share/bash-completion/bash_completion 2>/dev/null
		source "$1"; fn=$2; shift 2
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
		"$fn"; printf "%s\n" "${COMPREPLY[@]}"' \
		x "$SRC/contrib/bash-completion/xtsfs" "$fn" "$@"
}

@test "meson install puts the tools, man pages and completion in DESTDIR" {
	run meson install -C "$XTSFS_BUILD" --destdir "$T/dest" --no-rebuild --quiet
	[ "$status" -eq 0 ]
	bindir=$(absdir bindir)
	mandir=$(absdir mandir)
	for c in "${CMDS[@]}"; do
		[ -x "$T/dest$bindir/$c" ]
	done
	run "$T/dest$bindir/xtsfs-info" --version
	[ "$status" -eq 0 ]
	compdir=$(dirname "$(installed '*/completions/xtsfs')")
	[ -n "$compdir" ]
	for c in "${CMDS[@]}"; do
		[ -f "$T/dest$compdir/$c" ]
		cmp "$T/dest$compdir/$c" "$SRC/contrib/bash-completion/xtsfs"
	done
	# the systemd template, its ExecStart on the installed xtsfs; the
	# example mount unit with the docs
	unit=$(installed '*/systemd/system/xtsfs@.service')
	[ -n "$unit" ]
	grep -q "^ExecStart=$bindir/xtsfs " "$T/dest$unit"
	[ -z "$(grep '@[A-Z_]*@' "$T/dest$unit")" ] # all substituted
	example=$(installed '*/doc/xtsfs/examples/mnt-secret.mount')
	[ -n "$example" ]
	cmp "$T/dest$example" "$SRC/contrib/systemd/mnt-secret.mount"
	if ! have_man_pages; then
		skip "scdoc was not found at configure time: no man pages to check"
	fi
	for c in "${CMDS[@]}"; do
		[ -s "$T/dest$mandir/man1/$c.1" ]
	done
}

@test "every man page renders without warnings" {
	have_man_pages || skip "scdoc was not found at configure time: no man pages"
	for c in "${CMDS[@]}"; do
		page="$XTSFS_BUILD/doc/man/$c.1"
		[ -s "$page" ]
		out=$(MANWIDTH=80 man -l "$page" 2>&1 >/dev/null)
		[ -z "$out" ] || { echo "$c.1: man: $out"; false; }
		groff -ww -man -Tutf8 "$page" >/dev/null 2>"$T/warn"
		[ ! -s "$T/warn" ] || { echo "$c.1: groff:"; cat "$T/warn"; false; }
		MANWIDTH=80 man -l "$page" 2>/dev/null | grep -q '^EXIT STATUS'
	done
}

@test "man pages document every option of --help" {
	have_man_pages || skip "scdoc was not found at configure time: no man pages"
	for c in "${CMDS[@]}"; do
		text=$(MANWIDTH=200 man -l "$XTSFS_BUILD/doc/man/$c.1" 2>/dev/null)
		for opt in $("$BIN/$c" --help | grep -o -- '--[a-z0-9-]*' | sort -u); do
			[[ $text == *"$opt"* ]] || { echo "$c.1 lacks $opt"; false; }
		done
	done
}

@test "bash completion completes options, slots, cores and -o words" {
	run complete_words _xtsfs_passwd xtsfs-passwd --re
	[ "$status" -eq 0 ]
	[[ "$output" == *--remove* ]]
	[[ "$output" == *--repair* ]]
	run complete_words _xtsfs_path xtsfs-path --to
	[ "$output" = --to-plain ]
	run complete_words _xtsfs_extract xtsfs-extract --f
	[ "$output" = --force ]
	run complete_words _xtsfs_extract xtsfs-extract --volume-key-file "$T/pa"
	[[ "$output" == *"$T/pass"* ]]
	run complete_words _xtsfs_passwd xtsfs-passwd --remove ''
	[ "$output" = "$(printf '%s\n' 0 1 2 3 4 5 6 7)" ]
	for c in xtsfs xtsfs-mkfs xtsfs-passwd; do
		fn=_$(echo "$c" | tr - _)
		run complete_words "$fn" "$c" --cipher ''
		[ "$(sort <<<"$output")" = "$(printf '%s\n' aesni auto software vaes zmm)" ]
		# --cipher=<TAB>: bash splits the word at '='.
		run complete_words "$fn" "$c" --cipher = ''
		[ "$(sort <<<"$output")" = "$(printf '%s\n' aesni auto software vaes zmm)" ]
	done
	run complete_words _xtsfs xtsfs -o ''
	[ "$(sort <<<"$output")" = "$(printf '%s\n' acl allow_costly_kdf allow_other attr_timeout= dirhandles entry_timeout= extpass= noacl nonotify nowbguard nowriteback passfile= read_ahead_kb= ro rw sharedstorage uring writeback)" ]
	run complete_words _xtsfs xtsfs -o ro,wr
	[ "$output" = "ro,writeback" ]
	run complete_words _xtsfs xtsfs -o ro,ext
	[ "$output" = "ro,extpass=" ]
	mkdir "$T/cipherdir" "$T/mnt"
	run complete_words _xtsfs xtsfs "$T/ci"
	[ "$output" = "$T/cipherdir" ]
	run complete_words _xtsfs xtsfs --passfile "$T/pa"
	[[ "$output" == *"$T/pass"* ]]
	[[ "$output" == *"$T/pass2"* ]]
}

@test "the installed completion registers all eight commands" {
	run bash -c 'source "$1"; complete -p' x "$SRC/contrib/bash-completion/xtsfs"
	[ "$status" -eq 0 ]
	for c in "${CMDS[@]}"; do
		[[ "$output" == *" $c"$'\n'* || "$output" == *" $c" ]]
	done
}
