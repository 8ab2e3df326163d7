#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# manifest.sh DIR: what a golden volume's mount must show, one line per
# object, sorted: type, mode, links, size, name; a hash of each regular
# file, each symlink's target, each user xattr; modification times of
# the files that populate.sh dates.
set -eu
cd "$1"
find . -mindepth 1 -printf '%y %m %n %s %P\n' | sed 's/^\(d [0-7]* [0-9]*\) [0-9]* /\1 - /' |
	LC_ALL=C sort
find . -type f -printf '%P\0' | LC_ALL=C sort -z | xargs -0 sha256sum
find . -type l -printf 'link %P -> %l\n' | LC_ALL=C sort
find . -mindepth 1 -printf '%P\n' | LC_ALL=C sort | while read -r f; do
	getfattr -h -d -m '^user\.' --absolute-names "$f" 2>/dev/null |
		sed -n "s|^user|xattr $f: user|p"
done
stat -c 'mtime %n %y' docs/a.txt docs/private docs/one
