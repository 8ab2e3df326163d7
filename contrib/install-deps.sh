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
# Installing a server package must not start it (openssh-server,
# glusterfs-server): the tests start their own on loopback. A
# policy-rc.d the machine already has is left alone.
policy=/usr/sbin/policy-rc.d
if [ ! -e "$policy" ]; then
	printf '#!/bin/sh\nexit 101\n' >"$policy"
	chmod 755 "$policy"
	trap 'rm -f "$policy"' EXIT
fi
apt-get update -q
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $pkgs
