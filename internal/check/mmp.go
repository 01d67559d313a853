package check

import "gofsck/internal/problem"

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
