package rotate_test

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/pki"
	"github.com/rotate-certs/rotate-certs/fn/trustbundle"
	"github.com/rotate-certs/rotate-certs/internal/golden"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// memoryInput is a ResourceList whose bundle reads ca-2026 and writes the
// trust Secret in namespaces gw and edge: gw's holds ca-2026 and ca-2025
// (a hand-written target), edge's is absent; a Deployment in gw reads it
// (and carries the trust hash a render of that bundle writes), and a
// client of ca-2025 is in the input.
func memoryInput(mode string) []byte {
	b64 := func(names ...string) string {
		var pem []byte
		for _, n := range names {
			pem = append(pem, testpki.Fixture(n).PEM()...)
		}
		return base64.StdEncoding.EncodeToString(pem)
	}
	return []byte(fmt.Sprintf(`apiVersion: config.kubernetes.io/v1
kind: ResourceList
functionConfig:
  apiVersion: rotate-certs.dev/v1alpha1
  kind: RotationPolicy
  metadata: {name: p}
  spec:
    now: %q
    trustBundles:
    - name: gateway
      mode: %s
      sources:
      - secret: {name: ca, namespace: gw}
      target: {name: trust, namespaces: [gw, edge]}
items:
- apiVersion: v1
  kind: Secret
  metadata: {name: ca, namespace: gw}
  data: {ca.crt: %s}
- apiVersion: v1
  kind: Secret
  metadata:
    name: trust
    namespace: gw
    annotations: {team: platform}
  data: {ca.crt: %s}
- apiVersion: v1
  kind: Secret
  metadata: {name: client, namespace: apps}
  type: kubernetes.io/tls
  data: {tls.crt: %s}
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: gateway, namespace: gw}
  spec:
    replicas: 2
    selector: {matchLabels: {app: gateway}}
    template:
      metadata:
        labels: {app: gateway}
        annotations: {rotate-certs.dev/trust-hash: '%s'}
      spec:
        containers: [{name: gateway, image: gateway:1, envFrom: [{secretRef: {name: trust}}]}]
`, testpki.GoldenNow.Format(time.RFC3339), mode, b64("ca-2026"), b64("ca-2026", "ca-2025"), b64("client-old"), gatewayTrustHash))
}

// gatewayTrustHash is the trust hash of a workload that reads the gw
// target holding ca-2026 and ca-2025.
const gatewayTrustHash = "sha256:c1361d5fd1d33b79dbace8c93d271707fc867ed7f4e65fae605a73fc469e1bcf"

// rerender feeds a rendered ResourceList back in, as a repository does,
// with the bundle's mode and spec.now set; edit (if any) changes the items
// first.
func rerender(t *testing.T, out []byte, mode string, now time.Time, edit func(items *yaml.RNode)) []byte {
	t.Helper()
	rl, err := yaml.Parse(string(out))
	require.NoError(t, err)
	require.NoError(t, rl.PipeE(yaml.Clear("results")))
	spec, err := rl.Pipe(yaml.Lookup("functionConfig", "spec"))
	require.NoError(t, err)
	require.NoError(t, spec.PipeE(yaml.SetField("now", yaml.NewStringRNode(now.Format(time.RFC3339)))))
	b, err := spec.Pipe(yaml.Lookup("trustBundles", "0"))
	require.NoError(t, err)
	require.NoError(t, b.PipeE(yaml.SetField("mode", yaml.NewStringRNode(mode))))
	if edit != nil {
		items, err := rl.Pipe(yaml.Lookup("items"))
		require.NoError(t, err)
		edit(items)
	}
	again, err := execute(t, []byte(rl.MustString()))
	require.NoError(t, err, string(again))
	return again
}

// itemsOf returns the items of a ResourceList as text (no results, no
// functionConfig).
func itemsOf(t *testing.T, rl []byte) string {
	t.Helper()
	node, err := yaml.Parse(string(rl))
	require.NoError(t, err)
	items, err := node.Pipe(yaml.Lookup("items"))
	require.NoError(t, err)
	return items.MustString()
}

// trustIn returns the trust Secret of namespace ns in a ResourceList.
func trustIn(t *testing.T, rl []byte, ns string) *yaml.RNode {
	t.Helper()
	for _, it := range parseResourceList(t, rl).items {
		if kube.KeyOf(it) == (kube.Key{Kind: "Secret", Namespace: ns, Name: "trust"}) {
			return it
		}
	}
	t.Fatalf("no trust Secret in %s", ns)
	return nil
}

// subjects returns the common names of the certificates in PEM text.
func subjects(t *testing.T, pemText []byte) []string {
	t.Helper()
	d, err := pki.DecodePEM(pemText)
	require.NoError(t, err)
	var out []string
	for _, c := range d.Certificates {
		out = append(out, c.Subject.CommonName)
	}
	return out
}

func keySubjects(t *testing.T, node *yaml.RNode) []string {
	t.Helper()
	v, found, err := kube.Lookup(node, "ca.crt")
	require.NoError(t, err)
	require.True(t, found)
	return subjects(t, v.Bytes)
}

func retiredLine(name string, at time.Time) string {
	return pki.FingerprintOf(testpki.Fixture(name).Cert).String() + " " + at.UTC().Format(time.RFC3339) + "\n"
}

// Bundle -> Copy -> Bundle at the same now gives back the bytes of the
// first Bundle render: Copy mode kept aside what Bundle mode carries, with
// its retirement, and Bundle mode takes it back and removes the
// annotation. The workload rolls to the Copy bundle and back to the same
// trust hash.
func TestBundleCopyBundleRoundTrip(t *testing.T) {
	now := testpki.GoldenNow
	bundled, err := execute(t, memoryInput("Bundle"))
	require.NoError(t, err, string(bundled))
	gw := trustIn(t, bundled, "gw")
	require.Equal(t, []string{"ca-2026", "ca-2025"}, keySubjects(t, gw))
	require.Contains(t, itemsOf(t, bundled), gatewayTrustHash, "the workload's trust is unchanged")
	// A hand-written target: ca-2025 counts as retired at this render
	// (now), not at ca-2026's NotBefore three weeks earlier.
	require.Equal(t, retiredLine("ca-2025", now), gw.GetAnnotations()[trustbundle.RetiredAnnotation])
	require.Equal(t, "", trustIn(t, bundled, "edge").GetAnnotations()[trustbundle.RetiredAnnotation], "a created target: an empty record")

	copied := rerender(t, bundled, "Copy", now, nil)
	gw = trustIn(t, copied, "gw")
	require.Equal(t, []string{"ca-2026"}, keySubjects(t, gw))
	ann := gw.GetAnnotations()
	require.Equal(t, []string{"ca-2025"}, subjects(t, []byte(ann[trustbundle.PreviousAnnotation])))
	require.Equal(t, retiredLine("ca-2025", now), ann[trustbundle.RetiredAnnotation])
	require.Equal(t, "platform", ann["team"], "the user's annotations are kept")
	require.NotContains(t, ann[trustbundle.PreviousAnnotation], "PRIVATE KEY")
	_, remembers := trustIn(t, copied, "edge").GetAnnotations()[trustbundle.PreviousAnnotation]
	require.False(t, remembers, "edge held no previous CA: nothing to remember")
	require.NotEqual(t, itemsOf(t, bundled), itemsOf(t, copied))
	require.Contains(t, string(copied), `which is no longer in trust bundle "gateway"`, "the client of ca-2025 is on the re-issue list, broken")
	require.NotContains(t, itemsOf(t, copied), gatewayTrustHash, "the workload rolls to the Copy bundle")

	back := rerender(t, copied, "Bundle", now, nil)
	require.Equal(t, itemsOf(t, bundled), itemsOf(t, back), "Bundle -> Copy -> Bundle must give back Bundle's bytes")

	// Rendering Copy twice changes nothing either.
	require.Equal(t, itemsOf(t, copied), itemsOf(t, rerender(t, copied, "Copy", now, nil)))
}

// The record survives later renders with the same sources unchanged,
// through a Copy-mode detour too, and a CA that leaves the sources after
// the first recorded render is retired at that render's now.
func TestRetiredRecordSurvivesLaterRenders(t *testing.T) {
	now := testpki.GoldenNow
	first, err := execute(t, memoryInput("Bundle"))
	require.NoError(t, err, string(first))
	want := itemsOf(t, first)
	for _, later := range []time.Time{now.Add(time.Hour), now.AddDate(0, 0, 10), now.AddDate(0, 3, 0)} {
		require.Equal(t, want, itemsOf(t, rerender(t, first, "Bundle", later, nil)), "later render at %s", later)
	}
	detour := rerender(t, rerender(t, first, "Copy", now.AddDate(0, 0, 1), nil), "Bundle", now.AddDate(0, 0, 2), nil)
	require.Equal(t, want, itemsOf(t, detour), "Bundle -> Copy -> Bundle on later days")

	// Rotate: ca-2027 replaces ca-2026 on 2026-12-15. ca-2026 was current
	// at the recorded render, so it is retired now and, as the most
	// recently retired CA, takes the one place maxPrevious allows;
	// ca-2025 keeps its record.
	rotation := testpki.Date(2026, 12, 15)
	rotated := rerender(t, first, "Bundle", rotation, func(items *yaml.RNode) {
		src, err := items.Pipe(yaml.Lookup("0"))
		require.NoError(t, err)
		_, _, err = trustbundle.SetValue(src, "ca.crt", testpki.Fixture("ca-2027").PEM())
		require.NoError(t, err)
	})
	gw := trustIn(t, rotated, "gw")
	require.Equal(t, []string{"ca-2027", "ca-2026", "ca-2025"}, keySubjects(t, gw), "ca-2025 stays for the client it signed (protectIssuers)")
	require.Equal(t, sortLines(retiredLine("ca-2025", now)+retiredLine("ca-2026", rotation)), gw.GetAnnotations()[trustbundle.RetiredAnnotation])
	edge := trustIn(t, rotated, "edge")
	require.Equal(t, []string{"ca-2027", "ca-2026"}, keySubjects(t, edge), "each target object has its own record")
	require.Equal(t, retiredLine("ca-2026", rotation), edge.GetAnnotations()[trustbundle.RetiredAnnotation])
}

func sortLines(s string) string {
	lines := strings.SplitAfter(s, "\n")
	for i := range lines {
		for j := i + 1; j < len(lines); j++ {
			if lines[j] < lines[i] {
				lines[i], lines[j] = lines[j], lines[i]
			}
		}
	}
	return strings.Join(lines, "")
}

// A malformed record is a warning, not an error: the CAs without a valid
// line fall back to the rule for a target without a record, and the
// render writes a clean record. An unreadable previous annotation is an
// error: a CA lost from it could be one a peer still needs.
func TestMalformedMemory(t *testing.T) {
	withAnnotation := func(key, value string) []byte {
		in := string(memoryInput("Bundle"))
		return []byte(strings.Replace(in, "annotations: {team: platform}", fmt.Sprintf("annotations: {team: platform, %s: %q}", key, value), 1))
	}
	out, err := execute(t, withAnnotation(trustbundle.RetiredAnnotation, "not-a-line\n"))
	require.NoError(t, err, string(out))
	require.Contains(t, string(out), `annotation rotate-certs.dev/retired is malformed (line 1 "not-a-line": 1 field(s), want 2)`)
	require.Contains(t, string(out), "path: metadata.annotations[rotate-certs.dev/retired]")
	require.Equal(t, retiredLine("ca-2025", testpki.GoldenNow), trustIn(t, out, "gw").GetAnnotations()[trustbundle.RetiredAnnotation])

	future := strings.TrimSuffix(retiredLine("ca-2025", testpki.GoldenNow.Add(time.Hour)), "\n")
	out, err = execute(t, withAnnotation(trustbundle.UnusedAnnotation, future+"\n"))
	require.NoError(t, err, string(out))
	require.Contains(t, string(out), "annotation rotate-certs.dev/unused is malformed (line 1 \""+future+"\": "+testpki.GoldenNow.Add(time.Hour).Format(time.RFC3339)+" is after this render")
	require.Contains(t, string(out), "counts as unused from this render on (when nothing chains to it)")
	require.NotContains(t, trustIn(t, out, "gw").GetAnnotations(), trustbundle.UnusedAnnotation, "no dropUnusedAfter: no record")

	out, err = execute(t, withAnnotation(trustbundle.PreviousAnnotation, "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n-----END CERTIFICATE-----\n"))
	require.Error(t, err)
	require.Contains(t, string(out), "severity: error")
	require.Contains(t, string(out), "annotation rotate-certs.dev/previous block 1 is not a certificate")
	require.Contains(t, string(out), "path: metadata.annotations[rotate-certs.dev/previous]")
}

// Two bundles that write different keys of one object keep apart what
// each remembers: record lines and remembered blocks carry their key.
func TestSharedObjectMemory(t *testing.T) {
	b64 := func(names ...string) string {
		var pem []byte
		for _, n := range names {
			pem = append(pem, testpki.Fixture(n).PEM()...)
		}
		return base64.StdEncoding.EncodeToString(pem)
	}
	in := fmt.Sprintf(`apiVersion: config.kubernetes.io/v1
kind: ResourceList
functionConfig:
  apiVersion: rotate-certs.dev/v1alpha1
  kind: RotationPolicy
  metadata: {name: p}
  spec:
    now: %q
    trustBundles:
    - name: a
      mode: Copy
      sources: [{secret: {name: ca-a, namespace: gw}}]
      target: {name: trust, key: a.crt}
    - name: b
      sources: [{secret: {name: ca-b, namespace: gw}}]
      target: {name: trust, key: b.crt}
items:
- {apiVersion: v1, kind: Secret, metadata: {name: ca-a, namespace: gw}, data: {ca.crt: %s}}
- {apiVersion: v1, kind: Secret, metadata: {name: ca-b, namespace: gw}, data: {ca.crt: %s}}
- {apiVersion: v1, kind: Secret, metadata: {name: trust, namespace: gw}, data: {a.crt: %s, b.crt: %s}}
`, testpki.GoldenNow.Format(time.RFC3339), b64("ca-2026"), b64("signer-a-2"), b64("ca-2026", "ca-2025"), b64("signer-a-2", "signer-a-1"))
	out, err := execute(t, []byte(in))
	require.NoError(t, err, string(out))
	require.NotContains(t, string(out), "is ignored", "bundle b's key has no blocks in a's memory: nothing to judge")
	ann := trustIn(t, out, "gw").GetAnnotations()
	require.Equal(t, sortLines(strings.TrimSuffix(retiredLine("ca-2025", testpki.GoldenNow), "\n")+" a.crt\n"+
		strings.TrimSuffix(retiredLine("signer-a-1", testpki.GoldenNow), "\n")+" b.crt\n"), ann[trustbundle.RetiredAnnotation])
	require.Contains(t, ann[trustbundle.PreviousAnnotation], "Key: a.crt")
	require.Equal(t, []string{"ca-2025"}, subjects(t, []byte(ann[trustbundle.PreviousAnnotation])))

	// Switching bundle a back restores ca-2025 to a.crt only.
	again := rerender(t, out, "Copy", testpki.GoldenNow, nil)
	require.NotContains(t, string(again), "is ignored", "a Copy render of a reads its own blocks; b reads none")
	back := rerender(t, out, "Bundle", testpki.GoldenNow, nil)
	node := trustIn(t, back, "gw")
	for key, want := range map[string][]string{"a.crt": {"ca-2026", "ca-2025"}, "b.crt": {"signer-a-2", "signer-a-1"}} {
		v, found, err := kube.Lookup(node, key)
		require.NoError(t, err)
		require.True(t, found)
		require.Equal(t, want, subjects(t, v.Bytes), key)
	}
	_, remembers := node.GetAnnotations()[trustbundle.PreviousAnnotation]
	require.False(t, remembers)
}

// The Kyma gateway example promises a one-line rollback in both
// directions: render it in Bundle mode, flip to Copy, flip back.
func TestKymaExampleRollsBackBothWays(t *testing.T) {
	dir := golden.Path("examples", "kyma-gateway")
	var items []string
	for _, f := range []string{"gateway-ca.yaml", "gateway-cacert.yaml", "client-certs.yaml"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		require.NoError(t, err)
		for _, doc := range strings.Split(string(b), "\n---\n") {
			items = append(items, "- "+strings.ReplaceAll(strings.TrimSpace(stripComments(doc)), "\n", "\n  "))
		}
	}
	policy, err := os.ReadFile(filepath.Join(dir, "rotation-policy.yaml"))
	require.NoError(t, err)
	in := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nfunctionConfig:\n  " +
		strings.ReplaceAll(strings.TrimSpace(stripComments(string(policy))), "\n", "\n  ") + "\nitems:\n" + strings.Join(items, "\n") + "\n"
	now := testpki.Date(2027, 1, 1)
	// The example runs on the wall clock; pin it.
	in = strings.Replace(in, "spec:\n", fmt.Sprintf("spec:\n    now: %q\n", now.Format(time.RFC3339)), 1)
	key := kube.Key{Kind: "Secret", Namespace: "istio-system", Name: "kyma-gateway-certs-cacert"}
	cacert := func(rl []byte) []string {
		for _, it := range parseResourceList(t, rl).items {
			if kube.KeyOf(it) == key {
				v, found, err := kube.Lookup(it, "cacert")
				require.NoError(t, err)
				require.True(t, found)
				return subjects(t, v.Bytes)
			}
		}
		t.Fatal("no cacert Secret")
		return nil
	}
	bundled, err := execute(t, []byte(in))
	require.NoError(t, err, string(bundled))
	require.Equal(t, []string{"example-ca-new", "example-ca-old"}, cacert(bundled))
	copied := rerender(t, bundled, "Copy", now, nil)
	require.Equal(t, []string{"example-ca-new"}, cacert(copied))
	require.Contains(t, string(copied), "severity: warning", "the clients of the old CA are to re-issue")
	back := rerender(t, copied, "Bundle", now, nil)
	require.Equal(t, itemsOf(t, bundled), itemsOf(t, back))
}

// stripComments drops whole-line comments, so that documents can be
// indented into a ResourceList.
func stripComments(s string) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

// `check` lists the leaves to re-issue in Copy mode as in Bundle mode: the
// Kyma-like gateway of the golden case copy-mode-reissue, whose two old
// roots signed two valid client certificates.
func TestCheckListsCopyModeReissues(t *testing.T) {
	in := goldenInput(t, filepath.Join(goldenDir, "copy-mode-reissue"))
	for _, mode := range []string{"Copy", "Bundle"} {
		rl, err := yaml.Parse(strings.Replace(string(in), "mode: Copy", "mode: "+mode, 1))
		require.NoError(t, err)
		items, err := rl.Pipe(yaml.Lookup("items"))
		require.NoError(t, err)
		nodes, err := items.Elements()
		require.NoError(t, err)
		fnConfig, err := rl.Pipe(yaml.Lookup("functionConfig"))
		require.NoError(t, err)
		e, err := explainPolicy(t, nodes, fnConfig, testpki.GoldenNow)
		require.NoError(t, err)
		var where []string
		for _, r := range e.Reissues {
			where = append(where, r.Resource.String())
		}
		require.ElementsMatch(t, []string{"Secret kyma-system/runtime-a-client-cert", "Secret kyma-system/runtime-b-client-cert"}, where, mode)
	}
}
