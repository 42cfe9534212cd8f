package cluster

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/internal/controlplane"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// fieldManager is the field manager of the tests' own server-side applies
// (the kustomize pipeline uses kubectl's default, as a user would).
const fieldManager = "rotate-certs-test"

// ensureNamespaces creates every namespace the stream's objects live in.
func ensureNamespaces(t *testing.T, cp *controlplane.ControlPlane, stream string) {
	t.Helper()
	seen := map[string]bool{}
	var ns strings.Builder
	for _, it := range parseStream(t, stream) {
		n := it.GetNamespace()
		if n == "" || seen[n] {
			continue
		}
		seen[n] = true
		fmt.Fprintf(&ns, "---\napiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n", n)
	}
	if ns.Len() > 0 {
		mustKubectl(t, cp, ns.String(), "apply", "--server-side", "--field-manager="+fieldManager, "-f", "-")
	}
}

// apply server-side applies the stream as manager (kubectl's default when
// empty), without --force-conflicts: a field-manager conflict fails the
// apply. It returns once the controllers have seen every workload.
func apply(t *testing.T, cp *controlplane.ControlPlane, stream, manager string) {
	t.Helper()
	ensureNamespaces(t, cp, stream)
	args := []string{"apply", "--server-side", "-f", "-"}
	if manager != "" {
		args = append(args, "--field-manager="+manager)
	}
	mustKubectl(t, cp, stream, args...)
	waitObserved(t, cp, stream)
}

// getStream returns the live objects of the stream.
func getStream(t *testing.T, cp *controlplane.ControlPlane, stream string) []object {
	t.Helper()
	return decodeList(t, mustKubectl(t, cp, stream, "get", "-f", "-", "-o", "json"))
}

// rolls reports whether the kind is a workload whose controller makes a
// ReplicaSet (Deployment) or a ControllerRevision (StatefulSet, DaemonSet)
// per pod template.
func rolls(kind string) bool {
	return kind == "Deployment" || kind == "StatefulSet" || kind == "DaemonSet"
}

// waitObserved waits until the controller has seen the current generation
// of every workload in the stream: from then on the ReplicaSet or
// ControllerRevision of its current pod template exists.
func waitObserved(t *testing.T, cp *controlplane.ControlPlane, stream string) {
	t.Helper()
	if !slices.ContainsFunc(parseStream(t, stream), func(it *yaml.RNode) bool { return rolls(it.GetKind()) }) {
		return
	}
	poll(t, "workloads observed by their controllers", func() error {
		for _, o := range getStream(t, cp, stream) {
			if rolls(o.Kind) && o.Status.ObservedGeneration < o.Metadata.Generation {
				return fmt.Errorf("%w: %s observed generation %d of %d", errNotYet, o.key(), o.Status.ObservedGeneration, o.Metadata.Generation)
			}
		}
		return nil
	})
}

// state is what a render can change in the cluster: each object as written
// and each workload's ReplicaSets or ControllerRevisions.
type state struct {
	versions  map[string]string   // object key -> resourceVersion
	written   map[string]string   // object key -> object.written
	revisions map[string][]string // workload key -> sorted names of what its controller made
	objects   map[string]object
}

// snapshot reads the state of the stream's objects.
func snapshot(t *testing.T, cp *controlplane.ControlPlane, stream string) state {
	t.Helper()
	s := state{versions: map[string]string{}, written: map[string]string{}, revisions: map[string][]string{}, objects: map[string]object{}}
	owners := map[string]string{} // uid -> workload key
	for _, o := range getStream(t, cp, stream) {
		s.versions[o.key()] = o.Metadata.ResourceVersion
		s.written[o.key()] = o.written(t)
		s.objects[o.key()] = o
		if rolls(o.Kind) {
			owners[o.Metadata.UID] = o.key()
			s.revisions[o.key()] = []string{}
		}
	}
	if len(owners) == 0 {
		return s
	}
	for _, kind := range []string{"replicasets", "controllerrevisions"} {
		for _, child := range decodeList(t, mustKubectl(t, cp, "", "get", kind, "--all-namespaces", "-o", "json")) {
			for _, ref := range child.Metadata.OwnerReferences {
				if w, ok := owners[ref.UID]; ok && ref.Controller {
					s.revisions[w] = append(s.revisions[w], child.Metadata.Name)
				}
			}
		}
	}
	for _, names := range s.revisions {
		sort.Strings(names)
	}
	return s
}

// requireUnchanged fails when any object as written or any workload's
// revisions differ between a and b; objects in skip are not compared. A
// resourceVersion alone may move: controllers keep writing workload status.
func requireUnchanged(t *testing.T, what string, a, b state, skip map[string]bool) {
	t.Helper()
	for _, k := range slices.Sorted(maps.Keys(a.written)) {
		if a.written[k] != b.written[k] && !skip[k] {
			t.Errorf("%s changed %s (resourceVersion %s -> %s)\n--- before\n%s\n--- after\n%s",
				what, k, a.versions[k], b.versions[k], a.written[k], b.written[k])
		}
	}
	for _, k := range slices.Sorted(maps.Keys(a.revisions)) {
		if !slices.Equal(a.revisions[k], b.revisions[k]) {
			t.Errorf("%s rolled %s: %v -> %v", what, k, a.revisions[k], b.revisions[k])
		}
	}
}

// newRevisions returns what b has of workload w that a had not, and whether
// b still has everything a had.
func newRevisions(a, b state, w string) (added []string, kept bool) {
	kept = true
	for _, n := range a.revisions[w] {
		if !slices.Contains(b.revisions[w], n) {
			kept = false
		}
	}
	for _, n := range b.revisions[w] {
		if !slices.Contains(a.revisions[w], n) {
			added = append(added, n)
		}
	}
	return added, kept
}

// installCRDs server-side applies CRD files and waits until each is
// established.
func installCRDs(t *testing.T, cp *controlplane.ControlPlane, files ...string) {
	t.Helper()
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		mustKubectl(t, cp, string(data), "apply", "--server-side", "--field-manager="+fieldManager, "-f", "-")
		for _, it := range parseStream(t, string(data)) {
			name := it.GetName()
			poll(t, "CRD "+name+" established", func() error {
				var crd struct {
					Status struct {
						Conditions []struct{ Type, Status string }
					}
				}
				if err := json.Unmarshal([]byte(mustKubectl(t, cp, "", "get", "crd", name, "-o", "json")), &crd); err != nil {
					return err
				}
				for _, c := range crd.Status.Conditions {
					if c.Type == "Established" && c.Status == "True" {
						return nil
					}
				}
				return errNotYet
			})
		}
	}
}

// moduleDir returns where the Go module mod@version is unpacked,
// downloading it through the module proxy if needed. With an empty version
// it is the version that dir's go.mod requires; otherwise the command runs
// outside any module, so no go.mod or go.sum of the repository changes.
func moduleDir(t *testing.T, dir, mod, version string) string {
	t.Helper()
	arg := mod
	if version != "" {
		arg += "@" + version
		dir = t.TempDir()
	}
	cmd := exec.Command("go", "mod", "download", "-json", arg)
	cmd.Dir = dir
	out, err := cmd.Output()
	var m struct{ Dir, Version, Error string }
	_ = json.Unmarshal(out, &m)
	if err != nil || m.Dir == "" {
		t.Fatalf("go mod download %s: %v %s", arg, err, m.Error)
	}
	return m.Dir
}

// crdInfo is what the tests need of a CRD file.
type crdInfo struct {
	group   string
	kind    string
	storage string
}

// readCRDs returns the group, kind and storage version of each CRD in files.
func readCRDs(t *testing.T, files []string) []crdInfo {
	t.Helper()
	var out []crdInfo
	for _, f := range files {
		nodes, err := kio.LocalPackageReader{PackagePath: f, OmitReaderAnnotations: true}.Read()
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range nodes {
			info := crdInfo{
				group: yaml.GetValue(n.Field("spec").Value.Field("group").Value),
				kind:  yaml.GetValue(n.Field("spec").Value.Field("names").Value.Field("kind").Value),
			}
			versions, err := n.Pipe(yaml.Lookup("spec", "versions"))
			if err != nil || versions == nil {
				t.Fatalf("%s: no spec.versions", f)
			}
			for _, v := range versions.Content() {
				vn := yaml.NewRNode(v)
				if s, _ := vn.Pipe(yaml.Lookup("storage")); s != nil && yaml.GetValue(s) == "true" {
					info.storage = yaml.GetValue(vn.Field("name").Value)
				}
			}
			out = append(out, info)
		}
	}
	return out
}

// withStorage copies the CRD files of group to a temporary directory with
// version as their storage version (when they serve it) and returns the
// new list of files.
//
// Without Cluster API's conversion webhook a multi-version CRD converts
// with strategy None: an object of another version than the storage one is
// stored with only its apiVersion changed, and fields the storage schema
// lacks are pruned. Such an object reads back without them and every apply
// of it is a change. A test that checks what happens on a re-apply stores
// the version it applies.
func withStorage(t *testing.T, files []string, group, version string) []string {
	t.Helper()
	dir := t.TempDir()
	var out []string
	for i, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		node, err := yaml.Parse(string(data))
		if err != nil {
			t.Fatal(err)
		}
		if yaml.GetValue(node.Field("spec").Value.Field("group").Value) == group {
			versions, err := node.Pipe(yaml.Lookup("spec", "versions"))
			if err != nil {
				t.Fatal(err)
			}
			served := false
			for _, v := range versions.Content() {
				vn := yaml.NewRNode(v)
				is := yaml.GetValue(vn.Field("name").Value) == version
				served = served || is
				if err := vn.PipeE(yaml.SetField("storage", yaml.NewScalarRNode(fmt.Sprint(is)))); err != nil {
					t.Fatal(err)
				}
			}
			if !served {
				t.Fatalf("%s does not serve %s", f, version)
			}
		}
		copyPath := filepath.Join(dir, fmt.Sprintf("%d-%s", i, filepath.Base(f)))
		if err := yaml.WriteFile(node, copyPath); err != nil {
			t.Fatal(err)
		}
		out = append(out, copyPath)
	}
	return out
}

// notStored returns the keys of the stream's objects whose apiVersion is
// not the storage version of their CRD.
func notStored(t *testing.T, crds []crdInfo, stream string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, it := range parseStream(t, stream) {
		group, version, ok := strings.Cut(it.GetApiVersion(), "/")
		if !ok {
			continue
		}
		for _, c := range crds {
			if c.group == group && c.kind == it.GetKind() && c.storage != version {
				o := object{Kind: it.GetKind()}
				o.Metadata.Name, o.Metadata.Namespace = it.GetName(), it.GetNamespace()
				out[o.key()] = true
			}
		}
	}
	return out
}

// Cluster API's CRDs, from the sigs.k8s.io/cluster-api version that
// test/crdschema pins.
func clusterAPICRDs(t *testing.T, names ...string) []string {
	t.Helper()
	dir := moduleDir(t, filepath.Join(repoRoot, "test", "crdschema"), "sigs.k8s.io/cluster-api", "")
	files := map[string]string{
		"KubeadmControlPlane":         "controlplane/kubeadm/config/crd/bases/controlplane.cluster.x-k8s.io_kubeadmcontrolplanes.yaml",
		"KubeadmControlPlaneTemplate": "controlplane/kubeadm/config/crd/bases/controlplane.cluster.x-k8s.io_kubeadmcontrolplanetemplates.yaml",
		"ClusterClass":                "core/config/crd/bases/cluster.x-k8s.io_clusterclasses.yaml",
	}
	var out []string
	for _, n := range names {
		f, ok := files[n]
		if !ok {
			t.Fatalf("no Cluster API CRD file known for %s", n)
		}
		out = append(out, filepath.Join(dir, f))
	}
	return out
}

// Upstream CRDs of other projects, pinned here, read from their Go modules.
const (
	argoRolloutsModule       = "github.com/argoproj/argo-rollouts"
	argoRolloutsVersion      = "v1.10.1"
	prometheusOperatorModule = "github.com/prometheus-operator/prometheus-operator"
	prometheusOperatorVer    = "v0.85.0"
	trustManagerModule       = "github.com/cert-manager/trust-manager"
	trustManagerVersion      = "v0.25.0"
	certManagerModule        = "github.com/cert-manager/cert-manager"
	certManagerVersion       = "v1.21.1"
)

// certManagerCRDs are cert-manager's Certificate, Issuer and ClusterIssuer
// CRDs.
func certManagerCRDs(t *testing.T) []string {
	t.Helper()
	dir := filepath.Join(moduleDir(t, "", certManagerModule, certManagerVersion), "deploy", "crds")
	var out []string
	for _, name := range []string{"certificates", "issuers", "clusterissuers"} {
		out = append(out, filepath.Join(dir, "cert-manager.io_"+name+".yaml"))
	}
	return out
}

func rolloutCRD(t *testing.T) string {
	t.Helper()
	return filepath.Join(moduleDir(t, "", argoRolloutsModule, argoRolloutsVersion), "manifests", "crds", "rollout-crd.yaml")
}

func prometheusRuleCRD(t *testing.T) string {
	t.Helper()
	return filepath.Join(moduleDir(t, "", prometheusOperatorModule, prometheusOperatorVer), "example", "prometheus-operator-crd", "monitoring.coreos.com_prometheusrules.yaml")
}

func trustManagerBundleCRD(t *testing.T) string {
	t.Helper()
	return filepath.Join(moduleDir(t, "", trustManagerModule, trustManagerVersion), "deploy", "crds", "trust.cert-manager.io_bundles.yaml")
}

// standInCRD is a CRD of testdata/crds: a kind whose upstream CRD is not
// on the module proxy, with an open spec (see the files' comments).
func standInCRD(name string) string {
	return filepath.Join("testdata", "crds", name+".yaml")
}
