package kube

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/rotate-certs/rotate-certs/fn/pki"
)

// Messages name a field and the kind of value found there, never a value
// that could be key material: a private key pasted where a name, a
// duration or an object belongs must not reach a result, stderr or a log.
// Names, kinds, versions, keys, durations and dates are what messages
// quote; Plain tells them from anything else.

// maxPlain is the longest value a message shows: a DNS subdomain (a
// Kubernetes object name) is at most 253 characters.
const maxPlain = 253

// minSecretRun is the shortest run of base64 characters that Plain takes
// for encoded bytes (a key or a certificate) rather than a name: 32 base64
// characters are 24 bytes.
const minSecretRun = 32

// Plain reports whether s may appear in a message as written: at most 253
// printable ASCII characters on one line, no PEM armour ("-----"), and no
// run of 32 or more base64 characters that mixes upper case, lower case
// and digits as encoded bytes do (a key or a certificate: the kind of
// character changes at two in five characters or more; in a CamelCase
// name with a number far less often). Every Kubernetes name, kind,
// apiVersion, data key, duration and RFC 3339 time is plain.
func Plain(s string) bool {
	return plain(s, maxPlain)
}

// maxPlainPath is the longest file path a message shows (PATH_MAX).
const maxPlainPath = 4096

// plainPath is Plain for a file path, which may be longer than a name and
// is the user's own: a directory name may be any printable text the file
// system allows (non-ASCII, spaces, CamelCase with digits), so each
// slash-separated part is judged on its own, printable non-ASCII letters
// pass, and a control or format character, PEM armour or a run of encoded
// bytes in one part still makes the path not plain. Only messages ask
// this: which files a command reads never depends on it.
func plainPath(s string) bool {
	if len(s) > maxPlainPath || !utf8.ValidString(s) {
		return false
	}
	for _, part := range strings.Split(s, "/") {
		if !plain(asciiPart(part), maxPlainPath) {
			return false
		}
	}
	return true
}

// asciiPart replaces each printable non-ASCII character of part with a
// space (which plain takes as a separator), and any other with a control
// character (which plain refuses).
func asciiPart(part string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r < utf8.RuneSelf:
			return r
		case unicode.IsPrint(r):
			return ' '
		}
		return 0
	}, part)
}

// SafePath returns path as written when it is plainPath, else described:
// a path in running text.
func SafePath(path string) string {
	if plainPath(path) {
		return path
	}
	return "<" + Describe(path) + ">"
}

func plain(s string, max int) bool {
	if len(s) > max || strings.Contains(s, "-----") {
		return false
	}
	// A run of base64 characters, and how often the class of character
	// (upper, lower, digit, symbol) changes along it: about two changes in
	// three in random bytes, one in four in a CamelCase name with a number.
	run, changes, last := 0, 0, 0
	upper, lower, digit := false, false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c > 0x7e {
			return false
		}
		class := 0
		switch {
		case c >= 'A' && c <= 'Z':
			class, upper = 1, true
		case c >= 'a' && c <= 'z':
			class, lower = 2, true
		case c >= '0' && c <= '9':
			class, digit = 3, true
		case c == '+' || c == '/' || c == '=':
			class = 4
		default:
			run, changes, last = 0, 0, 0
			upper, lower, digit = false, false, false
			continue
		}
		if run > 0 && class != last {
			changes++
		}
		run, last = run+1, class
		if run >= minSecretRun && upper && lower && digit && 5*changes >= 2*run {
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

// kyamlEchoes are the markers after which kyaml's errors repeat a node
// they refused (InvalidNodeKindError: the node as YAML; an odd mapping: its
// values).
var kyamlEchoes = []string{": node contents:", ", content summary:"}

// lineEcho is the marker after which an error repeats one line of its
// input as written (kyaml's reader: "invalid document separator: ---...",
// where the line may be a private key's armour pasted at column 0).
const lineEcho = "invalid document separator: "

// privateKey is, beside PEM armour as written or in base64 (pki.PEMAt),
// what no message may carry however it came to quote its input: the name
// of a private key block.
const privateKey = "PRIVATE KEY"

// ScrubError returns err with what a message quotes of its input taken
// out (ScrubMessage): kyaml's errors append a node they refused, or repeat
// a line, and either may hold anything, a private key included. The
// scrubbed error wraps err.
func ScrubError(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if scrubbedMsg := ScrubMessage(msg); scrubbedMsg != msg {
		return &scrubbed{msg: scrubbedMsg, err: err}
	}
	return err
}

// ScrubMessage is the one scrubber of messages that may quote input text,
// whoever wrote them (kyaml, yaml.v3, this module): a node kyaml appends
// is cut off, a line it repeats is described (Safe) rather than shown, and
// whatever still carries PEM armour or the words PRIVATE KEY is cut from
// that word on.
func ScrubMessage(msg string) string {
	msg = cutNodeEcho(msg)
	msg = describeLineEcho(msg)
	return cutKeyMarkers(msg)
}

// cutNodeEcho cuts what kyaml appends of a refused node.
func cutNodeEcho(msg string) string {
	cut := len(msg)
	for _, m := range kyamlEchoes {
		if i := strings.Index(msg, m); i >= 0 && i < cut {
			cut = i
		}
	}
	if cut == len(msg) {
		return msg
	}
	return msg[:cut] + " (the node is not shown)"
}

// describeLineEcho replaces the quoted line after lineEcho with its
// description, unless it is plain and names no key.
func describeLineEcho(msg string) string {
	before, rest, found := strings.Cut(msg, lineEcho)
	if !found {
		return msg
	}
	line, _, _ := strings.Cut(rest, "\n")
	shown := "<" + Describe(line) + ">"
	if Plain(line) && markerAt(line) < 0 {
		shown = line
	}
	return before + lineEcho + shown + rest[len(line):]
}

// cutKeyMarkers cuts msg at the word that holds the first key marker, the
// last safety net for a quote no rule above knows.
func cutKeyMarkers(msg string) string {
	cut := markerAt(msg)
	if cut < 0 {
		return msg
	}
	cut = strings.LastIndexAny(msg[:cut], " \t\n:`\"'") + 1
	return msg[:cut] + "<input text not shown: it may hold key material>"
}

// markerAt returns the index of the first key marker in s - PEM armour,
// as written or base64-encoded at any alignment, or the words PRIVATE
// KEY - or -1.
func markerAt(s string) int {
	at := pki.PEMAt(s)
	if i := strings.Index(s, privateKey); i >= 0 && (at < 0 || i < at) {
		at = i
	}
	return at
}

type scrubbed struct {
	msg string
	err error
}

func (s *scrubbed) Error() string { return s.msg }
func (s *scrubbed) Unwrap() error { return s.err }
