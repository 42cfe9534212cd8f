package e2eharness

import (
	"os"
	"strings"
	"testing"
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
