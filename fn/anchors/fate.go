package anchors

import (
	"crypto/x509"
	"fmt"
	"strings"
	"time"
)

// FateState is what the merge decided for a previous CA.
type FateState string

// Fate states.
const (
	// FateKept: in the bundle, by maxPrevious or retain.for (see Fate.why).
	FateKept FateState = "kept"
	// FateUnused: in the bundle, and nothing in the input chains to it:
	// safe to drop now; retain.dropUnusedAfter drops it once nothing has
	// chained to it for that long (see Fate.UnusedSince).
	FateUnused FateState = "unused"
	// FateProtected: in the bundle only because certificates of the input
	// chain to it (protectIssuers); the retain policy would have dropped
	// it.
	FateProtected FateState = "protected"
	// FateDropped: left the bundle at this render (Fate.Reason says why).
	FateDropped FateState = "dropped"
	// FateRemembered: Copy mode; not in the bundle, remembered for a
	// switch back to Bundle mode, which would keep it.
	FateRemembered FateState = "remembered"
)

// Fate is the one decision about a previous CA: whether it stays, why,
// until when, and what chains to it. The re-issue list and the verdicts
// are projections of it, so that the retain rules are applied once.
type Fate struct {
	Cert *x509.Certificate
	// RetiredAt is when it stopped being current; zero for a CA that had
	// expired (it is dropped before its retirement counts).
	RetiredAt time.Time
	State     FateState
	// why is the rule that keeps a kept or unused CA: keptByMaxPrevious,
	// keptByRetainFor or keptByWaves.
	why keptBy
	// Reason says why a dropped CA was dropped.
	Reason Reason
	// UnusedSince is, with retain.dropUnusedAfter, the first render at
	// which nothing in the input chained to it, since when nothing has
	// (the target's unused record carries it from render to render);
	// zero when something chains to it or dropUnusedAfter is not set.
	UnusedSince time.Time
	// LeavesAt is when the retain policy lets it go: for a kept or unused
	// CA, the earliest of its NotAfter, the retain.for deadline and (when
	// unused) UnusedSince plus dropUnusedAfter; for a protected one, when the
	// policy would have dropped it (a date in the past); for a dropped or
	// remembered one, when the rule that dropped it took effect.
	LeavesAt time.Time
	// Dependents are the valid certificates of the input that chain to it
	// and to no current CA. Shared with other outcomes: read only.
	Dependents []Held
	// elsewhere are the valid certificates of the trust domain's other
	// packages that chain to it and to no current CA of the domain
	// (Options.Domain): they keep it like Dependents, but are re-issued
	// in their own package. Shared: read only.
	elsewhere []Held
	// Restored says it came back from Copy-mode memory at this render.
	Restored bool
	// Verdict is the fate as users read it (results, check).
	Verdict Verdict
}

// keptBy names the retain rule that keeps a previous CA.
type keptBy string

// Retain rules that keep a previous CA.
const (
	keptByMaxPrevious keptBy = "maxPrevious"
	keptByRetainFor   keptBy = "retain.for"
	// keptByWaves: a rule would drop it, but the bundle's workloads roll
	// out in waves that are not done (restart.waves): held until LeavesAt
	// at least.
	keptByWaves keptBy = "restart waves"
	// keptByDomain: a rule would drop it, but the render sees only part
	// of the bundle's trust domain: kept until it expires (LeavesAt) or a
	// render that sees the whole domain decides.
	keptByDomain keptBy = "trust domain"
)

// Needed returns every certificate that keeps the CA: the input's
// (Dependents), then the domain's other packages' (elsewhere).
func (f Fate) Needed() []Held {
	if len(f.elsewhere) == 0 {
		return f.Dependents
	}
	return append(f.Dependents[:len(f.Dependents):len(f.Dependents)], f.elsewhere...)
}

// inBundle reports whether the rendered bundle holds the CA.
func (f Fate) inBundle() bool {
	return f.State == FateKept || f.State == FateUnused || f.State == FateProtected
}

// Verdict words, as `check` and the results show them.
const (
	verdictKept       = "kept"
	verdictDrops      = "drops"
	verdictUnused     = "unused"
	verdictDropped    = "dropped"
	verdictRemembered = "remembered"
)

// Verdict is a previous CA's fate in words: kept (and why), drops on a
// date, unused (safe to drop now), dropped (and why), or remembered (Copy
// mode).
type Verdict struct {
	// Word is one of the Verdict* words.
	Word string
	// why is the reason of a kept, unused or dropped CA ("maxPrevious",
	// "retain.for until 2027-02-20", "protected by ...", a Reason).
	why string
	// Date is when it leaves (drops, unused) or left (dropped); zero when
	// only its expiry or newer retirements will end it.
	Date time.Time
}

// String is the verdict as one phrase: "kept (retain.for until
// 2027-02-20)", "drops on 2027-02-20", "unused: safe to drop now (leaves
// on 2026-11-24)" - nothing in the input chains to an unused CA.
func (v Verdict) String() string {
	switch v.Word {
	case verdictDrops:
		return "drops on " + dateOnly(v.Date)
	case verdictUnused:
		s := "unused: safe to drop now"
		if !v.Date.IsZero() {
			s += " (leaves on " + dateOnly(v.Date) + ")"
		}
		return s
	}
	return v.Word + " (" + v.why + ")"
}

func dateOnly(t time.Time) string { return t.UTC().Format(time.DateOnly) }

// maxNamed caps how many certificates a verdict names.
const maxNamed = 3

// protectedBy names the certificates that protect a CA: "Secret
// linkerd/linkerd-identity-issuer data.crt.pem and 2 more".
func protectedBy(deps []Held) string {
	var where []string
	for i, d := range deps {
		if i == maxNamed {
			where = append(where, fmt.Sprintf("%d more", len(deps)-maxNamed))
			break
		}
		where = append(where, d.Where)
	}
	if len(where) > 1 {
		return strings.Join(where[:len(where)-1], ", ") + " and " + where[len(where)-1]
	}
	return strings.Join(where, "")
}

// verdict words fate f under opts: the one place that says what a state
// means to a user.
func verdict(f Fate, opts Options) Verdict {
	switch f.State {
	case FateDropped:
		return Verdict{Word: verdictDropped, why: string(f.Reason), Date: f.LeavesAt}
	case FateRemembered:
		return Verdict{Word: verdictRemembered, why: "Copy mode; Bundle mode would keep it", Date: f.LeavesAt}
	case FateProtected:
		return Verdict{Word: verdictKept, why: "protected by " + protectedBy(f.Needed())}
	case FateUnused:
		return Verdict{Word: verdictUnused, Date: f.LeavesAt}
	}
	switch {
	case f.why == keptByDomain:
		return Verdict{Word: verdictKept, why: "trust domain " + opts.Domain.Name + " is not seen whole: until it expires on " + dateOnly(f.LeavesAt) + " or a render at the repository's top"}
	case f.why == keptByWaves:
		return Verdict{Word: verdictKept, why: "restart waves pending, until " + dateOnly(f.LeavesAt) + " at least"}
	case f.why == keptByRetainFor && opts.ProtectIssuers && f.LeavesAt.Before(f.Cert.NotAfter):
		return Verdict{Word: verdictKept, why: "retain.for until " + dateOnly(f.LeavesAt)}
	case f.why == keptByRetainFor:
		// Without protectIssuers the date holds whatever chains to it,
		// and no rule outlives the CA's own expiry.
		return Verdict{Word: verdictDrops, Date: f.LeavesAt}
	}
	return Verdict{Word: verdictKept, why: string(keptByMaxPrevious)}
}
