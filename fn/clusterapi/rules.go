package clusterapi

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/kube"
)

// Limits that Cluster API, kubeadm and etcdadm apply to certificate expiry
// windows.
const (
	// minExpiryDays is the smallest certificatesExpiryDays Cluster API
	// accepts (KubeadmControlPlane webhook; Minimum in the v1beta2 schema).
	minExpiryDays = 7
	// defaultValidityDays is the validity of the leaf certificates kubeadm
	// and etcdadm issue when nothing else is configured.
	defaultValidityDays = 365
	// maxNameLength is the longest Kubernetes object name (a DNS
	// subdomain): a template copy's name never exceeds it.
	maxNameLength = 253
)

// checkExpiryDays applies the KubeadmControlPlane rule to an expiry window
// of days: at least minExpiryDays, and below the certificate validity -
// validityDays when the object sets certificateValidityPeriodDays
// (validitySet), else defaultValidityDays. A window as long as the validity
// would roll machines as soon as they are created.
func checkExpiryDays(days, validityDays int, validitySet bool) error {
	if validitySet {
		return checkWindow(days, validityDays, fmt.Sprintf("certificateValidityPeriodDays (%d)", validityDays))
	}
	return checkWindow(days, defaultValidityDays, fmt.Sprintf("%d, the default certificate validity (certificateValidityPeriodDays is not set)", defaultValidityDays))
}

// checkEtcdadmExpiryDays applies the same rule to the EKS Anywhere design's
// EtcdadmCluster field: etcdadm issues the etcd certificates for
// defaultValidityDays, and an EtcdadmCluster has no setting to change that.
func checkEtcdadmExpiryDays(days int) error {
	return checkWindow(days, defaultValidityDays, fmt.Sprintf("%d, the validity of the etcd certificates etcdadm issues (an EtcdadmCluster has no certificateValidityPeriodDays)", defaultValidityDays))
}

// checkWindow checks that days is at least minExpiryDays and below a
// validity of validityDays, which limit describes in messages.
func checkWindow(days, validityDays int, limit string) error {
	if days < minExpiryDays {
		return fmt.Errorf("%d is below %d, the minimum Cluster API accepts", days, minExpiryDays)
	}
	if days >= validityDays {
		return fmt.Errorf("%d must be less than %s: machines would be rolled as soon as they are created", days, limit)
	}
	return nil
}

// evidence is one statement, found in the input, of when the certificates
// of a machine expire.
type evidence struct {
	// Machine is the name of the machine the statement is about.
	Machine string
	// Source says where the statement was read, such as
	// "Machine eksa-system/etcd-abc metadata.annotations[...]".
	Source string
	// Value is the statement as written (an RFC 3339 date, or
	// "expiresInDays=N").
	Value string
	// Expiry is when the certificates expire.
	Expiry time.Time
	// InDays is the day count of a relative statement (EKS Anywhere's
	// expiresInDays, counted from the render's now); nil for a date.
	InDays *int
}

// expiryIn returns the expiry of a certificate that expires days after now,
// the reading of a relative statement such as EKS Anywhere's expiresInDays.
func expiryIn(days int, now time.Time) time.Time {
	return now.Add(time.Duration(days) * 24 * time.Hour)
}

// isDue reports whether certificates expiring at expiry are inside a window of
// days at now, as the KubeadmControlPlane controller decides it: a machine
// is rolled when now + days is after its expiry.
func isDue(expiry, now time.Time, days int) bool {
	return now.Add(time.Duration(days) * 24 * time.Hour).After(expiry)
}

// plural returns "1 day" or "n days".
func plural(n int) string {
	if n == 1 || n == -1 {
		return fmt.Sprintf("%d day", n)
	}
	return fmt.Sprintf("%d days", n)
}

// leftText says how long certificates expiring at expiry have left at now,
// as "18 days left", "1 day left" or "less than a day left"; for an expiry
// that has passed, "expired less than a day ago", "1 day ago", "3 days
// ago" - whole days, rounded down, so that an hour ago is never "1 days".
func leftText(expiry, now time.Time) string {
	if d := expiry.Sub(now); d > 0 {
		if d < 24*time.Hour {
			return "less than a day left"
		}
		return plural(int(d/(24*time.Hour))) + " left"
	}
	if ago := now.Sub(expiry); ago >= 24*time.Hour {
		return plural(int(ago/(24*time.Hour))) + " ago"
	}
	return "less than a day ago"
}

// etcdRoll is the decision about the etcd machines of one etcd cluster.
type etcdRoll struct {
	// Due is the evidence inside the window, earliest expiry first.
	Due []evidence
	// Expired is the evidence of certificates that have already expired.
	Expired []evidence
	// Machines are the etcd machines the evidence names, sorted and
	// distinct: the machines a new roll replaces. The template copy
	// records them (replacesAnnotation).
	Machines []string
	// InProgress is set when the template in place is a copy made to
	// replace every due machine: etcdadm-controller is replacing them (or
	// will), so no new copy is made.
	InProgress bool
	// Name is the name of the new template copy; empty when InProgress.
	Name string
}

// decideRoll decides whether an etcd cluster whose infrastructure template is
// current must roll, given all the evidence about its machines.
// replacing lists the machines the template in place was copied to replace
// (replacesAnnotation); it is nil when the template in place is not such a
// copy. taken reports a name that the new copy cannot have (an object of
// that name exists and is not this very copy); nil means none is taken.
//
// Nothing rolls unless some evidence is inside the window of days. A due
// machine the copy in place was made to replace is being replaced already:
// etcdadm-controller replaces every machine not cloned from the current
// template, and a second template change would replace the new machines
// too. So while every due machine is in replacing, the roll is in progress
// and nothing changes. Otherwise the new copy is named by nextName from the
// template in place (skipping taken names): the name does not depend on
// dates or day counts, so time passing and a refreshed dump of the same
// machines (EKS Anywhere's expiresInDays counts down every day) keep it,
// and a year later, when the replacement machines are due, the copy in
// place gives the next number.
func decideRoll(current string, evidence []evidence, replacing []string, now time.Time, days int, taken func(string) bool) (etcdRoll, bool) {
	var r etcdRoll
	seen := map[string]bool{}
	for _, e := range evidence {
		if !seen[e.Machine] {
			seen[e.Machine] = true
			r.Machines = append(r.Machines, e.Machine)
		}
		if isDue(e.Expiry, now, days) {
			r.Due = append(r.Due, e)
			if !now.Before(e.Expiry) {
				r.Expired = append(r.Expired, e)
			}
		}
	}
	if len(r.Due) == 0 {
		return etcdRoll{}, false
	}
	sort.Strings(r.Machines)
	sort.SliceStable(r.Due, func(i, j int) bool { return r.Due[i].Expiry.Before(r.Due[j].Expiry) })
	if replacing != nil {
		covered := true
		for _, e := range r.Due {
			covered = covered && slices.Contains(replacing, e.Machine)
		}
		if covered {
			r.InProgress = true
			return r, true
		}
	}
	r.Name = nextName(current)
	for taken != nil && taken(r.Name) {
		r.Name = nextName(r.Name)
	}
	return r, true
}

// nextName returns the name of the template copy that replaces a template
// named name, as EKS Anywhere's own controller names the next version of a
// machine template: a trailing "-<number>" is incremented ("test-etcd-1" ->
// "test-etcd-2", "prod-etcd-template-1700000000000" -> "...0001"), and a
// name without one gets "-1" ("etcd01" -> "etcd01-1"). EKS Anywhere keeps
// the name it finds in the cluster and increments it the same way (the
// name must match "(.*?)(-)(\d+)$"), so every name this returns is one it
// can follow. A number too large for an int64, which EKS Anywhere cannot
// increment, counts as no number. The result fits in maxNameLength: the
// part before the number is shortened (and trimmed of a trailing '-' or '.')
// when needed.
func nextName(name string) string {
	prefix, next := name, "1"
	// Digits only, as \d+ (ParseInt would take a sign); "" fails to parse.
	if i := strings.LastIndexByte(name, '-'); i >= 0 && strings.Trim(name[i+1:], "0123456789") == "" {
		if n, err := strconv.ParseInt(name[i+1:], 10, 64); err == nil && n < math.MaxInt64 {
			prefix, next = name[:i], strconv.FormatInt(n+1, 10)
		}
	}
	suffix := "-" + next
	if len(prefix)+len(suffix) > maxNameLength {
		prefix = strings.TrimRight(prefix[:maxNameLength-len(suffix)], "-.")
	}
	return prefix + suffix
}

// formatMachines writes a list of machine names as replacesAnnotation holds
// it: sorted, comma-separated.
func formatMachines(machines []string) string {
	names := slices.Clone(machines)
	sort.Strings(names)
	return strings.Join(slices.Compact(names), ",")
}

// parseMachines reads replacesAnnotation: comma-separated machine names,
// blanks ignored. It never returns nil, so that a copy with an empty or
// missing list reads as a copy that replaces no machine.
func parseMachines(s string) []string {
	out := []string{}
	for _, m := range strings.Split(s, ",") {
		// What is not a machine name names no machine (and is not
		// repeated in messages: the annotation may hold anything).
		if m = strings.TrimSpace(m); kube.ValidObjectName(m) {
			out = append(out, m)
		}
	}
	return out
}
