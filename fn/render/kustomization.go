package render

import (
	"errors"
	"fmt"

	"io/fs"
	"os"
	"path"
	"path/filepath"

	"github.com/rotate-certs/rotate-certs/fn/atomicfs"
	"github.com/rotate-certs/rotate-certs/fn/exit"
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/wire"
)

// createdFiles returns the files of files (paths relative to dir) that do
// not exist yet: the render creates them.
func createdFiles(dir string, files []atomicfs.File) (map[string]bool, error) {
	created := map[string]bool{}
	for _, f := range files {
		_, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(f.Path)))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			created[f.Path] = true
		case err != nil:
			return nil, err
		}
	}
	return created, nil
}

// kustomizations checks the kustomization (kustomization.yaml,
// kustomization.yml or Kustomization) of each directory a render creates a
// file in: kustomize build reads only the files a kustomization lists under
// resources:, and would leave a new target out without a word. Without add
// it warns on stderr, naming the kustomization and the file; with add
// (render --kustomization) it returns the kustomizations edited to list
// them (comments, order and line ends kept; one that defines a key twice is
// refused). files are sorted by path, as renderJobs returns them.
func kustomizations(dir string, files []atomicfs.File, created map[string]bool, add bool, log exit.Printer) ([]atomicfs.File, error) {
	byDir := map[string][]string{}
	var dirs []string
	for _, f := range files {
		if !created[f.Path] {
			continue
		}
		d := path.Dir(f.Path)
		if _, seen := byDir[d]; !seen {
			dirs = append(dirs, d)
		}
		byDir[d] = append(byDir[d], path.Base(f.Path))
	}
	var edits []atomicfs.File
	for _, d := range dirs {
		k, err := wire.FindKustomization(filepath.Join(dir, filepath.FromSlash(d)))
		if err != nil || k == "" {
			if err != nil {
				return nil, err
			}
			continue
		}
		edit, err := listCreated(k, byDir[d], add, log)
		if err != nil {
			return nil, err
		}
		if edit != nil {
			edits = append(edits, atomicfs.File{Path: path.Join(d, filepath.Base(k)), Data: edit})
		}
	}
	return edits, nil
}

// listCreated checks that the kustomization at k lists the created files
// (names in its directory) under resources:. Paths are printed as the
// other messages of render print them: the directory as given, a file
// named after an object's name described when it is not plain text. it warns about those it does
// not list or, with add, returns the kustomization edited to list them
// (nil when it lists them all).
func listCreated(k string, created []string, add bool, log exit.Printer) ([]byte, error) {
	read := os.ReadFile
	if add {
		read = wire.ReadKustomization
	}
	data, err := read(k)
	if err != nil {
		return nil, err
	}
	missing, err := wire.Unlisted(data, created)
	if err != nil {
		if add {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		log.Warn(fmt.Sprintf("%s cannot be read (%v): see that it lists the created %s under resources",
			k, err, filepath.Join(filepath.Dir(k), kube.SafePath(created[0]))))
		return nil, nil
	}
	if len(missing) == 0 {
		return nil, nil
	}
	if !add {
		for _, m := range missing {
			log.Warn(fmt.Sprintf("%s does not list %s under resources: kustomize build would leave this new target out; list it there, or render with --kustomization",
				k, filepath.Join(filepath.Dir(k), kube.SafePath(m))))
		}
		return nil, nil
	}
	out, _, err := wire.AddResources(data, missing...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", k, err)
	}
	return out, nil
}
