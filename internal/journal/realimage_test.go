package journal

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// workload makes metadata changes on a mounted filesystem, with syncs in
// between so that several transactions commit, and deletes so that revoke
// records are written.
func workload(t *testing.T, mnt string, rounds int) {
	t.Helper()
	for r := 0; r < rounds; r++ {
		for i := 0; i < 40; i++ {
			d := filepath.Join(mnt, fmt.Sprintf("r%d-d%d", r, i))
			if err := os.MkdirAll(filepath.Join(d, "sub"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(d, "f"), bytes.Repeat([]byte{byte(i)}, 3000*(i%5+1)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		run(t, "sync")
		if r > 0 {
			if err := os.RemoveAll(filepath.Join(mnt, fmt.Sprintf("r%d-d%d", r-1, r%40))); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 40; i += 3 {
				os.RemoveAll(filepath.Join(mnt, fmt.Sprintf("r%d-d%d", r-1, i)))
			}
		}
		run(t, "sync")
	}
}

// mkCopy builds an image, mounts it, runs the workload and copies the image
// while it is still mounted: the copy needs recovery and its journal holds
// the committed transactions. Until accept approves a copy (at most tries
// times) it makes one more small change, syncs and copies again: where the
// kernel's checkpointing has left the log only happens to be controllable
// that way.
func mkCopy(t *testing.T, dir string, sizeMB int, mkfs []string, mountOpts string, rounds, tries int, accept func(img string) bool) string {
	t.Helper()
	img := filepath.Join(dir, "fs.img")
	if err := os.WriteFile(img, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, int64(sizeMB)<<20); err != nil {
		t.Fatal(err)
	}
	run(t, "mke2fs", append(append([]string{"-q", "-F"}, mkfs...), img)...)
	mnt := filepath.Join(dir, "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	args := []string{"-o", "loop"}
	if mountOpts != "" {
		args[1] += "," + mountOpts
	}
	run(t, "mount", append(args, img, mnt)...)
	mounted := true
	defer func() {
		if mounted {
			run(t, "umount", mnt)
		}
	}()
	workload(t, mnt, rounds)
	cp := filepath.Join(dir, "copy.img")
	for try := 0; ; try++ {
		copyFile(t, img, cp)
		if accept(cp) {
			break
		}
		if try == tries {
			t.Fatalf("no acceptable copy after %d tries", tries)
		}
		d := filepath.Join(mnt, fmt.Sprintf("extra%d", try))
		if err := os.MkdirAll(filepath.Join(d, "a", "b"), 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(d, "f"), bytes.Repeat([]byte("x"), 5000), 0o644)
		if try > 0 {
			os.RemoveAll(filepath.Join(mnt, fmt.Sprintf("extra%d", try-1)))
		}
		run(t, "sync")
	}
	run(t, "umount", mnt)
	mounted = false
	os.Remove(img)
	return cp
}

var logdumpFS = regexp.MustCompile(`FS block (\d+) logged at journal block`)

// scribble overwrites every block the journal may replay (per our scan and
// per debugfs logdump) with a pattern, except the blocks e2fsck must read to
// find the journal, so that every replayed block shows in a diff.
func scribble(t *testing.T, img string, j *Journal, fi fsInfo, jblks []uint64) {
	t.Helper()
	homes := map[uint64]bool{}
	scan, err := j.Scan()
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range scan.Transactions {
		for _, tag := range tr.Tags {
			homes[tag.Home] = true
		}
	}
	for _, m := range logdumpFS.FindAllStringSubmatch(run(t, "debugfs", "-R", "logdump -a", img), -1) {
		n, _ := strconv.ParseUint(m[1], 10, 64)
		homes[n] = true
	}
	keep := map[uint64]bool{}
	for b := uint64(0); b <= fi.sbBlock+fi.gdtBlocks; b++ {
		keep[b] = true
	}
	// The inode table block holding the journal inode.
	out := run(t, "debugfs", "-R", "imap <8>", img)
	if m := regexp.MustCompile(`located at block (\d+)`).FindStringSubmatch(out); m != nil {
		n, _ := strconv.ParseUint(m[1], 10, 64)
		keep[n] = true
	}
	for _, b := range jblks {
		keep[b] = true
	}
	f, err := os.OpenFile(img, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, fi.blockSize)
	for b := range homes {
		if keep[b] || b >= fi.blocks {
			continue
		}
		for i := range buf {
			buf[i] = byte(b) ^ byte(i*7) ^ 0xA5
		}
		if _, err := f.WriteAt(buf, int64(b)*int64(fi.blockSize)); err != nil {
			t.Fatal(err)
		}
	}
}

// Fields e2fsck changes after replaying, which our replay does not model.
var (
	// ext4 superblock: s_wtime, s_state, s_feature_incompat
	// (needs_recovery), s_kbytes_written, s_wtime_hi, s_checksum.
	fsSBFields = [][2]int{{0x30, 4}, {0x3A, 2}, {0x60, 4}, {0x178, 8}, {0x274, 1}, {0x3FC, 4}}
	// journal superblock: s_sequence, s_start, s_errno, s_checksum.
	jSBFields = [][2]int{{0x18, 4}, {0x1C, 4}, {0x20, 4}, {0xFC, 4}}
)

func maskFields(b []byte, fields [][2]int) []byte {
	c := bytes.Clone(b)
	for _, f := range fields {
		clear(c[f[0] : f[0]+f[1]])
	}
	return c
}

// compareWithE2fsck applies our replay of copy A and runs e2fsck -E
// journal_only on copy B, then compares the two images block by block.
func compareWithE2fsck(t *testing.T, imgA string, j *Journal, fi fsInfo, jblks []uint64) (*ReplayResult, string) {
	t.Helper()
	imgB := imgA + ".e2fsck"
	copyFile(t, imgA, imgB)
	if !j.NeedsRecovery() {
		t.Fatalf("copy does not need recovery")
	}
	ov := Overlay{}
	res, err := j.Replay(ov)
	if err != nil {
		t.Fatal(err)
	}
	out, status := runStatus(t, "e2fsck", "-y", "-E", "journal_only", imgB)
	if status&^1 != 0 {
		t.Fatalf("e2fsck exit %d:\n%s", status, out)
	}

	a, err := os.ReadFile(imgA)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(imgB)
	if err != nil {
		t.Fatal(err)
	}
	bs := int(fi.blockSize)
	if len(a) != len(b) {
		t.Fatalf("image sizes differ")
	}
	for blk, data := range ov {
		if blk >= uint64(len(a)/bs) {
			t.Errorf("replay writes block %d beyond the image", blk)
			continue
		}
		copy(a[int(blk)*bs:], data)
	}
	jsb := jblks[0]
	diffs := 0
	for blk := 0; blk < len(a)/bs; blk++ {
		pa, pb := a[blk*bs:(blk+1)*bs], b[blk*bs:(blk+1)*bs]
		switch uint64(blk) {
		case fi.sbBlock:
			o := fi.sbOff
			pa = append(append(bytes.Clone(pa[:o]), maskFields(pa[o:o+1024], fsSBFields)...), pa[o+1024:]...)
			pb = append(append(bytes.Clone(pb[:o]), maskFields(pb[o:o+1024], fsSBFields)...), pb[o+1024:]...)
		case jsb:
			pa, pb = maskFields(pa, jSBFields), maskFields(pb, jSBFields)
		}
		if !bytes.Equal(pa, pb) {
			if diffs < 10 {
				_, inOv := ov[uint64(blk)]
				t.Errorf("block %d differs (in overlay: %v)", blk, inOv)
			}
			diffs++
		}
	}
	// The fields we masked: e2fsck must have emptied the journal and
	// stored the sequence we predict, and cleared needs_recovery.
	jb := b[int(jsb)*bs:]
	if start := binary.BigEndian.Uint32(jb[0x1C:]); start != 0 {
		t.Errorf("e2fsck left s_start = %d", start)
	}
	if seq := binary.BigEndian.Uint32(jb[0x18:]); seq != res.Sequence {
		t.Errorf("e2fsck stored s_sequence %d, we predict %d", seq, res.Sequence)
	}
	// A failed commit makes e2fsck store s_errno = -EINVAL, which its
	// closing journal check turns into ERROR_FS on the filesystem (clearing
	// s_errno again); a failed recovery clears VALID_FS.
	if e := int32(binary.BigEndian.Uint32(jb[0x20:])); e != 0 {
		t.Errorf("journal s_errno = %d after e2fsck", e)
	}
	state := binary.LittleEndian.Uint16(b[int(fi.sbBlock)*bs+fi.sbOff+0x3A:])
	origState := binary.LittleEndian.Uint16(a[int(fi.sbBlock)*bs+fi.sbOff+0x3A:])
	if got, want := state&2 != 0, res.Scan.HasFailedCommit || origState&2 != 0; got != want {
		t.Errorf("ERROR_FS after e2fsck: %v, want %v", got, want)
	}
	if res.Err != nil && state&1 != 0 {
		t.Errorf("VALID_FS still set after a failed recovery")
	}
	if inc := binary.LittleEndian.Uint32(b[int(fi.sbBlock)*bs+fi.sbOff+0x60:]); inc&0x4 != 0 {
		t.Errorf("e2fsck left needs_recovery set")
	}
	return res, out
}

func TestReplayMatchesE2fsck(t *testing.T) {
	requireTools(t, true, "mke2fs", "e2fsck", "debugfs", "mount", "umount", "sync")
	for _, c := range []struct {
		name      string
		sizeMB    int
		mkfs      []string
		mountOpts string
		rounds    int
		tagSize   int
		wantWrap  bool
		tries     int
	}{
		{"ext4-csum3-64bit", 64, []string{"-t", "ext4"}, "", 3, 16, false, 5},
		{"ext4-csum3-32bit", 64, []string{"-t", "ext4", "-O", "^64bit"}, "", 3, 16, false, 5},
		{"ext4-nocsum-64bit", 64, []string{"-t", "ext4", "-O", "^metadata_csum"}, "", 3, 12, false, 5},
		{"ext4-nocsum-32bit", 64, []string{"-t", "ext4", "-O", "^metadata_csum,^64bit"}, "", 3, 8, false, 5},
		{"ext3", 64, []string{"-t", "ext3"}, "", 3, 8, false, 5},
		{"ext4-1k-small-journal-wraps", 16, []string{"-t", "ext4", "-b", "1024", "-J", "size=1"}, "", 2, 16, true, 80},
		{"ext4-async-commit", 64, []string{"-t", "ext4", "-J", "size=4"}, "journal_async_commit,data=writeback", 3, 16, false, 5},
		{"ext4-4k-journal-size", 128, []string{"-t", "ext4", "-J", "size=16", "-O", "^metadata_csum"}, "", 4, 12, false, 5},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			var (
				j     *Journal
				fi    fsInfo
				jblks []uint64
				scan  *ScanResult
			)
			img := mkCopy(t, dir, c.sizeMB, c.mkfs, c.mountOpts, c.rounds, c.tries, func(img string) bool {
				j, _, fi, jblks = openImageJournal(t, img)
				var err error
				if scan, err = j.Scan(); err != nil {
					t.Fatal(err)
				}
				if scan.Err != nil {
					t.Fatalf("scan: stop %v, err %v", scan.Stop, scan.Err)
				}
				if os.Getenv("JDEBUG") != "" {
					t.Log(run(t, "debugfs", "-R", "logdump", img))
				}
				t.Logf("copy: start %d seq %d, %d transactions, stop %v at %d", j.Superblock().Start(), j.Superblock().Sequence(), len(scan.Transactions), scan.Stop, scan.StopBlock)
				return len(scan.Transactions) > 0 && (!c.wantWrap || wraps(j, scan))
			})
			if got := j.Format().TagSize(); got != c.tagSize {
				t.Errorf("tag size %d, want %d (features %v)", got, c.tagSize, j.Format().Incompat)
			}
			wrapped := wraps(j, scan)
			revokes := 0
			for _, tr := range scan.Transactions {
				revokes += len(tr.Revoked)
			}
			t.Logf("%d transactions (%d..%d), stop %v, %d revoke records, wrapped %v, features %v",
				len(scan.Transactions), scan.StartTid, scan.EndTid, scan.Stop, revokes, wrapped, j.Format().Incompat)
			scribble(t, img, j, fi, jblks)
			res, out := compareWithE2fsck(t, img, j, fi, jblks)
			if res.Err != nil || res.Replayed == 0 {
				t.Errorf("replay: %d blocks, err %v", res.Replayed, res.Err)
			}
			t.Logf("replayed %d blocks, %d revoke hits; e2fsck: %s", res.Replayed, res.RevokeHits, bytes.TrimSpace([]byte(out)))
			if c.mountOpts != "" && !j.Format().HasAsyncCommit() {
				t.Logf("note: mount options %q did not set async_commit", c.mountOpts)
			}
		})
	}
}

// wraps reports whether the scanned log runs past the end of the log area
// back to its start.
func wraps(j *Journal, scan *ScanResult) bool {
	start := uint64(j.Superblock().Start())
	for _, tr := range scan.Transactions {
		if tr.Commit < start {
			return true
		}
	}
	return false
}
