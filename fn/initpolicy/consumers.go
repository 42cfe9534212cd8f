package initpolicy

import (
	"fmt"
	"slices"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/rotate-certs/rotate-certs/fn/certmanager"
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"github.com/rotate-certs/rotate-certs/fn/restart"
)

// Who reads a CA today is not decided here: restart.Readers, the answer
// render rolls by and diff counts consumers by, is asked - the workloads of
// every row of the workload-kind table (ReplicaSets, ReplicationControllers
// and Pods too: they read the CA, and the user should point them at the
// target) and the Gateway API and Envoy Gateway objects whose
// caCertificateRefs name it, matched by the one namespace rule (an object
// without a namespace may be any; a kustomization's namespace: as its
// builds give it, Namespaces) and the rule for copies.

// readers answers init's questions of restart.Readers over one package's
// items.
type readers struct {
	r *restart.Readers
}

// newReaders reads items by the workload-kind table kinds; namespace is
// what a kustomization says of an object's namespace (nil: nothing). The
// notes name each workload whose pod template cannot be read: it is listed
// as a reader of no CA, as a render's error result would say.
func newReaders(items []*yaml.RNode, kinds policy.WorkloadTable, namespace func(*yaml.RNode) string) (readers, []string) {
	r := restart.NewReaders(items, restart.ReadersOptions{Kinds: kinds, Namespace: namespace})
	var notes []string
	for _, e := range r.Errors() {
		if !e.Counted {
			notes = append(notes, fmt.Sprintf("%s is not listed as a reader of any CA: %v", kube.RefOf(e.Node), e.Err))
		}
	}
	return readers{r: r}, notes
}

// of returns what reads the Secret or ConfigMap node (ref when node is
// nil: the object of that kind, namespace and name in its file).
func (rs readers) of(ref kube.Ref, node *yaml.RNode) []Reader {
	s := restart.Subject{Key: kube.Key{Kind: ref.Kind, Namespace: ref.Namespace, Name: ref.Name}, Node: node, File: ref.Path}
	return consumerList(rs.r.Of(s))
}

// ofBundle returns what reads the objects trust-manager Bundle node
// writes, each with the object it reads.
func (rs readers) ofBundle(node *yaml.RNode) []Reader {
	return consumerList(rs.r.Of(restart.Subject{Key: kube.Key{Kind: certmanager.KindBundle, Name: node.GetName()}, Node: node}))
}

// consumerList words readers as consumers.
func consumerList(rds []restart.Reader) []Reader {
	var out []Reader
	for _, rd := range rds {
		c := Reader{Ref: rd.Ref, how: how(rd)}
		if rd.Through != (kube.Key{}) {
			c.Via = rd.Through.String()
		}
		out = append(out, c)
	}
	return out
}

// how words the ways rd reads what it reads: "volume ca", "projected
// volume ca", "env CA_CERT", "envFrom" - by the pod template's volume and
// variable names, volumes first - or a caCertificateRefs field.
func how(rd restart.Reader) []string {
	objects := map[restart.Object]bool{}
	for _, u := range rd.Uses {
		objects[u.Object] = true
	}
	var out []string
	add := func(s string) {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	if rd.Workload == nil {
		for _, u := range rd.Uses {
			add(u.Via.String() + " " + u.Field)
		}
		return out
	}
	m := rd.Workload.Model
	for _, vol := range m.Volumes {
		for _, src := range vol.Sources {
			switch {
			case !objects[src.Object]:
			case src.Projected:
				add("projected volume " + kube.Safe(vol.Name))
			default:
				add("volume " + kube.Safe(vol.Name))
			}
		}
	}
	for _, c := range m.Containers {
		for _, r := range c.Env {
			if objects[r.Object] {
				add("env " + kube.Safe(r.Var))
			}
		}
		for _, r := range c.EnvFrom {
			if objects[r.Object] {
				add("envFrom")
			}
		}
	}
	return out
}
