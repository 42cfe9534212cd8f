//go:build devtools

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"
)

// repoStats is what the replay of one repository counted.
type repoStats struct {
	Name        string         `json:"name"`
	URL         string         `json:"url"`
	Head        string         `json:"head"`
	Newest      string         `json:"newestReplayed"`
	NewestWhen  time.Time      `json:"newestReplayedDate"`
	Oldest      string         `json:"oldestReplayed"`
	OldestWhen  time.Time      `json:"oldestReplayedDate"`
	Total       int            `json:"commits"`
	All         bool           `json:"everyCommit"`
	Selected    int            `json:"selected"`
	Quiet       int            `json:"quietCommits"` // selected commits with a parent that change no file a build reads: invariant 2 applies
	Replayed    int            `json:"replayed"`
	Roots       int            `json:"rootCommits"`
	Violations  map[string]int `json:"violations"`
	ChangeExits map[int]int    `json:"changeExits"`
	SelfExits   map[int]int    `json:"selfExits"`
	Median      float64        `json:"medianSeconds"`
	P99         float64        `json:"p99Seconds"`
	MedianCPU   float64        `json:"medianCPUSeconds"`
	P99CPU      float64        `json:"p99CPUSeconds"`
	Deltas      int            `json:"finderTrustChanges"`
	Unreadable  int            `json:"finderUnreadableFiles"`
	Missing     int            `json:"missingBlobs"`
	Unchecked   int            `json:"uncheckedRolls"`
	Checked     int            `json:"checkedWithJSON"`
	Slowest     []string       `json:"slowest"`
	Errors      []string       `json:"harnessErrors,omitempty"`
	times, cpu  []time.Duration
	slow        []commitTime
}

type commitTime struct {
	hash    string
	elapsed time.Duration
}

// report is the whole replay: the table's rows and every violation.
type report struct {
	Schema      string       `json:"schemaVersion"`
	Date        time.Time    `json:"date"`
	RotateCerts string       `json:"rotateCerts"`
	Workers     int          `json:"workers"`
	Repos       []*repoStats `json:"repositories"`
	Violations  []violation  `json:"violations"`
	byName      map[string]*repoStats
}

func newReport(version string, workers int, repos []*repoRun) *report {
	rep := &report{Schema: "rotate-certs.dev/replay/v1", Date: time.Now().UTC(), RotateCerts: version,
		Workers: workers, byName: map[string]*repoStats{}, Violations: []violation{}}
	for _, r := range repos {
		s := &repoStats{Name: r.Spec.Name, URL: "https://github.com/" + r.Spec.Name, Head: r.Head, Total: r.Total,
			All: r.All, Selected: len(r.Selected), Violations: map[string]int{},
			ChangeExits: map[int]int{}, SelfExits: map[int]int{}}
		for _, c := range r.Selected {
			if c.Parent != "" && !r.Dirs.touchesBuild(c) {
				s.Quiet++
			}
		}
		if n := len(r.Selected); n > 0 {
			s.Newest, s.NewestWhen = r.Selected[0].Hash, r.Selected[0].When
			s.Oldest, s.OldestWhen = r.Selected[n-1].Hash, r.Selected[n-1].When
		}
		rep.Repos = append(rep.Repos, s)
		rep.byName[s.Name] = s
	}
	return rep
}

// add counts one commit's replay.
func (rep *report) add(res commitResult) {
	s := rep.byName[res.Repo]
	if res.Err != "" {
		s.Errors = append(s.Errors, fmt.Sprintf("%s: %s", short(res.Commit), res.Err))
	}
	s.Replayed++
	s.times = append(s.times, res.Elapsed)
	if res.CPU > 0 { // a result of a log written before the CPU was recorded has none
		s.cpu = append(s.cpu, res.CPU)
	}
	s.slow = append(s.slow, commitTime{res.Commit, res.Elapsed})
	if res.Checked {
		s.Checked++
	}
	s.SelfExits[res.SelfExit]++
	if res.Root {
		s.Roots++
	} else {
		s.ChangeExits[res.ChangeExit]++
	}
	s.Deltas += res.Deltas
	s.Unreadable += res.Unreadable
	s.Missing += res.Missing
	s.Unchecked += res.Unchecked
	for _, v := range res.Violations {
		s.Violations[v.Invariant]++
		rep.Violations = append(rep.Violations, v)
	}
}

// finish computes the times and sorts the violations.
func (rep *report) finish() {
	for _, s := range rep.Repos {
		s.Median, s.P99 = quantile(s.times, 0.5), quantile(s.times, 0.99)
		s.MedianCPU, s.P99CPU = quantile(s.cpu, 0.5), quantile(s.cpu, 0.99)
		sort.Slice(s.slow, func(i, j int) bool { return s.slow[i].elapsed > s.slow[j].elapsed })
		for _, c := range s.slow[:min(5, len(s.slow))] {
			s.Slowest = append(s.Slowest, fmt.Sprintf("%s %.1fs", short(c.hash), c.elapsed.Seconds()))
		}
	}
	sort.SliceStable(rep.Violations, func(i, j int) bool {
		a, b := rep.Violations[i], rep.Violations[j]
		if a.Repo != b.Repo {
			return a.Repo < b.Repo
		}
		if a.Invariant != b.Invariant {
			return a.Invariant < b.Invariant
		}
		return a.Commit < b.Commit
	})
}

// quantile is the q-quantile of times in seconds (nearest rank).
func quantile(times []time.Duration, q float64) float64 {
	if len(times) == 0 {
		return 0
	}
	sorted := append([]time.Duration(nil), times...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	i := int(q*float64(len(sorted))+0.999999) - 1
	return sorted[max(0, min(i, len(sorted)-1))].Seconds()
}

func (rep *report) writeJSON(file string) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(file, append(b, '\n'), 0o644)
}

// writeMarkdown writes the tables of docs/design/replay.md.
func (rep *report) writeMarkdown(w io.Writer) {
	fmt.Fprintf(w, "Replayed on %s with `rotate-certs %s`, %d workers.\n\n",
		rep.Date.Format("2006-01-02"), rep.RotateCerts, rep.Workers)
	rep.writeSummary(w)
	rep.writeRanges(w)
	rep.writeExits(w)
	rep.writeKinds(w)
}

func (rep *report) writeSummary(w io.Writer) {
	fmt.Fprintln(w, "| repository | commits replayed | 1 C C empty | 2 quiet | 3 reported | 4 roll | 5 exit 2 | crashes | median s | p99 s | median CPU s | p99 CPU s |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	total := &repoStats{Violations: map[string]int{}}
	for _, s := range rep.Repos {
		rep.summaryRow(w, s.Name, s)
		total.Replayed += s.Replayed
		total.times = append(total.times, s.times...)
		total.cpu = append(total.cpu, s.cpu...)
		for k, n := range s.Violations {
			total.Violations[k] += n
		}
	}
	total.Median, total.P99 = quantile(total.times, 0.5), quantile(total.times, 0.99)
	total.MedianCPU, total.P99CPU = quantile(total.cpu, 0.5), quantile(total.cpu, 0.99)
	rep.summaryRow(w, "**total**", total)
	fmt.Fprintln(w)
}

func (rep *report) summaryRow(w io.Writer, name string, s *repoStats) {
	fmt.Fprintf(w, "| %s | %d |", name, s.Replayed)
	for _, inv := range invariants {
		fmt.Fprintf(w, " %d |", s.Violations[inv])
	}
	fmt.Fprintf(w, " %.2f | %.2f | %.2f | %.2f |\n", s.Median, s.P99, s.MedianCPU, s.P99CPU)
}

func (rep *report) writeRanges(w io.Writer) {
	fmt.Fprintln(w, "| repository | newest commit replayed | oldest commit replayed | selection |")
	fmt.Fprintln(w, "| --- | --- | --- | --- |")
	for _, s := range rep.Repos {
		sel := fmt.Sprintf("every commit (%d)", s.Total)
		if !s.All {
			sel = fmt.Sprintf("%d of %d commits (those that change a file a build reads: the newest, and every one that changes a certificate file)", s.Selected, s.Total)
		}
		fmt.Fprintf(w, "| %s | `%s` (%s) | `%s` (%s) | %s |\n", s.URL, short(s.Newest), s.NewestWhen.Format("2006-01-02"),
			short(s.Oldest), s.OldestWhen.Format("2006-01-02"), sel)
	}
	fmt.Fprintln(w)
}

func (rep *report) writeExits(w io.Writer) {
	fmt.Fprintln(w, "| repository | diff C^ C exit 0 / 1 / 2 / other | diff C C exit 0 / 1 / 2 / other | no file a build reads (2 checked) | diff C^ C with JSON (3, 4 checked) | finder: trust changes seen | finder: unreadable files | rolls unchecked | harness errors |")
	fmt.Fprintln(w, "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, s := range rep.Repos {
		fmt.Fprintf(w, "| %s | %s | %s | %d | %d | %d | %d | %d | %d |\n", s.Name, exits(s.ChangeExits), exits(s.SelfExits),
			s.Quiet, s.Checked, s.Deltas, s.Unreadable, s.Unchecked, len(s.Errors))
	}
	fmt.Fprintln(w)
}

func exits(m map[int]int) string {
	other := 0
	for code, n := range m {
		if code < 0 || code > 2 {
			other += n
		}
	}
	return fmt.Sprintf("%d / %d / %d / %d", m[0], m[1], m[2], other)
}

// writeKinds groups the violations by invariant, kind and repository,
// with up to three example commits each.
func (rep *report) writeKinds(w io.Writer) {
	type group struct {
		inv, kind, repo string
		n               int
		commits         map[string]bool
		examples        []string
		detail          string
	}
	var groups []*group
	index := map[string]*group{}
	for _, v := range rep.Violations {
		key := v.Invariant + "\x00" + v.Kind + "\x00" + v.Repo
		g := index[key]
		if g == nil {
			g = &group{inv: v.Invariant, kind: v.Kind, repo: v.Repo, detail: v.Detail, commits: map[string]bool{}}
			index[key] = g
			groups = append(groups, g)
		}
		g.n++
		g.commits[v.Commit] = true
		if len(g.examples) < 3 && !contains(g.examples, "`"+short(v.Commit)+"`") {
			g.examples = append(g.examples, "`"+short(v.Commit)+"`")
		}
	}
	sort.SliceStable(groups, func(i, j int) bool {
		a, b := groups[i], groups[j]
		if a.inv != b.inv {
			return a.inv < b.inv
		}
		if a.kind != b.kind {
			return a.kind < b.kind
		}
		return a.repo < b.repo
	})
	fmt.Fprintln(w, "| invariant | kind | repository | violations | commits | example commits | first detail |")
	fmt.Fprintln(w, "| --- | --- | --- | ---: | ---: | --- | --- |")
	for _, g := range groups {
		kind := g.kind
		if g.inv == invReported && !modeled(kind) {
			kind += " (not read by diff yet)"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %d | %d | %s | %s |\n", g.inv, kind, g.repo, g.n, len(g.commits),
			strings.Join(g.examples, " "), strings.ReplaceAll(clip(g.detail, 200), "|", "\\|"))
	}
}
