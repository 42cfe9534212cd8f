// Package synth generates large, realistic, reproducible ResourceLists for
// benchmarks and scale tests: a third Secrets holding real CA certificates,
// a third Deployments mounting them, the rest ConfigMaps and unrelated
// custom resources, and a RotationPolicy with one bundle per namespace.
package synth

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"math/rand/v2"

	"github.com/rotate-certs/rotate-certs/internal/testpki"
)

// Options size the generated list.
type Options struct {
	// Resources is the number of items.
	Resources int
	// Bundles is the number of trust bundles in the policy, one per
	// namespace; the first Bundles items are their source Secrets.
	Bundles int
	// Seed makes the list reproducible.
	Seed uint64
}

// ResourceList returns the generated list as YAML.
func ResourceList(o Options) []byte {
	if o.Bundles < 1 {
		o.Bundles = 1
	}
	rng := rand.New(rand.NewPCG(o.Seed, o.Seed^0x9e3779b97f4a7c15))
	// A small pool of real CAs, reused: parsing cost per Secret is real,
	// generation cost stays low.
	pool := make([]string, 16)
	for i := range pool {
		ca := testpki.NewCA(fmt.Sprintf("synth-ca-%d", i), testpki.Date(2026, 1, 1), testpki.Days(3650))
		pool[i] = base64.StdEncoding.EncodeToString(ca.PEM())
	}
	var b bytes.Buffer
	b.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nfunctionConfig:\n")
	b.WriteString("  apiVersion: rotate-certs.dev/v1alpha1\n  kind: RotationPolicy\n  metadata:\n    name: synth\n  spec:\n    now: \"2026-11-22T00:00:00Z\"\n    trustBundles:\n")
	for i := 0; i < o.Bundles; i++ {
		fmt.Fprintf(&b, "    - name: bundle-%d\n      sources:\n      - secret: {name: ca-%d, namespace: ns-%d}\n      target: {name: trust-%d}\n", i, i, i, i)
	}
	b.WriteString("items:\n")
	for ns := 0; ns < o.Bundles; ns++ {
		fmt.Fprintf(&b, "- apiVersion: v1\n  kind: Secret\n  metadata:\n    name: ca-%d\n    namespace: ns-%d\n  type: Opaque\n  data:\n    ca.crt: %s\n", ns, ns, pool[ns%len(pool)])
	}
	for i := o.Bundles; i < o.Resources; i++ {
		ns := i % o.Bundles
		switch i % 6 {
		case 0, 3: // Secret with a CA
			fmt.Fprintf(&b, "- apiVersion: v1\n  kind: Secret\n  metadata:\n    name: secret-%d\n    namespace: ns-%d\n    labels:\n      app: app-%d # owner\n  type: Opaque\n  data:\n    ca.crt: %s\n", i, ns, i, pool[rng.IntN(len(pool))])
		case 1, 4: // Deployment consuming its namespace's trust bundle
			fmt.Fprintf(&b, `- apiVersion: apps/v1
  kind: Deployment
  metadata:
    name: deploy-%d
    namespace: ns-%d
  spec:
    replicas: %d
    selector:
      matchLabels: {app: app-%d}
    template:
      metadata:
        labels: {app: app-%d}
      spec:
        containers:
        - name: main
          image: registry.example/app:%d
          volumeMounts:
          - {name: trust, mountPath: /etc/trust}
        volumes:
        - name: trust
          secret: {secretName: trust-%d}
`, i, ns, 1+rng.IntN(3), i, i, rng.IntN(100), ns)
		case 2: // ConfigMap
			fmt.Fprintf(&b, "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: config-%d\n    namespace: ns-%d\n  data:\n    # tuning\n    settings.yaml: |\n      level: %d\n      name: \"cm-%d\"\n", i, ns, rng.IntN(9), i)
		default: // an unrelated custom resource
			fmt.Fprintf(&b, "- apiVersion: example.com/v1\n  kind: Widget\n  metadata:\n    name: widget-%d\n    namespace: ns-%d\n  spec:\n    size: %d\n    tags: [a, b, c]\n", i, ns, rng.IntN(1000))
		}
	}
	return b.Bytes()
}
