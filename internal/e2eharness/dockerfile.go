package e2eharness

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/internal/golden"
)

// Instruction is one Dockerfile instruction with its continuation lines
// joined.
type Instruction struct {
	Cmd  string // upper case: FROM, ARG, RUN, ...
	Args string
}

// ReadDockerfile reads the Dockerfile at path as instructions; comments and
// blank lines are left out.
func ReadDockerfile(t testing.TB, path string) []Instruction {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []Instruction
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
		out = append(out, Instruction{Cmd: strings.ToUpper(cmd), Args: strings.TrimSpace(args)})
		cur.Reset()
	}
	return out
}

// Stages splits the instructions at each FROM; the global ARGs before the
// first FROM come first.
func Stages(ins []Instruction) (global []Instruction, byStage [][]Instruction) {
	for _, in := range ins {
		if in.Cmd == "FROM" {
			byStage = append(byStage, []Instruction{in})
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

// Assignments reads "A=b C=d", the ARG and ENV forms with values.
func Assignments(s string) map[string]string {
	out := map[string]string{}
	for _, f := range strings.Fields(s) {
		if k, v, ok := strings.Cut(f, "="); ok {
			out[k] = strings.Trim(v, `"`)
		}
	}
	return out
}

// DockerfileBuild runs the Dockerfile's `go build` line natively, with its
// ARG defaults and ENV, the build arguments VERSION and COMMIT and the
// target platform goos/goarch (what `docker build --build-arg ...` and
// BuildKit set), in the repository's top directory, and returns the
// binary's path under dir. It fails the test when the Dockerfile has no
// such line.
func DockerfileBuild(t testing.TB, dir, version, commit, goos, goarch string) string {
	t.Helper()
	global, st := Stages(ReadDockerfile(t, golden.Path("Dockerfile")))
	vars := map[string]string{}
	var build string
	for _, in := range append(global, st[0]...) {
		switch {
		case in.Cmd == "ARG" || in.Cmd == "ENV":
			for k, v := range Assignments(in.Args) {
				vars[k] = v
			}
		case in.Cmd == "RUN" && strings.Contains(in.Args, "go build"):
			build = in.Args
		}
	}
	vars["VERSION"], vars["COMMIT"], vars["TARGETOS"], vars["TARGETARCH"] = version, commit, goos, goarch
	if !strings.Contains(build, "-o /out/rotate-certs") {
		t.Fatalf("the builder stage has no RUN go build ... -o /out/rotate-certs: %q", build)
	}
	out := filepath.Join(dir, "rotate-certs")
	build = strings.Replace(build, "/out/rotate-certs", out, 1)
	sh := Cmd{Dir: golden.Path(), Env: os.Environ()}
	for k, v := range vars {
		sh.Env = append(sh.Env, k+"="+v)
	}
	// The shell expands ${VAR} from the environment, as RUN does from ARG
	// and ENV.
	if r := sh.Run(t, "sh", "-c", build); r.Err != nil {
		t.Fatalf("%s: %v\n%s%s", build, r.Err, r.Stdout, r.Stderr)
	}
	return out
}

// DockerfileBuildLine returns the builder stage's RUN ... go build line.
func DockerfileBuildLine(t testing.TB) string {
	t.Helper()
	_, st := Stages(ReadDockerfile(t, golden.Path("Dockerfile")))
	for _, in := range st[0] {
		if in.Cmd == "RUN" && strings.Contains(in.Args, "go build") {
			return in.Args
		}
	}
	t.Fatal("no RUN ... go build in the Dockerfile's builder stage")
	return ""
}
