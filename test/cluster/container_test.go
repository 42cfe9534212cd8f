package cluster

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/internal/e2eharness"
)

// The Dockerfile's own build pulls golang and distroless images, which no
// test machine can. The container tests build the image a pull-free way:
// FROM scratch with the static binary at the Dockerfile's path, its USER
// and ENTRYPOINT, and an /etc/passwd like distroless's (kustomize runs
// function containers as --user nobody, which must resolve). podman builds
// and runs it with runc.

// finalStage is what the Dockerfile's last stage says of the image.
type finalStage struct {
	user       string // USER
	entrypoint string // ENTRYPOINT, as written (exec form)
	binaryPath string // where COPY --from=build puts the binary
}

// readFinalStage reads the last stage of the Dockerfile.
func readFinalStage(t *testing.T) finalStage {
	t.Helper()
	var st finalStage
	for _, in := range e2eharness.ReadDockerfile(t, filepath.Join(repoRoot, "Dockerfile")) {
		switch in.Cmd {
		case "FROM":
			st = finalStage{}
		case "USER":
			st.user = in.Args
		case "ENTRYPOINT":
			st.entrypoint = in.Args
		case "COPY":
			if f := strings.Fields(in.Args); len(f) == 3 && strings.HasPrefix(f[0], "--from=") {
				st.binaryPath = f[2]
			}
		}
	}
	if st.user == "" || st.entrypoint == "" || st.binaryPath == "" {
		t.Fatalf("the Dockerfile's final stage lacks USER, ENTRYPOINT or COPY --from: %+v", st)
	}
	return st
}

// containerEnv is how the tests reach podman.
type containerEnv struct {
	image string
	env   []string // CONTAINERS_CONF, PATH with the docker shim first
}

// podmanImage builds the image with podman, once per test, and removes it
// when the test ends. It skips without podman and runc.
func podmanImage(t *testing.T) containerEnv {
	t.Helper()
	podman := e2eharness.Tool(t, "podman")
	e2eharness.Tool(t, "runc")
	st := readFinalStage(t)
	work := t.TempDir()
	// As root, podman's default open-files limit cannot be set inside
	// this machine's sandbox, and crun does not run here: runc does.
	conf := filepath.Join(work, "containers.conf")
	writeFile(t, conf, "[containers]\ndefault_ulimits = []\n\n[engine]\nruntime = \"runc\"\n")
	// kustomize runs `docker`; podman answers its command line.
	shim := filepath.Join(work, "shim")
	writeFile(t, filepath.Join(shim, "docker"), "#!/bin/sh\nexec "+podman+" \"$@\"\n")
	if err := os.Chmod(filepath.Join(shim, "docker"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"CONTAINERS_CONF=" + conf, "PATH=" + shim + string(os.PathListSeparator) + os.Getenv("PATH")}

	ctxDir := filepath.Join(work, "context")
	bin, err := os.ReadFile(binary)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(ctxDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ctxDir, "rotate-certs"), bin, 0o755); err != nil {
		t.Fatal(err)
	}
	// distroless's users: root, nonroot (65532), nobody (65534).
	writeFile(t, filepath.Join(ctxDir, "passwd"), "root:x:0:0:root:/root:/sbin/nologin\n"+
		"nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n"+
		"nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")
	writeFile(t, filepath.Join(ctxDir, "Containerfile"), "FROM scratch\n"+
		"COPY passwd /etc/passwd\n"+
		"COPY rotate-certs "+st.binaryPath+"\n"+
		"USER "+st.user+"\n"+
		"ENTRYPOINT "+st.entrypoint+"\n")

	suffix := make([]byte, 4)
	if _, err := rand.Read(suffix); err != nil {
		t.Fatal(err)
	}
	image := "localhost/rotate-certs-test:" + hex.EncodeToString(suffix)
	mustCommand(t, ctxDir, env, "", podman, "build", "--pull=never", "--network=none", "-t", image, "-f", "Containerfile", ".")
	t.Cleanup(func() {
		_ = exec.Command(podman, "rmi", "-f", image).Run()
	})

	// The image runs as the Dockerfile says.
	var cfg []struct {
		Config struct {
			User       string
			Entrypoint []string
		}
	}
	if err := json.Unmarshal([]byte(mustCommand(t, ctxDir, env, "", podman, "image", "inspect", image)), &cfg); err != nil || len(cfg) != 1 {
		t.Fatalf("podman image inspect: %v", err)
	}
	var ep []string
	if err := json.Unmarshal([]byte(st.entrypoint), &ep); err != nil {
		t.Fatalf("ENTRYPOINT %s is not the exec form: %v", st.entrypoint, err)
	}
	if cfg[0].Config.User != st.user || strings.Join(cfg[0].Config.Entrypoint, " ") != strings.Join(ep, " ") {
		t.Fatalf("image user %q entrypoint %v, the Dockerfile says %q %v", cfg[0].Config.User, cfg[0].Config.Entrypoint, st.user, ep)
	}
	return containerEnv{image: image, env: env}
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
	c := podmanImage(t)
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
	c := podmanImage(t)
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
