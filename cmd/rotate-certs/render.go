package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

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
not touched. New targets get files of their own, beside the policy when it lies
inside DIR - where kpt fn render puts them.
On any error nothing is written and the exit code is 1.`,
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

func render(dir, policyFile string, stderr io.Writer) error {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("render: %s is not a directory", dir)
	}
	fnConfig, err := yaml.ReadFile(policyFile)
	if err != nil {
		return fmt.Errorf("render: reading policy %s: %w", policyFile, err)
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
	var changed []*yaml.RNode
	for _, item := range rl.Items {
		if p := filePath(item); after[p] != before[p] {
			changed = append(changed, item)
		}
	}
	// A LocalPackageWriter, not a ReadWriter: the ReadWriter would delete
	// every file it read that is not written again.
	writer := kio.LocalPackageWriter{PackagePath: dir}
	if err := writer.Write(changed); err != nil {
		return fmt.Errorf("render: writing %s: %w", dir, err)
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
