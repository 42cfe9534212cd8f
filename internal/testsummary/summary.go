//go:build devtools

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
)

// event is one line of `go test -json` (see `go doc cmd/test2json`), and
// of the build events `go test -json` interleaves with it.
type event struct {
	Action      string
	Package     string
	Test        string
	Elapsed     float64
	Output      string
	ImportPath  string // build-output and build-fail events
	FailedBuild string
}

// Summary is what the stream said, grouped for printing.
type Summary struct {
	packages []packageResult
	failed   []testOutput
	skipped  []testOutput
	builds   []testOutput // output of packages that failed to build
}

type packageResult struct {
	name    string
	action  string // pass, fail, skip
	elapsed float64
}

type testOutput struct {
	pkg, test string
	output    []string
}

// Summarize reads a `go test -json` stream. Each package's result line is
// written to progress as soon as the stream reports it (nil: nowhere), so a
// long run shows where it is; Write prints the rest at the end.
func Summarize(r io.Reader, progress io.Writer) (*Summary, error) {
	if progress == nil {
		progress = io.Discard
	}
	s := &Summary{}
	outputs := map[string][]string{} // package + " " + test -> output lines
	buildOut := map[string][]string{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for sc.Scan() {
		line := sc.Text()
		var e event
		if !strings.HasPrefix(line, "{") || json.Unmarshal([]byte(line), &e) != nil {
			fmt.Fprintln(progress, line) // go vet or the go command on the same stream
			continue
		}
		key := e.Package + " " + e.Test
		switch e.Action {
		case "output":
			outputs[key] = append(outputs[key], e.Output)
		case "build-output":
			buildOut[e.ImportPath] = append(buildOut[e.ImportPath], e.Output)
		case "build-fail":
			s.builds = append(s.builds, testOutput{pkg: e.ImportPath, output: buildOut[e.ImportPath]})
		case "pass", "fail", "skip":
			if e.Test == "" {
				p := packageResult{name: e.Package, action: e.Action, elapsed: e.Elapsed}
				s.packages = append(s.packages, p)
				p.write(progress)
				if e.Action == "fail" {
					// Output printed outside any test (TestMain, a panic
					// in init, a timeout) is only in the package's events.
					s.failed = append(s.failed, testOutput{pkg: e.Package, output: outputs[key]})
				}
				continue
			}
			switch e.Action {
			case "fail":
				s.failed = append(s.failed, testOutput{pkg: e.Package, test: e.Test, output: outputs[key]})
			case "skip":
				s.skipped = append(s.skipped, testOutput{pkg: e.Package, test: e.Test, output: outputs[key]})
			}
			delete(outputs, key)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading the go test -json stream: %w", err)
	}
	return s, nil
}

// OK reports whether every package passed (or had no tests) and at least
// one package was reported.
func (s *Summary) OK() bool {
	if len(s.packages) == 0 || len(s.builds) > 0 {
		return false
	}
	for _, p := range s.packages {
		if p.action == "fail" {
			return false
		}
	}
	return true
}

func (p packageResult) write(w io.Writer) {
	switch p.action {
	case "pass":
		fmt.Fprintf(w, "ok   %s\t%.2fs\n", p.name, p.elapsed)
	case "fail":
		fmt.Fprintf(w, "FAIL %s\t%.2fs\n", p.name, p.elapsed)
	}
}

// Write prints what follows the package lines: the output of every
// failed build and test, the skipped tests with their reasons, and a
// closing verdict.
func (s *Summary) Write(w io.Writer) error {
	b := bufio.NewWriter(w)
	for _, f := range s.builds {
		fmt.Fprintf(b, "\n--- BUILD FAILED: %s\n%s", f.pkg, strings.Join(f.output, ""))
	}
	for _, f := range s.failed {
		if f.test == "" && len(f.output) == 0 {
			continue
		}
		name := f.pkg
		if f.test != "" {
			name += " " + f.test
		}
		fmt.Fprintf(b, "\n--- FAILED: %s\n%s", name, strings.Join(f.output, ""))
	}
	if len(s.skipped) > 0 {
		sort.SliceStable(s.skipped, func(i, j int) bool {
			return s.skipped[i].pkg+" "+s.skipped[i].test < s.skipped[j].pkg+" "+s.skipped[j].test
		})
		fmt.Fprintf(b, "\n%d skipped test(s):\n", len(s.skipped))
		for _, sk := range s.skipped {
			fmt.Fprintf(b, "  SKIP %s %s: %s\n", shortPackage(sk.pkg), sk.test, skipReason(sk.output))
		}
	}
	failures, passed := len(s.builds), 0
	for _, p := range s.packages {
		switch p.action {
		case "fail":
			failures++
		case "pass":
			passed++
		}
	}
	switch {
	case len(s.packages) == 0 && failures == 0:
		fmt.Fprintln(b, "\nno test results: did the build fail?")
	case failures > 0:
		fmt.Fprintf(b, "\nFAIL: %d package(s) failed\n", failures)
	default:
		fmt.Fprintf(b, "\nPASS: %d package(s) tested, %d skipped test(s)\n", passed, len(s.skipped))
	}
	return b.Flush()
}

// skipReason is what the test said when it skipped: its output without the
// "=== RUN" and "--- SKIP" framing lines, on one line.
func skipReason(lines []string) string {
	var parts []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- SKIP") {
			continue
		}
		parts = append(parts, t)
	}
	if len(parts) == 0 {
		return "(no reason given)"
	}
	return strings.Join(parts, " / ")
}

// shortPackage drops the module path, which every package shares.
func shortPackage(pkg string) string {
	const module = "github.com/rotate-certs/rotate-certs/"
	return strings.TrimPrefix(pkg, module)
}
