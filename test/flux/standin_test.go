package flux

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fluxcd/pkg/kustomize"
	"github.com/fluxcd/pkg/oci"
	"github.com/google/go-containerregistry/pkg/crane"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	"sigs.k8s.io/yaml"
)

// The flux stand-in: when the test binary runs as `flux` (a symlink named
// flux to it, see newCIRepo), it is the subset of the flux CLI v2.9.5 that
// the CI guide and the workflow run, made of the packages the CLI itself
// calls at the versions that release requires, called the way the CLI calls
// them (cmd/flux/push_artifact.go, pull_artifact.go, tag_artifact.go,
// build_kustomization.go and internal/build of fluxcd/flux2):
//
//	flux push artifact oci://REPO:TAG --path=DIR --source=URL --revision=REV [--reproducible] [--creds=USER:PASS]
//	flux tag artifact oci://REPO:TAG --tag=TAG [--creds=USER:PASS]
//	flux pull artifact oci://REPO:TAG --output=DIR
//	flux build kustomization NAME --path=DIR --kustomization-file=FILE --dry-run
//
// Flags follow the URL or name, as in the guide; what the stand-in does not
// implement is an error, never ignored.

// runFlux runs the stand-in with args (without the program name) and
// returns the exit status.
func runFlux(args []string, stdout, stderr io.Writer) int {
	if err := flux(args, stdout); err != nil {
		fmt.Fprintf(stderr, "✗ %v\n", err)
		return 1
	}
	return 0
}

func flux(args []string, stdout io.Writer) error {
	if len(args) < 3 {
		return fmt.Errorf("usage: flux push|tag|pull artifact URL [flags] | flux build kustomization NAME [flags]")
	}
	cmd, target, rest := args[0]+" "+args[1], args[2], args[3:]
	fs := flag.NewFlagSet("flux "+cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // the CLI's --timeout default
	defer cancel()
	switch cmd {
	case "push artifact":
		path, source, revision, creds := fs.String("path", "", ""), fs.String("source", "", ""), fs.String("revision", "", ""), fs.String("creds", "", "")
		reproducible := fs.Bool("reproducible", false, "")
		if err := parseFlags(fs, rest); err != nil {
			return err
		}
		return pushArtifact(ctx, stdout, target, *path, *source, *revision, *creds, *reproducible)
	case "tag artifact":
		tag, creds := fs.String("tag", "", ""), fs.String("creds", "", "")
		if err := parseFlags(fs, rest); err != nil {
			return err
		}
		return tagArtifact(ctx, stdout, target, *tag, *creds)
	case "pull artifact":
		output := fs.String("output", "", "")
		if err := parseFlags(fs, rest); err != nil {
			return err
		}
		return pullArtifact(ctx, stdout, target, *output)
	case "build kustomization":
		path, file := fs.String("path", "", ""), fs.String("kustomization-file", "", "")
		dryRun := fs.Bool("dry-run", false, "")
		if err := parseFlags(fs, rest); err != nil {
			return err
		}
		if !*dryRun {
			return errors.New("the stand-in has no cluster: build kustomization needs --dry-run")
		}
		out, err := buildKustomization(target, *path, *file)
		if err != nil {
			return err
		}
		_, err = io.WriteString(stdout, out)
		return err
	}
	return fmt.Errorf("the flux stand-in does not implement %q", cmd)
}

func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%s: unexpected arguments %q (flags go after the URL or name)", fs.Name(), fs.Args())
	}
	return nil
}

// clientOptions are the CLI's registry options: the defaults, and basic
// credentials when --creds is given (oci.GetAuthFromCredentials).
func clientOptions(creds string) ([]crane.Option, error) {
	opts := oci.DefaultOptions()
	if creds != "" {
		auth, err := oci.GetAuthFromCredentials(creds)
		if err != nil {
			return nil, fmt.Errorf("could not login with credentials: %w", err)
		}
		opts = append(opts, crane.WithAuth(auth))
	}
	return opts, nil
}

func pushArtifact(ctx context.Context, stdout io.Writer, ociURL, path, source, revision, creds string, reproducible bool) error {
	if revision == "" {
		return errors.New("--revision is required")
	}
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("invalid path '%s', must point to an existing directory or file: %w", path, err)
	}
	url, err := oci.ParseArtifactURL(ociURL)
	if err != nil {
		return err
	}
	meta := oci.Metadata{Source: source, Revision: revision, Annotations: map[string]string{}}
	if reproducible {
		meta.Created = time.Unix(0, 0).Format(time.RFC3339)
	}
	opts, err := clientOptions(creds)
	if err != nil {
		return err
	}
	digestURL, err := oci.NewClient(opts).Push(ctx, url, path, oci.WithPushMetadata(meta))
	if err != nil {
		return fmt.Errorf("pushing artifact failed: %w", err)
	}
	fmt.Fprintf(stdout, "✔ artifact successfully pushed to %s\n", digestURL)
	return nil
}

func tagArtifact(ctx context.Context, stdout io.Writer, ociURL, tag, creds string) error {
	if tag == "" {
		return errors.New("--tag is required")
	}
	url, err := oci.ParseArtifactURL(ociURL)
	if err != nil {
		return err
	}
	opts, err := clientOptions(creds)
	if err != nil {
		return err
	}
	img, err := oci.NewClient(opts).Tag(ctx, url, tag)
	if err != nil {
		return fmt.Errorf("tagging artifact failed: %w", err)
	}
	fmt.Fprintf(stdout, "✔ artifact tagged as %s\n", img)
	return nil
}

func pullArtifact(ctx context.Context, stdout io.Writer, ociURL, output string) error {
	if st, err := os.Stat(output); err != nil || !st.IsDir() {
		return fmt.Errorf("invalid output path %q: %v", output, err)
	}
	url, err := oci.ParseArtifactURL(ociURL)
	if err != nil {
		return err
	}
	meta, err := oci.NewClient(oci.DefaultOptions()).Pull(ctx, url, output)
	if err != nil {
		return err
	}
	// What the CLI logs, as JSON for the tests to read.
	return json.NewEncoder(stdout).Encode(meta)
}

// buildKustomization is `flux build kustomization NAME --path DIR
// --kustomization-file FILE --dry-run`: the Flux Kustomization NAME from
// FILE, a kustomization.yaml generated in DIR when it has none (removed
// again afterwards), kustomize build with Flux's options (no plugins, no
// functions), and the owner labels kustomize-controller sets.
func buildKustomization(name, dir, file string) (string, error) {
	ks, err := readKustomization(file, name)
	if err != nil {
		return "", err
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return "", err
	}
	gen := kustomize.NewGeneratorWithIgnore("", "", ks)
	action, err := gen.WriteFile(dir, kustomize.WithSaveOriginalKustomization())
	if err != nil {
		return "", fmt.Errorf("failed to generate kustomization.yaml: %w", errors.Join(err, kustomize.CleanDirectory(dir, action)))
	}
	m, err := kustomize.Build(filesys.MakeFsOnDisk(), dir)
	if cerr := kustomize.CleanDirectory(dir, action); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("kustomize build failed: %w", err)
	}
	var docs []string
	for _, res := range m.Resources() {
		for _, l := range []struct{ key, value string }{
			{"kustomize.toolkit.fluxcd.io/name", ks.GetName()},
			{"kustomize.toolkit.fluxcd.io/namespace", ks.GetNamespace()},
		} {
			if err := res.PipeE(kyaml.SetLabel(l.key, l.value)); err != nil {
				return "", err
			}
		}
		b, err := res.AsYAML()
		if err != nil {
			return "", err
		}
		docs = append(docs, "---\n"+string(b))
	}
	return strings.Join(docs, ""), nil
}

// readKustomization finds the Flux Kustomization named name in a
// multi-document file, as the CLI does.
func readKustomization(file, name string) (unstructured.Unstructured, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return unstructured.Unstructured{}, fmt.Errorf("failed to read kustomization file %s: %w", file, err)
	}
	for _, doc := range strings.Split(string(data), "\n---") {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			return unstructured.Unstructured{}, fmt.Errorf("failed to unmarshall kustomization file %s: %w", file, err)
		}
		u := unstructured.Unstructured{Object: obj}
		if obj != nil && strings.HasPrefix(u.GetAPIVersion(), "kustomize.toolkit.fluxcd.io/") && u.GetKind() == "Kustomization" && u.GetName() == name {
			return u, nil
		}
	}
	return unstructured.Unstructured{}, fmt.Errorf("failed find kustomization with name '%s' in file '%s'", name, file)
}
