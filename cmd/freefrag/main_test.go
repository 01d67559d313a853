package main

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"

	"gofsck/internal/testfs"
)

// TestMountedWarning: on a mounted filesystem freefrag's counts come
// from bitmaps the kernel may not have written yet; it says so first, in
// the words e2fsck -n uses for a mounted device (libext2fs's
// EXT2FS_PRETEND_RO_MOUNT makes both programs see the image as mounted),
// and prints the report after. Unmounted, it prints no warning.
func TestMountedWarning(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	img := testfs.MkImage(t, testfs.Spec{})
	for _, mounted := range []bool{true, false} {
		t.Run(map[bool]string{true: "mounted", false: "unmounted"}[mounted], func(t *testing.T) {
			env := testfs.Env(t)
			if mounted {
				env = append(env, "EXT2FS_PRETEND_RO_MOUNT=1")
				t.Setenv("EXT2FS_PRETEND_RO_MOUNT", "1")
			}
			cmd := exec.Command("e2fsck", "-n", img)
			cmd.Env = env
			eout, _ := cmd.Output()
			var o, e bytes.Buffer
			code := run([]string{"freefrag", img}, &o, &e)
			first, rest, _ := strings.Cut(o.String(), "\n")
			efirst, _, _ := strings.Cut(string(eout), "\n")
			switch {
			case code != 0:
				t.Errorf("mounted %v: exit %d: %s", mounted, code, e.String())
			case mounted && (first != efirst || first != "Warning!  "+img+" is mounted." || !strings.HasPrefix(rest, "Device: "+img+"\n")):
				t.Errorf("mounted: freefrag starts %q, e2fsck -n %q", o.String(), efirst)
			case !mounted && !strings.HasPrefix(o.String(), "Device: "):
				t.Errorf("unmounted: %q", o.String())
			}
		})
	}
}
