package resio

// What to tell a person who ran function mode with the wrong input: what
// was received and which command fits - nothing on stdin, plain manifests
// or a kubectl List instead of a ResourceList, or a ResourceList without
// the RotationPolicy as its functionConfig (kpt fn eval without
// --fn-config). A ResourceList, what kustomize and kpt send, is recognised
// from its first lines (firstKind).

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"sigs.k8s.io/kustomize/kyaml/kio"
)

// commandsHint is the hint that ends every message: what to run instead.
const commandsHint = "to render a directory of manifests in place: rotate-certs render DIR; " +
	"to report certificate expiry: rotate-certs check DIR (or - for stdin); see rotate-certs --help"

// InputHint returns what is wrong with input for function mode and what to
// run instead, or "" when it is (or may be) a ResourceList, which the
// function reads.
func InputHint(input []byte) string {
	if len(bytes.TrimSpace(input)) == 0 {
		return "function mode read nothing on stdin: it reads a ResourceList, what kustomize and kpt send; " + commandsHint
	}
	kind, ok := firstKind(input)
	if !ok || kind == kio.ResourceListKind {
		return ""
	}
	return describe(input)
}

// NoFunctionConfig is the hint for a ResourceList without a functionConfig.
func NoFunctionConfig() string {
	return "the ResourceList has no functionConfig, and the RotationPolicy must be it: with kpt fn eval, pass --fn-config rotation-policy.yaml; " +
		"in a Kptfile pipeline, set configPath: rotation-policy.yaml; with kustomize, list the policy under transformers: (its config.kubernetes.io/function annotation names the binary)"
}

// ConfigMapFunctionConfig is the hint for a ConfigMap functionConfig:
// what kpt fn eval sends without --fn-config.
func ConfigMapFunctionConfig() string {
	return "the functionConfig is a ConfigMap - kpt fn eval sends an empty one when --fn-config is not given: pass --fn-config rotation-policy.yaml (a RotationPolicy)"
}

// firstKind returns the top-level kind of the first YAML document, read
// line by line; ok is false when it cannot be told that way (JSON, a kind
// that is not a plain scalar, no kind line).
func firstKind(input []byte) (string, bool) {
	started := false
	for len(input) > 0 {
		var line []byte
		line, input, _ = bytes.Cut(input, []byte("\n"))
		s := strings.TrimRight(string(line), " \t\r")
		switch {
		case s == "" || strings.HasPrefix(strings.TrimSpace(s), "#"):
			continue
		case s == "---" || strings.HasPrefix(s, "--- ") || s == "...":
			if started {
				return "", false
			}
			continue
		case !started && (strings.HasPrefix(s, "{") || strings.HasPrefix(s, "[")):
			return "", false
		}
		started = true
		if v, found := strings.CutPrefix(s, "kind:"); found {
			if i := strings.Index(v, " #"); i >= 0 {
				v = v[:i]
			}
			v = strings.Trim(strings.TrimSpace(v), `"'`)
			return v, v != ""
		}
	}
	return "", false
}

// describe says what input holds and which command reads it.
func describe(input []byte) string {
	r := &kio.ByteReader{Reader: bytes.NewReader(input), OmitReaderAnnotations: true, DisableUnwrapping: true}
	nodes, err := r.Read()
	if err != nil || len(nodes) == 0 {
		return "function mode reads a ResourceList on stdin, and this is not one; " + commandsHint
	}
	if kind := nodes[0].GetKind(); len(nodes) == 1 && strings.HasSuffix(kind, "List") {
		n := 0
		if items := nodes[0].Field("items"); items != nil && items.Value != nil {
			n = len(items.Value.Content())
		}
		return fmt.Sprintf("function mode reads a ResourceList on stdin, and received a %s of %d item(s), as kubectl get -o yaml prints it: "+
			"rotate-certs check - reports the expiry of what it holds; rotate-certs snapshot - turns its Secrets and ConfigMaps into source manifests to commit; see rotate-certs --help",
			kube.Safe(nodes[0].GetKind()), n)
	}
	var names []string
	for i, n := range nodes {
		if i == 3 {
			names = append(names, "...")
			break
		}
		names = append(names, strings.TrimSpace(kube.RefOf(n).String()))
	}
	return fmt.Sprintf("function mode reads a ResourceList on stdin, and received %d plain manifest(s) (%s): "+
		"to render the files of a directory in place: rotate-certs render DIR; to report the expiry of manifests on stdin: rotate-certs check -; see rotate-certs --help",
		len(nodes), strings.Join(names, ", "))
}
