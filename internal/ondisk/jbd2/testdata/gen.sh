#!/bin/sh
# Regenerates the journal blocks in this directory from a real kernel
# journal: needs root, loop mounts and e2fsprogs. The blocks are copied from
# an image taken while the filesystem was still mounted, so its journal holds
# committed transactions. Block numbers of the log are found with logdump.
#
#   csum3-1k-*.bin   1 KiB blocks, 64bit + metadata_csum: 16-byte tags, csum v3
#   plain-1k-*.bin   1 KiB blocks, ^64bit ^metadata_csum: 8-byte tags, no csum
set -eu
out=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'umount "$tmp/mnt" 2>/dev/null || true; rm -rf "$tmp"' EXIT
mkdir "$tmp/mnt"

gen() { # name mke2fs-options...
	name=$1; shift
	truncate -s 16M "$tmp/fs.img"
	mke2fs -q -F -t ext4 -b 1024 "$@" "$tmp/fs.img"
	mount -o loop "$tmp/fs.img" "$tmp/mnt"
	for i in 1 2 3 4 5 6 7 8; do mkdir "$tmp/mnt/d$i"; echo "$i" >"$tmp/mnt/d$i/f"; done
	sync
	rm -rf "$tmp/mnt/d1" "$tmp/mnt/d2"
	sync
	mkdir "$tmp/mnt/x"
	sync
	cp "$tmp/fs.img" "$tmp/copy.img"
	umount "$tmp/mnt"
	pblk() { debugfs -R "bmap <8> $1" "$tmp/copy.img" 2>/dev/null; }
	blk() { dd if="$tmp/copy.img" bs=1024 skip="$(pblk "$1")" count=1 status=none; }
	blk 0 | head -c 1024 >"$out/$name-super.bin"
	log=$(debugfs -R logdump "$tmp/copy.img" 2>/dev/null)
	first() { echo "$log" | grep "($1" | head -n1 | sed 's/.* at block \([0-9]*\)$/\1/'; }
	blk "$(first 'descriptor block')" >"$out/$name-descriptor.bin"
	blk "$(first 'commit block')" >"$out/$name-commit.bin"
	if b=$(first 'revoke table') && [ -n "$b" ]; then blk "$b" >"$out/$name-revoke.bin"; fi
	rm -f "$tmp/fs.img" "$tmp/copy.img"
}
gen csum3-1k -O 64bit,metadata_csum
gen plain-1k -O ^64bit,^metadata_csum
