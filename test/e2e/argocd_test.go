package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/internal/e2eharness"
	"github.com/rotate-certs/rotate-certs/internal/golden"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// End-to-end tests of the Argo CD config management plugin in
// examples/argocd: plugin.yaml's commands run exactly as argocd-cmp-server
// runs them, on a copy of the example Application's source directory, with
// the environment Argo CD sets and a PATH that holds only what the sidecar
// image holds (rotate-certs and the pinned kustomize).

var argocdDir = filepath.Join(examplesDir, "argocd")

// cmpCommand is Argo CD's plugin Command: argocd-cmp-server executes
// command[0] with command[1:] followed by args - no shell in between.
type cmpCommand struct {
	Command []string `json:"command,omitempty"`
	Args    []string `json:"args,omitempty"`
}

// cmpConfig mirrors Argo CD's sidecar plugin configuration
// (cmpserver/plugin/config.go and the ConfigManagementPlugin documentation),
// so that strict decoding catches a misspelt field Argo CD would ignore.
type cmpConfig struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Version  string     `json:"version,omitempty"`
		Init     cmpCommand `json:"init,omitempty"`
		Generate cmpCommand `json:"generate"`
		Discover struct {
			FileName string `json:"fileName,omitempty"`
			Find     struct {
				cmpCommand
				Glob string `json:"glob,omitempty"`
			} `json:"find,omitempty"`
		} `json:"discover,omitempty"`
		Parameters       json.RawMessage `json:"parameters,omitempty"`
		AllowConcurrency bool            `json:"allowConcurrency,omitempty"`
		LockRepo         bool            `json:"lockRepo,omitempty"`
		PreserveFileMode bool            `json:"preserveFileMode,omitempty"`
		ProvideGitCreds  bool            `json:"provideGitCreds,omitempty"`
	} `json:"spec"`
}

// strictJSON decodes a YAML file into v, rejecting unknown fields.
func strictJSON(t *testing.T, path string, v any) *yaml.RNode {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	node, err := yaml.Parse(string(data))
	require.NoError(t, err, path)
	raw, err := node.MarshalJSON()
	require.NoError(t, err)
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(v), "%s does not match the schema", path)
	return node
}

// loadPlugin reads plugin.yaml and validates it as argocd-cmp-server does
// at start-up.
func loadPlugin(t *testing.T) cmpConfig {
	t.Helper()
	var cfg cmpConfig
	strictJSON(t, filepath.Join(argocdDir, "plugin.yaml"), &cfg)
	require.Equal(t, "argoproj.io/v1alpha1", cfg.APIVersion)
	require.Equal(t, "ConfigManagementPlugin", cfg.Kind)
	require.NotEmpty(t, cfg.Metadata.Name, "metadata.name")
	require.NotEmpty(t, cfg.Spec.Generate.Command, "spec.generate.command")
	d := cfg.Spec.Discover
	require.True(t, d.FileName != "" || d.Find.Glob != "" || len(d.Find.Command) > 0,
		"without a discovery rule the plugin matches no Application")
	return cfg
}

// pluginName is the name an Application uses to select the plugin.
func (c cmpConfig) pluginName() string {
	if c.Spec.Version != "" {
		return c.Metadata.Name + "-" + c.Spec.Version
	}
	return c.Metadata.Name
}

// argoApp is the part of the example Application that Argo CD turns into
// the plugin's environment.
type argoApp struct {
	name, project, namespace     string
	repoURL, targetRevision, dir string
	pluginName                   string
	pluginEnv                    [][2]string
}

func loadApplication(t *testing.T) argoApp {
	t.Helper()
	var app struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
		Spec struct {
			Project string `json:"project"`
			Source  struct {
				RepoURL        string `json:"repoURL"`
				TargetRevision string `json:"targetRevision"`
				Path           string `json:"path"`
				Plugin         *struct {
					Name string `json:"name"`
					Env  []struct {
						Name  string `json:"name"`
						Value string `json:"value"`
					} `json:"env"`
				} `json:"plugin"`
			} `json:"source"`
			Destination struct {
				Server    string `json:"server"`
				Namespace string `json:"namespace"`
			} `json:"destination"`
			SyncPolicy json.RawMessage `json:"syncPolicy"`
		} `json:"spec"`
	}
	strictJSON(t, filepath.Join(argocdDir, "application.yaml"), &app)
	require.Equal(t, "argoproj.io/v1alpha1", app.APIVersion)
	require.Equal(t, "Application", app.Kind)
	require.NotNil(t, app.Spec.Source.Plugin, "spec.source.plugin selects the plugin")
	out := argoApp{
		name: app.Metadata.Name, project: app.Spec.Project, namespace: app.Spec.Destination.Namespace,
		repoURL: app.Spec.Source.RepoURL, targetRevision: app.Spec.Source.TargetRevision,
		dir: app.Spec.Source.Path, pluginName: app.Spec.Source.Plugin.Name,
	}
	for _, e := range app.Spec.Source.Plugin.Env {
		out.pluginEnv = append(out.pluginEnv, [2]string{e.Name, e.Value})
	}
	return out
}

// env is what the plugin's commands see: the sidecar's own environment
// followed by the build environment Argo CD sends with the request
// (docs/user-guide/build-environment.md), the Application's plugin env
// prefixed with ARGOCD_ENV_. Argo CD leaves out empty values.
func (a argoApp) env(sidecar []string) []string {
	const revision = "f913b6cbf58aa5ae5ca1f8a2b149477aebcbd9d8"
	env := append([]string(nil), sidecar...)
	for _, kv := range [][2]string{
		{"ARGOCD_APP_NAME", a.name},
		{"ARGOCD_APP_NAMESPACE", a.namespace},
		{"ARGOCD_APP_PROJECT_NAME", a.project},
		{"ARGOCD_APP_REVISION", revision},
		{"ARGOCD_APP_REVISION_SHORT", revision[:7]},
		{"ARGOCD_APP_REVISION_SHORT_8", revision[:8]},
		{"ARGOCD_APP_SOURCE_PATH", a.dir},
		{"ARGOCD_APP_SOURCE_REPO_URL", a.repoURL},
		{"ARGOCD_APP_SOURCE_TARGET_REVISION", a.targetRevision},
		{"KUBE_VERSION", "1.34.1"},
		{"KUBE_API_VERSIONS", "v1,apps/v1,argoproj.io/v1alpha1"},
	} {
		if kv[1] != "" {
			env = append(env, kv[0]+"="+kv[1])
		}
	}
	for _, kv := range a.pluginEnv {
		if kv[1] != "" {
			env = append(env, "ARGOCD_ENV_"+kv[0]+"="+kv[1])
		}
	}
	return env
}

// sidecar stands in for the plugin container: a bin directory holding only
// rotate-certs and kustomize (the image has nothing else, not even a
// shell), and a repository checkout holding the example Application's
// source directory at its spec.source.path, as argocd-cmp-server unpacks it.
type sidecar struct {
	bin, appDir string
	env         []string
}

func newSidecar(t *testing.T, app argoApp, withFunction bool) sidecar {
	t.Helper()
	kustomize := e2eharness.Tool(t, "kustomize")
	root := t.TempDir()
	bin := filepath.Join(root, "usr", "local", "bin")
	require.NoError(t, os.MkdirAll(bin, 0o755))
	require.NoError(t, os.Symlink(kustomize, filepath.Join(bin, "kustomize")))
	if withFunction {
		require.NoError(t, os.Symlink(binary, filepath.Join(bin, "rotate-certs")))
	}
	home := filepath.Join(root, "home", "argocd")
	require.NoError(t, os.MkdirAll(home, 0o755))
	appDir := filepath.Join(root, "cmp-server", "repo", filepath.FromSlash(app.dir))
	require.NoError(t, os.CopyFS(appDir, os.DirFS(filepath.Join(argocdDir, "app"))))
	return sidecar{bin: bin, appDir: appDir, env: app.env([]string{"PATH=" + bin, "HOME=" + home})}
}

// run executes c as argocd-cmp-server does (cmpserver/plugin/plugin.go
// runCommand): exec.Command(command[0], command[1:]+args...), in the
// Application's source directory, with the plugin environment. command[0]
// is looked up on the sidecar's PATH, not the test's.
func (s sidecar) run(t *testing.T, c cmpCommand) (stdout, stderr string, err error) {
	t.Helper()
	require.NotEmpty(t, c.Command, "Command is empty")
	name := c.Command[0]
	if !strings.Contains(name, "/") {
		found := filepath.Join(s.bin, name)
		if _, statErr := os.Stat(found); statErr != nil {
			return "", "", fmt.Errorf("exec: %q: executable file not found in the sidecar's $PATH", name)
		}
		name = found
	}
	r := e2eharness.Cmd{Dir: s.appDir, Env: s.env}.Run(t, name, append(append([]string(nil), c.Command[1:]...), c.Args...)...)
	return r.Stdout, r.Stderr, r.Err
}

// splitManifests splits generate's stdout as Argo CD does: a YAML stream in
// which every document must be a Kubernetes object.
func splitManifests(t *testing.T, out string) []*yaml.RNode {
	t.Helper()
	var items []*yaml.RNode
	for i, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(out, -1) {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		node, err := yaml.Parse(doc)
		require.NoError(t, err, "document %d on stdout is not YAML:\n%s", i, doc)
		require.Equal(t, yaml.MappingNode, node.YNode().Kind, "document %d on stdout is not an object:\n%s", i, doc)
		require.NotEmpty(t, node.GetApiVersion(), "document %d has no apiVersion:\n%s", i, doc)
		require.NotEmpty(t, node.GetKind(), "document %d has no kind:\n%s", i, doc)
		require.NotEmpty(t, node.GetName(), "document %d has no metadata.name:\n%s", i, doc)
		items = append(items, node)
	}
	return items
}

func TestArgoCDPluginConfig(t *testing.T) {
	cfg := loadPlugin(t)
	app := loadApplication(t)
	require.Equal(t, cfg.pluginName(), app.pluginName, "the Application must name the plugin as Argo CD registers it")

	gen := append(append([]string(nil), cfg.Spec.Generate.Command...), cfg.Spec.Generate.Args...)
	require.Equal(t, []string{"kustomize", "build", "--enable-alpha-plugins", "--enable-exec", "."}, gen,
		"generate must build the source directory with exec functions enabled")
	require.NotEmpty(t, cfg.Spec.Init.Command, "init")
	require.False(t, cfg.Spec.PreserveFileMode, "repository files must not keep their exec bits")
	require.False(t, cfg.Spec.ProvideGitCreds, "the plugin needs no git credentials")

	// Discovery: a fileName glob, relative to the Application's source
	// directory (cmpserver/plugin/plugin.go matchRepository).
	pattern := cfg.Spec.Discover.FileName
	require.NotEmpty(t, pattern, "discover.fileName")
	matches := func(dir string) bool {
		m, err := filepath.Glob(filepath.Join(dir, pattern))
		require.NoError(t, err)
		return len(m) > 0
	}
	require.True(t, matches(filepath.Join(argocdDir, "app")), "the example Application is not discovered")
	require.True(t, matches(filepath.Join(examplesDir, "envoy-gateway")), "a kustomize package with a policy is not discovered")
	plain := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(plain, "kustomization.yaml"), []byte("resources: []\n"), 0o644))
	require.False(t, matches(plain), "a kustomize app without a RotationPolicy must be left to Argo CD's own kustomize")
	require.False(t, matches(argocdDir), "the plugin's own install directory must not be discovered")
}

func TestArgoCDPluginRendersApplication(t *testing.T) {
	cfg := loadPlugin(t)
	app := loadApplication(t)
	s := newSidecar(t, app, true)

	out, stderr, err := s.run(t, cfg.Spec.Init)
	require.NoError(t, err, "init: %s", stderr)
	require.Contains(t, out+stderr, "rotate-certs ", "init should log the function's version")

	out, stderr, err = s.run(t, cfg.Spec.Generate)
	require.NoError(t, err, "generate: %s", stderr)
	items := splitManifests(t, out)
	target := kube.Key{Kind: "Secret", Namespace: "envoy-gateway-system", Name: "envoy-gateway-trust"}
	require.Equal(t, []string{"example-ca-new", "example-ca-old"}, bundleSubjects(t, items, target, "ca.crt"),
		"the trust bundle must hold the new CA and keep the old one")
	trust := findNode(items, target)
	require.NotEmpty(t, trust.GetAnnotations()["rotate-certs.dev/bundle-hash"])
	for _, it := range items {
		require.NotEqual(t, "RotationPolicy", it.GetKind(), "the policy is local config: Argo CD must not apply it")
	}
	require.NotContains(t, out, "internal.config.kubernetes.io", "kustomize's bookkeeping annotations leaked into the manifests")
	require.Len(t, items, 3, "every resource of the kustomization, and nothing else")

	// Argo CD compares renders: the same commit must give the same bytes,
	// or the Application would flap between Synced and OutOfSync. While
	// git holds no record of the rotation, each build is the render that
	// sees the old CA leave and records its own time (the contract, rule
	// 3): two builds an hour apart differ in that time alone. Once the
	// rendered target is committed, they agree byte for byte.
	policy := filepath.Join(s.appDir, "rotation-policy.yaml")
	at := e2eharness.StagedNow
	setNow(t, policy, at)
	first, stderr, err := s.run(t, cfg.Spec.Generate)
	require.NoError(t, err, stderr)
	setNow(t, policy, at.Add(time.Hour))
	later, stderr, err := s.run(t, cfg.Spec.Generate)
	require.NoError(t, err, stderr)
	require.NotEqual(t, first, later, "an uncommitted rotation records each build's time")
	require.Equal(t, e2eharness.WithoutRetiredTimes(first), e2eharness.WithoutRetiredTimes(later), "and differs in nothing else")

	rendered := findNode(splitManifests(t, first), target)
	require.NoError(t, os.WriteFile(filepath.Join(s.appDir, "trust.yaml"), []byte(rendered.MustString()), 0o644))
	setNow(t, policy, at.Add(2*time.Hour))
	committed, stderr, err := s.run(t, cfg.Spec.Generate)
	require.NoError(t, err, stderr)
	setNow(t, policy, at.Add(48*time.Hour))
	again, stderr, err := s.run(t, cfg.Spec.Generate)
	require.NoError(t, err, stderr)
	require.Equal(t, first, committed, "the committed target renders what the first build rendered")
	require.Equal(t, committed, again, "two days later, the same bytes")
}

// setNow sets spec.now of the policy file to at.
func setNow(t *testing.T, policy string, at time.Time) {
	t.Helper()
	data, err := os.ReadFile(policy)
	require.NoError(t, err)
	text := regexp.MustCompile(`(?m)^  now: .*\n`).ReplaceAllString(string(data), "")
	require.NoError(t, os.WriteFile(policy, []byte(text), 0o644))
	e2eharness.PinClock(t, filepath.Dir(policy), at)
}

func TestArgoCDPluginFailsLoudly(t *testing.T) {
	cfg := loadPlugin(t)
	app := loadApplication(t)

	t.Run("broken source", func(t *testing.T) {
		s := newSidecar(t, app, true)
		breakSourceCA(t, s.appDir)

		_, stderr, err := s.run(t, cfg.Spec.Init)
		require.NoError(t, err, stderr)
		out, stderr, err := s.run(t, cfg.Spec.Generate)
		var exitErr *exec.ExitError
		require.ErrorAs(t, err, &exitErr, "generate must fail on a broken source")
		require.NotZero(t, exitErr.ExitCode())
		require.Empty(t, out, "a failed render must print no manifests: Argo CD could prune everything else")
		require.Contains(t, stderr, "Secret envoy-gateway-system/envoy-gateway data.ca.crt", "the error must name the resource and field")
	})

	t.Run("function missing from the image", func(t *testing.T) {
		s := newSidecar(t, app, false)
		// Each step fails because rotate-certs is missing, and says so:
		// any other failure (a misspelt command, a broken kustomization)
		// would pass a bare require.Error.
		const missing = `"rotate-certs": executable file not found`
		_, _, err := s.run(t, cfg.Spec.Init)
		require.ErrorContains(t, err, missing, "init must fail before any build when the image lacks rotate-certs")
		out, stderr, err := s.run(t, cfg.Spec.Generate)
		var exitErr *exec.ExitError
		require.ErrorAs(t, err, &exitErr, "generate must not render without the function")
		require.NotZero(t, exitErr.ExitCode())
		require.Contains(t, stderr, missing, "generate's error must name the missing function")
		require.Empty(t, out)
	})
}

// TestArgoCDSidecar checks the sidecar patch and image against Argo CD's
// own checklist for plugin sidecars (run argocd-cmp-server from
// /var/run/argocd, as uid 999, plugin.yaml at
// /home/argocd/cmp-server/config/plugin.yaml, a /tmp of its own), merging
// the patch with kustomize into a repo-server Deployment shaped like the
// stock one. No image is built: that needs a Docker engine.
func TestArgoCDSidecar(t *testing.T) {
	deploy := buildRepoServerWithPatch(t)
	c := requireSidecar(t, deploy)
	requireSidecarImage(t)
	require.Contains(t, c.Image, "argocd-cmp", "the patch runs the sidecar image")
}

// sidecarContainer is what TestArgoCDSidecar checks of a container.
type sidecarContainer struct {
	Name            string   `json:"name"`
	Image           string   `json:"image"`
	Command         []string `json:"command"`
	SecurityContext struct {
		RunAsUser    *int64 `json:"runAsUser"`
		RunAsNonRoot *bool  `json:"runAsNonRoot"`
	} `json:"securityContext"`
	VolumeMounts []struct {
		Name      string `json:"name"`
		MountPath string `json:"mountPath"`
	} `json:"volumeMounts"`
}

// buildRepoServerWithPatch runs the real kustomize over Argo CD's
// repo-server Deployment and examples/argocd's patch.
func buildRepoServerWithPatch(t *testing.T) *yaml.RNode {
	t.Helper()
	kustomize := e2eharness.Tool(t, "kustomize")
	dir := t.TempDir()
	patch, err := os.ReadFile(filepath.Join(argocdDir, "argocd-repo-server-patch.yaml"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "patch.yaml"), patch, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "repo-server.yaml"), []byte(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: argocd-repo-server
spec:
  selector:
    matchLabels: {app.kubernetes.io/name: argocd-repo-server}
  template:
    metadata:
      labels: {app.kubernetes.io/name: argocd-repo-server}
    spec:
      containers:
      - name: argocd-repo-server
        image: quay.io/argoproj/argocd:latest
        volumeMounts:
        - {name: var-files, mountPath: /var/run/argocd}
        - {name: plugins, mountPath: /home/argocd/cmp-server/plugins}
        - {name: tmp, mountPath: /tmp}
      volumes:
      - {name: var-files, emptyDir: {}}
      - {name: plugins, emptyDir: {}}
      - {name: tmp, emptyDir: {}}
`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(
		"resources:\n- repo-server.yaml\npatches:\n- path: patch.yaml\n"), 0o644))
	out, stderr, err := run(t, dir, kustomize, "build", ".")
	require.NoError(t, err, stderr)
	deploy, err := yaml.Parse(out)
	require.NoError(t, err)
	return deploy
}

// requireSidecar checks the patched pod: the repo-server kept, the
// sidecar running argocd-cmp-server as uid 999 with the shared var-files
// and plugins volumes and a /tmp of its own, every mount defined.
func requireSidecar(t *testing.T, deploy *yaml.RNode) sidecarContainer {
	t.Helper()
	var pod struct {
		Containers []sidecarContainer `json:"containers"`
		Volumes    []struct {
			Name string `json:"name"`
		} `json:"volumes"`
	}
	spec, err := deploy.Pipe(yaml.Lookup("spec", "template", "spec"))
	require.NoError(t, err)
	raw, err := spec.MarshalJSON()
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &pod))
	require.Len(t, pod.Containers, 2, "the patch must add a sidecar and keep the repo-server")
	byName := map[string]int{}
	for i, c := range pod.Containers {
		byName[c.Name] = i
	}
	require.Contains(t, byName, "argocd-repo-server")
	require.Contains(t, byName, "rotate-certs")
	c := pod.Containers[byName["rotate-certs"]]
	require.Equal(t, []string{"/var/run/argocd/argocd-cmp-server"}, c.Command)
	require.NotNil(t, c.SecurityContext.RunAsUser)
	require.EqualValues(t, 999, *c.SecurityContext.RunAsUser)
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.MountPath] = m.Name
	}
	require.Equal(t, "var-files", mounts["/var/run/argocd"])
	require.Equal(t, "plugins", mounts["/home/argocd/cmp-server/plugins"])
	require.NotEmpty(t, mounts["/tmp"], "the sidecar needs a writable /tmp")
	require.NotEqual(t, "tmp", mounts["/tmp"], "the sidecar must not share the repo-server's /tmp")
	volumes := map[string]bool{}
	for _, v := range pod.Volumes {
		volumes[v.Name] = true
	}
	for path, name := range mounts {
		require.True(t, volumes[name], "%s mounts volume %q, which the pod does not define", path, name)
	}
	return c
}

// requireSidecarImage: the image the patch runs is the one
// examples/argocd/Dockerfile builds.
func requireSidecarImage(t *testing.T) {
	t.Helper()
	// The image the patch runs is the one examples/argocd/Dockerfile builds:
	// plugin.yaml where argocd-cmp-server reads it, uid 999, the pinned
	// kustomize, and no shell (distroless), which plugin.yaml's commands
	// do not need - the runs above had only rotate-certs and kustomize on
	// the PATH.
	global, stages := e2eharness.Stages(e2eharness.ReadDockerfile(t, filepath.Join(argocdDir, "Dockerfile")))
	args := map[string]string{}
	for _, in := range global {
		if in.Cmd == "ARG" {
			for k, v := range e2eharness.Assignments(in.Args) {
				args[k] = v
			}
		}
	}
	final := stages[len(stages)-1]
	require.Contains(t, final[0].Args, "distroless/static")
	var user string
	var copiesPlugin bool
	for _, in := range final {
		switch in.Cmd {
		case "USER":
			user = in.Args
		case "COPY":
			if strings.Fields(in.Args)[0] == "plugin.yaml" && strings.HasSuffix(in.Args, " /home/argocd/cmp-server/config/plugin.yaml") {
				copiesPlugin = true
			}
		}
	}
	require.True(t, copiesPlugin, "the image must carry plugin.yaml at /home/argocd/cmp-server/config/plugin.yaml")
	require.Equal(t, "999:999", user)
	makefile, err := os.ReadFile(golden.Path("Makefile"))
	require.NoError(t, err)
	pinned := regexp.MustCompile(`(?m)^KUSTOMIZE_VERSION := (\S+)`).FindSubmatch(makefile)
	require.NotNil(t, pinned, "Makefile pins no KUSTOMIZE_VERSION")
	var imageKustomize string
	for _, st := range stages {
		for _, in := range st {
			if in.Cmd == "ARG" {
				if v, ok := e2eharness.Assignments(in.Args)["KUSTOMIZE_VERSION"]; ok {
					imageKustomize = v
				}
			}
		}
	}
	require.Equal(t, string(pinned[1]), imageKustomize, "the sidecar must build the kustomize the tests run")
	require.NotEmpty(t, args["ROTATE_CERTS_IMAGE"])
}
