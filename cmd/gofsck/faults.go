package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"gofsck/internal/blockdev"
)

// readErrorsEnv names byte ranges of the device whose reads fail with EIO
// ("OFFSET+LENGTH,..."), for the tests of read-error handling: loop
// devices cannot be made to fail, and e2fsck's handler (report the block,
// ask "Ignore error?", rewrite it) only shows on a failing device. A
// rewritten range reads back fine, as a remapped sector does.
const readErrorsEnv = "GOFSCK_TEST_READ_ERRORS"

// faultyFromEnv wraps dev when readErrorsEnv is set.
func faultyFromEnv(dev blockdev.Device) (blockdev.Device, error) {
	spec := os.Getenv(readErrorsEnv)
	if spec == "" {
		return dev, nil
	}
	var bad []blockdev.Extent
	for _, r := range strings.Split(spec, ",") {
		off, n, ok := strings.Cut(r, "+")
		o, err1 := strconv.ParseInt(off, 10, 64)
		l, err2 := strconv.ParseInt(n, 10, 64)
		if !ok || err1 != nil || err2 != nil || o < 0 || l <= 0 {
			return nil, fmt.Errorf("%s: bad range %q (want OFFSET+LENGTH)", readErrorsEnv, r)
		}
		bad = append(bad, blockdev.Extent{Off: o, Len: l})
	}
	return blockdev.NewFaulty(dev, bad), nil
}
