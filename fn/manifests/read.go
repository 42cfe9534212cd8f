// Package manifests reads Kubernetes resources from the paths a user names
// on the command line - files, directories walked recursively, "-" for
// stdin - the way `check` and `init` need them: multi-document YAML, kubectl
// Lists and ResourceLists all give their resources, and each resource
// remembers its file.
package manifests

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Set is what Read found.
type Set struct {
	// Items are the resources, in path order, then file order. A resource
	// read from a file carries the internal.config.kubernetes.io/path
	// annotation (unless it had one); one from stdin carries none.
	Items []*yaml.RNode
	// FunctionConfigs are the functionConfig of every ResourceList read.
	FunctionConfigs []*yaml.RNode
	// Problems are the paths that could not be read or parsed; reading
	// goes on past them. The caller decides whether they are fatal.
	Problems []Problem
}

// Problem is a path that could not be read, or a file that is not YAML.
type Problem struct {
	// Path is the file or path named ("-" for stdin).
	Path string
	// Message names the path and says what is wrong, on one line.
	Message string
	// NotYAML is true when the file was read but does not parse (a Helm
	// template, say), false when the path itself could not be read.
	NotYAML bool
}

// String returns the message.
func (p Problem) String() string { return p.Message }

// Read loads every resource from paths ("." when there are none).
// Directories are walked for *.yaml, *.yml and *.json files in lexical
// order, skipping hidden directories such as .git and kpt's .expected;
// stdin ("-") may be named once.
func Read(paths []string, stdin io.Reader) *Set {
	if len(paths) == 0 {
		paths = []string{"."}
	}
	s := &Set{}
	stdinUsed := false
	for _, p := range paths {
		if p == "-" {
			if stdinUsed {
				s.problemf("-: stdin can be read only once")
				continue
			}
			stdinUsed = true
			b, err := io.ReadAll(stdin)
			if err != nil {
				s.problemf("stdin: %v", err)
				continue
			}
			s.parse("-", b)
			continue
		}
		files, err := files(p)
		if err != nil {
			s.problemf("%v", err)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				s.problemf("%v", err)
				continue
			}
			s.parse(filepath.ToSlash(f), b)
		}
	}
	return s
}

func (s *Set) problemf(format string, a ...any) {
	s.Problems = append(s.Problems, Problem{Message: fmt.Sprintf(format, a...)})
}

// files returns p when it is a file, else the manifest files under it.
func files(p string) ([]string, error) {
	info, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return []string{p}, nil
	}
	var out []string
	err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != p && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		switch strings.ToLower(filepath.Ext(path)) {
		case ".yaml", ".yml", ".json":
			out = append(out, path)
		}
		return nil
	})
	sort.Strings(out)
	if err != nil {
		return out, fmt.Errorf("%s: %w", p, err)
	}
	return out, nil
}

// Parse reads data as the contents of the file at path, which the
// resources are annotated with ("-" for stdin: no annotation).
func Parse(path string, data []byte) *Set {
	s := &Set{}
	s.parse(path, data)
	return s
}

// parse reads one file's documents.
func (s *Set) parse(path string, b []byte) {
	r := &kio.ByteReader{Reader: bytes.NewReader(b), OmitReaderAnnotations: true}
	nodes, err := r.Read()
	if err != nil {
		name := path
		if path == "-" {
			name = "stdin"
		}
		s.Problems = append(s.Problems, Problem{Path: path, Message: fmt.Sprintf("%s: not valid YAML: %s", name, firstLine(err.Error())), NotYAML: true})
		return
	}
	if fc := r.FunctionConfig; fc != nil && fc.YNode().Kind == yaml.MappingNode {
		s.FunctionConfigs = append(s.FunctionConfigs, fc)
	}
	for _, n := range unwrapLists(nodes) {
		if n.YNode().Kind != yaml.MappingNode || n.GetKind() == "" {
			continue
		}
		if p := n.GetAnnotations(kioutil.PathAnnotation)[kioutil.PathAnnotation]; p == "" && path != "-" {
			if err := n.PipeE(yaml.SetAnnotation(kioutil.PathAnnotation, path)); err != nil {
				s.problemf("%s: %v", path, err)
				continue
			}
		}
		s.Items = append(s.Items, n)
	}
}

// unwrapLists replaces every List (kubectl get -o yaml) and ResourceList by
// its items; kyaml's reader unwraps one only when it is the only document.
func unwrapLists(nodes []*yaml.RNode) []*yaml.RNode {
	var out []*yaml.RNode
	for _, n := range nodes {
		if n.YNode().Kind == yaml.MappingNode && (n.GetKind() == "List" || n.GetKind() == kio.ResourceListKind) {
			if items := n.Field("items"); items != nil && items.Value != nil && items.Value.YNode().Kind == yaml.SequenceNode {
				for _, c := range items.Value.YNode().Content {
					out = append(out, unwrapLists([]*yaml.RNode{yaml.NewRNode(c)})...)
				}
				continue
			}
		}
		out = append(out, n)
	}
	return out
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
