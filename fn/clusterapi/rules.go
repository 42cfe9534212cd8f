package clusterapi

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Limits that Cluster API, kubeadm and etcdadm apply to certificate expiry
// windows.
const (
	// MinExpiryDays is the smallest certificatesExpiryDays Cluster API
	// accepts (KubeadmControlPlane webhook; Minimum in the v1beta2 schema).
	MinExpiryDays = 7
	// DefaultValidityDays is the validity of the leaf certificates kubeadm
	// and etcdadm issue when nothing else is configured.
	DefaultValidityDays = 365
	// maxNameLength keeps derived template names usable as label values,
	// which Cluster API copies template names into.
	maxNameLength = 63
)

// CheckExpiryDays applies the KubeadmControlPlane webhook's rule to an
// expiry window of days: at least MinExpiryDays, and below the certificate
// validity - validityDays when the object sets
// certificateValidityPeriodDays (validitySet), else DefaultValidityDays. A
// window as long as the validity would roll machines as soon as they are
// created.
func CheckExpiryDays(days, validityDays int, validitySet bool) error {
	if days < MinExpiryDays {
		return fmt.Errorf("%d is below %d, the minimum Cluster API accepts", days, MinExpiryDays)
	}
	if validitySet {
		if days >= validityDays {
			return fmt.Errorf("%d must be less than certificateValidityPeriodDays (%d): machines would be rolled as soon as they are created", days, validityDays)
		}
		return nil
	}
	if days >= DefaultValidityDays {
		return fmt.Errorf("%d must be less than %d, the default certificate validity (certificateValidityPeriodDays is not set)", days, DefaultValidityDays)
	}
	return nil
}

// Evidence is one statement, found in the input, of when the certificates
// of a machine expire.
type Evidence struct {
	// Machine is the name of the machine the statement is about.
	Machine string
	// Source says where the statement was read, such as
	// "Machine eksa-system/etcd-abc metadata.annotations[...]".
	Source string
	// Value is the statement as written (an RFC 3339 date, or a number of
	// days). It, not Expiry, identifies the evidence: a relative statement
	// gives a different Expiry every day.
	Value string
	// Expiry is when the certificates expire.
	Expiry time.Time
}

// ParseExpiry parses an expiry date as Cluster API writes and reads it
// (RFC 3339).
func ParseExpiry(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not an RFC 3339 date such as 2027-01-31T00:00:00Z", s)
	}
	return t.UTC(), nil
}

// ExpiryIn returns the expiry of a certificate that expires days after now,
// the reading of a relative statement such as EKS Anywhere's expiresInDays.
func ExpiryIn(days int, now time.Time) time.Time {
	return now.Add(time.Duration(days) * 24 * time.Hour)
}

// Due reports whether certificates expiring at expiry are inside a window of
// days at now, as the KubeadmControlPlane controller decides it: a machine
// is rolled when now + days is after its expiry.
func Due(expiry, now time.Time, days int) bool {
	return now.Add(time.Duration(days) * 24 * time.Hour).After(expiry)
}

// DaysLeft returns the whole days from now to expiry, rounded down;
// negative once expired.
func DaysLeft(expiry, now time.Time) int {
	d := expiry.Sub(now)
	days := int(d / (24 * time.Hour))
	if d < 0 && d%(24*time.Hour) != 0 {
		days--
	}
	return days
}

// Roll is the decision to roll every etcd machine of one etcd cluster.
type Roll struct {
	// Due is the evidence inside the window, earliest expiry first.
	Due []Evidence
	// Expired is the evidence of certificates that have already expired.
	Expired []Evidence
	// Name is the new infrastructure template name.
	Name string
}

// PlanRoll decides whether an etcd cluster whose infrastructure template
// derives from base must roll, given all the evidence about its machines.
// It rolls when any evidence is inside the window of days. The new template
// name is derived from base and all the evidence (due or not), so that it
// does not change while the same evidence stays in the input - however much
// time passes - and a re-render is a no-op.
func PlanRoll(base string, evidence []Evidence, now time.Time, days int) (Roll, bool) {
	var r Roll
	for _, e := range evidence {
		if Due(e.Expiry, now, days) {
			r.Due = append(r.Due, e)
			if !now.Before(e.Expiry) {
				r.Expired = append(r.Expired, e)
			}
		}
	}
	if len(r.Due) == 0 {
		return Roll{}, false
	}
	sort.SliceStable(r.Due, func(i, j int) bool { return r.Due[i].Expiry.Before(r.Due[j].Expiry) })
	r.Name = RollName(base, evidence)
	return r, true
}

// RollName derives the name of the template copy that rolls an etcd cluster
// whose template derives from base: base, "-renew-", and 8 hex digits of a
// hash of base and the evidence (order-insensitive). base is shortened so
// that the name fits in 63 characters.
func RollName(base string, evidence []Evidence) string {
	lines := make([]string, 0, len(evidence))
	for _, e := range evidence {
		lines = append(lines, e.Machine+"\t"+e.Source+"\t"+e.Value)
	}
	sort.Strings(lines)
	h := sha256.New()
	h.Write([]byte(base + "\n"))
	for _, l := range lines {
		h.Write([]byte(l + "\n"))
	}
	suffix := "-renew-" + hex.EncodeToString(h.Sum(nil))[:8]
	if len(base)+len(suffix) > maxNameLength {
		base = strings.TrimRight(base[:maxNameLength-len(suffix)], "-.")
	}
	return base + suffix
}
