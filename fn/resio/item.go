package resio

import (
	"bytes"

	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
)

// fileKeys are the annotations kyaml keeps in sync on every item it hands
// a function (framework.Execute): the path, index and id of the item's
// file, each internal form followed by its legacy form. kpt and kustomize
// put them on every item.
var fileKeys = [6]string{kioutil.PathAnnotation, kioutil.LegacyPathAnnotation, kioutil.IndexAnnotation,
	kioutil.LegacyIndexAnnotation, kioutil.IdAnnotation, kioutil.LegacyIdAnnotation}

// migrationID is set by kyaml on every item before the function runs and
// deleted after it: an item that arrives with it loses it.
const migrationID = kioutil.InternalAnnotationsMigrationResourceIDAnnotation

// pattern records which synced annotations an item carries: bit i for
// fileKeys[i].
type pattern uint8

const (
	internalBits pattern = 1<<0 | 1<<2 | 1<<4
	legacyBits   pattern = 1<<1 | 1<<3 | 1<<5
)

func (p pattern) internal() bool { return p&internalBits != 0 }
func (p pattern) legacy() bool   { return p&legacyBits != 0 }

// paired reports whether every synced annotation the item carries is there
// in both forms.
func (p pattern) paired() bool { return p&internalBits == (p&legacyBits)>>1 }

// annotations returns a map holding the keys of p (values do not matter),
// for kyaml's format inference.
func (p pattern) annotations() map[string]string {
	m := map[string]string{}
	for i, k := range fileKeys {
		if p&(1<<i) != 0 {
			m[k] = "x"
		}
	}
	return m
}

// typeState is what an item's text says about its apiVersion or kind.
type typeState uint8

const (
	typeAbsent  typeState = iota // no such top-level key
	typePlain                    // a plain word
	typeUnknown                  // written in a form the reader does not follow
)

// itemText is what the fast path reads from an item's text without parsing
// it: its type, and what kyaml's annotation bookkeeping would do to it.
type itemText struct {
	apiVersion, kind     string
	apiVersionAt, kindAt typeState
	// object is true for a block mapping whose top-level keys are all
	// plain words, and for "{}"; anything else is parsed.
	object bool
	// synced is false when kyaml's bookkeeping might change the item in a
	// way the fast path does not reproduce on its text: empty or null
	// metadata or annotations, synced annotations written in a form this
	// reader does not follow, internal and legacy forms that differ,
	// comments among them. Such an item is parsed and handed to kyaml's
	// bookkeeping.
	synced bool
	// pattern is the synced annotations the item carries.
	pattern pattern
	// cutStart and cutEnd delimit the line kyaml's bookkeeping deletes
	// (the migration id annotation), as offsets into the item's text;
	// cutEnd is 0 when there is none.
	cutStart, cutEnd int
}

// needed reports whether the function needs the item, judged by its
// type. An item without a kind is no Kubernetes object any rule reads; one
// whose type is not written plainly is parsed.
func (t *itemText) needed(needs func(apiVersion, kind string) bool) bool {
	switch {
	case t.kindAt == typeAbsent:
		return false
	case t.kindAt == typeUnknown || t.apiVersionAt == typeUnknown:
		return true
	}
	return needs(t.apiVersion, t.kind)
}

// block tracks one block mapping being read: the indentation of its keys,
// unknown until the first one.
type block struct {
	open   bool // its key line was seen and nothing left it yet
	state  valueForm
	indent int
	keys   int
}

// valueForm is how a mapping value is written on its key's line.
type valueForm uint8

const (
	formBlock valueForm = iota // nothing after the colon: a block (or null) follows
	formFlow                   // a flow mapping on the line
	formOther                  // anything else: a scalar, an alias, a tag, "{}"
)

func formOf(value []byte) valueForm {
	switch {
	case len(value) == 0:
		return formBlock
	case value[0] == '{' && value[len(value)-1] == '}' && !bytes.Equal(value, []byte("{}")):
		return formFlow
	default:
		return formOther
	}
}

// readItem reads raw (an item's chunk) line by line: its top-level keys at
// column 2 ("- key:" or "  key:"), metadata's keys and the entries of
// metadata.annotations, without parsing. intern returns a shared copy of a
// type name, so that a million items do not hold a million copies of "v1".
func readItem(raw []byte, intern func([]byte) string) itemText {
	r := &itemReader{t: itemText{object: true, synced: true}, intern: intern}
	off, entryLine, ok := r.entryStart(raw)
	if !ok {
		return r.t
	}
	for off < len(raw) {
		lineStart := off
		line := raw[off:]
		if i := bytes.IndexByte(line, '\n'); i >= 0 {
			line = line[:i]
		}
		off += len(line) + 1
		indent := 2 // the entry's line: "- key: ..."
		if !entryLine {
			indent = leadingSpaces(line)
		}
		entryLine = false
		if !r.line(line[indent:], indent, lineStart, min(off, len(raw))) {
			return r.t
		}
	}
	r.finish()
	return r.t
}

// itemReader is what readItem knows of an item so far.
type itemReader struct {
	t                  itemText
	intern             func([]byte) string
	meta, annos        block
	metaSeen           bool
	annosSeen          bool
	entryContinues     bool // the last entry read is synced: deeper lines would continue its value
	values             [6][]byte
	migrationSeen      bool
	commentsInAnnos    bool
	lineStart, lineEnd int // of the line being read, in raw
}

func (r *itemReader) unsynced() { r.t.synced = false }

// notObject records that the item is not a plain block mapping, and
// returns false: reading stops, so what its annotations hold is not known
// and the item's annotations are not in sync as far as the fast path can
// tell (kyaml keeps its books: it refuses path, index or id forms that
// differ, which the text reading stopped before seeing; found by
// FuzzFastPathMatchesKyaml).
func (r *itemReader) notObject() bool {
	r.t.object = false
	r.unsynced()
	return false
}

// entryStart finds the item's "- " line past any comments before it, and
// returns where reading goes on: at that line (entryLine: its keys start
// at column 2 after the dash), or after it for "- # comment" (the keys
// follow at column 2). ok is false when the entry line decides the item
// already: "-" alone or with nothing after it (null, or an entry on the
// next line), a sequence, "{}" (an object only when nothing but blank
// lines follow it), or a comment and nothing more.
func (r *itemReader) entryStart(raw []byte) (off int, entryLine, ok bool) {
	for off < len(raw) {
		line := raw[off:]
		if i := bytes.IndexByte(line, '\n'); i >= 0 {
			line = line[:i]
		}
		next := off + len(line) + 1
		if len(line) > 0 && line[0] == '#' {
			off = next // a comment before the item
			continue
		}
		if len(line) < 2 {
			return 0, false, r.notObject()
		}
		rest := bytes.TrimRight(line[2:], " ")
		switch {
		case len(rest) == 0:
			return 0, false, r.notObject()
		case bytes.Equal(rest, []byte("{}")):
			r.t.object = len(bytes.TrimSpace(raw[min(next, len(raw)):])) == 0
			return 0, false, false
		case rest[0] == '-' && (len(rest) == 1 || rest[1] == ' '):
			return 0, false, r.notObject()
		case rest[0] == '#':
			if !hasContent(raw[min(next, len(raw)):]) {
				return 0, false, r.notObject()
			}
			return next, false, true
		}
		return off, true, true
	}
	return off, false, true
}

// line reads one line after the entry's start, rest being the line from
// its first non-space byte at column indent; false when the item turns
// out not to be a plain block mapping.
func (r *itemReader) line(rest []byte, indent, start, end int) bool {
	if len(rest) == 0 {
		return true
	}
	if rest[0] == '#' {
		r.commentsInAnnos = r.commentsInAnnos || r.annos.open
		return true
	}
	r.lineStart, r.lineEnd = start, end
	isEntry := rest[0] == '-' && (len(rest) == 1 || rest[1] == ' ')
	meta, annos := &r.meta, &r.annos
	switch {
	case indent < 2:
		return r.notObject()
	case indent == 2:
		return r.topLevelKey(rest, isEntry)
	case meta.open && (meta.indent < 0 || indent == meta.indent):
		r.metadataKey(rest, indent, isEntry)
	case annos.open && indent > meta.indent && (annos.indent < 0 || indent == annos.indent):
		r.annotation(rest, indent, isEntry)
	case annos.open && indent > annos.indent:
		if r.entryContinues {
			r.unsynced() // a synced annotation's value goes on over lines
		}
	case annos.open && indent > meta.indent:
		r.unsynced() // between metadata's keys and the entries' column
	case meta.open && indent < meta.indent:
		r.unsynced()
	}
	return true
}

// topLevelKey reads a key at column 2: apiVersion, kind, metadata.
func (r *itemReader) topLevelKey(rest []byte, isEntry bool) bool {
	r.meta.open, r.annos.open, r.entryContinues = false, false, false
	if isEntry {
		return true // an entry of a compact sequence under the last key
	}
	key, value, ok := keyValue(rest)
	if !ok {
		return r.notObject()
	}
	switch string(key) {
	case "apiVersion":
		if r.t.apiVersionAt == typeAbsent {
			r.t.apiVersion, r.t.apiVersionAt = word(value, r.intern)
		}
	case "kind":
		if r.t.kindAt == typeAbsent {
			r.t.kind, r.t.kindAt = word(value, r.intern)
		}
	case "metadata":
		if r.metaSeen {
			r.unsynced() // kyaml reads the first; leave it to kyaml
		}
		r.metaSeen = true
		r.meta = block{open: true, state: formOf(value), indent: -1}
		if r.meta.state == formFlow && bytes.Contains(value, []byte("annotations")) {
			r.unsynced()
		}
	}
	return true
}

// metadataKey reads a key of metadata.
func (r *itemReader) metadataKey(rest []byte, indent int, isEntry bool) {
	if r.meta.indent < 0 && r.meta.state != formBlock {
		r.unsynced() // a value on the line and more below it
	}
	r.meta.indent = indent
	r.annos.open, r.entryContinues = false, false
	if isEntry {
		r.unsynced() // metadata is a list: kyaml rewrites it
		return
	}
	r.meta.keys++
	key, value, ok := keyValue(rest)
	if !ok {
		r.unsynced()
		return
	}
	if string(key) == "annotations" {
		if r.annosSeen {
			r.unsynced()
		}
		r.annosSeen = true
		r.annos = block{open: true, state: formOf(value), indent: -1}
		if r.annos.state == formFlow && hasSyncedText(value) {
			r.unsynced()
		}
	}
}

// annotation reads an entry of metadata.annotations: the migration id
// (the line the output leaves out) and the synced annotations.
func (r *itemReader) annotation(rest []byte, indent int, isEntry bool) {
	if r.annos.indent < 0 && r.annos.state != formBlock {
		r.unsynced()
	}
	r.annos.indent = indent
	r.entryContinues = false
	if isEntry {
		r.unsynced()
		return
	}
	r.annos.keys++
	key, value, ok := keyValue(rest)
	if !ok {
		if hasSyncedText(rest) {
			r.unsynced()
		}
		return
	}
	if string(key) == migrationID {
		if _, scalar := scalarValue(value); r.migrationSeen || !scalar {
			r.unsynced() // twice, or not a scalar on its line (a block scalar's header)
		}
		r.migrationSeen = true
		r.t.cutStart, r.t.cutEnd = r.lineStart, r.lineEnd
		r.entryContinues = true
		return
	}
	for j, fk := range fileKeys {
		if string(key) != fk {
			continue
		}
		v, ok := scalarValue(value)
		if !ok || len(v) == 0 || r.t.pattern&(1<<j) != 0 {
			r.unsynced()
		}
		r.t.pattern |= 1 << j
		r.values[j] = v
		r.entryContinues = true
	}
}

// finish judges what the whole item showed: what kyaml's writer would drop
// or rewrite, and synced annotations it would add or refuse.
func (r *itemReader) finish() {
	meta, annos, t := r.meta, r.annos, &r.t
	switch {
	case r.metaSeen && (meta.state == formOther || meta.state == formBlock && meta.keys == 0):
		r.unsynced() // metadata: null, {} or a scalar, which kyaml's writer drops or rewrites
	case r.annosSeen && (annos.state == formOther || annos.state == formBlock && annos.keys == 0):
		r.unsynced()
	case r.migrationSeen && annos.keys == 1:
		r.unsynced() // cutting the only annotation would leave them empty
	case r.commentsInAnnos && (r.migrationSeen || t.pattern != 0):
		r.unsynced() // a comment could belong to a key kyaml deletes or adds
	case t.pattern.internal() && t.pattern.legacy() && !t.pattern.paired():
		r.unsynced() // kyaml would add the missing forms
	}
	for j := 0; j < 6; j += 2 {
		if t.pattern&(3<<j) == 3<<j && !bytes.Equal(r.values[j], r.values[j+1]) {
			r.unsynced() // kyaml refuses forms that differ; let it say so
		}
	}
	if !t.synced {
		t.cutStart, t.cutEnd = 0, 0
	}
}

func leadingSpaces(line []byte) int {
	n := 0
	for n < len(line) && line[n] == ' ' {
		n++
	}
	return n
}

// keyValue splits "key: value" where key is a plain word of the
// characters Kubernetes names, labels and annotation keys are made of; the
// value is trimmed and loses a trailing comment. ok is false for anything
// else (a quoted or complex key, no colon).
func keyValue(line []byte) (key, value []byte, ok bool) {
	for i, c := range line {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case (c == '.' || c == '/' || c == '-' || c == '_') && i > 0:
		case c == ':' && i > 0:
			if i+1 < len(line) && line[i+1] != ' ' {
				return nil, nil, false
			}
			return line[:i], trimComment(line[i+1:]), true
		default:
			return nil, nil, false
		}
	}
	return nil, nil, false
}

// trimComment trims spaces and a trailing " # comment" from a value.
// Values with quotes keep everything: a '#' inside quotes is text, and the
// reader of quoted values checks where they close.
func trimComment(v []byte) []byte {
	v = bytes.TrimSpace(v)
	if len(v) > 0 && (v[0] == '\'' || v[0] == '"') {
		return v
	}
	if i := bytes.Index(v, []byte(" #")); i >= 0 {
		v = bytes.TrimRight(v[:i], " ")
	}
	return v
}

// word returns value as a type name when it is one plain word of the
// characters an apiVersion or kind is made of.
func word(value []byte, intern func([]byte) string) (string, typeState) {
	if !isPlainWord(value) {
		return "", typeUnknown // null, or not a plain word
	}
	return intern(value), typePlain
}

// scalarValue reads a one-line scalar: single-quoted, double-quoted without
// escapes, or plain (not starting with an indicator, not null). ok is
// false for any other form.
func scalarValue(v []byte) ([]byte, bool) {
	if len(v) == 0 {
		return nil, false
	}
	switch v[0] {
	case '\'', '"':
		end := closingQuote(v, 0)
		if end < 0 {
			return nil, false
		}
		if rest := bytes.TrimSpace(v[end+1:]); len(rest) > 0 && rest[0] != '#' {
			return nil, false
		}
		inner := v[1:end]
		if v[0] == '"' {
			if bytes.IndexByte(inner, '\\') >= 0 {
				return nil, false
			}
			return inner, true
		}
		if bytes.IndexByte(inner, '\'') >= 0 {
			return bytes.ReplaceAll(inner, []byte("''"), []byte("'")), true
		}
		return inner, true
	}
	if bytes.IndexByte([]byte("-?:,[]{}#&*!|>%@`"), v[0]) >= 0 || bytes.Contains(v, []byte(": ")) {
		return nil, false
	}
	switch string(v) {
	case "~", "null", "Null", "NULL":
		return nil, false
	}
	return v, true
}

// hasSyncedText reports whether text may name a synced or kyaml-managed
// annotation.
func hasSyncedText(text []byte) bool {
	return bytes.Contains(text, []byte("config.kubernetes.io/")) || bytes.Contains(text, []byte("config.k8s.io/"))
}

// hasContent reports whether text has a line that is neither blank nor a
// comment.
func hasContent(text []byte) bool {
	for len(text) > 0 {
		var line []byte
		line, text, _ = bytes.Cut(text, []byte("\n"))
		if t := bytes.TrimLeft(line, " "); len(t) > 0 && t[0] != '#' {
			return true
		}
	}
	return false
}
