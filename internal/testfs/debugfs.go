package testfs

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Debugfs runs the commands with debugfs -w (one command: -R, several: a -f
// script) on img and returns debugfs's output. It fails the test only when
// debugfs cannot open the image at all; a command that debugfs rejects shows
// in the output, which callers that care can inspect.
//
// Typical commands: sif <ino|path> field value, ssv field value,
// set_bg group field value, clri, freeb/setb blk [count], freei/seti ino,
// unlink path, link <ino> path, ln, mknod path c|b maj min,
// zap_block [-f file] [-o off] [-l len] [-p pattern] blk, ea_set, kill_file.
func Debugfs(t testing.TB, img string, cmds ...string) string {
	t.Helper()
	return debugfs(t, img, true, cmds...)
}

// DebugfsRO runs debugfs read-only (no -w).
func DebugfsRO(t testing.TB, img string, cmds ...string) string {
	t.Helper()
	return debugfs(t, img, false, cmds...)
}

func debugfs(t testing.TB, img string, write bool, cmds ...string) string {
	t.Helper()
	var args []string
	if write {
		args = append(args, "-w")
	}
	if len(cmds) == 1 {
		args = append(args, "-R", cmds[0])
	} else {
		f, err := os.CreateTemp(t.TempDir(), "debugfs-*.cmds")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString(strings.Join(cmds, "\n") + "\n"); err != nil {
			t.Fatal(err)
		}
		f.Close()
		args = append(args, "-f", f.Name())
	}
	args = append(args, img)
	res := run(t, DefaultTimeout, Env(t), tool(t, "debugfs"), args...)
	if res.exit != 0 || strings.Contains(res.out, "debugfs: Bad magic number") ||
		strings.Contains(res.out, "while trying to open") {
		t.Fatalf("testfs: debugfs %s: exit %d\n%s", strings.Join(args, " "), res.exit, res.out)
	}
	return res.out
}

// WriteAt writes data at byte offset off of img (raw corruption).
func WriteAt(t testing.TB, img string, off int64, data []byte) {
	t.Helper()
	f, err := os.OpenFile(img, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(data, off); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// ReadAt reads n bytes at byte offset off of img.
func ReadAt(t testing.TB, img string, off int64, n int) []byte {
	t.Helper()
	f, err := os.Open(img)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, off); err != nil {
		t.Fatal(err)
	}
	return buf
}

// Le16 and Le32 encode little-endian values for WriteAt.
func Le16(v uint16) []byte { return binary.LittleEndian.AppendUint16(nil, v) }

// Le32 encodes a little-endian 32-bit value for WriteAt.
func Le32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }

// Superblock returns dumpe2fs -h's fields ("Block size" → "1024").
func Superblock(t testing.TB, img string) map[string]string {
	t.Helper()
	res := run(t, DefaultTimeout, Env(t), filepath.Join(filepath.Dir(tool(t, "mke2fs")), "dumpe2fs"), "-h", img)
	if res.exit != 0 {
		t.Fatalf("testfs: dumpe2fs -h %s: exit %d\n%s", img, res.exit, res.out)
	}
	m := make(map[string]string)
	for _, l := range strings.Split(res.out, "\n") {
		k, v, ok := strings.Cut(l, ":")
		if ok {
			m[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return m
}

// BlockSize returns the image's block size in bytes.
func BlockSize(t testing.TB, img string) int64 {
	t.Helper()
	v, err := strconv.ParseInt(Superblock(t, img)["Block size"], 10, 64)
	if err != nil {
		t.Fatalf("testfs: block size of %s: %v", img, err)
	}
	return v
}

// Stat returns debugfs's stat output for a path or "<ino>".
func Stat(t testing.TB, img, file string) string {
	t.Helper()
	out := DebugfsRO(t, img, "stat "+file)
	if !strings.Contains(out, "Inode:") {
		t.Fatalf("testfs: stat %s in %s:\n%s", file, img, out)
	}
	return out
}

var inodeRE = regexp.MustCompile(`Inode: (\d+)`)

// Ino returns the inode number of a path in img.
func Ino(t testing.TB, img, file string) uint32 {
	t.Helper()
	m := inodeRE.FindStringSubmatch(Stat(t, img, file))
	if m == nil {
		t.Fatalf("testfs: no inode number for %s", file)
	}
	v, _ := strconv.ParseUint(m[1], 10, 32)
	return uint32(v)
}

// BlockMap is what stat shows about where a file's blocks are.
type BlockMap struct {
	Data     []uint64 // data blocks in logical order
	Meta     []uint64 // extent tree blocks (ETBn) and indirect blocks, in print order
	ETB      []uint64 // extent tree blocks only
	Ind      []uint64 // (IND) blocks
	DInd     []uint64 // (DIND) blocks
	TInd     []uint64 // (TIND) blocks
	FileACL  uint64   // EA block, 0 if none
	Inline   bool     // the inode has inline data
	Extents  bool     // the stat output had an EXTENTS: section
	StatText string
}

var (
	mapEntryRE = regexp.MustCompile(`\(([^)]*)\):(\d+)(?:-(\d+))?`)
	fileACLRE  = regexp.MustCompile(`File ACL: (\d+)`)
)

// Blocks parses debugfs stat for a path or "<ino>" into a BlockMap.
func Blocks(t testing.TB, img, file string) BlockMap {
	t.Helper()
	out := Stat(t, img, file)
	bm := BlockMap{StatText: out}
	if m := fileACLRE.FindStringSubmatch(out); m != nil {
		bm.FileACL, _ = strconv.ParseUint(m[1], 10, 64)
	}
	section := ""
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(l, "EXTENTS:"):
			section, bm.Extents = "x", true
			continue
		case strings.HasPrefix(l, "BLOCKS:"):
			section = "b"
			continue
		case strings.Contains(l, "Size of inline data"):
			bm.Inline = true
		}
		if section == "" {
			continue
		}
		for _, m := range mapEntryRE.FindAllStringSubmatch(l, -1) {
			lbl := m[1]
			first, _ := strconv.ParseUint(m[2], 10, 64)
			last := first
			if m[3] != "" {
				last, _ = strconv.ParseUint(m[3], 10, 64)
			}
			switch {
			case strings.HasPrefix(lbl, "ETB"):
				bm.ETB = append(bm.ETB, first)
				bm.Meta = append(bm.Meta, first)
			case lbl == "IND":
				bm.Ind = append(bm.Ind, first)
				bm.Meta = append(bm.Meta, first)
			case lbl == "DIND":
				bm.DInd = append(bm.DInd, first)
				bm.Meta = append(bm.Meta, first)
			case lbl == "TIND":
				bm.TInd = append(bm.TInd, first)
				bm.Meta = append(bm.Meta, first)
			default:
				if strings.HasPrefix(lbl, "[") { // uninitialized extent
					lbl = strings.Trim(lbl, "[]u")
				}
				for b := first; b <= last && last-first < 1<<24; b++ {
					bm.Data = append(bm.Data, b)
				}
			}
		}
	}
	return bm
}

var imapRE = regexp.MustCompile(`located at block (\d+), offset 0x([0-9a-fA-F]+)`)

// InodeOffset returns the byte offset of an inode ("<ino>" or path) in img.
func InodeOffset(t testing.TB, img, file string) int64 {
	t.Helper()
	out := DebugfsRO(t, img, "imap "+file)
	m := imapRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("testfs: imap %s:\n%s", file, out)
	}
	blk, _ := strconv.ParseInt(m[1], 10, 64)
	off, _ := strconv.ParseInt(m[2], 16, 64)
	return blk*BlockSize(t, img) + off
}

// Bmap returns the physical block of logical block lblk of a file.
func Bmap(t testing.TB, img, file string, lblk uint64) uint64 {
	t.Helper()
	out := DebugfsRO(t, img, fmt.Sprintf("bmap %s %d", file, lblk))
	for _, l := range strings.Split(out, "\n") {
		if v, err := strconv.ParseUint(strings.TrimSpace(l), 10, 64); err == nil {
			return v
		}
	}
	t.Fatalf("testfs: bmap %s %d:\n%s", file, lblk, out)
	return 0
}

// GroupDesc returns one block group's fields as dumpe2fs prints them, e.g.
// "Block bitmap" → "34", "Inode table" → "36-291".
func GroupDesc(t testing.TB, img string, group int) map[string]string {
	t.Helper()
	res := run(t, DefaultTimeout, Env(t), filepath.Join(filepath.Dir(tool(t, "mke2fs")), "dumpe2fs"), img)
	if res.exit != 0 {
		t.Fatalf("testfs: dumpe2fs %s: exit %d\n%s", img, res.exit, res.out)
	}
	hdr := fmt.Sprintf("Group %d:", group)
	m := make(map[string]string)
	in := false
	for _, l := range strings.Split(res.out, "\n") {
		if strings.HasPrefix(l, "Group ") {
			if in {
				break
			}
			in = strings.HasPrefix(l, hdr)
			continue
		}
		if !in {
			continue
		}
		for _, part := range strings.Split(l, ",") {
			part = strings.TrimSpace(part)
			for _, key := range []string{"Block bitmap at ", "Inode bitmap at ", "Inode table at "} {
				if rest, ok := strings.CutPrefix(part, key); ok {
					v, _, _ := strings.Cut(rest, " ")
					m[strings.TrimSuffix(key, " at ")] = v
				}
			}
		}
	}
	if len(m) == 0 {
		t.Fatalf("testfs: no group %d in dumpe2fs of %s", group, img)
	}
	return m
}

// GroupBlock returns a block number from GroupDesc ("Block bitmap",
// "Inode bitmap", "Inode table" → its first block).
func GroupBlock(t testing.TB, img string, group int, field string) uint64 {
	t.Helper()
	v, ok := GroupDesc(t, img, group)[field]
	if !ok {
		t.Fatalf("testfs: group %d has no %q", group, field)
	}
	first, _, _ := strings.Cut(v, "-")
	n, err := strconv.ParseUint(first, 10, 64)
	if err != nil {
		t.Fatalf("testfs: group %d %s = %q", group, field, v)
	}
	return n
}
