package restart

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"github.com/rotate-certs/rotate-certs/internal/synth"
	"sigs.k8s.io/kustomize/kyaml/kio"
)

// BenchmarkApply is consumer detection and the roll alone, on a synthetic
// 10,000-resource list (3,333 Deployments mounting one of 100 bundles).
// Each iteration starts from freshly parsed items, outside the timer.
func BenchmarkApply(b *testing.B) {
	input := synth.ResourceList(synth.Options{Resources: 10000, Bundles: 100, Seed: 1})
	yes := true
	var bundles []Bundle
	for i := 0; i < 100; i++ {
		bundles = append(bundles, Bundle{
			Name:    fmt.Sprintf("bundle-%d", i),
			Field:   fmt.Sprintf("spec.trustBundles[%d]", i),
			Targets: []Target{{Key: kube.Key{Kind: "Secret", Namespace: fmt.Sprintf("ns-%d", i), Name: fmt.Sprintf("trust-%d", i)}, Hash: "sha256:00", Changed: true}},
			Restart: policy.Restart{Auto: &yes},
		})
	}
	for b.Loop() {
		b.StopTimer()
		items, err := (&kio.ByteReader{Reader: bytes.NewReader(input)}).Read()
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		apply(bundles, Env{Items: items})
	}
}
