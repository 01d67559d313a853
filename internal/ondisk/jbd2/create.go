package jbd2

// InitSuperblockV2 fills s as a new internal journal's superblock (what
// the library's journal creator writes): a V2 superblock for maxLen
// blocks of blockSize bytes, the log starting at block 1 with sequence
// 1, one user (uuid, the filesystem's), and fcBlocks of the blocks for
// fast commits. Every other field is zeroed.
func (s *Superblock) InitSuperblockV2(blockSize, maxLen, fcBlocks uint32, uuid [UUIDSize]byte) {
	clear(s[:])
	be.PutUint32(s[offHMagic:], Magic)
	be.PutUint32(s[offHBlocktype:], uint32(BlockSuperV2))
	be.PutUint32(s[offSBlocksize:], blockSize)
	be.PutUint32(s[offSMaxlen:], maxLen)
	be.PutUint32(s[offSFirst:], 1)
	be.PutUint32(s[offSSequence:], 1)
	be.PutUint32(s[offSNrUsers:], 1)
	be.PutUint32(s[offSNumFCBlks:], fcBlocks)
	copy(s[offSUUID:offSUUID+UUIDSize], uuid[:])
}
