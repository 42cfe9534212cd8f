package resio

import (
	"bytes"
	"fmt"
	"io"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"sigs.k8s.io/kustomize/kyaml/errors"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Resources are resources read from one place - a ResourceList on stdin
// (readList), a package tree (ReadTree), the files and stdin a command
// line names (ReadPaths) or the documents Helm pipes to a post-renderer
// (ReadDocuments) - with what writing them back needs: writeList,
// WriteFiles and WriteDocuments copy what did not change, splice what did
// and encode what is new.
type Resources struct {
	// Items are the resources, in input order (a tree or paths: file
	// order, then document order). A list's items are those the function
	// reads; the others pass through as text.
	Items []*yaml.RNode
	// positions is, for a list, the index of each of Items in the list
	// (nil: Items is the whole list).
	positions []int
	// FunctionConfigs are the functionConfig of every ResourceList read.
	FunctionConfigs []*yaml.RNode
	// Problems are the paths that could not be read or parsed (ReadPaths
	// goes on past them; the caller decides whether they are fatal).
	Problems []Problem
	// Notes are files skipped on purpose (templates that are not YAML),
	// and what a kustomization build left out, one line each, to show the
	// user.
	Notes []string
	// Builds are the kustomizations ReadBuilt built, each with the files
	// it read.
	Builds []Built
	// CertFiles are the certificate and key files ReadBuilt found that no
	// build reads, each with a digest of its content.
	CertFiles []CertFile

	docs  *documentParser // the block parser for the documents read
	list  *listReader     // a list on the fast path
	kyaml *kyamlList      // a list through kyaml's reader
	tree  *treeState      // a package tree
	// shared lends the read what the read before it gave (Shared).
	shared *Shared
}

// functionConfig returns the first functionConfig read, or nil.
func (r *Resources) functionConfig() *yaml.RNode {
	if len(r.FunctionConfigs) == 0 {
		return nil
	}
	return r.FunctionConfigs[0]
}

// readList reads the ResourceList of function mode: in kyaml's canonical
// layout (what kustomize and kpt send) on the fast path (readFast); any
// other through kyaml's reader, unless it is larger than
// MaxKyamlInputBytes (ErrNotCanonicalTooLarge). needs says which items
// the function reads.
func readList(input []byte, needs Needs) (*Resources, error) {
	res, handled, err := readFast(input, needs)
	switch {
	case handled:
		return res, err
	case len(input) > MaxKyamlInputBytes:
		return nil, ErrNotCanonicalTooLarge{Size: len(input), Reason: err}
	}
	return readKyaml(input)
}

// RunList is function mode: it reads the ResourceList in input
// (readList), runs fn on it and writes the output ResourceList to w
// (writeList). fn's own error is returned after the output (its results)
// has been written, as framework.Execute does.
func RunList(input []byte, w io.Writer, needs Needs, fn Func) error {
	res, err := readList(input, needs)
	if err != nil {
		return err
	}
	return res.run(w, fn)
}

// RunKyaml is RunList through kyaml's reader and writer, whatever the
// input's layout.
func RunKyaml(input []byte, w io.Writer, fn Func) error {
	res, err := readKyaml(input)
	if err != nil {
		return err
	}
	return res.run(w, fn)
}

func (r *Resources) run(w io.Writer, fn Func) error {
	if r.kyaml != nil && r.kyaml.refused != nil {
		res := r.kyaml.refused
		return r.writeList(w, nil, framework.Results{res}, kube.ErrorResults{res})
	}
	out, results, fnErr := fn(r.functionConfig(), r.Items, r.positions)
	return r.writeList(w, out, results, fnErr)
}

// writeList writes the output ResourceList of a function run over a list
// readList read: out the items, results the results and fnErr the
// function's error, which it returns (joined with its own, if any). On
// fnErr no item is written, not even those the function never saw.
func (r *Resources) writeList(w io.Writer, out []*yaml.RNode, results framework.Results, fnErr error) error {
	if r.kyaml != nil {
		return r.kyaml.write(w, out, results, fnErr)
	}
	return r.list.write(w, r.functionConfig(), out, results, fnErr)
}

// kyamlList is a list read by kyaml's reader, as framework.Execute reads
// it, with the annotations its bookkeeping recorded. refused is the error
// result of a list whose items is not a list: kyaml reads `items: 5` as no
// items at all (an empty package out, exit 0) and `items: {a: b}` as
// scalars.
type kyamlList struct {
	rw      *kio.ByteReadWriter
	annos   map[string]map[string]string
	refused *framework.Result
}

func readKyaml(input []byte) (*Resources, error) {
	rw := &kio.ByteReadWriter{Reader: bytes.NewReader(input), KeepReaderAnnotations: true}
	k := &kyamlList{rw: rw}
	items, err := rw.Read()
	if err != nil {
		err = errors.WrapPrefixf(err, "failed to read ResourceList input")
	} else {
		k.annos, err = kio.PreprocessResourcesForInternalAnnotationMigration(items)
	}
	if err != nil {
		// Say so in terms of the list when its items are the cause.
		if e := itemsError(input); e != nil {
			return nil, e
		}
		return nil, err
	}
	// What kyaml made of items could hide a non-list: no items, or an item
	// that is not an object (the list is then parsed a second time).
	suspect := len(items) == 0
	for _, it := range items {
		suspect = suspect || it.YNode().Kind != yaml.MappingNode
	}
	if suspect {
		if err := itemsError(input); err != nil {
			k.refused = &framework.Result{Severity: framework.Error, Field: &framework.Field{Path: "items"}, Message: err.Error()}
			items = nil
		}
	}
	res := &Resources{Items: items, kyaml: k}
	if rw.FunctionConfig != nil {
		res.FunctionConfigs = []*yaml.RNode{rw.FunctionConfig}
	}
	return res, nil
}

// write is the second half of framework.Execute.
func (k *kyamlList) write(w io.Writer, out []*yaml.RNode, results framework.Results, fnErr error) error {
	if err := kio.ReconcileInternalAnnotations(out, k.annos); err != nil {
		return err
	}
	if len(results) > 0 {
		b, err := yaml.Marshal(results)
		if err != nil {
			return errors.Wrap(err)
		}
		y, err := yaml.Parse(string(b))
		if err != nil {
			return errors.Wrap(err)
		}
		k.rw.Results = y
	}
	k.rw.Writer = w
	if err := k.rw.Write(out); err != nil {
		return err
	}
	return fnErr
}

// itemsError returns an error when the ResourceList in input has an items
// field that is neither a list nor null.
func itemsError(input []byte) error {
	list, err := yaml.Parse(string(input))
	if err != nil || list.YNode().Kind != yaml.MappingNode {
		return nil // kyaml's reader read it; its verdict stands
	}
	f := list.Field("items")
	if f == nil || f.Value.IsTaggedNull() {
		return nil
	}
	if k := f.Value.YNode().Kind; k != yaml.SequenceNode {
		return fmt.Errorf("the ResourceList's items is a YAML %s, not a list of resources", kube.NodeKindName(k))
	}
	return nil
}
