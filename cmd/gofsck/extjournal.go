package main

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"gofsck/internal/blockdev"
	"gofsck/internal/check"
	"gofsck/internal/fs"
	"gofsck/internal/ondisk"
)

// External journal devices: finding the device (e2fsck's -j, or blkid's
// lookup by UUID and then by device number when -j is absent) and opening
// it so that the check can read it and a repair can write it.
//
// The lookup by UUID reads the ext2 superblock of every block device the
// kernel lists in /proc/partitions (loop, disk, partition, device-mapper
// and md devices alike) and takes the first that is a journal device
// (journal_dev feature) with the filesystem's s_journal_uuid, as
// `blkid -t UUID=... ` would find it; blkid's cache and its priorities
// between devices with the same UUID are not emulated. The lookup by
// device number finds the block special file under /dev whose device
// number is s_journal_dev, as blkid_devno_to_devname does; that device is
// then checked like any other (it need not be a journal at all). A -j
// argument of the form UUID=... or LABEL=... is resolved the same way
// (any block device with that UUID or volume label).

// extJournal is the external journal device of a run: nil when the
// filesystem has none or none was found.
type extJournal struct {
	path string
	hint check.JournalHint
	dev  *blockdev.File
	ov   *blockdev.Overlay // pending writes of a repair run; nil with -n
}

// journalDevice is what the check reads and writes: the Overlay in a
// repair run, the device itself otherwise (nil when there is none).
func (x *extJournal) journalDevice() journalDev {
	switch {
	case x == nil || x.dev == nil:
		return nil
	case x.ov != nil:
		return x.ov
	}
	return readOnlyDev{x.dev}
}

// journalDev is check.JournalDevice (named here to keep the nil interface
// distinct from a nil pointer).
type journalDev interface {
	io.ReaderAt
	io.WriterAt
}

// readOnlyDev refuses writes: a read-only run never writes the journal.
type readOnlyDev struct{ *blockdev.File }

func (readOnlyDev) WriteAt([]byte, int64) (int, error) { return 0, syscall.EROFS }

// flush writes the journal's pending writes and syncs it.
func (x *extJournal) flush() error {
	if x == nil || x.ov == nil || !x.ov.Dirty() {
		return nil
	}
	if err := x.ov.Flush(x.dev); err != nil {
		return err
	}
	return x.dev.Sync()
}

// discard drops the journal's pending writes.
func (x *extJournal) discard() {
	if x != nil && x.ov != nil {
		x.ov.Discard()
	}
}

// close closes the device.
func (x *extJournal) close() {
	if x != nil && x.dev != nil {
		x.dev.Close()
	}
}

// findExtJournal resolves the external journal of f as e2fsck does before
// it checks the journal: the -j argument (a path, or UUID=/LABEL= looked
// up), else the device with s_journal_uuid, else the device numbered
// s_journal_dev. It returns the path ("" when nothing was found) and false
// when a -j tag could not be resolved (e2fsck's "Unable to resolve").
func findExtJournal(o *options, f *fs.FS) (string, bool) {
	if o.journal != "" {
		return resolveJournalArg(o.journal)
	}
	if f.SB.JournalUUID() == [16]byte{} {
		return "", true
	}
	if p := journalByUUID(f); p != "" {
		return p, true
	}
	if dev := f.SB.JournalDev(); dev != 0 {
		return devnoToPath(uint64(dev)), true
	}
	return "", true
}

// resolveJournalArg is e2fsck's get_devname on the -j argument: a path
// as given, or the block device a UUID=... or LABEL=... tag names ("" and
// false when none does).
func resolveJournalArg(arg string) (string, bool) {
	name, value, tagged := strings.Cut(arg, "=")
	if !tagged || (name != "UUID" && name != "LABEL") {
		return arg, true
	}
	p := scanBlockDevices(func(sb ondisk.Superblock) bool {
		if name == "UUID" {
			u := sb.UUID()
			return strings.EqualFold(formatUUID(u[:]), value)
		}
		return strings.TrimRight(string(sb.VolumeName()), "\x00") == value
	})
	return p, p != ""
}

// parseJournalArg resolves -j while the options are parsed, as e2fsck
// does (before anything else is printed); false after printing why the
// run ends.
func parseJournalArg(o *options, arg string, stderr io.Writer) bool {
	p, ok := resolveJournalArg(arg)
	if !ok {
		fatal(o, stderr, "Unable to resolve '%s'", arg)
		return false
	}
	o.journal = p
	return true
}

// journalByUUID is the block device holding the journal device with f's
// s_journal_uuid ("" when there is none).
func journalByUUID(f *fs.FS) string {
	u := f.SB.JournalUUID()
	return scanBlockDevices(func(sb ondisk.Superblock) bool {
		return sb.HasIncompat(ondisk.IncompatJournalDev) && sb.UUID() == u
	})
}

// journalHint is the device blkid finds by f's journal UUID, for the
// superblock hint check (e2fsck looks it up even with -j).
func journalHint(f *fs.FS) check.JournalHint {
	if !f.SB.HasCompat(ondisk.CompatHasJournal) || f.SB.JournalUUID() == [16]byte{} {
		return check.JournalHint{}
	}
	p := journalByUUID(f)
	var st syscall.Stat_t
	if p == "" || syscall.Stat(p, &st) != nil {
		return check.JournalHint{}
	}
	return check.JournalHint{Found: true, Rdev: uint64(st.Rdev)}
}

// openExtJournal finds and opens the external journal of f. A device that
// cannot be opened is left to the check, which reports the error as
// e2fsck does; ok is false when a -j tag could not be resolved (the run
// ends).
func openExtJournal(o *options, f *fs.FS, repair bool, stderr io.Writer) (x *extJournal, ok bool) {
	if o.journal == "" && f.SB.JournalUUID() == [16]byte{} {
		return nil, true
	}
	path, ok := findExtJournal(o, f)
	if !ok {
		fatal(o, stderr, "Unable to resolve '%s'", o.journal)
		return nil, false
	}
	x = &extJournal{path: path, hint: journalHint(f)}
	if path == "" {
		return x, true
	}
	d, err := blockdev.Open(path, !repair, repair && exclusiveOpen(o))
	if err != nil {
		return x, true
	}
	x.dev = d
	if repair {
		x.ov = blockdev.NewOverlay(d)
	}
	return x, true
}

// scanBlockDevices returns the first block device listed in
// /proc/partitions whose ext2 superblock satisfies match.
func scanBlockDevices(match func(ondisk.Superblock) bool) string {
	pf, err := os.Open("/proc/partitions")
	if err != nil {
		return ""
	}
	defer pf.Close()
	sc := bufio.NewScanner(pf)
	buf := make([]byte, ondisk.SuperblockSize)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 4 || fields[0] == "major" {
			continue
		}
		path := filepath.Join("/dev", fields[3])
		if readSuper(path, buf) && match(ondisk.Superblock(buf)) {
			return path
		}
	}
	return ""
}

// readSuper reads the ext2 superblock of path into buf and reports whether
// it has the ext2 magic number.
func readSuper(path string, buf []byte) bool {
	fi, err := os.Stat(path)
	if err != nil || fi.Mode()&os.ModeDevice == 0 || fi.Mode()&os.ModeCharDevice != 0 {
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	if n, _ := f.ReadAt(buf, ondisk.SuperblockOffset); n != len(buf) {
		return false
	}
	return binary.LittleEndian.Uint16(buf[0x38:]) == ondisk.Magic
}

// devnoToPath finds the block special file under /dev whose device number
// is devno (blkid_devno_to_devname); "" when there is none.
func devnoToPath(devno uint64) string {
	var found string
	var walk func(dir string, depth int)
	walk = func(dir string, depth int) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range entries {
			if found != "" {
				return
			}
			p := filepath.Join(dir, e.Name())
			if e.IsDir() {
				if depth < 2 && e.Type()&os.ModeSymlink == 0 {
					walk(p, depth+1)
				}
				continue
			}
			if e.Type()&os.ModeDevice == 0 || e.Type()&os.ModeCharDevice != 0 {
				continue
			}
			var st syscall.Stat_t
			if syscall.Stat(p, &st) == nil && uint64(st.Rdev) == devno {
				found = p
			}
		}
	}
	walk("/dev", 0)
	return found
}

// formatUUID prints a UUID as blkid does.
func formatUUID(u []byte) string {
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}

// pathOr returns the journal's path, or def when none was found.
func (x *extJournal) pathOr(def string) string {
	if x == nil || x.path == "" {
		return def
	}
	return x.path
}

// journalHint returns the device found by the journal's UUID.
func (x *extJournal) journalHint() check.JournalHint {
	if x == nil {
		return check.JournalHint{}
	}
	return x.hint
}
