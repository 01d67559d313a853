package ext2fs

import (
	"testing"

	"gofsck/internal/ondisk"
	"gofsck/internal/testfs"
)

// TestCreateOrphanFile builds a 40-block orphan file in the free inode
// 12 of an ext4 (extents, metadata_csum) and an ext3 (block-mapped: an
// indirect block past the twelfth) image with 1 KiB blocks, and reads it
// back with debugfs: 40 data blocks, each empty with the tail magic and,
// with metadata_csum, a valid checksum; the feature is set in memory.
func TestCreateOrphanFile(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	if DefaultOrphanFileBlocks(8192) != 32 || DefaultOrphanFileBlocks(1<<20) != 256 || DefaultOrphanFileBlocks(1<<22) != 512 {
		t.Errorf("DefaultOrphanFileBlocks")
	}
	for _, tc := range []struct{ fstype, features string }{{"ext4", "metadata_csum"}, {"ext3", ""}} {
		t.Run(tc.fstype, func(t *testing.T) {
			img := testfs.MkImage(t, testfs.Spec{FSType: tc.fstype, Features: tc.features, BlockSize: 1024})
			fsys := openRW(t, img)
			const ino, num = 12, 40
			if err := CreateOrphanFile(fsys, ino, num, 1000); err != nil {
				t.Fatal(err)
			}
			if !fsys.FS.SB.HasCompat(ondisk.CompatOrphanFile) {
				t.Errorf("orphan_file not set")
			}
			bm := testfs.Blocks(t, img, "<12>")
			if len(bm.Data) != num || bm.Extents != (tc.fstype == "ext4") || (tc.fstype == "ext3") != (len(bm.Ind) == 1) {
				t.Fatalf("debugfs stat <12>:\n%s", bm.StatText)
			}
			buf := make([]byte, fsys.FS.BlockSize)
			for _, b := range bm.Data {
				if err := fsys.FS.ReadBlock(b, buf); err != nil {
					t.Fatal(err)
				}
				ob := ondisk.OrphanBlock(buf)
				if ob.Magic() != ondisk.OrphanBlockMagic ||
					fsys.FS.MetadataCsum && ob.Checksum() != ob.ComputeChecksum(fsys.FS.CsumSeed, ino, 0, b) {
					t.Errorf("block %d: magic %#x checksum %#x", b, ob.Magic(), ob.Checksum())
				}
			}
			if n := readInode(t, fsys, ino); n.Size() != num*1024 || n.LinksCount() != 1 || n.Mode() != ondisk.SIFREG|0o600 {
				t.Errorf("size %d, links %d, mode %o", n.Size(), n.LinksCount(), n.Mode())
			}
		})
	}
}
