package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"gofsck/internal/testfs"
)

// openPTY opens a pseudo-terminal pair (posix_openpt, unlockpt, ptsname).
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	fd := int(m.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		m.Close()
		t.Fatalf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		m.Close()
		t.Fatalf("ptsname: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Fatalf("open pts: %v", err)
	}
	return m, s
}

// runOnPTY runs prog with args on a new terminal and, each time the output
// ends with a question ("? "), types the next answer. It returns what the
// terminal showed (CR LF turned into LF), the exit status and the answers
// left over.
func runOnPTY(t *testing.T, prog string, answers string, args ...string) (string, int, string) {
	t.Helper()
	return runOnPTYEnv(t, prog, answers, nil, args...)
}

// runOnPTYEnv is runOnPTY with the variables of env ("NAME=value")
// replacing the test environment's.
func runOnPTYEnv(t *testing.T, prog string, answers string, env []string, args ...string) (string, int, string) {
	t.Helper()
	master, slave := openPTY(t)
	defer master.Close()
	cmd := exec.Command(prog, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	override := map[string]bool{"E2FSPROGS_FAKE_TIME": true}
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		override[k] = true
	}
	out := append([]string(nil), env...)
	for _, kv := range testfs.Env(t) {
		if k, _, _ := strings.Cut(kv, "="); !override[k] {
			out = append(out, kv)
		}
	}
	cmd.Env = out
	if err := cmd.Start(); err != nil {
		slave.Close()
		t.Fatal(err)
	}
	// The slave stays open here until the end: once the last program
	// holding it exits, a read of the master may fail with EIO before the
	// terminal has passed on the program's last output. After the program
	// exits, a marker written here follows that output through the
	// terminal; what the master shows up to the marker is all of it.
	defer slave.Close()
	exited := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()

	var mu sync.Mutex
	var shown bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			mu.Lock()
			shown.Write(buf[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	// Answer each new question once its prompt is on the screen.
	asked := 0
	deadline := time.Now().Add(testfs.WallBackstop(0)) // catches a hang only
	for {
		select {
		case <-exited:
			goto finished
		case <-done:
			t.Fatalf("reading the terminal failed while %s ran; screen:\n%s", prog, shown.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("%s did not finish; screen:\n%s", prog, shown.String())
		}
		mu.Lock()
		s := shown.String()
		mu.Unlock()
		if q := strings.Count(s, "? "); q > asked && strings.HasSuffix(s, "? ") {
			asked = q
			a := byte('\n')
			if answers != "" {
				a, answers = answers[0], answers[1:]
			}
			if _, err := master.Write([]byte{a}); err != nil {
				t.Fatal(err)
			}
		}
	}
finished:
	const marker = "\x00end of the program's output\x00"
	if _, err := slave.Write([]byte(marker)); err != nil {
		t.Fatal(err)
	}
	var screen string
	for backstop := time.Now().Add(testfs.WallBackstop(0)); ; time.Sleep(time.Millisecond) {
		mu.Lock()
		screen = shown.String()
		mu.Unlock()
		if i := strings.Index(screen, marker); i >= 0 {
			screen = screen[:i]
			break
		}
		if time.Now().After(backstop) {
			t.Fatalf("the terminal did not pass on the marker; screen:\n%s", screen)
		}
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(waitErr, &ee) {
		code = ee.ExitCode()
	} else if waitErr != nil {
		t.Fatal(waitErr)
	}
	return strings.ReplaceAll(screen, "\r\n", "\n"), code, answers
}

// TestInteractiveOnTerminal runs gofsck and e2fsck without -n, -y or -p on
// a real terminal (a pseudo-terminal), answering the same keys at the same
// questions: 'y', then 'n', then 'a' (yes to all). What the terminal shows,
// the exit status and the repaired image must be the same; the answers are
// single keys, not lines, and are not echoed, as e2fsck's ask_yn arranges.
func TestInteractiveOnTerminal(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	base := testfs.MkImage(t, testfs.Spec{FSType: "ext4", Size: 16 << 20, Populate: populate})
	// Problems in passes 1, 2, 4 and 5, each with its own question.
	testfs.Debugfs(t, base, "sif /a/one links_count 5", "sif /a/two size 1", "clri /many/f0007",
		"freeb 300 4", "sif /many mtime 20300101000000")
	for _, answers := range []string{"yyyyyyyyy", "yna", "nnyy", "a", "ynynynyn"} {
		eout, eleft := interactiveAgree(t, base, answers)
		if len(eleft) == len(answers) {
			t.Fatalf("%q: e2fsck asked nothing:\n%s", answers, eout)
		}
	}
}

// interactiveAgree runs gofsck -f and e2fsck -f on copies of base on
// terminals, typing answers, and requires the same screen, exit status,
// answers left over and repaired image. It returns e2fsck's screen and
// the answers it left.
func interactiveAgree(t *testing.T, base, answers string) (eout, eleft string) {
	t.Helper()
	e2fsck := lookE2fsck()
	gimg, eimg := testfs.CopyImage(t, base), testfs.CopyImage(t, base)
	gout, gcode, gleft := runOnPTY(t, testfs.GofsckPath(t), answers, "-f", gimg)
	eout, ecode, eleft := runOnPTY(t, e2fsck, answers, "-f", eimg)
	if g, e := norm(gout, gimg), norm(eout, eimg); g != e || gcode != ecode || gleft != eleft {
		t.Errorf("%q: exit %d vs e2fsck %d, answers left %q vs %q; terminal differs:\n--- e2fsck\n%s--- gofsck\n%s",
			answers, gcode, ecode, gleft, eleft, e, g)
		return eout, eleft
	}
	// Both programs run on the real clock here: a cleared inode's
	// dtime and ctime may fall in different seconds.
	compareImagesButInodeTimes(t, "interactive "+answers, gimg, eimg)
	return eout, eleft
}

// lookE2fsck returns the installed e2fsck's path.
func lookE2fsck() string {
	if p, err := exec.LookPath("e2fsck"); err == nil {
		return p
	}
	return "/sbin/e2fsck"
}

// TestInteractiveInterrupt: Ctrl-C at a question (the terminal sends
// SIGINT) ends the wait for a key, as e2fsck's read_a_char does, and the
// run ends as e2fsck's cancelled run: a bare newline after the question,
// "e2fsck canceled.", the fixes made so far kept, exit 32.
func TestInteractiveInterrupt(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	gofsck := testfs.GofsckPath(t)
	e2fsck, err := exec.LookPath("e2fsck")
	if err != nil {
		e2fsck = "/sbin/e2fsck"
	}
	base := testfs.MkImage(t, testfs.Spec{FSType: "ext4", Size: 16 << 20, Populate: populate})
	testfs.Debugfs(t, base, "sif /a/one links_count 5", "sif /a/two size 1", "freeb 300 4")
	for _, answers := range []string{"\x03", "y\x03", "yn\x03", "yy\x03"} {
		gimg, eimg := testfs.CopyImage(t, base), testfs.CopyImage(t, base)
		gout, gcode, gleft := runOnPTY(t, gofsck, answers, "-f", gimg)
		eout, ecode, eleft := runOnPTY(t, e2fsck, answers, "-f", eimg)
		if g, e := norm(gout, gimg), norm(eout, eimg); g != e || gcode != ecode || gleft != eleft {
			t.Errorf("%q: exit %d vs e2fsck %d, answers left %q vs %q; terminal differs:\n--- e2fsck\n%s--- gofsck\n%s",
				answers, gcode, ecode, gleft, eleft, e, g)
			continue
		}
		compareImages(t, fmt.Sprintf("interrupted %q", answers), gimg, eimg)
	}
}

// TestInteractiveSuppressMessages answers e2fsck's "Too many illegal
// blocks" questions on a terminal: after a no to "Clear inode?", a yes to
// "Suppress messages?" silences the inode's further illegal blocks, which
// are still cleared or ignored by the block latch's first answer. The
// terminal, the exit status and the image must match e2fsck's.
func TestInteractiveSuppressMessages(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	base := testfs.MkImage(t, testfs.Spec{FSType: "ext3", Size: 8 << 20, Populate: populate})
	// Twelve illegal direct blocks and illegal indirect and double
	// indirect blocks in one block-mapped file: fourteen in all.
	var damage []string
	for i := 0; i < 12; i++ {
		damage = append(damage, fmt.Sprintf("sif /a/one block[%d] %d", i, 9000000+i))
	}
	damage = append(damage, "sif /a/one block[IND] 9000100", "sif /a/one block[DIND] 9000101")
	testfs.Debugfs(t, base, damage...)
	for _, answers := range []string{"yny", "nny", "ynn", "nnn", "y"} {
		eout, _ := interactiveAgree(t, base, answers)
		if len(answers) > 1 && answers[1] == 'n' && !strings.Contains(eout, "Suppress messages") {
			t.Fatalf("%q: e2fsck did not offer to suppress messages:\n%s", answers, eout)
		}
	}
}

// TestInteractiveRevisionZeroLargeDir: on a revision 0 filesystem, a
// directory whose htree root claims three levels, kept by answering no to
// clearing its index, makes pass 1 end with the large_dir question and
// then "revision 0 filesystem. Fix?"; a yes upgrades the superblock to
// revision 1 (PR_1_FS_REV_LEVEL). Terminal, exit status and image must
// match e2fsck's.
func TestInteractiveRevisionZeroLargeDir(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	base := testfs.MkImage(t, testfs.Spec{FSType: "ext2", Size: 4 << 20, BlockSize: 1024, ExtraArgs: []string{"-r", "0"},
		Debugfs: []string{"mkdir d", "sif d flags 0x1000"}})
	// The dx_root after "." and "..": info_length 8, indirect_levels 3,
	// then limit 125 and count 1.
	blk := int64(testfs.Bmap(t, base, "d", 0))
	testfs.WriteAt(t, base, blk*1024+29, []byte{8, 3})
	testfs.WriteAt(t, base, blk*1024+32, append(testfs.Le16(125), testfs.Le16(1)...))
	for _, answers := range []string{"nnyy", "nnny", "nnyn"} {
		if eout, _ := interactiveAgree(t, base, answers); !strings.Contains(eout, "but is a revision 0 filesystem") {
			t.Fatalf("%q: e2fsck did not offer revision 1:\n%s", answers, eout)
		}
	}
}

// TestInteractiveLostFoundNoSpace: a filesystem without a free block
// and without /lost+found. Pass 3 offers to create it, cannot allocate
// its block, and offers the root directory instead; a no there makes
// e2fsck report the allocation's error ("ext2fs_new_block: ... while
// trying to create /lost+found directory"), and pass 4 then has nowhere
// to connect an unattached file.
func TestInteractiveLostFoundNoSpace(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	base := testfs.MkImage(t, testfs.Spec{FSType: "ext4", Size: 4 << 20, BlockSize: 1024, Features: "^has_journal",
		Debugfs: []string{"rmdir lost+found"}})
	free, err := strconv.Atoi(testfs.Superblock(t, base)["Free blocks"])
	if err != nil || free < 16 {
		t.Fatalf("free blocks %q", testfs.Superblock(t, base)["Free blocks"])
	}
	// Nearly all the space in one file (not zeros: debugfs would leave
	// holes), then one-block files for the rest.
	dir := t.TempDir()
	big, small := filepath.Join(dir, "big"), filepath.Join(dir, "small")
	if err := os.WriteFile(big, bytes.Repeat([]byte("y\n"), (free-8)*512), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(small, []byte("hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmds := []string{"write " + big + " big"}
	for i := 0; i < 12; i++ {
		cmds = append(cmds, fmt.Sprintf("write %s s%d", small, i))
	}
	testfs.Debugfs(t, base, append(cmds, "unlink s3")...)
	if got := testfs.Superblock(t, base)["Free blocks"]; got != "0" {
		t.Fatalf("the filesystem still has %s free blocks", got)
	}
	for _, answers := range []string{"yn", "yy", "n"} {
		eout, _ := interactiveAgree(t, base, answers+"yyyyyyyy")
		if answers == "yn" && !strings.Contains(eout, "while trying to create /lost+found directory") {
			t.Fatalf("%q: e2fsck did not report the failed allocation:\n%s", answers, eout)
		}
	}
}
