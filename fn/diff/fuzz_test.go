package diff

import (
	"bytes"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/exit"
	"github.com/rotate-certs/rotate-certs/fn/trustdiff"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
)

// FuzzDiff runs the whole of `rotate-certs diff` - reading, kustomize
// builds, the model, the verdict, the output, the exit status - over two
// directories whose trees the fuzzer's bytes choose (fuzzTree: a
// kustomization with generators, patches, a base and a component, plain
// manifests beside it). For any input: no panic; the exit status is 0, 1
// or 2, and 2 writes nothing on stdout; the JSON parses and every object
// it lists names its file; no key material and no PEM armour on stdout or
// stderr; the exit status is the same in every format; `diff A A` is exit
// 0 and empty (what A cannot read is unchanged: a warning); and the CAs
// `diff A B` adds are the ones `diff B A` removes.
func FuzzDiff(f *testing.F) {
	m := newFuzzMaterial()
	needles := keyNeedles(m)
	f.Add([]byte{}, []byte{})
	f.Fuzz(func(t *testing.T, base, head []byte) { diffProperties(t, m, needles, base, head) })
}

// diffProperties fails t when the diffs of the trees base and head choose
// break a property of FuzzDiff.
func diffProperties(t testing.TB, m fuzzMaterial, needles []string, base, head []byte) {
	t.Helper()
	a, b := fuzzTree(base, m), fuzzTree(head, m)
	dirA, dirB := writeTree(t, a), writeTree(t, b)
	same := diffDirs(t, dirA, writeTree(t, a), "json", needles)
	if same.code != exit.OK || !same.res.Empty() {
		t.Fatalf("diff A A: exit %d, want 0 and nothing listed:\n%s\nstderr:\n%s", same.code, same.stdout, same.stderr)
	}
	ab, ba := diffDirs(t, dirA, dirB, "json", needles), diffDirs(t, dirB, dirA, "json", needles)
	format := []string{"table", "markdown"}[len(head)%2]
	if shown := diffDirs(t, dirA, dirB, format, needles); shown.code != ab.code {
		t.Fatalf("exit %d as %s, %d as json:\n%s\nstderr:\n%s", shown.code, format, ab.code, shown.stdout, shown.stderr)
	}
	if ab.code == exit.Usage || ba.code == exit.Usage {
		return
	}
	if added, removed := trustCAs(ab.res, true), trustCAs(ba.res, false); !slices.Equal(added, removed) {
		t.Fatalf("diff A B added:\n%s\ndiff B A removed:\n%s", strings.Join(added, "\n"), strings.Join(removed, "\n"))
	}
}

// diffRun is one run of the command.
type diffRun struct {
	stdout, stderr string
	code           exit.Code
	// res is the result read back from stdout (-o json, exit 0 or 1).
	res trustdiff.Result
}

// diffDirs runs `rotate-certs diff base head -o format` at
// testpki.GoldenNow and fails t when the run breaks a property that holds
// for any input (diffRun.check).
func diffDirs(t testing.TB, base, head, format string, needles []string) diffRun {
	t.Helper()
	var out, errb bytes.Buffer
	log := exit.NewPrinter(&errb, "rotate-certs diff")
	err := Run(Options{Base: Side{Dir: base}, Head: Side{Dir: head}, Dir: base, Now: testpki.GoldenNow, Format: format}, &out, log)
	log.Error(err)
	r := diffRun{stdout: out.String(), stderr: errb.String(), code: exit.CodeOf(err)}
	r.check(t, format, needles)
	return r
}

// check fails t when run r breaks a property that holds for any input.
func (r *diffRun) check(t testing.TB, format string, needles []string) {
	t.Helper()
	switch {
	case r.code != exit.OK && r.code != exit.Failed && r.code != exit.Usage:
		t.Fatalf("exit %d:\n%s", r.code, r.stderr)
	case r.code == exit.Usage && r.stdout != "":
		t.Fatalf("exit 2 with output:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
	for _, text := range []string{r.stdout, r.stderr} {
		for _, n := range append([]string{"PRIVATE KEY", "-----BEGIN", "-----END"}, needles...) {
			if strings.Contains(text, n) {
				t.Fatalf("output holds %q:\n%s", n, text)
			}
		}
	}
	if format != "json" || r.code == exit.Usage {
		return
	}
	if err := json.Unmarshal([]byte(r.stdout), &r.res); err != nil {
		t.Fatalf("JSON does not parse: %v\n%s", err, r.stdout)
	}
	for _, res := range listed(r.res) {
		if res.File == "" {
			t.Fatalf("%s %s/%s listed without its file:\n%s", res.Kind, res.Namespace, res.Name, r.stdout)
		}
	}
}

// listed are the objects a result lists.
func listed(r trustdiff.Result) []trustdiff.Resource {
	var out []trustdiff.Resource
	for _, c := range r.Trust {
		out = append(out, c.Resource)
	}
	for _, b := range r.Breaks {
		out = append(out, b.Certificate.Resource, b.Trust.Resource)
	}
	for _, p := range r.Planted {
		out = append(out, p.Resource)
	}
	for _, w := range r.Rolls {
		out = append(out, w.Resource)
	}
	for _, f := range r.Facts {
		out = append(out, f.Resource)
	}
	for _, c := range slices.Concat(r.Rollouts, r.Alerts, r.Policies) {
		out = append(out, c.Resource)
	}
	return out
}

// trustCAs are the CAs a result's trust changes add (or remove), one line
// per object, value and CA, sorted. Each direction names an object's file,
// name and field as its HEAD holds them - a value written to data on one
// side and to stringData on the other is the same value, a generated
// object with and without the hash of its content in its name is the same
// object - so an object is its kind, namespace and name before the hash,
// a value its key.
func trustCAs(r trustdiff.Result, added bool) []string {
	var out []string
	for _, c := range r.Trust {
		cas := c.Removed
		if added {
			cas = c.Added
		}
		field := c.Field
		for _, encoded := range []string{"stringData.", "binaryData."} {
			if key, ok := strings.CutPrefix(field, encoded); ok {
				field = "data." + key
			}
		}
		name := c.Resource.Name
		if c.Resource.Kustomization != "" {
			name = kustomizeHash.ReplaceAllString(name, "")
		}
		for _, ca := range cas {
			out = append(out, c.Resource.Kind+" "+c.Resource.Namespace+"/"+name+" "+field+" "+ca.SHA256)
		}
	}
	slices.Sort(out)
	return out
}

// kustomizeHash is the hash of its content kustomize appends to a
// generated name (api/hasher: ten characters of hex with 0, 1, 3, a and e
// written g, h, k, m and t).
var kustomizeHash = regexp.MustCompile(`-[2456789bcdfghkmt]{10}$`)

// keyNeedles are what would show a key of m: a line of its PEM body, and
// a stretch of its base64 at each of the three alignments a value may
// put it at.
func keyNeedles(m fuzzMaterial) []string {
	var out []string
	for _, k := range m.keys {
		lines := strings.Split(strings.TrimSpace(k), "\n")
		out = append(out, lines[1:len(lines)-1]...)
		for i := range 3 {
			out = append(out, b64(k[i:])[40:80])
		}
	}
	return out
}
