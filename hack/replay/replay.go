//go:build devtools

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// repoSpec is a repository to replay as the command line names it:
// [NAME=]GITDIR[@REV][#MAX].
type repoSpec struct {
	Name string // owner/name, for the report and the URL
	Dir  string // a git directory, bare or not
	Rev  string // the newest commit replayed; HEAD when empty
	Max  int    // for a repository over -all-below commits: how many of the newest selected commits; 0 is all
}

var specPattern = regexp.MustCompile(`^(?:([^=]+)=)?([^@#]+)(?:@([^#]+))?(?:#(\d+))?$`)

func parseSpec(arg string) (repoSpec, error) {
	m := specPattern.FindStringSubmatch(arg)
	if m == nil {
		return repoSpec{}, fmt.Errorf("%q: want [NAME=]GITDIR[@REV][#MAX]", arg)
	}
	s := repoSpec{Name: m[1], Dir: m[2], Rev: m[3]}
	if m[4] != "" {
		s.Max, _ = strconv.Atoi(m[4])
	}
	if s.Name == "" {
		s.Name = nameOf(s.Dir)
	}
	if s.Rev == "" {
		s.Rev = "HEAD"
	}
	return s, nil
}

// nameOf names a repository by its directory: OWNER+NAME/repo (as fetched
// snapshots are laid out) is OWNER/NAME, anything else its base name.
func nameOf(dir string) string {
	clean := filepath.Clean(dir)
	if filepath.Base(clean) == "repo" || filepath.Base(clean) == ".git" {
		clean = filepath.Dir(clean)
	}
	return strings.Replace(filepath.Base(clean), "+", "/", 1)
}

// repoRun is a repository being replayed: its clone and what was selected.
type repoRun struct {
	Spec     repoSpec
	Clone    string // a --no-checkout --shared clone, where diff runs
	Head     string // the commit Rev names
	Total    int    // commits reachable from Head
	Selected []commit
	All      bool // every commit is replayed (a smaller repository)
	Dirs     kustomizeDirs
}

// openRepo clones spec's repository without a work tree (sharing its
// objects) under work, lists its commits and selects those to replay.
func openRepo(spec repoSpec, work string, allBelow int) (*repoRun, error) {
	head, err := git(spec.Dir, "rev-parse", "--verify", spec.Rev+"^{commit}")
	if err != nil {
		return nil, err
	}
	clone := filepath.Join(work, strings.ReplaceAll(spec.Name, "/", "+"))
	if _, err := os.Stat(clone); os.IsNotExist(err) {
		cmd := exec.Command("git", "clone", "--quiet", "--no-checkout", "--shared", spec.Dir, clone)
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("git clone %s: %v: %s", spec.Dir, err, out)
		}
	}
	r := &repoRun{Spec: spec, Clone: clone, Head: strings.TrimSpace(string(head))}
	all, err := listCommits(clone, r.Head)
	if err != nil {
		return nil, err
	}
	r.Total = len(all)
	r.Dirs = newKustomizeDirs(all)
	r.Selected, r.All = selectCommits(all, r.Dirs, allBelow, spec.Max)
	return r, nil
}

// selectCommits picks the commits to replay: every one of a history of at
// most allBelow commits; of a longer one, those that change a file a build
// reads, the newest max of them (0: all) and every other that changes a
// certificate file.
func selectCommits(all []commit, k kustomizeDirs, allBelow, max int) ([]commit, bool) {
	if len(all) <= allBelow {
		return all, true
	}
	var out []commit
	taken := 0
	for _, c := range all {
		if !k.touchesBuild(c) {
			continue
		}
		if max == 0 || taken < max {
			out = append(out, c)
			taken++
		} else if touchesCertFile(c) {
			out = append(out, c)
		}
	}
	return out, false
}

// config is what every commit's replay needs.
type config struct {
	Bin     string
	Timeout time.Duration
}

// commitResult is the replay of one commit; a line of the -log file.
type commitResult struct {
	Repo       string        `json:"repo"`
	Commit     string        `json:"commit"`
	Root       bool          `json:"root,omitempty"`
	Elapsed    time.Duration `json:"elapsed"`    // both diff runs, wall clock
	CPU        time.Duration `json:"cpu"`        // both diff runs, user and system
	SelfExit   int           `json:"selfExit"`   // diff C C
	ChangeExit int           `json:"changeExit"` // diff C^ C; -2 for a root commit, which has none
	Violations []violation   `json:"violations,omitempty"`
	Unreadable int           `json:"unreadable,omitempty"` // changed manifests the finder could not parse
	Missing    int           `json:"missing,omitempty"`    // changed files the repository lacks
	Unchecked  int           `json:"unchecked,omitempty"`  // rolls whose template the harness could not find
	Deltas     int           `json:"deltas,omitempty"`     // trust values the finder saw change
	Checked    bool          `json:"checked,omitempty"`    // diff C^ C wrote its JSON: invariants 3 and 4 were checked
	Err        string        `json:"error,omitempty"`      // the harness could not read the commit
}

// replayCommit runs diff C C and diff C^ C and checks every invariant.
func replayCommit(cfg config, r *repoRun, c commit) commitResult {
	res := commitResult{Repo: r.Spec.Name, Commit: c.Hash, ChangeExit: -2}
	self := runDiff(cfg.Bin, r.Clone, c.Hash, c.Hash, c.When, cfg.Timeout)
	res.SelfExit, res.Elapsed, res.CPU = self.Exit, self.Elapsed, self.CPU
	vs := append(checkCrash(self), checkSelfEmpty(self)...)
	if c.Parent == "" {
		res.Root = true
		res.Violations = stamp(vs, r.Spec.Name, c.Hash)
		return res
	}
	change := runDiff(cfg.Bin, r.Clone, c.Parent, c.Hash, c.When, cfg.Timeout)
	res.ChangeExit, res.Elapsed, res.CPU = change.Exit, res.Elapsed+change.Elapsed, res.CPU+change.CPU
	res.Checked = change.Out != nil
	b, err := newBlobReader(r.Clone)
	if err != nil {
		res.Err = err.Error()
		return res
	}
	defer b.close()
	changes, err := changedFiles(r.Clone, c.Parent, c.Hash)
	if err != nil {
		res.Err = err.Error()
		return res
	}
	found, err := findChanges(b, changes, r.Dirs)
	if err != nil {
		res.Err = err.Error()
		return res
	}
	res.Unreadable, res.Missing, res.Deltas = len(found.Unreadable), len(found.Missing), len(found.Deltas)
	vs = append(vs, checkCrash(change)...)
	vs = append(vs, checkQuiet(change, r.Dirs.touchesBuild(c))...)
	vs = append(vs, checkReported(change, found.Deltas)...)
	held := newCopies(b, r.Clone, c.Hash)
	rolls, unchecked := checkRolls(change, func(w resource) templateVerdict {
		return rolledTemplate(b, r.Clone, c.Parent, c.Hash, w, held)
	})
	res.Unchecked = unchecked
	vs = append(vs, rolls...)
	touched := map[string]bool{}
	for _, f := range c.Files {
		touched[f] = true
	}
	vs = append(vs, checkExit2(change, touched, func(f string) bool {
		_, atHead, _ := b.read(c.Hash + ":" + f)
		_, atBase, _ := b.read(c.Parent + ":" + f)
		return atHead || atBase
	})...)
	res.Violations = stamp(vs, r.Spec.Name, c.Hash)
	return res
}

func stamp(vs []violation, repo, hash string) []violation {
	for i := range vs {
		vs[i].Repo, vs[i].Commit = repo, hash
		vs[i].Detail = scrub(vs[i].Detail)
	}
	return vs
}

// job is one commit of one repository to replay.
type job struct {
	repo *repoRun
	c    commit
}

// replayAll replays every job on workers goroutines and hands each result
// to done, in the order they finish (done runs on one goroutine).
func replayAll(cfg config, jobs []job, workers int, done func(commitResult)) {
	queue := make(chan job)
	results := make(chan commitResult)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range queue {
				results <- replayCommit(cfg, j.repo, j.c)
			}
		}()
	}
	go func() {
		for _, j := range jobs {
			queue <- j
		}
		close(queue)
		wg.Wait()
		close(results)
	}()
	for res := range results {
		done(res)
	}
}

// pemOrBase64 is key-looking text: a PEM armour or a long base64 run.
var pemOrBase64 = regexp.MustCompile(`-----BEGIN [A-Z ]+-----|[A-Za-z0-9+/]{80,}={0,2}`)

// scrub is the harness's own guard that no certificate or key data
// reaches its output, whatever diff's messages quote.
func scrub(s string) string {
	return pemOrBase64.ReplaceAllString(s, "[redacted]")
}
