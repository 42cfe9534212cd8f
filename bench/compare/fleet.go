//go:build devtools

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/rotate-certs/rotate-certs/internal/golden"
	"github.com/rotate-certs/rotate-certs/internal/synth"
)

// fleetRow is what the fleet section measured at one size; before is the
// same of the baseline (-baseline), run alternating with it.
type fleetRow struct {
	render, rerender, check, diff sample
	before                        *fleetRow
}

// fleet renders, checks and diffs monorepos of clusters from their top,
// each cluster a copy of examples/envoy-gateway and examples/multi-signer
// (synth.WriteFleet), and prints how render grows with the clusters and
// how a re-render and a diff compare with check.
func (c *config) fleet(sizes []int) {
	fmt.Println("== Fleet: a repository of clusters (clusters/<region>/<stage>-<n>), each a copy of examples/envoy-gateway and")
	fmt.Println("examples/multi-signer (two packages), rendered and checked from its top; render: the first render (a fresh copy each")
	fmt.Println("run), re-render: again with nothing to change, check: `check DIR`; diff: `diff BASE HEAD` in a git repository of")
	fmt.Println("the fleet, BASE the copies as generated and HEAD their render (the pull request a CA shared by every cluster makes),")
	fmt.Println("timed alternating with `check` of HEAD's tree (the check column).")
	fmt.Printf("%8s %8s %7s %8s | %-26s | %-26s | %-26s | %-26s\n", "clusters", "packages", "files", "size", "render", "re-render", "check", "diff")
	fmt.Printf("%8s %8s %7s %8s | %7s %8s %9s | %7s %8s %9s | %7s %8s %9s | %7s %8s %9s\n", "", "", "", "", "CPU", "wall", "RSS", "CPU", "wall", "RSS", "CPU", "wall", "RSS", "CPU", "wall", "RSS")
	at := map[int]fleetRow{}
	for _, n := range sizes {
		row, files, size := c.fleetRow(n)
		at[n] = row
		cell := func(s sample) string {
			return fmt.Sprintf("%6.2fs %7.2fs %8.0fM", s.cpu.Seconds(), s.wall.Seconds(), s.mb())
		}
		fmt.Printf("%8d %8d %7d %7.1fM | %s | %s | %s | %s\n", n, 2*n, files, float64(size)/1e6,
			cell(row.render), cell(row.rerender), cell(row.check), cell(row.diff))
		if b := row.before; b != nil {
			fmt.Printf("%33s | %s | %s | %s | %s\n", "before", cell(b.render), cell(b.rerender), cell(b.check), cell(b.diff))
			for _, col := range []struct {
				name      string
				now, then sample
			}{{"render", row.render, b.render}, {"re-render", row.rerender, b.rerender}, {"check", row.check, b.check}, {"diff", row.diff, b.diff}} {
				c.vsBase(fmt.Sprintf("fleet %s %d", col.name, n), col.now, []sample{col.then})
			}
		}
	}
	c.fleetRatios(sizes, at)
}

// fleetRow measures render, re-render, check and diff at n clusters, and
// returns the number of files and bytes of the repository.
func (c *config) fleetRow(n int) (row fleetRow, files int, size int64) {
	pristine, work := filepath.Join(c.dir, fmt.Sprintf("fleet-%d", n)), filepath.Join(c.dir, "fleet-work")
	err := synth.WriteFleet(pristine, n, map[string]string{
		"gateway": golden.Path("examples", "envoy-gateway"),
		"signers": golden.Path("examples", "multi-signer"),
	})
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(pristine)
	defer os.RemoveAll(work)
	files, size = treeSize(pristine)
	fresh := func() {
		os.RemoveAll(work)
		if out, err := exec.Command("cp", "-a", pristine, work).CombinedOutput(); err != nil {
			fail(fmt.Errorf("cp: %v: %s", err, out))
		}
	}
	render := func(bin string) func() sample {
		return func() sample { return c.run("", "", false, bin, "render", work) }
	}
	first := func(bin string) func() sample { return func() sample { fresh(); return render(bin)() } }
	// The last first render leaves work rendered: the re-renders start there.
	s := measure(c.runs, c.withBase([]func() sample{first(c.rc)}, func(bin string) sample { return first(bin)() })...)
	row.render = s[0]
	r := measure(c.runs, c.withBase([]func() sample{render(c.rc)}, func(bin string) sample { return render(bin)() })...)
	row.rerender = r[0]
	d := c.fleetDiff(pristine, work)
	row.check, row.diff = d[0], d[1]
	if c.base != "" {
		row.before = &fleetRow{render: s[1], rerender: r[1], check: d[2], diff: d[3]}
	}
	return row, files, size
}

// fleetDiff makes a git repository of the fleet in work - a base commit,
// the copies as generated, and a head commit, their render - and times
// `diff BASE HEAD` in it alternating with `check` of its tree (HEAD's):
// check and diff, then, with -baseline, the baseline's check and diff.
// Every cluster holds the same CA (copies of the examples), as clusters
// that trust one root do: the pull request after that CA is rotated is
// the render that updates every cluster's bundle, the one pull request
// that touches the whole fleet - the most a diff has to compare; one that
// touches one cluster reads the same two trees and compares less.
func (c *config) fleetDiff(pristine, work string) []sample {
	os.RemoveAll(work)
	if out, err := exec.Command("cp", "-a", pristine, work).CombinedOutput(); err != nil {
		fail(fmt.Errorf("cp: %v: %s", err, out))
	}
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-c", "user.name=bench", "-c", "user.email=bench@example.com", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = work
		if out, err := cmd.CombinedOutput(); err != nil {
			fail(fmt.Errorf("git %v: %v: %s", args, err, out))
		}
	}
	git("init", "-q")
	git("add", "-A")
	git("commit", "-q", "-m", "base: the fleet as generated")
	c.runIn(work, "", "", false, c.rc, "render", ".")
	git("add", "-A")
	git("commit", "-q", "-m", "head: rendered")
	programs := []func() sample{
		func() sample { return c.runIn(work, "", "", true, c.rc, "check", ".") },
		func() sample { return c.diffSample(work, c.rc) },
	}
	if c.base != "" {
		programs = append(programs,
			func() sample { return c.runIn(work, "", "", true, c.base, "check", ".") },
			func() sample { return c.diffSample(work, c.base) })
	}
	return measure(c.runs, programs...)
}

// diffSample times `diff HEAD~1 HEAD` in dir by bin; it exits 0 or 1 (a
// break found), anything else is fatal.
func (c *config) diffSample(dir, bin string) sample {
	s := c.runIn(dir, "", "", true, bin, "diff", "HEAD~1", "HEAD")
	if s.code != 0 && s.code != 1 {
		fail(fmt.Errorf("rotate-certs diff HEAD~1 HEAD in %s: exit %d", dir, s.code))
	}
	return s
}

// fleetRatios prints the ratios the fleet section is read by: render,
// check and diff at each size over the same at the size ten times smaller
// (linear: 10; goal at most 10.5), check's peak RSS over render's (goal:
// at most 1, both stream), and a re-render and a diff over check at each
// size (goals: at most 2.5 and 1.5).
func (c *config) fleetRatios(sizes []int, at map[int]fleetRow) {
	ratio := func(a, b time.Duration) float64 { return a.Seconds() / b.Seconds() }
	for _, n := range sizes {
		small, ok := at[n/10]
		if n%10 != 0 || !ok {
			continue
		}
		big := at[n]
		for _, cmd := range []struct {
			name       string
			big, small sample
		}{{"render", big.render, small.render}, {"check", big.check, small.check}, {"diff", big.diff, small.diff}} {
			fmt.Printf("%s(%d)/%s(%d): CPU %.2f, wall %.2f, peak RSS %.2f (linear: 10; goal <= 10.5)\n", cmd.name, n, cmd.name, n/10,
				ratio(cmd.big.cpu, cmd.small.cpu), ratio(cmd.big.wall, cmd.small.wall), float64(cmd.big.rss)/float64(cmd.small.rss))
		}
	}
	for _, n := range sizes {
		r := at[n]
		fmt.Printf("check(%d) peak RSS / render(%d) peak RSS: %.2f (goal <= 1)\n", n, n, float64(r.check.rss)/float64(r.render.rss))
		fmt.Printf("re-render(%d)/check(%d): CPU %.2f, wall %.2f (goal <= 2.5)\n", n, n, ratio(r.rerender.cpu, r.check.cpu), ratio(r.rerender.wall, r.check.wall))
		fmt.Printf("diff(%d)/check(%d): CPU %.2f, wall %.2f, peak RSS %.2f (goal <= 1.5)\n", n, n, ratio(r.diff.cpu, r.check.cpu), ratio(r.diff.wall, r.check.wall), float64(r.diff.rss)/float64(r.check.rss))
	}
}
