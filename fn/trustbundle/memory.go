package trustbundle

import (
	"bytes"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/bundle"
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/pki"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// The target's memory: annotations that carry what one render must know
// of the renders before it, on the target object itself (a GitOps
// repository has no other place to keep it).
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
	// PreviousAnnotation holds, in Copy mode, the previous CAs that Bundle
	// mode would carry (public PEM, canonical order), so that switching
	// back to Bundle restores them. On an object written in several
	// places, each block carries a "Key: <data key or field path>" header. Bundle mode
	// reads it back and removes it.
	PreviousAnnotation = "rotate-certs.dev/previous"
)

// keyHeader is the PEM header that names the data key a remembered CA
// belongs to on an object that several bundles write.
const keyHeader = "Key"

// readMemory returns what an existing target remembers for this bundle
// under key (a data key, or the field path of a value of another kind):
// the certificates the value holds (keyCerts) and those of the previous
// annotation, and its retirement record. It fails (with an error result)
// when the previous annotation cannot be read: a CA lost from it could be
// one a peer still needs. A malformed record line is only a warning: the
// CAs without a valid line count as retired by the rule for a target
// without a record.
func (r *renderer) readMemory(node *yaml.RNode, key string, keyCerts []*x509.Certificate) (bundle.Memory, bool) {
	mem := bundle.Memory{Certificates: keyCerts}
	annotations := node.GetAnnotations(RetiredAnnotation, PreviousAnnotation)
	if text, ok := annotations[PreviousAnnotation]; ok {
		certs, ok := r.readPrevious(node, key, text)
		if !ok {
			return mem, false
		}
		mem.Certificates = append(append([]*x509.Certificate(nil), keyCerts...), certs...)
	}
	if text, ok := annotations[RetiredAnnotation]; ok {
		mem.Retired, mem.Recorded = r.readRecord(node, key, text)
	}
	return mem, true
}

// readPrevious reads the previous annotation: the CERTIFICATE blocks that
// belong to key (no Key header, or this key's).
func (r *renderer) readPrevious(node *yaml.RNode, key, text string) ([]*x509.Certificate, bool) {
	ref := kube.RefOf(node)
	field := annotationField(PreviousAnnotation)
	fail := func(format string, args ...any) ([]*x509.Certificate, bool) {
		r.errorf(ref, field, "bundle %q: target %s annotation %s %s; fix or delete the annotation (it holds the CAs Copy mode keeps for a switch back to Bundle mode)",
			r.bundle.Name, ref, PreviousAnnotation, fmt.Sprintf(format, args...))
		return nil, false
	}
	if len(text) > MaxValueBytes {
		return fail("is %s", tooLarge(len(text)))
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
		c, err := r.parse(block.Bytes)
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

// parse parses one DER certificate through the run's cache, if any.
func (r *renderer) parse(der []byte) (*x509.Certificate, error) {
	if r.env.Certs == nil {
		return x509.ParseCertificate(der)
	}
	return r.env.Certs.Parse(der)
}

// readRecord reads the retirement record: the lines without a key and the
// lines of key. recorded is false when a line is malformed
// (then, with a warning, the record is not trusted to be complete).
func (r *renderer) readRecord(node *yaml.RNode, key, text string) (retired map[pki.Fingerprint]time.Time, recorded bool) {
	retired = map[pki.Fingerprint]time.Time{}
	var bad []string
	for i, line := range strings.Split(text, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		fp, at, lineKey, err := parseRecordLine(line)
		if err == nil && lineKey != "" && lineKey != key {
			continue
		}
		if _, dup := retired[fp]; err == nil && dup {
			err = fmt.Errorf("a second line for the same certificate")
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
	ref := kube.RefOf(node)
	r.add(ref.Result(framework.Warning, annotationField(RetiredAnnotation), fmt.Sprintf(
		"bundle %q: target %s annotation %s is malformed (%s); each line must be \"<SHA-256 hex> <RFC 3339 time>\". Those lines are ignored, and a previous CA without a valid line counts as retired at this render; this render rewrites the record",
		r.bundle.Name, ref, RetiredAnnotation, strings.Join(bad, "; "))))
	return retired, false
}

// parseRecordLine reads "<SHA-256 hex> <RFC 3339 time>[ <data key>]".
func parseRecordLine(line string) (pki.Fingerprint, time.Time, string, error) {
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

// formatRecord returns the retirement record of an object written by
// targets: each target's entries, qualified by its data key when there is
// more than one target, sorted, one per line.
func formatRecord(targets []*Target) string {
	var lines []string
	for _, t := range targets {
		for _, e := range t.record {
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

// setText sets annotation key to value, written as a literal block when it
// spans lines, and reports whether it changed.
func setText(node *yaml.RNode, key, value string) (bool, error) {
	changed, err := kube.SetAnnotation(node, key, value)
	if err != nil || !changed || !strings.Contains(value, "\n") {
		return changed, err
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
	if _, ok := node.GetAnnotations(key)[key]; !ok {
		return false, nil
	}
	return true, node.PipeE(yaml.ClearAnnotation(key))
}

// annotationField is the field path of annotation key in results.
func annotationField(key string) string { return "metadata.annotations[" + key + "]" }
