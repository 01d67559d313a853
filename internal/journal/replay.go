package journal

import (
	"errors"
	"fmt"

	"gofsck/internal/ondisk/jbd2"
)

// Writer receives replayed blocks. data is valid only during the call.
// Blocks arrive in log order; a block logged twice arrives twice and the
// later copy must win.
type Writer interface {
	WriteBlock(blk uint64, data []byte) error
}

// Overlay is an in-memory Writer: filesystem block number to contents.
type Overlay map[uint64][]byte

// WriteBlock stores a copy of data as the contents of blk.
func (o Overlay) WriteBlock(blk uint64, data []byte) error {
	b := o[blk]
	if len(b) != len(data) {
		b = make([]byte, len(data))
	}
	copy(b, data)
	o[blk] = b
	return nil
}

// BadBlock is a logged block whose v2/v3 checksum did not match; it is not
// replayed.
type BadBlock struct {
	Tid  uint32
	Home uint64
	Log  uint64
}

// ReplayResult is the outcome of Replay.
type ReplayResult struct {
	Scan *ScanResult
	// Replayed counts blocks handed to the Writer; RevokeHits the logged
	// blocks skipped because a later (or the same) transaction revoked
	// them.
	Replayed, RevokeHits int
	// Bad lists logged blocks skipped for a checksum mismatch
	// ("JBD2: Invalid checksum recovering data block N in log").
	Bad []BadBlock
	// Err is e2fsck's verdict on the recovery: Scan.Err if the scan failed
	// (then nothing was written), else an ErrChecksum error if any block was
	// skipped for its checksum. e2fsck then marks the filesystem not valid
	// so that a full check follows.
	Err error
	// Sequence is the s_sequence e2fsck stores in the journal superblock
	// afterwards (with s_start = 0): EndTid+1 after a successful recovery,
	// the old s_sequence after a failed one.
	Sequence uint32
}

// Replay computes the replay of every complete transaction and hands the
// blocks to w. The error result is for device and Writer errors only.
func (j *Journal) Replay(w Writer) (*ReplayResult, error) {
	scan, err := j.Scan()
	if err != nil {
		return nil, err
	}
	res := &ReplayResult{Scan: scan, Sequence: j.sb.Sequence()}
	if scan.Stop == StopEmpty {
		res.Sequence = j.sb.Sequence() + 1
		return res, nil
	}
	if scan.Err != nil {
		res.Err = scan.Err
		return res, nil
	}

	// PASS_REVOKE: the highest revoking transaction of each block.
	revoked := make(map[uint64]uint32)
	for i := range scan.Transactions {
		t := &scan.Transactions[i]
		for _, b := range t.Revoked {
			if old, ok := revoked[b]; !ok || tidBefore(old, t.Tid) {
				revoked[b] = t.Tid
			}
		}
	}

	// PASS_REPLAY.
	buf := make([]byte, j.blockSize)
	for i := range scan.Transactions {
		t := &scan.Transactions[i]
		for _, tag := range t.Tags {
			if rt, ok := revoked[tag.Home]; ok && !tidBefore(rt, t.Tid) {
				res.RevokeHits++
				continue
			}
			if err := j.readLog(tag.Log, buf); err != nil {
				var eb *errBeyond
				if !errors.As(err, &eb) {
					return nil, err
				}
				// The scan read every position it accepted, except data
				// blocks; e2fsck reports the failure at the end.
				res.Bad = append(res.Bad, BadBlock{Tid: t.Tid, Home: tag.Home, Log: tag.Log})
				if res.Err == nil {
					res.Err = err
				}
				continue
			}
			if j.format.HasCsumV2or3() {
				c := jbd2.DataBlockChecksum(j.seed, t.Tid, buf)
				jt := jbd2.Tag{Checksum: tag.Csum}
				if !jt.ChecksumMatches(j.format, c) {
					res.Bad = append(res.Bad, BadBlock{Tid: t.Tid, Home: tag.Home, Log: tag.Log})
					if res.Err == nil {
						res.Err = fmt.Errorf("journal: invalid checksum recovering data block %d in log: %w", tag.Home, ErrChecksum)
					}
					continue
				}
			}
			if tag.Flags&jbd2.FlagEscape != 0 {
				buf[0], buf[1], buf[2], buf[3] = 0xC0, 0x3B, 0x39, 0x98
			}
			if err := w.WriteBlock(tag.Home, buf); err != nil {
				return nil, fmt.Errorf("journal: replaying block %d: %w", tag.Home, err)
			}
			res.Replayed++
		}
	}
	if res.Err == nil {
		res.Sequence = scan.EndTid + 1
	}
	return res, nil
}
