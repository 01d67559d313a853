package quota

import (
	"bytes"
	"encoding/binary"
	"math/rand"
	"slices"
	"testing"
)

// TestBuildGolden rebuilds the quota files e2fsprogs wrote (mke2fs -d and
// e2fsck -fy, see TestGolden) from their entries: the result must be the
// same file, byte for byte.
func TestBuildGolden(t *testing.T) {
	for _, tt := range []struct {
		file string
		typ  Type
	}{
		{"ext4-usr-4k.quota.gz", User},
		{"ext4-grp-4k.quota.gz", Group},
		{"ext4-prj-4k.quota.gz", Project},
		{"ext4-usr-1k-manyids.quota.gz", User},
		{"ext4-grp-1k-manyids.quota.gz", Group},
	} {
		t.Run(tt.file, func(t *testing.T) {
			want := load(t, tt.file)
			got, err := scanAll(t, want, tt.typ)
			if err != nil {
				t.Fatal(err)
			}
			slices.SortFunc(got, func(a, b Dquot) int { return int(int64(a.ID) - int64(b.ID)) })
			b := Build(tt.typ, got, 0)
			if !bytes.Equal(b.Data, want) {
				t.Fatalf("rebuilt file differs (%d bytes, want %d)\nfirst difference at %d", len(b.Data), len(want), firstDiff(b.Data, want))
			}
		})
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestBuildRoundTrip writes random tables and reads them back.
func TestBuildRoundTrip(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for _, n := range []int{0, 1, 13, 14, 15, 29, 200, 1000} {
		ids := map[uint32]bool{}
		var in []Dquot
		for len(in) < n {
			id := r.Uint32()
			switch r.Intn(3) {
			case 0:
				id &= 0xff
			case 1:
				id &= 0xffff
			}
			if ids[id] {
				continue
			}
			ids[id] = true
			d := Dquot{ID: id, CurSpace: int64(r.Intn(1 << 20)), CurInodes: int64(r.Intn(100))}
			if r.Intn(4) == 0 {
				d.BSoftLimit, d.BHardLimit = uint64(r.Intn(2000)), uint64(r.Intn(5000))
				d.ISoftLimit, d.IHardLimit = uint64(r.Intn(50)), uint64(r.Intn(100))
			}
			if r.Intn(10) == 0 {
				d = Dquot{ID: id} // not written
			}
			in = append(in, d)
		}
		slices.SortFunc(in, func(a, b Dquot) int { return int(int64(a.ID) - int64(b.ID)) })
		const now = 1700000000
		b := Build(Group, in, now)
		if n == 0 {
			// The header and info only: dqi_blocks 2 in a 32-byte file,
			// which e2fsprogs itself then refuses to open.
			if len(b.Data) != headerSize+infoSize {
				t.Errorf("empty table: file of %d bytes, want %d", len(b.Data), headerSize+infoSize)
			}
			if _, err := Open(memFile(b.Data), Group); err == nil {
				t.Errorf("empty table: file opens")
			}
			continue
		}
		got, err := scanAll(t, b.Data, Group)
		if err != nil {
			t.Fatalf("%d entries: %v", n, err)
		}
		var want []Dquot
		for _, d := range in {
			if d == (Dquot{ID: d.ID}) {
				continue
			}
			graceTimes(&d, now)
			want = append(want, d)
		}
		slices.SortFunc(got, func(a, b Dquot) int { return int(int64(a.ID) - int64(b.ID)) })
		if d := diff(want, got); d != "" {
			t.Errorf("%d entries (-want +got):\n%s", n, d)
		}
		if len(b.Order) != (len(b.Data)+BlockSize-1)/BlockSize {
			t.Errorf("%d entries: %d blocks written, file has %d", n, len(b.Order), (len(b.Data)+BlockSize-1)/BlockSize)
		}
		h, err := Open(memFile(b.Data), Group)
		if err != nil {
			t.Fatal(err)
		}
		if int(h.Info.Blocks())*BlockSize != len(b.Data) {
			t.Errorf("%d entries: dqi_blocks %d for %d bytes", n, h.Info.Blocks(), len(b.Data))
		}
	}
}

// TestBuildOrder checks the order blocks are first written in: the header
// block, the new tree path and data block, then the root (written last,
// when the first entry's path is linked in).
func TestBuildOrder(t *testing.T) {
	b := Build(User, []Dquot{{ID: 0, CurInodes: 1}, {ID: 1234, CurInodes: 1, CurSpace: 4096}}, 0)
	if want := []uint32{0, 2, 3, 4, 5, 1, 6}; !slices.Equal(b.Order, want) {
		t.Errorf("order %v, want %v", b.Order, want)
	}
	if got := binary.LittleEndian.Uint32(b.Data[infoOff+offBlocks:]); got != 7 {
		t.Errorf("dqi_blocks %d, want 7", got)
	}
}

// TestGraceTimes: an exceeded soft limit starts its grace period.
func TestGraceTimes(t *testing.T) {
	d := Dquot{ID: 5, CurSpace: 2049, BSoftLimit: 2, CurInodes: 3, ISoftLimit: 3, BTime: 9, ITime: 9}
	graceTimes(&d, 100)
	if d.BTime != 100+DefaultBGrace || d.ITime != 0 {
		t.Errorf("btime %d itime %d", d.BTime, d.ITime)
	}
}
