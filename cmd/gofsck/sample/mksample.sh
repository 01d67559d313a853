#!/bin/bash
# Rebuilds damaged.img.gz, the sample image `gofsck --sample` checks: a
# small ext4 filesystem made by mke2fs -d, then damaged with debugfs in
# ways every checker must notice. Run from this folder; needs e2fsprogs.
set -euo pipefail
export E2FSPROGS_FAKE_TIME=1700000000 TZ=UTC
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/root/docs" "$tmp/root/src"
for i in $(seq 1 40); do printf 'line %d of a small file\n' $(seq 1 $((i * 20))) > "$tmp/root/docs/note$i.txt"; done
head -c 200000 /dev/zero | tr '\0' 'x' > "$tmp/root/src/big.bin"
ln -s docs/note1.txt "$tmp/root/link"
img="$tmp/sample.img"
mke2fs -q -F -t ext4 -b 1024 -L sample -U 6b1f0f16-8b6a-4b3c-9d55-2b7f3a9c0001 \
  -E hash_seed=6b1f0f16-8b6a-4b3c-9d55-2b7f3a9c0002 -d "$tmp/root" "$img" 4M
# The damage: a file whose inode was wiped (its entry now points at an unused
# inode), a wrong link count, a block marked free that a file uses, a wrong
# file size, and a directory entry with a bad file type.
debugfs -w "$img" -f - >/dev/null <<'CMDS'
clri /docs/note7.txt
sif /docs/note3.txt links_count 3
freeb 300
sif /src/big.bin size 1
set_inode_field /docs mtime 20231114000000
CMDS
gzip -9 -n -c "$img" > damaged.img.gz
ls -l damaged.img.gz
