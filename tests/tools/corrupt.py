#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""corrupt.py - damage an unmounted xtsfs cipher directory in one of the
ways xtsfs-fsck must find (doc/FORMAT.md sections 2-4, 6), as a crash, a
sync tool, a bad copy or a person would. Python 3 stdlib only.

    corrupt.py KIND PATH [ARG]

PATH is a lower path (a directory, an entry, a file) inside the cipher
directory; the tests find it with lower_of (fs_helpers.bash). Each kind
prints the lower path it made or damaged, for the test to look for in
fsck's report. The kinds, one line each, are listed by --list.
"""
import base64
import os
import random
import sys

B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
# fixed, so that every run damages alike
rng = random.Random(18)


def b64(raw):
    return base64.urlsafe_b64encode(raw).decode().rstrip('=')


def rand_bytes(n):
    return bytes(rng.randrange(256) for _ in range(n))


def out(path):
    print(path)


def rm_dirid(d):
    """the xtsfs.dirid of directory PATH removed"""
    os.unlink(os.path.join(d, 'xtsfs.dirid'))
    out(os.path.join(d, 'xtsfs.dirid'))


def cut_dirid(d):
    """the xtsfs.dirid of directory PATH cut to 8 bytes"""
    p = os.path.join(d, 'xtsfs.dirid')
    os.chmod(p, 0o644)
    os.truncate(p, 8)
    out(p)


def conflict_dirid(d):
    """the dirid renamed as a sync tool's conflict copy: 'xtsfs.dirid (1)'"""
    p = os.path.join(d, 'xtsfs.dirid')
    os.rename(p, p + ' (1)')
    out(p)


def wrong_dirid(d):
    """the dirid replaced by 16 other bytes, the old one kept as a
    Syncthing conflict copy (xtsfs.dirid.sync-conflict-...)"""
    p = os.path.join(d, 'xtsfs.dirid')
    os.rename(p, p + '.sync-conflict-20260101-120000-ABCDEFG')
    with open(p, 'wb') as f:
        f.write(rand_bytes(16))
    out(p)


def garbage_name(d):
    """a new file in directory PATH whose name is canonical base64url of
    48 random bytes: decodes, does not authenticate"""
    p = os.path.join(d, b64(rand_bytes(48)))
    with open(p, 'wb') as f:
        f.write(b'x' * 100)
    out(p)


def noncanon_name(p):
    """entry PATH renamed so that the last character's unused bits are
    set: the same bytes, but no canonical name"""
    d, n = os.path.split(p)
    pad = (4 - len(n) % 4) % 4        # 1 or 2 spare characters' worth
    unused = {1: 0x3, 2: 0xf}.get(pad, 0)
    if not unused:
        sys.exit('corrupt.py: %s: its length leaves no unused bits' % n)
    last = B64.index(n[-1])
    if last & unused == unused:
        sys.exit('corrupt.py: %s: unused bits set already' % n)
    q = os.path.join(d, n[:-1] + B64[last | unused])
    os.rename(p, q)
    out(q)


def orphan_sidecar(d):
    """a .name sidecar without its long entry in directory PATH"""
    p = os.path.join(d, 'xtsfs.long.%s.name' % b64(rand_bytes(16)))
    with open(p, 'w') as f:
        f.write(b64(rand_bytes(224)))
    os.chmod(p, 0o444)
    out(p)


def rm_sidecar(p):
    """the .name sidecar of long entry PATH removed"""
    os.unlink(p + '.name')
    out(p)


def wrong_sidecar(p, other):
    """the sidecar of long entry PATH overwritten with that of OTHER"""
    s = p + '.name'
    os.chmod(s, 0o644)
    with open(other + '.name', 'rb') as f, open(s, 'wb') as g:
        g.write(f.read())
    out(p)


def unused_link(root):
    """an xtsfs.link.* file in the cipher directory PATH that no symlink
    uses (content-addressed: as left when its symlinks were removed)"""
    p = os.path.join(root, 'xtsfs.link.' + b64(rand_bytes(16)))
    with open(p, 'w') as f:
        f.write(b64(rand_bytes(3100)))
    os.chmod(p, 0o444)
    out(p)


def rm_link(root, ref):
    """the long-target file ARG (xtsfs.link.*) of the cipher dir removed"""
    p = os.path.join(root, ref)
    os.unlink(p)
    out(p)


def header_copy(root, copy):
    """one byte flipped in header copy ARG (0 or 1): its CRC fails"""
    p = os.path.join(root, 'xtsfs.volume')
    os.chmod(p, 0o644)
    with open(p, 'r+b') as f:
        f.seek(int(copy) * 4096 + 200)
        b = f.read(1)
        f.seek(int(copy) * 4096 + 200)
        f.write(bytes([b[0] ^ 0xff]))
    os.chmod(p, 0o400)
    out(p)


def crc32c(data):
    crc = 0xffffffff
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82f63b78 if crc & 1 else 0)
    return crc ^ 0xffffffff


def header_mac(root):
    """the seqid of the secondary header copy changed and its CRC made
    right again: a valid copy whose MAC fails (an edit without the key)"""
    p = os.path.join(root, 'xtsfs.volume')
    os.chmod(p, 0o644)
    with open(p, 'r+b') as f:
        b = bytearray(f.read())
        b[4096 + 16] ^= 0x40
        b[8188:8192] = crc32c(bytes(b[4096:8188])).to_bytes(4, 'little')
        f.seek(0)
        f.write(b)
    os.chmod(p, 0o400)
    out(p)


def cut(p, size):
    """regular file PATH cut to ARG bytes (1..39: inside the header; or
    into its last unit)"""
    os.truncate(p, int(size))
    out(p)


def torn_tail(p):
    """one byte of the tail slot (header byte 39) of file PATH flipped:
    its short tail no longer decrypts to zero padding"""
    with open(p, 'r+b') as f:
        f.seek(39)
        b = f.read(1)
        f.seek(39)
        f.write(bytes([b[0] ^ 0x01]))
    out(p)


def bad_magic(p):
    """the file header's reserved bytes 6..7 of PATH set"""
    with open(p, 'r+b') as f:
        f.seek(6)
        f.write(b'\x01\x00')
    out(p)


def conflict_copy(p):
    """entry PATH copied as a Syncthing conflict copy beside it"""
    q = p + '.sync-conflict-20260101-120000-ABCDEFG'
    with open(p, 'rb') as f, open(q, 'wb') as g:
        g.write(f.read())
    out(q)


def conflict_unknown(p):
    """entry PATH copied under its name + a suffix no sync tool makes"""
    q = p + '.sync-conflict-2026'
    with open(p, 'rb') as f, open(q, 'wb') as g:
        g.write(f.read())
    out(q)


def temp_file(d):
    """a sync tool's stray temp file in directory PATH"""
    q = os.path.join(d, '.syncthing.tmp~')
    with open(q, 'wb') as f:
        f.write(b'partial')
    out(q)


def unknown_internal(d):
    """a name starting with 'xtsfs.' that xtsfs never writes"""
    q = os.path.join(d, 'xtsfs.dirid.bak')
    with open(q, 'wb') as f:
        f.write(b'not 16 bytes')
    out(q)


def bad_xattr_name(p):
    """an xattr with the user.xtsfs. marker whose name does not decrypt"""
    os.setxattr(p, 'user.xtsfs.' + b64(rand_bytes(32)), b'v' * 20,
                follow_symlinks=False)
    out(p)


def bad_xattr_value(p):
    """one byte flipped in the value of PATH's first marked xattr"""
    for n in os.listxattr(p, follow_symlinks=False):
        if n.startswith(('user.xtsfs.', 'trusted.xtsfs.')):
            v = bytearray(os.getxattr(p, n, follow_symlinks=False))
            v[-1] ^= 0x01
            os.setxattr(p, n, bytes(v), follow_symlinks=False)
            out(p)
            return
    sys.exit('corrupt.py: %s: no xattr of ours' % p)


KINDS = {
    'rm-dirid': rm_dirid, 'cut-dirid': cut_dirid,
    'conflict-dirid': conflict_dirid, 'wrong-dirid': wrong_dirid,
    'garbage-name': garbage_name, 'noncanon-name': noncanon_name,
    'orphan-sidecar': orphan_sidecar, 'rm-sidecar': rm_sidecar,
    'wrong-sidecar': wrong_sidecar, 'unused-link': unused_link,
    'rm-link': rm_link, 'header-copy': header_copy,
    'header-mac': header_mac, 'cut': cut,
    'torn-tail': torn_tail, 'bad-header': bad_magic,
    'conflict-copy': conflict_copy,
    'conflict-unknown': conflict_unknown, 'temp-file': temp_file,
    'unknown-internal': unknown_internal,
    'bad-xattr-name': bad_xattr_name, 'bad-xattr-value': bad_xattr_value,
}


def main():
    if len(sys.argv) == 2 and sys.argv[1] == '--list':
        for k, f in KINDS.items():
            print('%-17s %s' % (k, ' '.join(f.__doc__.split())))
        return
    if len(sys.argv) < 3 or sys.argv[1] not in KINDS:
        sys.exit('usage: corrupt.py KIND PATH [ARG] (--list for kinds)')
    KINDS[sys.argv[1]](*sys.argv[2:])


if __name__ == '__main__':
    main()
