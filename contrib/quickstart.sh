#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Quick start on a fresh Debian 12 machine, as root: install what xtsfs
# needs, build it, and show it working (the cipher self-test and speed).
set -eu
cd "$(dirname "$0")/.."
contrib/install-deps.sh
[ -d build ] || meson setup build
ninja -C build
echo
echo "== xtsfs-bench --self-test: every cipher core against published vectors"
build/tools/xtsfs-bench --self-test
echo
echo "== xtsfs-bench: every core next to OpenSSL, same run"
build/tools/xtsfs-bench --runs 5
