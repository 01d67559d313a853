// Package dump renders filesystem metadata as text for cmd/fsinfo: the
// superblock as dumpe2fs -h prints it (same field names, same values, same
// order), the journal superblock, a per-group table, and a fragmentation
// report of the most fragmented files and directories with their block
// ranges in debugfs' stat style.
//
// Rendering takes an io.Writer; nothing here prints on its own. The
// superblock fields ondisk has no accessor for (fields only dumpe2fs cares
// about) are decoded here at named offsets of struct ext4_super_block.
package dump

import (
	"encoding/binary"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"gofsck/internal/account"
	"gofsck/internal/ondisk"
)

// Offsets of struct ext4_super_block fields without an ondisk accessor.
const (
	offDefResuid          = 0x50  // s_def_resuid
	offDefResgid          = 0x52  // s_def_resgid
	offDefaultMountOpts   = 0x100 // s_default_mount_opts
	offRaidStride         = 0x164 // s_raid_stride
	offRaidStripeWidth    = 0x170 // s_raid_stripe_width
	offKbytesWritten      = 0x178 // s_kbytes_written
	offSnapshotInum       = 0x180 // s_snapshot_inum
	offSnapshotID         = 0x184 // s_snapshot_id
	offSnapshotRBlocks    = 0x188 // s_snapshot_r_blocks_count
	offSnapshotList       = 0x190 // s_snapshot_list
	offErrorCount         = 0x194 // s_error_count
	offFirstErrorTime     = 0x198 // s_first_error_time
	offFirstErrorIno      = 0x19C // s_first_error_ino
	offFirstErrorBlock    = 0x1A0 // s_first_error_block
	offFirstErrorFunc     = 0x1A8 // s_first_error_func[32]
	offFirstErrorLine     = 0x1C8 // s_first_error_line
	offLastErrorTime      = 0x1CC // s_last_error_time
	offLastErrorIno       = 0x1D0 // s_last_error_ino
	offLastErrorLine      = 0x1D4 // s_last_error_line
	offLastErrorBlock     = 0x1D8 // s_last_error_block
	offLastErrorFunc      = 0x1E0 // s_last_error_func[32]
	offMountOpts          = 0x200 // s_mount_opts[64]
	offOverheadClusters   = 0x248 // s_overhead_clusters
	offEncryptPwSalt      = 0x258 // s_encrypt_pw_salt[16]
	offFirstErrorErrcode  = 0x27A // s_first_error_errcode
	offLastErrorErrcode   = 0x27B // s_last_error_errcode
	offJournalUUIDField   = 0xD0  // s_journal_uuid[16]
	superFlagSignedHash   = 0x1
	superFlagUnsignedHash = 0x2
	superFlagTestFS       = 0x4
	stateValid            = 0x1
	stateError            = 0x2
	defmJmode             = 0x60
)

var mntoptNames = []struct {
	bit  uint32
	name string
}{
	{0x1, "debug"}, {0x2, "bsdgroups"}, {0x4, "user_xattr"}, {0x8, "acl"},
	{0x10, "uid16"}, {0x20, "journal_data"}, {0x40, "journal_data_ordered"},
	{0x60, "journal_data_writeback"}, {0x100, "nobarrier"},
	{0x200, "block_validity"}, {0x400, "discard"}, {0x800, "nodelalloc"},
}

func mntopt(m uint32) string {
	for _, o := range mntoptNames {
		if o.bit == m {
			return o.name
		}
	}
	for i := 0; i < 32; i++ {
		if m == 1<<i {
			return "MNTOPT_" + strconv.Itoa(i)
		}
	}
	return "MNTOPT_" + strconv.Itoa(int(m))
}

// UUIDString is e2p_uuid2str: "<none>" for the null UUID.
func UUIDString(u []byte) string {
	null := true
	for _, b := range u {
		if b != 0 {
			null = false
		}
	}
	if null {
		return "<none>"
	}
	h := fmt.Sprintf("%x", u)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// ctime formats a time stamp as C's ctime does, newline included, in the
// local time zone.
func ctime(t uint32) string {
	return time.Unix(int64(t), 0).Format("Mon Jan _2 15:04:05 2006") + "\n"
}

func cstr(b []byte) string {
	if i := strings.IndexByte(string(b), 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

func intervalString(secs uint32) string {
	const (
		minute = 60
		hour   = 60 * minute
		day    = 24 * hour
		week   = 7 * day
		month  = 30 * day
	)
	if secs == 0 {
		return "<none>"
	}
	var parts []string
	plural := func(n uint32, w string) string {
		if n > 1 {
			return fmt.Sprintf("%d %ss", n, w)
		}
		return fmt.Sprintf("%d %s", n, w)
	}
	if secs >= month {
		parts = append(parts, plural(secs/month, "month"))
		secs %= month
	}
	if secs >= week {
		parts = append(parts, plural(secs/week, "week"))
		secs %= week
	}
	if secs >= day {
		parts = append(parts, plural(secs/day, "day"))
		secs %= day
	}
	if secs > 0 {
		parts = append(parts, fmt.Sprintf("%d:%02d:%02d", secs/hour, secs%hour/minute, secs%minute))
	}
	return strings.Join(parts, ", ")
}

func userName(uid uint16) string {
	if name, _, ok := account.UserByID(int(uid)); ok {
		return fmt.Sprintf("%d (user %s)", uid, name)
	}
	return fmt.Sprintf("%d (user unknown)", uid)
}

func groupName(gid uint16) string {
	if name, ok := account.GroupByID(int(gid)); ok {
		return fmt.Sprintf("%d (group %s)", gid, name)
	}
	return fmt.Sprintf("%d (group unknown)", gid)
}

var osNames = []string{"Linux", "Hurd", "Masix", "FreeBSD", "Lites"}

// WriteSuper writes the superblock as dumpe2fs -h (list_super2 in
// e2fsprogs 1.47.0) does.
func WriteSuper(w io.Writer, sb ondisk.Superblock) error {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	u16 := func(off int) uint16 { return binary.LittleEndian.Uint16(sb[off:]) }
	u32 := func(off int) uint32 { return binary.LittleEndian.Uint32(sb[off:]) }
	u64 := func(off int) uint64 { return binary.LittleEndian.Uint64(sb[off:]) }
	bs := uint32(sb.BlockSize())
	ipg := sb.InodesPerGroup()
	isz := uint32(sb.InodeSize())
	ibpg := (uint64(ipg)*uint64(isz) + uint64(bs) - 1) / uint64(bs)

	if v := sb.VolumeName(); len(v) > 0 {
		p("Filesystem volume name:   %s\n", v)
	} else {
		p("Filesystem volume name:   <none>\n")
	}
	if v := sb.LastMounted(); len(v) > 0 {
		p("Last mounted on:          %s\n", v)
	} else {
		p("Last mounted on:          <not available>\n")
	}
	uuid := sb.UUID()
	p("Filesystem UUID:          %s\n", UUIDString(uuid[:]))
	p("Filesystem magic number:  0x%04X\n", sb.Magic())
	p("Filesystem revision #:    %d", sb.RevLevel())
	switch sb.RevLevel() {
	case 0:
		p(" (original)\n")
	case 1:
		p(" (dynamic)\n")
	default:
		p(" (unknown)\n")
	}
	feats := ondisk.FeatureNames(sb.FeatureCompat(), sb.FeatureIncompat(), sb.FeatureRoCompat())
	if len(feats) == 0 {
		feats = []string{"(none)"}
	}
	p("Filesystem features:      %s\n", strings.Join(feats, " "))
	if fl := sb.Flags(); fl != 0 {
		p("Filesystem flags:         ")
		found := false
		for _, f := range []struct {
			bit  uint32
			name string
		}{{superFlagSignedHash, "signed_directory_hash "}, {superFlagUnsignedHash, "unsigned_directory_hash "}, {superFlagTestFS, "test_filesystem "}} {
			if fl&f.bit != 0 {
				p("%s", f.name)
				found = true
			}
		}
		if found {
			p("\n")
		} else {
			p("(none)\n")
		}
	}
	p("Default mount options:   ")
	mask, printed := u32(offDefaultMountOpts), 0
	if mask&defmJmode != 0 {
		p(" %s", mntopt(mask&defmJmode))
		printed++
	}
	for i := 0; i < 32; i++ {
		m := uint32(1) << i
		if m&defmJmode == 0 && mask&m != 0 {
			p(" %s", mntopt(m))
			printed++
		}
	}
	if printed == 0 {
		p(" (none)")
	}
	p("\n")
	if mo := cstr(sb[offMountOpts : offMountOpts+64]); mo != "" {
		p("Mount options:            %s\n", mo)
	}
	p("Filesystem state:        ")
	if sb.State()&stateValid != 0 {
		p(" clean")
	} else {
		p(" not clean")
	}
	if sb.State()&stateError != 0 {
		p(" with errors")
	}
	p("\n")
	p("Errors behavior:          ")
	switch sb.Errors() {
	case 1:
		p("Continue")
	case 2:
		p("Remount read-only")
	case 3:
		p("Panic")
	default:
		p("Unknown (continue)")
	}
	p("\n")
	osName := "(unknown os)"
	if c := sb.CreatorOS(); c < uint32(len(osNames)) {
		osName = osNames[c]
	}
	p("Filesystem OS type:       %s\n", osName)
	p("Inode count:              %d\n", sb.InodesCount())
	p("Block count:              %d\n", sb.BlocksCount())
	p("Reserved block count:     %d\n", sb.RBlocksCount())
	if v := u32(offOverheadClusters); v != 0 {
		p("Overhead clusters:        %d\n", v)
	}
	p("Free blocks:              %d\n", sb.FreeBlocksCount())
	p("Free inodes:              %d\n", sb.FreeInodesCount())
	p("First block:              %d\n", sb.FirstDataBlock())
	p("Block size:               %d\n", bs)
	bigalloc := sb.HasRoCompat(ondisk.RoCompatBigalloc)
	csize := uint64(1024) << min(sb.LogClusterSize(), 40)
	if bigalloc {
		p("Cluster size:             %d\n", csize)
	} else {
		p("Fragment size:            %d\n", csize)
	}
	if sb.Is64bit() {
		p("Group descriptor size:    %d\n", sb.RawDescSize())
	}
	if v := sb.ReservedGdtBlocks(); v != 0 {
		p("Reserved GDT blocks:      %d\n", v)
	}
	p("Blocks per group:         %d\n", sb.BlocksPerGroup())
	if bigalloc {
		p("Clusters per group:       %d\n", sb.ClustersPerGroup())
	} else {
		p("Fragments per group:      %d\n", sb.ClustersPerGroup())
	}
	p("Inodes per group:         %d\n", ipg)
	p("Inode blocks per group:   %d\n", uint32(ibpg))
	if v := u16(offRaidStride); v != 0 {
		p("RAID stride:              %d\n", v)
	}
	if v := u32(offRaidStripeWidth); v != 0 {
		p("RAID stripe width:        %d\n", v)
	}
	if v := sb.FirstMetaBG(); v != 0 {
		p("First meta block group:   %d\n", v)
	}
	if v := sb.LogGroupsPerFlex(); v != 0 {
		p("Flex block group size:    %d\n", uint64(1)<<min(v, 63))
	}
	if v := sb.MkfsTime(); v != 0 {
		p("Filesystem created:       %s", ctime(v))
	}
	if v := sb.Mtime(); v != 0 {
		p("Last mount time:          %s", ctime(v))
	} else {
		p("Last mount time:          n/a\n")
	}
	p("Last write time:          %s", ctime(sb.Wtime()))
	p("Mount count:              %d\n", sb.MntCount())
	p("Maximum mount count:      %d\n", sb.MaxMntCount())
	p("Last checked:             %s", ctime(sb.LastCheck()))
	p("Check interval:           %d (%s)\n", sb.CheckInterval(), intervalString(sb.CheckInterval()))
	if sb.CheckInterval() != 0 {
		p("Next check after:         %s", ctime(sb.LastCheck()+sb.CheckInterval()))
	}
	if kb := u64(offKbytesWritten); kb != 0 {
		p("Lifetime writes:          ")
		switch {
		case kb < 1<<13:
			p("%d kB\n", kb)
		case kb < 1<<23:
			p("%d MB\n", (kb+1<<9)>>10)
		case kb < 1<<33:
			p("%d GB\n", (kb+1<<19)>>20)
		case kb < 1<<43:
			p("%d TB\n", (kb+1<<29)>>30)
		default:
			p("%d PB\n", (kb+1<<39)>>40)
		}
	}
	p("Reserved blocks uid:      %s\n", userName(u16(offDefResuid)))
	p("Reserved blocks gid:      %s\n", groupName(u16(offDefResgid)))
	if sb.RevLevel() >= 1 {
		p("First inode:              %d\n", sb.RawFirstIno())
		p("Inode size:\t          %d\n", binary.LittleEndian.Uint16(sb[0x58:]))
		if v := sb.MinExtraIsize(); v != 0 {
			p("Required extra isize:     %d\n", v)
		}
		if v := sb.WantExtraIsize(); v != 0 {
			p("Desired extra isize:      %d\n", v)
		}
	}
	if j := sb.JournalUUID(); UUIDString(j[:]) != "<none>" {
		p("Journal UUID:             %s\n", UUIDString(j[:]))
	}
	if v := sb.JournalInum(); v != 0 {
		p("Journal inode:            %d\n", v)
	}
	if v := sb.JournalDev(); v != 0 {
		p("Journal device:\t          0x%04x\n", v)
	}
	if v := sb.LastOrphan(); v != 0 {
		p("First orphan inode:       %d\n", v)
	}
	if sb.HasCompat(ondisk.CompatDirIndex) || sb.DefHashVersion() != 0 {
		name := "HASHALG_" + strconv.Itoa(int(sb.DefHashVersion()))
		if h := sb.DefHashVersion(); h < 3 {
			name = []string{"legacy", "half_md4", "tea"}[h]
		}
		p("Default directory hash:   %s\n", name)
	}
	if s := UUIDString(sb[0xEC : 0xEC+16]); s != "<none>" {
		p("Directory Hash Seed:      %s\n", s)
	}
	if v := sb.JnlBackupType(); v != 0 {
		if v == 1 {
			p("Journal backup:           inode blocks\n")
		} else {
			p("Journal backup:           type %d\n", v)
		}
	}
	if b0, b1 := sb.BackupBG(0), sb.BackupBG(1); b0 != 0 || b1 != 0 {
		p("Backup block groups:      ")
		if b0 != 0 {
			p("%d ", b0)
		}
		if b1 != 0 {
			p("%d ", b1)
		}
		p("\n")
	}
	if v := u32(offSnapshotInum); v != 0 {
		p("Snapshot inode:           %d\n", v)
		p("Snapshot ID:              %d\n", u32(offSnapshotID))
		p("Snapshot reserved blocks: %d\n", u64(offSnapshotRBlocks))
	}
	if v := u32(offSnapshotList); v != 0 {
		p("Snapshot list head:       %d\n", v)
	}
	if v := u32(offErrorCount); v != 0 {
		p("FS Error count:           %d\n", v)
	}
	for _, e := range []struct {
		label                          string
		timeOff, funcOff, lineOff, ino int
		blk, code                      int
	}{
		{"First", offFirstErrorTime, offFirstErrorFunc, offFirstErrorLine, offFirstErrorIno, offFirstErrorBlock, offFirstErrorErrcode},
		{"Last", offLastErrorTime, offLastErrorFunc, offLastErrorLine, offLastErrorIno, offLastErrorBlock, offLastErrorErrcode},
	} {
		t := u32(e.timeOff)
		if t == 0 {
			continue
		}
		pad := func(s string) string { return fmt.Sprintf("%-26s", s) }
		p("%s%s", pad(e.label+" error time:"), ctime(t))
		p("%s%s\n", pad(e.label+" error function:"), cstr(sb[e.funcOff:e.funcOff+32]))
		p("%s%d\n", pad(e.label+" error line #:"), u32(e.lineOff))
		if v := u32(e.ino); v != 0 {
			p("%s%d\n", pad(e.label+" error inode #:"), v)
		}
		if v := u64(e.blk); v != 0 {
			p("%s%d\n", pad(e.label+" error block #:"), v)
		}
		if v := sb[e.code]; v != 0 {
			p("%s%s\n", pad(e.label+" error err:"), errcodeString(v))
		}
	}
	if sb.HasIncompat(ondisk.IncompatMMP) {
		p("MMP block number:         %d\n", sb.MMPBlock())
		p("MMP update interval:      %d\n", sb.MMPInterval())
	}
	for i, q := range []uint32{sb.UsrQuotaInum(), sb.GrpQuotaInum(), sb.PrjQuotaInum()} {
		if q != 0 {
			p("%-26s%d\n", []string{"User quota inode:", "Group quota inode:", "Project quota inode:"}[i], q)
		}
	}
	if sb.HasRoCompat(ondisk.RoCompatMetadataCsum) {
		ct := "unknown"
		if sb.ChecksumType() == 1 {
			ct = "crc32c"
		}
		p("Checksum type:            %s\n", ct)
		p("Checksum:                 0x%08x\n", sb.Checksum())
	}
	if s := UUIDString(sb[offEncryptPwSalt : offEncryptPwSalt+16]); s != "<none>" {
		p("Encryption PW Salt:       %s\n", s)
	}
	if sb.HasIncompat(ondisk.IncompatCsumSeed) {
		p("Checksum seed:            0x%08x\n", sb.ChecksumSeedField())
	}
	if sb.HasIncompat(ondisk.IncompatCasefold) {
		enc, _ := sb.Encoding()
		name := "UNKNOWN_ENCODING_" + strconv.Itoa(int(enc))
		if enc == 1 {
			name = "utf8-12.1"
		}
		p("Character encoding:       %s\n", name)
	}
	if sb.HasCompat(ondisk.CompatOrphanFile) {
		p("Orphan file inode:        %d\n", sb.OrphanFileInum())
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// errcodeString names the kernel's s_*_error_errcode values (EXT4_ERR_*).
func errcodeString(c uint8) string {
	names := []string{"", "EIO", "ENOMEM", "EFSBADCRC", "EFSCORRUPTED", "ENOSPC", "ENOKEY",
		"EROFS", "EFBIG", "EEXIST", "ERANGE", "EOVERFLOW", "EBUSY", "ENOTDIR",
		"ENOTEMPTY", "ESHUTDOWN", "EFAULT"}
	if int(c) < len(names) {
		return names[c]
	}
	return "EXT4_ERR_" + strconv.Itoa(int(c))
}
