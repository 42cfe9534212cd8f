package golden

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPathFindsTheRepository(t *testing.T) {
	for _, rel := range []string{"go.mod", "testdata/golden", "examples"} {
		if _, err := os.Stat(Path(filepath.FromSlash(rel))); err != nil {
			t.Errorf("%s: %v", rel, err)
		}
	}
}

func TestDeclares(t *testing.T) {
	if !declares([]byte("// x\nmodule "+module+"\n\ngo 1.26\n"), module) {
		t.Error("the root module's go.mod not recognised")
	}
	if declares([]byte("module "+module+"/test/crdschema\n"), module) {
		t.Error("a nested module's go.mod taken for the root")
	}
}

func TestFirstDifference(t *testing.T) {
	for _, tc := range []struct{ want, got, out string }{
		{"a\nb\n", "a\nc\n", "line 2:\n  want \"b\"\n  got  \"c\""},
		{"a\n", "a\nb\n", "line 2:\n  want \"\"\n  got  \"b\""},
	} {
		if out := firstDifference(tc.want, tc.got); out != tc.out {
			t.Errorf("firstDifference(%q, %q) = %q, want %q", tc.want, tc.got, out, tc.out)
		}
	}
}

func TestYAMLFiles(t *testing.T) {
	files := YAMLFiles(t)
	for _, want := range []string{
		filepath.Join("examples", "ci", "clusters", "prod", "trust.yaml"),
		filepath.Join("testdata", "render", "keeps-formatting", "workloads.yaml"),
	} {
		if _, ok := files[want]; !ok {
			t.Errorf("YAMLFiles lacks %s", want)
		}
	}
	for path := range files {
		if strings.HasPrefix(path, "bin"+string(filepath.Separator)) || strings.HasPrefix(path, ".git"+string(filepath.Separator)) {
			t.Errorf("YAMLFiles lists %s, under a directory it leaves out", path)
		}
	}
}
