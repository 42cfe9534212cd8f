package restart

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Workload is an object of a rolled or reported kind of the workload-kind
// table (policy.WorkloadKinds) in the input, read into the model by its
// row.
type Workload struct {
	// node is the resource, edited in place when rolled.
	node *yaml.RNode
	// ref names it in results.
	ref kube.Ref
	// role is its kind's role: rolled, reported (a Job, a CronJob) or
	// listed (a Pod, a ReplicaSet: read as a reader nothing rolls).
	role policy.WorkloadRole
	// rollable is true for the kinds rotate-certs rolls (policy.RoleRolled),
	// false for those it only reports or lists.
	rollable bool
	// workloadRef is true for a workload of a kind whose row allows it
	// (policy.WorkloadKind.WorkloadRef, an Argo Rollout) that borrows the
	// pod template of another workload (spec.workloadRef) and has none of
	// its own: that workload is the one to roll.
	workloadRef bool
	// templateField is the field path of the pod template.
	templateField string
	// template is the pod template node; nil when workloadRef.
	template *yaml.RNode
	// Model is the pod template's reads.
	Model Template
	// reload is the workload's reload class.
	reload reload
	// shape is what decides how a roll goes.
	shape shape
	// pod is what admission webhooks read of the pod template.
	pod Pod
}

// Pod is what decides whether an admission webhook injects the pods of a
// template: their labels and annotations, and the pod spec field the
// meshes' injectors skip on.
type Pod struct {
	// Namespace is the workload's namespace, the admission request's.
	Namespace string
	// labels and annotations are the pod template's.
	labels, annotations map[string]string
	// hostNetwork is spec.hostNetwork: true (no mesh injects such a pod).
	hostNetwork bool
}

// readWorkload reads a workload of kind, its row of the workload-kind
// table. A missing or malformed pod template is a *kube.FieldError and no
// workload. A rotate-certs.dev/reload value that is not a reload class is
// a *kube.FieldError beside the workload, read with the default class (a
// reader that loads its trust once: the safe side); on a listed kind,
// which the restart rules never roll, the annotation is not checked.
func readWorkload(node *yaml.RNode, kind policy.WorkloadKind) (*Workload, error) {
	w := &Workload{node: node, ref: kube.RefOf(node), role: kind.Role, rollable: kind.Role == policy.RoleRolled, templateField: kube.JoinPath(kind.Template)}

	annos := node.GetAnnotations(reloadAnnotation)
	value, set := annos[reloadAnnotation]
	reload, reloadErr := parseReload(value, set)
	w.reload = reload
	if reloadErr != nil && kind.Role != policy.RoleListed {
		reloadErr = &kube.FieldError{Field: "metadata.annotations." + reloadAnnotation, Err: errors.New(reloadErr.Error())}
	} else {
		reloadErr = nil
	}

	var err error
	if w.template, err = podTemplate(node, kind); err != nil {
		return nil, err
	}
	if w.template == nil {
		w.workloadRef = true
		return w, reloadErr
	}
	if w.Model, err = readTemplate(w.template, w.templateField); err != nil {
		return nil, err
	}
	w.shape = readShape(node, w.template, kind)
	// Read as kubectl reads a boolean (kube.BoolAt: yes and True are true).
	hostNetwork, _ := kube.BoolAt(w.template, "spec", "hostNetwork")
	w.pod = Pod{Namespace: w.ref.Namespace, labels: w.template.GetLabels(), annotations: w.template.GetAnnotations(), hostNetwork: hostNetwork}
	return w, reloadErr
}

// templateOf reads which Secrets and ConfigMaps node's pod template
// reads, node being of kind (its row of policy.WorkloadKinds, any role); an
// Argo Rollout that borrows another workload's template (spec.workloadRef)
// reads none. It is the reading readWorkload does: a missing or malformed
// pod template is the same *kube.FieldError.
func templateOf(node *yaml.RNode, kind policy.WorkloadKind) (Template, error) {
	tmpl, err := podTemplate(node, kind)
	if err != nil || tmpl == nil {
		return Template{}, err
	}
	return readTemplate(tmpl, kube.JoinPath(kind.Template))
}

// podTemplate returns node's pod template, checked for the shapes kyaml's
// accessors cannot take; nil, and no error, for a kind that may borrow the
// template of another workload (an Argo Rollout's spec.workloadRef) and has
// none of its own.
func podTemplate(node *yaml.RNode, kind policy.WorkloadKind) (*yaml.RNode, error) {
	field := kube.JoinPath(kind.Template)
	tmpl := kube.At(node, kind.Template...)
	if tmpl == nil || tmpl.YNode().Kind != yaml.MappingNode || kube.At(tmpl, "spec") == nil {
		if kind.WorkloadRef && kube.At(node, "spec", "workloadRef") != nil {
			return nil, nil
		}
		if field == "" {
			return nil, kube.FieldErrorf("spec", "has no pod spec: rotate-certs cannot tell what it reads")
		}
		return nil, kube.FieldErrorf(field, "has no pod template (%s.spec): rotate-certs cannot tell what it reads or roll it", field)
	}
	// kyaml's label and annotation accessors panic on a list where a map
	// belongs (found by FuzzProcess).
	if err := kube.CheckShape(tmpl, field); err != nil {
		return nil, err
	}
	return tmpl, nil
}

// readTemplate maps a pod template (at field path prefix; "" for a Pod)
// onto the model.
func readTemplate(tmpl *yaml.RNode, prefix string) (Template, error) {
	var t Template
	spec := "spec"
	if prefix != "" {
		spec = prefix + ".spec"
	}
	volumes, err := elements(tmpl, spec+".volumes", "spec", "volumes")
	if err != nil {
		return t, err
	}
	for i, v := range volumes {
		vol, err := readVolume(v, fmt.Sprintf("%s.volumes[%d]", spec, i))
		if err != nil {
			return t, err
		}
		if len(vol.Sources) > 0 {
			t.Volumes = append(t.Volumes, vol)
		}
	}
	for _, list := range []string{"initContainers", "containers"} {
		containers, err := elements(tmpl, spec+"."+list, "spec", list)
		if err != nil {
			return t, err
		}
		for i, c := range containers {
			ct, err := readContainer(c, fmt.Sprintf("%s.%s[%d]", spec, list, i))
			if err != nil {
				return t, err
			}
			t.Containers = append(t.Containers, ct)
		}
	}
	return t, nil
}

// readVolume reads the objects a volume is backed by: its secret or
// configMap, then its projected sources.
func readVolume(v *yaml.RNode, field string) (Volume, error) {
	vol := Volume{Name: kube.ScalarAt(v, "name")}
	vol.Sources = appendRef(vol.Sources, Ref{Object: Object{kind: kindSecret, name: kube.ScalarAt(v, "secret", "secretName")}, field: field + ".secret"})
	vol.Sources = appendRef(vol.Sources, Ref{Object: Object{kind: kindConfigMap, name: kube.ScalarAt(v, "configMap", "name")}, field: field + ".configMap"})
	sources, err := elements(v, field+".projected.sources", "projected", "sources")
	if err != nil {
		return vol, err
	}
	for j, s := range sources {
		sf := fmt.Sprintf("%s.projected.sources[%d]", field, j)
		vol.Sources = appendRef(vol.Sources, Ref{Object: Object{kind: kindSecret, name: kube.ScalarAt(s, "secret", "name")}, field: sf + ".secret", Projected: true})
		vol.Sources = appendRef(vol.Sources, Ref{Object: Object{kind: kindConfigMap, name: kube.ScalarAt(s, "configMap", "name")}, field: sf + ".configMap", Projected: true})
		if kube.At(s, "clusterTrustBundle") != nil {
			ref, err := readClusterTrustBundle(s, sf+".clusterTrustBundle")
			if err != nil {
				return vol, err
			}
			vol.Sources = appendRef(vol.Sources, ref)
		}
	}
	return vol, nil
}

// readClusterTrustBundle reads a projected clusterTrustBundle source: one
// ClusterTrustBundle by name, or those of a signer that its labelSelector
// selects.
func readClusterTrustBundle(s *yaml.RNode, field string) (Ref, error) {
	if name := kube.ScalarAt(s, "clusterTrustBundle", "name"); name != "" {
		return Ref{Object: Object{kind: kindClusterTrustBundle, name: name}, field: field + ".name", Projected: true}, nil
	}
	ref := Ref{Object: Object{kind: kindSigner, name: kube.ScalarAt(s, "clusterTrustBundle", "signerName")}, field: field + ".signerName", Projected: true}
	node := kube.At(s, "clusterTrustBundle", "labelSelector")
	if ref.name == "" || node == nil {
		return ref, nil
	}
	sel, err := kube.SelectorOf(node)
	if err != nil {
		return ref, kube.FieldErrorf(field+".labelSelector", "is not a label selector: %v", err)
	}
	ref.selector = &sel
	return ref, nil
}

func readContainer(c *yaml.RNode, field string) (Container, error) {
	var ct Container
	env, err := elements(c, field+".env", "env")
	if err != nil {
		return ct, err
	}
	for i, e := range env {
		ef := fmt.Sprintf("%s.env[%d].valueFrom", field, i)
		name := kube.ScalarAt(e, "name")
		ct.Env = appendRef(ct.Env, Ref{Object: Object{kind: kindSecret, name: kube.ScalarAt(e, "valueFrom", "secretKeyRef", "name")}, field: ef + ".secretKeyRef", Var: name})
		ct.Env = appendRef(ct.Env, Ref{Object: Object{kind: kindConfigMap, name: kube.ScalarAt(e, "valueFrom", "configMapKeyRef", "name")}, field: ef + ".configMapKeyRef", Var: name})
	}
	envFrom, err := elements(c, field+".envFrom", "envFrom")
	if err != nil {
		return ct, err
	}
	for i, e := range envFrom {
		ef := fmt.Sprintf("%s.envFrom[%d]", field, i)
		ct.EnvFrom = appendRef(ct.EnvFrom, Ref{Object: Object{kind: kindSecret, name: kube.ScalarAt(e, "secretRef", "name")}, field: ef + ".secretRef"})
		ct.EnvFrom = appendRef(ct.EnvFrom, Ref{Object: Object{kind: kindConfigMap, name: kube.ScalarAt(e, "configMapRef", "name")}, field: ef + ".configMapRef"})
	}
	mounts, err := elements(c, field+".volumeMounts", "volumeMounts")
	if err != nil {
		return ct, err
	}
	for i, m := range mounts {
		mf := fmt.Sprintf("%s.volumeMounts[%d]", field, i)
		mount := mount{volume: kube.ScalarAt(m, "name"), field: mf}
		if kube.ScalarAt(m, "subPath") != "" || kube.ScalarAt(m, "subPathExpr") != "" {
			mount.subPath = true
			mount.field = mf + ".subPath"
			if kube.ScalarAt(m, "subPath") == "" {
				mount.field = mf + ".subPathExpr"
			}
		}
		ct.mounts = append(ct.mounts, mount)
	}
	return ct, nil
}

// readShape reads what decides how a roll of node, of kind, goes.
func readShape(node, tmpl *yaml.RNode, kind policy.WorkloadKind) shape {
	paused, _ := kube.BoolAt(node, "spec", "paused")
	s := shape{
		kind:           kind,
		paused:         paused,
		updateStrategy: kube.ScalarAt(node, "spec", "updateStrategy", "type"),
		podLabels:      tmpl.GetLabels(),
	}
	if r := kube.At(node, "spec", "replicas"); r != nil {
		s.replicasSet = true
		if n, err := strconv.ParseInt(r.YNode().Value, 10, 64); err == nil && r.YNode().Kind == yaml.ScalarNode {
			s.replicas = &n
		}
	}
	return s
}

// trustHash returns the pod template's current trust-hash annotation and
// whether it is set.
func (w *Workload) trustHash() (string, bool) {
	v, ok := w.template.GetAnnotations(TrustHashAnnotation)[TrustHashAnnotation]
	return v, ok
}

// setTrustHash writes the trust-hash annotation into the pod template,
// only when it differs, and reports whether it changed anything. Nothing
// else of the workload is touched.
func (w *Workload) setTrustHash(hash string) (bool, error) {
	changed, err := kube.SetAnnotation(w.template, TrustHashAnnotation, hash)
	if err != nil {
		return false, fmt.Errorf("%s: %s.metadata.annotations: %w", w.ref, w.templateField, err)
	}
	return changed, nil
}

// appendRef appends r unless it names no object.
func appendRef(refs []Ref, r Ref) []Ref {
	if r.name == "" {
		return refs
	}
	return append(refs, r)
}

// elements returns the items of the list at path (none when absent); a
// value that is not a list is a *kube.FieldError at field.
func elements(node *yaml.RNode, field string, path ...string) ([]*yaml.RNode, error) {
	n := kube.At(node, path...)
	if n == nil {
		return nil, nil
	}
	if n.YNode().Kind != yaml.SequenceNode {
		return nil, kube.FieldErrorf(field, "must be a list")
	}
	return n.Elements()
}
