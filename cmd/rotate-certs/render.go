package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/atomicwrite"
	"github.com/rotate-certs/rotate-certs/fn/krmio"
	"github.com/rotate-certs/rotate-certs/fn/manifests"
	"github.com/rotate-certs/rotate-certs/fn/rotate"
	"github.com/spf13/cobra"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

func newRenderCommand(stderr io.Writer) *cobra.Command {
	var policyFile string
	cmd := &cobra.Command{
		Use:   "render DIR --policy FILE",
		Short: "Render a directory of manifests in place (kpt fn render without kpt)",
		Long: `render reads every YAML file under DIR (except hidden files and directories
and what a .krmignore file lists), runs the function with the policy from
--policy, and writes back only the files whose resources changed: file layout,
comments and field order are kept, and a file the function did not change is
not touched; in a file it rewrites, the documents whose resources did not
change keep their text. New targets get files of their own, beside the policy
when it lies inside DIR - where kpt fn render puts them. --policy FILE holds
exactly one RotationPolicy.

On any error nothing is written and the exit code is 1. Files are replaced
whole (written beside, flushed, renamed), never cut short, and only when every
one of them can be: a read-only file, a symbolic link that leads out of DIR or a
failed write changes nothing. DIR/.rotate-certs.lock refuses a second render of
the same DIR while one runs; a killed render leaves no lock (the kernel drops
it), and the next render removes what it left.`,
		Example: `  # render a directory with the policy kept next to the manifests
  rotate-certs render ./clusters/prod --policy ./clusters/prod/rotation-policy.yaml

  # review what changed like any other change, then commit it
  git diff ./clusters/prod

  # in CI, render and commit only when something changed: examples/ci
  ./render-and-commit.sh ./clusters/prod ./clusters/prod/rotation-policy.yaml`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if policyFile == "" {
				return usageError(cmd, errors.New("--policy FILE is required"))
			}
			return render(args[0], policyFile, stderr)
		},
	}
	cmd.Flags().StringVar(&policyFile, "policy", "", "RotationPolicy file (required)")
	return cmd
}

func render(dir, policyFile string, stderr io.Writer) (err error) {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("render: %s is not a directory", dir)
	}
	// One render of a tree at a time: two would read the same files and
	// write them back over each other.
	unlock, err := atomicwrite.Lock(dir)
	if err != nil {
		return fmt.Errorf("render: %w", err)
	}
	defer func() {
		if uerr := unlock(); uerr != nil && err == nil {
			err = fmt.Errorf("render: releasing the lock: %w", uerr)
		}
	}()
	if err := atomicwrite.RemoveStale(dir); err != nil {
		return fmt.Errorf("render: removing what a killed render left: %w", err)
	}
	fnConfig, err := readPolicyFile(policyFile)
	if err != nil {
		return fmt.Errorf("render: %w", err)
	}
	// Inside DIR the policy is one of the package's files, as under kpt: it
	// gets its package path so that new resources are placed beside it.
	if rel, ok := packagePath(dir, policyFile); ok {
		if err := fnConfig.PipeE(yaml.SetAnnotation(kioutil.PathAnnotation, rel)); err != nil {
			return fmt.Errorf("render: %w", err)
		}
	}
	reader := kio.LocalPackageReader{PackagePath: dir, PreserveSeqIndent: true, FileSkipFunc: hidden}
	items, err := reader.Read()
	if err != nil {
		return fmt.Errorf("render: reading %s: %w", dir, err)
	}
	if err := duplicateKeys(dir, items); err != nil {
		return fmt.Errorf("render: %w", err)
	}
	before, err := filesOf(items)
	if err != nil {
		return fmt.Errorf("render: %w", err)
	}
	read := readEach(items)
	rl := &framework.ResourceList{Items: items, FunctionConfig: fnConfig}
	p := rotate.Processor{Now: time.Now, Stderr: stderr}
	if err := p.Process(rl); err != nil {
		fmt.Fprintln(stderr, err)
		return exitCode(1)
	}
	if err := kioutil.DefaultPathAndIndexAnnotation("", rl.Items); err != nil {
		return fmt.Errorf("render: %w", err)
	}
	after, err := filesOf(rl.Items)
	if err != nil {
		return fmt.Errorf("render: %w", err)
	}
	// Only the files whose resources changed are written (a file the
	// function did not change keeps its bytes), and all of them or none:
	// each is replaced whole (atomicwrite), after every one was written
	// out and checked - a path outside DIR, a link that leads out of it,
	// a read-only file or a failed write stop the render with nothing
	// changed.
	var files []atomicwrite.File
	for p, sums := range after {
		if sums == before[p] {
			continue
		}
		b, err := keepUnchangedDocuments(dir, p, rl.Items, read)
		if err != nil {
			return fmt.Errorf("render: %w", err)
		}
		if b == nil {
			if b, err = encodeFile(p, rl.Items); err != nil {
				return fmt.Errorf("render: %w", err)
			}
		}
		files = append(files, atomicwrite.File{Path: p, Data: b})
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	if err := atomicwrite.Write(dir, files); err != nil {
		return fmt.Errorf("render: %w", err)
	}
	return nil
}

// packagePath returns file's path relative to dir, slash-separated, when
// file lies inside dir.
func packagePath(dir, file string) (string, bool) {
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return "", false
	}
	absFile, err := filepath.Abs(file)
	if err != nil {
		return "", false
	}
	rel, err := filepath.Rel(absDir, absFile)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// hidden reports whether a package-relative path is a hidden file or lies in
// a hidden directory (.git, .github, ...): render never reads or writes those.
func hidden(relPath string) bool {
	for _, part := range strings.Split(filepath.ToSlash(relPath), "/") {
		if strings.HasPrefix(part, ".") && part != "." && part != ".." {
			return true
		}
	}
	return false
}

// duplicateKeys fails on the first file in which a mapping defines a key
// twice (two manifests without "---" between them): kyaml keeps the first
// value silently, so the function would render what the file does not say.
// kubectl rejects such a file too.
func duplicateKeys(dir string, items []*yaml.RNode) error {
	for _, item := range items {
		if !manifests.HasDuplicateKeys(item) {
			continue
		}
		file := filepath.Join(dir, filepath.FromSlash(filePath(item)))
		data, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		if err := manifests.DuplicateKeysError(file, data); err != nil {
			return err
		}
		return fmt.Errorf("%s: a mapping key is defined twice", file)
	}
	return nil
}

func filePath(item *yaml.RNode) string {
	return item.GetAnnotations(kioutil.PathAnnotation)[kioutil.PathAnnotation]
}

// filesOf fingerprints items file by file, so that render can tell which
// files the function changed: a file changed when one of its resources did
// (anything its encoding shows: values, styles, comments, order), or when
// a resource was added to it. Fingerprints, not encodings: encoding every
// file twice cost render more than reading and rendering the package.
func filesOf(items []*yaml.RNode) (map[string]string, error) {
	sums := map[string][]uint64{}
	for _, item := range items {
		p := filePath(item)
		sums[p] = append(sums[p], krmio.Fingerprint(item.YNode()))
	}
	files := make(map[string]string, len(sums))
	for path, s := range sums {
		slices.Sort(s) // the writer orders a file's resources by their index
		files[path] = fmt.Sprint(s)
	}
	return files, nil
}

// readPolicyFile reads the RotationPolicy of --policy FILE: exactly one
// YAML document (a second one was ignored), in which no mapping defines a
// key twice.
func readPolicyFile(path string) (*yaml.RNode, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading policy: %w", err)
	}
	if err := manifests.DuplicateKeysError(path, data); err != nil {
		return nil, fmt.Errorf("policy %w", err)
	}
	r := &kio.ByteReader{Reader: bytes.NewReader(data), OmitReaderAnnotations: true, DisableUnwrapping: true}
	nodes, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("reading policy %s: %w", path, err)
	}
	switch len(nodes) {
	case 1:
		return nodes[0], nil
	case 0:
		return nil, fmt.Errorf("policy %s holds no YAML document; --policy FILE must hold one RotationPolicy", path)
	default:
		return nil, fmt.Errorf("policy %s holds %d YAML documents; --policy FILE must hold one RotationPolicy, alone", path, len(nodes))
	}
}

// readItem is an item as read: its file and the fingerprint of its nodes
// before the function ran.
type readItem struct {
	path string
	sum  uint64
}

// readEach returns each item's file and fingerprint, by node.
func readEach(items []*yaml.RNode) map[*yaml.Node]readItem {
	out := make(map[*yaml.Node]readItem, len(items))
	for _, item := range items {
		out[item.YNode()] = readItem{path: filePath(item), sum: krmio.Fingerprint(item.YNode())}
	}
	return out
}

func encodeItem(item *yaml.RNode) (string, error) {
	var b strings.Builder
	w := kio.ByteWriter{Writer: &b, ClearAnnotations: []string{kioutil.PathAnnotation, kioutil.LegacyPathAnnotation}}
	if err := w.Write([]*yaml.RNode{item}); err != nil {
		return "", fmt.Errorf("%s: %w", filePath(item), err)
	}
	return b.String(), nil
}

// encodeFile returns the text of package file path as kyaml's writer
// writes it: every item placed in it, in index order.
func encodeFile(path string, items []*yaml.RNode) ([]byte, error) {
	var nodes []*yaml.RNode
	for _, item := range items {
		if filePath(item) == path {
			nodes = append(nodes, item.Copy())
		}
	}
	if err := kioutil.SortNodes(nodes); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var b bytes.Buffer
	w := kio.ByteWriter{Writer: &b, ClearAnnotations: []string{kioutil.PathAnnotation, kioutil.LegacyPathAnnotation}}
	if err := w.Write(nodes); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b.Bytes(), nil
}

// keepUnchangedDocuments returns the new text of the package file path
// (slash-separated, relative to dir), whose resources changed, with the
// original text of every document whose resource did not change: the
// function manages only its own resources, and re-encoding another one
// is not always stable (manifests.SpliceDocuments). read holds the
// fingerprint of each item as read. It returns nil, and the caller encodes the whole
// file, when the file is new or its documents cannot be matched with the
// items read from it.
func keepUnchangedDocuments(dir, path string, items []*yaml.RNode, read map[*yaml.Node]readItem) ([]byte, error) {
	if ext := strings.ToLower(filepath.Ext(path)); ext != ".yaml" && ext != ".yml" {
		return nil, nil
	}
	var inFile []*yaml.RNode
	for _, item := range items {
		if filePath(item) == path {
			inFile = append(inFile, item)
		}
	}
	if err := kioutil.SortNodes(inFile); err != nil {
		return nil, err
	}
	original, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(path)))
	if err != nil {
		return nil, nil // a new file
	}
	fromFile := func(item *yaml.RNode) bool {
		r, ok := read[item.YNode()]
		return ok && r.path == path
	}
	old := 0 // the items read from the file come first, in file order
	for old < len(inFile) && fromFile(inFile[old]) {
		old++
	}
	for i, item := range inFile {
		if fromFile(item) != (i < old) {
			return nil, nil // out of order
		}
	}
	// Only the resources that changed, and the new ones, are encoded.
	var encodeErr error
	encode := func(item *yaml.RNode) string {
		text, err := encodeItem(item)
		if err != nil && encodeErr == nil {
			encodeErr = err
		}
		return text
	}
	var appended []string
	for _, item := range inFile[old:] {
		appended = append(appended, encode(item))
	}
	out, n, ok := manifests.SpliceDocuments(original, func(k int) (string, bool) {
		if k >= old || krmio.Fingerprint(inFile[k].YNode()) == read[inFile[k].YNode()].sum {
			return "", false
		}
		return encode(inFile[k]), true
	}, appended)
	if encodeErr != nil {
		return nil, encodeErr
	}
	if !ok || n != old {
		return nil, nil
	}
	return out, nil
}
