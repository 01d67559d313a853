package ondisk

import "encoding/binary"

// Setters for the locations of a group's bitmaps and inode table, which a
// repair changes when it relocates them. The caller recomputes the
// descriptor checksum when it should (UpdateChecksum).

// putLoc stores a block number split over a low word and, in 64-byte
// descriptors, a high word.
func (g GroupDesc) putLoc(lo, hi int, v uint64) {
	g.put32(lo, uint32(v))
	if len(g) >= GroupDescSize64 {
		g.put32(hi, uint32(v>>32))
	}
}

func (g GroupDesc) put32(off int, v uint32) { binary.LittleEndian.PutUint32(g[off:], v) }

// SetBlockBitmap stores the block bitmap location.
func (g GroupDesc) SetBlockBitmap(v uint64) { g.putLoc(offBgBlockBitmapLo, offBgBlockBitmapHi, v) }

// SetInodeBitmap stores the inode bitmap location.
func (g GroupDesc) SetInodeBitmap(v uint64) { g.putLoc(offBgInodeBitmapLo, offBgInodeBitmapHi, v) }

// SetInodeTable stores the first block of the inode table.
func (g GroupDesc) SetInodeTable(v uint64) { g.putLoc(offBgInodeTableLo, offBgInodeTableHi, v) }
