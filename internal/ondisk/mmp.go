package ondisk

import (
	"encoding/binary"
	"errors"

	"gofsck/internal/csum"
)

// Multi-mount protection: the MMP block (s_mmp_block) holds struct
// mmp_struct in its first MMPSize bytes. A node using the filesystem keeps
// a sequence number in it; e2fsck marks it MMPSeqFsck while it runs and
// MMPSeqClean when done.
const (
	MMPSize     = 1024
	MMPMagic    = 0x004D4D50 // "MMP"
	MMPSeqClean = 0xFF4D4D50 // EXT4_MMP_SEQ_CLEAN
	MMPSeqFsck  = 0xE24D4D50 // EXT4_MMP_SEQ_FSCK
	MMPSeqMax   = 0xE24D4D4F // EXT4_MMP_SEQ_MAX: the largest sequence a node uses
	// MMPMinCheckInterval is EXT4_MMP_MIN_CHECK_INTERVAL, the shortest
	// interval (seconds) the protocol waits on.
	MMPMinCheckInterval = 5
	// MMPNodeNameLen and MMPBdevNameLen are the sizes of the name fields.
	MMPNodeNameLen = 64
	MMPBdevNameLen = 32
)

// mmp_struct field offsets.
const (
	offMMPMagic         = 0x000 // mmp_magic
	offMMPSeq           = 0x004 // mmp_seq
	offMMPTime          = 0x008 // mmp_time
	offMMPNodeName      = 0x010 // mmp_nodename[64]
	offMMPBdevName      = 0x050 // mmp_bdevname[32]
	offMMPCheckInterval = 0x070 // mmp_check_interval
	offMMPChecksum      = 0x3FC // mmp_checksum
)

// ErrMMPShort is returned for a buffer smaller than MMPSize.
var ErrMMPShort = errors.New("ondisk: MMP block too short")

// MMP is a view of struct mmp_struct (MMPSize bytes).
type MMP []byte

// NewMMP returns the view of b's first MMPSize bytes.
func NewMMP(b []byte) (MMP, error) {
	if len(b) < MMPSize {
		return nil, ErrMMPShort
	}
	return MMP(b[:MMPSize:MMPSize]), nil
}

// Magic returns mmp_magic.
func (m MMP) Magic() uint32 { return binary.LittleEndian.Uint32(m[offMMPMagic:]) }

// Seq returns mmp_seq.
func (m MMP) Seq() uint32 { return binary.LittleEndian.Uint32(m[offMMPSeq:]) }

// Time returns mmp_time (seconds since the epoch of the last update).
func (m MMP) Time() uint64 { return binary.LittleEndian.Uint64(m[offMMPTime:]) }

// NodeName returns mmp_nodename up to its first NUL.
func (m MMP) NodeName() []byte { return cstr(m[offMMPNodeName : offMMPNodeName+MMPNodeNameLen]) }

// BdevName returns mmp_bdevname up to its first NUL.
func (m MMP) BdevName() []byte { return cstr(m[offMMPBdevName : offMMPBdevName+MMPBdevNameLen]) }

// CheckInterval returns mmp_check_interval (seconds).
func (m MMP) CheckInterval() uint16 { return binary.LittleEndian.Uint16(m[offMMPCheckInterval:]) }

// Checksum returns mmp_checksum.
func (m MMP) Checksum() uint32 { return binary.LittleEndian.Uint32(m[offMMPChecksum:]) }

// ComputeChecksum is crc32c(seed) of the structure up to mmp_checksum.
func (m MMP) ComputeChecksum(seed uint32) uint32 { return csum.Crc32c(seed, m[:offMMPChecksum]) }

// SetMagic, SetSeq, SetTime and SetCheckInterval store those fields.
func (m MMP) SetMagic(v uint32)         { binary.LittleEndian.PutUint32(m[offMMPMagic:], v) }
func (m MMP) SetSeq(v uint32)           { binary.LittleEndian.PutUint32(m[offMMPSeq:], v) }
func (m MMP) SetTime(v uint64)          { binary.LittleEndian.PutUint64(m[offMMPTime:], v) }
func (m MMP) SetCheckInterval(v uint16) { binary.LittleEndian.PutUint16(m[offMMPCheckInterval:], v) }

// SetChecksum stores seed's checksum of the structure.
func (m MMP) SetChecksum(seed uint32) {
	binary.LittleEndian.PutUint32(m[offMMPChecksum:], m.ComputeChecksum(seed))
}

// PutNodeName stores a host name as gethostname(2) fills mmp_nodename: the
// name and its terminating NUL, as far as they fit; the bytes after the
// NUL keep their old contents.
func (m MMP) PutNodeName(name []byte) {
	f := m[offMMPNodeName : offMMPNodeName+MMPNodeNameLen]
	n := copy(f, name)
	if n < len(f) {
		f[n] = 0
	}
}

// PutBdevName stores a device name as strncpy does into mmp_bdevname:
// truncated to the field, and NUL-padded to its end when shorter.
func (m MMP) PutBdevName(name []byte) {
	f := m[offMMPBdevName : offMMPBdevName+MMPBdevNameLen]
	n := copy(f, name)
	clear(f[n:])
}

// SetMMPBlock stores s_mmp_block.
func (s Superblock) SetMMPBlock(v uint64) { binary.LittleEndian.PutUint64(s[offMMPBlock:], v) }
