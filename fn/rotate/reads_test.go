package rotate_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/layout"
	"github.com/rotate-certs/rotate-certs/fn/resio"
	"github.com/rotate-certs/rotate-certs/fn/rotate"
	"github.com/rotate-certs/rotate-certs/internal/golden"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// readInput reads one input afresh (a run edits its items): the policy and
// the items.
type readInput func(t *testing.T) (fnConfig *yaml.RNode, items []*yaml.RNode)

// guardInput is one input of the read guards.
type guardInput struct {
	name  string
	read  readInput
	kinds []kube.GroupKind // of its items, each once
	want  string           // its outcome with every item
}

// guardInputs are the golden inputs and every package of every example,
// with what they give when every step sees every item.
func guardInputs(t *testing.T, p rotate.Processor) []guardInput {
	t.Helper()
	reads := examplePackages(t)
	for _, dir := range goldenCases(t) {
		reads["golden/"+filepath.Base(dir)] = func(t *testing.T) (*yaml.RNode, []*yaml.RNode) {
			rw := &kio.ByteReadWriter{Reader: bytes.NewReader(goldenInput(t, dir)), KeepReaderAnnotations: true}
			items, err := rw.Read()
			require.NoError(t, err)
			return rw.FunctionConfig, items
		}
	}
	var out []guardInput
	for name, read := range reads {
		in := guardInput{name: name, read: read, want: outcome(t, p, read)}
		_, items := read(t)
		for _, it := range items {
			if gk := kube.GroupKindOf(it); !slices.Contains(in.kinds, gk) {
				in.kinds = append(in.kinds, gk)
			}
		}
		out = append(out, in)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// guardProcessor is the processor the read guards run, on a fixed clock.
var guardProcessor = rotate.Processor{Now: func() time.Time { return testpki.GoldenNow }, At: testpki.GoldenNow}

// Every step reads the input through the declarations the steps' table
// gives it (kube.Reads, in the reads.go of each package that reads), and
// function mode parses only what their union reads. Each golden input and
// each example's packages run twice: with every item, and with each step
// and shared index shown only the input items its declarations read. The
// outputs, results and errors must be the same; when they are not, the
// test names the step and the kind of the items it read undeclared.
func TestStepsReadWhatTheyDeclare(t *testing.T) {
	p := guardProcessor
	for _, in := range guardInputs(t, p) {
		t.Run(in.name, func(t *testing.T) {
			if outcome(t, rotate.Hiding(p, nil, nil), in.read) == in.want {
				return
			}
			for _, msg := range undeclaredReads(t, p, in) {
				t.Error(msg)
			}
		})
	}
}

// Each kind a package declares matters to the output of some input,
// through some step or shared index that reads through the declaration:
// else taking the kind out of the declaration would go unnoticed by
// TestStepsReadWhatTheyDeclare.
func TestDeclaredKindsAreExercised(t *testing.T) {
	p := guardProcessor
	inputs := guardInputs(t, p)
	for _, d := range rotate.Declarations() {
		for _, gk := range d.Kinds {
			if !exercised(t, p, inputs, d.Views, gk) {
				t.Errorf("package %s declares %s (API group %q), but hiding its items from %s changes the output of no input: add one that reads it",
					d.Package, gk.Kind, gk.Group, strings.Join(d.Views, ", "))
			}
		}
	}
}

// exercised reports whether hiding the items of gk from one of views
// changes the outcome of one of inputs.
func exercised(t *testing.T, p rotate.Processor, inputs []guardInput, views []string, gk kube.GroupKind) bool {
	t.Helper()
	for _, in := range inputs {
		if !slices.Contains(in.kinds, gk) {
			continue
		}
		for _, v := range views {
			if outcome(t, rotate.HidingKind(p, v, gk), in.read) != in.want {
				return true
			}
		}
	}
	return false
}

// examplePackages reads every package of every example, as render does.
func examplePackages(t *testing.T) map[string]readInput {
	t.Helper()
	out := map[string]readInput{}
	dirs, err := filepath.Glob(golden.Path("examples", "*"))
	require.NoError(t, err)
	for _, dir := range dirs {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			continue
		}
		tree, err := resio.ReadTree(dir)
		require.NoError(t, err, dir)
		pkgs, _ := layout.Split(tree.Items, layout.IsPolicy, nil)
		for i, pkg := range pkgs {
			if len(pkg.Policies) == 1 {
				out[fmt.Sprintf("examples/%s/%s", filepath.Base(dir), pkg.Dir)] = examplePackage(dir, i)
			}
		}
	}
	require.NotEmpty(t, out, "no example packages found")
	return out
}

// examplePackage reads package i of the example in dir.
func examplePackage(dir string, i int) readInput {
	return func(t *testing.T) (*yaml.RNode, []*yaml.RNode) {
		tree, err := resio.ReadTree(dir)
		require.NoError(t, err)
		pkgs, _ := layout.Split(tree.Items, layout.IsPolicy, nil)
		return pkgs[i].Policies[0].Copy(), pkgs[i].Items
	}
}

// undeclaredReads returns what changes the outcome want: for each view
// (a step or shared index), the kinds of items whose hiding from that view
// alone changes it.
func undeclaredReads(t *testing.T, p rotate.Processor, in guardInput) []string {
	t.Helper()
	read, want := in.read, in.want
	var out []string
	for _, v := range rotate.ReadViews() {
		if outcome(t, rotate.Hiding(p, []string{v}, nil), read) == want {
			continue
		}
		found := false
		for _, gk := range in.kinds {
			ofKind := func(it *yaml.RNode) bool { return kube.GroupKindOf(it) == gk }
			if outcome(t, rotate.Hiding(p, []string{v}, ofKind), read) != want {
				found = true
				out = append(out, fmt.Sprintf("%s reads %s items (API group %q) that its declarations decline: hiding them from it changes the output",
					v, gk.Kind, gk.Group))
			}
		}
		if !found {
			out = append(out, fmt.Sprintf("%s reads items that its declarations decline: hiding them from it changes the output", v))
		}
	}
	if len(out) == 0 {
		out = append(out, "hiding from every step the items its declarations decline changes the output, but hiding them from any one step does not")
	}
	return out
}

// outcome runs p on the input and returns what it said: the output items,
// every result and the error.
func outcome(t *testing.T, p rotate.Processor, read readInput) string {
	t.Helper()
	fnConfig, items := read(t)
	out, results, err := p.Run(fnConfig, items, nil)
	var b strings.Builder
	b.WriteString(golden.Encode(t, out))
	for _, r := range results {
		fmt.Fprintf(&b, "%s %s\n", r.Severity, kube.ResultLine(r))
	}
	if err != nil {
		b.WriteString(err.Error())
	}
	return b.String()
}
