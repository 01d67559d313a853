package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// mountedDevice reports whether path is mounted: a block device that
// appears in /proc/self/mountinfo, or an image file that backs a mounted
// loop device. Errors (no /proc, no /sys) count as not mounted, as the
// library's check does when it cannot tell.
func mountedDevice(path string) bool {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return false
	}
	var devs []string // "major:minor" of the block devices that are path
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFBLK:
		devs = append(devs, fmt.Sprintf("%d:%d", major(st.Rdev), minor(st.Rdev)))
	case syscall.S_IFREG:
		devs = loopDevicesOf(st)
	}
	if len(devs) == 0 {
		return false
	}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		// Field 3 is the mounted device's major:minor.
		fields := strings.Fields(sc.Text())
		if len(fields) < 3 {
			continue
		}
		for _, d := range devs {
			if fields[2] == d {
				return true
			}
		}
	}
	return false
}

// loopDevicesOf returns the major:minor of the loop devices whose backing
// file is the file st describes.
func loopDevicesOf(st syscall.Stat_t) []string {
	loops, _ := filepath.Glob("/sys/block/loop*/loop/backing_file")
	var devs []string
	for _, bf := range loops {
		b, err := os.ReadFile(bf)
		if err != nil {
			continue
		}
		var bst syscall.Stat_t
		if syscall.Stat(strings.TrimSpace(string(b)), &bst) != nil || bst.Dev != st.Dev || bst.Ino != st.Ino {
			continue
		}
		d, err := os.ReadFile(filepath.Join(filepath.Dir(filepath.Dir(bf)), "dev"))
		if err == nil {
			devs = append(devs, strings.TrimSpace(string(d)))
		}
	}
	return devs
}

func major(rdev uint64) uint64 { return (rdev>>8)&0xfff | (rdev>>32)&^0xfff }
func minor(rdev uint64) uint64 { return rdev&0xff | (rdev>>12)&^0xff }
