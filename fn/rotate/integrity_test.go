package rotate_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/pki"
	"github.com/rotate-certs/rotate-certs/fn/trustbundle"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// State in git is memory, never a source of trust: a CA enters a bundle's
// data only from a source, from that target's own data, or - the one
// exception, always a warning - from the memory of a Copy-mode render on
// the switch back to Bundle mode. These tests write attacker-ca, which no
// source and no data holds, into each memory annotation of each target
// kind, and check that it never reaches anything the cluster trusts.

// certsIn returns the SHA-256 of every certificate in the scalars of node
// (PEM text, or base64 of PEM as Secret data and caBundle fields hold it),
// skipping the annotations named in skip.
func certsIn(node *yaml.Node, skip map[string]bool) map[pki.Fingerprint]bool {
	out := map[pki.Fingerprint]bool{}
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		switch n.Kind {
		case yaml.ScalarNode:
			for _, text := range []string{n.Value, decodeLoose(n.Value)} {
				// encoding/pem, and the function's own scanner (which
				// reads some text encoding/pem skips).
				rest := []byte(text)
				for {
					block, next := pem.Decode(rest)
					if block == nil {
						break
					}
					rest = next
					if block.Type == "CERTIFICATE" {
						out[sha256.Sum256(block.Bytes)] = true
					}
				}
				d, _ := pki.ScanPEM([]byte(text))
				for _, c := range d.Certificates {
					out[pki.FingerprintOf(c)] = true
				}
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				if !skip[n.Content[i].Value] {
					walk(n.Content[i+1])
				}
			}
		default:
			for _, c := range n.Content {
				walk(c)
			}
		}
	}
	walk(node)
	return out
}

// decodeLoose decodes base64 with any white space in it, "" when s is not
// base64.
func decodeLoose(s string) string {
	b, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		return ""
	}
	return string(b)
}

// memoryOnly are the annotations that are memory and may name no CA the
// output trusts: only the previous annotation, the memory of a Copy-mode
// render, may bring one back.
var memoryOnly = map[string]bool{trustbundle.SeenAnnotation: true, trustbundle.RetiredAnnotation: true, trustbundle.UnusedAnnotation: true}

// requireNoForeignCA fails when the output items hold a certificate that
// the input holds nowhere but in memory annotations other than previous:
// no CA outside (sources ∪ target data ∪ Copy memory) appears in output.
func requireNoForeignCA(t *testing.T, input, output []byte) {
	t.Helper()
	in, err := yaml.Parse(string(input))
	if err != nil {
		return // what kyaml cannot parse as one document has no certificate to compare
	}
	allowed := certsIn(in.YNode(), memoryOnly)
	out := parseResourceList(t, output)
	for _, it := range out.items {
		for fp := range certsIn(it.YNode(), nil) {
			require.True(t, allowed[fp], "%s holds CA sha256:%s, which the input holds only in a memory annotation (or nowhere):\n%s", it.GetName(), fp, it.MustString())
		}
	}
}

var attacker = testpki.Fixture("attacker-ca")

// withAnnotations adds annotations (key: YAML value) to the gw trust Secret
// of memoryInput.
func withAnnotations(mode string, gwData []string, annotations map[string]string) []byte {
	in := string(memoryInput(mode))
	var b strings.Builder
	b.WriteString("annotations:\n      team: platform\n")
	for k, v := range annotations {
		fmt.Fprintf(&b, "      %s: %s\n", k, v)
	}
	in = strings.Replace(in, "annotations: {team: platform}\n", b.String(), 1)
	if gwData != nil {
		var pemText []byte
		for _, n := range gwData {
			pemText = append(pemText, testpki.Fixture(n).PEM()...)
		}
		old := base64.StdEncoding.EncodeToString(append(testpki.Fixture("ca-2026").PEM(), testpki.Fixture("ca-2025").PEM()...))
		in = strings.Replace(in, old, base64.StdEncoding.EncodeToString(pemText), 1)
	}
	return []byte(in)
}

// block writes text as a YAML literal block in an annotation of
// withAnnotations.
func block(text string) string {
	return "|\n        " + strings.ReplaceAll(strings.TrimRight(text, "\n"), "\n", "\n        ")
}

func retiredOf(names ...string) string {
	var lines []string
	for _, n := range names {
		lines = append(lines, strings.TrimSuffix(retiredLine(n, testpki.Date(2026, 11, 2)), "\n"))
	}
	return block(strings.Join(lines, "\n"))
}

// TestAnnotationsNeverAddTrust: a forged previous annotation on a target
// whose data is not a Copy-mode render's, in Bundle and in Copy mode, and
// a forged retired line, are each a warning naming the annotation, the
// target and the CA or the reason; attacker-ca reaches neither the data
// nor the memory the next render reads, through a switch back to Bundle
// mode too.
func TestAnnotationsNeverAddTrust(t *testing.T) {
	prev := block(string(attacker.PEM()))
	for _, tc := range []struct {
		name, mode string
		data       []string
		ann        map[string]string
		want       string
	}{
		{"previous on a Bundle target without a record", "Bundle", nil,
			map[string]string{trustbundle.PreviousAnnotation: prev},
			"annotation rotate-certs.dev/previous is ignored: the target has no readable rotate-certs.dev/retired record"},
		{"previous on a Bundle target whose data holds a retired CA", "Bundle", nil,
			map[string]string{trustbundle.PreviousAnnotation: prev, trustbundle.RetiredAnnotation: retiredOf("ca-2025")},
			`holds CA "CN=ca-2025,O=rotate-certs test" sha256:` + pki.FingerprintOf(testpki.Fixture("ca-2025").Cert).String() + ", which rotate-certs.dev/retired lists as retired"},
		{"Copy mode does not remember it", "Copy", nil,
			map[string]string{trustbundle.PreviousAnnotation: prev, trustbundle.RetiredAnnotation: retiredOf("ca-2025")},
			"annotation rotate-certs.dev/previous is ignored"},
		{"a retired line alone", "Bundle", nil,
			map[string]string{trustbundle.RetiredAnnotation: retiredOf("attacker-ca")},
			"annotation rotate-certs.dev/retired names CA sha256:" + pki.FingerprintOf(attacker.Cert).String() + ", which neither data.ca.crt nor a source holds"},
		{"an unused line alone", "Bundle", nil,
			map[string]string{trustbundle.UnusedAnnotation: retiredOf("attacker-ca")},
			"annotation rotate-certs.dev/unused names CA sha256:" + pki.FingerprintOf(attacker.Cert).String() + ", which neither data.ca.crt nor a source holds"},
		{"previous and retired on data of another key", "Bundle", []string{"ca-2026"},
			map[string]string{trustbundle.PreviousAnnotation: block(strings.Replace(string(attacker.PEM()), "-----BEGIN CERTIFICATE-----\n", "-----BEGIN CERTIFICATE-----\nKey: other.crt\n\n", 1)),
				trustbundle.RetiredAnnotation: retiredOf("attacker-ca")},
			"annotation rotate-certs.dev/retired names CA sha256:" + pki.FingerprintOf(attacker.Cert).String()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := withAnnotations(tc.mode, tc.data, tc.ann)
			out, err := execute(t, in)
			require.NoError(t, err, string(out))
			requireNoForeignCA(t, memoryInput("Bundle"), out)
			back := rerender(t, out, "Bundle", testpki.GoldenNow, nil)
			requireNoForeignCA(t, memoryInput("Bundle"), back)
			require.Contains(t, string(out), tc.want)
			require.Contains(t, string(out), "Secret gw/trust")
		})
	}
}

// TestCopyRestoreIsAWarning: the one exception. A target whose data is
// exactly what a Copy-mode render writes, with a previous annotation, gets
// the annotation's CA back on the switch to Bundle mode - with a warning
// that lists it by subject and SHA-256 and names the target, so that a
// reviewer sees it. A Copy render that remembered it says so too.
func TestCopyRestoreIsAWarning(t *testing.T) {
	ann := map[string]string{trustbundle.PreviousAnnotation: block(string(attacker.PEM())), trustbundle.RetiredAnnotation: retiredOf("attacker-ca")}
	for _, mode := range []string{"Bundle", "Copy"} {
		out, err := execute(t, withAnnotations(mode, []string{"ca-2026"}, ann))
		require.NoError(t, err, string(out))
		if mode == "Copy" {
			require.Contains(t, string(out), `previous CA "CN=attacker-ca,O=rotate-certs test"`)
			require.Contains(t, string(out), "is not in the bundle (Copy mode)")
			out = rerender(t, out, "Bundle", testpki.GoldenNow, nil)
		}
		msg := `target Secret gw/trust: restored 1 previous CA(s) into data.ca.crt from annotation rotate-certs.dev/previous, the memory of a Copy-mode render, on the switch back to Bundle mode: "CN=attacker-ca,O=rotate-certs test" sha256:` + pki.FingerprintOf(attacker.Cert).String()
		require.Contains(t, string(out), msg, mode)
		require.Contains(t, keySubjects(t, trustIn(t, out, "gw")), "attacker-ca", "%s: the restore is the exception, not a bug", mode)
	}
}

// TestOversizedMemory: an annotation over 1 MiB - seen included - is a
// warning naming it and is ignored, never accepted and never a reason to
// refuse the render.
func TestOversizedMemory(t *testing.T) {
	huge := strings.Repeat(string(testpki.Fixture("ca-2025").PEM()), (3<<20)/len(testpki.Fixture("ca-2025").PEM()))
	for _, name := range []string{trustbundle.PreviousAnnotation, trustbundle.RetiredAnnotation, trustbundle.UnusedAnnotation} {
		out, err := execute(t, withAnnotations("Bundle", []string{"ca-2026"}, map[string]string{name: block(huge)}))
		require.NoError(t, err, name)
		require.Contains(t, string(out), "annotation "+name+" is "+fmt.Sprint(len(huge))+" bytes")
		require.Contains(t, string(out), "it is ignored and this render rewrites it")
		require.Equal(t, []string{"ca-2026"}, keySubjects(t, trustIn(t, out, "gw")), name)
	}
	out, err := execute(t, trustManagerInput(huge))
	require.NoError(t, err)
	require.Contains(t, string(out), "annotation rotate-certs.dev/seen is "+fmt.Sprint(len(huge))+" bytes")
	for _, it := range parseResourceList(t, out).items {
		if it.GetKind() == "Bundle" {
			require.Equal(t, string(testpki.Fixture("ca-2026").PEM()), it.GetAnnotations()[trustbundle.SeenAnnotation], "the 3 MiB seen is replaced by what the sources hold")
		}
	}
	requireNoForeignCA(t, trustManagerInput(""), out)
}

// trustManagerInput is a trust-manager Bundle target whose source holds
// ca-2026, with seen as its seen annotation ("" none).
func trustManagerInput(seen string) []byte {
	ann := ""
	if seen != "" {
		ann = "\n    annotations:\n      rotate-certs.dev/seen: " + strings.ReplaceAll(block(seen), "\n        ", "\n        ")
	}
	return []byte(`apiVersion: config.kubernetes.io/v1
kind: ResourceList
functionConfig:
  apiVersion: rotate-certs.dev/v1alpha1
  kind: RotationPolicy
  metadata: {name: p}
  spec:
    now: "2026-11-22T00:00:00Z"
    trustBundles:
    - name: corp
      target: {kind: Bundle, name: corp-trust, trustNamespace: trust}
items:
- apiVersion: v1
  kind: Secret
  metadata: {name: root, namespace: trust}
  data: {ca.crt: ` + base64.StdEncoding.EncodeToString(testpki.Fixture("ca-2026").PEM()) + `}
- apiVersion: trust.cert-manager.io/v1alpha1
  kind: Bundle
  metadata:
    name: corp-trust` + ann + `
  spec:
    sources:
    - secret: {name: root, key: ca.crt}
    target: {configMap: {key: ca.crt}}
`)
}
