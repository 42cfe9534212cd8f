package testpki

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"sort"
	"strings"
	"text/template"
)

// TemplateFuncs are the functions golden inputs use to embed fixtures:
//
//	{{b64 "ca-2026" "ca-2025"}}   base64 of the concatenated PEM (Secret data)
//	{{pem 6 "ca-2026"}}           PEM indented by 6 spaces (block scalars)
//	{{key 6 "leaf-old"}}          a fixture's private key, indented
//	{{keyb64 "leaf-old"}}         base64 of a fixture's private key
//	{{sha256 "ca-2025"}}          a fixture's SHA-256 fingerprint in hex
//	{{bundlehash "ca-2026" "ca-2025"}}   the bundle-hash of a bundle of these CAs
//	{{trusthash "gw" "ca-2026" "ca-2025"}}   the trust-hash of a workload that
//	                              rolled for bundle gw holding these CAs
//
// bundlehash and trusthash restate the formulas of the trust bundle rules
// (a bundle in canonical order) and of the restart rules, so that an input
// can hold the state a previous render left; a golden case whose input
// disagrees with the function shows it as a roll.
func TemplateFuncs() template.FuncMap {
	return template.FuncMap{
		"sha256": func(name string) string {
			sum := sha256.Sum256(Fixture(name).Cert.Raw)
			return hex.EncodeToString(sum[:])
		},
		"b64": B64,
		"pem": func(indent int, names ...string) string { return indentText(indent, pems(names)) },
		"key": func(indent int, name string) string { return indentText(indent, Fixture(name).KeyPEM()) },
		"keyb64": func(name string) string {
			return base64.StdEncoding.EncodeToString(Fixture(name).KeyPEM())
		},
		"bundlehash": bundleHash,
		"trusthash": func(bundle string, names ...string) string {
			sum := sha256.Sum256([]byte(bundle + " " + bundleHash(names...) + "\n"))
			return "sha256:" + hex.EncodeToString(sum[:])
		},
	}
}

// bundleHash is "sha256:" + hex of the canonical PEM of the named CAs:
// newest NotBefore first, then latest NotAfter, then SHA-256.
func bundleHash(names ...string) string {
	certs := make([]Cert, len(names))
	for i, n := range names {
		certs[i] = Fixture(n)
	}
	sort.SliceStable(certs, func(i, j int) bool {
		a, b := certs[i].Cert, certs[j].Cert
		if !a.NotBefore.Equal(b.NotBefore) {
			return a.NotBefore.After(b.NotBefore)
		}
		if !a.NotAfter.Equal(b.NotAfter) {
			return a.NotAfter.After(b.NotAfter)
		}
		fa, fb := sha256.Sum256(a.Raw), sha256.Sum256(b.Raw)
		return bytes.Compare(fa[:], fb[:]) < 0
	})
	var buf bytes.Buffer
	for _, c := range certs {
		buf.Write(c.PEM())
	}
	sum := sha256.Sum256(buf.Bytes())
	return "sha256:" + hex.EncodeToString(sum[:])
}

// B64 returns the base64 of the named fixtures' PEM, concatenated: a
// Secret's data value holding them ({{b64 ...}} in a template).
func B64(names ...string) string { return base64.StdEncoding.EncodeToString(pems(names)) }

// ExpandTemplate renders text with TemplateFuncs.
func ExpandTemplate(name, text string) ([]byte, error) {
	t, err := template.New(name).Funcs(TemplateFuncs()).Parse(text)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, nil); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func pems(names []string) []byte {
	var buf bytes.Buffer
	for _, n := range names {
		buf.Write(Fixture(n).PEM())
	}
	return buf.Bytes()
}

// indentText indents every line but the first by n spaces (the template
// places the first line), and drops the final newline.
func indentText(n int, b []byte) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines, "\n"+strings.Repeat(" ", n))
}
