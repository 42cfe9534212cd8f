package truststore

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/binary"
	"fmt"

	gopkcs12 "software.sslmate.com/src/go-pkcs12"
)

// PKCS12 encodes a PKCS#12 truststore: one certificate bag per CA, each
// marked with Java's trusted-certificate attribute so that Java (keytool,
// KeyStore "PKCS12") treats it as a trust anchor, with the alias from aliasOf
// as its friendly name.
//
// With a password the store uses go-pkcs12's Modern2023 profile (PBES2 with
// PBKDF2-HMAC-SHA-256 and AES-256-CBC, HMAC-SHA-256 MAC): OpenSSL 3 reads it
// without -legacy and Java reads it from Java 12 on. With an empty password
// the store is neither encrypted nor MACed (go-pkcs12's Passwordless
// profile), which is what Java expects of a password-less truststore and
// what trust-manager writes for one.
type PKCS12 struct {
	// Password protects the store's integrity (and encrypts the
	// certificates, which are public anyway). Empty means no password.
	Password string
}

// Encode implements Encoder.
//
// go-pkcs12 draws the PBES2 salt, the AES IV and the MAC salt from an
// io.Reader that is crypto/rand by default, so two encodes of the same set
// would differ. Encode hands it a reader whose stream is a SHA-256 counter
// keyed by the set's fingerprints instead: the same set always gets the same
// salts and IV, and a different set gets different ones. Salts exist to stop
// one precomputed dictionary from attacking many stores; stores of public
// certificates lose nothing real by sharing salts only when they hold exactly
// the same certificates. The password is deliberately not part of the seed:
// the salt is stored in clear, and a salt that was a fast hash of the
// password would let an attacker test guesses without the KDF's iterations.
func (p PKCS12) Encode(certs []*x509.Certificate) ([]byte, error) {
	es, err := entries(certs)
	if err != nil {
		return nil, fmt.Errorf("pkcs12: %w", err)
	}
	tes := make([]gopkcs12.TrustStoreEntry, len(es))
	for i, e := range es {
		tes[i] = gopkcs12.TrustStoreEntry{Cert: e.cert, FriendlyName: e.alias}
	}
	enc := gopkcs12.Passwordless
	if p.Password != "" {
		enc = gopkcs12.Modern2023
	}
	out, err := enc.WithRand(newSeededReader("rotate-certs pkcs12 truststore", es)).EncodeTrustStoreEntries(tes, p.Password)
	if err != nil {
		return nil, fmt.Errorf("pkcs12: encode %d certificates: %w", len(tes), err)
	}
	return out, nil
}

// seededReader is an endless deterministic byte stream:
// SHA-256(seed || counter) for counter = 0, 1, 2, ...
type seededReader struct {
	seed    [sha256.Size]byte
	counter uint64
	buf     []byte
}

// newSeededReader seeds the stream from a label and the fingerprints of es
// (already in their canonical order).
func newSeededReader(label string, es []entry) *seededReader {
	h := sha256.New()
	h.Write([]byte(label))
	for _, e := range es {
		h.Write(e.fp[:])
	}
	r := &seededReader{}
	copy(r.seed[:], h.Sum(nil))
	return r
}

// Read fills b; it never fails.
func (r *seededReader) Read(b []byte) (int, error) {
	n := 0
	for n < len(b) {
		if len(r.buf) == 0 {
			var block [sha256.Size + 8]byte
			copy(block[:], r.seed[:])
			binary.BigEndian.PutUint64(block[sha256.Size:], r.counter)
			r.counter++
			sum := sha256.Sum256(block[:])
			r.buf = sum[:]
		}
		c := copy(b[n:], r.buf)
		r.buf = r.buf[c:]
		n += c
	}
	return n, nil
}
