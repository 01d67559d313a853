package ext2fs

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"gofsck/internal/testfs"
)

// TestFileRead reads files that mke2fs -d wrote back through File on a
// block-mapped (ext3) and an extent-mapped (ext4) image, 1 KiB blocks: a
// 300 KiB file (through the doubly indirect range, or one extent) and a
// sparse one (a block every 8, so more extents than the root holds), the
// holes as zeros; a read across i_size stops there with io.EOF, and
// OpenFile refuses inode 0.
func TestFileRead(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	data := make([]byte, 300<<10)
	for i := range data {
		data[i] = byte(i*13) | 1
	}
	const size, chunk, stride = 200 << 10, 1 << 10, 8 << 10
	sparse := make([]byte, size)
	for off := 0; off+chunk <= size; off += stride {
		copy(sparse[off:], bytes.Repeat([]byte{0xA5}, chunk))
	}
	for _, fstype := range []string{"ext3", "ext4"} {
		t.Run(fstype, func(t *testing.T) {
			img := testfs.MkImage(t, testfs.Spec{FSType: fstype, Size: 8 << 20, BlockSize: 1024,
				Populate: func(tr *testfs.Tree) {
					tr.FileData("data", data)
					tr.Sparse("sparse", size, chunk, stride)
				}})
			f, _ := openOverlay(t, img)
			fsys := &Filsys{FS: f, IO: devIO{t, f}}
			for _, tc := range []struct {
				path string
				want []byte
			}{{"/data", data}, {"/sparse", sparse}} {
				r, err := OpenFile(fsys, testfs.Ino(t, img, tc.path))
				if err != nil {
					t.Fatalf("%s: %v", tc.path, err)
				}
				if r.Size() != uint64(len(tc.want)) {
					t.Fatalf("%s: size %d, want %d", tc.path, r.Size(), len(tc.want))
				}
				got := make([]byte, len(tc.want))
				if n, err := r.ReadAt(got, 0); n != len(got) || (err != nil && err != io.EOF) {
					t.Fatalf("%s: read %d bytes, %v", tc.path, n, err)
				}
				if !bytes.Equal(got, tc.want) {
					t.Errorf("%s: contents differ from what was written", tc.path)
				}
				tail := make([]byte, 3000)
				n, err := r.ReadAt(tail, int64(len(tc.want))-1000)
				if n != 1000 || err != io.EOF || !bytes.Equal(tail[:n], tc.want[len(tc.want)-1000:]) {
					t.Errorf("%s: read across i_size: %d bytes, %v", tc.path, n, err)
				}
			}
			if _, err := OpenFile(fsys, 0); !errors.Is(err, ErrBadInodeNum) {
				t.Errorf("inode 0: %v, want ErrBadInodeNum", err)
			}
		})
	}
}
