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
	"ca-2025":      {"", Date(2025, 6, 1), Days(730)},
	"ca-2026":      {"", Date(2026, 11, 1), Days(730)},
	"ca-2027":      {"", Date(2026, 12, 1), Days(730)},
	"ca-expired":   {"", Date(2024, 1, 1), Days(366)},
	"ca-expiring":  {"", Date(2025, 12, 10), Days(365)},
	"attacker-ca":  {"", Date(2026, 10, 1), Days(730)},
	"leaf-old":     {"ca-2025", Date(2026, 10, 1), Days(90)},
	"leaf-new":     {"ca-2026", Date(2026, 11, 10), Days(90)},
	"leaf-expired": {"ca-2025", Date(2026, 1, 1), Days(90)},
	"signer-a-1":   {"", Date(2026, 9, 1), Days(180)},
	"signer-a-2":   {"", Date(2026, 11, 15), Days(180)},
	"signer-b-1":   {"", Date(2026, 6, 1), Days(365)},
	// the two-signer day: signer A's CA before signer-a-1 (same NotBefore
	// as signer-b-1), and signer B's next CA, issued on GoldenNow
	"signer-a-0": {"", Date(2026, 6, 1), Days(200)},
	"signer-b-2": {"", Date(2026, 11, 22), Days(365)},
	// report fixtures: a client of the old CA that outlives its retain
	// window, and a kubeconfig user of signer-b-1
	"client-old": {"ca-2025", Date(2026, 10, 15), Days(180)},
	"kube-admin": {"signer-b-1", Date(2026, 6, 1), Days(365)},

	"example-ca-old":     {"", Date(2026, 1, 1), Days(3652)},
	"example-ca-new":     {"", Date(2026, 6, 1), Days(3652)},
	"example-leaf-old":   {"example-ca-old", Date(2026, 1, 1), Days(3000)},
	"example-leaf-new":   {"example-ca-new", Date(2026, 6, 1), Days(3000)},
	"example-client-old": {"example-ca-old", Date(2026, 2, 1), Days(3000)},
	"example-signer-a-1": {"", Date(2026, 2, 1), Days(3652)},
	"example-signer-a-2": {"", Date(2026, 8, 1), Days(3652)},
	"example-signer-b-1": {"", Date(2026, 3, 1), Days(3652)},
}

// Fixture returns the named certificate of the shared fixture set. It
// panics on an unknown name: fixtures are test inputs, not user data.
func Fixture(name string) Cert {
	f, ok := fixtures[name]
	if !ok {
		panic(fmt.Sprintf("testpki: unknown fixture %q", name))
	}
	if f.issuer == "" {
		return NewCA(name, f.notBefore, f.validity)
	}
	return NewLeaf(name, Fixture(f.issuer), f.notBefore, f.validity)
}
