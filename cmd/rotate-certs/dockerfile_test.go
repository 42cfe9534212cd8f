package main

import (
	"bytes"
	"debug/elf"
	"encoding/json"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// No Docker engine runs in tests. These tests hold the Dockerfile to its
// promises without one: the pinned toolchain, a static binary built by the
// Dockerfile's own `go build` line (run natively here), a non-root final
// image whose entrypoint is function mode.

const repoRoot = "../.."

// instruction is one Dockerfile instruction with continuation lines joined.
type instruction struct {
	cmd  string // upper case: FROM, ARG, RUN, ...
	args string
}

func parseDockerfile(t *testing.T) []instruction {
	t.Helper()
	return parseDockerfileAt(t, filepath.Join(repoRoot, "Dockerfile"))
}

// parseDockerfileAt reads the Dockerfile at path.
func parseDockerfileAt(t *testing.T, path string) []instruction {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []instruction
	var cur strings.Builder
	for _, line := range strings.Split(string(data), "\n") {
		trimmed := strings.TrimSpace(line)
		if cur.Len() == 0 && (trimmed == "" || strings.HasPrefix(trimmed, "#")) {
			continue
		}
		if strings.HasSuffix(trimmed, "\\") {
			cur.WriteString(strings.TrimSuffix(trimmed, "\\") + " ")
			continue
		}
		cur.WriteString(trimmed)
		cmd, args, _ := strings.Cut(cur.String(), " ")
		out = append(out, instruction{cmd: strings.ToUpper(cmd), args: strings.TrimSpace(args)})
		cur.Reset()
	}
	return out
}

// stages splits the instructions at each FROM; global ARGs come first.
func stages(ins []instruction) (global []instruction, byStage [][]instruction) {
	for _, in := range ins {
		if in.cmd == "FROM" {
			byStage = append(byStage, []instruction{in})
			continue
		}
		if len(byStage) == 0 {
			global = append(global, in)
			continue
		}
		byStage[len(byStage)-1] = append(byStage[len(byStage)-1], in)
	}
	return global, byStage
}

// assignments reads "A=b C=d" (ARG and ENV forms with values).
func assignments(s string) map[string]string {
	out := map[string]string{}
	for _, f := range strings.Fields(s) {
		if k, v, ok := strings.Cut(f, "="); ok {
			out[k] = strings.Trim(v, `"`)
		}
	}
	return out
}

func TestDockerfileShape(t *testing.T) {
	global, st := stages(parseDockerfile(t))
	if len(st) != 2 {
		t.Fatalf("want a two-stage build (builder, final), got %d stages", len(st))
	}
	args := map[string]string{}
	for _, in := range global {
		if in.cmd == "ARG" {
			for k, v := range assignments(in.args) {
				args[k] = v
			}
		}
	}

	// The builder is the pinned Go toolchain, the one go.mod declares.
	from := st[0][0].args
	if !strings.Contains(from, "golang:${GO_VERSION}") {
		t.Errorf("builder FROM %q does not use golang:${GO_VERSION}", from)
	}
	gomod, err := os.ReadFile(filepath.Join(repoRoot, "go.mod"))
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
	sidecarGlobal, _ := stages(parseDockerfileAt(t, filepath.Join(repoRoot, "examples", "argocd", "Dockerfile")))
	for _, in := range sidecarGlobal {
		if v, ok := assignments(in.args)["GO_VERSION"]; ok && in.cmd == "ARG" && v != args["GO_VERSION"] {
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
func checkBuilderEnv(t *testing.T, builder []instruction) {
	t.Helper()
	env := map[string]string{}
	for _, in := range builder {
		if in.cmd == "ENV" {
			for k, v := range assignments(in.args) {
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
func checkFinalStage(t *testing.T, final []instruction) {
	t.Helper()
	if f := final[0].args; !strings.Contains(f, "distroless/static") && f != "scratch" {
		t.Errorf("final FROM %q is not distroless static or scratch", f)
	}
	var user, entrypoint string
	for _, in := range final {
		switch in.cmd {
		case "USER":
			user = in.args
		case "ENTRYPOINT":
			entrypoint = in.args
		case "CMD":
			t.Errorf("final stage has CMD %q: the entrypoint must run with no arguments", in.args)
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
	global, st := stages(parseDockerfile(t))
	vars := map[string]string{}
	for _, in := range append(global, st[0]...) {
		if in.cmd == "ARG" || in.cmd == "ENV" {
			for k, v := range assignments(in.args) {
				vars[k] = v
			}
		}
	}
	// What `docker build --build-arg ...` and BuildKit would set.
	vars["VERSION"], vars["COMMIT"] = "v9.8.7-test", "0123abcd"
	vars["TARGETOS"], vars["TARGETARCH"] = runtime.GOOS, runtime.GOARCH

	var build string
	for _, in := range st[0] {
		if in.cmd == "RUN" && strings.Contains(in.args, "go build") {
			build = in.args
		}
	}
	if build == "" {
		t.Fatal("no RUN ... go build in the builder stage")
	}
	for _, flag := range []string{"-trimpath", "-X main.version=${VERSION}", "-X main.commit=${COMMIT}", "./cmd/rotate-certs"} {
		if !strings.Contains(build, flag) {
			t.Errorf("build command lacks %q: %s", flag, build)
		}
	}
	out := filepath.Join(t.TempDir(), "rotate-certs")
	if !strings.Contains(build, "-o /out/rotate-certs") {
		t.Fatalf("build command does not write /out/rotate-certs: %s", build)
	}
	build = strings.Replace(build, "/out/rotate-certs", out, 1)

	cmd := exec.Command("sh", "-c", build)
	cmd.Dir = repoRoot
	cmd.Env = os.Environ()
	for k, v := range vars {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	// The shell expands ${VAR} from the environment, as RUN does from ARG
	// and ENV.
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", build, err, b)
	}

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

	version, err := exec.Command(out, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if want := "rotate-certs v9.8.7-test (commit 0123abcd)\n"; string(version) != want {
		t.Errorf("--version = %q, want %q", version, want)
	}

	// No arguments: function mode, ResourceList in and out.
	fn := exec.Command(out)
	fn.Stdin = strings.NewReader(`apiVersion: config.kubernetes.io/v1
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
`)
	rl, err := fn.Output()
	if err != nil {
		t.Fatalf("function mode: %v", err)
	}
	node, err := yaml.Parse(string(rl))
	if err != nil || node.GetKind() != "ResourceList" || !bytes.Contains(rl, []byte("name: untouched")) {
		t.Errorf("function mode did not echo the ResourceList (err %v):\n%s", err, rl)
	}
}

// TestMetadata checks metadata.yaml, the kpt catalog entry: the fields the
// catalog reads, and example packages that exist.
func TestMetadata(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot, "metadata.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var md struct {
		Image              string   `json:"image"`
		Description        string   `json:"description"`
		Tags               []string `json:"tags"`
		SourceURL          string   `json:"sourceURL"`
		ExamplePackageURLs []string `json:"examplePackageURLs"`
		License            string   `json:"license"`
	}
	node, err := yaml.Parse(string(data))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := node.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &md); err != nil {
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
		if _, err := os.Stat(filepath.Join(repoRoot, rel, "Kptfile")); err != nil {
			t.Errorf("example %s: %v", rel, err)
		}
	}
	// Every kpt example package of the repository is in the catalog entry.
	kptfiles, err := filepath.Glob(filepath.Join(repoRoot, "examples", "*", "Kptfile"))
	if err != nil || len(kptfiles) == 0 {
		t.Fatalf("no example packages found: %v", err)
	}
	for _, k := range kptfiles {
		rel, _ := filepath.Rel(repoRoot, filepath.Dir(k))
		if !listed[filepath.ToSlash(rel)] {
			t.Errorf("example package %s is missing from examplePackageURLs", rel)
		}
	}
	// The license the catalog shows is the LICENSE file's.
	if md.License != "Apache-2.0" {
		t.Errorf("license %q: want Apache-2.0, the LICENSE file's", md.License)
	}
	license, err := os.ReadFile(filepath.Join(repoRoot, "LICENSE"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^\s*Apache License\s+Version 2\.0, January 2004\s`).Match(license) {
		t.Errorf("LICENSE is not the Apache License 2.0 text")
	}
}
