package ondisk

import "encoding/binary"

// Slot returns inode slot i of an orphan file block (0: empty);
// 0 <= i < Slots().
func (b OrphanBlock) Slot(i int) uint32 { return binary.LittleEndian.Uint32(b[4*i:]) }
