package quota

import "encoding/binary"

// Writing follows e2fsprogs 1.47.0's quota_write_inode: a new file is
// created (quota_file_create and v2_new_io: header, then info with 7-day
// grace times and dqi_blocks = 2), every dquot of the usage table is
// committed in ascending id order (write_dquots, v2_commit_dquot) and the
// info is rewritten at the end (quota_file_close). A dquot whose usage and
// limits are all zero is not written (qtree_delete_dquot of an entry that
// has no place in the file yet does nothing). Each entry is inserted into
// the radix tree as qtree_write_dquot does on a file without free blocks:
// tree blocks are appended as a path is first needed, and entries fill the
// data block at the head of the free-entry list until it is full.

// Grace periods of a new file (MAX_DQ_TIME, MAX_IQ_TIME).
const (
	DefaultBGrace = 7 * 24 * 60 * 60
	DefaultIGrace = 7 * 24 * 60 * 60
)

// Offsets in struct qt_disk_dqdbheader.
const (
	dbNextFree = 0 // dqdh_next_free
	dbPrevFree = 4 // dqdh_prev_free
	dbEntries  = 8 // dqdh_entries
)

// Built is a quota file as quota_write_inode leaves it.
type Built struct {
	// Data is the file's contents; its length is the file size (i_size).
	Data []byte
	// Order lists the quota blocks (BlockSize units) in the order they
	// were first written: the library allocates the filesystem blocks
	// behind the file in that order.
	Order []uint32
}

// builder is the state of one write: the file in 1 KiB blocks and the
// in-memory info (struct qtree_mem_dqinfo).
type builder struct {
	blocks    [][]byte
	touched   []bool
	order     []uint32
	size      int64
	numBlocks uint32 // dqi_blocks
	freeEntry uint32 // dqi_free_entry
}

// write stores p at byte offset off of the file, as the library's
// e2fs_write does (the file grows to cover it).
func (b *builder) write(off int64, p []byte) {
	for len(p) > 0 {
		blk := uint32(off >> blockBits)
		for uint32(len(b.blocks)) <= blk {
			b.blocks = append(b.blocks, make([]byte, BlockSize))
			b.touched = append(b.touched, false)
		}
		if !b.touched[blk] {
			b.touched[blk] = true
			b.order = append(b.order, blk)
		}
		start := int(off & (BlockSize - 1))
		n := copy(b.blocks[blk][start:], p)
		p = p[n:]
		off += int64(n)
		b.size = max(b.size, off)
	}
}

// block returns the current contents of quota block blk (read_blk: past
// the end of the file it reads as zeros). The result must not be kept.
func (b *builder) block(blk uint32) []byte {
	if blk < uint32(len(b.blocks)) {
		return b.blocks[blk]
	}
	return make([]byte, BlockSize)
}

func (b *builder) writeBlock(blk uint32, data []byte) {
	b.write(int64(blk)<<blockBits, data[:BlockSize])
}

// newBlock is get_free_dqblk on a file without free blocks: a zero block
// is written at the end of the tree.
func (b *builder) newBlock() uint32 {
	blk := b.numBlocks
	b.writeBlock(blk, make([]byte, BlockSize))
	b.numBlocks++
	return blk
}

// freeEntrySlot is find_free_dqentry: the entry's byte offset.
func (b *builder) freeEntrySlot() (blk uint32, off int64) {
	perBlock := (BlockSize - dataHdrSize) / entrySizeV1
	var buf []byte
	if b.freeEntry != 0 {
		blk = b.freeEntry
		buf = append([]byte(nil), b.block(blk)...)
	} else {
		blk = b.newBlock()
		buf = make([]byte, BlockSize)
		b.freeEntry = blk
	}
	entries := int(binary.LittleEndian.Uint16(buf[dbEntries:]))
	if entries+1 >= perBlock {
		// remove_free_dqentry: the block leaves the free-entry list.
		next := binary.LittleEndian.Uint32(buf[dbNextFree:])
		prev := binary.LittleEndian.Uint32(buf[dbPrevFree:])
		if next != 0 {
			nb := append([]byte(nil), b.block(next)...)
			copy(nb[dbPrevFree:], buf[dbPrevFree:dbPrevFree+4])
			b.writeBlock(next, nb)
		}
		if prev != 0 {
			pb := append([]byte(nil), b.block(prev)...)
			copy(pb[dbNextFree:], buf[dbNextFree:dbNextFree+4])
			b.writeBlock(prev, pb)
		} else {
			b.freeEntry = next
		}
		binary.LittleEndian.PutUint32(buf[dbNextFree:], 0)
		binary.LittleEndian.PutUint32(buf[dbPrevFree:], 0)
		b.writeBlock(blk, buf)
	}
	binary.LittleEndian.PutUint16(buf[dbEntries:], uint16(entries+1))
	i := 0
	for ; i < perBlock; i++ {
		if isZero(buf[dataHdrSize+i*entrySizeV1 : dataHdrSize+(i+1)*entrySizeV1]) {
			break
		}
	}
	// A full block cannot be at the head of the free-entry list, so i is
	// always a free slot here.
	b.writeBlock(blk, buf)
	return blk, int64(blk)<<blockBits + dataHdrSize + int64(i)*entrySizeV1
}

// insert is do_insert_tree: it returns the entry's offset and sets *tree
// when it had to create the tree block.
func (b *builder) insert(id uint32, tree *uint32, depth int) int64 {
	var buf []byte
	if *tree == 0 {
		*tree = b.newBlock()
		buf = make([]byte, BlockSize)
	} else {
		buf = append([]byte(nil), b.block(*tree)...)
	}
	idx := 4 * int((id>>((treeDepth-depth-1)*8))&0xff)
	child := binary.LittleEndian.Uint32(buf[idx:])
	newChild := child == 0
	var off int64
	if depth == treeDepth-1 {
		child, off = b.freeEntrySlot()
	} else {
		off = b.insert(id, &child, depth+1)
	}
	if newChild {
		binary.LittleEndian.PutUint32(buf[idx:], child)
		b.writeBlock(*tree, buf)
	}
	return off
}

// graceTimes is update_grace_times for an entry whose grace times start
// at zero (the usage table never holds them): a limit exceeded starts
// its grace period at now.
func graceTimes(d *Dquot, now int64) {
	d.BTime, d.ITime = 0, 0
	if d.BSoftLimit != 0 && (d.CurSpace+BlockSize-1)>>blockBits > int64(d.BSoftLimit) {
		d.BTime = uint64(now + DefaultBGrace)
	}
	if d.ISoftLimit != 0 && d.CurInodes > int64(d.ISoftLimit) {
		d.ITime = uint64(now + DefaultIGrace)
	}
}

// encodeV1 is v2r1_mem2diskdqblk.
func encodeV1(e []byte, d *Dquot) {
	le := binary.LittleEndian
	le.PutUint32(e[v1ID:], d.ID)
	le.PutUint64(e[v1IHardLimit:], d.IHardLimit)
	le.PutUint64(e[v1ISoftLimit:], d.ISoftLimit)
	le.PutUint64(e[v1CurInodes:], uint64(d.CurInodes))
	le.PutUint64(e[v1BHardLimit:], d.BHardLimit)
	le.PutUint64(e[v1BSoftLimit:], d.BSoftLimit)
	le.PutUint64(e[v1CurSpace:], uint64(d.CurSpace))
	le.PutUint64(e[v1BTime:], d.BTime)
	le.PutUint64(e[v1ITime:], d.ITime)
	if isZero(e) {
		le.PutUint64(e[v1ITime:], 1)
	}
}

// Build writes a quota file of type t holding dquots, which must be in
// ascending id order (the usage table's order), as quota_write_inode
// does. Only the ids, limits and usage of the dquots are used: the grace
// times are computed afresh (update_grace_times, with now as the current
// time) and the file's grace periods are the defaults.
func Build(t Type, dquots []Dquot, now int64) *Built {
	b := &builder{numBlocks: treeOff + 1}
	var hdr Header
	binary.LittleEndian.PutUint32(hdr[offMagic:], t.Magic())
	binary.LittleEndian.PutUint32(hdr[offVersion:], versionR1)
	b.write(0, hdr[:])
	b.write(infoOff, b.info()[:])
	e := make([]byte, entrySizeV1)
	dirty := false
	for _, d := range dquots {
		if d.CurSpace == 0 && d.CurInodes == 0 && d.BSoftLimit == 0 && d.ISoftLimit == 0 &&
			d.BHardLimit == 0 && d.IHardLimit == 0 {
			continue
		}
		graceTimes(&d, now)
		root := uint32(treeOff)
		off := b.insert(d.ID, &root, 0)
		dirty = true
		clear(e)
		encodeV1(e, &d)
		b.write(off, e)
	}
	if dirty {
		b.write(infoOff, b.info()[:])
	}
	data := make([]byte, b.size)
	for i, blk := range b.blocks {
		copy(data[i*BlockSize:], blk)
	}
	return &Built{Data: data, Order: b.order}
}

// info is v2_mem2diskdqinfo of the file being written.
func (b *builder) info() *InfoBlock {
	var info InfoBlock
	le := binary.LittleEndian
	le.PutUint32(info[offBGrace:], DefaultBGrace)
	le.PutUint32(info[offIGrace:], DefaultIGrace)
	le.PutUint32(info[offBlocks:], b.numBlocks)
	le.PutUint32(info[offFreeEntry:], b.freeEntry)
	return &info
}
