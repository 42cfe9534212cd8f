package pki

import (
	"bytes"
	"crypto/x509"
	"encoding/base64"
)

// IsPrivateKeyDER reports whether der is a PKCS #8, PKCS #1 or SEC 1
// private key.
func IsPrivateKeyDER(der []byte) bool {
	if len(der) == 0 || der[0] != 0x30 { // every one is an ASN.1 SEQUENCE
		return false
	}
	_, e1 := x509.ParsePKCS8PrivateKey(der)
	_, e2 := x509.ParsePKCS1PrivateKey(der)
	_, e3 := x509.ParseECPrivateKey(der)
	return e1 == nil || e2 == nil || e3 == nil
}

// HoldsPrivateKey reports whether data is private key material: it holds
// a PEM block whose BEGIN line names a private key ("PRIVATE KEY", "RSA
// PRIVATE KEY", "ENCRYPTED PRIVATE KEY", "OPENSSH PRIVATE KEY", "PGP
// PRIVATE KEY BLOCK"), or is a DER private key, either of them as it is or
// base64-encoded as the whole of data (a Secret's data value, a
// caBundle). Text that only mentions a key is not key material. It says
// nothing of what it found: callers name the place, never the bytes.
func HoldsPrivateKey(data []byte) bool {
	ok, _ := holdsKey(data)
	return ok
}

// EmbedsPrivateKey is HoldsPrivateKey, or text that holds a base64-encoded
// PEM private key inside it: a kubeconfig's client-key-data, a JSON
// document's keyData, Helm values.
func EmbedsPrivateKey(text []byte) bool {
	ok, decoded := holdsKey(text)
	if ok {
		return true
	}
	if decoded != nil {
		return encodedArmouredKey(decoded)
	}
	return encodedArmouredKey(text)
}

// holdsKey is HoldsPrivateKey, and what data decoded to when the whole of
// it is base64.
func holdsKey(data []byte) (bool, []byte) {
	if armouredKey(data) || IsPrivateKeyDER(data) {
		return true, nil
	}
	whole := bytes.TrimSpace(data)
	if !isBase64Text(whole) {
		return false, nil
	}
	der, err := base64.StdEncoding.DecodeString(string(whole))
	if err != nil {
		return false, nil
	}
	return armouredKey(der) || IsPrivateKeyDER(der), der
}

// armouredKey reports whether data holds a PEM BEGIN line that names a
// private key.
func armouredKey(data []byte) bool {
	for rest := data; ; {
		i := bytes.Index(rest, pemBegin)
		if i < 0 {
			return false
		}
		rest = rest[i+len(pemBegin):]
		line := rest
		if j := bytes.IndexAny(line, "\r\n"); j >= 0 {
			line = line[:j]
		}
		if j := bytes.Index(line, pemDashes); j >= 0 {
			line = line[:j]
		}
		if bytes.Contains(line, []byte("PRIVATE KEY")) {
			return true
		}
	}
}

// encodedBegin is "-----BEGIN" base64-encoded from the start of a value:
// where base64 of a PEM document begins.
var encodedBegin = []byte(base64.StdEncoding.EncodeToString([]byte("-----BEGIN"))[:13])

// encodedArmouredKey reports whether text holds, inside it, base64 of a
// PEM document with a private key block.
func encodedArmouredKey(text []byte) bool {
	for rest := text; ; {
		i := bytes.Index(rest, encodedBegin)
		if i < 0 {
			return false
		}
		run := rest[i:]
		n := 0
		for n < len(run) && isBase64Byte(run[n]) {
			n++
		}
		rest = run[n:]
		enc := bytes.TrimRight(run[:n], "=")
		if len(enc)%4 == 1 { // a lone last character encodes nothing
			enc = enc[:len(enc)-1]
		}
		if der, err := base64.RawStdEncoding.DecodeString(string(enc)); err == nil && armouredKey(der) {
			return true
		}
	}
}

// isBase64Text reports whether s, not empty, is base64 text without
// whitespace, as a Secret's data value or a caBundle is.
func isBase64Text(s []byte) bool {
	if len(s) == 0 {
		return false
	}
	for _, c := range s {
		if !isBase64Byte(c) {
			return false
		}
	}
	return true
}

func isBase64Byte(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '='
}
