//go:build devtools

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"sort"
	"strings"
	"time"
)

// resource is how diff's JSON names an object (rotate-certs.dev/diff/v1),
// decoded here on its own: the harness shares no code with diff.
type resource struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace"`
	Name       string `json:"name"`
	File       string `json:"file"`
	// Kustomization is the kustomization whose build made the object,
	// when a build did.
	Kustomization string `json:"kustomization"`
}

func (r resource) String() string {
	name := r.Name
	if r.Namespace != "" {
		name = r.Namespace + "/" + r.Name
	}
	return fmt.Sprintf("%s %s (%s)", r.Kind, name, r.File)
}

// listedCA is a CA as a trust change lists it.
type listedCA struct {
	Subject string `json:"subject"`
	SHA256  string `json:"sha256"`
}

// trustChange is one entry of diff's "trust" list.
type trustChange struct {
	Resource resource   `json:"resource"`
	Field    string     `json:"field"`
	Added    []listedCA `json:"added"`
	Removed  []listedCA `json:"removed"`
}

// roll is one entry of diff's "rolls" list; a roll with a wave is one a
// roll-out in waves does later, not one this change makes.
type roll struct {
	Resource resource `json:"resource"`
	Wave     string   `json:"wave"`
}

// certFile is one entry of diff's "certificateFiles": a certificate or key
// file no build reads that the change touches, listed and not judged.
type certFile struct {
	File string `json:"file"`
}

// diffOutput is what the harness reads of diff's JSON: the trust changes,
// the rolls, the certificate files, and the length of every top-level
// list by name (so that a list diff adds later counts as something listed
// without the harness knowing it).
type diffOutput struct {
	SchemaVersion    string        `json:"schemaVersion"`
	Trust            []trustChange `json:"trust"`
	Rolls            []roll        `json:"rolls"`
	CertificateFiles []certFile    `json:"certificateFiles"`
	Lists            map[string]int
}

// informational are the top-level lists that say how a tree was read, not
// what a change does: they may be non-empty on a quiet commit.
var informational = map[string]bool{"incomplete": true, "warnings": true, "notes": true, "duplicates": true}

func decodeDiff(stdout []byte) (*diffOutput, error) {
	var out diffOutput
	if err := json.Unmarshal(stdout, &out); err != nil {
		return nil, err
	}
	if out.SchemaVersion == "" {
		return nil, errors.New("no schemaVersion")
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(stdout, &top); err != nil {
		return nil, err
	}
	out.Lists = map[string]int{}
	for name, raw := range top {
		var list []json.RawMessage
		if json.Unmarshal(raw, &list) == nil {
			out.Lists[name] = len(list)
		}
	}
	return &out, nil
}

// listed names the non-empty lists that say what a change does, with
// their lengths ("rolls=55"), sorted; empty when diff listed nothing.
func (o *diffOutput) listed() []string {
	var names []string
	for name, n := range o.Lists {
		if n > 0 && !informational[name] {
			names = append(names, fmt.Sprintf("%s=%d", name, n))
		}
	}
	sort.Strings(names)
	return names
}

// diffRun is one run of rotate-certs diff.
type diffRun struct {
	Base, Head string
	Exit       int // -1 when it did not exit (killed, timed out)
	Stdout     []byte
	Stderr     []byte
	Elapsed    time.Duration
	CPU        time.Duration // user and system time of the run
	Out        *diffOutput   // nil when stdout is not diff's JSON (an exit 2 may write it or not)
	Crash      string        // why this run is a crash: a panic, a signal, a timeout, an unknown status, exit 0 or 1 without the JSON
}

// runDiff runs `bin diff base head -o json --now now` in dir.
func runDiff(bin, dir, base, head string, now time.Time, timeout time.Duration) diffRun {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "diff", base, head, "-o", "json", "--now", now.UTC().Format(time.RFC3339))
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r := diffRun{Base: base, Head: head, Elapsed: time.Since(start), Stdout: stdout.Bytes(), Stderr: stderr.Bytes()}
	r.Exit = cmd.ProcessState.ExitCode()
	r.CPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	switch {
	case ctx.Err() != nil:
		r.Crash = fmt.Sprintf("timed out after %s", timeout)
	case err != nil && r.Exit < 0:
		r.Crash = err.Error()
	default:
		r.Crash = crashOf(r.Exit, r.Stderr)
	}
	// diff writes its JSON on exit 2 too when it read what it could; the
	// checks that need it use it then
	out, err := decodeDiff(r.Stdout)
	if err != nil && r.Crash == "" && (r.Exit == 0 || r.Exit == 1) {
		r.Crash = fmt.Sprintf("exit %d without the JSON: %v", r.Exit, err)
	}
	r.Out = out
	return r
}

// crashOf says why a run that exited with status exit and wrote stderr is
// a crash, or "": a Go panic or fatal error, or a status diff does not
// document.
func crashOf(exit int, stderr []byte) string {
	for _, marker := range []string{"panic: ", "fatal error: ", "goroutine 1 ["} {
		if i := bytes.Index(stderr, []byte(marker)); i >= 0 {
			line, _, _ := bytes.Cut(stderr[i:], []byte("\n"))
			return string(line)
		}
	}
	if exit != 0 && exit != 1 && exit != 2 {
		return fmt.Sprintf("exit status %d", exit)
	}
	return ""
}

// errorLines are the lines of diff's stderr that are neither notes nor
// warnings: the errors an exit 2 comes from.
func errorLines(stderr []byte) []string {
	var lines []string
	for _, line := range strings.Split(string(stderr), "\n") {
		msg, ok := strings.CutPrefix(line, "rotate-certs diff: ")
		if !ok || strings.HasPrefix(msg, "note: ") || strings.HasPrefix(msg, "warning: ") {
			continue
		}
		lines = append(lines, msg)
	}
	return lines
}

// firstError is the first error line, for a violation's detail.
func firstError(stderr []byte) string {
	if lines := errorLines(stderr); len(lines) > 0 {
		return clip(lines[0], 300)
	}
	return ""
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
