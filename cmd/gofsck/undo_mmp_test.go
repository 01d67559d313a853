package main

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"gofsck/internal/testfs"
)

// TestUndoRestoresMMP: on a filesystem with multi-mount protection the
// MMP block is written by the protocol (start, fsck sequence, clean
// sequence with this host's and device's names and the time), outside
// the fixes. With -z those writes go through the undo file as e2fsck's go
// through its undo I/O manager, so gofsck undo (and e2undo) put back the
// image byte for byte, MMP block included; a forced run on a clean
// filesystem is undone as well.
func TestUndoRestoresMMP(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	undoTool(t, "e2undo")
	t.Setenv(mmpNoSleepEnv, "1")
	// Damaged first, MMP enabled after: debugfs -w would run the MMP
	// start protocol and wait 11 s.
	base := testfs.MkImage(t, testfs.Spec{FSType: "ext4", Size: 16 << 20, BlockSize: 4096})
	damaged := testfs.CopyImage(t, base)
	testfs.Debugfs(t, damaged, "freeb 400 30", "set_bg 0 free_inodes_count 3", "set_bg 0 checksum calc")
	for _, img := range []string{base, damaged} {
		if out, errs, code := runUndoTool(t, nil, "tune2fs", "-O", "mmp", "-E", "mmp_update_interval=5", img); code != 0 {
			t.Fatalf("tune2fs -O mmp: exit %d\n%s%s", code, out, errs)
		}
	}
	mmpOff := func(img string) int64 {
		sb := testfs.ReadAt(t, img, 1024, 1024)
		logBS := binary.LittleEndian.Uint32(sb[24:])
		return int64(binary.LittleEndian.Uint64(sb[0x168:])) << (10 + logBS)
	}
	for _, tc := range []struct {
		name string
		img  string
		code int
	}{
		{"repair", damaged, 1},
		// Nothing to fix: the forced run still writes the superblock
		// (last check time) and the MMP block.
		{"clean", base, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A copy: the MMP block gets another device name.
			img := testfs.CopyImage(t, tc.img)
			before := mustRead(t, img)
			off := mmpOff(img)
			u := filepath.Join(t.TempDir(), "fsck.undo")
			out, code := runGofsck("-fy", "-z", u, img)
			if code != tc.code {
				t.Fatalf("gofsck -fy -z: exit %d, want %d\n%s", code, tc.code, out)
			}
			after := mustRead(t, img)
			if bytes.Equal(after[off:off+4096], before[off:off+4096]) {
				t.Fatal("the run did not write the MMP block: the test proves nothing")
			}
			// e2undo on a copy, gofsck undo on the image.
			ecopy := filepath.Join(t.TempDir(), "e2undo.img")
			if err := os.WriteFile(ecopy, after, 0o644); err != nil {
				t.Fatal(err)
			}
			if eout, eerr, ecode := runUndoTool(t, nil, "e2undo", u, ecopy); ecode != 0 {
				t.Errorf("e2undo: exit %d\n%s%s", ecode, eout, eerr)
			} else if got := mustRead(t, ecopy); !bytes.Equal(got, before) {
				t.Errorf("e2undo with gofsck's undo file: the image differs from the original at byte %d (MMP block at %d)",
					firstDiff(got, before), off)
			}
			if gout, gerr, gcode := runUndoCmd(u, img); gcode != 0 || gout != "" || gerr != "" {
				t.Fatalf("gofsck undo: exit %d, stdout %q, stderr %q", gcode, gout, gerr)
			}
			if got := mustRead(t, img); !bytes.Equal(got, before) {
				t.Fatalf("gofsck undo: the image differs from the original at byte %d (MMP block at %d)", firstDiff(got, before), off)
			}
		})
	}
}
