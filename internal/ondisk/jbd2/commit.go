package jbd2

import (
	"time"

	"gofsck/internal/csum"
)

// Offsets in struct commit_header.
const (
	offCChksumType = 0x0C // h_chksum_type (u8)
	offCChksumSize = 0x0D // h_chksum_size (u8)
	offCChksum     = 0x10 // h_chksum[8] (v1 and v2/v3 use h_chksum[0])
	offCCommitSec  = 0x30 // h_commit_sec (be64)
	offCCommitNsec = 0x38 // h_commit_nsec
)

// Commit-block checksum types (h_chksum_type) of the v1 compat checksum.
const (
	ChecksumCRC32 = 1 // JBD2_CRC32_CHKSUM
	ChecksumMD5   = 2 // JBD2_MD5_CHKSUM
	ChecksumSHA1  = 3 // JBD2_SHA1_CHKSUM
	// ChecksumCRC32Size is JBD2_CRC32_CHKSUM_SIZE.
	ChecksumCRC32Size = 4
)

// Commit is a view of a commit block.
type Commit struct{ b []byte }

// CommitOf wraps b, a whole commit block.
func CommitOf(b []byte) (Commit, error) {
	if len(b) < CommitHeaderSize {
		return Commit{}, &FormatError{Struct: "commit", Msg: "block too short", Val: uint64(len(b))}
	}
	return Commit{b: b}, nil
}

func (c Commit) Header() *Header       { return (*Header)(c.b[:HeaderSize]) }
func (c Commit) ChecksumType() uint8   { return c.b[offCChksumType] }
func (c Commit) ChecksumSize() uint8   { return c.b[offCChksumSize] }
func (c Commit) Checksum() uint32      { return be.Uint32(c.b[offCChksum:]) }
func (c Commit) CommitSec() uint64     { return be.Uint64(c.b[offCCommitSec:]) }
func (c Commit) CommitNsec() uint32    { return be.Uint32(c.b[offCCommitNsec:]) }
func (c Commit) CommitTime() time.Time { return time.Unix(int64(c.CommitSec()), int64(c.CommitNsec())) }

// ComputeChecksum is the csum_v2/v3 commit checksum: crc32c(seed, block with
// h_chksum[0] zeroed).
func (c Commit) ComputeChecksum(seed uint32) uint32 {
	s := csum.Crc32c(seed, c.b[:offCChksum])
	s = csum.Crc32c(s, zeroWord[:])
	return csum.Crc32c(s, c.b[offCChksum+4:])
}

// ChecksumValid verifies the csum_v2/v3 commit checksum; without v2/v3 it is
// always true.
func (c Commit) ChecksumValid(f Format, seed uint32) bool {
	if !f.HasCsumV2or3() {
		return true
	}
	return c.ComputeChecksum(seed) == c.Checksum()
}

// V1ChecksumMatches applies the v1 (compat checksum) rule: the block either
// stores sum as a crc32 of size 4, or says "unused" with type, size and value
// all zero.
func (c Commit) V1ChecksumMatches(sum uint32) bool {
	t, n, v := c.ChecksumType(), c.ChecksumSize(), c.Checksum()
	return (v == sum && t == ChecksumCRC32 && n == ChecksumCRC32Size) ||
		(t == 0 && n == 0 && v == 0)
}

// V1Checksum continues the v1 transaction checksum (big-endian crc32, start
// ^0) over one descriptor or data block.
func V1Checksum(sum uint32, block []byte) uint32 { return csum.Crc32Be(sum, block) }
