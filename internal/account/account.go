// Package account looks up user and group names in /etc/passwd and
// /etc/group, as os/user does when built without cgo.
//
// os/user with cgo asks libc (and so NSS), and that one import made every
// binary of the module link libc dynamically: 1.5 MiB more resident memory
// on every run of gofsck, and a dependency a checker in an initramfs or a
// rescue shell does without. gofsck only needs a home directory for "~/"
// in e2fsck.conf paths and the names dumpe2fs prints beside the reserved
// uid and gid; the local files answer both.
package account

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// Files read by the lookups; tests point them elsewhere.
var (
	PasswdFile = "/etc/passwd"
	GroupFile  = "/etc/group"
)

// maxLine bounds one line of the files: longer lines are skipped, as
// os/user's pure-Go lookup does.
const maxLine = 64 << 10

// UserByID returns the name and home directory of the user with this
// numeric id, and false when there is no such entry (or no file).
func UserByID(uid int) (name, home string, ok bool) {
	f := field(PasswdFile, uid, 7)
	if f == nil {
		return "", "", false
	}
	return f[0], f[5], true
}

// GroupByID returns the name of the group with this numeric id.
func GroupByID(gid int) (name string, ok bool) {
	f := field(GroupFile, gid, 4)
	if f == nil {
		return "", false
	}
	return f[0], true
}

// field returns the colon-separated fields of the first line of file whose
// third field is id, when the line has at least n fields.
func field(file string, id, n int) []string {
	fh, err := os.Open(file)
	if err != nil {
		return nil
	}
	defer fh.Close()
	want := strconv.Itoa(id)
	r := bufio.NewReaderSize(fh, 4096)
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(line)+len(chunk) <= maxLine {
			line = append(line, chunk...)
		} else {
			line = append(line[:0], '#') // too long: skipped whole
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if f := entry(string(line), want, n); f != nil {
			return f
		}
		if err != nil {
			return nil
		}
		line = line[:0]
	}
}

// entry returns the fields of line when it is an entry for id.
func entry(line, id string, n int) []string {
	line = strings.TrimSuffix(line, "\n")
	if line == "" || line[0] == '#' || line[0] == '+' || line[0] == '-' {
		return nil // comments and NIS compat entries
	}
	if f := strings.SplitN(line, ":", n); len(f) >= n && f[2] == id && f[0] != "" {
		return f
	}
	return nil
}
