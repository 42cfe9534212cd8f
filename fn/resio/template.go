package resio

import (
	"bytes"
	"fmt"
)

// isTemplate reports whether data holds template actions ({{ ... }}), as
// a Helm chart's templates do. Such a file is read like any other when it
// parses as YAML; one that does not is a template, not a manifest, and is
// skipped instead of failing the whole run.
func isTemplate(data []byte) bool {
	open := bytes.Index(data, []byte("{{"))
	return open >= 0 && bytes.Contains(data[open:], []byte("}}"))
}

// templateNote is the note shown for a template skipped at path.
func templateNote(path string) string {
	return fmt.Sprintf("%s: a template ({{ ... }}), not YAML: skipped; list it in %s to leave it out without this note", path, ignoreFile)
}
