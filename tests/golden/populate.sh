#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# One of each kind of object, in the current directory (a fresh mount):
# used to make the golden volumes (make-format1.sh) and, by
# 42-golden.bats, to make the same tree with today's code.
set -eu
umask 022
mkdir -p docs/sub/deeper empty-dir
printf 'hello, golden volume\n' >docs/a.txt
: >docs/empty
# every size class: one byte, one unit less one, one unit, units and a tail
printf x >docs/one
python3 - <<'PY'
import hashlib
def data(n, seed):
    out, i = bytearray(), 0
    while len(out) < n:
        out += hashlib.sha256(b'%s %d' % (seed, i)).digest()
        i += 1
    return bytes(out[:n])
for name, n in (('docs/4095', 4095), ('docs/4096', 4096),
                ('docs/sub/13000', 13000), ('docs/sub/deeper/70001', 70001)):
    open(name, 'wb').write(data(n, name.encode()))
PY
# a sparse file: a hole, then data past 1 MiB
truncate -s 1M docs/sparse
printf 'after the hole\n' >>docs/sparse
long=$(printf 'L%.0s' $(seq 1 200))
printf 'a long name\n' >"docs/$long"
mkdir "docs/dir-$long"
printf 'under a long directory name\n' >"docs/dir-$long/f"
ln -s a.txt docs/link
ln -s "../docs/$long" empty-dir/to-long
ln docs/a.txt docs/hardlink
mkfifo docs/fifo
printf 'secret\n' >docs/private
chmod 0600 docs/private
chmod 0750 docs/sub
setfattr -n user.comment -v 'a golden xattr' docs/a.txt
touch -d '2026-12-01 12:00:00.123456789' docs/a.txt docs/private docs/one
