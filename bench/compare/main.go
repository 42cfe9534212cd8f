//go:build devtools

// Command compare is `make bench`: it generates seeded synthetic
// ResourceLists and packages (internal/synth), runs rotate-certs and the
// programs it is compared with on them as child processes, alternating,
// and prints medians of CPU time (user+sys) and peak RSS side by side, as
// ratios. Its sections: shapes (function mode on the lists kpt and
// kustomize send, and a hand-made one, against a no-op kyaml function,
// with the floor - a byte scan of the same list - and a check that the
// output is byte for byte what kyaml's reader and writer give); scaling
// (CPU time per resource from 10,000 to 300,000 resources); memory (peak
// RSS over input size on the worst shapes found); repo (render and check
// on a package of files, against kpt fn render with a no-op exec
// function); fleet (render, re-render, check and diff of a repository of 100 to
// 10,000 clusters, two packages each, and how they grow); kustomize
// (kustomize build with and without an exec function).
//
//	go run ./bench/compare -rotate-certs bin/rotate-certs -noop bin/noop-kyaml -kyaml bin/kyaml-path -scan bin/scan
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
	"time"

	"github.com/rotate-certs/rotate-certs/internal/synth"
)

type config struct {
	rc, noop, kyaml, scan, kpt, kustomize, measure string
	base                                           string // -baseline: rotate-certs before a change, measured beside rc
	vs                                             []baseRatio
	runs                                           int
	dir                                            string
}

func main() {
	var c config
	flag.StringVar(&c.rc, "rotate-certs", "bin/rotate-certs", "rotate-certs binary")
	flag.StringVar(&c.base, "baseline", "", "another rotate-certs binary (say, before a change) measured in every row beside -rotate-certs, alternating; rows then end with its CPU and RSS and the ratios of -rotate-certs to it")
	flag.StringVar(&c.noop, "noop", "bin/noop-kyaml", "no-op kyaml function binary")
	flag.StringVar(&c.kyaml, "kyaml", "bin/kyaml-path", "rotate-certs' function through kyaml's reader and writer (bench/kyamlpath)")
	flag.StringVar(&c.scan, "scan", "bin/scan", "the byte scan (bench/scan)")
	flag.StringVar(&c.measure, "measure", "bin/measure", "the program that times the others (bench/measure)")
	flag.StringVar(&c.kpt, "kpt", "kpt", "kpt binary (the repo section skips kpt without it)")
	flag.StringVar(&c.kustomize, "kustomize", "bin/kustomize", "kustomize binary (the kustomize section is skipped without it)")
	flag.IntVar(&c.runs, "runs", 3, "runs per program and input (median reported)")
	sections := flag.String("sections", "shapes,scaling,memory,repo,fleet,kustomize", "sections to run")
	sizes := flag.String("sizes", "10000,100000", "shapes: resource counts")
	rerender := flag.String("rerender", "plain", "shapes: the shapes whose re-render is measured too (comma-separated, or all)")
	scaling := flag.String("scaling", "10000,30000,100000,300000", "scaling: resource counts")
	memSize := flag.Int("memory-mb", 64, "memory: input size of each worst shape, in MB")
	repo := flag.Int("repo", 100000, "repo: resources in the package (10 per file)")
	kptRepo := flag.Int("kpt-repo", 10000, "repo: resources in the package kpt renders (kpt keeps the whole package in memory at about 110 times its size)")
	fleetSizes := flag.String("fleet", "100,1000,10000", "fleet: clusters in the repository (two packages each)")
	kzSizes := flag.String("kustomize-sizes", "1000,2000", "kustomize: resource counts (kustomize's own build grows with the square of the resources)")
	flag.Parse()

	dir, err := os.MkdirTemp("", "rotate-certs-bench")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(dir)
	c.dir = dir
	fmt.Printf("CPU is user+sys time of the process and its children, RSS its peak resident set; medians of %d runs, programs alternating.\n", c.runs)
	if c.base != "" {
		fmt.Printf("Every row ends with the baseline (%s) run beside rotate-certs (%s) - | before: CPU RSS | after/before: CPU RSS - and a last line gives the range of those ratios.\n", c.base, c.rc)
		defer c.printBaseline()
	}
	for _, s := range strings.Split(*sections, ",") {
		fmt.Println()
		switch s {
		case "shapes":
			c.shapes(ints(*sizes), *rerender)
		case "scaling":
			c.scaling(ints(*scaling))
		case "memory":
			c.memory(*memSize << 20)
		case "repo":
			c.repo(*repo, *kptRepo)
		case "kustomize":
			c.kustomizeOverhead(ints(*kzSizes))
		case "fleet":
			c.fleet(ints(*fleetSizes))
		default:
			fail(fmt.Errorf("-sections: unknown section %q", s))
		}
	}
}

// sample is one run of a program.
type sample struct {
	cpu  time.Duration // user + sys, children included
	wall time.Duration
	rss  int64 // peak, bytes
	code int   // exit status
}

func (s sample) mb() float64 { return float64(s.rss) / 1e6 }

// run runs bin with args through the measure program, stdin from in (or
// none) and stdout to out (or discarded), and returns its CPU time and
// peak RSS. A run that fails is fatal unless mayFail.
func (c *config) run(in, out string, mayFail bool, bin string, args ...string) sample {
	return c.runIn("", in, out, mayFail, bin, args...)
}

// runIn is run in the directory dir ("": this one).
func (c *config) runIn(dir, in, out string, mayFail bool, bin string, args ...string) sample {
	stats := filepath.Join(c.dir, "stats.txt")
	measure := c.measure
	if dir != "" { // a relative path is taken from dir
		measure, bin = absProgram(measure), absProgram(bin)
	}
	cmd := exec.Command(measure, append([]string{"-o", stats, "--", bin}, args...)...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if in != "" {
		f, err := os.Open(in)
		if err != nil {
			fail(err)
		}
		defer f.Close()
		cmd.Stdin = f
	}
	sink, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if out != "" {
		sink, err = os.Create(out)
	}
	if err != nil {
		fail(err)
	}
	defer sink.Close()
	cmd.Stdout = sink
	err = cmd.Run()
	if err != nil && !mayFail {
		fail(fmt.Errorf("%s %s: %v\n%s", bin, strings.Join(args, " "), err, lastLines(stderr.String(), 5)))
	}
	b, rerr := os.ReadFile(stats)
	if rerr != nil {
		fail(fmt.Errorf("%s: no measurement (%v): %v\n%s", bin, rerr, err, lastLines(stderr.String(), 5)))
	}
	var user, sys, wall float64
	var rss int64
	var s sample
	if _, err := fmt.Sscan(string(b), &user, &sys, &rss, &s.code, &wall); err != nil {
		fail(fmt.Errorf("measurement %q: %v", b, err))
	}
	os.Remove(stats)
	s.cpu = time.Duration((user + sys) * float64(time.Second))
	s.wall = time.Duration(wall * float64(time.Second))
	s.rss = rss * 1024
	return s
}

// absProgram returns the absolute path of a program named by a path
// (holding a separator); a name found on PATH as it is.
func absProgram(p string) string {
	if !strings.ContainsRune(p, filepath.Separator) {
		return p
	}
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

// measure runs each program runs times, alternating, and returns the
// median sample of each.
func measure(runs int, programs ...func() sample) []sample {
	all := make([][]sample, len(programs))
	for i := 0; i < runs; i++ {
		for j, p := range programs {
			all[j] = append(all[j], p())
		}
	}
	out := make([]sample, len(programs))
	for j, s := range all {
		out[j] = median(s)
	}
	return out
}

func median(s []sample) sample {
	cpu := make([]time.Duration, len(s))
	wall := make([]time.Duration, len(s))
	rss := make([]int64, len(s))
	for i, x := range s {
		cpu[i], wall[i], rss[i] = x.cpu, x.wall, x.rss
	}
	slices.Sort(cpu)
	slices.Sort(wall)
	slices.Sort(rss)
	return sample{cpu: cpu[len(cpu)/2], wall: wall[len(wall)/2], rss: rss[len(rss)/2], code: s[len(s)-1].code}
}

// shapes compares function mode with the no-op kyaml function on each
// shape of list.
func (c *config) shapes(sizes []int, rerender string) {
	fmt.Println("== Function mode on the lists kpt and kustomize send: rotate-certs against a no-op kyaml function")
	fmt.Println("first: every target created and every consumer rolled (the worst case); re-render: the first render's output fed back in.")
	fmt.Println("floor: a byte scan that finds the items and copies the list (bench/scan); same: the output is byte for byte what")
	fmt.Println("rotate-certs' function writes through kyaml's reader and writer (bench/kyamlpath).")
	fmt.Println()
	fmt.Printf("%-10s %-9s %7s %8s | %-17s | %-17s | %-11s | %-13s | %s\n", "shape", "input", "items", "size", "no-op kyaml", "rotate-certs", "ratio", "floor", "same")
	fmt.Printf("%-10s %-9s %7s %8s | %7s %9s | %7s %9s | %5s %5s | %6s %6s |\n", "", "", "", "", "CPU", "RSS", "CPU", "RSS", "CPU", "RSS", "CPU", "ratio")
	var cpu, rss []float64 // ratios to the no-op at the largest size
	same := true
	for _, n := range sizes {
		for _, shape := range synth.Shapes {
			input := filepath.Join(c.dir, fmt.Sprintf("%s-%d.yaml", shape, n))
			write(input, synth.ResourceList(synth.Options{Resources: n, Bundles: 100, Seed: 1, Shape: shape}))
			r := c.shapeRow(shape, "first", n, input)
			if n == sizes[len(sizes)-1] {
				cpu, rss = append(cpu, r.cpu), append(rss, r.rss)
			}
			same = same && r.same
			if rerender == "all" || slices.Contains(strings.Split(rerender, ","), string(shape)) {
				steady := filepath.Join(c.dir, fmt.Sprintf("%s-%d-rendered.yaml", shape, n))
				c.run(input, steady, false, c.rc)
				same = c.shapeRow(shape, "re-render", n, steady).same && same
				os.Remove(steady)
			}
			os.Remove(input)
		}
	}
	fmt.Printf("at %d resources, first render, every shape: CPU %.2f-%.2fx the no-op's (goal <= 0.25), peak RSS %.2f-%.2fx (goal <= 0.2); output the same as kyaml's path on every row: %v\n",
		sizes[len(sizes)-1], slices.Min(cpu), slices.Max(cpu), slices.Min(rss), slices.Max(rss), same)
}

// ratios is one row of the shapes table: rotate-certs over the no-op.
type ratios struct {
	cpu, rss float64
	same     bool
}

func (c *config) shapeRow(shape synth.Shape, label string, n int, input string) ratios {
	s := measure(c.runs, c.withBase([]func() sample{
		func() sample { return c.run(input, "", false, c.noop) },
		func() sample { return c.run(input, "", false, c.rc) },
		func() sample { return c.run(input, "", false, c.scan) }},
		func(bin string) sample { return c.run(input, "", false, bin) })...)
	noop, rc, scan := s[0], s[1], s[2]
	same := c.sameAsKyaml(input)
	r := ratios{cpu: rc.cpu.Seconds() / noop.cpu.Seconds(), rss: float64(rc.rss) / float64(noop.rss), same: same == "yes"}
	fmt.Printf("%-10s %-9s %7d %7.1fM | %6.2fs %8.0fM | %6.2fs %8.0fM | %5.2f %5.2f | %5.3fs %5.0fx | %s%s\n",
		shape, label, n, float64(size(input))/1e6, noop.cpu.Seconds(), noop.mb(), rc.cpu.Seconds(), rc.mb(),
		r.cpu, r.rss, scan.cpu.Seconds(), rc.cpu.Seconds()/scan.cpu.Seconds(), same, c.vsBase(fmt.Sprintf("shapes %s %s %d", shape, label, n), rc, s))
	return r
}

// sameAsKyaml runs rotate-certs and the kyaml path once each on input and
// compares their outputs byte for byte.
func (c *config) sameAsKyaml(input string) string {
	a, b := input+".fast", input+".kyaml"
	defer os.Remove(a)
	defer os.Remove(b)
	c.run(input, a, false, c.rc)
	c.run(input, b, false, c.kyaml)
	x, err := os.ReadFile(a)
	if err != nil {
		fail(err)
	}
	y, err := os.ReadFile(b)
	if err != nil {
		fail(err)
	}
	if bytes.Equal(x, y) {
		return "yes"
	}
	i := 0
	for i < len(x) && i < len(y) && x[i] == y[i] {
		i++
	}
	return fmt.Sprintf("NO (first difference at byte %d)", i)
}

// scaling prints rotate-certs' CPU time per resource at each size.
func (c *config) scaling(sizes []int) {
	fmt.Println("== Scaling: function mode, first render, hand-made and kpt fn render lists")
	fmt.Printf("%-10s %7s %8s | %8s %9s %7s | %9s\n", "shape", "items", "size", "CPU", "RSS", "RSS/in", "CPU/item")
	for _, shape := range []synth.Shape{synth.Plain, synth.KptRender} {
		var per []float64
		var rendered []int // sizes that rendered, not refused
		for _, n := range sizes {
			input := filepath.Join(c.dir, fmt.Sprintf("scale-%s-%d.yaml", shape, n))
			write(input, synth.ResourceList(synth.Options{Resources: n, Bundles: 100, Seed: 1, Shape: shape}))
			all := measure(c.runs, c.withBase([]func() sample{func() sample { return c.run(input, "", true, c.rc) }},
				func(bin string) sample { return c.run(input, "", true, bin) })...)
			s := all[0]
			in := size(input)
			status := ""
			if s.code != 0 {
				status = fmt.Sprintf(" (exit %d: refused)", s.code)
			}
			us := s.cpu.Seconds() * 1e6 / float64(n)
			if s.code == 0 {
				per = append(per, us)
				rendered = append(rendered, n)
			}
			fmt.Printf("%-10s %7d %7.1fM | %7.2fs %8.0fM %6.1fx | %7.1fus%s%s\n", shape, n, float64(in)/1e6, s.cpu.Seconds(), s.mb(), float64(s.rss)/float64(in), us, status,
				c.vsBase(fmt.Sprintf("scaling %s %d", shape, n), s, all))
			os.Remove(input)
		}
		if len(per) > 1 {
			lo, hi := slices.Min(per), slices.Max(per)
			fmt.Printf("%-10s CPU per item from %d to %d resources: %.1f-%.1fus, the highest %.0f%% above the lowest\n",
				shape, rendered[0], rendered[len(rendered)-1], lo, hi, 100*(hi/lo-1))
		}
	}
}

// write writes data to path or fails.
func write(path string, data []byte) {
	if err := os.WriteFile(path, data, 0o600); err != nil {
		fail(err)
	}
}

func size(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		fail(err)
	}
	return st.Size()
}

func ints(list string) []int {
	var out []int
	for _, f := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			fail(err)
		}
		out = append(out, n)
	}
	return out
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "bench:", err)
	os.Exit(1)
}

// withBase returns programs, and with -baseline one more: the baseline
// binary run as base runs a binary.
func (c *config) withBase(programs []func() sample, base func(bin string) sample) []func() sample {
	if c.base == "" {
		return programs
	}
	return append(programs, func() sample { return base(c.base) })
}

// vsBase ends a row: the baseline's sample (the last of all, which
// withBase added) and rc's ratios to it; "" without -baseline. It
// remembers the ratios for printBaseline.
func (c *config) vsBase(row string, rc sample, all []sample) string {
	if c.base == "" {
		return ""
	}
	b := all[len(all)-1]
	cpu, rss := rc.cpu.Seconds()/b.cpu.Seconds(), float64(rc.rss)/float64(b.rss)
	c.vs = append(c.vs, baseRatio{row, cpu, rss})
	return fmt.Sprintf(" | before %6.2fs %6.0fM | %5.2f %5.2f", b.cpu.Seconds(), b.mb(), cpu, rss)
}

// baseRatio is one row's ratios of rotate-certs to the baseline.
type baseRatio struct {
	row      string
	cpu, rss float64
}

// printBaseline says, after every section, how far rotate-certs is from
// the baseline: the range of the ratios and the rows outside 10%.
func (c *config) printBaseline() {
	if len(c.vs) == 0 {
		return
	}
	lo, hi, rlo, rhi := c.vs[0].cpu, c.vs[0].cpu, c.vs[0].rss, c.vs[0].rss
	var over []string
	for _, v := range c.vs {
		lo, hi, rlo, rhi = min(lo, v.cpu), max(hi, v.cpu), min(rlo, v.rss), max(rhi, v.rss)
		if v.cpu > 1.1 || v.rss > 1.1 {
			over = append(over, fmt.Sprintf("%s (CPU %.2f, RSS %.2f)", v.row, v.cpu, v.rss))
		}
	}
	fmt.Printf("\nagainst the baseline, %d rows: CPU %.2f-%.2fx, peak RSS %.2f-%.2fx; rows more than 10%% slower or larger: %d\n", len(c.vs), lo, hi, rlo, rhi, len(over))
	for _, o := range over {
		fmt.Println("  " + o)
	}
}
