package pki

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/internal/testpki"
)

// TestCarriesPEM: PEM armour is found as written and base64-encoded after
// any number of bytes, at its place; text that names PEM does not carry
// it, and LooksLikePEM answers for armour as written only.
func TestCarriesPEM(t *testing.T) {
	ca := testpki.NewCA("armour", testpki.Date(2026, 1, 1), testpki.Days(365))
	b64 := base64.StdEncoding.EncodeToString
	cases := []struct {
		name, text string
		at         int  // PEMAt
		looks      bool // LooksLikePEM
	}{
		{"a certificate", string(ca.PEM()), 0, true},
		{"a key after a name", "tls.key: " + string(ca.KeyPEM()), 9, true},
		{"an END line alone (a block cut short)", "...AAAA\n-----END CERTIFICATE-----\n", 8, false},
		{"base64 of a certificate (a Secret's data)", "ca.crt: " + b64(ca.PEM()), 8, false},
		{"base64 of a key one byte into a group", b64([]byte("k-----BEGIN PRIVATE KEY-----\n")), 4, false},
		{"base64 of a key two bytes into a group", b64([]byte("k:-----BEGIN PRIVATE KEY-----\n")), 4, false},
		{"base64 of an END line one byte into a group", b64([]byte("\n-----END CERTIFICATE-----\n")), 4, false},
		{"prose", "a PEM file begins with a BEGIN line; -- BEGIN --", -1, false},
		{"dashes", "-----", -1, false},
		{"base64 of text without armour", b64([]byte("# roots\n---\nBEGIN: CERTIFICATE\nEND\n")), -1, false},
		{"empty", "", -1, false},
	}
	for _, tc := range cases {
		if got := PEMAt(tc.text); got != tc.at {
			t.Errorf("%s: PEMAt %d, want %d", tc.name, got, tc.at)
		}
		if got := CarriesPEM(tc.text); got != (tc.at >= 0) {
			t.Errorf("%s: CarriesPEM %v", tc.name, got)
		}
		if got := LooksLikePEM([]byte(tc.text)); got != tc.looks {
			t.Errorf("%s: LooksLikePEM %v, want %v", tc.name, got, tc.looks)
		}
	}
}

// TestCarriesPEMAtEveryOffset: a certificate and a key, encoded whole after
// 0 to 8 bytes of any text, and inside a longer base64 value at each
// alignment, are carried PEM; each form of encodedArmour decodes to bytes
// of its armour line.
func TestCarriesPEMAtEveryOffset(t *testing.T) {
	ca := testpki.NewCA("armour", testpki.Date(2026, 1, 1), testpki.Days(365))
	for _, block := range []string{string(ca.PEM()), string(ca.KeyPEM()), "-----END CERTIFICATE-----\n"} {
		for n := range 9 {
			for _, fill := range []string{"x", "-", "\n", "\xff"} {
				enc := base64.StdEncoding.EncodeToString([]byte(strings.Repeat(fill, n) + block))
				if !CarriesPEM(enc) || !CarriesPEM("value: "+enc+" trailing") {
					t.Errorf("%d bytes of %q before %.20q: not found in %s", n, fill, block, enc)
				}
			}
		}
	}
	for _, form := range encodedArmour {
		if !strings.HasPrefix(form, "LS0t") {
			t.Errorf("%q does not begin with LS0t, PEMAt's quick test", form)
		}
	}
	if len(encodedArmour) != 6 {
		t.Fatalf("encodedArmour %q: want each armour line at three alignments", encodedArmour)
	}
	for i, form := range encodedArmour {
		dec, err := base64.StdEncoding.DecodeString(form)
		if err != nil || len(dec) < 6 || !strings.Contains(armourLines[i/3], string(dec)) {
			t.Errorf("%q decodes to %q (%v): no part of %q", form, dec, err, armourLines[i/3])
		}
	}
}
