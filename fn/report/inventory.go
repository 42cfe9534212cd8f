// Package report finds every certificate in the input and reports on it:
// one info result per certificate (subject, fingerprint, NotAfter, days
// left) and a warning for each one inside the warning window.
package report

import (
	"crypto/x509"
	"fmt"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/pki"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Found is one certificate in one value of one resource.
type Found struct {
	Ref   kube.Ref
	Field string
	Cert  *x509.Certificate
}

// Where describes the location for messages: "Secret ns/name data.tls.crt".
func (f Found) Where() string { return f.Ref.String() + " " + f.Field }

// Problem is a value that looked like PEM but could not be read.
type Problem struct {
	Ref     kube.Ref
	Field   string
	Message string
}

// Inventory is every certificate found in the input, in input order.
type Inventory struct {
	Certificates []Found
	Problems     []Problem
}

// Scan reads every Secret and ConfigMap value that holds PEM data. Values
// without a PEM header are skipped quietly; unreadable ones become Problems
// (an unrelated broken Secret must not fail a render).
func Scan(items []*yaml.RNode) *Inventory {
	inv := &Inventory{}
	for _, item := range items {
		kind := item.GetKind()
		if (kind != "Secret" && kind != "ConfigMap") || kube.IsLocalConfig(item) || kube.IsSOPSEncrypted(item) {
			continue
		}
		values, err := kube.Values(item)
		if err != nil {
			inv.Problems = append(inv.Problems, Problem{Ref: kube.RefOf(item), Field: kube.FieldOf(err), Message: err.Error()})
			continue
		}
		var ref *kube.Ref
		for _, v := range values {
			if !pki.LooksLikePEM(v.Bytes) {
				continue
			}
			if ref == nil {
				r := kube.RefOf(item)
				ref = &r
			}
			d, err := pki.DecodePEM(v.Bytes)
			if err != nil {
				inv.Problems = append(inv.Problems, Problem{Ref: *ref, Field: v.Field, Message: err.Error()})
				continue
			}
			for _, c := range d.Certificates {
				inv.Certificates = append(inv.Certificates, Found{Ref: *ref, Field: v.Field, Cert: c})
			}
		}
	}
	return inv
}

// Leaves returns the end-entity certificates of the inventory.
func (inv *Inventory) Leaves() []Found {
	var out []Found
	for _, f := range inv.Certificates {
		if !pki.IsCA(f.Cert) {
			out = append(out, f)
		}
	}
	return out
}

// Results returns one info result per certificate, a warning for each one
// expiring within warnWithin or already expired, and a warning per problem.
// Time passing alone never produces an error.
func (inv *Inventory) Results(now time.Time, warnWithin time.Duration) framework.Results {
	var out framework.Results
	for _, f := range inv.Certificates {
		c := f.Cert
		days := pki.DaysLeft(c, now)
		msg := fmt.Sprintf("certificate %q sha256:%s expires %s (%d days left)",
			pki.Subject(c), pki.FingerprintOf(c), c.NotAfter.UTC().Format(time.RFC3339), days)
		out = append(out, f.Ref.Result(framework.Info, f.Field, msg))
		switch {
		case pki.Expired(c, now):
			out = append(out, f.Ref.Result(framework.Warning, f.Field,
				fmt.Sprintf("certificate %q sha256:%s expired %s", pki.Subject(c), pki.FingerprintOf(c).Short(), c.NotAfter.UTC().Format(time.RFC3339))))
		case c.NotAfter.Sub(now) <= warnWithin:
			out = append(out, f.Ref.Result(framework.Warning, f.Field,
				fmt.Sprintf("certificate %q sha256:%s expires in %d days (%s), inside expiry.warnWithin %s",
					pki.Subject(c), pki.FingerprintOf(c).Short(), days, c.NotAfter.UTC().Format(time.RFC3339), warnWithin)))
		}
	}
	for _, p := range inv.Problems {
		out = append(out, p.Ref.Result(framework.Warning, p.Field, "unreadable certificate data: "+p.Message))
	}
	return out
}
