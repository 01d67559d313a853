package journal

import (
	"encoding/binary"
	"errors"
	"fmt"

	"gofsck/internal/csum"
	"gofsck/internal/ondisk/jbd2"
)

// The fast-commit area, as e2fsck 1.47.0 scans it (ext4_fc_replay_scan,
// called by fc_do_one_pass after the normal log's PASS_SCAN when the
// filesystem has the compat fast_commit feature and the journal the
// incompat one).
//
// The blocks j_fc_first (Layout.FCFirst) to j_fc_last (s_maxlen, one past
// the journal's last block, as e2fsck's loop includes it) are read in turn.
// Each holds little-endian tag-length-value records; a crc32c runs over the
// records (header and value) since the last tail and a TAIL record closes a
// fast commit when its tid is the expected one (the transaction after the
// last replayed full commit) and its fc_crc matches. The tags of the closed
// fast commits are what a replay would apply.

// FCErrno is a fast-commit scan failure that e2fsck reports by errno
// ("<errno text> while recovering journal of <dev>"). Checksum and
// structure failures match ErrChecksum and jbd2.ErrCorrupt instead.
type FCErrno struct {
	Errno int    // EINVAL, EOPNOTSUPP, ECANCELED
	Text  string // strerror
	Off   uint64 // log block of the record
}

func (e *FCErrno) Error() string {
	return fmt.Sprintf("journal: fast commit at log block %d: %s", e.Off, e.Text)
}

// errno values of the fast-commit scan (Linux).
const (
	errnoEINVAL     = 22
	errnoEOPNOTSUPP = 95
	errnoECANCELED  = 125
)

// fcSupportedFeatures is EXT4_FC_SUPPORTED_FEATURES.
const fcSupportedFeatures = 0

// FCScanResult is the verdict of the fast-commit scan.
type FCScanResult struct {
	// Tags counts the records of the fast commits closed by a valid tail
	// (e2fsck's fc_replay_num_tags): 0 means there is nothing to replay.
	Tags int
	// Blocks counts the fast-commit blocks read.
	Blocks int
	// Err is non-nil when e2fsck's recovery fails at the scan (then nothing
	// at all is replayed, not even the normal log): an error matching
	// ErrChecksum (EFSBADCRC: a bad tail before any valid one), matching
	// jbd2.ErrCorrupt (EFSCORRUPTED: the scan ran off the journal), or an
	// *FCErrno.
	Err error
}

// fcState is e2fsck's fc_replay_state during the scan.
type fcState struct {
	curTag  int
	numTags int
	crc     uint32
	// poisoned: the running checksum took in bytes past a block, which
	// e2fsck reads from whatever memory follows its buffer; the next tail
	// cannot match it.
	poisoned bool
}

// ScanFastCommits scans the fast-commit area for fast commits following
// transaction expectedTid (ScanResult.EndTid of a successful scan). The
// error result is for device I/O errors only. A journal without the
// fast_commit feature has nothing to scan.
func (j *Journal) ScanFastCommits(expectedTid uint32) (*FCScanResult, error) {
	res := &FCScanResult{}
	if !j.format.HasFastCommit() || j.layout.FCFirst == 0 {
		return res, nil
	}
	var st fcState
	buf := make([]byte, j.blockSize)
	last := uint64(j.sb.MaxLen())
	for blk := j.layout.FCFirst; blk <= last; blk++ {
		if err := j.readLog(blk, buf); err != nil {
			var eb *errBeyond
			if !errors.As(err, &eb) {
				return nil, err
			}
			// jread fails: the pass fails with its error.
			res.Err = err
			break
		}
		res.Blocks++
		first := blk == j.layout.FCFirst
		if first && FCTagOf(buf) != jbd2.FCHead {
			// Not a fast commit: stop early, nothing to replay.
			break
		}
		stop, err := st.scanBlock(buf, blk, expectedTid)
		if err != nil {
			res.Err = err
			break
		}
		if stop {
			break
		}
	}
	res.Tags = st.numTags
	return res, nil
}

// FCTagOf returns the tag of the first record of a fast-commit block.
func FCTagOf(b []byte) jbd2.FCTag {
	if len(b) < 2 {
		return 0
	}
	return jbd2.FCTag(binary.LittleEndian.Uint16(b))
}

// scanBlock is one call of ext4_fc_replay_scan. It reports whether the
// scan stops (JBD2_FC_REPLAY_STOP) or the error that fails the recovery.
//
// e2fsck walks records while their start is before the block's last byte
// and may read a header or value past the block's end, from whatever
// memory follows its buffer. A record whose tag is in the block but whose
// length or value is not is counted with its checksum poisoned (no tail
// can match it after that), and the block ends there; a tail read past
// the block does not match. Only a head read past the block, whose
// verdict depends on those bytes, is treated as the end of the fast
// commits (STOP, or EFSCORRUPTED when none was complete).
func (st *fcState) scanBlock(b []byte, blk uint64, expectedTid uint32) (stop bool, err error) {
	le := binary.LittleEndian
	end := len(b) - 1
	for cur := 0; cur < end; {
		// cur <= len(b)-2: the tag is in the block, the length may not be.
		tag := jbd2.FCTag(le.Uint16(b[cur:]))
		headerIn := cur+jbd2.FCTagHeaderSize <= len(b)
		n := 0
		if headerIn {
			n = int(le.Uint16(b[cur+2:]))
		}
		val := cur + jbd2.FCTagHeaderSize
		switch tag {
		case jbd2.FCAddRange, jbd2.FCDelRange, jbd2.FCLink, jbd2.FCUnlink,
			jbd2.FCCreat, jbd2.FCInode, jbd2.FCPad:
			st.curTag++
			if !headerIn || val+n > len(b) {
				// Checksummed with bytes past the block, which ends.
				st.poisoned = true
				return false, nil
			}
			st.crc = csum.Crc32c(st.crc, b[cur:val+n])
		case jbd2.FCTail:
			st.curTag++
			if !headerIn || val+8 > len(b) || st.poisoned {
				// The tail or the checksum has bytes from past a
				// block: no match.
				if st.numTags != 0 {
					return true, nil
				}
				return true, fmt.Errorf("journal: fast commit tail at log block %d: %w", blk, ErrChecksum)
			}
			st.crc = csum.Crc32c(st.crc, b[cur:val+4])
			tid, crc := le.Uint32(b[val:]), le.Uint32(b[val+4:])
			if tid == expectedTid && crc == st.crc {
				st.numTags = st.curTag
			} else if st.numTags != 0 {
				return true, nil
			} else {
				return true, fmt.Errorf("journal: fast commit tail at log block %d: %w", blk, ErrChecksum)
			}
			st.crc = 0
		case jbd2.FCHead:
			if !headerIn || val+8 > len(b) {
				return st.overrun(blk)
			}
			if le.Uint32(b[val:])&^fcSupportedFeatures != 0 {
				return true, &FCErrno{Errno: errnoEOPNOTSUPP, Text: "Operation not supported", Off: blk}
			}
			if le.Uint32(b[val+4:]) != expectedTid {
				return true, &FCErrno{Errno: errnoEINVAL, Text: "Invalid argument", Off: blk}
			}
			st.curTag++
			if val+n > len(b) {
				st.poisoned = true
				return false, nil
			}
			st.crc = csum.Crc32c(st.crc, b[cur:val+n])
		default:
			if st.numTags != 0 {
				return true, nil
			}
			return true, &FCErrno{Errno: errnoECANCELED, Text: "Operation canceled", Off: blk}
		}
		cur = val + n
	}
	return false, nil
}

// overrun ends the scan at a record that does not fit its block.
func (st *fcState) overrun(blk uint64) (bool, error) {
	if st.numTags != 0 {
		return true, nil
	}
	return true, fmt.Errorf("journal: fast commit record runs past log block %d: %w", blk, jbd2.ErrCorrupt)
}
