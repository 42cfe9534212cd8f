// Package kbuild builds a kustomization as `kustomize build` does, with
// kustomize's own API (krusty, the library the kustomize binary is) and
// its plugins disabled as Flux's kustomize-controller disables them: no
// program is run and nothing is fetched (offline.go says what is left out
// and how it is named). It reads the files a caller holds - the disk, or a
// git revision in memory - and traces each object it builds to the file
// that made it (origin.go), and each build to every file it read.
//
// It serves the commands that read a repository as the cluster gets it
// (check, diff); render writes into files and reads them as files.
package kbuild

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Build is one kustomization, built.
type Build struct {
	// Dir is the kustomization's directory as the caller named it, File
	// its kustomization file.
	Dir, File string
	// Items are the objects it builds, in kustomize's output order, then
	// the RotationPolicies it lists as transformers. Each carries the
	// path annotation of File, OriginAnnotation, and NameAnnotation when
	// kustomize suffixed its name with the hash of its content.
	Items []*yaml.RNode
	// Read are the files the build read - kustomization files, resources,
	// patches, the inputs of generators - sorted, named as Dir is.
	Read []string
	// Notes name what the build left out (a remote base, a Helm chart, a
	// function not run), one line each.
	Notes []string
	// Component is true for a kustomization of kind Component: it is
	// built only by the kustomizations that include it, never on its own.
	Component bool
	// NotBuilt says why the kustomization could not be built offline (it
	// names a remote file, or fails without what was left out); "" when
	// it was built or failed for a reason of its own (Err).
	NotBuilt string
	// Err is why the build failed: a missing file, a bad patch, a bad
	// kustomization. A problem of File.
	Err error
}

// Reached returns the directories the build read files from.
func (b *Build) Reached() []string {
	var dirs []string
	for _, f := range b.Read {
		dirs = append(dirs, filepath.Dir(f))
	}
	slices.Sort(dirs)
	return slices.Compact(dirs)
}

// findKustomization returns the kustomization file of dir, "" when it holds none.
func findKustomization(files Files, dir string) string {
	for _, name := range kustomizationNames {
		p := filepath.Join(dir, name)
		if info, err := files.Stat(p); err == nil && !info.IsDir() {
			return p
		}
	}
	return ""
}

// IsKustomization reports whether name is a kustomization file's name.
func IsKustomization(name string) bool { return isKustomizationName(name) }

// Run builds the kustomization in dir (findKustomization must have found one).
func Run(files Files, dir string) *Build {
	b := &builder{files: files, dir: dir, build: &Build{Dir: dir, File: findKustomization(files, dir)}}
	if b.build.File == "" {
		b.build.Err = fmt.Errorf("%s: no kustomization file", kube.SafePath(dir))
		return b.build
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		b.build.Err = err
		return b.build
	}
	b.abs = abs
	if b.component() {
		return b.build
	}
	b.run()
	return b.build
}

// builder runs one build.
type builder struct {
	files Files
	// dir is the directory as the caller named it, abs as kustomize
	// reads it.
	dir, abs string
	build    *Build

	mu        sync.Mutex
	refused   string
	functions []function
	// userOrigins is true when the kustomization asks for kustomize's
	// origin annotations itself: they stay on the objects.
	userOrigins bool
}

// component reports whether the kustomization is a Component.
func (b *builder) component() bool {
	data, err := b.files.ReadFile(b.build.File)
	if err != nil {
		return false
	}
	k, err := yaml.Parse(string(data))
	if err != nil || k.YNode().Kind != yaml.MappingNode {
		return false
	}
	b.build.Component = k.GetKind() == types.ComponentKind
	b.userOrigins = slices.Contains(buildMetadata(k), types.OriginAnnotations)
	return b.build.Component
}

// run builds, with kustomize's default options but for plugins (builtins
// only, as Flux builds) and order (the binary's: kustomization's
// sortOptions, else its legacy order).
func (b *builder) run() {
	v := newView(b.files, b.rewrite)
	leftOut := func() bool { return len(b.build.Notes) > 0 }
	opts := krusty.MakeDefaultOptions()
	opts.PluginConfig = types.DisabledPluginConfig()
	opts.Reorder = krusty.ReorderOptionUnspecified
	var m interface{ ToRNodeSlice() []*yaml.RNode }
	var err error
	wrote := quiet(func() { m, err = runKustomize(krusty.MakeKustomizer(opts), v, b.abs) })
	left := leftOut()
	for _, line := range wrote {
		b.build.Notes = append(b.build.Notes, kube.SafePath(b.build.File)+": kustomize: "+said(line))
	}
	for _, f := range v.readFiles() {
		b.build.Read = append(b.build.Read, b.show(f))
	}
	switch {
	case b.refused != "":
		b.build.NotBuilt = b.refused
	case err != nil && left:
		b.build.NotBuilt = fmt.Sprintf("%s: not built: without what it cannot read offline, the build fails: %s", kube.SafePath(b.build.File), firstLine(err))
	case err != nil:
		b.build.Err = fmt.Errorf("%s: kustomize build fails: %s", kube.SafePath(b.build.File), firstLine(err))
	default:
		b.trace(m.ToRNodeSlice())
	}
}

// runKustomize runs k, a panic of kustomize's included: the input is
// anyone's.
func runKustomize(k *krusty.Kustomizer, v *view, dir string) (m interface{ ToRNodeSlice() []*yaml.RNode }, err error) {
	defer func() {
		if r := recover(); r != nil {
			m, err = nil, fmt.Errorf("kustomize failed: %v", r)
		}
	}()
	rm, err := k.Run(v, dir)
	if err != nil {
		return nil, err
	}
	return rm, nil
}

// rewrite is what kustomize reads of the kustomization file p: offline's
// edit of it.
func (b *builder) rewrite(p string, data []byte) []byte {
	k, err := yaml.Parse(string(data))
	if err != nil || k.YNode().Kind != yaml.MappingNode {
		return data // kustomize says what is wrong with it
	}
	e := offline(b.files, p, b.show, k, p == filepath.Join(b.abs, filepath.Base(b.build.File)))
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, n := range e.notes {
		if !slices.Contains(b.build.Notes, n) {
			b.build.Notes = append(b.build.Notes, n)
		}
	}
	for _, f := range e.functions {
		if !slices.ContainsFunc(b.functions, func(g function) bool { return g.file == f.file && g.node.GetName() == f.node.GetName() }) {
			b.functions = append(b.functions, f)
		}
	}
	if e.refused != "" {
		if b.refused == "" {
			b.refused = e.refused
		}
		return []byte("{}\n") // builds nothing: nothing is fetched
	}
	if !e.changed {
		return data
	}
	out, err := k.String()
	if err != nil {
		return data
	}
	return []byte(out)
}

// show names the file p (absolute, as kustomize reads it) as the caller
// named the build's directory.
func (b *builder) show(p string) string {
	rel, err := filepath.Rel(b.abs, p)
	if err != nil {
		return p
	}
	return filepath.Join(b.dir, rel)
}

// firstLine is err's first line, as kustomize says it (said).
func firstLine(err error) string {
	msg := err.Error()
	var ke interface{ Unwrap() []error }
	if errors.As(err, &ke) && len(ke.Unwrap()) > 0 {
		msg = ke.Unwrap()[0].Error()
	}
	line, _, _ := strings.Cut(msg, "\n")
	return said(line)
}

// said is a line kustomize wrote (an error, a warning), fit to show:
// without the objects it quotes as JSON (an ID conflict quotes each object
// whole, its Secret data included), without the memory addresses it
// prints of some values (a generator as &{0xc000123450 0xc000678900}) -
// the same build fails with the same message in every run, so a failure
// a change leaves as it was is the same on both sides - and scrubbed as
// every message that may quote input is.
func said(line string) string {
	if i := strings.Index(line, `{"`); i >= 0 {
		line = line[:i] + "(the objects are not shown)"
	}
	return kube.ScrubMessage(addresses.ReplaceAllString(line, ""))
}

// addresses are the pointers fmt prints of a struct of pointers, with the
// space before them.
var addresses = regexp.MustCompile(` ?&\{0x[0-9a-f]+(?: 0x[0-9a-f]+)*\}`)
