package initpolicy

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"github.com/stretchr/testify/assert"
)

// TestAddedWorkloadKind adds a kind to the workload-kind table by one row
// (OpenKruise's CloneSet) and sees init list it as a reader of the Secret
// its pod template reads, at the row's template path; with the shipped
// table it is not read.
func TestAddedWorkloadKind(t *testing.T) {
	added := policy.NewWorkloadTable(append(policy.WorkloadKinds().Rows(),
		policy.WorkloadKind{Kind: "CloneSet", APIVersions: []string{"apps.kruise.io/v1alpha1"}, Template: []string{"spec", "template"}, Role: policy.RoleRolled, Replicas: true})...)
	text := strings.Join([]string{
		"apiVersion: apps.kruise.io/v1alpha1\nkind: CloneSet\nmetadata: {name: clone, namespace: eg}\nspec: {replicas: 2, template: {spec: {volumes: [{name: ca, secret: {secretName: envoy-gateway}}], containers: [{name: c}]}}}\n",
		"apiVersion: apps.kruise.io/v1beta1\nkind: CloneSet\nmetadata: {name: other-version, namespace: eg}\nspec: {template: {spec: {volumes: [{name: ca, secret: {secretName: envoy-gateway}}], containers: [{name: c}]}}}\n",
	}, "---\n")
	secret := kube.Key{Kind: "Secret", Namespace: "eg", Name: "envoy-gateway"}
	cases := []struct {
		name  string
		kinds policy.WorkloadTable
		want  []string
	}{
		{"shipped table", policy.WorkloadKinds(), nil},
		{"row added", added, []string{"CloneSet eg/clone (volume ca)"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			consumers, notes := newReaders(parseAll(t, text), tc.kinds, nil)
			var got []string
			for _, c := range consumers.of(kube.Ref{Kind: secret.Kind, Namespace: secret.Namespace, Name: secret.Name}, nil) {
				got = append(got, c.String())
			}
			assert.Equal(t, tc.want, got)
			assert.Empty(t, notes)
		})
	}
}

// webhookManager is kubebuilder's config/manager Deployment (namespace
// system, which config/default's kustomization rewrites) reading the CA of
// ConfigMap trusted-ca through a volume.
const webhookManager = `apiVersion: apps/v1
kind: Deployment
metadata: {name: controller-manager, namespace: %s}
spec:
  selector: {matchLabels: {control-plane: controller-manager}}
  template:
    metadata: {labels: {control-plane: controller-manager}}
    spec:
      containers:
      - name: manager
        image: example/widget-controller
        volumeMounts: [{name: trust, mountPath: /etc/trust}]
      volumes:
      - {name: trust, configMap: {name: trusted-ca}}
`

// trustedCA is the CA ConfigMap the manager reads, in namespace ns ("":
// as `kubectl create configmap --dry-run=client -o yaml` writes it).
func trustedCA(ns string) string {
	meta := "metadata: {name: trusted-ca}"
	if ns != "" {
		meta = "metadata: {name: trusted-ca, namespace: " + ns + "}"
	}
	return "apiVersion: v1\nkind: ConfigMap\n" + meta + "\ndata:\n  ca.crt: |\n" + indented(gwCA.PEM(), 4) + "\n"
}

// TestConsumersByTheNamespaceRule: init lists the readers of a source as
// render and diff count them (restart.Readers): a source whose manifest
// names no namespace is read by a workload of any namespace that names it;
// a kustomization's namespace: is the namespace of the objects it builds,
// over the manifests' own (the manager's namespace: system and the CA's
// snapshot in widget-system are one namespace once built).
func TestConsumersByTheNamespaceRule(t *testing.T) {
	t.Run("no namespace", func(t *testing.T) {
		want := []string{"Deployment system/controller-manager (volume trust)"}
		plan, err := Propose(parseAll(t, trustedCA("")+"---\n"+strings.Replace(webhookManager, "%s", "system", 1)), day0)
		if err != nil {
			t.Fatal(err)
		}
		if len(plan.Bundles) != 1 || !slices.Equal(consumerStrings(plan.Bundles[0].SourceReaders), want) {
			t.Fatalf("bundles %+v: want one, read by %q", plan.Bundles, want)
		}
	})
	t.Run("kustomization namespace", func(t *testing.T) {
		dir := t.TempDir()
		files := map[string]string{
			"kustomization.yaml": "namespace: widget-system\nresources:\n- manager.yaml\n- trusted-ca.yaml\n",
			"manager.yaml":       strings.Replace(webhookManager, "%s", "system", 1),
			"trusted-ca.yaml":    trustedCA("widget-system"),
		}
		for name, text := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		items, _, err := Read([]string{dir}, nil)
		if err != nil {
			t.Fatal(err)
		}
		in := Input{Items: items, Roots: PackageRoots(items), Namespace: Namespaces([]string{dir})}
		tree, err := ProposeTree(in, day0)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"Deployment widget-system/controller-manager (volume trust)"} // where the kustomization applies it
		if len(tree.Packages) != 1 || len(tree.Packages[0].Bundles) != 1 || !slices.Equal(consumerStrings(tree.Packages[0].Bundles[0].SourceReaders), want) {
			t.Fatalf("packages %+v: want one bundle, read by %q", tree.Packages, want)
		}
		in.Namespace = nil
		tree, _ = ProposeTree(in, day0)
		if got := tree.Packages[0].Bundles[0].SourceReaders; len(got) != 0 {
			t.Errorf("without the kustomization's namespace, consumers %q: want none (system is not widget-system)", consumerStrings(got))
		}
	})
}

func consumerStrings(cs []Reader) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.String())
	}
	return out
}
