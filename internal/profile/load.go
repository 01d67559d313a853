package profile

import (
	"errors"
	"io/fs"
	"os"
	"sort"
	"strings"

	"gofsck/internal/account"
)

// Load reads the configuration named path as e2fsck's profile_init reads
// its one file name, and returns the only error e2fsck reports, a
// *SyntaxError (e2fsck prints it and exits). Everything else it meets
// leaves the profile empty (nil), as e2fsck then runs on its defaults:
//
//   - An empty path, a missing file, or one that cannot be opened.
//   - A directory: its regular files whose names are only letters, digits,
//     '-' and '_' are read in byte order of their names, those that cannot
//     be read for want of permission skipped; any other failure to open one
//     drops the whole configuration.
//   - "~/..." is opened under $HOME (else the user's home directory) once
//     the name as given has been found to exist, which is the order the
//     library does things in.
func Load(path string) (*Profile, error) {
	if path == "" {
		return nil, nil
	}
	info, err := os.Stat(path)
	if err != nil {
		return nil, nil
	}
	if !info.IsDir() {
		root, _, err := openFile(path)
		if root == nil {
			return nil, err
		}
		return &Profile{files: []*node{root}}, nil
	}
	ents, err := os.ReadDir(path)
	if err != nil {
		return nil, nil
	}
	var files []string
	for _, e := range ents {
		n := e.Name()
		if !plainName(n) {
			continue
		}
		fn := path + "/" + n
		if st, err := os.Stat(fn); err != nil || !st.Mode().IsRegular() {
			continue
		}
		files = append(files, fn)
	}
	sort.Strings(files)
	p := &Profile{}
	for _, fn := range files {
		root, openErr, err := openFile(fn)
		switch {
		case err != nil:
			return nil, err
		case root != nil:
			p.files = append(p.files, root)
		case !errors.Is(openErr, fs.ErrPermission):
			return nil, nil
		}
	}
	// The directory itself is opened last and reads as an empty file.
	if len(p.files) == 0 {
		return nil, nil
	}
	return p, nil
}

// plainName reports whether a directory entry is one the library reads.
func plainName(n string) bool {
	if n == "" {
		return false
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// openFile parses the file spec names (after "~/" expansion). When the
// file cannot be opened it returns no tree and why (openErr); err is a
// syntax error.
func openFile(spec string) (root *node, openErr, err error) {
	name := expandHome(spec)
	f, openErr := os.Open(name)
	if openErr != nil {
		return nil, openErr, nil
	}
	defer f.Close()
	root, err = parseFile(name, f)
	return root, nil, err
}

// expandHome replaces a leading "~/" by the home directory, as
// profile_open_file does: $HOME even when empty, else the password
// entry's directory when it has one.
func expandHome(spec string) string {
	if !strings.HasPrefix(spec, "~/") {
		return spec
	}
	home, ok := os.LookupEnv("HOME")
	if !ok {
		if _, dir, found := account.UserByID(os.Getuid()); found && dir != "" {
			home, ok = dir, true
		}
	}
	if !ok {
		return spec
	}
	return home + spec[1:]
}
