package check

import (
	"errors"
	"strconv"

	"gofsck/internal/ext2fs"
	"gofsck/internal/fs"
	"gofsck/internal/problem"
)

// Read errors are handled the way e2fsck's I/O channel handler does
// (e2fsck/ehandler.c): a failed read of several blocks is retried block
// by block; for each block that still fails the block and the error are
// printed (with the operation under way, when one is named) and the
// answer to "Ignore error?" decides. Yes (-y, or a terminal's y) asks
// "Force rewrite?" and, on yes, writes the block back zero-filled, so that
// the device can remap the sector; the read then counts as a success
// with zeros where the data could not be read. No (-n) hands the error to
// the caller, which goes on as e2fsck's caller does: pass 1's inode scan
// stops the run (PR_1_ISCAN_ERROR), pass 2 asks PR_2_READ_DIRBLOCK.
// Preen mode halts at the first read error, as e2fsck's preenhalt does.
//
// Blocks outside the filesystem are refused before any read and never go
// through the handler.

// e2fsck's operation names, as the handler prints them after "while".
const (
	opInodeScan = "getting next inode from scan"
	opDirBlock  = "reading directory block"
)

// readBlockIO is a single-block read of pass 1's block checks through the
// handler. The operation named is e2fsck's: "reading indirect blocks of
// inode N" while the inodes it defers (block maps, EA blocks) have their
// blocks checked, none otherwise.
func (c *Checker) readBlockIO(s *inodeScratch, blk uint64, buf []byte) error {
	err := c.fs.ReadBlock(blk, buf)
	if err == nil {
		return nil
	}
	op := ""
	if s.ioIno != 0 {
		op = "reading indirect blocks of inode " + strconv.FormatUint(uint64(s.ioIno), 10)
	}
	if c.readFailed(blk, err, op, buf) {
		return nil
	}
	return err
}

// inodeScanBlocks is how many blocks of inode table the library's inode
// scan reads at once (EXT2_INODE_SCAN_DEFAULT_BUFFER_BLOCKS): its read
// errors surface one such chunk at a time, which decides where in the
// transcript they appear.
const inodeScanBlocks = 8

// errNextInode is the library's text for a failed inode table read
// (EXT2_ET_NEXT_INODE_READ), which pass 1 prints with PR_1_ISCAN_ERROR.
const errNextInode = string(ext2fs.ErrNextInodeRead)

// readFailed runs the handler for one block whose read failed with err
// during op ("" when none is named); buf is the block's buffer. It
// returns true when the error is ignored: buf then holds zeros.
func (c *Checker) readFailed(blk uint64, err error, op string, buf []byte) bool {
	clear(buf)
	var rangeErr *fs.BlockRangeError
	if errors.As(err, &rangeErr) {
		return false // never read, nothing to report or rewrite
	}
	p := problem.Problem{Code: problem.PR_IO_READ_ERROR, Blk: blk, Err: ioErrorText(err)}
	if op != "" {
		p.Code, p.Str = problem.PR_IO_READ_ERROR_WHILE, op
	}
	if !c.fix(p) {
		return false
	}
	if c.fix(problem.Problem{Code: problem.PR_IO_FORCE_REWRITE}) {
		c.writeBlockUncounted(blk, buf)
	}
	return true
}

// retryBlocks is the handler's block-by-block retry of a failed read of
// the blocks at blk into buf. Blocks on the bad-blocks list are not read
// (the inode scan zero-fills them instead).
func (c *Checker) retryBlocks(blk uint64, buf []byte, op string) error {
	bs := c.fs.BlockSize
	for i := 0; (i+1)*bs <= len(buf); i++ {
		b := buf[i*bs : (i+1)*bs]
		if c.badBlocks[blk+uint64(i)] {
			clear(b)
			continue
		}
		if err := c.fs.ReadBlock(blk+uint64(i), b); err != nil && !c.readFailed(blk+uint64(i), err, op, b) {
			return err
		}
	}
	return nil
}

// lastScannedBefore returns the last inode the library's inode scan
// returns before group g's table: the end of the used part of the
// nearest earlier group that has one (0 when none). PR_1_ISCAN_ERROR
// names it when the first read of g's table fails.
func (c *Checker) lastScannedBefore(g uint32) uint32 {
	for g > 0 {
		g--
		if _, n := c.usedInodeTable(g); n > 0 {
			return g*c.fs.InodesPerGroup + c.usedInodes(g)
		}
	}
	return 0
}
