package account

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestLookupsAgreeWithGetent(t *testing.T) {
	getent, err := exec.LookPath("getent")
	if err != nil {
		t.Fatal("getent (libc-bin) is needed to check the lookups against libc")
	}
	for _, id := range []int{0, 1, 2, 65534, os.Getuid()} {
		out, err := exec.Command(getent, "passwd", strconv.Itoa(id)).Output()
		name, home, ok := UserByID(id)
		if err != nil {
			if ok {
				t.Errorf("uid %d: getent has none, UserByID says %q", id, name)
			}
			continue
		}
		f := strings.Split(strings.TrimSpace(string(out)), ":")
		if !ok || name != f[0] || home != f[5] {
			t.Errorf("uid %d: UserByID = %q %q %v, getent = %q %q", id, name, home, ok, f[0], f[5])
		}
	}
	for _, id := range []int{0, 1, 65534} {
		out, err := exec.Command(getent, "group", strconv.Itoa(id)).Output()
		name, ok := GroupByID(id)
		if err != nil {
			if ok {
				t.Errorf("gid %d: getent has none, GroupByID says %q", id, name)
			}
			continue
		}
		if f := strings.Split(string(out), ":"); !ok || name != f[0] {
			t.Errorf("gid %d: GroupByID = %q %v, getent = %q", id, name, ok, f[0])
		}
	}
}

func TestHostileFiles(t *testing.T) {
	dir := t.TempDir()
	PasswdFile, GroupFile = filepath.Join(dir, "passwd"), filepath.Join(dir, "group")
	defer func() { PasswdFile, GroupFile = "/etc/passwd", "/etc/group" }()
	long := strings.Repeat("x", maxLine+10)
	os.WriteFile(PasswdFile, []byte("# c\n+nis\n"+long+":x:7:7::/l:/bin/sh\nshort:7\n:x:7:7::/e:\nu:x:7:7:gecos:/home/u:/bin/sh\n"), 0o644)
	os.WriteFile(GroupFile, []byte("g:x:9\nbad\ng2:x:9:\n"), 0o644)
	if name, home, ok := UserByID(7); !ok || name != "u" || home != "/home/u" {
		t.Errorf("UserByID(7) = %q %q %v", name, home, ok)
	}
	if _, _, ok := UserByID(8); ok {
		t.Error("UserByID(8) found an entry that is not there")
	}
	if name, ok := GroupByID(9); !ok || name != "g2" {
		t.Errorf("GroupByID(9) = %q %v (a line with 3 fields is not a group entry)", name, ok)
	}
	GroupFile = filepath.Join(dir, "missing")
	if _, ok := GroupByID(0); ok {
		t.Error("GroupByID with no file found an entry")
	}
}
