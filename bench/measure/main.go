//go:build devtools

// Command measure runs a command and writes its CPU time (user and
// system, seconds), peak resident set (KiB), exit status and wall time
// (seconds) to a file, as "user sys maxrss exitcode wall". `make bench` starts every program it times
// through it: Linux gives a process started from a large one (vfork, then
// exec) at least its parent's peak RSS as its own, and measure is small.
//
//	measure -o stats.txt -- program args...
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

func main() {
	out := flag.String("o", "", "file to write the measurement to")
	flag.Parse()
	if *out == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: measure -o FILE -- PROGRAM ARGS...")
		os.Exit(2)
	}
	cmd := exec.Command(flag.Arg(0), flag.Args()[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		fmt.Fprintln(os.Stderr, "measure:", err)
		os.Exit(2)
	}
	ps := cmd.ProcessState
	var maxrss int64
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		maxrss = ru.Maxrss
	}
	line := fmt.Sprintf("%f %f %d %d %f\n", ps.UserTime().Seconds(), ps.SystemTime().Seconds(), maxrss, ps.ExitCode(), wall.Seconds())
	if err := os.WriteFile(*out, []byte(line), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, "measure:", err)
		os.Exit(2)
	}
	os.Exit(ps.ExitCode())
}
