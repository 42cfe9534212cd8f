package controlplane

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"time"
)

// keyPair is a certificate with its private key. The control plane's own
// keys live only in the test's temporary directory.
type keyPair struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

// newCA makes a self-signed ECDSA P-256 CA valid from an hour ago for a day.
func newCA(cn string) (keyPair, error) {
	return issue(keyPair{}, &x509.Certificate{
		Subject:               pkix.Name{CommonName: cn},
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	})
}

// newServing issues a TLS server certificate for 127.0.0.1 and localhost.
func (ca keyPair) newServing(cn string) (keyPair, error) {
	return issue(ca, &x509.Certificate{
		Subject:     pkix.Name{CommonName: cn},
		DNSNames:    []string{"localhost"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
}

// newClient issues a TLS client certificate; the API server reads the user
// from the common name and the groups from the organizations.
func (ca keyPair) newClient(user string, groups ...string) (keyPair, error) {
	return issue(ca, &x509.Certificate{
		Subject:     pkix.Name{CommonName: user, Organization: groups},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
}

// issue signs tmpl with ca, or self-signs it when ca is empty.
func issue(ca keyPair, tmpl *x509.Certificate) (keyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return keyPair{}, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return keyPair{}, err
	}
	tmpl.SerialNumber = serial
	tmpl.NotBefore = time.Now().Add(-time.Hour)
	tmpl.NotAfter = time.Now().Add(24 * time.Hour)
	parent, signer := tmpl, key
	if ca.cert != nil {
		parent, signer = ca.cert, ca.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, signer)
	if err != nil {
		return keyPair{}, fmt.Errorf("certificate %q: %w", tmpl.Subject.CommonName, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return keyPair{}, err
	}
	return keyPair{cert: cert, key: key}, nil
}

// certPEM is the certificate as a PEM block.
func (k keyPair) certPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: k.cert.Raw})
}

// keyPEM is the private key as a PKCS#8 PEM block.
func (k keyPair) keyPEM() ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(k.key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// writePublic writes the public key as a PKIX PEM block to path.
func (k keyPair) writePublic(path string) error {
	der, err := x509.MarshalPKIXPublicKey(&k.key.PublicKey)
	if err != nil {
		return err
	}
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), 0o644)
}

// write writes the certificate and key as <base>.crt and <base>.key (0600).
func (k keyPair) write(base string) (certFile, keyFile string, err error) {
	certFile, keyFile = base+".crt", base+".key"
	if err := os.WriteFile(certFile, k.certPEM(), 0o644); err != nil {
		return "", "", err
	}
	kp, err := k.keyPEM()
	if err != nil {
		return "", "", err
	}
	if err := os.WriteFile(keyFile, kp, 0o600); err != nil {
		return "", "", err
	}
	return certFile, keyFile, nil
}
