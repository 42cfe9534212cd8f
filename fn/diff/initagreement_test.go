package diff

import (
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/exit"
	"github.com/rotate-certs/rotate-certs/fn/initpolicy"
	"github.com/rotate-certs/rotate-certs/fn/trustdiff"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
)

// The agreement property, for init: for every tree of the repository's
// examples and test data, the readers init lists for each source it
// proposes - what a starter policy tells the user to point at the target,
// the workloads its render rolls - are the readers diff counts of that
// object, among the objects of the package init proposes the policy for.
// init reads the manifests as written and diff reads kustomizations built:
// they agree because both ask restart.Readers, by the one namespace rule,
// with the namespaces the builds give (initpolicy.Namespaces).
func TestInitAndDiffAgreeOnReaders(t *testing.T) {
	if testing.Short() {
		t.Skip("walks every tree of examples/ and testdata/")
	}
	sources, disagree := 0, 0
	for _, tr := range agreementTrees(t) {
		n, bad := initAgreesOn(t, tr)
		sources += n
		disagree += len(bad)
		for _, b := range bad {
			t.Errorf("%s: %s", tr.name, b)
		}
	}
	t.Logf("%d sources, %d disagreements", sources, disagree)
	if sources < 20 {
		t.Errorf("only %d sources compared: the walk misses the examples", sources)
	}
}

// initAgreesOn compares, in one tree, init's readers of each source it
// proposes with diff's readers of that object: the number compared and
// each disagreement. A source diff holds no trust object for (a CA's own
// key pair, tls.crt) is not compared.
func initAgreesOn(t *testing.T, tr agreementTree) (int, []string) {
	t.Helper()
	items, _, err := initpolicy.Read([]string{tr.dir}, nil)
	if err != nil {
		return 0, nil // what init cannot read, it proposes nothing for
	}
	plan, err := initpolicy.ProposeTree(initpolicy.Input{Items: items, Roots: initpolicy.PackageRoots(items), Namespace: initpolicy.Namespaces([]string{tr.dir})}, testpki.GoldenNow)
	if err != nil {
		return 0, nil
	}
	o := Options{Dir: tr.dir, Now: testpki.GoldenNow}
	log := exit.NewPrinter(io.Discard, "rotate-certs diff")
	side, err := open(o, Side{Dir: tr.dir}, log)
	if err != nil {
		t.Fatalf("%s: %v", tr.name, err)
	}
	set, err := side.load(log, nil)
	if err != nil {
		t.Fatalf("%s: %v", tr.name, err)
	}
	model := side.model(set, o, nil, &lending{})
	rel := side.rel()
	readers := map[string][]trustdiff.Reader{}
	for _, obj := range model.Trust {
		id := obj.Resource.File + " " + obj.Resource.Kind + " " + obj.Resource.Name
		readers[id] = append(readers[id], obj.Readers...)
	}
	n := 0
	var bad []string
	for _, pkg := range plan.Packages {
		for _, b := range pkg.Bundles {
			for _, src := range b.Sources {
				for i, c := range append([]initpolicy.Candidate{src.Candidate}, src.Also...) {
					id := rel(c.Ref.Path) + " " + c.Ref.Kind + " " + c.Ref.Name
					held, ok := readers[id]
					if !ok {
						continue
					}
					n++
					via := ""
					if i > 0 {
						via = c.Ref.String()
					}
					got, want := initReaders(b.SourceReaders, via, rel), diffReaders(held, rel(pkg.Dir))
					if !slices.Equal(got, want) {
						bad = append(bad, fmt.Sprintf("%s %s: init lists [%s], diff counts [%s]", c.Ref, c.Key, strings.Join(got, " "), strings.Join(want, " ")))
					}
				}
			}
		}
	}
	return n, bad
}

// initReaders returns the readers init lists through via ("" for the
// source itself), by file, kind and name, sorted.
func initReaders(cs []initpolicy.Reader, via string, rel func(string) string) []string {
	var out []string
	for _, c := range cs {
		if c.Via == via {
			out = appendNew(out, rel(c.Ref.Path)+" "+c.Ref.Kind+" "+c.Ref.Name)
		}
	}
	slices.Sort(out)
	return out
}

// diffReaders returns the readers diff counts in package dir ("." or ""
// for the whole tree), by file, kind and name, sorted.
func diffReaders(cs []trustdiff.Reader, dir string) []string {
	var out []string
	for _, c := range cs {
		if dir != "" && dir != "." && !strings.HasPrefix(c.Resource.File, dir+"/") && path.Dir(c.Resource.File) != dir {
			continue
		}
		out = appendNew(out, c.Resource.File+" "+c.Resource.Kind+" "+c.Resource.Name)
	}
	slices.Sort(out)
	return out
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}
