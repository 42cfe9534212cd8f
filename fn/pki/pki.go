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
	// HeaderBlocks counts the CERTIFICATE blocks that carry PEM headers
	// ("Proc-Type: ..."): parsed as any other, but RFC 7468 has none, and
	// trust-manager refuses a source that holds one.
	HeaderBlocks int
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
// block at all, when a CERTIFICATE block does not parse, and when a block
// is broken or text around the blocks looks like part of one (see
// ScanPEM): encoding/pem skips a block it cannot read and resumes at the
// next BEGIN line, so a bundle would lose that certificate without a
// word. A failed decode returns no certificate. ScanPEM is the lenient
// form.
func DecodePEM(data []byte) (Decoded, error) {
	return strict(scanPEM(data, x509.ParseCertificate, 1))
}

// ScanPEM reads data as DecodePEM does, but goes on past a problem: it
// returns every certificate that parses, and one error per problem, in the
// order DecodePEM would meet them (DecodePEM fails with the first). A report
// uses it to show the good certificates of a value next to what is wrong
// with the rest; a trust bundle must not, it uses DecodePEM.
//
// Each line-start BEGIN line opens a block that must decode up to its END
// line; a block that does not (a damaged base64 line, a misspelt or
// missing END line) is a problem naming its ordinal ("the 2nd PEM block")
// unless its BEGIN line declares a type other than a certificate (a
// damaged key is skipped like a sound one). Text before, between and after
// the blocks may be anything (comments, "subject=" lines, a bundle file's
// headings) except what looks like part of a block: a BEGIN or END line
// that opens or closes nothing (indented, misspelt, orphaned), or a line of
// base64 (a body whose BEGIN line is damaged).
func ScanPEM(data []byte) (Decoded, []error) {
	return scanPEM(data, x509.ParseCertificate, maxProblems)
}

// maxProblems is the most problems ScanPEM describes in one value; it
// counts the rest in a last error ("and 374485 more problems"). 10 MB of
// BEGIN lines are 374,000 broken blocks, and a report needs the first few.
const maxProblems = 10

func strict(d Decoded, errs []error) (Decoded, error) {
	if len(errs) > 0 {
		return Decoded{}, errs[0]
	}
	return d, nil
}

var (
	pemBegin   = []byte("-----BEGIN ")
	pemNLBegin = []byte("\n-----BEGIN ")
	pemDashes  = []byte("-----")
	newline    = []byte("\n")
)

// nextBegin returns the offset of the first line-start BEGIN line in data
// at or after from, or len(data): where encoding/pem looks for a block.
func nextBegin(data []byte, from int) int {
	if from == 0 && bytes.HasPrefix(data, pemBegin) {
		return 0
	}
	if from > 0 {
		from-- // the newline before a BEGIN line at from
	}
	i := bytes.Index(data[from:], pemNLBegin)
	if i < 0 {
		return len(data)
	}
	return from + i + 1
}

// scanPEM reads data; it describes at most limit problems, and with a
// limit of 1 (DecodePEM) stops at the first.
func scanPEM(data []byte, parse func([]byte) (*x509.Certificate, error), limit int) (Decoded, []error) {
	var out Decoded
	var errs []error
	more := 0 // problems beyond limit
	problem := func(err func() error) {
		if len(errs) < limit {
			errs = append(errs, err())
			return
		}
		more++
	}
	blocks := 0
	// Cut data at every line-start BEGIN line: each piece holds one block
	// and the text after it, so encoding/pem can only read the block that
	// starts the piece, or nothing.
	pos := nextBegin(data, 0)
	if pos == len(data) {
		if line, what := brokenText(data); line > 0 {
			return Decoded{}, []error{fmt.Errorf("no PEM data found: line %d looks like part of a PEM block (%s)", line, what)}
		}
		return Decoded{}, []error{fmt.Errorf("no PEM data found")}
	}
	if line, what := brokenText(data[:pos]); line > 0 {
		problem(func() error { return textError(line, what, "before the 1st PEM block") })
	}
	line := 1 + bytes.Count(data[:pos], newline) // the line pos is on; counted piece by piece, linearly
	for pos < len(data) && (limit > 1 || len(errs) == 0) {
		next := nextBegin(data, pos+1)
		piece := data[pos:next]
		blocks++
		block, rest := pem.Decode(piece)
		switch {
		case block == nil:
			if typ, ok := beginType(piece); ok && !bytes.Contains(typ, []byte("CERTIFICATE")) {
				out.SkippedTypes = append(out.SkippedTypes, string(typ))
				break
			}
			problem(func() error {
				return fmt.Errorf("the %s PEM block (line %d) is malformed: %s", ordinal(blocks), line, whyMalformed(piece))
			})
		case block.Type != "CERTIFICATE":
			out.SkippedTypes = append(out.SkippedTypes, block.Type)
		default:
			cert, err := parse(block.Bytes)
			if err != nil {
				problem(func() error { return fmt.Errorf("the %s PEM block (line %d): %w", ordinal(blocks), line, err) })
			} else {
				out.Certificates = append(out.Certificates, cert)
				if len(block.Headers) > 0 {
					out.HeaderBlocks++
				}
			}
		}
		if block != nil {
			if l, what := brokenText(rest); l > 0 {
				afterLine := line + bytes.Count(piece[:len(piece)-len(rest)], newline)
				problem(func() error { return textError(afterLine+l-1, what, "after the "+ordinal(blocks)+" PEM block") })
			}
		}
		line += bytes.Count(piece, newline)
		pos = next
	}
	if more > 0 {
		errs = append(errs, fmt.Errorf("and %d more problem(s)", more))
	}
	return out, errs
}

func textError(line int, what, where string) error {
	return fmt.Errorf("line %d, %s, looks like part of a PEM block (%s); fix or remove it, a certificate there would be lost", line, where, what)
}

// beginType returns the type a BEGIN line declares, when the line is
// well formed ("-----BEGIN <type>-----").
func beginType(piece []byte) ([]byte, bool) {
	line, _, _ := bytes.Cut(piece, []byte("\n"))
	line = bytes.TrimRight(line, " \t\r")
	if !bytes.HasPrefix(line, pemBegin) || !bytes.HasSuffix(line, pemDashes) || len(line) < len(pemBegin)+len(pemDashes) {
		return nil, false
	}
	return line[len(pemBegin) : len(line)-len(pemDashes)], true
}

// whyMalformed says, as well as it can tell without echoing the block,
// why encoding/pem could not read a piece that starts with a BEGIN line.
func whyMalformed(piece []byte) string {
	typ, ok := beginType(piece)
	if !ok {
		return "its BEGIN line is damaged"
	}
	end := append(append([]byte("\n-----END "), typ...), pemDashes...)
	if !bytes.Contains(piece, end) {
		return "its END line is missing or misspelt"
	}
	return "its body is not valid base64 (a damaged line?)"
}

// brokenText returns the 1-based line of text, outside any block, that
// looks like part of a PEM block, and what it looks like; 0 when none
// does.
func brokenText(text []byte) (int, string) {
	n := 0
	for len(text) > 0 {
		n++
		line := text
		if i := bytes.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			text = nil
		}
		line = bytes.TrimSpace(line)
		if what := boundaryLike(line); what != "" {
			return n, what
		}
		if bodyLike(line) {
			return n, "a line of base64 outside any block: a body whose BEGIN line is damaged?"
		}
	}
	return 0, ""
}

// boundaryLike reports whether a trimmed line outside any block looks like
// a BEGIN or END line: three or more dashes, then BEGIN or END.
func boundaryLike(line []byte) string {
	rest := bytes.TrimLeft(line, "-")
	if len(line)-len(rest) < 3 {
		if bytes.Contains(line, []byte("-----BEGIN")) || bytes.Contains(line, []byte("-----END")) {
			return "a BEGIN or END line in the middle of a line"
		}
		return ""
	}
	rest = bytes.TrimLeft(rest, " ")
	switch {
	case hasWordPrefix(rest, "BEGIN"):
		return "a BEGIN line that is indented or misspelt"
	case hasWordPrefix(rest, "END"):
		return "an END line that closes no block"
	}
	return ""
}

func hasWordPrefix(b []byte, word string) bool {
	return len(b) >= len(word) && strings.EqualFold(string(b[:len(word)]), word)
}

// minBodyLine is the shortest line outside a block taken for a base64
// body line: PEM writes 64 characters a line, and a heading such as a
// certificate's name has spaces.
const minBodyLine = 40

// bodyLike reports whether a trimmed line is a long run of base64 mixing
// letters and digits, as a PEM body line is.
func bodyLike(line []byte) bool {
	if len(line) < minBodyLine {
		return false
	}
	letters, digits := false, false
	for _, c := range line {
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
			letters = true
		case c >= '0' && c <= '9':
			digits = true
		case c == '+' || c == '/' || c == '=':
		default:
			return false
		}
	}
	return letters && digits
}

// ordinal returns n as an English ordinal: 1st, 2nd, 3rd, 4th, 11th, 21st.
func ordinal(n int) string {
	suffix := "th"
	switch n % 100 {
	case 11, 12, 13:
	default:
		switch n % 10 {
		case 1:
			suffix = "st"
		case 2:
			suffix = "nd"
		case 3:
			suffix = "rd"
		}
	}
	return fmt.Sprintf("%d%s", n, suffix)
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

// DaysUntil is DaysLeft for a bare date: the whole days from now until
// notAfter, rounded down; negative once it has passed.
func DaysUntil(notAfter, now time.Time) int {
	return DaysLeft(&x509.Certificate{NotAfter: notAfter}, now)
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
