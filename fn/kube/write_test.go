package kube

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSetAnnotationInPlace(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{
			name: "a replaced value keeps its comment and quoting",
			in:   "metadata:\n  annotations:\n    k: \"old\" # stale\n    x: y\n",
			want: "metadata:\n  annotations:\n    k: \"new\" # stale\n    x: y\n",
		},
		{
			name: "null annotations filled in place, comment kept",
			in:   "metadata:\n  annotations: null   # nothing yet\n  labels: {app: a}\nspec: {}\n",
			want: "metadata:\n  annotations: # nothing yet\n    k: 'new'\n  labels: {app: a}\nspec: {}\n",
		},
		{
			name: "empty annotations filled in place",
			in:   "metadata:\n  annotations:\n  labels: {app: a}\n",
			want: "metadata:\n  annotations:\n    k: 'new'\n  labels: {app: a}\n",
		},
		{
			name: "empty flow annotations become a block in place",
			in:   "metadata:\n  annotations: {} # none\n  labels: {app: a}\n",
			want: "metadata:\n  annotations: # none\n    k: 'new'\n  labels: {app: a}\n",
		},
		{
			name: "empty metadata stays before spec",
			in:   "metadata: {}\nspec: {}\n",
			want: "metadata:\n  annotations:\n    k: 'new'\nspec: {}\n",
		},
		{
			name: "absent annotations appended after labels, as kyaml does",
			in:   "metadata:\n  labels: {app: a}\n",
			want: "metadata:\n  labels: {app: a}\n  annotations:\n    k: 'new'\n",
		},
		{
			name: "absent metadata appended",
			in:   "spec: {}\n",
			want: "spec: {}\nmetadata:\n  annotations:\n    k: 'new'\n",
		},
		{
			name: "a non-empty flow map keeps its style",
			in:   "metadata:\n  annotations: {x: y}\n",
			want: "metadata:\n  annotations: {x: y, k: 'new'}\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			node := parse(t, tt.in)
			changed, err := SetAnnotation(node, "k", "new")
			require.NoError(t, err)
			require.True(t, changed)
			out := node.MustString()
			require.Equal(t, tt.want, out)
			require.Equal(t, "new", node.GetAnnotations("k")["k"])

			// Re-parsed and set again: nothing changes.
			again := parse(t, out)
			changed, err = SetAnnotation(again, "k", "new")
			require.NoError(t, err)
			require.False(t, changed)
			require.Equal(t, out, again.MustString())
		})
	}
}

func TestSetAnnotationNotAMapping(t *testing.T) {
	node := parse(t, "kind: Secret\nmetadata:\n  name: s\n  annotations: text\n")
	_, err := SetAnnotation(node, "k", "v")
	require.ErrorContains(t, err, "metadata.annotations is not a mapping")
}

func TestNewFileName(t *testing.T) {
	for key, want := range map[Key]string{
		{Kind: "Secret", Namespace: "apps", Name: "trust"}:                        "secret_apps_trust.yaml",
		{Kind: "ClusterTrustBundle", Name: "example.com:signer:roots"}:            "clustertrustbundle_example.com_signer_roots.yaml",
		{Kind: "DockerMachineTemplate", Namespace: "eksa-system", Name: "etcd-2"}: "dockermachinetemplate_eksa-system_etcd-2.yaml",
	} {
		if got := NewFileName(key); got != want {
			t.Errorf("NewFileName(%v) = %q, want %q", key, got, want)
		}
	}
}
