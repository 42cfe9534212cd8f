package initpolicy

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/kube"
)

// TestDomainName: the domain init derives from a shared CA is its
// subject's common name (else first organization) made a DNS name of at
// most 60 characters, or "ca-" and its fingerprint when nothing is left.
func TestDomainName(t *testing.T) {
	raw := []byte("a certificate")
	for _, c := range []struct {
		name    string
		subject pkix.Name
		want    string
	}{
		{"a DNS name stays itself", pkix.Name{CommonName: "root.linkerd.cluster.local"}, "root.linkerd.cluster.local"},
		{"words", pkix.Name{CommonName: "Corp Root CA G2"}, "corp-root-ca-g2"},
		{"odd characters and empty labels", pkix.Name{CommonName: "Foo_Bar..-x-.(eu)"}, "foo-bar.x.eu"},
		{"no common name: the organization", pkix.Name{Organization: []string{"ACME, Inc."}}, "acme-inc"},
		{"nothing usable", pkix.Name{CommonName: "*** ..."}, "ca-81acd762140f"},
		{"too long", pkix.Name{CommonName: strings.Repeat("abcdefghi-", 8)}, strings.TrimSuffix(strings.Repeat("abcdefghi-", 6), "-")},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := domainName(&x509.Certificate{Raw: raw, Subject: c.subject})
			if got != c.want {
				t.Errorf("domainName = %q, want %q", got, c.want)
			}
			if !kube.ValidObjectName(got) || len(got) > 63 {
				t.Errorf("%q is not a valid domain", got)
			}
		})
	}
}
