package trustdiff

import (
	"strings"
	"unicode"

	"github.com/rotate-certs/rotate-certs/fn/inventory"
)

// Trust embedded in objects no trust bundle writes (inventory.ScanAll): a
// pod template's env value (`linkerd inject` writes the mesh's anchors
// into every proxy's env) and a Helm value of a Flux HelmRelease or an
// Argo CD Application (Linkerd's identityTrustAnchorsPEM). Such a value is
// a trust object by the rule of every value (isTrust): CAs only, none a
// link of a chain, unless its name says it is a certificate (presented).
// Who reads it is not decided here: restart.Readers answers it, asked
// with the value's field (restart.Subject.Field), by the one rule of
// readers:
//
//   - an env value is read by its own workload, once, at start
//     (restart.ViaOwnEnv). Changing the value changes the pod template, so
//     the change that changes it rolls the workload (it is listed among
//     the rolls) and the workload starts on the new value: it never keeps
//     the old trust, so no break of the four combinations comes from it,
//     whatever its rotate-certs.dev/reload (Reader.Never is false for it:
//     a changed template rolls whatever the annotation says). Each
//     workload holds its own copy: a peer whose copy the change leaves
//     alone is judged against its own copy.
//   - a Helm value is read by the objects the chart renders, which diff
//     does not see: it has no readers, so no breaks, but its change is
//     listed and a CA it gains that nothing explains is planted.

// embeds reports whether value v is trust its object holds in a value of
// its own (an env value, a Helm value): what reads it is the object's own
// reading (restart.Subject.Field), not what reads the object.
func embeds(v *value) bool {
	return v.place == inventory.PlaceEnv || v.place == inventory.PlaceHelmValue
}

// Words of an embedded value's name that say what it holds: a name with a
// certificate word and no trust word is a certificate presented with its
// chain (Linkerd's identity.issuer.tls.crtPEM, an env TLS_CERT), not
// trust.
var (
	trustWords = map[string]bool{"ca": true, "cas": true, "cacert": true, "cacerts": true, "cabundle": true, "trust": true, "trusted": true,
		"anchor": true, "anchors": true, "root": true, "roots": true, "bundle": true, "authority": true, "authorities": true}
	certWords = map[string]bool{"crt": true, "cert": true, "certificate": true, "chain": true, "fullchain": true}
)

// presented reports whether embedded value v is, by its name, a
// certificate presented rather than trust.
func presented(v *value) bool {
	if v.place != inventory.PlaceEnv && v.place != inventory.PlaceHelmValue {
		return false
	}
	cert := false
	for _, w := range nameWords(v.name) {
		if trustWords[w] {
			return false
		}
		cert = cert || certWords[w]
	}
	return cert
}

// nameWords splits a name into lowercase words at every character that is
// not a letter or digit and where a lowercase letter or digit meets an
// uppercase one: "identityTrustAnchorsPEM" is identity, trust, anchors,
// pem; "LINKERD2_PROXY_IDENTITY_TRUST_ANCHORS" is linkerd2, proxy,
// identity, trust, anchors.
func nameWords(name string) []string {
	var out []string
	var w strings.Builder
	flush := func() {
		if w.Len() > 0 {
			out = append(out, strings.ToLower(w.String()))
			w.Reset()
		}
	}
	prev := rune(0)
	for _, r := range name {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case unicode.IsUpper(r) && (unicode.IsLower(prev) || unicode.IsDigit(prev)):
			flush()
			w.WriteRune(r)
		default:
			w.WriteRune(r)
		}
		prev = r
	}
	flush()
	return out
}
