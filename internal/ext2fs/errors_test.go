package ext2fs

import (
	"errors"
	"fmt"
	"testing"
)

// TestErrcodeMessages pins a few codes to the library's texts (e2fsck
// prints them as they are) and checks that a wrapped code is still found
// by errors.Is.
func TestErrcodeMessages(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{ErrShortRead, "Attempt to read block from filesystem resulted in short read"},
		{ErrExtentHeaderBad, "Corrupt extent header"},
		{ErrExtentLeafBad, "Corrupt extent"},
		{ErrBlockAllocFail, "Could not allocate block in ext2 filesystem"},
		{BadMapBlock(1), "Illegal indirect block found"},
		{BadMapBlock(2), "Illegal doubly indirect block found"},
		{BadMapBlock(3), "Illegal triply indirect block found"},
		{BadMapBlock(0), ""},
		{BadMapBlock(4), ""},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("%q, want %q", got, tc.want)
		}
	}
	if w := fmt.Errorf("block 7: %w", ErrExtentNoNext); !errors.Is(w, ErrExtentNoNext) || errors.Is(w, ErrExtentNoPrev) {
		t.Errorf("errors.Is on %v", w)
	}
}
