package clusterapi

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// designFieldNote is appended to every result that writes a field of the EKS
// Anywhere design.
const designFieldNote = "a field of the EKS Anywhere certificate auto-renewal design that released CRDs lack: the live CRD must carry it, or applying it fails (or the field is silently pruned)"

// planEtcdadm handles one selected EtcdadmCluster: with
// eksAnywhereDesignFields it writes the design's expiry field; otherwise it
// rolls the etcd machines when the evidence says so.
func (a *applier) planEtcdadm(node *yaml.RNode, ref kube.Ref) {
	evidence := a.evidence[kube.KeyOf(node)]
	if !a.cfg.EKSAnywhereDesignFields {
		a.planRoll(node, ref, evidence)
		return
	}
	days := a.cfg.CertificatesExpiryDays
	field := kube.JoinPath(etcdadmDesignExpiry)
	// etcdadm issues etcd certificates for a year; the window must be
	// shorter, as for kubeadm's default.
	if err := checkEtcdadmExpiryDays(days); err != nil {
		a.errorf(ref, field, "cannot set certificatesExpiryDays: %v", err)
		return
	}
	current, present, err := readInt(node, etcdadmDesignExpiry)
	if err != nil {
		a.fieldErr(ref, field, err)
		return
	}
	if present && current == days {
		a.infof(ref, field, "certificatesExpiryDays is already %d (%s)", days, designFieldNote)
	} else {
		a.edits = append(a.edits, func() error {
			_, err := setInt(node, etcdadmDesignExpiry, days)
			return err
		})
		a.infof(ref, field, "set certificatesExpiryDays to %d: %s", days, designFieldNote)
	}
	if len(evidence) > 0 {
		a.infof(ref, kube.JoinPath(infrastructureTemplate), "no evidence-driven roll: with eksAnywhereDesignFields the etcdadm-controller is expected to roll its machines from the design field")
	}
}

// planRoll rolls the etcd machines of an EtcdadmCluster whose evidence is
// inside the window: it emits a copy of the infrastructure template under
// the next name (nextName: the trailing number incremented, as EKS Anywhere
// names template versions) and points spec.infrastructureTemplate at it. etcdadm-controller replaces every
// machine that was not cloned from the current template, which renews every
// etcd certificate. While the template in place is a copy made to replace
// every machine that is due, that roll is in progress and nothing changes
// (see decideRoll). Nothing else - in particular no KubeadmControlPlane - is
// touched.
func (a *applier) planRoll(node *yaml.RNode, ref kube.Ref, evidence []evidence) {
	days := a.cfg.CertificatesExpiryDays
	refField := kube.JoinPath(infrastructureTemplate)
	if len(evidence) == 0 {
		a.infof(ref, "", "no certificate expiry evidence for its machines in the input, so no etcd roll: include its Machines (annotation %s or status.certificatesExpiryDate) or the EKS Anywhere Cluster with status.clusterCertificateInfo", expiryAnnotation)
		return
	}
	kind, namespace, name, ok := a.templateRef(node, ref)
	if !ok {
		return
	}
	apiVersion, _ := kube.StringAt(node, append(infrastructureTemplate, "apiVersion"))
	src := a.find(kube.GroupOf(apiVersion), kind, namespace, name)
	base := name
	// replacing stays nil unless the template in place is a copy that
	// rotate-certs made; a copy without the list replaces no machine
	// known here, so a due machine starts a new roll.
	var replacing []string
	if src != nil {
		ann := src.GetAnnotations(copiedFromAnnotation, replacesAnnotation)
		if from := ann[copiedFromAnnotation]; kube.ValidObjectName(from) {
			base = from
			replacing = parseMachines(ann[replacesAnnotation])
		}
	}
	inPlace := ""
	if replacing != nil {
		inPlace = fmt.Sprintf("; the infrastructure template stays %s, the copy of %s made to replace %s", name, base, listOrNone(replacing))
	}
	roll, ok := decideRoll(name, evidence, replacing, a.now, days, a.takenFor(kind, namespace, name, evidence))
	if !ok {
		a.infof(ref, "", "no etcd machine inside the %d-day window (%d statement(s) read): no roll%s", days, len(evidence), inPlace)
		return
	}
	dueList := describeDue(roll.Due)
	defer func() {
		if len(roll.Expired) > 0 {
			a.warnf(ref, "", "certificates already expired (%s): the etcd cluster may be unable to admit replacement members; if the roll stalls, renew with `eksctl anywhere renew certificates --component etcd`", describeDue(roll.Expired))
		}
	}()
	if roll.InProgress {
		a.infof(ref, refField+".name", "etcd roll in place: the infrastructure template %s is the copy of %s made to replace %s, and etcdadm-controller replaces every machine not cloned from it, so no new copy; still due: %s", name, base, strings.Join(replacing, ", "), dueList)
		return
	}
	if src == nil {
		a.warnf(ref, refField, "etcd machines are due (%s) but %s %s is not in the input, so it cannot be copied to roll them: add it to the package, or renew with `eksctl anywhere renew certificates --component etcd`", dueList, kind, nsName(namespace, name))
		return
	}
	emitted, ok := a.emitCopy(src, kind, namespace, name, roll)
	if !ok {
		return
	}
	a.edits = append(a.edits, func() error {
		_, err := setScalar(node, append(infrastructureTemplate, "name"), roll.Name, yaml.NodeTagString)
		return err
	})
	why := ""
	if replacing != nil {
		var fresh []string
		for _, e := range roll.Due {
			if !slices.Contains(replacing, e.Machine) && !slices.Contains(fresh, e.Machine) {
				fresh = append(fresh, e.Machine)
			}
		}
		why = fmt.Sprintf(". The copy in place was made to replace %s; due and not among them: %s", listOrNone(replacing), strings.Join(fresh, ", "))
	}
	a.warnf(ref, refField+".name", "rolling every etcd machine (%s): infrastructure template %s -> %s (%s, a copy of %s); due: %s%s. Control-plane machines are not rolled for etcd certificates",
		strings.Join(roll.Machines, ", "), name, roll.Name, emitted, nsName(namespace, name), dueList, why)
}

// templateRef reads spec.infrastructureTemplate of an EtcdadmCluster: the
// kind, namespace (the cluster's when unset) and name of the template the
// roll copies. A field that cannot be read or is missing is an error
// result, and ok is false.
func (a *applier) templateRef(node *yaml.RNode, ref kube.Ref) (kind, namespace, name string, ok bool) {
	refField := kube.JoinPath(infrastructureTemplate)
	fields := map[string]*string{"kind": &kind, "name": &name, "namespace": &namespace}
	for _, f := range []string{"kind", "name", "namespace"} {
		v, err := kube.StringAt(node, append(infrastructureTemplate, f))
		if err != nil {
			a.fieldErr(ref, refField+"."+f, err)
			return "", "", "", false
		}
		*fields[f] = v
	}
	if namespace == "" {
		namespace = ref.Namespace
	}
	switch {
	case kind == "":
		a.errorf(ref, refField+".kind", "required: the etcd roll copies the infrastructure template")
		return "", "", "", false
	case name == "":
		a.errorf(ref, refField+".name", "required: the etcd roll copies the infrastructure template")
		return "", "", "", false
	}
	return kind, namespace, name, true
}

// emitCopy plans the copy of the template src (kind namespace/name) under
// roll.Name, unless the input or an earlier bundle already has it, and
// says which: "emitted ..." or "reusing the existing ...". A copy that
// cannot be made is an error result, and ok is false.
func (a *applier) emitCopy(src *yaml.RNode, kind, namespace, name string, roll etcdRoll) (emitted string, ok bool) {
	copyKey := kube.Key{Kind: kind, Namespace: namespace, Name: roll.Name}
	emitted = "reusing the existing " + copyKey.String()
	if _, planned := a.pending[copyKey]; a.find("", kind, namespace, roll.Name) == nil && !planned {
		a.pending[copyKey] = copyOf{from: name, machines: formatMachines(roll.Machines)}
		copied, err := copyTemplate(src, roll.Name, name, roll.Machines)
		if err != nil {
			a.errorf(kube.RefOf(src), "metadata", "copying the infrastructure template: %v", err)
			return "", false
		}
		emitted = "emitted " + copyKey.String()
		if p, _ := kube.FileOf(copied); p != "" {
			emitted += " in " + p
		}
		a.edits = append(a.edits, func() error {
			a.added = append(a.added, copied)
			return nil
		})
	}
	return emitted, true
}

// copyOf is what a template copy is: the template it was copied from and
// the machines it replaces (replacesAnnotation).
type copyOf struct{ from, machines string }

// takenFor returns the names the copy of template kind namespace/name that
// replaces the machines of evidence cannot take: the name of any object of
// that kind and namespace in the input, or planned in this render, unless
// it is that very copy (made from name, replacing the same machines) - an
// earlier render's copy is reused, not copied again. EKS Anywhere or a user
// may have made a template of the next name already; skipping it keeps the
// roll from pointing at a template that is not a copy of this one.
func (a *applier) takenFor(kind, namespace, name string, evidence []evidence) func(string) bool {
	var machines []string
	for _, e := range evidence {
		machines = append(machines, e.Machine)
	}
	want := copyOf{from: name, machines: formatMachines(machines)}
	return func(candidate string) bool {
		if c, ok := a.pending[kube.Key{Kind: kind, Namespace: namespace, Name: candidate}]; ok {
			return c != want
		}
		obj := a.find("", kind, namespace, candidate)
		if obj == nil {
			return false
		}
		ann := obj.GetAnnotations(copiedFromAnnotation, replacesAnnotation)
		return copyOf{from: ann[copiedFromAnnotation], machines: formatMachines(parseMachines(ann[replacesAnnotation]))} != want
	}
}

// staleCopies reports (info) every template copy rotate-certs made that no
// EtcdadmCluster in the output points at: once the roll that replaced it
// has finished, no machine comes from it and it can be deleted. Copies are
// never deleted by rotate-certs: a roll may still be cloning from one, and
// the repository is the user's. It runs after the edits, on the output.
func (a *applier) staleCopies() {
	referenced := map[kube.Key]bool{}
	for _, node := range a.all {
		group, _ := splitAPIVersion(node.GetApiVersion())
		if node.GetKind() != policy.KindEtcdadmCluster || group != groupEtcdCluster {
			continue
		}
		kind, _ := kube.StringAt(node, append(infrastructureTemplate, "kind"))
		name, _ := kube.StringAt(node, append(infrastructureTemplate, "name"))
		namespace, _ := kube.StringAt(node, append(infrastructureTemplate, "namespace"))
		if namespace == "" {
			namespace = node.GetNamespace()
		}
		referenced[kube.Key{Kind: kind, Namespace: namespace, Name: name}] = true
	}
	for _, node := range a.items {
		if !strings.HasSuffix(node.GetKind(), templateSuffix) {
			continue // a copy is of a machine template; what else says so is not read (Reads)
		}
		from := node.GetAnnotations(copiedFromAnnotation)[copiedFromAnnotation]
		if from == "" || referenced[kube.KeyOf(node)] {
			continue
		}
		a.infof(kube.RefOf(node), "", "an earlier etcd-roll copy of %s that no EtcdadmCluster in the input points at any more: delete it once the roll that replaced it has finished", kube.Safe(from))
	}
}

// listOrNone joins names, or says "no machine" for none (a copy whose
// list is missing).
func listOrNone(names []string) string {
	if len(names) == 0 {
		return "no machine listed in " + replacesAnnotation
	}
	return strings.Join(names, ", ")
}

// describeDue lists due statements: "machine (expiry)", earliest first.
func describeDue(due []evidence) string {
	parts := make([]string, 0, len(due))
	for _, e := range due {
		parts = append(parts, fmt.Sprintf("%s (%s)", e.Machine, e.Expiry.Format("2006-01-02")))
	}
	return strings.Join(parts, ", ")
}

// find returns the input object of kind, namespace and name, or nil; of
// API group group unless it is "" (a name taken in any group).
func (a *applier) find(group, kind, namespace, name string) *yaml.RNode {
	for _, n := range a.items {
		if n.GetKind() == kind && n.GetName() == name && n.GetNamespace() == namespace && (group == "" || kube.GroupOf(n.GetApiVersion()) == group) {
			return n
		}
	}
	return nil
}

// Annotations that identify an input resource to kustomize and kyaml; a
// copy is a new resource and must not carry them.
var identityAnnotations = []string{
	"kustomize.config.k8s.io/id",
	kioutil.LegacyIdAnnotation,
	string(kioutil.IdAnnotation),
	kioutil.InternalAnnotationsMigrationResourceIDAnnotation,
}

// copyTemplate returns a copy of the infrastructure template src named
// name, marked as copied from base (src's name) and as replacing machines,
// without the fields a server sets
// (uid, resourceVersion, ...) so that it can be created. When src came from
// a file the copy goes into a new file beside it.
func copyTemplate(src *yaml.RNode, name, base string, machines []string) (*yaml.RNode, error) {
	c := src.Copy()
	if err := c.SetName(name); err != nil {
		return nil, err
	}
	for _, f := range []string{"uid", "resourceVersion", "creationTimestamp", "generation", "managedFields", "selfLink"} {
		if err := c.PipeE(yaml.Lookup("metadata"), yaml.Clear(f)); err != nil {
			return nil, err
		}
	}
	if err := c.PipeE(yaml.Clear("status")); err != nil {
		return nil, err
	}
	srcPath, _ := kube.FileOf(src)
	_, legacy := src.GetAnnotations(kioutil.LegacyPathAnnotation)[kioutil.LegacyPathAnnotation]
	clear := append([]string{kioutil.PathAnnotation, kioutil.IndexAnnotation, kioutil.LegacyPathAnnotation, kioutil.LegacyIndexAnnotation}, identityAnnotations...)
	for _, k := range clear {
		if err := c.PipeE(yaml.ClearAnnotation(k)); err != nil {
			return nil, err
		}
	}
	set := [][2]string{{copiedFromAnnotation, base}, {replacesAnnotation, formatMachines(machines)}}
	if srcPath != "" {
		p := path.Join(path.Dir(srcPath), kube.NewFileName(kube.Key{Kind: c.GetKind(), Namespace: c.GetNamespace(), Name: name}))
		set = append(set, [2]string{kioutil.PathAnnotation, p}, [2]string{kioutil.IndexAnnotation, "0"})
		if legacy {
			set = append(set, [2]string{kioutil.LegacyPathAnnotation, p}, [2]string{kioutil.LegacyIndexAnnotation, "0"})
		}
	}
	for _, kv := range set {
		if err := c.PipeE(yaml.SetAnnotation(kv[0], kv[1])); err != nil {
			return nil, err
		}
	}
	return c, nil
}
