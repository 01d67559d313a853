package check

import "gofsck/internal/problem"

// Fixes of assorted problems whose "yes" path is made where the problem
// is reported:
//
//   - PR_6_ORPHAN_PRESENT_NO_FILE (checkOrphanFileEnd): the orphan_present
//     feature is cleared from the superblock, as e2fsck's main does.
func init() {
	canRepair(problem.PR_6_ORPHAN_PRESENT_NO_FILE)
}
