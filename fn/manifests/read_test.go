package manifests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
)

func cm(name string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n"
}

func TestRead(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, text string) {
		p := filepath.Join(dir, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	}
	write("a.yaml", cm("a")+"---\n"+cm("b"))
	write("b/c.yml", cm("c"))
	write("b/d.json", `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "d"}}`)
	write("e/list.yaml", "apiVersion: v1\nkind: List\nitems:\n- "+strings.ReplaceAll(cm("e"), "\n", "\n  ")+"\n---\n"+cm("f"))
	write("rl.yaml", "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- "+strings.ReplaceAll(cm("g"), "\n", "\n  ")+
		"\nfunctionConfig:\n  apiVersion: rotate-certs.dev/v1alpha1\n  kind: RotationPolicy\n  metadata: {name: p}\n")
	write(".git/config.yaml", cm("hidden"))
	write("notes.txt", cm("not-a-manifest-extension"))
	write("chart/templates/x.yaml", "{{- if .Values.on }}\nkind: ConfigMap\n{{- end }}\n")

	set := Read([]string{dir, "-"}, strings.NewReader(cm("stdin")))
	var got []string
	for _, it := range set.Items {
		path := it.GetAnnotations(kioutil.PathAnnotation)[kioutil.PathAnnotation]
		rel, _ := filepath.Rel(dir, path)
		if path == "" {
			rel = "(none)"
		}
		got = append(got, it.GetName()+"@"+filepath.ToSlash(rel))
	}
	require.Equal(t, []string{"a@a.yaml", "b@a.yaml", "c@b/c.yml", "d@b/d.json", "e@e/list.yaml", "f@e/list.yaml", "g@rl.yaml", "stdin@(none)"}, got)
	require.Len(t, set.FunctionConfigs, 1)
	require.Equal(t, "RotationPolicy", set.FunctionConfigs[0].GetKind())
	require.Len(t, set.Problems, 1)
	require.True(t, set.Problems[0].NotYAML)
	require.Contains(t, set.Problems[0].Message, filepath.Join("chart", "templates", "x.yaml")+": not valid YAML")
}

func TestReadProblems(t *testing.T) {
	set := Read([]string{"-", "-", filepath.Join(t.TempDir(), "missing")}, strings.NewReader("[not: yaml"))
	require.Len(t, set.Problems, 3)
	require.Equal(t, "-", set.Problems[0].Path)
	require.True(t, set.Problems[0].NotYAML)
	require.Contains(t, set.Problems[0].Message, "stdin: not valid YAML")
	require.Contains(t, set.Problems[1].Message, "stdin can be read only once")
	require.False(t, set.Problems[2].NotYAML)
	require.Contains(t, set.Problems[2].Message, "missing")
	require.Empty(t, set.Items)
}
