// Package sim is the rotation simulator: it drives the real rotate-certs
// function (rotate.Processor over serialized ResourceLists, through
// function mode's reader and writer, exactly as kustomize and kpt call it)
// day by day over simulated years, feeding each day's output back as the
// next day's input, while simulated issuers rotate CAs and re-issue leaves.
// Every day, every leaf a peer presents is verified (crypto/x509) against
// the bundle each consumer holds, where consumers pick up each rendered
// bundle, and peers each re-issued leaf, with a seeded lag of 0 to MaxLag
// days.
//
// It is test and demo support (make sim, make test); it is not linked into
// the rotate-certs binary. Certificates are deterministic Ed25519 ones from
// internal/testpki named after the seed, and every random choice comes from
// a PCG seeded with Config.Seed, so a run is reproducible.
//
// # What counts as a failure
//
// docs/design/contract.md (Invariants: safe) promises that every valid leaf verifies against every
// trust bundle that previously trusted its issuer, until the issuer expires
// or the user's own policy retires it. A handshake check is therefore a
// Failure when the consumer's bundle was rendered on or after the day the
// leaf's issuer first entered the bundle, and the leaf does not verify
// against it. A check where the consumer still holds a bundle rendered
// before the issuer ever entered it is counted apart, as Unpropagated: a
// CA that signs leaves on the day it is introduced will meet consumers that
// have not seen it yet, whatever renders the bundle. Pre-distributing the
// next CA (cadence 4) is the remedy, and the table shows it.
package sim

import (
	"bytes"
	"crypto/x509"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/pki"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
)

// Start is day 0 of every simulation.
var Start = testpki.Date(2026, 1, 1)

// Settings are the bundle settings under test.
type Settings struct {
	// Mode is policy.ModeBundle or policy.ModeCopy.
	Mode string
	// MaxPrevious is retain.maxPrevious.
	MaxPrevious int
	// RetainForDays and DropUnusedAfterDays set retain.for and
	// retain.dropUnusedAfter in days (0: unset).
	RetainForDays, DropUnusedAfterDays int
	// NoProtectIssuers sets retain.protectIssuers: false.
	NoProtectIssuers bool
	// WaveIntervalDays sets restart.waves.interval of a cadence whose
	// consumers roll in waves (0: the cadence's own).
	WaveIntervalDays int
}

// String describes the settings as policy YAML would.
func (s Settings) String() string {
	if s.Mode == policy.ModeCopy {
		return "mode: Copy"
	}
	out := s.fields()
	if s.WaveIntervalDays > 0 {
		out = append(out, fmt.Sprintf("restart.waves.interval: %dd", s.WaveIntervalDays))
	}
	return strings.Join(out, ", ")
}

// retain is the settings' retain block, as flow YAML.
func (s Settings) retain() string { return "{" + strings.Join(s.fields(), ", ") + "}" }

// fields are the retain settings as YAML fields.
func (s Settings) fields() []string {
	out := []string{fmt.Sprintf("maxPrevious: %d", s.MaxPrevious)}
	if s.RetainForDays > 0 {
		out = append(out, fmt.Sprintf("for: %dd", s.RetainForDays))
	}
	if s.DropUnusedAfterDays > 0 {
		out = append(out, fmt.Sprintf("dropUnusedAfter: %dd", s.DropUnusedAfterDays))
	}
	if s.NoProtectIssuers {
		out = append(out, "protectIssuers: false")
	}
	return out
}

// Config is one simulation run.
type Config struct {
	// Cadence is the scenario.
	Cadence Cadence
	// Days is the number of days simulated (renders).
	Days int
	// Seed makes the certificates and lags reproducible.
	Seed uint64
	// Settings override the cadence's safe settings when non-nil.
	Settings *Settings
	// Consumers is the number of consumers of the bundle (default 3).
	Consumers int
	// MaxLag is the largest pick-up lag in days (default 3).
	MaxLag int
	// MaxExamples is how many failure descriptions to keep (default 5).
	MaxExamples int
}

// Stats is what a run measured.
type Stats struct {
	// Cadence and Settings identify the run.
	Cadence  Cadence
	Settings Settings
	// Days is the number of days simulated (one render each).
	Days int
	// Handshakes is the number of (consumer, presented leaf) checks.
	Handshakes int
	// Failures are checks where a bundle that had trusted the leaf's
	// issuer rejected the leaf.
	Failures int
	// Unpropagated are checks where the consumer's bundle predates the
	// leaf's issuer (not the bundle's fault; see the package doc).
	Unpropagated int
	// MaxBundle is the largest number of certificates in a rendered bundle.
	MaxBundle int
	// BundleChanges counts renders that changed the bundle's bytes.
	BundleChanges int
	// Reorders counts bundle changes that kept the same set of
	// certificates in a different order (a pre-distributed CA becoming
	// current moves to the front).
	Reorders int
	// Rolls counts changes of the consumer Deployment's
	// rotate-certs.dev/trust-hash pod-template annotation (restarts).
	Rolls int
	// Rotations counts CA generations that started signing during the run.
	Rotations int
	// MaxWavesRolling is, for a cadence that rolls its consumers in
	// waves, the most renders whose rolls were in flight on one day (a
	// roll is in flight from its render until its consumer picks up the
	// bundle).
	MaxWavesRolling int
	// Examples describe the first failures.
	Examples []string
}

// leafVersion is one leaf of one peer.
type leafVersion struct {
	cert testpki.Cert
	// chain is the issuer the peer presents with the leaf, nil when a CA
	// of the bundle signed the leaf directly.
	chain *x509.Certificate
	// issuer is the CA of the bundle the leaf chains to.
	issuer    pki.Fingerprint
	issued    int // day it replaces the previous leaf in git
	presented int // day the peer starts presenting it
}

type peer struct {
	name   string
	signer int
	// inMemory: the peer's leaves are never in git (an issuer's
	// workloads: Linkerd's proxies, Istio's sidecars).
	inMemory bool
	versions []leafVersion
}

// bundleVersion is one distinct rendered bundle.
type bundleVersion struct {
	day   int
	certs []*x509.Certificate
	pool  *x509.CertPool
	// pickedUp[c] is the day consumer c starts using it.
	pickedUp []int
}

type simulation struct {
	cfg      Config
	settings Settings
	rng      *rand.Rand
	// cas[s][g] is generation g of signer s.
	cas [][]testpki.Cert
	// issuers[s] are the issuers of signer s, in commit order (signers
	// with an issuer only).
	issuers  [][]issuerVersion
	peers    []*peer
	versions []*bundleVersion
	// firstTrusted is the first day each CA was in the rendered bundle.
	firstTrusted map[pki.Fingerprint]int
	stats        Stats
	// fleet are a fleet cadence's consumers (fleet.go), rollings its
	// renders' rolls, verified the day's handshake results per bundle
	// version and leaf.
	fleet    []*fleetConsumer
	rollings []rolling
	verified map[verifyKey]error
}

// Run simulates cfg and returns what it measured. An error means the
// simulation itself could not proceed (a render failed, or re-rendering a
// changed output was not idempotent); handshake failures are counted, not
// returned.
func Run(cfg Config) (Stats, error) {
	if cfg.Consumers <= 0 {
		cfg.Consumers = 3
	}
	if f := cfg.Cadence.fleet; f != nil {
		cfg.Consumers = f.consumers
	}
	if cfg.MaxLag < 0 {
		cfg.MaxLag = 0
	} else if cfg.MaxLag == 0 {
		cfg.MaxLag = 3
	}
	if cfg.MaxExamples == 0 {
		cfg.MaxExamples = 5
	}
	settings := cfg.Cadence.safe()
	if cfg.Settings != nil {
		settings = *cfg.Settings
	}
	s := &simulation{
		cfg:          cfg,
		settings:     settings,
		rng:          rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^uint64(cfg.Cadence.ID)*0x9e3779b97f4a7c15)),
		firstTrusted: map[pki.Fingerprint]int{},
		stats:        Stats{Cadence: cfg.Cadence, Settings: settings},
	}
	s.schedule()
	return s.run()
}

func (s *simulation) now(day int) time.Time { return Start.Add(testpki.Days(day)) }

func (s *simulation) lag() int { return s.rng.IntN(s.cfg.MaxLag + 1) }

// ca returns generation gen of signer i, creating it on first use. A
// pre-distributed CA exists (NotBefore) from the day it is distributed.
func (s *simulation) ca(i, gen int) testpki.Cert {
	for len(s.cas[i]) <= gen {
		g := len(s.cas[i])
		sg := s.cfg.Cadence.signers[i]
		notBefore := s.now(sg.start(g) - sg.preDistribute)
		name := fmt.Sprintf("sim c%d %s gen %d seed %d", s.cfg.Cadence.ID, sg.name, g, s.cfg.Seed)
		s.cas[i] = append(s.cas[i], testpki.NewCA(name, notBefore, sg.lifetime))
	}
	return s.cas[i][gen]
}

// generation returns the generation of signer i signing on day d.
func (s *simulation) generation(i, d int) int {
	sg := s.cfg.Cadence.signers[i]
	return (d - sg.offset) / sg.period
}

// schedule draws every leaf issuance of the run up front: for each
// generation, each peer's re-issue delay and pick-up lag, and, for a
// signer with an issuer, when each issuer is committed.
func (s *simulation) schedule() {
	c := s.cfg.Cadence
	s.cas = make([][]testpki.Cert, len(c.signers))
	s.issuers = make([][]issuerVersion, len(c.signers))
	for i, sg := range c.signers {
		var peers []*peer
		for _, name := range sg.peers {
			p := &peer{name: name, signer: i, inMemory: sg.issuerDelay > 0}
			peers = append(peers, p)
			s.peers = append(s.peers, p)
		}
		for gen := 0; sg.start(gen) < s.cfg.Days; gen++ {
			if gen > 0 && sg.start(gen) >= 0 {
				s.stats.Rotations++
			}
			if sg.issuerDelay > 0 {
				s.scheduleIssuer(i, gen, peers)
				continue
			}
			ca := s.ca(i, gen)
			for _, p := range peers {
				issued, lag := sg.start(gen), 0
				if gen > 0 {
					issued += s.rng.IntN(sg.reissueMax + 1)
					lag = s.lag()
				}
				// A leaf lives until its successor is presented, at the
				// latest a period plus the delays later, and never beyond
				// its CA.
				notBefore := s.now(issued)
				notAfter := notBefore.Add(testpki.Days(sg.period + sg.reissueMax + s.cfg.MaxLag + 2))
				if notAfter.After(ca.Cert.NotAfter) {
					notAfter = ca.Cert.NotAfter
				}
				name := fmt.Sprintf("%s.g%d.%s.c%d.s%d.sim", p.name, gen, sg.name, c.ID, s.cfg.Seed)
				leaf := testpki.NewLeaf(name, ca, notBefore, notAfter.Sub(notBefore))
				p.versions = append(p.versions, leafVersion{
					cert: leaf, issuer: pki.FingerprintOf(ca.Cert), issued: issued, presented: issued + lag,
				})
			}
		}
	}
}

// issuerVersion is one issuer of a signer: the intermediate CA a
// generation of the signer's CA signs, and the day it is committed.
type issuerVersion struct {
	cert      testpki.Cert
	gen       int
	committed int
}

// scheduleIssuer draws generation gen's issuer of signer i - committed 1
// to issuerDelay days after the CA starts signing (on day 0 for the first)
// - and the leaves the peers present with it. The peers' leaves live in
// memory, never in git: each peer renews from the issuer in the cluster,
// and presents the new issuer's leaves from the day after it is committed
// (or the day after that: a renewal lag), each leaf valid until two days
// after the next issuer's leaves take over.
func (s *simulation) scheduleIssuer(i, gen int, peers []*peer) {
	sg := s.cfg.Cadence.signers[i]
	committed := sg.start(gen)
	if gen > 0 {
		committed += 1 + s.rng.IntN(sg.issuerDelay)
	}
	ca := s.ca(i, gen)
	notBefore := s.now(committed)
	notAfter := notBefore.Add(testpki.Days(sg.period + sg.issuerDelay + 10))
	if notAfter.After(ca.Cert.NotAfter) {
		notAfter = ca.Cert.NotAfter
	}
	name := fmt.Sprintf("sim c%d %s issuer gen %d seed %d", s.cfg.Cadence.ID, sg.name, gen, s.cfg.Seed)
	issuer := testpki.NewIntermediate(name, "identity."+sg.name+".sim", ca, notBefore, notAfter.Sub(notBefore))
	s.issuers[i] = append(s.issuers[i], issuerVersion{cert: issuer, gen: gen, committed: committed})
	for _, p := range peers {
		presented := committed + 1 + s.rng.IntN(2)
		if gen == 0 {
			presented = committed
		}
		leafEnd := notBefore.Add(testpki.Days(sg.period + sg.issuerDelay + 4))
		if leafEnd.After(issuer.Cert.NotAfter) {
			leafEnd = issuer.Cert.NotAfter
		}
		leafName := fmt.Sprintf("%s.g%d.%s.c%d.s%d.sim", p.name, gen, sg.name, s.cfg.Cadence.ID, s.cfg.Seed)
		leaf := testpki.NewLeaf(leafName, issuer, notBefore, leafEnd.Sub(notBefore))
		p.versions = append(p.versions, leafVersion{
			cert: leaf, chain: issuer.Cert, issuer: pki.FingerprintOf(ca.Cert), issued: committed, presented: presented,
		})
	}
}

// issuerIn returns signer i's issuer committed by day d.
func (s *simulation) issuerIn(i, d int) testpki.Cert {
	cur := s.issuers[i][0]
	for _, v := range s.issuers[i] {
		if v.committed <= d {
			cur = v
		}
	}
	return cur.cert
}

// inGit returns the leaf of p committed on day d (what the function sees).
func (p *peer) inGit(d int) leafVersion {
	return p.latest(d, func(v leafVersion) int { return v.issued })
}

// presented returns the leaf p presents on day d: the newest one it has
// picked up.
func (p *peer) presented(d int) leafVersion {
	return p.latest(d, func(v leafVersion) int { return v.presented })
}

// latest returns the last of p's versions whose day (by the given clock)
// is d or before, else the first.
func (p *peer) latest(d int, day func(leafVersion) int) leafVersion {
	cur := p.versions[0]
	for _, v := range p.versions {
		if day(v) <= d {
			cur = v
		}
	}
	return cur
}

// sources returns the PEM each source Secret holds on day d.
func (s *simulation) sources(d int) map[string][]byte {
	out := map[string][]byte{}
	for i, sg := range s.cfg.Cadence.signers {
		gen := s.generation(i, d)
		out[sg.name+"-ca"] = s.ca(i, gen).PEM()
		if sg.preDistribute > 0 {
			var next []byte
			if d >= sg.start(gen+1)-sg.preDistribute {
				next = s.ca(i, gen+1).PEM()
			}
			out[sg.name+"-next-ca"] = next
		}
	}
	return out
}

// record registers the bundle rendered on day d.
func (s *simulation) record(d int, pem []byte) error {
	decoded, err := pki.DecodePEM(pem)
	if err != nil {
		return fmt.Errorf("day %d: rendered bundle: %w", d, err)
	}
	if len(decoded.SkippedTypes) > 0 {
		return fmt.Errorf("day %d: rendered bundle holds non-certificate blocks %v", d, decoded.SkippedTypes)
	}
	certs := decoded.Certificates
	s.stats.MaxBundle = max(s.stats.MaxBundle, len(certs))
	for _, c := range certs {
		if _, ok := s.firstTrusted[pki.FingerprintOf(c)]; !ok {
			s.firstTrusted[pki.FingerprintOf(c)] = d
		}
	}
	if n := len(s.versions); n > 0 && bytes.Equal(pki.EncodePEM(s.versions[n-1].certs), pem) {
		return nil
	}
	v := &bundleVersion{day: d, certs: certs, pool: x509.NewCertPool(), pickedUp: make([]int, s.cfg.Consumers)}
	for _, c := range certs {
		v.pool.AddCert(c)
	}
	for c := range v.pickedUp {
		switch {
		case len(s.versions) == 0:
			v.pickedUp[c] = d
		case s.cfg.Cadence.fleet != nil:
			v.pickedUp[c] = notPickedUp // until the consumer is rolled (fleetDay)
		default:
			v.pickedUp[c] = d + s.lag()
		}
	}
	if n := len(s.versions); n > 0 {
		s.stats.BundleChanges++
		if sameSet(s.versions[n-1].certs, certs) {
			s.stats.Reorders++
		}
	}
	s.versions = append(s.versions, v)
	return nil
}

// held returns the bundle consumer c uses on day d: the newest one it has
// picked up.
func (s *simulation) held(c, d int) *bundleVersion {
	for i := len(s.versions) - 1; i >= 0; i-- {
		if v := s.versions[i]; v.pickedUp[c] <= d {
			return v
		}
	}
	return s.versions[0]
}

// check verifies every presented leaf against every consumer's bundle.
func (s *simulation) check(d int) {
	now := s.now(d)
	clear(s.verified)
	for c := 0; c < s.cfg.Consumers; c++ {
		b := s.held(c, d)
		for _, p := range s.peers {
			leaf := p.presented(d)
			s.stats.Handshakes++
			if first, ok := s.firstTrusted[leaf.issuer]; !ok || first > b.day {
				s.stats.Unpropagated++
				continue
			}
			opts := x509.VerifyOptions{Roots: b.pool, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
			if leaf.chain != nil {
				opts.Intermediates = x509.NewCertPool()
				opts.Intermediates.AddCert(leaf.chain)
			}
			err := s.verify(b, leaf.cert.Cert, opts)
			if err != nil {
				s.stats.Failures++
				if len(s.stats.Examples) < s.cfg.MaxExamples {
					s.stats.Examples = append(s.stats.Examples, fmt.Sprintf(
						"day %d (%s): consumer %d holding the bundle of day %d (%d certificates) rejects %s's leaf issued day %d: %v",
						d, now.Format("2006-01-02"), c, b.day, len(b.certs), p.name, leaf.issued, err))
				}
			}
		}
	}
}

func sameSet(a, b []*x509.Certificate) bool {
	if len(a) != len(b) {
		return false
	}
	set := pki.NewSet(a...)
	for _, c := range b {
		if !set.Has(c) {
			return false
		}
	}
	return true
}
