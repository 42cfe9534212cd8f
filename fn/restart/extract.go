package restart

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Job kinds: their pods read a bundle at start like any other, but a Job
// is never rolled - its next pod reads the new bundle by itself.
const (
	KindJob     = "Job"
	KindCronJob = "CronJob"
)

// workloadKind is what rotate-certs knows of a kind with a pod template.
type workloadKind struct {
	apiVersions []string
	// template is the path of the pod template.
	template []string
	// rollable is true for the kinds rotate-certs rolls.
	rollable bool
}

var workloadKinds = map[string]workloadKind{
	policy.KindDeployment:  {[]string{"apps/v1"}, []string{"spec", "template"}, true},
	policy.KindStatefulSet: {[]string{"apps/v1"}, []string{"spec", "template"}, true},
	policy.KindDaemonSet:   {[]string{"apps/v1"}, []string{"spec", "template"}, true},
	policy.KindRollout:     {[]string{"argoproj.io/v1alpha1"}, []string{"spec", "template"}, true},
	KindJob:                {[]string{"batch/v1"}, []string{"spec", "template"}, false},
	KindCronJob:            {[]string{"batch/v1", "batch/v1beta1"}, []string{"spec", "jobTemplate", "spec", "template"}, false},
}

// Workload is a Deployment, StatefulSet, DaemonSet, Rollout, Job or
// CronJob of the input, read into the model.
type Workload struct {
	// Node is the resource, edited in place when rolled.
	Node *yaml.RNode
	// Ref names it in results.
	Ref kube.Ref
	// Rollable is true for the kinds rotate-certs rolls (not Job, CronJob).
	Rollable bool
	// WorkloadRef is true for an Argo Rollout that borrows the pod
	// template of another workload (spec.workloadRef) and has none of its
	// own: that workload is the one to roll.
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
}

// IsWorkload reports whether node is one of the kinds Read handles, at an
// API version rotate-certs knows.
func IsWorkload(node *yaml.RNode) bool {
	k, ok := workloadKinds[node.GetKind()]
	if !ok {
		return false
	}
	apiVersion := node.GetApiVersion()
	for _, v := range k.apiVersions {
		if v == apiVersion {
			return true
		}
	}
	return false
}

// Read reads a workload (IsWorkload must be true). An unknown reload
// annotation value, a missing pod template or a malformed one is a
// *kube.FieldError.
func Read(node *yaml.RNode) (*Workload, error) {
	kind := workloadKinds[node.GetKind()]
	w := &Workload{Node: node, Ref: kube.RefOf(node), Rollable: kind.rollable, TemplateField: kube.JoinPath(kind.template)}

	annos := node.GetAnnotations(ReloadAnnotation)
	value, set := annos[ReloadAnnotation]
	reload, err := ParseReload(value, set)
	if err != nil {
		return nil, &kube.FieldError{Field: "metadata.annotations." + ReloadAnnotation, Err: errors.New(err.Error())}
	}
	w.Reload = reload

	w.Template = lookup(node, kind.template...)
	if w.Template == nil || w.Template.YNode().Kind != yaml.MappingNode || lookup(w.Template, "spec") == nil {
		if node.GetKind() == policy.KindRollout && lookup(node, "spec", "workloadRef") != nil {
			w.WorkloadRef, w.Template = true, nil
			return w, nil
		}
		return nil, kube.FieldErrorf(w.TemplateField, "has no pod template (%s.spec): rotate-certs cannot tell what it reads or roll it", w.TemplateField)
	}
	// kyaml's label and annotation accessors panic on a list where a map
	// belongs (found by FuzzProcess).
	if err := kube.CheckShape(w.Template, w.TemplateField); err != nil {
		return nil, err
	}
	if w.Model, err = readTemplate(w.Template, w.TemplateField); err != nil {
		return nil, err
	}
	w.Shape = readShape(node, w.Template)
	return w, nil
}

// readTemplate maps a pod template onto the model.
func readTemplate(tmpl *yaml.RNode, prefix string) (Template, error) {
	var t Template
	spec := prefix + ".spec"
	volumes, err := elements(tmpl, spec+".volumes", "spec", "volumes")
	if err != nil {
		return t, err
	}
	for i, v := range volumes {
		field := fmt.Sprintf("%s.volumes[%d]", spec, i)
		vol := Volume{Name: str(v, "name")}
		vol.Sources = appendRef(vol.Sources, "Secret", str(v, "secret", "secretName"), field+".secret")
		vol.Sources = appendRef(vol.Sources, "ConfigMap", str(v, "configMap", "name"), field+".configMap")
		sources, err := elements(v, field+".projected.sources", "projected", "sources")
		if err != nil {
			return t, err
		}
		for j, s := range sources {
			sf := fmt.Sprintf("%s.projected.sources[%d]", field, j)
			vol.Sources = appendRef(vol.Sources, "Secret", str(s, "secret", "name"), sf+".secret")
			vol.Sources = appendRef(vol.Sources, "ConfigMap", str(s, "configMap", "name"), sf+".configMap")
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

func readContainer(c *yaml.RNode, field string) (Container, error) {
	var ct Container
	env, err := elements(c, field+".env", "env")
	if err != nil {
		return ct, err
	}
	for i, e := range env {
		ef := fmt.Sprintf("%s.env[%d].valueFrom", field, i)
		ct.Env = appendRef(ct.Env, "Secret", str(e, "valueFrom", "secretKeyRef", "name"), ef+".secretKeyRef")
		ct.Env = appendRef(ct.Env, "ConfigMap", str(e, "valueFrom", "configMapKeyRef", "name"), ef+".configMapKeyRef")
	}
	envFrom, err := elements(c, field+".envFrom", "envFrom")
	if err != nil {
		return ct, err
	}
	for i, e := range envFrom {
		ef := fmt.Sprintf("%s.envFrom[%d]", field, i)
		ct.EnvFrom = appendRef(ct.EnvFrom, "Secret", str(e, "secretRef", "name"), ef+".secretRef")
		ct.EnvFrom = appendRef(ct.EnvFrom, "ConfigMap", str(e, "configMapRef", "name"), ef+".configMapRef")
	}
	mounts, err := elements(c, field+".volumeMounts", "volumeMounts")
	if err != nil {
		return ct, err
	}
	for i, m := range mounts {
		mf := fmt.Sprintf("%s.volumeMounts[%d]", field, i)
		mount := Mount{Volume: str(m, "name"), Field: mf}
		if str(m, "subPath") != "" || str(m, "subPathExpr") != "" {
			mount.SubPath = true
			mount.Field = mf + ".subPath"
			if str(m, "subPath") == "" {
				mount.Field = mf + ".subPathExpr"
			}
		}
		ct.Mounts = append(ct.Mounts, mount)
	}
	return ct, nil
}

// readShape reads what decides how a roll goes.
func readShape(node, tmpl *yaml.RNode) Shape {
	s := Shape{
		Kind:           node.GetKind(),
		Paused:         str(node, "spec", "paused") == "true",
		UpdateStrategy: str(node, "spec", "updateStrategy", "type"),
		PodLabels:      tmpl.GetLabels(),
	}
	if r := lookup(node, "spec", "replicas"); r != nil {
		s.ReplicasSet = true
		if n, err := strconv.ParseInt(r.YNode().Value, 10, 64); err == nil && r.YNode().Kind == yaml.ScalarNode {
			s.Replicas = &n
		}
	}
	return s
}

// TrustHash returns the pod template's current trust-hash annotation and
// whether it is set.
func (w *Workload) TrustHash() (string, bool) {
	v, ok := w.Template.GetAnnotations(TrustHashAnnotation)[TrustHashAnnotation]
	return v, ok
}

// SetTrustHash writes the trust-hash annotation into the pod template,
// only when it differs, and reports whether it changed anything. Nothing
// else of the workload is touched.
func (w *Workload) SetTrustHash(hash string) (bool, error) {
	changed, err := kube.SetAnnotation(w.Template, TrustHashAnnotation, hash)
	if err != nil {
		return false, fmt.Errorf("%s: %s.metadata.annotations: %w", w.Ref, w.TemplateField, err)
	}
	return changed, nil
}

func appendRef(refs []Ref, kind, name, field string) []Ref {
	if name == "" {
		return refs
	}
	return append(refs, Ref{Object: Object{Kind: kind, Name: name}, Field: field})
}

// lookup returns the node at path, or nil when any step is absent, not a
// mapping, or null. It walks the yaml.Node content directly: it runs for
// every field of every workload, and a kyaml PathGetter per step costs
// several allocations.
func lookup(node *yaml.RNode, path ...string) *yaml.RNode {
	n := node.YNode()
	for _, key := range path {
		if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
			n = n.Content[0]
		}
		if n.Kind != yaml.MappingNode {
			return nil
		}
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				next = n.Content[i+1]
				break
			}
		}
		if next == nil {
			return nil
		}
		n = next
	}
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Tag == yaml.NodeTagNull {
		return nil
	}
	return yaml.NewRNode(n)
}

// str returns the scalar at path, or "".
func str(node *yaml.RNode, path ...string) string {
	n := lookup(node, path...)
	if n == nil || n.YNode().Kind != yaml.ScalarNode {
		return ""
	}
	return n.YNode().Value
}

// elements returns the items of the list at path (none when absent); a
// value that is not a list is a *kube.FieldError at field.
func elements(node *yaml.RNode, field string, path ...string) ([]*yaml.RNode, error) {
	n := lookup(node, path...)
	if n == nil {
		return nil, nil
	}
	if n.YNode().Kind != yaml.SequenceNode {
		return nil, kube.FieldErrorf(field, "must be a list")
	}
	return n.Elements()
}
