package blockdev

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseMountLine(t *testing.T) {
	for _, tt := range []struct {
		line string
		want mountEntry
		ok   bool
	}{
		{"/dev/sda1 / ext4 rw,relatime 0 0", mountEntry{"/dev/sda1", "/", "ext4", "rw,relatime"}, true},
		{`/dev/loop3 /mnt/a\040b ext4 ro,errors=remount-ro 0 0`, mountEntry{"/dev/loop3", "/mnt/a b", "ext4", "ro,errors=remount-ro"}, true},
		{`/x\134y /m\011n ext2 rw 0 0`, mountEntry{`/x\y`, "/m\tn", "ext2", "rw"}, true},
		{"# comment", mountEntry{}, false},
		{"   ", mountEntry{}, false},
		{"short line", mountEntry{}, false},
	} {
		got, ok := parseMountLine(tt.line)
		if ok != tt.ok || got != tt.want {
			t.Errorf("parseMountLine(%q) = %+v, %v; want %+v, %v", tt.line, got, ok, tt.want, tt.ok)
		}
	}
}

func TestHasOption(t *testing.T) {
	for _, tt := range []struct {
		opts string
		want bool
	}{
		{"ro", true},
		{"ro,relatime", true},
		{"rw,relatime", false},
		{"rw,errors=remount-ro", false},
		{"rw,ro=1", true},
		{"rootcontext=x", false},
	} {
		if got := (mountEntry{opts: tt.opts}).hasOption("ro"); got != tt.want {
			t.Errorf("hasOption(%q, ro) = %v, want %v", tt.opts, got, tt.want)
		}
	}
}

// TestFindMountEntry matches a regular file by its name and by its
// device and inode (an entry naming a hard link of it), and skips
// entries not starting with '/'.
func TestFindMountEntry(t *testing.T) {
	dir := t.TempDir()
	img := filepath.Join(dir, "fs.img")
	if err := os.WriteFile(img, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.img")
	if err := os.Link(img, link); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other.img")
	if err := os.WriteFile(other, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	table := strings.Join([]string{
		"proc /proc proc rw 0 0",
		other + " /mnt/other ext4 rw 0 0",
		link + " /mnt/link ext4 ro 0 0",
		img + " /mnt/img ext4 rw 0 0",
	}, "\n")
	ent, ok := findMountEntry(strings.NewReader(table), img, statID(img))
	if !ok || ent.dir != "/mnt/link" || !ent.hasOption("ro") {
		t.Errorf("by inode: got %+v, %v; want the /mnt/link entry", ent, ok)
	}
	if ent, ok := findMountEntry(strings.NewReader(table), "/nowhere", statID("/nowhere")); ok {
		t.Errorf("a missing file matched %+v", ent)
	}
}

// TestCheckIfMountedPretend: the library's test switches answer without
// looking, ROOTFS replacing the answer by IsRoot alone.
func TestCheckIfMountedPretend(t *testing.T) {
	for _, tt := range []struct {
		env  []string
		want MountFlags
	}{
		{[]string{"EXT2FS_PRETEND_RO_MOUNT"}, Mounted | ReadOnly},
		{[]string{"EXT2FS_PRETEND_RW_MOUNT"}, Mounted},
		{[]string{"EXT2FS_PRETEND_RO_MOUNT", "EXT2FS_PRETEND_ROOTFS"}, IsRoot},
		{[]string{"EXT2FS_PRETEND_RW_MOUNT", "EXT2FS_PRETEND_ROOTFS"}, IsRoot},
	} {
		t.Run(strings.Join(tt.env, "+"), func(t *testing.T) {
			for _, k := range tt.env {
				t.Setenv(k, "1")
			}
			got, err := CheckIfMounted("/nonexistent")
			if err != nil || got != tt.want {
				t.Errorf("got %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

// TestCheckIfMountedFile: a file nobody mounted is not in use.
func TestCheckIfMountedFile(t *testing.T) {
	img := filepath.Join(t.TempDir(), "fs.img")
	if err := os.WriteFile(img, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := CheckIfMounted(img); err != nil || got != 0 {
		t.Errorf("got %v, %v; want unused", got, err)
	}
}

func TestMountFlagsString(t *testing.T) {
	for f, want := range map[MountFlags]string{
		0:                           "unused",
		Mounted | IsRoot | ReadOnly: "mounted+root+read-only",
		Busy | Swap:                 "swap+busy",
	} {
		if got := f.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", f, got, want)
		}
	}
}
