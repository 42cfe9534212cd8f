package resio

import (
	"bytes"
)

// The annotations kyaml keeps in sync on every item it hands a function
// (framework.Execute): the path, index and id of the item's file, each in
// an internal and a legacy form. kpt and kustomize put them on every item.
const (
	internalPath  = "internal.config.kubernetes.io/path"
	internalIndex = "internal.config.kubernetes.io/index"
	internalID    = "internal.config.kubernetes.io/id"
	legacyPath    = "config.kubernetes.io/path"
	legacyIndex   = "config.kubernetes.io/index"
	legacyID      = "config.k8s.io/id"
	// migrationID is set by kyaml on every item before the function runs
	// and deleted after it: an item that arrives with it loses it.
	migrationID = "internal.config.kubernetes.io/annotations-migration-resource-id"
)

// fileKeys are the synced annotations: each internal form followed by its
// legacy form.
var fileKeys = [6]string{internalPath, legacyPath, internalIndex, legacyIndex, internalID, legacyID}

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
	t := itemText{object: true, synced: true}
	var (
		first           = true
		meta, annos     block
		metaSeen        bool
		annosSeen       bool
		entryContinues  bool // the last entry read is synced: deeper lines would continue its value
		values          [6][]byte
		migrationSeen   bool
		commentsInAnnos bool
	)
	unsynced := func() { t.synced = false }
	for off := 0; off < len(raw); {
		lineStart := off
		i := bytes.IndexByte(raw[off:], '\n')
		if i < 0 {
			i = len(raw) - off
		}
		line := raw[off : off+i]
		off += i + 1
		indent := 0
		if first {
			if len(line) > 0 && line[0] == '#' {
				continue // a comment before the item
			}
			first = false
			if len(line) < 2 {
				t.object = false // "-" alone, as below
				return t
			}
			rest := bytes.TrimRight(line[2:], " ")
			switch {
			case len(rest) == 0:
				t.object = false // the entry starts on the next line, or is null
				return t
			case bytes.Equal(rest, []byte("{}")):
				// An empty mapping; anything after it but blank lines is
				// for the parser to judge.
				t.object = len(bytes.TrimSpace(raw[off:])) == 0
				return t
			case rest[0] == '-' && (len(rest) == 1 || rest[1] == ' '):
				t.object = false // "- - ...": the item is a sequence
				return t
			case len(rest) > 0 && rest[0] == '#':
				if !hasContent(raw[off:]) {
					t.object = false // "- # comment" and nothing more: a null item
					return t
				}
				continue // "- # comment": the keys follow at column 2
			}
			indent = 2
		} else {
			for indent < len(line) && line[indent] == ' ' {
				indent++
			}
		}
		rest := line[indent:]
		if len(rest) == 0 {
			continue
		}
		if rest[0] == '#' {
			if annos.open {
				commentsInAnnos = true
			}
			continue
		}
		isEntry := rest[0] == '-' && (len(rest) == 1 || rest[1] == ' ')
		switch {
		case indent < 2:
			t.object = false
			return t
		case indent == 2:
			meta.open, annos.open, entryContinues = false, false, false
			if isEntry {
				continue // an entry of a compact sequence under the last key
			}
			key, value, ok := keyValue(rest)
			if !ok {
				t.object = false
				return t
			}
			switch string(key) {
			case "apiVersion":
				if t.apiVersionAt == typeAbsent {
					t.apiVersion, t.apiVersionAt = word(value, intern)
				}
			case "kind":
				if t.kindAt == typeAbsent {
					t.kind, t.kindAt = word(value, intern)
				}
			case "metadata":
				if metaSeen {
					unsynced() // kyaml reads the first; leave it to kyaml
				}
				metaSeen = true
				meta = block{open: true, state: formOf(value), indent: -1}
				if meta.state == formFlow && bytes.Contains(value, []byte("annotations")) {
					unsynced()
				}
			}
		case meta.open && (meta.indent < 0 || indent == meta.indent):
			if meta.indent < 0 && meta.state != formBlock {
				unsynced() // a value on the line and more below it
			}
			meta.indent = indent
			annos.open, entryContinues = false, false
			if isEntry {
				unsynced() // metadata is a list: kyaml rewrites it
				continue
			}
			meta.keys++
			key, value, ok := keyValue(rest)
			if !ok {
				unsynced()
				continue
			}
			if string(key) == "annotations" {
				if annosSeen {
					unsynced()
				}
				annosSeen = true
				annos = block{open: true, state: formOf(value), indent: -1}
				if annos.state == formFlow && hasSyncedText(value) {
					unsynced()
				}
			}
		case annos.open && indent > meta.indent && (annos.indent < 0 || indent == annos.indent):
			if annos.indent < 0 && annos.state != formBlock {
				unsynced()
			}
			annos.indent = indent
			entryContinues = false
			if isEntry {
				unsynced()
				continue
			}
			annos.keys++
			key, value, ok := keyValue(rest)
			if !ok {
				if hasSyncedText(rest) {
					unsynced()
				}
				continue
			}
			if string(key) == migrationID {
				if migrationSeen || !singleLine(value) {
					unsynced()
				}
				migrationSeen = true
				t.cutStart, t.cutEnd = lineStart, min(off, len(raw))
				entryContinues = true
				continue
			}
			for j, fk := range fileKeys {
				if string(key) != fk {
					continue
				}
				v, ok := scalarValue(value)
				if !ok || len(v) == 0 || t.pattern&(1<<j) != 0 {
					unsynced()
				}
				t.pattern |= 1 << j
				values[j] = v
				entryContinues = true
			}
		case annos.open && indent > annos.indent:
			if entryContinues {
				unsynced() // a synced annotation's value goes on over lines
			}
		case annos.open && indent > meta.indent:
			unsynced() // between metadata's keys and the entries' column
		case meta.open && indent < meta.indent:
			unsynced()
		}
	}
	switch {
	case metaSeen && (meta.state == formOther || meta.state == formBlock && meta.keys == 0):
		unsynced() // metadata: null, {} or a scalar, which kyaml's writer drops or rewrites
	case annosSeen && (annos.state == formOther || annos.state == formBlock && annos.keys == 0):
		unsynced()
	case migrationSeen && annos.keys == 1:
		unsynced() // cutting the only annotation would leave them empty
	case commentsInAnnos && (migrationSeen || t.pattern != 0):
		unsynced() // a comment could belong to a key kyaml deletes or adds
	case t.pattern.internal() && t.pattern.legacy() && !t.pattern.paired():
		unsynced() // kyaml would add the missing forms
	}
	for j := 0; j < 6; j += 2 {
		if t.pattern&(3<<j) == 3<<j && !bytes.Equal(values[j], values[j+1]) {
			unsynced() // kyaml refuses forms that differ; let it say so
		}
	}
	if !t.synced {
		t.cutStart, t.cutEnd = 0, 0
	}
	return t
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
	for _, c := range value {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '/', c == '-', c == '_':
		default:
			return "", typeUnknown
		}
	}
	if len(value) == 0 {
		return "", typeUnknown // null
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

// singleLine reports whether a value is a scalar on its line (not the
// header of a block scalar, which continues below).
func singleLine(v []byte) bool {
	_, ok := scalarValue(v)
	return ok
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
		line := text
		if i := bytes.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			text = nil
		}
		if t := bytes.TrimLeft(line, " "); len(t) > 0 && t[0] != '#' {
			return true
		}
	}
	return false
}
