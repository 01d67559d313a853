package quota

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzScan opens and scans arbitrary quota files as every type. The
// property: no panic, bounded work, and a scan of a file that opened reports
// only entries from data blocks inside dqi_blocks.
func FuzzScan(f *testing.F) {
	names, _ := filepath.Glob(filepath.Join("testdata", "*.quota.gz"))
	for _, n := range names {
		f.Add(load(f, strings.TrimPrefix(n, "testdata"+string(os.PathSeparator))))
	}
	b := build(User, 6)
	chain(b)
	entry(b, 5, 0, 7, 1024, 1)
	ref(b, 2, 1, 1)
	f.Add(b)
	f.Fuzz(func(t *testing.T, data []byte) {
		for typ := User; typ < NumTypes; typ++ {
			h, err := Open(memFile(data), typ)
			if err != nil {
				continue
			}
			n := 0
			_ = h.Scan(func(Dquot) { n++ })
			if max := int(h.Info.Blocks()) * h.EntriesPerBlock(); n > max {
				t.Fatalf("%d entries from %d blocks", n, h.Info.Blocks())
			}
		}
	})
}
