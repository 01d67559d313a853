package blockdev

import (
	"bufio"
	"errors"
	"io"
	"os"
	"strings"
	"syscall"
	"unsafe"
)

// MountFlags says how a device is in use, with the meaning (and values)
// of the library's EXT2_MF_* bits.
type MountFlags uint8

const (
	Mounted  MountFlags = 1 << iota // listed in the mount table, or the device of /
	IsRoot                          // mounted on /
	ReadOnly                        // mounted read-only
	Swap                            // an active swap device
	Busy                            // a block device that O_EXCL cannot open
	ExtFS                           // mounted as ext2, ext3 or ext4
)

var mountFlagNames = [...]string{"mounted", "root", "read-only", "swap", "busy", "extfs"}

// String names the flags set, joined by '+' ("mounted+root+read-only").
func (f MountFlags) String() string {
	var b strings.Builder
	for i, n := range mountFlagNames {
		if f&(1<<i) != 0 {
			if b.Len() > 0 {
				b.WriteByte('+')
			}
			b.WriteString(n)
		}
	}
	if b.Len() == 0 {
		return "unused"
	}
	return b.String()
}

// ErrNoMtab is the library's EXT2_ET_NO_MTAB_FILE: neither /proc/mounts
// nor /etc/mtab exists.
var ErrNoMtab = errors.New("Can't find mtab file")

// rootTestFile is created and removed in / to learn whether the root is
// writable: the mount table may be stale when the root is read-only.
const rootTestFile = "/.ismount-test-file"

// loopMajor is the block major number of the loop driver.
const loopMajor = 7

// CheckIfMounted tells how path is in use, deciding as the library's
// ext2fs_check_mount_point does on Linux:
//   - EXT2FS_PRETEND_RO_MOUNT and EXT2FS_PRETEND_RW_MOUNT answer without
//     looking (a mounted read-only or read-write filesystem); with
//     EXT2FS_PRETEND_ROOTFS as well, the answer is IsRoot alone.
//   - A block device that opens with O_EXCL is not in use at all; one that
//     fails with EBUSY is Busy, whatever else is found.
//   - A device listed in /proc/swaps is Mounted and Swap.
//   - Otherwise the mount table (/proc/mounts, else /etc/mtab) is searched
//     for an entry naming path, naming a block device with path's number
//     and mounted on a directory of that device, naming a loop device
//     whose backing file is path, or naming path's own file. An entry
//     gives Mounted, ReadOnly with the "ro" option, ExtFS for an ext type.
//   - A block device listed nowhere that holds the root directory is
//     Mounted and IsRoot.
//   - A root filesystem is ReadOnly when a file cannot be created in /
//     (EROFS).
//
// With no mount table the answer is ErrNoMtab, or not mounted when
// EXT2FS_NO_MTAB_OK is set.
func CheckIfMounted(path string) (MountFlags, error) {
	if os.Getenv("EXT2FS_PRETEND_RO_MOUNT") != "" {
		if os.Getenv("EXT2FS_PRETEND_ROOTFS") != "" {
			return IsRoot, nil
		}
		return Mounted | ReadOnly, nil
	}
	if os.Getenv("EXT2FS_PRETEND_RW_MOUNT") != "" {
		if os.Getenv("EXT2FS_PRETEND_ROOTFS") != "" {
			return IsRoot, nil
		}
		return Mounted, nil
	}
	busy := false
	var st syscall.Stat_t
	if syscall.Stat(path, &st) == nil && st.Mode&syscall.S_IFMT == syscall.S_IFBLK {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_EXCL|syscall.O_CLOEXEC, 0)
		if err == nil {
			// Nobody holds it: certainly not mounted.
			syscall.Close(fd)
			return 0, nil
		}
		busy = err == syscall.EBUSY
	}
	var flags MountFlags
	if isSwap(path) {
		flags = Mounted | Swap
	} else {
		var err error
		flags, err = checkMountTable("/proc/mounts", path)
		if err != nil {
			flags, err = checkMountTable("/etc/mtab", path)
		}
		if err != nil {
			return flags, err
		}
	}
	if busy {
		flags |= Busy
	}
	return flags, nil
}

// fileID is what the mount table is matched against: a block device's
// number, or a file's device and inode.
type fileID struct {
	rdev     uint64 // block device number, 0 for a file
	dev, ino uint64 // the file's, 0 for a block device
}

func statID(path string) fileID {
	var st syscall.Stat_t
	if syscall.Stat(path, &st) != nil {
		return fileID{}
	}
	if st.Mode&syscall.S_IFMT == syscall.S_IFBLK {
		return fileID{rdev: st.Rdev}
	}
	return fileID{dev: st.Dev, ino: st.Ino}
}

// checkMountTable searches one mount table (fstab format) for path.
func checkMountTable(table, path string) (MountFlags, error) {
	f, err := os.Open(table)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			if os.Getenv("EXT2FS_NO_MTAB_OK") != "" {
				return 0, nil
			}
			return 0, ErrNoMtab
		}
		var pe *os.PathError
		if errors.As(err, &pe) {
			return 0, pe.Err
		}
		return 0, err
	}
	defer f.Close()
	id := statID(path)
	ent, found := findMountEntry(f, path, id)
	if !found {
		// /proc/mounts may name the root only as /dev/root: compare with
		// the device of the root directory.
		var st syscall.Stat_t
		if id.rdev != 0 && syscall.Stat("/", &st) == nil && st.Dev == id.rdev {
			return Mounted | rootFlags(), nil
		}
		return 0, nil
	}
	flags := Mounted
	if ent.hasOption("ro") {
		flags |= ReadOnly
	}
	if ent.dir == "/" {
		flags |= rootFlags()
	}
	switch ent.typ {
	case "ext2", "ext3", "ext4":
		flags |= ExtFS
	}
	return flags, nil
}

// rootFlags are the flags of the root filesystem: IsRoot, and ReadOnly
// when / does not take a new file.
func rootFlags() MountFlags {
	flags := IsRoot
	fd, err := syscall.Open(rootTestFile, syscall.O_RDWR|syscall.O_CREAT|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		if err == syscall.EROFS {
			flags |= ReadOnly
		}
	} else {
		syscall.Close(fd)
	}
	syscall.Unlink(rootTestFile)
	return flags
}

// mountEntry is one line of a mount table.
type mountEntry struct {
	fsname, dir, typ, opts string
}

// hasOption reports whether opt is one of the entry's options, alone or
// with a value (as hasmntopt).
func (e mountEntry) hasOption(opt string) bool {
	for o := range strings.SplitSeq(e.opts, ",") {
		if name, _, _ := strings.Cut(o, "="); name == opt {
			return true
		}
	}
	return false
}

// findMountEntry returns the first entry of the table that is path.
func findMountEntry(r io.Reader, path string, id fileID) (mountEntry, bool) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		ent, ok := parseMountLine(sc.Text())
		if !ok || !strings.HasPrefix(ent.fsname, "/") {
			continue
		}
		if ent.fsname == path {
			var dst syscall.Stat_t
			if syscall.Stat(ent.dir, &dst) != nil {
				continue
			}
			if id.rdev != 0 && id.rdev != dst.Dev {
				continue // a stale entry: path is not what is mounted there
			}
			return ent, true
		}
		var st syscall.Stat_t
		if syscall.Stat(ent.fsname, &st) != nil {
			continue
		}
		if st.Mode&syscall.S_IFMT == syscall.S_IFBLK {
			if id.rdev != 0 && id.rdev == st.Rdev {
				var dst syscall.Stat_t
				if syscall.Stat(ent.dir, &dst) != nil {
					continue
				}
				if id.rdev == dst.Dev {
					return ent, true
				}
			}
			if loopBacks(ent.fsname, st.Rdev, id) {
				return ent, true
			}
		} else if id.dev != 0 && id.dev == st.Dev && id.ino == st.Ino {
			return ent, true
		}
	}
	return mountEntry{}, false
}

// parseMountLine splits a mount table line into its fields, decoding the
// octal escapes the kernel writes for blanks and backslashes.
func parseMountLine(line string) (mountEntry, bool) {
	line = strings.TrimLeft(line, " \t")
	if line == "" || line[0] == '#' {
		return mountEntry{}, false
	}
	f := strings.Fields(line)
	if len(f) < 4 {
		return mountEntry{}, false
	}
	return mountEntry{fsname: unescapeMount(f[0]), dir: unescapeMount(f[1]), typ: unescapeMount(f[2]), opts: unescapeMount(f[3])}, true
}

func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	r := strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`, `\\`, `\`)
	return r.Replace(s)
}

// loopInfo64 is the kernel's struct loop_info64, of which only the
// backing file's device and inode are used.
type loopInfo64 struct {
	device, inode, rdevice, offset, sizeLimit  uint64
	number, encryptType, encryptKeySize, flags uint32
	fileName, cryptName                        [64]byte
	encryptKey                                 [32]byte
	init                                       [2]uint64
}

// loopGetStatus64 is the LOOP_GET_STATUS64 ioctl request number.
const loopGetStatus64 = 0x4C05

// loopBacks reports whether the loop device dev (number rdev) is backed
// by the file id names.
func loopBacks(dev string, rdev uint64, id fileID) bool {
	if major(rdev) != loopMajor {
		return false
	}
	fd, err := syscall.Open(dev, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer syscall.Close(fd)
	var info loopInfo64
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), loopGetStatus64, uintptr(unsafe.Pointer(&info))); e != 0 {
		return false
	}
	return info.device == id.dev && info.inode == id.ino
}

// isSwap reports whether path is listed in /proc/swaps, by name or as the
// same block device.
func isSwap(path string) bool {
	f, err := os.Open("/proc/swaps")
	if err != nil {
		return false
	}
	defer f.Close()
	id := statID(path)
	sc := bufio.NewScanner(f)
	first := true
	for sc.Scan() {
		line := sc.Text()
		if first {
			first = false
			if strings.HasPrefix(line, "Filename\t") || line == "" {
				continue // the header (old kernels left it out)
			}
		}
		name, _, _ := strings.Cut(line, " ")
		name, _, _ = strings.Cut(name, "\t")
		if name == path {
			return true
		}
		var st syscall.Stat_t
		if id.rdev != 0 && syscall.Stat(name, &st) == nil && st.Mode&syscall.S_IFMT == syscall.S_IFBLK && st.Rdev == id.rdev {
			return true
		}
	}
	return false
}

func major(rdev uint64) uint64 { return (rdev>>8)&0xfff | (rdev>>32)&^0xfff }
