package dump

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"gofsck/internal/fs"
	"gofsck/internal/ondisk"
)

// PieceKind says what a Piece of an inode's block map is.
type PieceKind uint8

// Piece kinds: file data, and the mapping metadata debugfs lists among the
// data (extent tree blocks; indirect blocks).
const (
	Data PieceKind = iota
	ETB            // extent tree block (index node child); Level is its depth
	IND
	DIND
	TIND
)

// Piece is one entry of debugfs stat's BLOCKS or EXTENTS list: a run of
// logically and physically contiguous data blocks, or one mapping block.
type Piece struct {
	Kind   PieceKind
	Level  int    // ETB: level of the index entry pointing to the block
	Lblk   uint64 // Data: first logical block
	Pblk   uint64 // first physical block
	Len    uint64 // blocks (1 for mapping blocks)
	Uninit bool   // Data from an uninitialised extent
}

// Map is an inode's block map in debugfs' order.
type Map struct {
	Extents bool // the inode uses an extent tree (EXTENTS list) rather than block pointers (BLOCKS)
	Pieces  []Piece
	// Truncated is set when the walk stopped at a limit or at a corrupt
	// node; the pieces found before it are kept.
	Truncated bool
	Err       error
}

// Limits bound a walk over possibly corrupt metadata.
const (
	maxExtentDepth = 5
	maxPieces      = 1 << 20
	maxMapBlocks   = 1 << 16 // mapping blocks read per inode
)

// ErrCorruptMap marks a block map that could not be walked to the end.
var ErrCorruptMap = fmt.Errorf("dump: corrupt block map: %w", ondisk.ErrCorrupt)

// BlockMap walks the block map of inode ino (its bytes in inode). Inline
// data, fast symlinks and device inodes have no map (empty result).
func BlockMap(f *fs.FS, ino uint32, inode ondisk.Inode) Map {
	var m Map
	if inode.Flags()&ondisk.FlagInlineData != 0 {
		return m
	}
	switch inode.Type() {
	case ondisk.SIFREG, ondisk.SIFDIR:
	case ondisk.SIFLNK:
		if inode.Flags()&ondisk.FlagExtents == 0 && inode.BlocksLo() == 0 {
			return m // fast symlink: i_block holds the target
		}
	default:
		return m
	}
	w := walker{f: f, m: &m, buf: make([]byte, f.BlockSize)}
	if inode.Flags()&ondisk.FlagExtents != 0 {
		m.Extents = true
		w.extentNode(ondisk.ExtentHeader(inode.IBlock()), 0, 0)
	} else {
		w.blockMap(inode)
	}
	return m
}

type walker struct {
	f     *fs.FS
	m     *Map
	buf   []byte
	reads int
}

func (w *walker) fail(err error) {
	if w.m.Err == nil {
		w.m.Err = err
	}
	w.m.Truncated = true
}

func (w *walker) add(p Piece) bool {
	if len(w.m.Pieces) >= maxPieces {
		w.fail(errors.New("dump: too many pieces"))
		return false
	}
	// Merge a data run with the previous one as debugfs' block iterator
	// does for block-mapped files (extents are listed one by one).
	if !w.m.Extents && p.Kind == Data && len(w.m.Pieces) > 0 {
		q := &w.m.Pieces[len(w.m.Pieces)-1]
		if q.Kind == Data && q.Lblk+q.Len == p.Lblk && q.Pblk+q.Len == p.Pblk {
			q.Len += p.Len
			return true
		}
	}
	w.m.Pieces = append(w.m.Pieces, p)
	return true
}

func (w *walker) read(blk uint64) ([]byte, bool) {
	if w.reads >= maxMapBlocks {
		w.fail(errors.New("dump: too many mapping blocks"))
		return nil, false
	}
	w.reads++
	if blk < w.f.FirstDataBlock || blk >= w.f.BlocksCount {
		w.fail(fmt.Errorf("%w: block %d outside the filesystem", ErrCorruptMap, blk))
		return nil, false
	}
	b := make([]byte, w.f.BlockSize)
	if err := w.f.ReadBlock(blk, b); err != nil {
		w.fail(err)
		return nil, false
	}
	return b, true
}

// extentNode lists the node h at depth level (0 = root in the inode).
func (w *walker) extentNode(h ondisk.ExtentHeader, level, depthSeen int) bool {
	if err := h.Verify(); err != nil {
		if level > 0 || len(h) != ondisk.IBlockSize {
			w.fail(fmt.Errorf("%w: %v", ErrCorruptMap, err))
			return false
		}
		// The root's eh_max is 4 in a 60-byte i_block: Verify allows
		// exactly that, so any error here is real corruption.
		w.fail(fmt.Errorf("%w: %v", ErrCorruptMap, err))
		return false
	}
	if int(h.Depth()) > maxExtentDepth || depthSeen > maxExtentDepth {
		w.fail(fmt.Errorf("%w: extent tree too deep", ErrCorruptMap))
		return false
	}
	n := int(h.Entries())
	if h.Depth() == 0 {
		for i := 0; i < n; i++ {
			e := h.Leaf(i)
			if e.Len == 0 {
				continue
			}
			if !w.add(Piece{Kind: Data, Lblk: uint64(e.Lblk), Pblk: e.Pblk, Len: uint64(e.Len), Uninit: e.Uninit}) {
				return false
			}
		}
		return true
	}
	for i := 0; i < n; i++ {
		ix := h.Idx(i)
		if !w.add(Piece{Kind: ETB, Level: level, Pblk: ix.Leaf, Len: 1}) {
			return false
		}
		b, ok := w.read(ix.Leaf)
		if !ok {
			return false
		}
		child := ondisk.ExtentHeader(b)
		if child.Verify() == nil && child.Depth() != h.Depth()-1 {
			w.fail(fmt.Errorf("%w: extent depth %d under %d", ErrCorruptMap, child.Depth(), h.Depth()))
			return false
		}
		if !w.extentNode(child, level+1, depthSeen+1) {
			return false
		}
	}
	return true
}

// blockMap lists a block-mapped inode: 12 direct pointers, then the
// indirect, double and triple indirect trees, each mapping block listed
// before the blocks it maps (debugfs' order).
func (w *walker) blockMap(inode ondisk.Inode) {
	per := uint64(w.f.BlockSize / 4)
	for i := 0; i < 12; i++ {
		if b := uint64(inode.Block(i)); b != 0 {
			if !w.add(Piece{Kind: Data, Lblk: uint64(i), Pblk: b, Len: 1}) {
				return
			}
		}
	}
	lblk := uint64(12)
	span := per
	for k, kind := range []PieceKind{IND, DIND, TIND} {
		if b := uint64(inode.Block(12 + k)); b != 0 {
			if !w.indirect(b, k, kind, lblk) {
				return
			}
		}
		lblk += span
		span *= per
	}
}

// indirect lists mapping block blk of the given depth (0 = IND) whose first
// mapped logical block is lblk.
func (w *walker) indirect(blk uint64, depth int, kind PieceKind, lblk uint64) bool {
	if !w.add(Piece{Kind: kind, Pblk: blk, Len: 1}) {
		return false
	}
	b, ok := w.read(blk)
	if !ok {
		return false
	}
	per := uint64(w.f.BlockSize / 4)
	span := uint64(1)
	for i := 0; i < depth; i++ {
		span *= per
	}
	for i := uint64(0); i < per; i++ {
		p := uint64(binary.LittleEndian.Uint32(b[i*4:]))
		if p == 0 {
			continue
		}
		if depth == 0 {
			if !w.add(Piece{Kind: Data, Lblk: lblk + i, Pblk: p, Len: 1}) {
				return false
			}
			continue
		}
		if !w.indirect(p, depth-1, kind-1, lblk+i*span) {
			return false
		}
	}
	return true
}

// String renders the map as debugfs stat's list line (without the
// "EXTENTS:"/"BLOCKS:" header).
func (m Map) String() string {
	var b strings.Builder
	for i, p := range m.Pieces {
		if i > 0 {
			b.WriteString(", ")
		}
		switch p.Kind {
		case ETB:
			fmt.Fprintf(&b, "(ETB%d):%d", p.Level, p.Pblk)
		case IND, DIND, TIND:
			fmt.Fprintf(&b, "(%s):%d", [...]string{"", "IND", "DIND", "TIND"}[p.Kind-ETB], p.Pblk)
		default:
			u := ""
			if p.Uninit {
				u = "[u]"
			}
			if p.Len == 1 {
				fmt.Fprintf(&b, "(%d%s):%d", p.Lblk, u, p.Pblk)
			} else {
				fmt.Fprintf(&b, "(%d-%d%s):%d-%d", p.Lblk, p.Lblk+p.Len-1, u, p.Pblk, p.Pblk+p.Len-1)
			}
		}
	}
	return b.String()
}

// Fragments returns the number of physically separate pieces a reader
// meets going through the map in order (data and mapping blocks alike):
// 1 for a contiguous file, 0 for an empty one. Each boundary costs a seek.
func (m Map) Fragments() int {
	n := 0
	var next uint64
	for i, p := range m.Pieces {
		if i == 0 || p.Pblk != next {
			n++
		}
		next = p.Pblk + p.Len
	}
	return n
}

// DataBlocks counts the mapped data blocks.
func (m Map) DataBlocks() uint64 {
	var n uint64
	for _, p := range m.Pieces {
		if p.Kind == Data {
			n += p.Len
		}
	}
	return n
}

// Lookup returns the physical block of logical block lblk, if mapped.
func (m Map) Lookup(lblk uint64) (uint64, bool) {
	for _, p := range m.Pieces {
		if p.Kind == Data && lblk >= p.Lblk && lblk-p.Lblk < p.Len {
			return p.Pblk + (lblk - p.Lblk), true
		}
	}
	return 0, false
}

// DataPieces counts the data entries of the map: extents for an extent
// inode, contiguous runs for a block-mapped one.
func (m Map) DataPieces() int {
	n := 0
	for _, p := range m.Pieces {
		if p.Kind == Data {
			n++
		}
	}
	return n
}
