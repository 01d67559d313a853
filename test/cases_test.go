package test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"gofsck/internal/ondisk"
	"gofsck/internal/testfs"
)

// This file lists the feature-specific differential cases. Offsets follow
// the kernel structures: ext4_dir_entry_2 {inode 0, rec_len 4, name_len 6,
// file_type 7, name 8}; dx_root {dot 0, dotdot 12, reserved_zero 24,
// hash_version 28, info_length 29, indirect_levels 30, unused_flags 31,
// limit 32, count 34, block 36, entries 40 (hash, block)}; ext4_extent_header
// {magic 0, entries 2, max 4, depth 6} (i_block[0] = magic|entries<<16,
// i_block[1] = max|depth<<16, i_block[3..5] = first extent or index);
// ext4_xattr_header {magic 0, refcount 4, blocks 8, hash 12, checksum 16,
// first entry 32: name_len 0, name_index 1, value_offs 2, value_inum 4,
// value_size 8, hash 12}.

// dbgCase is a corruption made by debugfs commands.
func dbgCase(name string, cmds ...string) dcase {
	return dcase{name: name, do: func(c *cx) { c.dbg(cmds...) }}
}

// noEffect is a change that e2fsck -fn does not report.
func noEffect(name string, cmds ...string) dcase {
	return dcase{name: name, clean: true, do: func(c *cx) { c.dbg(cmds...) }}
}

// msgOnly is a change that e2fsck -fn reports but that leaves the exit
// status 0 (problems whose "no" answer does not make the file system
// invalid, such as the superblock's free counts).
func msgOnly(name string, cmds ...string) dcase {
	return dcase{name: name, clean: true, msgs: true, do: func(c *cx) { c.dbg(cmds...) }}
}

// doMsgOnly is msgOnly computed at run time.
func doMsgOnly(name string, f func(c *cx)) dcase {
	return dcase{name: name, clean: true, msgs: true, do: f}
}

// do is a corruption computed at run time.
func do(name string, f func(c *cx)) dcase { return dcase{name: name, do: f} }

// doClean is a no-effect change computed at run time.
func doClean(name string, f func(c *cx)) dcase { return dcase{name: name, clean: true, do: f} }

var ffbRE = regexp.MustCompile(`Free blocks found: (\d+)`)
var ffiRE = regexp.MustCompile(`Free inode found: (\d+)`)

// freeBlock returns a free block in the second half of the file system.
func (c *cx) freeBlock() uint64 {
	c.t.Helper()
	total, _ := strconv.ParseUint(c.sb()["Block count"], 10, 64)
	out := testfs.DebugfsRO(c.t, c.img, fmt.Sprintf("ffb 1 %d", total/2))
	m := ffbRE.FindStringSubmatch(out)
	if m == nil {
		c.t.Fatalf("no free block: %s", out)
	}
	b, _ := strconv.ParseUint(m[1], 10, 64)
	return b
}

// freeInode returns a free inode number.
func (c *cx) freeInode() uint32 {
	c.t.Helper()
	out := testfs.DebugfsRO(c.t, c.img, "ffi")
	m := ffiRE.FindStringSubmatch(out)
	if m == nil {
		c.t.Fatalf("no free inode: %s", out)
	}
	v, _ := strconv.ParseUint(m[1], 10, 32)
	return uint32(v)
}

// sbField reads a 32-bit superblock field at byte offset off.
func (c *cx) sbField(off int64) uint32 {
	return binary.LittleEndian.Uint32(c.read(1024+off, 4))
}

// ssvOr sets a superblock feature field with debugfs (which keeps the
// superblock checksum right) to its current value OR mask.
func (c *cx) ssvOr(field string, off int64, mask uint32) {
	c.dbgf("ssv %s %#x", field, c.sbField(off)|mask)
}

// ssvAndNot clears bits of a superblock feature field.
func (c *cx) ssvAndNot(field string, off int64, mask uint32) {
	c.dbgf("ssv %s %#x", field, c.sbField(off)&^mask)
}

const (
	offCompat   = 0x5C
	offIncompat = 0x60
	offROCompat = 0x64
)

// fixInodeCsum recomputes an inode's checksum after a raw write, so that the
// case tests the content and not only the checksum.
func (c *cx) fixInodeCsum(p string) {
	if strings.Contains(c.sb()["Filesystem features"], "metadata_csum") {
		c.dbgf("sif %s checksum calc", p)
	}
}

// dirent writes into the first block of directory p at byte offset off.
func (c *cx) dirent(p string, off int64, v []byte) { c.write(c.dirOff(p, 0)+off, v) }

// flip inverts n bytes at offset off of block b.
func (c *cx) flip(b uint64, off int64, n int) {
	v := c.read(c.blockOff(b)+off, n)
	for i := range v {
		v[i] ^= 0xff
	}
	c.writeBlock(b, off, v)
}

func u8(v byte) []byte { return []byte{v} }

var le16, le32 = testfs.Le16, testfs.Le32

// commonCases are corruptions of generic structures, used on the main
// feature sets (block-mapped and extent-mapped alike).
func commonCases() []dcase {
	return []dcase{
		dbgCase("file-dtime", "sif /dir/file dtime 20200101000000"),
		// dtime holding an inode number: the remnant of an orphan list
		// (PR_1_ORPHAN_LIST_REFUGEES, then PR_1_LOW_DTIME per inode).
		dbgCase("file-dtime-low", "sif /dir/file dtime 5", "sif /dir/small dtime 7"),
		dbgCase("file-mode-zero", "sif /dir/small mode 0"),
		dbgCase("file-mode-badtype", "sif /dir/small mode 0170644"),
		dbgCase("dir-mode-regular", "sif /dir/sub mode 0100644"),
		dbgCase("file-acl-out-of-range", "sif /dir/small file_acl 99999999"),
		dbgCase("file-acl-superblock", "sif /dir/small file_acl 1"),
		dbgCase("file-faddr", "sif /dir/file faddr 5"),
		dbgCase("file-size-small", "sif /dir/big size 100"),
		dbgCase("dir-size-zero", "sif /dir/sub size 0"),
		dbgCase("dir-size-unaligned", "sif /dir/sub size 1000"),
		dbgCase("index-fl-on-file", "sif /dir/small flags 0x1000"),
		msgOnly("immutable-chardev", "sif /dir/null flags 0x10"),
		msgOnly("append-fifo", "sif /dir/fifo flags 0x20"),
		dbgCase("chardev-size", "sif /dir/null size 1024"),
		noEffect("noeffect-chardev-block3", "sif /dir/null block[3] 77"),
		noEffect("noeffect-fifo-block0", "sif /dir/fifo block[0] 77"),
		dbgCase("fast-symlink-size", "sif /dir/fast size 40"),
		dbgCase("slow-symlink-size-zero", "sif /dir/slow size 0"),
		dbgCase("root-clri", "clri <2>"),
		dbgCase("root-mode-regular", "sif <2> mode 0100644"),
		dbgCase("lpf-clri", "clri /lost+found"),
		dbgCase("lpf-mode-regular", "sif /lost+found mode 0100644"),
		dbgCase("unlink-file", "unlink /dir/file2"),
		dbgCase("link-extra-name", "link /dir/small /dir/two/extra"),
		dbgCase("link-dir-twice", "link /dir/sub /dir/two/subagain"),
		dbgCase("file-links-zero", "sif /dir/file2 links_count 0"),
		do("setb-free-block", func(c *cx) { c.dbgf("setb %d", c.freeBlock()) }),
		do("seti-free-inode", func(c *cx) { c.dbgf("seti <%d>", c.freeInode()) }),
		dbgCase("bg1-free-inodes", "set_bg 1 free_inodes_count 0"),
		dbgCase("bg0-used-dirs", "set_bg 0 used_dirs_count 0"),
		dbgCase("bg0-block-bitmap-out-of-range", "set_bg 0 block_bitmap 99999999"),
		msgOnly("sb-free-blocks", "ssv free_blocks_count 10"),
		msgOnly("sb-free-inodes", "ssv free_inodes_count 10"),
		dbgCase("sb-inodes-count", "ssv inodes_count 100"),
		dbgCase("sb-first-ino", "ssv first_ino 5"),
		dbgCase("sb-rev-level", "ssv rev_level 7"),
		dbgCase("sb-log-block-size", "ssv log_block_size 9"),
		dbgCase("sb-r-blocks", "ssv r_blocks_count 99999999"),
		noEffect("noeffect-sb-errors-invalid", "ssv errors 9"),
		noEffect("noeffect-sb-wtime-future", "ssv wtime 20991231000000"),
		msgOnly("sb-mtime-future", "ssv mtime 20991231000000"),
		do("sb-incompat-unknown", func(c *cx) { c.ssvOr("feature_incompat", offIncompat, 0x80000000) }),
		do("sb-rocompat-unknown", func(c *cx) { c.ssvOr("feature_ro_compat", offROCompat, 0x80000000) }),
		doClean("noeffect-sb-last-orphan", func(c *cx) { c.dbgf("ssv last_orphan %d", c.ino("/dir/small")) }),
		do("zap-root-dir", func(c *cx) { c.dbgf("zap_block %d", c.data("/", 0)) }),
		do("zap-lpf-dir", func(c *cx) { c.dbgf("zap_block -p 0x55 %d", c.data("/lost+found", 0)) }),
		do("zap-itable-block", func(c *cx) { c.dbgf("zap_block %d", c.inodeOff("/dir/file")/c.bs()) }),
		do("zap-block-bitmap", func(c *cx) { c.dbgf("zap_block %d", c.group(0, "Block bitmap")) }),
		do("zap-inode-bitmap", func(c *cx) { c.dbgf("zap_block -p 0xff %d", c.group(0, "Inode bitmap")) }),
		do("dirent-reclen-zero", func(c *cx) { c.dirent("/dir/sub", 24+4, le16(0)) }),
		do("dirent-reclen-unaligned", func(c *cx) { c.dirent("/dir/sub", 12+4, le16(13)) }),
		do("dirent-namelen-long", func(c *cx) { c.dirent("/dir/sub", 24+6, u8(250)) }),
		do("dirent-inode-out-of-range", func(c *cx) { c.dirent("/dir/sub", 24, le32(99999999)) }),
		do("dirent-filetype-dir", func(c *cx) { c.dirent("/dir/sub", 24+7, u8(2)) }),
		do("dirent-filetype-invalid", func(c *cx) { c.dirent("/dir/sub", 24+7, u8(9)) }),
		do("dirent-dot-inode", func(c *cx) { c.dirent("/dir/sub", 0, le32(c.ino("/dir/two"))) }),
		do("dirent-dot-name", func(c *cx) { c.dirent("/dir/sub", 8, []byte("x")) }),
		do("dirent-dotdot-inode", func(c *cx) { c.dirent("/dir/sub", 12, le32(c.ino("/dir/two"))) }),
		do("dirent-name-slash", func(c *cx) { c.dirent("/dir/sub", 24+8, []byte("a/")) }),
		do("dirent-name-nul", func(c *cx) { c.dirent("/dir/sub", 24+9, []byte{0}) }),
		do("dirent-inode-bad-blocks", func(c *cx) { c.dirent("/dir/sub", 24, le32(1)) }),
		do("dirent-inode-reserved", func(c *cx) { c.dirent("/dir/sub", 24, le32(7)) }),
		do("dirent-inode-unused", func(c *cx) { c.dirent("/dir/sub", 24, le32(c.freeInode())) }),
		do("dirent-duplicate-name", func(c *cx) {
			off := c.dirOff("/dir/two", 0)
			name := c.read(off+24+8, 2)
			c.write(off+36+8, name)
		}),
		noEffect("noeffect-mtime", "sif /dir/file mtime 20190101000000"),
		noEffect("noeffect-ctime", "sif /dir/file ctime 20190101000000"),
		noEffect("noeffect-volume-name", "ssv volume_name scratch"),
		noEffect("noeffect-last-mounted", "ssv last_mounted /mnt/elsewhere"),
		noEffect("noeffect-lastcheck", "ssv lastcheck 20190101000000"),
		noEffect("noeffect-max-mnt-count", "ssv max_mnt_count 5"),
		noEffect("noeffect-checkinterval", "ssv checkinterval 86400"),
		noEffect("noeffect-mkfs-time", "ssv mkfs_time 20100101000000"),
		noEffect("noeffect-def-resuid", "ssv def_resuid 1000"),
		noEffect("noeffect-errors-panic", "ssv errors 3"),
		doClean("noeffect-zap-free-block", func(c *cx) { c.dbgf("zap_block -p 0x77 %d", c.freeBlock()) }),
	}
}

func ext2Cases() []dcase {
	cs := commonCases()
	return append(cs,
		dbgCase("blk0-out-of-range", "sif /dir/file block[0] 9999999"),
		// A doubly indirect block on the inode bitmap: pass 1 ignores the
		// out-of-range blocks it maps (they sit in critical metadata), but
		// pass 1B's walk warns (the library's bitmap test) and ends with
		// "Illegal indirect block found".
		do("pass1b-dind-on-inode-bitmap", func(c *cx) { c.dbgf("sif /dir/file block[DIND] %d", c.group(0, "Inode bitmap")) }),
		dbgCase("blk0-superblock", "sif /dir/file block[0] 1"),
		// A sparse file becomes a directory: pass 2 allocates its holes,
		// those past the direct blocks mapped in the existing indirect
		// blocks (ext2fs_bmap2), and pass 3A's rehash frees them again.
		dbgCase("sparse-file-to-dir", "sif /dir/sparse mode 040755"),
		// The same with holes whose indirect block is missing (data only
		// in block 0 and under the second indirect block of the doubly
		// indirect one): their allocation fails, the block allocated
		// for each stays marked in use.
		do("sparse-file-to-dir-no-ind", func(c *cx) {
			host := filepath.Join(c.t.TempDir(), "sp")
			f, err := os.Create(host)
			if err != nil {
				c.t.Fatal(err)
			}
			one := bytes.Repeat([]byte{1}, int(c.bs()))
			_, err = f.WriteAt(one, 0)
			if err == nil {
				_, err = f.WriteAt(one, 600*c.bs())
			}
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				c.t.Fatal(err)
			}
			c.dbgf("write %s /dir/sp600", host)
			c.dbg("sif /dir/sp600 mode 040755")
		}),
		do("blk0-inode-table", func(c *cx) { c.dbgf("sif /dir/file block[0] %d", c.group(0, "Inode table")) }),
		do("blk0-duplicate", func(c *cx) { c.dbgf("sif /dir/file2 block[0] %d", c.data("/dir/file", 0)) }),
		dbgCase("ind-out-of-range", "sif /dir/big block[IND] 9999999"),
		do("ind-duplicate", func(c *cx) { c.dbgf("sif /dir/big block[IND] %d", c.data("/dir/file", 1)) }),
		do("dind-free-block", func(c *cx) { c.dbgf("sif /dir/file block[DIND] %d", c.freeBlock()) }),
		do("zap-ind-block", func(c *cx) { c.dbgf("zap_block -p 0xff %d", c.ind("/dir/big")) }),
		do("zap-sparse-ind", func(c *cx) { c.dbgf("zap_block -o 8 -l 8 -p 0xee %d", c.ind("/dir/sparse")) }),
		dbgCase("extents-fl-no-feature", "sif /dir/file flags 0x80000"),
		dbgCase("inline-fl-no-feature", "sif /dir/small flags 0x10000000"),
		dbgCase("slow-symlink-block-out-of-range", "sif /dir/slow block[0] 9999999"),
		// A declined i_blocks_hi fix leaves the symlink out of the bad
		// map: its entry's file type is then checked against its mode.
		dbgCase("fast-symlink-blocks-hi", "sif /dir/fast blocks_hi 1"),
		dbgCase("sb-first-data-block", "ssv first_data_block 0"),
		dbgCase("sb-blocks-per-group", "ssv blocks_per_group 1000"),
		dbgCase("sb-inodes-per-group", "ssv inodes_per_group 7"),
		noEffect("noeffect-sb-state-errors", "ssv state 2"),
		do("sb-magic", func(c *cx) { c.write(1024+56, le16(0)) }),
		do("bg1-inode-table-zero", func(c *cx) { c.dbg("set_bg 1 inode_table 0") }),
		do("bg1-inode-bitmap-on-block-bitmap", func(c *cx) { c.dbgf("set_bg 1 inode_bitmap %d", c.group(1, "Block bitmap")) }),
		do("freeb-ind-block", func(c *cx) { c.dbgf("freeb %d", c.ind("/dir/big")) }),
		do("bigdir-ind-zap", func(c *cx) { c.dbgf("zap_block %d", c.ind(htreeDir)) }),
		do("sb-compat-unknown", func(c *cx) { c.ssvOr("feature_compat", offCompat, 0x80000) }),
		noEffect("noeffect-uid", "sif /dir/file uid 1234"),
		noEffect("noeffect-gid", "sif /dir/file gid 1234"),
		noEffect("noeffect-generation", "sif /dir/file generation 42"),
		noEffect("noeffect-kbytes-written", "ssv kbytes_written 123456"),
		noEffect("noeffect-raid-stride", "ssv raid_stride 16"),
		noEffect("noeffect-file-size-grow", "sif /dir/sparse size 2000000"),
		noEffect("noeffect-index-fl-cleared", "sif /dir/bigdir flags 0"),
	)
}

func ext3Cases() []dcase {
	jsb := func(c *cx) uint64 { return c.data("<8>", 0) }
	return []dcase{
		dbgCase("journal-clri", "clri <8>"),
		dbgCase("journal-inum-zero", "ssv journal_inum 0"),
		dbgCase("journal-mode-dir", "sif <8> mode 040755"),
		dbgCase("journal-size-small", "sif <8> size 1024"),
		noEffect("noeffect-journal-links-zero", "sif <8> links_count 0"),
		do("journal-sb-magic", func(c *cx) { c.dbgf("zap_block -o 0 -l 4 -p 0 %d", jsb(c)) }),
		do("journal-sb-blocksize", func(c *cx) { c.writeBlock(jsb(c), 12, []byte{0, 0, 2, 0}) }),
		do("journal-sb-maxlen", func(c *cx) { c.writeBlock(jsb(c), 16, []byte{0x7f, 0, 0, 0}) }),
		doMsgOnly("journal-sb-start", func(c *cx) { c.writeBlock(jsb(c), 28, []byte{0, 0, 0, 5}) }),
		doMsgOnly("needs-recovery", func(c *cx) { c.ssvOr("feature_incompat", offIncompat, 0x4) }),
		doMsgOnly("has-journal-cleared", func(c *cx) { c.ssvAndNot("feature_compat", offCompat, 0x4) }),
		do("journal-block-shared", func(c *cx) { c.dbgf("sif /dir/file block[0] %d", c.data("<8>", 5)) }),
		noEffect("noeffect-journal-backup-blocks", "ssv jnl_blocks[0] 5"),
		doClean("noeffect-zap-journal-log", func(c *cx) { c.dbgf("zap_block -p 0x33 %d", c.data("<8>", 10)) }),
		noEffect("noeffect-uid", "sif /dir/file uid 1234"),
		dbgCase("blk0-out-of-range", "sif /dir/file block[0] 9999999"),
		do("blk0-journal-sb", func(c *cx) { c.dbgf("sif /dir/small block[0] %d", jsb(c)) }),
		dbgCase("dir-size-zero", "sif /dir/sub size 0"),
		do("dirent-reclen-zero", func(c *cx) { c.dirent("/dir/sub", 24+4, le16(0)) }),
		noEffect("noeffect-sb-state-errors", "ssv state 2"),
	}
}

// extentCases corrupt extent trees (the file /dir/file has one extent in
// the inode; /dir/sparse has an index in the inode and one leaf block).
func extentCases() []dcase {
	return []dcase{
		dbgCase("eh-magic", "sif /dir/file block[0] 0x0001f30b"),
		dbgCase("eh-entries-over-max", "sif /dir/file block[0] 0x0005f30a"),
		dbgCase("eh-max-too-big", "sif /dir/file block[1] 0x00000005"),
		dbgCase("eh-depth-too-big", "sif /dir/file block[1] 0x00060004"),
		dbgCase("extent-start-out-of-range", "sif /dir/file block[5] 99999999"),
		do("extent-start-duplicate", func(c *cx) { c.dbgf("sif /dir/file block[5] %d", c.data("/dir/file2", 0)) }),
		do("extent-start-inode-table", func(c *cx) { c.dbgf("sif /dir/file block[5] %d", c.group(0, "Inode table")) }),
		dbgCase("extent-len-zero", "sif /dir/file block[4] 0"),
		dbgCase("extent-len-past-end", "sif /dir/file block[4] 0x7000"),
		dbgCase("extent-lblk-huge", "sif /dir/file block[3] 0xfffffff0"),
		dbgCase("extents-fl-cleared", "sif /dir/file flags 0"),
		dbgCase("index-leaf-out-of-range", "sif /dir/sparse block[4] 99999999"),
		dbgCase("index-lblk-wrong", "sif /dir/sparse block[3] 5"),
		do("etb-magic", func(c *cx) { c.writeBlock(c.etb("/dir/sparse"), 0, le16(0x1234)) }),
		do("etb-entries-over-max", func(c *cx) { c.writeBlock(c.etb("/dir/sparse"), 2, le16(0xfff0)) }),
		do("etb-depth", func(c *cx) { c.writeBlock(c.etb("/dir/sparse"), 6, le16(1)) }),
		do("etb-zap", func(c *cx) { c.dbgf("zap_block %d", c.etb("/dir/sparse")) }),
		do("etb-extent-out-of-order", func(c *cx) {
			b := c.etb("/dir/sparse")
			c.writeBlock(b, 12+12, le32(0)) // second extent's ee_block = 0
		}),
		do("etb-freeb", func(c *cx) { c.dbgf("freeb %d", c.etb("/dir/sparse")) }),
		do("etb-shared-with-file", func(c *cx) { c.dbgf("sif /dir/file block[5] %d", c.etb("/dir/sparse")) }),
	}
}

func csumCases() []dcase {
	return []dcase{
		dbgCase("inode-csum", "sif /dir/file checksum 0x1234"),
		// Passes 2 and 4 reread some inodes with the library's checked
		// read: under -n the checksum pass 1 was not allowed to fix stops
		// e2fsck there (check_filetype reads a symlink; pass 4 reads an
		// inode nothing links to, or one whose count is wrong).
		dbgCase("inode-csum-filetype", "sif /dir/fast checksum 0x1234"),
		// The root's checksum fails: pass 1's lookup of /lost+found
		// verifies it and fails, so a writable run queues the large
		// /lost+found for pass 3A like any linear directory.
		dbgCase("root-inode-csum", "sif / checksum 0x1234"),
		dbgCase("inode-csum-unlinked", "sif /dir/file2 checksum 0x1234", "unlink /dir/file2"),
		dbgCase("inode-csum-links", "sif /dir/file links_count 3", "sif /dir/file checksum 0x1234"),
		dbgCase("bg1-csum", "set_bg 1 checksum 0x1234"),
		dbgCase("bg0-block-bitmap-csum", "set_bg 0 block_bitmap_csum 0x1234"),
		dbgCase("bg0-inode-bitmap-csum", "set_bg 0 inode_bitmap_csum 0x1234"),
		do("sb-csum", func(c *cx) { c.write(1024+0x3FC, le32(c.sbField(0x3FC)^0x1234)) }),
		dbgCase("sb-csum-type", "ssv checksum_type 7"),
		do("dir-block-csum", func(c *cx) { c.dbgf("zap_block -o %d -l 1 -p 0x55 %d", c.bs()-1, c.data("/dir/sub", 0)) }),
		do("etb-csum", func(c *cx) { c.dbgf("zap_block -b %d %d", 8*(c.bs()-2), c.etb("/dir/sparse")) }),
		// Bytes flipped in the first extent of the tree block, which then
		// fails its checksum too: the high half of its ee_block (the index
		// above no longer matches; e2fsck asks nothing about the checksum,
		// and its fix_parents cannot go back down into the block), and the
		// top byte of its ee_start with the low byte of the second
		// extent's ee_block (fix_parents then cannot find the extent).
		do("etb-flip-first-lblk", func(c *cx) { c.flip(c.etb("/dir/sparse"), 14, 2) }),
		do("etb-flip-first-pblk", func(c *cx) { c.flip(c.etb("/dir/sparse"), 23, 2) }),
		do("htree-node-csum", func(c *cx) { c.dbgf("zap_block -b %d %d", 8*(c.bs()-2), c.data(htreeDir, 0)) }),
		do("ea-block-csum", func(c *cx) { c.writeBlock(c.eaBlock("/dir/file2"), 16, le32(0x12345678)) }),
		dbgCase("sb-uuid", "ssv uuid 11111111-2222-3333-4444-555555555555"),
	}
}

func eaCases() []dcase {
	return []dcase{
		do("ea-magic", func(c *cx) { c.writeBlock(c.eaBlock("/dir/file2"), 0, le32(0)) }),
		do("ea-refcount", func(c *cx) { c.writeBlock(c.eaBlock("/dir/file2"), 4, le32(7)) }),
		do("ea-h-blocks", func(c *cx) { c.writeBlock(c.eaBlock("/dir/file2"), 8, le32(2)) }),
		do("ea-value-offs", func(c *cx) { c.writeBlock(c.eaBlock("/dir/file2"), 32+2, le16(0xfff0)) }),
		do("ea-entry-hash", func(c *cx) { c.writeBlock(c.eaBlock("/dir/file2"), 32+12, le32(0xdeadbeef)) }),
		do("ea-zap", func(c *cx) { c.dbgf("zap_block %d", c.eaBlock("/dir/file2")) }),
		do("ea-block-shared", func(c *cx) { c.dbgf("sif /dir/small file_acl %d", c.eaBlock("/dir/file2")) }),
		do("ea-freeb", func(c *cx) { c.dbgf("freeb %d", c.eaBlock("/dir/file2")) }),
	}
}

func htreeRootCases() []dcase {
	root := func(c *cx, off int64, v []byte) { c.writeBlock(c.data(htreeDir, 0), off, v) }
	return []dcase{
		do("htree-hash-version", func(c *cx) { root(c, 28, u8(7)) }),
		do("htree-info-length", func(c *cx) { root(c, 29, u8(9)) }),
		do("htree-levels", func(c *cx) { root(c, 30, u8(4)) }),
		do("htree-reserved-zero", func(c *cx) { root(c, 24, le32(1)) }),
		do("htree-limit", func(c *cx) { root(c, 32, le16(5)) }),
		do("htree-count-over-limit", func(c *cx) { root(c, 34, le16(0x7fff)) }),
		do("htree-block-out-of-range", func(c *cx) { root(c, 36, le32(99999)) }),
		do("htree-hash-order", func(c *cx) { root(c, 40, le32(0xfffffff0)) }),
		do("htree-zap-root", func(c *cx) { c.dbgf("zap_block %d", c.data(htreeDir, 0)) }),
		dbgCase("htree-index-fl-on-small-dir", "sif /dir/sub flags 0x81000"),
		dbgCase("htree-unlink-entry", "unlink /dir/bigdir/entry-with-a-long-name-00007"),
		do("htree-leaf-reclen", func(c *cx) { c.writeBlock(c.data(htreeDir, 2), 4, le16(4)) }),
		// 2 GiB: needs large_dir (PR_2_FEATURE_LARGE_DIRS) besides the size fix.
		do("htree-size-2g", func(c *cx) { c.dbgf("sif %s size 2147483648", htreeDir) }),
	}
}

func ext4Cases() []dcase {
	cs := append(commonCases(), extentCases()...)
	cs = append(cs, csumCases()...)
	cs = append(cs, eaCases()...)
	cs = append(cs, htreeRootCases()...)
	return append(cs,
		do("inode-xattr-magic", func(c *cx) {
			c.write(c.inodeOff("/dir/file")+128+32, le32(0))
			c.fixInodeCsum("/dir/file")
		}),
		dbgCase("extra-isize-odd", "sif /dir/file extra_isize 3"),
		dbgCase("extra-isize-too-big", "sif /dir/file extra_isize 200"),
		dbgCase("sb-desc-size-small", "ssv desc_size 32"),
		dbgCase("sb-desc-size-huge", "ssv desc_size 1000"),
		do("bg2-inode-table-on-bitmap", func(c *cx) { c.dbgf("set_bg 2 inode_table %d", c.group(0, "Block bitmap")) }),
		dbgCase("bg3-block-bitmap-zero", "set_bg 3 block_bitmap 0"),
		dbgCase("bg0-inode-uninit", "set_bg 0 flags 1"),
		dbgCase("bg0-itable-unused", "set_bg 0 itable_unused 1000"),
		// Past the group's 1024 inodes: the inode scan takes none of
		// group 0 and pass 2's first unused inode wraps past them all.
		dbgCase("bg0-itable-unused-past-ipg", "set_bg 0 itable_unused 8000"),
		dbgCase("bg3-block-uninit-last", "set_bg 3 flags 2"),
		msgOnly("sb-min-extra-isize", "ssv min_extra_isize 1000"),
		noEffect("noeffect-sb-state-errors", "ssv state 2"),
		do("sb-compat-unknown", func(c *cx) { c.ssvOr("feature_compat", offCompat, 0x80000) }),
		do("extents-feature-cleared", func(c *cx) { c.ssvAndNot("feature_incompat", offIncompat, 0x40) }),
		dbgCase("orphan-inode-links-zero", "sif /dir/file2 links_count 0", "ssv last_orphan 0"),
		noEffect("noeffect-uid", "sif /dir/file uid 1234"),
		noEffect("noeffect-gid", "sif /dir/file gid 1234"),
		noEffect("noeffect-crtime", "sif /dir/file crtime 20190101000000"),
		noEffect("noeffect-file-size-grow", "sif /dir/sparse size 2000000"),
		noEffect("noeffect-projid", "sif /dir/file projid 7"),
		// An inode that fails its checksum makes the library's extent
		// and directory block checksums fail too: they reread the inode
		// (256-byte inodes are not served from pass 1's copy). The extent
		// block of /dir/sparse is then reported; a directory turned socket
		// does not look like a directory (its block fails to read), so
		// it is not made one again.
		do("etb-inode-csum-bad", func(c *cx) { c.flipByte(c.inodeOff("/dir/sparse") + 0x93) }),
		do("dir-socket-csum-bad", func(c *cx) {
			c.dbg("sif /dir/sub mode 0140755")
			c.flipByte(c.inodeOff("/dir/sub") + 0x93)
		}),
	)
}

// flipByte inverts bit 4 of the byte at off (an edit that leaves every
// checksum as it was).
func (c *cx) flipByte(off int64) { c.write(off, []byte{c.read(off, 1)[0] ^ 0x10}) }

func noflexCases() []dcase {
	return []dcase{
		do("bg1-block-bitmap-in-group0", func(c *cx) { c.dbgf("set_bg 1 block_bitmap %d", c.freeBlockGroup0()) }),
		do("bg2-inode-table-overlap", func(c *cx) { c.dbgf("set_bg 2 inode_table %d", c.group(1, "Inode table")) }),
		do("bg1-inode-bitmap-on-sb-backup", func(c *cx) { c.dbgf("set_bg 1 inode_bitmap %d", c.group(1, "Block bitmap")-2) }),
		doClean("noeffect-zap-bg1-block-bitmap", func(c *cx) { c.dbgf("zap_block -p 0xff %d", c.group(1, "Block bitmap")) }),
		dbgCase("extent-start-out-of-range", "sif /dir/file block[5] 99999999"),
		dbgCase("eh-magic", "sif /dir/file block[0] 0x0001f30b"),
		do("etb-zap", func(c *cx) { c.dbgf("zap_block %d", c.etb("/dir/sparse")) }),
		dbgCase("bg1-csum", "set_bg 1 checksum 0x1234"),
	}
}

// freeBlockGroup0 is a free block in group 0 (wrong place for group 1's
// bitmap without flex_bg).
func (c *cx) freeBlockGroup0() uint64 {
	out := testfs.DebugfsRO(c.t, c.img, "ffb 1 1")
	m := ffbRE.FindStringSubmatch(out)
	if m == nil {
		c.t.Fatalf("no free block: %s", out)
	}
	b, _ := strconv.ParseUint(m[1], 10, 64)
	return b
}

func uninitCases() []dcase {
	return []dcase{
		dbgCase("bg1-csum", "set_bg 1 checksum 0x1234"),
		dbgCase("bg0-inode-uninit", "set_bg 0 flags 1"),
		dbgCase("bg0-itable-unused", "set_bg 0 itable_unused 1000"),
		// Past the group's 1024 inodes: the inode scan takes none of
		// group 0 and pass 2's first unused inode wraps past them all.
		dbgCase("bg0-itable-unused-past-ipg", "set_bg 0 itable_unused 8000"),
		dbgCase("bg3-block-uninit-last", "set_bg 3 flags 2"),
		noEffect("noeffect-bg1-flags-all-uninit", "set_bg 1 flags 7"),
		msgOnly("bg0-block-uninit-used", "set_bg 0 flags 2"),
		do("gdt-csum-cleared", func(c *cx) { c.ssvAndNot("feature_ro_compat", offROCompat, 0x10) }),
		dbgCase("extent-start-out-of-range", "sif /dir/file block[5] 99999999"),
		do("etb-magic", func(c *cx) { c.writeBlock(c.etb("/dir/sparse"), 0, le16(0x1234)) }),
		do("ea-refcount", func(c *cx) { c.writeBlock(c.eaBlock("/dir/file2"), 4, le32(7)) }),
		do("htree-hash-version", func(c *cx) { c.writeBlock(c.data(htreeDir, 0), 28, u8(7)) }),
		do("dirent-reclen-zero", func(c *cx) { c.dirent("/dir/sub", 24+4, le16(0)) }),
		noEffect("noeffect-index-fl-cleared", "sif /dir/bigdir flags 0x80000"),
		noEffect("noeffect-generation", "sif /dir/file generation 42"),
	}
}

func bit32Cases() []dcase {
	return []dcase{
		noEffect("noeffect-sb-desc-size-set", "ssv desc_size 64"),
		do("incompat-64bit-set", func(c *cx) { c.ssvOr("feature_incompat", offIncompat, 0x80) }),
		dbgCase("extent-start-hi", "sif /dir/file block[4] 0x00010002"),
		dbgCase("file-acl-hi", "sif /dir/file2 file_acl_hi 1"),
		dbgCase("bg1-csum", "set_bg 1 checksum 0x1234"),
		do("etb-entries-over-max", func(c *cx) { c.writeBlock(c.etb("/dir/sparse"), 2, le16(0xfff0)) }),
	}
}

func ext41kCases() []dcase {
	cs := append(extentCases(), htreeRootCases()...)
	return append(cs,
		do("dirent-reclen-past-block", func(c *cx) { c.dirent("/dir/sub", 12+4, le16(2000)) }),
		// Bytes flipped in the resize inode (inodes 5-8 are the second
		// inode-table block), in i_block[2] and in i_generation: its
		// checksum fails, so check_resize_inode's read does and the
		// re-creation is due after pass 1 even read-only, where it fails.
		do("resize-ino-csum-iblock", func(c *cx) { c.write(c.inodeOff("<7>")+0x30, le32(0xefbeadde)) }),
		do("resize-ino-csum-generation", func(c *cx) { c.write(c.inodeOff("<7>")+0x64, le32(0xefbeadde)) }),
		do("zap-dir-block-ff", func(c *cx) { c.dbgf("zap_block -p 0xff %d", c.data("/dir", 0)) }),
		dbgCase("bg1-block-bitmap-zero", "set_bg 1 block_bitmap 0"),
		dbgCase("sb-blocks-count-big", "ssv blocks_count 99999"),
		dbgCase("sb-first-data-block", "ssv first_data_block 0"),
	)
}

func ino128Cases() []dcase {
	return []dcase{
		dbgCase("eh-magic", "sif /dir/file block[0] 0x0001f30b"),
		do("ea-magic", func(c *cx) { c.writeBlock(c.eaBlock("/dir/file"), 0, le32(0)) }),
		do("ea-value-size", func(c *cx) { c.writeBlock(c.eaBlock("/dir/file"), 32+8, le32(0x10000)) }),
		dbgCase("sb-inode-size", "ssv inode_size 256"),
		dbgCase("inode-csum", "sif /dir/small checksum 0x1234"),
		noEffect("noeffect-uid", "sif /dir/file uid 1234"),
	}
}

func bigallocCases() []dcase {
	return []dcase{
		do("extent-start-misaligned", func(c *cx) { c.dbgf("sif /dir/file block[5] %d", c.data("/dir/file", 0)+1) }),
		do("extent-start-duplicate", func(c *cx) { c.dbgf("sif /dir/file block[5] %d", c.data("/dir/big", 0)) }),
		dbgCase("extent-start-out-of-range", "sif /dir/file block[5] 99999999"),
		do("setb-free-cluster", func(c *cx) { c.dbgf("setb %d", c.freeBlock()) }),
		dbgCase("sb-cluster-size", "ssv log_cluster_size 0"),
		dbgCase("sb-clusters-per-group", "ssv clusters_per_group 1000"),
		dbgCase("bg0-free-blocks-zero", "set_bg 0 free_blocks_count 0"),
		do("etb-zap", func(c *cx) { c.dbgf("zap_block %d", c.etb("/dir/sparse")) }),
		// The first extent's ee_start and the second's ee_block changed,
		// and the block's checksum with them: pass 1's message about the
		// checksum names the misaligned cluster's blocks, and pass 1B's
		// walk stops at the step down into the block.
		do("etb-flip-first-pblk", func(c *cx) { c.flip(c.etb("/dir/sparse"), 23, 2) }),
		dbgCase("file-i-blocks-small", "sif /dir/file blocks 8"),
		do("ea-refcount", func(c *cx) { c.writeBlock(c.eaBlock("/dir/file2"), 4, le32(7)) }),
		do("bigalloc-cleared", func(c *cx) { c.ssvAndNot("feature_ro_compat", offROCompat, 0x200) }),
		// The journal is dropped and re-created in whole clusters.
		dbgCase("journal-clri", "clri <8>", "ssv jnl_backup_type 0"),
		noEffect("noeffect-uid", "sif /dir/file uid 1234"),
	}
}

func inlineCases() []dcase {
	return []dcase{
		// Two restarts: pass 1 clears a file whose first tree block
		// cannot be fixed (its tree queued for pass 1E, which runs after
		// the first restart), then pass 3 unlinks an inline /lost+found.
		// Pass 1E's queue is emptied when it runs, so the run after the
		// second restart has no pass 1E.
		do("etb-flip-first-lblk-lpf-inline", func(c *cx) {
			c.dbg("rmdir /lost+found", "mkdir /lost+found")
			c.flip(c.etb("/dir/sparse"), 14, 2)
		}),
		noEffect("noeffect-inline-size-too-big", "sif /dir/small size 5000"),
		dbgCase("inline-fl-cleared", "sif /dir/small flags 0"),
		dbgCase("inline-ea-removed", "ea_rm /dir/small system.data"),
		dbgCase("inline-dir-size", "sif /inldir size 3"),
		do("inline-dir-dirent-inode", func(c *cx) { c.dbgf("sif /inldir block[1] %d", 99999999) }),
		dbgCase("inline-dir-parent", "sif /inldir block[0] 99999999"),
		dbgCase("inline-fl-on-block-file", "sif /dir/big flags 0x10080000"),
		dbgCase("inline-feature-cleared-file", "sif /dir/tiny flags 0x80000"),
		do("inline-feature-cleared", func(c *cx) { c.ssvAndNot("feature_incompat", offIncompat, 0x8000) }),
		dbgCase("lpf-inline", "sif /lost+found flags 0x10000000"),
		dbgCase("inline-dir-links", "sif /inldir links_count 9"),
		// Pass 1C finds the names of files sharing blocks in inline
		// directories too (the library walks their entries).
		do("inline-dir-file-dup-blocks", func(c *cx) { c.dbgf("sif /inldir/z block[5] %d", c.data("/dir/file2", 0)) }),
		// ext2fs_inline_data_size fails on the directory's checksum:
		// check_dir_block skips the directory (its DIRENT_ABORT does not
		// end the walk), so its entries are not counted.
		dbgCase("inline-dir-csum", "sif /inldir checksum 0x1234"),
		// system.data sizes that are not a multiple of 4 (PR_2_BAD_INLINE_DIR_SIZE):
		// cut back to i_block, rounded up (the rest salvaged), and rounded
		// up with no room left in the inode (4 bytes less).
		dbgCase("inline-dir-ea-size-65", "ea_set /inldir system.data xxxxx"),
		dbgCase("inline-dir-ea-size-73", "ea_set /inldir system.data xxxxxxxxxxxxx"),
		dbgCase("inline-dir-ea-size-125", "ea_set /inldir system.data "+strings.Repeat("x", 65)),
		// The same with the directory's other attributes in an EA block,
		// which the library's rewrite writes back too.
		dbgCase("inline-dir-ea-block-size-65", "ea_set /inldir user.big "+strings.Repeat("v", 300), "ea_set /inldir system.data xxxxx"),
		dbgCase("inline-dir-ea-block-size-73", "ea_set /inldir user.big "+strings.Repeat("v", 300), "ea_set /inldir system.data xxxxxxxxxxxxx"),
		noEffect("noeffect-uid", "sif /dir/tiny uid 1234"),
		// The library reads every attribute before it looks system.data
		// up: a bad entry hash (it then looks for an old Lustre EA inode,
		// inode 0) and an i_extra_isize that is not a multiple of 4 are
		// errors pass 1 does not expect, and e2fsck aborts.
		do("inline-ea-hash-bad", func(c *cx) { c.write(c.ibodyEntry("/dir/small")+12, le32(0x100)) }),
		do("inline-extra-isize-odd", func(c *cx) { c.write(c.inodeOff("/dir/small")+128, le16(33)) }),
		// A name padded with NULs still names system.data (a C string).
		do("inline-ea-name-nul", func(c *cx) { c.write(c.ibodyEntry("/dir/small"), u8(6)) }),
		// An empty value may have any offset: the end marker after
		// system.data becomes an empty attribute far out, which neither
		// the library nor check_ea_in_inode rejects (only the inode
		// checksum fails).
		do("inline-ea-empty-value-far-offset", func(c *cx) { c.write(c.ibodyEntry("/dir/small")+20+3, u8(0x86)) }),
	}
}

// ibodyEntry is the offset of the first in-inode xattr entry of p.
func (c *cx) ibodyEntry(p string) int64 {
	off := c.inodeOff(p)
	extra := int64(binary.LittleEndian.Uint16(c.read(off+128, 2)))
	return off + 128 + extra + 4
}

func metabgCases() []dcase {
	return []dcase{
		dbgCase("sb-first-meta-bg", "ssv first_meta_bg 1000"),
		dbgCase("bg5-block-bitmap-zero", "set_bg 5 block_bitmap 0"),
		dbgCase("bg9-csum", "set_bg 9 checksum 0x1234"),
		dbgCase("bg15-free-inodes", "set_bg 15 free_inodes_count 0"),
		doMsgOnly("resize-inode-feature-set", func(c *cx) { c.ssvOr("feature_compat", offCompat, 0x10) }),
		do("meta-bg-cleared", func(c *cx) { c.ssvAndNot("feature_incompat", offIncompat, 0x10) }),
		msgOnly("sb-reserved-gdt", "ssv reserved_gdt_blocks 5"),
		do("zap-group1-gdt-primary", func(c *cx) { c.dbgf("zap_block %d", uint64(2)) }),
		do("extent-start-on-meta-gdt", func(c *cx) { c.dbgf("sif /dir/file block[5] %d", uint64(1024*1+1+1)) }),
	}
}

func sparse2Cases() []dcase {
	return []dcase{
		dbgCase("backup-bgs0-out-of-range", "ssv backup_bgs[0] 999"),
		dbgCase("backup-bgs1-moved", "ssv backup_bgs[1] 3"),
		dbgCase("backup-bgs-zero", "ssv backup_bgs[0] 0"),
		do("sparse2-cleared", func(c *cx) { c.ssvAndNot("feature_compat", offCompat, 0x200) }),
		do("extent-on-backup-sb", func(c *cx) { c.dbgf("sif /dir/file block[5] %d", uint64(1024+1)) }),
		dbgCase("bg1-free-blocks", "set_bg 1 free_blocks_count 0"),
		noEffect("noeffect-uid", "sif /dir/file uid 1234"),
	}
}

func largedirCases() []dcase {
	return append(htreeRootCases(),
		doClean("noeffect-largedir-cleared", func(c *cx) { c.ssvAndNot("feature_incompat", offIncompat, 0x4000) }),
		do("htree-levels-3", func(c *cx) { c.writeBlock(c.data(htreeDir, 0), 30, u8(3)) }),
	)
}

// htreeCases use a 5000-entry directory with 1k blocks: a two-level htree.
func htreeCases() []dcase {
	return append(htreeRootCases(),
		do("htree-zap-index-node", func(c *cx) { c.dbgf("zap_block %d", c.data(htreeDir, 1)) }),
		do("htree-node-count", func(c *cx) { c.writeBlock(c.data(htreeDir, 1), 8+2, le16(0x7fff)) }),
		do("htree-node-limit", func(c *cx) { c.writeBlock(c.data(htreeDir, 1), 8, le16(3)) }),
		do("htree-node-hash-order", func(c *cx) { c.writeBlock(c.data(htreeDir, 1), 8+8, le32(0xfffffff0)) }),
		do("htree-leaf-zap", func(c *cx) { c.dbgf("zap_block -p 0 %d", c.data(htreeDir, 40)) }),
		do("htree-leaf-dup-name", func(c *cx) {
			b := c.data(htreeDir, 40)
			first := c.read(c.blockOff(b)+8, 28)
			c.writeBlock(b, int64(8+roundUp4(8+28)), first)
		}),
		dbgCase("htree-dir-size-small", "sif /dir/bigdir size 4096"),
		dbgCase("htree-dir-links", "sif /dir/bigdir links_count 5"),
		noEffect("noeffect-dir-atime", "sif /dir/bigdir atime 20190101000000"),
	)
}

func roundUp4(n int) int { return (n + 3) &^ 3 }

func quotaCases() []dcase {
	return []dcase{
		dbgCase("usr-quota-clri", "clri <3>"),
		dbgCase("grp-quota-mode-dir", "sif <4> mode 040755"),
		dbgCase("usr-quota-inum-zero", "ssv usr_quota_inum 0"),
		dbgCase("quota-uid-changed", "sif /dir/big uid 1234"),
		dbgCase("quota-gid-changed", "sif /dir/big gid 1234"),
		dbgCase("quota-projid-changed", "sif /dir/big projid 55"),
		dbgCase("quota-size-blocks", "sif /dir/big blocks 100"),
		do("zap-quota-file", func(c *cx) { c.dbgf("zap_block %d", c.data("<3>", 0)) }),
		do("quota-feature-cleared", func(c *cx) { c.ssvAndNot("feature_ro_compat", offROCompat, 0x100) }),
		noEffect("noeffect-mtime", "sif /dir/big mtime 20190101000000"),
	}
}

func eainodeCases() []dcase {
	// The EA inode is referenced from the first in-inode xattr entry of
	// /dir/file3: i_extra_isize is 32, then the 4-byte magic, then
	// e_name_len, e_name_index, e_value_offs and e_value_inum.
	eaIno := func(c *cx) string {
		v := binary.LittleEndian.Uint32(c.read(c.inodeOff("/dir/file3")+128+32+4+4, 4))
		if v == 0 {
			c.t.Fatal("/dir/file3 has no EA inode")
		}
		return fmt.Sprintf("<%d>", v)
	}
	return []dcase{
		do("ea-inode-clri", func(c *cx) { c.dbg("clri " + eaIno(c)) }),
		do("ea-inode-flag-cleared", func(c *cx) { c.dbg("sif " + eaIno(c) + " flags 0x80000") }),
		do("ea-inode-hash", func(c *cx) { c.dbg("sif " + eaIno(c) + " atime 12345") }),
		do("ea-inode-refcount", func(c *cx) { c.dbg("sif " + eaIno(c) + " ctime 12345") }),
		doClean("noeffect-ea-inode-size", func(c *cx) { c.dbg("sif " + eaIno(c) + " size 5") }),
		do("ea-inode-links", func(c *cx) { c.dbg("sif " + eaIno(c) + " links_count 3") }),
		doClean("noeffect-ea-inode-linked-in-dir", func(c *cx) { c.dbg("link " + eaIno(c) + " /dir/eaino") }),
		doClean("noeffect-ea-inode-feature-cleared", func(c *cx) { c.ssvAndNot("feature_incompat", offIncompat, 0x400) }),
		do("ea-refcount", func(c *cx) { c.writeBlock(c.eaBlock("/dir/file2"), 4, le32(7)) }),
		noEffect("noeffect-owner-uid", "sif /dir/file3 uid 1234"),
	}
}

func orphanCases() []dcase {
	oino := func(c *cx) uint32 {
		v, err := strconv.ParseUint(c.sb()["Orphan file inode"], 10, 32)
		if err != nil || v == 0 {
			v = 12
		}
		return uint32(v)
	}
	return []dcase{
		do("orphan-file-clri", func(c *cx) { c.dbgf("clri <%d>", oino(c)) }),
		dbgCase("orphan-file-inum-zero", "ssv orphan_file_inum 0"),
		do("orphan-file-zap", func(c *cx) { c.dbgf("zap_block %d", c.data(fmt.Sprintf("<%d>", oino(c)), 0)) }),
		do("orphan-file-tail-magic", func(c *cx) {
			c.writeBlock(c.data(fmt.Sprintf("<%d>", oino(c)), 0), c.bs()-8, le32(0))
		}),
		do("orphan-file-entry", func(c *cx) {
			c.writeBlock(c.data(fmt.Sprintf("<%d>", oino(c)), 0), 0, le32(c.ino("/dir/small")))
		}),
		do("orphan-present-set", func(c *cx) { c.ssvOr("feature_ro_compat", offROCompat, 0x10000) }),
		do("orphan-file-feature-cleared", func(c *cx) { c.ssvAndNot("feature_compat", offCompat, 0x1000) }),
		do("orphan-file-size", func(c *cx) { c.dbgf("sif <%d> size 100", oino(c)) }),
		noEffect("noeffect-uid", "sif /dir/file uid 1234"),
	}
}

// ---- Multi-mount protection (mmp) ----

// e2fsprogs' MMP start protocol sleeps min(2·interval+1, interval+60)
// seconds, 11 at least, in every writable open of an mmp filesystem: each
// e2fsck -y or -p, each debugfs -w, the e2fsck -fyD that builds the base
// image. The tests of this package therefore run the e2fsprogs tools with
// a sleep(3) that returns at once (LD_PRELOAD of a two-line library, built
// with the C compiler when there is one; without it the tests are only
// slower) and gofsck with GOFSCK_TEST_MMP_NO_SLEEP=1, which skips its
// waits and nothing else. Nothing else in e2fsck sleeps on these paths.
// cmd/gofsck's TestMMPWaits runs both with their real waits.
func init() {
	os.Setenv("GOFSCK_TEST_MMP_NO_SLEEP", "1")
	if so := noSleepLib(); so != "" {
		pre := so
		if old := os.Getenv("LD_PRELOAD"); old != "" {
			pre = old + ":" + so
		}
		os.Setenv("LD_PRELOAD", pre)
	}
}

// noSleepLib returns the path of a shared library whose sleep(3) returns
// at once, building it on first use (shared by concurrent test binaries:
// it is renamed into place); "" when it cannot be built.
func noSleepLib() string {
	so := filepath.Join(os.TempDir(), fmt.Sprintf("gofsck-test-nosleep-%d.so", os.Getuid()))
	if _, err := os.Stat(so); err == nil {
		return so
	}
	cc, err := exec.LookPath("cc")
	if err != nil {
		return ""
	}
	dir, err := os.MkdirTemp("", "nosleep-")
	if err != nil {
		return ""
	}
	defer os.RemoveAll(dir)
	src := filepath.Join(dir, "nosleep.c")
	if os.WriteFile(src, []byte("unsigned int sleep(unsigned int s) { (void)s; return 0; }\n"), 0o644) != nil {
		return ""
	}
	out := filepath.Join(dir, "nosleep.so")
	if exec.Command(cc, "-shared", "-fPIC", "-O2", "-o", out, src).Run() != nil {
		return ""
	}
	if os.Rename(out, so) != nil {
		return ""
	}
	return so
}

// mmpEdit changes the MMP structure of the image with f and, unless
// keepCsum, recomputes its checksum (metadata_csum), so that the case
// tests the field and not the checksum.
func (c *cx) mmpEdit(keepCsum bool, f func(m ondisk.MMP)) {
	c.t.Helper()
	sb, err := ondisk.NewSuperblock(c.read(ondisk.SuperblockOffset, ondisk.SuperblockSize))
	if err != nil {
		c.t.Fatal(err)
	}
	if !sb.HasIncompat(ondisk.IncompatMMP) || sb.MMPBlock() == 0 {
		c.t.Fatal("the image has no MMP block")
	}
	off := c.blockOff(sb.MMPBlock())
	m, err := ondisk.NewMMP(c.read(off, ondisk.MMPSize))
	if err != nil {
		c.t.Fatal(err)
	}
	f(m)
	if !keepCsum && sb.HasRoCompat(ondisk.RoCompatMetadataCsum) {
		m.SetChecksum(sb.CsumSeed())
	}
	c.write(off, m)
}

// mmpCases corrupt the MMP block or its superblock fields.
func mmpCases() []dcase {
	return []dcase{
		do("mmp-bad-magic", func(c *cx) { c.mmpEdit(false, func(m ondisk.MMP) { m.SetMagic(0x12345678) }) }),
		do("mmp-bad-magic-and-csum", func(c *cx) { c.mmpEdit(true, func(m ondisk.MMP) { m.SetMagic(0) }) }),
		do("mmp-bad-csum", func(c *cx) { c.mmpEdit(true, func(m ondisk.MMP) { m.PutNodeName([]byte("elsewhere")) }) }),
		dbgCase("mmp-block-beyond-end", "ssv mmp_block 99999999"),
		dbgCase("mmp-block-zero", "ssv mmp_block 0"),
		do("mmp-seq-fsck", func(c *cx) { c.mmpEdit(false, func(m ondisk.MMP) { m.SetSeq(ondisk.MMPSeqFsck) }) }),
		do("mmp-seq-unknown", func(c *cx) { c.mmpEdit(false, func(m ondisk.MMP) { m.SetSeq(0xF0000000) }) }),
		// A node's sequence left by a crash: waited out, then taken over.
		doClean("noeffect-mmp-seq-in-use", func(c *cx) { c.mmpEdit(false, func(m ondisk.MMP) { m.SetSeq(0x1234) }) }),
		// Long intervals: e2fsck announces the wait.
		msgOnly("mmp-interval-long", "ssv mmp_interval 300"),
		doMsgOnly("mmp-block-interval-huge", func(c *cx) {
			c.mmpEdit(false, func(m ondisk.MMP) { m.SetCheckInterval(65535) })
		}),
		doMsgOnly("mmp-seq-in-use-interval-huge", func(c *cx) {
			c.mmpEdit(false, func(m ondisk.MMP) { m.SetSeq(77); m.SetCheckInterval(65535) })
		}),
	}
}

// --- casefold (helper: casefold feature) ---

// casefoldPrefixes are the name stems of /cf: ASCII, accented (precomposed
// and decomposed), Greek, Hangul, German sharp s, a title-case digraph, a
// ligature, Cherokee (which folds to upper case) and an ignorable
// character. No two names of /cf fold alike.
var casefoldPrefixes = []string{"File", "Ünïcødé", "ΣΊΣΥΦΟΣ", "한국어", "straße", "e\u0301te", "Ǆemal", "ﬃx", "Ꭰᏸ", "x\u200by"}

// casefoldSpec is the casefold feature set: the standard tree plus /cf, a
// casefolded directory of 600 names that e2fsck -D indexes with folded
// hashes, and /cf/sub, a small casefolded linear directory. metadata_csum
// is off so that cases can rewrite names in place.
func casefoldSpec(extra []string) testfs.Spec {
	return testfs.Spec{Size: 16 * mib, FSType: "ext4", BlockSize: 4096, Features: "casefold,^metadata_csum", ExtraArgs: extra,
		Populate: stdTree(400, func(tr *testfs.Tree) {
			for i := range 600 {
				tr.File(fmt.Sprintf("cf/%s-%04d", casefoldPrefixes[i%len(casefoldPrefixes)], i), 0)
			}
			tr.File("cf/sub/Alpha", 0)
			tr.File("cf/sub/beta", 0)
			tr.File("cf/sub/Gamma", 0)
		}),
		Debugfs:      []string{"sif /cf flags 0x40080000", "sif /cf/sub flags 0x40080000"},
		OptimizeDirs: true,
	}
}

// cfEnt is a directory entry found in an image.
type cfEnt struct {
	blk   uint64 // physical block
	lblk  int    // its index in the directory
	off   int64  // offset of the entry in the block
	first bool   // the first live entry of a leaf block
	name  []byte
}

// cfEntries lists the live entries of directory p, block by block (the
// htree root's '.' and '..' included).
func (c *cx) cfEntries(p string) []cfEnt {
	var out []cfEnt
	bs := c.bs()
	for i, b := range c.blocks(p).Data {
		buf := c.read(c.blockOff(b), int(bs))
		first := true
		for off := int64(0); off+8 <= bs; {
			rl := int64(binary.LittleEndian.Uint16(buf[off+4:]))
			nl := int64(buf[off+6])
			if rl < 8 || off+rl > bs || 8+nl > rl {
				break
			}
			if binary.LittleEndian.Uint32(buf[off:]) != 0 {
				out = append(out, cfEnt{blk: b, lblk: i, off: off, first: first, name: append([]byte(nil), buf[off+8:off+8+nl]...)})
				first = false
			}
			off += rl
		}
	}
	return out
}

// cfRename rewrites the name of entry e (same length or shorter).
func (c *cx) cfRename(e cfEnt, name []byte) {
	c.t.Helper()
	if len(name) > len(e.name)+3-(len(e.name)+3)%4 {
		c.t.Fatalf("name %q does not fit in the entry of %q", name, e.name)
	}
	c.writeBlock(e.blk, e.off+6, []byte{byte(len(name))})
	c.writeBlock(e.blk, e.off+8, name)
}

// cfFind returns the entry of p named name.
func (c *cx) cfFind(p, name string) cfEnt {
	c.t.Helper()
	for _, e := range c.cfEntries(p) {
		if string(e.name) == name {
			return e
		}
	}
	c.t.Fatalf("%s has no entry %q", p, name)
	return cfEnt{}
}

// cfFiles returns the /cf entries named File-NNNN in leaf blocks.
func (c *cx) cfFiles() []cfEnt {
	var out []cfEnt
	for _, e := range c.cfEntries("/cf") {
		if e.lblk > 0 && strings.HasPrefix(string(e.name), "File-") {
			out = append(out, e)
		}
	}
	if len(out) < 2 {
		c.t.Fatalf("/cf has %d File- entries in its leaves", len(out))
	}
	return out
}

// cfStrict sets EXT4_ENC_STRICT_MODE_FL in s_encoding_flags (debugfs
// cannot; without metadata_csum the superblock has no checksum).
func (c *cx) cfStrict() { c.write(1024+0x27E, le16(1)) }

// cfBadName renames a File- entry that is not the first of its leaf
// block to a name with a byte that is not UTF-8.
func (c *cx) cfBadName() {
	for _, e := range c.cfFiles() {
		if !e.first {
			c.cfRename(e, append([]byte("Fil\xff"), e.name[4:]...))
			return
		}
	}
	c.t.Fatal("no File- entry after the first of a block")
}

// cfSameBlockDup gives the second File- entry of a leaf block holding two
// the first one's name in upper case: the same folded name and hash.
func (c *cx) cfSameBlockDup() {
	fs := c.cfFiles()
	for i := 1; i < len(fs); i++ {
		if fs[i].blk == fs[i-1].blk {
			c.cfRename(fs[i], []byte(strings.ToUpper(string(fs[i-1].name))))
			return
		}
	}
	c.t.Fatal("no leaf block with two File- entries")
}

// cfOtherBlockDup gives a File- entry the name of one in another leaf
// block, in upper case: its folded hash lies outside its block's range.
func (c *cx) cfOtherBlockDup() {
	fs := c.cfFiles()
	for i := 1; i < len(fs); i++ {
		if fs[i].blk != fs[0].blk {
			c.cfRename(fs[i], []byte(strings.ToUpper(string(fs[0].name))))
			return
		}
	}
	c.t.Fatal("all File- entries in one leaf block")
}

// casefoldCases corrupt casefolded directories (names, hashes, flags) and
// the encoding fields. Names differing only in case are duplicates in
// pass 3A always, in pass 2 only in strict mode; invalid UTF-8 is reported
// only in strict mode.
func casefoldCases() []dcase {
	cfRoot := func(c *cx, off int64, v []byte) { c.writeBlock(c.data("/cf", 0), off, v) }
	sub := func(c *cx, old, name string) { c.cfRename(c.cfFind("/cf/sub", old), []byte(name)) }
	return []dcase{
		dbgCase("cf-flag-cleared", "sif /cf flags 0x81000"),
		dbgCase("cf-flag-on-file", "sif /cf/File-0050 flags 0x40080000"),
		do("cf-feature-cleared", func(c *cx) { c.ssvAndNot("feature_incompat", offIncompat, 0x20000) }),
		dbgCase("cf-encoding-unknown", "ssv encoding 7"),
		doClean("noeffect-cf-strict", func(c *cx) { c.cfStrict() }),
		do("cf-htree-hash-order", func(c *cx) { cfRoot(c, 40+8, le32(0xfffffff0)) }),
		dbgCase("cf-htree-unlink", "unlink /cf/Ünïcødé-0001"),
		// Names differing only in case.
		doClean("noeffect-cf-case-dup-linear", func(c *cx) { sub(c, "Gamma", "ALPHA") }),
		do("cf-case-dup-linear-strict", func(c *cx) { sub(c, "Gamma", "ALPHA"); c.cfStrict() }),
		doClean("noeffect-cf-case-dup-same-block", func(c *cx) { c.cfSameBlockDup() }),
		do("cf-case-dup-same-block-strict", func(c *cx) { c.cfSameBlockDup(); c.cfStrict() }),
		do("cf-case-dup-other-block", func(c *cx) { c.cfOtherBlockDup() }),
		do("cf-case-dup-other-block-strict", func(c *cx) { c.cfOtherBlockDup(); c.cfStrict() }),
		// Invalid UTF-8.
		doClean("noeffect-cf-bad-utf8-linear", func(c *cx) { sub(c, "beta", "b\xffta") }),
		do("cf-bad-utf8-linear-strict", func(c *cx) { sub(c, "beta", "b\xffta"); c.cfStrict() }),
		do("cf-lead-continuation-strict", func(c *cx) { sub(c, "beta", "\x80eta"); c.cfStrict() }),
		doClean("noeffect-cf-bad-utf8-htree", func(c *cx) { c.cfBadName() }),
		do("cf-bad-utf8-htree-strict", func(c *cx) { c.cfBadName(); c.cfStrict() }),
		// The rebuild of a directory holding a name libext2fs cannot fold
		// fails.
		do("cf-bad-utf8-htree-rebuild", func(c *cx) { c.cfBadName(); cfRoot(c, 40+8, le32(0xfffffff0)) }),
		noEffect("noeffect-cf-uid", "sif /cf uid 1234"),
	}
}

// ---- -D (optimize directories) ----

// TestOptimizeDirsDifferential runs the corruptions every feature set
// shares with gofsck -fyD and e2fsck -fyD on several feature sets: the
// transcripts, exit statuses and repaired images must be the same (except
// the superblock fields each program stamps for itself).
func TestOptimizeDirsDifferential(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	testfs.GofsckPath(t)
	sets := map[string]bool{"ext2": true, "ext3": true, "ext4": true, "ext4-1k": true, "htree": true,
		"largedir": true, "inline": true, "bigalloc": true, "metabg": true, "ext4-uninit": true,
		"casefold": true, "mmp": true, "quota": true, "orphan": true, "eainode": true, "ext4-128": true}
	for _, d := range fsDefs() {
		if !sets[d.name] {
			continue
		}
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			base := testfs.MkImage(t, d.spec)
			for _, dc := range generic(d.name) {
				img := testfs.CopyImage(t, base)
				dc.do(&cx{t: t, img: img})
				if why := optimizeBoth(t, img); why != "" {
					t.Errorf("%s: %s", dc.name, why)
				}
			}
		})
	}
}

// optimizeBoth runs gofsck -fyD and e2fsck -fyD on copies of img and
// returns how they disagree ("" when they do not). Both run with the
// clock stopped at the same time (testfs.ClockAt): the rebuilt
// directories' inodes are stamped with it, and two runs on a busy
// machine can fall seconds apart.
func optimizeBoth(t *testing.T, img string) string {
	gimg, eimg := testfs.CopyImage(t, img), testfs.CopyImage(t, img)
	now := time.Now().Unix()
	gout, gexit := testfs.GofsckAt(t, now, gimg, "-fyD")
	eout, eexit := testfs.E2fsckInPlaceAt(t, now, eimg, "-fyD")
	if !strings.Contains(eout, "Pass 3A: Optimizing directories") {
		return "e2fsck -fyD did not optimize:\n" + eout
	}
	g, e := transcript(gout, gimg), transcript(eout, eimg)
	if gexit != eexit || g != e {
		return fmt.Sprintf("-fyD exit %d, e2fsck %d; %s\n--- e2fsck:\n%s--- gofsck:\n%s",
			gexit, eexit, firstDiffLine(e, g), e, g)
	}
	if off, ok := sameRepairedBytes(t, gimg, eimg); !ok {
		return fmt.Sprintf("-fyD images differ first at byte %d", off)
	}
	return ""
}

// sameRepairedBytes compares two repaired images byte for byte except the
// primary superblock's s_wtime, s_lastcheck, s_kbytes_written, the high
// bytes of those times and s_checksum, which each program sets from its
// own clock and counters. It returns the first differing offset.
func sameRepairedBytes(t *testing.T, a, b string) (int, bool) {
	t.Helper()
	da, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	db, err := os.ReadFile(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(da) != len(db) {
		return min(len(da), len(db)), false
	}
	testfs.MaskSuperblockStamps(da[ondisk.SuperblockOffset:])
	testfs.MaskSuperblockStamps(db[ondisk.SuperblockOffset:])
	// The MMP block's time, device name and checksum (cmd/gofsck's
	// TestMMPWaits checks the rest of it).
	if sb, err := ondisk.NewSuperblock(da[ondisk.SuperblockOffset:]); err == nil && sb.HasIncompat(ondisk.IncompatMMP) {
		if off := int(sb.MMPBlock()) * sb.BlockSize(); off > 0 && off+ondisk.MMPSize <= len(da) {
			for _, r := range [][2]int{{0x08, 8}, {0x50, ondisk.MMPBdevNameLen}, {0x3FC, 4}} {
				clear(da[off+r[0] : off+r[0]+r[1]])
				clear(db[off+r[0] : off+r[0]+r[1]])
			}
		}
	}
	for i := range da {
		if da[i] != db[i] {
			return i, false
		}
	}
	return 0, true
}

// TestMMPJournalRecovery: a filesystem with mmp whose journal needs
// recovery (e2fsprogs' j_recover_csum2_64bit with an MMP block added) is
// recovered and repaired by gofsck -fy and -p as by e2fsck: the same
// transcript and exit status, the same bytes except the self-stamped
// superblock fields and the MMP block's time, device name and checksum,
// and the clean sequence at the end.
func TestMMPJournalRecovery(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	testfs.GofsckPath(t)
	img, _ := corpusImage(t, filepath.Join(corpusDir(t), "j_recover_csum2_64bit"), t.TempDir())
	c := &cx{t: t, img: img}
	// A block the journal does not touch, marked in use, as mke2fs
	// allocates the MMP block.
	const blk = 60000
	c.dbg(fmt.Sprintf("setb %d", blk), fmt.Sprintf("ssv mmp_block %d", blk), "ssv mmp_interval 5", "feature mmp")
	m := ondisk.MMP(make([]byte, ondisk.MMPSize))
	m.SetMagic(ondisk.MMPMagic)
	m.SetSeq(ondisk.MMPSeqClean)
	m.SetCheckInterval(5)
	c.write(c.blockOff(blk), m)
	c.mmpEdit(false, func(ondisk.MMP) {}) // the checksum
	if !strings.Contains(c.sb()["Filesystem features"], "needs_recovery") {
		t.Fatal("the image does not need recovery")
	}
	for _, mode := range []string{"-fy", "-p"} {
		gimg, eimg := testfs.CopyImage(t, img), testfs.CopyImage(t, img)
		gout, gexit := testfs.Gofsck(t, gimg, mode)
		eout, eexit := testfs.E2fsckInPlace(t, eimg, mode)
		if g, e := transcript(gout, gimg), transcript(eout, eimg); g != e || gexit != eexit {
			t.Errorf("%s: exit %d, e2fsck %d; %s\n--- e2fsck:\n%s--- gofsck:\n%s", mode, gexit, eexit, firstDiffLine(e, g), e, g)
			continue
		}
		g := &cx{t: t, img: gimg}
		g.mmpEdit(true, func(m ondisk.MMP) {
			if m.Seq() != ondisk.MMPSeqClean {
				t.Errorf("%s: MMP sequence %#x after the run, want clean", mode, m.Seq())
			}
		})
		// The recovery writes the backup superblocks, with each
		// program's s_wtime, s_kbytes_written and the checksum over
		// them: the two runs may fall in different seconds.
		maskBackupStamps(t, gimg, 1024)
		maskBackupStamps(t, eimg, 1024)
		if off, ok := sameRepairedBytes(t, gimg, eimg); !ok {
			t.Errorf("%s: images differ first at byte %d", mode, off)
		}
	}
}

// maskBackupStamps zeroes the self-stamped fields (s_wtime, s_lastcheck,
// s_kbytes_written, s_checksum: testfs.MaskSuperblockStamps) of every
// backup superblock of img (a block of bs bytes starting with the ext2
// magic at its place), so that images written by two programs, in two
// different seconds, compare.
func maskBackupStamps(t *testing.T, img string, bs int) {
	t.Helper()
	data, err := os.ReadFile(img)
	if err != nil {
		t.Fatal(err)
	}
	for off := 2 * bs; off+ondisk.SuperblockSize <= len(data); off += bs {
		if binary.LittleEndian.Uint16(data[off+0x38:]) == ondisk.Magic {
			testfs.MaskSuperblockStamps(data[off:])
		}
	}
	if err := os.WriteFile(img, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// rev0Cases set feature flags on a revision 0 filesystem: a writable
// e2fsck asks to make it revision 1 (PR_0_FS_REV_LEVEL), -n does not.
func rev0Cases() []dcase {
	return []dcase{
		doClean("rev0-compat-dir-index", func(c *cx) { c.ssvOr("feature_compat", offCompat, 0x20) }),
		doClean("rev0-ro-compat-large-file", func(c *cx) { c.ssvOr("feature_ro_compat", offROCompat, 0x2) }),
		doClean("rev0-incompat-filetype", func(c *cx) { c.ssvOr("feature_incompat", offIncompat, 0x2) }),
		// Two groups: group 1 has its backup with sparse_super too.
		doClean("rev0-ro-compat-sparse-super", func(c *cx) { c.ssvOr("feature_ro_compat", offROCompat, 0x1) }),
		// resize_inode without reserved GDT blocks: the resize inode is
		// invalid and re-created.
		doMsgOnly("rev0-compat-resize-inode", func(c *cx) { c.ssvOr("feature_compat", offCompat, 0x10) }),
		// Written raw: no debugfs, the write time unchanged.
		doClean("rev0-raw-compat-ext-attr", func(c *cx) { c.write(1024+offCompat, le32(c.sbField(offCompat)|0x8)) }),
	}
}
