#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Quick start on a fresh Debian 12 machine, as root: install what xtsfs
# needs, build it, check the cipher cores, then make a demo volume, mount
# it and show what is stored where.
set -eu
cd "$(dirname "$0")/.."
top=$(pwd)
contrib/install-deps.sh
[ -f build/build.ninja ] || meson setup build
ninja -C build
B="$top/build/tools"

echo
echo "== every cipher core against the published IEEE 1619 vectors"
"$B/xtsfs-bench" --self-test

demo=${XTSFS_DEMO_DIR:-/tmp/xtsfs-demo}
if mountpoint -q "$demo/plain" 2>/dev/null; then
	fusermount3 -u "$demo/plain"
fi
rm -rf "$demo"
mkdir -p "$demo/plain"
# A demo passphrase in a file; real use: omit --passfile and type it.
printf 'demo passphrase, do not use\n' >"$demo/passfile"
chmod 600 "$demo/passfile"

echo
echo "== xtsfs-mkfs $demo/cipher"
"$B/xtsfs-mkfs" --unlock-time 500 --passfile "$demo/passfile" "$demo/cipher"

echo
echo "== xtsfs $demo/cipher $demo/plain"
"$B/xtsfs" --passfile "$demo/passfile" "$demo/cipher" "$demo/plain"
trap 'fusermount3 -u "$demo/plain" 2>/dev/null || true' EXIT
mkdir -p "$demo/plain/documents"
echo "Hello from xtsfs" >"$demo/plain/documents/hello.txt"
head -c 1000000 /dev/urandom >"$demo/plain/random.bin"
ln -s documents/hello.txt "$demo/plain/link"
echo "-- the plaintext view (mount point):"
ls -lR "$demo/plain"
cat "$demo/plain/link"
echo "-- the cipher directory (what you back up): names and contents encrypted,"
echo "   each file exactly 40 bytes longer than its plaintext:"
ls -lR "$demo/cipher"
echo "-- the volume header:"
"$B/xtsfs-info" "$demo/cipher"

echo
echo "== remount: everything reads back"
sum1=$(md5sum <"$demo/plain/random.bin")
fusermount3 -u "$demo/plain"
"$B/xtsfs" --passfile "$demo/passfile" "$demo/cipher" "$demo/plain"
sum2=$(md5sum <"$demo/plain/random.bin")
[ "$sum1" = "$sum2" ] && echo "random.bin identical after remount: $sum2"
cat "$demo/plain/documents/hello.txt"
fusermount3 -u "$demo/plain"
trap - EXIT

echo
echo "== speed of every cipher core next to OpenSSL (xtsfs-bench)"
"$B/xtsfs-bench" --runs 5
echo
echo "Demo volume left in $demo/cipher (passphrase in $demo/passfile)."
echo "Mount it again with: $B/xtsfs --passfile $demo/passfile $demo/cipher $demo/plain"
