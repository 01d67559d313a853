package dirhash

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

var (
	// "Entry #3: Hash 0x126fbcb6, block 4" followed by "Reading directory block 4, ..."
	leafStart = regexp.MustCompile(`(?m)^Entry #\d+: Hash 0x([0-9a-f]{8}), block (\d+)\nReading directory block (\d+),`)
	// "1820 0x07aa3cdc-81afd188 (16) file_825   "
	leafEntry = regexp.MustCompile(`(\d+) 0x([0-9a-f]{8})-([0-9a-f]{8}) \((\d+)\) (\S*)`)
)

// TestImageHtree builds real htree directories with mke2fs -d and e2fsck -D
// under several hash versions, seeds and signedness flags, and checks that
// every entry's hash (a) equals the one debugfs htree_dump computes and
// (b) lies in the hash range the on-disk index assigns to its leaf block.
func TestImageHtree(t *testing.T) {
	mke2fs := needTool(t, "mke2fs")
	debugfs := needTool(t, "debugfs")
	e2fsck := needTool(t, "e2fsck")

	src := filepath.Join(t.TempDir(), "src")
	dir := filepath.Join(src, "d")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var names []string
	for i := range 2000 {
		switch i % 4 {
		case 0, 1:
			names = append(names, fmt.Sprintf("file_%d", i))
		case 2:
			names = append(names, fmt.Sprintf("h\xe9ll\xf6-%d.txt", i))
		case 3:
			names = append(names, fmt.Sprintf("\xff\x80%0*d", 1+i%60, i))
		}
	}
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	configs := []struct {
		alg      string // s_def_hash_version
		seed     string // s_hash_seed
		unsigned bool   // EXT2_FLAGS_UNSIGNED_HASH instead of _SIGNED_
		version  Version
	}{
		{"half_md4", "8f3a6c1e-52b4-4d7e-9a0b-c1d2e3f40516", false, HalfMD4},
		{"half_md4", "null", true, HalfMD4Unsigned},
		{"tea", "0badc0de-1234-5678-9abc-def012345678", true, TEAUnsigned},
		{"tea", "null", false, TEA},
		{"legacy", "null", false, Legacy},
		{"legacy", "null", true, LegacyUnsigned},
	}
	for _, cfg := range configs {
		t.Run(fmt.Sprintf("%s/%s/unsigned=%v", cfg.alg, cfg.seed, cfg.unsigned), func(t *testing.T) {
			tmp := t.TempDir()
			img := filepath.Join(tmp, "img")
			run := func(wantRC map[int]bool, name string, args ...string) []byte {
				t.Helper()
				out, err := exec.Command(name, args...).CombinedOutput()
				rc := 0
				if ee, ok := err.(*exec.ExitError); ok {
					rc = ee.ExitCode()
				} else if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if !wantRC[rc] {
					t.Fatalf("%s %q: exit %d\n%s", name, args, rc, out)
				}
				return out
			}
			ok := map[int]bool{0: true}
			run(ok, mke2fs, "-q", "-F", "-t", "ext4", "-O", "dir_index", "-d", src, img, "16M")
			flags := 1
			if cfg.unsigned {
				flags = 2
			}
			cmds := filepath.Join(tmp, "cmds")
			script := fmt.Sprintf("ssv def_hash_version %s\nssv hash_seed %s\nssv flags %d\n", cfg.alg, cfg.seed, flags)
			if err := os.WriteFile(cmds, []byte(script), 0o644); err != nil {
				t.Fatal(err)
			}
			run(ok, debugfs, "-w", "-f", cmds, img)
			// -D rebuilds every directory's index with the new settings.
			run(map[int]bool{0: true, 1: true}, e2fsck, "-fyD", img)
			run(ok, e2fsck, "-fn", img)

			var seed [4]uint32
			if cfg.seed != "null" {
				seed = seedFromUUID(t, cfg.seed)
			}
			dump := run(ok, debugfs, "-R", "htree_dump /d", img)
			if !bytes.Contains(dump, []byte(fmt.Sprintf("Hash Version: %d\n", cfg.version%3))) {
				t.Fatalf("unexpected root hash version:\n%.500s", dump)
			}
			checkDump(t, dump, cfg.version, &seed, len(names))
		})
	}
}

// checkDump walks the leaf blocks of an htree_dump in the order printed
// (hash order), checking each entry's hash against debugfs and against the
// index range of its block.
func checkDump(t *testing.T, dump []byte, v Version, seed *[4]uint32, wantEntries int) {
	t.Helper()
	starts := leafStart.FindAllSubmatchIndex(dump, -1)
	if len(starts) < 2 {
		t.Fatalf("expected several leaf blocks, got %d:\n%.1000s", len(starts), dump)
	}
	hex := func(b []byte) uint32 {
		n, err := strconv.ParseUint(string(b), 16, 32)
		if err != nil {
			t.Fatal(err)
		}
		return uint32(n)
	}
	seen := 0
	for i, s := range starts {
		lo := hex(dump[s[2]:s[3]]) &^ 1
		end := len(dump)
		hi := uint32(0xffffffff)
		if i+1 < len(starts) {
			next := starts[i+1]
			end = next[0]
			hi = hex(dump[next[2]:next[3]]) &^ 1
		}
		block := dump[s[1]:end]
		for _, m := range leafEntry.FindAllSubmatch(block, -1) {
			if string(m[1]) == "0" {
				continue // unused slot
			}
			name := m[5]
			wantMajor, wantMinor := hex(m[2]), hex(m[3])
			major, minor, err := Hash(v, name, seed)
			if err != nil {
				t.Fatal(err)
			}
			if major != wantMajor || minor != wantMinor {
				t.Errorf("%q: got %#08x-%08x, debugfs %#08x-%08x", name, major, minor, wantMajor, wantMinor)
			}
			if major < lo || major > hi {
				t.Errorf("%q: hash %#08x outside its leaf's index range [%#08x, %#08x]", name, major, lo, hi)
			}
			seen++
		}
	}
	if seen != wantEntries {
		t.Errorf("checked %d entries, directory has %d", seen, wantEntries)
	}
}
