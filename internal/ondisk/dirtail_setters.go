package ondisk

import "encoding/binary"

// InitDirTail writes an empty checksum tail (struct
// ext2_dir_entry_tail: inode 0, rec_len 12, name_len 0, file type 0xDE,
// checksum 0) in the last DirTailSize bytes of a leaf block, as
// ext2fs_initialize_dirent_tail does.
func InitDirTail(block []byte) {
	t := block[len(block)-DirTailSize:]
	clear(t)
	binary.LittleEndian.PutUint16(t[4:], DirTailSize)
	t[7] = DirTailFileType
}

// SetDirTailChecksum stores sum in a leaf block's checksum tail
// (det_checksum, its last 4 bytes).
func SetDirTailChecksum(block []byte, sum uint32) {
	binary.LittleEndian.PutUint32(block[len(block)-4:], sum)
}

// SetDxTailChecksum stores sum in the dx tail (dt_checksum) of an htree
// root or node whose count/limit array starts at countOff and holds limit
// entries; the tail follows them. The caller checked that it fits
// (DxChecksum's ok).
func SetDxTailChecksum(block []byte, countOff, limit int, sum uint32) {
	binary.LittleEndian.PutUint32(block[countOff+limit*DxEntrySize+4:], sum)
}
