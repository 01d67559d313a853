// Package journal reads a jbd2 journal through a narrow device interface,
// decides whether it needs recovery and whether e2fsck would accept it, and
// computes what replaying it would write.
//
// The log is walked the way e2fsck 1.47 (e2fsck/recovery.c, shared with the
// kernel's fs/jbd2/recovery.c) walks it, so that the verdict — how many
// transactions are replayed, which commit is reported corrupt, which
// checksum error aborts recovery — is the same:
//
//   - Scan is PASS_SCAN, extended to keep what PASS_REVOKE and PASS_REPLAY
//     need (the tags and revoke records of every complete transaction), so
//     the log is read once. It starts at s_start expecting s_sequence, wraps
//     from the end of the log area back to s_first, verifies descriptor and
//     revoke tails and commit checksums (v2/v3), the v1 transaction crc32,
//     and applies the commit-time and async_commit rules for checksum
//     failures. It never loops: a walk that would visit more blocks than the
//     journal holds is reported as corrupt (e2fsck would spin).
//   - Replay applies revoke-by-transaction-ID, verifies per-block
//     checksums (v2/v3) and restores escaped magic numbers, handing each
//     replayed block to a Writer in log order (later copies win). Overlay is
//     an in-memory Writer.
//
// A read-only check needs only Open and Scan (or just Journal.NeedsRecovery).
//
// Fast commits: ScanFastCommits scans the fast-commit area as e2fsck does
// (tags, tail checksums, the verdict that fails a recovery); applying the
// fast commits' records to the filesystem is the caller's work (it needs
// the filesystem library, not the log). e2fsck 1.47 wraps the normal log
// at the end of the fast-commit area rather than at the end of the normal
// log (its wrap macro uses j_fc_last); this package wraps where the kernel
// writes, at the end of the normal log, unless WrapLikeE2fsck is called. Locating the
// journal (inode 8 or an external device) and rewriting the journal and
// filesystem superblocks after replay are the callers' work;
// ReplayResult.Sequence and FailedCommit say what e2fsck would store.
package journal

import (
	"errors"
	"fmt"
	"io"

	"gofsck/internal/ondisk/jbd2"
)

// Device is what the journal is read from: the filesystem device for an
// internal journal, the journal device for an external one.
type Device interface {
	ReadAt(p []byte, off int64) (int, error)
}

// Map gives the physical block of logical journal block lblk: the journal
// inode's block map for an internal journal, identity (plus an offset) for
// an external one. A nil Map is the identity.
type Map func(lblk uint64) (pblk uint64, ok bool)

// Errors. ErrChecksum is a checksum failure that makes e2fsck's recovery
// fail ("Journal checksum error found"); corrupt log structure matches
// jbd2.ErrCorrupt. Both are verdicts on the data, reported in ScanResult.Err
// and ReplayResult.Err; the error results of Open, Scan and Replay are
// reserved for I/O failures and unusable superblocks.
var (
	ErrChecksum = errors.New("journal: checksum error")
)

// Journal is an opened journal: a validated superblock and the geometry of
// the log.
type Journal struct {
	dev       Device
	m         Map
	blockSize uint32
	sb        jbd2.Superblock // copy
	format    jbd2.Format
	layout    jbd2.Layout
	seed      uint32
	// wrapLast is where a log position wraps back to s_first: the end of
	// the normal log, or s_maxlen after WrapLikeE2fsck.
	wrapLast uint64

	scan *ScanResult // cached by Scan
}

// Open reads the journal superblock at logical block 0 and validates it with
// jbd2.Superblock.Validate. blockSize is the filesystem block size and
// length the journal's length in blocks (i_size / block size of the journal
// inode, or the external device's block count). A superblock that fails
// validation gives an error wrapping *jbd2.ValidationError.
func Open(dev Device, blockSize uint32, length uint64, m Map) (*Journal, error) {
	return OpenAt(dev, blockSize, length, m, 0)
}

// OpenAt is Open for a journal whose superblock is at logical block sbBlock:
// an external journal device keeps the ext2 superblock first and the journal
// superblock in the next block (block 2 for 1 KiB blocks, else 1), and log
// block numbers count from the start of the device.
func OpenAt(dev Device, blockSize uint32, length uint64, m Map, sbBlock uint64) (*Journal, error) {
	if blockSize < jbd2.SuperblockSize || blockSize > 1<<16 || blockSize&(blockSize-1) != 0 {
		return nil, fmt.Errorf("journal: block size %d: %w", blockSize, jbd2.ErrCorrupt)
	}
	j := &Journal{dev: dev, m: m, blockSize: blockSize}
	buf := make([]byte, blockSize)
	if err := j.readBlock(sbBlock, buf); err != nil {
		return nil, fmt.Errorf("journal: superblock: %w", err)
	}
	copy(j.sb[:], buf)
	if err := j.sb.Validate(blockSize, length); err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	l, err := j.sb.Layout(length)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	j.layout = l
	j.wrapLast = l.Last
	j.format = j.sb.Format()
	if j.format.HasCsumV2or3() {
		j.seed = j.sb.ChecksumSeed()
	}
	return j, nil
}

// Superblock returns the journal superblock as read.
func (j *Journal) Superblock() *jbd2.Superblock { return &j.sb }

// Format returns the block format (tag size, checksums) of the log.
func (j *Journal) Format() jbd2.Format { return j.format }

// Layout returns the log geometry.
func (j *Journal) Layout() jbd2.Layout { return j.layout }

// NeedsRecovery reports whether the log is non-empty (s_start != 0).
func (j *Journal) NeedsRecovery() bool { return j.sb.Start() != 0 }

// errBeyond marks a log position outside the journal or unmapped: e2fsck's
// jread fails with EFSCORRUPTED or a bmap error.
type errBeyond struct {
	lblk uint64
	why  string
}

func (e *errBeyond) Error() string {
	return fmt.Sprintf("journal: log block %d %s", e.lblk, e.why)
}
func (e *errBeyond) Unwrap() error { return jbd2.ErrCorrupt }

// readBlock reads logical journal block lblk into p (len(p) == block size).
// Corruption (block out of range or unmapped) gives an *errBeyond; device
// errors are returned wrapped.
func (j *Journal) readBlock(lblk uint64, p []byte) error {
	pblk := lblk
	if j.m != nil {
		var ok bool
		if pblk, ok = j.m(lblk); !ok {
			return &errBeyond{lblk, "is not mapped"}
		}
	}
	bs := uint64(j.blockSize)
	if pblk > (1<<63-1)/bs {
		return &errBeyond{lblk, "maps beyond the device"}
	}
	n, err := j.dev.ReadAt(p, int64(pblk*bs))
	if n == len(p) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("journal: reading log block %d (block %d): %w", lblk, pblk, err)
}

// ReadBlock reads logical journal block lblk (which must lie inside the
// journal) into p, whose length must be the block size. It is how callers
// look at the fast-commit area or dump log blocks.
func (j *Journal) ReadBlock(lblk uint64, p []byte) error {
	if len(p) != int(j.blockSize) {
		return fmt.Errorf("journal: buffer of %d bytes for %d-byte blocks", len(p), j.blockSize)
	}
	return j.readLog(lblk, p)
}

// readLog is jread: a log read that must stay inside the journal.
func (j *Journal) readLog(lblk uint64, p []byte) error {
	if lblk >= j.layout.TotalLen {
		return &errBeyond{lblk, "is beyond the journal"}
	}
	return j.readBlock(lblk, p)
}

// wrap brings a log position that ran off the end of the log area back to
// its start.
func (j *Journal) wrap(pos uint64) uint64 {
	if pos >= j.wrapLast {
		pos -= j.wrapLast - j.layout.First
	}
	return pos
}

// WrapLikeE2fsck makes the walk of a journal with fast commits wrap where
// e2fsck 1.47.0 wraps it, at s_maxlen (the end of the fast-commit area,
// its j_fc_last), rather than at the end of the normal log where the
// kernel wraps: a log that wrapped is then read into the fast-commit
// area, as e2fsck reads it. It must be called before Scan.
func (j *Journal) WrapLikeE2fsck() {
	if j.format.HasFastCommit() && j.layout.FCFirst != 0 {
		j.wrapLast = uint64(j.sb.MaxLen())
		j.scan = nil
	}
}
