package kbuild

import (
	"bufio"
	"io"
	"os"
	"strings"
	"sync"
)

// kustomize's global state. One build runs at a time in a process: kustomize
// keeps the OpenAPI schema of the build running as a global (openapi.SetSchema,
// which Flux's kustomize-controller serializes behind a mutex too), and
// prints its warnings about deprecated kustomization fields straight to
// os.Stderr, where they would pass around the command's printer and repeat
// once per cluster of a fleet. While a build runs, os.Stderr is a pipe: the
// deprecation warnings (kustomize applies those fields as it always did) are
// dropped and any other line becomes a note of the build.
var building sync.Mutex

// deprecated starts kustomize's warning about a deprecated field.
const deprecated = "# Warning: '"

// quiet runs fn with os.Stderr captured, and returns the lines it wrote
// that are not deprecation warnings.
func quiet(fn func()) []string {
	building.Lock()
	defer building.Unlock()
	r, w, err := os.Pipe()
	if err != nil {
		fn()
		return nil
	}
	saved := os.Stderr
	os.Stderr = w
	lines := make(chan []string)
	go func() { lines <- readLines(r) }()
	defer func() {
		os.Stderr = saved
		_ = w.Close()
	}()
	fn()
	os.Stderr = saved
	_ = w.Close()
	out := <-lines
	_ = r.Close()
	return out
}

// readLines reads r to its end and returns its lines but kustomize's
// deprecation warnings.
func readLines(r io.Reader) []string {
	var out []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" && !strings.HasPrefix(line, deprecated) {
			out = append(out, line)
		}
	}
	_, _ = io.Copy(io.Discard, r)
	return out
}
