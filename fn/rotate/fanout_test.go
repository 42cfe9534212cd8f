package rotate_test

import (
	"bytes"
	"encoding/base64"
	"fmt"

	"github.com/rotate-certs/rotate-certs/internal/testpki"
)

// fanOutInput is a ResourceList where one bundle fans out to namespaces
// target namespaces (selected by label) and the input holds leaves leaf
// certificates, the shape that made a render cost namespaces × leaves.
// Every namespace already has a target holding the two older CAs
// (fan-out-2, fan-out-1) while the source holds fan-out-3, so with the
// default retain.maxPrevious of 1 fan-out-1 stays only because it signed
// every leaf (protectIssuers): each target runs the protection check and
// lists every leaf for re-issue. With alerts, spec.alerts is set too.
func fanOutInput(namespaces, leaves int, alerts bool) []byte {
	ca1 := testpki.NewCA("fan-out-1", testpki.Date(2025, 1, 1), testpki.Days(3*365))
	ca2 := testpki.NewCA("fan-out-2", testpki.Date(2025, 6, 1), testpki.Days(3*365))
	ca3 := testpki.NewCA("fan-out-3", testpki.Date(2026, 11, 1), testpki.Days(3*365))
	b64 := func(pem ...[]byte) string { return base64.StdEncoding.EncodeToString(bytes.Join(pem, nil)) }
	var b bytes.Buffer
	b.WriteString(`apiVersion: config.kubernetes.io/v1
kind: ResourceList
functionConfig:
  apiVersion: rotate-certs.dev/v1alpha1
  kind: RotationPolicy
  metadata:
    name: fan-out
  spec:
    now: "2026-11-22T00:00:00Z"
    trustBundles:
    - name: fan-out
      sources:
      - secret: {name: ca, namespace: ca-system}
      target:
        name: trust
        namespaceSelector:
          matchLabels: {trust: fan-out}
`)
	if alerts {
		b.WriteString("    alerts:\n      namespace: monitoring\n")
	}
	b.WriteString("items:\n")
	fmt.Fprintf(&b, "- apiVersion: v1\n  kind: Secret\n  metadata:\n    name: ca\n    namespace: ca-system\n  data:\n    ca.crt: %s\n", b64(ca3.PEM()))
	previous := b64(ca2.PEM(), ca1.PEM())
	for i := 0; i < namespaces; i++ {
		fmt.Fprintf(&b, "- apiVersion: v1\n  kind: Namespace\n  metadata:\n    name: ns-%d\n    labels: {trust: fan-out}\n", i)
		fmt.Fprintf(&b, "- apiVersion: v1\n  kind: Secret\n  metadata:\n    name: trust\n    namespace: ns-%d\n  data:\n    ca.crt: %s\n", i, previous)
	}
	for i := 0; i < leaves; i++ {
		leaf := testpki.NewLeaf(fmt.Sprintf("fan-out-leaf-%d", i), ca1, testpki.Date(2026, 6, 1), testpki.Days(365))
		fmt.Fprintf(&b, "- apiVersion: v1\n  kind: Secret\n  metadata:\n    name: leaf-%d\n    namespace: ns-%d\n  type: kubernetes.io/tls\n  data:\n    tls.crt: %s\n", i, i%max(namespaces, 1), b64(leaf.PEM()))
	}
	return b.Bytes()
}
