package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// FeatureSet is a base image recipe: mke2fs arguments for a small
// filesystem populated from a fixed tree.
type FeatureSet struct {
	Name string
	Args []string // mke2fs arguments before -d DIR IMAGE SIZE
	Size string   // mke2fs size argument
}

// FeatureSets are the campaign's base images.
var FeatureSets = []FeatureSet{
	{"ext2", []string{"-t", "ext2"}, "8M"},
	{"ext3", []string{"-t", "ext3"}, "8M"},
	{"ext4", []string{"-t", "ext4"}, "8M"},
	{"ext4-1k", []string{"-t", "ext4", "-b", "1024"}, "8M"},
	{"ext4-nocsum", []string{"-t", "ext4", "-O", "^metadata_csum"}, "8M"},
	{"ext4-noflex", []string{"-t", "ext4", "-O", "^flex_bg"}, "8M"},
	{"ext4-inline", []string{"-t", "ext4", "-O", "inline_data"}, "8M"},
	{"ext4-nojournal", []string{"-t", "ext4", "-O", "^has_journal"}, "8M"},
	{"bigalloc", []string{"-t", "ext4", "-O", "bigalloc", "-C", "16384"}, "16M"},
}

// mke2fsConf pins mke2fs's defaults (the same as internal/testfs's), so
// that a base image does not depend on the machine's /etc/mke2fs.conf.
const mke2fsConf = `[defaults]
	base_features = sparse_super,large_file,filetype,resize_inode,dir_index,ext_attr
	default_mntopts = acl,user_xattr
	enable_periodic_fsck = 0
	blocksize = 4096
	inode_size = 256
	inode_ratio = 16384

[fs_types]
	ext3 = {
		features = has_journal
	}
	ext4 = {
		features = has_journal,extent,huge_file,flex_bg,metadata_csum,64bit,dir_nlink,extra_isize
	}
`

// FixedTime is the clock both checkers run with (E2FSCK_TIME) and the
// time mke2fs stamps base images with (E2FSPROGS_FAKE_TIME).
const FixedTime = 1700000000

// populateTree fills dir with a fixed tree: nested directories, files of
// 0 B to 300 KiB (inline-sized, one block, indirect or multi-extent), a
// sparse file, a 600-entry directory, symbolic links (fast and slow), hard
// links, and xattrs when the host filesystem takes them (user.* on tmpfs).
func populateTree(dir string) error {
	r := rng(42)
	data := make([]byte, 300<<10)
	for i := range data {
		data[i] = byte(r.next())
	}
	write := func(p string, n int) error {
		return os.WriteFile(filepath.Join(dir, p), data[:n], 0o644)
	}
	for _, d := range []string{"a", "a/b", "a/b/c", "big", "links"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			return err
		}
	}
	sizes := []int{0, 1, 60, 100, 500, 1024, 4095, 4096, 5000, 12288, 50000, 70000, 300 << 10}
	for i, n := range sizes {
		p := fmt.Sprintf("a/f%d", i)
		if i%3 == 1 {
			p = fmt.Sprintf("a/b/f%d", i)
		} else if i%3 == 2 {
			p = fmt.Sprintf("a/b/c/f%d", i)
		}
		if err := write(p, n); err != nil {
			return err
		}
		v := bytes.Repeat([]byte{byte('a' + i)}, 20+i*300%900)
		_ = unix.Setxattr(filepath.Join(dir, p), "user.x"+strconv.Itoa(i), v, 0)
	}
	for i := 0; i < 600; i++ {
		if err := write(fmt.Sprintf("big/entry-with-a-longish-name-%04d", i), i%3*100); err != nil {
			return err
		}
	}
	sp, err := os.Create(filepath.Join(dir, "sparse"))
	if err != nil {
		return err
	}
	for i := int64(0); i < 8; i++ {
		if _, err := sp.WriteAt(data[:4096], i*256<<10); err != nil {
			sp.Close()
			return err
		}
	}
	if err := sp.Close(); err != nil {
		return err
	}
	for i, target := range []string{"a/f0", strings.Repeat("long/", 30) + "target"} {
		if err := os.Symlink(target, filepath.Join(dir, "links", "s"+strconv.Itoa(i))); err != nil {
			return err
		}
	}
	for i := 0; i < 3; i++ {
		if err := os.Link(filepath.Join(dir, "a/f3"), filepath.Join(dir, "links", "h"+strconv.Itoa(i))); err != nil {
			return err
		}
	}
	return nil
}

// buildBase makes the base image of fs in dir and returns its path.
func buildBase(dir string, f FeatureSet) (string, error) {
	tree := filepath.Join(dir, f.Name+".tree")
	os.RemoveAll(tree)
	if err := os.Mkdir(tree, 0o755); err != nil {
		return "", err
	}
	defer os.RemoveAll(tree)
	if err := populateTree(tree); err != nil {
		return "", err
	}
	conf := filepath.Join(dir, "mke2fs.conf")
	if err := os.WriteFile(conf, []byte(mke2fsConf), 0o644); err != nil {
		return "", err
	}
	img := filepath.Join(dir, f.Name+".img")
	os.Remove(img)
	args := append([]string{"-q", "-F", "-U", "6b33f586-a183-4383-921d-30da3fef2e1c", "-E", "hash_seed=6b33f586-a183-4383-921d-30da3fef2e1d"}, f.Args...)
	args = append(args, "-N", "2048", "-d", tree, img, f.Size)
	cmd := exec.Command("mke2fs", args...)
	cmd.Env = append(os.Environ(), "MKE2FS_CONFIG="+conf, fmt.Sprintf("E2FSPROGS_FAKE_TIME=%d", FixedTime), "TZ=UTC", "LC_ALL=C")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("mke2fs %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return img, nil
}

// checkerEnv is the environment both checkers run with.
func checkerEnv(conf string) []string {
	var env []string
	for _, kv := range os.Environ() {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "E2FSCK_CONFIG", "E2FSCK_TIME", "E2FSPROGS_FAKE_TIME", "TZ", "LANG", "LC_ALL":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "E2FSCK_CONFIG="+conf, fmt.Sprintf("E2FSCK_TIME=%d", FixedTime), "TZ=UTC", "LC_ALL=C")
}

// runResult is one checker run.
type runResult struct {
	out, stderr string
	exit        int
	timedOut    bool
}

// runChecker runs prog args... with a timeout and returns its stdout (and
// stderr apart).
func runChecker(prog string, env []string, timeout time.Duration, args ...string) runResult {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Env = env
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	res := runResult{out: so.String(), stderr: se.String()}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		res.exit, res.timedOut = 124, true
	case err == nil:
	case errors.As(err, &ee):
		res.exit = ee.ExitCode()
		if res.exit < 0 {
			res.exit = 137
		}
	default:
		res.exit = 127
		res.stderr += err.Error()
	}
	return res
}

var (
	nowRe         = regexp.MustCompile(`now = [^)]*\)`)
	unsupportedRe = regexp.MustCompile(`the fix for problem (PR_\w+) \(0x[0-9a-f]+\) is not implemented yet`)
	digitsRe      = regexp.MustCompile(`[0-9]+`)
)

// Transcript normalises a checker's stdout for comparison: the version
// banner goes, the image path and program name become IMG and PROG.
func Transcript(out, img string) string {
	var b strings.Builder
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "e2fsck 1.") || strings.HasPrefix(l, "gofsck 0.") {
			continue
		}
		l = strings.ReplaceAll(l, img, "IMG")
		for _, p := range []string{"/usr/sbin/e2fsck", "/sbin/e2fsck", "e2fsck", "gofsck"} {
			l = strings.ReplaceAll(l, p, "PROG")
		}
		b.WriteString(nowRe.ReplaceAllString(l, "now = NOW)"))
		b.WriteByte('\n')
	}
	return b.String()
}

// firstDiff returns the first differing lines of two transcripts.
func firstDiff(e, g string) (el, gl string) {
	ea, ga := strings.Split(e, "\n"), strings.Split(g, "\n")
	for i := 0; i < len(ea) || i < len(ga); i++ {
		var a, b string
		if i < len(ea) {
			a = ea[i]
		}
		if i < len(ga) {
			b = ga[i]
		}
		if a != b {
			return a, b
		}
	}
	return "", ""
}

// superblockStamps are the superblock fields each program stamps with its
// own counters: s_wtime, s_lastcheck, s_kbytes_written, the time _hi
// bytes and the checksum over them (internal/testfs has the same list).
var superblockStamps = [][2]int{{0x30, 4}, {0x40, 4}, {0x178, 8}, {0x274, 4}, {0x3FC, 4}}

// MaskStamps zeroes the stamped superblock fields of every superblock m
// lists (primary and backups) in img.
func MaskStamps(img []byte, m *Meta) {
	for _, b := range m.Blocks[KindSuper] {
		off := m.superOffset(b)
		if off+1024 > int64(len(img)) {
			continue
		}
		for _, r := range superblockStamps {
			clear(img[off+int64(r[0]) : off+int64(r[0]+r[1])])
		}
	}
}

// Verdict is the outcome of one fuzzed image.
type Verdict struct {
	ExitAgree, TranscriptAgree bool
	ImageCompared, ImageAgree  bool
	Class                      string // "" when they agree on everything compared
	Detail                     string
}

// Compare runs e2fsck and gofsck -fy on two copies of img (in dir) and
// compares them. m lists the base image's superblocks (for masking).
func Compare(dir string, img []byte, m *Meta, gofsck, e2fsck string, env []string, mode string) (Verdict, error) {
	var v Verdict
	eimg, gimg := filepath.Join(dir, "e.img"), filepath.Join(dir, "g.img")
	for _, p := range []string{eimg, gimg} {
		if err := os.WriteFile(p, img, 0o644); err != nil {
			return v, err
		}
	}
	const timeout = 60 * time.Second
	e := runChecker(e2fsck, env, timeout, mode, eimg)
	g := runChecker(gofsck, env, timeout, mode, gimg)
	et, gt := Transcript(e.out, eimg), Transcript(g.out, gimg)
	v.Detail = fmt.Sprintf("--- e2fsck %s (exit %d)\n%s--- gofsck %s (exit %d)\n%s--- gofsck stderr\n%s", mode, e.exit, et, mode, g.exit, gt, g.stderr)
	v.ExitAgree = e.exit == g.exit
	v.TranscriptAgree = et == gt
	switch {
	case g.timedOut:
		v.Class = "gofsck timeout"
	case e.timedOut:
		v.Class = "e2fsck timeout"
	case strings.Contains(g.stderr, "panic:") || strings.Contains(g.stderr, "goroutine "):
		v.Class = "gofsck panic: " + firstLine(g.stderr[strings.Index(g.stderr, "panic:"):])
	case unsupportedRe.MatchString(g.stderr):
		v.Class = "unsupported " + unsupportedRe.FindStringSubmatch(g.stderr)[1]
	case g.exit == 8 && e.exit != 8:
		v.Class = fmt.Sprintf("gofsck exit 8 (e2fsck %d): %s", e.exit, firstLine(strings.TrimSpace(g.stderr)))
	case !v.TranscriptAgree:
		el, gl := firstDiff(et, gt)
		v.Class = "transcript: e2fsck " + strconv.Quote(classLine(el)) + " gofsck " + strconv.Quote(classLine(gl))
	case !v.ExitAgree:
		v.Class = fmt.Sprintf("exit: e2fsck %d gofsck %d", e.exit, g.exit)
	}
	if mode != "-fy" || v.Class != "" {
		return v, nil
	}
	// The images, when e2fsck's own result is clean.
	if again := runChecker(e2fsck, env, timeout, "-fn", eimg); again.exit != 0 {
		return v, nil
	}
	v.ImageCompared = true
	ed, err := os.ReadFile(eimg)
	if err != nil {
		return v, err
	}
	gd, err := os.ReadFile(gimg)
	if err != nil {
		return v, err
	}
	MaskStamps(ed, m)
	MaskStamps(gd, m)
	v.ImageAgree = bytes.Equal(ed, gd)
	if !v.ImageAgree {
		v.Class = "image: " + diffSummary(ed, gd, m)
	}
	return v, nil
}

// diffSummary names the kinds of the blocks where two images differ, and
// the first differing offset.
func diffSummary(a, b []byte, m *Meta) string {
	bs := int64(m.BlockSize)
	kinds := map[string]bool{}
	first := int64(-1)
	n := int64(min(len(a), len(b)))
	for blk := int64(0); blk*bs < n; blk++ {
		lo, hi := blk*bs, min((blk+1)*bs, n)
		if bytes.Equal(a[lo:hi], b[lo:hi]) {
			continue
		}
		if first < 0 {
			for i := lo; i < hi; i++ {
				if a[i] != b[i] {
					first = i
					break
				}
			}
		}
		kinds[m.kindOf(uint64(blk))] = true
	}
	var ks []string
	for k := range kinds {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return fmt.Sprintf("%s differ (first at byte %#x)", strings.Join(ks, ","), first)
}

// kindOf names the kind of block blk in the base image ("data" if none).
func (m *Meta) kindOf(blk uint64) string {
	for k := Kind(0); k < numKinds; k++ {
		for _, b := range m.Blocks[k] {
			if k == KindSuper {
				if m.superOffset(b)/int64(m.BlockSize) == int64(blk) {
					return k.String()
				}
			} else if b == blk {
				return k.String()
			}
		}
	}
	return "other"
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// classLine makes a transcript line a class key: numbers become N.
func classLine(l string) string {
	l = digitsRe.ReplaceAllString(l, "N")
	if len(l) > 90 {
		l = l[:90]
	}
	return l
}

// writeGz stores data gzip-compressed at path.
func writeGz(path string, data []byte) error {
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	if _, err := zw.Write(data); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// campaignConfig is the campaign's command line.
type campaignConfig struct {
	out            string
	dur            time.Duration
	runs           int
	firstSeed      uint64
	minB, maxB     int
	gofsck, e2fsck string
	sets           string
}

type base struct {
	set  FeatureSet
	data []byte
	meta *Meta
}

type totals struct {
	runs, exitAgree, transAgree, imgCompared, imgAgree int
	classes                                            map[string][]string // class → names
}

// campaign runs fuzzed images through both checkers until the time or
// the run count is used up, keeping every disagreement.
func campaign(c campaignConfig, stdout io.Writer) error {
	if err := os.MkdirAll(filepath.Join(c.out, "regress"), 0o755); err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "e2fuzzgo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	conf := filepath.Join(work, "e2fsck.conf")
	if err := os.WriteFile(conf, nil, 0o644); err != nil {
		return err
	}
	env := checkerEnv(conf)
	var bases []base
	for _, f := range FeatureSets {
		if c.sets != "" && !contains(strings.Split(c.sets, ","), f.Name) {
			continue
		}
		p, err := buildBase(work, f)
		if err != nil {
			return err
		}
		if r := runChecker(c.e2fsck, env, time.Minute, "-fn", p); r.exit != 0 {
			return fmt.Errorf("base %s is not clean: e2fsck -fn exit %d\n%s", f.Name, r.exit, r.out)
		}
		m, err := ReadMeta(p)
		if err != nil {
			return fmt.Errorf("base %s: %v", f.Name, err)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		bases = append(bases, base{f, data, m})
		fmt.Fprintf(stdout, "base %s: %d bytes, metadata blocks:", f.Name, len(data))
		for k := Kind(0); k < numKinds; k++ {
			fmt.Fprintf(stdout, " %s=%d", k, len(m.Blocks[k]))
		}
		fmt.Fprintln(stdout)
	}
	if len(bases) == 0 {
		return errors.New("no feature set selected")
	}
	log, err := os.OpenFile(filepath.Join(c.out, "classes.tsv"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer log.Close()
	tot := totals{classes: map[string][]string{}}
	start := time.Now()
	for seed := c.firstSeed; ; seed++ {
		if c.runs > 0 && tot.runs >= c.runs || c.dur > 0 && time.Since(start) >= c.dur {
			break
		}
		b := bases[seed%uint64(len(bases))]
		r := rng(seed ^ 0x5eed)
		nb := c.minB + r.intn(c.maxB-c.minB+1)
		img := bytes.Clone(b.data)
		Fuzz(img, b.meta, seed, nb)
		v, err := Compare(work, img, b.meta, c.gofsck, c.e2fsck, env, "-fy")
		if err != nil {
			return err
		}
		tot.runs++
		if v.ExitAgree {
			tot.exitAgree++
		}
		if v.TranscriptAgree {
			tot.transAgree++
		}
		if v.ImageCompared {
			tot.imgCompared++
			if v.ImageAgree {
				tot.imgAgree++
			}
		}
		if v.Class != "" {
			name := fmt.Sprintf("%s-s%d-b%d", b.set.Name, seed, nb)
			tot.classes[v.Class] = append(tot.classes[v.Class], name)
			if err := writeGz(filepath.Join(c.out, "regress", name+".img.gz"), img); err != nil {
				return err
			}
			os.WriteFile(filepath.Join(c.out, "regress", name+".txt"), []byte(v.Detail), 0o644)
			fmt.Fprintf(log, "%s\t%s\n", name, v.Class)
		}
		if tot.runs%50 == 0 {
			fmt.Fprintf(stdout, "%s: %s\n", time.Since(start).Round(time.Second), tot.line())
		}
	}
	fmt.Fprintf(stdout, "TOTAL: %s\n", tot.line())
	var cs []string
	for k := range tot.classes {
		cs = append(cs, k)
	}
	sort.Slice(cs, func(i, j int) bool { return len(tot.classes[cs[i]]) > len(tot.classes[cs[j]]) })
	for _, k := range cs {
		ex := tot.classes[k]
		fmt.Fprintf(stdout, "%5d  %s  (e.g. %s)\n", len(ex), k, strings.Join(ex[:min(3, len(ex))], " "))
	}
	return nil
}

func (t totals) line() string {
	pct := func(a, b int) float64 {
		if b == 0 {
			return 0
		}
		return 100 * float64(a) / float64(b)
	}
	return fmt.Sprintf("runs %d, exit agree %d (%.1f%%), transcript agree %d (%.1f%%), images compared %d, agree %d (%.1f%%)",
		t.runs, t.exitAgree, pct(t.exitAgree, t.runs), t.transAgree, pct(t.transAgree, t.runs),
		t.imgCompared, t.imgAgree, pct(t.imgAgree, t.imgCompared))
}

func contains(s []string, x string) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}
