package pki

import (
	"bytes"
	"encoding/base64"
	"strings"
)

// PEM armour - the "-----BEGIN <label>-----" and "-----END <label>-----"
// lines of RFC 7468 - is what marks certificate and key material in text.
// Two questions are asked of it, here alone: whether a value is PEM to
// decode (LooksLikePEM: what counts as a certificate inside an object),
// and whether text carries PEM anywhere, as written or base64-encoded
// (CarriesPEM: what a message may not quote, which documents that are no
// object hold certificate material, which values embedded in objects may
// be base64 of PEM).

// armourLines are how the two armour lines begin.
var armourLines = []string{"-----BEGIN", "-----END"}

// encodedArmour is each of armourLines base64-encoded from its first, its
// second and its third byte, in whole groups of three bytes: the base64
// that armour encoded after any text holds, whatever comes before or after
// it ("LS0tLS1CRUdJ", "LS0tLUJFR0lO" and "LS0tQkVH" for "-----BEGIN").
// Being parts of the line, they also match base64 of text that holds such
// a part alone ("---BEG" starting a group): both questioners, a message's
// scrubber and the list of certificate material, err on the side of more.
var encodedArmour = encodeAtEachAlignment(armourLines)

// encodeAtEachAlignment returns, for each marker, the base64 of its bytes
// from offset 0, 1 and 2 on, cut to whole groups of three.
func encodeAtEachAlignment(markers []string) []string {
	var out []string
	for _, m := range markers {
		for off := range 3 {
			whole := m[off:]
			out = append(out, base64.StdEncoding.EncodeToString([]byte(whole[:len(whole)/3*3])))
		}
	}
	return out
}

// LooksLikePEM reports whether data contains a PEM header as written. It
// lets callers scanning arbitrary values skip non-PEM data cheaply and
// quietly before decoding it; base64 of PEM is not PEM to decode.
func LooksLikePEM(data []byte) bool {
	return bytes.Contains(data, pemBegin)
}

// CarriesPEM reports whether s carries PEM armour, as written or
// base64-encoded at any place in the encoded text (a Secret's data, a
// bundle encoded whole after a comment line, a key quoted inside an
// encoded document): PEMAt(s) >= 0. Text that only names PEM does not.
func CarriesPEM(s string) bool {
	return PEMAt(s) >= 0
}

// PEMAt returns the index in s of the first PEM armour it carries, as
// written or base64-encoded (CarriesPEM), or -1: where a message that
// quotes s must stop.
func PEMAt(s string) int {
	// Every armour line holds five dashes, every form of encodedArmour
	// begins with base64 of three ("LS0t"): most text holds neither.
	if !strings.Contains(s, "-----") && !strings.Contains(s, "LS0t") {
		return -1
	}
	at := -1
	for _, set := range [][]string{armourLines, encodedArmour} {
		for _, m := range set {
			if i := strings.Index(s, m); i >= 0 && (at < 0 || i < at) {
				at = i
			}
		}
	}
	return at
}
