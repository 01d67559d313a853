package test

import "strconv"

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
