package ext2fs

import (
	"gofsck/internal/fs"
	"gofsck/internal/ondisk"
)

// Multi-mount protection as the library reads, classifies and resets the
// MMP block (lib/ext2fs/mmp.c); the protocol's sleeps and writes are the
// caller's.

// MMPError is one of the library's MMP error codes; Error is its message
// as com_err prints it.
type MMPError int

// The MMP errors, named after EXT2_ET_MMP_*.
const (
	MMPBadBlock     MMPError = iota + 1 // EXT2_ET_MMP_BAD_BLOCK
	MMPMagicInvalid                     // EXT2_ET_MMP_MAGIC_INVALID
	MMPCsumInvalid                      // EXT2_ET_MMP_CSUM_INVALID
	MMPFsckOn                           // EXT2_ET_MMP_FSCK_ON
	MMPUnknownSeq                       // EXT2_ET_MMP_UNKNOWN_SEQ
	MMPFailed                           // EXT2_ET_MMP_FAILED
	MMPChangeAbort                      // EXT2_ET_MMP_CHANGE_ABORT
)

var mmpMessages = [...]string{
	MMPBadBlock:     "MMP: block number beyond filesystem range",
	MMPMagicInvalid: "MMP: invalid magic number",
	MMPCsumInvalid:  "MMP block checksum does not match",
	MMPFsckOn:       "MMP: e2fsck being run",
	MMPUnknownSeq:   "MMP: undergoing an unknown operation",
	MMPFailed:       "MMP: device currently active",
	MMPChangeAbort:  "MMP: filesystem still in use",
}

func (e MMPError) Error() string {
	if e > 0 && int(e) < len(mmpMessages) {
		return mmpMessages[e]
	}
	return "MMP: unknown error"
}

// MMPBlockInRange reports whether s_mmp_block may be read: after the first
// data block and inside the filesystem (ext2fs_mmp_read's test).
func MMPBlockInRange(f *fs.FS) bool {
	b := f.SB.MMPBlock()
	return b > f.FirstDataBlock && b < f.BlocksCount
}

// VerifyMMP checks a block read from s_mmp_block as ext2fs_mmp_read does:
// the checksum with metadata_csum, then the magic, which takes precedence.
// It returns 0 for a valid block.
func VerifyMMP(f *fs.FS, block []byte) MMPError {
	m, err := ondisk.NewMMP(block)
	if err != nil {
		return MMPMagicInvalid
	}
	var e MMPError
	if f.MetadataCsum && m.Checksum() != m.ComputeChecksum(f.CsumSeed) {
		e = MMPCsumInvalid
	}
	if m.Magic() != ondisk.MMPMagic {
		e = MMPMagicInvalid
	}
	return e
}

// MMPSeqState classifies the sequence of a valid block as
// e2fsck_check_mmp does: 0 when the check may go on (clean, or a node's
// sequence that the start protocol waits out).
func MMPSeqState(m ondisk.MMP) MMPError {
	switch seq := m.Seq(); {
	case seq == ondisk.MMPSeqClean:
		return 0
	case seq == ondisk.MMPSeqFsck:
		return MMPFsckOn
	case seq > ondisk.MMPSeqMax:
		return MMPUnknownSeq
	}
	return 0
}

// MMPInterval is the protocol's check interval in seconds: the
// superblock's update interval, at least ondisk.MMPMinCheckInterval, or
// the block's own interval when that is larger and useBlock (the start
// protocol ignores the block's interval for a clean sequence).
func MMPInterval(sb ondisk.Superblock, m ondisk.MMP, useBlock bool) uint32 {
	iv := uint32(sb.MMPInterval())
	if iv < ondisk.MMPMinCheckInterval {
		iv = ondisk.MMPMinCheckInterval
	}
	if useBlock && uint32(m.CheckInterval()) > iv {
		iv = uint32(m.CheckInterval())
	}
	return iv
}

// MMPSleep is how long (seconds) the start protocol sleeps at each of its
// waits for interval iv: twice the interval and one second, at most a
// minute more than the interval.
func MMPSleep(iv uint32) uint32 { return min(2*iv+1, iv+60) }

// ResetMMP fills block as ext2fs_mmp_reset does before writing it: zeroes,
// the magic, the clean sequence, time 0, the host and device names and the
// superblock's update interval (at least the minimum). The caller sets the
// time and checksum when it writes the block.
func ResetMMP(sb ondisk.Superblock, block []byte, host, dev []byte) {
	clear(block)
	m, err := ondisk.NewMMP(block)
	if err != nil {
		return
	}
	m.SetMagic(ondisk.MMPMagic)
	m.SetSeq(ondisk.MMPSeqClean)
	m.PutNodeName(host)
	m.PutBdevName(dev)
	iv := sb.MMPInterval()
	if iv < ondisk.MMPMinCheckInterval {
		iv = ondisk.MMPMinCheckInterval
	}
	m.SetCheckInterval(iv)
}
