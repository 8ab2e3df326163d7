#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# seeds-current.sh GEN FUZZDIR: the seed-* files of FUZZDIR's corpora are
# what GEN (fuzz_gen_corpus) writes today, byte for byte. A format change
# that alters an encoder must bring its seeds along (README.md, "Seeds"):
# run "GEN FUZZDIR" and commit what changed.
set -eu
gen=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for d in "$src"/corpus-*; do
	mkdir "$tmp/${d##*/}"
done
"$gen" "$tmp" >/dev/null
bad=0
for f in "$tmp"/corpus-*/seed-*; do
	rel=${f#"$tmp"/}
	if ! cmp -s "$f" "$src/$rel"; then
		echo "stale or missing seed: tests/fuzz/$rel (run: $gen $src)"
		bad=1
	fi
done
exit $bad
