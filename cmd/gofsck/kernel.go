package main

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
)

// kernelHasExt4 reports whether the running kernel can mount ext4, the
// condition under which e2fsck clears a superblock's test_fs flag: the
// driver is registered (a line of /proc/filesystems names it) or can be
// loaded (the module is listed in this kernel's modules.dep).
func kernelHasExt4() bool {
	return listsFilesystem("/proc/filesystems", "ext4") || listsModule(modulesDep(), "ext4")
}

// listsFilesystem reports whether the /proc/filesystems-style file at path
// has a line whose last field is name ("nodev\tname" or "\tname").
func listsFilesystem(path, name string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 0 && fields[len(fields)-1] == name {
			return true
		}
	}
	return false
}

// modulesDep is the path of the running kernel's modules.dep, or "".
func modulesDep() string {
	rel, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return ""
	}
	return filepath.Join("/lib/modules", strings.TrimSpace(string(rel)), "modules.dep")
}

// listsModule reports whether the modules.dep file at path has an entry
// for module name: a line "dir/name.ko[.xz|.gz|.zst]: deps".
func listsModule(path, name string) bool {
	if path == "" {
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		mod, _, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		base := filepath.Base(mod)
		if b, _, _ := strings.Cut(base, "."); b == name && strings.Contains(base, ".ko") {
			return true
		}
	}
	return false
}
