package policy

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/kube"
)

// Meshes whose injection rules restart.mesh applies.
const (
	MeshLinkerd = "linkerd"
	MeshIstio   = "istio"
)

// Meshes lists the values of restart.mesh, in the order messages name them.
var Meshes = []string{MeshLinkerd, MeshIstio}

// defaultWaveInterval is restart.waves.interval when unset: a day between
// two waves.
const defaultWaveInterval = 24 * time.Hour

// Selection picks workloads by their Namespace object in the input and by
// their pod template (restart.injected, restart.exclude). Every field that
// is set must match; at least one must be set.
type Selection struct {
	// NamespaceSelector is a label selector on the workload's Namespace
	// object in the input.
	NamespaceSelector *kube.Selector `json:"namespaceSelector,omitempty"`
	// NamespaceAnnotations are exact key/value pairs on that Namespace.
	NamespaceAnnotations map[string]string `json:"namespaceAnnotations,omitempty"`
	// PodSelector is a label selector on the pod template's labels.
	PodSelector *kube.Selector `json:"podSelector,omitempty"`
	// PodAnnotations are exact key/value pairs on the pod template.
	PodAnnotations map[string]string `json:"podAnnotations,omitempty"`
}

// NeedsNamespace reports whether the selection reads the workload's
// Namespace object.
func (s Selection) NeedsNamespace() bool {
	return s.NamespaceSelector != nil || len(s.NamespaceAnnotations) > 0
}

// String describes the selection as messages name it; a part that is not
// plain text (a value pasted from anywhere) is described, not shown.
func (s Selection) String() string {
	var parts []string
	if s.NamespaceSelector != nil {
		parts = append(parts, "namespace labels "+kube.Safe(selectorString(*s.NamespaceSelector)))
	}
	if len(s.NamespaceAnnotations) > 0 {
		parts = append(parts, "namespace annotations "+kube.Safe(pairsString(s.NamespaceAnnotations)))
	}
	if s.PodSelector != nil {
		parts = append(parts, "pod labels "+kube.Safe(selectorString(*s.PodSelector)))
	}
	if len(s.PodAnnotations) > 0 {
		parts = append(parts, "pod annotations "+kube.Safe(pairsString(s.PodAnnotations)))
	}
	return strings.Join(parts, ", ")
}

func selectorString(s kube.Selector) string {
	if s.Empty() {
		return "(any)"
	}
	return s.String()
}

func pairsString(m map[string]string) string {
	return kube.Selector{MatchLabels: m}.String()
}

func (s Selection) validate(path string) FieldErrors {
	var errs FieldErrors
	if s.NamespaceSelector == nil && s.PodSelector == nil && len(s.NamespaceAnnotations) == 0 && len(s.PodAnnotations) == 0 {
		errs.add(path, "selects every workload: set at least one of namespaceSelector, namespaceAnnotations, podSelector, podAnnotations")
	}
	for _, f := range []struct {
		name string
		sel  *kube.Selector
	}{{"namespaceSelector", s.NamespaceSelector}, {"podSelector", s.PodSelector}} {
		if f.sel == nil {
			continue
		}
		if err := f.sel.Validate(); err != nil {
			errs.add(path+"."+f.name, "%v", err)
		}
	}
	for _, f := range []struct {
		name  string
		pairs map[string]string
	}{{"namespaceAnnotations", s.NamespaceAnnotations}, {"podAnnotations", s.PodAnnotations}} {
		for k := range f.pairs {
			if k == "" {
				errs.add(path+"."+f.name, "an annotation key must not be empty")
			}
		}
	}
	return errs
}

// Waves spreads the roll of one trust change over time
// (restart.waves): the first wave rolls at the render that changes the
// trust, each later one once Interval has passed since the previous.
type Waves struct {
	// Size is how many workloads one wave rolls: a count or a percentage
	// of the workloads that roll for the bundle.
	Size WaveSize `json:"size"`
	// Interval is the time between two waves (default 24h).
	Interval *Duration `json:"interval,omitempty"`
}

// WaveSize is a number of workloads ("size: 20") or a percentage of the
// workloads that roll ("size: 10%").
type WaveSize struct {
	// Count is the number of workloads, when not a percentage.
	Count int
	// Percent is the percentage (1-100); zero for a count.
	Percent int
}

// String writes the size as the policy does.
func (s WaveSize) String() string {
	if s.Percent > 0 {
		return strconv.Itoa(s.Percent) + "%"
	}
	return strconv.Itoa(s.Count)
}

// of returns how many of n workloads one wave rolls: the count, or the
// percentage of n rounded up; at least one.
func (s WaveSize) of(n int) int {
	size := s.Count
	if s.Percent > 0 {
		size = (n*s.Percent + 99) / 100
	}
	return max(size, 1)
}

// MaxWaves returns the most waves a trust change that rolls n workloads
// can take under s: the waves of a percentage never exceed 100/percent,
// those of a count never exceed n/count.
func (s WaveSize) MaxWaves(n int) int {
	if n <= 0 {
		return 1
	}
	return (n + s.of(n) - 1) / s.of(n)
}

// checkJSON accepts a whole number or a string "<n>%" (strict decoding).
func (WaveSize) checkJSON(v any) error {
	_, err := parseWaveSize(v)
	return err
}

// UnmarshalJSON reads a number or a percentage string.
func (s *WaveSize) UnmarshalJSON(b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	if v == nil {
		return nil // absent: validate says it is required
	}
	parsed, err := parseWaveSize(v)
	if err != nil {
		return err
	}
	*s = parsed
	return nil
}

// MarshalJSON writes the size as the policy does.
func (s WaveSize) MarshalJSON() ([]byte, error) {
	if s.Percent > 0 {
		return []byte(strconv.Quote(s.String())), nil
	}
	return []byte(strconv.Itoa(s.Count)), nil
}

const waveSizeWant = "want a number of workloads such as 20, or a percentage such as \"10%\""

func parseWaveSize(v any) (WaveSize, error) {
	switch x := v.(type) {
	case float64:
		if x != math.Trunc(x) || x < 1 || x > math.MaxInt32 {
			return WaveSize{}, fmt.Errorf("%v is not a whole number of workloads of at least 1: %s", x, waveSizeWant)
		}
		return WaveSize{Count: int(x)}, nil
	case string:
		p, ok := strings.CutSuffix(x, "%")
		n, err := strconv.Atoi(p)
		if !ok || err != nil {
			return WaveSize{}, fmt.Errorf("%s is not a size: %s", kube.Quote(x), waveSizeWant)
		}
		if n < 1 || n > 100 {
			return WaveSize{}, fmt.Errorf("%s is out of range: a percentage from 1%% to 100%%", kube.Quote(x))
		}
		return WaveSize{Percent: n}, nil
	case nil:
		return WaveSize{}, fmt.Errorf("required: %s", waveSizeWant)
	default:
		return WaveSize{}, fmt.Errorf("must be a number or a string, got %s: %s", jsonKind(v), waveSizeWant)
	}
}

// IntervalOrDefault returns the interval between two waves.
func (w Waves) IntervalOrDefault() time.Duration {
	if w.Interval == nil {
		return defaultWaveInterval
	}
	return w.Interval.Duration
}

func (w *Waves) validate(path string) FieldErrors {
	var errs FieldErrors
	if w.Size.Count == 0 && w.Size.Percent == 0 {
		errs.add(path+".size", "required: %s", waveSizeWant)
	}
	if w.Interval != nil && w.Interval.Duration <= 0 {
		errs.add(path+".interval", "must be positive")
	}
	return errs
}
