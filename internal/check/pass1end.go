package check

import (
	"gofsck/internal/problem"
)

// endPass1 runs the end-of-pass work: EA refcounts and, when blocks were
// claimed twice, passes 1B-1D. After an inode was cleared part way
// through its blocks, e2fsck restarts from the beginning instead of going
// on (ErrRestart).
func (c *Checker) endPass1() error {
	c.checkEARefcounts()
	c.relocateInvalidTables()
	if c.p1.restart && c.repairing() && !c.sink.Aborted() {
		return ErrRestart
	}
	if c.dupCount > 0 && !c.sink.Aborted() {
		if c.opt.Preen {
			c.fix(problem.Problem{Code: problem.PR_1_DUP_BLOCKS_PREENSTOP})
		}
		c.passDup()
	}
	return nil
}
