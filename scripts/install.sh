#!/bin/sh
# Build gofsck and its companion tools and install them, with the
# fsck.ext2, fsck.ext3 and fsck.ext4 links, the man pages, the bash
# completion and the licence.
#
#   scripts/install.sh                          # into /usr/local
#   PREFIX=/usr DESTDIR=/tmp/pkg scripts/install.sh   # staged, for a package
#
# PREFIX (default /usr/local) is where the files will live; DESTDIR, when
# set, is prepended to every path written (the tree a package is built
# from). GO names the go command (default: go). cmd/mkworkload, the
# root-only benchmark builder, is not installed.
set -eu

PREFIX=${PREFIX:-/usr/local}
DESTDIR=${DESTDIR:-}
GO=${GO:-go}

cd "$(dirname "$0")/.."
root=$DESTDIR$PREFIX
sbindir=$root/sbin
bindir=$root/bin
man1dir=$root/share/man/man1
man8dir=$root/share/man/man8
compdir=$root/share/bash-completion/completions
docdir=$root/share/doc/gofsck

build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT
for cmd in gofsck freefrag fsinfo iowatch; do
	# -buildvcs=auto: -V names the commit when built from a git clone,
	# whatever GOFLAGS says.
	"$GO" build -trimpath -buildvcs=auto -o "$build/$cmd" "./cmd/$cmd"
done

install -d "$sbindir" "$bindir" "$man1dir" "$man8dir" "$compdir" "$docdir"
install -m 0755 "$build/gofsck" "$build/freefrag" "$build/fsinfo" "$sbindir/"
install -m 0755 "$build/iowatch" "$bindir/"
for ext in ext2 ext3 ext4; do
	ln -sf gofsck "$sbindir/fsck.$ext"
done
install -m 0644 docs/man/gofsck.8 docs/man/freefrag.8 docs/man/fsinfo.8 "$man8dir/"
install -m 0644 docs/man/iowatch.1 "$man1dir/"
install -m 0644 scripts/gofsck.bash-completion "$compdir/gofsck"
for ext in ext2 ext3 ext4; do
	# bash-completion loads a command's completion from the file of its name.
	ln -sf gofsck "$compdir/fsck.$ext"
done
install -m 0644 LICENSE README.md "$docdir/"
echo "installed gofsck in $sbindir (with fsck.ext2, fsck.ext3, fsck.ext4)"
