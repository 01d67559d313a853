package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"gofsck/internal/testfs"
)

// baseImage builds the ext4 base image of the campaign (mke2fs -d of the
// fixed tree) in a temporary directory.
func baseImage(t *testing.T, set string) (string, []byte) {
	t.Helper()
	testfs.RequireE2fsprogs(t)
	for _, f := range FeatureSets {
		if f.Name == set {
			p, err := buildBase(t.TempDir(), f)
			if err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			return p, data
		}
	}
	t.Fatalf("no feature set %s", set)
	return "", nil
}

// TestFuzzDeterministic: the same seed gives the same bytes, another seed
// other bytes, and only bytes of listed metadata blocks change.
func TestFuzzDeterministic(t *testing.T) {
	for _, set := range []string{"ext4", "ext2"} {
		p, data := baseImage(t, set)
		m, err := ReadMeta(p)
		if err != nil {
			t.Fatal(err)
		}
		for k := Kind(0); k < numKinds; k++ {
			if len(m.Blocks[k]) == 0 && !(k == KindJournal && set == "ext2") {
				t.Errorf("%s: no %s blocks found", set, k)
			}
		}
		a, b, c := bytes.Clone(data), bytes.Clone(data), bytes.Clone(data)
		ca := Fuzz(a, m, 7, 300)
		Fuzz(b, m, 7, 300)
		Fuzz(c, m, 8, 300)
		if len(ca) != 300 {
			t.Errorf("%s: %d changes, want 300", set, len(ca))
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s: seed 7 twice gave different images", set)
		}
		if bytes.Equal(a, c) {
			t.Errorf("%s: seeds 7 and 8 gave the same image", set)
		}
		for i := range a {
			if a[i] != data[i] && !m.Contains(int64(i)) {
				t.Fatalf("%s: byte %d changed outside the metadata blocks", set, i)
			}
		}
	}
}

// TestFuzzSeedsAgree runs a handful of fixed seeds of the campaign through
// both checkers (-fy, then images) and checks the outcome against
// testdata/fuzz_known.txt: a seed listed there must still disagree, an
// unlisted one must agree.
func TestFuzzSeedsAgree(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	gofsck := testfs.GofsckPath(t)
	e2fsck, err := exec.LookPath("e2fsck")
	if err != nil {
		t.Fatal(err)
	}
	known := readKnown(t, filepath.Join("testdata", "fuzz_known.txt"))
	dir := t.TempDir()
	conf := filepath.Join(dir, "e2fsck.conf")
	if err := os.WriteFile(conf, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	env := checkerEnv(conf)
	bases := map[string][]byte{}
	metas := map[string]*Meta{}
	for _, c := range fuzzSeeds {
		if _, ok := bases[c.set]; !ok {
			p, data := baseImage(t, c.set)
			m, err := ReadMeta(p)
			if err != nil {
				t.Fatal(err)
			}
			bases[c.set], metas[c.set] = data, m
		}
		img := bytes.Clone(bases[c.set])
		Fuzz(img, metas[c.set], c.seed, c.n)
		v, err := Compare(dir, img, metas[c.set], gofsck, e2fsck, env, "-fy")
		if err != nil {
			t.Fatal(err)
		}
		name := c.name()
		reason, listed := known[name]
		switch {
		case v.Class != "" && !listed:
			t.Errorf("%s: gofsck disagrees with e2fsck: %s\n%s", name, v.Class, v.Detail)
		case v.Class == "" && listed:
			t.Errorf("%s: gofsck now agrees with e2fsck; remove it from testdata/fuzz_known.txt (%s)", name, reason)
		}
	}
}

type fuzzSeed struct {
	set  string
	seed uint64
	n    int
}

func (c fuzzSeed) name() string { return fmt.Sprintf("%s-s%d-b%d", c.set, c.seed, c.n) }

// fuzzSeeds are the default tier's fixed cases (a few seconds in all).
var fuzzSeeds = []fuzzSeed{
	{"ext4", 1, 16}, {"ext4", 2, 64}, {"ext2", 3, 32}, {"ext2", 4, 128},
	{"ext4", 5, 8}, {"ext4", 6, 256},
	// Regressions: one example of each of the campaign's most common
	// classes of disagreement (scripts/fuzz-campaign.sh, seeds 1-1000),
	// listed in testdata/fuzz_known.txt until fixed.
	{"ext4", 20, 466},
	{"ext4", 29, 448},
	{"ext4-nojournal", 241, 393},
	{"ext4-noflex", 131, 418},
	{"ext4-inline", 42, 352},
	{"ext4-nocsum", 202, 62},
	{"ext4-1k", 66, 343},
	{"ext3", 10, 167},
	{"bigalloc", 251, 189},
	{"ext4-nojournal", 475, 229},
	{"ext4-nojournal", 331, 185},
	{"ext4-noflex", 464, 463},
}

// readKnown reads name<TAB>reason lines ('#' comments).
func readKnown(t *testing.T, path string) map[string]string {
	t.Helper()
	m := map[string]string{}
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return m
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range bytes.Split(data, []byte("\n")) {
		l = bytes.TrimSpace(l)
		if len(l) == 0 || l[0] == '#' {
			continue
		}
		name, reason, _ := bytes.Cut(l, []byte("\t"))
		m[string(name)] = string(reason)
	}
	return m
}
