package policyschema

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/policy"
	"github.com/rotate-certs/rotate-certs/internal/golden"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Policy is one RotationPolicy found in the repository.
type Policy struct {
	// Where is the file (and, for a document's block, its place).
	Where string
	// JSON is the policy as JSON.
	JSON []byte
	// Valid reports whether policy.Decode accepts it.
	Valid bool
	// Shipped marks a policy users run as it is: examples/ and the README.
	Shipped bool
	// Documented marks a policy of docs/, which may show a field in a
	// setting the function refuses (the reference's every-field block)
	// but is never misspelled or mistyped.
	Documented bool
}

// Corpus returns every RotationPolicy of the repository, each once: the
// documents and ResourceList functionConfigs of its YAML files (golden
// inputs expanded as their tests expand them) and the YAML blocks of its
// Markdown files.
func Corpus(t testing.TB) []Policy {
	t.Helper()
	var out []Policy
	seen := map[[32]byte]bool{}
	add := func(where string, node *yaml.RNode) {
		raw, err := node.MarshalJSON()
		if err != nil {
			return
		}
		sum := sha256.Sum256(raw)
		if seen[sum] {
			return
		}
		seen[sum] = true
		_, err = policy.Decode(node)
		shipped := strings.HasPrefix(where, "examples/") || strings.HasPrefix(where, "README.md")
		out = append(out, Policy{Where: where, JSON: raw, Valid: err == nil, Shipped: shipped, Documented: strings.HasPrefix(where, "docs/")})
	}
	files := golden.YAMLFiles(t)
	for _, path := range slices.Sorted(maps.Keys(files)) {
		data := files[path]
		if bytes.Contains(data, []byte("{{")) {
			expanded, err := testpki.ExpandTemplate(path, string(data))
			if err != nil {
				continue // a Helm chart's template
			}
			data = expanded
		}
		for _, node := range policies(data) {
			add(filepath.ToSlash(path), node)
		}
	}
	for _, md := range markdownFiles(t) {
		data, err := os.ReadFile(golden.Path(md))
		if err != nil {
			t.Fatal(err)
		}
		for i, block := range yamlBlocks(data) {
			for _, node := range policies(block) {
				add(md+"#block"+strconv.Itoa(i+1), node)
			}
		}
	}
	return out
}

// policies returns the RotationPolicies of a YAML stream: its documents
// and the functionConfig of its ResourceLists. A stream that does not
// parse has none.
func policies(data []byte) []*yaml.RNode {
	nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(data), OmitReaderAnnotations: true}).Read()
	if err != nil {
		return nil
	}
	var out []*yaml.RNode
	if fc := functionConfigOf(data); fc != nil {
		nodes = append(nodes, fc)
	}
	for _, n := range nodes {
		if n.YNode().Kind == yaml.MappingNode && n.GetKind() == policy.Kind {
			out = append(out, n)
		}
	}
	return out
}

// functionConfigOf returns the functionConfig of a ResourceList document,
// which the reader does not list as an item.
func functionConfigOf(data []byte) *yaml.RNode {
	node, err := yaml.Parse(string(data))
	// kyaml's GetKind panics on a root that is not a mapping (a list of
	// PrometheusRule rules in docs/guides/alerts.md).
	if err != nil || node.YNode().Kind != yaml.MappingNode || node.GetKind() != "ResourceList" {
		return nil
	}
	return node.Field("functionConfig").Value
}

var fence = regexp.MustCompile("(?ms)^\\s*```ya?ml\\s*\n(.*?)^\\s*```")

// yamlBlocks returns the ```yaml blocks of a Markdown text.
func yamlBlocks(md []byte) [][]byte {
	var out [][]byte
	for _, m := range fence.FindAllSubmatch(md, -1) {
		out = append(out, m[1])
	}
	return out
}

// markdownFiles lists the repository's Markdown files outside bin/ and
// .git, from its top directory.
func markdownFiles(t testing.TB) []string {
	t.Helper()
	root := golden.Path()
	var out []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "bin" || path == filepath.Join(root, "dist")) {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			rel, _ := filepath.Rel(root, path)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Decoded returns p's JSON as a generic value.
func (p Policy) Decoded() any {
	var v any
	if err := json.Unmarshal(p.JSON, &v); err != nil {
		panic(err) // MarshalJSON's output
	}
	return v
}
