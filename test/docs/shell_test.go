package docs

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A shell block is a fenced code block whose info string is sh, bash or
// shell. Each one is a command a reader will type, so each one runs: the
// blocks of a document run in order, each from the top of one private copy
// of the repository (a fresh git repository of the tracked files, with the
// repository's bin/ tools), and after the last one the copy must have no
// change that git sees - following the docs must not edit what they point
// at. An HTML comment on the line before the fence says when a block cannot
// run here:
//
//	<!-- doc-test: needs kpt,podman -->   skipped unless each program is on PATH
//	<!-- doc-test: needs cluster -->      skipped: it needs a live cluster
//	<!-- doc-test: skip <reason> -->      never run, with the reason shown
type shellBlock struct {
	file  string // relative to the repository
	line  int    // of the opening fence
	code  string
	needs []string
	skip  string
}

var (
	openFence = regexp.MustCompile("^\\s*(```+|~~~+)\\s*([A-Za-z0-9_-]*)")
	directive = regexp.MustCompile(`^\s*<!--\s*doc-test:\s*(needs|skip)\s*(.*?)\s*-->\s*$`)
)

// fencedBlock is a fenced code block of a Markdown file: the line of its
// opening fence, its info string, the line before the fence (where a
// doc-test directive stands) and its lines.
type fencedBlock struct {
	line   int
	info   string
	before string
	body   []string
}

// fencedBlocks reads every fenced code block of one Markdown file.
func fencedBlocks(root, rel string) ([]fencedBlock, error) {
	f, err := os.Open(filepath.Join(root, rel))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var (
		out     []fencedBlock
		cur     *fencedBlock
		closing string
		prev    string
		n       int
	)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		n++
		line := sc.Text()
		if closing == "" {
			if m := openFence.FindStringSubmatch(line); m != nil {
				closing = m[1]
				cur = &fencedBlock{line: n, info: m[2], before: prev}
			}
			prev = line
			continue
		}
		if strings.HasPrefix(strings.TrimSpace(line), closing) && strings.Trim(strings.TrimSpace(line), closing[:1]) == "" {
			out = append(out, *cur)
			cur, closing, prev = nil, "", line
			continue
		}
		cur.body = append(cur.body, line)
	}
	if closing != "" {
		return nil, fmt.Errorf("%s: a code block opened and never closed", rel)
	}
	return out, sc.Err()
}

// shellBlocks reads the shell blocks of one Markdown file.
func shellBlocks(root, rel string) ([]shellBlock, error) {
	blocks, err := fencedBlocks(root, rel)
	if err != nil {
		return nil, err
	}
	var out []shellBlock
	for _, fb := range blocks {
		switch fb.info {
		case "sh", "bash", "shell":
		default:
			continue
		}
		b := shellBlock{file: rel, line: fb.line}
		for _, l := range fb.body {
			b.code += l + "\n"
		}
		if d := directive.FindStringSubmatch(fb.before); d != nil {
			if d[1] == "skip" {
				b.skip = d[2]
			} else {
				b.needs = strings.Split(strings.ReplaceAll(d[2], " ", ""), ",")
			}
		}
		out = append(out, b)
	}
	return out, nil
}

// testedDocs are the documents whose shell blocks run: the README, the
// guides, the reference and the examples' READMEs. The design documents
// explain and measure; what they show as a command's output is checked by
// TestDocOutputsMatch.
func testedDocs(t *testing.T, root string) []string {
	docs := []string{"README.md"}
	for _, pattern := range []string{"docs/guides/*.md", "docs/reference/*.md", "examples/*/README.md"} {
		matches, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(pattern)))
		require.NoError(t, err)
		for _, m := range matches {
			rel, err := filepath.Rel(root, m)
			require.NoError(t, err)
			docs = append(docs, filepath.ToSlash(rel))
		}
	}
	return docs
}

// TestDocShellBlocksRun runs every shell block of the README and the
// guides (see shellBlock).
func TestDocShellBlocksRun(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the documentation's commands are not run")
	}
	root := repoRoot(t)
	for _, doc := range testedDocs(t, root) {
		blocks, err := shellBlocks(root, doc)
		require.NoError(t, err)
		if len(blocks) == 0 {
			continue // nothing to run, nothing skipped
		}
		t.Run(doc, func(t *testing.T) {
			ws := workspace(t, root)
			for _, b := range blocks {
				t.Run(fmt.Sprintf("line-%d", b.line), func(t *testing.T) {
					runBlock(t, ws, b)
				})
			}
			status := gitOut(t, ws, "status", "--porcelain")
			require.Empty(t, status, "following %s changed files of the repository (its commands must work on copies or restore what they edit)", doc)
		})
	}
}

func runBlock(t *testing.T, ws string, b shellBlock) {
	if b.skip != "" {
		t.Skipf("%s:%d: not run: %s", b.file, b.line, b.skip)
	}
	for _, need := range b.needs {
		if need == "cluster" {
			t.Skipf("%s:%d: needs a live cluster", b.file, b.line)
		}
		if _, err := exec.LookPath(need); err != nil {
			t.Skipf("%s:%d: needs %s, which is not on PATH", b.file, b.line, need)
		}
	}
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", b.code)
	cmd.Dir = ws
	cmd.Env = append(os.Environ(), "PATH="+filepath.Join(ws, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s:%d: the block failed:\n%s\noutput:\n%s", b.file, b.line, b.code, out)
}

// workspace copies the repository's tracked files (as they are in the
// working tree) into a new git repository with one commit, and its bin/
// programs (built by make build tools) beside them.
func workspace(t *testing.T, root string) string {
	t.Helper()
	ws := t.TempDir()
	files := strings.Split(strings.TrimSpace(gitOut(t, root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")), "\x00")
	for _, rel := range files {
		if rel == "" {
			continue
		}
		src := filepath.Join(root, rel)
		st, err := os.Lstat(src)
		if os.IsNotExist(err) {
			continue // deleted in the working tree
		}
		require.NoError(t, err)
		dst := filepath.Join(ws, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(dst), 0o755))
		if st.Mode()&fs.ModeSymlink != 0 {
			link, err := os.Readlink(src)
			require.NoError(t, err)
			require.NoError(t, os.Symlink(link, dst))
			continue
		}
		data, err := os.ReadFile(src)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(dst, data, st.Mode().Perm()))
	}
	bins, err := os.ReadDir(filepath.Join(root, "bin"))
	if err == nil {
		require.NoError(t, os.MkdirAll(filepath.Join(ws, "bin"), 0o755))
		for _, e := range bins {
			if e.Type().IsRegular() {
				data, err := os.ReadFile(filepath.Join(root, "bin", e.Name()))
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(filepath.Join(ws, "bin", e.Name()), data, 0o755))
			}
		}
	}
	gitOut(t, ws, "init", "-q")
	gitOut(t, ws, "add", "-A")
	gitOut(t, ws, "-c", "user.name=doc-test", "-c", "user.email=doc-test@example.com", "commit", "-qm", "docs workspace")
	return ws
}

func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %s: %s", strings.Join(args, " "), out)
	return string(out)
}

func TestShellBlocksAndDirectives(t *testing.T) {
	dir := t.TempDir()
	doc := "# Guide\n\n```sh\necho one\n```\n\n```yaml\nkind: x\n```\n\n<!-- doc-test: needs kpt, podman -->\n```bash\nkpt fn render\n```\n" +
		"<!-- doc-test: skip it is make test itself -->\n````sh\nmake test\n```\nstill inside\n````\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "g.md"), []byte(doc), 0o644))
	blocks, err := shellBlocks(dir, "g.md")
	require.NoError(t, err)
	require.Len(t, blocks, 3)
	require.Equal(t, shellBlock{file: "g.md", line: 3, code: "echo one\n"}, blocks[0])
	require.Equal(t, []string{"kpt", "podman"}, blocks[1].needs)
	require.Equal(t, "kpt fn render\n", blocks[1].code)
	require.Equal(t, "it is make test itself", blocks[2].skip)
	require.Equal(t, "make test\n```\nstill inside\n", blocks[2].code)

	require.NoError(t, os.WriteFile(filepath.Join(dir, "open.md"), []byte("```sh\necho\n"), 0o644))
	_, err = shellBlocks(dir, "open.md")
	require.ErrorContains(t, err, "never closed")
}
