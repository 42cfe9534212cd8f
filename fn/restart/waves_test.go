package restart

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

var day0 = time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)

func days(n int) time.Time { return day0.Add(time.Duration(n) * 24 * time.Hour) }

func TestRecordParse(t *testing.T) {
	lim := recordLimits{now: days(10), maxWaves: 10}
	ok := "gw started=2026-11-22T00:00:00Z rolled=3/10 at=2026-11-24T00:00:00Z"
	s, found, err := parseRecord("other started=x\n"+ok+"\n", "gw", lim)
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, series{Started: day0, Rolled: 3, Waves: 10, At: days(2)}, s)
	assert.Equal(t, ok, s.line("gw"), "a record reads back as written")

	_, found, err = parseRecord("other started=2026-11-22T00:00:00Z rolled=1/2 at=2026-11-22T00:00:00Z", "gw", lim)
	require.NoError(t, err)
	assert.False(t, found, "another bundle's line")

	for _, tc := range []struct{ name, text, msg string }{
		{"fields", "gw started=2026-11-22T00:00:00Z rolled=3/10", "want"},
		{"time", "gw started=yesterday rolled=3/10 at=2026-11-24T00:00:00Z", "started is not an RFC 3339 time"},
		{"rolled", "gw started=2026-11-22T00:00:00Z rolled=three at=2026-11-24T00:00:00Z", "want"},
		{"future start", "gw started=2027-01-01T00:00:00Z rolled=1/10 at=2027-01-01T00:00:00Z", "in the future"},
		{"future roll", "gw started=2026-11-22T00:00:00Z rolled=1/10 at=2027-01-01T00:00:00Z", "in the future"},
		{"at before started", "gw started=2026-11-24T00:00:00Z rolled=1/10 at=2026-11-22T00:00:00Z", "at is before started"},
		{"too many waves", "gw started=2026-11-22T00:00:00Z rolled=1/500 at=2026-11-22T00:00:00Z", "the policy allows 2 to 10"},
		{"one wave", "gw started=2026-11-22T00:00:00Z rolled=1/1 at=2026-11-22T00:00:00Z", "the policy allows 2 to 10"},
		{"none rolled", "gw started=2026-11-22T00:00:00Z rolled=0/5 at=2026-11-22T00:00:00Z", "0 waves rolled of 5"},
		{"more rolled than waves", "gw started=2026-11-22T00:00:00Z rolled=6/5 at=2026-11-22T00:00:00Z", "6 waves rolled of 5"},
		{"two lines", ok + "\n" + ok, "two lines"},
		{"huge", strings.Repeat("x", maxRecordBytes+1), "more than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, found, err := parseRecord(tc.text, "gw", lim)
			require.Error(t, err)
			assert.True(t, found)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
}

func TestFormatRecord(t *testing.T) {
	s := series{Started: day0, Rolled: 1, Waves: 4, At: day0}
	text := formatRecord("zeta started=2026-11-20T00:00:00Z rolled=1/2 at=2026-11-20T00:00:00Z\ngw   garbage", "gw", &s)
	assert.Equal(t, "gw started=2026-11-22T00:00:00Z rolled=1/4 at=2026-11-22T00:00:00Z\nzeta started=2026-11-20T00:00:00Z rolled=1/2 at=2026-11-20T00:00:00Z", text,
		"the bundle's line is replaced, the others kept, sorted")
	assert.Equal(t, "zeta started=2026-11-20T00:00:00Z rolled=1/2 at=2026-11-20T00:00:00Z", formatRecord(text, "gw", nil))
	assert.Empty(t, formatRecord(s.line("gw"), "gw", nil))
}

func TestSeriesSchedule(t *testing.T) {
	day := 24 * time.Hour
	s := series{Started: day0, Rolled: 1, Waves: 4, At: day0}
	assert.Equal(t, days(2), s.due(1, 2*day))
	assert.Equal(t, 1, s.dueCount(days(1), 2*day))
	assert.Equal(t, 2, s.dueCount(days(2), 2*day))
	assert.Equal(t, 4, s.dueCount(days(100), 2*day))
	assert.True(t, s.holding(days(100), 2*day), "a wave that has not rolled holds, however late")
	assert.Equal(t, days(8), s.holdsUntil(2*day), "one interval after the last wave is due")

	done := series{Started: day0, Rolled: 4, Waves: 4, At: days(100)}
	assert.True(t, done.holding(days(101), 2*day), "the last wave rolled a day ago: it is still rolling out")
	assert.False(t, done.holding(days(102), 2*day))
	assert.Equal(t, days(102), done.holdsUntil(2*day))
}

func TestMostWaves(t *testing.T) {
	assert.Equal(t, 10, mostWaves(policy.Waves{Size: policy.WaveSize{Percent: 10}}, 3))
	assert.Equal(t, 4, mostWaves(policy.Waves{Size: policy.WaveSize{Percent: 30}}, 1000))
	assert.Equal(t, 5, mostWaves(policy.Waves{Size: policy.WaveSize{Count: 20}}, 100))
	assert.Equal(t, 2, mostWaves(policy.Waves{Size: policy.WaveSize{Count: 20}}, 3))
}

func TestHoldReadsOnlyWhatARenderCouldWrite(t *testing.T) {
	b := &policy.TrustBundle{Name: "gw", Restart: policy.Restart{Waves: &policy.Waves{Size: policy.WaveSize{Count: 1}, Interval: &policy.Duration{Duration: 24 * time.Hour}}}}
	node := func(record string) *yaml.RNode {
		n := yaml.MustParse("apiVersion: v1\nkind: Secret\nmetadata: {name: trust, namespace: a}\n")
		if record != "" {
			_, err := kube.SetAnnotation(n, wavesAnnotation, record)
			require.NoError(t, err)
		}
		return n
	}
	pending := "gw started=2026-11-22T00:00:00Z rolled=1/3 at=2026-11-22T00:00:00Z"
	until, ok := PreviousHeldUntil(b, node(pending), days(5), 3)
	assert.True(t, ok, "a wave has not rolled")
	assert.Equal(t, days(3), until)
	_, ok = PreviousHeldUntil(b, node(pending), days(5), 2)
	assert.False(t, ok, "3 waves of 1 workload cannot come from an input of 2 workloads")
	_, ok = PreviousHeldUntil(b, node("gw started=2026-11-22T00:00:00Z rolled=3/3 at=2026-11-23T00:00:00Z"), days(5), 3)
	assert.False(t, ok, "every wave rolled more than an interval ago")
	_, ok = PreviousHeldUntil(b, node("gw started=2026-11-22T00:00:00Z rolled=3/3 at=2026-11-23T00:00:00Z"), days(1).Add(12*time.Hour), 3)
	assert.True(t, ok, "the last wave rolled less than an interval ago")
	_, ok = PreviousHeldUntil(b, node("gw started=2030-01-01T00:00:00Z rolled=1/3 at=2030-01-01T00:00:00Z"), days(5), 3)
	assert.False(t, ok, "a record from the future holds nothing")
	_, ok = PreviousHeldUntil(b, node(""), days(5), 3)
	assert.False(t, ok)
	off := &policy.TrustBundle{Name: "gw"}
	_, ok = PreviousHeldUntil(off, node(pending), days(5), 3)
	assert.False(t, ok, "without restart.waves no record holds")
}

// rollout is a bundle's roll over renders: n Deployments reading the
// target through env, the bundle's target with its waves record.
type rollout struct {
	t      *testing.T
	items  []*yaml.RNode
	target *yaml.RNode
	b      Bundle
}

func newRollout(t *testing.T, n int, size policy.WaveSize) *rollout {
	r := &rollout{t: t, target: mustParse(t, "apiVersion: v1\nkind: Secret\nmetadata: {name: trust, namespace: a}\n")}
	for i := range n {
		r.items = append(r.items, mustParse(t, deployment("a", fmt.Sprintf("app-%02d", i), "", readsTrustEnv)))
	}
	r.items = append(r.items, r.target)
	r.b = Bundle{Name: "gw", Field: "spec.trustBundles[0]", Restart: policy.Restart{Auto: yes(),
		Waves: &policy.Waves{Size: size, Interval: &policy.Duration{Duration: 24 * time.Hour}}}}
	return r
}

// render runs the restart rules at now with the target's hash; changed
// says the render changed the trust. It returns the workloads whose
// trust-hash moved.
func (r *rollout) render(now time.Time, hash string, changed bool) []string {
	r.t.Helper()
	before := map[string]string{}
	for _, it := range r.items[:len(r.items)-1] {
		before[it.GetName()] = hashOf(r.t, it)
	}
	r.b.Targets = []Target{{Key: kube.Key{Kind: "Secret", Namespace: "a", Name: "trust"}, Hash: hash, Changed: changed, Node: r.target}}
	out := Run([]Bundle{r.b}, Env{Items: r.items, Now: now})
	for _, res := range out.Results {
		require.NotEqual(r.t, "error", string(res.Severity), res.Message)
	}
	var moved []string
	for _, it := range r.items[:len(r.items)-1] {
		if hashOf(r.t, it) != before[it.GetName()] {
			moved = append(moved, it.GetName())
		}
	}
	return moved
}

func (r *rollout) record() string {
	return r.target.GetAnnotations(wavesAnnotation)[wavesAnnotation]
}

func TestWavesRollOverRenders(t *testing.T) {
	r := newRollout(t, 10, policy.WaveSize{Percent: 30})
	rolled := map[string]int{}
	count := func(names []string) {
		for _, n := range names {
			rolled[n]++
		}
	}
	first := r.render(days(0), "sha256:01", true)
	require.Len(t, first, 3, "wave 1 of 4: 30% of 10, rounded up")
	count(first)
	assert.Equal(t, "gw started=2026-11-22T00:00:00Z rolled=1/4 at=2026-11-22T00:00:00Z", r.record())

	assert.Empty(t, r.render(days(0).Add(12*time.Hour), "sha256:01", false), "a re-render before the next wave is due changes nothing")
	assert.Equal(t, "gw started=2026-11-22T00:00:00Z rolled=1/4 at=2026-11-22T00:00:00Z", r.record())

	second := r.render(days(1), "sha256:01", false)
	assert.Len(t, second, 2, "wave 2")
	assert.NotContains(t, second, first[0])
	count(second)
	assert.Empty(t, r.render(days(1), "sha256:01", false), "the same render again changes nothing")

	rest := r.render(days(30), "sha256:01", false)
	assert.Len(t, rest, 5, "a render long after rolls every wave that is due, once")
	count(rest)
	assert.Equal(t, "gw started=2026-11-22T00:00:00Z rolled=4/4 at=2026-12-22T00:00:00Z", r.record(), "the last wave rolled: the record holds one more interval")
	assert.Empty(t, r.render(days(30), "sha256:01", false))
	assert.Empty(t, r.render(days(31), "sha256:01", false))
	assert.Empty(t, r.record(), "an interval after the last wave the record goes")
	assert.Len(t, rolled, 10)
	for name, n := range rolled {
		assert.Equal(t, 1, n, "%s rolled once per trust change", name)
	}

	// The next change starts a new series.
	assert.Len(t, r.render(days(40), "sha256:02", true), 3)
}

// The order of the waves is by namespace, then a hash of kind and name:
// never one team's alphabetical block. A workload named in
// restart.workloads rolls in the first wave.
func TestWavesOrder(t *testing.T) {
	r := newRollout(t, 10, policy.WaveSize{Count: 5})
	r.b.Restart.Workloads = []policy.WorkloadRef{{Kind: "Deployment", Namespace: "a", Name: "app-09"}}
	first := r.render(days(0), "sha256:01", true)
	assert.Contains(t, first, "app-09", "named in restart.workloads: first wave")
	assert.NotEqual(t, []string{"app-00", "app-01", "app-02", "app-03", "app-04"}, first, "not alphabetical")
	again := newRollout(t, 10, policy.WaveSize{Count: 5})
	again.b.Restart.Workloads = r.b.Restart.Workloads
	assert.Equal(t, first, again.render(days(0), "sha256:01", true), "deterministic")
}

func TestWavesNotNeededForFewWorkloads(t *testing.T) {
	r := newRollout(t, 3, policy.WaveSize{Count: 5})
	assert.Len(t, r.render(days(0), "sha256:01", true), 3, "one wave: everything rolls now")
	assert.Empty(t, r.record(), "no series, no record")
}

func TestWavesForgedRecord(t *testing.T) {
	r := newRollout(t, 4, policy.WaveSize{Count: 1})
	_, err := kube.SetAnnotation(r.target, wavesAnnotation, "gw started=2030-01-01T00:00:00Z rolled=1/4 at=2030-01-01T00:00:00Z")
	require.NoError(t, err)
	for _, it := range r.items[:4] {
		_, err := (&Workload{template: kube.At(it, "spec", "template")}).setTrustHash("sha256:stale")
		require.NoError(t, err)
	}
	r.b.Targets = []Target{{Key: kube.Key{Kind: "Secret", Namespace: "a", Name: "trust"}, Hash: "sha256:01", Node: r.target}}
	out := Run([]Bundle{r.b}, Env{Items: r.items, Now: days(0)})
	var warned bool
	for _, res := range out.Results {
		if strings.Contains(res.Message, "is in the future") {
			warned = true
			assert.Equal(t, "warning", string(res.Severity))
			assert.Contains(t, res.Message, wavesAnnotation)
		}
	}
	assert.True(t, warned, "a record from the future is a warning naming it")
	for _, it := range r.items[:4] {
		assert.NotEqual(t, "sha256:stale", hashOf(t, it), "an ignored record delays nothing")
	}
	assert.Empty(t, r.record(), "the ignored record is not carried on")
}
