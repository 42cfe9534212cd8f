package restart

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// wavesAnnotation is the memory of a roll-out in waves, on each target
// object of the bundle: one line per bundle writing the object,
// "<bundle> started=<RFC 3339> rolled=<k>/<waves> at=<RFC 3339>", sorted.
// started is the render that changed the trust, k the number of waves
// rolled so far, at the render that rolled the latest of them. It is
// memory, never trust: it can only delay a roll and hold previous CAs in
// the data, and only within the schedule the policy allows.
const wavesAnnotation = "rotate-certs.dev/waves"

// maxRecordBytes caps the waves annotation read (as every memory
// annotation: 1 MiB).
const maxRecordBytes = 1 << 20

// series is one trust change rolled out in waves.
type series struct {
	// Started is the render that changed the trust: wave j is due at
	// Started + j*interval.
	Started time.Time
	// Rolled is how many waves have rolled (the first Rolled waves).
	Rolled int
	// Waves is how many waves the change is spread over.
	Waves int
	// At is the render that rolled the latest wave.
	At time.Time
}

// due returns when wave j is due.
func (s series) due(j int, interval time.Duration) time.Time {
	return s.Started.Add(time.Duration(j) * interval)
}

// dueCount returns how many waves are due at now.
func (s series) dueCount(now time.Time, interval time.Duration) int {
	n := 0
	for j := 0; j < s.Waves && !s.due(j, interval).After(now); j++ {
		n++
	}
	return n
}

// holdsUntil returns when the series stops holding previous CAs: one
// interval after the last wave rolled, that wave's own time to roll out.
// It is never earlier than the schedule allows: one interval after the
// last wave is due.
func (s series) holdsUntil(interval time.Duration) time.Time {
	end := s.due(s.Waves-1, interval)
	if s.Rolled == s.Waves && s.At.After(end) {
		end = s.At
	}
	return end.Add(interval)
}

// holding reports whether previous CAs must stay at now: a wave has not
// rolled yet, or the last one rolled less than an interval ago.
func (s series) holding(now time.Time, interval time.Duration) bool {
	return s.Rolled < s.Waves || now.Before(s.At.Add(interval))
}

func (s series) line(bundle string) string {
	return fmt.Sprintf("%s started=%s rolled=%d/%d at=%s", bundle, s.Started.UTC().Format(time.RFC3339),
		s.Rolled, s.Waves, s.At.UTC().Format(time.RFC3339))
}

// recordLimits bound what a record may claim: the schedule the policy
// could have produced, and nothing after now.
type recordLimits struct {
	now      time.Time
	maxWaves int
}

// parseRecord reads the line of bundle in a waves annotation. found is
// false when the object has no line for the bundle; a line that does not
// parse or claims more than the limits allow is an error, and the record
// is then ignored.
func parseRecord(text, bundle string, lim recordLimits) (s series, found bool, err error) {
	if len(text) > maxRecordBytes {
		return s, true, fmt.Errorf("is %d bytes, more than the %d bytes a memory annotation may hold", len(text), maxRecordBytes)
	}
	for _, line := range strings.Split(text, "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || fields[0] != bundle {
			continue
		}
		if found {
			return s, true, fmt.Errorf("has two lines for bundle %q", bundle)
		}
		found = true
		if s, err = parseLine(fields, lim); err != nil {
			return s, true, fmt.Errorf("line %s: %w", kube.Quote(line), err)
		}
	}
	return s, found, nil
}

func parseLine(fields []string, lim recordLimits) (series, error) {
	var s series
	want := "want \"<bundle> started=<RFC 3339> rolled=<k>/<waves> at=<RFC 3339>\""
	if len(fields) != 4 {
		return s, fmt.Errorf("%s", want)
	}
	started, ok1 := strings.CutPrefix(fields[1], "started=")
	rolled, ok2 := strings.CutPrefix(fields[2], "rolled=")
	at, ok3 := strings.CutPrefix(fields[3], "at=")
	k, w, ok4 := strings.Cut(rolled, "/")
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return s, fmt.Errorf("%s", want)
	}
	var err error
	if s.Started, err = time.Parse(time.RFC3339, started); err != nil {
		return s, fmt.Errorf("started is not an RFC 3339 time")
	}
	if s.At, err = time.Parse(time.RFC3339, at); err != nil {
		return s, fmt.Errorf("at is not an RFC 3339 time")
	}
	if s.Rolled, err = strconv.Atoi(k); err != nil {
		return s, fmt.Errorf("rolled is not <k>/<waves>")
	}
	if s.Waves, err = strconv.Atoi(w); err != nil {
		return s, fmt.Errorf("rolled is not <k>/<waves>")
	}
	s.Started, s.At = s.Started.UTC(), s.At.UTC()
	switch {
	case s.Started.After(lim.now) || s.At.After(lim.now):
		return s, fmt.Errorf("is in the future (now is %s)", lim.now.Format(time.RFC3339))
	case s.At.Before(s.Started):
		return s, fmt.Errorf("at is before started")
	case s.Waves < 2 || s.Waves > lim.maxWaves:
		return s, fmt.Errorf("%d waves: the policy allows 2 to %d for this input", s.Waves, lim.maxWaves)
	case s.Rolled < 1 || s.Rolled > s.Waves:
		return s, fmt.Errorf("%d waves rolled of %d", s.Rolled, s.Waves)
	}
	return s, nil
}

// formatRecord returns the waves annotation of an object after bundle's
// line is set to s (or removed, when s is nil), keeping the other
// bundles' valid-looking lines, sorted.
func formatRecord(text, bundle string, s *series) string {
	var lines []string
	for _, line := range strings.Split(text, "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || fields[0] == bundle {
			continue
		}
		lines = append(lines, strings.Join(fields, " "))
	}
	if s != nil {
		lines = append(lines, s.line(bundle))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// mostWaves is the most waves a bundle's policy can spread one trust change
// over, given the number of workloads in the input: a record that claims
// more is not one a render wrote.
func mostWaves(w policy.Waves, workloads int) int {
	if w.Size.Percent > 0 {
		return (100 + w.Size.Percent - 1) / w.Size.Percent
	}
	return max(w.Size.MaxWaves(workloads), 2)
}

// CountWorkloads counts the workloads of items that the restart rules can
// roll (the rolled kinds of policy.WorkloadKinds): the n mostWaves takes.
func CountWorkloads(items []*yaml.RNode) int { return countWorkloads(policy.WorkloadKinds(), items) }

// countWorkloads is CountWorkloads by the workload-kind table kinds: tests
// add a kind with it.
func countWorkloads(kinds policy.WorkloadTable, items []*yaml.RNode) int {
	n := 0
	for _, it := range items {
		if k, ok := workloadOf(kinds, it); ok && k.Role == policy.RoleRolled && !kube.IsLocalConfig(it) {
			n++
		}
	}
	return n
}

// PreviousHeldUntil says whether the target object node of bundle b must keep its
// previous CAs at now because a roll-out in waves is not done, and until
// when at least. A record that cannot be read, or claims a schedule the
// policy could not produce (workloads is CountWorkloads of the input), does
// not hold: it is memory, and only a render that rolled waves wrote it.
// The restart rules report such a record.
func PreviousHeldUntil(b *policy.TrustBundle, node *yaml.RNode, now time.Time, workloads int) (time.Time, bool) {
	w := b.Restart.Waves
	if w == nil || node == nil {
		return time.Time{}, false
	}
	text, ok := node.GetAnnotations(wavesAnnotation)[wavesAnnotation]
	if !ok {
		return time.Time{}, false
	}
	s, found, err := parseRecord(text, b.Name, recordLimits{now: now, maxWaves: mostWaves(*w, workloads)})
	interval := w.IntervalOrDefault()
	if !found || err != nil || !s.holding(now, interval) {
		return time.Time{}, false
	}
	return s.holdsUntil(interval), true
}

// orderKey is where a workload stands in the order of the waves: by
// namespace, then by a hash of kind and name, so that one team's
// workloads (named alike) spread over the waves instead of rolling
// together.
func orderKey(ref kube.Ref) string {
	sum := sha256.Sum256([]byte(ref.Kind + "/" + ref.Name))
	return ref.Namespace + "\x00" + hex.EncodeToString(sum[:])
}
