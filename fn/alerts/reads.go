package alerts

import "github.com/rotate-certs/rotate-certs/fn/kube"

// Reads declares what writing spec.alerts reads of the input: the
// PrometheusRule it updates, when the input has it (every one of its kind:
// which one is the policy's to say).
func Reads() kube.Reads {
	return kube.Reads{Kinds: []kube.GroupKind{{Group: kube.GroupOf(APIVersion), Kind: Kind}}}
}
