package rotate_test

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/resio"
	"github.com/rotate-certs/rotate-certs/fn/rotate"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Hostile inputs. Each one must end with a clear error or a correct result,
// in time and memory bounded by construction, not by a stopwatch:
//   - the YAML parser refuses documents nested deeper than 10,000 levels
//     and expands no alias when a document is read into nodes; decoding the
//     policy (the one place that expands aliases) stops at go-yaml's
//     excessive-aliasing check;
//   - function mode reads at most resio.MaxInputBytes (384 MiB) from stdin,
//     and hands at most resio.MaxKyamlInputBytes (32 MiB) to kyaml's reader
//     (cmd/rotate-certs TestKyamlPathIsCapped);
//   - a bundle source, an existing target and a rendered bundle are capped
//     at trustbundle's maxValueBytes (1 MiB, what one Secret or ConfigMap can
//     hold), which bounds the certificates one value can make the function
//     parse and verify;
//   - every other value is scanned once, linearly.
// The sizes below are asserted (output bytes), the time is left to go
// test's -timeout.

const hostileHeader = `apiVersion: config.kubernetes.io/v1
kind: ResourceList
functionConfig:
  apiVersion: rotate-certs.dev/v1alpha1
  kind: RotationPolicy
  metadata: {name: hostile}
  spec:
    now: "2026-11-22T00:00:00Z"
    trustBundles:
    - name: gateway
      sources:
      - secret: {name: ca, namespace: gw}
      target: {name: trust}
items:
- apiVersion: v1
  kind: Secret
  metadata: {name: ca, namespace: gw}
  data:
    ca.crt: %s
`

// hostile returns a ResourceList whose CA source holds caPEM, followed by
// extra items.
func hostile(caPEM []byte, extra string) []byte {
	return []byte(fmt.Sprintf(hostileHeader, base64.StdEncoding.EncodeToString(caPEM)) + extra)
}

func aliasBomb(indent string, levels int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%sl0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n", indent)
	for i := 1; i < levels; i++ {
		refs := strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d, ", i-1), 9), ", ")
		fmt.Fprintf(&b, "%sl%d: &l%d [%s]\n", indent, i, i, refs)
	}
	return b.String()
}

func nested(depth int) string {
	return strings.Repeat("[", depth) + strings.Repeat("]", depth)
}

// targetCerts returns the number of certificates of the rendered trust
// Secret.
func targetCerts(t *testing.T, out []byte) int {
	t.Helper()
	return len(valueCerts(t, out, kube.Key{Kind: "Secret", Namespace: "gw", Name: "trust"}, "ca.crt"))
}

// hostileCase is one hostile input and what the function must do with it.
type hostileCase struct {
	name  string
	input []byte
	// wantErr is a substring of the error; "" means success.
	wantErr string
	// check inspects a successful output.
	check func(t *testing.T, in, out []byte)
}

// runHostile runs the function on each case: a wanted error fails the
// render with no resources out, a success passes its output to check.
func runHostile(t *testing.T, cases []hostileCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			out, stderr, err := executeStderr(tt.input)
			if tt.wantErr != "" {
				require.Error(t, err)
				require.Contains(t, err.Error(), tt.wantErr)
				if len(out) > 0 {
					require.Empty(t, parseResourceList(t, out).items, "a failed render outputs no resources")
				}
				return
			}
			require.NoError(t, err, "stderr: %s", stderr)
			tt.check(t, tt.input, out)
		})
	}
}

// TestHostileInputs: alias bombs, 10 MB values and thousands of
// certificates - in an item, the policy or a source.
func TestHostileInputs(t *testing.T) {
	ca := testpki.Fixture("ca-2026")
	// A 10 MB value that looks like PEM but never closes a block.
	pemLike := bytes.Repeat([]byte("-----BEGIN CERTIFICATE-----\n"), 10<<20/28)
	aliasSource := []byte(strings.Replace(string(hostile(nil, "")), "items:\n",
		"items:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: bomb, namespace: gw}\n  data:\n"+aliasBomb("    ", 10), 1))
	aliasSource = bytes.Replace(aliasSource, []byte("    ca.crt: \n"), []byte("    ca.crt: *l9\n"), 1)
	runHostile(t, []hostileCase{
		{
			name:  "alias bomb in an item passes through unexpanded",
			input: hostile(ca.PEM(), "- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: bomb, namespace: gw}\n  data:\n"+aliasBomb("    ", 10)),
			check: func(t *testing.T, in, out []byte) {
				require.Less(t, len(out), 2*len(in)+64<<10, "the output must not expand the aliases (9^10 strings)")
				require.Contains(t, string(out), "*l8, *l8")
				require.Equal(t, 1, targetCerts(t, out))
			},
		},
		{
			name: "alias bomb in the policy is refused",
			input: []byte(strings.Replace(string(hostile(ca.PEM(), "")), "  metadata: {name: hostile}\n",
				"  metadata:\n    name: hostile\n    labels:\n"+aliasBomb("      ", 10), 1)),
			wantErr: "excessive aliasing",
		},
		{
			// The source Secret's value is an alias of a huge list: the
			// alias is resolved to the list it names, which is not a
			// string; nothing is expanded.
			name:    "alias bomb as a source value",
			input:   aliasSource,
			wantErr: "source Secret gw/ca: data.ca.crt: is a YAML list, not a string",
		},
		{
			name:  "10 MB value in an unrelated ConfigMap passes through",
			input: hostile(ca.PEM(), "- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: big, namespace: gw}\n  data:\n    blob: "+strings.Repeat("A", 10<<20)+"\n"),
			check: func(t *testing.T, in, out []byte) {
				require.Contains(t, string(out), strings.Repeat("A", 10<<20))
				require.Equal(t, 1, targetCerts(t, out))
			},
		},
		{
			name:  "10 MB of unterminated PEM headers elsewhere is a warning",
			input: hostile(ca.PEM(), "- apiVersion: v1\n  kind: Secret\n  metadata: {name: junk, namespace: gw}\n  data:\n    ca.crt: "+base64.StdEncoding.EncodeToString(pemLike)+"\n"),
			check: func(t *testing.T, in, out []byte) {
				require.Contains(t, parseResourceList(t, out).results, "unreadable certificate data")
				require.Equal(t, 1, targetCerts(t, out))
			},
		},
		{
			name:    "10 MB source is refused before parsing",
			input:   hostile(pemLike, ""),
			wantErr: "more than the 1048576 bytes (1 MiB) a Kubernetes Secret or ConfigMap can hold",
		},
		{
			name:    "10,000 certificates in one source exceed what a Secret holds",
			input:   hostile(manyCAs(10000), ""),
			wantErr: "source Secret gw/ca data.ca.crt is ",
		},
		{
			name:  "1,000 certificates in one source render a bundle of 1,000",
			input: hostile(manyCAs(1000), ""),
			check: func(t *testing.T, in, out []byte) {
				require.Equal(t, 1000, targetCerts(t, out))
			},
		},
	})
}

// TestHostileEncodings: binary data, raw non-UTF-8 bytes and deep nesting
// in the input, and a functionConfig that is a list.
func TestHostileEncodings(t *testing.T) {
	ca := testpki.Fixture("ca-2026")
	binary := make([]byte, 4096)
	_, _ = io.ReadFull(rand.Reader, binary)
	binaryBlock := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: binary})
	runHostile(t, []hostileCase{
		{
			name:    "binary data in a PEM certificate block",
			input:   hostile(binaryBlock, ""),
			wantErr: "is not PEM certificate data",
		},
		{
			name:    "binary data instead of PEM",
			input:   hostile(binary, ""),
			wantErr: "is not PEM certificate data: no PEM data found",
		},
		{
			name:    "raw non-UTF-8 bytes in the YAML",
			input:   append(hostile(ca.PEM(), "- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: raw, namespace: gw}\n  data:\n    raw: \""), append(binary[:64], "\"\n"...)...),
			wantErr: "failed to read ResourceList input",
		},
		{
			name:  "deeply nested YAML within the parser's limit passes through",
			input: hostile(ca.PEM(), "- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: deep, namespace: gw}\n  deep: "+nested(5000)+"\n"),
			check: func(t *testing.T, in, out []byte) {
				require.Contains(t, string(out), nested(5000))
				require.Equal(t, 1, targetCerts(t, out))
			},
		},
		{
			name:    "YAML nested deeper than 10,000 levels is refused",
			input:   hostile(ca.PEM(), "- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: deep, namespace: gw}\n  deep: "+nested(20000)+"\n"),
			wantErr: "exceeded max depth of 10000",
		},
		{
			name:    "a list as functionConfig",
			input:   []byte("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nfunctionConfig: [{}]\nitems: []\n"),
			wantErr: "functionConfig is a YAML list",
		},
	})
}

var (
	manyOnce sync.Once
	manyPEMs [][]byte
)

// manyCAs returns n (at most 10,000) distinct CA certificates as one PEM
// value; the first n are always the same.
func manyCAs(n int) []byte {
	manyOnce.Do(func() {
		for i := 0; i < 10000; i++ {
			manyPEMs = append(manyPEMs, testpki.NewCA(fmt.Sprintf("many-%d", i), testpki.Date(2026, 1, 1), testpki.Days(3650)).PEM())
		}
	})
	return bytes.Join(manyPEMs[:n], nil)
}

// The bundle a render would write is capped too: two sources under 1 MiB
// each can add up to more than a Secret holds.
func TestRenderedBundleOverOneMiBIsRefused(t *testing.T) {
	half := manyCAs(1000) // about 0.5 MiB
	other := manyCAs(2000)[len(half):]
	require.Greater(t, len(half)+len(other), 1<<20)
	in := fmt.Sprintf(`apiVersion: config.kubernetes.io/v1
kind: ResourceList
functionConfig:
  apiVersion: rotate-certs.dev/v1alpha1
  kind: RotationPolicy
  metadata: {name: big}
  spec:
    now: "2026-11-22T00:00:00Z"
    trustBundles:
    - name: gateway
      sources:
      - secret: {name: a, namespace: gw}
      - secret: {name: b, namespace: gw}
      target: {name: trust}
items:
- {apiVersion: v1, kind: Secret, metadata: {name: a, namespace: gw}, data: {ca.crt: %s}}
- {apiVersion: v1, kind: Secret, metadata: {name: b, namespace: gw}, data: {ca.crt: %s}}
`, base64.StdEncoding.EncodeToString(half), base64.StdEncoding.EncodeToString(other))
	require.Less(t, len(half), 1<<20)
	require.Less(t, len(other), 1<<20)
	_, _, err := executeStderr([]byte(in))
	require.Error(t, err)
	require.Contains(t, err.Error(), "the rendered bundle of 2000 certificates is ")
	require.Contains(t, err.Error(), "the API server would reject it")
}

// Function mode stops reading at the input limit with a clear error
// instead of parsing a truncated list.
func TestLimitReader(t *testing.T) {
	in := hostile(testpki.Fixture("ca-2026").PEM(), "")
	for _, tt := range []struct {
		name  string
		limit int64
		ok    bool
	}{
		{"exactly the limit", int64(len(in)), true},
		{"one byte short", int64(len(in)) - 1, false},
		{"far too small", 100, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			rw := &kio.ByteReadWriter{Reader: resio.LimitReader(bytes.NewReader(in), tt.limit), Writer: &out, KeepReaderAnnotations: true}
			err := framework.Execute(rotate.Framework(rotate.Processor{}), rw)
			if tt.ok {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			var tooLarge resio.ErrInputTooLarge
			require.True(t, errors.As(err, &tooLarge), "got %v", err)
			require.Equal(t, tt.limit, tooLarge.Limit)
			require.Empty(t, out.String(), "nothing is rendered from a truncated input")
		})
	}
}

// Found by FuzzProcess: kyaml's accessors panic on an item that is a list
// or a scalar. The processor refuses such items by index (function mode's
// reader already refuses them; `render` and library callers hand items
// over directly).
func TestProcessorRefusesNonObjectItems(t *testing.T) {
	fnConfig := yaml.MustParse("apiVersion: rotate-certs.dev/v1alpha1\nkind: RotationPolicy\nmetadata: {name: p}\nspec: {now: \"2026-11-22T00:00:00Z\"}\n")
	list, err := yaml.Parse("[{}]")
	require.NoError(t, err)
	scalar := yaml.NewScalarRNode("x")
	rl := &framework.ResourceList{FunctionConfig: fnConfig, Items: []*yaml.RNode{yaml.MustParse("{apiVersion: v1, kind: ConfigMap, metadata: {name: ok}}"), list, scalar}}
	err = rotate.Framework(rotate.Processor{}).Process(rl)
	require.Error(t, err)
	require.Contains(t, err.Error(), "items[1] is a YAML list, not an object; every item of a ResourceList must be a Kubernetes object")
	require.Contains(t, err.Error(), "items[2] is a YAML scalar, not an object")
	require.Empty(t, rl.Items)
}

// Found by the FuzzProcess seed corpus after the fast path landed: function
// mode panicked (kyaml's accessors index a list as a map) on objects whose
// metadata, labels or annotations are not maps. Each is now an error that
// names the item and the field, and the object by name where its metadata
// can be read (review A, finding 13: the ref had an empty name).
func TestMalformedObjectsAreErrors(t *testing.T) {
	deployment := func(template string) string {
		return "- apiVersion: apps/v1\n  kind: Deployment\n  metadata: {name: app, namespace: gw}\n  spec:\n    template:\n" + template +
			"      spec:\n        containers: [{name: c, image: x}]\n        volumes: [{name: t, secret: {secretName: trust}}]\n"
	}
	ca := testpki.Fixture("ca-2026").PEM()
	tests := []struct{ name, extra, want string }{
		{"metadata is a list", "- {apiVersion: v1, kind: ConfigMap, metadata: [1]}\n", "items[1] (ConfigMap): metadata is a YAML list, not an object"},
		{"annotations are a list", "- {apiVersion: v1, kind: ConfigMap, metadata: {name: a, annotations: [x]}}\n", "error: ConfigMap a items[1].metadata.annotations: items[1] (ConfigMap a): metadata.annotations is a YAML list, not a map of strings"},
		{"labels are a list", "- {apiVersion: example.com/v1, kind: Widget, metadata: {name: a, namespace: ns, labels: [x]}}\n", "error: Widget ns/a items[1].metadata.labels: items[1] (Widget ns/a): metadata.labels is a YAML list"},
		{"pod template labels are a list", deployment("      metadata: {labels: [x]}\n"), "spec.template.metadata.labels: is a YAML list, not a map of strings"},
		{"pod template metadata is a list", deployment("      metadata: [x]\n"), "spec.template.metadata: is a YAML list, not an object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _, err := executeStderr(hostile(ca, tt.extra))
			require.Error(t, err)
			require.Contains(t, err.Error(), tt.want)
			if len(out) > 0 {
				require.Empty(t, parseResourceList(t, out).items)
			}
		})
	}
}

// damageSecondBlock returns three CA blocks, the second one damaged by f
// (applied to its lines): what encoding/pem skips without a word.
func damageSecondBlock(f func(lines []string)) []byte {
	second := strings.SplitAfter(string(testpki.Fixture("ca-2027").PEM()), "\n")
	f(second)
	return []byte(string(testpki.Fixture("ca-2026").PEM()) + strings.Join(second, "") + string(testpki.Fixture("signer-b-1").PEM()))
}

// A CA block with a damaged body line or a misspelt END line in the middle
// of a value was skipped (encoding/pem resumes at the next BEGIN line):
// the render succeeded and the bundle lacked that CA. In a source or an
// existing target it is an error naming the object, the field and the
// block's ordinal; in any other Secret (a leaf, say) a warning.
func TestBrokenPEMBlockIsNeverSkipped(t *testing.T) {
	damaged := map[string][]byte{
		"a damaged body line": damageSecondBlock(func(l []string) { l[2] = "!!" + l[2][2:] }),
		"a misspelt END line": damageSecondBlock(func(l []string) { l[len(l)-2] = "-----END CERTIFICATE----\n" }),
	}
	for name, value := range damaged {
		t.Run(name, func(t *testing.T) {
			t.Run("in a source", func(t *testing.T) {
				_, _, err := executeStderr(hostile(value, ""))
				require.Error(t, err)
				require.Contains(t, err.Error(), "error: Secret gw/ca data.ca.crt: bundle \"gateway\": source Secret gw/ca data.ca.crt is not PEM certificate data: the 2nd PEM block (line 11) is malformed")
			})
			t.Run("in the existing target", func(t *testing.T) {
				target := "- apiVersion: v1\n  kind: Secret\n  metadata: {name: trust, namespace: gw}\n  data:\n    ca.crt: " + base64.StdEncoding.EncodeToString(value) + "\n"
				_, _, err := executeStderr(hostile(testpki.Fixture("ca-2026").PEM(), target))
				require.Error(t, err)
				require.Contains(t, err.Error(), "error: Secret gw/trust data.ca.crt: bundle \"gateway\": existing target Secret gw/trust data.ca.crt is not PEM certificate data (the 2nd PEM block (line 11) is malformed")
			})
			t.Run("anywhere else", func(t *testing.T) {
				leaf := "- apiVersion: v1\n  kind: Secret\n  metadata: {name: peer, namespace: gw}\n  data:\n    ca.crt: " + base64.StdEncoding.EncodeToString(value) + "\n"
				out, stderr, err := executeStderr(hostile(testpki.Fixture("ca-2026").PEM(), leaf))
				require.NoError(t, err)
				require.Contains(t, string(stderr), "Secret gw/peer data.ca.crt: unreadable certificate data: the 2nd PEM block (line 11) is malformed")
				require.Contains(t, parseResourceList(t, out).results, "the 2nd PEM block (line 11) is malformed")
			})
		})
	}
}
