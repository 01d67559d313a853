package ext2fs

import (
	"testing"

	"gofsck/internal/ondisk"
	"gofsck/internal/testfs"
)

// TestMMP reads the MMP block mke2fs -O mmp wrote (in range, valid, a
// clean sequence), then checks the verdicts on a bad checksum, a bad
// magic (which wins) and an fsck sequence, and that ResetMMP's block
// verifies once its checksum is set; the intervals and sleeps follow the
// protocol's bounds.
func TestMMP(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	img := testfs.MkImage(t, testfs.Spec{FSType: "ext4", Features: "mmp,metadata_csum"})
	f, _ := openOverlay(t, img)
	if !MMPBlockInRange(f) {
		t.Fatalf("s_mmp_block %d out of range", f.SB.MMPBlock())
	}
	buf := make([]byte, f.BlockSize)
	if err := f.ReadBlock(f.SB.MMPBlock(), buf); err != nil {
		t.Fatal(err)
	}
	m, err := ondisk.NewMMP(buf)
	if err != nil {
		t.Fatal(err)
	}
	if e := VerifyMMP(f, buf); e != 0 || MMPSeqState(m) != 0 {
		t.Fatalf("fresh block: %v, sequence state %v", e, MMPSeqState(m))
	}
	m.SetSeq(ondisk.MMPSeqFsck)
	if e := VerifyMMP(f, buf); e != MMPCsumInvalid || MMPSeqState(m) != MMPFsckOn {
		t.Errorf("fsck sequence: %v, %v", e, MMPSeqState(m))
	}
	m.SetMagic(1)
	if e := VerifyMMP(f, buf); e != MMPMagicInvalid || e.Error() != "MMP: invalid magic number" {
		t.Errorf("bad magic: %v", e)
	}
	ResetMMP(f.SB, buf, []byte("host"), []byte("dev"))
	m.SetChecksum(f.CsumSeed)
	if e := VerifyMMP(f, buf); e != 0 || m.Seq() != ondisk.MMPSeqClean || string(m.NodeName()) != "host" {
		t.Errorf("reset block: %v, sequence %#x, node %q", e, m.Seq(), m.NodeName())
	}
	iv := MMPInterval(f.SB, m, true)
	if iv < ondisk.MMPMinCheckInterval || MMPSleep(iv) != min(2*iv+1, iv+60) || MMPSleep(100) != 160 {
		t.Errorf("interval %d, sleep %d", iv, MMPSleep(iv))
	}
}
