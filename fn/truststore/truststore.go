// Package truststore encodes a set of trusted CA certificates as the binary
// truststores Java and other runtimes read: PKCS#12 and JKS.
//
// Both encoders are deterministic: the same set of certificates and the same
// password always give the same bytes, whatever order the certificates come
// in. rotate-certs renders configuration that lives in git; a truststore that
// changed on every render would be a diff on every render, roll every
// consumer of the target and make "nothing changed" impossible to see. So no
// random salt, no random IV and no wall-clock timestamp goes into a store:
// every value that is usually random or "now" is derived from the
// certificates themselves.
//
// Nothing here reads YAML, a clock or a global; callers pass certificates.
package truststore

import (
	"crypto/x509"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/rotate-certs/rotate-certs/fn/pki"
)

// Encoder turns a set of CA certificates into truststore bytes.
type Encoder interface {
	// Encode returns the truststore holding certs as trusted certificate
	// entries. Duplicates (same DER) are stored once; the order of certs
	// does not matter.
	Encode(certs []*x509.Certificate) ([]byte, error)
}

// ErrNoCertificates is returned when asked to encode an empty set: a
// truststore that trusts nothing is always a mistake upstream.
var ErrNoCertificates = errors.New("no certificates to encode")

// entry is one certificate with its alias, the unit both formats store.
type entry struct {
	alias string
	cert  *x509.Certificate
	fp    pki.Fingerprint
}

// entries deduplicates certs and sorts them by alias, so that the stored
// order depends only on the set.
func entries(certs []*x509.Certificate) ([]entry, error) {
	if len(certs) == 0 {
		return nil, ErrNoCertificates
	}
	set := pki.NewSet(certs...)
	out := make([]entry, 0, set.Len())
	for _, c := range set.List() {
		if c == nil || len(c.Raw) == 0 {
			return nil, fmt.Errorf("certificate without DER encoding")
		}
		out = append(out, entry{alias: aliasOf(c), cert: c, fp: pki.FingerprintOf(c)})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].alias != out[j].alias {
			return out[i].alias < out[j].alias
		}
		return out[i].fp.String() < out[j].fp.String()
	})
	return out, nil
}

// maxAliasName bounds the subject part of an alias; the fingerprint suffix
// keeps aliases unique whatever is cut.
const maxAliasName = 48

// aliasOf returns the stable alias (friendly name) of cert in a truststore:
// its subject's common name (else the whole subject) reduced to lowercase
// letters, digits and dashes, then "-" and the first 12 hex digits of its
// SHA-256 fingerprint. Two certificates with the same subject, such as an
// old and a new CA of the same name, get different aliases; the same
// certificate always gets the same one. Lowercase because JKS aliases are
// case-insensitive and Java lowercases them.
func aliasOf(cert *x509.Certificate) string {
	name := cert.Subject.CommonName
	if name == "" {
		name = cert.Subject.String()
	}
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
			dash = false
			continue
		}
		if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	slug := strings.TrimRight(b.String(), "-")
	if len(slug) > maxAliasName {
		slug = strings.TrimRight(slug[:maxAliasName], "-")
	}
	if slug == "" {
		slug = "ca"
	}
	return slug + "-" + pki.FingerprintOf(cert).Short()
}
