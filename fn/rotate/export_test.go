package rotate

import (
	"crypto/x509"

	"github.com/rotate-certs/rotate-certs/fn/anchors"
	"github.com/rotate-certs/rotate-certs/fn/pki"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
)

// WithCertCache returns p whose runs parse certificates through certs.
func WithCertCache(p Processor, certs *pki.Cache) Processor {
	p.certs = certs
	return p
}

// CountingChecks returns p with a run verifier that counts in *n every
// signature check asked of it (answered from memory or not).
func CountingChecks(p Processor, n *int) Processor {
	p.newVerifier = func() func(ca, cert *x509.Certificate) bool {
		verify := anchors.NewVerifier()
		return func(ca, cert *x509.Certificate) bool {
			*n++
			return verify(ca, cert)
		}
	}
	return p
}

// Framework returns p as a kyaml framework processor, for tests that
// drive it through framework.Execute.
func Framework(p Processor) framework.ResourceListProcessor {
	return framework.ResourceListProcessorFunc(func(rl *framework.ResourceList) error {
		items, results, err := p.Run(rl.FunctionConfig, rl.Items, nil)
		rl.Items, rl.Results = items, append(rl.Results, results...)
		return err
	})
}

// NeedsKind exposes needsKind to the external tests.
var NeedsKind = needsKind
