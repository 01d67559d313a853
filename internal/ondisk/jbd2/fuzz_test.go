package jbd2

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// addSeeds adds every testdata block whose name contains kind.
func addSeeds(f *testing.F, kind string) {
	names, _ := filepath.Glob(filepath.Join("testdata", "*.bin"))
	for _, n := range names {
		if strings.Contains(n, kind) {
			b, err := os.ReadFile(n)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b, uint32(0x12))
		}
	}
}

func FuzzSuperblock(f *testing.F) {
	addSeeds(f, "super")
	f.Fuzz(func(t *testing.T, b []byte, fsbs uint32) {
		sb, err := SuperblockOf(b)
		if err != nil {
			return
		}
		_ = sb.FeatureIncompat().String() + sb.FeatureCompat().String() + sb.FeatureRoCompat().String()
		_ = sb.StrayV2Fields(true)
		_, _ = sb.User(int(fsbs % 64))
		err = sb.Validate(fsbs, uint64(fsbs)*3)
		if err == nil {
			l, lerr := sb.Layout(uint64(fsbs) * 3)
			if lerr == nil && (l.First >= l.Last || l.Last > l.TotalLen) {
				t.Fatalf("bad layout %+v", l)
			}
			if sb.Format().HasCsumV2or3() && !sb.ChecksumValid() {
				t.Fatalf("accepted a bad checksum")
			}
		}
	})
}

func FuzzDescriptor(f *testing.F) {
	addSeeds(f, "descriptor")
	addSeeds(f, "commit")
	f.Fuzz(func(t *testing.T, b []byte, inc uint32) {
		fm := Format{Version: 2, Incompat: IncompatFeature(inc)}
		d, err := DescriptorOf(b, fm)
		if err == nil {
			n := 0
			for it := d.Tags(); ; n++ {
				tag, ok := it.Next()
				if !ok {
					break
				}
				if tag.Off+fm.TagSize() > len(b)-fm.TailSize() {
					t.Fatalf("tag at %d overlaps the tail", tag.Off)
				}
			}
			if n != d.TagCount() || n > len(b)/8 {
				t.Fatalf("tag count %d vs %d", n, d.TagCount())
			}
			_ = d.ChecksumValid(inc)
		}
		if c, err := CommitOf(b); err == nil {
			_ = c.ChecksumValid(fm, inc)
			_ = c.V1ChecksumMatches(inc)
			_ = c.CommitTime()
		}
	})
}

func FuzzRevoke(f *testing.F) {
	addSeeds(f, "revoke")
	f.Fuzz(func(t *testing.T, b []byte, inc uint32) {
		fm := Format{Version: 2, Incompat: IncompatFeature(inc)}
		r, err := RevokeOf(b, fm)
		if err != nil {
			return
		}
		n := 0
		it := r.Records()
		for ; ; n++ {
			if _, ok := it.Next(); !ok {
				break
			}
		}
		if n != r.NumRecords() || n > len(b)/4 {
			t.Fatalf("%d records, NumRecords %d", n, r.NumRecords())
		}
		if (it.Err() == nil) != r.CountValid() {
			t.Fatalf("Err %v but CountValid %v", it.Err(), r.CountValid())
		}
		_ = r.ChecksumValid(inc)
	})
}

func FuzzFastCommit(f *testing.F) {
	f.Add([]byte{9, 0, 8, 0, 0, 0, 0, 0, 5, 0, 0, 0, 7, 0, 2, 0, 0, 0, 8, 0, 8, 0, 5, 0, 0, 0, 1, 2, 3, 4})
	f.Fuzz(func(t *testing.T, b []byte) {
		it := FCRecords(b)
		end := 0
		for {
			r, ok := it.Next()
			if !ok {
				break
			}
			if r.Off < end || r.Off+FCTagHeaderSize+len(r.Value) > len(b) {
				t.Fatalf("record %+v out of order or bounds", r)
			}
			end = r.Off + FCTagHeaderSize + len(r.Value)
			_, _, _ = r.Head()
			_, _, _ = r.Tail()
			_ = r.Tag.String()
		}
	})
}
