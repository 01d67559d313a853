package ondisk_test

import (
	"encoding/binary"
	"testing"

	"gofsck/internal/ondisk"
)

// The fuzz targets decode arbitrary bytes the way the checker does: views
// get buffers of the size the caller guarantees (a superblock, a
// descriptor, an inode, a block), every count and offset from the data is
// used only through the decoders' range checks, and nothing may panic. Seeds
// are the structures of the testdata images.

// seedSamples calls add for each sample image; fuzz targets use it to seed
// from testdata.
func seedSamples(f *testing.F, add func(s *sample)) {
	for _, name := range sampleNames {
		add(loadSample(f, name))
	}
}

// seedInodes returns the inodes the samples' debugfs transcripts name.
func seedInodes(f *testing.F, s *sample) map[uint32]ondisk.Inode {
	m := map[uint32]ondisk.Inode{}
	for _, p := range statPaths {
		ino := s.ino(f, p)
		m[ino] = s.inode(ino)
	}
	return m
}

func FuzzSuperblock(f *testing.F) {
	seedSamples(f, func(s *sample) { f.Add([]byte(s.sb)) })
	f.Fuzz(func(t *testing.T, b []byte) {
		sb, err := ondisk.NewSuperblock(b)
		if err != nil {
			if len(b) >= ondisk.SuperblockSize {
				t.Fatalf("NewSuperblock(%d bytes): %v", len(b), err)
			}
			return
		}
		_ = ondisk.FeatureString(sb.FeatureCompat(), sb.FeatureIncompat(), sb.FeatureRoCompat())
		_ = ondisk.FeatureNames(sb.FeatureCompat(), sb.FeatureIncompat(), sb.FeatureRoCompat())
		_, _, _, _ = sb.BlocksCount(), sb.RBlocksCount(), sb.FreeBlocksCount(), sb.FirstIno()
		_, _, _ = sb.InodeSize(), sb.DescSize(), sb.ClusterRatioBits()
		_, _, _ = sb.VolumeName(), sb.LastMounted(), sb.HashSeed()
		_, _ = sb.JnlBlock(-1), sb.JnlBlock(16)
		_, _ = sb.BackupBG(0), sb.BackupBG(2)
		_, _ = sb.ChecksumValid(), sb.CsumSeed()
		if bs := sb.BlockSize(); bs != 0 && (bs < 1024 || bs > 65536) {
			t.Fatalf("BlockSize %d", bs)
		}
	})
}

func FuzzGroupDesc(f *testing.F) {
	seedSamples(f, func(s *sample) {
		f.Add([]byte(s.gd(0)), []byte(s.sb))
	})
	f.Fuzz(func(t *testing.T, b, sbBytes []byte) {
		sb, err := ondisk.NewSuperblock(append(sbBytes, make([]byte, ondisk.SuperblockSize)...))
		if err != nil {
			t.Fatal(err)
		}
		for _, size := range []int{ondisk.GroupDescSize32, ondisk.GroupDescSize64, 128} {
			if len(b) < size {
				return
			}
			gd := ondisk.GroupDesc(b[:size])
			_, _, _ = gd.BlockBitmap(), gd.InodeBitmap(), gd.InodeTable()
			_, _, _, _ = gd.FreeBlocks(), gd.FreeInodes(), gd.UsedDirs(), gd.ItableUnused()
			_, _, _ = gd.Flags(), gd.BlockBitmapCsum(), gd.InodeBitmapCsum()
			if sum, ok := gd.ComputeChecksum(sb, 7); ok && (sum == gd.Checksum()) != gd.ChecksumValid(sb, 7) {
				t.Fatalf("ChecksumValid disagrees with ComputeChecksum")
			}
		}
	})
}

// inodeOf fits b into an inode of 128 or 256 bytes (sel picks).
func inodeOf(b []byte, sel bool) ondisk.Inode {
	size := ondisk.GoodOldInodeSize
	if sel {
		size = 256
	}
	n := make(ondisk.Inode, size)
	copy(n, b)
	return n
}

func FuzzInode(f *testing.F) {
	seedSamples(f, func(s *sample) {
		for ino, n := range seedInodes(f, s) {
			f.Add([]byte(n), ino, s.sb.CsumSeed())
		}
	})
	f.Fuzz(func(t *testing.T, b []byte, ino, seed uint32) {
		n := inodeOf(b, len(b) > ondisk.GoodOldInodeSize)
		_, _, _, _ = n.Mode(), n.UID(), n.GID(), n.Size()
		_, _, _ = n.Flags(), n.Block(-1), n.Block(14)
		_, _ = n.FileACL(true), n.ExtraIsize()
		_, _ = n.CtimeExtra()
		_, _ = n.MtimeExtra()
		_, _ = n.AtimeExtra()
		_, _ = n.CrtimeExtra()
		_ = n.VersionHi()
		c := n.ComputeChecksum(seed, ino)
		valid := n.ChecksumValid(seed, ino)
		if c == n.Checksum() && !valid {
			t.Fatalf("checksum %#x matches the stored one but ChecksumValid is false", c)
		}
		if ea := n.InlineEA(); ea != nil {
			if len(ea) < 4 || &ea[len(ea)-1] != &n[len(n)-1] {
				t.Fatalf("InlineEA is not a tail of the inode")
			}
			walkXattrs(t, ea[ondisk.XattrIHeaderSize:], 0, ea[ondisk.XattrIHeaderSize:])
		}
		walkExtentNode(t, ondisk.ExtentHeader(n.IBlock()))
	})
}

// walkExtentNode verifies a node and decodes each entry it claims.
func walkExtentNode(t *testing.T, h ondisk.ExtentHeader) {
	if err := h.Verify(); err != nil {
		return
	}
	for i := 0; i < int(h.Entries()); i++ {
		if h.Depth() > 0 {
			_ = h.Idx(i)
		} else if e := h.Leaf(i); e.Len > ondisk.ExtentInitMaxLen {
			t.Fatalf("leaf length %d", e.Len)
		}
	}
}

func FuzzExtentNode(f *testing.F) {
	seedSamples(f, func(s *sample) {
		for ino, n := range seedInodes(f, s) {
			if n.Flags()&ondisk.FlagExtents == 0 {
				continue
			}
			f.Add(append([]byte(nil), n.IBlock()...), ino, n.Generation(), s.sb.CsumSeed())
			h := ondisk.ExtentHeader(n.IBlock())
			if h.Verify() == nil && h.Depth() > 0 {
				f.Add(append([]byte(nil), s.block(h.Idx(0).Leaf)[:min(s.bs, 4096)]...), ino, n.Generation(), s.sb.CsumSeed())
			}
		}
	})
	f.Fuzz(func(t *testing.T, b []byte, ino, gen, seed uint32) {
		walkExtentNode(t, ondisk.ExtentHeader(b))
		sum, stored, ok := ondisk.ExtentBlockChecksum(b, seed, ino, gen)
		if !ok && (sum != 0 || stored != 0) {
			t.Fatal("values without ok")
		}
	})
}

// walkDirBlock walks a directory block as the checker does: it stops at
// the first record whose length is out of range.
func walkDirBlock(t *testing.T, b []byte, bs int) {
	for off := 0; off < len(b); {
		d, ok := ondisk.DecodeDirent(b, off, bs)
		if !ok {
			return
		}
		if d.RecLen < ondisk.DirentHeaderSize || d.RecLen%4 != 0 || d.RecLen > len(b)-off ||
			d.NameLen > d.RecLen-ondisk.DirentHeaderSize {
			return
		}
		_ = b[off+ondisk.DirentHeaderSize : off+ondisk.DirentHeaderSize+d.NameLen]
		off += d.RecLen
	}
}

func FuzzDirentBlock(f *testing.F) {
	seedSamples(f, func(s *sample) {
		n := s.inode(s.ino(f, "/big"))
		if n.Flags()&ondisk.FlagExtents != 0 {
			blk := s.block(s.extentLeaves(f, n)[0].Pblk + 1)
			f.Add(append([]byte(nil), blk[:min(len(blk), 4096)]...), uint8(0), s.sb.CsumSeed())
		}
		root := s.inode(2)
		if root.Flags()&ondisk.FlagExtents == 0 {
			f.Add(append([]byte(nil), s.block(uint64(root.Block(0)))...), uint8(6), uint32(0))
		}
	})
	f.Fuzz(func(t *testing.T, b []byte, logBS uint8, seed uint32) {
		bs := 1024 << (logBS % 7)
		walkDirBlock(t, b, bs)
		if len(b) >= ondisk.DirTailSize {
			if _, ok := ondisk.DirTail(b); ok {
				_ = ondisk.DirLeafChecksum(b, seed, 11, 0)
			}
		}
		if len(b) >= 2 {
			raw := binary.LittleEndian.Uint16(b)
			if r := ondisk.DecodeRecLen(raw, bs); r < 0 || r > 0x3FFFC || (bs == 65536 && r > 0x3FFFC) {
				t.Fatalf("DecodeRecLen(%#x, %d) = %d", raw, bs, r)
			}
		}
	})
}

func FuzzDxNode(f *testing.F) {
	seedSamples(f, func(s *sample) {
		n := s.inode(s.ino(f, "/big"))
		if n.Flags()&ondisk.FlagIndex != 0 {
			blk := s.block(s.fileBlock(f, n, 0))
			f.Add(append([]byte(nil), blk[:min(len(blk), 4096)]...), s.sb.CsumSeed())
		}
	})
	f.Fuzz(func(t *testing.T, b []byte, seed uint32) {
		info, ok := ondisk.DecodeDxRootInfo(b)
		countOffs := []int{ondisk.DxNodeCountOff}
		if ok {
			countOffs = append(countOffs, ondisk.DxRootInfoOff+int(info.InfoLength))
		}
		for _, off := range countOffs {
			limit, count, ok := ondisk.DxCountLimit(b, off)
			if !ok {
				continue
			}
			for i := 0; i < count && i < limit; i++ {
				if _, _, ok := ondisk.DxEntry(b, off, i); !ok {
					break
				}
			}
			_, _, _ = ondisk.DxChecksum(b, off, limit, count, seed, 2, 0)
		}
	})
}

// walkXattrs walks an xattr area from off and reads each value that lies
// in valueBase.
func walkXattrs(t *testing.T, area []byte, off int, valueBase []byte) {
	for n := 0; n < len(area); n++ {
		e, end, ok := ondisk.DecodeXattrEntry(area, off)
		if !ok || end {
			return
		}
		if len(e.Name) != e.NameLen {
			t.Fatalf("name length %d, NameLen %d", len(e.Name), e.NameLen)
		}
		h := ondisk.XattrNameHash(e.Name, false)
		hs := ondisk.XattrNameHash(e.Name, true)
		if e.ValueInum == 0 && e.ValueOffs <= len(valueBase) && int(e.ValueSize) <= len(valueBase)-e.ValueOffs {
			v := valueBase[e.ValueOffs : e.ValueOffs+int(e.ValueSize)]
			_ = ondisk.XattrValueHash(h, v)
			_ = ondisk.XattrValueHash(hs, v)
		}
		if e.EntryBytes <= 0 {
			t.Fatalf("entry size %d", e.EntryBytes)
		}
		off += e.EntryBytes
	}
}

func FuzzXattrBlock(f *testing.F) {
	seedSamples(f, func(s *sample) {
		n := s.inode(s.ino(f, "/sub/file"))
		if acl := n.FileACL(s.sb.Is64bit()); acl != 0 {
			blk := s.block(acl)
			f.Add(append([]byte(nil), blk[:min(len(blk), 4096)]...), s.sb.CsumSeed(), acl)
		}
	})
	f.Fuzz(func(t *testing.T, b []byte, seed uint32, blk uint64) {
		if len(b) < ondisk.XattrHeaderSize {
			return
		}
		x := ondisk.XattrBlock(b)
		_, _, _, _, _ = x.Magic(), x.Refcount(), x.Blocks(), x.Hash(), x.Checksum()
		_ = x.ComputeChecksum(seed, blk)
		walkXattrs(t, b, ondisk.XattrHeaderSize, b)
	})
}

func FuzzInlineXattrs(f *testing.F) {
	seedSamples(f, func(s *sample) {
		for _, n := range seedInodes(f, s) {
			if ea := n.InlineEA(); ea != nil {
				f.Add([]byte(n))
			}
		}
	})
	f.Fuzz(func(t *testing.T, b []byte) {
		n := inodeOf(b, true)
		ea := n.InlineEA()
		if ea == nil {
			return
		}
		if binary.LittleEndian.Uint32(ea) != ondisk.XattrMagic {
			return
		}
		body := ea[ondisk.XattrIHeaderSize:]
		walkXattrs(t, body, 0, body)
	})
}
