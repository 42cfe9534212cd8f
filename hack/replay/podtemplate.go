//go:build devtools

package main

import (
	"encoding/json"
	"path"
	"sort"
	"strings"
)

// templatePath is where a workload kind keeps its pod template: a Pod is
// its own template, a CronJob nests it in its job template, every other
// workload kind rotate-certs rolls keeps it at spec.template.
func templatePath(kind string) []string {
	switch kind {
	case "Pod":
		return []string{"spec"}
	case "CronJob":
		return []string{"spec", "jobTemplate", "spec", "template"}
	}
	return []string{"spec", "template"}
}

// podTemplates returns the pod templates of the documents of content that
// are the workload r names (kind and name; namespace when both say one),
// each as canonical JSON, sorted; "" for a matching document without one.
// A file that does not parse has none.
func podTemplates(content []byte, r resource) []string {
	docs, err := decodeDocuments(content)
	if err != nil {
		return nil
	}
	var out []string
	for _, doc := range docs {
		ns := scalarAt(doc, "metadata", "namespace")
		if scalarAt(doc, "kind") != r.Kind || scalarAt(doc, "metadata", "name") != r.Name ||
			(ns != "" && r.Namespace != "" && ns != r.Namespace) {
			continue
		}
		n := doc
		for _, k := range templatePath(r.Kind) {
			n = child(n, k)
		}
		canonical := ""
		if n != nil {
			var v any
			if n.Decode(&v) == nil {
				b, _ := json.Marshal(v)
				canonical = string(b)
			}
		}
		out = append(out, canonical)
	}
	sort.Strings(out)
	return out
}

// templateVerdict is what git says of a rolled workload's pod template.
type templateVerdict int

const (
	// templateUnchecked: the workload, or its template, is not in its file
	// at HEAD (built by kustomize, borrowed by a workloadRef): the harness
	// cannot tell.
	templateUnchecked templateVerdict = iota
	// templateChanged: the template differs, or the workload is new.
	templateChanged
	// templateSame: the same template at BASE and HEAD.
	templateSame
	// templateSameCopies: the same template, and the workload is held
	// more than once in its directory at HEAD (objects diff takes for one).
	templateSameCopies
)

// compareTemplates decides a rolled workload's verdict from its templates
// at HEAD and at BASE (in its file, else in any manifest of its
// directory, as diff tells objects apart by directory).
func compareTemplates(head, base []string) templateVerdict {
	if len(head) == 0 || allEmpty(head) {
		return templateUnchecked
	}
	if len(base) == 0 || strings.Join(head, "\n") != strings.Join(base, "\n") {
		return templateChanged
	}
	return templateSame
}

func allEmpty(templates []string) bool {
	for _, t := range templates {
		if t != "" {
			return false
		}
	}
	return true
}

// rolledTemplate reads a rolled workload's templates at both sides of a
// commit and decides; held counts the copies of a workload in its
// directory at HEAD.
func rolledTemplate(b *blobReader, repo, base, head string, r resource, held *copies) templateVerdict {
	headFile, _, _ := b.read(head + ":" + r.File)
	baseFile, _, _ := b.read(base + ":" + r.File)
	baseTemplates := podTemplates(baseFile, r)
	if len(baseTemplates) == 0 {
		files, _ := dirFiles(repo, base, path.Dir(r.File))
		for _, f := range files {
			if isManifest(f) {
				content, _, _ := b.read(base + ":" + f)
				baseTemplates = append(baseTemplates, podTemplates(content, r)...)
			}
		}
		sort.Strings(baseTemplates)
	}
	v := compareTemplates(podTemplates(headFile, r), baseTemplates)
	if v == templateSame && held.of(r) > 1 {
		return templateSameCopies
	}
	return v
}

// copies counts, per directory of one revision, the documents of each
// kind and name (namespace aside): a workload held twice in a directory is
// two objects to kustomize and to a cluster, one to an identity by
// directory, kind, namespace and name.
type copies struct {
	b         *blobReader
	repo, rev string
	dirs      map[string]map[string]int
}

func newCopies(b *blobReader, repo, rev string) *copies {
	return &copies{b: b, repo: repo, rev: rev, dirs: map[string]map[string]int{}}
}

// of is how many documents of r's kind and name its directory holds.
func (c *copies) of(r resource) int {
	dir := path.Dir(r.File)
	counts, ok := c.dirs[dir]
	if !ok {
		counts = map[string]int{}
		files, _ := dirFiles(c.repo, c.rev, dir)
		for _, f := range files {
			if !isManifest(f) {
				continue
			}
			content, _, _ := c.b.read(c.rev + ":" + f)
			docs, _ := decodeDocuments(content)
			for _, doc := range docs {
				counts[scalarAt(doc, "kind")+"/"+scalarAt(doc, "metadata", "name")]++
			}
		}
		c.dirs[dir] = counts
	}
	return counts[r.Kind+"/"+r.Name]
}
