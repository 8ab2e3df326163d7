#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# posix_lock.py OP FILE ...: one fcntl record-lock step, for 37-coherence.
#   hold FILE TYPE START LEN FLAGFILE  lock (r/w), touch FLAGFILE, then
#                                      wait until FLAGFILE is removed
#   try FILE TYPE START LEN            F_SETLK: prints ok or EAGAIN/EACCES
#   wait FILE TYPE START LEN           F_SETLKW: prints ok (or the error)
#   getlk FILE TYPE START LEN          F_GETLK: "TYPE START LEN" of the
#                                      conflicting lock, or "unlocked"
import errno, fcntl, os, struct, sys, time

op, path, kind, start, length = sys.argv[1:6]
typ = fcntl.F_WRLCK if kind == "w" else fcntl.F_RDLCK
start, length = int(start), int(length)
fd = os.open(path, os.O_RDWR)


def lk(cmd):
    # struct flock on x86_64 Linux: short type, short whence, off_t start,
    # off_t len, pid_t pid
    return fcntl.fcntl(fd, cmd, struct.pack("hhqqi", typ, os.SEEK_SET, start, length, 0))


try:
    if op == "getlk":
        t, _, s, l, _ = struct.unpack("hhqqi", lk(fcntl.F_GETLK))
        print("unlocked" if t == fcntl.F_UNLCK else
              "%s %d %d" % ("w" if t == fcntl.F_WRLCK else "r", s, l))
        sys.exit(0)
    lk(fcntl.F_SETLKW if op == "wait" else fcntl.F_SETLK)
except OSError as e:
    print(errno.errorcode[e.errno])
    sys.exit(1)
print("ok", flush=True)
if op == "hold":
    flag = sys.argv[6]
    open(flag, "w").close()
    while os.path.exists(flag):
        time.sleep(0.05)
