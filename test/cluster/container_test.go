package cluster

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/internal/e2eharness"
)

// The container tests run the image as a release builds it: ko, with the
// repository's .ko.yaml, onto a stand-in for its distroless base pushed to
// a loopback registry (no image can be pulled here), pulled by digest into
// podman's store; kustomize and kpt run it with podman and runc.

// containerEnv is how the tests reach podman, and the image to run.
type containerEnv struct {
	image string
	env   []string // CONTAINERS_CONF, PATH with the docker shim first
}

// releaseImage builds the image with ko and pulls it into podman, once per
// test; it skips without podman, runc, ko or the registry.
func releaseImage(t *testing.T) containerEnv {
	t.Helper()
	p := e2eharness.StartPodman(t)
	img := e2eharness.BuildReleaseImage(t)
	local := img.Pull(t, p)
	// The image runs as a non-root user (kustomize adds --user nobody),
	// with the binary alone as its entrypoint: function mode.
	var cfg []struct {
		Config struct {
			User       string
			Entrypoint []string
			Cmd        []string
		}
	}
	if err := json.Unmarshal([]byte(p.Run(t, "image", "inspect", local)), &cfg); err != nil || len(cfg) != 1 {
		t.Fatalf("podman image inspect: %v", err)
	}
	c := cfg[0].Config
	if uid, _, _ := strings.Cut(c.User, ":"); uid == "" || uid == "0" || uid == "root" || len(c.Entrypoint) != 1 || len(c.Cmd) != 0 {
		t.Fatalf("image user %q entrypoint %v cmd %v: want a non-root user and the binary alone", c.User, c.Entrypoint, c.Cmd)
	}
	return containerEnv{image: local, env: p.Env}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// kustomizeExamples are the examples whose kustomization runs the
// function from ../../bin/rotate-certs.
var kustomizeExamples = []string{"envoy-gateway", "kyma-gateway", "multi-signer", "cluster-api", "eks-anywhere-etcd"}

// TestContainerModeKustomize: real kustomize runs the image
// (config.kubernetes.io/function: container: {image: ...}) through podman
// and runc, and builds each example to the same bytes as exec mode.
func TestContainerModeKustomize(t *testing.T) {
	kustomize := e2eharness.Tool(t, "kustomize")
	c := releaseImage(t)
	for _, ex := range kustomizeExamples {
		t.Run(ex, func(t *testing.T) {
			root := stage(t, ex)
			dir := filepath.Join(root, "examples", ex)
			want := mustCommand(t, dir, nil, "", kustomize, "build", "--enable-alpha-plugins", "--enable-exec", ".")

			policy := filepath.Join(dir, "rotation-policy.yaml")
			data, err := os.ReadFile(policy)
			if err != nil {
				t.Fatal(err)
			}
			const execAnnotation = "exec:\n        path: ../../bin/rotate-certs"
			container := strings.Replace(string(data), execAnnotation, "container:\n        image: "+c.image, 1)
			if container == string(data) {
				t.Fatalf("%s: no exec function annotation to switch", policy)
			}
			writeFile(t, policy, container)
			// Without the binary, an exec function could not have run.
			if err := os.Remove(filepath.Join(root, "bin", "rotate-certs")); err != nil {
				t.Fatal(err)
			}
			got := mustCommand(t, dir, c.env, "", kustomize, "build", "--enable-alpha-plugins", ".")
			if got != want {
				t.Errorf("container mode differs from exec mode:\n--- exec\n%s\n--- container\n%s", want, got)
			}
		})
	}
}

// TestContainerModeKpt: `kpt fn eval --image` runs the image through
// podman (kpt's KPT_FN_RUNTIME=podman; kpt refuses a docker shim whose
// version is podman's) and writes each example exactly as `kpt fn eval
// --exec` does.
func TestContainerModeKpt(t *testing.T) {
	kpt := e2eharness.Tool(t, "kpt")
	c := releaseImage(t)
	for _, ex := range kustomizeExamples {
		t.Run(ex, func(t *testing.T) {
			execRoot, imageRoot := stage(t, ex), stage(t, ex)
			execDir, imageDir := filepath.Join(execRoot, "examples", ex), filepath.Join(imageRoot, "examples", ex)
			mustCommand(t, execDir, nil, "", kpt, "fn", "eval", ".", "--exec", filepath.Join(execRoot, "bin", "rotate-certs"), "--fn-config", "rotation-policy.yaml")
			r := e2eharness.Cmd{Dir: imageDir, Env: append(append(os.Environ(), "KPT_FN_RUNTIME=podman"), c.env...), Ctx: ctx(t)}.Run(t,
				kpt, "fn", "eval", ".", "--image", c.image, "--image-pull-policy", "never", "--fn-config", "rotation-policy.yaml")
			if out := r.Stdout + r.Stderr; r.Err != nil || !strings.Contains(out, `[PASS] "`+c.image+`"`) {
				t.Fatalf("kpt fn eval --image: %v\n%s", r.Err, out)
			}
			want, got := e2eharness.Files(t, execDir), e2eharness.Files(t, imageDir)
			if len(want) == 0 {
				t.Fatal("no files")
			}
			for name, w := range want {
				if got[name] != w {
					t.Errorf("%s differs between --exec and --image:\n--- exec\n%s\n--- image\n%s", name, w, got[name])
				}
			}
			for name := range got {
				if _, ok := want[name]; !ok {
					t.Errorf("--image wrote %s, --exec did not", name)
				}
			}
		})
	}
}
