#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Run a command on a new pseudo-terminal and answer its prompts.

usage: pty_drive.py [--answer PROMPT=TEXT]... -- COMMAND [ARG]...

Each --answer waits (up to 20 s) until PROMPT has appeared in the
command's output, then types TEXT and Enter, so nothing is typed before
the program has turned echo off. Prints everything the command wrote to
the terminal and exits with its exit status (128+N if killed by signal N).
"""
import os
import pty
import select
import sys
import time


def main():
    args = sys.argv[1:]
    answers = []
    while args and args[0] == '--answer':
        prompt, _, text = args[1].partition('=')
        answers.append((prompt.encode(), text.encode()))
        args = args[2:]
    if not args or args[0] != '--':
        sys.exit('usage: pty_drive.py [--answer PROMPT=TEXT]... -- CMD...')
    cmd = args[1:]
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp(cmd[0], cmd)
    out = b''
    seen = 0          # output already matched against earlier prompts
    deadline = time.time() + 20
    while True:
        if answers and answers[0][0] in out[seen:]:
            seen = out.index(answers[0][0], seen) + len(answers[0][0])
            time.sleep(0.05)  # let the program finish tcsetattr()
            os.write(fd, answers.pop(0)[1] + b'\n')
        r, _, _ = select.select([fd], [], [], 0.2)
        if r:
            try:
                data = os.read(fd, 4096)
            except OSError:
                data = b''
            if not data:
                break
            out += data
        if time.time() > deadline:
            os.kill(pid, 9)
            break
    _, status = os.waitpid(pid, 0)
    sys.stdout.write(out.decode(errors='replace'))
    if os.WIFSIGNALED(status):
        sys.exit(128 + os.WTERMSIG(status))
    sys.exit(os.WEXITSTATUS(status))


main()
