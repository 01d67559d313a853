package test

import (
	"os/exec"
	"strings"
	"testing"

	"gofsck/internal/testfs"
)

// allowedImports lists, for every package of the module, the module
// packages it may import (style.md's layering: one-way, format separate
// from I/O). Standard-library imports are checked separately: the leaves
// and ondisk may not use os, syscall or unsafe.
var allowedImports = map[string][]string{
	"internal/csum":     nil,
	"internal/dirhash":  nil,
	"internal/casefold": nil,
	"internal/getopt":   nil,
	"internal/bitmap":   nil,
	"internal/problem":  nil,
	"internal/plot":     nil,
	"internal/quota":    nil,
	"internal/qsort":    nil,
	// profile reads configuration files (os); account, /etc/passwd.
	"internal/profile":     {"internal/account"},
	"internal/account":     nil,
	"internal/ondisk":      {"internal/csum"},
	"internal/ondisk/jbd2": {"internal/csum"},
	"internal/blockdev":    nil,
	"internal/fs":          {"internal/ondisk", "internal/blockdev", "internal/csum", "internal/bitmap"},
	"internal/journal":     {"internal/ondisk/jbd2", "internal/csum"},
	// fcreplay applies fast commits with the library's mechanics; the
	// checker runs it through fcreplay.Host, so it never imports check.
	"internal/journal/fcreplay": {"internal/journal", "internal/ondisk/jbd2", "internal/ext2fs", "internal/fs", "internal/ondisk",
		"internal/blockdev", "internal/bitmap", "internal/csum", "internal/dirhash", "internal/qsort"},
	"internal/iotrace":  {"internal/blockdev"},
	"internal/undo":     {"internal/csum"},
	"internal/freefrag": {"internal/fs", "internal/ondisk", "internal/bitmap", "internal/blockdev", "internal/csum"},
	"internal/dump":     {"internal/account", "internal/fs", "internal/ondisk", "internal/ondisk/jbd2", "internal/blockdev", "internal/csum", "internal/bitmap"},
	// ext2fs is the library under the checker (style.md): mechanics
	// only, so it never imports check. It lays out the journal
	// superblock of a journal it creates (ondisk/jbd2), as
	// lib/ext2fs/mkjournal.c does.
	"internal/ext2fs": {"internal/fs", "internal/ondisk", "internal/ondisk/jbd2", "internal/blockdev", "internal/bitmap", "internal/csum"},
	// check opens an external journal device (-j) through blockdev.
	"internal/check": {"internal/ext2fs", "internal/fs", "internal/journal", "internal/journal/fcreplay", "internal/ondisk", "internal/ondisk/jbd2", "internal/bitmap",
		"internal/problem", "internal/dirhash", "internal/csum", "internal/blockdev", "internal/quota", "internal/casefold", "internal/qsort"},
	"internal/testfs": nil,
}

// pureStd are the packages that must not touch the system.
var pureStd = []string{"internal/csum", "internal/dirhash", "internal/casefold", "internal/bitmap", "internal/ondisk", "internal/ondisk/jbd2", "internal/plot", "internal/quota", "internal/qsort", "internal/problem", "internal/getopt"}

// TestLayering keeps imports one-way: a package imports only what its line
// in allowedImports names (transitively too), nothing imports cmd/, and
// only test code imports internal/testfs.
func TestLayering(t *testing.T) {
	root, err := testfs.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}}|{{join .Imports \" \"}}|{{join .Deps \" \"}}", "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 15 {
		t.Fatalf("go list found only %d packages", len(lines))
	}
	for _, line := range lines {
		parts := strings.Split(line, "|")
		pkg := strings.TrimPrefix(parts[0], "gofsck/")
		var own, std []string
		for _, d := range strings.Fields(parts[2]) {
			if strings.HasPrefix(d, "gofsck/") {
				own = append(own, strings.TrimPrefix(d, "gofsck/"))
			}
		}
		for _, d := range strings.Fields(parts[1]) {
			if !strings.HasPrefix(d, "gofsck/") {
				std = append(std, d)
			}
		}
		for _, d := range own {
			if strings.HasPrefix(d, "cmd/") {
				t.Errorf("%s imports %s: nothing may import a command", pkg, d)
			}
			if d == "internal/testfs" {
				t.Errorf("%s imports internal/testfs, which only tests may use", pkg)
			}
		}
		allowed, listed := allowedImports[pkg]
		if !listed {
			continue // commands and test packages may import any internal package
		}
		for _, d := range own {
			ok := false
			for _, a := range allowed {
				if d == a {
					ok = true
				}
			}
			if !ok {
				t.Errorf("%s may not import %s (allowed: %v)", pkg, d, allowed)
			}
		}
		for _, p := range pureStd {
			if pkg != p {
				continue
			}
			for _, d := range std {
				if d == "os" || d == "syscall" || d == "unsafe" || d == "os/exec" {
					t.Errorf("%s must not depend on %s (no I/O below blockdev)", pkg, d)
				}
			}
		}
	}
}

// TestCommandsLinkStatically keeps cgo out of the commands: gofsck is a
// filesystem checker that initramfs images and rescue shells run, and the
// libc that one cgo import (os/user) linked in cost every run 1.5 MiB of
// resident memory. internal/account reads /etc/passwd instead.
func TestCommandsLinkStatically(t *testing.T) {
	root, err := testfs.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}}|{{join .Deps \" \"}}", "./cmd/...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 3 {
		t.Fatalf("go list found only %d commands", len(lines))
	}
	for _, line := range lines {
		name, deps, _ := strings.Cut(line, "|")
		for _, d := range strings.Fields(deps) {
			if d == "runtime/cgo" || d == "os/user" || d == "net" {
				t.Errorf("%s depends on %s, which links libc dynamically", name, d)
			}
		}
	}
}
