#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Randomized differential tester: an xtsfs mount against a plain directory.

difftest applies the same reproducible pseudo-random sequence of filesystem
operations to two directory trees:

  A  the tree under test (a directory inside an xtsfs mount), and
  B  a reference tree on an ordinary filesystem (ext4, tmpfs, ...),

and stops at the first place where the two disagree. Every operation is run
on B first, then on A, and the two results are compared exactly: return
values, bytes read, and errno values of failures (an operation that fails on
one side must fail on the other with the same errno; nothing is masked).
After each operation that changes state, what it touched is compared at
once (type, mode bits, owner, size, link count and full contents of the
file, symlink targets, the parents' listings, and fstat().st_size of the fd
that was written: the kernel's view must be right immediately). Every
--full-every operations (50), after each remount and at the end, the whole
trees are compared: names, types, sizes, contents, symlink targets,
permission bits, link counts of regular files, and mtimes that an operation
set explicitly (utime with ns precision) and nothing has changed since.

Operations (weighted): open with O_CREAT/O_EXCL/O_TRUNC/O_APPEND into up to
4 fd slots (two fds on one file happen often), pwrite at random offsets
(0, unit boundaries 4096*k +/- 0..17, near EOF, far past EOF to make
holes) of 1 byte to 300 KiB of random data or zeros, write/read at the fd
offset, lseek, pread, whole-file open/write/close, truncate, ftruncate,
posix_fallocate, punch hole (fallocate PUNCH_HOLE|KEEP_SIZE through ctypes;
skipped on both sides when B's filesystem refuses it), rename (files and
directories, over files, across directories), link, unlink, mkdir, rmdir,
symlink, readlink, chmod, utime (ns), fsync, fdatasync, stat, listdir,
writes through a shared mmap, copy_file_range between open fds, and a
recursive removal that keeps the tree small. lseek SEEK_DATA/SEEK_HOLE is
the one operation not compared side against side (where holes are is each
filesystem's business): each side's answer is checked against the file's
contents instead (no data skipped, no hole starting on a non-zero byte,
ENXIO at EOF). Extended attributes are not exercised (xtsfs has none). Names come from a small pool
(12 file names, 4 directory names, depth <= 3) so operations collide; the
pool has names of 100..255 bytes, names with spaces, UTF-8, invalid UTF-8,
a control byte, a leading '-', and the name 'xtsfs.dirid'. Symlink targets
are always relative and never contain '..', so nothing resolves outside
the two trees.

With --remount-cmd CMD and --remount-every M, after every M operations all
fds are closed on both sides, CMD is run through the shell (it must unmount
and remount A and exit 0), and the whole trees are compared.

Reproducing a failure: the operation sequence is a function of --seed and
of B's state (sizes and listings of B steer the choices; A never does), so
the same command line on fresh, empty A and B directories replays the same
operations. On a divergence difftest prints the seed, the operation number,
the operation, both results, the first differing byte with 32 bytes of
both sides, the last few operations and a command line that replays up to
the failing operation; add --verbose to print every operation as one line
(e.g. "#123 pwrite fd2 'd0/f1' off=4093 len=7 zeros=False").

Self-test (test-only): DIFFTEST_SELFTEST_CORRUPT=N in the environment makes
difftest flip one byte of a file in A after operation N (behind the
filesystem's back if A is a plain directory, through it otherwise), to show
that a divergence is caught and reported.

Exit status: 0 when everything agreed (one-line summary "difftest: seed N,
K ops, 0 divergences ..."), 1 on a divergence, 2 on a usage error or when
the remount command fails.

Python 3 standard library only.
"""

import argparse
import collections
import ctypes
import errno
import mmap
import os
import random
import shlex
import stat
import subprocess
import sys
import time

UNIT = 4096
NSLOTS = 4
MAX_OFF = 2 << 20          # highest write/truncate offset: files stay < ~2.3 MiB
MAX_WRITE = 300 * 1024
PRESSURE_BYTES = 40 << 20  # above this much data in B, shrink the tree
PRESSURE_ENTRIES = 300
PRESSURE_DEPTH = 8

FALLOC_FL_KEEP_SIZE = 0x01
FALLOC_FL_PUNCH_HOLE = 0x02

FILE_NAMES = [
    b"f0",
    b"f1",
    b"file two",
    b"-n",
    "\u00e9t\u00e9 \u20ac".encode(),            # UTF-8 with a space
    b"ctl\x01name",                              # control byte
    b"raw\xff\xfe",                              # not UTF-8
    b"xtsfs.dirid",                              # xtsfs's own name, as a user name
    b"L" * 100 + b"-104",                        # 104 bytes
    b"m" * 180,                                  # long name (> 160 bytes)
    "\u2603".encode() * 85,                      # 255 bytes of UTF-8
    b"z" * 254 + b"!",                           # 255 bytes
]
TOO_LONG_NAME = b"t" * 256                       # ENAMETOOLONG on both sides
DIR_NAMES = [
    b"d0",
    b"dir one",
    "\u03b4".encode() * 60,                      # 120 bytes of UTF-8
    b"-x\x01",
]

OP_WEIGHTS = [
    ("open", 8), ("close", 4), ("pwrite", 14), ("write", 6), ("pread", 6),
    ("read", 3), ("lseek", 2), ("writefile", 8), ("readfile", 3),
    ("truncate", 4), ("ftruncate", 4), ("fallocate", 2), ("punch", 3),
    ("rename", 6), ("link", 3), ("unlink", 4), ("mkdir", 5), ("rmdir", 3),
    ("symlink", 3), ("readlink", 2), ("chmod", 2), ("utime", 2),
    ("fsync", 2), ("stat", 2), ("listdir", 1), ("rmtree", 1),
    ("mmapwrite", 2), ("copyrange", 2), ("seekdata", 2),
]
FD_OPS = {"close", "pwrite", "write", "pread", "read", "lseek", "ftruncate",
          "fallocate", "punch", "fsync", "mmapwrite", "copyrange", "seekdata"}

_libc = ctypes.CDLL(None, use_errno=True)
_libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int64,
                            ctypes.c_int64]
_libc.fallocate.restype = ctypes.c_int


# ---------------------------------------------------------------- helpers

def res(fn, *args, **kw):
    """Run one system call: ('ok', value) or ('err', errno)."""
    try:
        return ("ok", fn(*args, **kw))
    except OSError as e:
        return ("err", e.errno)


def punch_hole(fd, off, length):
    if _libc.fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                       off, length) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return None


def errname(e):
    if not isinstance(e, int):
        return str(e)
    return "%s (%d)" % (errno.errorcode.get(e, "?"), e)


def show(rel):
    """A path for humans: long components shortened, odd bytes escaped."""
    if rel == b"":
        return "'.'"
    parts = []
    for comp in rel.split(b"/"):
        s = comp.decode("utf-8", "backslashreplace")
        s = "".join(c if c.isprintable() else "\\x%02x" % ord(c) for c in s)
        if len(comp) > 24:
            s = "%s...[%dB]" % (s[:8], len(comp))
        parts.append(s)
    return "'" + "/".join(parts) + "'"


def show_bytes(b):
    if len(b) <= 40:
        return repr(b)
    return "%r...[%d bytes]" % (b[:32], len(b))


def show_result(r):
    if isinstance(r, tuple) and len(r) == 2 and r[0] in ("ok", "err"):
        kind, v = r
        if kind == "err":
            return "error " + errname(v)
        if isinstance(v, bytes):
            return "ok, %d bytes %s" % (len(v), show_bytes(v))
        if v is None:
            return "ok"
        return "ok %r" % (v,)
    return "[" + ", ".join(show_result(x) for x in r) + "]"


def short_result(r):
    """One word per step: ok, ok:N (a count or size) or the errno name."""
    if isinstance(r, tuple) and len(r) == 2 and r[0] in ("ok", "err"):
        if r[0] == "err":
            return errno.errorcode.get(r[1], str(r[1])) if isinstance(r[1], int) else str(r[1])
        if isinstance(r[1], bytes):
            return "ok:%dB" % len(r[1])
        if isinstance(r[1], int):
            return "ok:%d" % r[1]
        return "ok"
    return ",".join(short_result(x) for x in r)


def ok_or_errno(r):
    """'ok' or the first error of a result (for the outcome statistics)."""
    if isinstance(r, tuple) and len(r) == 2 and r[0] in ("ok", "err"):
        return "ok" if r[0] == "ok" else short_result(r)
    for x in r:
        if x[0] == "err":
            return ok_or_errno(x)
    return "ok"


def seek_data_violation(data, off, whence, r):
    """What is wrong with lseek(off, SEEK_DATA/SEEK_HOLE) = r on a file with
    these contents, or None. Any filesystem may call a hole data; none may
    skip data or put a hole start on a non-zero byte."""
    size = len(data)
    if off >= size:
        return None if r == ("err", errno.ENXIO) else "expected ENXIO at or past EOF"
    if r[0] == "err":
        if whence == os.SEEK_DATA and r[1] == errno.ENXIO:
            if data[off:].count(0) == size - off:
                return None
            return "ENXIO but there is non-zero data after the offset"
        return "unexpected error " + errname(r[1])
    pos = r[1]
    if whence == os.SEEK_DATA:
        if not off <= pos < size:
            return "data offset %d outside [%d, %d)" % (pos, off, size)
        if data[off:pos].count(0) != pos - off:
            return "non-zero byte skipped in [%d, %d)" % (off, pos)
        return None
    if not off <= pos <= size:
        return "hole offset %d outside [%d, %d]" % (pos, off, size)
    if pos < size and data[pos] != 0:
        return "hole starts on a non-zero byte at %d" % pos
    return None


def first_diff(a, b):
    """Index of the first differing byte of a and b (None if equal)."""
    if a == b:
        return None
    n = min(len(a), len(b))
    lo = 0
    step = 65536
    while lo < n and a[lo:lo + step] == b[lo:lo + step]:
        lo += step
    for i in range(lo, min(n, lo + step)):
        if a[i] != b[i]:
            return i
    return n


def hexctx(data, off):
    chunk = data[off:off + 32]
    return chunk.hex(" ") if chunk else "(end of data)"


def read_all_fd(fd):
    """The whole file by pread until end of file (the size is only a hint)."""
    want = os.fstat(fd).st_size + UNIT
    out = []
    off = 0
    while True:
        b = os.pread(fd, want, off)
        if not b:
            return out[0] if len(out) == 1 else b"".join(out)
        out.append(b)
        off += len(b)
        want = 1 << 20


def read_path(path):
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        return read_all_fd(fd)
    finally:
        os.close(fd)


def read_follow(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        return read_all_fd(fd)
    finally:
        os.close(fd)


def pjoin(parent, name):
    return parent + b"/" + name if parent else name


def parent_of(rel):
    i = rel.rfind(b"/")
    return rel[:i] if i >= 0 else b""


class Divergence(Exception):
    def __init__(self, what, lines):
        super().__init__(what)
        self.what = what
        self.lines = lines


class Slot:
    """One fd slot: the same open file on both sides."""

    def __init__(self, rel, flags):
        self.rel = rel
        self.flags = flags
        self.fd = {}

    @property
    def readable(self):
        return (self.flags & os.O_ACCMODE) in (os.O_RDONLY, os.O_RDWR)


class Op:
    def __init__(self, kind, desc, fn, checks=(), meta=None):
        self.kind = kind
        self.desc = desc
        self.fn = fn              # fn(side) -> result, side is "A" or "B"
        self.checks = list(checks)
        self.meta = meta or {}


# ---------------------------------------------------------------- tester

class DiffTester:
    def __init__(self, args):
        self.args = args
        self.seed = args.seed
        self.rng = random.Random(args.seed)
        self.root = {"A": os.fsencode(os.path.abspath(args.a)),
                     "B": os.fsencode(os.path.abspath(args.b))}
        self.slots = [None] * NSLOTS
        self.explicit = {}         # B st_ino -> (mtime_ns, op number)
        self.history = collections.deque(maxlen=10)
        self.opno = 0
        self.remounts = 0
        self.full_compares = 0
        self.skipped_punch = 0
        self.outcomes = collections.Counter()
        self.last_results = None
        self._entries = None
        corrupt = os.environ.get("DIFFTEST_SELFTEST_CORRUPT", "")
        self.corrupt_at = int(corrupt) if corrupt.strip() else 0
        self.corrupted = False
        kinds, weights = zip(*OP_WEIGHTS)
        self.kinds = list(kinds)
        self.weights = [0 if k in (args.skip or "").split(",") else w
                        for k, w in zip(kinds, weights)]

    # ----- paths and B's state (the only state that steers the choices)

    def path(self, side, rel):
        return self.root[side] + b"/" + rel if rel else self.root[side]

    def entries(self):
        """Everything in B: list of (rel, S_IFMT, size, depth), sorted DFS."""
        if self._entries is None:
            out = []
            stack = [(b"", 0)]
            while stack:
                d, depth = stack.pop()
                try:
                    names = sorted(os.listdir(self.path("B", d)))
                except OSError:
                    continue
                for name in names:
                    rel = pjoin(d, name)
                    try:
                        st = os.lstat(self.path("B", rel))
                    except OSError:
                        continue
                    fmt = stat.S_IFMT(st.st_mode)
                    out.append((rel, fmt, st.st_size, depth + 1))
                    if fmt == stat.S_IFDIR:
                        stack.append((rel, depth + 1))
            self._entries = out
        return self._entries

    def b_size(self, rel):
        try:
            return os.stat(self.path("B", rel)).st_size
        except OSError:
            return 0

    def b_fd_size(self, i):
        return os.fstat(self.slots[i].fd["B"]).st_size

    # ----- random choices

    def dir_path(self, maxdepth=3):
        """A directory path of depth <= maxdepth: an existing one half the time."""
        r = self.rng
        if r.random() < 0.5:
            dirs = [e[0] for e in self.entries() if e[1] == stat.S_IFDIR and e[3] <= maxdepth]
            if dirs:
                return r.choice(dirs)
        depth = r.choices(range(maxdepth + 1), weights=[5, 4, 2, 1][:maxdepth + 1])[0]
        return b"/".join(r.choice(DIR_NAMES) for _ in range(depth))

    def file_name(self):
        if self.rng.random() < 0.01:
            return TOO_LONG_NAME
        return self.rng.choice(FILE_NAMES)

    def existing(self, fmts=None):
        ents = [e for e in self.entries() if fmts is None or e[1] in fmts]
        if not ents:
            return None
        return self.rng.choice(ents)[0]

    def file_path(self, p_existing=0.3):
        if self.rng.random() < p_existing:
            rel = self.existing((stat.S_IFREG, stat.S_IFLNK))
            if rel is not None:
                return rel
        return pjoin(self.dir_path(3), self.file_name())

    def new_dir_path(self):
        return pjoin(self.dir_path(2), self.rng.choice(DIR_NAMES))

    def any_dir_path(self):
        if self.rng.random() < 0.5:
            rel = self.existing((stat.S_IFDIR,))
            if rel is not None:
                return rel
        return self.new_dir_path()

    def gen_offset(self, size):
        r = self.rng
        x = r.random()
        if x < 0.22:
            off = 0
        elif x < 0.47:
            off = UNIT * r.randint(0, 48) + r.randint(-17, 17)
        elif x < 0.72:
            off = size + r.choice([r.randint(-40, 40), r.randint(-UNIT - 17, UNIT + 17)])
        elif x < 0.87:
            off = r.randint(0, max(size, UNIT))
        else:  # far past EOF: leaves a hole
            off = size + r.choice([UNIT * r.randint(1, 64) + r.randint(-17, 17),
                                   r.randint(1, 1 << 20)])
        return max(0, min(off, MAX_OFF))

    def gen_len(self):
        r = self.rng
        x = r.random()
        if x < 0.40:
            return r.randint(1, 20)
        if x < 0.55:
            return UNIT + r.randint(-17, 17)
        if x < 0.65:
            return UNIT * r.randint(2, 4) + r.randint(-17, 17)
        if x < 0.85:
            return r.randint(21, 8192)
        if x < 0.96:
            return r.randint(1, 65536)
        return r.randint(65536, MAX_WRITE)

    def gen_data(self, n):
        """(data, label): random bytes, all zeros, or random with zero runs."""
        r = self.rng
        x = r.random()
        if x < 0.2:
            return bytes(n), "True"
        if x < 0.35 and n > 2:
            parts = []
            left = n
            while left > 0:
                k = min(left, r.randint(1, max(1, n // 3)))
                parts.append(bytes(k) if r.random() < 0.5 else r.randbytes(k))
                left -= k
            return b"".join(parts), "mixed"
        return r.randbytes(n), "False"

    def gen_trunc_size(self, size):
        r = self.rng
        x = r.random()
        if x < 0.15:
            s = 0
        elif x < 0.35:
            s = r.randint(0, size)
        elif x < 0.50:
            s = size + r.randint(1, 100)
        elif x < 0.75:
            s = UNIT * r.randint(0, 40) + r.randint(-17, 17)
        elif x < 0.88:
            s = size + r.randint(UNIT, 1 << 20)
        else:
            s = r.randint(0, MAX_OFF)
        return max(0, min(s, MAX_OFF))

    def gen_mode(self, isdir=False):
        r = self.rng
        if r.random() < 0.05:
            return r.randint(0, 0o7777)
        if isdir:
            return r.choice([0o755, 0o700, 0o555, 0o775, 0o711, 0o000])
        return r.choice([0o644, 0o600, 0o755, 0o666, 0o400, 0o000, 0o640,
                         r.randint(0, 0o777)])

    def gen_target(self, rel):
        """A symlink target: relative, 1..300 bytes (rarely 3000..4096, past
        where xtsfs stores the target in a side file), never '..'."""
        r = self.rng
        x = r.random()
        if x < 0.04:
            n = r.choice([r.randint(3000, 4095), 4095, 4096])
            t = (b"%s/" % r.choice(FILE_NAMES)) * (n // 100 + 1)
            return (t[:n - 1] + b"x").lstrip(b"/")
        if x < 0.30:
            t = r.choice(FILE_NAMES)
        elif x < 0.50:
            t = pjoin(self.dir_path(2), r.choice(FILE_NAMES + DIR_NAMES))
        elif x < 0.58:
            t = rel.rsplit(b"/", 1)[-1]            # itself: a loop
        elif x < 0.65:
            t = b"./" + r.choice(FILE_NAMES)
        elif x < 0.72:
            t = b"a/" * r.randint(1, 150)
        else:
            n = r.randint(1, 300)
            alphabet = bytes(range(1, 256))
            t = bytes(r.choice(alphabet) if r.random() < 0.3 else
                      r.choice(b"abcdefgh/._- ") for _ in range(n))
        comps = [b".x" if c == b".." else c for c in t[:300].split(b"/")]
        return b"/".join(comps).lstrip(b"/") or b"x"

    def open_slots(self):
        return [i for i, s in enumerate(self.slots) if s is not None]

    # ----- operation generators

    def gen_op(self):
        r = self.rng
        kind = r.choices(self.kinds, weights=self.weights)[0]
        ents = self.entries()
        total = sum(e[2] for e in ents if e[1] == stat.S_IFREG)
        if (total > PRESSURE_BYTES or len(ents) > PRESSURE_ENTRIES
                or any(e[3] > PRESSURE_DEPTH for e in ents)) and r.random() < 0.5:
            kind = "shrink"
        if kind in FD_OPS and not self.open_slots():
            kind = "open"
        if kind == "open" and None not in self.slots:
            kind = "close"
        return getattr(self, "gen_" + kind)()

    def gen_open(self):
        r = self.rng
        i = self.slots.index(None)
        busy = self.open_slots()
        x = r.random()
        if busy and x < 0.35:
            rel = self.slots[r.choice(busy)].rel     # a second fd on one file
        elif x < 0.40:
            rel = self.any_dir_path()
        else:
            rel = self.file_path()
        acc = r.choices([os.O_RDONLY, os.O_WRONLY, os.O_RDWR], weights=[15, 25, 60])[0]
        flags = acc
        if r.random() < 0.6:
            flags |= os.O_CREAT
            if r.random() < 0.15:
                flags |= os.O_EXCL
        if r.random() < (0.2 if acc != os.O_RDONLY else 0.03):
            flags |= os.O_TRUNC
        if r.random() < 0.25:
            flags |= os.O_APPEND
        mode = self.gen_mode()
        names = [n for n, f in (("RDONLY", os.O_RDONLY), ("WRONLY", os.O_WRONLY),
                                ("RDWR", os.O_RDWR)) if f == acc]
        names += [n for n, f in (("CREAT", os.O_CREAT), ("EXCL", os.O_EXCL),
                                 ("TRUNC", os.O_TRUNC), ("APPEND", os.O_APPEND))
                  if flags & f]
        slot = Slot(rel, flags)

        def fn(side):
            rr = res(os.open, self.path(side, rel), flags, mode)
            if rr[0] == "ok":
                slot.fd[side] = rr[1]
                return ("ok", None)
            return rr

        def after(ra, rb):
            if ra[0] == "ok" and rb[0] == "ok":
                self.slots[i] = slot

        desc = "open fd%d %s %s mode=%o" % (i, show(rel), "|".join(names), mode)
        checks = [("path", rel), ("parent", rel)]
        op = Op("open", desc, fn, checks, {"after": after, "slot": slot})
        op.checks.append(("newslot", i))
        return op

    def gen_close(self):
        i = self.rng.choice(self.open_slots())
        slot = self.slots[i]

        def fn(side):
            return res(os.close, slot.fd[side])

        def after(ra, rb):
            self.slots[i] = None

        return Op("close", "close fd%d %s" % (i, show(slot.rel)), fn,
                  [("path", slot.rel)], {"after": after})

    def pick_slot(self):
        return self.rng.choice(self.open_slots())

    def gen_pwrite(self):
        i = self.pick_slot()
        slot = self.slots[i]
        off = self.gen_offset(self.b_fd_size(i))
        data, z = self.gen_data(self.gen_len())

        def fn(side):
            return res(os.pwrite, slot.fd[side], data, off)

        return Op("pwrite", "pwrite fd%d %s off=%d len=%d zeros=%s"
                  % (i, show(slot.rel), off, len(data), z), fn, [("fd", i)])

    def gen_write(self):
        i = self.pick_slot()
        slot = self.slots[i]
        data, z = self.gen_data(self.gen_len())

        def fn(side):
            return res(os.write, slot.fd[side], data)

        return Op("write", "write fd%d %s len=%d zeros=%s%s"
                  % (i, show(slot.rel), len(data), z,
                     " (O_APPEND)" if slot.flags & os.O_APPEND else ""),
                  fn, [("fd", i)])

    def gen_pread(self):
        i = self.pick_slot()
        slot = self.slots[i]
        size = self.b_fd_size(i)
        off = self.gen_offset(size) if self.rng.random() < 0.7 else \
            max(0, size - self.rng.randint(0, 40))
        n = self.gen_len()

        def fn(side):
            return res(os.pread, slot.fd[side], n, off)

        return Op("pread", "pread fd%d %s off=%d len=%d" % (i, show(slot.rel), off, n),
                  fn, [])

    def gen_read(self):
        i = self.pick_slot()
        slot = self.slots[i]
        n = self.gen_len()

        def fn(side):
            return res(os.read, slot.fd[side], n)

        return Op("read", "read fd%d %s len=%d" % (i, show(slot.rel), n), fn, [])

    def gen_lseek(self):
        r = self.rng
        i = self.pick_slot()
        slot = self.slots[i]
        whence = r.choice([os.SEEK_SET, os.SEEK_CUR, os.SEEK_END])
        if whence == os.SEEK_SET:
            off = self.gen_offset(self.b_fd_size(i))
        else:
            off = r.randint(-5000, 5000)
        if stat.S_ISDIR(os.fstat(slot.fd["B"]).st_mode):
            # Directory offsets are opaque cookies of each filesystem
            # (ext4 hashes): only a rewind is comparable.
            whence, off = os.SEEK_SET, 0
        wname = {os.SEEK_SET: "SET", os.SEEK_CUR: "CUR", os.SEEK_END: "END"}[whence]

        def fn(side):
            return res(os.lseek, slot.fd[side], off, whence)

        return Op("lseek", "lseek fd%d %s off=%d whence=%s" % (i, show(slot.rel), off, wname),
                  fn, [])

    def gen_writefile(self):
        r = self.rng
        rel = self.file_path()
        flags = r.choice([os.O_WRONLY, os.O_RDWR]) | os.O_CREAT
        if r.random() < 0.4:
            flags |= os.O_TRUNC
        if r.random() < 0.2:
            flags |= os.O_APPEND
        if r.random() < 0.1:
            flags |= os.O_EXCL
        mode = self.gen_mode()
        size = 0 if flags & os.O_TRUNC else self.b_size(rel)
        chunks = []
        for _ in range(r.randint(1, 3)):
            off = self.gen_offset(size)
            data, _ = self.gen_data(self.gen_len())
            chunks.append((off, data))
            size = max(size, off + len(data))

        def fn(side):
            try:
                fd = os.open(self.path(side, rel), flags, mode)
            except OSError as e:
                return (("err", e.errno),)
            out = [("ok", None)]
            for off, data in chunks:
                out.append(res(os.pwrite, fd, data, off))
            out.append(res(lambda: os.fstat(fd).st_size))
            out.append(res(os.close, fd))
            return tuple(out)

        fl = "".join(c for c, f in (("T", os.O_TRUNC), ("A", os.O_APPEND),
                                    ("X", os.O_EXCL)) if flags & f)
        desc = "writefile %s flags=%s mode=%o %s" % (
            show(rel), fl or "-", mode,
            " ".join("off=%d,len=%d" % (o, len(d)) for o, d in chunks))
        return Op("writefile", desc, fn, [("path", rel), ("parent", rel)])

    def gen_readfile(self):
        rel = self.file_path(0.6)
        size = self.b_size(rel)
        off = self.gen_offset(size)
        n = self.gen_len()

        def fn(side):
            try:
                fd = os.open(self.path(side, rel), os.O_RDONLY)
            except OSError as e:
                return (("err", e.errno),)
            out = (("ok", None), res(os.pread, fd, n, off), res(os.close, fd))
            return out

        return Op("readfile", "readfile %s off=%d len=%d" % (show(rel), off, n), fn, [])

    def gen_truncate(self):
        rel = self.file_path(0.6)
        size = self.gen_trunc_size(self.b_size(rel))

        def fn(side):
            return res(os.truncate, self.path(side, rel), size)

        return Op("truncate", "truncate %s size=%d" % (show(rel), size), fn,
                  [("path", rel)])

    def gen_ftruncate(self):
        i = self.pick_slot()
        slot = self.slots[i]
        size = self.gen_trunc_size(self.b_fd_size(i))

        def fn(side):
            return res(os.ftruncate, slot.fd[side], size)

        return Op("ftruncate", "ftruncate fd%d %s size=%d" % (i, show(slot.rel), size),
                  fn, [("fd", i)])

    def gen_fallocate(self):
        i = self.pick_slot()
        slot = self.slots[i]
        size = self.b_fd_size(i)
        off = self.gen_offset(size)
        n = self.gen_len()
        if self.rng.random() < 0.6:   # make it grow the file
            n = max(n, size - off + self.rng.randint(1, 3 * UNIT))
            n = max(1, min(n, MAX_OFF + MAX_WRITE - off))

        def fn(side):
            return res(os.posix_fallocate, slot.fd[side], off, n)

        return Op("fallocate", "fallocate fd%d %s off=%d len=%d" % (i, show(slot.rel), off, n),
                  fn, [("fd", i)])

    def gen_punch(self):
        r = self.rng
        i = self.pick_slot()
        slot = self.slots[i]
        size = self.b_fd_size(i)
        x = r.random()
        if x < 0.3:
            off = UNIT * r.randint(0, max(0, size // UNIT))
            n = UNIT * r.randint(1, 4)
        elif x < 0.5:
            off = r.randint(0, max(size, 1))
            n = max(1, size - off + r.randint(0, 100))      # to EOF and past
        else:
            off = self.gen_offset(size)
            n = self.gen_len()

        def fn(side):
            return res(punch_hole, slot.fd[side], off, n)

        return Op("punch", "punch fd%d %s off=%d len=%d" % (i, show(slot.rel), off, n),
                  fn, [("fd", i)], {"skip_if_b": (errno.EOPNOTSUPP, errno.ENOSYS)})

    def gen_rename(self):
        r = self.rng
        x = r.random()
        if x < 0.7:
            src = self.existing() or self.file_path()
        elif x < 0.85:
            src = self.file_path()
        else:
            src = self.any_dir_path()
        try:
            src_is_dir = stat.S_ISDIR(os.lstat(self.path("B", src)).st_mode)
        except OSError:
            src_is_dir = False
        y = r.random()
        if src_is_dir:
            dst = self.new_dir_path() if y < 0.6 else \
                (self.existing() or self.file_path()) if y < 0.8 else self.file_path()
        else:
            dst = self.file_path() if y < 0.6 else \
                (self.existing() or self.file_path()) if y < 0.85 else self.new_dir_path()

        def fn(side):
            return res(os.rename, self.path(side, src), self.path(side, dst))

        return Op("rename", "rename %s -> %s" % (show(src), show(dst)), fn,
                  [("path", src), ("path", dst), ("parent", src), ("parent", dst)])

    def gen_link(self):
        r = self.rng
        src = self.existing((stat.S_IFREG, stat.S_IFLNK)) if r.random() < 0.8 else None
        if src is None:
            src = self.file_path() if r.random() < 0.8 else self.any_dir_path()
        dst = pjoin(self.dir_path(3), self.file_name()) if r.random() < 0.8 else self.file_path()
        follow = r.random() < 0.7

        def fn(side):
            return res(os.link, self.path(side, src), self.path(side, dst),
                       follow_symlinks=follow)

        return Op("link", "link %s -> %s%s" % (show(src), show(dst),
                                               "" if follow else " nofollow"),
                  fn, [("path", src), ("path", dst), ("parent", dst)])

    def gen_unlink(self):
        r = self.rng
        rel = self.existing() if r.random() < 0.7 else None
        if rel is None:
            rel = self.file_path()

        def fn(side):
            return res(os.unlink, self.path(side, rel))

        return Op("unlink", "unlink %s" % show(rel), fn, [("path", rel), ("parent", rel)])

    def gen_mkdir(self):
        rel = self.new_dir_path()
        mode = self.gen_mode(isdir=True) if self.rng.random() < 0.3 else 0o755

        def fn(side):
            return res(os.mkdir, self.path(side, rel), mode)

        return Op("mkdir", "mkdir %s mode=%o" % (show(rel), mode), fn,
                  [("path", rel), ("parent", rel)])

    def gen_rmdir(self):
        rel = self.existing((stat.S_IFDIR,)) if self.rng.random() < 0.7 else None
        if rel is None:
            rel = self.any_dir_path() if self.rng.random() < 0.8 else self.file_path()

        def fn(side):
            return res(os.rmdir, self.path(side, rel))

        return Op("rmdir", "rmdir %s" % show(rel), fn, [("path", rel), ("parent", rel)])

    def gen_symlink(self):
        rel = self.file_path() if self.rng.random() < 0.85 else self.new_dir_path()
        target = self.gen_target(rel)

        def fn(side):
            return res(os.symlink, target, self.path(side, rel))

        return Op("symlink", "symlink %s -> %s" % (show(rel), show_bytes(target)), fn,
                  [("path", rel), ("parent", rel)])

    def gen_readlink(self):
        rel = self.existing((stat.S_IFLNK,)) if self.rng.random() < 0.7 else None
        if rel is None:
            rel = self.file_path()

        def fn(side):
            return res(os.readlink, self.path(side, rel))

        return Op("readlink", "readlink %s" % show(rel), fn, [])

    def gen_chmod(self):
        r = self.rng
        rel = self.existing() if r.random() < 0.7 else None
        if rel is None:
            rel = self.file_path()
        mode = self.gen_mode(isdir=r.random() < 0.3)

        def fn(side):
            return res(os.chmod, self.path(side, rel), mode)

        return Op("chmod", "chmod %s mode=%o" % (show(rel), mode), fn, [("path", rel)])

    def gen_utime(self):
        r = self.rng
        rel = self.existing() if r.random() < 0.7 else None
        if rel is None:
            rel = self.file_path()
        follow = r.random() < 0.75
        if r.random() < 0.1:
            ns = None
        else:
            ns = (r.randint(0, 4102444800) * 10**9 + r.randint(0, 10**9 - 1),
                  r.randint(0, 4102444800) * 10**9 + r.randint(0, 10**9 - 1))

        def fn(side):
            if ns is None:
                return res(os.utime, self.path(side, rel), follow_symlinks=follow)
            return res(os.utime, self.path(side, rel), ns=ns, follow_symlinks=follow)

        def after(ra, rb):
            if ns is not None and rb[0] == "ok":
                try:
                    p = self.path("B", rel)
                    st = os.stat(p) if follow else os.lstat(p)
                    self.explicit[st.st_ino] = (ns[1], self.opno)
                except OSError:
                    pass

        desc = "utime %s %s%s" % (show(rel), "now" if ns is None else
                                  "atime=%d mtime=%d" % ns, "" if follow else " nofollow")
        return Op("utime", desc, fn, [("path", rel)], {"after": after})

    def gen_fsync(self):
        i = self.pick_slot()
        slot = self.slots[i]
        data = self.rng.random() < 0.5
        f = os.fdatasync if data else os.fsync

        def fn(side):
            return res(f, slot.fd[side])

        return Op("fsync", "%s fd%d %s" % ("fdatasync" if data else "fsync", i, show(slot.rel)),
                  fn, [("fd", i)])

    def gen_mmapwrite(self):
        """Write through a shared mapping of part of the file, then unmap."""
        r = self.rng
        i = self.pick_slot()
        slot = self.slots[i]
        size = self.b_fd_size(i)
        if size == 0 or stat.S_ISDIR(os.fstat(slot.fd["B"]).st_mode):
            return self.gen_pwrite()
        page = mmap.PAGESIZE
        moff = page * r.randint(0, (size - 1) // page)
        mlen = r.randint(1, min(size - moff, 1 << 20))
        woff = r.randint(0, mlen - 1)
        data, z = self.gen_data(r.randint(1, min(mlen - woff, 20000)))
        sync = r.random() < 0.5

        def fn(side):
            try:
                m = mmap.mmap(slot.fd[side], mlen, offset=moff)
            except OSError as e:
                return ("err", e.errno)
            except ValueError as e:     # Python's own size check (fstat)
                return ("err", "ValueError: %s" % e)
            try:
                m[woff:woff + len(data)] = data
                if sync:
                    m.flush()
                return ("ok", None)
            finally:
                m.close()

        return Op("mmapwrite", "mmapwrite fd%d %s map=%d+%d off=%d len=%d zeros=%s%s"
                  % (i, show(slot.rel), moff, mlen, moff + woff, len(data), z,
                     " msync" if sync else ""), fn, [("fd", i)])

    def gen_copyrange(self):
        """copy_file_range between two open fds (or within one)."""
        r = self.rng
        i = self.pick_slot()
        j = self.pick_slot()
        si, sj = self.slots[i], self.slots[j]
        src_size = self.b_fd_size(i)
        off_in = self.gen_offset(src_size) if r.random() < 0.5 else r.randint(0, max(src_size, 1))
        off_out = self.gen_offset(self.b_fd_size(j))
        n = self.gen_len()

        def fn(side):
            return res(os.copy_file_range, si.fd[side], sj.fd[side], n, off_in, off_out)

        return Op("copyrange", "copy_file_range fd%d %s off=%d -> fd%d %s off=%d len=%d"
                  % (i, show(si.rel), off_in, j, show(sj.rel), off_out, n), fn, [("fd", j)])

    def gen_seekdata(self):
        """lseek SEEK_DATA / SEEK_HOLE: where holes are is each filesystem's
        business, so each side's answer is checked against the contents
        (data never skipped, holes read as zeros) instead of against the
        other side; the fd offsets are put back afterwards."""
        r = self.rng
        i = self.pick_slot()
        slot = self.slots[i]
        if stat.S_ISDIR(os.fstat(slot.fd["B"]).st_mode):
            return self.gen_lseek()
        size = self.b_fd_size(i)
        off = self.gen_offset(size) if r.random() < 0.7 else r.randint(0, size + 10)
        whence = r.choice([os.SEEK_DATA, os.SEEK_HOLE])
        wname = "DATA" if whence == os.SEEK_DATA else "HOLE"

        def fn(side):
            fd = slot.fd[side]
            pos = os.lseek(fd, 0, os.SEEK_CUR)
            rr = res(os.lseek, fd, off, whence)
            os.lseek(fd, pos, os.SEEK_SET)
            return rr

        def check(ra, rb):
            ca, cb = res(self.fd_contents, slot, "A"), res(self.fd_contents, slot, "B")
            what = "fd%d %s" % (i, show(slot.rel))
            if not self.cmp_errs("read contents of " + what, ca, cb):
                return
            self.cmp_data(what, ca[1], cb[1])
            data = cb[1]
            for side, rr in (("A", ra), ("B", rb)):
                bad = seek_data_violation(data, off, whence, rr)
                if bad:
                    raise Divergence("SEEK_%s answer of side %s is wrong: %s" % (wname, side, bad),
                                     ["A: " + show_result(ra), "B: " + show_result(rb),
                                      "file size %d" % len(data)])

        return Op("seekdata", "lseek fd%d %s off=%d whence=%s" % (i, show(slot.rel), off, wname),
                  fn, [], {"validate": check})

    def gen_stat(self):
        rel = self.file_path() if self.rng.random() < 0.7 else self.any_dir_path()
        follow = self.rng.random() < 0.5

        def fn(side):
            return res(lambda: self.stat_key((os.stat if follow else os.lstat)(
                self.path(side, rel))))

        return Op("stat", "%s %s" % ("stat" if follow else "lstat", show(rel)), fn, [])

    def gen_listdir(self):
        rel = self.any_dir_path() if self.rng.random() < 0.8 else b""

        def fn(side):
            return res(lambda: sorted(os.listdir(self.path(side, rel))))

        return Op("listdir", "listdir %s" % show(rel), fn, [])

    def gen_rmtree(self, rel=None):
        if rel is None:
            rel = self.existing((stat.S_IFDIR,))
        if rel is None:
            return self.gen_mkdir()
        # Post-order list of what to remove, taken from B before the op.
        steps = []
        pre = rel + b"/"
        for e in sorted(self.entries(), key=lambda e: e[3], reverse=True):
            if e[0].startswith(pre):
                steps.append((e[0], e[1] == stat.S_IFDIR))
        steps.append((rel, True))

        def fn(side):
            out = []
            for p, isdir in steps:
                out.append(res(os.rmdir if isdir else os.unlink, self.path(side, p)))
            return tuple(out)

        return Op("rmtree", "rmtree %s (%d entries)" % (show(rel), len(steps)), fn,
                  [("path", rel), ("parent", rel)])

    def gen_shrink(self):
        """Keep the tree small: remove the biggest file or a whole subtree."""
        ents = self.entries()
        files = [e for e in ents if e[1] == stat.S_IFREG]
        if files and self.rng.random() < 0.5:
            rel = max(files, key=lambda e: e[2])[0]

            def fn(side):
                return res(os.unlink, self.path(side, rel))

            return Op("unlink", "unlink %s (shrink)" % show(rel), fn,
                      [("path", rel), ("parent", rel)])
        deepest = max(ents, key=lambda e: e[3]) if ents else None
        if deepest and deepest[3] > 1:
            top = deepest[0].split(b"/")[0]
            if stat.S_ISDIR(os.lstat(self.path("B", top)).st_mode):
                return self.gen_rmtree(top)
        return self.gen_rmtree()

    # ----- comparison

    def stat_key(self, st):
        fmt = stat.S_IFMT(st.st_mode)
        key = {"type": fmt, "mode": oct(stat.S_IMODE(st.st_mode)),
               "uid": st.st_uid, "gid": st.st_gid}
        if fmt in (stat.S_IFREG, stat.S_IFLNK):
            key["size"] = st.st_size
        if fmt == stat.S_IFREG and not self.args.no_nlink:
            key["nlink"] = st.st_nlink
        return sorted(key.items())

    def cmp_stat(self, what, sa, sb):
        ka, kb = dict(self.stat_key(sa)), dict(self.stat_key(sb))
        for k in ka:
            if ka[k] != kb[k]:
                raise Divergence("%s: %s differs" % (what, k),
                                 ["A: %s=%s" % (k, ka[k]), "B: %s=%s" % (k, kb[k])])
        ex = self.explicit.get(sb.st_ino)
        if ex is not None and sb.st_mtime_ns == ex[0] and sa.st_mtime_ns != sb.st_mtime_ns:
            raise Divergence("%s: mtime differs (set explicitly by op #%d)" % (what, ex[1]),
                             ["A: mtime_ns=%d" % sa.st_mtime_ns,
                              "B: mtime_ns=%d" % sb.st_mtime_ns])

    def cmp_data(self, what, da, db):
        off = first_diff(da, db)
        if off is None:
            return
        raise Divergence("%s: contents differ at byte %d (A size %d, B size %d)"
                         % (what, off, len(da), len(db)),
                         ["A[%d:%d]: %s" % (off, off + 32, hexctx(da, off)),
                          "B[%d:%d]: %s" % (off, off + 32, hexctx(db, off))])

    def cmp_errs(self, what, ra, rb):
        """Both sides failed or both succeeded; raise otherwise. True if both ok."""
        if ra[0] == "ok" and rb[0] == "ok":
            return True
        if ra != rb:
            raise Divergence(what, ["A: " + show_result(ra), "B: " + show_result(rb)])
        return False

    def cmp_entry(self, rel, follow_links=True):
        """Compare one entry (lstat, contents, link target); follow a symlink once."""
        pa, pb = self.path("A", rel), self.path("B", rel)
        ra, rb = res(os.lstat, pa), res(os.lstat, pb)
        if not self.cmp_errs("lstat %s" % show(rel), ra, rb):
            return
        sa, sb = ra[1], rb[1]
        self.cmp_stat("lstat %s" % show(rel), sa, sb)
        if stat.S_ISREG(sb.st_mode):
            ca, cb = res(read_path, pa), res(read_path, pb)
            if self.cmp_errs("read %s" % show(rel), ca, cb):
                self.cmp_data("file %s" % show(rel), ca[1], cb[1])
        elif stat.S_ISLNK(sb.st_mode):
            ta, tb = res(os.readlink, pa), res(os.readlink, pb)
            if self.cmp_errs("readlink %s" % show(rel), ta, tb) and ta[1] != tb[1]:
                raise Divergence("symlink %s: target differs" % show(rel),
                                 ["A: %s" % show_bytes(ta[1]), "B: %s" % show_bytes(tb[1])])
            if follow_links:
                ra, rb = res(os.stat, pa), res(os.stat, pb)
                if not self.cmp_errs("stat (following) %s" % show(rel), ra, rb):
                    return
                self.cmp_stat("stat (following) %s" % show(rel), ra[1], rb[1])
                if stat.S_ISREG(rb[1].st_mode):
                    ca, cb = res(read_follow, pa), res(read_follow, pb)
                    if self.cmp_errs("read (following) %s" % show(rel), ca, cb):
                        self.cmp_data("file %s (following)" % show(rel), ca[1], cb[1])

    def cmp_listing(self, rel):
        la = res(lambda: sorted(os.listdir(self.path("A", rel))))
        lb = res(lambda: sorted(os.listdir(self.path("B", rel))))
        if not self.cmp_errs("listdir %s" % show(rel), la, lb):
            return None
        if la[1] != lb[1]:
            a, b = set(la[1]), set(lb[1])
            raise Divergence("directory %s: listings differ" % show(rel),
                             ["only in A: %s" % ", ".join(show(n) for n in sorted(a - b)),
                              "only in B: %s" % ", ".join(show(n) for n in sorted(b - a))])
        return lb[1]

    def fd_contents(self, slot, side):
        fd = slot.fd[side]
        if slot.readable:
            return read_all_fd(fd)
        return read_follow(b"/proc/self/fd/%d" % fd)

    def cmp_fd(self, i):
        slot = self.slots[i]
        if slot is None:
            return
        what = "fd%d %s" % (i, show(slot.rel))
        ra, rb = res(os.fstat, slot.fd["A"]), res(os.fstat, slot.fd["B"])
        if not self.cmp_errs("fstat " + what, ra, rb):
            return
        self.cmp_stat("fstat " + what, ra[1], rb[1])
        if stat.S_ISREG(rb[1].st_mode):
            ca, cb = res(self.fd_contents, slot, "A"), res(self.fd_contents, slot, "B")
            if self.cmp_errs("read contents of " + what, ca, cb):
                self.cmp_data(what, ca[1], cb[1])

    def full_compare(self):
        self.full_compares += 1
        stack = [b""]
        while stack:
            d = stack.pop()
            names = self.cmp_listing(d)
            if names is None:
                continue
            for name in names:
                rel = pjoin(d, name)
                self.cmp_entry(rel, follow_links=False)
                if stat.S_ISDIR(os.lstat(self.path("B", rel)).st_mode):
                    stack.append(rel)
        for i in self.open_slots():
            self.cmp_fd(i)

    def run_checks(self, op):
        for kind, x in op.checks:
            if kind == "path":
                self.cmp_entry(x)
            elif kind == "parent":
                self.cmp_listing(parent_of(x))
            elif kind in ("fd", "newslot"):
                self.cmp_fd(x)

    # ----- the self-test fault

    def selftest_corrupt(self, op):
        cands = []
        for kind, x in op.checks:
            if kind in ("fd", "newslot") and self.slots[x] is not None:
                cands.append(b"/proc/self/fd/%d" % self.slots[x].fd["A"])
            elif kind == "path":
                cands.append(self.path("A", x))
        for rel, fmt, _, _ in self.entries():
            if fmt == stat.S_IFREG:
                cands.append(self.path("A", rel))
        for p in cands:
            try:
                st = os.stat(p)
                if not stat.S_ISREG(st.st_mode) or st.st_size == 0:
                    continue
                fd = os.open(p, os.O_RDWR)
                try:
                    off = st.st_size // 2
                    b = os.pread(fd, 1, off)
                    os.pwrite(fd, bytes([b[0] ^ 0x5A]), off)
                finally:
                    os.close(fd)
            except OSError:
                continue
            print("difftest: selftest: flipped byte %d of A's %s after op #%d"
                  % (off, show(p), self.opno), file=sys.stderr)
            self.corrupted = True
            return

    # ----- running

    def run_op(self, op):
        line = "#%d %s" % (self.opno, op.desc)
        self.history.append(line)
        self.last_results = None
        if self.args.verbose:
            print(line, end="", flush=True)
        rb = op.fn("B")
        skip = op.meta.get("skip_if_b")
        if skip and rb[0] == "err" and rb[1] in skip:
            self.skipped_punch += 1
            if self.args.verbose:
                print(" -> skipped: B refuses it (%s)" % errname(rb[1]), flush=True)
            return
        ra = op.fn("A")
        self.last_results = (ra, rb)
        if self.args.verbose:
            print(" -> " + short_result(rb) +
                  ("" if ra == rb else " (A: %s)" % short_result(ra)), flush=True)
        self.outcomes[op.kind, ok_or_errno(rb)] += 1
        validate = op.meta.get("validate")
        if validate:
            validate(ra, rb)
        elif ra != rb:
            lines = ["A (test):      " + show_result(ra),
                     "B (reference): " + show_result(rb)]
            ctx = self.result_context(ra, rb)
            raise Divergence("results differ", lines + ctx)
        after = op.meta.get("after")
        if after:
            after(ra, rb)
        self._entries = None
        if self.corrupt_at and not self.corrupted and self.opno >= self.corrupt_at:
            self.selftest_corrupt(op)
            self._entries = None
        self.run_checks(op)

    @staticmethod
    def result_context(ra, rb):
        def flat(r):
            if isinstance(r, tuple) and len(r) == 2 and r[0] in ("ok", "err"):
                return [r]
            return list(r)
        for a, b in zip(flat(ra), flat(rb)):
            if a != b and a[0] == b[0] == "ok" and isinstance(a[1], bytes):
                off = first_diff(a[1], b[1])
                return ["first differing byte of the data: %d" % off,
                        "A[%d:%d]: %s" % (off, off + 32, hexctx(a[1], off)),
                        "B[%d:%d]: %s" % (off, off + 32, hexctx(b[1], off))]
        return []

    def close_all(self):
        for i in self.open_slots():
            slot = self.slots[i]
            ra = res(os.close, slot.fd["A"])
            rb = res(os.close, slot.fd["B"])
            self.slots[i] = None
            self.cmp_errs("close fd%d %s before remount" % (i, show(slot.rel)), ra, rb)

    def remount(self):
        line = "#%d remount" % self.opno
        self.history.append(line)
        if self.args.verbose:
            print(line, flush=True)
        self.close_all()
        r = subprocess.run(self.args.remount_cmd, shell=True)
        if r.returncode != 0:
            print("difftest: remount command failed (exit %d) after op #%d: %s"
                  % (r.returncode, self.opno, self.args.remount_cmd), file=sys.stderr)
            sys.exit(2)
        self.remounts += 1
        self.full_compare()

    def run(self):
        a = self.args
        t0 = time.monotonic()
        deadline = t0 + a.minutes * 60 if a.minutes else None
        try:
            self.full_compare()
            while (self.opno < a.ops) if deadline is None else (time.monotonic() < deadline):
                self.opno += 1
                op = self.gen_op()
                self.cur_op = op
                self.run_op(op)
                if a.remount_cmd and a.remount_every and self.opno % a.remount_every == 0:
                    self.remount()
                elif self.opno % a.full_every == 0:
                    self.full_compare()
            self.full_compare()
            self.close_all()
            self.full_compare()
        except Divergence as d:
            self.report(d)
            return 1
        dt = time.monotonic() - t0
        if a.verbose:
            kinds = sorted({k for k, _ in self.outcomes})
            for k in kinds:
                print("difftest: %-10s %s" % (k, " ".join(
                    "%s=%d" % (o, n) for (kk, o), n in sorted(self.outcomes.items())
                    if kk == k)))
        print("difftest: seed %d, %d ops, 0 divergences (%.1f s, %.0f ops/s, %d remounts, "
              "%d full compares%s)" % (self.seed, self.opno, dt, self.opno / dt if dt else 0,
                                       self.remounts, self.full_compares,
                                       ", %d punches skipped" % self.skipped_punch
                                       if self.skipped_punch else ""))
        return 0

    def report(self, d):
        a = self.args
        p = lambda s="": print(s, file=sys.stderr)
        p("difftest: DIVERGENCE at op #%d (seed %d)" % (self.opno, self.seed))
        p("  op:   #%d %s" % (self.opno, self.history[-1].split(" ", 1)[1]
                              if self.history else "(initial compare)"))
        if self.last_results is not None and d.what != "results differ":
            p("  results: A %s; B %s" % (short_result(self.last_results[0]),
                                         short_result(self.last_results[1])))
        p("  what: %s" % d.what)
        for line in d.lines:
            p("    " + line)
        p("  last ops:")
        for line in self.history:
            p("    " + line)
        cmd = [os.path.basename(sys.argv[0]), "--seed", str(self.seed),
               "--ops", str(self.opno), "--a", a.a, "--b", a.b]
        if a.remount_cmd:
            cmd += ["--remount-cmd", shlex.quote(a.remount_cmd),
                    "--remount-every", str(a.remount_every)]
        if a.full_every != 50:
            cmd += ["--full-every", str(a.full_every)]
        p("  reproduce (A and B fresh and empty): " + " ".join(cmd) + " --verbose")
        print("difftest: seed %d, %d ops, 1 divergence" % (self.seed, self.opno))


def empty_or_clean(path, clean):
    os.makedirs(path, exist_ok=True)
    names = os.listdir(path)
    if not names:
        return True
    if not clean:
        print("difftest: %s is not empty (use --clean to empty it first)" % path,
              file=sys.stderr)
        return False
    for name in names:
        p = os.path.join(path, name)
        if os.path.isdir(p) and not os.path.islink(p):
            for root, dirs, files in os.walk(p, topdown=False):
                for f in files:
                    os.unlink(os.path.join(root, f))
                for dd in dirs:
                    q = os.path.join(root, dd)
                    if os.path.islink(q):
                        os.unlink(q)
                    else:
                        os.rmdir(q)
            os.rmdir(p)
        else:
            os.unlink(p)
    return True


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="Apply the same random filesystem operations to A (under test) "
                    "and B (reference) and stop at the first divergence.")
    ap.add_argument("--seed", type=int, default=None, help="random seed (default: random)")
    ap.add_argument("--ops", type=int, default=1000, help="number of operations (1000)")
    ap.add_argument("--a", required=True, help="tree under test (e.g. MNT/sub)")
    ap.add_argument("--b", required=True, help="reference tree on a plain filesystem")
    ap.add_argument("--remount-cmd", help="shell command that unmounts and remounts A")
    ap.add_argument("--remount-every", type=int, default=0, metavar="M",
                    help="run --remount-cmd after every M operations")
    ap.add_argument("--minutes", type=float, default=0,
                    help="soak: run for this long instead of --ops operations")
    ap.add_argument("--full-every", type=int, default=50, metavar="N",
                    help="compare the whole trees every N operations (50)")
    ap.add_argument("--clean", action="store_true", help="empty A and B first")
    ap.add_argument("--skip", metavar="OP[,OP...]",
                    help="never generate these operations (e.g. link, where "
                         "A's lower filesystem has no hard links)")
    ap.add_argument("--no-nlink", action="store_true",
                    help="do not compare link counts: A's lower filesystem "
                         "has none (sshfs: SFTP reports 1) or keeps them "
                         "stale (GlusterFS after a link is removed)")
    ap.add_argument("--verbose", action="store_true", help="print every operation")
    a = ap.parse_args(argv)
    if a.seed is None:
        a.seed = random.SystemRandom().randrange(1 << 32)
    if a.remount_every and not a.remount_cmd:
        ap.error("--remount-every needs --remount-cmd")
    if a.remount_cmd and not a.remount_every:
        a.remount_every = 200
    if a.full_every < 1:
        ap.error("--full-every must be >= 1")
    if os.path.realpath(a.a) == os.path.realpath(a.b):
        ap.error("A and B must be different directories")
    if not (empty_or_clean(a.a, a.clean) and empty_or_clean(a.b, a.clean)):
        return 2
    os.umask(0o022)
    return DiffTester(a).run()


if __name__ == "__main__":
    sys.exit(main())
