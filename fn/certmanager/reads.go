package certmanager

import "github.com/rotate-certs/rotate-certs/fn/kube"

// Reads declares what the renewal forecasts read of the input: every
// cert-manager Certificate (Writers), whose Secret may be a bundle's
// source. The sources themselves are the trust bundles' to declare.
func Reads() kube.Reads {
	return kube.Reads{Kinds: []kube.GroupKind{{Group: group, Kind: kindCertificate}}}
}
