//go:build ignore

// Command argocd-harness is the part of Argo CD that renders an Application
// through a config management plugin, and nothing else. hack/argocd.sh
// copies this file into a checkout of the pinned Argo CD release and builds
// it there, against that release's own packages (its go.mod has replace
// directives, so it cannot be built from outside the checkout):
//
//	argocd-harness argocd-cmp-server [flags]
//	    Argo CD's argocd-cmp-server command itself (the sidecar's entrypoint):
//	    it serves the plugin.yaml of --config-dir-path on
//	    $ARGOCD_PLUGINSOCKFILEPATH/<plugin name>.sock.
//	argocd-harness generate < request.json
//	    the repo-server's manifest generation (reposerver/repository
//	    GenerateManifests) for one request: source type detection, plugin
//	    discovery over the sockets in $ARGOCD_PLUGINSOCKFILEPATH
//	    (MatchRepository), then GenerateManifest with the tarred repository.
//	    It prints the repo-server's ManifestResponse as JSON, or the error on
//	    stderr with exit status 1.
//
// request.json is {"repoRoot": DIR, "revision": SHA, "request": ManifestRequest}
// with the ManifestRequest in the repo-server API's JSON field names; the
// source directory is request.applicationSource.path under repoRoot, as in
// the repo-server's checkout of the repository.
//
// Why not the whole multi-call argocd binary: this is the same code (the
// cmp-server command and the repo-server's generation path), and it builds
// in a fraction of the time.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/api/resource"

	cmpserver "github.com/argoproj/argo-cd/v3/cmd/argocd-cmp-server/commands"
	"github.com/argoproj/argo-cd/v3/reposerver/apiclient"
	"github.com/argoproj/argo-cd/v3/reposerver/repository"
	utilio "github.com/argoproj/argo-cd/v3/util/io"
)

// generateInput is what `generate` reads on stdin.
type generateInput struct {
	RepoRoot string                    `json:"repoRoot"`
	Revision string                    `json:"revision"`
	Request  apiclient.ManifestRequest `json:"request"`
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: argocd-harness argocd-cmp-server [flags] | generate < request.json")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "argocd-cmp-server":
		cmd := cmpserver.NewCommand()
		cmd.SetArgs(os.Args[2:])
		if err := cmd.Execute(); err != nil {
			os.Exit(1)
		}
	case "generate":
		if err := generate(); err != nil {
			fmt.Fprintf(os.Stderr, "argocd-harness generate: %v\n", err)
			os.Exit(1)
		}
	default:
		fmt.Fprintf(os.Stderr, "argocd-harness: unknown command %q\n", os.Args[1])
		os.Exit(2)
	}
}

func generate() error {
	var in generateInput
	dec := json.NewDecoder(os.Stdin)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return fmt.Errorf("reading the request: %w", err)
	}
	q := &in.Request
	if q.ApplicationSource == nil || in.RepoRoot == "" {
		return fmt.Errorf("the request needs repoRoot and request.applicationSource")
	}
	appPath := filepath.Join(in.RepoRoot, filepath.FromSlash(q.ApplicationSource.Path))
	res, err := repository.GenerateManifests(context.Background(), appPath, in.RepoRoot, in.Revision, q,
		false, nil, resource.Quantity{}, utilio.NewRandomizedTempPaths(os.TempDir()))
	if err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(res)
}
