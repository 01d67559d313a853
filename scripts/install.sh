#!/bin/sh
# Build gofsck and its companion tools and install them, with the man
# pages, the bash completion and the licence.
#
#   scripts/install.sh                          # into /usr/local
#   PREFIX=/usr DESTDIR=/tmp/pkg scripts/install.sh   # staged, for a package
#   FSCK_LINKS=1 scripts/install.sh             # also fsck.ext2/3/4 -> gofsck
#
# The fsck.ext2, fsck.ext3 and fsck.ext4 links are opt-in (FSCK_LINKS=1):
# fsck(8) from util-linux finds fsck.TYPE through PATH, and root's PATH
# starts with /usr/local/sbin, so installing them makes every fsck of an
# ext filesystem, boot-time checks included, run gofsck; in a distribution
# they would collide with e2fsprogs' own /usr/sbin/fsck.ext4.
#
# PREFIX (default /usr/local) is where the files will live; DESTDIR, when
# set, is prepended to every path written (the tree a package is built
# from). GO names the go command (default: go). cmd/mkworkload, the
# root-only benchmark builder, is not installed.
set -eu

PREFIX=${PREFIX:-/usr/local}
DESTDIR=${DESTDIR:-}
GO=${GO:-go}
FSCK_LINKS=${FSCK_LINKS:-0}
case $FSCK_LINKS in
0|1) ;;
*) echo "install.sh: FSCK_LINKS must be 0 or 1, not '$FSCK_LINKS'" >&2; exit 2 ;;
esac

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
install -m 0644 docs/man/gofsck.8 docs/man/freefrag.8 docs/man/fsinfo.8 "$man8dir/"
install -m 0644 docs/man/iowatch.1 "$man1dir/"
install -m 0644 scripts/gofsck.bash-completion "$compdir/gofsck"
install -m 0644 LICENSE README.md "$docdir/"
if [ "$FSCK_LINKS" = 1 ]; then
	for ext in ext2 ext3 ext4; do
		ln -sf gofsck "$sbindir/fsck.$ext"
		# bash-completion loads a command's completion from the file of its name.
		ln -sf gofsck "$compdir/fsck.$ext"
	done
	echo "installed gofsck in $sbindir, with fsck.ext2, fsck.ext3 and fsck.ext4:"
	echo "fsck(8) now runs it for every ext2/3/4 filesystem found through PATH"
else
	echo "installed gofsck in $sbindir (no fsck.ext2/3/4 links; FSCK_LINKS=1 adds them)"
fi
