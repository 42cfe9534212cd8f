package sim

import (
	"bytes"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/exit"
	"github.com/rotate-certs/rotate-certs/fn/pki"
	"github.com/rotate-certs/rotate-certs/fn/render"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"sigs.k8s.io/kustomize/kyaml/kio"
)

// FleetConfig is a fleet of clusters that call each other and share a mesh
// anchor (Linkerd multicluster): one repository, one package per cluster,
// rendered at its top once a day. Every Period days a new anchor is
// committed to every cluster's source; each cluster's identity issuer is
// re-issued from it on a day of its own, 1 to MaxReissueLag days later.
type FleetConfig struct {
	Clusters, Days, Period, MaxReissueLag int
	Seed                                  uint64
	// Domain sets domain: on every cluster's bundle; without it each
	// package decides alone when the old anchor goes.
	Domain bool
}

// FleetStats is what a fleet run measured.
type FleetStats struct {
	Config FleetConfig
	// Handshakes counts, every day, every ordered pair of clusters: the
	// certificate a proxy of one presents (minted by its issuer of that
	// day or the day before: proxy certificates live 24 hours) verified
	// against the other's trust roots of the day.
	Handshakes, Failures int
	// Anchors counts anchor generations; MaxBundle the most anchors in one
	// cluster's trust roots.
	Anchors, MaxBundle int
	Examples           []string
}

// fleet is one run of a fleet.
type fleetRun struct {
	cfg    FleetConfig
	dir    string
	reidx  [][]int // reidx[c][g]: the day cluster c's issuer moves to anchor g
	certs  map[string]testpki.Cert
	stats  FleetStats
	render bytes.Buffer
}

// RunFleet simulates cfg in a temporary repository.
func RunFleet(cfg FleetConfig) (FleetStats, error) {
	dir, err := os.MkdirTemp("", "rotate-certs-sim-fleet-")
	if err != nil {
		return FleetStats{}, err
	}
	defer os.RemoveAll(dir)
	if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
		return FleetStats{}, err
	}
	f := &fleetRun{cfg: cfg, dir: dir, certs: map[string]testpki.Cert{}, stats: FleetStats{Config: cfg}}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x5eed))
	gens := cfg.Days/cfg.Period + 1
	f.stats.Anchors = gens
	for c := 0; c < cfg.Clusters; c++ {
		days := make([]int, gens)
		for g := 1; g < gens; g++ {
			days[g] = g*cfg.Period + 1 + rng.IntN(cfg.MaxReissueLag)
		}
		f.reidx = append(f.reidx, days)
	}
	for d := 0; d < cfg.Days; d++ {
		if err := f.day(d); err != nil {
			return f.stats, fmt.Errorf("day %d: %w\n%s", d, err, f.render.String())
		}
	}
	return f.stats, nil
}

// cert returns the named certificate, made once.
func (f *fleetRun) cert(name string, make func() testpki.Cert) testpki.Cert {
	c, ok := f.certs[name]
	if !ok {
		c = make()
		f.certs[name] = c
	}
	return c
}

func (f *fleetRun) anchor(g int) testpki.Cert {
	return f.cert(fmt.Sprintf("sim-fleet-%d-anchor-%d", f.cfg.Seed, g), func() testpki.Cert {
		return testpki.NewSubjectCA(fmt.Sprintf("sim-fleet-%d-anchor-%d", f.cfg.Seed, g), "root.linkerd.cluster.local", Start.Add(testpki.Days(g*f.cfg.Period-1)), testpki.Days(4*f.cfg.Period))
	})
}

// generation is the anchor generation cluster c's issuer is signed by on
// day d.
func (f *fleetRun) generation(c, d int) int {
	g := 0
	for i, at := range f.reidx[c] {
		if i > 0 && d >= at {
			g = i
		}
	}
	return g
}

// issuer returns cluster c's issuer on day d.
func (f *fleetRun) issuer(c, d int) testpki.Cert {
	g := f.generation(c, d)
	name := fmt.Sprintf("sim-fleet-%d-issuer-%d-%d", f.cfg.Seed, c, g)
	return f.cert(name, func() testpki.Cert {
		at := Start
		if g > 0 {
			at = Start.Add(testpki.Days(f.reidx[c][g]))
		}
		return testpki.NewIntermediate(name, "identity.linkerd.cluster.local", f.anchor(g), at, testpki.Days(4*f.cfg.Period))
	})
}

// proxy returns the certificate a proxy of cluster c presents, minted on
// day minted by c's issuer of that day.
func (f *fleetRun) proxy(c, minted int) testpki.Cert {
	name := fmt.Sprintf("sim-fleet-%d-proxy-%d-%d", f.cfg.Seed, c, minted)
	return f.cert(name, func() testpki.Cert {
		return testpki.NewLeaf(name, f.issuer(c, minted), Start.Add(testpki.Days(minted)), 2*24*time.Hour)
	})
}

// day writes day d's sources and issuers, renders the repository at its
// top and checks every pair of clusters.
func (f *fleetRun) day(d int) error {
	for c := 0; c < f.cfg.Clusters; c++ {
		if err := f.writeCluster(c, d); err != nil {
			return err
		}
	}
	f.render.Reset()
	if err := render.Render(f.dir, render.Options{At: Start.Add(testpki.Days(d)), Stdout: io.Discard, Stderr: exit.NewPrinter(&f.render, "rotate-certs render")}); err != nil {
		return fmt.Errorf("render: %w", err)
	}
	roots := make([]*x509.CertPool, f.cfg.Clusters)
	for c := range roots {
		certs, err := f.trustRoots(c)
		if err != nil {
			return err
		}
		f.stats.MaxBundle = max(f.stats.MaxBundle, len(certs))
		roots[c] = x509.NewCertPool()
		for _, ca := range certs {
			roots[c].AddCert(ca)
		}
	}
	for from := 0; from < f.cfg.Clusters; from++ {
		for _, minted := range []int{max(d-1, 0), d} {
			p := f.proxy(from, minted)
			inter := x509.NewCertPool()
			inter.AddCert(f.issuer(from, minted).Cert)
			for to := 0; to < f.cfg.Clusters; to++ {
				if to == from {
					continue
				}
				f.stats.Handshakes++
				opts := x509.VerifyOptions{Roots: roots[to], Intermediates: inter, CurrentTime: Start.Add(testpki.Days(d)).Add(time.Hour)}
				if _, err := p.Cert.Verify(opts); err != nil {
					f.stats.Failures++
					if len(f.stats.Examples) < 3 {
						f.stats.Examples = append(f.stats.Examples, fmt.Sprintf("day %d: cluster %d rejects a proxy of cluster %d (issuer of day %d): %v", d, to, from, minted, err))
					}
				}
			}
		}
	}
	return nil
}

// fleetPolicy is every cluster's policy; %s is the domain line.
const fleetPolicy = `apiVersion: rotate-certs.dev/v1alpha1
kind: RotationPolicy
metadata:
  name: linkerd-trust
  annotations:
    config.kubernetes.io/local-config: "true"
spec:
  trustBundles:
  - name: linkerd-anchors
%s    sources:
    - secret: {name: linkerd-trust-anchor, namespace: linkerd, key: ca.crt}
    target: {kind: ConfigMap, name: linkerd-identity-trust-roots, namespaces: [linkerd], key: ca-bundle.crt}
    retain: {maxPrevious: 1, dropUnusedAfter: 24h}
`

// writeCluster writes cluster c's policy, anchor source and issuer of day
// d (the trust roots are what the renders write).
func (f *fleetRun) writeCluster(c, d int) error {
	dir := filepath.Join(f.dir, fmt.Sprintf("cluster-%02d", c))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	domain := ""
	if f.cfg.Domain {
		domain = "    domain: mesh-anchors\n"
	}
	secret := func(name, key string, cert testpki.Cert) string {
		return fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata:\n  name: %s\n  namespace: linkerd\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\ndata:\n  %s: %s\n",
			name, key, base64.StdEncoding.EncodeToString(cert.PEM()))
	}
	files := map[string]string{
		"rotation-policy.yaml": fmt.Sprintf(fleetPolicy, domain),
		"trust-anchor.yaml":    secret("linkerd-trust-anchor", "ca.crt", f.anchor(d/f.cfg.Period)),
		"identity-issuer.yaml": secret("linkerd-identity-issuer", "crt.pem", f.issuer(c, d)),
	}
	roots := filepath.Join(dir, "identity-trust-roots.yaml")
	if _, err := os.Stat(roots); err != nil {
		files["identity-trust-roots.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: linkerd-identity-trust-roots\n  namespace: linkerd\ndata:\n  ca-bundle.crt: |\n    " +
			strings.ReplaceAll(strings.TrimSpace(string(f.anchor(0).PEM())), "\n", "\n    ") + "\n"
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// trustRoots reads the anchors cluster c's trust roots hold.
func (f *fleetRun) trustRoots(c int) ([]*x509.Certificate, error) {
	b, err := os.ReadFile(filepath.Join(f.dir, fmt.Sprintf("cluster-%02d", c), "identity-trust-roots.yaml"))
	if err != nil {
		return nil, err
	}
	nodes, err := kio.FromBytes(b)
	if err != nil || len(nodes) != 1 {
		return nil, fmt.Errorf("cluster %d: trust roots do not parse: %v", c, err)
	}
	d, err := pki.DecodePEM([]byte(nodes[0].GetDataMap()["ca-bundle.crt"]))
	if err != nil {
		return nil, err
	}
	return d.Certificates, nil
}

// FleetTable renders fleet runs as a table, one row per run.
func FleetTable(runs []FleetStats) string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "fleet\tclusters\tdays\tanchors\tissuers re-issued\thandshakes\tfailures\tmax bundle\t")
	for _, s := range runs {
		name := "without domain"
		if s.Config.Domain {
			name = "domain: mesh-anchors"
		}
		fmt.Fprintf(w, "%s\t%d\t%d\t%d\t1-%d days after\t%d\t%d\t%d\t\n", name, s.Config.Clusters, s.Config.Days, s.Anchors,
			s.Config.MaxReissueLag, s.Handshakes, s.Failures, s.MaxBundle)
	}
	_ = w.Flush()
	return b.String()
}
