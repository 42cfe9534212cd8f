package clusterapi

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

const etcdadmCluster = `apiVersion: etcdcluster.cluster.x-k8s.io/v1beta1
kind: EtcdadmCluster
metadata:
  name: prod-etcd
  namespace: eksa-system
  labels:
    cluster.x-k8s.io/cluster-name: prod
  annotations:
    internal.config.kubernetes.io/path: clusters/prod/etcd.yaml
    internal.config.kubernetes.io/index: "0"
spec:
  replicas: 3
  etcdadmConfigSpec:
    etcdadmBuiltin: true
  infrastructureTemplate:
    apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
    kind: VSphereMachineTemplate
    name: prod-etcd-template-1700000000000 # written by eksctl
    namespace: eksa-system
`

const etcdTemplate = `apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: VSphereMachineTemplate
metadata:
  name: prod-etcd-template-1700000000000
  namespace: eksa-system
  uid: 0a6e0a52-0000-4000-8000-000000000001
  resourceVersion: "123456"
  creationTimestamp: "2025-12-01T00:00:00Z"
  annotations:
    internal.config.kubernetes.io/path: clusters/prod/etcd.yaml
    internal.config.kubernetes.io/index: "1"
    config.k8s.io/id: "2"
spec:
  template:
    spec:
      cloneMode: linkedClone # fast clones
      numCPUs: 2
`

// etcdMachine is an etcd Machine with an expiry annotation.
func etcdMachine(name, expiry string) string {
	return `apiVersion: cluster.x-k8s.io/v1beta1
kind: Machine
metadata:
  name: ` + name + `
  namespace: eksa-system
  labels:
    cluster.x-k8s.io/cluster-name: prod
    cluster.x-k8s.io/etcd-cluster: prod-etcd
  annotations:
    machine.cluster.x-k8s.io/certificates-expiry: "` + expiry + `"
  ownerReferences:
  - apiVersion: etcdcluster.cluster.x-k8s.io/v1beta1
    kind: EtcdadmCluster
    name: prod-etcd
    controller: true
spec:
  clusterName: prod
`
}

const cpMachine = `apiVersion: cluster.x-k8s.io/v1beta1
kind: Machine
metadata:
  name: prod-xk2lp
  namespace: eksa-system
  labels:
    cluster.x-k8s.io/cluster-name: prod
    cluster.x-k8s.io/control-plane: ""
spec:
  clusterName: prod
status:
  certificatesExpiryDate: "2026-12-01T00:00:00Z"
`

func docs(parts ...string) string { return strings.Join(parts, "---\n") }

// TestEtcdRollFromMachineAnnotations: a due etcd machine rolls every etcd
// machine through a template copy; rendering the output again changes
// nothing while the roll is in place, and a year on the replacement
// machines roll through the next copy.
func TestEtcdRollFromMachineAnnotations(t *testing.T) {
	out, copied, name := firstEtcdRoll(t)
	checkEtcdRollInProgress(t, out, copied, name)
	checkNextYearsEtcdRoll(t, out, copied, name)
}

// firstEtcdRoll renders three etcd machines, one of them due, and checks
// the copy it makes; it returns the output, the copy and its name.
func firstEtcdRoll(t *testing.T) (out, copied, name string) {
	t.Helper()
	in := docs(etcdadmCluster, etcdTemplate,
		etcdMachine("prod-etcd-aaaaa", "2026-12-10T00:00:00Z"), // 18 days: due
		etcdMachine("prod-etcd-bbbbb", "2027-03-01T00:00:00Z"),
		etcdMachine("prod-etcd-ccccc", "2027-03-02T00:00:00Z"),
		kcpV1beta1)
	items := parse(t, in)
	added, results := Apply(items, cfg(30), now)
	if errs := errorsOf(results); len(errs) > 0 {
		t.Fatal(errs)
	}
	if len(added) != 1 {
		t.Fatalf("want one template copy, got %d", len(added))
	}
	cp := added[0]
	name = cp.GetName()
	if name != "prod-etcd-template-1700000000001" {
		t.Errorf("copy name %q must be the template's name with its number incremented", name)
	}
	out = render(t, items)
	if !strings.Contains(out, "    name: "+name+" # written by eksctl\n") {
		t.Errorf("spec.infrastructureTemplate.name must point at %s, comment kept:\n%s", name, out)
	}
	// The original template stays; the copy has its spec, comments included,
	// and none of the server fields or identity annotations.
	if !strings.Contains(out, "name: prod-etcd-template-1700000000000\n  namespace: eksa-system\n  uid:") {
		t.Errorf("the original template must stay as it was:\n%s", out)
	}
	copied = cp.MustString()
	for _, want := range []string{"cloneMode: linkedClone # fast clones", "rotate-certs.dev/copied-from: 'prod-etcd-template-1700000000000'",
		"internal.config.kubernetes.io/path: 'clusters/prod/vspheremachinetemplate_eksa-system_" + name + ".yaml'", "internal.config.kubernetes.io/index: '0'"} {
		if !strings.Contains(copied, want) {
			t.Errorf("copy lacks %q:\n%s", want, copied)
		}
	}
	for _, gone := range []string{"uid:", "resourceVersion", "creationTimestamp", "config.k8s.io/id"} {
		if strings.Contains(copied, gone) {
			t.Errorf("copy must not carry %s:\n%s", gone, copied)
		}
	}
	// The control plane is not rolled for etcd certificates: the KCP gets
	// only its own expiry field.
	if strings.Count(out, "rolloutBefore") != 1 || strings.Contains(out, "rolloutAfter") {
		t.Errorf("the KubeadmControlPlane must only get its expiry field:\n%s", out)
	}
	if !hasResult(results, framework.Warning, "Machine eksa-system/prod-etcd-aaaaa", "metadata.annotations[machine.cluster.x-k8s.io/certificates-expiry]", "etcd machine prod-etcd-aaaaa of EtcdadmCluster eksa-system/prod-etcd", "2026-12-10T00:00:00Z (18 days left), inside the 30-day window") {
		t.Errorf("want a warning for the due machine: %v", results)
	}
	if !hasResult(results, framework.Info, "prod-etcd-bbbbb", "(99 days left)") {
		t.Errorf("want an info for a machine outside the window: %v", results)
	}
	if !hasResult(results, framework.Warning, "EtcdadmCluster eksa-system/prod-etcd spec.infrastructureTemplate.name", "rolling every etcd machine", "due: prod-etcd-aaaaa (2026-12-10)", "emitted VSphereMachineTemplate eksa-system/"+name) {
		t.Errorf("want a warning describing the roll: %v", results)
	}
	return out, copied, name
}

// checkEtcdRollInProgress: the output (with the copy) rendered again
// changes nothing, then or two weeks later.
func checkEtcdRollInProgress(t *testing.T, out, copied, name string) {
	t.Helper()
	// Idempotent: the output (with the copy) rendered again changes nothing.
	second := parse(t, out+"---\n"+copied)
	before := render(t, second)
	added2, results2 := Apply(second, cfg(30), now)
	if len(added2) != 0 || render(t, second) != before {
		t.Errorf("second render changed something (added %d):\n%s", len(added2), render(t, second))
	}
	if !hasResult(results2, framework.Info, "etcd roll in place", name, "made to replace prod-etcd-aaaaa, prod-etcd-bbbbb, prod-etcd-ccccc", "still due: prod-etcd-aaaaa (2026-12-10)") {
		t.Errorf("second render must say the roll is in progress: %v", results2)
	}
	if !strings.Contains(copied, "rotate-certs.dev/replaces-machines: 'prod-etcd-aaaaa,prod-etcd-bbbbb,prod-etcd-ccccc'") {
		t.Errorf("the copy must list the machines it replaces:\n%s", copied)
	}

	// Time passing with the same evidence keeps the name.
	later := parse(t, out+"---\n"+copied)
	if added3, _ := Apply(later, cfg(30), now.AddDate(0, 0, 15)); len(added3) != 0 || render(t, later) != before {
		t.Error("the same evidence two weeks later must not roll again")
	}
}

// checkNextYearsEtcdRoll: a year on, the replacement machines are due.
func checkNextYearsEtcdRoll(t *testing.T, out, copied, name string) {
	t.Helper()
	// A year on, the replacement machines are due: the next copy takes the
	// next number after the copy in place, and the first copy is reported
	// as one to delete.
	next := out + "---\n" + copied
	for i, r := range [][2]string{{"aaaaa", "2027-12-01T00:00:00Z"}, {"bbbbb", "2027-12-02T00:00:00Z"}, {"ccccc", "2027-12-03T00:00:00Z"}} {
		m := etcdMachine("prod-etcd-"+r[0], []string{"2026-12-10T00:00:00Z", "2027-03-01T00:00:00Z", "2027-03-02T00:00:00Z"}[i])
		if !strings.Contains(next, m) {
			t.Fatalf("machine %s not in the output", r[0])
		}
		next = strings.Replace(next, m, etcdMachine("prod-etcd-new"+r[0][:2], r[1]), 1)
	}
	nextItems := parse(t, next)
	added4, results4 := Apply(nextItems, cfg(30), now.AddDate(1, 0, 0))
	if len(added4) != 1 {
		t.Fatalf("want a second roll a year later, got %d copies", len(added4))
	}
	if n := added4[0].GetName(); n != "prod-etcd-template-1700000000002" {
		t.Errorf("second copy name %q, want the next number", n)
	}
	if !strings.Contains(added4[0].MustString(), "copied-from: 'prod-etcd-template-1700000000001'\n") {
		t.Error("the second copy must name the template it was copied from")
	}
	if !strings.Contains(added4[0].MustString(), "replaces-machines: 'prod-etcd-newaa,prod-etcd-newbb,prod-etcd-newcc'\n") {
		t.Errorf("the second copy must list the replacement machines:\n%s", added4[0].MustString())
	}
	if !hasResult(results4, framework.Info, "VSphereMachineTemplate eksa-system/"+name, "an earlier etcd-roll copy of prod-etcd-template-1700000000000", "delete it once the roll that replaced it has finished") {
		t.Errorf("the first copy must be reported as deletable: %v", results4)
	}
}

func TestEtcdNotDue(t *testing.T) {
	in := docs(etcdadmCluster, etcdTemplate, etcdMachine("prod-etcd-aaaaa", "2027-06-01T00:00:00Z"))
	items := parse(t, in)
	before := render(t, items)
	added, results := Apply(items, cfg(30), now)
	if len(added) != 0 || render(t, items) != before {
		t.Error("nothing due: nothing may change")
	}
	if !hasResult(results, framework.Info, "EtcdadmCluster eksa-system/prod-etcd", "no etcd machine inside the 30-day window") {
		t.Errorf("want an info saying no roll: %v", results)
	}
}

func TestEtcdNoEvidence(t *testing.T) {
	out, added, results := run(t, docs(etcdadmCluster, etcdTemplate), cfg(30))
	if added != "" || strings.Contains(out, "prod-etcd-template-1700000000001") {
		t.Error("no evidence: no roll")
	}
	if !hasResult(results, framework.Info, "no certificate expiry evidence") {
		t.Errorf("want an info about missing evidence: %v", results)
	}
}

func TestEtcdEvidenceSources(t *testing.T) {
	statusMachine := strings.Replace(etcdMachine("prod-etcd-sssss", "unused"),
		"  annotations:\n    machine.cluster.x-k8s.io/certificates-expiry: \"unused\"\n", "", 1) + "status:\n  certificatesExpiryDate: \"2026-12-12T00:00:00Z\"\n"
	bothMachine := etcdMachine("prod-etcd-wwwww", "2027-06-01T00:00:00Z") + "status:\n  certificatesExpiryDate: \"2026-12-01T00:00:00Z\"\n"
	eksaCluster := `apiVersion: anywhere.eks.amazonaws.com/v1alpha1
kind: Cluster
metadata:
  name: prod
  namespace: default
spec:
  externalEtcdConfiguration:
    count: 3
status:
  clusterCertificateInfo:
  - machine: prod-etcd-eeeee
    expiresInDays: 12
  - machine: prod-9qz7m
    expiresInDays: 200
`
	tests := []struct {
		name     string
		in       string
		roll     bool
		evidence []string // substrings of one result each
	}{
		{"status", docs(etcdadmCluster, etcdTemplate, statusMachine), true,
			[]string{"Machine eksa-system/prod-etcd-sssss status.certificatesExpiryDate: etcd machine prod-etcd-sssss of EtcdadmCluster eksa-system/prod-etcd: certificates expire 2026-12-12T00:00:00Z (20 days left)"}},
		{"annotation wins over status", docs(etcdadmCluster, etcdTemplate, bothMachine), false,
			[]string{"Machine eksa-system/prod-etcd-wwwww metadata.annotations[machine.cluster.x-k8s.io/certificates-expiry]: etcd machine prod-etcd-wwwww of EtcdadmCluster eksa-system/prod-etcd: certificates expire 2027-06-01T00:00:00Z"}},
		{"EKS Anywhere status by naming", docs(etcdadmCluster, etcdTemplate, eksaCluster), true,
			[]string{"Cluster default/prod status.clusterCertificateInfo[0]: etcd machine prod-etcd-eeeee of EtcdadmCluster eksa-system/prod-etcd: certificates expire in 12 days",
				"Cluster default/prod status.clusterCertificateInfo[1]: machine prod-9qz7m: certificates expire in 200 days"}},
		{"EKS Anywhere status by Machine", docs(etcdadmCluster, etcdTemplate, cpMachine, strings.Replace(eksaCluster, "prod-9qz7m\n    expiresInDays: 200", "prod-xk2lp\n    expiresInDays: 5", 1)), true,
			[]string{"status.clusterCertificateInfo[1]: control-plane machine prod-xk2lp: certificates expire in 5 days", "Machine eksa-system/prod-xk2lp status.certificatesExpiryDate: control-plane machine prod-xk2lp: certificates expire 2026-12-01T00:00:00Z (9 days left), inside the 30-day window; KubeadmControlPlane rolls it"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, added, results := run(t, tt.in, cfg(30))
			if errs := errorsOf(results); len(errs) > 0 {
				t.Fatal(errs)
			}
			if (added != "") != tt.roll {
				t.Errorf("roll = %v, want %v; results %v", added != "", tt.roll, results)
			}
			for _, want := range tt.evidence {
				found := false
				for _, r := range results {
					found = found || strings.Contains(resultLine(r), want)
				}
				if !found {
					t.Errorf("no result containing %q in:\n%v", want, results)
				}
			}
		})
	}
}

func TestControlPlaneEvidenceDoesNotRollEtcd(t *testing.T) {
	// Only the control-plane machine is due: etcd must not roll.
	in := docs(etcdadmCluster, etcdTemplate, etcdMachine("prod-etcd-aaaaa", "2027-06-01T00:00:00Z"), cpMachine)
	_, added, results := run(t, in, cfg(30))
	if added != "" {
		t.Errorf("a due control-plane machine must not roll etcd:\n%s", added)
	}
	if !hasResult(results, framework.Warning, "control-plane machine prod-xk2lp") {
		t.Errorf("the due control-plane machine must be reported: %v", results)
	}
}

func TestEtcdRollProblems(t *testing.T) {
	due := etcdMachine("prod-etcd-aaaaa", "2026-12-10T00:00:00Z")
	tests := []struct {
		name, in string
		sev      framework.Severity
		want     string
	}{
		{"malformed annotation", docs(etcdadmCluster, etcdTemplate, etcdMachine("prod-etcd-aaaaa", "10 Dec 2026")), framework.Error,
			`Machine eksa-system/prod-etcd-aaaaa metadata.annotations[machine.cluster.x-k8s.io/certificates-expiry]: "10 Dec 2026" is not an RFC 3339 date`},
		{"malformed status", docs(cpMachine[:strings.Index(cpMachine, "status:")] + "status:\n  certificatesExpiryDate: yesterday\n"), framework.Error,
			`Machine eksa-system/prod-xk2lp status.certificatesExpiryDate: "yesterday" is not an RFC 3339 date`},
		{"malformed EKS-A status", docs("apiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: Cluster\nmetadata: {name: prod}\nstatus:\n  clusterCertificateInfo:\n  - machine: m\n    expiresInDays: soon\n"), framework.Error,
			`Cluster /prod status.clusterCertificateInfo[0].expiresInDays: "soon" is not a whole number of days`},
		{"unknown EtcdadmCluster version", docs(strings.Replace(etcdadmCluster, "v1beta1\nkind: EtcdadmCluster", "v1beta2\nkind: EtcdadmCluster", 1)), framework.Error,
			"EtcdadmCluster eksa-system/prod-etcd apiVersion: unsupported apiVersion etcdcluster.cluster.x-k8s.io/v1beta2"},
		{"template missing", docs(etcdadmCluster, due), framework.Warning,
			"EtcdadmCluster eksa-system/prod-etcd spec.infrastructureTemplate: etcd machines are due (prod-etcd-aaaaa (2026-12-10)) but VSphereMachineTemplate eksa-system/prod-etcd-template-1700000000000 is not in the input"},
		{"template of another API group", docs(etcdadmCluster, strings.Replace(etcdTemplate, "infrastructure.cluster.x-k8s.io/v1beta1", "infrastructure.example.com/v1", 1), due), framework.Warning,
			"EtcdadmCluster eksa-system/prod-etcd spec.infrastructureTemplate: etcd machines are due (prod-etcd-aaaaa (2026-12-10)) but VSphereMachineTemplate eksa-system/prod-etcd-template-1700000000000 is not in the input"},
		{"template name missing", docs(strings.Replace(etcdadmCluster, "    name: prod-etcd-template-1700000000000 # written by eksctl\n", "", 1), due), framework.Error,
			"EtcdadmCluster eksa-system/prod-etcd spec.infrastructureTemplate.name: required"},
		{"already expired", docs(etcdadmCluster, etcdTemplate, etcdMachine("prod-etcd-aaaaa", "2026-11-01T00:00:00Z")), framework.Warning,
			"certificates already expired (prod-etcd-aaaaa (2026-11-01))"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			items := parse(t, tt.in+"---\n"+kcpV1beta1)
			before := render(t, items)
			added, results := Apply(items, cfg(30), now)
			if !hasResult(results, tt.sev, tt.want) {
				t.Fatalf("no %s result containing %q in:\n%v", tt.sev, tt.want, results)
			}
			if tt.sev == framework.Error {
				if added != nil || render(t, items) != before {
					t.Error("an error must leave everything unchanged and add nothing")
				}
			}
		})
	}
}

func TestDesignFields(t *testing.T) {
	eksa := `apiVersion: anywhere.eks.amazonaws.com/v1alpha1
kind: Cluster
metadata:
  name: prod
  namespace: default
spec:
  externalEtcdConfiguration:
    count: 3
`
	c := cfg(30)
	c.EKSAnywhereDesignFields = true
	in := docs(etcdadmCluster, etcdTemplate, etcdMachine("prod-etcd-aaaaa", "2026-12-10T00:00:00Z"), eksa)
	out, added, results := run(t, in, c)
	if errs := errorsOf(results); len(errs) > 0 {
		t.Fatal(errs)
	}
	if added != "" || strings.Contains(out, "prod-etcd-template-1700000000001") {
		t.Error("with the design fields the controller rolls; no template copy")
	}
	for _, want := range []string{
		"  rolloutBefore:\n    certificatesExpiryDays: 30\n",
		"  certificatesConfiguration:\n    rolloutBeforeExpiry:\n      enabled: true\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, want := range [][]string{
		{"EtcdadmCluster eksa-system/prod-etcd spec.rolloutBefore.certificatesExpiryDays", "the live CRD must carry it"},
		{"Cluster default/prod spec.certificatesConfiguration.rolloutBeforeExpiry.enabled", "the live CRD must carry it"},
	} {
		if !hasResult(results, framework.Info, want...) {
			t.Errorf("want info %v in %v", want, results)
		}
	}
	again, _, _ := run(t, out, c)
	if again != out {
		t.Errorf("second render changed the design fields:\n%s", again)
	}

	// Without the flag, neither design field is written.
	plain, _, _ := run(t, docs(etcdadmCluster, eksa), cfg(30))
	if strings.Contains(plain, "rolloutBefore") || strings.Contains(plain, "certificatesConfiguration") {
		t.Errorf("design fields must not be written by default:\n%s", plain)
	}

	// The design field on EtcdadmCluster follows kubeadm's default validity.
	c.CertificatesExpiryDays = 400
	_, _, res := run(t, docs(etcdadmCluster), c)
	if !hasResult(res, framework.Error, "EtcdadmCluster eksa-system/prod-etcd spec.rolloutBefore.certificatesExpiryDays", "400 must be less than 365") {
		t.Errorf("want an error for 400 days: %v", res)
	}

	// kinds without EtcdadmCluster: no design field, no roll.
	c = cfg(30)
	c.Kinds = []string{policy.KindKubeadmControlPlane}
	out, added, _ = run(t, in, c)
	if added != "" || strings.Contains(out, "prod-etcd-template-1700000000001") {
		t.Error("EtcdadmCluster not in kinds: no roll")
	}
}

func TestCopyWithoutPathAndLegacyPath(t *testing.T) {
	src := parse(t, etcdTemplate)[0]
	_ = src.PipeE(yaml.ClearAnnotation("internal.config.kubernetes.io/path"))
	c, err := copyTemplate(src, "x-2", "x", []string{"m-b", "m-a"})
	if err != nil {
		t.Fatal(err)
	}
	if p := c.GetAnnotations()["internal.config.kubernetes.io/path"]; p != "" {
		t.Errorf("a template from no file gives a copy in no file, got %q", p)
	}
	legacy := parse(t, strings.Replace(etcdTemplate, "internal.config.kubernetes.io/path", "config.kubernetes.io/path", 1))[0]
	c, err = copyTemplate(legacy, "x-2", "x", nil)
	if err != nil {
		t.Fatal(err)
	}
	a := c.GetAnnotations()
	if a["config.kubernetes.io/path"] != a["internal.config.kubernetes.io/path"] || !strings.HasSuffix(a["config.kubernetes.io/path"], "_x-2.yaml") {
		t.Errorf("legacy and current path annotations must agree on the new file: %v", a)
	}
}

func TestLocalConfigDumpIsEvidence(t *testing.T) {
	// A dump of Machines marked local-config is read (and never applied).
	dump := strings.Replace(etcdMachine("prod-etcd-aaaaa", "2026-12-10T00:00:00Z"), "  annotations:\n", "  annotations:\n    config.kubernetes.io/local-config: \"true\"\n", 1)
	out, added, _ := run(t, docs(etcdadmCluster, etcdTemplate, dump), cfg(30))
	if added == "" || !strings.Contains(out, "prod-etcd-template-1700000000001") {
		t.Error("a local-config Machine dump must count as evidence")
	}
	// A local-config EtcdadmCluster is configuration for a tool, not managed.
	local := strings.Replace(etcdadmCluster, "  annotations:\n", "  annotations:\n    config.kubernetes.io/local-config: \"true\"\n", 1)
	_, added, _ = run(t, docs(local, etcdTemplate, dump), cfg(30))
	if added != "" {
		t.Error("a local-config EtcdadmCluster must not be rolled")
	}
}

func TestUnknownEKSAnywhereVersion(t *testing.T) {
	// An EKS Anywhere Cluster of an unknown version is an error only where
	// the policy would write it; otherwise it is left alone, with a
	// warning when its status could have been etcd evidence.
	eksa := "apiVersion: anywhere.eks.amazonaws.com/v1alpha2\nkind: Cluster\nmetadata:\n  name: prod\n  labels: {cluster.x-k8s.io/cluster-name: prod}\nstatus:\n  clusterCertificateInfo:\n  - machine: prod-etcd-eeeee\n    expiresInDays: 3\n"
	design := func(kinds ...string) policy.ClusterAPI {
		c := cfg(30)
		c.EKSAnywhereDesignFields = true
		if len(kinds) > 0 {
			c.Kinds = kinds
		}
		return c
	}
	otherSelector := design()
	otherSelector.Selector = &kube.Selector{MatchLabels: map[string]string{"cluster.x-k8s.io/cluster-name": "dev"}}
	tests := []struct {
		name string
		c    policy.ClusterAPI
		sev  framework.Severity
		want string
	}{
		{"design fields on: written, so an error", design(), framework.Error, "Cluster /prod apiVersion: unsupported apiVersion anywhere.eks.amazonaws.com/v1alpha2 of an EKS Anywhere Cluster"},
		{"design fields off: evidence not read", cfg(30), framework.Warning, "Cluster /prod apiVersion: unsupported apiVersion anywhere.eks.amazonaws.com/v1alpha2 of an EKS Anywhere Cluster (supported: anywhere.eks.amazonaws.com/v1alpha1): its status.clusterCertificateInfo is not read"},
		{"not in kinds", design(policy.KindEtcdadmCluster), framework.Info, "not read, and not managed by this policy"},
		{"not selected", otherSelector, framework.Info, "not read, and not managed by this policy"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, added, results := run(t, docs(etcdadmCluster, etcdTemplate, eksa), tt.c)
			if !hasResult(results, tt.sev, tt.want) {
				t.Errorf("no %s result %q in:\n%v", tt.sev, tt.want, results)
			}
			if tt.sev != framework.Error && len(errorsOf(results)) > 0 {
				t.Errorf("an object the policy does not write must not fail the render: %v", errorsOf(results))
			}
			if added != "" {
				t.Error("the status of an unknown version must not roll etcd")
			}
		})
	}
}

func TestKindsSelectEKSAnywhereCluster(t *testing.T) {
	eksa := "apiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: Cluster\nmetadata:\n  name: prod\n  namespace: default\nspec:\n  kubernetesVersion: \"1.33\"\n"
	c := cfg(30)
	c.EKSAnywhereDesignFields = true
	out, _, results := run(t, docs(etcdadmCluster, eksa), c)
	if !strings.Contains(out, "rolloutBeforeExpiry:\n      enabled: true") {
		t.Errorf("default kinds include the EKS Anywhere Cluster:\n%s", out)
	}
	c.Kinds = []string{policy.KindEtcdadmCluster}
	out, _, results = run(t, docs(etcdadmCluster, eksa), c)
	if strings.Contains(out, "certificatesConfiguration") {
		t.Errorf("kinds without %s must leave the EKS Anywhere Cluster alone:\n%s", policy.KindEKSAnywhereCluster, out)
	}
	if !strings.Contains(out, "certificatesExpiryDays: 30") {
		t.Errorf("the EtcdadmCluster in kinds still gets its design field:\n%s", out)
	}
	if len(errorsOf(results)) > 0 {
		t.Error(errorsOf(results))
	}
	c.Kinds = []string{policy.KindEKSAnywhereCluster}
	out, _, _ = run(t, docs(etcdadmCluster, eksa), c)
	if strings.Contains(out, "rolloutBefore:") || !strings.Contains(out, "enabled: true") {
		t.Errorf("kinds with only the EKS Anywhere Cluster: its field only:\n%s", out)
	}
}

func TestExpiredWording(t *testing.T) {
	// An expiry an hour ago is "less than a day ago", never "1 days".
	m := etcdMachine("prod-etcd-aaaaa", "2026-11-21T23:00:00Z")
	_, _, results := run(t, docs(etcdadmCluster, etcdTemplate, m), cfg(30))
	if !hasResult(results, framework.Warning, "certificates expired 2026-11-21T23:00:00Z (less than a day ago)") {
		t.Errorf("want an expired warning in days: %v", results)
	}
	for _, r := range results {
		if strings.Contains(r.Message, "1 days") {
			t.Errorf("bad plural: %s", r.Message)
		}
	}
	eksa := "apiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: Cluster\nmetadata: {name: prod, namespace: default}\nstatus:\n  clusterCertificateInfo:\n  - {machine: prod-etcd-eeeee, expiresInDays: 1}\n  - {machine: prod-etcd-fffff, expiresInDays: -2}\n"
	_, _, results = run(t, docs(etcdadmCluster, etcdTemplate, eksa), cfg(30))
	if !hasResult(results, framework.Warning, "prod-etcd-eeeee", "certificates expire in 1 day (as of the cluster's last certificate scan), inside the 30-day window") {
		t.Errorf("want 1 day: %v", results)
	}
	if !hasResult(results, framework.Warning, "prod-etcd-fffff", "certificates expired (expiresInDays -2 as of the cluster's last certificate scan)") {
		t.Errorf("want an expired relative statement without a made-up date: %v", results)
	}
}

// The next name may be taken already: by a template that is not a copy of
// the one in place (EKS Anywhere's own next version, a user's), which the
// roll skips, or by the copy an earlier render made, which it reuses.
func TestEtcdRollNameTaken(t *testing.T) {
	due := etcdMachine("prod-etcd-aaaaa", "2026-12-10T00:00:00Z")
	foreign := strings.NewReplacer("name: prod-etcd-template-1700000000000", "name: prod-etcd-template-1700000000001",
		"path: clusters/prod/etcd.yaml", "path: clusters/prod/other.yaml").Replace(etcdTemplate)
	items := parse(t, docs(etcdadmCluster, etcdTemplate, foreign, due))
	added, results := Apply(items, cfg(30), now)
	if errs := errorsOf(results); len(errs) > 0 {
		t.Fatal(errs)
	}
	if len(added) != 1 || added[0].GetName() != "prod-etcd-template-1700000000002" {
		t.Fatalf("want a copy named ...0002 (...0001 is taken), got %v", added)
	}
	if !strings.Contains(render(t, items), "name: prod-etcd-template-1700000000002 # written by eksctl") {
		t.Error("the EtcdadmCluster must point at the new copy")
	}

	// The copy of an earlier render, for the same machines, is reused.
	first := parse(t, docs(etcdadmCluster, etcdTemplate, due))
	added, _ = Apply(first, cfg(30), now)
	if len(added) != 1 {
		t.Fatal("want a copy")
	}
	again := parse(t, docs(etcdadmCluster, etcdTemplate, added[0].MustString(), due))
	added2, results2 := Apply(again, cfg(30), now)
	if len(added2) != 0 {
		t.Errorf("the existing copy must be reused, got %d new", len(added2))
	}
	if !hasResult(results2, framework.Warning, "reusing the existing VSphereMachineTemplate eksa-system/prod-etcd-template-1700000000001") {
		t.Errorf("want the reuse said: %v", results2)
	}
}

// Two etcd clusters that share one template get a copy each: one copy
// lists the machines of one cluster only.
func TestEtcdRollSharedTemplate(t *testing.T) {
	other := strings.NewReplacer("name: prod-etcd\n", "name: dev-etcd\n", "path: clusters/prod/etcd.yaml", "path: clusters/dev/etcd.yaml").Replace(etcdadmCluster)
	otherMachine := strings.ReplaceAll(etcdMachine("dev-etcd-aaaaa", "2026-12-11T00:00:00Z"), "etcd-cluster: prod-etcd", "etcd-cluster: dev-etcd")
	otherMachine = strings.Replace(otherMachine, "    name: prod-etcd\n", "    name: dev-etcd\n", 1)
	items := parse(t, docs(etcdadmCluster, other, etcdTemplate, etcdMachine("prod-etcd-aaaaa", "2026-12-10T00:00:00Z"), otherMachine))
	added, results := Apply(items, cfg(30), now)
	if errs := errorsOf(results); len(errs) > 0 {
		t.Fatal(errs)
	}
	var names []string
	for _, a := range added {
		names = append(names, a.GetName()+" "+a.GetAnnotations()[replacesAnnotation])
	}
	if strings.Join(names, "; ") != "prod-etcd-template-1700000000001 prod-etcd-aaaaa; prod-etcd-template-1700000000002 dev-etcd-aaaaa" {
		t.Errorf("copies = %v, want one per cluster", names)
	}
}

// TestStaleCopiesAreTemplates: only a machine template is an etcd roll's
// copy - the kinds the package reads (Reads). Another object carrying the
// copied-from annotation, or one without a kind, is not reported, in
// function mode's fast path (where it is never read) as on kyaml's
// (found by FuzzFastPathMatchesKyaml); a stale template copy still is.
func TestStaleCopiesAreTemplates(t *testing.T) {
	copyOf := func(kind, name string) string {
		return fmt.Sprintf("apiVersion: infrastructure.cluster.x-k8s.io/v1beta1\n%smetadata:\n  name: %s\n  namespace: eksa-system\n"+
			"  annotations:\n    rotate-certs.dev/copied-from: prod-etcd-template-1699999999999\nspec: {}\n", kind, name)
	}
	for _, tc := range []struct {
		name, item string
		reported   bool
	}{
		{"a stale template copy", copyOf("kind: VSphereMachineTemplate\n", "old-copy"), true},
		{"another kind", copyOf("kind: Widget\n", "widget"), false},
		{"no kind", copyOf("", "nameless"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, results := Apply(parse(t, docs(etcdadmCluster, etcdTemplate, tc.item)), cfg(30), now)
			require.Equal(t, tc.reported, hasResult(results, framework.Info, "no EtcdadmCluster in the input points at any more"), "%v", results)
		})
	}
}
