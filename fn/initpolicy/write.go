package initpolicy

import (
	"bytes"
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/pki"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"github.com/rotate-certs/rotate-certs/fn/wire"
)

// DefaultName is the metadata.name of a generated policy.
const DefaultName = "rotate-certs"

// SchemaURL is the RotationPolicy's JSON Schema (schemas/ in the
// repository), named on the first line of every policy init writes so that
// editors running yaml-language-server validate and complete it.
const SchemaURL = "https://raw.githubusercontent.com/rotate-certs/rotate-certs/main/schemas/rotate-certs.dev/rotationpolicy_v1alpha1.json"

// YAML writes the plan as a RotationPolicy named name, with what init found
// as comments. It decodes the result with the policy package's strict
// decoder before returning it, so what it returns is always a valid policy.
func (p *Proposal) YAML(name string) ([]byte, error) {
	if name == "" {
		name = DefaultName
	}
	var w policyWriter
	w.header(p, name)
	for _, b := range p.Bundles {
		w.bundle(b)
	}
	w.controlPlanes(p.ControlPlanes)
	out := w.Bytes()
	node, err := yaml.Parse(string(out))
	if err != nil {
		return nil, fmt.Errorf("generated policy does not parse: %w", err)
	}
	if _, err := policy.Decode(node); err != nil {
		return nil, fmt.Errorf("generated policy is invalid: %w", err)
	}
	return out, nil
}

// policyWriter writes a starter policy line by line.
type policyWriter struct{ bytes.Buffer }

func (w *policyWriter) line(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }

func (w *policyWriter) comment(indent, text string) { w.line("%s# %s", indent, oneLine(text)) }

// header writes the opening comments, the notes, the policy's metadata and
// the start of spec.trustBundles.
func (w *policyWriter) header(p *Proposal, name string) {
	line, comment := w.line, w.comment
	line("# yaml-language-server: $schema=%s", SchemaURL)
	if p.Function == "" {
		line("# Starter RotationPolicy written by `rotate-certs init`. Review it, then")
		line("# - kustomize: list this file under `transformers:` and add the annotation")
		line("#   config.kubernetes.io/function (exec: {path: ...} or container: {image: ...}),")
		line("#   or run init again with --exec PATH --kustomization FILE;")
		line("# - kpt: add it to the Kptfile pipeline (mutators: [{image: ..., configPath: ...}]),")
		line("#   or run init again with --exec PATH --kptfile FILE;")
		line("# - or render without either: rotate-certs render DIR.")
	} else {
		line("# Starter RotationPolicy written by `rotate-certs init`. Review it, then render:")
		line("# kustomize build --enable-alpha-plugins --enable-exec DIR, kpt fn render --allow-exec,")
		line("# or rotate-certs render DIR.")
	}
	for _, n := range p.Notes {
		comment("", "note: "+n)
	}
	line("apiVersion: %s", policy.APIVersion)
	line("kind: %s", policy.Kind)
	line("metadata:")
	line("  name: %s", wire.Scalar(name))
	line("  annotations:")
	if p.Function != "" {
		line("    config.kubernetes.io/function: |")
		for _, l := range strings.Split(strings.TrimSuffix(p.Function, "\n"), "\n") {
			line("      %s", l)
		}
	}
	line("    config.kubernetes.io/local-config: \"true\"")
	line("spec:")
	if len(p.Bundles) == 0 {
		comment("  ", "No Secret or ConfigMap holding a CA certificate was found.")
		line("  trustBundles: []")
	} else {
		line("  trustBundles:")
	}
}

// bundle writes one trust bundle, with what init found about it as
// comments: its CAs, where else they are, and who reads them today.
func (w *policyWriter) bundle(b Bundle) {
	line, comment := w.line, w.comment
	for _, src := range b.Sources {
		comment("  ", fmt.Sprintf("CA found in %s key %s%s:", src.Ref, src.Key, fileOf(src.Ref)))
		for _, c := range src.cas {
			comment("  ", "  "+pki.Describe(c))
		}
		for _, a := range src.Also {
			comment("  ", fmt.Sprintf("The same CA is also in %s key %s%s.", a.Ref, a.Key, fileOf(a.Ref)))
		}
	}
	if len(b.SourceReaders) == 0 && len(b.targetReaders) == 0 {
		comment("  ", "No workload in the input reads it.")
	} else if len(b.SourceReaders) > 0 {
		comment("  ", "Workloads reading it today; point them at the target below so that")
		comment("  ", "they keep trusting the previous CA while the new one rolls out:")
		for _, c := range b.SourceReaders {
			comment("  ", "  "+c.String())
		}
	}
	if b.wired != "" {
		comment("  ", b.wired+".")
	}
	if len(b.targetReaders) > 0 {
		comment("  ", "Workloads that read the target already:")
		for _, c := range b.targetReaders {
			comment("  ", "  "+c.String())
		}
	}
	if b.targetExists {
		comment("  ", fmt.Sprintf("The target %s exists: the CAs it holds now are carried over as previous CAs.", targetString(b)))
	}
	if b.Domain != "" {
		comment("  ", domainComment(b))
	}
	line("  - name: %s", wire.Scalar(b.Name))
	if b.Domain != "" {
		line("    domain: %s", wire.Scalar(b.Domain))
	}
	w.sources(b)
	line("    target:")
	line("      kind: %s", b.TargetKind)
	line("      name: %s", wire.Scalar(b.TargetName))
	if b.TargetNamespace != "" {
		ns := []string{wire.Scalar(b.TargetNamespace)}
		for _, o := range b.OtherNamespaces {
			ns = append(ns, wire.Scalar(o))
		}
		line("      namespaces: [%s]", strings.Join(ns, ", "))
	}
	if b.TargetKey != "" {
		line("      key: %s", wire.Scalar(b.TargetKey))
	}
	if b.trustNamespace != "" {
		line("      trustNamespace: %s", wire.Scalar(b.trustNamespace))
	}
	w.restart(b)
}

// sources writes a bundle's sources; a trust-manager Bundle target has
// none (the Bundle's own spec.sources are read).
func (w *policyWriter) sources(b Bundle) {
	if kube.TargetKind(b.TargetKind) == kube.TargetBundle {
		w.comment("    ", "No sources: rotate-certs reads the trust-manager Bundle's own spec.sources.")
		return
	}
	w.line("    sources:")
	for _, src := range b.Sources {
		field := map[string]string{"Secret": "secret", "ConfigMap": "configMap"}[src.Ref.Kind]
		w.line("    - %s:", field)
		w.line("        name: %s", wire.Scalar(src.Ref.Name))
		if src.Ref.Namespace != "" {
			w.line("        namespace: %s", wire.Scalar(src.Ref.Namespace))
		}
		w.line("        key: %s", wire.Scalar(src.Key))
	}
}

// restart writes restart.mesh when the target is what a mesh's workloads
// trust: the mesh copied it into their pods at admission.
func (w *policyWriter) restart(b Bundle) {
	if b.Mesh == "" {
		return
	}
	w.line("    restart:")
	w.comment("      ", fmt.Sprintf("%s copies this trust into the pods it injects when they are admitted: roll them,", meshNames[b.Mesh]))
	w.comment("      ", "found by the mesh's own injection rules, after each change.")
	if len(b.MeshNamespaces) > 0 {
		w.comment("      ", "Namespaces it injects: "+strings.Join(b.MeshNamespaces, ", ")+".")
	}
	w.line("      mesh: %s", b.Mesh)
}

// meshNames are the meshes' names in prose.
var meshNames = map[string]string{policy.MeshLinkerd: "Linkerd", policy.MeshIstio: "Istio"}

// targetString names b's target for comments.
func targetString(b Bundle) string {
	if b.TargetNamespace == "" {
		return b.TargetKind + " " + b.TargetName
	}
	return fmt.Sprintf("%s %s/%s", b.TargetKind, strings.Join(append([]string{b.TargetNamespace}, b.OtherNamespaces...), ","), b.TargetName)
}

// controlPlanes writes, when there are Cluster API control planes, a
// commented-out clusterAPI section that would roll them.
func (w *policyWriter) controlPlanes(cps []kube.Ref) {
	if len(cps) == 0 {
		return
	}
	refs := make([]string, len(cps))
	for i, r := range cps {
		refs[i] = r.String()
	}
	w.comment("  ", "Cluster API control planes found: "+strings.Join(refs, ", ")+".")
	w.comment("  ", "Their certificates expire after a year; uncomment to roll machines before:")
	w.comment("  ", "clusterAPI:")
	w.comment("  ", "  certificatesExpiryDays: 30")
}

func fileOf(r kube.Ref) string {
	if r.Path == "" || r.Path == "-" {
		return ""
	}
	return " (" + kube.SafePath(r.Path) + ")"
}

// oneLine keeps a comment on one line whatever a subject holds.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}
