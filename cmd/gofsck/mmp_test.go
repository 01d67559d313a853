package main

import (
	"bytes"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"gofsck/internal/ondisk"
	"gofsck/internal/testfs"
)

// mmpImage makes a small ext4 image with multi-mount protection.
func mmpImage(t *testing.T) string {
	t.Helper()
	testfs.RequireE2fsprogs(t)
	return testfs.MkImage(t, testfs.Spec{FSType: "ext4", Size: 16 << 20, BlockSize: 4096, Features: "mmp", Populate: populate})
}

// readMMP returns the superblock and the MMP structure of img.
func readMMP(t *testing.T, img string) (ondisk.Superblock, ondisk.MMP, int64) {
	t.Helper()
	data, err := os.ReadFile(img)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := ondisk.NewSuperblock(data[ondisk.SuperblockOffset : ondisk.SuperblockOffset+ondisk.SuperblockSize])
	if err != nil {
		t.Fatal(err)
	}
	off := int64(sb.MMPBlock()) * int64(sb.BlockSize())
	if off <= 0 || off+ondisk.MMPSize > int64(len(data)) {
		t.Fatalf("%s: MMP block %d out of the image", img, sb.MMPBlock())
	}
	m, _ := ondisk.NewMMP(data[off : off+ondisk.MMPSize])
	return sb, m, off
}

// TestMMPWaits runs gofsck -fy and e2fsck -fy side by side on an mmp
// filesystem with their real waits: gofsck must take the filesystem as the
// library does (a new random sequence with this host's and the device's
// names while it waits 2·5+1 seconds, then the check), end with the clean
// sequence, and leave the same bytes as e2fsck except the MMP block's time,
// device name and checksum and the superblock fields each program stamps.
func TestMMPWaits(t *testing.T) {
	if testing.Short() {
		t.Skip("waits 11 seconds")
	}
	t.Setenv(mmpNoSleepEnv, "")
	base := mmpImage(t)
	gimg, eimg := testfs.CopyImage(t, base), testfs.CopyImage(t, base)
	host, err := hostName()
	if err != nil {
		t.Fatal(err)
	}

	var wg sync.WaitGroup
	var eout string
	var ecode int
	wg.Add(1)
	go func() {
		defer wg.Done()
		eout, ecode = runE2fsck(t, "-fy", eimg)
	}()
	var gout string
	var gcode int
	var gtime time.Duration
	wg.Add(1)
	go func() {
		defer wg.Done()
		start := time.Now()
		gout, gcode = runGofsck("-fy", gimg)
		gtime = time.Since(start)
	}()
	// During the first wait (11 s) the block holds gofsck's random
	// sequence: wait for the clean sequence to go.
	_, m, _ := readMMP(t, gimg)
	for deadline := time.Now().Add(testfs.WallBackstop(0)); m.Seq() == ondisk.MMPSeqClean && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		_, m, _ = readMMP(t, gimg)
	}
	if s := m.Seq(); s == ondisk.MMPSeqClean || s > ondisk.MMPSeqMax {
		t.Errorf("during the wait the sequence is %#x, want a node's sequence", s)
	}
	if !bytes.Equal(m.NodeName(), host) || !strings.HasPrefix(gimg, string(m.BdevName())) || len(m.BdevName()) == 0 {
		t.Errorf("during the wait the block names %q on %q, want %q on %q", m.NodeName(), m.BdevName(), host, gimg)
	}
	wg.Wait()

	if gtime < 11*time.Second {
		t.Errorf("gofsck -fy took %v, want at least the 11 s of the start protocol", gtime)
	}
	if g, e := norm(gout, gimg), norm(eout, eimg); g != e || gcode != ecode {
		t.Errorf("exit %d vs e2fsck %d; output differs:\n--- e2fsck\n%s--- gofsck\n%s", gcode, ecode, e, g)
	}
	da, db := readMasked(t, "mmp", gimg, eimg)
	for _, img := range []struct {
		path string
		data []byte
	}{{gimg, da}, {eimg, db}} {
		sb, m, off := readMMP(t, img.path)
		if m.Seq() != ondisk.MMPSeqClean || m.Magic() != ondisk.MMPMagic {
			t.Errorf("%s: sequence %#x magic %#x after the run, want clean", img.path, m.Seq(), m.Magic())
		}
		if m.Checksum() != m.ComputeChecksum(sb.CsumSeed()) {
			t.Errorf("%s: MMP checksum wrong", img.path)
		}
		// The fields that hold the time and the device name, and the
		// checksum over them.
		for _, r := range [][2]int64{{0x08, 8}, {0x50, ondisk.MMPBdevNameLen}, {0x3FC, 4}} {
			clear(img.data[off+r[0] : off+r[0]+r[1]])
		}
	}
	if !bytes.Equal(da, db) {
		for i := range da {
			if da[i] != db[i] {
				t.Fatalf("images differ first at byte %d", i)
			}
		}
	}
}

// TestMMPReadOnlyNeverWrites: with -n the MMP block is only read, even
// when a node's sequence would make a writable run wait and take it over,
// and nothing is waited for (a wait would panic).
func TestMMPReadOnlyNeverWrites(t *testing.T) {
	t.Setenv(mmpNoSleepEnv, "forbid")
	img := mmpImage(t)
	sb, m, off := readMMP(t, img)
	m.SetSeq(0x1234)
	m.SetChecksum(sb.CsumSeed())
	f, err := os.OpenFile(img, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(m, off); err != nil {
		t.Fatal(err)
	}
	f.Close()
	before := testfs.FileSHA256(t, img)
	out, code := runGofsck("-fn", img)
	if code != 0 {
		t.Errorf("-fn: exit %d:\n%s", code, out)
	}
	if testfs.FileSHA256(t, img) != before {
		t.Error("gofsck -fn wrote to the image")
	}
}
