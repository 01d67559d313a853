package main

import (
	"fmt"
	"io"

	"gofsck/internal/casefold"
	"gofsck/internal/fs"
	"gofsck/internal/ondisk"
	"gofsck/internal/problem"
)

// unsupportedEncoding refuses a casefold filesystem whose s_encoding
// libext2fs cannot load, as e2fsck does right after its feature check: a
// message on stderr, the "still has errors" warning and exit 12. ok is
// false when the run must stop with code.
func unsupportedEncoding(o *options, f *fs.FS, name string, stdout, stderr io.Writer) (code int, ok bool) {
	if !f.SB.HasIncompat(ondisk.IncompatCasefold) {
		return 0, true
	}
	enc, _ := f.SB.Encoding()
	if casefold.Known(enc) {
		return 0, true
	}
	fmt.Fprintf(stderr, "%s has unsupported encoding: %x\n", o.device, enc)
	fatalError(stderr, "Get a newer version of gofsck!")
	fmt.Fprintf(stdout, "\n%s: ********** WARNING: Filesystem still has errors **********\n\n", name)
	return problem.ExitError | problem.ExitUncorrected, false
}
