package rotate_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/pki"
	"github.com/rotate-certs/rotate-certs/fn/resio"
	"github.com/rotate-certs/rotate-certs/fn/rotate"
	"github.com/rotate-certs/rotate-certs/internal/synth"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
)

// BenchmarkProcess runs the whole function through kyaml's reader and
// writer on synthetic ResourceLists; BenchmarkFunctionMode runs it the way
// the binary does (package resio). `make bench` compares the binary with a
// no-op kyaml function.
func BenchmarkProcess(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		input := synth.ResourceList(synth.Options{Resources: n, Bundles: 100, Seed: 1})
		b.Run(fmt.Sprintf("resources=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(input)))
			for b.Loop() {
				rw := &kio.ByteReadWriter{Reader: bytes.NewReader(input), Writer: io.Discard, KeepReaderAnnotations: true}
				if err := framework.Execute(rotate.Framework(rotate.Processor{Now: time.Now}), rw); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkFunctionMode runs function mode in process on every shape of
// list (hand-made, and as kpt and kustomize send it), at 1,000 and 10,000
// resources, and at 100,000 when ROTATE_CERTS_BENCH_LARGE is set: the CPU
// profile of docs/design/performance.md comes from
//
//	ROTATE_CERTS_BENCH_LARGE=1 go test -run '^$' -bench 'FunctionMode/kpt-render/resources=100000' -benchtime 3x -cpuprofile cpu.prof ./fn/rotate
func BenchmarkFunctionMode(b *testing.B) {
	sizes := []int{1000, 10000}
	if os.Getenv("ROTATE_CERTS_BENCH_LARGE") != "" {
		sizes = append(sizes, 100000)
	}
	for _, shape := range synth.Shapes {
		for _, n := range sizes {
			input := synth.ResourceList(synth.Options{Resources: n, Bundles: 100, Seed: 1, Shape: shape})
			b.Run(fmt.Sprintf("%s/resources=%d", shape, n), func(b *testing.B) {
				b.SetBytes(int64(len(input)))
				defer resio.TuneMemory(len(input))()
				for b.Loop() {
					if err := resio.RunList(input, io.Discard, rotate.Needs, rotate.Processor{Now: time.Now}.Run); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// TestSyntheticListRenders checks the benchmark input is valid: every
// bundle renders (timing lives in the benchmark, not in tests).
func TestSyntheticListRenders(t *testing.T) {
	input := synth.ResourceList(synth.Options{Resources: 3000, Bundles: 100, Seed: 1})
	var out bytes.Buffer
	rw := &kio.ByteReadWriter{Reader: bytes.NewReader(input), Writer: &out, KeepReaderAnnotations: true}
	if err := framework.Execute(rotate.Framework(rotate.Processor{Now: time.Now}), rw); err != nil {
		t.Fatal(err)
	}
	if got := bytes.Count(out.Bytes(), []byte("rotate-certs.dev/bundle-hash")); got != 100 {
		t.Fatalf("want 100 rendered targets, got %d", got)
	}
}

func TestNeedsKind(t *testing.T) {
	for _, tc := range []struct {
		apiVersion, kind string
		want             bool
	}{
		{"v1", "Secret", true},
		{"apps/v1", "Deployment", true},
		{"argoproj.io/v1alpha1", "Rollout", true},
		{"controlplane.cluster.x-k8s.io/v1beta2", "KubeadmControlPlane", true},
		{"anywhere.eks.amazonaws.com/v1alpha1", "Cluster", true},
		{"infrastructure.example.dev/v1", "AcmeMachineTemplate", true},
		{"admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration", true},
		{"apiregistration.k8s.io/v1", "APIService", true},
		{"apiextensions.k8s.io/v1", "CustomResourceDefinition", true},
		{"certificates.k8s.io/v1beta1", "ClusterTrustBundle", true},
		{"trust.cert-manager.io/v1alpha1", "Bundle", true},
		{"example.com/v1", "Widget", false},
		{"networking.k8s.io/v1", "Ingress", false},
		{"v1", "Namespace", true},
		{"v1", "Service", false},
		{"", "Secret", true},
		{"apps/v1", "ReplicaSet", false},
		{"batch/v1", "CronJob", true},
		{"policy/v1", "PodDisruptionBudget", true},
		{"monitoring.coreos.com/v1", "PrometheusRule", true},
		{"rotate-certs.dev/v1alpha1", "RotationPolicy", true},
		{"cluster.x-k8s.io/v1beta1", "", false},
	} {
		if got := rotate.NeedsKind(tc.apiVersion, tc.kind); got != tc.want {
			t.Errorf("needsKind(%s, %s) = %v, want %v", tc.apiVersion, tc.kind, got, tc.want)
		}
	}
}

// BenchmarkFanOut renders one bundle fanned out to n namespaces over an
// input of n leaves that a protected previous CA signed (fanOutInput):
// the protection check, the re-issue list and, with alerts, the alert
// rule all look at the leaves of every target.
func BenchmarkFanOut(b *testing.B) {
	for _, tc := range []struct {
		n      int
		alerts bool
	}{{1000, false}, {200, true}, {1000, true}} {
		input := fanOutInput(tc.n, tc.n, tc.alerts)
		b.Run(fmt.Sprintf("namespaces=leaves=%d/alerts=%v", tc.n, tc.alerts), func(b *testing.B) {
			b.SetBytes(int64(len(input)))
			for b.Loop() {
				rw := &kio.ByteReadWriter{Reader: bytes.NewReader(input), Writer: io.Discard, KeepReaderAnnotations: true}
				if err := framework.Execute(rotate.Framework(rotate.Processor{Now: time.Now}), rw); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestEachCertificateIsParsedOnce: sources, targets, leaves and the
// certificate report read certificates through one cache per run, so each
// distinct certificate of the input is parsed once and is one
// *x509.Certificate everywhere (the signature checks remember pairs of
// them).
func TestEachCertificateIsParsedOnce(t *testing.T) {
	input := synth.ResourceList(synth.Options{Resources: 300, Bundles: 5, Seed: 2})
	distinct := map[string]bool{}
	for _, line := range strings.Split(string(input), "\n") {
		if _, value, ok := strings.Cut(line, "ca.crt: "); ok {
			distinct[value] = true
		}
	}
	require.NotEmpty(t, distinct)
	// An inline source: a certificate only the trust bundle step reads (the
	// report scans items, not the policy).
	inline := testpki.NewCA("inline-only", testpki.Date(2026, 1, 1), testpki.Days(365)).PEM()
	source := "      - secret: {name: ca-0, namespace: ns-0}\n"
	require.Contains(t, string(input), source)
	input = []byte(strings.Replace(string(input), source,
		source+"      - inline: |\n          "+strings.ReplaceAll(strings.TrimSpace(string(inline)), "\n", "\n          ")+"\n", 1))
	distinct["inline"] = true
	certs := pki.NewCache()
	p := rotate.WithCertCache(rotate.Processor{Now: time.Now}, certs)
	handled, err := resio.RunFast(input, io.Discard, rotate.Needs, p.Run)
	require.True(t, handled)
	require.NoError(t, err)
	require.Equal(t, len(distinct), certs.Len(), "every certificate of the run went through the one cache")
}
