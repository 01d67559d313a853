package test

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"gofsck/internal/blockdev"
	"gofsck/internal/fs"
	"gofsck/internal/ondisk"
	"gofsck/internal/testfs"
)

// badBlocksCases damage the bad-block inode (inode 1): blocks outside the
// filesystem, mapping blocks outside it or colliding with metadata, and
// listed blocks that are group metadata (primary and backup descriptors
// and superblocks, bitmaps, which are relocated, inode-table blocks,
// including the one holding inode 1 itself) or file data.
func badBlocksCases() []dcase {
	// list maps the given blocks as inode 1's first data blocks.
	list := func(c *cx, blocks ...uint64) {
		for i, b := range blocks {
			c.dbgf("sif <1> block[%d] %d", i, b)
		}
	}
	firstData := func(c *cx) uint64 {
		v, _ := strconv.ParseUint(c.sb()["First block"], 10, 64)
		return v
	}
	return []dcase{
		dbgCase("bb-illegal-block", "sif <1> block[3] 99999998"),
		dbgCase("bb-illegal-ind", "sif <1> block[IND] 99999999", "sif <1> block[1] 99999998"),
		dbgCase("bb-illegal-dind", "sif <1> block[DIND] 99999997"),
		do("bb-illegal-ind-then-dind", func(c *cx) {
			// The failed indirect block's error is overwritten by the
			// double indirect block read after it, which maps an illegal
			// block numbered as if the indirect block had mapped none.
			b := c.freeBlock()
			c.writeBlock(b, 8, le32(uint32(b+1)))
			c.writeBlock(b+1, 20, le32(99999990))
			c.writeBlock(b+1, 24, le32(uint32(b+2)))
			c.dbgf("sif <1> block[DIND] %d", b)
			c.dbg("sif <1> block[IND] 99999999")
		}),
		do("bb-ind-is-metadata", func(c *cx) { c.dbgf("sif <1> block[IND] %d", c.group(0, "Inode bitmap")) }),
		do("bb-ind-also-listed", func(c *cx) {
			b := c.freeBlock()
			list(c, b)
			c.dbgf("sif <1> block[IND] %d", b)
		}),
		do("bb-primary-gdt", func(c *cx) { list(c, firstData(c)+1) }),
		doMsgOnly("bb-backup-super", func(c *cx) {
			bpg, _ := strconv.ParseUint(c.sb()["Blocks per group"], 10, 64)
			list(c, firstData(c)+bpg)
		}),
		do("bb-block-bitmap", func(c *cx) { list(c, c.group(0, "Block bitmap")) }),
		do("bb-both-bitmaps", func(c *cx) { list(c, c.group(0, "Inode bitmap"), c.group(1, "Block bitmap")) }),
		do("bb-itable-file", func(c *cx) { list(c, uint64(c.inodeOff("/dir/file")/c.bs())) }),
		do("bb-itable-inode1", func(c *cx) { list(c, uint64(c.inodeOff("<1>")/c.bs())) }),
		do("bb-file-data", func(c *cx) { list(c, c.data("/dir/big", 1)) }),
		do("bb-extents-same-block-twice", func(c *cx) {
			// An extent-mapped list naming one free block twice: the
			// second time it is claimed for no reason.
			b := c.freeBlock()
			root := append(append(le16(0xF30A), le16(2)...), append(le16(4), le16(0)...)...)
			root = append(root, le32(0)...)
			for l := uint32(0); l < 2; l++ {
				root = append(root, le32(l)...)
				root = append(root, le16(1)...)
				root = append(root, le16(0)...)
				root = append(root, le32(uint32(b))...)
			}
			c.write(c.inodeOff("<1>")+0x28, root)
			c.dbg("sif <1> flags 0x80000")
			c.fixInodeCsum("<1>")
		}),
		do("bb-free-blocks", func(c *cx) {
			b := c.freeBlock()
			list(c, b, b+1, b+2)
		}),
	}
}

// bbExtentCases give inode 1 an extent tree of depth 1 whose last leaf
// block T is also listed, in the middle of an extent of that leaf
// (T-1..T+1), and where process_bad_block looks for inode 1's own
// mapping blocks (i_block[13] or [14]: the fourth root entry's leaf, or
// the last word of the unused fourth slot). The second time T is met it
// is taken off the list: ext2fs_extent_set_bmap cuts the extent in two.
// In a full leaf the cut splits it, the new block coming from e2fsck's
// block found map of that moment; under a root of four leaves the root
// moves down first and the tree grows to depth 2.
func bbExtentCases() []dcase {
	build := func(c *cx, fullLeaf bool, leaves int) uint64 {
		c.t.Helper()
		bs := c.bs()
		max := int((bs - 12) / 12)
		n := 1
		if fullLeaf {
			n = max - 1
		}
		// Free blocks: a run of three, then single ones.
		total, _ := strconv.ParseUint(c.sb()["Block count"], 10, 64)
		out := testfs.DebugfsRO(c.t, c.img, fmt.Sprintf("ffb %d %d", n+2*leaves+64, total/2))
		var free []uint64
		for _, f := range strings.Fields(strings.TrimPrefix(out[strings.Index(out, "Free blocks found:")+len("Free blocks found:"):], " ")) {
			if v, err := strconv.ParseUint(f, 10, 64); err == nil {
				free = append(free, v)
			}
		}
		t := uint64(0)
		for i := 0; i+2 < len(free); i++ {
			if free[i+1] == free[i]+1 && free[i+2] == free[i]+2 {
				t = free[i] + 1
				free = append(free[:i:i], free[i+3:]...)
				break
			}
		}
		if t == 0 || len(free) < n+2*leaves {
			c.t.Fatalf("not enough free blocks: %s", out)
		}
		take := func() uint64 { b := free[0]; free = free[1:]; return b }
		ext := func(node []byte, i int, lblk uint32, l uint16, p uint64) {
			e := node[12+12*i:]
			binary.LittleEndian.PutUint32(e, lblk)
			binary.LittleEndian.PutUint16(e[4:], l)
			binary.LittleEndian.PutUint16(e[6:], uint16(p>>32))
			binary.LittleEndian.PutUint32(e[8:], uint32(p))
		}
		idx := func(node []byte, i int, lblk uint32, leaf uint64) {
			e := node[12+12*i:]
			binary.LittleEndian.PutUint32(e, lblk)
			binary.LittleEndian.PutUint32(e[4:], uint32(leaf))
			binary.LittleEndian.PutUint16(e[8:], uint16(leaf>>32))
		}
		hdr := func(node []byte, entries, max, depth int) {
			binary.LittleEndian.PutUint16(node, 0xF30A)
			binary.LittleEndian.PutUint16(node[2:], uint16(entries))
			binary.LittleEndian.PutUint16(node[4:], uint16(max))
			binary.LittleEndian.PutUint16(node[6:], uint16(depth))
		}
		csum := strings.Contains(c.sb()["Filesystem features"], "metadata_csum")
		var seed uint32
		if csum {
			dev, err := blockdev.Open(c.img, true, false)
			if err != nil {
				c.t.Fatal(err)
			}
			f, err := fs.Open(dev, fs.Options{})
			if err != nil {
				c.t.Fatal(err)
			}
			seed = f.CsumSeed
			dev.Close()
		}
		seal := func(node []byte) {
			if sum, _, ok := ondisk.ExtentBlockChecksum(node, seed, 1, 0); ok && csum {
				binary.LittleEndian.PutUint32(node[12+12*max:], sum)
			}
		}
		root := make([]byte, 60)
		hdr(root, leaves, 4, 1)
		for k := 0; k < leaves; k++ {
			node := make([]byte, bs)
			var leaf uint64
			first := uint32(k * 100000)
			if k == leaves-1 {
				leaf = t
				hdr(node, n+1, max, 0)
				ext(node, 0, first, 3, t-1)
				for i := 1; i <= n; i++ {
					ext(node, i, first+uint32(10*i), 1, take())
				}
			} else {
				leaf = take()
				hdr(node, 1, max, 0)
				ext(node, 0, first, 1, take())
			}
			idx(root, k, first, leaf)
			seal(node)
			c.writeBlock(leaf, 0, node)
		}
		if leaves < 4 {
			binary.LittleEndian.PutUint32(root[56:], uint32(t))
		}
		isz, _ := strconv.Atoi(c.sb()["Inode size"])
		ino := ondisk.Inode(c.read(c.inodeOff("<1>"), isz))
		copy(ino.IBlock(), root)
		ino.SetFlags(ondisk.FlagExtents)
		if csum {
			ino.SetChecksum(seed, 1)
		}
		c.write(c.inodeOff("<1>"), ino)
		return t
	}
	return []dcase{
		do("bb-extent-cut", func(c *cx) { build(c, false, 1) }),
		// The leaf's checksum fails: the library's walk stops there,
		// before pass 1 and in it.
		do("bb-extent-leaf-csum", func(c *cx) {
			t := build(c, false, 1)
			c.writeBlock(t, c.bs()-4, le32(0x12345678))
		}),
		do("bb-extent-cut-leaf-split", func(c *cx) { build(c, true, 1) }),
		do("bb-extent-cut-root-grows", func(c *cx) { build(c, true, 4) }),
	}
}
