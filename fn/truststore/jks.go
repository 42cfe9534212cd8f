package truststore

import (
	"bytes"
	"crypto/x509"
	"fmt"
	"time"

	"github.com/pavlo-v-chernykh/keystore-go/v4"
)

// JKS encodes a Java KeyStore (the classic "JKS" format) holding one
// trusted certificate entry per CA, under the alias from aliasOf.
type JKS struct {
	// Password keys the store's integrity digest. Java's conventional
	// truststore password is "changeit".
	Password string
}

// Encode implements Encoder.
//
// Every JKS entry carries a creation timestamp, and keystore-go's examples
// and most writers put the wall clock there, which would make every render a
// new file. Encode stamps every entry with the latest NotBefore of the set
// instead: a moment that belongs to the certificates, moves only when the
// set gains a newer certificate, and is never in the future of the newest
// CA. Entries are written in alias order (keystore-go's ordered mode; its
// default is Go map order, which is random).
func (j JKS) Encode(certs []*x509.Certificate) ([]byte, error) {
	es, err := entries(certs)
	if err != nil {
		return nil, fmt.Errorf("jks: %w", err)
	}
	created := creationTime(es)
	ks := keystore.New(keystore.WithOrderedAliases())
	for _, e := range es {
		err := ks.SetTrustedCertificateEntry(e.alias, keystore.TrustedCertificateEntry{
			CreationTime: created,
			Certificate:  keystore.Certificate{Type: "X509", Content: e.cert.Raw},
		})
		if err != nil {
			return nil, fmt.Errorf("jks: add %s: %w", e.alias, err)
		}
	}
	var buf bytes.Buffer
	if err := ks.Store(&buf, []byte(j.Password)); err != nil {
		return nil, fmt.Errorf("jks: encode %d certificates: %w", len(es), err)
	}
	return buf.Bytes(), nil
}

// creationTime returns the latest NotBefore among es, truncated to the
// millisecond JKS stores (and not before 1970, which it cannot store).
func creationTime(es []entry) time.Time {
	var latest time.Time
	for _, e := range es {
		if e.cert.NotBefore.After(latest) {
			latest = e.cert.NotBefore
		}
	}
	if latest.Before(time.Unix(0, 0)) {
		// JKS stores milliseconds since 1970 unsigned.
		latest = time.Unix(0, 0)
	}
	return latest.UTC().Truncate(time.Millisecond)
}
