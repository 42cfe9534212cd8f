package testpki

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
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
func TemplateFuncs() template.FuncMap {
	return template.FuncMap{
		"sha256": func(name string) string {
			sum := sha256.Sum256(Fixture(name).Cert.Raw)
			return hex.EncodeToString(sum[:])
		},
		"b64": func(names ...string) string { return base64.StdEncoding.EncodeToString(pems(names)) },
		"pem": func(indent int, names ...string) string { return indentText(indent, pems(names)) },
		"key": func(indent int, name string) string { return indentText(indent, Fixture(name).KeyPEM()) },
		"keyb64": func(name string) string {
			return base64.StdEncoding.EncodeToString(Fixture(name).KeyPEM())
		},
	}
}

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
