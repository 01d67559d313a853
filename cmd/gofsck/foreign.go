package main

import (
	"bytes"
	"fmt"
	"io"

	"gofsck/internal/blockdev"
)

// foreignSignature describes where another filesystem (or swap or an
// encrypted container) leaves its magic, so that a device with a bad ext2
// magic can be named, as e2fsck names it through blkid.
type foreignSignature struct {
	kind     string
	magicOff int64
	magic    []byte
	labelOff int64 // 0: the format has no label we report
	labelLen int
}

var foreignSignatures = []foreignSignature{
	{kind: "xfs", magicOff: 0, magic: []byte("XFSB"), labelOff: 108, labelLen: 12},
	{kind: "btrfs", magicOff: 0x10040, magic: []byte("_BHRfS_M"), labelOff: 0x1012b, labelLen: 256},
	{kind: "crypto_LUKS", magicOff: 0, magic: []byte("LUKS\xba\xbe")},
	{kind: "squashfs", magicOff: 0, magic: []byte("hsqs")},
	{kind: "f2fs", magicOff: 0x400, magic: []byte{0x10, 0x20, 0xf5, 0xf2}},
	{kind: "swap", magicOff: 4096 - 10, magic: []byte("SWAPSPACE2"), labelOff: 1024 + 28, labelLen: 16},
	{kind: "swap", magicOff: 4096 - 10, magic: []byte("SWAP-SPACE")},
}

// probeForeign returns the kind and label of a non-ext filesystem found
// on dev, or "" when none of the known signatures matches. Every read is
// bounded by the device size; a failed read is a non-match.
func probeForeign(dev blockdev.Device) (kind, label string) {
	size := dev.Size()
	read := func(off int64, n int) []byte {
		if off < 0 || n <= 0 || off+int64(n) > size {
			return nil
		}
		b := make([]byte, n)
		if _, err := dev.ReadAt(b, off); err != nil && err != io.EOF {
			return nil
		}
		return b
	}
	for _, s := range foreignSignatures {
		m := read(s.magicOff, len(s.magic))
		if m == nil || !bytes.Equal(m, s.magic) {
			continue
		}
		if s.labelLen > 0 {
			if l := read(s.labelOff, s.labelLen); l != nil {
				if i := bytes.IndexByte(l, 0); i >= 0 {
					l = l[:i]
				}
				label = string(bytes.TrimRight(l, " "))
			}
		}
		return s.kind, label
	}
	return "", ""
}

// reportForeign prints e2fsck's "contains a ... file system" line when
// dev holds another filesystem.
func reportForeign(w io.Writer, name string, dev blockdev.Device) {
	kind, label := probeForeign(dev)
	switch {
	case kind == "":
	case label != "":
		fmt.Fprintf(w, "%s contains a %s file system labelled '%s'\n", name, kind, label)
	default:
		fmt.Fprintf(w, "%s contains a %s file system\n", name, kind)
	}
}
