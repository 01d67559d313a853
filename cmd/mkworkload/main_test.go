package main

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// requireRootAndTools skips the test when it cannot build images here: not
// root, or a tool missing. With CI set it fails instead, so CI cannot pass
// without having run the builds.
func requireRootAndTools(t *testing.T) {
	t.Helper()
	var reasons []string
	if os.Geteuid() != 0 {
		reasons = append(reasons, "not root (loop mounts need root)")
	}
	for _, tool := range []string{"mke2fs", "e2fsck", "dumpe2fs", "debugfs", "mount", "umount", "losetup"} {
		if _, err := exec.LookPath(tool); err != nil {
			reasons = append(reasons, tool+" not in PATH")
		}
	}
	if _, err := os.Stat("/dev/loop-control"); err != nil {
		reasons = append(reasons, "no /dev/loop-control")
	}
	if len(reasons) == 0 {
		return
	}
	msg := strings.Join(reasons, "; ")
	if os.Getenv("CI") != "" {
		t.Fatalf("cannot build images: %s (CI is set: failing instead of skipping)", msg)
	}
	t.Skipf("cannot build images: %s", msg)
}

// leafExtents counts the leaf extents of path in image with debugfs's
// dump_extents (independent of the FIEMAP count mkworkload prints).
func leafExtents(t *testing.T, image, path string) int {
	t.Helper()
	out, err := exec.Command("debugfs", "-R", "ex "+path, image).Output()
	if err != nil {
		t.Fatalf("debugfs ex %s: %v", path, err)
	}
	// " 1/ 1   2/101     2 -     2  1181 -  1181      1 Uninit"
	re := regexp.MustCompile(`(?m)^\s*(\d+)/\s*(\d+)\s`)
	n := 0
	for _, m := range re.FindAllStringSubmatch(string(out), -1) {
		if m[1] == m[2] {
			n++
		}
	}
	return n
}

func TestBuildTiny(t *testing.T) {
	requireRootAndTools(t)
	dir := t.TempDir()
	const reserved = 11 // inodes 1-11 (root and lost+found included)
	tests := []struct {
		workload string
		args     []string
		// wantInodes is the exact used-inode count, or 0 to check only
		// minInodes.
		wantInodes int64
		minInodes  int64
		// fragPath is checked with debugfs to have at least minExtents.
		fragPath   string
		minExtents int
	}{
		{"zero", []string{"-n", "2000"}, 2000 + spreadDirs + reserved, 0, "", 0},
		{"small", []string{"-n", "2000"}, 2000 + spreadDirs + reserved, 0, "", 0},
		{"bigdir", []string{"-n", "2000"}, 2000 + 1 + reserved, 0, "", 0},
		{"frag-punch", []string{"-n", "3000", "-extents", "1000"}, 3 + 1 + reserved, 0, "/frag/f2", 1000},
		{"frag-aged", []string{"-n", "2000"}, 0, 1000, "/big/b000", 200},
		{"mixed", []string{"-n", "2000"}, 0, 1200, "", 0},
		{"seed", []string{"-n", "2000"}, 2000 + spreadDirs + reserved, 0, "", 0},
	}
	for _, tc := range tests {
		t.Run(tc.workload, func(t *testing.T) {
			image := filepath.Join(dir, tc.workload+".img")
			args := append([]string{"-w", tc.workload, "-o", image, "-q", "-mnt", dir}, tc.args...)
			cfg, err := parseFlags(args, io.Discard)
			if err != nil {
				t.Fatalf("parseFlags(%q): %v", args, err)
			}
			sum, err := build(context.Background(), cfg, io.Discard)
			if err != nil {
				t.Fatalf("build: %v", err)
			}
			t.Log(sum)

			out, err := exec.Command("e2fsck", "-fn", image).CombinedOutput()
			if err != nil {
				t.Fatalf("e2fsck -fn %s: %v\n%s", image, err, out)
			}
			dump, err := exec.Command("dumpe2fs", "-h", image).Output()
			if err != nil {
				t.Fatalf("dumpe2fs -h: %v", err)
			}
			h := parseDumpe2fs(dump)
			used := h["Inode count"] - h["Free inodes"]
			if used != sum.InodesUsed {
				t.Errorf("summary says %d inodes used, dumpe2fs %d", sum.InodesUsed, used)
			}
			if tc.wantInodes != 0 && used != tc.wantInodes {
				t.Errorf("inodes used = %d, want %d", used, tc.wantInodes)
			}
			if used < tc.minInodes {
				t.Errorf("inodes used = %d, want at least %d", used, tc.minInodes)
			}
			if tc.fragPath != "" {
				n := leafExtents(t, image, tc.fragPath)
				if n < tc.minExtents {
					t.Errorf("%s has %d extents (debugfs), want at least %d", tc.fragPath, n, tc.minExtents)
				}
				if sum.MaxExtents < int64(tc.minExtents) {
					t.Errorf("summary max_extents = %d, want at least %d", sum.MaxExtents, tc.minExtents)
				}
			}
			if out, err := exec.Command("losetup", "-j", image).Output(); err == nil && len(strings.TrimSpace(string(out))) > 0 {
				t.Errorf("loop device still attached after build: %s", out)
			}
		})
	}
}

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		err  bool
	}{
		{"4096", 4096, false},
		{"8M", 8 << 20, false},
		{"8MiB", 8 << 20, false},
		{"1.5G", 3 << 29, false},
		{"2t", 2 << 40, false},
		{"", 0, true},
		{"-1M", 0, true},
		{"lots", 0, true},
	}
	for _, tc := range tests {
		got, err := parseSize(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("parseSize(%q) = %d, %v; want %d, error %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func TestParseFlagsErrors(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"-w", "zero"},
		{"-w", "nope", "-o", "x.img"},
		{"-w", "zero", "-o", "x.img", "-j", "0"},
		{"-w", "zero", "-o", "x.img", "-n", "-5"},
		{"-w", "zero", "-o", "x.img", "-b", "3000"},
		{"-w", "zero", "-o", "x.img", "-data", "mmap"},
		{"-w", "zero", "-o", "x.img", "extra"},
	} {
		if _, err := parseFlags(args, io.Discard); err == nil {
			t.Errorf("parseFlags(%q) succeeded, want an error", args)
		}
	}
	cfg, err := parseFlags([]string{"-w", "frag-aged", "-o", "x.img", "-size", "64M", "-big", "3"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.size != 64<<20 || cfg.bigFiles != 3 {
		t.Errorf("got size %d big %d", cfg.size, cfg.bigFiles)
	}
}

func TestPlans(t *testing.T) {
	for _, w := range workloads {
		if w.name == "mixed" {
			continue // walks a real tree; covered by TestBuildTiny
		}
		cfg := &config{workload: w.name, count: w.defCount, blockSize: 4096, perFile: 32768, seed: 1}
		p, err := w.plan(cfg)
		if err != nil {
			t.Fatalf("%s: %v", w.name, err)
		}
		// mke2fs allows at most 8*blocksize inodes per group of
		// 8*blocksize blocks: one inode per block.
		if p.inodes > p.bytes/4096 {
			t.Errorf("%s: %d inodes do not fit %d bytes", w.name, p.inodes, p.bytes)
		}
		if w.name == "crash" {
			continue // mke2fs chooses; TestBuildCrash builds one
		}
		if w.name == "seed" {
			// mke2fs chooses the inode count: one per 16 KiB on a
			// filesystem of this size (mke2fs.conf's default type).
			if p.bytes/16384 < w.defCount || p.bytes < seedDiskBytes {
				t.Errorf("seed: %s holds %d inodes at mke2fs's default ratio, want the seed's 1 TiB and %d files", humanBytes(p.bytes), p.bytes/16384, w.defCount)
			}
		} else if p.inodes < w.defCount && w.name != "frag-punch" {
			t.Errorf("%s: %d inodes for %d files", w.name, p.inodes, w.defCount)
		}
		t.Logf("%s default: %s, %d inodes", w.name, humanBytes(p.bytes), p.inodes)
	}
}

// TestBuildCrash builds a small crash image: the shutdown leaves the
// journal-less filesystem marked as not cleanly unmounted, so e2fsck
// checks it without -f.
func TestBuildCrash(t *testing.T) {
	requireRootAndTools(t)
	dir := t.TempDir()
	image := filepath.Join(dir, "crash.img")
	cfg, err := parseFlags([]string{"-w", "crash", "-n", "300", "-size", "16M", "-mkfs", "-O ^has_journal", "-o", image, "-q", "-mnt", dir}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := build(context.Background(), cfg, io.Discard)
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	if !strings.Contains(sum.String(), "crash_after_ops=300") {
		t.Errorf("summary %q does not say the crash came after 300 operations", sum)
	}
	out, _ := exec.Command("e2fsck", "-n", image).CombinedOutput()
	if !strings.Contains(string(out), "was not cleanly unmounted, check forced") {
		t.Errorf("e2fsck -n on the crashed image did not force a check:\n%s", out)
	}
	if out, err := exec.Command("losetup", "-j", image).Output(); err == nil && len(strings.TrimSpace(string(out))) > 0 {
		t.Errorf("loop device still attached after build: %s", out)
	}
}

func TestLayouts(t *testing.T) {
	if files, per := fragPunchLayout(3000, 1000); files != 3 || per != 1000 {
		t.Errorf("fragPunchLayout(3000, 1000) = %d, %d", files, per)
	}
	if files, per := fragPunchLayout(500, 32768); files != 1 || per != 500 {
		t.Errorf("fragPunchLayout(500, 32768) = %d, %d", files, per)
	}
	got := mixedCopies(25, 10)
	if len(got) != 3 || got[0] != 10 || got[2] != 5 {
		t.Errorf("mixedCopies(25, 10) = %v", got)
	}
	seen := map[string]bool{}
	for i := range int64(5000) {
		name := bigdirName(1, i)
		if seen[name] || len(name) > 255 || strings.Contains(name, "/") {
			t.Fatalf("bad or duplicate name %q for %d", name, i)
		}
		seen[name] = true
	}
	for _, s := range []int64{smallSize(1, 0), smallSize(7, 12345)} {
		if s < 4096 || s > 32768 {
			t.Errorf("smallSize out of range: %d", s)
		}
	}
	if got := journalBytes(1<<30, 4096) / 4096; got != 8192 {
		t.Errorf("journal blocks for 1 GiB = %d, want 8192", got)
	}
}
