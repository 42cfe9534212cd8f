package e2e

import (
	"bytes"
	"debug/elf"
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/internal/e2eharness"
	"github.com/rotate-certs/rotate-certs/internal/golden"
	"github.com/rotate-certs/rotate-certs/internal/policyschema"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// No Docker engine runs in tests. These tests hold the Dockerfile to its
// promises without one: the pinned toolchain, a static binary built by the
// Dockerfile's own `go build` line (run natively here), a non-root final
// image whose entrypoint is function mode.

func parseDockerfile(t *testing.T) []e2eharness.Instruction {
	t.Helper()
	return e2eharness.ReadDockerfile(t, golden.Path("Dockerfile"))
}

func TestDockerfileShape(t *testing.T) {
	global, st := e2eharness.Stages(parseDockerfile(t))
	if len(st) != 2 {
		t.Fatalf("want a two-stage build (builder, final), got %d stages", len(st))
	}
	args := map[string]string{}
	for _, in := range global {
		if in.Cmd == "ARG" {
			for k, v := range e2eharness.Assignments(in.Args) {
				args[k] = v
			}
		}
	}

	// The builder is the pinned Go toolchain, the one go.mod declares.
	from := st[0][0].Args
	if !strings.Contains(from, "golang:${GO_VERSION}") {
		t.Errorf("builder FROM %q does not use golang:${GO_VERSION}", from)
	}
	gomod, err := os.ReadFile(golden.Path("go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(gomod)
	if m == nil {
		t.Fatal("go.mod has no go line")
	}
	// A patch release of go.mod's language version, not a floating tag:
	// the same commit must build with the same compiler.
	if !regexp.MustCompile(`^` + regexp.QuoteMeta(string(m[1])) + `\.\d+$`).MatchString(args["GO_VERSION"]) {
		t.Errorf("GO_VERSION %q is not a patch release of go.mod's go %s (want %s.N)", args["GO_VERSION"], m[1], m[1])
	}
	// The Argo CD sidecar builds kustomize with the same toolchain.
	sidecarGlobal, _ := e2eharness.Stages(e2eharness.ReadDockerfile(t, golden.Path("examples", "argocd", "Dockerfile")))
	for _, in := range sidecarGlobal {
		if v, ok := e2eharness.Assignments(in.Args)["GO_VERSION"]; ok && in.Cmd == "ARG" && v != args["GO_VERSION"] {
			t.Errorf("examples/argocd/Dockerfile GO_VERSION %q differs from the Dockerfile's %q", v, args["GO_VERSION"])
		}
	}
	if local := strings.TrimPrefix(runtime.Version(), "go"); local != args["GO_VERSION"] {
		t.Logf("the tests run with Go %s, the image builds with %s: bump GO_VERSION when the toolchain here changes", local, args["GO_VERSION"])
	}
	checkBuilderEnv(t, st[0])
	checkFinalStage(t, st[1])
}

// checkBuilderEnv checks that the builder stage builds statically with the
// image's own toolchain.
func checkBuilderEnv(t *testing.T, builder []e2eharness.Instruction) {
	t.Helper()
	env := map[string]string{}
	for _, in := range builder {
		if in.Cmd == "ENV" {
			for k, v := range e2eharness.Assignments(in.Args) {
				env[k] = v
			}
		}
	}
	if env["CGO_ENABLED"] != "0" || env["GOTOOLCHAIN"] != "local" {
		t.Errorf("builder ENV %v: want CGO_ENABLED=0 and GOTOOLCHAIN=local", env)
	}
}

// checkFinalStage checks that the final image runs as a non-root user, and
// that its entrypoint is the binary alone: function mode.
func checkFinalStage(t *testing.T, final []e2eharness.Instruction) {
	t.Helper()
	if f := final[0].Args; !strings.Contains(f, "distroless/static") && f != "scratch" {
		t.Errorf("final FROM %q is not distroless static or scratch", f)
	}
	var user, entrypoint string
	for _, in := range final {
		switch in.Cmd {
		case "USER":
			user = in.Args
		case "ENTRYPOINT":
			entrypoint = in.Args
		case "CMD":
			t.Errorf("final stage has CMD %q: the entrypoint must run with no arguments", in.Args)
		}
	}
	if uid, _, _ := strings.Cut(user, ":"); user == "" || uid == "0" || uid == "root" {
		t.Errorf("final USER %q is not a non-root user", user)
	}
	var ep []string
	if err := json.Unmarshal([]byte(entrypoint), &ep); err != nil || len(ep) != 1 {
		t.Errorf("ENTRYPOINT %q: want the exec form with the binary alone", entrypoint)
	}
}

// TestDockerfileBuildCommand runs the Dockerfile's `go build` line natively,
// with its ARG defaults and ENV, and checks what it makes: a static,
// stripped binary that reports the version and commit passed as build
// arguments and runs function mode with no arguments.
func TestDockerfileBuildCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	build := e2eharness.DockerfileBuildLine(t)
	for _, flag := range []string{"-trimpath", "-buildvcs=false", "-X main.version=${VERSION}", "-X main.commit=${COMMIT}", "./cmd/rotate-certs"} {
		if !strings.Contains(build, flag) {
			t.Errorf("build command lacks %q: %s", flag, build)
		}
	}
	// What `docker build --build-arg ...` and BuildKit would set.
	out := e2eharness.DockerfileBuild(t, t.TempDir(), "v9.8.7-test", "0123abcd", runtime.GOOS, runtime.GOARCH)

	f, err := elf.Open(out)
	if err != nil {
		t.Fatalf("not an ELF binary: %v", err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("binary has a program interpreter: it is dynamically linked")
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("binary imports shared libraries %v", libs)
	}
	if f.Section(".symtab") != nil {
		t.Errorf("binary is not stripped (-s -w)")
	}

	version := e2eharness.Cmd{}.Run(t, out, "--version")
	if version.Err != nil {
		t.Fatal(version.Err, version.Stderr)
	}
	if want := "rotate-certs v9.8.7-test (commit 0123abcd)\n"; version.Stdout != want {
		t.Errorf("--version = %q, want %q", version.Stdout, want)
	}

	// No arguments: function mode, ResourceList in and out.
	fn := e2eharness.Cmd{Stdin: `apiVersion: config.kubernetes.io/v1
kind: ResourceList
functionConfig:
  apiVersion: rotate-certs.dev/v1alpha1
  kind: RotationPolicy
  metadata: {name: p}
  spec: {}
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: untouched}
  data: {a: b}
`}.Run(t, out)
	if fn.Err != nil {
		t.Fatalf("function mode: %v", fn.Err)
	}
	rl := []byte(fn.Stdout)
	node, err := yaml.Parse(string(rl))
	if err != nil || node.GetKind() != "ResourceList" || !bytes.Contains(rl, []byte("name: untouched")) {
		t.Errorf("function mode did not echo the ResourceList (err %v):\n%s", err, rl)
	}
}

// TestMetadata checks metadata.yaml, the kpt catalog entry: the fields the
// catalog reads, and example packages that exist.
func TestMetadata(t *testing.T) {
	data, err := os.ReadFile(golden.Path("metadata.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	md, err := policyschema.ReadCatalog(data)
	if err != nil {
		t.Fatal(err)
	}
	if md.Image == "" || strings.Contains(path.Base(md.Image), ":") {
		t.Errorf("image %q: want an image name without a tag, as the catalog lists it", md.Image)
	}
	if md.Description == "" || md.SourceURL == "" {
		t.Errorf("description and sourceURL are required: %+v", md)
	}
	for _, tag := range md.Tags {
		if tag != "mutator" && tag != "validator" {
			t.Errorf("tag %q is neither mutator nor validator", tag)
		}
	}
	if len(md.ExamplePackageURLs) == 0 {
		t.Errorf("no examplePackageURLs")
	}
	listed := map[string]bool{}
	for _, u := range md.ExamplePackageURLs {
		_, rel, ok := strings.Cut(u, "/tree/main/")
		if !ok {
			t.Errorf("example URL %q is not a tree/main URL of the repository", u)
			continue
		}
		listed[rel] = true
		if _, err := os.Stat(golden.Path(rel, "Kptfile")); err != nil {
			t.Errorf("example %s: %v", rel, err)
		}
	}
	// Every kpt example package of the repository is in the catalog entry.
	kptfiles, err := filepath.Glob(golden.Path("examples", "*", "Kptfile"))
	if err != nil || len(kptfiles) == 0 {
		t.Fatalf("no example packages found: %v", err)
	}
	for _, k := range kptfiles {
		rel, _ := filepath.Rel(golden.Path(), filepath.Dir(k))
		if !listed[filepath.ToSlash(rel)] {
			t.Errorf("example package %s is missing from examplePackageURLs", rel)
		}
	}
	// The license the catalog shows is the LICENSE file's.
	if md.License != "Apache-2.0" {
		t.Errorf("license %q: want Apache-2.0, the LICENSE file's", md.License)
	}
	license, err := os.ReadFile(golden.Path("LICENSE"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^\s*Apache License\s+Version 2\.0, January 2004\s`).Match(license) {
		t.Errorf("LICENSE is not the Apache License 2.0 text")
	}
}
