package rotate

import (
	"bytes"
	"fmt"
	"io"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// ExecuteKyaml runs p over the ResourceList in input with kyaml's reader
// and writer, as framework.Execute does: function mode for a list that
// package krmio's fast path declines. It refuses items that is not a
// list: kyaml reads `items: 5` as no items at all (an empty package out,
// exit 0) and fails on `items: {a: b}` with a message about a node.
func (p Processor) ExecuteKyaml(input []byte, w io.Writer) error {
	rw := &kio.ByteReadWriter{Reader: bytes.NewReader(input), Writer: w, KeepReaderAnnotations: true}
	k := &kyamlInput{p: p, input: input}
	err := framework.Execute(k, rw)
	if err != nil && !k.ran {
		// kyaml's reader failed before the function ran: say so in terms
		// of the list when its items are the cause.
		if e := itemsError(input); e != nil {
			return e
		}
	}
	return err
}

type kyamlInput struct {
	p     Processor
	input []byte
	ran   bool
}

// Process checks items when what kyaml made of them could hide a non-list
// (no items, or an item that is not an object; the list is then parsed a
// second time, on an error path or for a list with no items), then runs
// the processor.
func (k *kyamlInput) Process(rl *framework.ResourceList) error {
	k.ran = true
	suspect := len(rl.Items) == 0
	for _, it := range rl.Items {
		suspect = suspect || it.YNode().Kind != yaml.MappingNode
	}
	if suspect {
		if err := itemsError(k.input); err != nil {
			res := &framework.Result{Severity: framework.Error, Field: &framework.Field{Path: "items"}, Message: err.Error()}
			items, results, err := k.p.finish(nil, framework.Results{res})
			rl.Items, rl.Results = items, append(rl.Results, results...)
			return err
		}
	}
	return k.p.Process(rl)
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
