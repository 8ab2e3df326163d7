#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# How tests/golden/aligned.tar.gz was made (once, by the code of the
# commit that added the aligned layout, FORMAT.md 3.4): a format 2 volume
# made with xtsfs-mkfs --layout=aligned holding one of each kind of
# object (populate.sh), whose mount must show format1.manifest (the same
# tree). tests/bats/42-golden.bats mounts it with today's code, so that
# the layout's bytes cannot drift. Do not re-run this to "update" it.
# Usage: make-aligned.sh BUILDDIR OUTDIR (as root).
set -eu
build=$(cd "$1" && pwd)
out=$(cd "$2" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
t=$(mktemp -d)
trap 'mountpoint -q "$t/mnt" && fusermount3 -u "$t/mnt"; rm -rf "$t"' EXIT
mkdir "$t/vol" "$t/mnt"
"$build/tools/xtsfs-mkfs" -q --layout=aligned --argon2-time 1 \
	--argon2-memory 64 --argon2-lanes 1 --passfile "$here/format1.pass" \
	"$t/vol"
"$build/tools/xtsfs" --passfile "$here/format1.pass" "$t/vol" "$t/mnt"
cd "$t/mnt"
"$here/populate.sh"
cd /
"$here/manifest.sh" "$t/mnt" | diff "$here/format1.manifest" -
fusermount3 -u "$t/mnt"
tar -C "$t/vol" --format=posix --xattrs --xattrs-include='*' --acls \
	--numeric-owner --sparse -czf "$out/aligned.tar.gz" .
