package main

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/atomicwrite"
	"github.com/rotate-certs/rotate-certs/fn/krmio"
	"github.com/rotate-certs/rotate-certs/fn/manifests"
	"github.com/rotate-certs/rotate-certs/fn/repo"
	"github.com/rotate-certs/rotate-certs/fn/rotate"
	"github.com/rotate-certs/rotate-certs/fn/wire"
	"github.com/spf13/cobra"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

func newRenderCommand(stdout, stderr io.Writer) *cobra.Command {
	var policyFile string
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "render DIR [--policy FILE]",
		Short: "Render a directory of manifests in place (kpt fn render without kpt)",
		Long: `render reads every YAML file under DIR (except hidden files and directories
and what a .krmignore file lists, in DIR or any directory below it), runs the
function, and writes back only the files whose resources changed: file layout,
comments and field order are kept, and a file the function did not change is
not touched; in a file it rewrites, the documents whose resources did not
change keep their text, and so do the fields the function did not touch in
those that changed. New targets get files of their own, beside the policy.

Without --policy, every RotationPolicy under DIR is a package: it applies to
the directory of its file and everything below it, and a deeper policy's
directory is a package of its own, left out of the outer one - a repository
of many clusters (clusters/prod, clusters/staging, each with its policy and
objects of the same names) renders in one call. Files under no policy are left
as they are. A directory holds at most one policy. With --policy FILE (exactly
one RotationPolicy), DIR is rendered with it, except a deeper directory that
holds a policy of its own: that is still a package, rendered with its policy.
Any directory name is a package name: non-ASCII, spaces, CamelCase.

On success it prints one line per file written ("wrote PATH") or created
("created PATH"); --dry-run writes nothing and prints the unified diff it
would apply instead (git apply takes it). A template that is not YAML (a Helm
chart's, {{ ... }}) is skipped with a note.

On any error nothing is written, in any package, and the exit code is 1 (2 for
a mistake on the command line). Files are replaced whole (written beside,
flushed, renamed), never cut short, and only when every one of them can be: a
read-only file, a symbolic link that leads out of DIR or a failed write changes
nothing. DIR/.rotate-certs.lock refuses a second render of the same DIR while
one runs; a killed render leaves no lock (the kernel drops it), and the next
render removes what it left.`,
		Example: `  # every package of a repository of many clusters, each with its own policy
  rotate-certs render .

  # what it would change, as a diff, without writing anything
  rotate-certs render ./clusters --dry-run

  # one directory with a policy kept elsewhere
  rotate-certs render ./clusters/prod --policy ./policies/prod.yaml

  # in CI, render and commit only when something changed: examples/ci
  ./render-and-commit.sh ./clusters/prod ./clusters/prod/rotation-policy.yaml`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return render(args[0], policyFile, dryRun, stdout, stderr)
		},
	}
	cmd.Flags().StringVar(&policyFile, "policy", "", "RotationPolicy file: render DIR as one package with it (default: every policy under DIR, each for its own package)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "write nothing; print the unified diff of what would change")
	return cmd
}

// render runs `rotate-certs render`: package repo reads DIR, splits it
// into packages and writes (or diffs) what renderPackage returns for each.
func render(dir, policyFile string, dryRun bool, stdout, stderr io.Writer) error {
	o := repo.Options{DryRun: dryRun, Stdout: stdout, Stderr: stderr}
	if policyFile != "" {
		fnConfig, err := manifests.ReadPolicyFile(policyFile)
		if err != nil {
			return fmt.Errorf("render: %w", err)
		}
		// Inside DIR the policy is one of the package's files, as under
		// kpt: it gets its package path so that new resources are placed
		// beside it.
		if rel, ok := packagePath(dir, policyFile); ok {
			if err := fnConfig.PipeE(yaml.SetAnnotation(kioutil.PathAnnotation, rel)); err != nil {
				return fmt.Errorf("render: %w", err)
			}
		}
		o.Policy = fnConfig
	}
	err := repo.Render(dir, o, func(items []*yaml.RNode, fnConfig *yaml.RNode, original map[string][]byte) ([]atomicwrite.File, error) {
		files, err := renderPackage(dir, items, fnConfig, original, stderr)
		var code exitCode
		switch {
		case errors.As(err, &code):
			return nil, repo.ErrReported
		case err != nil:
			return nil, errors.New(strings.TrimPrefix(err.Error(), "render: "))
		}
		return files, nil
	})
	if err == nil {
		return nil
	}
	var msgs []string
	for _, e := range unjoin(err) {
		if !errors.Is(e, repo.ErrReported) {
			msgs = append(msgs, "render: "+e.Error())
		}
	}
	if len(msgs) == 0 {
		return exitCode(1)
	}
	return errors.New(strings.Join(msgs, "\n"))
}

// unjoin returns the errors joined in err (errors.Join), or err alone.
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// renderPackage runs the function on one package's items with fnConfig
// and returns the files to write: only those whose resources changed.
// original is the text of each file read, by package path.
func renderPackage(dir string, items []*yaml.RNode, fnConfig *yaml.RNode, original map[string][]byte, stderr io.Writer) ([]atomicwrite.File, error) {
	if err := duplicateKeys(dir, items); err != nil {
		return nil, fmt.Errorf("render: %w", err)
	}
	read := fingerprints(items, true)
	before := filesOf(items, read)
	rl := &framework.ResourceList{Items: items, FunctionConfig: fnConfig}
	p := rotate.Processor{Now: time.Now, Stderr: stderr}
	if err := p.Process(rl); err != nil {
		fmt.Fprintln(stderr, err)
		return nil, exitCode(1)
	}
	if err := defaultPathAndIndex(rl.Items); err != nil {
		return nil, fmt.Errorf("render: %w", err)
	}
	now := fingerprints(rl.Items, false)
	after := filesOf(rl.Items, now)
	// Only the files whose resources changed are written (a file the
	// function did not change keeps its bytes), and all of them or none:
	// each is replaced whole (atomicwrite), after every one was written
	// out and checked - a path outside DIR, a link that leads out of it,
	// a read-only file or a failed write stop the render with nothing
	// changed.
	byFile := map[string][]*yaml.RNode{} // each changed file's items
	for _, item := range rl.Items {
		if p := filePath(item); after[p] != before[p] {
			byFile[p] = append(byFile[p], item)
		}
	}
	var files []atomicwrite.File
	for p, inFile := range byFile {
		b, err := keepUnchangedDocuments(p, original[p], inFile, read, now)
		if err != nil {
			return nil, fmt.Errorf("render: %w", err)
		}
		if b == nil {
			if b, err = encodeFile(p, inFile); err != nil {
				return nil, fmt.Errorf("render: %w", err)
			}
		}
		files = append(files, atomicwrite.File{Path: p, Data: b})
	}
	return files, nil
}

// packagePath returns file's path relative to dir, slash-separated, when
// file lies inside dir.
func packagePath(dir, file string) (string, bool) {
	rel, err := wire.Rel(file, dir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", false
	}
	return rel, true
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

// filesOf sums items up file by file from their fingerprints (sums), so
// that render can tell which files the function changed: a file changed
// when one of its resources did (anything its encoding shows: values,
// styles, comments, order), or when a resource was added to it.
// Fingerprints, not encodings: encoding every file twice cost render more
// than reading and rendering the package.
func filesOf(items []*yaml.RNode, sums map[*yaml.Node]readItem) map[string]string {
	byFile := map[string][]uint64{}
	for _, item := range items {
		r := sums[item.YNode()]
		byFile[r.path] = append(byFile[r.path], r.sum)
	}
	files := make(map[string]string, len(byFile))
	for path, s := range byFile {
		slices.Sort(s) // the writer orders a file's resources by their index
		files[path] = fmt.Sprint(s)
	}
	return files
}

// readItem is an item's file and the fingerprint of its nodes, at one
// point of a render (as read, or after the function ran), and as read the
// count of its parsed keys (krmio.CountParsedKeys), which the splice of a
// changed resource checks.
type readItem struct {
	path string
	sum  uint64
	keys int
}

// fingerprints returns each item's file and fingerprint, by node, and
// with keys its count of parsed keys.
func fingerprints(items []*yaml.RNode, keys bool) map[*yaml.Node]readItem {
	out := make(map[*yaml.Node]readItem, len(items))
	for _, item := range items {
		r := readItem{path: filePath(item), sum: krmio.Fingerprint(item.YNode())}
		if keys {
			r.keys = krmio.CountParsedKeys(item.YNode())
		}
		out[item.YNode()] = r
	}
	return out
}

// spliceItem is encodeItem for a resource the function changed, read from
// the document doc: the pairs it did not change keep their text as
// written, and only those it replaced or added are encoded
// (krmio.SpliceDocument). ok is false where the splice does not follow
// the change, or the file's sequences are indented (the splice encodes
// them compact, as kyaml does by default); encode the item then.
func spliceItem(item *yaml.RNode, doc string, parsedKeys int) (string, bool) {
	if item.GetAnnotations(kioutil.SeqIndentAnnotation)[kioutil.SeqIndentAnnotation] == string(yaml.WideSequenceStyle) {
		return "", false
	}
	// What kyaml's writer takes off before it writes (encodeItem), on a
	// copy: the items are read again if the file is encoded whole.
	c := item.Copy()
	for _, a := range []string{kioutil.IndexAnnotation, kioutil.LegacyIndexAnnotation, kioutil.SeqIndentAnnotation,
		kioutil.PathAnnotation, kioutil.LegacyPathAnnotation} {
		if _, err := c.Pipe(yaml.ClearAnnotation(a)); err != nil {
			return "", false
		}
	}
	if err := yaml.ClearEmptyAnnotations(c); err != nil {
		return "", false
	}
	text, ok := krmio.SpliceDocument([]byte(doc), c.YNode(), parsedKeys)
	return string(text), ok
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
// writes it: inFile, the items placed in it, in index order.
func encodeFile(path string, inFile []*yaml.RNode) ([]byte, error) {
	nodes := make([]*yaml.RNode, 0, len(inFile))
	for _, item := range inFile {
		nodes = append(nodes, item.Copy())
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
// (slash-separated), whose resources changed, from original, the text it
// was read from (nil for a new file), keeping the text of every document
// whose resource did not change: the
// function manages only its own resources, and re-encoding another one
// is not always stable (manifests.SpliceDocuments). read and now hold
// each item's fingerprint as read and after the function ran. inFile are
// the items placed in the file; it is sorted in place. It returns nil, and
// the caller encodes the whole file, when the file is new or its documents
// cannot be matched with the items read from it.
func keepUnchangedDocuments(path string, original []byte, inFile []*yaml.RNode, read, now map[*yaml.Node]readItem) ([]byte, error) {
	if ext := strings.ToLower(filepath.Ext(path)); ext != ".yaml" && ext != ".yml" {
		return nil, nil
	}
	if err := sortByIndex(inFile); err != nil {
		return nil, err
	}
	if original == nil {
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
	out, n, ok := manifests.SpliceDocuments(original, func(k int, doc string) (string, bool) {
		if k >= old {
			return "", false
		}
		node := inFile[k].YNode()
		if now[node].sum == read[node].sum {
			return "", false
		}
		if text, ok := spliceItem(inFile[k], doc, read[node].keys); ok {
			return text, true
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

// sortByIndex orders one file's items as kioutil.SortNodes does - by the
// index annotation, those without one first, ties kept in order - reading
// each item's annotation once instead of at every comparison.
func sortByIndex(inFile []*yaml.RNode) error {
	type keyed struct {
		item  *yaml.RNode
		has   bool
		index int
	}
	keys := make([]keyed, len(inFile))
	for i, item := range inFile {
		keys[i] = keyed{item: item}
		v := item.GetAnnotations(kioutil.IndexAnnotation)[kioutil.IndexAnnotation]
		if v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("unable to parse %s %s: %w", kioutil.IndexAnnotation, v, err)
		}
		keys[i].has, keys[i].index = true, n
	}
	slices.SortStableFunc(keys, func(a, b keyed) int {
		switch {
		case !a.has && b.has:
			return -1
		case a.has && !b.has:
			return 1
		}
		return cmp.Compare(a.index, b.index)
	})
	for i, k := range keys {
		inFile[i] = k.item
	}
	return nil
}

// defaultPathAndIndex gives every item a path and an index annotation, in
// both forms, exactly as kioutil.DefaultPathAndIndexAnnotation does, but
// hands it only the items it would change - those missing the path or
// the index, or one form of a pair - and, for each file, the item with
// the highest index among the rest, which is all it reads of them (a new
// item in a file is numbered after it). Reading every item's metadata the
// way it does cost render more than the function's own steps.
func defaultPathAndIndex(items []*yaml.RNode) error {
	keys := []string{kioutil.PathAnnotation, kioutil.LegacyPathAnnotation, kioutil.IndexAnnotation,
		kioutil.LegacyIndexAnnotation, kioutil.IdAnnotation, kioutil.LegacyIdAnnotation}
	var todo []*yaml.RNode
	last := map[string]*yaml.RNode{} // by path, the settled item with the highest index
	lastIndex := map[string]int{}
	for _, item := range items {
		a := item.GetAnnotations(keys...)
		if !settled(a) {
			todo = append(todo, item)
			continue
		}
		p := a[kioutil.PathAnnotation]
		index, _ := strconv.Atoi(a[kioutil.IndexAnnotation])
		if _, seen := last[p]; !seen || index > lastIndex[p] {
			last[p], lastIndex[p] = item, index
		}
	}
	if len(todo) == 0 {
		return nil
	}
	// The settled items handed over keep their annotations; their order
	// does not matter (only the highest index of each file is read).
	handed := make([]*yaml.RNode, 0, len(last)+len(todo))
	for _, item := range last {
		handed = append(handed, item)
	}
	return kioutil.DefaultPathAndIndexAnnotation("", append(handed, todo...))
}

// settled reports whether kioutil.DefaultPathAndIndexAnnotation leaves an
// item with annotations a as it is: it has a path and an index, and of
// each pair of forms (path, index, id) both or neither are set.
func settled(a map[string]string) bool {
	_, path := a[kioutil.PathAnnotation]
	_, index := a[kioutil.IndexAnnotation]
	pairs := [][2]string{{kioutil.PathAnnotation, kioutil.LegacyPathAnnotation},
		{kioutil.IndexAnnotation, kioutil.LegacyIndexAnnotation}, {kioutil.IdAnnotation, kioutil.LegacyIdAnnotation}}
	for _, p := range pairs {
		if (a[p[0]] == "") != (a[p[1]] == "") {
			return false
		}
	}
	return path && index
}
