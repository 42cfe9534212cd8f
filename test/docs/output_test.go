package docs

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// An output block is a transcript that a document shows as the output of
// a command: a fenced block (of any info string) right after the line
//
//	<!-- doc-test: output -->
//
// whose lines starting with "$ " are commands and whose other lines are
// what the command before them prints on stdout. Each command runs with
// bash from the top of a private copy of the repository (as shell blocks
// do, with bin/ first on PATH), and its stdout must equal the lines shown.
// The exit status is not compared (a transcript shows a failing check by
// ending the command with `; echo "exit $?"`). Tables of figures that a
// command produces (make sim) are kept current this way: a change of the
// figures fails the test until the document shows the new output.
type outputBlock struct {
	file  string
	line  int
	steps []outputStep
}

type outputStep struct {
	cmd  string
	want string
}

var outputDirective = regexp.MustCompile(`^\s*<!--\s*doc-test:\s*output\s*-->\s*$`)

// outputBlocks reads the output blocks of one Markdown file.
func outputBlocks(root, rel string) ([]outputBlock, error) {
	blocks, err := fencedBlocks(root, rel)
	if err != nil {
		return nil, err
	}
	var out []outputBlock
	for _, fb := range blocks {
		if !outputDirective.MatchString(fb.before) {
			continue
		}
		cur := outputBlock{file: rel, line: fb.line}
		for _, line := range fb.body {
			if cmd, ok := strings.CutPrefix(line, "$ "); ok {
				cur.steps = append(cur.steps, outputStep{cmd: cmd})
				continue
			}
			if len(cur.steps) == 0 {
				return nil, fmt.Errorf("%s:%d: an output block must start with a \"$ \" command line", rel, cur.line)
			}
			cur.steps[len(cur.steps)-1].want += line + "\n"
		}
		if len(cur.steps) == 0 {
			return nil, fmt.Errorf("%s:%d: an output block with no \"$ \" command line", rel, cur.line)
		}
		out = append(out, cur)
	}
	return out, nil
}

// TestDocOutputsMatch runs the command of every output block of the
// documentation (see outputBlock) and compares what it prints.
func TestDocOutputsMatch(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the documentation's transcripts are not run (make sim takes minutes)")
	}
	root := repoRoot(t)
	var blocks []outputBlock
	for _, rel := range markdownFiles(t, root) {
		b, err := outputBlocks(root, rel)
		require.NoError(t, err)
		blocks = append(blocks, b...)
	}
	require.NotEmpty(t, blocks, "the documentation shows no transcript to check")
	ws := workspace(t, root)
	for _, b := range blocks {
		for i, s := range b.steps {
			t.Run(fmt.Sprintf("%s:%d/%d", b.file, b.line, i), func(t *testing.T) {
				cmd := exec.Command("bash", "-o", "pipefail", "-c", s.cmd)
				cmd.Dir = ws
				cmd.Env = append(os.Environ(), "PATH="+filepath.Join(ws, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"), "NO_COLOR=1")
				var stderr strings.Builder
				cmd.Stderr = &stderr
				got, _ := cmd.Output()
				require.Equal(t, s.want, string(got),
					"%s:%d: `%s` prints something else than the document shows (stderr: %s); update the document with what the command prints now",
					b.file, b.line, s.cmd, stderr.String())
			})
		}
	}
	require.Empty(t, gitOut(t, ws, "status", "--porcelain"), "the transcripts' commands changed files of the repository")
}

func TestOutputBlocksParse(t *testing.T) {
	dir := t.TempDir()
	doc := "# Doc\n\n<!-- doc-test: output -->\n```\n$ echo a\na\n$ printf 'b\\n\\nc\\n'\nb\n\nc\n```\n\n```\n$ not checked\n```\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "d.md"), []byte(doc), 0o644))
	blocks, err := outputBlocks(dir, "d.md")
	require.NoError(t, err)
	require.Equal(t, []outputBlock{{file: "d.md", line: 4, steps: []outputStep{
		{cmd: "echo a", want: "a\n"},
		{cmd: `printf 'b\n\nc\n'`, want: "b\n\nc\n"},
	}}}, blocks)

	require.NoError(t, os.WriteFile(filepath.Join(dir, "bad.md"), []byte("<!-- doc-test: output -->\n```\nno command\n```\n"), 0o644))
	_, err = outputBlocks(dir, "bad.md")
	require.ErrorContains(t, err, "must start with")
}
