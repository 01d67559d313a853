package jbd2

// Setters for the journal superblock fields e2fsck rewrites when it
// releases, resets or recovers a journal.

// SetSequence stores s_sequence.
func (s *Superblock) SetSequence(v uint32) { be.PutUint32(s[offSSequence:], v) }

// SetStart stores s_start (0: the journal is empty).
func (s *Superblock) SetStart(v uint32) { be.PutUint32(s[offSStart:], v) }

// SetErrno stores s_errno.
func (s *Superblock) SetErrno(v int32) { be.PutUint32(s[offSErrno:], uint32(v)) }

// UpdateChecksum stores s_checksum as ComputeChecksum gives it.
func (s *Superblock) UpdateChecksum() { be.PutUint32(s[offSChecksum:], s.ComputeChecksum()) }

// ResetSuperblock is e2fsck_journal_reset_super's rewrite of the journal
// superblock block buf (at least SuperblockSize bytes): a valid V1
// header is kept, anything else becomes a V2 one; the header's
// h_sequence stays, every byte after it is zeroed, and s_blocksize,
// s_maxlen, s_first (1) and s_sequence are set.
func ResetSuperblock(buf []byte, blockSize, maxLen, sequence uint32) {
	if be.Uint32(buf[offHMagic:]) != Magic || BlockType(be.Uint32(buf[offHBlocktype:])) != BlockSuperV1 {
		be.PutUint32(buf[offHMagic:], Magic)
		be.PutUint32(buf[offHBlocktype:], uint32(BlockSuperV2))
	}
	clear(buf[HeaderSize:])
	be.PutUint32(buf[offSBlocksize:], blockSize)
	be.PutUint32(buf[offSMaxlen:], maxLen)
	be.PutUint32(buf[offSFirst:], 1)
	be.PutUint32(buf[offSSequence:], sequence)
}
