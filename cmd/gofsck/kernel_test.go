package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestKernelListsExt4 reads /proc/filesystems- and modules.dep-style
// files the way e2fsck decides that the kernel has ext4.
func TestKernelListsExt4(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fs := write("filesystems", "nodev\tsysfs\nnodev\ttmpfs\n\text3\n\text4\n")
	fsNo := write("filesystems-no", "nodev\tsysfs\n\text4dev\n\tvfat\n")
	dep := write("modules.dep", "kernel/fs/jbd2/jbd2.ko.zst:\nkernel/fs/ext4/ext4.ko.zst: kernel/fs/jbd2/jbd2.ko.zst kernel/fs/mbcache.ko.zst\n")
	depNo := write("modules-no.dep", "kernel/fs/ext4dev/ext4dev.ko: kernel/fs/ext4/x.ko\nkernel/fs/vfat/vfat.ko:\n")
	for _, c := range []struct {
		got, want bool
		what      string
	}{
		{listsFilesystem(fs, "ext4"), true, "filesystems with ext4"},
		{listsFilesystem(fsNo, "ext4"), false, "filesystems with only ext4dev"},
		{listsFilesystem(filepath.Join(dir, "absent"), "ext4"), false, "missing filesystems file"},
		{listsModule(dep, "ext4"), true, "modules.dep with ext4.ko.zst"},
		{listsModule(depNo, "ext4"), false, "modules.dep naming ext4 only as a dependency"},
		{listsModule("", "ext4"), false, "no modules.dep"},
	} {
		if c.got != c.want {
			t.Errorf("%s: got %v, want %v", c.what, c.got, c.want)
		}
	}
}
