package testfs

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// BlockImage is a clean filesystem image held in memory with the numbers of
// its blocks that are not all zero: its metadata and small data, which the
// fuzz targets and the random-mutation test overwrite.
type BlockImage struct {
	Name      string
	Data      []byte
	BlockSize int
	Blocks    []int // ascending
}

// LoadBlockImage reads a gzip-compressed image; Name is the file's base
// name without ".img.gz".
func LoadBlockImage(path string) (*BlockImage, error) {
	data, err := ReadGz(path)
	if err != nil {
		return nil, err
	}
	// s_log_block_size, at byte 24 of the superblock at byte 1024.
	if len(data) < 2048 {
		return nil, fmt.Errorf("%s: too small for a superblock", path)
	}
	lg := binary.LittleEndian.Uint32(data[1024+24:])
	if lg > 6 {
		return nil, fmt.Errorf("%s: block size 1024<<%d", path, lg)
	}
	b := &BlockImage{Name: strings.TrimSuffix(filepath.Base(path), ".img.gz"), Data: data, BlockSize: 1024 << lg}
	zero := make([]byte, b.BlockSize)
	for blk := 0; (blk+1)*b.BlockSize <= len(data); blk++ {
		if !bytes.Equal(data[blk*b.BlockSize:(blk+1)*b.BlockSize], zero) {
			b.Blocks = append(b.Blocks, blk)
		}
	}
	return b, nil
}

// ReadGz returns the decompressed contents of a gzip file.
func ReadGz(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}

var (
	fuzzBasesOnce sync.Once
	fuzzBases     []*BlockImage
	fuzzBasesErr  error
)

// FuzzBases returns the base images of the block-level fuzz targets and of
// the random-mutation test, internal/check/testdata/{ext2,ext4}.img.gz (a
// small ext2 with indirect blocks and an ext4 with extents, inline data,
// htree and xattrs; see internal/check/testdata/mkfuzzimages.sh), loaded
// once. Callers must not change them.
func FuzzBases(t testing.TB) []*BlockImage {
	t.Helper()
	fuzzBasesOnce.Do(func() {
		root, err := ModuleRoot()
		if err != nil {
			fuzzBasesErr = err
			return
		}
		for _, name := range []string{"ext2", "ext4"} {
			b, err := LoadBlockImage(filepath.Join(root, "internal", "check", "testdata", name+".img.gz"))
			if err != nil {
				fuzzBasesErr = err
				return
			}
			fuzzBases = append(fuzzBases, b)
		}
	})
	if fuzzBasesErr != nil {
		t.Fatalf("loading the fuzz base images: %v", fuzzBasesErr)
	}
	return fuzzBases
}

// Seed is the fuzz input that rebuilds base i unchanged: the selector byte
// i, then the image's non-zero blocks, concatenated.
func (b *BlockImage) Seed(i int) []byte {
	in := []byte{byte(i)}
	for _, blk := range b.Blocks {
		in = append(in, b.Data[blk*b.BlockSize:(blk+1)*b.BlockSize]...)
	}
	return in
}

// ImageFromInput rebuilds an image from a fuzz input: in[0] picks one of
// bases, and the rest overwrites its non-zero blocks in order (a short
// input leaves the remaining blocks as they are). It returns nil for an
// empty input.
func ImageFromInput(bases []*BlockImage, in []byte) []byte {
	if len(in) == 0 || len(bases) == 0 {
		return nil
	}
	b := bases[int(in[0])%len(bases)]
	img := bytes.Clone(b.Data)
	rest := in[1:]
	for _, blk := range b.Blocks {
		if len(rest) == 0 {
			break
		}
		n := copy(img[blk*b.BlockSize:(blk+1)*b.BlockSize], rest)
		rest = rest[n:]
	}
	return img
}
