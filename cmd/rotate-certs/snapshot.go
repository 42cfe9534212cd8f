package main

import (
	"errors"
	"io"
	"path/filepath"

	"github.com/rotate-certs/rotate-certs/fn/atomicfs"
	"github.com/rotate-certs/rotate-certs/fn/exit"
	"github.com/rotate-certs/rotate-certs/fn/resio"
	"github.com/rotate-certs/rotate-certs/fn/snapshot"
	"github.com/spf13/cobra"
)

func newSnapshotCommand(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "snapshot [FILE...]",
		Short: "Turn `kubectl get -o yaml` Secrets and ConfigMaps into source manifests to commit (certificates only)",
		Long: `snapshot reads Secrets and ConfigMaps as kubectl get -o yaml prints them - one
object or a List, from files or stdin ("-", the default) - and writes manifests fit
to commit as trust bundle sources, for the CA Secrets that live only in the cluster
(created by a certgen job or cert-manager).

It copies by allowlist: apiVersion, kind, name, namespace, labels, the annotations
it knows to be safe (cert-manager's on the Secrets it issues), a Secret type of the
Kubernetes API (any other is written as Opaque) and the values that hold PEM
certificates, cut to their certificate blocks. Everything else - a private key
(tls.key, or a key block beside a certificate), the fields the API server sets,
kubectl.kubernetes.io/last-applied-configuration, any other annotation or field -
is dropped and named on stderr, never with its content. Each object is marked
config.kubernetes.io/local-config: "true": kustomize and kpt give it to rotate-certs
as input and never apply it over the live object. The function reads such a
Secret or ConfigMap as a source, never as a target.

Exit status: 0 written; 1 the input is not what kubectl prints, or holds no
certificate (nothing written); 2 usage.`,
		Example: `  kubectl get secret envoy-gateway -n envoy-gateway-system -o yaml \
    | rotate-certs snapshot -o clusters/prod/in-cluster/envoy-gateway-ca.yaml
  kubectl get secrets -n cert-manager -l app=corp-ca -o yaml | rotate-certs snapshot - > roots.yaml`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				args = []string{"-"}
			}
			log := logFor(cmd, stderr)
			set := resio.ReadPaths(args, stdin)
			if len(set.Problems) > 0 {
				errs := make([]error, len(set.Problems))
				for i, p := range set.Problems {
					errs[i] = errors.New(p.Message)
				}
				return exit.Fail(errors.Join(errs...))
			}
			res, err := snapshot.Take(set.Items)
			for _, n := range res.Notes {
				log.Print(n)
			}
			if err != nil {
				return exit.Fail(err)
			}
			out, err := snapshot.Encode(res.Objects)
			if err != nil {
				return exit.Fail(err)
			}
			if output == "" || output == "-" {
				_, err = stdout.Write(out)
				return exit.Fail(err)
			}
			return exit.Fail(atomicfs.ReplaceFiles(filepath.Dir(output), []atomicfs.File{{Path: filepath.Base(output), Data: out}}))
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "write to this file (replaced only when the snapshot succeeds) instead of stdout")
	return cmd
}
