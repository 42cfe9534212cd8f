package kbuild

import (
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// What a build does offline. kustomize's loader clones a remote base with
// the git binary and fetches an http(s) file itself, and a Helm chart or a
// KRM function runs a program: none of that happens here. Each
// kustomization file is read through offline() before kustomize sees it:
//
//   - a remote entry of resources, bases or components is left out, and
//     named (the rest of the build is read);
//   - helmCharts (with helmGlobals and helmChartInflationGenerator) are
//     left out, and named;
//   - an entry of generators, transformers or validators whose configs
//     are not all kustomize's builtins is left out: rotate-certs' own
//     RotationPolicy is read as an object of the build (the commands model
//     what it renders), any other function is named as not run;
//   - a remote file anywhere else (a patch, a generator's input, crds,
//     configurations, openapi, replacements) refuses the whole build: what
//     it would build cannot be known, so the kustomization is not built.
//
// Building without what was left out may fail (a patch of an object the
// remote base held): the kustomization is then not built either, and says
// why.

// kustomizationNames are the file names kustomize reads a kustomization
// from, in the order it tries them.
var kustomizationNames = konfig.RecognizedKustomizationFileNames()

func isKustomizationName(name string) bool { return slices.Contains(kustomizationNames, name) }

// selfGroup is the API group of rotate-certs' own function config.
const selfGroup = "rotate-certs.dev"

// edit is what offline made of one kustomization file.
type edit struct {
	// notes name what was left out, one line each.
	notes []string
	// functions are the RotationPolicies listed as transformers or
	// generators, each with the file it was read from.
	functions []function
	// refused says why the kustomization cannot be built offline; "" when
	// it can.
	refused string
	// changed is true when the file kustomize reads differs from the file.
	changed bool
}

type function struct {
	node *yaml.RNode
	file string
}

// seqFields are the fields whose entries are kustomization directories or
// files, loaded by kustomize's loader (a remote one cloned or fetched).
var seqFields = []string{"resources", "bases", "components"}

// pluginFields are the fields whose entries configure generators,
// transformers and validators.
var pluginFields = []string{"generators", "transformers", "validators"}

// helmFields run Helm.
var helmFields = []string{"helmCharts", "helmGlobals", "helmChartInflationGenerator"}

// offline rewrites the kustomization file p (read from files) so that
// kustomize builds it with no network and no program: see above. top adds
// the origin annotations by which each object is traced to its file.
func offline(files Files, p string, name func(string) string, k *yaml.RNode, top bool) edit {
	var e edit
	show := kube.SafePath(name(p))
	for _, field := range seqFields {
		e.dropRemote(k, field, show)
	}
	for _, field := range helmFields {
		if f := k.Field(field); f != nil && !f.Value.IsNilOrEmpty() {
			_ = k.PipeE(yaml.Clear(field))
			e.changed = true
			e.notes = append(e.notes, fmt.Sprintf("%s: %s: a Helm chart is inflated by running helm: not read (rotate-certs builds offline, without programs)", show, field))
		}
	}
	for _, field := range pluginFields {
		e.dropPlugins(files, k, field, p, show)
	}
	if where := remoteFile(k); where != "" {
		e.refused = fmt.Sprintf("%s: %s names a remote file: not built (rotate-certs builds offline)", show, where)
	}
	if top {
		e.changed = wantOrigins(k) || e.changed
	}
	return e
}

// dropRemote leaves the remote entries of the list field out.
func (e *edit) dropRemote(k *yaml.RNode, field, show string) {
	seq := list(k, field)
	if seq == nil {
		return
	}
	kept := seq.Content[:0:0]
	for i, c := range seq.Content {
		if c.Kind == yaml.ScalarNode && isRemote(c.Value) {
			e.notes = append(e.notes, fmt.Sprintf("%s: %s[%d] %s: a remote base: not read (rotate-certs builds offline)", show, field, i, showRemote(c.Value)))
			e.changed = true
			continue
		}
		kept = append(kept, c)
	}
	seq.Content = kept
}

// dropPlugins leaves out the entries of field that configure anything but
// kustomize's builtins; rotate-certs' own policies become functions.
func (e *edit) dropPlugins(files Files, k *yaml.RNode, field, p, show string) {
	seq := list(k, field)
	if seq == nil {
		return
	}
	kept := seq.Content[:0:0]
	for i, c := range seq.Content {
		if c.Kind != yaml.ScalarNode {
			kept = append(kept, c)
			continue
		}
		entry := c.Value
		if isRemote(entry) {
			e.notes = append(e.notes, fmt.Sprintf("%s: %s[%d] %s: remote: not read (rotate-certs builds offline)", show, field, i, showRemote(entry)))
			e.changed = true
			continue
		}
		configs, file := pluginConfigs(files, filepath.Dir(p), entry, p)
		var others []string
		for _, cfg := range configs {
			switch group(cfg) {
			case "builtin":
			case selfGroup:
				e.functions = append(e.functions, function{node: cfg, file: file})
			default:
				others = append(others, kube.Safe(cfg.GetApiVersion())+" "+kube.Safe(cfg.GetKind()))
			}
		}
		if !dropsAny(configs) {
			kept = append(kept, c)
			continue
		}
		e.changed = true
		if len(others) > 0 {
			e.notes = append(e.notes, fmt.Sprintf("%s: %s[%d] %s: a KRM function or plugin (%s): not run (rotate-certs builds with kustomize's builtins only)", show, field, i, entryName(entry), strings.Join(others, ", ")))
		}
	}
	seq.Content = kept
}

// list returns the list at k's field, nil when it is not one.
func list(k *yaml.RNode, field string) *yaml.Node {
	f := k.Field(field)
	if f == nil || f.Value.YNode().Kind != yaml.SequenceNode {
		return nil
	}
	return f.Value.YNode()
}

// dropsAny reports whether configs hold one that is not a builtin.
func dropsAny(configs []*yaml.RNode) bool {
	return slices.ContainsFunc(configs, func(c *yaml.RNode) bool { return group(c) != "builtin" })
}

// group is "builtin" for kustomize's builtin plugin configs (apiVersion
// builtin), else the API group of cfg.
func group(cfg *yaml.RNode) string {
	av := cfg.GetApiVersion()
	if av == "builtin" {
		return "builtin"
	}
	g, _, _ := strings.Cut(av, "/")
	return g
}

// pluginConfigs reads the configs an entry of generators, transformers or
// validators names: inline YAML, or a file below dir; a directory (a
// kustomization of configs) or what does not parse is left to kustomize.
func pluginConfigs(files Files, dir, entry, kustomization string) ([]*yaml.RNode, string) {
	data, file := []byte(entry), kustomization
	if !strings.Contains(entry, "\n") {
		file = filepath.Join(dir, entry)
		info, err := files.Stat(file)
		if err != nil || info.IsDir() {
			return nil, ""
		}
		if data, err = files.ReadFile(file); err != nil {
			return nil, ""
		}
	}
	nodes, err := kio.FromBytes(data)
	if err != nil {
		return nil, ""
	}
	return nodes, file
}

// entryName shows an entry: a path, or "(inline)".
func entryName(entry string) string {
	if strings.Contains(entry, "\n") {
		return "(inline)"
	}
	return kube.SafePath(entry)
}

// remoteFile returns the first field of k that names a remote file, "" when
// none does.
func remoteFile(k *yaml.RNode) string {
	type field struct{ list, key string }
	for _, f := range []field{{"crds", ""}, {"configurations", ""}, {"patchesStrategicMerge", ""},
		{"patches", "path"}, {"patchesJson6902", "path"}, {"replacements", "path"},
		{"configMapGenerator", "files"}, {"configMapGenerator", "envs"}, {"configMapGenerator", "env"},
		{"secretGenerator", "files"}, {"secretGenerator", "envs"}, {"secretGenerator", "env"}} {
		entries := kube.At(k, f.list)
		if entries == nil || entries.YNode().Kind != yaml.SequenceNode {
			continue
		}
		for i, c := range entries.YNode().Content {
			for _, s := range paths(c, f.key) {
				if isRemote(s) {
					return fmt.Sprintf("%s[%d]%s", f.list, i, dotted(f.key))
				}
			}
		}
	}
	if p := kube.At(k, "openapi", "path"); p != nil && isRemote(p.YNode().Value) {
		return "openapi.path"
	}
	return ""
}

// paths returns the file paths an entry names: the entry itself (key ""),
// or the scalar or list at its key, a generator's "name=path" as path. An
// inline patch names none.
func paths(entry *yaml.Node, key string) []string {
	v := entry
	if key != "" {
		if v = kube.MapValue(entry, key); v == nil {
			return nil
		}
	}
	var out []string
	for _, s := range append([]*yaml.Node{v}, v.Content...) {
		if s.Kind != yaml.ScalarNode || strings.Contains(s.Value, "\n") {
			continue
		}
		value := s.Value
		if _, path, ok := strings.Cut(value, "="); ok && key == "files" {
			value = path
		}
		out = append(out, value)
	}
	return out
}

// dotted is ".key", or "" for no key.
func dotted(key string) string {
	if key == "" {
		return ""
	}
	return "." + key
}

// wantOrigins adds originAnnotations to k's buildMetadata (kustomize then
// annotates each object with the file it came from); it reports whether it
// did.
func wantOrigins(k *yaml.RNode) bool {
	if slices.Contains(buildMetadata(k), types.OriginAnnotations) {
		return false
	}
	seq := list(k, "buildMetadata")
	if seq == nil {
		_ = k.PipeE(yaml.SetField("buildMetadata", yaml.NewListRNode(types.OriginAnnotations)))
		return true
	}
	seq.Content = append(seq.Content, yaml.NewStringRNode(types.OriginAnnotations).YNode())
	return true
}

// buildMetadata returns k's buildMetadata entries.
func buildMetadata(k *yaml.RNode) []string {
	seq := list(k, "buildMetadata")
	if seq == nil {
		return nil
	}
	var out []string
	for _, c := range seq.Content {
		out = append(out, c.Value)
	}
	return out
}

// userPrefix is kustomize's rule for an SCP-style git address (user@host:path).
var userPrefix = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9-]*@`)

// isRemote reports whether kustomize would clone or fetch p rather than
// read it from the files: a URL of any scheme it clones or fetches
// (https, http, ssh, file, with or without git::), an SCP-style address,
// or a github.com path - its own repository rule (api/internal/git
// NewRepoSpecFromURL) and its http rule (api/internal/loader
// IsRemoteFile), so that a path it would clone is never handed to it.
func isRemote(p string) bool {
	s := strings.ToLower(strings.TrimSpace(p))
	s = strings.TrimPrefix(s, "git::")
	if filepath.IsAbs(s) {
		return false
	}
	for _, scheme := range []string{"https://", "http://", "ssh://", "file://"} {
		if strings.HasPrefix(s, scheme) {
			return true
		}
	}
	return userPrefix.MatchString(s) || strings.HasPrefix(s, "github.com/") || strings.HasPrefix(s, "github.com:")
}

// showRemote shows a remote address without what may hold a credential:
// the user information and the query.
func showRemote(s string) string {
	if u, err := url.Parse(s); err == nil && u.Scheme != "" && u.Host != "" {
		u.User, u.RawQuery, u.Fragment = nil, "", ""
		return kube.SafePath(u.String())
	}
	s, _, _ = strings.Cut(s, "?")
	if at := strings.Index(s, "@"); at >= 0 && at < strings.IndexAny(s+":", ":/") {
		s = s[at+1:]
	}
	return kube.SafePath(s)
}
