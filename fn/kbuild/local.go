package kbuild

import (
	"path/filepath"
	"regexp"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Objects marked local-config. kustomize drops an object annotated
// config.kubernetes.io/local-config: "true" from what it builds - after the
// transformers ran: a RotationPolicy run as a transformer reads its
// sources and snapshots, which this repository's layout marks local-config
// (read for rendering, never applied). The commands model what that
// render does, so they read those objects too, knowing them for what they
// are. The build hands kustomize each manifest with the annotation renamed
// (keepLocal), so that it keeps the object, and renames it back on what
// it built (restoreLocal).

// localConfig is the annotation kustomize drops an object by.
const localConfig = "config.kubernetes.io/local-config"

// keptLocal is the name the annotation has during a build.
const keptLocal = "rotate-certs.dev/build-local-config"

// localKey matches the annotation as a mapping key, in YAML or JSON.
var localKey = regexp.MustCompile(`(^|[\s"'{,])config\.kubernetes\.io/local-config(["']?\s*:)`)

// keepLocal renames the local-config annotation in the manifest p.
func keepLocal(p string, data []byte) []byte {
	switch strings.ToLower(filepath.Ext(p)) {
	case ".yaml", ".yml", ".json":
	default:
		return data
	}
	if !strings.Contains(string(data), localConfig) {
		return data
	}
	return localKey.ReplaceAll(data, []byte("${1}"+keptLocal+"${2}"))
}

// restoreLocal names the annotation back on n.
func restoreLocal(n *yaml.RNode) {
	v, ok := n.GetAnnotations(keptLocal)[keptLocal]
	if !ok {
		return
	}
	_ = n.PipeE(yaml.ClearAnnotation(keptLocal))
	_ = n.PipeE(yaml.SetAnnotation(localConfig, v))
}
