package ondisk

import "encoding/binary"

// Setters for the htree index blocks a directory rebuild writes
// (dirent.go has the readers).

// SetDxRootInfo stores the dx_root_info of a root block (len >= 32):
// reserved_zero 0, the hash version, info_length 8, the levels below the
// root, no flags.
func SetDxRootInfo(block []byte, hashVersion, indirectLevels uint8) {
	b := block[DxRootInfoOff : DxRootInfoOff+DxRootInfoSize]
	clear(b)
	b[4], b[5], b[6] = hashVersion, DxRootInfoSize, indirectLevels
}

// SetDxCountLimit stores (limit, count) at off.
func SetDxCountLimit(block []byte, off, limit, count int) {
	binary.LittleEndian.PutUint16(block[off:], uint16(limit))
	binary.LittleEndian.PutUint16(block[off+2:], uint16(count))
}

// SetDxEntry stores index entry i of the array starting at off: its
// block, and its hash unless i is 0 (where limit and count are).
func SetDxEntry(block []byte, off, i int, hash, blk uint32) {
	p := off + i*DxEntrySize
	if i > 0 {
		binary.LittleEndian.PutUint32(block[p:], hash)
	}
	binary.LittleEndian.PutUint32(block[p+4:], blk)
}
