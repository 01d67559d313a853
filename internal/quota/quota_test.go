package quota

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// memFile is a File over a byte slice.
type memFile []byte

func (m memFile) Size() uint64 { return uint64(len(m)) }

func (m memFile) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("negative offset")
	}
	if off >= int64(len(m)) {
		return 0, io.EOF
	}
	n := copy(p, m[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func load(t testing.TB, name string) []byte {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func scanAll(t testing.TB, b []byte, typ Type) ([]Dquot, error) {
	t.Helper()
	h, err := Open(memFile(b), typ)
	if err != nil {
		return nil, err
	}
	var got []Dquot
	err = h.Scan(func(d Dquot) { got = append(got, d) })
	return got, err
}

func TestSizes(t *testing.T) {
	if n := len(Header{}); n != 8 {
		t.Errorf("Header is %d bytes, want 8", n)
	}
	if n := len(InfoBlock{}); n != 24 {
		t.Errorf("InfoBlock is %d bytes, want 24", n)
	}
	if entrySizeV1 != v1ITime+8 || entrySizeV0 != v0ITime+8 {
		t.Errorf("entry sizes %d/%d do not end at dqb_itime", entrySizeV1, entrySizeV0)
	}
	h := &Handle{entrySize: entrySizeV1}
	if n := h.EntriesPerBlock(); n != 14 {
		t.Errorf("v1 entries per block %d, want 14", n)
	}
}

// TestGolden decodes quota files written by mke2fs and e2fsck 1.47.0 (dumped
// with debugfs from images populated with mke2fs -d and fixed by e2fsck -fy).
func TestGolden(t *testing.T) {
	ids := func(n int, f func(i int) uint32) []uint32 {
		var r []uint32
		for i := 0; i < n; i++ {
			r = append(r, f(i))
		}
		return r
	}
	tests := []struct {
		file   string
		typ    Type
		blocks uint32
		want   []Dquot // checked when set
		ids    []uint32
	}{
		{
			file: "ext4-usr-4k.quota.gz", typ: User, blocks: 8,
			want: []Dquot{
				{ID: 0, CurSpace: 15360, CurInodes: 4, ITime: 0},
				{ID: 1000, CurSpace: 1024, CurInodes: 1},
				{ID: 1234, CurSpace: 0, CurInodes: 1}, // all zeros: sparse
			},
		},
		{file: "ext4-grp-4k.quota.gz", typ: Group, blocks: 7, ids: []uint32{0, 2000, 2001}},
		{file: "ext4-prj-4k.quota.gz", typ: Project, blocks: 6, ids: []uint32{0, 7}},
		// ids 0, 70000, ... 2800000: three levels of the tree branch.
		{file: "ext4-usr-1k-manyids.quota.gz", typ: User, ids: ids(41, func(i int) uint32 { return uint32(i * 70000) })},
		{file: "ext4-grp-1k-manyids.quota.gz", typ: Group, ids: ids(41, func(i int) uint32 { return uint32(i * 3) })},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			b := load(t, tt.file)
			h, err := Open(memFile(b), tt.typ)
			if err != nil {
				t.Fatal(err)
			}
			if h.Header.Magic() != tt.typ.Magic() || h.Header.Version() != 1 {
				t.Errorf("header magic %#x version %d", h.Header.Magic(), h.Header.Version())
			}
			if tt.blocks != 0 && h.Info.Blocks() != tt.blocks {
				t.Errorf("dqi_blocks %d, want %d", h.Info.Blocks(), tt.blocks)
			}
			if h.Info.BGrace() != 604800 || h.Info.IGrace() != 604800 {
				t.Errorf("grace times %d %d, want 7 days", h.Info.BGrace(), h.Info.IGrace())
			}
			got, err := scanAll(t, b, tt.typ)
			if err != nil {
				t.Fatal(err)
			}
			if tt.want != nil {
				if d := diff(tt.want, got); d != "" {
					t.Errorf("entries (-want +got):\n%s", d)
				}
			}
			if tt.ids != nil {
				var gotIDs []uint32
				for _, d := range got {
					gotIDs = append(gotIDs, d.ID)
					if d.CurInodes < 1 {
						t.Errorf("id %d: %d inodes", d.ID, d.CurInodes)
					}
				}
				if d := diff(tt.ids, gotIDs); d != "" {
					t.Errorf("ids in scan order (-want +got):\n%s", d)
				}
			}
		})
	}
}

// build writes a version-1 quota file of n quota blocks with the given info
// and returns it for editing.
func build(typ Type, n int) []byte {
	b := make([]byte, n*BlockSize)
	binary.LittleEndian.PutUint32(b[0:], typ.Magic())
	binary.LittleEndian.PutUint32(b[4:], 1)
	binary.LittleEndian.PutUint32(b[infoOff+offBGrace:], 604800)
	binary.LittleEndian.PutUint32(b[infoOff+offIGrace:], 604800)
	binary.LittleEndian.PutUint32(b[infoOff+offBlocks:], uint32(n))
	return b
}

func ref(b []byte, blk, i int, to uint32) {
	binary.LittleEndian.PutUint32(b[blk*BlockSize+4*i:], to)
}

func entry(b []byte, blk, i int, id uint32, space, inodes uint64) {
	e := b[blk*BlockSize+dataHdrSize+i*entrySizeV1:]
	binary.LittleEndian.PutUint32(e[v1ID:], id)
	binary.LittleEndian.PutUint64(e[v1CurSpace:], space)
	binary.LittleEndian.PutUint64(e[v1CurInodes:], inodes)
	if id == 0 && space == 0 && inodes == 0 {
		binary.LittleEndian.PutUint64(e[v1ITime:], 1)
	}
}

// chain makes the path 1 -> 2 -> 3 -> 4 (tree levels 0-3) and points the
// last level at data block 5, all through index 0.
func chain(b []byte) {
	ref(b, 1, 0, 2)
	ref(b, 2, 0, 3)
	ref(b, 3, 0, 4)
	ref(b, 4, 0, 5)
}

func TestOpenErrors(t *testing.T) {
	tests := []struct {
		name string
		edit func(b []byte) []byte
		err  string // "" for success
	}{
		{"ok", func(b []byte) []byte { return b }, ""},
		{"le magic of another type is accepted", func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[0:], Group.Magic())
			return b
		}, ""},
		{"version 0", func(b []byte) []byte { binary.LittleEndian.PutUint32(b[4:], 0); return b }, ""},
		{"wrong endian", func(b []byte) []byte { binary.BigEndian.PutUint32(b[0:], User.Magic()); return b }, "wrong endianness"},
		{"version 2", func(b []byte) []byte { binary.LittleEndian.PutUint32(b[4:], 2); return b }, "dqh_version"},
		{"empty", func(b []byte) []byte { return nil }, "header size"},
		{"no info", func(b []byte) []byte { return b[:20] }, "info size"},
		{"blocks past eof", func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[infoOff+offBlocks:], 7)
			return b
		}, "dqi_blocks"},
		{"blocks in last partial block", func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[infoOff+offBlocks:], 7)
			return append(b, 1)
		}, ""},
		{"free blk", func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[infoOff+offFreeBlk:], 6)
			return b
		}, "dqi_free_blk"},
		{"free entry", func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[infoOff+offFreeEntry:], 6)
			return b
		}, "dqi_free_entry"},
		{"zero blocks", func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[infoOff+offBlocks:], 0)
			return b
		}, "dqi_free_blk"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := tt.edit(build(User, 6))
			_, err := Open(memFile(b), User)
			switch {
			case tt.err == "" && err != nil:
				t.Fatalf("Open: %v", err)
			case tt.err != "" && (err == nil || !bytes.Contains([]byte(err.Error()), []byte(tt.err))):
				t.Fatalf("Open: %v, want an error mentioning %q", err, tt.err)
			case tt.err != "" && !errors.Is(err, ErrCorrupt):
				t.Fatalf("Open: %v is not ErrCorrupt", err)
			}
		})
	}
}

func TestScan(t *testing.T) {
	tests := []struct {
		name string
		edit func(b []byte)
		want []uint32 // ids in scan order
		err  string
	}{
		{"one entry", func(b []byte) { chain(b); entry(b, 5, 0, 7, 1024, 1) }, []uint32{7}, ""},
		{"id 0 marked by itime 1", func(b []byte) { chain(b); entry(b, 5, 3, 0, 0, 0) }, []uint32{0}, ""},
		{"free entries skipped", func(b []byte) {
			chain(b)
			entry(b, 5, 1, 9, 1, 1)
			entry(b, 5, 13, 8, 1, 1)
		}, []uint32{9, 8}, ""},
		{"data block reported once", func(b []byte) {
			chain(b)
			ref(b, 4, 9, 5)
			ref(b, 3, 1, 4)
			entry(b, 5, 0, 7, 1, 1)
		}, []uint32{7}, ""},
		{"reference past dqi_blocks", func(b []byte) {
			chain(b)
			entry(b, 5, 0, 7, 1, 1)
			ref(b, 4, 1, 6)
		}, []uint32{7}, "reference 6"},
		{"zero reference at the last level is checked too", func(b []byte) {
			chain(b)
			entry(b, 5, 0, 7, 1, 1)
		}, []uint32{7}, ""},
		{"cycle", func(b []byte) {
			chain(b)
			ref(b, 2, 1, 1) // level 1 points back at the root
			ref(b, 3, 1, 2)
			entry(b, 5, 0, 7, 1, 1)
		}, []uint32{7}, ""},
		{"tree block used as data", func(b []byte) {
			chain(b)
			ref(b, 4, 0, 4) // the leaf tree block itself as a data block
			ref(b, 4, 4, 3) // read back as the id of its entry 0
		}, []uint32{3}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := build(User, 6)
			tt.edit(b)
			got, err := scanAll(t, b, User)
			if tt.err == "" && err != nil {
				t.Fatalf("Scan: %v", err)
			}
			if tt.err != "" && (err == nil || !bytes.Contains([]byte(err.Error()), []byte(tt.err))) {
				t.Fatalf("Scan: %v, want an error mentioning %q", err, tt.err)
			}
			var ids []uint32
			for _, d := range got {
				ids = append(ids, d.ID)
			}
			if d := diff(tt.want, ids); d != "" {
				t.Errorf("ids (-want +got):\n%s", d)
			}
		})
	}
}

// diff renders want and got when they differ (go-cmp is not a dependency of
// the module).
func diff(want, got any) string {
	if reflect.DeepEqual(want, got) {
		return ""
	}
	return fmt.Sprintf("-%+v\n+%+v", want, got)
}
