package cluster

import (
	"encoding/base64"
	"maps"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/pki"
	"github.com/rotate-certs/rotate-certs/internal/controlplane"
)

// TestWavesRollout is the measured roll-out of examples/waves on a real
// API server with the Deployment controller running: the package is
// rendered once a day with a moving --now, as a CI job would render and
// commit it, and each render is applied. Each render rolls one wave:
// exactly its workloads get one new ReplicaSet each, every other workload
// none; a second render at the same --now changes no object; over the four
// waves every workload rolls exactly once; and the old CA stays in every
// target until the last wave has had its interval.
func TestWavesRollout(t *testing.T) {
	controlplane.RequireBinaries(t)
	cp := startControlPlane(t)
	dir := filepath.Join(stage(t, "waves"), "examples", "waves")
	before := clusterResources(t, dir)
	apply(t, cp, before, fieldManager)
	prev := snapshot(t, cp, before)
	workloads := slices.Sorted(maps.Keys(prev.revisions))
	if len(workloads) != 12 {
		t.Fatalf("examples/waves has %d workloads %v, want 12", len(workloads), workloads)
	}
	render := func(now time.Time) string {
		t.Helper()
		mustCommand(t, dir, nil, "", binary, "render", ".", "--policy", "rotation-policy.yaml", "--now", now.Format(time.RFC3339))
		stream := clusterResources(t, dir)
		apply(t, cp, stream, fieldManager)
		return stream
	}
	day0 := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	rolled := map[string]int{}
	for wave := range 4 {
		now := day0.Add(time.Duration(wave) * 24 * time.Hour)
		stream := render(now)
		cur := snapshot(t, cp, stream)
		var moved []string
		for _, w := range workloads {
			added, kept := newRevisions(prev, cur, w)
			if !kept {
				t.Errorf("wave %d: %s lost a ReplicaSet: %v -> %v", wave+1, w, prev.revisions[w], cur.revisions[w])
			}
			hashMoved := prev.objects[w].Spec.Template.Metadata.Annotations["rotate-certs.dev/trust-hash"] !=
				cur.objects[w].Spec.Template.Metadata.Annotations["rotate-certs.dev/trust-hash"]
			switch {
			case hashMoved && len(added) != 1:
				t.Errorf("wave %d: %s rolled with %d new ReplicaSets %v, want 1", wave+1, w, len(added), added)
			case !hashMoved && len(added) != 0:
				t.Errorf("wave %d: %s is not in the wave and got %d new ReplicaSets %v", wave+1, w, len(added), added)
			}
			if hashMoved {
				moved = append(moved, w)
				rolled[w]++
			}
		}
		if len(moved) != 3 {
			t.Errorf("wave %d rolled %v, want 3 workloads (25%% of 12)", wave+1, moved)
		}
		requireTrusts(t, cur, 2, "wave %d: the old CA stays while waves are pending", wave+1)

		// The same render again: nothing changes in the cluster.
		again := render(now.Add(12 * time.Hour))
		requireUnchanged(t, "a render before the next wave is due", cur, snapshot(t, cp, again), nil)
		prev = cur
	}
	for _, w := range workloads {
		if rolled[w] != 1 {
			t.Errorf("%s rolled %d times over the waves, want 1", w, rolled[w])
		}
	}
	// An interval after the last wave the hold ends and the record goes;
	// the old CA stays (maxPrevious), nothing rolls.
	stream := render(day0.Add(4 * 24 * time.Hour))
	last := snapshot(t, cp, stream)
	for _, w := range workloads {
		if added, _ := newRevisions(prev, last, w); len(added) != 0 {
			t.Errorf("after the last wave %s rolled again: %v", w, added)
		}
	}
	requireTrusts(t, last, 2, "the old CA stays by maxPrevious")
}

// requireTrusts checks that every live platform-trust Secret holds n
// certificates.
func requireTrusts(t *testing.T, s state, n int, format string, args ...any) {
	t.Helper()
	found := 0
	for _, o := range s.objects {
		if o.Kind != "Secret" || o.Metadata.Name != "platform-trust" {
			continue
		}
		found++
		v, _ := o.Data["ca.crt"].(string)
		pemBytes, err := base64.StdEncoding.DecodeString(v)
		if err != nil {
			t.Fatalf("%s: %v", o.key(), err)
		}
		d, err := pki.DecodePEM(pemBytes)
		if err != nil {
			t.Fatalf("%s: %v", o.key(), err)
		}
		if len(d.Certificates) != n {
			t.Errorf("%s holds %d certificates, want %d: "+format, append([]any{o.key(), len(d.Certificates), n}, args...)...)
		}
	}
	if found != 3 {
		t.Errorf("%d platform-trust Secrets in the cluster, want 3", found)
	}
}
