package e2e

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/internal/e2eharness"
	"github.com/rotate-certs/rotate-certs/internal/golden"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/rotate-certs/rotate-certs/internal/testpki/layouts"
	"github.com/stretchr/testify/require"
)

// The three recipes of the pull-request gate - the GitHub Action, the
// pre-commit hook and the GitLab CI job of docs/guides/pull-requests.md -
// run as their users run them on a repository whose trust lives in
// kustomize generator inputs: Istio's plug-in CA as PEM files that a
// secretGenerator turns into Secret istio-system/cacerts (the layout Istio
// documents and its certificate tools write, internal/testpki/layouts),
// and istiod's settings as an env file that a configMapGenerator turns
// into a ConfigMap.

// meshDir is where the plug-in CA's kustomization sits in the repository.
const meshDir = "clusters/istio"

// The roots and the intermediates (Istio's "CA certificate") of the
// repository: root 1 at the start, root 2 the next one.
var (
	recipeRoot1 = testpki.NewSubjectCA("e2e-recipes-root-1", "Root CA", testpki.Date(2025, 1, 1), testpki.Days(7300))
	recipeRoot2 = testpki.NewSubjectCA("e2e-recipes-root-2", "Root CA", testpki.Date(2025, 6, 1), testpki.Days(7300))
	recipeInt1  = testpki.NewIntermediate("e2e-recipes-int-1", "Intermediate CA", recipeRoot1, testpki.Date(2025, 1, 1), testpki.Days(3650))
	recipeInt2  = testpki.NewIntermediate("e2e-recipes-int-2", "Intermediate CA", recipeRoot2, testpki.Date(2025, 6, 1), testpki.Days(3650))
)

// meshKustomization is Istio's plug-in CA for cluster1, from the files
// Istio's certificate tools write, the policy as its transformer, and
// istiod's settings from an env file.
var meshKustomization = "# Istio's plug-in CA for cluster1, from the files Istio's certificate\n" +
	"# tools write, and istiod's settings from an env file.\n" +
	"apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n" +
	layouts.PluginCAKustomization("istiod.yaml", "root-ca.yaml") +
	"transformers:\n- rotation-policy.yaml\nconfigMapGenerator:\n- name: istiod-settings\n  envs:\n  - istiod.env\n"

// meshWorkloads are istiod, which mounts cacerts, and a client without a
// sidecar that reads the root once through env; both read the settings.
const meshWorkloads = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: istiod
spec:
  selector:
    matchLabels: {app: istiod}
  template:
    metadata:
      labels: {app: istiod}
    spec:
      containers:
      - name: discovery
        image: docker.io/istio/pilot:1.24.0
        envFrom:
        - configMapRef: {name: istiod-settings}
        volumeMounts:
        - {name: cacerts, mountPath: /etc/cacerts, readOnly: true}
      volumes:
      - name: cacerts
        secret: {secretName: cacerts, optional: true}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: root-reader
spec:
  selector:
    matchLabels: {app: root-reader}
  template:
    metadata:
      labels: {app: root-reader}
    spec:
      containers:
      - name: client
        image: example.org/mesh-client:1
        envFrom:
        - configMapRef: {name: istiod-settings}
        env:
        - name: ROOT_CA
          valueFrom:
            secretKeyRef: {name: cacerts, key: root-cert.pem}
`

// meshPolicy stages the next root (root-ca.yaml) into cacerts'
// root-cert.pem, as examples/istio's policy does.
const meshPolicy = `apiVersion: rotate-certs.dev/v1alpha1
kind: RotationPolicy
metadata:
  name: istio-trust
  annotations:
    config.kubernetes.io/function: |
      exec:
        path: ../../bin/rotate-certs
    config.kubernetes.io/local-config: "true"
spec:
  trustBundles:
  - name: istio-roots
    sources:
    - configMap: {name: istio-root-ca, namespace: istio-system, key: root-cert.pem}
    target:
      name: cacerts
      namespaces: [istio-system]
      key: root-cert.pem
`

// pemOf is the certificates' PEM, concatenated.
func pemOf(certs ...testpki.Cert) string {
	var b strings.Builder
	for _, c := range certs {
		b.Write(c.PEM())
	}
	return b.String()
}

// cluster1CA writes cluster1's plug-in CA files: intermediate inter, its
// key and chain, and roots as root-cert.pem.
func cluster1CA(t *testing.T, dir string, inter testpki.Cert, roots ...testpki.Cert) {
	t.Helper()
	writeFiles(t, dir, layouts.PluginCA{Intermediate: inter, Root: roots[0], Roots: roots}.Files(meshDir+"/cluster1"))
}

// generatorTree is the repository's main branch: the plug-in CA of root
// 1, root 2 staged as the policy's source (committed on its own, before
// any trust changes), root 1's files at the top where Istio's tools write
// them (no build reads them).
func generatorTree(t *testing.T, dir string) {
	t.Helper()
	writeFiles(t, dir, layouts.RootFiles(meshDir, recipeRoot1))
	writeFiles(t, dir, map[string]string{
		meshDir + "/kustomization.yaml":   meshKustomization,
		meshDir + "/istiod.yaml":          meshWorkloads,
		meshDir + "/rotation-policy.yaml": meshPolicy,
		meshDir + "/istiod.env":           "PILOT_CERT_PROVIDER=istiod\nISTIO_MULTIROOT_MESH=true\n",
		meshDir + "/root-ca.yaml": "# the next root, the policy's source; its key stays offline\napiVersion: v1\nkind: ConfigMap\n" +
			"metadata:\n  name: istio-root-ca\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\ndata:\n  root-cert.pem: |\n" +
			indentLines(pemOf(recipeRoot2), "    "),
	})
	cluster1CA(t, dir, recipeInt1, recipeRoot1)
}

// indentLines puts prefix before every line of s.
func indentLines(s, prefix string) string {
	return prefix + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n"+prefix) + "\n"
}

// The changes of the tests, each an edit of generatorTree.

// replaceRootPR regenerates cluster1's CA from root 2 and commits it in
// one step: the intermediate of the new root, the old root gone - a break
// for the client that keeps the old root.
func replaceRootPR(t *testing.T, dir string) { t.Helper(); cluster1CA(t, dir, recipeInt2, recipeRoot2) }

// stageRootPR is step 1 of Istio's root rotation, as the policy renders
// it: root 2 beside root 1 in cluster1's root-cert.pem.
func stageRootPR(t *testing.T, dir string) {
	t.Helper()
	cluster1CA(t, dir, recipeInt1, recipeRoot1, recipeRoot2)
}

// newRootFilesPR regenerates the top root files (Istio's `make root-ca`)
// and feeds them to nothing yet.
func newRootFilesPR(t *testing.T, dir string) {
	t.Helper()
	writeFiles(t, dir, layouts.RootFiles(meshDir, recipeRoot2))
}

// removeChainPR removes a file the secretGenerator reads: the build fails.
func removeChainPR(t *testing.T, dir string) {
	t.Helper()
	require.NoError(t, os.Remove(filepath.Join(dir, meshDir, "cluster1", "cert-chain.pem")))
}

// settingsPR changes istiod's env file: no trust.
func settingsPR(t *testing.T, dir string) {
	t.Helper()
	editFile(t, filepath.Join(dir, meshDir, "istiod.env"), "ISTIO_MULTIROOT_MESH=true\n", "ISTIO_MULTIROOT_MESH=true\nPILOT_ENABLE_CA_SERVER=true\n")
}

// keyInSettingsPR puts a private key (base64 of its PEM) into istiod's env
// file: a key in a ConfigMap.
func keyInSettingsPR(t *testing.T, dir string) {
	t.Helper()
	editFile(t, filepath.Join(dir, meshDir, "istiod.env"), "ISTIO_MULTIROOT_MESH=true\n",
		"ISTIO_MULTIROOT_MESH=true\nSIGNING_KEY="+base64.StdEncoding.EncodeToString(recipeInt2.KeyPEM())+"\n")
}

// fixturesNoise adds what diff warns about on every pull request, whatever
// it changes: a ConfigMap defined in two files of one directory (variants
// of a test fixture) and a file that does not parse.
func fixturesNoise(t *testing.T, dir string) {
	t.Helper()
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: sample, namespace: fixtures}\ndata: {variant: %s}\n"
	writeFiles(t, dir, map[string]string{
		"clusters/fixtures/sample-a.yaml": strings.Replace(cm, "%s", "a", 1),
		"clusters/fixtures/sample-b.yaml": strings.Replace(cm, "%s", "b", 1),
		"clusters/fixtures/broken.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: broken\n",
	})
}

// requireNoKey fails when text holds key material of the repository's
// CAs: a PEM key block, base64 of one, or a line of a key.
func requireNoKey(t *testing.T, what, text string) {
	t.Helper()
	require.NotContains(t, text, "PRIVATE KEY", what)
	require.NotContains(t, text, base64.StdEncoding.EncodeToString([]byte("-----BEGIN PRIVATE"))[:20], what)
	for _, c := range []testpki.Cert{recipeRoot1, recipeRoot2, recipeInt1, recipeInt2} {
		body := strings.Split(string(c.KeyPEM()), "\n")[1]
		require.NotContains(t, text, body, what)
		require.NotContains(t, text, base64.StdEncoding.EncodeToString(c.KeyPEM())[24:60], what)
	}
}

// generatorInputsOnly fails unless every file staged in dir is a
// generator's input (no manifest): pre-commit then runs the hook only
// because its files: pattern takes certificate and env files.
func generatorInputsOnly(t *testing.T, r gateRepo) {
	t.Helper()
	staged := strings.Fields(git(t, r.dir, r.env, "diff", "--cached", "--name-only"))
	require.NotEmpty(t, staged)
	for _, f := range staged {
		require.Contains(t, []string{".pem", ".env"}, filepath.Ext(f), "staged %v", staged)
	}
}

// tryHook runs the rotate-certs-diff-system hook of this repository with
// pre-commit itself (try-repo), as a commit hook or, with run's flags, as
// CI runs pre-commit; it returns what pre-commit printed and its status.
func tryHook(t *testing.T, preCommit string, r gateRepo, flags ...string) (string, int) {
	t.Helper()
	args := append([]string{"try-repo", golden.Path(), "rotate-certs-diff-system", "--verbose"}, flags...)
	res := e2eharness.Cmd{Dir: r.dir, Env: append(r.env, "PRE_COMMIT_HOME="+t.TempDir())}.Run(t, preCommit, args...)
	out := res.Stdout + res.Stderr
	require.NotContains(t, out, "(no files to check)", "the hook's files: pattern must take the change's files")
	require.Contains(t, out, "- hook id: rotate-certs-diff-system", "the hook did not run")
	requireNoKey(t, "pre-commit's output", out)
	return out, res.Code
}

// TestPreCommitOnGeneratorInputs runs the hook with pre-commit on commits
// of the plug-in CA repository that stage generator inputs alone - PEM
// files, an env file: it runs (its files: pattern takes them), fails the
// root replaced in one step naming the Secret and its kustomization,
// passes the next root staged beside the old, and names certificate files
// no build reads.
func TestPreCommitOnGeneratorInputs(t *testing.T) {
	requireDiffCommand(t)
	preCommit := e2eharness.Tool(t, "pre-commit")
	for _, tc := range []struct {
		name   string
		change func(*testing.T, string)
		code   int
		want   []string
	}{
		{"the root replaced in one step", replaceRootPR, 1, []string{"FAIL: this change breaks trust",
			"Secret istio-system/cacerts data.root-cert.pem of bundle istio-roots (in " + meshDir + "/kustomization.yaml)"}},
		{"the next root beside the old", stageRootPR, 0, []string{"PASS: trust changes, nothing breaks, nothing is planted"}},
		{"the env file alone", settingsPR, 0, []string{"Deployment istio-system/istiod rolls now"}},
		{"root files no build reads", newRootFilesPR, 0, []string{"certificate files changed, not judged", meshDir + "/root-key.pem: changed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newGateRepoOf(t, generatorTree)
			tc.change(t, r.dir)
			git(t, r.dir, r.env, "add", "-A")
			generatorInputsOnly(t, r)
			out, code := tryHook(t, preCommit, r)
			require.Equal(t, tc.code, code, out)
			for _, want := range tc.want {
				require.Contains(t, out, want)
			}
		})
	}
}

// TestPreCommitRangeOnGeneratorInputs runs the hook as CI runs pre-commit
// - `pre-commit run --from-ref main --to-ref pr` on the branch's head,
// nothing staged - and as a pre-push hook is run: it judges the range's
// own commits, from the merge base (main moved on meanwhile: its new root
// files are no part of the range). Before
// --pre-commit, the hook compared HEAD with an unchanged working tree and
// passed every range: "PASS: no change to trust" on the break.
func TestPreCommitRangeOnGeneratorInputs(t *testing.T) {
	requireDiffCommand(t)
	preCommit := e2eharness.Tool(t, "pre-commit")
	for _, tc := range []struct {
		name    string
		pr      func(*testing.T, string)
		code    int
		verdict string
	}{
		{"the root replaced in one step", replaceRootPR, 1, "FAIL: this change breaks trust"},
		{"the next root beside the old", stageRootPR, 0, "PASS: trust changes, nothing breaks, nothing is planted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newGateRepoOf(t, generatorTree)
			r.commitOn(t, "pr", tc.pr)
			r.commitOn(t, "main", newRootFilesPR)
			git(t, r.dir, r.env, "checkout", "-q", "pr")
			out, code := tryHook(t, preCommit, r, "--from-ref", "main", "--to-ref", "pr")
			require.Equal(t, tc.code, code, out)
			require.Contains(t, out, tc.verdict)
			require.NotContains(t, out, "certificate files changed", "main's commits since the merge base are not the range's")
		})
	}
}
