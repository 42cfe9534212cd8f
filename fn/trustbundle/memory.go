package trustbundle

import (
	"bytes"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/anchors"
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/pki"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// The target's memory: annotations that carry what one render must know
// of the renders before it, on the target object itself (a GitOps
// repository has no other place to keep it), and the bundle-hash and
// rotated-at annotations that say what a target holds. This file is their
// one reader and writer, for every target kind.
//
// Memory orders, times and drops what a target's data holds; it never adds
// a CA to a bundle. A CA enters a bundle's data only when it is current in
// a source, already in that target's data, or restored from the memory of
// a Copy-mode render on the switch back to Bundle mode (always a warning).
// A CA that only an annotation names is ignored, with a warning.
const (
	// RetiredAnnotation records when each previous CA the target carries
	// (or, in Copy mode, remembers) was retired: one line per CA, "<SHA-256
	// hex> <RFC 3339 time>\n", sorted. On an object written in several
	// places (data keys of several bundles, the caBundle fields of several
	// webhooks), each line ends with " <data key or field path>". It is written
	// on every target, empty when there is no previous CA: its presence
	// tells the next render that any certificate of the target without a
	// line was current at this one.
	RetiredAnnotation = "rotate-certs.dev/retired"
	// UnusedAnnotation records, for a bundle with retain.dropUnusedAfter,
	// since when nothing in the input has chained to each previous CA the
	// target carries (or remembers) that nothing chains to: the first
	// render that found it so, which dropUnusedAfter counts from. Same
	// lines as RetiredAnnotation; removed when there is no such CA. A CA
	// without a line counts as unused from the render that finds it so.
	UnusedAnnotation = "rotate-certs.dev/unused"
	// PreviousAnnotation holds, in Copy mode, the previous CAs that Bundle
	// mode would carry (public PEM, canonical order), so that switching
	// back to Bundle restores them. On an object written in several
	// places, each block carries a "Key: <data key or field path>" header. Bundle mode
	// reads it back and removes it.
	PreviousAnnotation = "rotate-certs.dev/previous"
	// SeenAnnotation holds, on a trust-manager Bundle, the CAs its sources
	// held at the last render (public PEM, canonical order). rotate-certs'
	// own inLine source pins the same CAs, so that a CA which leaves the
	// sources is still in the Bundle's data; the annotation says which of
	// the pinned CAs were the sources' and never adds one.
	SeenAnnotation = "rotate-certs.dev/seen"
	// HashAnnotation is "sha256:" + hex of the rendered bundle (see
	// Finish for an object several bundles write). Every target carries it.
	HashAnnotation = "rotate-certs.dev/bundle-hash"
	// RotatedAtAnnotation is the newest NotBefore among current CAs. Every
	// target carries it.
	RotatedAtAnnotation = "rotate-certs.dev/rotated-at"
)

// keyHeader is the PEM header that names the data key a remembered CA
// belongs to on an object that several bundles write.
const keyHeader = "Key"

// readMemory returns what an existing target remembers for the bundle in
// slot s: the certificates its value holds, the CAs a Copy-mode render
// set aside (only when the value is what a Copy-mode render writes), and
// its retirement record. stateful is false when the target remembers
// nothing at all. It fails (with an error result) when the previous
// annotation cannot be parsed: a CA lost from it could be one a peer still
// needs. Everything else wrong with the memory is a warning naming the
// annotation, and the part that is wrong is ignored.
func (r *renderer) readMemory(s slot, current []*x509.Certificate) (mem anchors.Memory, stateful, ok bool) {
	mem = anchors.Memory{Certificates: s.previous}
	data := pki.NewSet(s.previous...)
	recordText, recorded := r.memoryText(s, RetiredAnnotation)
	if recorded {
		mem.Retired, mem.Recorded = r.readRecord(s, RetiredAnnotation, recordText)
	}
	if text, found := r.memoryText(s, UnusedAnnotation); found {
		mem.Unused, _ = r.readRecord(s, UnusedAnnotation, text)
	}
	var remembered []*x509.Certificate
	if text, found := r.memoryText(s, PreviousAnnotation); found {
		if remembered, ok = r.readPrevious(s.node, s.memKey, text); !ok {
			return mem, false, false
		}
		mem.Remembered = r.copyMemory(s, recorded, mem, remembered)
	}
	seen := false
	if s.keepsSeen {
		var seenCerts []*x509.Certificate
		seenCerts, seen = r.readSeen(s)
		r.namedOnly(s, SeenAnnotation, seenCerts, data, current)
	}
	r.recordNamesOnly(s, RetiredAnnotation, mem.Retired, data, current, mem.Remembered)
	r.recordNamesOnly(s, UnusedAnnotation, mem.Unused, data, current, mem.Remembered)
	return mem, len(s.previous) > 0 || len(mem.Remembered) > 0 || seen, true
}

// copyMemory returns the CAs of the previous annotation that the slot
// may restore (Bundle mode) or keep remembering (Copy mode): all of them
// when its value is what a Copy-mode render writes, none - with a warning
// saying why - when it is not. Blocks of another data key (another
// bundle's) are not the slot's memory: with none of its own there is
// nothing to judge.
func (r *renderer) copyMemory(s slot, recorded bool, mem anchors.Memory, remembered []*x509.Certificate) []*x509.Certificate {
	if len(remembered) == 0 {
		return nil
	}
	why := notCopyRender(s, recorded, mem.Recorded, mem.Retired, remembered)
	if why == "" {
		return remembered
	}
	r.add(s.ref.Result(framework.Warning, kube.AnnotationField(PreviousAnnotation), fmt.Sprintf(
		"bundle %q: target %s annotation %s is ignored: %s, so it is not the memory of a Copy-mode render (whose %s holds exactly the CAs current at that render); an annotation never adds a CA to a bundle - if its CAs must be trusted, put them in a source",
		r.bundle.Name, s.key, PreviousAnnotation, why, s.field)))
	return nil
}

// notCopyRender says why the value of slot s, with its retirement record,
// is not what a Copy-mode render writes ("" when it is): a Copy-mode
// render always writes a well-formed record, writes into the value exactly
// the CAs current at that render (none of which has a line in the
// record), and keeps what it remembers out of the value.
func notCopyRender(s slot, present, wellFormed bool, retired map[pki.Fingerprint]time.Time, remembered []*x509.Certificate) string {
	switch {
	case !present:
		return "the target has no readable " + RetiredAnnotation + " record, which a Copy-mode render always writes"
	case !wellFormed:
		return "its " + RetiredAnnotation + " record is malformed, and a Copy-mode render writes a well-formed one"
	}
	if len(s.previous) == 0 {
		return "its " + s.field + " holds no certificate"
	}
	for _, c := range s.previous {
		if _, ok := retired[pki.FingerprintOf(c)]; ok {
			return fmt.Sprintf("its %s holds CA %s, which %s lists as retired", s.field, describeCA(c), RetiredAnnotation)
		}
	}
	data := pki.NewSet(s.previous...)
	for _, c := range remembered {
		if data.Has(c) {
			return fmt.Sprintf("it names CA %s, which %s also holds", describeCA(c), s.field)
		}
	}
	return ""
}

// namedOnly warns about each CA of annotation name that neither the
// slot's value (data) nor a source (current) holds: the annotation alone
// cannot make the bundle trust it.
func (r *renderer) namedOnly(s slot, name string, certs []*x509.Certificate, data *pki.Set, current []*x509.Certificate) {
	cur := pki.NewSet(current...)
	for _, c := range certs {
		if data.Has(c) || cur.Has(c) {
			continue
		}
		r.add(s.ref.Result(framework.Warning, kube.AnnotationField(name), fmt.Sprintf(
			"bundle %q: target %s annotation %s names CA %s, which neither %s nor a source holds; it is ignored (an annotation never adds a CA to a bundle) and this render drops it from the annotation",
			r.bundle.Name, s.key, name, describeCA(c), s.dataName())))
	}
}

// recordNamesOnly warns about each line of record annotation name (the
// retirement or the unused record) whose CA is neither in the slot's
// value, nor current, nor in the memory of a Copy-mode render
// (remembered), and removes it from retired.
func (r *renderer) recordNamesOnly(s slot, name string, retired map[pki.Fingerprint]time.Time, data *pki.Set, current, remembered []*x509.Certificate) {
	known := map[pki.Fingerprint]bool{}
	for _, list := range [][]*x509.Certificate{data.List(), current, remembered} {
		for _, c := range list {
			known[pki.FingerprintOf(c)] = true
		}
	}
	var unknown []pki.Fingerprint
	for fp := range retired {
		if !known[fp] {
			unknown = append(unknown, fp)
		}
	}
	sort.Slice(unknown, func(i, j int) bool { return bytes.Compare(unknown[i][:], unknown[j][:]) < 0 })
	for _, fp := range unknown {
		delete(retired, fp)
		r.add(s.ref.Result(framework.Warning, kube.AnnotationField(name), fmt.Sprintf(
			"bundle %q: target %s annotation %s names CA sha256:%s, which neither %s nor a source holds; the line is ignored (an annotation never adds a CA to a bundle) and this render drops it",
			r.bundle.Name, s.key, name, fp, s.dataName())))
	}
}

// describeCA names a CA in a memory warning: its subject and whole
// SHA-256, which a reviewer compares with the certificate they expect.
func describeCA(c *x509.Certificate) string {
	return fmt.Sprintf("%q sha256:%s", pki.Subject(c), pki.FingerprintOf(c))
}

// reportRestored warns about the CAs a Bundle-mode render took back from
// the memory of a Copy-mode render: the one way a CA enters a bundle from
// an annotation, so a reviewer must see each of them.
func (r *renderer) reportRestored(s slot, restored []*x509.Certificate) {
	if len(restored) == 0 {
		return
	}
	names := make([]string, len(restored))
	for i, c := range restored {
		names[i] = describeCA(c)
	}
	r.add(s.ref.Result(framework.Warning, s.field, fmt.Sprintf(
		"bundle %q: target %s: restored %d previous CA(s) into %s from annotation %s, the memory of a Copy-mode render, on the switch back to Bundle mode: %s; review them - an annotation is the one place a CA comes back from",
		r.bundle.Name, s.key, len(restored), s.field, PreviousAnnotation, strings.Join(names, ", "))))
}

// memoryText returns the text of memory annotation name on the slot's
// object, and whether it is there and can be read. One that is not a
// string (a YAML map, a number) or is larger than maxValueBytes is a
// warning naming it, and is ignored: this render rewrites it.
func (r *renderer) memoryText(s slot, name string) (string, bool) {
	y := annotationNode(s.node, name)
	if y == nil {
		return "", false
	}
	problem := ""
	switch {
	case y.Kind != yaml.ScalarNode:
		problem = "is a YAML " + kube.NodeKindName(y.Kind) + ", not a string"
	case y.ShortTag() != yaml.NodeTagString:
		problem = "is a YAML " + strings.TrimPrefix(y.ShortTag(), "!!") + ", not a string"
	case len(y.Value) > maxValueBytes:
		problem = "is " + tooLarge(len(y.Value))
	}
	if problem != "" {
		r.warnOnce(s.ref, kube.AnnotationField(name), fmt.Sprintf(
			"bundle %q: target %s annotation %s %s; it is ignored and this render rewrites it", r.bundle.Name, s.key, name, problem))
		return "", false
	}
	return y.Value, true
}

// readPrevious reads the previous annotation: the CERTIFICATE blocks that
// belong to key (no Key header, or this key's).
func (r *renderer) readPrevious(node *yaml.RNode, key, text string) ([]*x509.Certificate, bool) {
	ref := kube.RefOf(node)
	field := kube.AnnotationField(PreviousAnnotation)
	fail := func(format string, args ...any) ([]*x509.Certificate, bool) {
		r.errorf(ref, field, "bundle %q: target %s annotation %s %s; fix or delete the annotation (it holds the CAs Copy mode keeps for a switch back to Bundle mode)",
			r.bundle.Name, ref, PreviousAnnotation, fmt.Sprintf(format, args...))
		return nil, false
	}
	var certs []*x509.Certificate
	var skipped []string
	rest := []byte(text)
	for n := 1; ; n++ {
		block, next := pem.Decode(rest)
		if block == nil {
			if len(bytes.TrimSpace(rest)) > 0 {
				return fail("holds text that is not a PEM block after block %d", n-1)
			}
			break
		}
		rest = next
		if block.Type != "CERTIFICATE" {
			skipped = append(skipped, strings.ToLower(block.Type))
			continue
		}
		if k, ok := block.Headers[keyHeader]; ok && k != key {
			continue
		}
		c, err := r.env.Certs.Parse(block.Bytes)
		if err != nil {
			return fail("block %d is not a certificate (%v)", n, err)
		}
		certs = append(certs, c)
	}
	if len(skipped) > 0 {
		r.add(ref.Result(framework.Warning, field, fmt.Sprintf("bundle %q: target annotation %s held %d non-certificate PEM block(s) (%s); they are removed",
			r.bundle.Name, PreviousAnnotation, len(skipped), strings.Join(skipped, ", "))))
	}
	return certs, true
}

// readSeen reads the seen annotation of a trust-manager Bundle: what its
// sources held at the last render. It only ever confirms what the Bundle's
// data holds, so one that cannot be read is a warning and is ignored.
func (r *renderer) readSeen(s slot) ([]*x509.Certificate, bool) {
	text, found := r.memoryText(s, SeenAnnotation)
	if !found {
		return nil, false
	}
	d, err := r.env.Certs.DecodePEM([]byte(text))
	if err != nil || len(d.SkippedTypes) > 0 {
		problem := "holds a block that is not a certificate"
		if err != nil {
			problem = "is not PEM certificate data: " + err.Error()
		}
		r.add(s.ref.Result(framework.Warning, kube.AnnotationField(SeenAnnotation), fmt.Sprintf(
			"bundle %q: target %s annotation %s %s; it is ignored and this render rewrites it", r.bundle.Name, s.key, SeenAnnotation, problem)))
		return nil, false
	}
	return d.Certificates, true
}

// readRecord reads record annotation name of slot s (the retirement or
// the unused record): the lines without a key and the lines of its key.
// recorded is false when a line is malformed (then, with a warning, the
// record is not trusted to be complete); a line whose time is after now
// is malformed too: no CA is retired, or unused, in the future.
func (r *renderer) readRecord(s slot, name, text string) (retired map[pki.Fingerprint]time.Time, recorded bool) {
	retired = map[pki.Fingerprint]time.Time{}
	var bad []string
	for i, line := range strings.Split(text, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		fp, at, lineKey, err := ParseRecordLine(line)
		if err == nil && lineKey != "" && lineKey != s.memKey {
			continue
		}
		if _, dup := retired[fp]; err == nil && dup {
			err = fmt.Errorf("a second line for the same certificate")
		}
		if err == nil && at.After(r.env.Now) {
			err = fmt.Errorf("%s is after this render's now (%s)", at.Format(time.RFC3339), r.env.Now.UTC().Format(time.RFC3339))
		}
		if err != nil {
			bad = append(bad, fmt.Sprintf("line %d %s: %v", i+1, kube.Quote(line), err))
			continue
		}
		retired[fp] = at
	}
	if len(bad) == 0 {
		return retired, true
	}
	fallback := "retired at this render"
	if name == UnusedAnnotation {
		fallback = "unused from this render on (when nothing chains to it)"
	}
	r.warnOnce(s.ref, kube.AnnotationField(name), fmt.Sprintf(
		"bundle %q: target %s annotation %s is malformed (%s); each line must be \"<SHA-256 hex> <RFC 3339 time>\", the time no later than now. Those lines are ignored, and a previous CA without a valid line counts as %s; this render rewrites the record",
		r.bundle.Name, s.ref, name, strings.Join(bad, "; "), fallback))
	return retired, false
}

// ParseRecordLine reads one line of the retirement record,
// "<SHA-256 hex> <RFC 3339 time>[ <data key>]" (the one reader of its
// format; `diff` reads records through it too).
func ParseRecordLine(line string) (pki.Fingerprint, time.Time, string, error) {
	var fp pki.Fingerprint
	fields := strings.Fields(line)
	if len(fields) != 2 && len(fields) != 3 {
		return fp, time.Time{}, "", fmt.Errorf("%d field(s), want 2", len(fields))
	}
	b, err := hex.DecodeString(fields[0])
	if err != nil || len(b) != len(fp) {
		return fp, time.Time{}, "", fmt.Errorf("%s is not a SHA-256 in hex (64 digits)", kube.Quote(fields[0]))
	}
	copy(fp[:], b)
	at, err := time.Parse(time.RFC3339, fields[1])
	if err != nil {
		return fp, time.Time{}, "", fmt.Errorf("%s is not an RFC 3339 time", kube.Quote(fields[1]))
	}
	key := ""
	if len(fields) == 3 {
		key = fields[2]
	}
	return fp, at.UTC(), key, nil
}

// writeMemory writes the annotations of an object written by targets
// once every bundle is rendered (Finish): bundle-hash, rotated-at, the
// retirement and unused records and the previous annotation. It reports whether any
// changed.
func writeMemory(node *yaml.RNode, targets []*Target) (bool, error) {
	hash, rotatedAt := objectHash(targets)
	changed := false
	for _, set := range []func() (bool, error){
		func() (bool, error) { return kube.SetAnnotation(node, HashAnnotation, hash) },
		func() (bool, error) {
			return kube.SetAnnotation(node, RotatedAtAnnotation, rotatedAt.UTC().Format(time.RFC3339))
		},
		func() (bool, error) { return setText(node, RetiredAnnotation, formatRecord(targets, retiredRecord)) },
		func() (bool, error) {
			if unused := formatRecord(targets, unusedRecord); unused != "" {
				return setText(node, UnusedAnnotation, unused)
			}
			return removeAnnotation(node, UnusedAnnotation)
		},
		func() (bool, error) {
			if prev := formatPrevious(targets); prev != "" {
				return setText(node, PreviousAnnotation, prev)
			}
			return removeAnnotation(node, PreviousAnnotation)
		},
	} {
		c, err := set()
		if err != nil {
			return false, err
		}
		changed = changed || c
	}
	return changed, nil
}

// objectHash returns the bundle-hash and rotated-at of an object written by
// targets (see Finish).
func objectHash(targets []*Target) (string, time.Time) {
	if len(targets) == 1 {
		return targets[0].Hash, targets[0].rotatedAt
	}
	lines := make([]string, 0, len(targets))
	var latest time.Time
	for _, t := range targets {
		lines = append(lines, t.keys[0]+" "+t.Hash+"\n")
		if t.rotatedAt.After(latest) {
			latest = t.rotatedAt
		}
	}
	sort.Strings(lines)
	sum := sha256.Sum256([]byte(strings.Join(lines, "")))
	return "sha256:" + hex.EncodeToString(sum[:]), latest
}

// writeSeen writes, for a slot that keeps one (a trust-manager Bundle's),
// the seen annotation as soon as the slot is written: the CAs its sources
// hold now (t's current CAs), in canonical order. It reports whether it
// changed; ok is false when it could not be written (an error result).
func (r *renderer) writeSeen(s slot, t Target) (changed, ok bool) {
	if !s.keepsSeen {
		return false, true
	}
	changed, err := setText(s.node, SeenAnnotation, string(pki.EncodePEM(anchors.Canonical(t.Outcome.Current))))
	if err != nil {
		r.errorf(s.ref, kube.AnnotationField(SeenAnnotation), "bundle %q: %v", r.bundle.Name, err)
		return false, false
	}
	return changed, true
}

// retiredRecord and unusedRecord are a target's entries of the
// retirement and of the unused record.
func retiredRecord(t *Target) []anchors.Retirement { return t.record }
func unusedRecord(t *Target) []anchors.Retirement  { return t.unused }

// formatRecord returns a record of an object written by targets: each
// target's entries (of entries), qualified by its data key when there is
// more than one target, sorted, one per line.
func formatRecord(targets []*Target, entries func(*Target) []anchors.Retirement) string {
	var lines []string
	for _, t := range targets {
		for _, e := range entries(t) {
			line := e.SHA256.String() + " " + e.At.UTC().Format(time.RFC3339)
			if len(targets) > 1 {
				line += " " + t.keys[0]
			}
			lines = append(lines, line+"\n")
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "")
}

// formatPrevious returns the previous annotation of an object written by
// targets: the CAs each Copy-mode target remembers, in canonical order,
// each block headed by its data key when there is more than one target
// (in key order). Empty when no target remembers a CA.
func formatPrevious(targets []*Target) string {
	if len(targets) == 1 {
		return string(pki.EncodePEM(targets[0].remembered))
	}
	sorted := append([]*Target(nil), targets...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].keys[0] < sorted[j].keys[0] })
	var b bytes.Buffer
	for _, t := range sorted {
		for _, c := range t.remembered {
			_ = pem.Encode(&b, &pem.Block{Type: "CERTIFICATE", Headers: map[string]string{keyHeader: t.keys[0]}, Bytes: c.Raw})
		}
	}
	return b.String()
}

// setText sets memory annotation key to value, written as a literal block
// when it spans lines, and reports whether it changed. A value that is not
// a string (which memoryText reported) is replaced.
func setText(node *yaml.RNode, key, value string) (bool, error) {
	replaced := false
	if a := annotationNode(node, key); a != nil && (a.Kind != yaml.ScalarNode || a.ShortTag() != yaml.NodeTagString) {
		if err := node.PipeE(yaml.ClearAnnotation(key)); err != nil {
			return false, err
		}
		replaced = true
	}
	changed, err := kube.SetAnnotation(node, key, value)
	if err != nil || !changed || !strings.Contains(value, "\n") {
		return changed || replaced, err
	}
	v, err := node.Pipe(yaml.Lookup(yaml.MetadataField, yaml.AnnotationsField, key))
	if err != nil {
		return changed, err
	}
	if v != nil {
		v.YNode().Style = yaml.LiteralStyle
	}
	return changed, nil
}

// removeAnnotation removes annotation key and reports whether it was there.
func removeAnnotation(node *yaml.RNode, key string) (bool, error) {
	if annotationNode(node, key) == nil {
		return false, nil
	}
	return true, node.PipeE(yaml.ClearAnnotation(key))
}

// annotationNode returns the value of annotation key of node as written
// (a null, a map or a number included), or nil when it is absent.
func annotationNode(node *yaml.RNode, key string) *yaml.Node {
	annotations := kube.At(node, yaml.MetadataField, yaml.AnnotationsField)
	if annotations == nil || annotations.YNode().Kind != yaml.MappingNode {
		return nil
	}
	content := annotations.YNode().Content
	for i := 0; i+1 < len(content); i += 2 {
		if content[i].Value == key {
			return content[i+1]
		}
	}
	return nil
}
