package resio

import (
	"github.com/rotate-certs/rotate-certs/fn/kube"
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

	set := ReadPaths([]string{dir, "-"}, strings.NewReader(cm("stdin")))
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
	require.Empty(t, set.Problems)
	require.Len(t, set.Notes, 1, "a template that is not YAML is skipped with a note")
	require.Contains(t, set.Notes[0], filepath.Join("chart", "templates", "x.yaml")+": a template ({{ ... }}), not YAML: skipped; list it in .krmignore")
}

func TestReadProblems(t *testing.T) {
	set := ReadPaths([]string{"-", "-", filepath.Join(t.TempDir(), "missing")}, strings.NewReader("[not: yaml"))
	require.Len(t, set.Problems, 3)
	require.Equal(t, "-", set.Problems[0].Path)
	require.True(t, set.Problems[0].NotYAML)
	require.Contains(t, set.Problems[0].Message, "stdin: not valid YAML")
	require.Contains(t, set.Problems[1].Message, "stdin can be read only once")
	require.False(t, set.Problems[2].NotYAML)
	require.Contains(t, set.Problems[2].Message, "missing")
	require.Empty(t, set.Items)
}

// TestReadDuplicateKeys: a file in which a mapping defines a key twice is
// a problem naming the file, the line and the key, and none of its
// resources is read - kyaml would keep the first value silently.
func TestReadDuplicateKeys(t *testing.T) {
	secret := func(name, value string) string {
		return "apiVersion: v1\nkind: Secret\nmetadata:\n  name: " + name + "\ndata:\n  tls.crt: " + value + "\n"
	}
	list := func(names ...string) string {
		out := "apiVersion: v1\nkind: List\nitems:\n"
		for _, n := range names {
			out += "- " + strings.ReplaceAll(strings.TrimSpace(cm(n)), "\n", "\n  ") + "\n"
		}
		return out
	}
	for _, tc := range []struct {
		name, text string
		want       string // "" for no problem
		items      []string
	}{
		{"two manifests without ---", secret("a", "QQ==") + secret("b", "Qg=="),
			`dup.yaml:7: mapping key "apiVersion" already defined at line 1 (a missing --- between two documents?); 3 more duplicate key(s) in the file`, nil},
		{"after a separator and a comment", cm("ok") + "---\n# comment\n" + secret("a", "QQ==") + secret("b", "Qg=="),
			`dup.yaml:13: mapping key "apiVersion" already defined at line 7`, nil},
		{"a nested key", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: one\n  b: two\n  a: three\n",
			`dup.yaml:8: mapping key "a" already defined at line 6`, nil},
		{"two kubectl Lists appended", list("a") + list("b"),
			`dup.yaml:8: mapping key "apiVersion" already defined at line 1 (a missing --- between two documents?)`, nil},
		{"CRLF line ends", strings.ReplaceAll(cm("a")+cm("b"), "\n", "\r\n"),
			`dup.yaml:5: mapping key "apiVersion" already defined at line 1`, nil},
		{"same key in sibling mappings and documents is fine", cm("a") + "data:\n  name: x\n---\n" + cm("b"), "", []string{"a", "b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := ReadFile("dup.yaml", []byte(tc.text))
			if tc.want == "" {
				require.Empty(t, set.Problems)
			} else {
				require.Len(t, set.Problems, 1)
				require.Contains(t, set.Problems[0].Message, tc.want)
				require.Equal(t, "dup.yaml", set.Problems[0].Path)
				require.True(t, set.Problems[0].NotYAML, "init skips such a file with a note, like a Helm template")
			}
			var names []string
			for _, it := range set.Items {
				names = append(names, it.GetName())
			}
			require.Equal(t, tc.items, names)
		})
	}
	t.Run("stdin is named stdin", func(t *testing.T) {
		set := ReadPaths([]string{"-"}, strings.NewReader(cm("a")+cm("b")))
		require.Len(t, set.Problems, 1)
		require.True(t, strings.HasPrefix(set.Problems[0].Message, `stdin:5: mapping key "apiVersion"`), set.Problems[0].Message)
	})
}

func TestDuplicateKeysError(t *testing.T) {
	require.NoError(t, DuplicateKeysError("f.yaml", []byte(cm("a")+"---\n"+cm("a"))))
	err := DuplicateKeysError("dir/f.yaml", []byte("a: 1\nb:\n  c: 1\n  c: 2\n"))
	require.EqualError(t, err, `dir/f.yaml:4: mapping key "c" already defined at line 3`)
	require.Equal(t, []kube.DuplicateKey{{Key: "a", Field: "a", Line: 2, FirstLine: 1, TopLevel: true}}, duplicateKeys([]byte("a: 1\na: 2\n")))
}

// TestReadTypedLists: SecretList, ConfigMapList and the like are read like
// kubectl's List; items without kind and apiVersion (the API server's
// shape) get them from the list.
func TestReadTypedLists(t *testing.T) {
	text := `apiVersion: v1
kind: SecretList
metadata: {resourceVersion: "1"}
items:
- metadata: {name: bare, namespace: ns}
  data: {ca.crt: QQ==}
- apiVersion: v1
  kind: Secret
  metadata: {name: full, namespace: ns}
---
{"apiVersion": "v1", "kind": "ConfigMapList", "items": [{"metadata": {"name": "json"}}]}
---
apiVersion: example.com/v1
kind: AllowList
metadata: {name: not-a-list}
items: [a, b]
`
	set := ReadFile("lists.yaml", []byte(text))
	require.Empty(t, set.Problems)
	var got []string
	for _, it := range set.Items {
		got = append(got, it.GetApiVersion()+" "+it.GetKind()+" "+it.GetName())
	}
	require.Equal(t, []string{"v1 Secret bare", "v1 Secret full", "v1 ConfigMap json", "example.com/v1 AllowList not-a-list"}, got)
}

// TestReadResourceListsAnywhere: a ResourceList among other documents gives
// its items and its functionConfig, as one alone does.
func TestReadResourceListsAnywhere(t *testing.T) {
	rl := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- " + strings.ReplaceAll(strings.TrimSpace(cm("in-rl")), "\n", "\n  ") +
		"\nfunctionConfig:\n  apiVersion: rotate-certs.dev/v1alpha1\n  kind: RotationPolicy\n  metadata: {name: p}\n"
	set := ReadFile("rl.yaml", []byte(cm("before")+"---\n"+rl))
	require.Empty(t, set.Problems)
	require.Len(t, set.Items, 2)
	require.Equal(t, "in-rl", set.Items[1].GetName())
	require.Len(t, set.FunctionConfigs, 1)
	require.Equal(t, "p", set.FunctionConfigs[0].GetName())
}

// TestReadOnce: a file named twice, or named and inside a directory named
// too, is read once.
func TestReadOnce(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.yaml"), []byte(cm("a")), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "b.yaml"), []byte(cm("b")), 0o644))
	t.Chdir(dir)
	set := ReadPaths([]string{".", "a.yaml", "./a.yaml", filepath.Join(dir, "b.yaml"), "sub/../a.yaml"}, nil)
	require.Len(t, set.Problems, 1, "sub/../a.yaml does not exist as a path: %v", set.Problems)
	var names []string
	for _, it := range set.Items {
		names = append(names, it.GetName())
	}
	require.Equal(t, []string{"a", "b"}, names)
}
