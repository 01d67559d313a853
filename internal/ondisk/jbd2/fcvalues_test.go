package jbd2

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// TestDecodeFCValues decodes the fixed parts of the record values the
// fast-commit replay reads, and refuses values too short for them.
func TestDecodeFCValues(t *testing.T) {
	le := binary.LittleEndian
	var v []byte
	for _, x := range []uint32{0x11, 0x22, 0x33, 0x44, 0x55} {
		v = le.AppendUint32(v, x)
	}
	if tag, n, ok := DecodeFCTagHeader([]byte{6, 0, 0x34, 0x12}); !ok || tag != FCInode || n != 0x1234 {
		t.Errorf("tag header: %v %#x %v", tag, n, ok)
	}
	if p, ino, ok := DecodeFCDentry(v); !ok || p != 0x11 || ino != 0x22 {
		t.Errorf("dentry: %#x %#x %v", p, ino, ok)
	}
	if ino, ext, ok := DecodeFCAddRange(v); !ok || ino != 0x11 || !bytes.Equal(ext, v[4:16]) {
		t.Errorf("add range: %#x %x %v", ino, ext, ok)
	}
	if ino, lblk, n, ok := DecodeFCDelRange(v); !ok || ino != 0x11 || lblk != 0x22 || n != 0x33 {
		t.Errorf("del range: %#x %#x %#x %v", ino, lblk, n, ok)
	}
	if ino, raw, ok := DecodeFCInode(v); !ok || ino != 0x11 || !bytes.Equal(raw, v[4:]) {
		t.Errorf("inode: %#x %x %v", ino, raw, ok)
	}
	short := v[:3]
	if _, _, ok := DecodeFCTagHeader(short); ok {
		t.Errorf("short tag header accepted")
	}
	if _, _, ok := DecodeFCDentry(v[:FCDentryInfoSize-1]); ok {
		t.Errorf("short dentry accepted")
	}
	if _, _, ok := DecodeFCAddRange(v[:FCAddRangeSize-1]); ok {
		t.Errorf("short add range accepted")
	}
	if _, _, _, ok := DecodeFCDelRange(v[:FCDelRangeSize-1]); ok {
		t.Errorf("short del range accepted")
	}
	if _, _, ok := DecodeFCInode(short); ok {
		t.Errorf("short inode accepted")
	}
}
