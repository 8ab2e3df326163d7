#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Differential permission tester: an xtsfs mount against a plain directory.

permtest runs a fixed grid of cells on two trees:

  A  the tree under test (a directory inside an xtsfs mount with
     -o allow_other, so the kernel checks modes with default_permissions),
  B  a reference tree on an ordinary filesystem (ext4 under /tmp).

A cell is one operation by one caller on one starting state: the op
(create, mkdir, mkfifo, open in each access mode, write, truncate, chmod,
chown, chgrp, utimens, link, symlink, unlink, rmdir, rename with and
without RENAME_NOREPLACE / RENAME_EXCHANGE, readdir, lookup, access,
getxattr, setxattr, removexattr, listxattr, reading and setting an ACL), the
caller (root, the owner, a member of the object's group by a supplementary
group, a member by its primary group, another user), the mode of the
directory and of the object (a grid with sticky, setgid and setuid bits),
the owner of the object (for sticky directories), and the name class
(short, 200 bytes: above xtsfs's long-name threshold of 160, 255 bytes),
and for the ACL cells a POSIX ACL on the object, an ACL on the cell's
directory or a default ACL on it (key acl: o:SPEC, d:SPEC, dd:SPEC).

For each cell, root makes the same starting state in both trees (a fresh
directory per cell, owner, group and mode of the directory and of each
object set explicitly), then the caller performs the operation in B and
then in A, and the two are compared: the result of each step (success and
what it returned, or the errno), and afterwards the state of everything in
the cell's directory, recursively: names, type, mode bits (all 12), uid,
gid, size and link count (not for directories), symlink targets, every
xattr (names and values, ACLs included), and the times an explicit
utimens set.

Callers are bare numeric ids (no /etc/passwd entry needed): a child
process forked per caller per batch does setgroups/setgid/setuid and runs
all of that caller's cells of the batch; results come back through a pipe.

Select cells with --filter KEY=V1,V2 (repeatable; keys: op, caller, dir,
obj, type, owner, name, acl; values are fnmatch patterns) and --sample K
--seed N (K cells of the selection chosen by seed N). The grid and its
order are fixed: the same options always run the same cells.

Exit status: 0 when everything agreed ("permtest: N cells, 0
divergences"), 1 on any divergence (each reported with its cell and both
results), 2 on a usage or set-up error.

Python 3 standard library only; must run as root.
"""

import argparse
import ctypes
import errno
import fnmatch
import os
import pickle
import platform
import random
import stat
import struct
import subprocess
import sys
import time
import traceback

# ---------------------------------------------------------------- identities

G = 61010       # the objects' group
GIN = 61011     # a group the owner (and the group member) is in
GOUT = 61012    # a group no caller but root is in

# name -> (uid, gid, supplementary groups)
CALLERS = {
    "root": (0, 0, [0]),
    "owner": (61001, 61001, [61001, GIN]),
    "group": (61002, 61002, [61002, G, GIN]),   # in G by a supplementary group
    "gprim": (61004, G, [G]),                   # in G by its primary group
    "other": (61003, 61003, [61003]),
}
CALLER_ORDER = ["root", "owner", "group", "gprim", "other"]
OWNER_UID = CALLERS["owner"][0]

# object owners (for cells where it matters: sticky directories)
VOWNERS = {"owner": CALLERS["owner"][0], "group": CALLERS["group"][0],
           "other": CALLERS["other"][0]}

CONTENT = b"hello\n"
UTIME_NS = (1_000_000_000 * 1_000_000_001 + 123_456_789,
            1_000_000_000 * 1_234_567_890 + 987_654_321)

# ---------------------------------------------------------------- grid

FILE_MODES = [0o0000, 0o0400, 0o0200, 0o0600, 0o0644, 0o0666, 0o0755, 0o0777,
              0o0060, 0o0006, 0o0640, 0o4755, 0o2755, 0o6755, 0o6777, 0o2747]
OBJDIR_MODES = [0o0000, 0o0700, 0o0755, 0o2775, 0o1777]
DIR_MODES = [0o0000, 0o0100, 0o0300, 0o0500, 0o0600, 0o0700, 0o0755, 0o0770,
             0o0777, 0o1777, 0o1770, 0o2775, 0o2777]
STICKY_OWNER_MODES = {0o1777, 0o1770}
# the xattr ops run over fewer file modes: set-id bits play no part there
XATTR_FILE_MODES = [0o0000, 0o0400, 0o0200, 0o0600, 0o0644, 0o0666, 0o0060, 0o0006,
                    0o0640, 0o6777]
NAME_CLASSES = ["short", "l200", "l255"]


def nm(prefix, cls):
    """The name of object @prefix in name class @cls (bytes)."""
    p = prefix.encode()
    if cls == "short":
        return p
    n = 200 if cls == "l200" else 255
    return p + b"_" + b"n" * (n - len(p) - 1)


_libc = ctypes.CDLL(None, use_errno=True)
RENAME_NOREPLACE = 1
RENAME_EXCHANGE = 2
AT_FDCWD = -100


def renameat2(old, new, flags):
    if platform.machine() == "x86_64":
        rc = _libc.syscall(ctypes.c_long(316), ctypes.c_int(AT_FDCWD), ctypes.c_char_p(old),
                           ctypes.c_int(AT_FDCWD), ctypes.c_char_p(new),
                           ctypes.c_uint(flags))
    else:
        rc = _libc.renameat2(AT_FDCWD, old, AT_FDCWD, new, ctypes.c_uint(flags))
    if rc != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))


# ---------------------------------------------------------------- operations
# Each op: fn(cell_dir_path, name_class) -> list of step results, run as
# the caller; "needs": the objects root makes first.

def step(fn, *args, **kw):
    try:
        v = fn(*args, **kw)
        return ("ok", v)
    except OSError as e:
        return ("err", e.errno)


def st_view(st):
    fmt = stat.S_IFMT(st.st_mode)
    return (fmt, st.st_mode & 0o7777, st.st_uid, st.st_gid,
            st.st_size if fmt != stat.S_IFDIR else None)


def op_open(flags, data=None, ftrunc=None):
    def fn(d, c):
        out = []
        r = step(os.open, d + b"/" + nm("o", c), flags)
        out.append(("open", r[0], None if r[0] == "ok" else r[1]))
        if r[0] == "ok":
            fd = r[1]
            if data is not None:
                out.append(("write",) + step(os.write, fd, data))
            if ftrunc is not None:
                out.append(("ftruncate",) + step(os.ftruncate, fd, ftrunc))
            out.append(("close",) + step(os.close, fd))
        return out
    return fn


def on_o(f, *args, **kw):
    def fn(d, c):
        return [(f.__name__,) + step(f, d + b"/" + nm("o", c), *args, **kw)]
    return fn


def op_stat(d, c):
    r = step(os.lstat, d + b"/" + nm("o", c))
    return [("lstat", r[0], st_view(r[1]) if r[0] == "ok" else r[1])]


def op_access(d, c):
    p = d + b"/" + nm("o", c)
    return [("access", m, step(os.access, p, bit)[1])
            for m, bit in (("r", os.R_OK), ("w", os.W_OK), ("x", os.X_OK))]


def op_chown_self(d, c):
    return [("chown",) + step(os.chown, d + b"/" + nm("o", c), os.getuid(), -1,
                              follow_symlinks=False)]


def op_lookup(d, c):
    return op_stat(d, c)


def op_readdir(d, c):
    r = step(os.listdir, d)
    return [("listdir", r[0], sorted(r[1]) if r[0] == "ok" else r[1])]


def op_opendir(d, c):
    r = step(os.open, d, os.O_RDONLY | os.O_DIRECTORY)
    out = [("opendir", r[0], None if r[0] == "ok" else r[1])]
    if r[0] == "ok":
        out.append(("close",) + step(os.close, r[1]))
    return out


def op_create(mode, extra=os.O_EXCL, name="n"):
    def fn(d, c):
        r = step(os.open, d + b"/" + nm(name, c), os.O_CREAT | os.O_WRONLY | extra, mode)
        out = [("open", r[0], None if r[0] == "ok" else r[1])]
        if r[0] == "ok":
            out.append(("close",) + step(os.close, r[1]))
        return out
    return fn


def in_d(f, *names, args=(), **kw):
    """f(d/name1, d/name2, *args): a directory op on the cell's names."""
    def fn(d, c):
        paths = [d + b"/" + b"/".join(nm(x, c) for x in n.split("/")) for n in names]
        return [(f.__name__,) + step(f, *paths, *args, **kw)]
    return fn


def sym(d, c):
    return [("symlink",) + step(os.symlink, nm("o", c), d + b"/" + nm("n", c))]


def rn2(a, b, flags):
    def fn(d, c):
        pa = d + b"/" + b"/".join(nm(x, c) for x in a.split("/"))
        pb = d + b"/" + b"/".join(nm(x, c) for x in b.split("/"))
        return [("renameat2",) + step(renameat2, pa, pb, flags)]
    return fn


# ---------------------------------------------------------------- xattrs, ACLs

XA_USER, XA_TRUSTED = "user.pt", "trusted.pt"   # what root sets ("xa" in needs)
ACL_ACCESS, ACL_DEFAULT = "system.posix_acl_access", "system.posix_acl_default"
A_USER_OBJ, A_USER, A_GROUP_OBJ, A_GROUP, A_MASK, A_OTHER = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20


def acl_bytes(mode, extra=(), mask=None):
    """The system.posix_acl_* value (the kernel's xattr form, version 2) of
    an ACL whose owner, owning-group and other entries are @mode's rwx
    bits, with @extra (tag, id, perm) named entries and, where there are
    any, a mask (@mask, or the union of the group class as setfacl makes
    it)."""
    ents = [(A_USER_OBJ, None, (mode >> 6) & 7), (A_GROUP_OBJ, None, (mode >> 3) & 7),
            (A_OTHER, None, mode & 7)] + list(extra)
    if extra or mask is not None:
        if mask is None:
            mask = 0
            for tag, _, perm in ents:
                if tag in (A_USER, A_GROUP_OBJ, A_GROUP):
                    mask |= perm
        ents.append((A_MASK, None, mask))
    ents.sort(key=lambda e: (e[0], -1 if e[1] is None else e[1]))
    b = struct.pack("<I", 2)
    for tag, id_, perm in ents:
        b += struct.pack("<HHI", tag, perm, 0xffffffff if id_ is None else id_)
    return b


def op_getxattr(name):
    def fn(d, c):
        return [("getxattr",) + step(os.getxattr, d + b"/" + nm("o", c), name,
                                     follow_symlinks=False)]
    return fn


def op_listxattr(d, c):
    r = step(os.listxattr, d + b"/" + nm("o", c), follow_symlinks=False)
    return [("listxattr", r[0], sorted(r[1]) if r[0] == "ok" else r[1])]


def op_getacl(d, c):
    r = step(os.getxattr, d + b"/" + nm("o", c), ACL_ACCESS, follow_symlinks=False)
    return [("getacl", r[0], acl_text(r[1]) if r[0] == "ok" else r[1])]


# the access ACL a caller tries to set (op setacl)
SETACL_VALUE = None   # filled in below, once the ids are known


# op name -> (function, needs, kind). kind "obj": grid over object modes
# (in a 0755 directory, or "obj777": a 0777 one); "dir": grid over
# directory modes (objects 0644 file / 0755 dirs).
OPS = {
    # operations on an existing object
    "stat": (op_stat, "o", "obj"),
    "access": (op_access, "o", "obj"),
    "open_r": (op_open(os.O_RDONLY), "o", "obj"),
    "open_w": (op_open(os.O_WRONLY), "o", "obj"),
    "open_rw": (op_open(os.O_RDWR), "o", "obj"),
    "open_trunc": (op_open(os.O_WRONLY | os.O_TRUNC), "o", "obj"),
    "open_rdtrunc": (op_open(os.O_RDONLY | os.O_TRUNC), "o", "obj"),
    "write": (op_open(os.O_WRONLY, data=b"ab"), "o", "obj"),
    "append": (op_open(os.O_WRONLY | os.O_APPEND, data=b"ab"), "o", "obj"),
    "ftruncate": (op_open(os.O_WRONLY, ftrunc=2), "o", "obj"),
    "truncate": (on_o(os.truncate, 2), "o", "obj"),
    "chmod": (on_o(os.chmod, 0o640), "o", "obj"),
    "chmod_sgid": (on_o(os.chmod, 0o2750), "o", "obj"),
    "chmod_suid": (on_o(os.chmod, 0o4755), "o", "obj"),
    "chown_uid": (on_o(os.chown, CALLERS["other"][0], -1), "o", "obj"),
    "chown_self": (op_chown_self, "o", "obj"),
    "chgrp_same": (on_o(os.chown, -1, G), "o", "obj"),
    "chgrp_in": (on_o(os.chown, -1, GIN), "o", "obj"),
    "chgrp_out": (on_o(os.chown, -1, GOUT), "o", "obj"),
    "utime_set": (on_o(os.utime, ns=UTIME_NS), "o", "obj"),
    "utime_now": (on_o(os.utime, None), "o", "obj"),
    "link_obj": (in_d(os.link, "o", "n"), "o", "obj777"),
    # operations on a directory's entries
    "lookup": (op_lookup, "o", "dir"),
    "readdir": (op_readdir, "o", "dir"),
    "opendir": (op_opendir, "o", "dir"),
    "create": (op_create(0o644), "", "dir"),
    "create_suid": (op_create(0o6755), "", "dir"),
    "creat_exist": (op_create(0o644, extra=0, name="o"), "o", "dir"),
    "mkdir": (in_d(os.mkdir, "n", args=(0o755,)), "", "dir"),
    "mkdir_sticky": (in_d(os.mkdir, "n", args=(0o1777,)), "", "dir"),
    "mkfifo": (in_d(os.mkfifo, "n", args=(0o644,)), "", "dir"),
    "symlink": (sym, "", "dir"),
    "link": (in_d(os.link, "o", "n"), "o", "dir"),
    "unlink": (in_d(os.unlink, "o"), "o", "dir"),
    "unlink_dir": (in_d(os.unlink, "sd"), "sd", "dir"),
    "rmdir": (in_d(os.rmdir, "sd"), "sd", "dir"),
    "rmdir_full": (in_d(os.rmdir, "sdf"), "sdf", "dir"),
    "rename": (in_d(os.rename, "o", "n"), "o", "dir"),
    "rename_over": (in_d(os.rename, "o", "o2"), "o o2", "dir"),
    "rename_noreplace": (rn2("o", "n", RENAME_NOREPLACE), "o", "dir"),
    "rename_noreplace_ex": (rn2("o", "o2", RENAME_NOREPLACE), "o o2", "dir"),
    "rename_exchange": (rn2("o", "o2", RENAME_EXCHANGE), "o o2", "dir"),
    "rename_exchange_dir": (rn2("o", "sd", RENAME_EXCHANGE), "o sd", "dir"),
    "rename_dir": (in_d(os.rename, "sd", "n"), "sd", "dir"),
    "rename_dir_full": (in_d(os.rename, "sd", "sdf"), "sd sdf", "dir"),
    "rename_out": (in_d(os.rename, "o", "x/n"), "o x", "dir"),
    "rename_dir_out": (in_d(os.rename, "sd", "x/n"), "sd x", "dir"),
    "rename_in": (in_d(os.rename, "x/xf", "n"), "x", "dir"),
    "rename_exchange_out": (rn2("o", "x/xf", RENAME_EXCHANGE), "o x", "dir"),
    # extended attributes of an existing object (root set user.pt and
    # trusted.pt): user.* needs write permission to change and read
    # permission to read (and on a sticky directory, to change, its
    # owner: fs/xattr.c, xattr_permission); trusted.* is root's
    "getxattr": (op_getxattr(XA_USER), "o xa", "obj"),
    "setxattr": (on_o(os.setxattr, "user.pn", b"new", follow_symlinks=False), "o xa", "obj"),
    "removexattr": (on_o(os.removexattr, XA_USER, follow_symlinks=False), "o xa", "obj"),
    "listxattr": (op_listxattr, "o xa", "obj"),
    "setxattr_trusted": (on_o(os.setxattr, "trusted.pn", b"new", follow_symlinks=False),
                         "o xa", "obj"),
    # POSIX ACLs: reading one, setting one (only the owner and root may)
    "getacl": (op_getacl, "o", "acl"),
    "setacl": (lambda d, c: [("setacl",) + step(os.setxattr, d + b"/" + nm("o", c),
                                                ACL_ACCESS, SETACL_VALUE)], "o", "acl"),
}
# ops also run with a directory as the object
OBJDIR_OPS = ["stat", "access", "chmod", "chmod_sgid", "chown_uid", "chown_self",
              "chgrp_in", "chgrp_out", "utime_set", "utime_now",
              "getxattr", "setxattr", "removexattr", "listxattr"]

# ACL cells (key acl): "o:SPEC", an access ACL on the object (a file in a
# 0755 directory, of the spec's mode); "d:SPEC", one on the cell's
# directory; "dd:SPEC", a default ACL on the cell's 0777 directory.
# A spec: (mode, named entries, mask or None for setfacl's). Uids: 61001
# the owner, 61002 the group member, 61003 other; gids: G the objects'
# group (group, gprim), GIN (owner, group), GOUT (nobody but root).
_UO, _UG, _UOWN = CALLERS["other"][0], CALLERS["group"][0], CALLERS["owner"][0]
ACL_OBJ_SPECS = {
    "u_other_r": (0o600, [(A_USER, _UO, 4)], None),
    "u_other_rw": (0o600, [(A_USER, _UO, 6)], None),
    "u_other_none": (0o644, [(A_USER, _UO, 0)], None),      # denies what other:: allows
    "u_other_rw_mask_r": (0o600, [(A_USER, _UO, 6)], 4),    # the mask limits it
    "u_group_rw": (0o640, [(A_USER, _UG, 6)], None),        # a user entry before groups
    "u_owner_none": (0o600, [(A_USER, _UOWN, 0)], None),    # the owner is user::
    "x_other": (0o700, [(A_USER, _UO, 1)], None),
    "g_in_rw": (0o600, [(A_GROUP, GIN, 6)], None),
    "g_none_other_rw": (0o606, [(A_GROUP, GIN, 0)], None),  # group class: no fallback to other
    "g_out_r": (0o600, [(A_GROUP, GOUT, 4)], None),
    "mask_none": (0o660, [(A_USER, _UO, 6)], 0),
}
ACL_DIR_SPECS = {
    "u_other_rwx": (0o700, [(A_USER, _UO, 7)], None),
    "u_other_rx": (0o700, [(A_USER, _UO, 5)], None),
    "u_other_wx": (0o700, [(A_USER, _UO, 3)], None),
    "u_other_none": (0o777, [(A_USER, _UO, 0)], None),
    "g_in_rwx": (0o700, [(A_GROUP, GIN, 7)], None),
    "mask_rx": (0o770, [(A_USER, _UO, 7)], 5),
    "sticky_u_other_rwx": (0o1770, [(A_USER, _UO, 7)], None),
}
ACL_DEFAULT_SPECS = {
    "u_other_rw": (0o750, [(A_USER, _UO, 6)], None),
    "g_in_rwx_mask_r": (0o775, [(A_GROUP, GIN, 7)], 4),
    "minimal": (0o640, [], None),
    "all_rwx": (0o777, [], None),                           # the umask is not applied
}
ACL_OBJ_OPS = ["access", "open_r", "open_w", "chmod", "getxattr", "setxattr", "getacl",
               "setacl"]
ACL_DIR_OPS = ["lookup", "readdir", "create", "mkdir", "unlink", "rename"]
ACL_DEFAULT_OPS = ["create", "create_suid", "mkdir", "mkdir_sticky", "mkfifo", "symlink"]
SETACL_VALUE = acl_bytes(0o640, [(A_USER, _UO, 4)])


def acl_spec(acl):
    """(where, xattr name, value) of a cell's acl key, or None for "-"."""
    if acl == "-":
        return None
    where, _, name = acl.partition(":")
    specs = {"o": ACL_OBJ_SPECS, "d": ACL_DIR_SPECS, "dd": ACL_DEFAULT_SPECS}[where]
    mode, extra, mask = specs[name]
    return where, ACL_DEFAULT if where == "dd" else ACL_ACCESS, acl_bytes(mode, extra, mask)


class Cell:
    __slots__ = ("no", "op", "caller", "dmode", "omode", "otype", "vowner", "ncls", "acl")

    def __init__(self, no, op, caller, dmode, omode, otype, vowner, ncls, acl="-"):
        self.no, self.op, self.caller = no, op, caller
        self.dmode, self.omode, self.otype = dmode, omode, otype
        self.vowner, self.ncls, self.acl = vowner, ncls, acl

    def keys(self):
        return {"op": self.op, "caller": self.caller, "dir": "%04o" % self.dmode,
                "obj": "%04o" % self.omode, "type": self.otype,
                "owner": self.vowner, "name": self.ncls, "acl": self.acl}

    def ident(self):
        k = self.keys()
        return " ".join("%s=%s" % (x, k[x]) for x in
                        ("op", "caller", "dir", "obj", "type", "owner", "name", "acl"))


def build_grid(all_names=False):
    """The cells, in a fixed order. Unless @all_names, each (op, modes,
    owner, caller) runs in one name class, rotating over modes and callers
    (a Latin square: every op meets every name class with every caller and
    with every mode); with it, in all three."""
    cells = []
    no = 0
    for op, (_, needs, kind) in OPS.items():
        combos = []
        if kind == "acl":
            pass     # only in the ACL cells below
        elif kind in ("obj", "obj777"):
            dm = 0o0777 if kind == "obj777" else 0o0755
            fmodes = XATTR_FILE_MODES if "xa" in needs.split() else FILE_MODES
            combos += [(dm, m, "file", "owner") for m in fmodes]
            if op in OBJDIR_OPS:
                combos += [(dm, m, "dir", "owner") for m in OBJDIR_MODES]
        else:
            for dm in DIR_MODES:
                owners = ["owner", "group", "other"] if dm in STICKY_OWNER_MODES else ["owner"]
                combos += [(dm, 0o644, "file", w) for w in owners]
        for i, (dm, om, ot, w) in enumerate(combos):
            for j, caller in enumerate(CALLER_ORDER):
                classes = NAME_CLASSES if all_names else \
                    [NAME_CLASSES[(i + j) % len(NAME_CLASSES)]]
                for ncls in classes:
                    cells.append(Cell(no, op, caller, dm, om, ot, w, ncls))
                    no += 1
    # the ACL cells, after all others (their numbers do not move theirs)
    acl_combos = []
    for op in ACL_OBJ_OPS:
        acl_combos.append([(op, 0o0755, m, "o:" + n) for n, (m, _, _) in ACL_OBJ_SPECS.items()])
    for op in ACL_DIR_OPS:
        acl_combos.append([(op, m, 0o644, "d:" + n) for n, (m, _, _) in ACL_DIR_SPECS.items()])
    for op in ACL_DEFAULT_OPS:
        acl_combos.append([(op, 0o0777, 0o644, "dd:" + n) for n in ACL_DEFAULT_SPECS])
    for combos in acl_combos:
        for i, (op, dm, om, acl) in enumerate(combos):
            for j, caller in enumerate(CALLER_ORDER):
                classes = NAME_CLASSES if all_names else \
                    [NAME_CLASSES[(i + j) % len(NAME_CLASSES)]]
                for ncls in classes:
                    cells.append(Cell(no, op, caller, dm, om, "file", "owner", ncls, acl))
                    no += 1
    return cells


# ---------------------------------------------------------------- set-up (root)

def mkfile(path, mode, uid, gid, data=CONTENT):
    """A file as root (umask 0): chown first, as it clears set-id bits."""
    fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, mode & 0o777)
    try:
        if data:
            os.write(fd, data)
        os.fchown(fd, uid, gid)
        if mode & 0o7000:
            os.fchmod(fd, mode)
    finally:
        os.close(fd)


def mkdirp(path, mode, uid, gid):
    os.mkdir(path, mode & 0o1777)
    os.chown(path, uid, gid)
    if mode & 0o6000:
        os.chmod(path, mode)


def setup_cell(d, cell):
    """The cell's starting state in directory @d (does not exist yet)."""
    c = cell.ncls
    needs = OPS[cell.op][1].split()
    own = VOWNERS[cell.vowner]
    os.mkdir(d, 0o700)   # searchable by root whatever dmode is
    if "o" in needs:
        if cell.otype == "dir":
            mkdirp(d + b"/" + nm("o", c), cell.omode, own, G)
        else:
            mkfile(d + b"/" + nm("o", c), cell.omode, own, G)
        if "xa" in needs:
            os.setxattr(d + b"/" + nm("o", c), XA_USER, b"pt")
            os.setxattr(d + b"/" + nm("o", c), XA_TRUSTED, b"tp")
    acl = acl_spec(cell.acl)
    if acl and acl[0] == "o":
        os.setxattr(d + b"/" + nm("o", c), acl[1], acl[2])
    if "o2" in needs:
        mkfile(d + b"/" + nm("o2", c), 0o644, own, G, b"other\n")
    if "sd" in needs:
        mkdirp(d + b"/" + nm("sd", c), 0o755, own, G)
    if "sdf" in needs:
        p = d + b"/" + nm("sdf", c)
        mkdirp(p, 0o755, own, G)
        mkfile(p + b"/" + nm("f", c), 0o644, own, G)
    if "x" in needs:
        p = d + b"/" + nm("x", c)
        mkdirp(p, 0o777, OWNER_UID, G)
        mkfile(p + b"/" + nm("xf", c), 0o644, own, G, b"xf\n")
    os.chown(d, OWNER_UID, G)
    os.chmod(d, cell.dmode)
    if acl and acl[0] != "o":
        os.setxattr(d, acl[1], acl[2])


def xattrs_of(p):
    """Every xattr of @p (not following a symlink) as root: names and
    values, ACLs in the kernel's xattr form, sorted; or the errno."""
    try:
        names = sorted(os.listxattr(p, follow_symlinks=False))
    except OSError as e:
        return ("listxattr error", errno.errorcode.get(e.errno, e.errno))
    out = []
    for n in names:
        try:
            out.append((n, os.getxattr(p, n, follow_symlinks=False)))
        except OSError as e:
            out.append((n, "error " + errno.errorcode.get(e.errno, str(e.errno))))
    return tuple(out)


def snapshot(d, cell, dir_atime=True):
    """Everything under cell directory @d, as root: {relpath: attributes}.
    Not @dir_atime: a directory's atime is left out (a first snapshot's
    listing moved it: relatime, as the set atime is older than the mtime)."""
    out = {}
    want_times = cell.op == "utime_set"
    stack = [b""]
    while stack:
        rel = stack.pop()
        p = d + b"/" + rel if rel else d
        try:
            st = os.lstat(p)
        except OSError as e:
            out[rel] = ("lstat error", errno.errorcode.get(e.errno, e.errno))
            continue
        fmt = stat.S_IFMT(st.st_mode)
        a = {"type": fmt, "mode": st.st_mode & 0o7777, "uid": st.st_uid, "gid": st.st_gid}
        if fmt != stat.S_IFDIR:
            a["size"] = st.st_size
            a["nlink"] = st.st_nlink
        if fmt == stat.S_IFLNK:
            a["target"] = os.readlink(p)
        xa = xattrs_of(p)
        if xa:
            a["xattrs"] = xa
        if want_times and rel == nm("o", cell.ncls):
            t = (st.st_atime_ns, st.st_mtime_ns)
            want = UTIME_NS
            if fmt == stat.S_IFDIR and not dir_atime:
                t, want = t[1:], want[1:]
            if t == want:
                a["times"] = "as set"
            elif any(abs(x - y) < 10**9 for x, y in zip(t, want)):
                a["times"] = ("near the set times", t)   # rounded or half set
            else:
                a["times"] = "not set"
        if fmt == stat.S_IFDIR:
            try:
                names = sorted(os.listdir(p))
            except OSError as e:
                a["listdir"] = ("error", errno.errorcode.get(e.errno, e.errno))
                names = []
            a["names"] = names
            for n in names:
                stack.append(rel + b"/" + n if rel else n)
        out[rel] = a
    return out


# ---------------------------------------------------------------- running

def run_as(caller, jobs):
    """Fork a child that becomes @caller and runs @jobs: list of
    (index, [(side, cell dir path)], op, name class). Returns {index: {side: steps}}."""
    uid, gid, groups = CALLERS[caller]
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            os.close(rfd)
            os.setgroups(groups)
            os.setgid(gid)
            os.setuid(uid)
            os.umask(0o022)
            os.chdir("/")
            out = {}
            for idx, paths, op, ncls in jobs:
                fn = OPS[op][0]
                r = {}
                for side, d in paths:
                    try:
                        r[side] = fn(d, ncls)
                    except Exception as e:  # a bug of the tester: report it as a result
                        r[side] = [("exception", repr(e))]
                out[idx] = r
            data = pickle.dumps(out)
            with os.fdopen(wfd, "wb") as f:
                f.write(data)
        except BaseException:
            traceback.print_exc()
            code = 3
        os._exit(code)
    os.close(wfd)
    with os.fdopen(rfd, "rb") as f:
        data = f.read()
    _, status = os.waitpid(pid, 0)
    if status != 0 or not data:
        raise RuntimeError("caller child %s failed (status %d)" % (caller, status))
    return pickle.loads(data)


def fmt_val(k, v):
    if k in ("mode",) and isinstance(v, int):
        return "%04o" % v
    if k == "xattrs" and isinstance(v, tuple):
        return "[" + ", ".join("%s=%s" % (n, acl_text(x) if n.startswith("system.posix_acl")
                                          and isinstance(x, bytes) else x)
                               for n, x in v) + "]"
    if k == "type" and isinstance(v, int):
        return {stat.S_IFREG: "file", stat.S_IFDIR: "dir", stat.S_IFLNK: "symlink",
                stat.S_IFIFO: "fifo"}.get(v, "%o" % v)
    return repr(v)


def show_name(b):
    if isinstance(b, str):   # an xattr name
        return b
    if len(b) > 24:
        return "%s...[%dB]" % (b[:8].decode(errors="backslashreplace"), len(b))
    return b.decode(errors="backslashreplace") or "."


def show_path(rel):
    return "'" + "/".join(show_name(x) for x in rel.split(b"/")) + "'" if rel else "'.'"


def show_steps(steps):
    parts = []
    for s in steps:
        name, rest = s[0], s[1:]
        if len(rest) == 2 and rest[0] == "err":
            parts.append("%s=%s" % (name, errno.errorcode.get(rest[1], rest[1])))
        elif len(rest) == 2 and rest[0] == "ok":
            v = rest[1]
            if isinstance(v, tuple) and len(v) == 5:
                v = "(%s %04o %d:%d size=%s)" % (fmt_val("type", v[0]), v[1], v[2], v[3], v[4])
            elif isinstance(v, list):
                v = "[" + ", ".join(show_name(x) for x in v) + "]"
            parts.append("%s=ok%s" % (name, "" if v is None else ":%s" % (v,)))
        else:
            v = rest[-1]
            parts.append("%s %s=%s" % (name, rest[0], errno.errorcode.get(v, v)
                                       if isinstance(v, int) else v))
    return ", ".join(parts)


def diff_snap(a, b):
    lines = []
    for rel in sorted(set(a) | set(b)):
        if rel not in a:
            lines.append("%s: only in B" % show_path(rel))
            continue
        if rel not in b:
            lines.append("%s: only in A" % show_path(rel))
            continue
        x, y = a[rel], b[rel]
        if x == y:
            continue
        if not isinstance(x, dict) or not isinstance(y, dict):
            lines.append("%s: A %r, B %r" % (show_path(rel), x, y))
            continue
        for k in sorted(set(x) | set(y)):
            if x.get(k) != y.get(k):
                if k == "names":
                    sa, sb = set(x.get(k) or ()), set(y.get(k) or ())
                    lines.append("%s: names only in A %s, only in B %s" % (
                        show_path(rel), [show_name(n) for n in sorted(sa - sb)],
                        [show_name(n) for n in sorted(sb - sa)]))
                else:
                    lines.append("%s: %s A %s, B %s" % (show_path(rel), k,
                                 fmt_val(k, x.get(k)), fmt_val(k, y.get(k))))
    return lines


def describe_setup(cell):
    needs = OPS[cell.op][1].split()
    own = VOWNERS[cell.vowner]
    s = ["dir %04o %d:%d" % (cell.dmode, OWNER_UID, G)]
    for n in needs:
        if n == "o":
            s.append("o %s %04o %d:%d" % (cell.otype, cell.omode, own, G))
        elif n == "o2":
            s.append("o2 file 0644 %d:%d" % (own, G))
        elif n == "sd":
            s.append("sd dir 0755 %d:%d" % (own, G))
        elif n == "sdf":
            s.append("sdf dir 0755 %d:%d holding a file" % (own, G))
        elif n == "x":
            s.append("x dir 0777 %d:%d holding file xf" % (OWNER_UID, G))
        elif n == "xa":
            s.append("o has %s=pt and %s=tp" % (XA_USER, XA_TRUSTED))
    acl = acl_spec(cell.acl)
    if acl:
        s.append("%s of %s: %s" % (acl[1], "o" if acl[0] == "o" else "dir",
                                   acl_text(acl[2])))
    uid, gid, groups = CALLERS[cell.caller]
    s.append("caller uid %d gid %d groups %s" % (uid, gid, ",".join(map(str, groups))))
    return "; ".join(s)


def acl_text(b):
    """An ACL's xattr form as getfacl's short text (u::rw-,u:61003:r--,...)."""
    tags = {A_USER_OBJ: "u", A_USER: "u", A_GROUP_OBJ: "g", A_GROUP: "g",
            A_MASK: "m", A_OTHER: "o"}
    out = []
    for off in range(4, len(b), 8):
        tag, perm, id_ = struct.unpack_from("<HHI", b, off)
        out.append("%s:%s:%s" % (tags.get(tag, "?%d" % tag),
                                 "" if id_ == 0xffffffff else id_,
                                 "".join(c if perm & bit else "-" for c, bit in
                                         (("r", 4), ("w", 2), ("x", 1)))))
    return ",".join(out)


def check_reachable(path):
    p = os.path.abspath(path)
    while True:
        st = os.stat(p)
        if not st.st_mode & stat.S_IXOTH:
            return "%s (mode %04o) is not searchable by other users: chmod o+x it" % (
                p, st.st_mode & 0o7777)
        if p == "/":
            return None
        p = os.path.dirname(p)


def rmtree(top):
    """Remove @top and everything under it, as root, whatever the modes."""
    os.chmod(top, 0o700)
    for name in os.listdir(top):
        p = top + b"/" + name
        st = os.lstat(p)
        if stat.S_ISDIR(st.st_mode):
            rmtree(p)
        else:
            os.unlink(p)
    os.rmdir(top)


def empty_or_clean(path, clean):
    os.makedirs(path, exist_ok=True)
    names = os.listdir(path)
    if not names:
        return True
    if not clean:
        print("permtest: %s is not empty (use --clean to empty it first)" % path,
              file=sys.stderr)
        return False
    for name in names:
        p = os.path.join(path, name)
        if os.path.isdir(p) and not os.path.islink(p):
            for root, dirs, files in os.walk(p, topdown=False):
                os.chmod(root, 0o700)
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


def parse_filters(specs, ap):
    flt = {}
    keys = set(Cell(0, "", "", 0, 0, "", "", "").keys())
    for spec in specs or ():
        for term in spec.split():
            k, sep, v = term.partition("=")
            if not sep or k not in keys:
                ap.error("bad --filter term %r (KEY=V1,V2 with KEY one of %s)"
                         % (term, ", ".join(sorted(keys))))
            flt.setdefault(k, []).extend(v.split(","))
    return flt


def selected(cell, flt):
    k = cell.keys()
    return all(any(fnmatch.fnmatchcase(k[key], pat) for pat in pats)
               for key, pats in flt.items())


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="Run a grid of permission cells (op x caller x modes x name class) "
                    "on A (under test) and B (reference) and report every divergence.")
    ap.add_argument("--a", required=True, help="tree under test (a dir in an allow_other mount)")
    ap.add_argument("--b", required=True, help="reference tree on a plain filesystem")
    ap.add_argument("--filter", action="append", metavar="KEY=V1,V2",
                    help="select cells (repeatable, space-separated terms, fnmatch values); "
                         "keys: op caller dir obj type owner name acl")
    ap.add_argument("--sample", type=int, default=0, metavar="K",
                    help="run only K cells of the selection, chosen by --seed")
    ap.add_argument("--seed", type=int, default=1, help="seed for --sample (1)")
    ap.add_argument("--all-names", action="store_true",
                    help="every cell in all three name classes (3x the cells)")
    ap.add_argument("--no-acl", action="store_true",
                    help="leave out the ACL cells (for a tree without POSIX ACLs, "
                         "such as an xtsfs mount without -o acl)")
    ap.add_argument("--batch", type=int, default=1500, help="cells per batch (1500)")
    ap.add_argument("--remount-cmd", metavar="CMD",
                    help="shell command that unmounts and remounts A; run after each "
                         "batch, then A is compared again as read back from the volume")
    ap.add_argument("--max-report", type=int, default=100,
                    help="print at most this many divergences in full (100)")
    ap.add_argument("--clean", action="store_true", help="empty A and B first")
    ap.add_argument("--keep", action="store_true",
                    help="keep the cells' directories (default: removed after each batch)")
    ap.add_argument("--list", action="store_true", help="list the selected cells and exit")
    ap.add_argument("--verbose", action="store_true", help="print every cell and its result")
    a = ap.parse_args(argv)
    flt = parse_filters(a.filter, ap)
    cells = [c for c in build_grid(a.all_names) if selected(c, flt)
             and not (a.no_acl and c.acl != "-")]
    if a.sample and a.sample < len(cells):
        cells = sorted(random.Random(a.seed).sample(cells, a.sample), key=lambda c: c.no)
    if a.list:
        for c in cells:
            print("#%d %s" % (c.no, c.ident()))
        print("permtest: %d cells selected" % len(cells))
        return 0
    if os.geteuid() != 0:
        print("permtest: must run as root (it forks callers with other uids)", file=sys.stderr)
        return 2
    if os.path.realpath(a.a) == os.path.realpath(a.b):
        ap.error("A and B must be different directories")
    if not (empty_or_clean(a.a, a.clean) and empty_or_clean(a.b, a.clean)):
        return 2
    for p in (a.a, a.b):
        os.chmod(p, 0o755)
        why = check_reachable(p)
        if why:
            print("permtest: " + why, file=sys.stderr)
            return 2
    if not cells:
        print("permtest: no cell selected", file=sys.stderr)
        return 2
    os.umask(0)
    roots = {"A": os.fsencode(os.path.abspath(a.a)), "B": os.fsencode(os.path.abspath(a.b))}
    t0 = time.monotonic()
    ndiv = 0
    by_op = {}
    remounts = 0

    def report(c, r, dpath, lines):
        nonlocal ndiv
        ndiv += 1
        by_op[c.op] = by_op.get(c.op, 0) + 1
        if ndiv > a.max_report:
            return
        p = lambda s: print(s, file=sys.stderr)
        p("permtest: DIVERGENCE #%d %s" % (c.no, c.ident()))
        p("  setup:  " + describe_setup(c))
        if r["A"] == r["B"]:
            p("  result: both %s" % show_steps(r["A"]))
        for line in lines:
            p("  " + line)
        if a.keep or a.remount_cmd:
            p("  cells:  A %s, B %s" % (os.fsdecode(dpath["A"]), os.fsdecode(dpath["B"])))
        p("  rerun:  --filter '%s'" % c.ident())

    for start in range(0, len(cells), a.batch):
        batch = cells[start:start + a.batch]
        bdir = b"b%05d" % (start // a.batch)
        for side in ("B", "A"):
            os.mkdir(roots[side] + b"/" + bdir, 0o755)
        paths = {}
        for c in batch:
            paths[c.no] = []
            for side in ("B", "A"):
                d = roots[side] + b"/" + bdir + b"/c%05d" % c.no
                setup_cell(d, c)
                paths[c.no].append((side, d))
        results = {}
        for caller in CALLER_ORDER:
            jobs = [(c.no, paths[c.no], c.op, c.ncls) for c in batch if c.caller == caller]
            if jobs:
                results.update(run_as(caller, jobs))
        bad = set()
        for c in batch:
            r = results[c.no]
            dpath = dict(paths[c.no])
            sa, sb = snapshot(dpath["A"], c), snapshot(dpath["B"], c)
            lines = []
            if r["A"] != r["B"]:
                lines.append("result: A %s" % show_steps(r["A"]))
                lines.append("        B %s" % show_steps(r["B"]))
            lines += diff_snap(sa, sb)
            if a.verbose:
                print("#%d %s -> %s%s" % (c.no, c.ident(), show_steps(r["B"]),
                                          "  DIVERGES" if lines else ""))
            if lines:
                bad.add(c.no)
                report(c, r, dpath, lines)
        if a.remount_cmd:
            rc = subprocess.run(a.remount_cmd, shell=True).returncode
            if rc != 0:
                print("permtest: remount command failed (exit %d): %s" % (rc, a.remount_cmd),
                      file=sys.stderr)
                return 2
            remounts += 1
            # what the volume kept, without the kernel's caches
            for c in batch:
                dpath = dict(paths[c.no])
                lines = diff_snap(snapshot(dpath["A"], c, dir_atime=False),
                                  snapshot(dpath["B"], c, dir_atime=False))
                if c.no not in bad and lines:
                    report(c, results[c.no], dpath,
                           ["after remount: " + x for x in lines])
                elif c.no in bad and ndiv <= a.max_report:
                    # the same cell as read back from the volume (no new count)
                    print("permtest: after remount #%d: %s" % (
                        c.no, "; ".join(lines) if lines else "A and B agree"),
                        file=sys.stderr)
        elif not a.keep:
            # the daemon holds a descriptor per inode the kernel knows
            rmtree(roots["A"] + b"/" + bdir)
    dt = time.monotonic() - t0
    if ndiv:
        if ndiv > a.max_report:
            print("permtest: %d more divergences not shown" % (ndiv - a.max_report),
                  file=sys.stderr)
        print("permtest: divergences by op: " + ", ".join(
            "%s=%d" % kv for kv in sorted(by_op.items())))
    print("permtest: %d cells, %d divergence%s (%.1f s%s)" % (
        len(cells), ndiv, "" if ndiv == 1 else "s", dt,
        ", %d remounts" % remounts if remounts else ""))
    return 1 if ndiv else 0


if __name__ == "__main__":
    sys.exit(main())
