package ext2fs

import (
	"testing"

	"gofsck/internal/bitmap"
	"gofsck/internal/fs"
)

// TestNewCluster runs ext2fs_new_block3's search on a small bitmap: the
// goal's cluster or the next free one, the wrap to the first data block,
// a goal out of range, clusters a caller skips, and a full map.
func TestNewCluster(t *testing.T) {
	f := &fs.FS{BlocksCount: 64, FirstDataBlock: 1, ClusterBits: 1} // clusters 0..31
	m := bitmap.New(32)
	for cl := uint64(0); cl < 32; cl++ {
		if cl != 3 && cl != 20 && cl != 21 {
			m.Set(cl)
		}
	}
	skip21 := func(cl uint64) bool { return cl == 21 }
	for _, tc := range []struct {
		name string
		goal uint64
		skip func(uint64) bool
		want uint64
		ok   bool
	}{
		{"at goal", 40, nil, 20, true},
		{"after goal", 41, nil, 20, true},
		{"next after goal", 42, nil, 21, true},
		{"skipped", 42, skip21, 3, true},
		{"wraps", 44, nil, 3, true},
		{"goal 0", 0, nil, 3, true},
		{"goal past the end", 64, nil, 3, true},
		{"all skipped", 10, func(uint64) bool { return true }, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := NewCluster(f, m, tc.goal, tc.skip)
			if got != tc.want || ok != tc.ok {
				t.Errorf("NewCluster(goal %d) = %d, %v; want %d, %v", tc.goal, got, ok, tc.want, tc.ok)
			}
		})
	}
	m.Set(3)
	m.Set(20)
	m.Set(21)
	if cl, ok := NewCluster(f, m, 10, nil); ok {
		t.Errorf("full map gave cluster %d", cl)
	}
	if cl, ok := NewCluster(f, m, 0, nil); ok {
		t.Errorf("full map from the first data block gave cluster %d", cl)
	}
}
