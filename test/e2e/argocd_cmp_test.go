package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/internal/e2eharness"
	"github.com/stretchr/testify/require"
	sigsyaml "sigs.k8s.io/yaml"
)

// The Argo CD plugin through Argo CD itself: Argo CD's argocd-cmp-server
// (e2eharness.ArgoCDVersion, built by `make argocd` as argocd-harness)
// serves examples/argocd/plugin.yaml on a unix socket, from a sidecar
// whose PATH holds only rotate-certs and kustomize; the repo-server's own
// manifest generation (argocd-harness generate: reposerver/repository's
// GenerateManifests) asks it, as argocd-repo-server does for an
// Application: source type detection and plugin discovery over the
// socket (MatchRepository), then GenerateManifest with the repository sent
// as a tarball.

// cmpSidecar is a running argocd-cmp-server and the socket directory the
// repo-server looks in.
type cmpSidecar struct {
	harness, sockets string
	log              *bytes.Buffer
}

func startCMPServer(t *testing.T) cmpSidecar {
	t.Helper()
	harness := e2eharness.ArgoCDHarness(t)
	kustomize := e2eharness.Tool(t, "kustomize")
	// A short directory: a unix socket's path is limited to 107 bytes.
	root, err := os.MkdirTemp("", "cmp")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(root) })
	bin, cfg, sockets := filepath.Join(root, "bin"), filepath.Join(root, "config"), filepath.Join(root, "plugins")
	for _, d := range []string{bin, cfg, sockets, filepath.Join(root, "home"), filepath.Join(root, "work")} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	require.NoError(t, os.Symlink(kustomize, filepath.Join(bin, "kustomize")))
	require.NoError(t, os.Symlink(binary, filepath.Join(bin, "rotate-certs")))
	plugin, err := os.ReadFile(filepath.Join(argocdDir, "plugin.yaml"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(cfg, "plugin.yaml"), plugin, 0o644))

	ctx, cancel := context.WithCancel(context.Background())
	s := cmpSidecar{harness: harness, sockets: sockets, log: &bytes.Buffer{}}
	cmd := exec.CommandContext(ctx, harness, "argocd-cmp-server", "--config-dir-path", cfg, "--logformat", "text")
	cmd.Env = []string{"PATH=" + bin, "HOME=" + filepath.Join(root, "home"),
		"ARGOCD_PLUGINSOCKFILEPATH=" + sockets, "ARGOCD_CMP_WORKDIR=" + filepath.Join(root, "work")}
	cmd.Stdout, cmd.Stderr = s.log, s.log
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("argocd-cmp-server's log:\n%s", s.log)
		}
	})
	sock := filepath.Join(sockets, loadPlugin(t).pluginName()+".sock")
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) { // a guard against a hang
		if st, err := os.Stat(sock); err == nil && st.Mode()&os.ModeSocket != 0 {
			return s
		}
		require.True(t, time.Now().Before(deadline), "argocd-cmp-server did not open %s:\n%s", sock, s.log)
	}
}

// manifestResponse is the repo-server's answer (reposerver/apiclient).
type manifestResponse struct {
	Manifests  []string `json:"manifests"`
	SourceType string   `json:"sourceType"`
}

// generate asks the repo-server's generation code for the manifests of the
// example Application, its source directory at dir in the repository
// repo; plugin "" leaves the Application without spec.source.plugin, so
// the repo-server discovers it. It returns the response, or the error
// Argo CD would show.
func (s cmpSidecar) generate(t *testing.T, repo, dir, plugin string) (manifestResponse, string, error) {
	t.Helper()
	app := loadApplication(t)
	source := map[string]any{"repoURL": app.repoURL, "path": dir, "targetRevision": app.targetRevision}
	if plugin != "" {
		source["plugin"] = map[string]any{"name": plugin}
	}
	req, err := json.Marshal(map[string]any{
		"repoRoot": repo,
		"revision": "f913b6cbf58aa5ae5ca1f8a2b149477aebcbd9d8",
		"request": map[string]any{
			"repo":              map[string]any{"repo": app.repoURL},
			"appName":           app.name,
			"namespace":         app.namespace,
			"projectName":       app.project,
			"applicationSource": source,
			"kubeVersion":       "1.34.1",
			"apiVersions":       []string{"v1", "apps/v1"},
		},
	})
	require.NoError(t, err)
	// The repo-server's environment: its own kustomize for applications
	// that are not the plugin's, and where the plugins' sockets are.
	kustomize := e2eharness.Tool(t, "kustomize")
	r := e2eharness.Cmd{Dir: repo, Stdin: string(req), Env: []string{
		"PATH=" + filepath.Dir(kustomize) + ":/usr/bin:/bin", "HOME=" + t.TempDir(), "ARGOCD_PLUGINSOCKFILEPATH=" + s.sockets,
	}}.Run(t, s.harness, "generate")
	var res manifestResponse
	if r.Err == nil {
		require.NoError(t, json.Unmarshal([]byte(r.Stdout), &res), r.Stdout)
	}
	return res, r.Stderr, r.Err
}

// argoRepo is a repository checkout holding the example Application's
// source directory at its spec.source.path.
func argoRepo(t *testing.T) (repo, appDir string) {
	t.Helper()
	repo = t.TempDir()
	appDir = filepath.Join(repo, filepath.FromSlash(loadApplication(t).dir))
	require.NoError(t, os.CopyFS(appDir, os.DirFS(filepath.Join(argocdDir, "app"))))
	// One clock for every render of the copy: the example's rotation is not
	// recorded in git, so its old CA retires at each render's now, and two
	// renders a second apart would differ in that time alone.
	e2eharness.PinClock(t, appDir, e2eharness.StagedNow)
	return repo, appDir
}

// asObjects decodes YAML or JSON documents into objects, for comparing
// Argo CD's manifests with kustomize's output.
func asObjects(t *testing.T, docs []string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, d := range docs {
		var obj map[string]any
		require.NoError(t, sigsyaml.Unmarshal([]byte(d), &obj))
		if obj != nil {
			out = append(out, obj)
		}
	}
	return out
}

func TestArgoCDCMPServerRendersTheApplication(t *testing.T) {
	s := startCMPServer(t)
	repo, appDir := argoRepo(t)
	app := loadApplication(t)

	res, stderr, err := s.generate(t, repo, app.dir, app.pluginName)
	require.NoError(t, err, stderr)
	require.Equal(t, "Plugin", res.SourceType)

	// The same app built by kustomize with the function on PATH.
	kustomize := e2eharness.Tool(t, "kustomize")
	r := e2eharness.Cmd{Dir: appDir, Env: []string{"PATH=" + filepath.Dir(binary) + ":/usr/bin:/bin"}}.Run(t,
		kustomize, "build", "--enable-alpha-plugins", "--enable-exec", ".")
	require.NoError(t, r.Err, r.Stderr)
	require.Equal(t, asObjects(t, strings.Split(r.Stdout, "\n---\n")), asObjects(t, res.Manifests),
		"Argo CD must apply exactly what kustomize build renders")

	var items []string
	for _, m := range res.Manifests {
		y, err := sigsyaml.JSONToYAML([]byte(m))
		require.NoError(t, err)
		items = append(items, string(y))
	}
	target := kube.Key{Kind: "Secret", Namespace: "envoy-gateway-system", Name: "envoy-gateway-trust"}
	require.Equal(t, []string{"example-ca-new", "example-ca-old"},
		bundleSubjects(t, parseStream(t, "---\n"+strings.Join(items, "---\n")), target, "ca.crt"))

	again, stderr, err := s.generate(t, repo, app.dir, app.pluginName)
	require.NoError(t, err, stderr)
	require.Equal(t, res, again, "one commit, one render: the Application must not flap")
}

// Without spec.source.plugin the repo-server finds the plugin by its
// discovery rule; a kustomize app without a policy is left to Argo CD's
// own kustomize.
func TestArgoCDCMPServerDiscovery(t *testing.T) {
	s := startCMPServer(t)
	repo, _ := argoRepo(t)
	app := loadApplication(t)

	res, stderr, err := s.generate(t, repo, app.dir, "")
	require.NoError(t, err, stderr)
	require.Equal(t, "Plugin", res.SourceType, "the plugin's discovery must match the example Application")
	named, _, err := s.generate(t, repo, app.dir, app.pluginName)
	require.NoError(t, err)
	require.Equal(t, named.Manifests, res.Manifests)

	plain := filepath.Join(repo, "plain")
	require.NoError(t, os.MkdirAll(plain, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(plain, "kustomization.yaml"), []byte("resources: [cm.yaml]\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(plain, "cm.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: plain\n"), 0o644))
	res, stderr, err = s.generate(t, repo, "plain", "")
	require.NoError(t, err, stderr)
	require.Equal(t, "Kustomize", res.SourceType, "an app without a RotationPolicy must not be the plugin's")
}

// A render that fails reaches Argo CD as an error naming rotate-certs and
// the resource and field - never as an empty list of manifests, which
// would prune the application.
func TestArgoCDCMPServerFailsLoudly(t *testing.T) {
	s := startCMPServer(t)
	app := loadApplication(t)

	t.Run("broken source", func(t *testing.T) {
		repo, appDir := argoRepo(t)
		breakSourceCA(t, appDir)
		res, stderr, err := s.generate(t, repo, app.dir, app.pluginName)
		require.Error(t, err)
		require.Empty(t, res.Manifests)
		require.Contains(t, stderr, "rotate-certs")
		require.Contains(t, stderr, "Secret envoy-gateway-system/envoy-gateway data.ca.crt")
		t.Logf("what Argo CD reports: %s", stderr)
	})
	t.Run("policy names no source", func(t *testing.T) {
		repo, appDir := argoRepo(t)
		editFile(t, filepath.Join(appDir, "rotation-policy.yaml"), "{name: envoy-gateway,", "{name: envoy-gatway,")
		res, stderr, err := s.generate(t, repo, app.dir, app.pluginName)
		require.Error(t, err)
		require.Empty(t, res.Manifests)
		require.Contains(t, stderr, "rotate-certs")
		require.Contains(t, stderr, "source Secret envoy-gateway-system/envoy-gatway is not in the input")
	})
}
