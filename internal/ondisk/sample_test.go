package ondisk_test

import (
	"compress/gzip"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"gofsck/internal/ondisk"
)

// sample is one image of testdata (built by testdata/mksamples.sh) with the
// dumpe2fs and debugfs transcripts recorded next to it.
type sample struct {
	name string
	img  []byte
	sb   ondisk.Superblock
	bs   int
	dump string            // dumpe2fs output
	dbg  map[string]string // "stat /small" -> debugfs output
}

// sampleNames lists the images of testdata.
var sampleNames = []string{"ext4-1k", "ext4-4k", "ext4-64k", "ext2-64k"}

var (
	samplesMu sync.Mutex
	samples   = map[string]*sample{} // samplesMu protects samples.
)

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

func loadSample(t testing.TB, name string) *sample {
	t.Helper()
	samplesMu.Lock()
	defer samplesMu.Unlock()
	if s, ok := samples[name]; ok {
		return s
	}
	s := &sample{name: name, dbg: map[string]string{}}
	s.img = readGz(t, filepath.Join("testdata", name+".img.gz"))
	sb, err := ondisk.NewSuperblock(s.img[ondisk.SuperblockOffset:])
	if err != nil {
		t.Fatal(err)
	}
	s.sb, s.bs = sb, sb.BlockSize()
	d, err := os.ReadFile(filepath.Join("testdata", name+".dumpe2fs"))
	if err != nil {
		t.Fatal(err)
	}
	s.dump = string(d)
	d, err = os.ReadFile(filepath.Join("testdata", name+".debugfs"))
	if err != nil {
		t.Fatal(err)
	}
	var key string
	for _, l := range strings.SplitAfter(string(d), "\n") {
		if k, ok := strings.CutPrefix(l, "=== "); ok {
			key = strings.TrimSpace(k)
			continue
		}
		s.dbg[key] += l
	}
	samples[name] = s
	return s
}

func (s *sample) block(b uint64) []byte {
	return s.img[int(b)*s.bs : int(b+1)*s.bs]
}

func (s *sample) descSize() int {
	if s.sb.Is64bit() {
		return int(s.sb.RawDescSize())
	}
	return ondisk.GroupDescSize32
}

// gd returns the descriptor of group g from the primary table.
func (s *sample) gd(g int) ondisk.GroupDesc {
	off := int(s.sb.FirstDataBlock()+1)*s.bs + g*s.descSize()
	return ondisk.GroupDesc(s.img[off : off+s.descSize()])
}

// inode returns a copy of inode ino.
func (s *sample) inode(ino uint32) ondisk.Inode {
	ipg := s.sb.InodesPerGroup()
	g, idx := (ino-1)/ipg, (ino-1)%ipg
	isz := int(s.sb.InodeSize())
	off := int(s.gd(int(g)).InodeTable())*s.bs + int(idx)*isz
	return append(ondisk.Inode(nil), s.img[off:off+isz]...)
}

// ino returns the inode number debugfs stat printed for path.
func (s *sample) ino(t testing.TB, path string) uint32 {
	t.Helper()
	m := regexp.MustCompile(`Inode: (\d+)`).FindStringSubmatch(s.dbg["stat "+path])
	if m == nil {
		t.Fatalf("%s: no stat for %s", s.name, path)
	}
	return uint32(atoi(t, m[1]))
}

// extentLeaves returns the data extents of an extent-mapped inode, reading
// index blocks from the image (depth ≤ 1 in the samples).
func (s *sample) extentLeaves(t testing.TB, n ondisk.Inode) []ondisk.Extent {
	t.Helper()
	h := ondisk.ExtentHeader(n.IBlock())
	if err := h.Verify(); err != nil {
		t.Fatal(err)
	}
	if h.Depth() == 0 {
		var x []ondisk.Extent
		for i := 0; i < int(h.Entries()); i++ {
			x = append(x, h.Leaf(i))
		}
		return x
	}
	var x []ondisk.Extent
	for i := 0; i < int(h.Entries()); i++ {
		leaf := ondisk.ExtentHeader(s.block(h.Idx(i).Leaf))
		if err := leaf.Verify(); err != nil {
			t.Fatal(err)
		}
		for j := 0; j < int(leaf.Entries()); j++ {
			x = append(x, leaf.Leaf(j))
		}
	}
	return x
}

// fileBlock returns the physical block of logical block lblk of an
// extent-mapped inode.
func (s *sample) fileBlock(t testing.TB, n ondisk.Inode, lblk uint32) uint64 {
	t.Helper()
	for _, e := range s.extentLeaves(t, n) {
		if lblk >= e.Lblk && lblk < e.Lblk+e.Len {
			return e.Pblk + uint64(lblk-e.Lblk)
		}
	}
	t.Fatalf("%s: logical block %d not mapped", s.name, lblk)
	return 0
}

// kv parses "Key: value" lines (dumpe2fs -h style).
func kv(text string) map[string]string {
	m := map[string]string{}
	for _, l := range strings.Split(text, "\n") {
		k, v, ok := strings.Cut(l, ":")
		if ok {
			m[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return m
}

func atoi(t testing.TB, s string) uint64 {
	t.Helper()
	v, err := strconv.ParseUint(s, 0, 64)
	if err != nil {
		t.Fatalf("parsing %q: %v", s, err)
	}
	return v
}

func le32(b []byte) uint32 { return binary.LittleEndian.Uint32(b) }
