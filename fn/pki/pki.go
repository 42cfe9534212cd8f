// Package pki holds the pure certificate helpers that every other package of
// rotate-certs builds on: PEM decoding that never lets key material through,
// SHA-256 identities, and the canonical PEM encoding of a certificate list.
//
// Nothing here reads YAML, a clock or a global: callers pass bytes and times.
package pki

import (
	"bytes"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"strings"
	"time"
)

// Fingerprint is the SHA-256 of a certificate's DER encoding, the identity
// rotate-certs uses for deduplication and ordering decisions.
type Fingerprint [sha256.Size]byte

// FingerprintOf returns the SHA-256 fingerprint of cert.
func FingerprintOf(cert *x509.Certificate) Fingerprint {
	return sha256.Sum256(cert.Raw)
}

// String returns the fingerprint as lowercase hex.
func (f Fingerprint) String() string { return hex.EncodeToString(f[:]) }

// Short returns the first 12 hex digits, enough to tell certificates apart
// in messages and tables.
func (f Fingerprint) Short() string { return f.String()[:12] }

// Decoded is the result of scanning PEM data.
type Decoded struct {
	// Certificates are the parsed CERTIFICATE blocks, in input order,
	// duplicates included.
	Certificates []*x509.Certificate
	// SkippedTypes lists the type of every PEM block that was not a
	// certificate (for example "PRIVATE KEY"), in input order. The block
	// contents are never kept.
	SkippedTypes []string
}

// HasPrivateKey reports whether any skipped block was key material.
func (d Decoded) HasPrivateKey() bool {
	for _, t := range d.SkippedTypes {
		if strings.Contains(t, "PRIVATE KEY") {
			return true
		}
	}
	return false
}

// DecodePEM parses every PEM block in data. Non-CERTIFICATE blocks are
// skipped and only their type is reported. It fails when data holds no PEM
// block at all, when a CERTIFICATE block does not parse, or when non-blank
// text follows the last block (a truncated or corrupted value); a failed
// decode returns no certificate. ScanPEM is the lenient form.
func DecodePEM(data []byte) (Decoded, error) {
	return strict(scanPEM(data, x509.ParseCertificate))
}

// ScanPEM reads data as DecodePEM does, but goes on past a problem: it
// returns every certificate that parses, and one error per problem, in the
// order DecodePEM would meet them (DecodePEM fails with the first). A report
// uses it to show the good certificates of a value next to what is wrong
// with the rest; a trust bundle must not, it uses DecodePEM.
func ScanPEM(data []byte) (Decoded, []error) {
	return scanPEM(data, x509.ParseCertificate)
}

func strict(d Decoded, errs []error) (Decoded, error) {
	if len(errs) > 0 {
		return Decoded{}, errs[0]
	}
	return d, nil
}

func scanPEM(data []byte, parse func([]byte) (*x509.Certificate, error)) (Decoded, []error) {
	var out Decoded
	var errs []error
	rest := data
	blocks := 0
	for {
		block, r := pem.Decode(rest)
		if block == nil {
			break
		}
		blocks++
		rest = r
		if block.Type != "CERTIFICATE" {
			out.SkippedTypes = append(out.SkippedTypes, block.Type)
			continue
		}
		cert, err := parse(block.Bytes)
		if err != nil {
			errs = append(errs, fmt.Errorf("PEM block %d: %w", blocks, err))
			continue
		}
		out.Certificates = append(out.Certificates, cert)
	}
	if blocks == 0 {
		return Decoded{}, []error{fmt.Errorf("no PEM data found")}
	}
	if trailing := bytes.TrimSpace(rest); len(trailing) > 0 {
		if bytes.Contains(trailing, []byte("-----BEGIN")) {
			errs = append(errs, fmt.Errorf("PEM block %d is malformed", blocks+1))
		}
	}
	return out, errs
}

// LooksLikePEM reports whether data contains a PEM header. It lets callers
// scanning arbitrary values skip non-PEM data cheaply and quietly.
func LooksLikePEM(data []byte) bool {
	return bytes.Contains(data, []byte("-----BEGIN "))
}

var (
	beginCertificate = []byte("-----BEGIN CERTIFICATE-----")
	endCertificate   = []byte("-----END CERTIFICATE-----")
)

// HoldsCertificateData reports whether data claims to hold a PEM
// certificate: a line that starts with -----BEGIN CERTIFICATE-----,
// followed later by a line that starts with -----END CERTIFICATE-----, or
// directly by a line of base64 or another PEM boundary line (a damaged or
// cut-short block). Text that only mentions the header -
// documentation in a ConfigMap, say - does not claim to be a certificate.
// A report treats data that claims to be a certificate and does not parse
// as unreadable; anything else that does not parse is none of its business.
func HoldsCertificateData(data []byte) bool {
	begun, afterBegin := false, false
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		switch {
		case afterBegin && (isBase64Line(line) || bytes.HasPrefix(line, []byte("-----"))):
			return true
		case bytes.HasPrefix(line, beginCertificate):
			begun, afterBegin = true, true
			continue
		case begun && bytes.HasPrefix(line, endCertificate):
			return true
		}
		afterBegin = false
	}
	return false
}

// isBase64Line reports whether line, without trailing blanks, is non-empty
// base64 text.
func isBase64Line(line []byte) bool {
	line = bytes.TrimRight(line, " \t\r")
	if len(line) == 0 {
		return false
	}
	for _, c := range line {
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '+', c == '/', c == '=':
		default:
			return false
		}
	}
	return true
}

// EncodePEM writes certs as consecutive CERTIFICATE blocks, each
// newline-terminated, with no other text: the same list always gives the same
// bytes.
func EncodePEM(certs []*x509.Certificate) []byte {
	var buf bytes.Buffer
	for _, c := range certs {
		_ = pem.Encode(&buf, &pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
	}
	return buf.Bytes()
}

// Expired reports whether cert is no longer valid at now.
func Expired(cert *x509.Certificate, now time.Time) bool {
	return now.After(cert.NotAfter)
}

// DaysLeft returns the whole days from now until cert expires, rounded down;
// negative once it has expired.
func DaysLeft(cert *x509.Certificate, now time.Time) int {
	d := cert.NotAfter.Sub(now)
	days := int(d / (24 * time.Hour))
	if d < 0 && d%(24*time.Hour) != 0 {
		days--
	}
	return days
}

// IsCA reports whether cert may act as a trust anchor or issuer: a CA by its
// basic constraints, or a self-signed certificate without basic constraints
// (old roots).
func IsCA(cert *x509.Certificate) bool {
	if cert.BasicConstraintsValid {
		return cert.IsCA
	}
	return bytes.Equal(cert.RawSubject, cert.RawIssuer) && cert.CheckSignatureFrom(cert) == nil
}

// Describe returns a one-line description of cert for messages: subject,
// short fingerprint and NotAfter.
func Describe(cert *x509.Certificate) string {
	return fmt.Sprintf("%q (sha256:%s, expires %s)", Subject(cert), FingerprintOf(cert).Short(), cert.NotAfter.UTC().Format(time.RFC3339))
}

// Subject returns the certificate's subject in RFC 2253 form, or its serial
// number when the subject is empty.
func Subject(cert *x509.Certificate) string {
	if s := cert.Subject.String(); s != "" {
		return s
	}
	return "serial " + cert.SerialNumber.String()
}
