package fs_test

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"gofsck/internal/blockdev"
	"gofsck/internal/fs"
	"gofsck/internal/ondisk"
)

// openLimit is how much of an image the open path may look at in these
// tests: the superblock, the descriptors and the first bitmaps of the small
// seed images.
const openLimit = 64 << 10

func readGz(t testing.TB, p string) []byte {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// seedImages are the heads of the small images other packages keep in
// their testdata (see internal/check/testdata/mkfuzzimages.sh and
// internal/ondisk/testdata/mksamples.sh).
func seedImages(t testing.TB) [][]byte {
	var out [][]byte
	for _, p := range []string{
		"../check/testdata/ext2.img.gz",
		"../check/testdata/ext4.img.gz",
		"../ondisk/testdata/ext4-1k.img.gz",
		"../ondisk/testdata/ext4-4k.img.gz",
	} {
		img := readGz(t, filepath.FromSlash(p))
		out = append(out, img[:min(len(img), openLimit)])
	}
	return out
}

// openAll runs the open sequence of the command: open, relaxed retry,
// descriptor sanity check, feature check, layout of every group, and a
// read of every inode's location.
func openAll(t *testing.T, img []byte) {
	dev := &blockdev.Mem{Data: img, ReadOnly: true}
	f, err := fs.Open(dev, fs.Options{})
	if err != nil && (errors.Is(err, fs.ErrCorruptSuper) || errors.Is(err, fs.ErrBadDescSize)) {
		f, err = fs.Open(dev, fs.Options{Relaxed: true})
	}
	if err != nil {
		return
	}
	if f.BlockSize < 1024 || f.BlockSize > 65536 || f.Groups == 0 || f.DescSize < 32 {
		t.Fatalf("geometry: block size %d, %d groups, descriptor size %d", f.BlockSize, f.Groups, f.DescSize)
	}
	_ = f.CheckDesc()
	_ = f.CheckFeatures()
	scratch := make([]byte, f.BlockSize)
	inode := make([]byte, f.InodeSize)
	for g := uint32(0); g < f.Groups; g++ {
		_ = f.Layout(g)
		_ = f.Group(g).InodeTable()
		_ = f.GroupHasSuper(g)
		_ = f.GroupLastBlock(g)
	}
	for ino := uint32(1); ino <= f.InodesCount && ino < 64; ino++ {
		_ = f.ReadInode(ino, inode, scratch)
	}
	// A backup superblock at the start of group 1, as e2fsck tries.
	_, _ = fs.Open(dev, fs.Options{Superblock: uint64(f.BlocksPerGroup) + f.FirstDataBlock, BlockSize: f.BlockSize})
}

// fuzzHead is the part of an image FuzzOpen mutates: the superblock and
// the descriptors of the seeds (1 KiB and 4 KiB blocks). Keeping the input
// small makes most mutations land in them.
const fuzzHead = 8 << 10

// FuzzOpen mutates the first 8 KiB of small images (superblock,
// descriptors) and runs the open path on them in a blockdev.Mem of 64 KiB
// (the input, then zeros).
func FuzzOpen(f *testing.F) {
	for _, img := range seedImages(f) {
		f.Add(img[:fuzzHead], true)
	}
	f.Fuzz(func(t *testing.T, head []byte, reseal bool) {
		img := make([]byte, max(openLimit, len(head)))
		copy(img, head)
		// With reseal, a metadata_csum superblock gets its checksum
		// recomputed, so mutations reach past the checksum test.
		sb := ondisk.Superblock(img[ondisk.SuperblockOffset : ondisk.SuperblockOffset+ondisk.SuperblockSize])
		if reseal && sb.HasRoCompat(ondisk.RoCompatMetadataCsum) {
			binary.LittleEndian.PutUint32(sb[0x3FC:], sb.ComputeChecksum())
		}
		openAll(t, img)
	})
}

// TestOpenHugeGroupCount opens superblocks whose geometry claims billions
// of groups on a tiny device: the descriptor table cannot be there, so Open
// must fail (short read) instead of allocating it.
func TestOpenHugeGroupCount(t *testing.T) {
	for _, c := range []struct {
		name                string
		logBlock, inodeSize uint32
		ipg, bpg            uint32
		blocksLo, blocksHi  uint32
		is64                bool
	}{
		// 1 KiB blocks and inodes: one inode per group, 2^32-1 groups.
		{"2^32-1 groups of one inode", 0, 1024, 1, 8, 0xFFFFFFF8, 7, true},
		{"2^29 groups without 64bit", 0, 1024, 1, 8, 0xFFFFFFFF, 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			img := bytes.Clone(seedImages(t)[0][:8192])
			sb := img[ondisk.SuperblockOffset:]
			put := func(off int, v uint32) { binary.LittleEndian.PutUint32(sb[off:], v) }
			put(0x04, c.blocksLo)
			put(0x150, c.blocksHi)
			put(0x18, c.logBlock)
			put(0x1C, c.logBlock)
			put(0x20, c.bpg)
			put(0x24, c.bpg)
			put(0x28, c.ipg)
			binary.LittleEndian.PutUint16(sb[0x58:], uint16(c.inodeSize))
			groups := (uint64(c.blocksHi)<<32 | uint64(c.blocksLo) - 1 + uint64(c.bpg) - 1) / uint64(c.bpg)
			if !c.is64 {
				groups = (uint64(c.blocksLo) - 1 + uint64(c.bpg) - 1) / uint64(c.bpg)
			}
			put(0x00, uint32(groups*uint64(c.ipg)))
			put(0x54, 11)
			if c.is64 {
				put(0x60, binary.LittleEndian.Uint32(sb[0x60:])|ondisk.Incompat64bit)
				binary.LittleEndian.PutUint16(sb[0xFE:], 64)
			}
			dev := &blockdev.Mem{Data: img, ReadOnly: true}
			done := make(chan error, 1)
			go func() {
				_, err := fs.Open(dev, fs.Options{})
				done <- err
			}()
			if err := <-done; err == nil {
				t.Fatalf("Open accepted %d groups on an 8 KiB device", groups)
			} else {
				t.Logf("Open: %v", err)
			}
		})
	}
}
