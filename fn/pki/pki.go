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
// text follows the last block (a truncated or corrupted value).
func DecodePEM(data []byte) (Decoded, error) {
	return decodePEM(data, x509.ParseCertificate)
}

func decodePEM(data []byte, parse func([]byte) (*x509.Certificate, error)) (Decoded, error) {
	var out Decoded
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
			return Decoded{}, fmt.Errorf("PEM block %d: %w", blocks, err)
		}
		out.Certificates = append(out.Certificates, cert)
	}
	if blocks == 0 {
		return Decoded{}, fmt.Errorf("no PEM data found")
	}
	if trailing := bytes.TrimSpace(rest); len(trailing) > 0 {
		if bytes.Contains(trailing, []byte("-----BEGIN")) {
			return Decoded{}, fmt.Errorf("PEM block %d is malformed", blocks+1)
		}
	}
	return out, nil
}

// LooksLikePEM reports whether data contains a PEM header. It lets callers
// scanning arbitrary values skip non-PEM data cheaply and quietly.
func LooksLikePEM(data []byte) bool {
	return bytes.Contains(data, []byte("-----BEGIN "))
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
