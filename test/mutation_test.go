package test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"gofsck/internal/testfs"
)

// Random corruption, compared with e2fsck.
//
// The differential cases corrupt one field at a time, where a test writer
// thought of it. TestMutationsAgree corrupts 1-3 bytes at random offsets
// of the metadata blocks of FuzzCheck's two small images (an ext2 with
// indirect blocks, an ext4 with extents, inline data, htree and xattrs),
// reproducibly, and compares gofsck with e2fsck on each image: the -fn
// transcript and exit code, and for every second image the -fy transcript
// and exit code and e2fsck -fn's verdict on each program's result. What is
// left in testdata/mutation_known.txt says why each listed case differs.

// mutationSeeds and mutationsPerSeed size the run (about 30 s on 2 CPUs).
const (
	mutationSeeds    = 2
	mutationsPerSeed = 150
)

// splitmix64 is a small generator whose sequence never changes with the Go
// version, so case names keep naming the same images.
type splitmix64 uint64

func (s *splitmix64) next() uint64 {
	*s += 0x9e3779b97f4a7c15
	z := uint64(*s)
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

func (s *splitmix64) intn(n int) int { return int(s.next() % uint64(n)) }

// mutate returns case i of seed's sequence: a copy of one base with 1-3
// bytes flipped, set at random or cleared.
func mutate(bases []*testfs.BlockImage, rng *splitmix64) []byte {
	b := bases[rng.intn(len(bases))]
	img := bytes.Clone(b.Data)
	for k := 1 + rng.intn(3); k > 0; k-- {
		off := b.Blocks[rng.intn(len(b.Blocks))]*b.BlockSize + rng.intn(b.BlockSize)
		switch rng.intn(3) {
		case 0:
			img[off] ^= 1 << rng.intn(8)
		case 1:
			img[off] = byte(rng.next())
		default:
			img[off] = 0
		}
	}
	return img
}

func TestMutationsAgree(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	bases := testfs.FuzzBases(t)
	known := loadKnown(t, filepath.Join("testdata", "mutation_known.txt"))
	var all []string
	t.Run("case", func(t *testing.T) {
		for seed := 1; seed <= mutationSeeds; seed++ {
			rng := splitmix64(seed)
			for i := 0; i < mutationsPerSeed; i++ {
				img := mutate(bases, &rng)
				name := fmt.Sprintf("m-%d-%d", seed, i)
				all = append(all, name)
				repair := i%2 == 0
				if !testfs.InSample(name, 3) { // the default tier: a fixed third
					continue
				}
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					agree, reason, detail := compareMutation(t, img, repair)
					known.record(t, name, agree, reason, detail)
				})
			}
		}
	})
	known.finish(t, "random mutations", all, mutationKnownHeader)
}

const mutationKnownHeader = `# Randomly corrupted images (test/mutation_test.go, TestMutationsAgree) on
# which gofsck does not yet agree with the installed e2fsck. One line per
# case: name<TAB>reason. The list may only shrink. Regenerate with
#   go test ./test -run '^TestMutationsAgree$' -update-known
`

// compareMutation runs both checkers on img (-fn, and -fy when repair is
// set) and says whether they agree.
func compareMutation(t *testing.T, img []byte, repair bool) (agree bool, reason, detail string) {
	dir := t.TempDir()
	write := func(name string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, img, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	gimg, eimg := write("g.img"), write("e.img")
	gout, gexit := testfs.Gofsck(t, gimg, "-fn")
	eout, eexit := testfs.E2fsckInPlace(t, eimg, "-fn")
	g, e := transcript(gout, gimg), transcript(eout, eimg)
	detail = fmt.Sprintf("--- e2fsck -fn (exit %d)\n%s--- gofsck -fn (exit %d)\n%s", eexit, e, gexit, g)
	if after, err := os.ReadFile(gimg); err != nil || !bytes.Equal(after, img) {
		return false, "gofsck -fn wrote to the image", detail
	}
	if gexit != eexit {
		return false, fmt.Sprintf("-fn exit %d, e2fsck %d", gexit, eexit), detail
	}
	if g != e {
		return false, "-fn transcript differs: " + firstDiffLine(e, g), detail
	}
	if !repair {
		return true, "", detail
	}
	gimg, eimg = write("gy.img"), write("ey.img")
	gout, gexit = testfs.Gofsck(t, gimg, "-fy")
	eout, eexit = testfs.E2fsckInPlace(t, eimg, "-fy")
	g, e = transcript(gout, gimg), transcript(eout, eimg)
	detail = fmt.Sprintf("--- e2fsck -fy (exit %d)\n%s--- gofsck -fy (exit %d)\n%s", eexit, e, gexit, g)
	if gexit != eexit {
		return false, fmt.Sprintf("-fy exit %d, e2fsck %d", gexit, eexit), detail
	}
	if g != e {
		return false, "-fy transcript differs: " + firstDiffLine(e, g), detail
	}
	_, gafter := testfs.E2fsck(t, gimg, "-fn")
	_, eafter := testfs.E2fsck(t, eimg, "-fn")
	if gafter != eafter {
		return false, fmt.Sprintf("after -fy, e2fsck -fn exits %d on gofsck's result, %d on its own", gafter, eafter), detail
	}
	return true, "", detail
}
