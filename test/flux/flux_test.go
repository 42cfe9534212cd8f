// Package flux tests what Flux does with the tree CI renders: the
// workflow of examples/ci renders and commits clusters/prod, then
// publishes the committed tree as an OCI artifact (`flux push artifact`,
// `flux tag artifact`) to a loopback registry; the artifact is pulled back
// and built as kustomize-controller builds it (`flux build kustomization`
// with the Flux Kustomization of examples/ci/flux).
//
// The flux CLI is not built here: the workflow's flux commands run a
// stand-in (standin_test.go) made of the packages the CLI calls at the
// versions flux v2.9.5 requires - fluxcd/pkg/kustomize, which `flux build`
// and kustomize-controller both build with, and fluxcd/pkg/oci, the
// artifact client of `flux push|pull|tag artifact`. It is a module of its
// own so that Flux's packages stay out of rotate-certs' dependencies. Run
// it from this directory:
//
//	go test ./...
package flux

import (
	"bytes"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rotate-certs/rotate-certs/internal/e2eharness"
	"github.com/rotate-certs/rotate-certs/internal/golden"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

var binary string // rotate-certs, built once for the package

func TestMain(m *testing.M) {
	if filepath.Base(os.Args[0]) == "flux" {
		os.Exit(runFlux(os.Args[1:], os.Stdout, os.Stderr))
	}
	ciDir = golden.Path("examples", "ci")
	fluxFile = filepath.Join(ciDir, "flux", "clusters-prod.yaml")
	os.Exit(e2eharness.Main(m, &binary))
}

// examples/ci and its Flux objects (set by TestMain: the stand-in runs
// outside the repository).
var ciDir, fluxFile string

// step is a GitHub Actions step of the example workflow.
type step struct {
	ID    string            `json:"id"`
	If    string            `json:"if"`
	Shell string            `json:"shell"`
	Env   map[string]string `json:"env"`
	Run   string            `json:"run"`
}

func workflowSteps(t *testing.T) map[string]step {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(ciDir, ".github", "workflows", "rotate-certs.yaml"))
	require.NoError(t, err)
	var wf struct {
		Jobs map[string]struct {
			Steps []step `json:"steps"`
		} `json:"jobs"`
	}
	require.NoError(t, yaml.Unmarshal(data, &wf))
	steps := map[string]step{}
	for _, job := range wf.Jobs {
		for _, s := range job.Steps {
			if s.ID != "" {
				steps[s.ID] = s
			}
		}
	}
	require.Contains(t, steps, "render")
	require.Contains(t, steps, "publish")
	return steps
}

// ciRepo is a git repository holding a copy of examples/ci, with an
// origin remote (never contacted) and a runner's PATH: the flux stand-in,
// rotate-certs, git and coreutils.
type ciRepo struct {
	dir, output string
	env         []string
}

const sourceURL = "https://github.com/example-org/gitops"

func newCIRepo(t *testing.T) ciRepo {
	t.Helper()
	root := t.TempDir()
	r := ciRepo{dir: filepath.Join(root, "repo"), output: filepath.Join(root, "github-output")}
	require.NoError(t, os.CopyFS(r.dir, os.DirFS(ciDir)))
	bin := filepath.Join(root, "bin")
	require.NoError(t, os.MkdirAll(bin, 0o755))
	self, err := os.Executable()
	require.NoError(t, err)
	require.NoError(t, os.Symlink(self, filepath.Join(bin, "flux")))
	require.NoError(t, os.Symlink(binary, filepath.Join(bin, "rotate-certs")))
	r.env = []string{"PATH=" + bin + ":/usr/local/bin:/usr/bin:/bin", "HOME=" + root, "GIT_CONFIG_NOSYSTEM=1",
		"GITHUB_REF_NAME=main", "GITHUB_OUTPUT=" + r.output}
	r.git(t, "init", "-q", "-b", "main")
	r.git(t, "remote", "add", "origin", sourceURL)
	r.commitAll(t, "the cluster")
	return r
}

func (r ciRepo) git(t *testing.T, args ...string) string {
	t.Helper()
	res := e2eharness.Cmd{Dir: r.dir, Env: r.env}.Run(t, "git", args...)
	require.NoError(t, res.Err, "git %v: %s", args, res.Stderr)
	return strings.TrimSpace(res.Stdout)
}

func (r ciRepo) commitAll(t *testing.T, msg string) {
	t.Helper()
	r.git(t, "add", "-A")
	r.git(t, "-c", "user.name=ci", "-c", "user.email=ci@example.com", "commit", "-qm", msg)
}

// runStep runs a step's script as GitHub runs `shell: bash`, with the
// step's env replaced by env.
func (r ciRepo) runStep(t *testing.T, s step, env ...string) string {
	t.Helper()
	require.Equal(t, "bash", s.Shell)
	script := filepath.Join(t.TempDir(), "step.sh")
	require.NoError(t, os.WriteFile(script, []byte(s.Run), 0o644))
	res := e2eharness.Cmd{Dir: r.dir, Env: append(append([]string(nil), r.env...), env...)}.Run(t,
		"bash", "--noprofile", "--norc", "-eo", "pipefail", script)
	require.NoError(t, res.Err, "step %s:\n%s%s", s.ID, res.Stdout, res.Stderr)
	return res.Stdout + res.Stderr
}

var pushedTo = regexp.MustCompile(`artifact successfully pushed to (\S+@sha256:[0-9a-f]{64})`)

// publish runs the workflow's publish step against the registry and
// returns the digest reference it pushed.
func (r ciRepo) publish(t *testing.T, s step, artifact string) string {
	t.Helper()
	require.Contains(t, s.Env, "ARTIFACT")
	require.Contains(t, s.Env, "CREDS")
	out := r.runStep(t, s, "ARTIFACT="+artifact, "CREDS=ci:not-a-secret")
	m := pushedTo.FindStringSubmatch(out)
	require.NotNil(t, m, "the publish step pushed nothing:\n%s", out)
	return m[1]
}

// flux runs the stand-in in the test's own process.
func fluxCmd(t *testing.T, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	require.Zero(t, runFlux(args, &out, &errOut), "flux %s: %s", strings.Join(args, " "), errOut.String())
	return out.String()
}

// pull pulls an artifact into a new directory and returns the directory
// and the artifact's metadata.
func pull(t *testing.T, url string) (dir string, meta map[string]any) {
	t.Helper()
	dir = t.TempDir()
	require.NoError(t, json.Unmarshal([]byte(fluxCmd(t, "pull", "artifact", url, "--output="+dir)), &meta))
	return dir, meta
}

// caSubjects returns the common names of the certificates in a Secret's
// data[key] among the documents of a YAML stream.
func caSubjects(t *testing.T, stream, kind, name, key string) []string {
	t.Helper()
	for _, doc := range strings.Split(stream, "\n---") {
		var obj struct {
			Kind     string                `json:"kind"`
			Metadata struct{ Name string } `json:"metadata"`
			Data     map[string]string     `json:"data"`
		}
		require.NoError(t, yaml.Unmarshal([]byte(doc), &obj))
		if obj.Kind != kind || obj.Metadata.Name != name {
			continue
		}
		rest, err := base64.StdEncoding.DecodeString(obj.Data[key])
		require.NoError(t, err)
		var cns []string
		for block, r := pem.Decode(rest); block != nil; block, r = pem.Decode(r) {
			c, err := x509.ParseCertificate(block.Bytes)
			require.NoError(t, err)
			cns = append(cns, c.Subject.CommonName)
		}
		return cns
	}
	t.Fatalf("%s %s is not in the build", kind, name)
	return nil
}

// kinds lists the documents of a YAML stream as kind/name.
func kinds(t *testing.T, stream string) []string {
	t.Helper()
	var out []string
	for _, doc := range strings.Split(stream, "\n---") {
		var obj struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name   string            `json:"name"`
				Labels map[string]string `json:"labels"`
			} `json:"metadata"`
		}
		require.NoError(t, yaml.Unmarshal([]byte(doc), &obj))
		if obj.Kind == "" {
			continue
		}
		require.Equal(t, "clusters-prod", obj.Metadata.Labels["kustomize.toolkit.fluxcd.io/name"], "kustomize-controller's owner label")
		out = append(out, obj.Kind+"/"+obj.Metadata.Name)
	}
	return out
}

func TestFluxObjects(t *testing.T) {
	data, err := os.ReadFile(fluxFile)
	require.NoError(t, err)
	docs := map[string]map[string]any{}
	for _, doc := range strings.Split(string(data), "\n---") {
		var obj map[string]any
		require.NoError(t, yaml.Unmarshal([]byte(doc), &obj))
		docs[obj["apiVersion"].(string)+" "+obj["kind"].(string)] = obj
	}
	repo := docs["source.toolkit.fluxcd.io/v1 OCIRepository"]
	ks := docs["kustomize.toolkit.fluxcd.io/v1 Kustomization"]
	require.NotNil(t, repo, "an OCIRepository (source.toolkit.fluxcd.io/v1)")
	require.NotNil(t, ks, "a Kustomization (kustomize.toolkit.fluxcd.io/v1)")
	spec := repo["spec"].(map[string]any)
	require.True(t, strings.HasPrefix(spec["url"].(string), "oci://"), "an OCIRepository's url is oci://")
	require.Equal(t, "main", spec["ref"].(map[string]any)["tag"], "the OCIRepository follows the tag the workflow moves")
	ksSpec := ks["spec"].(map[string]any)
	require.Equal(t, map[string]any{"kind": "OCIRepository", "name": repo["metadata"].(map[string]any)["name"]}, ksSpec["sourceRef"])
	require.Equal(t, "./", ksSpec["path"], "the artifact holds the rendered directory at its root")
	require.Equal(t, true, ksSpec["prune"])
	require.Contains(t, workflowSteps(t)["publish"].Run, "--path=clusters/prod", "the workflow publishes the rendered directory")
}

// TestFluxAppliesThePublishedRender runs the workflow's render and publish
// steps as written, twice, against a loopback registry; pulls what the
// OCIRepository follows; and builds it as kustomize-controller does.
func TestFluxAppliesThePublishedRender(t *testing.T) {
	registry := e2eharness.StartRegistry(t)
	artifact := "oci://" + registry + "/gitops/clusters-prod"
	steps := workflowSteps(t)
	r := newCIRepo(t)

	r.runStep(t, steps["render"])
	head := r.git(t, "rev-parse", "HEAD")
	require.Empty(t, r.git(t, "status", "--porcelain"), "the render is committed before anything is published")
	digest := r.publish(t, steps["publish"], artifact)
	require.True(t, strings.HasPrefix(digest, registry+"/gitops/clusters-prod@sha256:"), digest)

	// A re-run of the job: nothing to render, the same commit, the same
	// digest - even from a fresh checkout, whose files have new times.
	r.runStep(t, steps["render"])
	require.Equal(t, head, r.git(t, "rev-parse", "HEAD"))
	other := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	require.NoError(t, filepath.WalkDir(filepath.Join(r.dir, "clusters"), func(p string, _ os.DirEntry, err error) error {
		require.NoError(t, err)
		return os.Chtimes(p, other, other)
	}))
	require.Equal(t, digest, r.publish(t, steps["publish"], artifact), "--reproducible: the same commit gives the same digest")

	// What the OCIRepository follows: the branch tag, moved to this commit.
	dir, meta := pull(t, "oci://"+registry+"/gitops/clusters-prod:main")
	require.Equal(t, "main@sha1:"+head, meta["source_revision"])
	require.Equal(t, sourceURL, meta["source_url"])
	require.Equal(t, digest, meta["digest"], "the branch tag points at the published artifact")
	require.Equal(t, "1970-01-01T00:00:00Z", meta["created"], "--reproducible")
	committed := e2eharness.Files(t, filepath.Join(r.dir, "clusters", "prod"))
	require.Equal(t, committed, e2eharness.Files(t, dir), "the artifact holds the committed tree, file for file")

	out := fluxCmd(t, "build", "kustomization", "clusters-prod", "--path="+dir, "--kustomization-file="+fluxFile, "--dry-run")
	require.Equal(t, []string{"Secret/envoy-gateway", "Secret/ratelimit-client", "Secret/envoy-gateway-trust"}, kinds(t, out),
		"every manifest of the render and nothing else: the policy is local config")
	require.Equal(t, []string{"example-ca-new", "example-ca-old"}, caSubjects(t, out, "Secret", "envoy-gateway-trust", "ca.crt"),
		"Flux applies the rendered bundle: the new CA and the old one")
	require.Equal(t, committed, e2eharness.Files(t, dir), "flux build leaves the directory as it found it")
	require.NotContains(t, out, "RotationPolicy")

	// A new commit is a new artifact, and the branch tag moves to it.
	require.NoError(t, os.WriteFile(filepath.Join(r.dir, "clusters", "prod", "notes.yaml"),
		[]byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: notes\n  namespace: envoy-gateway-system\n"), 0o644))
	r.commitAll(t, "notes")
	next := r.publish(t, steps["publish"], artifact)
	require.NotEqual(t, digest, next)
	_, meta = pull(t, "oci://"+registry+"/gitops/clusters-prod:main")
	require.Equal(t, "main@sha1:"+r.git(t, "rev-parse", "HEAD"), meta["source_revision"])
}

// TestFluxRunsNoFunctions: Flux builds with plugins disabled, so a
// kustomization that runs rotate-certs as a function fails there - which
// is why the render happens in CI.
func TestFluxRunsNoFunctions(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "app")
	require.NoError(t, os.CopyFS(dir, os.DirFS(golden.Path("examples", "argocd", "app"))))
	var out, errOut bytes.Buffer
	code := runFlux([]string{"build", "kustomization", "clusters-prod", "--path=" + dir, "--kustomization-file=" + fluxFile, "--dry-run"}, &out, &errOut)
	require.Equal(t, 1, code, "a function in a Flux build must fail, not be skipped:\n%s", out.String())
	require.Contains(t, errOut.String(), "kustomize build failed")
	require.Empty(t, out.String())
}

// The stand-in refuses what it does not implement rather than ignoring it.
func TestFluxStandInRefusesUnknownFlags(t *testing.T) {
	var out, errOut bytes.Buffer
	require.Equal(t, 1, runFlux([]string{"push", "artifact", "oci://localhost:1/x:y", "--path=.", "--sign=cosign"}, &out, &errOut))
	require.Contains(t, errOut.String(), "flag provided but not defined: -sign")
	require.Equal(t, 1, runFlux([]string{"build", "kustomization", "x", "--path=."}, &out, &errOut))
	require.Contains(t, errOut.String(), "needs --dry-run")
}
