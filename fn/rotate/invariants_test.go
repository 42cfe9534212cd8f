package rotate_test

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"github.com/rotate-certs/rotate-certs/fn/trustbundle"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// The invariants of docs/design/contract.md (Invariants), checked over the
// whole golden corpus.

// itemID identifies an item by API group and key: an example.com/v1
// Secret and the core v1 Secret of the same name are two items.
type itemID struct {
	group string
	key   kube.Key
}

func idOf(node *yaml.RNode) itemID {
	return itemID{group: kube.GroupOf(node.GetApiVersion()), key: kube.KeyOf(node)}
}

func (id itemID) String() string {
	if id.group == "" {
		return id.key.String()
	}
	return id.key.String() + " (" + id.group + ")"
}

func itemStrings(t *testing.T, items []*yaml.RNode) map[itemID]string {
	t.Helper()
	out := map[itemID]string{}
	for _, it := range items {
		s, err := it.String()
		require.NoError(t, err)
		out[idOf(it)] = s
	}
	return out
}

// findSame returns the item of items with the API group and key of node.
func findSame(items []*yaml.RNode, node *yaml.RNode) *yaml.RNode { return findID(items, idOf(node)) }

func findID(items []*yaml.RNode, id itemID) *yaml.RNode {
	for _, it := range items {
		if idOf(it) == id {
			return it
		}
	}
	return nil
}

func TestInvariantDeterministic(t *testing.T) {
	for _, dir := range goldenCases(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			in := goldenInput(t, dir)
			first, _ := execute(t, in)
			second, _ := execute(t, in)
			require.Equal(t, string(first), string(second), "same input and now must give the same bytes")
		})
	}
}

func TestInvariantIdempotent(t *testing.T) {
	for _, dir := range goldenCases(t) {
		if strings.HasPrefix(filepath.Base(dir), "err-") {
			continue
		}
		t.Run(filepath.Base(dir), func(t *testing.T) {
			first, err := execute(t, goldenInput(t, dir))
			require.NoError(t, err)
			// The output ResourceList, fed back in, carries the same
			// functionConfig and the rendered targets as input.
			second, err := execute(t, first)
			require.NoError(t, err)
			a, b := parseResourceList(t, first), parseResourceList(t, second)
			require.Equal(t, itemStrings(t, a.items), itemStrings(t, b.items), "re-rendering the output must change nothing")
			require.NotContains(t, b.results, "was not in the input and was created", "the second render must find every target")
		})
	}
}

func TestInvariantPreserving(t *testing.T) {
	for _, dir := range goldenCases(t) {
		if strings.HasPrefix(filepath.Base(dir), "err-") {
			continue
		}
		t.Run(filepath.Base(dir), func(t *testing.T) {
			in := goldenInput(t, dir)
			out, err := execute(t, in)
			require.NoError(t, err)
			pol := decodePolicy(t, in)
			before := itemStrings(t, parseResourceList(t, in).items)
			after := parseResourceList(t, out).items
			afterStrings := itemStrings(t, after)
			for key, s := range before {
				got, ok := afterStrings[key]
				require.True(t, ok, "%s was lost", key)
				node := findID(after, key)
				if _, managed := node.GetAnnotations()[trustbundle.HashAnnotation]; managed || clusterAPIManaged(node) || alertsManaged(pol, node) {
					continue
				}
				// A rolled workload: only its trust-hash may differ.
				s, got = withoutTrustHash(t, s), withoutTrustHash(t, got)
				require.Equal(t, s, got, "%s is not managed and must pass through unchanged", key)
			}
		})
	}
}

func findItem(items []*yaml.RNode, key kube.Key) *yaml.RNode {
	for _, it := range items {
		if kube.KeyOf(it) == key {
			return it
		}
	}
	return nil
}

// workloadKinds are the kinds whose pod template the restart step may
// annotate.
var workloadKinds = map[string]bool{"Deployment": true, "StatefulSet": true, "DaemonSet": true, "Rollout": true}

// managedBy returns, for an input item the function may edit, the data
// keys it may rewrite (none for workloads), and whether it may edit the
// item at all. Targets are matched by kind and name (namespaceSelector fans
// out). Cluster API objects have their own check (clusterapi_test.go);
// the trust fields outside Secrets and ConfigMaps theirs
// (ownTrustFields).
func managedBy(pol *policy.RotationPolicy, item *yaml.RNode) ([]string, bool) {
	if workloadKinds[item.GetKind()] {
		return nil, true
	}
	if _, ok := ownTrustFields(pol, item); ok {
		return nil, true
	}
	for _, b := range pol.Spec.TrustBundles {
		if item.GetKind() != string(b.Target.Kind) || item.GetName() != b.Target.Name {
			continue
		}
		keys := []string{b.Target.Key}
		if f := b.Target.AdditionalFormats; f != nil {
			for _, tf := range []*policy.TruststoreFormat{f.PKCS12, f.JKS} {
				if tf != nil {
					keys = append(keys, tf.Key)
				}
			}
		}
		return keys, true
	}
	return nil, false
}

// targetMetadata returns the labels and annotations the policy sets on
// item as a target (target.metadata), nil when it sets none.
func targetMetadata(pol *policy.RotationPolicy, item *yaml.RNode) map[string]bool {
	out := map[string]bool{}
	for _, b := range pol.Spec.TrustBundles {
		if m := b.Target.Metadata; m != nil && item.GetKind() == string(b.Target.Kind) && item.GetName() == b.Target.Name {
			for k := range m.Labels {
				out["metadata.labels."+k] = true
			}
			for k := range m.Annotations {
				out["metadata.annotations."+k] = true
			}
		}
	}
	return out
}

// withoutOwnFields returns a copy of item without what the function may
// write on a managed item: rotate-certs.dev/ annotations (object and pod
// template), the labels and annotations of the policy's target.metadata
// (meta, "metadata.labels.<key>"), the target's data keys, and the maps
// those leave empty.
func withoutOwnFields(t *testing.T, pol *policy.RotationPolicy, item *yaml.RNode, keys []string, meta map[string]bool) string {
	t.Helper()
	c := item.Copy()
	if strip, ok := ownTrustFields(pol, c); ok {
		strip(t, c)
	}
	for _, path := range [][]string{{"metadata", "labels"}, {"metadata", "annotations"}, {"spec", "template", "metadata", "annotations"}} {
		m, err := c.Pipe(yaml.Lookup(path...))
		require.NoError(t, err)
		if m == nil {
			continue
		}
		keys, err := m.Fields()
		require.NoError(t, err)
		left := len(keys)
		for _, k := range keys {
			if strings.HasPrefix(k, "rotate-certs.dev/") && path[len(path)-1] == "annotations" || meta[strings.Join(path, ".")+"."+k] {
				require.NoError(t, m.PipeE(yaml.Clear(k)))
				left--
			}
		}
		if left == 0 {
			parent, err := c.Pipe(yaml.Lookup(path[:len(path)-1]...))
			require.NoError(t, err)
			require.NoError(t, parent.PipeE(yaml.Clear(path[len(path)-1])))
		}
	}
	for _, key := range keys {
		for _, field := range []string{"data", "stringData", "binaryData"} {
			if m := c.Field(field); m != nil {
				require.NoError(t, m.Value.PipeE(yaml.Clear(key)))
			}
		}
	}
	s, err := c.String()
	require.NoError(t, err)
	return s
}

// TestInvariantPreservingManaged extends TestInvariantPreserving to the
// items the function does edit: on a target or a workload, only the
// function's own fields may differ; everything the user wrote (other keys,
// labels, annotations, type, comments, order) survives.
func TestInvariantPreservingManaged(t *testing.T) {
	for _, dir := range goldenCases(t) {
		if strings.HasPrefix(filepath.Base(dir), "err-") {
			continue
		}
		t.Run(filepath.Base(dir), func(t *testing.T) {
			in := goldenInput(t, dir)
			out, err := execute(t, in)
			require.NoError(t, err)
			pol := decodePolicy(t, in)
			after := parseResourceList(t, out).items
			for _, before := range parseResourceList(t, in).items {
				node := findSame(after, before)
				require.NotNil(t, node, "%s was lost", idOf(before))
				keys, managed := managedBy(pol, before)
				if !managed {
					continue // TestInvariantPreserving
				}
				meta := targetMetadata(pol, before)
				require.Equal(t, withoutOwnFields(t, pol, before, keys, meta), withoutOwnFields(t, pol, node, keys, meta),
					"%s: only the function's own fields may change", idOf(before))
			}
		})
	}
}

func decodePolicy(t *testing.T, in []byte) *policy.RotationPolicy {
	t.Helper()
	rw := &kio.ByteReader{Reader: bytes.NewReader(in)}
	_, err := rw.Read()
	require.NoError(t, err)
	pol, err := policy.Decode(rw.FunctionConfig)
	require.NoError(t, err)
	return pol
}

// keyNeedles returns text that would betray a private key of the input:
// each key's PEM body lines, its DER in base64, and its DER in hex. Keys are
// found in every Secret and ConfigMap value (decoded) and in the raw input
// with indentation removed (PEM in block scalars).
func keyNeedles(t *testing.T, in []byte) []string {
	t.Helper()
	var sources [][]byte
	var dedented []string
	for _, line := range strings.Split(string(in), "\n") {
		dedented = append(dedented, strings.TrimLeft(line, " \t"))
	}
	sources = append(sources, []byte(strings.Join(dedented, "\n")))
	rw := &kio.ByteReader{Reader: bytes.NewReader(in)}
	items, err := rw.Read()
	require.NoError(t, err)
	for _, it := range items {
		if it.GetKind() != "Secret" && it.GetKind() != "ConfigMap" {
			continue
		}
		values, err := kube.Values(it)
		if err != nil {
			continue // an unreadable value cannot leak through a decode either
		}
		for _, v := range values {
			sources = append(sources, v.Bytes)
		}
	}
	var needles []string
	for _, src := range sources {
		rest := src
		for {
			var block *pem.Block
			block, rest = pem.Decode(rest)
			if block == nil {
				break
			}
			if !strings.Contains(block.Type, "PRIVATE KEY") {
				continue
			}
			b64 := base64.StdEncoding.EncodeToString(block.Bytes)
			needles = append(needles, b64, hex.EncodeToString(block.Bytes))
			for i := 0; i+64 <= len(b64); i += 64 {
				needles = append(needles, b64[i:i+64])
			}
		}
	}
	return needles
}

// changedText returns what the function wrote: every created item whole
// (and its decoded values), and for items of the input every data value and annotation that differs.
func changedText(t *testing.T, in, out []*yaml.RNode) []string {
	t.Helper()
	var texts []string
	for _, node := range out {
		before := findSame(in, node)
		if before == nil {
			s, err := node.String()
			require.NoError(t, err)
			texts = append(texts, s)
			if vs, err := kube.Values(node); err == nil {
				for _, v := range vs {
					texts = append(texts, string(v.Bytes))
				}
			}
			continue
		}
		old := map[string]string{}
		if vs, err := kube.Values(before); err == nil {
			for _, v := range vs {
				old[v.Field] = string(v.Bytes)
			}
		}
		if vs, err := kube.Values(node); err == nil {
			for _, v := range vs {
				if old[v.Field] != string(v.Bytes) {
					texts = append(texts, string(v.Bytes))
				}
			}
		}
		oldAnnos := before.GetAnnotations()
		for k, v := range node.GetAnnotations() {
			if oldAnnos[k] != v {
				texts = append(texts, v)
			}
		}
		if a, err := node.Pipe(yaml.Lookup("spec", "template", "metadata", "annotations")); err == nil && a != nil {
			s, err := a.String()
			require.NoError(t, err)
			texts = append(texts, s)
		}
	}
	return texts
}

// TestInvariantNoKeyMaterial: nothing the function creates or changes, no
// result, nothing on stderr and no error carries a private key of the
// input - not as PEM, not as base64 or hex of the key's DER. User
// resources that hold keys pass through unchanged (TestInvariantPreserving).
func TestInvariantNoKeyMaterial(t *testing.T) {
	sawKeys := false
	for _, dir := range goldenCases(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			in := goldenInput(t, dir)
			needles := keyNeedles(t, in)
			sawKeys = sawKeys || len(needles) > 0
			out, stderr, err := executeStderr(in)
			rl := parseResourceList(t, out)
			written := append(changedText(t, parseResourceList(t, in).items, rl.items), rl.results, string(stderr))
			if err != nil {
				written = append(written, err.Error())
			}
			for _, text := range written {
				require.NotContains(t, text, "PRIVATE KEY")
				for _, n := range needles {
					require.NotContains(t, text, n, "key material was copied")
				}
			}
		})
	}
	require.True(t, sawKeys, "the corpus must hold private keys for this test to mean anything")
}
