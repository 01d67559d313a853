package check_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"gofsck/internal/blockdev"
	"gofsck/internal/fs"
	"gofsck/internal/ondisk"
	"gofsck/internal/testfs"
)

// hostileLimit bounds each run of gofsck (and of e2fsck, which loops on some
// of these images) in the hostile tests.
const hostileLimit = 10 * time.Second

// rawImage is an image in memory with the geometry to patch it and reseal
// the checksums the patch invalidates, so that the test sees the hostile
// structure rather than a checksum error.
type rawImage struct {
	t testing.TB
	b []byte
	f *fs.FS
}

func newRaw(t testing.TB, b []byte) *rawImage {
	t.Helper()
	f, err := fs.Open(&blockdev.Mem{Data: b}, fs.Options{})
	if err != nil {
		t.Fatalf("opening base image: %v", err)
	}
	return &rawImage{t: t, b: b, f: f}
}

// base returns a fresh copy of testdata/NAME.img.gz.
func base(t testing.TB, name string) *rawImage {
	t.Helper()
	b, err := testfs.ReadGz(filepath.Join("testdata", name+".img.gz"))
	if err != nil {
		t.Fatal(err)
	}
	return newRaw(t, b)
}

func (r *rawImage) block(blk uint64) []byte {
	bs := uint64(r.f.BlockSize)
	return r.b[blk*bs : (blk+1)*bs]
}

// inode returns a writable view of inode ino.
func (r *rawImage) inode(ino uint32) ondisk.Inode {
	blk, off, ok := r.f.InodeLoc(ino)
	if !ok {
		r.t.Fatalf("inode %d has no location", ino)
	}
	o := int(blk)*r.f.BlockSize + off
	return ondisk.Inode(r.b[o : o+r.f.InodeSize])
}

// sealInode recomputes the inode checksum (metadata_csum).
func (r *rawImage) sealInode(ino uint32) {
	if !r.f.MetadataCsum {
		return
	}
	n := r.inode(ino)
	c := n.ComputeChecksum(r.f.CsumSeed, ino)
	binary.LittleEndian.PutUint16(n[0x7C:], uint16(c))
	if len(n) > 128 && n.ExtraIsize() >= 4 {
		binary.LittleEndian.PutUint16(n[0x82:], uint16(c>>16))
	}
}

// sealExtentBlock recomputes the checksum of an extent tree block of ino.
func (r *rawImage) sealExtentBlock(blk uint64, ino uint32) {
	if !r.f.MetadataCsum {
		return
	}
	b := r.block(blk)
	sum, _, ok := ondisk.ExtentBlockChecksum(b, r.f.CsumSeed, ino, r.inode(ino).Generation())
	if !ok {
		r.t.Fatalf("extent block %d has no room for a tail", blk)
	}
	end := ondisk.ExtentHeaderSize + int(ondisk.ExtentHeader(b).Max())*ondisk.ExtentEntrySize
	binary.LittleEndian.PutUint32(b[end:], sum)
}

// sealSuper recomputes the superblock checksum.
func (r *rawImage) sealSuper() {
	sb := ondisk.Superblock(r.b[ondisk.SuperblockOffset : ondisk.SuperblockOffset+ondisk.SuperblockSize])
	if sb.HasRoCompat(ondisk.RoCompatMetadataCsum) {
		binary.LittleEndian.PutUint32(sb[0x3FC:], sb.ComputeChecksum())
	}
}

// write stores the image in a temporary file and returns its path.
func (r *rawImage) write() string {
	p := filepath.Join(r.t.TempDir(), "hostile.img")
	if err := os.WriteFile(p, r.b, 0o644); err != nil {
		r.t.Fatal(err)
	}
	return p
}

func put32(b []byte, off int, v uint32) { binary.LittleEndian.PutUint32(b[off:], v) }
func put16(b []byte, off int, v uint16) { binary.LittleEndian.PutUint16(b[off:], v) }

// extentNode writes an extent header with one index entry at b.
func extentIndexNode(b []byte, max, depth uint16, lblk uint32, child uint64) {
	put16(b, 0, ondisk.ExtentMagic)
	put16(b, 2, 1)
	put16(b, 4, max)
	put16(b, 6, depth)
	put32(b, 12, lblk)
	put32(b, 16, uint32(child))
	put16(b, 20, uint16(child>>32))
}

// procRun is one bounded run of a checker binary.
type procRun struct {
	out      string
	exit     int
	elapsed  time.Duration
	maxRSS   int64 // KiB
	timedOut bool
}

// runBounded runs prog with a limit on the CPU time it may use
// (RLIMIT_CPU, which a loaded machine does not stretch: the kernel kills
// the program once it has used limit of CPU time) and testfs's wall-clock
// backstop for a program that blocks. Either way the run counts as timed
// out.
func runBounded(t testing.TB, limit time.Duration, prog string, args ...string) procRun {
	t.Helper()
	// Peak RSS through GNU time: the rusage of a child forked from the
	// test process counts the test process's own pages.
	rssFile := filepath.Join(t.TempDir(), "rss")
	if tm, err := exec.LookPath("/usr/bin/time"); err == nil {
		args = append([]string{"-f", "%M", "-o", rssFile, prog}, args...)
		prog = tm
	}
	// The limit is set by the shell before it execs the program, so GNU
	// time's child inherits it: soft and hard alike, for SIGKILL (a Go
	// program ignores the soft limit's SIGXCPU).
	cpu := int(limit.Seconds() + 0.999)
	args = append([]string{"-c", fmt.Sprintf(`ulimit -S -t %d && ulimit -H -t %d && exec "$0" "$@"`, cpu, cpu), prog}, args...)
	prog = "/bin/sh"
	cmd := exec.Command(prog, args...)
	var env []string
	for _, kv := range testfs.Env(t) {
		if !strings.HasPrefix(kv, "E2FSPROGS_FAKE_TIME=") {
			env = append(env, kv)
		}
	}
	cmd.Env = env
	cmd.WaitDelay = 5 * time.Second
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	start := time.Now()
	timedOut, err := testfs.RunLimited(cmd, limit)
	r := procRun{out: buf.String(), elapsed: time.Since(start)}
	if b, err := os.ReadFile(rssFile); err == nil {
		fmt.Sscan(lastLine(string(b)), &r.maxRSS)
	}
	var ee *exec.ExitError
	switch {
	case timedOut:
		r.exit, r.timedOut = testfs.TimeoutExit, true
	case err == nil:
	case errors.As(err, &ee):
		r.exit = ee.ExitCode()
		// GNU time reports its child's death by a signal as 128+n.
		// SIGKILL or SIGXCPU is the CPU-time limit (or the kernel's OOM
		// killer: a run that large is out of bounds as well).
		if r.exit == 128+int(syscall.SIGKILL) || r.exit == 128+int(syscall.SIGXCPU) {
			r.exit, r.timedOut = testfs.TimeoutExit, true
		}
	default:
		t.Fatalf("running %s: %v", prog, err)
	}
	return r
}

func e2fsckPath(t testing.TB) string {
	t.Helper()
	testfs.RequireE2fsprogs(t)
	for _, p := range []string{"/usr/sbin/e2fsck", "/sbin/e2fsck"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	p, err := exec.LookPath("e2fsck")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// hostileCase builds one hostile image file.
type hostileCase struct {
	name  string
	build func(t *testing.T) string
	// slow: with GOFSCK_HOSTILE_FULL set the run is long by nature
	// (e2fsck's output is quadratic): allow 6*hostileLimit and do not
	// run e2fsck.
	slow bool
}

var hostileCases = []hostileCase{
	{"extent_index_points_to_itself", func(t *testing.T) string {
		// /a/b/extents has a depth-1 tree; its leaf becomes an index
		// node whose only entry is the node itself.
		r := base(t, "ext4")
		const ino = 15
		root := ondisk.ExtentHeader(r.inode(ino).IBlock())
		leaf := root.Idx(0).Leaf
		b := r.block(leaf)
		extentIndexNode(b, ondisk.ExtentHeader(b).Max(), 1, 0, leaf)
		r.sealExtentBlock(leaf, ino)
		n := r.inode(ino)
		put16(n.IBlock(), 6, 2) // root depth 2
		r.sealInode(ino)
		return r.write()
	}, false},
	{"extent_index_points_to_ancestor", func(t *testing.T) string {
		// root (depth 3) -> A (depth 2) -> B (depth 1) -> A.
		r := base(t, "ext4")
		const ino = 15
		root := ondisk.ExtentHeader(r.inode(ino).IBlock())
		a := root.Idx(0).Leaf
		bblk := ondisk.ExtentHeader(r.block(a)).Leaf(0).Pblk // the first data block
		max := ondisk.ExtentHeader(r.block(a)).Max()
		extentIndexNode(r.block(a), max, 2, 0, bblk)
		clear(r.block(bblk))
		extentIndexNode(r.block(bblk), max, 1, 0, a)
		r.sealExtentBlock(a, ino)
		r.sealExtentBlock(bblk, ino)
		put16(r.inode(ino).IBlock(), 6, 3)
		r.sealInode(ino)
		return r.write()
	}, false},
	{"htree_index_points_to_root", func(t *testing.T) string {
		// /htree: one indirect level whose second entry is block 0, the
		// root itself.
		r := base(t, "ext2")
		const ino = 20
		blk := uint64(r.inode(ino).Block(0))
		b := r.block(blk)
		info, _ := ondisk.DecodeDxRootInfo(b)
		countOff := ondisk.DxRootInfoOff + int(info.InfoLength)
		b[ondisk.DxRootInfoOff+6] = 1 // indirect_levels
		put32(b, countOff+ondisk.DxEntrySize+4, 0)
		return r.write()
	}, false},
	{"dir_is_its_own_parent", func(t *testing.T) string {
		// /a/b/c: '..' points at c, and c has an entry naming itself.
		img := writeBase(t, "ext2")
		testfs.Debugfs(t, img, "link /a/b/c /a/b/c/self")
		r := newRaw(t, mustRead(t, img))
		const c = 14
		put32(r.block(uint64(r.inode(c).Block(0))), 12, c)
		return r.write()
	}, false},
	{"two_dirs_each_others_parent", func(t *testing.T) string {
		// b and c (inodes 13, 14) hold each other and name each other
		// '..'; /a no longer holds b, so the loop is unreachable.
		img := writeBase(t, "ext2")
		testfs.Debugfs(t, img, "link /a/b /a/b/c/loop", "unlink /a/b")
		r := newRaw(t, mustRead(t, img))
		put32(r.block(uint64(r.inode(13).Block(0))), 12, 14)
		return r.write()
	}, false},
	{"group_descs_share_tables", func(t *testing.T) string {
		// Four groups; groups 1 and 2 point at each other's bitmaps and
		// inode tables, and group 3 at group 0's.
		testfs.RequireE2fsprogs(t)
		img := testfs.MkImage(t, testfs.Spec{Size: 4 << 20, FSType: "ext2", BlockSize: 1024,
			Inodes: 256, ExtraArgs: []string{"-g", "1024"}, Features: "^resize_inode"})
		r := newRaw(t, mustRead(t, img))
		// Every copy of the table (groups 0, 1 and 3 with sparse_super),
		// so that e2fsck's retry with the backup finds the same.
		for _, g := range []uint32{0, 1, 3} {
			off := int(r.f.GroupFirstBlock(g)+1) * r.f.BlockSize
			desc := func(i int) []byte { return r.b[off+i*32 : off+i*32+32] }
			t1, t2 := bytes.Clone(desc(1)[:12]), bytes.Clone(desc(2)[:12])
			copy(desc(1), t2)
			copy(desc(2), t1)
			copy(desc(3)[:12], desc(0)[:12])
		}
		return r.write()
	}, false},
	{"one_block_claimed_by_many_files", func(t *testing.T) string {
		// Every one of n empty files claims the data block of /data.
		// Pass 1D names all the other claimants for each of them, as
		// e2fsck does, so the run is quadratic in n: n = 1000 (set
		// GOFSCK_HOSTILE_FULL=1) prints a million lines and takes
		// e2fsck and gofsck 10-30 s; the default n = 200 keeps CI fast.
		n := 200
		if os.Getenv("GOFSCK_HOSTILE_FULL") != "" {
			n = 1000
		}
		testfs.RequireE2fsprogs(t)
		img := testfs.MkImage(t, testfs.Spec{Size: 4 << 20, FSType: "ext2", BlockSize: 1024, Inodes: n + 100,
			Features: "^resize_inode", Populate: func(tr *testfs.Tree) {
				tr.File("data", 1024)
				tr.ManyFiles("many", n)
			}})
		r := newRaw(t, mustRead(t, img))
		shared := r.inode(uint32(testfs.Ino(t, img, "/data"))).Block(0)
		claimed := 0
		for ino := uint32(12); ino <= r.f.InodesCount; ino++ {
			in := r.inode(ino)
			if !in.IsReg() || in.Size() != 0 || in.LinksCount() == 0 {
				continue
			}
			put32(in, 0x28, shared)
			put32(in, 0x04, 1024)
			put32(in, 0x1C, 2)
			claimed++
		}
		if claimed < n {
			t.Fatalf("only %d files claim the block", claimed)
		}
		return r.write()
	}, true},
	{"ea_block_refcount_2^32-1", func(t *testing.T) string {
		r := base(t, "ext2")
		acl := r.inode(16).FileACL(false)
		put32(r.block(acl), 4, 0xFFFFFFFF)
		return r.write()
	}, false},
	{"fast_symlink_size_past_inode", func(t *testing.T) string {
		r := base(t, "ext4")
		n := r.inode(19)
		put32(n, 0x04, 4000)
		put32(n, 0x6C, 1) // i_size_high: 4 GiB + 4000
		r.sealInode(19)
		return r.write()
	}, false},
	{"inline_data_lengths_past_inode", func(t *testing.T) string {
		// /small: i_size far past i_block + system.data, and the
		// system.data value claiming 64 KiB at an offset near the end.
		r := base(t, "ext4")
		const ino = 18
		n := r.inode(ino)
		put32(n, 0x04, 1<<20)
		ea := n.InlineEA()[ondisk.XattrIHeaderSize:]
		for off := 0; off+16 <= len(ea); {
			e, end, ok := ondisk.DecodeXattrEntry(ea, off)
			if !ok || end {
				break
			}
			if e.NameIndex == ondisk.XattrIndexSystem && string(e.Name) == "data" {
				put16(ea, off+2, 0xFFF0)  // e_value_offs
				put32(ea, off+8, 0x10000) // e_value_size
			}
			off += e.EntryBytes
		}
		r.sealInode(ino)
		return r.write()
	}, false},
	{"extents_beyond_end_of_device", func(t *testing.T) string {
		// /a/file: its extent starts at block 2^40 and is 30000 long.
		r := base(t, "ext4")
		const ino = 16
		ib := r.inode(ino).IBlock()
		put16(ib, 12+4, 30000)
		put16(ib, 12+6, 0x100)
		put32(ib, 12+8, 0)
		r.sealInode(ino)
		return r.write()
	}, false},
	{"one_block_image", func(t *testing.T) string {
		r := base(t, "ext4")
		p := filepath.Join(t.TempDir(), "one.img")
		if err := os.WriteFile(p, r.b[:r.f.BlockSize*2], 0o644); err != nil { // 1 KiB blocks: superblock is block 1
			t.Fatal(err)
		}
		return p
	}, false},
	{"blocks_count_one", func(t *testing.T) string {
		r := base(t, "ext2")
		sb := r.b[ondisk.SuperblockOffset:]
		put32(sb, 0x04, 1)
		return r.write()
	}, false},
	{"truncated_mid_inode_table", func(t *testing.T) string {
		r := base(t, "ext2")
		table := r.f.Group(0).InodeTable()
		end := (int(table) + int(r.f.InodeBlocksPerGroup)/2) * r.f.BlockSize
		p := filepath.Join(t.TempDir(), "trunc.img")
		if err := os.WriteFile(p, r.b[:end+100], 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}, false},
	{"dir_hole_of_2^32_blocks", func(t *testing.T) string {
		// lost+found's first extent moves to logical block 2^32-4096, so
		// its directory block list would need 2^32 entries for the holes
		// (64 GiB): e2fsck runs out of memory, gofsck stops at its cap.
		r := base(t, "ext4")
		const ino = 11
		n := r.inode(ino)
		put32(n.IBlock(), 12, 0xFFFFF000)
		put32(n, 0x6C, 0x3FF) // i_size_high: past the last block
		r.sealInode(ino)
		sb := r.b[ondisk.SuperblockOffset:]
		put32(sb, 0x60, binary.LittleEndian.Uint32(sb[0x60:])|ondisk.IncompatLargeDir)
		r.sealSuper()
		return r.write()
	}, false},
	{"counts_near_2^32", func(t *testing.T) string {
		r := base(t, "ext2")
		sb := r.b[ondisk.SuperblockOffset:]
		put32(sb, 0x00, 0xFFFFFFFF) // s_inodes_count
		put32(sb, 0x04, 0xFFFFFFFF) // s_blocks_count
		put32(sb, 0x0C, 0xFFFFFFF0) // s_free_blocks_count
		put32(sb, 0x10, 0xFFFFFFF0) // s_free_inodes_count
		return r.write()
	}, false},
	{"counts_near_2^32_64bit", func(t *testing.T) string {
		r := base(t, "ext4")
		sb := r.b[ondisk.SuperblockOffset:]
		put32(sb, 0x00, 0xFFFFFFFF)  // s_inodes_count
		put32(sb, 0x150, 0xFFFFFFFF) // s_blocks_count_hi
		put32(sb, 0x28, 8192)        // s_inodes_per_group
		r.sealSuper()
		return r.write()
	}, false},
}

func writeBase(t *testing.T, name string) string {
	t.Helper()
	testfs.RequireE2fsprogs(t)
	return base(t, name).write()
}

func mustRead(t testing.TB, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestHostileImages runs every hostile image through the checker in
// process (bounded time and heap, no panic) and through the gofsck binary
// (bounded time, non-zero exit), and compares the verdict with e2fsck -fn
// when e2fsck terminates.
func TestHostileImages(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	bin := testfs.GofsckPath(t)
	e2fsck := e2fsckPath(t)
	for _, c := range hostileCases {
		t.Run(c.name, func(t *testing.T) {
			img := c.build(t)
			before := testfs.FileSHA256(t, img)
			data := mustRead(t, img)
			// Allocation churn is reported, not limited: pass 1D names
			// every file sharing a block for each of them (one_block_
			// claimed_by_1000_files allocates ~4 GiB of garbage).
			limit := hostileLimit
			slow := c.slow && os.Getenv("GOFSCK_HOSTILE_FULL") != ""
			if slow {
				limit *= 6
			}
			in := checkImageLimit(t, data, 0, limit)
			g := runBounded(t, limit, bin, "-fn", img)
			e := procRun{timedOut: true}
			if !slow {
				// Under 1 GiB of address space, as e2fsck allocates in
				// proportion to some hostile numbers until malloc fails.
				e = runBounded(t, limit, "/bin/sh", "-c", `ulimit -v 1048576; exec "$0" "$@"`, e2fsck, "-fn", img)
			}
			t.Logf("in-process: stage %s, %d problems, %v, heap +%d KiB, allocated %d MiB; gofsck: exit %d in %v, max RSS %d KiB; e2fsck: exit %d in %v, max RSS %d KiB%s",
				in.Stage, in.Problems, in.Elapsed.Round(time.Millisecond), in.PeakHeap>>10, in.Alloc>>20,
				g.exit, g.elapsed.Round(time.Millisecond), g.maxRSS,
				e.exit, e.elapsed.Round(time.Millisecond), e.maxRSS, map[bool]string{true: " (e2fsck killed or not run)"}[e.timedOut])
			if !in.Corrupt() {
				t.Errorf("in-process check found nothing wrong: %+v", in)
			}
			if g.timedOut {
				t.Fatalf("gofsck did not finish within %v", limit)
			}
			if strings.Contains(g.out, "panic:") || strings.Contains(g.out, "goroutine ") || g.exit == 2 && strings.Contains(g.out, "fatal error") {
				t.Fatalf("gofsck crashed:\n%s", g.out)
			}
			if g.exit == 0 {
				t.Errorf("gofsck -fn exit 0 on a hostile image:\n%s", g.out)
			}
			if g.maxRSS > 1<<20 {
				t.Errorf("gofsck peak RSS %d MiB", g.maxRSS>>10)
			}
			if !e.timedOut && e.exit != g.exit {
				t.Errorf("exit codes differ: e2fsck exit %d, gofsck exit %d\ne2fsck:\n%s\ngofsck:\n%s", e.exit, g.exit, e.out, g.out)
			}
			if after := testfs.FileSHA256(t, img); after != before {
				t.Errorf("-n modified the image")
			}
		})
	}
}

func lastLine(s string) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	return l[len(l)-1]
}

// TestRunBoundedCPULimit: the bound of the hostile runs is CPU time. A
// program that spins is stopped by the kernel once it has used the
// limit (the wall-clock backstop, minutes away, plays no part whatever
// the load), and counts as timed out; one that ends in time does not.
func TestRunBoundedCPULimit(t *testing.T) {
	r := runBounded(t, time.Second, "/bin/sh", "-c", "while :; do :; done")
	if !r.timedOut || r.elapsed >= testfs.WallBackstop(time.Second) {
		t.Errorf("a spinning program: timed out %v after %v, exit %d", r.timedOut, r.elapsed, r.exit)
	}
	if r := runBounded(t, time.Second, "/bin/sh", "-c", "exit 3"); r.timedOut || r.exit != 3 {
		t.Errorf("a program that exits 3: timed out %v, exit %d", r.timedOut, r.exit)
	}
}
