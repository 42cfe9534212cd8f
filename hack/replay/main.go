//go:build devtools

// Command replay replays git histories no one here wrote through the built
// `rotate-certs diff` and checks, on every commit C, the invariants
// docs/design/replay.md states: diff C C is empty; a commit that changes
// no file a build reads is quiet; every trust value change an independent
// finder sees is reported; no roll without a pod-template change; an exit
// 2 comes from a file the commit touched. It prints a markdown table of
// the violations per invariant and repository, with the median and p99
// time per commit, and writes every violation as JSON. `make replay` runs
// it; it is not part of `make test`.
//
//	go run -tags devtools ./hack/replay [-bin bin/rotate-certs] [-j N] [-all-below 2500]
//	    [-out replay.json] [-table FILE] [-work DIR] [-log FILE] [-commits HASH,...] REPO...
//
// REPO is [NAME=]GITDIR[@REV][#MAX]: a git directory (bare or not; a
// fetched snapshot's OWNER+NAME/repo is named OWNER/NAME), the newest
// commit to replay (HEAD) and, for a history longer than -all-below
// commits, how many of the newest commits that change a file a build reads
// to replay (all when absent; every commit that changes a certificate file
// is replayed too). A history of at most -all-below commits is replayed
// whole. Each repository is cloned with --no-checkout --shared under -work,
// and diff runs there on revisions, with --now the commit's committer date,
// so every verdict can be reproduced; commits run in parallel on -j
// workers (every CPU).
//
// It lives in the main module because it adds no dependency to it: beside
// the standard library it uses only go.yaml.in/yaml/v3, which go.mod
// already requires for kyaml, and so make test runs its tests with the
// module's. Like the other programs of hack/ it builds with the devtools
// tag only, which make gives every go command. It imports nothing of rotate-certs (TestIndependentOfRotateCerts
// checks): the finder it checks diff against must not share diff's code,
// nor its mistakes.
//
// The exit status is 0 when no invariant is violated, 1 when one is, 2 when
// the replay itself could not run.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

type options struct {
	bin, out, table, work string
	workers, allBelow     int
	timeout               time.Duration
	commits, log          string
	keep                  bool
}

func run(args []string) int {
	var o options
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	fs.StringVar(&o.bin, "bin", "bin/rotate-certs", "the rotate-certs binary to replay")
	fs.IntVar(&o.workers, "j", runtime.NumCPU(), "commits replayed at once")
	fs.IntVar(&o.allBelow, "all-below", 2500, "replay every commit of a history of at most this many commits")
	fs.StringVar(&o.out, "out", "replay.json", "write the counts and every violation to this JSON file")
	fs.StringVar(&o.table, "table", "", "write the markdown tables to this file (default: standard output)")
	fs.StringVar(&o.work, "work", "", "clone the repositories here (default: a temporary directory, removed after)")
	fs.DurationVar(&o.timeout, "timeout", 10*time.Minute, "longest one diff may run: past it, a crash")
	fs.StringVar(&o.commits, "commits", "", "replay only the commits whose hash starts with one of these (comma-separated)")
	fs.StringVar(&o.log, "log", "", "append each commit's result to this JSON-lines file, and take the commits it already holds from it (resume a run)")
	if err := fs.Parse(args); err != nil || fs.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: replay [flags] [NAME=]GITDIR[@REV][#MAX]...")
		return 2
	}
	if err := o.setup(); err != nil {
		fmt.Fprintln(os.Stderr, "replay:", err)
		return 2
	}
	if !o.keep {
		defer os.RemoveAll(o.work)
	}
	rep, err := replay(o, fs.Args())
	if err != nil {
		fmt.Fprintln(os.Stderr, "replay:", err)
		return 2
	}
	if len(rep.Violations) > 0 {
		return 1
	}
	return 0
}

// setup makes the binary's path absolute (diff runs in each clone) and the
// work directory.
func (o *options) setup() error {
	bin, err := filepath.Abs(o.bin)
	if err != nil {
		return err
	}
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("%s: build it first (make build)", o.bin)
	}
	o.bin = bin
	if o.work != "" {
		o.keep = true
		return os.MkdirAll(o.work, 0o755)
	}
	o.work, err = os.MkdirTemp("", "replay-")
	return err
}

func replay(o options, args []string) (*report, error) {
	var repos []*repoRun
	var jobs []job
	for _, arg := range args {
		spec, err := parseSpec(arg)
		if err != nil {
			return nil, err
		}
		r, err := openRepo(spec, o.work, o.allBelow)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", spec.Name, err)
		}
		r.Selected = only(r.Selected, o.commits)
		fmt.Fprintf(os.Stderr, "replay: %s: %d commits at %s, %d to replay\n", spec.Name, r.Total, short(r.Head), len(r.Selected))
		repos = append(repos, r)
		for _, c := range r.Selected {
			jobs = append(jobs, job{repo: r, c: c})
		}
	}
	version, _ := exec.Command(o.bin, "version").Output()
	rep := newReport(strings.TrimPrefix(strings.TrimSpace(string(version)), "rotate-certs "), o.workers, repos)
	jobs, log, err := resume(o.log, jobs, rep)
	if err != nil {
		return nil, err
	}
	defer log.Close()
	start, done := time.Now(), 0
	replayAll(config{Bin: o.bin, Timeout: o.timeout}, jobs, o.workers, func(res commitResult) {
		rep.add(res)
		if log != nil {
			b, _ := json.Marshal(res)
			log.Write(append(b, '\n'))
		}
		done++
		if done%50 == 0 || done == len(jobs) {
			fmt.Fprintf(os.Stderr, "replay: %d/%d commits, %d violations, %s\n", done, len(jobs),
				len(rep.Violations), time.Since(start).Round(time.Second))
		}
	})
	rep.finish()
	if err := rep.writeJSON(o.out); err != nil {
		return nil, err
	}
	w := os.Stdout
	if o.table != "" {
		f, err := os.Create(o.table)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		w = f
	}
	rep.writeMarkdown(w)
	return rep, nil
}

// resume counts the results a -log file already holds for the jobs and
// returns the jobs left, with the file open for appending; no file, no
// log.
func resume(file string, jobs []job, rep *report) ([]job, *os.File, error) {
	if file == "" {
		return jobs, nil, nil
	}
	done := map[string]bool{}
	if content, err := os.ReadFile(file); err == nil {
		wanted := map[string]bool{}
		for _, j := range jobs {
			wanted[j.repo.Spec.Name+" "+j.c.Hash] = true
		}
		for _, line := range bytes.Split(content, []byte("\n")) {
			var res commitResult
			if len(line) == 0 || json.Unmarshal(line, &res) != nil || !wanted[res.Repo+" "+res.Commit] || done[res.Repo+" "+res.Commit] {
				continue
			}
			done[res.Repo+" "+res.Commit] = true
			rep.add(res)
		}
	}
	var left []job
	for _, j := range jobs {
		if !done[j.repo.Spec.Name+" "+j.c.Hash] {
			left = append(left, j)
		}
	}
	if len(done) > 0 {
		fmt.Fprintf(os.Stderr, "replay: %d commits taken from %s, %d left\n", len(done), file, len(left))
	}
	f, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	return left, f, err
}

// only keeps the commits whose hash starts with one of the comma-separated
// prefixes; all of them when there are none.
func only(commits []commit, prefixes string) []commit {
	if prefixes == "" {
		return commits
	}
	var out []commit
	for _, c := range commits {
		for _, p := range strings.Split(prefixes, ",") {
			if p != "" && strings.HasPrefix(c.Hash, p) {
				out = append(out, c)
				break
			}
		}
	}
	return out
}
