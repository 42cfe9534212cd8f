package testpki

import (
	"fmt"
	"time"
)

// GoldenNow is the spec.now of every golden case: the fixtures below are
// laid out around it.
var GoldenNow = Date(2026, 11, 22)

// fixture describes a named certificate of the shared fixture set.
type fixture struct {
	issuer    string // "" for a self-signed CA
	notBefore time.Time
	validity  time.Duration
	// cn, when set, is the common name (default: the fixture's name and
	// the test organisation for a root); the key is the name's either way,
	// so two generations of one anchor share a subject and differ in key.
	cn string
	// ca marks a CA signed by issuer: an issuer or intermediate.
	ca bool
}

// fixtures is the shared, named certificate set used by golden cases and
// examples. Times are relative to GoldenNow (2026-11-22):
//   - ca-2025: the old gateway CA, valid until 2027-06-01
//   - ca-2026: the new gateway CA, issued 2026-11-01
//   - ca-2027: the next CA, not valid before 2026-12-01 (pre-distributed)
//   - ca-expired: expired 2025-01-01
//   - ca-expiring: expires 2026-12-10 (18 days left: inside the warning window)
//   - leaf-old / leaf-new: valid leaves of ca-2025 / ca-2026
//   - leaf-expired: an expired leaf of ca-2025
//   - signer-a-1, signer-a-2, signer-b-1: CAs of two signers on different cadences
//   - signer-a-0, signer-b-2: the CA signer A retired before signer-a-1, and
//     the CA signer B issues on GoldenNow
//   - client-old: a leaf of ca-2025 valid until 2027-04-13
//   - kube-admin: a kubeconfig client certificate of signer-b-1
//   - example-client-old: a second client of example-ca-old (kyma-gateway)
//   - attacker-ca: a CA that no source, target or Copy-mode memory of any
//     case holds; the hostile cases write it into annotations only
//   - example-*: long-lived certificates (2026-2036) for the examples, which
//     run on the wall clock
var fixtures = map[string]fixture{
	"ca-2025":      {"", Date(2025, 6, 1), Days(730), "", false},
	"ca-2026":      {"", Date(2026, 11, 1), Days(730), "", false},
	"ca-2027":      {"", Date(2026, 12, 1), Days(730), "", false},
	"ca-expired":   {"", Date(2024, 1, 1), Days(366), "", false},
	"ca-expiring":  {"", Date(2025, 12, 10), Days(365), "", false},
	"attacker-ca":  {"", Date(2026, 10, 1), Days(730), "", false},
	"leaf-old":     {"ca-2025", Date(2026, 10, 1), Days(90), "", false},
	"leaf-new":     {"ca-2026", Date(2026, 11, 10), Days(90), "", false},
	"leaf-expired": {"ca-2025", Date(2026, 1, 1), Days(90), "", false},
	"signer-a-1":   {"", Date(2026, 9, 1), Days(180), "", false},
	"signer-a-2":   {"", Date(2026, 11, 15), Days(180), "", false},
	"signer-b-1":   {"", Date(2026, 6, 1), Days(365), "", false},
	// the two-signer day: signer A's CA before signer-a-1 (same NotBefore
	// as signer-b-1), and signer B's next CA, issued on GoldenNow
	"signer-a-0": {"", Date(2026, 6, 1), Days(200), "", false},
	"signer-b-2": {"", Date(2026, 11, 22), Days(365), "", false},
	// report fixtures: a client of the old CA that outlives its retain
	// window, and a kubeconfig user of signer-b-1
	"client-old": {"ca-2025", Date(2026, 10, 15), Days(180), "", false},
	"kube-admin": {"signer-b-1", Date(2026, 6, 1), Days(365), "", false},

	"example-ca-old":     {"", Date(2026, 1, 1), Days(3652), "", false},
	"example-ca-new":     {"", Date(2026, 6, 1), Days(3652), "", false},
	"example-leaf-old":   {"example-ca-old", Date(2026, 1, 1), Days(3000), "", false},
	"example-leaf-new":   {"example-ca-new", Date(2026, 6, 1), Days(3000), "", false},
	"example-client-old": {"example-ca-old", Date(2026, 2, 1), Days(3000), "", false},
	"example-signer-a-1": {"", Date(2026, 2, 1), Days(3652), "", false},
	"example-signer-a-2": {"", Date(2026, 8, 1), Days(3652), "", false},
	"example-signer-b-1": {"", Date(2026, 3, 1), Days(3652), "", false},

	// Chains: an anchor that signs an issuer (an intermediate CA) that
	// signs leaves, as Linkerd, Istio's plug-in CA and cert-manager's CA
	// issuers do. Each anchor keeps its subject across generations and
	// changes its key. The new Linkerd anchor was cut on 2026-11-20, two
	// days before GoldenNow; the issuer is re-issued from it on GoldenNow.
	"linkerd-anchor-old": {"", Date(2025, 11, 20), Days(730), "root.linkerd.cluster.local", false},
	"linkerd-anchor-new": {"", Date(2026, 11, 20), Days(730), "root.linkerd.cluster.local", false},
	"linkerd-issuer-old": {"linkerd-anchor-old", Date(2026, 6, 1), Days(365), "identity.linkerd.cluster.local", true},
	"linkerd-issuer-new": {"linkerd-anchor-new", Date(2026, 11, 22), Days(365), "identity.linkerd.cluster.local", true},
	// a second cluster's issuer in the same mesh (a trust domain: both
	// clusters share the anchor), re-issued two days after the first
	"linkerd-west-issuer-old": {"linkerd-anchor-old", Date(2026, 6, 2), Days(365), "identity.linkerd.cluster.local", true},
	"linkerd-west-issuer-new": {"linkerd-anchor-new", Date(2026, 11, 24), Days(365), "identity.linkerd.cluster.local", true},
	// an issuer of the new anchor that expired on 2026-11-21, and a leaf
	// it signed that outlives it
	"linkerd-issuer-short": {"linkerd-anchor-new", Date(2026, 11, 20), Days(1), "identity-short.linkerd.cluster.local", true},
	"linkerd-proxy-short":  {"linkerd-issuer-short", Date(2026, 11, 20), Days(30), "web.emojivoto.serviceaccount.identity.linkerd.cluster.local", false},
	"istio-root-old":       {"", Date(2025, 6, 1), Days(3650), "Root CA", false},
	"istio-root-new":       {"", Date(2026, 11, 1), Days(3650), "Root CA", false},
	"istio-ca-old":         {"istio-root-old", Date(2025, 6, 1), Days(730), "Intermediate CA", true},
	"istio-ca-new":         {"istio-root-new", Date(2026, 11, 22), Days(730), "Intermediate CA", true},
	"platform-root-old":    {"", Date(2025, 1, 1), Days(1095), "platform-root-ca", false},
	"platform-root-new":    {"", Date(2026, 11, 1), Days(1095), "platform-root-ca", false},
	"platform-issuing-old": {"platform-root-old", Date(2026, 1, 1), Days(365), "platform-issuing-ca", true},
	"billing-api-old":      {"platform-issuing-old", Date(2026, 10, 1), Days(90), "billing-api.billing.svc", false},

	// The same chains for the examples, which run on the wall clock:
	// long-lived, the old generation from 2026-01-01, the new from
	// 2026-06-01.
	"example-linkerd-anchor-old": {"", Date(2026, 1, 1), Days(3652), "root.linkerd.cluster.local", false},
	"example-linkerd-anchor-new": {"", Date(2026, 6, 1), Days(3652), "root.linkerd.cluster.local", false},
	"example-linkerd-issuer-old": {"example-linkerd-anchor-old", Date(2026, 1, 1), Days(3000), "identity.linkerd.cluster.local", true},
	"example-linkerd-issuer-new": {"example-linkerd-anchor-new", Date(2026, 6, 1), Days(3000), "identity.linkerd.cluster.local", true},
	// the second cluster of examples/multicluster, sharing the anchor
	"example-linkerd-west-issuer-old": {"example-linkerd-anchor-old", Date(2026, 1, 2), Days(3000), "identity.linkerd.cluster.local", true},
	"example-linkerd-west-issuer-new": {"example-linkerd-anchor-new", Date(2026, 6, 2), Days(3000), "identity.linkerd.cluster.local", true},
	"example-istio-root-old":          {"", Date(2026, 1, 1), Days(3652), "Root CA", false},
	"example-istio-root-new":          {"", Date(2026, 6, 1), Days(3652), "Root CA", false},
	"example-istio-ca-old":            {"example-istio-root-old", Date(2026, 1, 1), Days(3000), "Intermediate CA", true},
	"example-istio-ca-new":            {"example-istio-root-new", Date(2026, 6, 1), Days(3000), "Intermediate CA", true},
	"example-platform-root-old":       {"", Date(2026, 1, 1), Days(3652), "platform-root-ca", false},
	"example-platform-root-new":       {"", Date(2026, 6, 1), Days(3652), "platform-root-ca", false},
	"example-platform-issuing-old":    {"example-platform-root-old", Date(2026, 1, 1), Days(3000), "platform-issuing-ca", true},
	"example-platform-issuing-new":    {"example-platform-root-new", Date(2026, 6, 1), Days(3000), "platform-issuing-ca", true},
	"example-billing-api-old":         {"example-platform-issuing-old", Date(2026, 2, 1), Days(2900), "billing-api.billing.svc", false},
	"example-checkout-old":            {"example-platform-issuing-old", Date(2026, 2, 1), Days(2900), "checkout.shop.svc", false},
	"example-billing-api-new":         {"example-platform-issuing-new", Date(2026, 6, 1), Days(2900), "billing-api.billing.svc", false},
	"example-checkout-new":            {"example-platform-issuing-new", Date(2026, 6, 1), Days(2900), "checkout.shop.svc", false},

	// examples/cert-manager-renewal: a root that cert-manager renews
	// (duration 8760h, renewBefore 720h: on 2026-12-05) with a new key,
	// and 90-day leaves of its CA ClusterIssuer before and after. The
	// example pins its policy's clock, so these dates are its timeline.
	"example-internal-root-old": {"", Date(2026, 1, 4), Days(365), "internal-root-ca", false},
	"example-internal-root-new": {"", Date(2026, 12, 5), Days(365), "internal-root-ca", false},
	"example-orders-api-old":    {"example-internal-root-old", Date(2026, 11, 10), Days(90), "orders-api.orders.svc", false},
	"example-payments-api-old":  {"example-internal-root-old", Date(2026, 11, 12), Days(90), "payments-api.payments.svc", false},
	"example-orders-api-new":    {"example-internal-root-new", Date(2026, 12, 7), Days(90), "orders-api.orders.svc", false},
	"example-payments-api-new":  {"example-internal-root-new", Date(2026, 12, 7), Days(90), "payments-api.payments.svc", false},
}

// Fixture returns the named certificate of the shared fixture set. It
// panics on an unknown name: fixtures are test inputs, not user data.
func Fixture(name string) Cert {
	f, ok := fixtures[name]
	if !ok {
		panic(fmt.Sprintf("testpki: unknown fixture %q", name))
	}
	switch {
	case f.issuer == "" && f.cn != "":
		return NewSubjectCA(name, f.cn, f.notBefore, f.validity)
	case f.issuer == "":
		return NewCA(name, f.notBefore, f.validity)
	case f.ca:
		return NewIntermediate(name, f.cn, Fixture(f.issuer), f.notBefore, f.validity)
	case f.cn != "":
		return NewNamedLeaf(name, f.cn, Fixture(f.issuer), f.notBefore, f.validity)
	}
	return NewLeaf(name, Fixture(f.issuer), f.notBefore, f.validity)
}
