package kube

import "strings"

// MachineKind is what rotate-certs knows of one kind whose objects roll
// out machines, or say when machines roll before their certificates
// expire: one row of the machine-kind table (Cluster API's kinds and its
// providers', etcdadm's EtcdadmCluster, the EKS Anywhere Cluster). It is
// data: `spec.clusterAPI` (fn/clusterapi) writes the expiry field of the
// versions it lists, `diff` (fn/trustdiff) reads a change of a rollout
// field as machines rolled out.
type MachineKind struct {
	Group, Kind string
	// Versions are the API versions rotate-certs knows, each with where
	// it keeps its fields; a row whose one version is "" holds for every
	// version (a provider's kind rotate-certs only reads).
	Versions []MachineVersion
}

// MachineVersion is where one API version of a machine kind keeps its
// fields.
type MachineVersion struct {
	// Version is the API version; "" for every version.
	Version string
	// Rollout are the fields whose change rolls the object's machines out.
	Rollout [][]string
	// Expiry is certificatesExpiryDays - machines roll that many days
	// before their certificates expire - and Validity
	// certificateValidityPeriodDays, the certificates' lifetime; nil when
	// the version has none.
	Expiry, Validity []string
}

// Machine-kind API groups.
const (
	GroupCluster      = "cluster.x-k8s.io"
	GroupControlPlane = "controlplane.cluster.x-k8s.io"
	GroupEtcdCluster  = "etcdcluster.cluster.x-k8s.io"
	GroupEKSAnywhere  = "anywhere.eks.amazonaws.com"
)

// kcp are the fields of a KubeadmControlPlane's spec at each version, as
// the CRDs of sigs.k8s.io/cluster-api v1.14 have them
// (controlplane/kubeadm/config/crd/bases): v1beta1 keeps rolloutAfter and
// rolloutBefore in the spec, v1beta2 under spec.rollout (with strategy,
// which rolls nothing out by itself). A KubeadmControlPlaneTemplate nests
// the same spec under spec.template.spec (kcpTemplate).
func kcp(version string, rollout ...string) MachineVersion {
	before := strings.Split(rollout[len(rollout)-1], ".")
	v := MachineVersion{Version: version,
		Expiry:   append(append([]string{"spec"}, before...), "certificatesExpiryDays"),
		Validity: []string{"spec", "kubeadmConfigSpec", "clusterConfiguration", "certificateValidityPeriodDays"}}
	for _, f := range append([]string{"machineTemplate", "kubeadmConfigSpec"}, rollout...) {
		v.Rollout = append(v.Rollout, append([]string{"spec"}, strings.Split(f, ".")...))
	}
	return v
}

// kcpTemplate is the version of a KubeadmControlPlaneTemplate: v's
// expiry fields under spec.template, and no rollout (a template rolls out
// nothing by itself).
func kcpTemplate(v MachineVersion) MachineVersion {
	nest := func(p []string) []string { return append([]string{"spec", "template"}, p...) }
	return MachineVersion{Version: v.Version, Expiry: nest(v.Expiry), Validity: nest(v.Validity)}
}

// fields makes a version of the given rollout fields (dotted paths).
func fields(version string, rollout ...string) MachineVersion {
	v := MachineVersion{Version: version}
	for _, f := range rollout {
		v.Rollout = append(v.Rollout, strings.Split(f, "."))
	}
	return v
}

// machineRows is the one list of the machine kinds. Cluster API's core
// kinds as its CRDs have them (core/config/crd/bases, v1.14: v1beta2 moved
// rolloutAfter to spec.rollout.after); EtcdadmCluster's served versions
// (aws/etcdadm-controller), both with spec.infrastructureTemplate; the EKS
// Anywhere Cluster's; k3s' and Talos' control planes at every version.
var machineRows = []MachineKind{
	{Group: GroupControlPlane, Kind: "KubeadmControlPlane", Versions: []MachineVersion{
		kcp("v1beta1", "rolloutAfter", "rolloutBefore"),
		kcp("v1beta2", "rollout.after", "rollout.before"),
	}},
	{Group: GroupControlPlane, Kind: "KubeadmControlPlaneTemplate", Versions: []MachineVersion{
		kcpTemplate(kcp("v1beta1", "rolloutAfter", "rolloutBefore")),
		kcpTemplate(kcp("v1beta2", "rollout.after", "rollout.before")),
	}},
	{Group: GroupCluster, Kind: "MachineDeployment", Versions: []MachineVersion{
		fields("v1beta1", "spec.template", "spec.rolloutAfter"),
		fields("v1beta2", "spec.template", "spec.rollout.after"),
	}},
	{Group: GroupCluster, Kind: "MachineSet", Versions: []MachineVersion{fields("", "spec.template")}},
	{Group: GroupCluster, Kind: "MachinePool", Versions: []MachineVersion{fields("", "spec.template")}},
	{Group: GroupEtcdCluster, Kind: "EtcdadmCluster", Versions: []MachineVersion{
		fields("v1beta1", "spec.etcdadmConfigSpec", "spec.infrastructureTemplate"),
		fields("v1alpha3", "spec.etcdadmConfigSpec", "spec.infrastructureTemplate"),
	}},
	{Group: GroupEKSAnywhere, Kind: "Cluster", Versions: []MachineVersion{{Version: "v1alpha1"}}},
	{Group: GroupControlPlane, Kind: "KThreesControlPlane", Versions: []MachineVersion{
		fields("", "spec.machineTemplate", "spec.kthreesConfigSpec", "spec.rolloutAfter")}},
	{Group: GroupControlPlane, Kind: "TalosControlPlane", Versions: []MachineVersion{
		fields("", "spec.infrastructureTemplate", "spec.controlPlaneConfig", "spec.rolloutStrategy")}},
}

// MachineTable is the machine-kind table, looked up by API group and kind.
// Its zero value is the table rotate-certs ships (MachineKinds).
type MachineTable struct {
	table Table[GroupKind, MachineKind]
}

// newMachineTable returns a table of rows. Tests add a kind with it.
func newMachineTable(rows ...MachineKind) MachineTable {
	return MachineTable{NewTable(func(k MachineKind) GroupKind { return GroupKind{Group: k.Group, Kind: k.Kind} }, rows...)}
}

// machineTable is built once from machineRows and never changed.
var machineTable = newMachineTable(machineRows...)

// MachineKinds returns the table rotate-certs ships.
func MachineKinds() MachineTable { return machineTable }

func (t MachineTable) orDefault() Table[GroupKind, MachineKind] {
	if t.table.IsZero() {
		return machineTable.table
	}
	return t.table
}

// Lookup returns the row of kind in API group.
func (t MachineTable) Lookup(group, kind string) (MachineKind, bool) {
	return t.orDefault().Lookup(GroupKind{Group: group, Kind: kind})
}

// At returns the fields of version of k, listed by its own name: a row
// for every version ("") knows no version's expiry field.
func (k MachineKind) At(version string) (MachineVersion, bool) {
	for _, v := range k.Versions {
		if v.Version == version && version != "" {
			return v, true
		}
	}
	return MachineVersion{}, false
}

// Writes reports whether some version of k has an expiry field to write.
func (k MachineKind) Writes() bool {
	for _, v := range k.Versions {
		if v.Expiry != nil {
			return true
		}
	}
	return false
}

// RolloutFields are the rollout fields of every version of k, each once,
// in table order: what a change of an object of any version rolls out (a
// field of another version is absent from the object).
func (k MachineKind) RolloutFields() [][]string {
	var out [][]string
	seen := map[string]bool{}
	for _, v := range k.Versions {
		for _, f := range v.Rollout {
			if p := JoinPath(f); !seen[p] {
				seen[p] = true
				out = append(out, f)
			}
		}
	}
	return out
}

// Supported names the versions k lists, for messages: "group/v1beta1,
// group/v1beta2".
func (k MachineKind) Supported() string {
	var vs []string
	for _, v := range k.Versions {
		vs = append(vs, k.Group+"/"+v.Version)
	}
	return strings.Join(vs, ", ")
}
