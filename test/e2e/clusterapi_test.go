package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/internal/e2eharness"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// End-to-end tests of spec.clusterAPI on examples/cluster-api and
// examples/eks-anywhere-etcd, with the real binaries.

// etcdCopy is the template copy the eks-anywhere-etcd example rolls etcd
// with: the template's name with its trailing number incremented, as EKS
// Anywhere names template versions, so it is the same on every run.
const etcdCopy = "prod-etcd-template-1763600000001"

func field(t *testing.T, items []*yaml.RNode, k kube.Key, path ...string) string {
	t.Helper()
	for _, it := range items {
		if kube.KeyOf(it) == k {
			n, err := it.Pipe(yaml.Lookup(path...))
			require.NoError(t, err)
			if n == nil {
				return ""
			}
			return yaml.GetValue(n)
		}
	}
	t.Fatalf("%s not in output", k)
	return ""
}

func checkClusterAPIExample(t *testing.T, items []*yaml.RNode) {
	t.Helper()
	require.Equal(t, "30", field(t, items, kube.Key{Kind: "KubeadmControlPlane", Namespace: "default", Name: "prod-control-plane"}, "spec", "rolloutBefore", "certificatesExpiryDays"))
	require.Equal(t, "30", field(t, items, kube.Key{Kind: "KubeadmControlPlane", Namespace: "default", Name: "staging-control-plane"}, "spec", "rollout", "before", "certificatesExpiryDays"))
	require.Equal(t, "30", field(t, items, kube.Key{Kind: "KubeadmControlPlaneTemplate", Namespace: "default", Name: "quick-start-control-plane"}, "spec", "template", "spec", "rollout", "before", "certificatesExpiryDays"))
}

func checkEtcdExample(t *testing.T, items []*yaml.RNode) {
	t.Helper()
	ec := kube.Key{Kind: "EtcdadmCluster", Namespace: "eksa-system", Name: "prod-etcd"}
	require.Equal(t, etcdCopy, field(t, items, ec, "spec", "infrastructureTemplate", "name"))
	copied := kube.Key{Kind: "VSphereMachineTemplate", Namespace: "eksa-system", Name: etcdCopy}
	require.Equal(t, "/dc1/vm/Templates/bottlerocket-kube-v1-33", field(t, items, copied, "spec", "template", "spec", "template"))
	require.Equal(t, "prod-etcd-template-1763600000000", field(t, items, copied, "metadata", "annotations", "rotate-certs.dev/copied-from"))
	require.Equal(t, "prod-etcd-7xk2p,prod-etcd-b9q4m,prod-etcd-z3c8v", field(t, items, copied, "metadata", "annotations", "rotate-certs.dev/replaces-machines"))
	require.Equal(t, "bottlerocket-kube-v1-33", filepath.Base(field(t, items, kube.Key{Kind: "VSphereMachineTemplate", Namespace: "eksa-system", Name: "prod-etcd-template-1763600000000"}, "spec", "template", "spec", "template")),
		"the original template stays")
}

var clusterAPIExamples = []struct {
	name  string
	check func(*testing.T, []*yaml.RNode)
	// files the kpt render may change or create
	changed []string
}{
	{"cluster-api", checkClusterAPIExample, []string{"cluster-prod.yaml", "cluster-staging.yaml", "clusterclass.yaml"}},
	{"eks-anywhere-etcd", checkEtcdExample, []string{"etcd.yaml", "vspheremachinetemplate_eksa-system_" + etcdCopy + ".yaml"}},
}

func TestClusterAPIKustomizeBuild(t *testing.T) {
	kustomize := e2eharness.Tool(t, "kustomize")
	for _, ex := range clusterAPIExamples {
		t.Run(ex.name, func(t *testing.T) {
			dir := stageExample(t, ex.name)
			out, stderr := kustomizeBuild(t, kustomize, dir)
			items := parseStream(t, out)
			ex.check(t, items)
			for _, it := range items {
				require.NotEqual(t, "Machine", it.GetKind(), "the local-config Machines dump must not reach the output")
			}
			if ex.name == "eks-anywhere-etcd" {
				require.Contains(t, stderr, "rolling every etcd machine", "kustomize users must see the roll on stderr")
				require.Contains(t, stderr, "prod-etcd-7xk2p")
			}
		})
	}
}

func TestClusterAPIKptRender(t *testing.T) {
	kpt := e2eharness.Tool(t, "kpt")
	for _, ex := range clusterAPIExamples {
		t.Run(ex.name, func(t *testing.T) {
			dir := stageExample(t, ex.name)
			kptRender(t, kpt, dir)
			ex.check(t, readPackage(t, dir))

			// Only the expected files change (or appear).
			status, _, err := run(t, dir, "git", "status", "--porcelain", "--untracked-files=all")
			require.NoError(t, err)
			var touched []string
			for _, line := range strings.Split(strings.TrimSpace(status), "\n") {
				touched = append(touched, strings.TrimSpace(line[2:]))
			}
			require.ElementsMatch(t, ex.changed, touched)
			// A comment on a changed line must survive on its new version.
			diff, _, _ := run(t, dir, "git", "diff", "-U0")
			removed, added := map[string]bool{}, map[string]bool{}
			for _, line := range strings.Split(diff, "\n") {
				_, comment, ok := strings.Cut(line, "#")
				switch {
				case !ok || strings.HasPrefix(line, "---") || strings.HasPrefix(line, "+++"):
				case strings.HasPrefix(line, "-"):
					removed[comment] = true
				case strings.HasPrefix(line, "+"):
					added[comment] = true
				}
			}
			for c := range removed {
				require.True(t, added[c], "a comment was lost: #%s", c)
			}

			requireRenderStable(t, kpt, dir, ex.name)
		})
	}
}

// TestClusterAPIBadInput: every bad input fails with exit 1, names the
// object and the field, and outputs no resources.
func TestClusterAPIBadInput(t *testing.T) {
	kcp := `- apiVersion: controlplane.cluster.x-k8s.io/v1beta2
  kind: KubeadmControlPlane
  metadata: {name: cp, namespace: default}
  spec:
    version: v1.34.1
    kubeadmConfigSpec:
      clusterConfiguration:
        certificateValidityPeriodDays: 60
`
	tests := []struct {
		name, days, items string
		want              []string
	}{
		{"below 7", "5", kcp, []string{"RotationPolicy p spec.clusterAPI.certificatesExpiryDays", "5 is below 7"}},
		{"at validity", "60", kcp, []string{"KubeadmControlPlane default/cp spec.rollout.before.certificatesExpiryDays", "60 must be less than certificateValidityPeriodDays (60)"}},
		{"unknown apiVersion", "30", strings.Replace(kcp, "v1beta2", "v1alpha3", 1), []string{"KubeadmControlPlane default/cp apiVersion", "unsupported apiVersion controlplane.cluster.x-k8s.io/v1alpha3"}},
		{"malformed expiry annotation", "30", `- apiVersion: cluster.x-k8s.io/v1beta1
  kind: Machine
  metadata:
    name: etcd-1
    namespace: eksa-system
    annotations: {machine.cluster.x-k8s.io/certificates-expiry: "2026-12-10"}
`, []string{"Machine eksa-system/etcd-1 metadata.annotations[machine.cluster.x-k8s.io/certificates-expiry]", `"2026-12-10" is not an RFC 3339 date`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			input := `apiVersion: config.kubernetes.io/v1
kind: ResourceList
functionConfig:
  apiVersion: rotate-certs.dev/v1alpha1
  kind: RotationPolicy
  metadata: {name: p}
  spec:
    now: "2026-11-22T00:00:00Z"
    clusterAPI: {certificatesExpiryDays: ` + tt.days + `}
items:
` + tt.items + `- apiVersion: v1
  kind: ConfigMap
  metadata: {name: keep, namespace: default}
`
			errOut := requireFunctionFails(t, input)
			for _, w := range tt.want {
				require.Contains(t, errOut, w)
			}
		})
	}
}

// TestClusterAPIRenderFailureWritesNothing: a failed in-place render
// leaves every file as it was.
func TestClusterAPIRenderFailureWritesNothing(t *testing.T) {
	dir := stageExample(t, "cluster-api")
	editFile(t, filepath.Join(dir, "cluster-staging.yaml"), "certificateValidityPeriodDays: 180", "certificateValidityPeriodDays: 30")
	requireRenderFails(t, dir, "KubeadmControlPlane default/staging-control-plane spec.rollout.before.certificatesExpiryDays")
}

// TestEtcdRollRenderAcrossARoll replays review finding P2 with `rotate-certs
// render` on the eks-anywhere-etcd example, committing after every step:
// the roll, a re-render, the dump refreshed mid-roll (a machine that was not
// due already replaced, another still due), the dump after the roll, and a
// year later. Exactly two template changes: the roll and the next year's.
func TestEtcdRollRenderAcrossARoll(t *testing.T) {
	dir := stageExample(t, "eks-anywhere-etcd")
	require.NoError(t, os.Remove(filepath.Join(dir, "kustomization.yaml")))
	require.NoError(t, os.Remove(filepath.Join(dir, "Kptfile")))
	gitInit(t, dir, nil)
	ec := kube.Key{Kind: "EtcdadmCluster", Namespace: "eksa-system", Name: "prod-etcd"}
	templateOf := func() string { return field(t, readPackage(t, dir), ec, "spec", "infrastructureTemplate", "name") }
	render := func() string {
		t.Helper()
		_, stderr, err := run(t, dir, binary, "render", ".", "--policy", "rotation-policy.yaml")
		require.NoError(t, err, stderr)
		return stderr
	}
	commit := func(msg string) {
		t.Helper()
		gitCommitAll(t, dir, nil, msg)
	}
	edit := func(file string, pairs ...string) {
		t.Helper()
		for i := 0; i < len(pairs); i += 2 {
			editFile(t, filepath.Join(dir, file), pairs[i], pairs[i+1])
		}
	}
	unchanged := func(step string) {
		t.Helper()
		before := e2eharness.Files(t, dir)
		stderr := render()
		require.Equal(t, before, e2eharness.Files(t, dir), "%s: the render must change nothing", step)
		require.NotContains(t, stderr, "rolling every etcd machine", step)
	}

	stderr := render()
	require.Contains(t, stderr, "rolling every etcd machine")
	require.Equal(t, etcdCopy, templateOf())
	commit("roll")
	unchanged("second render")

	// Mid-roll: b9q4m (not due) was replaced first; 7xk2p is still due.
	edit("machines-dump.yaml", "name: prod-etcd-b9q4m", "name: prod-etcd-n3w01", "2027-02-27T15:40:02Z", "2027-11-21T10:00:00Z")
	commit("dump mid-roll")
	unchanged("mid-roll")

	// The roll has finished: three new machines, none due.
	edit("machines-dump.yaml", "name: prod-etcd-7xk2p", "name: prod-etcd-n3w02", "2026-12-10T09:12:44Z", "2027-11-21T10:20:00Z",
		"name: prod-etcd-z3c8v", "name: prod-etcd-n3w03", "2027-02-27T15:58:31Z", "2027-11-21T10:40:00Z")
	commit("dump after the roll")
	unchanged("after the roll")
	require.Equal(t, etcdCopy, templateOf(), "after the roll the EtcdadmCluster keeps the copy")

	// A year later the new machines are due: one new roll, to the next
	// number.
	edit("rotation-policy.yaml", `now: "2026-11-22T00:00:00Z"`, `now: "2027-11-01T00:00:00Z"`)
	stderr = render()
	require.Contains(t, stderr, "rolling every etcd machine (prod-etcd-n3w01, prod-etcd-n3w02, prod-etcd-n3w03)")
	next := templateOf()
	require.Equal(t, "prod-etcd-template-1763600000002", next)
	commit("next year")
	unchanged("next year, again")
}
