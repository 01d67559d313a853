#!/bin/sh
# Install gofsck and its companion tools, built beforehand by
# scripts/build.sh (or make), with the man pages, the bash completion,
# the documentation and the licence. It builds nothing: run it as root
# after building as a user, or into a DESTDIR for a package.
#
#   scripts/build.sh && sudo scripts/install.sh        # into /usr/local
#   make && sudo make install                           # the same
#   PREFIX=/usr DESTDIR=/tmp/pkg scripts/install.sh    # staged, for a package
#   FSCK_LINKS=1 scripts/install.sh                    # also fsck.ext2/3/4 -> gofsck
#
# The fsck.ext2, fsck.ext3 and fsck.ext4 links (and their man page
# aliases) are opt-in (FSCK_LINKS=1): fsck(8) from util-linux finds
# fsck.TYPE through PATH, and root's PATH starts with /usr/local/sbin, so
# installing them makes every fsck of an ext filesystem, boot-time checks
# included, run gofsck; in a distribution they would collide with
# e2fsprogs' own /usr/sbin/fsck.ext4.
#
# PREFIX (default /usr/local) is where the files will live; DESTDIR, when
# set, is prepended to every path written (the tree a package is built
# from); BUILDDIR (default build) holds the binaries. cmd/mkworkload, the
# root-only benchmark builder, is not installed.
set -eu

PREFIX=${PREFIX:-/usr/local}
DESTDIR=${DESTDIR:-}
BUILDDIR=${BUILDDIR:-build}
FSCK_LINKS=${FSCK_LINKS:-0}
case $FSCK_LINKS in
0|1) ;;
*) echo "install.sh: FSCK_LINKS must be 0 or 1, not '$FSCK_LINKS'" >&2; exit 2 ;;
esac

cd "$(dirname "$0")/.."
for bin in gofsck gofsck-freefrag gofsck-fsinfo gofsck-iowatch; do
	if [ ! -x "$BUILDDIR/$bin" ]; then
		echo "install.sh: $BUILDDIR/$bin is not built: run scripts/build.sh (or make) first" >&2
		exit 1
	fi
done
root=$DESTDIR$PREFIX
sbindir=$root/sbin
bindir=$root/bin
man1dir=$root/share/man/man1
man8dir=$root/share/man/man8
compdir=$root/share/bash-completion/completions
docdir=$root/share/doc/gofsck
licensedir=$root/share/licenses/gofsck

install -d "$sbindir" "$bindir" "$man1dir" "$man8dir" "$compdir" "$docdir" "$licensedir"
install -m 0755 "$BUILDDIR/gofsck" "$BUILDDIR/gofsck-freefrag" "$BUILDDIR/gofsck-fsinfo" "$sbindir/"
install -m 0755 "$BUILDDIR/gofsck-iowatch" "$bindir/"
install -m 0644 docs/man/gofsck.8 docs/man/gofsck-freefrag.8 docs/man/gofsck-fsinfo.8 "$man8dir/"
install -m 0644 docs/man/gofsck-iowatch.1 "$man1dir/"
install -m 0644 scripts/gofsck.bash-completion "$compdir/gofsck"
# gofsck(8) points here for the JSON report's format and the repair design.
install -m 0644 README.md docs/json-report.md docs/json-report.schema.json docs/repair.md docs/tools.md "$docdir/"
install -m 0644 LICENSE "$licensedir/"
if [ "$FSCK_LINKS" = 1 ]; then
	for ext in ext2 ext3 ext4; do
		ln -sf gofsck "$sbindir/fsck.$ext"
		ln -sf gofsck.8 "$man8dir/fsck.$ext.8"
		# bash-completion loads a command's completion from the file of its name.
		ln -sf gofsck "$compdir/fsck.$ext"
	done
	echo "installed gofsck in $sbindir, with fsck.ext2, fsck.ext3 and fsck.ext4:"
	echo "fsck(8) now runs it for every ext2/3/4 filesystem found through PATH"
else
	echo "installed gofsck in $sbindir (no fsck.ext2/3/4 links; FSCK_LINKS=1 adds them)"
fi
