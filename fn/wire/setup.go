package wire

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/rotate-certs/rotate-certs/fn/atomicfs"
	"github.com/rotate-certs/rotate-certs/fn/resio"
)

// Setup says where a new policy goes and what runs it.
type Setup struct {
	// Policy is the file the policy is written to ("" or "-": stdout).
	Policy string
	// Runner starts the function (empty: no function annotation).
	Runner Runner
	// Kustomization and Kptfile, when set, are the files to wire the
	// policy into.
	Kustomization, Kptfile string
}

// File is a file to write and its new content.
type File struct {
	Path string
	Data []byte
	// Changed is false when the file already said this (it is not
	// written again).
	Changed bool
}

// Check says what is wrong with s, before anything is read.
func (s Setup) Check() error {
	if err := s.Runner.Validate(); err != nil {
		return err
	}
	toFile := s.Policy != "" && s.Policy != "-"
	if (s.Kustomization != "" || s.Kptfile != "") && !toFile {
		return errors.New("--kustomization and --kptfile need --output FILE: they name the policy by its path")
	}
	if s.Kptfile != "" && s.Runner.Empty() {
		return errors.New("--kptfile needs --exec PATH or --image REF: the pipeline entry says how to run the function")
	}
	return nil
}

// ExecFor returns the exec path written in the policy's function
// annotation: relative to the kustomization's directory (where kustomize
// resolves it), else to the policy's.
func (s Setup) ExecFor() (string, error) {
	if s.Runner.Exec == "" {
		return "", nil
	}
	switch {
	case s.Kustomization != "":
		return rebase(s.Runner.Exec, filepath.Dir(s.Kustomization))
	case s.Policy != "" && s.Policy != "-":
		return rebase(s.Runner.Exec, filepath.Dir(s.Policy))
	}
	return s.Runner.Exec, nil
}

// Wiring returns the kustomization and Kptfile edits that make the policy
// at s.Policy run: the transformers entry, the pipeline mutator.
func (s Setup) Wiring() ([]File, error) {
	var out []File
	if s.Kustomization != "" {
		data, err := readEditable(s.Kustomization, "--kustomization")
		if err != nil {
			return nil, err
		}
		rel, err := Rel(s.Policy, filepath.Dir(s.Kustomization))
		if err != nil {
			return nil, err
		}
		b, changed, err := addToList(data, "transformers", rel)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.Kustomization, err)
		}
		out = append(out, File{Path: s.Kustomization, Data: b, Changed: changed})
	}
	if s.Kptfile != "" {
		data, err := readEditable(s.Kptfile, "--kptfile")
		if err != nil {
			return nil, err
		}
		dir := filepath.Dir(s.Kptfile)
		rel, err := Rel(s.Policy, dir)
		if err != nil {
			return nil, err
		}
		r := s.Runner
		if r.Exec != "" {
			if r.Exec, err = rebase(r.Exec, dir); err != nil {
				return nil, err
			}
		}
		b, changed, err := addMutator(data, r, rel)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.Kptfile, err)
		}
		out = append(out, File{Path: s.Kptfile, Data: b, Changed: changed})
	}
	return out, nil
}

// ReadKustomization reads a kustomization that a command edits; one that
// defines a mapping key twice is refused (see readEditable).
func ReadKustomization(path string) ([]byte, error) { return readEditable(path, "kustomization") }

// readEditable reads a file that init edits. One that defines a mapping
// key twice is refused (naming the file and both lines), as init refuses
// such input: a parser keeps one of the two values, and an edit would
// write back a file that says something its author did not mean.
func readEditable(path, flag string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	if err := resio.DuplicateKeysError(path, data); err != nil {
		return nil, err
	}
	return data, nil
}

// Write writes the files that changed, all or none (atomicfs.ReplaceFiles,
// under the deepest directory that holds them all).
func Write(files []File) error {
	var root string
	var abs []string
	for _, f := range files {
		if !f.Changed {
			continue
		}
		a, err := filepath.Abs(f.Path)
		if err != nil {
			return err
		}
		abs = append(abs, a)
		dir := filepath.Dir(a)
		if root == "" {
			root = dir
		}
		for !within(root, dir) {
			root = filepath.Dir(root)
		}
	}
	if len(abs) == 0 {
		return nil
	}
	for { // a new file's directory may not exist yet
		if _, err := os.Stat(root); err == nil || filepath.Dir(root) == root {
			break
		}
		root = filepath.Dir(root)
	}
	var out []atomicfs.File
	i := 0
	for _, f := range files {
		if !f.Changed {
			continue
		}
		rel, err := filepath.Rel(root, abs[i])
		i++
		if err != nil {
			return err
		}
		out = append(out, atomicfs.File{Path: filepath.ToSlash(rel), Data: f.Data})
	}
	return atomicfs.ReplaceFiles(root, out)
}

func within(root, dir string) bool {
	rel, err := filepath.Rel(root, dir)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
