package initpolicy

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

// Read loads every resource from paths: YAML files, directories (walked
// recursively for *.yaml and *.yml, skipping hidden directories such as
// .git and kpt's .expected) and "-" for stdin. Each resource carries its
// file in the internal.config.kubernetes.io/path annotation. A file that is
// not YAML (a Helm template, say) is skipped and reported in warnings, not
// an error: init scans whole repositories.
func Read(paths []string, stdin io.Reader) (items []*yaml.RNode, warnings []string, err error) {
	if len(paths) == 0 {
		paths = []string{"."}
	}
	for _, p := range paths {
		if p == "-" {
			got, err := readDocs(stdin, "-")
			if err != nil {
				return nil, nil, fmt.Errorf("stdin: %w", err)
			}
			items = append(items, got...)
			continue
		}
		files, err := yamlFiles(p)
		if err != nil {
			return nil, nil, err
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				return nil, nil, fmt.Errorf("read %s: %w", f, err)
			}
			got, err := readDocs(bytes.NewReader(data), filepath.ToSlash(f))
			if err != nil {
				warnings = append(warnings, fmt.Sprintf("skipped %s: not plain YAML (%v)", f, firstLine(err.Error())))
				continue
			}
			items = append(items, got...)
		}
	}
	return items, warnings, nil
}

// yamlFiles returns p when it is a file, else the YAML files under it in
// lexical order.
func yamlFiles(p string) ([]string, error) {
	info, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("scan %s: %w", p, err)
	}
	if !info.IsDir() {
		return []string{p}, nil
	}
	var files []string
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
		if ext := filepath.Ext(path); ext == ".yaml" || ext == ".yml" {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("scan %s: %w", p, err)
	}
	sort.Strings(files)
	return files, nil
}

func readDocs(r io.Reader, path string) ([]*yaml.RNode, error) {
	items, err := (&kio.ByteReader{Reader: r, OmitReaderAnnotations: true}).Read()
	if err != nil {
		return nil, err
	}
	out := items[:0]
	for _, it := range items {
		if it.GetKind() == "" {
			continue
		}
		// Set here rather than with ByteReader.SetAnnotations, which skips
		// the items it unwraps from a List.
		if err := it.PipeE(yaml.SetAnnotation(kioutil.PathAnnotation, path)); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, it)
	}
	return out, nil
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
