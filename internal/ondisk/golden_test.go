package ondisk_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"gofsck/internal/ondisk"
)

// Compile-time assertions.
var (
	_ error = (*ondisk.FormatError)(nil)
	_       = ondisk.Superblock(nil).Magic
)

// TestOnDiskSizes pins the sizes of the on-disk structures to the kernel's
// (struct ext4_super_block, ext4_group_desc, ext4_inode, ext4_extent*,
// ext4_dir_entry_2, ext4_dir_entry_tail, dx_root_info, dx_entry, dx_tail,
// ext4_xattr_header, ext4_xattr_entry).
func TestOnDiskSizes(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want int
	}{
		{"superblock", ondisk.SuperblockSize, 1024},
		{"superblock offset", ondisk.SuperblockOffset, 1024},
		{"group desc 32", ondisk.GroupDescSize32, 32},
		{"group desc 64", ondisk.GroupDescSize64, 64},
		{"good old inode", ondisk.GoodOldInodeSize, 128},
		{"i_block", ondisk.IBlockSize, 60},
		{"i_block words", ondisk.NBlocks, 15},
		{"extent header", ondisk.ExtentHeaderSize, 12},
		{"extent entry", ondisk.ExtentEntrySize, 12},
		{"extent tail", ondisk.ExtentTailSize, 4},
		{"dirent header", ondisk.DirentHeaderSize, 8},
		{"dir tail", ondisk.DirTailSize, 12},
		{"dx root info offset", ondisk.DxRootInfoOff, 24},
		{"dx root info", ondisk.DxRootInfoSize, 8},
		{"dx entry", ondisk.DxEntrySize, 8},
		{"dx tail", ondisk.DxTailSize, 8},
		{"xattr header", ondisk.XattrHeaderSize, 32},
		{"xattr entry", ondisk.XattrEntrySize, 16},
		{"xattr ibody header", ondisk.XattrIHeaderSize, 4},
	} {
		if c.got != c.want {
			t.Errorf("%s: size %d, want %d", c.name, c.got, c.want)
		}
	}
	// Views over short buffers: the superblock constructor refuses them.
	if _, err := ondisk.NewSuperblock(make([]byte, 1023)); !errors.Is(err, ondisk.ErrCorrupt) {
		t.Errorf("NewSuperblock(1023 bytes) = %v, want ErrCorrupt", err)
	}
	// The group descriptor reads hi halves only when 64 bytes long.
	gd := make([]byte, 64)
	binary.LittleEndian.PutUint32(gd[0x08:], 7)
	binary.LittleEndian.PutUint32(gd[0x28:], 1)
	if got := ondisk.GroupDesc(gd).InodeTable(); got != 1<<32|7 {
		t.Errorf("64-byte InodeTable = %#x", got)
	}
	if got := ondisk.GroupDesc(gd[:32]).InodeTable(); got != 7 {
		t.Errorf("32-byte InodeTable = %#x", got)
	}
}

// TestSuperblockGolden compares the superblock accessors with dumpe2fs.
func TestSuperblockGolden(t *testing.T) {
	for _, name := range sampleNames {
		t.Run(name, func(t *testing.T) {
			s := loadSample(t, name)
			sb := s.sb
			d := kv(strings.Split(s.dump, "\n\n")[0])
			num := func(k string) uint64 { return atoi(t, strings.Fields(d[k])[0]) }
			u := sb.UUID()
			checks := []struct {
				field     string
				got, want any
			}{
				{"magic", fmt.Sprintf("0x%04X", sb.Magic()), d["Filesystem magic number"]},
				{"uuid", fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16]), d["Filesystem UUID"]},
				{"revision", uint64(sb.RevLevel()), num("Filesystem revision #")},
				{"features", ondisk.FeatureString(sb.FeatureCompat(), sb.FeatureIncompat(), sb.FeatureRoCompat()), d["Filesystem features"]},
				{"inodes count", uint64(sb.InodesCount()), num("Inode count")},
				{"blocks count", sb.BlocksCount(), num("Block count")},
				{"reserved blocks", sb.RBlocksCount(), num("Reserved block count")},
				{"free blocks", sb.FreeBlocksCount(), num("Free blocks")},
				{"free inodes", uint64(sb.FreeInodesCount()), num("Free inodes")},
				{"first data block", uint64(sb.FirstDataBlock()), num("First block")},
				{"block size", uint64(sb.BlockSize()), num("Block size")},
				{"cluster size", uint64(1024) << sb.LogClusterSize(), num("Fragment size")},
				{"blocks per group", uint64(sb.BlocksPerGroup()), num("Blocks per group")},
				{"clusters per group", uint64(sb.ClustersPerGroup()), num("Fragments per group")},
				{"inodes per group", uint64(sb.InodesPerGroup()), num("Inodes per group")},
				{"inode size", uint64(sb.InodeSize()), num("Inode size")},
				{"first inode", uint64(sb.FirstIno()), num("First inode")},
				{"mount count", uint64(sb.MntCount()), num("Mount count")},
				{"max mount count", fmt.Sprint(sb.MaxMntCount()), d["Maximum mount count"]},
				{"check interval", uint64(sb.CheckInterval()), num("Check interval")},
				{"mkfs time", sb.MkfsTime(), uint32(1600000000)},
				{"state clean", sb.State()&ondisk.StateValid != 0, d["Filesystem state"] == "clean"},
				{"signed hash", sb.Flags()&ondisk.FlagSignedHash != 0, strings.Contains(d["Filesystem flags"], "signed_directory_hash")},
				{"hash version half_md4", sb.DefHashVersion() == 1, d["Default directory hash"] == "half_md4"},
				{"superblock checksum valid", sb.ChecksumValid(), true},
			}
			if v, ok := d["Group descriptor size"]; ok {
				checks = append(checks, struct {
					field     string
					got, want any
				}{"desc size", uint64(sb.DescSize()), atoi(t, v)})
			} else if sb.DescSize() != ondisk.GroupDescSize32 {
				t.Errorf("DescSize = %d without 64bit", sb.DescSize())
			}
			if v, ok := d["Reserved GDT blocks"]; ok {
				checks = append(checks, struct {
					field     string
					got, want any
				}{"reserved gdt", uint64(sb.ReservedGdtBlocks()), atoi(t, v)})
			}
			if sb.HasRoCompat(ondisk.RoCompatMetadataCsum) {
				checks = append(checks, []struct {
					field     string
					got, want any
				}{
					{"checksum", fmt.Sprintf("0x%08x", sb.Checksum()), d["Checksum"]},
					{"computed checksum", fmt.Sprintf("0x%08x", sb.ComputeChecksum()), d["Checksum"]},
					{"checksum type", sb.ChecksumType(), uint8(1)},
					{"min extra isize", uint64(sb.MinExtraIsize()), num("Required extra isize")},
					{"want extra isize", uint64(sb.WantExtraIsize()), num("Desired extra isize")},
				}...)
			}
			for _, c := range checks {
				if fmt.Sprint(c.got) != fmt.Sprint(c.want) {
					t.Errorf("%s: decoded %v, dumpe2fs says %v", c.field, c.got, c.want)
				}
			}
			// A flipped bit must break the checksum.
			if sb.HasRoCompat(ondisk.RoCompatMetadataCsum) {
				bad := bytes.Clone(sb)
				bad[0x20] ^= 1
				if ondisk.Superblock(bad).ChecksumValid() {
					t.Error("superblock with a flipped bit still verifies")
				}
			}
		})
	}
}

var (
	groupRE   = regexp.MustCompile(`(?m)^Group (\d+): \(Blocks (\d+)-(\d+)\)(?: csum 0x([0-9a-f]{4}))?(?: \[([A-Z_, ]*)\])?`)
	bbitmapRE = regexp.MustCompile(`Block bitmap at (\d+) \([^)]*\)(?:, csum 0x([0-9a-f]{8}))?`)
	ibitmapRE = regexp.MustCompile(`Inode bitmap at (\d+) \([^)]*\)(?:, csum 0x([0-9a-f]{8}))?`)
	itableRE  = regexp.MustCompile(`Inode table at (\d+)-(\d+)`)
	countsRE  = regexp.MustCompile(`(\d+) free (?:blocks|clusters), (\d+) free inodes, (\d+) directories(?:, (\d+) unused inodes)?`)
)

// TestGroupDescGolden compares every group descriptor (32 bytes on ext2,
// 64 on the 64bit samples) with dumpe2fs's group listing.
func TestGroupDescGolden(t *testing.T) {
	for _, name := range sampleNames {
		t.Run(name, func(t *testing.T) {
			s := loadSample(t, name)
			groups := groupRE.FindAllStringSubmatchIndex(s.dump, -1)
			if len(groups) == 0 {
				t.Fatal("no groups in dumpe2fs output")
			}
			for i, gi := range groups {
				end := len(s.dump)
				if i+1 < len(groups) {
					end = groups[i+1][0]
				}
				text := s.dump[gi[0]:end]
				m := groupRE.FindStringSubmatch(text)
				g := int(atoi(t, m[1]))
				gd := s.gd(g)
				if len(gd) != s.descSize() {
					t.Fatalf("descriptor length %d", len(gd))
				}
				want := map[string]string{}
				got := map[string]string{}
				if m[4] != "" {
					want["csum"] = m[4]
					got["csum"] = fmt.Sprintf("%04x", gd.Checksum())
					if !gd.ChecksumValid(s.sb, uint32(g)) {
						t.Errorf("group %d: checksum does not verify", g)
					}
					bad := bytes.Clone(gd)
					bad[0x0C] ^= 0x40
					if ondisk.GroupDesc(bad).ChecksumValid(s.sb, uint32(g)) {
						t.Errorf("group %d: broken descriptor still verifies", g)
					}
				}
				var flags []string
				for _, f := range []struct {
					bit  uint16
					name string
				}{{ondisk.BgInodeUninit, "INODE_UNINIT"}, {ondisk.BgBlockUninit, "BLOCK_UNINIT"}, {ondisk.BgInodeZeroed, "ITABLE_ZEROED"}} {
					if gd.Flags()&f.bit != 0 {
						flags = append(flags, f.name)
					}
				}
				want["flags"], got["flags"] = m[5], strings.Join(flags, ", ")
				bb := bbitmapRE.FindStringSubmatch(text)
				ib := ibitmapRE.FindStringSubmatch(text)
				it := itableRE.FindStringSubmatch(text)
				cn := countsRE.FindStringSubmatch(text)
				want["block bitmap"], got["block bitmap"] = bb[1], fmt.Sprint(gd.BlockBitmap())
				want["inode bitmap"], got["inode bitmap"] = ib[1], fmt.Sprint(gd.InodeBitmap())
				want["inode table"], got["inode table"] = it[1], fmt.Sprint(gd.InodeTable())
				want["free blocks"], got["free blocks"] = cn[1], fmt.Sprint(gd.FreeBlocks())
				want["free inodes"], got["free inodes"] = cn[2], fmt.Sprint(gd.FreeInodes())
				want["dirs"], got["dirs"] = cn[3], fmt.Sprint(gd.UsedDirs())
				if cn[4] != "" {
					want["unused"], got["unused"] = cn[4], fmt.Sprint(gd.ItableUnused())
				}
				if bb[2] != "" {
					want["bb csum"], got["bb csum"] = bb[2], fmt.Sprintf("%08x", gd.BlockBitmapCsum())
					want["ib csum"], got["ib csum"] = ib[2], fmt.Sprintf("%08x", gd.InodeBitmapCsum())
					if gd.BitmapCsumHasHi() != (len(gd) >= 64) {
						t.Errorf("BitmapCsumHasHi = %v for %d-byte descriptor", gd.BitmapCsumHasHi(), len(gd))
					}
					// The block bitmap checksum covers clusters-per-group bits.
					bmap := s.block(gd.BlockBitmap())[:s.sb.ClustersPerGroup()/8]
					if c := ondisk.BitmapChecksum(s.sb.CsumSeed(), bmap); c != gd.BlockBitmapCsum() {
						t.Errorf("group %d: block bitmap checksum %08x, stored %08x", g, c, gd.BlockBitmapCsum())
					}
				}
				for k, w := range want {
					if got[k] != w {
						t.Errorf("group %d %s: decoded %q, dumpe2fs %q", g, k, got[k], w)
					}
				}
			}
		})
	}
}

var statPaths = []string{"/", "/small", "/sub", "/sub/file", "/link", "/sparse", "/big", "/empty"}

// TestInodeGolden compares inodes (128 bytes on ext2-64k, 256 with extra
// fields elsewhere) with debugfs stat, verifies their checksums, and breaks
// one.
func TestInodeGolden(t *testing.T) {
	timeRE := regexp.MustCompile(`(?m)^\s*(ctime|atime|mtime|crtime): 0x([0-9a-f]{8})(?::([0-9a-f]{8}))?`)
	for _, name := range sampleNames {
		s := loadSample(t, name)
		for _, p := range statPaths {
			t.Run(name+p, func(t *testing.T) {
				st := s.dbg["stat "+p]
				ino := s.ino(t, p)
				n := s.inode(ino)
				if len(n) != int(s.sb.InodeSize()) {
					t.Fatalf("inode length %d", len(n))
				}
				f := regexp.MustCompile(`(\w[\w ]*?):\s+(\S+)`).FindAllStringSubmatch(st, -1)
				d := map[string]string{}
				for _, m := range f {
					if _, dup := d[m[1]]; !dup {
						d[m[1]] = m[2]
					}
				}
				blocks := uint64(n.BlocksLo())
				if s.sb.HasRoCompat(ondisk.RoCompatHugeFile) {
					blocks |= uint64(n.BlocksHi()) << 32
				}
				want := []struct {
					field     string
					got, want string
				}{
					{"mode", fmt.Sprintf("%04o", n.Mode()&0o7777), d["Mode"]},
					{"flags", fmt.Sprintf("0x%x", n.Flags()), d["Flags"]},
					{"generation", fmt.Sprint(n.Generation()), d["Generation"]},
					{"uid", fmt.Sprint(n.UID()), d["User"]},
					{"gid", fmt.Sprint(n.GID()), d["Group"]},
					{"size", fmt.Sprint(n.Size()), d["Size"]},
					{"file acl", fmt.Sprint(n.FileACL(s.sb.Is64bit())), d["File ACL"]},
					{"links", fmt.Sprint(n.LinksCount()), d["Links"]},
					{"blockcount", fmt.Sprint(blocks), d["Blockcount"]},
				}
				typ := map[uint16]string{ondisk.SIFDIR: "directory", ondisk.SIFREG: "regular", ondisk.SIFLNK: "symlink"}[n.Type()]
				want = append(want, struct{ field, got, want string }{"type", typ, d["Type"]})
				if v, ok := d["Version"]; ok {
					ver := fmt.Sprintf("0x%08x", n.Version())
					if strings.Contains(v, ":") {
						ver = fmt.Sprintf("0x%08x:%08x", n.VersionHi(), n.Version())
					}
					want = append(want, struct{ field, got, want string }{"version", ver, v})
				}
				for _, m := range timeRE.FindAllStringSubmatch(st, -1) {
					var base uint32
					var extra uint32
					var has bool
					switch m[1] {
					case "ctime":
						base = n.Ctime()
						extra, has = n.CtimeExtra()
					case "atime":
						base = n.Atime()
						extra, has = n.AtimeExtra()
					case "mtime":
						base = n.Mtime()
						extra, has = n.MtimeExtra()
					case "crtime":
						base = le32(n[0x90:])
						extra, has = n.CrtimeExtra()
					}
					g := fmt.Sprintf("%08x", base)
					w := m[2]
					if m[3] != "" {
						g += fmt.Sprintf(":%08x", extra)
						w += ":" + m[3]
						if !has {
							t.Errorf("%s extra: not present", m[1])
						}
					}
					want = append(want, struct{ field, got, want string }{m[1], g, w})
				}
				if v, ok := d["Size of extra inode fields"]; ok {
					want = append(want, struct{ field, got, want string }{"extra isize", fmt.Sprint(n.ExtraIsize()), v})
				} else if n.ExtraIsize() != 0 {
					t.Errorf("ExtraIsize = %d on a 128-byte inode", n.ExtraIsize())
				}
				if m := regexp.MustCompile(`Fast link dest: "(.*)"`).FindStringSubmatch(st); m != nil {
					want = append(want, struct{ field, got, want string }{"fast link", string(n.IBlock()[:n.Size()]), m[1]})
				}
				for _, w := range want {
					if w.got != w.want {
						t.Errorf("%s: decoded %q, debugfs %q", w.field, w.got, w.want)
					}
				}
				if !s.sb.HasRoCompat(ondisk.RoCompatMetadataCsum) {
					return
				}
				seed := s.sb.CsumSeed()
				if v := d["Inode checksum"]; v != fmt.Sprintf("0x%08x", n.Checksum()) {
					t.Errorf("checksum: stored %#08x, debugfs %s", n.Checksum(), v)
				}
				if !n.ChecksumValid(seed, ino) {
					t.Errorf("inode %d: checksum does not verify (computed %#x)", ino, n.ComputeChecksum(seed, ino))
				}
				if n.ChecksumValid(seed, ino+1) {
					t.Errorf("inode %d verifies as inode %d", ino, ino+1)
				}
				bad := ondisk.Inode(bytes.Clone(n))
				bad[0x10] ^= 0x80 // i_mtime
				if bad.ChecksumValid(seed, ino) {
					t.Errorf("inode %d with a changed mtime still verifies", ino)
				}
				// With i_extra_isize too small for i_checksum_hi only the
				// low 16 bits are stored and compared.
				lo := ondisk.Inode(bytes.Clone(n))
				binary.LittleEndian.PutUint16(lo[0x80:], 0)
				c := lo.ComputeChecksum(seed, ino)
				binary.LittleEndian.PutUint16(lo[0x7C:], uint16(c))
				if !lo.ChecksumValid(seed, ino) || lo.Checksum() != c&0xFFFF {
					t.Errorf("inode without i_checksum_hi: Checksum %#x, computed %#x", lo.Checksum(), c)
				}
			})
		}
	}
	// A never-used (all-zero) inode always verifies.
	if !ondisk.Inode(make([]byte, 256)).ChecksumValid(0x12345678, 99) {
		t.Error("zero inode does not verify")
	}
}

var exRowRE = regexp.MustCompile(`(?m)^\s*(\d+)/\s*(\d+)\s+(\d+)/\s*(\d+)\s+(\d+) -\s*(\d+)\s+(\d+)(?: -\s*(\d+))?\s+(\d+)\s*(\S*)\s*$`)

// TestExtentGolden walks the extent trees and compares them with debugfs
// ex, including the index block of /sparse (depth 1) and its checksum.
func TestExtentGolden(t *testing.T) {
	for _, name := range sampleNames {
		s := loadSample(t, name)
		if !s.sb.HasIncompat(ondisk.IncompatExtents) {
			continue
		}
		for _, p := range []string{"/", "/sub/file", "/sparse", "/big"} {
			t.Run(name+p, func(t *testing.T) {
				ino := s.ino(t, p)
				n := s.inode(ino)
				if n.Flags()&ondisk.FlagExtents == 0 {
					t.Fatalf("inode %d has no extents flag", ino)
				}
				var rows []string
				var walk func(h ondisk.ExtentHeader, level, maxLevel int)
				walk = func(h ondisk.ExtentHeader, level, maxLevel int) {
					if err := h.Verify(); err != nil {
						t.Fatalf("level %d: %v", level, err)
					}
					if int(h.Depth()) != maxLevel-level {
						t.Errorf("level %d: depth %d", level, h.Depth())
					}
					for i := 0; i < int(h.Entries()); i++ {
						if h.Depth() > 0 {
							x := h.Idx(i)
							rows = append(rows, fmt.Sprintf("%d/%d %d/%d lblk %d phys %d", level, maxLevel, i+1, h.Entries(), x.Lblk, x.Leaf))
							child := s.block(x.Leaf)
							sum, stored, ok := ondisk.ExtentBlockChecksum(child, s.sb.CsumSeed(), ino, n.Generation())
							if !ok || sum != stored {
								t.Errorf("extent block %d: checksum %#x stored %#x ok %v", x.Leaf, sum, stored, ok)
							}
							bad := bytes.Clone(child)
							bad[ondisk.ExtentHeaderSize] ^= 1
							if sum, stored, _ := ondisk.ExtentBlockChecksum(bad, s.sb.CsumSeed(), ino, n.Generation()); sum == stored {
								t.Errorf("extent block %d: broken block still verifies", x.Leaf)
							}
							walk(ondisk.ExtentHeader(child), level+1, maxLevel)
							continue
						}
						e := h.Leaf(i)
						rows = append(rows, fmt.Sprintf("%d/%d %d/%d lblk %d phys %d len %d uninit %v", level, maxLevel, i+1, h.Entries(), e.Lblk, e.Pblk, e.Len, e.Uninit))
					}
				}
				root := ondisk.ExtentHeader(n.IBlock())
				if root.Max() != 4 {
					t.Errorf("root eh_max %d, want 4", root.Max())
				}
				walk(root, 0, int(root.Depth()))
				var want []string
				for _, m := range exRowRE.FindAllStringSubmatch(s.dbg["ex "+p], -1) {
					if m[8] == "" { // index row: physical is the child block
						want = append(want, fmt.Sprintf("%s/%s %s/%s lblk %s phys %s", m[1], m[2], m[3], m[4], m[5], m[7]))
						continue
					}
					want = append(want, fmt.Sprintf("%s/%s %s/%s lblk %s phys %s len %s uninit %v", m[1], m[2], m[3], m[4], m[5], m[7], m[9], strings.Contains(m[10], "Uninit")))
				}
				if strings.Join(rows, "\n") != strings.Join(want, "\n") {
					t.Errorf("extent tree:\n%s\ndebugfs ex:\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
				}
			})
		}
	}
}

// TestExtentHeaderVerify covers the header rules on synthetic nodes.
func TestExtentHeaderVerify(t *testing.T) {
	mk := func(magic, entries, max, depth uint16, size int) ondisk.ExtentHeader {
		b := make([]byte, size)
		binary.LittleEndian.PutUint16(b[0:], magic)
		binary.LittleEndian.PutUint16(b[2:], entries)
		binary.LittleEndian.PutUint16(b[4:], max)
		binary.LittleEndian.PutUint16(b[6:], depth)
		return b
	}
	for _, c := range []struct {
		name  string
		h     ondisk.ExtentHeader
		field string // "" = valid
	}{
		{"i_block", mk(ondisk.ExtentMagic, 4, 4, 0, 60), ""},
		{"4k block", mk(ondisk.ExtentMagic, 1, 340, 1, 4096), ""},
		{"max two below capacity", mk(ondisk.ExtentMagic, 1, 338, 1, 4096), ""},
		{"bad magic", mk(0xF30B, 1, 4, 0, 60), "eh_magic"},
		{"entries above max", mk(ondisk.ExtentMagic, 5, 4, 0, 60), "eh_entries"},
		{"max above capacity", mk(ondisk.ExtentMagic, 1, 5, 0, 60), "eh_max"},
		{"max far below capacity", mk(ondisk.ExtentMagic, 1, 1, 0, 60), "eh_max"},
		{"short", ondisk.ExtentHeader(make([]byte, 8)), "length"},
	} {
		err := c.h.Verify()
		var fe *ondisk.FormatError
		switch {
		case c.field == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.field != "" && (!errors.As(err, &fe) || fe.Field != c.field || !errors.Is(err, ondisk.ErrCorrupt)):
			t.Errorf("%s: err %v, want field %s", c.name, err, c.field)
		}
	}
	// Uninitialised extents store len + 32768.
	b := mk(ondisk.ExtentMagic, 1, 4, 0, 60)
	binary.LittleEndian.PutUint32(b[12:], 10)
	binary.LittleEndian.PutUint16(b[16:], 32768+5)
	binary.LittleEndian.PutUint16(b[18:], 1)
	binary.LittleEndian.PutUint32(b[20:], 2)
	if e := b.Leaf(0); e != (ondisk.Extent{Lblk: 10, Len: 5, Pblk: 1<<32 | 2, Uninit: true}) {
		t.Errorf("uninit leaf = %+v", e)
	}
	binary.LittleEndian.PutUint16(b[16:], 32768)
	if e := b.Leaf(0); e.Uninit || e.Len != 32768 {
		t.Errorf("32768-block initialised leaf = %+v", e)
	}
}

var (
	leafHdrRE  = regexp.MustCompile(`Reading directory block (\d+), phys (\d+)`)
	leafEntRE  = regexp.MustCompile(`(\d+) 0x[0-9a-f]{8}-[0-9a-f]{8} \((\d+)\) (\S+)`)
	leafCsumRE = regexp.MustCompile(`leaf block checksum: 0x([0-9a-f]{8})`)
	dxFieldRE  = regexp.MustCompile(`(?m)^\s*(Reserved zero|Hash Version|Info length|Indirect levels|Flags|Number of entries \(count\)|Number of entries \(limit\)|Checksum): (\S+)`)
	dxEntryRE  = regexp.MustCompile(`Entry #(\d+): Hash 0x([0-9a-f]{8}), block (\d+)`)
)

// TestDirentGolden decodes every htree leaf block of /big and compares its
// entries and tail checksum with debugfs htree_dump.
func TestDirentGolden(t *testing.T) {
	for _, name := range sampleNames {
		s := loadSample(t, name)
		dump := s.dbg["htree_dump /big"]
		if !strings.Contains(dump, "Root node dump") {
			continue
		}
		ino := s.ino(t, "/big")
		n := s.inode(ino)
		parts := leafHdrRE.FindAllStringSubmatchIndex(dump, -1)
		if len(parts) < 2 {
			t.Fatalf("%s: %d leaf blocks in htree_dump", name, len(parts))
		}
		for i, pi := range parts {
			end := len(dump)
			if i+1 < len(parts) {
				end = parts[i+1][0]
			}
			text := dump[pi[0]:end]
			m := leafHdrRE.FindStringSubmatch(text)
			t.Run(fmt.Sprintf("%s/block%s", name, m[1]), func(t *testing.T) {
				blk := s.block(atoi(t, m[2]))
				var got, want []string
				for off := 0; off < len(blk); {
					d, ok := ondisk.DecodeDirent(blk, off, s.bs)
					if !ok || d.RecLen < ondisk.DirRecLen(d.NameLen, 0) || off+d.RecLen > len(blk) {
						t.Fatalf("bad entry at %d: %+v", off, d)
					}
					name := blk[off+8 : off+8+d.NameLen]
					if d.Ino != 0 || d.NameLen != 0 {
						got = append(got, fmt.Sprintf("%d (%d) %s", d.Ino, d.RecLen, name))
						if ft := d.FileType; ft != ondisk.FTRegFile {
							t.Errorf("%s: file type %d", name, ft)
						}
					}
					off += d.RecLen
				}
				for _, e := range leafEntRE.FindAllStringSubmatch(text, -1) {
					want = append(want, fmt.Sprintf("%s (%s) %s", e[1], e[2], e[3]))
				}
				if strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Errorf("entries:\n%s\nhtree_dump:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
				cm := leafCsumRE.FindStringSubmatch(text)
				stored, ok := ondisk.DirTail(blk)
				if (cm != nil) != ok {
					t.Fatalf("DirTail ok=%v, debugfs checksum line %v", ok, cm)
				}
				if !ok {
					return
				}
				if fmt.Sprintf("%08x", stored) != cm[1] {
					t.Errorf("tail checksum %08x, debugfs %s", stored, cm[1])
				}
				if c := ondisk.DirLeafChecksum(blk, s.sb.CsumSeed(), ino, n.Generation()); c != stored {
					t.Errorf("computed leaf checksum %08x, stored %08x", c, stored)
				}
				bad := bytes.Clone(blk)
				bad[20] ^= 1
				if ondisk.DirLeafChecksum(bad, s.sb.CsumSeed(), ino, n.Generation()) == stored {
					t.Error("broken leaf block still verifies")
				}
			})
		}
	}
}

// TestRecLen64K covers rec_len decoding for 64 KiB blocks, where a record
// spanning the whole block is stored as 0xFFFF (or 0) and lengths of 64 KiB
// and more keep bits 16-17 in the low two bits.
func TestRecLen64K(t *testing.T) {
	for _, c := range []struct {
		raw  uint16
		bs   int
		want int
	}{
		{12, 4096, 12},
		{4096, 4096, 4096},
		{0, 4096, 0}, // meaningless below 64 KiB: the caller rejects it
		{0xFFFF, 65536, 65536},
		{0, 65536, 65536},
		{65524, 65536, 65524},
		{12, 65536, 12},
		{0xFFFC, 65536, 0xFFFC},
		{0x0001, 65536, 0x10000},
		{0x0011, 65536, 0x10010}, // 65552 > 64 KiB: out of range for the caller
	} {
		if got := ondisk.DecodeRecLen(c.raw, c.bs); got != c.want {
			t.Errorf("DecodeRecLen(%#x, %d) = %d, want %d", c.raw, c.bs, got, c.want)
		}
	}
	// The empty second block of /empty in ext2-64k (expand_dir) is one
	// unused record covering the whole block, stored as 0xFFFF.
	s := loadSample(t, "ext2-64k")
	st := s.dbg["stat /empty"]
	m := regexp.MustCompile(`\(1\):(\d+)`).FindStringSubmatch(st)
	if m == nil {
		t.Fatalf("no block 1 for /empty:\n%s", st)
	}
	blk := s.block(atoi(t, m[1]))
	if raw := binary.LittleEndian.Uint16(blk[4:]); raw != 0xFFFF {
		t.Errorf("raw rec_len %#x, want 0xffff", raw)
	}
	d, ok := ondisk.DecodeDirent(blk, 0, s.bs)
	if !ok || d.Ino != 0 || d.RecLen != 65536 {
		t.Errorf("empty 64 KiB block: %+v ok %v", d, ok)
	}
	// Block 0 of /empty: '.' (12) and '..' (65524) without a tail.
	m = regexp.MustCompile(`\(0\):(\d+)`).FindStringSubmatch(st)
	blk = s.block(atoi(t, m[1]))
	d0, _ := ondisk.DecodeDirent(blk, 0, s.bs)
	d1, _ := ondisk.DecodeDirent(blk, d0.RecLen, s.bs)
	if d0.RecLen != 12 || d0.NameLen != 1 || d1.RecLen != 65524 || d1.NameLen != 2 || d1.FileType != ondisk.FTDir {
		t.Errorf("'.' %+v, '..' %+v", d0, d1)
	}
	if _, ok := ondisk.DirTail(blk); ok {
		t.Error("tail found in a block of a filesystem without metadata_csum")
	}
	if _, ok := ondisk.DecodeDirent(blk, len(blk)-4, s.bs); ok {
		t.Error("header past the end of the block decoded")
	}
}

// TestDxGolden compares the htree root of /big (dx_root_info, count/limit,
// entries, dx_tail checksum) with debugfs htree_dump.
func TestDxGolden(t *testing.T) {
	for _, name := range sampleNames {
		s := loadSample(t, name)
		dump := s.dbg["htree_dump /big"]
		if !strings.Contains(dump, "Root node dump") {
			continue
		}
		t.Run(name, func(t *testing.T) {
			root := dump[:strings.Index(dump, "\n\n")]
			d := map[string]string{}
			for _, m := range dxFieldRE.FindAllStringSubmatch(root, -1) {
				d[m[1]] = m[2]
			}
			ino := s.ino(t, "/big")
			n := s.inode(ino)
			if n.Flags()&ondisk.FlagIndex == 0 {
				t.Fatal("/big has no index flag")
			}
			blk := s.block(s.fileBlock(t, n, 0))
			info, ok := ondisk.DecodeDxRootInfo(blk)
			if !ok {
				t.Fatal("DecodeDxRootInfo failed")
			}
			countOff := ondisk.DxRootInfoOff + int(info.InfoLength)
			limit, count, ok := ondisk.DxCountLimit(blk, countOff)
			if !ok {
				t.Fatal("DxCountLimit failed")
			}
			for k, g := range map[string]uint64{
				"Reserved zero": uint64(info.ReservedZero), "Hash Version": uint64(info.HashVersion),
				"Info length": uint64(info.InfoLength), "Indirect levels": uint64(info.IndirectLevels),
				"Flags": uint64(info.UnusedFlags), "Number of entries (count)": uint64(count),
				"Number of entries (limit)": uint64(limit),
			} {
				if w := atoi(t, d[k]); w != g {
					t.Errorf("%s: decoded %d, debugfs %d", k, g, w)
				}
			}
			var got, want []string
			for i := 0; i < count; i++ {
				h, b, ok := ondisk.DxEntry(blk, countOff, i)
				if !ok {
					t.Fatalf("entry %d out of range", i)
				}
				got = append(got, fmt.Sprintf("%d %08x %d", i, h, b))
			}
			for _, m := range dxEntryRE.FindAllStringSubmatch(root, -1) {
				want = append(want, fmt.Sprintf("%s %s %s", m[1], m[2], m[3]))
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("entries:\n%s\nhtree_dump:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if _, _, ok := ondisk.DxEntry(blk, countOff, len(blk)/8); ok {
				t.Error("entry past the block decoded")
			}
			if !s.sb.HasRoCompat(ondisk.RoCompatMetadataCsum) {
				return
			}
			sum, stored, ok := ondisk.DxChecksum(blk, countOff, limit, count, s.sb.CsumSeed(), ino, n.Generation())
			if !ok || sum != stored || fmt.Sprintf("0x%08x", stored) != d["Checksum"] {
				t.Errorf("dx checksum %08x stored %08x ok %v, debugfs %s", sum, stored, ok, d["Checksum"])
			}
			bad := bytes.Clone(blk)
			bad[countOff+8] ^= 1 // hash of entry 1
			if sum, stored, _ := ondisk.DxChecksum(bad, countOff, limit, count, s.sb.CsumSeed(), ino, n.Generation()); sum == stored {
				t.Error("broken dx root still verifies")
			}
			if _, _, ok := ondisk.DxChecksum(blk, countOff, limit+1, count, s.sb.CsumSeed(), ino, n.Generation()); ok {
				t.Error("dx checksum with a limit reaching past the block")
			}
		})
	}
}

// xattrEntries decodes the entries of an xattr area starting at off.
func xattrEntries(t testing.TB, area []byte, off int) []ondisk.XattrEntry {
	t.Helper()
	var es []ondisk.XattrEntry
	for {
		e, end, ok := ondisk.DecodeXattrEntry(area, off)
		if !ok {
			t.Fatalf("entry at %d does not fit", off)
		}
		if end {
			return es
		}
		es = append(es, e)
		off += e.EntryBytes
	}
}

var prefixes = map[uint8]string{1: "user.", 2: "system.posix_acl_access", 3: "system.posix_acl_default", 4: "trusted.", 6: "security.", 7: "system.", 8: "system.richacl"}

// TestXattrGolden decodes the in-inode and block xattrs of /sub/file and
// /small and compares names and sizes with debugfs ea_list, and the entry
// hashes, block hash and block checksum with what e2fsprogs stored.
func TestXattrGolden(t *testing.T) {
	for _, name := range sampleNames {
		s := loadSample(t, name)
		if s.sb.InodeSize() == ondisk.GoodOldInodeSize {
			continue
		}
		for _, p := range []string{"/sub/file", "/small"} {
			t.Run(name+p, func(t *testing.T) {
				ino := s.ino(t, p)
				n := s.inode(ino)
				var got []string
				area := n.InlineEA()
				if area == nil || le32(area) != ondisk.XattrMagic {
					t.Fatalf("no in-inode xattrs")
				}
				body := area[ondisk.XattrIHeaderSize:]
				for _, e := range xattrEntries(t, body, 0) {
					v := body[e.ValueOffs : e.ValueOffs+int(e.ValueSize)]
					got = append(got, attrLine(e, v))
					checkEntryHash(t, e, v)
				}
				if acl := n.FileACL(s.sb.Is64bit()); acl != 0 {
					x := ondisk.XattrBlock(s.block(acl))
					if x.Magic() != ondisk.XattrMagic || x.Refcount() != 1 || x.Blocks() != 1 {
						t.Errorf("block header: magic %#x refcount %d blocks %d", x.Magic(), x.Refcount(), x.Blocks())
					}
					if c := x.ComputeChecksum(s.sb.CsumSeed(), acl); c != x.Checksum() {
						t.Errorf("block checksum %08x, stored %08x", c, x.Checksum())
					}
					if c := x.ComputeChecksum(s.sb.CsumSeed(), acl+1); c == x.Checksum() {
						t.Error("block checksum does not depend on the block number")
					}
					var bh uint32
					for _, e := range xattrEntries(t, x, ondisk.XattrHeaderSize) {
						v := x[e.ValueOffs : e.ValueOffs+int(e.ValueSize)]
						got = append(got, attrLine(e, v))
						checkEntryHash(t, e, v)
						bh = bh<<16 ^ bh>>16 ^ e.Hash
					}
					// e2fsprogs 1.47.0 leaves h_hash zero; the kernel fills it.
					if x.Hash() != 0 && bh != x.Hash() {
						t.Errorf("block hash %08x, stored %08x", bh, x.Hash())
					}
				}
				var want []string
				for _, l := range strings.Split(s.dbg["ea_list "+p], "\n") {
					if strings.HasPrefix(l, "  ") {
						want = append(want, strings.TrimSpace(l))
					}
				}
				if fmt.Sprint(sortStrings(got)) != fmt.Sprint(sortStrings(want)) {
					t.Errorf("xattrs:\n%s\nea_list:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
			})
		}
	}
}

func sortStrings(s []string) []string {
	s = append([]string(nil), s...)
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s
}

// attrLine renders an attribute as debugfs ea_list does.
func attrLine(e ondisk.XattrEntry, v []byte) string {
	name := prefixes[e.NameIndex] + string(e.Name)
	printable := true
	for _, c := range []byte(name) {
		if c < 0x20 || c >= 0x7f {
			printable = false
		}
	}
	if !printable {
		var hex []string
		for _, c := range []byte(name) {
			hex = append(hex, fmt.Sprintf("%02x", c))
		}
		name = strings.Join(hex, " ") + " "
	}
	line := fmt.Sprintf("%s (%d)", name, e.ValueSize)
	if e.ValueSize > 0 && e.ValueSize <= 40 {
		line += fmt.Sprintf(" = %q", v)
	}
	return line
}

// checkEntryHash checks e_hash against the unsigned name hash (what
// e2fsprogs 1.47.0 writes) and, for names with bytes ≥ 0x80, that the
// signed variant differs.
func checkEntryHash(t testing.TB, e ondisk.XattrEntry, v []byte) {
	t.Helper()
	if e.Hash == 0 { // system.data and in-inode entries may carry no hash
		return
	}
	u := ondisk.XattrValueHash(ondisk.XattrNameHash(e.Name, false), v)
	sg := ondisk.XattrValueHash(ondisk.XattrNameHash(e.Name, true), v)
	if u != e.Hash && sg != e.Hash {
		t.Errorf("%q: stored hash %08x, unsigned %08x, signed %08x", e.Name, e.Hash, u, sg)
	}
	if bytes.IndexFunc(e.Name, func(r rune) bool { return r >= 0x80 || r == 0xFFFD }) >= 0 && u == sg {
		t.Errorf("%q: signed and unsigned hashes agree", e.Name)
	}
}

// TestXattrNameHash pins both hash variants on a name with a high-bit byte.
func TestXattrNameHash(t *testing.T) {
	for _, c := range []struct {
		name             string
		unsigned, signed uint32
	}{
		{"", 0, 0},
		{"a", 0x61, 0x61},
		{"ab", 0x61<<5 ^ 0x62, 0x61<<5 ^ 0x62},
		{"\xe9", 0xe9, 0xffffffe9},
		{"\xe9t", 0xe9<<5 ^ 0x74, 0xfffffd20 ^ 0x1f ^ 0x74}, // rotl(0xffffffe9, 5) ^ 't'
	} {
		if got := ondisk.XattrNameHash([]byte(c.name), false); got != c.unsigned {
			t.Errorf("unsigned hash of %q = %#x, want %#x", c.name, got, c.unsigned)
		}
		if got := ondisk.XattrNameHash([]byte(c.name), true); got != c.signed {
			t.Errorf("signed hash of %q = %#x, want %#x", c.name, got, c.signed)
		}
	}
	// Values hash one little-endian word at a time, zero padded.
	w0 := uint32(0x64636261)
	if got, want := ondisk.XattrValueHash(0, []byte("abcde")), w0<<16^w0>>16^0x65; got != want {
		t.Errorf("value hash = %#x, want %#x", got, want)
	}
}
