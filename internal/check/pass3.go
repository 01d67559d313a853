package check

import (
	"context"

	"gofsck/internal/bitmap"
	"gofsck/internal/ondisk"
	"gofsck/internal/problem"
)

// pass3 checks that every directory is connected to the root and that
// each '..' names the directory's parent.
func (c *Checker) pass3(ctx context.Context) error {
	f := c.fs
	if c.inodeUsed.Test(ondisk.RootIno) {
		if !c.inodeDir.Test(ondisk.RootIno) {
			c.fix(problem.Problem{Code: problem.PR_3_ROOT_NOT_DIR_ABORT, Ino: ondisk.RootIno})
			c.abort = true
			return nil
		}
	} else {
		if !c.fix(problem.Problem{Code: problem.PR_3_NO_ROOT_INODE, Ino: ondisk.RootIno}) {
			c.fix(problem.Problem{Code: problem.PR_3_NO_ROOT_INODE_ABORT, Ino: ondisk.RootIno})
			c.abort = true
			return nil
		}
		if c.repairing() && !c.createRoot() {
			return nil
		}
	}
	done := bitmap.New(uint64(f.InodesCount) + 1)
	done.Set(ondisk.RootIno)
	var loop *bitmap.Bitmap
	// lastDir is e2fsck's pctx->dir, shared by every directory's check:
	// a failed '..' lookup leaves the previous value in the message.
	var lastDir uint32
	ndirs := uint64(len(c.dirs))
	c.progress(3, 0, ndirs)
	for i := range c.dirs {
		if i&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if c.restartRequested() {
			return c.pass3Restart() // pass 3 stops at the next directory
		}
		// Before the directory, as e2fsck counts it.
		c.progress(3, uint64(i+1), ndirs)
		dir := c.dirs[i].ino
		if !c.inodeDir.Test(uint64(dir)) {
			continue
		}
		c.checkDirectory(dir, done, &loop, &lastDir)
		if c.sink.Aborted() {
			return nil
		}
	}
	if c.repairing() {
		// e2fsck makes sure /lost+found exists whenever it may write.
		c.getLostAndFound(true)
		if c.abort || c.sink.Aborted() {
			return nil
		}
	}
	if len(c.rehash) > 0 {
		c.pass3A()
	}
	if c.restartRequested() {
		return c.pass3Restart()
	}
	return nil
}

// checkDirectory walks parent pointers from dir until a directory already
// proven connected, offering to reconnect one without a parent.
func (c *Checker) checkDirectory(dir uint32, done *bitmap.Bitmap, loop **bitmap.Bitmap, lastDir *uint32) {
	ino := dir
	loopPass := false
	parentCount := 0
	for {
		if done.TestAndSet(uint64(ino)) {
			break
		}
		di := c.findDir(ino)
		if di == nil {
			c.fix(problem.Problem{Code: problem.PR_3_NO_DIRINFO, Ino: ino})
			return
		}
		parent := di.parent
		if parent == 0 || (loopPass && (*loop).Test(uint64(parent))) {
			p := problem.Problem{Ino: ino}
			if parent != 0 {
				*lastDir = parent
				p.Code = problem.PR_3_LOOPED_DIR
			} else {
				if dd, ok := c.lookupDotDot(ino); ok {
					*lastDir = dd
				}
				p.Code = problem.PR_3_UNCONNECTED_DIR
			}
			p.Dir = *lastDir
			if c.fix(p) && c.repairing() {
				if c.reconnectFile(p.Ino) {
					c.unmarkValid()
				} else {
					c.fixDotDot(p.Ino, c.lpf)
				}
			}
			break
		}
		ino = parent
		if loopPass {
			(*loop).Set(uint64(ino))
		} else if parentCount++; parentCount > 2048 {
			loopPass = true
			*loop = bitmap.New(uint64(c.fs.InodesCount) + 1)
			ino = dir
		}
	}
	di := c.findDir(dir)
	if di == nil {
		return
	}
	*lastDir = di.parent
	if di.dotdot != di.parent {
		if c.fix(problem.Problem{Code: problem.PR_3_BAD_DOT_DOT, Ino: dir, Ino2: di.dotdot, Dir: di.parent}) && c.repairing() {
			c.fixDotDot(dir, di.parent)
		}
	}
}

// lookupDotDot returns the inode named by dir's '..' entry, as
// ext2fs_lookup finds it (blocks read must pass their checksums); ok is
// false when there is none.
func (c *Checker) lookupDotDot(dir uint32) (found uint32, ok bool) {
	c.iterateDirOpt(dir, true, func(ino uint32, name []byte) bool {
		if string(name) == ".." {
			found, ok = ino, true
			return false
		}
		return true
	})
	return found, ok
}

// pass3A rebuilds each directory queued for rebuilding (rehash.go); in
// read-only mode it only reports the duplicate names a rebuild would
// resolve, as e2fsck does.
func (c *Checker) pass3A() {
	dirs := make([]uint32, 0, len(c.rehash))
	for ino := range c.rehash {
		dirs = append(dirs, ino)
	}
	sortU32(dirs)
	first := true
	for _, dir := range dirs {
		if !c.inodeUsed.Test(uint64(dir)) || !c.inodeDir.Test(uint64(dir)) {
			continue
		}
		if first {
			c.sink.Header(problem.PR_3A_PASS_HEADER)
			first = false
		}
		c.rehashDir(dir)
	}
}
