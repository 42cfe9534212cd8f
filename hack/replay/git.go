//go:build devtools

package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// zeroHash is the object name git gives the missing side of an added or
// deleted file.
const zeroHash = "0000000000000000000000000000000000000000"

// git runs git in dir and returns its standard output; its standard error
// goes into the error.
func git(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// commit is one commit of a history as the replay sees it: its first
// parent ("" for a root commit), its committer date (the --now of its
// replay) and the files it changes against the first parent (every file of
// a root commit).
type commit struct {
	Hash   string
	Parent string
	When   time.Time
	Files  []string
}

// listCommits lists every commit reachable from rev, newest first, with the
// files each changes against its first parent, in one git log. Renames are
// not detected: a rename is a deletion and an addition, as diff's own
// reading of two revisions sees it, and detecting them would read blobs a
// snapshot may lack.
func listCommits(dir, rev string) ([]commit, error) {
	out, err := git(dir, "log", "-z", "--no-renames", "--diff-merges=first-parent",
		"--format=%x01%H %P%x02%cI", "--name-only", rev)
	if err != nil {
		return nil, err
	}
	return parseLog(out)
}

// parseLog reads listCommits' git log output: per commit "\x01HASH
// PARENTS\x02DATE\x00", then "\n" and NUL-terminated file names.
func parseLog(out []byte) ([]commit, error) {
	var commits []commit
	for _, chunk := range bytes.Split(out, []byte{1}) {
		if len(chunk) == 0 {
			continue
		}
		header, rest, _ := bytes.Cut(chunk, []byte{0})
		ids, date, ok := strings.Cut(string(header), "\x02")
		if !ok {
			return nil, fmt.Errorf("git log: unexpected header %q", header)
		}
		fields := strings.Fields(ids)
		when, err := time.Parse(time.RFC3339, date)
		if err != nil {
			return nil, fmt.Errorf("git log: commit %s: %v", fields[0], err)
		}
		c := commit{Hash: fields[0], When: when.UTC()}
		if len(fields) > 1 {
			c.Parent = fields[1]
		}
		for _, f := range bytes.Split(bytes.TrimPrefix(rest, []byte("\n")), []byte{0}) {
			if len(f) > 0 {
				c.Files = append(c.Files, string(f))
			}
		}
		commits = append(commits, c)
	}
	return commits, nil
}

// change is one file a commit changes: its blob on each side (zeroHash on
// the side where it does not exist).
type change struct {
	Path    string
	OldBlob string
	NewBlob string
}

// changedFiles lists the files head changes against base with their blobs
// (git diff-tree --raw), regular files and symbolic links alike.
func changedFiles(dir, base, head string) ([]change, error) {
	out, err := git(dir, "diff-tree", "-r", "-z", "--raw", "--no-renames", "--no-abbrev", base, head)
	if err != nil {
		return nil, err
	}
	return parseRaw(out)
}

// parseRaw reads git diff-tree -z --raw: ":oldmode newmode old new
// status\x00path\x00" per file.
func parseRaw(out []byte) ([]change, error) {
	parts := strings.Split(string(out), "\x00")
	var changes []change
	for i := 0; i+1 < len(parts); i += 2 {
		meta := strings.Fields(strings.TrimPrefix(parts[i], ":"))
		if len(meta) < 5 {
			return nil, fmt.Errorf("git diff-tree: unexpected line %q", parts[i])
		}
		if meta[1] == "160000" || meta[0] == "160000" {
			continue // a submodule: no blob to read
		}
		changes = append(changes, change{Path: parts[i+1], OldBlob: meta[2], NewBlob: meta[3]})
	}
	return changes, nil
}

// errMissingObject is what blobReader.read returns when the repository
// lacks an object its trees name (a snapshot without its largest files).
var errMissingObject = fmt.Errorf("object missing from the repository")

// blobReader reads objects through one long-running git cat-file --batch.
type blobReader struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func newBlobReader(dir string) (*blobReader, error) {
	cmd := exec.Command("git", "cat-file", "--batch")
	cmd.Dir = dir
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &blobReader{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<16)}, nil
}

// read returns the object named by name (a blob's hash, or REV:PATH);
// found is false when git knows no such object. A blob's hash that is
// not found is errMissingObject: its tree names it, the repository lacks
// it.
func (b *blobReader) read(name string) (content []byte, found bool, err error) {
	if _, err := fmt.Fprintln(b.in, name); err != nil {
		return nil, false, err
	}
	header, err := b.out.ReadString('\n')
	if err != nil {
		return nil, false, err
	}
	fields := strings.Fields(header)
	if len(fields) == 2 && fields[1] == "missing" {
		if !strings.Contains(name, ":") {
			return nil, false, fmt.Errorf("%s: %w", name, errMissingObject)
		}
		return nil, false, nil
	}
	if len(fields) != 3 {
		return nil, false, fmt.Errorf("git cat-file: unexpected header %q", header)
	}
	size, err := strconv.Atoi(fields[2])
	if err != nil {
		return nil, false, fmt.Errorf("git cat-file: unexpected header %q", header)
	}
	content = make([]byte, size+1) // the object and its trailing newline
	if _, err := io.ReadFull(b.out, content); err != nil {
		return nil, false, err
	}
	if fields[1] != "blob" {
		return nil, false, nil
	}
	return content[:size], true, nil
}

// blob reads a changed file's side: nil and no error for zeroHash.
func (b *blobReader) blob(hash string) ([]byte, error) {
	if hash == zeroHash {
		return nil, nil
	}
	content, _, err := b.read(hash)
	return content, err
}

func (b *blobReader) close() {
	b.in.Close()
	_ = b.cmd.Wait()
}

// dirFiles lists the paths of the files of rev directly in dir ("" or
// "." for the top), subdirectories left out.
func dirFiles(repo, rev, dir string) ([]string, error) {
	args := []string{"ls-tree", "-z", rev}
	if dir != "" && dir != "." {
		args = append(args, "--", dir+"/")
	}
	out, err := git(repo, args...)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, entry := range strings.Split(string(out), "\x00") {
		meta, path, ok := strings.Cut(entry, "\t")
		if ok && strings.Contains(meta, " blob ") {
			files = append(files, path)
		}
	}
	return files, nil
}
