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
	// Node is the resource, edited in place when rolled.
	Node *yaml.RNode
	// Ref names it in results.
	Ref kube.Ref
	// Role is its kind's role: rolled, reported (a Job, a CronJob) or
	// listed (a Pod, a ReplicaSet: read as a reader nothing rolls).
	Role policy.WorkloadRole
	// Rollable is true for the kinds rotate-certs rolls (policy.RoleRolled),
	// false for those it only reports or lists.
	Rollable bool
	// WorkloadRef is true for a workload of a kind whose row allows it
	// (policy.WorkloadKind.WorkloadRef, an Argo Rollout) that borrows the
	// pod template of another workload (spec.workloadRef) and has none of
	// its own: that workload is the one to roll.
	WorkloadRef bool
	// TemplateField is the field path of the pod template.
	TemplateField string
	// Template is the pod template node; nil when WorkloadRef.
	Template *yaml.RNode
	// Model is the pod template's reads.
	Model Template
	// Reload is the workload's reload class.
	Reload Reload
	// Shape is what decides how a roll goes.
	Shape Shape
	// Pod is what admission webhooks read of the pod template.
	Pod Pod
}

// Pod is what decides whether an admission webhook injects the pods of a
// template: their labels and annotations, and the pod spec field the
// meshes' injectors skip on.
type Pod struct {
	// Namespace is the workload's namespace, the admission request's.
	Namespace string
	// Labels and Annotations are the pod template's.
	Labels, Annotations map[string]string
	// HostNetwork is spec.hostNetwork: true (no mesh injects such a pod).
	HostNetwork bool
}

// readWorkload reads a workload of kind, its row of the workload-kind
// table. A missing or malformed pod template is a *kube.FieldError and no
// workload. A rotate-certs.dev/reload value that is not a reload class is
// a *kube.FieldError beside the workload, read with the default class (a
// reader that loads its trust once: the safe side); on a listed kind,
// which the restart rules never roll, the annotation is not checked.
func readWorkload(node *yaml.RNode, kind policy.WorkloadKind) (*Workload, error) {
	w := &Workload{Node: node, Ref: kube.RefOf(node), Role: kind.Role, Rollable: kind.Role == policy.RoleRolled, TemplateField: kube.JoinPath(kind.Template)}

	annos := node.GetAnnotations(reloadAnnotation)
	value, set := annos[reloadAnnotation]
	reload, reloadErr := parseReload(value, set)
	w.Reload = reload
	if reloadErr != nil && kind.Role != policy.RoleListed {
		reloadErr = &kube.FieldError{Field: "metadata.annotations." + reloadAnnotation, Err: errors.New(reloadErr.Error())}
	} else {
		reloadErr = nil
	}

	var err error
	if w.Template, err = podTemplate(node, kind); err != nil {
		return nil, err
	}
	if w.Template == nil {
		w.WorkloadRef = true
		return w, reloadErr
	}
	if w.Model, err = readTemplate(w.Template, w.TemplateField); err != nil {
		return nil, err
	}
	w.Shape = readShape(node, w.Template, kind)
	// Read as kubectl reads a boolean (kube.BoolAt: yes and True are true).
	hostNetwork, _ := kube.BoolAt(w.Template, "spec", "hostNetwork")
	w.Pod = Pod{Namespace: w.Ref.Namespace, Labels: w.Template.GetLabels(), Annotations: w.Template.GetAnnotations(), HostNetwork: hostNetwork}
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
	vol.Sources = appendRef(vol.Sources, Ref{Object: Object{Kind: kindSecret, Name: kube.ScalarAt(v, "secret", "secretName")}, Field: field + ".secret"})
	vol.Sources = appendRef(vol.Sources, Ref{Object: Object{Kind: kindConfigMap, Name: kube.ScalarAt(v, "configMap", "name")}, Field: field + ".configMap"})
	sources, err := elements(v, field+".projected.sources", "projected", "sources")
	if err != nil {
		return vol, err
	}
	for j, s := range sources {
		sf := fmt.Sprintf("%s.projected.sources[%d]", field, j)
		vol.Sources = appendRef(vol.Sources, Ref{Object: Object{Kind: kindSecret, Name: kube.ScalarAt(s, "secret", "name")}, Field: sf + ".secret", Projected: true})
		vol.Sources = appendRef(vol.Sources, Ref{Object: Object{Kind: kindConfigMap, Name: kube.ScalarAt(s, "configMap", "name")}, Field: sf + ".configMap", Projected: true})
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
		return Ref{Object: Object{Kind: kindClusterTrustBundle, Name: name}, Field: field + ".name", Projected: true}, nil
	}
	ref := Ref{Object: Object{Kind: kindSigner, Name: kube.ScalarAt(s, "clusterTrustBundle", "signerName")}, Field: field + ".signerName", Projected: true}
	node := kube.At(s, "clusterTrustBundle", "labelSelector")
	if ref.Name == "" || node == nil {
		return ref, nil
	}
	sel, err := kube.SelectorOf(node)
	if err != nil {
		return ref, kube.FieldErrorf(field+".labelSelector", "is not a label selector: %v", err)
	}
	ref.Selector = &sel
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
		ct.Env = appendRef(ct.Env, Ref{Object: Object{Kind: kindSecret, Name: kube.ScalarAt(e, "valueFrom", "secretKeyRef", "name")}, Field: ef + ".secretKeyRef", Var: name})
		ct.Env = appendRef(ct.Env, Ref{Object: Object{Kind: kindConfigMap, Name: kube.ScalarAt(e, "valueFrom", "configMapKeyRef", "name")}, Field: ef + ".configMapKeyRef", Var: name})
	}
	envFrom, err := elements(c, field+".envFrom", "envFrom")
	if err != nil {
		return ct, err
	}
	for i, e := range envFrom {
		ef := fmt.Sprintf("%s.envFrom[%d]", field, i)
		ct.EnvFrom = appendRef(ct.EnvFrom, Ref{Object: Object{Kind: kindSecret, Name: kube.ScalarAt(e, "secretRef", "name")}, Field: ef + ".secretRef"})
		ct.EnvFrom = appendRef(ct.EnvFrom, Ref{Object: Object{Kind: kindConfigMap, Name: kube.ScalarAt(e, "configMapRef", "name")}, Field: ef + ".configMapRef"})
	}
	mounts, err := elements(c, field+".volumeMounts", "volumeMounts")
	if err != nil {
		return ct, err
	}
	for i, m := range mounts {
		mf := fmt.Sprintf("%s.volumeMounts[%d]", field, i)
		mount := Mount{Volume: kube.ScalarAt(m, "name"), Field: mf}
		if kube.ScalarAt(m, "subPath") != "" || kube.ScalarAt(m, "subPathExpr") != "" {
			mount.SubPath = true
			mount.Field = mf + ".subPath"
			if kube.ScalarAt(m, "subPath") == "" {
				mount.Field = mf + ".subPathExpr"
			}
		}
		ct.Mounts = append(ct.Mounts, mount)
	}
	return ct, nil
}

// readShape reads what decides how a roll of node, of kind, goes.
func readShape(node, tmpl *yaml.RNode, kind policy.WorkloadKind) Shape {
	paused, _ := kube.BoolAt(node, "spec", "paused")
	s := Shape{
		Kind:           kind,
		Paused:         paused,
		UpdateStrategy: kube.ScalarAt(node, "spec", "updateStrategy", "type"),
		PodLabels:      tmpl.GetLabels(),
	}
	if r := kube.At(node, "spec", "replicas"); r != nil {
		s.ReplicasSet = true
		if n, err := strconv.ParseInt(r.YNode().Value, 10, 64); err == nil && r.YNode().Kind == yaml.ScalarNode {
			s.Replicas = &n
		}
	}
	return s
}

// trustHash returns the pod template's current trust-hash annotation and
// whether it is set.
func (w *Workload) trustHash() (string, bool) {
	v, ok := w.Template.GetAnnotations(TrustHashAnnotation)[TrustHashAnnotation]
	return v, ok
}

// setTrustHash writes the trust-hash annotation into the pod template,
// only when it differs, and reports whether it changed anything. Nothing
// else of the workload is touched.
func (w *Workload) setTrustHash(hash string) (bool, error) {
	changed, err := kube.SetAnnotation(w.Template, TrustHashAnnotation, hash)
	if err != nil {
		return false, fmt.Errorf("%s: %s.metadata.annotations: %w", w.Ref, w.TemplateField, err)
	}
	return changed, nil
}

// appendRef appends r unless it names no object.
func appendRef(refs []Ref, r Ref) []Ref {
	if r.Name == "" {
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
