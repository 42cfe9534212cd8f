package resio

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/parallel"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

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

// ReadPaths loads every resource from paths ("." when there are none), as
// check, init and snapshot read them. A resource read from a file carries
// the internal.config.kubernetes.io/path annotation (unless it had one);
// one from stdin carries none. Problems and Notes say what was not read.
// Directories are walked for *.yaml, *.yml and *.json files in lexical
// order by Walk's rules (hidden files and directories, .krmignore,
// regular files only); stdin ("-") may be named once. A file reached twice
// (named, and inside a directory named too) is read once.
func ReadPaths(paths []string, stdin io.Reader) *Resources {
	return readPaths(osFiles{}, paths, stdin, false, nil)
}

// readPaths is ReadPaths over files, or ReadBuilt when build is true;
// with sh, each file is taken from what the read before it gave when its
// path and text are the same (Shared).
func readPaths(files fileSystem, paths []string, stdin io.Reader, build bool, sh *Shared) *Resources {
	s := &Resources{shared: sh}
	var built func(root string, seen map[string]bool) bool
	if build {
		built = func(root string, seen map[string]bool) bool { s.builtDir(files, root, seen); return true }
	}
	eachPathFile(files, paths, stdin, s.parseFile, s.addFile, built)
	if sh != nil {
		sh.done()
	}
	return s
}

// parseFile parses f's text, or takes what the read before gave for it
// (s.shared).
func (s *Resources) parseFile(f pathFile) pathFile {
	if s.shared != nil {
		return s.shared.parse(f)
	}
	return parsePathFile(f)
}

// addFile adds what one read gave to s, and keeps it for the next read
// (s.shared).
func (s *Resources) addFile(f pathFile) {
	if s.shared != nil {
		s.shared.keep(f)
	}
	s.add(f)
}

// parsePathFile parses f's text.
func parsePathFile(f pathFile) pathFile {
	f.res.parse(f.path, f.data)
	return f
}

// add adds what one read gave to s.
func (s *Resources) add(f pathFile) {
	s.Items = append(s.Items, f.res.Items...)
	s.FunctionConfigs = append(s.FunctionConfigs, f.res.FunctionConfigs...)
	s.Problems = append(s.Problems, f.res.Problems...)
	s.Notes = append(s.Notes, f.res.Notes...)
	s.CertFiles = append(s.CertFiles, f.res.CertFiles...)
}

// pathFile is one file of the paths a command line names (path as
// named, slash-separated; "-" for stdin), its text and what parsing it
// gave; or, without a path, a problem with the paths themselves.
type pathFile struct {
	path string
	data []byte
	// sum is data's SHA-256, set by a shared read's parse (Shared).
	sum [sha256.Size]byte
	res *Resources
	// names and count are what ScanPaths keeps of the resources read:
	// TreeFile's Names and Resources; unread marks a file it did not
	// parse (Tree.Read parses it).
	names  []string
	count  int
	unread bool
}

// eachPathFile reads the files of paths as ReadPaths does and hands add
// each file and each problem, in order, each file as parse makes it of its
// text (f.res empty, its document parser set) on the goroutine that read
// it (files are read and parsed on every core). With built, a directory
// named is read by built instead (ReadBuilt's builtDir), with the files
// read so far, when built says it read it.
func eachPathFile(files fileSystem, paths []string, stdin io.Reader, parse func(pathFile) pathFile, add func(pathFile), built func(root string, seen map[string]bool) bool) {
	if len(paths) == 0 {
		paths = []string{"."}
	}
	problem := func(format string, a ...any) {
		one := &Resources{}
		one.problemf(format, a...)
		add(pathFile{res: one})
	}
	stdinUsed := false
	// A file named twice, or named and inside a directory named too, is
	// read once: its certificates must not be counted twice.
	seen := map[string]bool{}
	var abs absPaths
	for _, p := range paths {
		if p == "-" {
			if stdinUsed {
				problem("-: stdin can be read only once")
				continue
			}
			stdinUsed = true
			b, err := io.ReadAll(stdin)
			if err != nil {
				problem("stdin: %v", err)
				continue
			}
			add(parse(pathFile{path: "-", data: b, res: &Resources{}}))
			continue
		}
		if info, err := files.Stat(p); built != nil && err == nil && info.IsDir() && built(p, seen) {
			continue
		}
		found := walkPath(files, p, manifestsAndJSON)
		for _, err := range found.Problems {
			problem("%v", err)
		}
		var named []string
		for _, f := range found.Files {
			if id := abs.key(f); !seen[id] {
				seen[id] = true
				named = append(named, f)
			}
		}
		readFiles(files, named, parse, add)
	}
}

// readFiles reads files (in fsys) and parses each (parse) on every core,
// and hands add what each gave, in the order of files.
func readFiles(fsys fileSystem, files []string, parse func(pathFile) pathFile, add func(pathFile)) {
	parallel.Map(len(files), 0, func() func(int) pathFile {
		docs := newDocumentParser()
		return func(i int) pathFile {
			one := &Resources{docs: docs}
			b, err := fsys.ReadFile(files[i])
			if err != nil {
				one.problemf("%v", err)
				return pathFile{res: one}
			}
			return parse(pathFile{path: filepath.ToSlash(files[i]), data: b, res: one})
		}
	}, func(_ int, f pathFile) { add(f) })
}

// readFiles reads and parses files (in fsys) on every core and adds what
// each gave to s, in the order of files.
func (s *Resources) readFiles(fsys fileSystem, files []string) {
	readFiles(fsys, files, s.parseFile, s.addFile)
}

func (s *Resources) problemf(format string, a ...any) {
	s.Problems = append(s.Problems, Problem{Message: fmt.Sprintf(format, a...)})
}

// parse reads one file's documents. A file in which a mapping defines a
// key twice is a problem, and none of its resources is read: which of the
// two values was meant is anyone's guess.
func (s *Resources) parse(path string, b []byte) {
	name := path
	if path == "-" {
		name = "stdin"
	}
	// Lists are unwrapped here, not by kyaml: it does so only for a file
	// holding nothing else, and the wrapper must be checked for duplicate
	// keys too (two `kubectl get -o yaml` outputs appended to one file).
	if s.docs == nil {
		s.docs = newDocumentParser()
	}
	nodes, err := readNodes(b, "", s.docs)
	if err != nil {
		if path != "-" && isTemplate(b) {
			s.Notes = append(s.Notes, templateNote(path))
			return
		}
		s.Problems = append(s.Problems, Problem{Path: path, Message: fmt.Sprintf("%s: not valid YAML: %s", name, firstLine(err.Error())), NotYAML: true})
		return
	}
	if kube.HasDuplicateKeys(nodes...) {
		s.Problems = append(s.Problems, Problem{Path: path, Message: duplicateKeysMessage(name, duplicateKeys(b)), NotYAML: true})
		return
	}
	fcs := len(s.FunctionConfigs)
	unwrapped := s.unwrapLists(nodes)
	// A functionConfig read from a file is that file's policy: it names
	// the file like the resources do (a package is found by its file).
	for _, fc := range s.FunctionConfigs[fcs:] {
		if path != "-" && kube.CheckShape(fc, "") == nil && fc.GetAnnotations(kioutil.PathAnnotation)[kioutil.PathAnnotation] == "" {
			_ = fc.PipeE(yaml.SetAnnotation(kioutil.PathAnnotation, path))
		}
	}
	var loose []*yaml.RNode
	for i, n := range unwrapped {
		if n.YNode().Kind != yaml.MappingNode || n.GetKind() == "" {
			loose = append(loose, n)
			continue
		}
		// kyaml's accessors read metadata, labels and annotations as maps
		// and panic on a list: such a resource is reported, not read.
		if err := kube.CheckShape(n, ""); err != nil {
			s.Problems = append(s.Problems, Problem{Path: path, NotYAML: true,
				Message: fmt.Sprintf("%s: resource %d (%s %s): %v; not a Kubernetes object, not read", name, i+1, kube.Safe(n.GetApiVersion()), kube.Safe(n.GetKind()), err)})
			continue
		}
		// The file and the place in it (kube.Ref's Path and Index): two
		// objects of one name in one file are told apart by it.
		if p := n.GetAnnotations(kioutil.PathAnnotation)[kioutil.PathAnnotation]; p == "" && path != "-" {
			if !annotate(n, map[string]string{kioutil.PathAnnotation: path, kioutil.IndexAnnotation: strconv.Itoa(i)}) {
				s.problemf("%s: resource %d: its annotations cannot be set", path, i+1)
				continue
			}
		}
		s.Items = append(s.Items, n)
	}
	if cf, ok := looseCertFile(path, loose); ok && path != "-" {
		s.CertFiles = append(s.CertFiles, cf)
	}
}

// unwrapLists replaces every list by its items: kubectl's List, a typed
// list such as SecretList or ConfigMapList (what the API server and
// client-go write), and a ResourceList, whose functionConfig is kept.
func (s *Resources) unwrapLists(nodes []*yaml.RNode) []*yaml.RNode {
	var out []*yaml.RNode
	for _, n := range nodes {
		items, ok := listItems(n)
		if !ok {
			out = append(out, n)
			continue
		}
		if n.GetKind() == kio.ResourceListKind {
			if fc := n.Field("functionConfig"); fc != nil && fc.Value != nil && fc.Value.YNode().Kind == yaml.MappingNode {
				s.FunctionConfigs = append(s.FunctionConfigs, fc.Value)
			}
		}
		out = append(out, s.unwrapLists(items)...)
	}
	return out
}

// listItems returns the items of a List, a ResourceList or a typed list
// (kind <Kind>List with an items sequence of mappings). The API server
// leaves kind and apiVersion out of a typed list's items; they are taken
// from the list (SecretList v1 -> Secret v1).
func listItems(n *yaml.RNode) ([]*yaml.RNode, bool) {
	if n.YNode().Kind != yaml.MappingNode {
		return nil, false
	}
	kind := n.GetKind()
	var seq *yaml.Node
	if f := n.Field("items"); f != nil && f.Value != nil && f.Value.YNode().Kind == yaml.SequenceNode {
		seq = f.Value.YNode()
	}
	switch {
	case kind == kio.ResourceListKind:
		if seq == nil {
			return nil, true // a functionConfig alone
		}
		return rnodes(seq.Content), true
	case seq == nil:
		return nil, false
	case kind == "List":
		return rnodes(seq.Content), true
	case len(kind) > len("List") && strings.HasSuffix(kind, "List"):
		for _, c := range seq.Content {
			if c.Kind != yaml.MappingNode {
				return nil, false // not a list of objects: a resource of its own
			}
		}
		itemKind, apiVersion := strings.TrimSuffix(kind, "List"), n.GetApiVersion()
		items := rnodes(seq.Content)
		for _, it := range items {
			if it.GetKind() == "" {
				_ = it.PipeE(yaml.SetField("kind", yaml.NewStringRNode(itemKind)))
				if it.GetApiVersion() == "" && apiVersion != "" {
					_ = it.PipeE(yaml.SetField("apiVersion", yaml.NewStringRNode(apiVersion)))
				}
			}
		}
		return items, true
	}
	return nil, false
}

func rnodes(nodes []*yaml.Node) []*yaml.RNode {
	out := make([]*yaml.RNode, len(nodes))
	for i, c := range nodes {
		out[i] = yaml.NewRNode(c)
	}
	return out
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// isTemplate reports whether data holds template actions ({{ ... }}), as
// a Helm chart's templates do. Such a file is read like any other when it
// parses as YAML; one that does not is a template, not a manifest, and is
// skipped instead of failing the whole run.
func isTemplate(data []byte) bool {
	open := bytes.Index(data, []byte("{{"))
	return open >= 0 && bytes.Contains(data[open:], []byte("}}"))
}

// templateNote is the note shown for a template skipped at path.
func templateNote(path string) string {
	return fmt.Sprintf("%s: a template ({{ ... }}), not YAML: skipped; list it in %s to leave it out without this note", path, ignoreFile)
}
