package wire

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAddTransformer: the policy is appended under transformers: (created
// when absent), the file's comments and other entries stay, and a second
// call changes nothing.
func TestAddTransformer(t *testing.T) {
	in := "# the prod overlay\napiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- gateway-ca.yaml # written by certgen\n- trust.yaml\n"
	out, changed, err := addToList([]byte(in), "transformers", "rotation-policy.yaml")
	require.NoError(t, err)
	require.True(t, changed)
	require.Equal(t, "# the prod overlay\napiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- gateway-ca.yaml # written by certgen\n- trust.yaml\ntransformers:\n- rotation-policy.yaml\n", string(out))

	again, changed, err := addToList(out, "transformers", "./rotation-policy.yaml")
	require.NoError(t, err)
	require.False(t, changed, "already listed (./ or not)")
	require.Equal(t, string(out), string(again))

	withOther := "kind: Kustomization\ntransformers:\n  - labels.yaml\n"
	out, changed, err = addToList([]byte(withOther), "transformers", "p.yaml")
	require.NoError(t, err)
	require.True(t, changed)
	require.Equal(t, "kind: Kustomization\ntransformers:\n  - labels.yaml\n  - p.yaml\n", string(out), "the list's indentation is kept")

	_, _, err = addToList([]byte("kind: Kustomization\ntransformers: labels.yaml\n"), "transformers", "p.yaml")
	require.ErrorContains(t, err, "transformers")
}

// TestAddMutator: a Kptfile without a pipeline gets one; an entry with the
// same configPath is updated, not duplicated.
func TestAddMutator(t *testing.T) {
	in := "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: prod # the package\ninfo:\n  description: prod\n"
	out, changed, err := addMutator([]byte(in), Runner{Exec: "../../bin/rotate-certs"}, "rotation-policy.yaml")
	require.NoError(t, err)
	require.True(t, changed)
	require.Equal(t, in+"pipeline:\n  mutators:\n  - exec: ../../bin/rotate-certs\n    configPath: rotation-policy.yaml\n", string(out))

	same, changed, err := addMutator(out, Runner{Exec: "../../bin/rotate-certs"}, "rotation-policy.yaml")
	require.NoError(t, err)
	require.False(t, changed)
	require.Equal(t, string(out), string(same))

	image, changed, err := addMutator(out, Runner{Image: "ghcr.io/rotate-certs/rotate-certs:v0.1.0"}, "rotation-policy.yaml")
	require.NoError(t, err)
	require.True(t, changed)
	require.Equal(t, in+"pipeline:\n  mutators:\n  - configPath: rotation-policy.yaml\n    image: ghcr.io/rotate-certs/rotate-certs:v0.1.0\n", string(image))

	_, _, err = addMutator([]byte("kind: Kustomization\n"), Runner{Exec: "x"}, "p.yaml")
	require.ErrorContains(t, err, "not a Kptfile")
}

func TestRunner(t *testing.T) {
	require.Equal(t, "exec:\n  path: ../../bin/rotate-certs\n", Runner{Exec: "../../bin/rotate-certs"}.FunctionAnnotation())
	require.Equal(t, "container:\n  image: ghcr.io/x/y:v1\n", Runner{Image: "ghcr.io/x/y:v1"}.FunctionAnnotation())
	require.Error(t, Runner{Exec: "a", Image: "b"}.Validate())
}

// TestRebase: paths given from the working directory are written as seen
// from the directory the tool resolves them in.
func TestRebase(t *testing.T) {
	for _, tc := range []struct{ path, dir, want string }{
		{"bin/rotate-certs", "clusters/prod", "../../bin/rotate-certs"},
		{"clusters/prod/rotate-certs", "clusters/prod", "./rotate-certs"},
		{"/usr/local/bin/rotate-certs", "clusters/prod", "/usr/local/bin/rotate-certs"},
	} {
		got, err := rebase(tc.path, tc.dir)
		require.NoError(t, err)
		require.Equal(t, tc.want, got)
	}
}

// TestSetupCheck: the flag combinations that cannot work are refused
// before anything is read.
func TestSetupCheck(t *testing.T) {
	require.NoError(t, Setup{}.Check())
	require.ErrorContains(t, Setup{Kustomization: "k.yaml"}.Check(), "need --output FILE")
	require.ErrorContains(t, Setup{Policy: "p.yaml", Kptfile: "Kptfile"}.Check(), "--kptfile needs --exec PATH or --image REF")
	require.NoError(t, Setup{Policy: "p.yaml", Kptfile: "Kptfile", Runner: Runner{Image: "i"}}.Check())
}

// TestWriteAllOrNothing: the files are written together; one that cannot
// be written (read-only) leaves every file as it was.
func TestWriteAllOrNothing(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "x", "a.yaml"), filepath.Join(dir, "y", "b.yaml")
	require.NoError(t, os.MkdirAll(filepath.Dir(b), 0o755))
	require.NoError(t, os.WriteFile(b, []byte("old\n"), 0o444))
	err := Write([]File{{Path: a, Data: []byte("new\n"), Changed: true}, {Path: b, Data: []byte("new\n"), Changed: true}})
	require.ErrorContains(t, err, "read-only")
	_, statErr := os.Stat(a)
	require.True(t, os.IsNotExist(statErr), "a.yaml was not written")

	require.NoError(t, os.Chmod(b, 0o644))
	require.NoError(t, Write([]File{{Path: a, Data: []byte("new\n"), Changed: true}, {Path: b, Data: []byte("kept\n")}}))
	data, err := os.ReadFile(b)
	require.NoError(t, err)
	require.Equal(t, "old\n", string(data), "an unchanged file is not written")
}

// TestEditsKeepCRLF: a kustomization or Kptfile written with CRLF line ends
// (a Windows checkout, core.autocrlf) keeps them: only the added lines are
// new, every other line stays as it was.
func TestEditsKeepCRLF(t *testing.T) {
	in := "# the prod overlay\r\nkind: Kustomization\r\nresources:\r\n- trust.yaml # the target\r\n"
	out, changed, err := addToList([]byte(in), "transformers", "rotation-policy.yaml")
	require.NoError(t, err)
	require.True(t, changed)
	require.Equal(t, in+"transformers:\r\n- rotation-policy.yaml\r\n", string(out))

	kpt := "apiVersion: kpt.dev/v1\r\nkind: Kptfile\r\nmetadata:\r\n  name: prod\r\n"
	out, changed, err = addMutator([]byte(kpt), Runner{Exec: "./rotate-certs"}, "p.yaml")
	require.NoError(t, err)
	require.True(t, changed)
	require.Equal(t, kpt+"pipeline:\r\n  mutators:\r\n  - exec: ./rotate-certs\r\n    configPath: p.yaml\r\n", string(out))
}

// TestRefusesDuplicateKeys: a kustomization or Kptfile that defines a key
// twice does not say what its author meant (YAML parsers keep one of the
// two values); init refuses such input, and refuses to edit such a file.
func TestRefusesDuplicateKeys(t *testing.T) {
	dir := t.TempDir()
	k := filepath.Join(dir, "kustomization.yaml")
	require.NoError(t, os.WriteFile(k, []byte("kind: Kustomization\nresources:\n- a.yaml\nresources:\n- b.yaml\n"), 0o644))
	kpt := filepath.Join(dir, "Kptfile")
	require.NoError(t, os.WriteFile(kpt, []byte("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: a\n  name: b\n"), 0o644))
	for _, s := range []Setup{
		{Policy: filepath.Join(dir, "p.yaml"), Kustomization: k},
		{Policy: filepath.Join(dir, "p.yaml"), Kptfile: kpt, Runner: Runner{Exec: "./rotate-certs"}},
	} {
		_, err := s.Wiring()
		require.Error(t, err)
		require.Contains(t, err.Error(), "already defined at line")
	}
	_, err := (Setup{Policy: filepath.Join(dir, "p.yaml"), Kustomization: k}).Wiring()
	require.Equal(t, k+":4: mapping key \"resources\" already defined at line 2 (a missing --- between two documents?)", err.Error())
}

// TestAddResources: files not listed yet are appended under resources:
// (created when absent), one listed as ./name is not added twice, and
// Unlisted names exactly the files the list lacks.
func TestAddResources(t *testing.T) {
	in := "kind: Kustomization\nresources:\n- ./a.yaml # first\ntransformers:\n- p.yaml\n"
	out, changed, err := AddResources([]byte(in), "a.yaml", "b.yaml")
	require.NoError(t, err)
	require.True(t, changed)
	require.Equal(t, "kind: Kustomization\nresources:\n- ./a.yaml # first\n- b.yaml\ntransformers:\n- p.yaml\n", string(out))
	_, changed, err = AddResources(out, "b.yaml")
	require.NoError(t, err)
	require.False(t, changed)

	missing, err := Unlisted([]byte(in), []string{"a.yaml", "b.yaml"})
	require.NoError(t, err)
	require.Equal(t, []string{"b.yaml"}, missing)
	missing, err = Unlisted([]byte("kind: Kustomization\n"), []string{"a.yaml"})
	require.NoError(t, err)
	require.Equal(t, []string{"a.yaml"}, missing, "no resources: lists nothing")

	out, changed, err = AddResources([]byte("kind: Kustomization\n"), "a.yaml")
	require.NoError(t, err)
	require.True(t, changed)
	require.Equal(t, "kind: Kustomization\nresources:\n- a.yaml\n", string(out))

	_, _, err = AddResources([]byte("kind: Kustomization\nresources: a.yaml\n"), "b.yaml")
	require.ErrorContains(t, err, "resources: not a list")
}

// TestFindKustomization: the names kustomize reads, in its order; none
// is "".
func TestFindKustomization(t *testing.T) {
	dir := t.TempDir()
	got, err := FindKustomization(dir)
	require.NoError(t, err)
	require.Empty(t, got)
	for _, name := range []string{"Kustomization", "kustomization.yml", "kustomization.yaml"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("kind: Kustomization\n"), 0o644))
		got, err := FindKustomization(dir)
		require.NoError(t, err)
		require.Equal(t, filepath.Join(dir, name), got, "%s wins over those before it", name)
	}
}
