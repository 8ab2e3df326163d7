#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Install the Debian packages xtsfs needs (contrib/debian-packages.txt).
# Run as root on Debian 12 or later.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
pkgs=$(grep -v '^#' "$here/debian-packages.txt" | tr '\n' ' ')
if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps.sh: run as root (apt-get install)" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $pkgs
