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

	fmt.Println("first render: every target is created and every consumer rolled (the worst case);")
	fmt.Println("re-render: the first render's output fed back in (the steady state of a GitOps repo).")
	fmt.Println()
	fmt.Printf("%-10s %-9s %8s | %-21s | %-21s | %-11s\n", "", "", "", "no-op kyaml function", "rotate-certs", "ratio")
	fmt.Printf("%-10s %-9s %8s | %9s %11s | %9s %11s | %5s %5s\n", "input", "resources", "size", "wall", "peak RSS", "wall", "peak RSS", "time", "mem")
	first := map[int]time.Duration{}
	var counts []int
	for _, field := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(field))
		if err != nil {
			fail(fmt.Errorf("-sizes: %w", err))
		}
		counts = append(counts, n)
		input := filepath.Join(dir, fmt.Sprintf("list-%d.yaml", n))
		data := synth.ResourceList(synth.Options{Resources: n, Bundles: *bundles, Seed: 1})
		if err := os.WriteFile(input, data, 0o600); err != nil {
			fail(err)
		}
		first[n] = row("first", n, input, *noop, *rc, *runs)
		steady := filepath.Join(dir, fmt.Sprintf("list-%d-rendered.yaml", n))
		if err := renderTo(*rc, input, steady); err != nil {
			fail(err)
		}
		row("re-render", n, steady, *noop, *rc, *runs)
	}
	for i := 1; i < len(counts); i++ {
		a, b := counts[i-1], counts[i]
		fmt.Printf("%dx resources (%d -> %d): rotate-certs first render took %.1fx the time\n",
			b/a, a, b, first[b].Seconds()/first[a].Seconds())
	}
}

// row measures both binaries on input, interleaved, prints a table row and
// returns rotate-certs' median wall time.
func row(label string, n int, input, noop, rc string, runs int) time.Duration {
	st, err := os.Stat(input)
	if err != nil {
		fail(err)
	}
	var base, ours []sample
	for i := 0; i < runs; i++ { // interleaved, so drift hits both alike
		base = append(base, measure(noop, input))
		ours = append(ours, measure(rc, input))
	}
	b, o := median(base), median(ours)
	fmt.Printf("%-10s %-9d %6.1fMB | %8.2fs %9.0fMB | %8.2fs %9.0fMB | %5.2f %5.2f\n",
		label, n, float64(st.Size())/1e6, b.wall.Seconds(), float64(b.rss)/1e6, o.wall.Seconds(), float64(o.rss)/1e6,
		o.wall.Seconds()/b.wall.Seconds(), float64(o.rss)/float64(b.rss))
	return o.wall
}

// renderTo runs rotate-certs on input and writes its output to out.
func renderTo(rc, input, out string) error {
	in, err := os.Open(input)
	if err != nil {
		return err
	}
	defer in.Close()
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close()
	cmd := exec.Command(rc)
	cmd.Stdin, cmd.Stdout = in, f
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("pre-rendering %s: %v\n%s", input, err, stderr.String())
	}
	return nil
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
