package undo_test

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"gofsck/internal/undo"
)

// helperEnv marks the re-executed test binary as the writer to be killed.
const helperEnv = "GOFSCK_UNDO_KILL_HELPER"

// TestHelperProcess is not a test: TestKill runs the test binary with it
// as a child that writes a random workload through an undo Writer until it
// is killed. Run normally it returns at once.
func TestHelperProcess(t *testing.T) {
	if os.Getenv(helperEnv) != "1" {
		return
	}
	img, up := os.Getenv("UNDO_IMG"), os.Getenv("UNDO_FILE")
	seed, _ := strconv.ParseUint(os.Getenv("UNDO_SEED"), 10, 64)
	bs, _ := strconv.Atoi(os.Getenv("UNDO_BS"))
	dev := openDev(t, img)
	sb := superblock(t, dev)
	rng := rand.New(rand.NewPCG(seed, 99))
	ws := workload(rng, dev.Size(), int64(bs), 100, sb) // ready before the clock starts
	w, err := undo.Create(up, dev, bs, sb)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fmt.Println("ready")
	// Rounds of writes until killed; the bound only keeps an orphan from
	// running for ever.
	for round := range 100 {
		if round > 0 {
			ws = workload(rng, dev.Size(), int64(bs), 100, superblock(t, dev))
		}
		for _, x := range ws {
			if _, err := w.WriteAt(x.data, x.off); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(3)
			}
		}
	}
	if err := w.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(4)
	}
	fmt.Println("done")
	os.Exit(0)
}

// TestKill SIGKILLs a writer at random points (30 times, after random
// delays, over 1 KiB and 4 KiB block file systems) and requires Apply to
// give back the original image byte for byte each time.
func TestKill(t *testing.T) {
	type fsImage struct {
		bs   int
		orig []byte
	}
	imgs := []fsImage{{bs: 1024}, {bs: 4096}}
	for i := range imgs {
		imgs[i].orig = readFile(t, image(t, imgs[i].bs, 4<<20))
	}
	rng := rand.New(rand.NewPCG(2026, 4))
	dir := t.TempDir()
	const kills = 30
	var midway, empty, finished, mismatched int
	for i := range kills {
		im := imgs[i%len(imgs)]
		work := filepath.Join(dir, "img")
		up := filepath.Join(dir, fmt.Sprintf("undo%d", i))
		if err := os.WriteFile(work, im.orig, 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
		cmd.Env = append(os.Environ(), helperEnv+"=1", "UNDO_IMG="+work, "UNDO_FILE="+up,
			fmt.Sprintf("UNDO_SEED=%d", i), fmt.Sprintf("UNDO_BS=%d", im.bs))
		cmd.Stderr = os.Stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(out).ReadString('\n')
		if err != nil || line != "ready\n" {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("kill %d: helper said %q, %v", i, line, err)
		}
		// Mostly early kills (the whole run takes a few hundred ms), a
		// few right away.
		// A round of 100 writes takes some 20 ms; the writer goes on
		// until killed.
		delay := time.Duration(rng.Int64N(int64(80 * time.Millisecond)))
		if i%7 == 3 {
			delay = 0
		}
		time.Sleep(delay)
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		cmd.Wait()

		h, err := undo.ReadHeader(up)
		if err != nil {
			t.Fatalf("kill %d after %v: %v", i, delay, err)
		}
		switch {
		case h.Finished():
			finished++
		case h.NumKeys() == 0:
			empty++
		default:
			midway++
		}
		dev := openDev(t, work)
		res, err := undo.ApplyWith(up, dev, undo.Options{})
		dev.Close()
		if res.Mismatch != nil {
			mismatched++
		}
		if err != nil {
			t.Fatalf("kill %d after %v (%d keys, finished %v): Apply: %v", i, delay, h.NumKeys(), h.Finished(), err)
		}
		sameBytes(t, fmt.Sprintf("kill %d after %v: image after Apply", i, delay), readFile(t, work), im.orig)
		os.Remove(up)
	}
	t.Logf("%d kills: %d in the middle of a run (%d between a superblock change and its write), %d before the first key, %d after Close",
		kills, midway, mismatched, empty, finished)
	if midway < kills/2 {
		t.Errorf("only %d of %d kills fell in the middle of a run: the test does not test much", midway, kills)
	}
}
