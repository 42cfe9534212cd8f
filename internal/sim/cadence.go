package sim

import (
	"fmt"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/policy"
)

// signer is one CA lineage: a CA that an issuer replaces every period days,
// and the peers whose leaves it signs.
type signer struct {
	// name names the lineage; its source Secret is "<name>-ca".
	name string
	// period is the number of days between two generations.
	period int
	// offset is the day generation 0 started signing (zero or negative:
	// the lineage may predate the simulation).
	offset int
	// lifetime is the validity of each CA certificate.
	lifetime time.Duration
	// preDistribute > 0 puts the next CA into the optional source
	// "<name>-next-ca" that many days before it starts signing.
	preDistribute int
	// reissueMax: each peer's leaf is re-issued 0..reissueMax days after a
	// new CA starts signing.
	reissueMax int
	// issuerDelay > 0: the lineage's CA signs an issuer (an intermediate
	// CA held in git, Secret "<name>-issuer", keys crt.pem and key.pem)
	// rather than leaves; each generation's issuer is committed 1 to
	// issuerDelay days after the CA starts, and the peers' leaves - renewed
	// from the issuer in the cluster, never in git, presented with the
	// issuer as their chain - are signed by it (Linkerd's and Istio's
	// shape).
	issuerDelay int
	// peers present leaves of this lineage.
	peers []string
}

// start returns the day generation gen starts signing.
func (s signer) start(gen int) int { return s.offset + gen*s.period }

// Cadence is one rotation scenario of the simulation: the signers feeding
// one trust bundle and the bundle's safe retain setting.
type Cadence struct {
	// ID is the cadence's number (1-7), as in the table.
	ID int
	// Name is a short label.
	Name string
	// signers feed the bundle, one source each (two with pre-distribution).
	signers []signer
	// maxPrevious is the retain.maxPrevious a careful user sets, and
	// dropUnusedAfter (days, 0: unset) the retain.dropUnusedAfter.
	maxPrevious, dropUnusedAfter int
	// fleet, when set, makes the bundle's consumers a fleet of
	// Deployments rolled in waves (fleet.go).
	fleet *fleet
}

// safe returns the cadence's safe settings.
func (c Cadence) safe() Settings {
	return Settings{Mode: policy.ModeBundle, MaxPrevious: c.maxPrevious, DropUnusedAfterDays: c.dropUnusedAfter}
}

// Cadences returns the rotation scenarios: one signer by hand, two
// signers on different cadences (30d and 60d with short-lived and with
// year-long CAs, 30d and 365d), an issuer root, and a pre-distributed CA.
func Cadences() []Cadence {
	day := 24 * time.Hour
	return []Cadence{
		{
			// A gateway CA replaced by hand every 90 days; each peer's
			// leaf is re-issued 0-3 days later.
			ID: 1, Name: "gateway CA by hand, 90d",
			signers: []signer{{
				name: "gateway", period: 90, lifetime: 365 * day, reissueMax: 3,
				peers: []string{"ratelimit", "ext-auth", "backend"},
			}},
			maxPrevious: 1,
		},
		{
			// Two signers in one bundle, rotated at 80% of their lifetime:
			// every 30 days (lifetime 37.5 days) and every 60 days
			// (lifetime 75 days), both from day 0, so every 60 days both
			// rotate at once; leaves re-issued within a day. One previous
			// CA per signer is kept (maxPrevious = signers): with
			// maxPrevious 1 the simultaneous rotations break handshakes.
			ID: 2, Name: "two signers, 30d and 60d at 80%",
			signers: []signer{
				{name: "signer-a", period: 30, lifetime: 900 * time.Hour, reissueMax: 1, peers: []string{"a-client", "a-server"}},
				{name: "signer-b", period: 60, lifetime: 75 * day, reissueMax: 1, peers: []string{"b-client", "b-server"}},
			},
			maxPrevious: 2,
		},
		{
			// A root with a 90-day lifetime renewed at 2/3 of it by an
			// issuer (new key); client certificates re-issued within 4
			// days.
			ID: 3, Name: "issuer root 90d, renewed at 2/3",
			signers: []signer{{
				name: "root", period: 60, lifetime: 90 * day, reissueMax: 4,
				peers: []string{"client-1", "client-2", "client-3"},
			}},
			maxPrevious: 1,
		},
		{
			// A CA pre-distributed through an optional extra source 7 days
			// before it starts signing; leaves re-issued 0-3 days after.
			ID: 4, Name: "next CA pre-distributed 7d ahead",
			signers: []signer{{
				name: "gateway", period: 90, lifetime: 180 * day, preDistribute: 7, reissueMax: 3,
				peers: []string{"ratelimit", "ext-auth", "backend"},
			}},
			maxPrevious: 1,
		},
		{
			// Two signers in one bundle with year-long CAs, rotated every
			// 30 and every 60 days, both from day 0: every 60 days both
			// rotate at once, and the CA the 60-day signer just retired
			// has the same NotBefore as a 30-day CA retired a month
			// earlier. Only the retirement record tells them apart.
			ID: 5, Name: "two signers, 30d and 60d, 1-year CAs",
			signers: []signer{
				{name: "signer-a", period: 30, lifetime: 365 * day, reissueMax: 1, peers: []string{"a-client", "a-server"}},
				{name: "signer-b", period: 60, lifetime: 365 * day, reissueMax: 1, peers: []string{"b-client", "b-server"}},
			},
			maxPrevious: 2,
		},
		{
			// A 30-day signer and a yearly one in one bundle: when the
			// yearly signer rotates, its CA is older than every 30-day CA
			// the bundle still carries, so ranking by NotBefore would drop
			// it first.
			ID: 6, Name: "two signers, 30d and 365d",
			signers: []signer{
				{name: "signer-a", period: 30, lifetime: 90 * day, reissueMax: 1, peers: []string{"a-client", "a-server"}},
				{name: "signer-b", period: 365, lifetime: 730 * day, reissueMax: 1, peers: []string{"b-client", "b-server"}},
			},
			maxPrevious: 2,
		},
		meshCadence(),
		fleetCadence(),
	}
}

// meshCadence is cadence 7: a mesh, whose anchor signs an issuer in git
// and whose workloads' certificates live in memory.
func meshCadence() Cadence {
	day := 24 * time.Hour
	return Cadence{
		// A mesh: the trust anchor (a 200-day CA, replaced every 90
		// days) signs an issuer, and the issuer signs the workloads'
		// short-lived certificates, which live in memory. The issuer
		// is re-issued from the new anchor 1 to 5 days after the
		// anchor rotates; the workloads present the new issuer's
		// certificates a day or two later. Only the issuer in git
		// says that the old anchor is still needed, and
		// dropUnusedAfter ends the overlap once it is re-issued.
		ID: 7, Name: "mesh anchor 90d, issuer 1-5d later",
		signers: []signer{{
			name: "mesh", period: 90, lifetime: 200 * day, issuerDelay: 5,
			peers: []string{"web", "api", "db"},
		}},
		maxPrevious: 1, dropUnusedAfter: 10,
	}
}

// fleetCadence is a bundle that 200 Deployments share, each reading it
// through env (it must be rolled to see a new CA), rolled in waves of 10%
// four days apart: a wave rolls out within the pick-up lag (0-3 days)
// before the next one starts. The next CA is pre-distributed 45 days
// before it signs: the ten waves of the roll that brings it (36 days, and
// the lag) reach every consumer before its first leaf.
func fleetCadence() Cadence {
	return Cadence{
		ID: 8, Name: "200 consumers in waves of 10%",
		signers: []signer{{
			name: "gateway", period: 90, lifetime: 365 * 24 * time.Hour, preDistribute: 45, reissueMax: 3,
			peers: []string{"ratelimit", "ext-auth", "backend"},
		}},
		maxPrevious: 1,
		fleet:       &fleet{consumers: 200, percent: 10, intervalDays: 4},
	}
}

// CadenceByID returns cadence id (1-8).
func CadenceByID(id int) (Cadence, error) {
	for _, c := range Cadences() {
		if c.ID == id {
			return c, nil
		}
	}
	return Cadence{}, fmt.Errorf("no cadence %d (1-%d)", id, len(Cadences()))
}
