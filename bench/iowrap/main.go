// Command iowrap runs a command and records how much it read.
//
// Usage:
//
//	iowrap -o FILE COMMAND [ARG...]
//
// After COMMAND exits, and before it is reaped, iowrap copies the child's
// /proc/PID/io counters into FILE as "key value" lines (rchar: bytes read
// through read-like syscalls, whether or not the page cache served them;
// read_bytes: bytes the child made the block layer fetch), then exits with
// the child's exit code (128+signal if it was killed). bench/run.sh runs
// it under /usr/bin/time -v.
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

// run starts the command, waits for it without reaping, saves its I/O
// counters and returns the exit code to use.
func run(args []string) int {
	if len(args) < 3 || args[0] != "-o" {
		fmt.Fprintln(os.Stderr, "usage: iowrap -o FILE COMMAND [ARG...]")
		return 2
	}
	out, argv := args[1], args[2:]
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "iowrap: %v\n", err)
		return 127
	}
	go func() {
		for s := range sigs {
			cmd.Process.Signal(s)
		}
	}()
	pid := cmd.Process.Pid
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EINTR) {
			fmt.Fprintf(os.Stderr, "iowrap: waitid: %v\n", err)
			break
		}
	}
	// The child is a zombie now: its counters are final and still readable.
	io, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		fmt.Fprintf(os.Stderr, "iowrap: %v\n", err)
	} else if err := os.WriteFile(out, io, 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "iowrap: %v\n", err)
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return exit.ExitCode()
	default:
		fmt.Fprintf(os.Stderr, "iowrap: %v\n", err)
		return 126
	}
}
