package initpolicy

import (
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/rotate-certs/rotate-certs/fn/kube"
)

// podSpecPaths gives, per workload kind, the path of its pod spec.
var podSpecPaths = map[string][]string{
	"Deployment":  {"spec", "template", "spec"},
	"StatefulSet": {"spec", "template", "spec"},
	"DaemonSet":   {"spec", "template", "spec"},
	"ReplicaSet":  {"spec", "template", "spec"},
	"Job":         {"spec", "template", "spec"},
	"Rollout":     {"spec", "template", "spec"},
	"CronJob":     {"spec", "jobTemplate", "spec", "template", "spec"},
	"Pod":         {"spec"},
}

// findConsumers maps each Secret and ConfigMap (by key) to the workloads
// whose pod spec references it in the workload's namespace: volumes
// (secret, configMap, projected), env valueFrom and envFrom.
func findConsumers(items []*yaml.RNode) map[kube.Key][]Consumer {
	out := map[kube.Key][]Consumer{}
	for _, it := range items {
		path, ok := podSpecPaths[it.GetKind()]
		if !ok || kube.IsLocalConfig(it) {
			continue
		}
		spec, err := it.Pipe(yaml.Lookup(path...))
		if err != nil || spec == nil {
			continue
		}
		ns := it.GetNamespace()
		refs := map[kube.Key][]string{}
		var order []kube.Key
		add := func(kind, name, how string) {
			if name == "" {
				return
			}
			k := kube.Key{Kind: kind, Namespace: ns, Name: name}
			if _, seen := refs[k]; !seen {
				order = append(order, k)
			}
			refs[k] = append(refs[k], how)
		}
		for _, vol := range elements(spec, "volumes") {
			vname := str(vol, "name")
			add("Secret", str(vol, "secret", "secretName"), "volume "+vname)
			add("ConfigMap", str(vol, "configMap", "name"), "volume "+vname)
			for _, src := range elements(vol, "projected", "sources") {
				add("Secret", str(src, "secret", "name"), "projected volume "+vname)
				add("ConfigMap", str(src, "configMap", "name"), "projected volume "+vname)
			}
		}
		for _, field := range []string{"initContainers", "containers"} {
			for _, c := range elements(spec, field) {
				for _, env := range elements(c, "env") {
					how := "env " + str(env, "name")
					add("Secret", str(env, "valueFrom", "secretKeyRef", "name"), how)
					add("ConfigMap", str(env, "valueFrom", "configMapKeyRef", "name"), how)
				}
				for _, ef := range elements(c, "envFrom") {
					add("Secret", str(ef, "secretRef", "name"), "envFrom")
					add("ConfigMap", str(ef, "configMapRef", "name"), "envFrom")
				}
			}
		}
		for _, k := range order {
			out[k] = append(out[k], Consumer{Ref: kube.RefOf(it), How: dedupe(refs[k])})
		}
	}
	return out
}

func elements(n *yaml.RNode, path ...string) []*yaml.RNode {
	list, err := n.Pipe(yaml.Lookup(path...))
	if err != nil || list == nil || list.YNode().Kind != yaml.SequenceNode {
		return nil
	}
	els, _ := list.Elements()
	return els
}

func str(n *yaml.RNode, path ...string) string {
	v, err := n.Pipe(yaml.Lookup(path...))
	if err != nil || v == nil || v.YNode().Kind != yaml.ScalarNode {
		return ""
	}
	return v.YNode().Value
}

func dedupe(s []string) []string {
	seen := map[string]bool{}
	out := s[:0]
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
