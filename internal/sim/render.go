package sim

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"strings"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/resio"
	"github.com/rotate-certs/rotate-certs/fn/restart"
	"github.com/rotate-certs/rotate-certs/fn/rotate"
	"github.com/rotate-certs/rotate-certs/fn/trustbundle"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Names of the simulated objects.
const (
	namespace = "sim"
	target    = "trust"
	workload  = "gateway"
)

// run is the day loop: issuer edits, render, feed back, check.
func (s *simulation) run() (Stats, error) {
	items, fnConfig, err := parse(s.initial())
	if err != nil {
		return s.stats, fmt.Errorf("initial ResourceList: %w", err)
	}
	if s.cfg.Cadence.fleet != nil {
		if items, err = s.fleetItems(items, fnConfig); err != nil {
			return s.stats, fmt.Errorf("initial ResourceList: %w", err)
		}
	}
	lastHash, hashSeen := "", false
	for d := 0; d < s.cfg.Days; d++ {
		if err := s.issue(items, d); err != nil {
			return s.stats, fmt.Errorf("day %d: %w", d, err)
		}
		if err := fnConfig.PipeE(yaml.Lookup("spec"), yaml.SetField("now", yaml.NewStringRNode(s.now(d).Format(time.RFC3339)))); err != nil {
			return s.stats, fmt.Errorf("day %d: setting spec.now: %w", d, err)
		}
		in, err := serialize(items, fnConfig)
		if err != nil {
			return s.stats, fmt.Errorf("day %d: %w", d, err)
		}
		out, err := runList(in)
		if err != nil {
			return s.stats, fmt.Errorf("day %d: render failed: %w", d, err)
		}
		if items, fnConfig, err = parse(out); err != nil {
			return s.stats, fmt.Errorf("day %d: reading the output: %w", d, err)
		}
		s.stats.Days++
		pem, err := bundleOf(items)
		if err != nil {
			return s.stats, fmt.Errorf("day %d: %w", d, err)
		}
		before := len(s.versions)
		if err := s.record(d, pem); err != nil {
			return s.stats, err
		}
		if len(s.versions) != before {
			// The bundle changed: re-rendering the output must change
			// nothing (docs/design/contract.md, Invariants: idempotent).
			if err := idempotent(out); err != nil {
				return s.stats, fmt.Errorf("day %d: %w", d, err)
			}
		}
		if s.cfg.Cadence.fleet != nil {
			s.fleetDay(items, d)
		} else if h, ok := trustHash(items); ok != hashSeen || h != lastHash {
			if ok {
				s.stats.Rolls++
			}
			lastHash, hashSeen = h, ok
		}
		s.check(d)
	}
	return s.stats, nil
}

// initial returns day 0's ResourceList: the sources and leaves of day 0, the
// trust bundle as a previous render left it, and a Deployment mounting it.
func (s *simulation) initial() []byte {
	var b strings.Builder
	b.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nfunctionConfig:\n")
	b.WriteString("  apiVersion: rotate-certs.dev/v1alpha1\n  kind: RotationPolicy\n  metadata:\n    name: sim\n  spec:\n")
	fmt.Fprintf(&b, "    now: %q\n    trustBundles:\n    - name: %s\n      mode: %s\n      sources:\n", s.now(0).Format(time.RFC3339), target, s.settings.Mode)
	for _, sg := range s.cfg.Cadence.signers {
		fmt.Fprintf(&b, "      - secret: {name: %s-ca, namespace: %s}\n", sg.name, namespace)
		if sg.preDistribute > 0 {
			fmt.Fprintf(&b, "      - secret: {name: %s-next-ca, namespace: %s, optional: true}\n", sg.name, namespace)
		}
	}
	fmt.Fprintf(&b, "      target: {name: %s}\n      retain: %s\n", target, s.settings.retain())
	b.WriteString("items:\n")
	var current []byte
	sources := s.sources(0)
	for _, sg := range s.cfg.Cadence.signers {
		for _, name := range []string{sg.name + "-ca", sg.name + "-next-ca"} {
			pem, ok := sources[name]
			if !ok {
				continue
			}
			current = append(current, pem...)
			fmt.Fprintf(&b, "- apiVersion: v1\n  kind: Secret\n  metadata:\n    name: %s\n    namespace: %s\n  type: Opaque\n  data:\n    ca.crt: %q\n",
				name, namespace, base64.StdEncoding.EncodeToString(pem))
		}
	}
	for _, p := range s.peers {
		if p.inMemory {
			continue
		}
		fmt.Fprintf(&b, "- apiVersion: v1\n  kind: Secret\n  metadata:\n    name: %s-tls\n    namespace: %s\n  type: kubernetes.io/tls\n  data:\n    tls.crt: \"\"\n    tls.key: \"\"\n",
			p.name, namespace)
	}
	for i, sg := range s.cfg.Cadence.signers {
		if sg.issuerDelay > 0 {
			issuer := s.issuerIn(i, 0)
			fmt.Fprintf(&b, "- apiVersion: v1\n  kind: Secret\n  metadata:\n    name: %s-issuer\n    namespace: %s\n  data:\n    crt.pem: %q\n    key.pem: %q\n",
				sg.name, namespace, base64.StdEncoding.EncodeToString(issuer.PEM()), base64.StdEncoding.EncodeToString(issuer.KeyPEM()))
		}
	}
	fmt.Fprintf(&b, "- apiVersion: v1\n  kind: Secret\n  metadata:\n    name: %s\n    namespace: %s\n  type: Opaque\n  data:\n    ca.crt: %q\n",
		target, namespace, base64.StdEncoding.EncodeToString(current))
	fmt.Fprintf(&b, `- apiVersion: apps/v1
  kind: Deployment
  metadata:
    name: %[1]s
    namespace: %[2]s
  spec:
    replicas: 2
    selector:
      matchLabels: {app: %[1]s}
    template:
      metadata:
        labels: {app: %[1]s}
      spec:
        containers:
        - name: %[1]s
          image: registry.example/%[1]s:1
          volumeMounts:
          - {name: trust, mountPath: /etc/trust, readOnly: true}
        volumes:
        - name: trust
          secret: {secretName: %[3]s}
- apiVersion: policy/v1
  kind: PodDisruptionBudget
  metadata:
    name: %[1]s
    namespace: %[2]s
  spec:
    maxUnavailable: 1
    selector:
      matchLabels: {app: %[1]s}
`, workload, namespace, target)
	return []byte(b.String())
}

// issue applies the issuers' work of day d to the input: the CA sources
// and each peer's leaf Secret as committed that day.
func (s *simulation) issue(items []*yaml.RNode, d int) error {
	index := kube.NewIndex(items)
	set := func(name, key string, value []byte) error {
		node := index.Get(kube.Key{Kind: "Secret", Namespace: namespace, Name: name})
		if node == nil {
			return fmt.Errorf("secret %s/%s is missing from the output", namespace, name)
		}
		_, _, err := trustbundle.SetValue(node, key, value)
		return err
	}
	for name, pem := range s.sources(d) {
		if err := set(name, "ca.crt", pem); err != nil {
			return err
		}
	}
	for i, sg := range s.cfg.Cadence.signers {
		if sg.issuerDelay > 0 {
			issuer := s.issuerIn(i, d)
			if err := set(sg.name+"-issuer", "crt.pem", issuer.PEM()); err != nil {
				return err
			}
			if err := set(sg.name+"-issuer", "key.pem", issuer.KeyPEM()); err != nil {
				return err
			}
		}
	}
	for _, p := range s.peers {
		if p.inMemory {
			continue
		}
		leaf := p.inGit(d)
		if err := set(p.name+"-tls", "tls.crt", leaf.cert.PEM()); err != nil {
			return err
		}
		if err := set(p.name+"-tls", "tls.key", leaf.cert.KeyPEM()); err != nil {
			return err
		}
	}
	return nil
}

// runList runs the function exactly as function mode does when kustomize
// or kpt call it (cmd/rotate-certs runFunction): a serialized ResourceList
// in, through the resio fast path or kyaml's reader, a serialized
// ResourceList out. The wall clock is never read: spec.now drives every
// render.
func runList(in []byte) ([]byte, error) {
	var out bytes.Buffer
	p := rotate.Processor{Now: func() time.Time { panic("sim: the function read the wall clock although spec.now is set") }}
	if err := resio.RunList(in, &out, rotate.Needs, p.Run); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

func parse(b []byte) ([]*yaml.RNode, *yaml.RNode, error) {
	r := &kio.ByteReader{Reader: bytes.NewReader(b), OmitReaderAnnotations: true}
	items, err := r.Read()
	if err != nil {
		return nil, nil, err
	}
	if r.FunctionConfig == nil {
		return nil, nil, fmt.Errorf("no functionConfig")
	}
	return items, r.FunctionConfig, nil
}

func serialize(items []*yaml.RNode, fnConfig *yaml.RNode) ([]byte, error) {
	var buf bytes.Buffer
	w := kio.ByteWriter{Writer: &buf, FunctionConfig: fnConfig,
		WrappingKind: kio.ResourceListKind, WrappingAPIVersion: kio.ResourceListAPIVersion}
	if err := w.Write(items); err != nil {
		return nil, fmt.Errorf("serializing the ResourceList: %w", err)
	}
	return buf.Bytes(), nil
}

// itemsText serializes only the items of a ResourceList (not results).
func itemsText(rl []byte) (string, error) {
	items, _, err := parse(rl)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	if err := (kio.ByteWriter{Writer: &buf}).Write(items); err != nil {
		return "", err
	}
	return buf.String(), nil
}

// idempotent re-renders out and fails if any item changes.
func idempotent(out []byte) error {
	again, err := runList(out)
	if err != nil {
		return fmt.Errorf("re-rendering the output failed: %w", err)
	}
	a, err := itemsText(out)
	if err != nil {
		return err
	}
	b, err := itemsText(again)
	if err != nil {
		return err
	}
	if a != b {
		return fmt.Errorf("re-rendering the output changed it (not idempotent)")
	}
	return nil
}

func find(items []*yaml.RNode, kind, name string) *yaml.RNode {
	for _, it := range items {
		if it.GetKind() == kind && it.GetNamespace() == namespace && it.GetName() == name {
			return it
		}
	}
	return nil
}

// bundleOf returns the rendered bundle's PEM.
func bundleOf(items []*yaml.RNode) ([]byte, error) {
	node := find(items, "Secret", target)
	if node == nil {
		return nil, fmt.Errorf("the trust bundle %s/%s is missing from the output", namespace, target)
	}
	v, found, err := kube.Lookup(node, "ca.crt")
	if err != nil {
		return nil, fmt.Errorf("reading the trust bundle: %w", err)
	}
	if !found {
		return nil, fmt.Errorf("the trust bundle has no ca.crt")
	}
	return v.Bytes, nil
}

// trustHash returns the workload's trust-hash pod-template annotation.
func trustHash(items []*yaml.RNode) (string, bool) {
	node := find(items, "Deployment", workload)
	if node == nil {
		return "", false
	}
	v, err := node.Pipe(yaml.Lookup("spec", "template", "metadata", "annotations", restart.TrustHashAnnotation))
	if err != nil || v == nil {
		return "", false
	}
	return yaml.GetValue(v), true
}
