#!/bin/sh
# mksamples.sh builds the small ext2/ext4 images whose structures the ondisk
# golden and fuzz tests decode, and records what dumpe2fs and debugfs print
# about them. Run it from this directory with e2fsprogs 1.47.0 installed:
#
#	sh mksamples.sh
#
# Outputs, per image NAME: NAME.img.gz (the image), NAME.dumpe2fs (dumpe2fs),
# NAME.debugfs (stat/ex/htree_dump/ea_list/id transcripts). Everything is
# pinned (UUID, hash seed, fake time, private mke2fs.conf) so reruns give
# the same layout (debugfs stamps ctimes and the write time with the real
# clock, so those bytes differ between runs).
set -eu
export LC_ALL=C TZ=UTC E2FSPROGS_FAKE_TIME=1600000000 DEBUGFS_PAGER=__none__
UUID=6f1c2b4e-3a5d-4e7f-9a1b-2c3d4e5f6a7b
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/mke2fs.conf" <<'CONF'
[defaults]
	base_features = sparse_super,large_file,filetype,resize_inode,dir_index,ext_attr
	default_mntopts = acl,user_xattr
	enable_periodic_fsck = 0
	blocksize = 4096
	inode_size = 256
	inode_ratio = 16384
CONF
export MKE2FS_CONFIG="$work/mke2fs.conf"

# tree DIR: the source tree copied in with mke2fs -d.
tree() {
	d=$1
	mkdir -p "$d/sub" "$d/big" "$d/empty"
	printf 'tiny inline file\n' > "$d/small"
	head -c 3000 /dev/zero | tr '\0' 'a' > "$d/sub/file"
	ln -s small "$d/link"
	# sparse: six separate chunks, so an extent tree of depth 1 (or
	# indirect blocks on ext2).
	i=0
	while [ $i -lt 6 ]; do
		printf 'chunk%d' $i | dd of="$d/sparse" bs=65536 seek=$((i * 4)) conv=notrunc 2>/dev/null
		i=$((i + 1))
	done
	i=0
	while [ $i -lt "$2" ]; do
		: > "$d/big/entry-with-a-long-name-$(printf %05d $i)"
		i=$((i + 1))
	done
	find "$d" -exec touch -h -d @1600000000 {} +
}

# mk NAME SIZE NENTRIES MKE2FS-ARGS...
mk() {
	name=$1 size=$2 n=$3
	shift 3
	rm -rf "$work/src" && mkdir "$work/src" && tree "$work/src" "$n"
	img="$work/$name.img"
	rm -f "$img"
	mke2fs -F -q -T default -U $UUID -E hash_seed=$UUID "$@" -d "$work/src" "$img" "$size" >/dev/null
	printf 'ea_set /sub/file user.small tiny\nea_set -f %s /sub/file user.big\nea_set /small user.\351t\351 accent\n' \
		"$work/val" > "$work/cmds"
	head -c 700 /dev/zero | tr '\0' 'x' > "$work/val"
	debugfs -w -f "$work/cmds" "$img" >/dev/null 2>&1
	e2fsck -fyD "$img" >/dev/null 2>&1 || true
	# After -D, which would drop the empty block again: an empty directory
	# block (rec_len = block size, 0xFFFF on disk with 64 KiB blocks).
	debugfs -w -R "expand_dir /empty" "$img" >/dev/null 2>&1
	e2fsck -fn "$img" >/dev/null
	dumpe2fs "$img" > "$name.dumpe2fs" 2>/dev/null
	: > "$name.debugfs"
	for f in / /small /sub /sub/file /link /sparse /big /empty; do
		printf '=== stat %s\n' "$f" >> "$name.debugfs"
		debugfs -R "stat $f" "$img" >> "$name.debugfs" 2>/dev/null
		printf '=== ex %s\n' "$f" >> "$name.debugfs"
		debugfs -R "ex $f" "$img" >> "$name.debugfs" 2>/dev/null || true
		printf '=== ea_list %s\n' "$f" >> "$name.debugfs"
		debugfs -R "ea_list $f" "$img" >> "$name.debugfs" 2>/dev/null || true
	done
	printf '=== htree_dump /big\n' >> "$name.debugfs"
	debugfs -R "htree_dump /big" "$img" >> "$name.debugfs" 2>/dev/null || true
	gzip -9n < "$img" > "$name.img.gz"
}

mk ext4-1k 1M 120 -N 256 -t ext4 -b 1024 -O ^has_journal,metadata_csum,64bit,inline_data,extent
mk ext4-4k 2M 200 -N 256 -t ext4 -b 4096 -O ^has_journal,metadata_csum,64bit,inline_data,extent
mk ext4-64k 8M 2000 -N 2100 -t ext4 -b 65536 -O ^has_journal,metadata_csum,64bit,inline_data,extent
mk ext2-64k 8M 0 -N 64 -t ext2 -b 65536 -I 128 -O ^resize_inode
