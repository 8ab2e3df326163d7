#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""check_no_fuse.py - the core builds and is tested without libfuse3.

The build has a FUSE-free core (src/crypto, libxtsfs-core: the volume
library, content, names, ...) and a FUSE front end (libxtsfs-fuse, the
daemon). This checks, for tests/meson.build's no_fuse_in_core test:

1. compile_commands.json: no compile command has a FUSE include directory
   (-I.../fuse3, as pkg-config gives it) unless its output is in one of
   the --allow targets (substrings of the object path, e.g.
   "libxtsfs-fuse.a.p/"); and at least one allowed command has it, so
   that the pattern is known to match what meson writes.
2. every EXE after "--": no libfuse3 among its DT_NEEDED (readelf -d).
   The DT_NEEDED check alone would miss a FUSE-using core, since meson
   links with --as-needed; hence 1 and 3.
3. --lib LIB (the core static library): no undefined fuse_* symbol in
   any of its objects (nm -u), so nothing in it calls libfuse3.
4. --fuse-exe EXE (the daemon): libfuse3 *is* among its DT_NEEDED, so
   that check 2 is known to see it.

Exit status: 0 all held, 1 a violation (each printed), 77 (skip) when
compile_commands.json is missing (a backend other than ninja).
"""
import json
import os
import re
import subprocess
import sys

FUSE_INC = re.compile(r'(?:^|\s)(?:-I|-isystem\s*)\S*fuse3?(?:\s|/|$)')


def needed(path):
    out = subprocess.run(['readelf', '-d', path], check=True,
                         capture_output=True, text=True).stdout
    return re.findall(r'\(NEEDED\)\s+Shared library: \[([^\]]+)\]', out)


def main(argv):
    ccdb, allow, libs, fuse_exes, exes = None, [], [], [], []
    i = 1
    while i < len(argv):
        a = argv[i]
        if a == '--':
            exes = argv[i + 1:]
            break
        if a in ('--allow', '--lib', '--fuse-exe'):
            {'--allow': allow, '--lib': libs,
             '--fuse-exe': fuse_exes}[a].append(argv[i + 1])
            i += 2
            continue
        ccdb = a
        i += 1
    if not ccdb or not exes:
        print('usage: check_no_fuse.py compile_commands.json [--allow S]... '
              '[--lib LIB]... [--fuse-exe EXE]... -- EXE...')
        return 2
    if not os.path.exists(ccdb):
        print(f'SKIP: {ccdb}: no compile database')
        return 77
    bad = 0
    allowed_seen = 0
    with open(ccdb) as f:
        entries = json.load(f)
    for e in entries:
        cmd = e.get('command') or ' '.join(e.get('arguments', []))
        out = e.get('output', '')
        if not FUSE_INC.search(cmd):
            continue
        if any(s in out for s in allow):
            allowed_seen += 1
            continue
        print(f'FAIL: {e["file"]} ({out}) is compiled with a FUSE '
              'include directory')
        bad += 1
    if allowed_seen == 0:
        print('FAIL: no compile command of the FUSE front end has a FUSE '
              'include directory: is the pattern still right?')
        bad += 1
    for exe in exes:
        libs_needed = needed(exe)
        if any(n.startswith('libfuse') for n in libs_needed):
            print(f'FAIL: {exe} needs {libs_needed}')
            bad += 1
    for exe in fuse_exes:
        if not any(n.startswith('libfuse3') for n in needed(exe)):
            print(f'FAIL: {exe}: no libfuse3 seen in DT_NEEDED of the '
                  'daemon: is the readelf check still right?')
            bad += 1
    for lib in libs:
        out = subprocess.run(['nm', '-u', '--format=posix', lib],
                             check=True, capture_output=True,
                             text=True).stdout
        syms = sorted({ln.split()[0] for ln in out.splitlines()
                       if ln.startswith('fuse_')})
        if syms:
            print(f'FAIL: {lib} calls libfuse3: {" ".join(syms)}')
            bad += 1
    print(f'{len(entries)} compile commands ({allowed_seen} with FUSE, all '
          f'in {allow}), {len(exes)} executables, {len(libs)} '
          f'librar{"y" if len(libs) == 1 else "ies"}: '
          f'{"FAILED" if bad else "no FUSE outside the front end"}')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
