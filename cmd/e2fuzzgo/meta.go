package main

import (
	"errors"
	"fmt"
	"sort"

	"gofsck/internal/blockdev"
	"gofsck/internal/dump"
	"gofsck/internal/fs"
	"gofsck/internal/ondisk"
)

// Kind is a class of metadata block. The fuzzer picks a kind first and a
// block of that kind second, so that the few superblock and descriptor
// blocks are hit as often as the many inode-table blocks.
type Kind int

// Kinds of metadata blocks, in the order Meta lists them.
const (
	KindSuper   Kind = iota // primary and backup superblocks
	KindGDT                 // group descriptors (and reserved GDT blocks)
	KindBitmap              // block and inode bitmaps
	KindItable              // inode table blocks holding in-use inodes
	KindDir                 // directory blocks
	KindMap                 // extent tree blocks, indirect blocks
	KindXattr               // external xattr blocks
	KindJournal             // journal blocks (internal journal)
	numKinds
)

var kindNames = [numKinds]string{"super", "gdt", "bitmap", "itable", "dir", "map", "xattr", "journal"}

func (k Kind) String() string {
	if k >= 0 && k < numKinds {
		return kindNames[k]
	}
	return fmt.Sprintf("kind%d", int(k))
}

// Meta is the metadata of one clean image: for each kind, the ascending
// numbers of its blocks. Super holds byte offsets rather than blocks for
// KindSuper (the primary superblock is at byte 1024 of block 0 with 4 KiB
// blocks); every other kind holds block numbers.
type Meta struct {
	BlockSize int
	Blocks    [numKinds][]uint64
}

// Limits on what Meta reads, whatever the image claims.
const (
	maxInodes       = 1 << 20
	maxJournalBlock = 4096 // journal blocks listed (the first ones: superblock, then log)
	maxKindBlocks   = 1 << 20
)

// ReadMeta lists the metadata blocks of the filesystem image at path. It
// reads through the project's read-only library (internal/fs and the
// block-map walker of internal/dump), so the fuzzer aims where gofsck
// itself reads. The image is expected to be clean; a corrupt one gives a
// partial list, never a crash.
func ReadMeta(path string) (*Meta, error) {
	dev, err := blockdev.Open(path, true, false)
	if err != nil {
		return nil, err
	}
	defer dev.Close()
	f, err := fs.Open(dev, fs.Options{})
	if err != nil {
		return nil, err
	}
	m := &Meta{BlockSize: f.BlockSize}
	seen := map[uint64]bool{}
	add := func(k Kind, blk uint64) {
		if blk == 0 && k != KindSuper || blk >= f.BlocksCount || len(m.Blocks[k]) >= maxKindBlocks {
			return
		}
		if k != KindSuper {
			if seen[blk] {
				return
			}
			seen[blk] = true
		}
		m.Blocks[k] = append(m.Blocks[k], blk)
	}
	for g := uint32(0); g < f.Groups; g++ {
		l := f.Layout(g)
		if g == 0 || l.Super != 0 {
			add(KindSuper, l.Super)
		}
		for i := uint64(0); l.OldDesc != 0 && i < l.OldDescLen; i++ {
			add(KindGDT, l.OldDesc+i)
		}
		if l.MetaBGDesc != 0 {
			add(KindGDT, l.MetaBGDesc)
		}
		gd := f.Group(g)
		add(KindBitmap, gd.BlockBitmap())
		add(KindBitmap, gd.InodeBitmap())
	}
	// Inodes in use: their table blocks, and the blocks they own that are
	// metadata.
	n := min(f.InodesCount, maxInodes)
	buf := make([]byte, f.InodeSize)
	scratch := make([]byte, f.BlockSize)
	is64 := f.SB.Is64bit()
	jino := f.SB.JournalInum()
	for ino := uint32(1); ino <= n; ino++ {
		if err := f.ReadInode(ino, buf, scratch); err != nil {
			var re *fs.BlockRangeError
			if errors.As(err, &re) {
				continue
			}
			return nil, err
		}
		in := ondisk.Inode(buf)
		if in.Mode() == 0 && in.LinksCount() == 0 && ino >= f.FirstIno {
			continue
		}
		if ino > 11 && in.LinksCount() == 0 {
			continue
		}
		blk, _, _ := f.InodeLoc(ino)
		add(KindItable, blk)
		if acl := in.FileACL(is64); acl != 0 {
			add(KindXattr, acl)
		}
		bm := dump.BlockMap(f, ino, in)
		for _, p := range bm.Pieces {
			switch {
			case p.Kind != dump.Data:
				add(KindMap, p.Pblk)
			case ino == jino:
				for i := uint64(0); i < p.Len && len(m.Blocks[KindJournal]) < maxJournalBlock; i++ {
					add(KindJournal, p.Pblk+i)
				}
			case in.IsDir():
				for i := uint64(0); i < p.Len && i < 1<<16; i++ {
					add(KindDir, p.Pblk+i)
				}
			}
		}
	}
	for k := range m.Blocks {
		s := m.Blocks[k]
		sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	}
	return m, nil
}

// superOffset is the byte offset of the superblock listed as blk.
func (m *Meta) superOffset(blk uint64) int64 {
	if blk == 0 {
		return 1024
	}
	return int64(blk) * int64(m.BlockSize)
}

// blockRange returns the byte range [off, off+n) that a block of kind k
// numbered blk covers.
func (m *Meta) blockRange(k Kind, blk uint64) (off int64, n int) {
	if k == KindSuper {
		return m.superOffset(blk), 1024
	}
	return int64(blk) * int64(m.BlockSize), m.BlockSize
}

// Contains reports whether byte off of the image lies in a listed block.
func (m *Meta) Contains(off int64) bool {
	for k := Kind(0); k < numKinds; k++ {
		for _, b := range m.Blocks[k] {
			o, n := m.blockRange(k, b)
			if off >= o && off < o+int64(n) {
				return true
			}
		}
	}
	return false
}
