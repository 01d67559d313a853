#!/bin/sh
# mkfuzzimages.sh builds the two small base images FuzzCheck and the hostile
# tests start from. Run it in this directory with e2fsprogs 1.47.0:
#
#	sh mkfuzzimages.sh
#
# ext2.img.gz: 1 MiB ext2, 1 KiB blocks, 128-byte inodes: files, nested
#   directories, an htree directory (e2fsck -fyD), a block-mapped sparse
#   file with indirect and double-indirect blocks, a slow symlink, a hard
#   link and an EA block (128-byte inodes, so no in-inode xattrs).
# ext4.img.gz: 2 MiB ext4 (metadata_csum, 64bit, extents, inline_data,
#   flex_bg, no journal), 1 KiB blocks: the same tree plus an extent tree of
#   depth 1, inline-data file and directory, in-inode and block xattrs.
set -eu
export LC_ALL=C TZ=UTC E2FSPROGS_FAKE_TIME=1600000000
UUID=6f1c2b4e-3a5d-4e7f-9a1b-2c3d4e5f6a7b
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '[defaults]\n\tbase_features = sparse_super,large_file,filetype,resize_inode,dir_index,ext_attr\n\tenable_periodic_fsck = 0\n[fs_types]\n\text4 = {\n\t\tfeatures = extent\n\t}\n' > "$work/mke2fs.conf"
export MKE2FS_CONFIG="$work/mke2fs.conf"

src=$work/src
mkdir -p "$src/a/b/c" "$src/htree" "$src/d2"
printf 'hello\n' > "$src/small"
head -c 5000 /dev/zero | tr '\0' 'q' > "$src/a/file"
printf 'x' | dd of="$src/sparse" bs=1024 seek=0 conv=notrunc 2>/dev/null
printf 'y' | dd of="$src/sparse" bs=1024 seek=20 conv=notrunc 2>/dev/null
printf 'z' | dd of="$src/sparse" bs=1024 seek=300 conv=notrunc 2>/dev/null
i=0
while [ $i -lt 8 ]; do
	printf 'e%d' $i | dd of="$src/a/b/extents" bs=1024 seek=$((i * 3)) conv=notrunc 2>/dev/null
	i=$((i + 1))
done
ln -s small "$src/fastlink"
ln -s "$(head -c 100 /dev/zero | tr '\0' 'L')" "$src/slowlink"
i=0
while [ $i -lt 150 ]; do
	: > "$src/htree/name-with-padding-$(printf %03d $i)"
	i=$((i + 1))
done
ln "$src/small" "$src/d2/hardlink"
find "$src" -exec touch -h -d @1600000000 {} +

mk() {
	name=$1 size=$2
	shift 2
	img=$work/$name.img
	mke2fs -F -q -T default -U $UUID -E hash_seed=$UUID -b 1024 -N 256 "$@" -d "$src" "$img" "$size" >/dev/null 2>&1
	head -c 600 /dev/zero | tr '\0' 'v' > "$work/val"
	cat > "$work/cmds" <<CMDS
ea_set /a/file user.shared value1
ea_set -f $work/val /a/file user.big
ea_set /small user.s tiny
CMDS
	debugfs -w -f "$work/cmds" "$img" >/dev/null 2>&1
	e2fsck -fyD "$img" >/dev/null 2>&1 || true
	e2fsck -fn "$img" >/dev/null
	gzip -9n < "$img" > "$name.img.gz"
}
mk ext2 1M -t ext2 -I 128 -O ^resize_inode
mk ext4 2M -t ext4 -I 256 -O ^has_journal,metadata_csum,64bit,extent,inline_data,flex_bg,^resize_inode
