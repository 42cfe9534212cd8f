// Command compare is `make bench`: it generates seeded synthetic
// ResourceLists, runs rotate-certs and a no-op kyaml function on each,
// interleaved, and prints median wall time and peak RSS side by side.
//
//	go run ./bench/compare -rotate-certs bin/rotate-certs -noop bin/noop-kyaml
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rotate-certs/rotate-certs/internal/synth"
)

type sample struct {
	wall time.Duration
	rss  int64 // bytes
}

func main() {
	rc := flag.String("rotate-certs", "bin/rotate-certs", "rotate-certs binary")
	noop := flag.String("noop", "bin/noop-kyaml", "no-op kyaml function binary")
	sizes := flag.String("sizes", "1000,10000,100000", "comma-separated resource counts")
	runs := flag.Int("runs", 3, "runs per binary and size (median reported)")
	bundles := flag.Int("bundles", 100, "trust bundles in the policy")
	flag.Parse()

	dir, err := os.MkdirTemp("", "rotate-certs-bench")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(dir)

	fmt.Printf("%-9s %8s | %-21s | %-21s | %-11s\n", "", "", "no-op kyaml function", "rotate-certs", "ratio")
	fmt.Printf("%-9s %8s | %9s %11s | %9s %11s | %5s %5s\n", "resources", "size", "wall", "peak RSS", "wall", "peak RSS", "time", "mem")
	var prev struct {
		n    int
		wall time.Duration
	}
	var scaling []string
	for _, field := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(field))
		if err != nil {
			fail(fmt.Errorf("-sizes: %w", err))
		}
		input := filepath.Join(dir, fmt.Sprintf("list-%d.yaml", n))
		data := synth.ResourceList(synth.Options{Resources: n, Bundles: *bundles, Seed: 1})
		if err := os.WriteFile(input, data, 0o600); err != nil {
			fail(err)
		}
		var base, ours []sample
		for i := 0; i < *runs; i++ { // interleaved, so drift hits both alike
			base = append(base, measure(*noop, input))
			ours = append(ours, measure(*rc, input))
		}
		b, o := median(base), median(ours)
		fmt.Printf("%-9d %6.1fMB | %8.2fs %9.0fMB | %8.2fs %9.0fMB | %5.2f %5.2f\n",
			n, float64(len(data))/1e6, b.wall.Seconds(), float64(b.rss)/1e6, o.wall.Seconds(), float64(o.rss)/1e6,
			o.wall.Seconds()/b.wall.Seconds(), float64(o.rss)/float64(b.rss))
		if prev.n > 0 {
			scaling = append(scaling, fmt.Sprintf("%dx resources (%d -> %d): rotate-certs %.1fx time", n/prev.n, prev.n, n, o.wall.Seconds()/prev.wall.Seconds()))
		}
		prev.n, prev.wall = n, o.wall
	}
	for _, s := range scaling {
		fmt.Println(s)
	}
}

// measure runs bin with input on stdin and returns its wall time and peak
// resident set size. The output is discarded; a failure aborts the bench.
func measure(bin, input string) sample {
	in, err := os.Open(input)
	if err != nil {
		fail(err)
	}
	defer in.Close()
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		fail(err)
	}
	defer devnull.Close()
	cmd := exec.Command(bin)
	var stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = in, devnull, &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		fail(fmt.Errorf("%s on %s: %v\n%s", bin, input, err, stderr.String()))
	}
	wall := time.Since(start)
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return sample{wall: wall, rss: ru.Maxrss * 1024}
}

func median(s []sample) sample {
	walls := make([]time.Duration, len(s))
	rss := make([]int64, len(s))
	for i, x := range s {
		walls[i], rss[i] = x.wall, x.rss
	}
	slices.Sort(walls)
	slices.Sort(rss)
	return sample{wall: walls[len(walls)/2], rss: rss[len(rss)/2]}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "bench:", err)
	os.Exit(1)
}
