package rotate_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// clusterAPIManaged reports whether spec.clusterAPI may edit node: its
// expiry fields, design fields or infrastructure template reference.
// TestClusterAPIEditsOnlyItsFields checks that nothing else of it changes.
func clusterAPIManaged(node *yaml.RNode) bool {
	group, _, _ := strings.Cut(node.GetApiVersion(), "/")
	switch node.GetKind() {
	case "KubeadmControlPlane", "KubeadmControlPlaneTemplate":
		return group == "controlplane.cluster.x-k8s.io"
	case "EtcdadmCluster":
		return group == "etcdcluster.cluster.x-k8s.io"
	case "Cluster":
		return group == "anywhere.eks.amazonaws.com"
	}
	return false
}

// withoutClusterAPIFields returns node as text without the fields
// spec.clusterAPI writes (and the objects that only hold them).
func withoutClusterAPIFields(t *testing.T, node *yaml.RNode) string {
	t.Helper()
	n := node.Copy()
	for _, p := range [][]string{
		{"spec", "rolloutBefore"},
		{"spec", "rollout", "before"},
		{"spec", "template", "spec", "rolloutBefore"},
		{"spec", "template", "spec", "rollout", "before"},
		{"spec", "certificatesConfiguration"},
		{"spec", "infrastructureTemplate", "name"},
	} {
		parent, err := n.Pipe(yaml.Lookup(p[:len(p)-1]...))
		require.NoError(t, err)
		if parent == nil {
			continue
		}
		_, err = parent.Pipe(yaml.Clear(p[len(p)-1]))
		require.NoError(t, err)
		if len(parent.Content()) == 0 && p[len(p)-2] == "rollout" {
			grand, _ := n.Pipe(yaml.Lookup(p[:len(p)-2]...))
			_, err = grand.Pipe(yaml.Clear("rollout"))
			require.NoError(t, err)
		}
	}
	s, err := n.String()
	require.NoError(t, err)
	return s
}

func TestClusterAPIEditsOnlyItsFields(t *testing.T) {
	for _, dir := range goldenCases(t) {
		if !strings.HasPrefix(filepath.Base(dir), "capi-") {
			continue
		}
		t.Run(filepath.Base(dir), func(t *testing.T) {
			in := goldenInput(t, dir)
			out, err := execute(t, in)
			require.NoError(t, err)
			after := parseResourceList(t, out).items
			for _, node := range parseResourceList(t, in).items {
				if !clusterAPIManaged(node) {
					continue
				}
				got := findSame(after, node)
				require.NotNil(t, got, "%s was lost", kube.KeyOf(node))
				require.Equal(t, withoutClusterAPIFields(t, node), withoutClusterAPIFields(t, got),
					"%s: only the clusterAPI fields may change", kube.KeyOf(node))
			}
		})
	}
}
