package check

import (
	"context"
	"fmt"
	"io"
	"testing"

	"gofsck/internal/blockdev"
	"gofsck/internal/fs"
	"gofsck/internal/problem"
	"gofsck/internal/testfs"
)

// BenchmarkCheck times a whole read-only check (passes 1-5) of an image
// with 20000 files in 40 directories, from the page cache, with 1 worker
// and with one per CPU. Compare runs with benchstat.
func BenchmarkCheck(b *testing.B) {
	testfs.RequireE2fsprogs(b)
	img := testfs.MkImage(b, testfs.Spec{
		Size: 256 << 20, FSType: "ext4", Inodes: 32768, OptimizeDirs: true,
		Populate: func(tr *testfs.Tree) {
			for d := 0; d < 40; d++ {
				tr.ManyFiles(fmt.Sprintf("d%02d", d), 500)
			}
		},
	})
	for _, workers := range []int{1, 0} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			dev, err := blockdev.Open(img, true, false)
			if err != nil {
				b.Fatal(err)
			}
			defer dev.Close()
			f, err := fs.Open(dev, fs.Options{})
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				rep := problem.NewReporter(io.Discard, problem.Options{Mode: problem.ModeNo})
				c := New(f, rep, Options{ReadOnly: true, Force: true, Workers: workers})
				if err := c.Run(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
