package kube

import (
	"fmt"
	"strconv"
	"strings"
)

// Messages name a field and the kind of value found there, never a value
// that could be key material: a private key pasted where a name, a
// duration or an object belongs must not reach a result, stderr or a log.
// Names, kinds, versions, keys, durations and dates are what messages
// quote; Plain tells them from anything else.

// maxPlain is the longest value a message shows: a DNS subdomain (a
// Kubernetes object name) is at most 253 characters.
const maxPlain = 253

// minSecretRun is the shortest run of base64 characters, mixing upper
// case, lower case and digits, that Plain takes for encoded bytes (a key
// or a certificate) rather than a name: 32 base64 characters are 24
// bytes.
const minSecretRun = 32

// Plain reports whether s may appear in a message as written: at most 253
// printable ASCII characters on one line, no PEM armour ("-----"), and no
// run of 32 or more base64 characters that mixes upper case, lower case
// and digits (encoded key or certificate bytes). Every Kubernetes name,
// kind, apiVersion, data key, duration and RFC 3339 time is plain.
func Plain(s string) bool {
	if len(s) > maxPlain || strings.Contains(s, "-----") {
		return false
	}
	run, upper, lower, digit := 0, false, false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c > 0x7e {
			return false
		}
		switch {
		case c >= 'A' && c <= 'Z':
			upper = true
		case c >= 'a' && c <= 'z':
			lower = true
		case c >= '0' && c <= '9':
			digit = true
		case c == '+' || c == '/' || c == '=':
		default:
			run, upper, lower, digit = 0, false, false, false
			continue
		}
		run++
		if run >= minSecretRun && upper && lower && digit {
			return false
		}
	}
	return true
}

// Describe says what kind of string s is without showing it: "a string of
// 1704 bytes over 28 lines, PEM data".
func Describe(s string) string {
	var b strings.Builder
	b.WriteString("a string of " + strconv.Itoa(len(s)) + " bytes")
	if lines := strings.Count(strings.TrimSuffix(s, "\n"), "\n") + 1; lines > 1 {
		fmt.Fprintf(&b, " over %d lines", lines)
	}
	if strings.Contains(s, "-----BEGIN") {
		b.WriteString(", PEM data")
	}
	return b.String()
}

// Quote returns s quoted (%q) when it is Plain, else its Describe.
func Quote(s string) string {
	if Plain(s) {
		return strconv.Quote(s)
	}
	return Describe(s)
}

// Safe returns s unquoted when it is Plain, else its Describe in angle
// brackets: for names in running text ("Secret ns/<a string of 1704
// bytes ...>").
func Safe(s string) string {
	if Plain(s) {
		return s
	}
	return "<" + Describe(s) + ">"
}
