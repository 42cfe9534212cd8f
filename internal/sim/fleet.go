package sim

import (
	"crypto/x509"
	"fmt"
	"math"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// fleet is a cadence whose bundle many workloads share and that rolls
// them in waves (restart.waves): each consumer is a Deployment reading the
// bundle through env - it keeps the bundle it started with until it is
// rolled - and rolls out within the pick-up lag once its trust-hash moves.
type fleet struct {
	// consumers is the number of Deployments.
	consumers int
	// percent is restart.waves.size, a percentage.
	percent int
	// intervalDays is restart.waves.interval.
	intervalDays int
}

// waves is the policy's restart block, as flow YAML.
func (f fleet) waves() string {
	return fmt.Sprintf("{waves: {size: \"%d%%\", interval: %dd}}", f.percent, f.intervalDays)
}

// fleetConsumer is one Deployment of a fleet: its trust-hash as the last
// render left it.
type fleetConsumer struct {
	name string
	hash string
}

// rolling is a roll of one render: the consumers it rolled and the last
// day one of them picks it up.
type rolling struct {
	day, until int
}

// fleetItems replaces the one Deployment of the initial input with the
// fleet's Deployments, all reading the bundle through env, and adds
// restart.waves to the bundle.
func (s *simulation) fleetItems(items []*yaml.RNode, fnConfig *yaml.RNode) ([]*yaml.RNode, error) {
	f := *s.cfg.Cadence.fleet
	if s.settings.WaveIntervalDays > 0 {
		f.intervalDays = s.settings.WaveIntervalDays
	}
	b, err := fnConfig.Pipe(yaml.Lookup("spec", "trustBundles", "0"))
	if err != nil || b == nil {
		return nil, fmt.Errorf("the policy has no bundle: %v", err)
	}
	if err := b.PipeE(yaml.SetField("restart", yaml.MustParse(f.waves()))); err != nil {
		return nil, err
	}
	var out []*yaml.RNode
	for _, it := range items {
		if it.GetKind() != "Deployment" {
			out = append(out, it)
		}
	}
	for i := range f.consumers {
		name := fmt.Sprintf("app-%03d", i)
		s.fleet = append(s.fleet, &fleetConsumer{name: name})
		node, err := yaml.Parse(fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %[1]s, namespace: %[2]s}
spec:
  replicas: 2
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata:
      labels: {app: %[1]s}
    spec:
      containers:
      - name: app
        image: registry.example/app:1
        env:
        - {name: CA_BUNDLE, valueFrom: {secretKeyRef: {name: %[3]s, key: ca.crt}}}
`, name, namespace, target))
		if err != nil {
			return nil, err
		}
		out = append(out, node)
	}
	return out, nil
}

// fleetDay reads each Deployment's trust-hash after day d's render: a
// consumer whose trust-hash moved rolls, and picks up the bundle rendered
// that day within the lag. It counts the rolls and how many renders' rolls
// are in flight at once.
func (s *simulation) fleetDay(items []*yaml.RNode, d int) {
	hashes := map[string]string{}
	for _, it := range items {
		if it.GetKind() == "Deployment" {
			hashes[it.GetName()] = trustHashOfNode(it)
		}
	}
	v := s.versions[len(s.versions)-1]
	until := -1
	for c, fc := range s.fleet {
		h := hashes[fc.name]
		if h == fc.hash {
			continue
		}
		fc.hash = h
		if d == 0 {
			continue // the input as the previous render left it
		}
		s.stats.Rolls++
		v.pickedUp[c] = d + s.lag()
		until = max(until, v.pickedUp[c])
	}
	if until >= 0 {
		s.rollings = append(s.rollings, rolling{day: d, until: until})
	}
	inFlight := 0
	for _, r := range s.rollings {
		if r.day <= d && d <= r.until {
			inFlight++
		}
	}
	s.stats.MaxWavesRolling = max(s.stats.MaxWavesRolling, inFlight)
}

// notPickedUp is the pick-up day of a bundle version a fleet consumer
// has not rolled to (yet).
const notPickedUp = math.MaxInt

func trustHashOfNode(n *yaml.RNode) string {
	v, err := n.Pipe(yaml.Lookup("spec", "template", "metadata", "annotations", "rotate-certs.dev/trust-hash"))
	if err != nil || v == nil {
		return ""
	}
	return strings.TrimSpace(yaml.GetValue(v))
}

// verifyKey is what simulation.verify remembers a verification of a leaf
// against a bundle version by: the consumers of a fleet hold few distinct
// versions.
type verifyKey struct {
	v    *bundleVersion
	leaf *x509.Certificate
}

func (s *simulation) verify(v *bundleVersion, leaf *x509.Certificate, opts x509.VerifyOptions) error {
	k := verifyKey{v, leaf}
	if err, ok := s.verified[k]; ok {
		return err
	}
	_, err := leaf.Verify(opts)
	if s.verified == nil {
		s.verified = map[verifyKey]error{}
	}
	s.verified[k] = err
	return err
}
