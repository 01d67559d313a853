package check

import (
	"gofsck/internal/ext2fs"
	"gofsck/internal/problem"
)

// Multi-mount protection. The command (cmd/gofsck/mmp.go) reads the MMP
// block before the journal check, as e2fsck_check_mmp does, and reports
// PR_0_MMP_INVALID_BLK (yes: s_mmp_block = 0, written with the primary
// superblock), PR_0_MMP_INVALID_MAGIC and PR_0_MMP_CSUM_INVALID (yes: the
// block is reset, ext2fs_mmp_clear) through the same reporter; it then
// runs the library's start protocol on a writable run and writes the clean
// sequence at the end. The decisions it makes depend only on the
// superblock and the block's bytes and are the library's (ext2fs/mmp.go);
// this file names them for the command. Pass 1 marks the block in use.

func init() {
	canRepair(problem.PR_0_MMP_INVALID_BLK, problem.PR_0_MMP_INVALID_MAGIC, problem.PR_0_MMP_CSUM_INVALID)
}

// The library's MMP errors and decisions under the names the command
// uses.
var (
	MMPBadBlock, MMPMagicInvalid, MMPCsumInvalid = ext2fs.MMPBadBlock, ext2fs.MMPMagicInvalid, ext2fs.MMPCsumInvalid
	MMPFsckOn, MMPUnknownSeq                     = ext2fs.MMPFsckOn, ext2fs.MMPUnknownSeq
	MMPFailed, MMPChangeAbort                    = ext2fs.MMPFailed, ext2fs.MMPChangeAbort

	MMPBlockInRange, VerifyMMP, MMPSeqState = ext2fs.MMPBlockInRange, ext2fs.VerifyMMP, ext2fs.MMPSeqState
	MMPInterval, MMPSleep, ResetMMP         = ext2fs.MMPInterval, ext2fs.MMPSleep, ext2fs.ResetMMP
)
