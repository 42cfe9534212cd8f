package policy

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestToJSONIsMarshalJSON: the JSON a policy is decoded from is kyaml's
// RNode.MarshalJSON of it, byte for byte, for every RotationPolicy of the
// repository's examples and test data, and for the YAML shapes whose
// decoding could differ (tags, anchors, merge keys, timestamps, numbers).
func TestToJSONIsMarshalJSON(t *testing.T) {
	nodes := shapes(t)
	for _, root := range []string{"../../examples", "../../testdata"} {
		_ = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") {
				return nil
			}
			data, _ := os.ReadFile(path)
			if !bytes.Contains(data, []byte("kind: "+Kind)) {
				return nil
			}
			docs, err := kio.FromBytes(data)
			if err != nil {
				return nil
			}
			for _, n := range docs {
				if n.YNode().Kind == yaml.MappingNode && n.GetKind() == Kind {
					nodes = append(nodes, n)
				}
			}
			return nil
		})
	}
	if len(nodes) < 20 {
		t.Fatalf("found %d policies, want the repository's", len(nodes))
	}
	for _, n := range nodes {
		want, errW := n.MarshalJSON()
		got, errG := toJSON(n)
		if (errW == nil) != (errG == nil) || !bytes.Equal(got, want) {
			t.Errorf("%s:\ntoJSON      %s (%v)\nMarshalJSON %s (%v)", n.MustString(), got, errG, want, errW)
		}
	}
}

func shapes(t *testing.T) []*yaml.RNode {
	var out []*yaml.RNode
	for _, s := range []string{
		"apiVersion: x\nkind: K\nspec:\n  now: 2026-11-22T00:00:00Z\n  n: 010\n  f: 1.50\n  b: yes\n  o: on\n  nul: ~\n  tagged: !!str 12\n  hex: 0x1F\n",
		"apiVersion: x\nkind: K\nbase: &b {a: 1, b: [x, y]}\nspec:\n  <<: *b\n  c: *b\n",
		"apiVersion: x\nkind: K\nspec:\n  date: 2026-11-22\n  inf: .inf\n  big: 123456789012345678901234567890\n  s: \"quoted: value\"\n  multi: |\n    line 1\n    line 2\n",
	} {
		n, err := yaml.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, n)
	}
	return out
}
