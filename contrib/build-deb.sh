#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Build the Debian package from this source tree and check it with lintian.
#
# dpkg-buildpackage wants the packaging in debian/ at the top of the
# source tree; ours lives in contrib/debian so that the tree stays an
# upstream tree. This script copies the tree (without build directories
# and .git) to a temporary directory, copies contrib/debian to debian/
# there, runs dpkg-buildpackage -us -uc -b, runs lintian on the result,
# and copies the .deb, .buildinfo and .changes to OUTDIR.
#
# Needs: dpkg-dev, debhelper, the Build-Depends of contrib/debian/control
# (contrib/debian-packages.txt lists them all), lintian for the check.
# DEB_BUILD_OPTIONS is passed through (e.g. DEB_BUILD_OPTIONS=nocheck).
set -eu

usage() {
	cat <<'EOF'
Usage: contrib/build-deb.sh [--no-lintian] [--keep] [OUTDIR]
Build xtsfs_VERSION_ARCH.deb from this source tree into OUTDIR
(default: ./deb), then check it with lintian (errors fail the build,
warnings are shown).

  --no-lintian  do not run lintian
  --keep        keep the temporary build directory (its path is printed)
  -h, --help    show this help and exit
EOF
}

lintian=yes
keep=no
out=
while [ $# -gt 0 ]; do
	case $1 in
	--no-lintian) lintian=no ;;
	--keep) keep=yes ;;
	-h | --help) usage; exit 0 ;;
	-*) echo "build-deb.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
	*)
		[ -z "$out" ] || { echo "build-deb.sh: one OUTDIR only" >&2; exit 2; }
		out=$1
		;;
	esac
	shift
done
out=${out:-deb}

src=$(cd "$(dirname "$0")/.." && pwd)
missing=
for tool in dpkg-buildpackage:dpkg-dev dh:debhelper; do
	command -v "${tool%%:*}" >/dev/null 2>&1 || missing="$missing ${tool#*:}"
done
if [ "$lintian" = yes ] && ! command -v lintian >/dev/null 2>&1; then
	missing="$missing lintian"
fi
if [ -n "$missing" ]; then
	echo "build-deb.sh: missing Debian packages:$missing" \
	     "(apt-get install$missing)" >&2
	exit 1
fi

# The package version must be the meson project version.
version=$(sed -n '1s/^xtsfs (\([^)]*\)).*/\1/p' "$src/contrib/debian/changelog")
meson_version=$(sed -n "s/^ *version : '\([^']*\)',*$/\1/p" "$src/meson.build" |
		head -n 1)
if [ "$version" != "$meson_version" ]; then
	echo "build-deb.sh: contrib/debian/changelog says $version but" \
	     "meson.build says $meson_version: add a changelog entry" >&2
	exit 1
fi

mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/xtsfs-deb.XXXXXX")
cleanup() {
	if [ "$keep" = yes ]; then
		echo "build-deb.sh: kept $work"
	else
		rm -rf "$work"
	fi
}
trap cleanup EXIT
tree=$work/xtsfs-$version
mkdir "$tree"

# Copy the source: in a git checkout, the tracked and untracked files that
# .gitignore does not exclude (so no build/ directories); else everything
# but .git and top-level build*/ directories.
if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	git -C "$src" ls-files -z --cached --others --exclude-standard |
		(cd "$src" && xargs -0 -r sh -c \
			'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' x) |
		tar -C "$src" --null -T - -cf - | tar -C "$tree" -xf -
else
	for f in "$src"/* "$src"/.[!.]*; do
		[ -e "$f" ] || continue
		case ${f##*/} in
		.git | build*) continue ;;
		esac
		cp -a "$f" "$tree/"
	done
fi
rm -rf "$tree/debian"
cp -a "$src/contrib/debian" "$tree/debian"

echo "build-deb.sh: building xtsfs $version in $tree"
if ! (cd "$tree" && dpkg-buildpackage -us -uc -b) >"$work/build.log" 2>&1; then
	tail -n 40 "$work/build.log" >&2
	echo "build-deb.sh: dpkg-buildpackage failed; the whole log is" \
	     "$work/build.log" >&2
	keep=yes
	exit 1
fi
changes=$(ls "$work"/xtsfs_"$version"_*.changes)

if [ "$lintian" = yes ]; then
	echo "build-deb.sh: lintian $(basename "$changes")"
	if ! lintian --fail-on error --display-info "$changes"; then
		echo "build-deb.sh: lintian found errors" >&2
		exit 1
	fi
fi

for f in "$work"/xtsfs*_"$version"_*.deb \
	 "$work"/xtsfs_"$version"_*.buildinfo "$changes"; do
	[ -e "$f" ] && cp "$f" "$out/"
done
ls "$out"/xtsfs_"$version"_*.deb
