#!/bin/sh
# Build gofsck and its companion tools into BUILDDIR (default: build),
# for scripts/install.sh (or make install) to install. Building and
# installing are separate steps so that a package builds as a user and
# installs from a DESTDIR tree, and `sudo make install` runs no compiler.
#
#   scripts/build.sh                              # build/gofsck, build/gofsck-fsinfo, ...
#   VERSION=0.1.0 DATE=5-Dec-2026 scripts/build.sh  # a build without git: name the version
#
# VERSION and DATE, when set, are what gofsck -V prints (-ldflags -X
# main.stampedVersion/main.stampedDate); otherwise a build from a git
# clone names its commit and date, and any other one says
# "0.1.0-dev (unknown date)". GO names the go command (default: go);
# GOFLAGS and CGO_ENABLED are the go command's own.
set -eu

BUILDDIR=${BUILDDIR:-build}
GO=${GO:-go}
VERSION=${VERSION:-}
DATE=${DATE:-}

cd "$(dirname "$0")/.."
mkdir -p "$BUILDDIR"
ldflags=
if [ -n "$VERSION" ]; then
	ldflags="-X main.stampedVersion=$VERSION"
	if [ -n "$DATE" ]; then
		ldflags="$ldflags -X main.stampedDate=$DATE"
	fi
fi
for cmd in gofsck freefrag fsinfo iowatch; do
	out=$cmd
	# The companion tools are installed under gofsck-* names: plain
	# fsinfo, freefrag and iowatch would be too generic on PATH.
	[ "$cmd" = gofsck ] || out=gofsck-$cmd
	# -buildvcs=auto: -V names the commit when built from a git clone,
	# whatever GOFLAGS says.
	"$GO" build -trimpath -buildvcs=auto -ldflags "$ldflags" -o "$BUILDDIR/$out" "./cmd/$cmd"
done
echo "built gofsck, gofsck-freefrag, gofsck-fsinfo and gofsck-iowatch in $BUILDDIR"
