package journal

import (
	"errors"
	"fmt"

	"gofsck/internal/ondisk/jbd2"
)

// StopReason says why the walk of the log ended.
type StopReason int

const (
	// StopEmpty: s_start is 0, nothing to recover.
	StopEmpty StopReason = iota
	// StopNoMagic: the next block has no jbd2 magic (normal end of log).
	StopNoMagic
	// StopSequence: the next block belongs to another transaction (normal
	// end of log).
	StopSequence
	// StopBlockType: a block with an unknown type (normal end of log).
	StopBlockType
	// StopStale: a checksum failed in a transaction whose commit time is
	// older than its predecessor's: left-over blocks of an older log, the
	// log ends there.
	StopStale
	// StopCommitChecksum: a commit block failed its checksum without
	// async_commit; the transaction is not replayed and is reported
	// corrupt (ScanResult.FailedCommit, PR_0_JNL_TXN_CORRUPT).
	StopCommitChecksum
	// StopAfterFailedCommit: with the v1 checksum and async_commit, a
	// commit block found after a failed one; the failed one is reported.
	StopAfterFailedCommit
	// StopReadError: a data block could not be read while computing the v1
	// checksum; the log ends there.
	StopReadError
	// StopChecksumError: a descriptor or revoke block failed its checksum
	// in a transaction that is not older than its predecessor. Recovery
	// fails (ErrChecksum) and nothing is replayed.
	StopChecksumError
	// StopCorrupt: the log points outside the journal or at an unmapped
	// block. Recovery fails and nothing is replayed.
	StopCorrupt
	// StopLoop: the walk would visit more blocks than the journal has.
	StopLoop
)

var stopNames = [...]string{
	StopEmpty:             "journal empty",
	StopNoMagic:           "no magic number",
	StopSequence:          "unexpected sequence",
	StopBlockType:         "unknown block type",
	StopStale:             "stale transaction",
	StopCommitChecksum:    "commit checksum mismatch",
	StopAfterFailedCommit: "commit after failed commit",
	StopReadError:         "unreadable data block",
	StopChecksumError:     "descriptor or revoke checksum mismatch",
	StopCorrupt:           "log outside the journal",
	StopLoop:              "log longer than the journal",
}

func (s StopReason) String() string {
	if s >= 0 && int(s) < len(stopNames) {
		return stopNames[s]
	}
	return fmt.Sprintf("stop(%d)", int(s))
}

// Tag is one block logged by a transaction.
type Tag struct {
	Home  uint64       // filesystem block the data belongs to
	Log   uint64       // logical journal block holding the copy
	Flags jbd2.TagFlag // t_flags
	Csum  uint32       // t_checksum (v2: low 16 bits)
}

// Transaction is one complete (committed) transaction of the log.
type Transaction struct {
	Tid         uint32
	Descriptors []uint64 // log blocks of its descriptor blocks
	Tags        []Tag    // logged blocks, in log order
	RevokeLog   []uint64 // log blocks of its revoke blocks
	Revoked     []uint64 // revoked filesystem blocks
	Commit      uint64   // log block of the commit block
	CommitSec   uint64
	CommitNsec  uint32

	revokeErr error // a revoke block with a bad r_count
}

// ScanResult is what PASS_SCAN learnt about the log.
type ScanResult struct {
	// StartTid is s_sequence, the first transaction expected.
	StartTid uint32
	// EndTid is the first transaction that is not replayed (the kernel's
	// end_transaction): Transactions hold StartTid..EndTid-1.
	EndTid uint32
	// Transactions are the complete transactions to replay, in order.
	Transactions []Transaction
	// Stop says why the walk ended, at log block StopBlock.
	Stop      StopReason
	StopBlock uint64
	// FailedCommit is the transaction e2fsck reports with
	// PR_0_JNL_TXN_CORRUPT (journal transaction N was corrupt, replay was
	// aborted); HasFailedCommit says whether there is one. e2fsck then sets
	// the journal's s_errno (-EINVAL), which makes the filesystem get the
	// error flag and a full check. (e2fsck cannot report a failed
	// transaction 0; it prints nothing then.)
	FailedCommit    uint32
	HasFailedCommit bool
	// Err is non-nil when e2fsck's recovery fails before replaying anything:
	// ErrChecksum for a descriptor/revoke checksum error, an error matching
	// jbd2.ErrCorrupt for a log running outside the journal, a walk that
	// loops, or a revoke block with a bad r_count (the latter reported by
	// e2fsck as "Invalid argument while recovering journal").
	Err error
}

// tidBefore is the kernel's !tid_geq(a, b): a comes before b in modulo-2^32
// transaction order.
func tidBefore(a, b uint32) bool { return int32(a-b) < 0 }

// Scan walks the log once (see the package doc) and returns its verdict.
// The error result is for device I/O errors only. The result is cached.
func (j *Journal) Scan() (*ScanResult, error) {
	if j.scan != nil {
		return j.scan, nil
	}
	r, err := j.scanLog()
	if err != nil {
		return nil, err
	}
	j.scan = r
	return r, nil
}

func (j *Journal) scanLog() (*ScanResult, error) {
	res := &ScanResult{StartTid: j.sb.Sequence(), EndTid: j.sb.Sequence()}
	if j.sb.Start() == 0 {
		res.Stop = StopEmpty
		return res, nil
	}
	var (
		f        = j.format
		bs       = int(j.blockSize)
		meta     = make([]byte, bs)
		data     []byte // only for the v1 checksum
		next     = uint64(j.sb.Start())
		tid      = j.sb.Sequence()
		endSet   bool
		end      uint32
		crcSum   = ^uint32(0)
		needTime bool // need_check_commit_time
		lastTime uint64
		cur      Transaction
		// budget bounds the number of log positions the walk may advance
		// over: a log cannot be longer than the journal.
		budget = j.layout.TotalLen + 1
		done   []Transaction
	)
	cur.Tid = tid
	logSpan := j.layout.Last - j.layout.First

	advance := func(n uint64) bool {
		if n > budget {
			budget = 0
			return false
		}
		budget -= n
		return true
	}
	fail := func(stop StopReason, at uint64, err error) (*ScanResult, error) {
		res.Stop, res.StopBlock, res.Err = stop, at, err
		res.Transactions = nil
		res.EndTid = res.StartTid
		if endSet {
			res.EndTid = end
		}
		return res, nil
	}

walk:
	for {
		pos := next
		if !advance(1) {
			return fail(StopLoop, pos, fmt.Errorf("journal: log walk longer than the journal at block %d: %w", pos, jbd2.ErrCorrupt))
		}
		if err := j.readLog(pos, meta); err != nil {
			var eb *errBeyond
			if errors.As(err, &eb) {
				return fail(StopCorrupt, pos, err)
			}
			return nil, err
		}
		next = j.wrap(next + 1)
		h, _ := jbd2.HeaderOf(meta)
		if !h.Valid() {
			res.Stop, res.StopBlock = StopNoMagic, pos
			break
		}
		if h.Sequence() != tid {
			res.Stop, res.StopBlock = StopSequence, pos
			break
		}
		switch h.BlockType() {
		case jbd2.BlockDescriptor:
			d, err := jbd2.DescriptorOf(meta, f)
			if err != nil {
				return fail(StopCorrupt, pos, err)
			}
			if !d.ChecksumValid(j.seed) {
				// Possibly a stale block of an older log; decided at
				// the commit block.
				needTime = true
			}
			cur.Descriptors = append(cur.Descriptors, pos)
			count := uint64(d.TagCount())
			if count > logSpan {
				return fail(StopCorrupt, pos, fmt.Errorf("journal: descriptor at log block %d lists %d blocks, more than the log holds: %w", pos, count, jbd2.ErrCorrupt))
			}
			if !advance(count) {
				return fail(StopLoop, pos, fmt.Errorf("journal: log walk longer than the journal at block %d: %w", pos, jbd2.ErrCorrupt))
			}
			v1 := f.HasChecksumV1() && !needTime && !endSet
			if v1 {
				crcSum = jbd2.V1Checksum(crcSum, meta)
				if data == nil {
					data = make([]byte, bs)
				}
			}
			for it := d.Tags(); ; {
				t, ok := it.Next()
				if !ok {
					break
				}
				io := next
				next = j.wrap(next + 1)
				cur.Tags = append(cur.Tags, Tag{Home: t.Block, Log: io, Flags: t.Flags, Csum: t.Checksum})
				if v1 {
					if err := j.readLog(io, data); err != nil {
						var eb *errBeyond
						if !errors.As(err, &eb) {
							return nil, err
						}
						res.Stop, res.StopBlock = StopReadError, io
						break walk
					}
					crcSum = jbd2.V1Checksum(crcSum, data)
				}
			}

		case jbd2.BlockCommit:
			c, err := jbd2.CommitOf(meta)
			if err != nil {
				return fail(StopCorrupt, pos, err)
			}
			commitTime := c.CommitSec()
			if needTime {
				if commitTime >= lastTime {
					return fail(StopChecksumError, pos, fmt.Errorf("journal: invalid checksum in transaction %d: %w", tid, ErrChecksum))
				}
				res.Stop, res.StopBlock = StopStale, pos
				break walk
			}
			bad := false
			if f.HasChecksumV1() {
				if endSet {
					res.FailedCommit, res.HasFailedCommit = end, end != 0
					res.Stop, res.StopBlock = StopAfterFailedCommit, pos
					break walk
				}
				if c.V1ChecksumMatches(crcSum) {
					crcSum = ^uint32(0)
				} else {
					bad = true
				}
			}
			if !bad && !c.ChecksumValid(f, j.seed) {
				bad = true
			}
			if bad {
				if commitTime < lastTime {
					res.Stop, res.StopBlock = StopStale, pos
					break walk
				}
				end, endSet = tid, true
				if !f.HasAsyncCommit() {
					res.FailedCommit, res.HasFailedCommit = tid, tid != 0
					res.Stop, res.StopBlock = StopCommitChecksum, pos
					break walk
				}
			}
			lastTime = commitTime
			cur.Commit, cur.CommitSec, cur.CommitNsec = pos, commitTime, c.CommitNsec()
			done = append(done, cur)
			tid++
			cur = Transaction{Tid: tid}

		case jbd2.BlockRevoke:
			rv, err := jbd2.RevokeOf(meta, f)
			if err != nil {
				return fail(StopCorrupt, pos, err)
			}
			if !rv.ChecksumValid(j.seed) {
				needTime = true
			}
			cur.RevokeLog = append(cur.RevokeLog, pos)
			it := rv.Records()
			for {
				b, ok := it.Next()
				if !ok {
					break
				}
				cur.Revoked = append(cur.Revoked, b)
			}
			if err := it.Err(); err != nil && cur.revokeErr == nil {
				cur.revokeErr = fmt.Errorf("journal: revoke block at log block %d: %w", pos, err)
			}

		default:
			res.Stop, res.StopBlock = StopBlockType, pos
			break walk
		}
	}

	if !endSet {
		end = tid
	}
	res.EndTid = end
	// Keep the transactions before end_transaction: with async_commit the
	// walk may have gone on past a failed commit.
	n := 0
	for n < len(done) && tidBefore(done[n].Tid, end) {
		n++
	}
	res.Transactions = done[:n]
	// PASS_REVOKE reads the revoke blocks of those transactions and fails on
	// a bad r_count.
	for i := range res.Transactions {
		if err := res.Transactions[i].revokeErr; err != nil {
			res.Err = err
			res.Transactions = nil
			break
		}
	}
	return res, nil
}
