// Command e2fuzzgo corrupts the metadata of ext2/3/4 images at random, from
// a seed, and runs differential campaigns of gofsck against e2fsck on the
// results.
//
// It is a test tool, not part of the checker: it sits with the other
// commands at the top of the layering (test/layering_test.go), reads
// images through the read-only library (internal/fs, internal/dump's
// block-map walker, internal/ondisk) to find the metadata blocks, and its
// own tests (main_test.go) check the fuzzer and run a few fixed seeds
// against e2fsck.
//
// Usage:
//
//	e2fuzzgo blocks IMAGE
//	    list the metadata blocks of IMAGE by kind
//	e2fuzzgo fuzz [-seed N] [-bytes N] [-v] IMAGE
//	    overwrite N bytes (default 64) of IMAGE's metadata, in place
//	e2fuzzgo campaign [-dur 30m] [-runs N] [-seed N] [-min 8] [-max 512]
//	    [-sets a,b] [-out DIR] -gofsck PATH [-e2fsck PATH]
//	    build the base images (mke2fs -d of a fixed tree, one per
//	    feature set), then for seed = N, N+1, ...: fuzz a copy of base
//	    seed%len(bases) by min..max bytes, run e2fsck -fy and gofsck -fy
//	    on two copies with E2FSCK_TIME fixed, and compare the exit codes,
//	    the transcripts and, when e2fsck -fn finds e2fsck's result clean,
//	    the repaired images byte for byte except the superblock stamps.
//	    Every disagreement is kept as DIR/regress/SET-sSEED-bNBYTES.img.gz
//	    with the transcripts beside it and a line in DIR/classes.tsv; the
//	    totals and the classes with counts are printed at the end.
//
// Scripts/fuzz-campaign.sh builds gofsck and runs a campaign.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"time"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: e2fuzzgo blocks|fuzz|campaign [flags] (see go doc gofsck/cmd/e2fuzzgo)")
		return 2
	}
	fl := flag.NewFlagSet("e2fuzzgo "+args[0], flag.ContinueOnError)
	fl.SetOutput(stderr)
	switch args[0] {
	case "blocks":
		if err := fl.Parse(args[1:]); err != nil || fl.NArg() != 1 {
			fmt.Fprintln(stderr, "usage: e2fuzzgo blocks IMAGE")
			return 2
		}
		m, err := ReadMeta(fl.Arg(0))
		if err != nil {
			fmt.Fprintf(stderr, "e2fuzzgo: %v\n", err)
			return 1
		}
		for k := Kind(0); k < numKinds; k++ {
			fmt.Fprintf(stdout, "%s:", k)
			for _, b := range m.Blocks[k] {
				fmt.Fprintf(stdout, " %d", b)
			}
			fmt.Fprintln(stdout)
		}
		return 0
	case "fuzz":
		seed := fl.Uint64("seed", 1, "seed of the corruption")
		n := fl.Int("bytes", 64, "bytes to overwrite")
		verbose := fl.Bool("v", false, "list every byte changed")
		if err := fl.Parse(args[1:]); err != nil || fl.NArg() != 1 {
			fmt.Fprintln(stderr, "usage: e2fuzzgo fuzz [-seed N] [-bytes N] [-v] IMAGE")
			return 2
		}
		if err := fuzzFile(fl.Arg(0), *seed, *n, *verbose, stdout); err != nil {
			fmt.Fprintf(stderr, "e2fuzzgo: %v\n", err)
			return 1
		}
		return 0
	case "campaign":
		var c campaignConfig
		fl.StringVar(&c.out, "out", "fuzz-campaign", "directory for regression images and classes.tsv")
		fl.DurationVar(&c.dur, "dur", 30*time.Minute, "how long to run (0: no limit)")
		fl.IntVar(&c.runs, "runs", 0, "how many images to run (0: no limit)")
		fl.Uint64Var(&c.firstSeed, "seed", 1, "first seed")
		fl.IntVar(&c.minB, "min", 8, "fewest bytes to overwrite")
		fl.IntVar(&c.maxB, "max", 512, "most bytes to overwrite")
		fl.StringVar(&c.gofsck, "gofsck", "", "gofsck binary")
		fl.StringVar(&c.e2fsck, "e2fsck", "e2fsck", "e2fsck binary")
		fl.StringVar(&c.sets, "sets", "", "comma-separated feature sets (default all)")
		if err := fl.Parse(args[1:]); err != nil || fl.NArg() != 0 || c.gofsck == "" || c.minB < 1 || c.maxB < c.minB {
			fmt.Fprintln(stderr, "usage: e2fuzzgo campaign [-dur D] [-runs N] [-seed N] [-min N] [-max N] [-sets a,b] [-out DIR] -gofsck PATH [-e2fsck PATH]")
			return 2
		}
		if err := campaign(c, stdout); err != nil {
			fmt.Fprintf(stderr, "e2fuzzgo: %v\n", err)
			return 1
		}
		return 0
	}
	fmt.Fprintf(stderr, "e2fuzzgo: unknown command %q\n", args[0])
	return 2
}

// fuzzFile fuzzes the image file at path in place.
func fuzzFile(path string, seed uint64, n int, verbose bool, w io.Writer) error {
	m, err := ReadMeta(path)
	if err != nil {
		return err
	}
	img, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	changes := Fuzz(img, m, seed, n)
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	for _, c := range changes {
		if _, err := f.WriteAt([]byte{c.New}, c.Off); err != nil {
			f.Close()
			return err
		}
		if verbose {
			fmt.Fprintln(w, c)
		}
	}
	return f.Close()
}
