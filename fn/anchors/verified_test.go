package anchors

import (
	"crypto/x509"
	"testing"

	"github.com/rotate-certs/rotate-certs/internal/testpki"
)

// TestVerifiedRemembersAcrossRuns: a Verified answers as the signature
// check does for every pair, and a second run that parsed the same
// certificates again (other pointers) is answered from what the first
// checked, checking nothing new.
func TestVerifiedRemembersAcrossRuns(t *testing.T) {
	other := testpki.NewSubjectCA("verified-other", "root.mesh.test", day(0), testpki.Days(730))
	unrelated := testpki.NewSubjectCA("verified-unrelated", "root.elsewhere.test", day(0), testpki.Days(730))
	pairs := []struct {
		name     string
		ca, cert testpki.Cert
		want     bool
	}{
		{"issuer signed by its anchor", anchorOld, issuerOld, true},
		{"issuer against an anchor of the same subject that did not sign it", other, issuerOld, false},
		{"issuer against an anchor of another subject", unrelated, issuerOld, false},
		{"anchor self-signed", anchorOld, anchorOld, true},
	}
	reparse := func(c testpki.Cert) *x509.Certificate {
		out, err := x509.ParseCertificate(c.Cert.Raw)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	v := NewVerified()
	first, second := v.Verifier(), v.Verifier()
	for _, p := range pairs {
		if got := first(p.ca.Cert, p.cert.Cert); got != p.want {
			t.Errorf("%s: first run %v, want %v", p.name, got, p.want)
		}
	}
	checked := len(v.seen)
	for _, p := range pairs {
		if got := second(reparse(p.ca), reparse(p.cert)); got != p.want {
			t.Errorf("%s: second run %v, want %v", p.name, got, p.want)
		}
	}
	if len(v.seen) != checked || checked != 3 {
		t.Errorf("checks remembered: %d after the first run, %d after the second; want 3 both times (a pair of other subjects is never checked)", checked, len(v.seen))
	}
	var none *Verified
	if !none.Verifier()(anchorOld.Cert, issuerOld.Cert) {
		t.Error("a nil Verified does not check")
	}
}
