package trustdiff

import (
	"crypto/x509"
	"errors"
	"fmt"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/pki"
)

// Fact kinds: what a reviewer needs to know of what a change brings that
// is neither a break nor planted trust.
const (
	// FactExpired: a CA added or kept in a trust object the change
	// touches expired before now.
	FactExpired = "expired"
	// factNotYetValid: such a CA is not valid until after now.
	factNotYetValid = "notYetValid"
	// FactRejectedSignature: such a CA, or a certificate presented that
	// the change brings, is signed with an algorithm crypto/x509 rejects
	// in a chain (SHA-1, MD5) or does not implement.
	FactRejectedSignature = "rejectedSignature"
	// FactPrivateKey: a value the change brings holds private key
	// material where no key belongs.
	FactPrivateKey = "privateKey"
)

// Fact is a warning: something a change brings that a reviewer needs to
// know and that leaves the exit status as it is. It names the object and
// field, and the certificate by subject and SHA-256; never a key.
type Fact struct {
	Resource Resource `json:"resource"`
	Field    string   `json:"field"`
	// Kind is FactExpired, notYetValid (factNotYetValid),
	// FactRejectedSignature or FactPrivateKey.
	Kind    string `json:"kind"`
	Subject string `json:"subject,omitempty"`
	SHA256  string `json:"sha256,omitempty"`
	Message string `json:"message"`
}

// facts lists what the change brings that a reviewer needs to know: for
// each trust object whose CAs change, the CAs it holds at HEAD (added or
// kept) that are expired or not yet valid at now, or signed with an
// algorithm crypto/x509 rejects; the certificates presented at HEAD that
// their place did not hold at BASE, signed so; and the values holding
// private key material where no key belongs that BASE did not hold there.
// What the change does not touch is not listed: diff A A says nothing.
func facts(base, head *Model, now time.Time) []Fact {
	var out []Fact
	b := trustIndex(base)
	for _, o := range head.Trust {
		if bo := b[o.key()]; bo != nil && sameSet(shas(bo), shas(o)) {
			continue
		}
		for _, c := range uniqueCAs(o) {
			out = append(out, caFacts(o, c, now)...)
		}
	}
	before := map[string]bool{}
	for _, c := range base.certs {
		before[c.at()+"\x00"+sha(c.cert)] = true
	}
	for _, c := range head.certs {
		if before[c.at()+"\x00"+sha(c.cert)] {
			continue
		}
		if err := pki.RejectedSignature(c.cert); err != nil {
			out = append(out, Fact{Resource: c.resource, Field: c.key, Kind: FactRejectedSignature, Subject: pki.Subject(c.cert), SHA256: sha(c.cert),
				Message: signedWith(c.cert, err) + ": a Go client refuses this certificate whatever it trusts"})
		}
	}
	return append(out, keyFacts(base, head)...)
}

// sameSet reports whether a and b hold the same members.
func sameSet(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

// caFacts are the facts of CA c of trust object o at now.
func caFacts(o *TrustObject, c *x509.Certificate, now time.Time) []Fact {
	var out []Fact
	add := func(kind, msg string) {
		out = append(out, Fact{Resource: o.Resource, Field: o.Field, Kind: kind, Subject: pki.Subject(c), SHA256: sha(c), Message: msg})
	}
	switch {
	case now.After(c.NotAfter):
		add(FactExpired, fmt.Sprintf("the CA expired on %s, before now (%s): crypto/x509 verifies no chain to it", day(c.NotAfter), day(now)))
	case now.Before(c.NotBefore):
		add(factNotYetValid, fmt.Sprintf("the CA is not valid until %s, after now (%s): crypto/x509 verifies no chain to it before then", day(c.NotBefore), day(now)))
	}
	err := pki.RejectedSignature(c)
	switch {
	case err == nil:
	case pki.SelfSigned(c):
		add(FactRejectedSignature, signedWith(c, err)+": Go trusts it as a root, whose own signature it does not check; a verifier that checks it refuses it")
	default:
		add(FactRejectedSignature, signedWith(c, err)+": no chain through it verifies in Go")
	}
	return out
}

// signedWith words c's signature algorithm, which crypto/x509 rejects
// with err (pki.RejectedSignature).
func signedWith(c *x509.Certificate, err error) string {
	if errors.Is(err, x509.ErrUnsupportedAlgorithm) {
		return "signed with an algorithm crypto/x509 does not implement (" + c.SignatureAlgorithm.String() + ")"
	}
	return "signed with " + c.SignatureAlgorithm.String() + ", an insecure algorithm crypto/x509 rejects"
}

// day formats a time as a date.
func day(t time.Time) string { return t.UTC().Format(time.DateOnly) }

// keyFacts are the values of head that hold private key material where no
// key belongs, and did not hold the same at BASE.
func keyFacts(base, head *Model) []Fact {
	before := map[string]bool{}
	for _, k := range base.keys {
		before[k.at()] = true
	}
	var out []Fact
	for _, k := range head.keys {
		if before[k.at()] {
			continue
		}
		msg := "holds private key material: keys belong in a Secret's key fields (tls.key), and whoever may read this object or the repository reads the key - move it there and replace the key"
		if k.resource.Kind == "Secret" {
			msg = "holds private key material under a name not meant for a key (a Secret keeps keys under tls.key and the like): what reads this value for certificates reads the key too"
		}
		out = append(out, Fact{Resource: k.resource, Field: k.field, Kind: FactPrivateKey, Message: msg})
	}
	return out
}
