package journal

import (
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// requireTools makes a test that needs e2fsprogs (and root, for loop
// mounts) skip where they are missing, but fail when $CI is set: CI installs
// them, so a skip there would hide a regression.
func requireTools(t *testing.T, root bool, tools ...string) {
	t.Helper()
	miss := func(why string) {
		t.Helper()
		if os.Getenv("CI") != "" {
			t.Fatalf("CI: %s", why)
		}
		t.Skip(why)
	}
	if root && os.Geteuid() != 0 {
		miss("needs root for loop mounts")
	}
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			miss(tool + " not installed")
		}
	}
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out.String())
	}
	return out.String()
}

// runStatus runs a command that may exit non-zero (e2fsck) and returns its
// output and exit status.
func runStatus(t *testing.T, name string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(name, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return out.String(), ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return out.String(), 0
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// fsInfo is the little of the ext4 superblock the tests need.
type fsInfo struct {
	blockSize  uint32
	blocks     uint64
	firstData  uint64
	groups     uint64
	descSize   uint64
	sbBlock    uint64 // block holding the primary superblock
	sbOff      int    // its offset inside that block
	gdtBlocks  uint64
	journalIno uint32
	uuidNull   bool
}

func readFSInfo(t *testing.T, img string) fsInfo {
	t.Helper()
	f, err := os.Open(img)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sb := make([]byte, 1024)
	if _, err := f.ReadAt(sb, 1024); err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	var fi fsInfo
	fi.blockSize = 1024 << le.Uint32(sb[0x18:])
	fi.blocks = uint64(le.Uint32(sb[0x4:]))
	incompat := le.Uint32(sb[0x60:])
	fi.descSize = 32
	if incompat&0x80 != 0 {
		fi.blocks |= uint64(le.Uint32(sb[0x150:])) << 32
		if ds := uint64(le.Uint16(sb[0xFE:])); ds != 0 {
			fi.descSize = ds
		}
	}
	fi.firstData = uint64(le.Uint32(sb[0x14:]))
	bpg := uint64(le.Uint32(sb[0x20:]))
	fi.groups = (fi.blocks - fi.firstData + bpg - 1) / bpg
	fi.sbBlock = 1024 / uint64(fi.blockSize)
	fi.sbOff = int(1024 % fi.blockSize)
	fi.gdtBlocks = (fi.groups*fi.descSize + uint64(fi.blockSize) - 1) / uint64(fi.blockSize)
	fi.journalIno = le.Uint32(sb[0xE0:])
	fi.uuidNull = bytes.Equal(sb[0xD0:0xE0], make([]byte, 16))
	return fi
}

var statRange = regexp.MustCompile(`\((\d+)(?:-(\d+))?\):(\d+)(?:-(\d+))?`)

// journalBlocks lists the physical blocks of the journal inode, in logical
// order, from debugfs's "stat <8>" ranges "(first-last):pfirst-plast"
// (indirect and extent-tree blocks are listed as "(IND):n" and skipped).
func journalBlocks(t *testing.T, img string) []uint64 {
	t.Helper()
	out := run(t, "debugfs", "-R", "stat <8>", img)
	var blks []uint64
	for _, m := range statRange.FindAllStringSubmatch(out, -1) {
		l0, _ := strconv.ParseUint(m[1], 10, 64)
		l1, p0 := l0, uint64(0)
		if m[2] != "" {
			l1, _ = strconv.ParseUint(m[2], 10, 64)
		}
		p0, _ = strconv.ParseUint(m[3], 10, 64)
		if l0 != uint64(len(blks)) || l1 < l0 {
			t.Fatalf("journal inode has a hole or is out of order at %s", m[0])
		}
		for l := l0; l <= l1; l++ {
			blks = append(blks, p0+l-l0)
		}
	}
	if len(blks) == 0 {
		t.Fatalf("no journal blocks in %s:\n%s", img, out)
	}
	return blks
}

func mapOf(blks []uint64) Map {
	return func(l uint64) (uint64, bool) {
		if l >= uint64(len(blks)) {
			return 0, false
		}
		return blks[l], true
	}
}

// openImageJournal opens the internal journal of an image file.
func openImageJournal(t *testing.T, img string) (*Journal, *os.File, fsInfo, []uint64) {
	t.Helper()
	fi := readFSInfo(t, img)
	blks := journalBlocks(t, img)
	f, err := os.Open(img)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	j, err := Open(f, fi.blockSize, uint64(len(blks)), mapOf(blks))
	if err != nil {
		t.Fatalf("Open %s: %v", filepath.Base(img), err)
	}
	return j, f, fi, blks
}
