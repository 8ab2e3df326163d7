#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Extended-attribute probes for tests/bats/22-xattr.bats (issue 17).

Every result is printed, never raised: "ok", "ok <hex>" or the errno
name, so that a mount and a plain reference directory can be compared
line for line. None of the calls follow a final symlink (lgetxattr and
friends, as getfattr -h / setfattr -h).

  xattr_tool.py try OP PATH NAME [VALUE] [FLAG]
      OP get|set|remove|list; VALUE hex (or "" for empty, "n:SIZE:SEED"
      for SIZE reproducible bytes); FLAG create|replace
  xattr_tool.py seq PATH NS
      the scripted sequence of the object tests in namespace NS (user,
      trusted): missing name, empty, 1 byte, binary with NULs, 3900
      bytes, XATTR_CREATE/XATTR_REPLACE, list, remove
  xattr_tool.py probe PATH NAME
      getxattr and listxattr with size 0, a buffer one byte too small
      and one of the exact size (libc through ctypes, no Python help)
  xattr_tool.py dump DIR
      every object under DIR (sorted, DIR itself as "."), every xattr
      name it lists, sorted, with its value in hex (over 64 bytes: its
      length and SHA-256): PATH NAME VALUE
  xattr_tool.py names PATH
      the names listxattr gives, sorted, one a line
"""

import ctypes
import errno
import hashlib
import os
import random
import sys

libc = ctypes.CDLL(None, use_errno=True)
libc.lgetxattr.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_size_t]
libc.lgetxattr.restype = ctypes.c_ssize_t
libc.llistxattr.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_size_t]
libc.llistxattr.restype = ctypes.c_ssize_t


def ename(e):
    return errno.errorcode.get(e, str(e))


def value(spec):
    if spec.startswith("n:"):
        _, n, seed = spec.split(":")
        return random.Random(int(seed)).randbytes(int(n)) if int(n) else b""
    return bytes.fromhex(spec)


FLAGS = {"": 0, "create": os.XATTR_CREATE, "replace": os.XATTR_REPLACE}


def do(op, path, name=None, val=None, flag=""):
    try:
        if op == "get":
            v = os.getxattr(path, name, follow_symlinks=False)
            return "ok %d %s" % (len(v), v.hex()) if len(v) <= 64 else \
                "ok %d sha:%s" % (len(v), hashlib.sha256(v).hexdigest()[:16])
        if op == "set":
            os.setxattr(path, name, val, FLAGS[flag], follow_symlinks=False)
            return "ok"
        if op == "remove":
            os.removexattr(path, name, follow_symlinks=False)
            return "ok"
        if op == "list":
            return "ok " + ",".join(sorted(os.listxattr(path, follow_symlinks=False)))
    except OSError as e:
        return ename(e.errno)
    raise SystemExit("bad op " + op)


def seq(path, ns):
    n = ns + ".xt"
    m = ns + ".other"
    bigv = value("n:3900:7")
    steps = [
        ("get missing", "get", n, None, ""),
        ("remove missing", "remove", n, None, ""),
        ("list empty", "list", None, None, ""),
        ("set empty", "set", n, b"", ""),
        ("get empty", "get", n, None, ""),
        ("set 1 byte", "set", n, b"x", ""),
        ("get 1 byte", "get", n, None, ""),
        ("set NULs", "set", n, b"\0a\0\0\xff\0", ""),
        ("get NULs", "get", n, None, ""),
        ("set 3900", "set", n, bigv, ""),
        ("get 3900", "get", n, None, ""),
        ("create existing", "set", n, b"c", "create"),
        ("get after create", "get", n, None, ""),
        ("replace missing", "set", m, b"r", "replace"),
        ("get replace missing", "get", m, None, ""),
        ("create new", "set", m, b"new", "create"),
        ("get new", "get", m, None, ""),
        ("replace existing", "set", n, b"replaced", "replace"),
        ("get replaced", "get", n, None, ""),
        ("list two", "list", None, None, ""),
        ("remove", "remove", n, None, ""),
        ("get removed", "get", n, None, ""),
        ("remove again", "remove", n, None, ""),
        ("remove other", "remove", m, None, ""),
        ("list after remove", "list", None, None, ""),
    ]
    for label, op, name, val, flag in steps:
        print("%s %s: %s" % (ns, label, do(op, path, name, val, flag)))


def probe(path, name):
    p, n = os.fsencode(path), os.fsencode(name)

    def g(size):
        buf = ctypes.create_string_buffer(max(size, 1))
        r = libc.lgetxattr(p, n, buf if size else None, size)
        if r < 0:
            return ename(ctypes.get_errno()), b""
        return r, buf.raw[:r] if size else b""

    def l(size):
        buf = ctypes.create_string_buffer(max(size, 1))
        r = libc.llistxattr(p, buf if size else None, size)
        if r < 0:
            return ename(ctypes.get_errno()), b""
        return r, buf.raw[:r] if size else b""

    sz, _ = g(0)
    print("getxattr size 0: %s" % sz)
    if isinstance(sz, int):
        if sz > 0:
            print("getxattr size %d: %s" % (sz - 1, g(sz - 1)[0]))
        r, v = g(sz)
        print("getxattr size %d: %s %s" % (sz, r, v.hex() if len(v) <= 64 else len(v)))
        r, v = g(sz + 100)
        print("getxattr size %d: %s" % (sz + 100, r))
    lz, _ = l(0)
    print("listxattr size 0: %s" % lz)
    if isinstance(lz, int):
        if lz > 0:
            print("listxattr size %d: %s" % (lz - 1, l(lz - 1)[0]))
        r, v = l(lz)
        print("listxattr size %d: %s %s" % (lz, r, ",".join(
            sorted(x.decode(errors="backslashreplace") for x in v.split(b"\0") if x))))


def walk(top):
    out = ["."]
    for root, dirs, files in os.walk(top):
        rel = os.path.relpath(root, top)
        for x in dirs + files:
            out.append(os.path.normpath(os.path.join(rel, x)))
    return sorted(out)


def dump(top):
    for rel in walk(top):
        p = os.path.join(top, rel)
        try:
            names = sorted(os.listxattr(p, follow_symlinks=False))
        except OSError as e:
            print("%s LIST %s" % (rel, ename(e.errno)))
            continue
        for n in names:
            try:
                v = os.getxattr(p, n, follow_symlinks=False)
                v = v.hex() if len(v) <= 64 else "%d:sha256:%s" % (
                    len(v), hashlib.sha256(v).hexdigest())
            except OSError as e:
                v = ename(e.errno)
            print("%s %s %s" % (rel, n, v))


def main(a):
    if a[0] == "try":
        op, path = a[1], a[2]
        name = a[3] if len(a) > 3 else None
        val = value(a[4]) if len(a) > 4 else None
        print(do(op, path, name, val, a[5] if len(a) > 5 else ""))
    elif a[0] == "seq":
        seq(a[1], a[2])
    elif a[0] == "probe":
        probe(a[1], a[2])
    elif a[0] == "dump":
        dump(a[1])
    elif a[0] == "names":
        for n in sorted(os.listxattr(a[1], follow_symlinks=False)):
            print(n)
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
