package check

// CheckResizeInode validates the resize inode against the reserved GDT
// blocks (spec 2.8). It runs after the skip decision, before pass 1. Not
// implemented yet.
func (c *Checker) CheckResizeInode() {}
