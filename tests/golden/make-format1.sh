#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# How tests/golden/format1.tar.gz was made (once, by the code of commit
# cc191ce, the last to write format version 1): a small volume with one
# of each kind of object, and format1.manifest, what its mount must show.
# tests/bats/42-golden.bats mounts it with today's code. Do not re-run
# this to "update" the golden volume: its point is that it was written by
# the old code. Usage: make-format1.sh BUILDDIR OUTDIR (as root).
set -eu
build=$(cd "$1" && pwd)
out=$(cd "$2" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
t=$(mktemp -d)
trap 'mountpoint -q "$t/mnt" && fusermount3 -u "$t/mnt"; rm -rf "$t"' EXIT
mkdir "$t/vol" "$t/mnt"
"$build/tools/xtsfs-mkfs" -q --argon2-time 1 --argon2-memory 64 \
	--argon2-lanes 1 --passfile "$here/format1.pass" "$t/vol"
"$build/tools/xtsfs" --passfile "$here/format1.pass" "$t/vol" "$t/mnt"
cd "$t/mnt"
"$here/populate.sh"
cd /
"$here/manifest.sh" "$t/mnt" >"$out/format1.manifest"
fusermount3 -u "$t/mnt"
tar -C "$t/vol" --format=posix --xattrs --xattrs-include='*' --acls \
	--numeric-owner --sparse -czf "$out/format1.tar.gz" .
