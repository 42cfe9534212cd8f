package trustbundle

import (
	"fmt"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/restart"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// warnGatewayKey warns, for the target object key, about every reference
// of a Gateway API or Envoy Gateway object that reads its CA from it
// (restart.Readers: the caCertificateRefs rows, matched by the one rule
// of who reads what) while target.key is not ca.crt: the gateway reads
// only ca.crt, so the overlap would be written where nothing reads it
// while a stale ca.crt stays in use.
func (r *fanOut) warnGatewayKey(key kube.Key) {
	t := r.bundle.Target
	if t.Key == restart.GatewayCAKey {
		return
	}
	var nodes []*yaml.RNode
	for _, gk := range restart.CARefReaderKinds() {
		nodes = append(nodes, r.env.Index.KindIn(gk.Group, gk.Kind)...)
	}
	if len(nodes) == 0 {
		return
	}
	for _, rd := range restart.NewReaders(nodes, restart.ReadersOptions{}).Of(restart.Subject{Key: key}) {
		for _, u := range rd.Uses {
			if u.Via != restart.ViaCARef {
				continue
			}
			r.add(rd.Ref.Result(framework.Warning, u.Field, fmt.Sprintf(
				"bundle %q: %s %s reads its CA from key %s of %s, but this bundle writes key %s, which the gateway never reads: the overlap is not trusted and a stale %s stays in use - set target.key: %s",
				r.bundle.Name, rd.Ref, u.Field, restart.GatewayCAKey, key, kube.Safe(t.Key), restart.GatewayCAKey, restart.GatewayCAKey)))
		}
	}
}
