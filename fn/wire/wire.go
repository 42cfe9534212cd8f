// Package wire connects a RotationPolicy to the tools that run it, so that
// a policy `rotate-certs init` writes renders with no hand edits: the
// policy's config.kubernetes.io/function annotation (how kustomize starts
// the function: an executable or a container image), the kustomization's
// transformers entry, and the Kptfile's pipeline mutator. It edits the
// kustomization and the Kptfile in place: comments, key order, the other
// entries and CRLF line ends stay; a file that defines a key twice is
// refused, as every command refuses such input.
package wire

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Runner is how the function is started: Exec, a path to the executable,
// or Image, a container image; exactly one is set.
type Runner struct {
	Exec  string
	Image string
}

// Validate says what is wrong with r, if anything.
func (r Runner) Validate() error {
	switch {
	case r.Exec != "" && r.Image != "":
		return errors.New("--exec and --image exclude each other: the function runs either as an executable or in a container")
	case strings.ContainsAny(r.Exec+r.Image, "\n\r"):
		return errors.New("--exec and --image take one line")
	}
	return nil
}

// Empty reports whether no runner is set.
func (r Runner) Empty() bool { return r.Exec == "" && r.Image == "" }

// FunctionAnnotation returns the value of the config.kubernetes.io/function
// annotation for r, as kustomize reads it ("exec:\n  path: ...\n" or
// "container:\n  image: ...\n").
func (r Runner) FunctionAnnotation() string {
	if r.Image != "" {
		return "container:\n  image: " + Scalar(r.Image) + "\n"
	}
	return "exec:\n  path: " + Scalar(r.Exec) + "\n"
}

// rebase returns the executable path (relative to the working directory,
// or absolute) as seen from dir, slash-separated, starting with ./ or ../
// (a bare name would be looked up on PATH): kustomize resolves an exec
// path from the kustomization's directory, and kpt from where it runs
// (the package directory, by this project's convention). An absolute
// path stays absolute.
func rebase(path, dir string) (string, error) {
	if filepath.IsAbs(path) {
		return path, nil
	}
	rel, err := Rel(path, dir)
	if err != nil {
		return "", err
	}
	if !strings.HasPrefix(rel, "../") {
		rel = "./" + rel
	}
	return rel, nil
}

// Rel returns path as seen from dir, slash-separated: how a kustomization
// lists a file and a Kptfile names a configPath.
func Rel(path, dir string) (string, error) {
	absPath, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(absDir, absPath)
	if err != nil {
		return "", err
	}
	return filepath.ToSlash(rel), nil
}

// AddResources lists files (paths relative to the kustomization's
// directory) under the kustomization's resources:, each unless it is
// listed already. changed is false when nothing had to change.
func AddResources(kustomization []byte, files ...string) (out []byte, changed bool, err error) {
	return addToList(kustomization, "resources", files...)
}

// addToList appends each of paths not listed yet to the kustomization's
// list field (resources, transformers), created when absent. changed is
// false when nothing had to change.
func addToList(kustomization []byte, field string, paths ...string) ([]byte, bool, error) {
	return edit(kustomization, func(node *yaml.RNode) (bool, error) {
		seq, err := node.Pipe(yaml.LookupCreate(yaml.SequenceNode, field))
		if err != nil {
			return false, fmt.Errorf("%s: %w", field, err)
		}
		if seq.YNode().Kind != yaml.SequenceNode {
			return false, fmt.Errorf("%s: not a list", field)
		}
		changed := false
		for _, p := range paths {
			if listed(seq, p) {
				continue
			}
			if err := seq.PipeE(yaml.Append(yaml.NewStringRNode(p).YNode())); err != nil {
				return false, err
			}
			changed = true
		}
		return changed, nil
	})
}

// listed reports whether the list seq names path.
func listed(seq *yaml.RNode, path string) bool {
	for _, e := range seq.Content() {
		if e.Kind == yaml.ScalarNode && cleanRel(e.Value) == cleanRel(path) {
			return true
		}
	}
	return false
}

// Unlisted returns the files of files (paths relative to the
// kustomization's directory) that the kustomization does not list under
// resources:, in order: kustomize build leaves them out.
func Unlisted(kustomization []byte, files []string) ([]string, error) {
	node, err := parseOne(kustomization)
	if err != nil {
		return nil, err
	}
	seq := node.Field("resources")
	var out []string
	for _, f := range files {
		if seq == nil || seq.Value.YNode().Kind != yaml.SequenceNode || !listed(seq.Value, f) {
			out = append(out, f)
		}
	}
	return out, nil
}

// kustomizationFiles are the names kustomize reads a directory's
// kustomization from, in the order it looks for them.
var kustomizationFiles = []string{"kustomization.yaml", "kustomization.yml", "Kustomization"}

// FindKustomization returns the path of dir's kustomization, "" when it
// has none.
func FindKustomization(dir string) (string, error) {
	for _, name := range kustomizationFiles {
		p := filepath.Join(dir, name)
		st, err := os.Stat(p)
		if err == nil && !st.IsDir() {
			return p, nil
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
	}
	return "", nil
}

// addMutator adds to the Kptfile's pipeline.mutators the entry that runs
// r with the policy as its configPath (relative to the Kptfile's
// directory); an entry with that configPath already there gets r's exec
// or image instead. changed is false when nothing had to change.
func addMutator(kptfile []byte, r Runner, policy string) (out []byte, changed bool, err error) {
	return edit(kptfile, func(node *yaml.RNode) (bool, error) {
		if node.GetKind() != "Kptfile" {
			return false, fmt.Errorf("not a Kptfile (kind %q)", node.GetKind())
		}
		seq, err := node.Pipe(yaml.LookupCreate(yaml.SequenceNode, "pipeline", "mutators"))
		if err != nil {
			return false, fmt.Errorf("pipeline.mutators: %w", err)
		}
		if seq.YNode().Kind != yaml.SequenceNode {
			return false, errors.New("pipeline.mutators: not a list")
		}
		return setMutator(seq, r, policy)
	})
}

// setMutator makes the mutators list seq run r with configPath policy:
// the entry with that configPath gets r's exec or image, or a new entry is
// appended.
func setMutator(seq *yaml.RNode, r Runner, policy string) (bool, error) {
	field, value, other := "exec", r.Exec, "image"
	if r.Image != "" {
		field, value, other = "image", r.Image, "exec"
	}
	elems, err := seq.Elements()
	if err != nil {
		return false, err
	}
	for _, e := range elems {
		cp := e.Field("configPath")
		if cp == nil || cleanRel(yaml.GetValue(cp.Value)) != cleanRel(policy) {
			continue
		}
		cur := e.Field(field)
		if cur != nil && yaml.GetValue(cur.Value) == value && e.Field(other) == nil {
			return false, nil
		}
		if err := e.PipeE(yaml.Clear(other)); err != nil {
			return false, err
		}
		return true, e.PipeE(yaml.SetField(field, yaml.NewStringRNode(value)))
	}
	entry := yaml.NewMapRNode(nil)
	if err := entry.PipeE(yaml.SetField(field, yaml.NewStringRNode(value))); err != nil {
		return false, err
	}
	if err := entry.PipeE(yaml.SetField("configPath", yaml.NewStringRNode(policy))); err != nil {
		return false, err
	}
	return true, seq.PipeE(yaml.Append(entry.YNode()))
}

// edit applies change to the one YAML document of data and returns the
// file rewritten, or data itself when change changed nothing. A file with
// CRLF line ends (its first line ends in CRLF) is written back with CRLF
// line ends: kyaml reads and writes LF only.
func edit(data []byte, change func(*yaml.RNode) (bool, error)) ([]byte, bool, error) {
	node, err := parseOne(data)
	if err != nil {
		return nil, false, err
	}
	changed, err := change(node)
	if err != nil || !changed {
		return data, false, err
	}
	out, err := write(node)
	if err != nil {
		return nil, false, err
	}
	if first, _, _ := bytes.Cut(data, []byte("\n")); bytes.HasSuffix(first, []byte("\r")) {
		out = bytes.ReplaceAll(out, []byte("\n"), []byte("\r\n"))
	}
	return out, true, nil
}

// parseOne reads a file of exactly one YAML document, keeping how its
// lists are indented.
func parseOne(data []byte) (*yaml.RNode, error) {
	r := &kio.ByteReader{Reader: bytes.NewReader(data), PreserveSeqIndent: true, DisableUnwrapping: true}
	nodes, err := r.Read()
	if err != nil {
		return nil, err
	}
	if len(nodes) != 1 {
		return nil, fmt.Errorf("holds %d YAML documents, want one", len(nodes))
	}
	return nodes[0], nil
}

// write encodes node as its file, without the reader's annotations.
func write(node *yaml.RNode) ([]byte, error) {
	var b bytes.Buffer
	if err := (kio.ByteWriter{Writer: &b}).Write([]*yaml.RNode{node}); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func cleanRel(p string) string { return filepath.ToSlash(filepath.Clean(p)) }

// Scalar returns s as a YAML scalar, quoted when YAML would read it as
// something else (the one rule for init's policy and the annotations).
func Scalar(s string) string {
	b, err := yaml.Marshal(s)
	if err != nil {
		return fmt.Sprintf("%q", s)
	}
	return strings.TrimSuffix(string(b), "\n")
}
