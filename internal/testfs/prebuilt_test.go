package testfs

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestPrebuiltStoresAndReuses: with the update switch Prebuilt builds and
// stores; then it hands out the stored bytes without building; a changed
// recipe is not served the stored copy.
func TestPrebuiltStoresAndReuses(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv("CI", "") // a stale copy is then a log line, not a failure
	builds := 0
	content := []byte("an image\x00\x00\x00 with zeros")
	build := func(t testing.TB) string {
		builds++
		p := filepath.Join(t.TempDir(), "built.img")
		if err := os.WriteFile(p, content, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	read := func(p string) []byte {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}

	t.Setenv(UpdatePrebuiltEnv, "1")
	if got := read(Prebuilt(t, "x", "recipe 1", build)); !bytes.Equal(got, content) || builds != 1 {
		t.Fatalf("update: %q after %d builds", got, builds)
	}
	t.Setenv(UpdatePrebuiltEnv, "")
	got := read(Prebuilt(t, "x", "recipe 1", build))
	if !bytes.Equal(got, content) {
		t.Errorf("stored copy: %q", got)
	}
	if wantBuilds := 1 + map[bool]int{true: 1}[Long()]; builds != wantBuilds {
		t.Errorf("%d builds, want %d (the long tier builds again to compare)", builds, wantBuilds)
	}
	before := builds
	content = []byte("another image")
	if got := read(Prebuilt(t, "x", "recipe 2", build)); !bytes.Equal(got, content) || builds != before+1 {
		t.Errorf("changed recipe: %q after %d builds, want a new build", got, builds-before)
	}
}
