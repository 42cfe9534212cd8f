package rotate_test

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"testing"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/pki"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"github.com/rotate-certs/rotate-certs/fn/rotate"
	"github.com/rotate-certs/rotate-certs/fn/trustbundle"
	"github.com/rotate-certs/rotate-certs/fn/why"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// A Linkerd-shaped repository walked through Linkerd's own rotation
// procedure: the new anchor is bundled with the old one, the issuer is
// re-issued from the new anchor, then the old anchor goes. The workloads'
// certificates live in memory; the tests hold them and present them with
// their issuer as the chain.

// meshInput is the repository before the rotation: the anchor source holds
// anchor, the issuer Secret holds issuer, the trust roots ConfigMap holds
// roots as a hand-written manifest (no retirement record).
func meshInput(retain string, now time.Time, anchor, issuer string, roots ...string) []byte {
	b64 := func(name string) string { return base64.StdEncoding.EncodeToString(testpki.Fixture(name).PEM()) }
	var bundle []byte
	for _, r := range roots {
		bundle = append(bundle, testpki.Fixture(r).PEM()...)
	}
	return []byte(fmt.Sprintf(`apiVersion: config.kubernetes.io/v1
kind: ResourceList
functionConfig:
  apiVersion: rotate-certs.dev/v1alpha1
  kind: RotationPolicy
  metadata: {name: linkerd-trust}
  spec:
    now: %q
    trustBundles:
    - name: linkerd-anchors
      sources:
      - secret: {name: linkerd-trust-anchor, namespace: linkerd}
      target: {kind: ConfigMap, name: linkerd-identity-trust-roots, namespaces: [linkerd]}
      retain: %s
items:
- {apiVersion: v1, kind: Secret, metadata: {name: linkerd-trust-anchor, namespace: linkerd}, data: {ca.crt: %s}}
- {apiVersion: v1, kind: Secret, metadata: {name: linkerd-identity-issuer, namespace: linkerd}, data: {crt.pem: %s}}
- {apiVersion: v1, kind: ConfigMap, metadata: {name: linkerd-identity-trust-roots, namespace: linkerd}, data: {ca-bundle.crt: %q}}
`, now.Format(time.RFC3339), retain, b64(anchor), b64(issuer), string(bundle)))
}

// meshStep renders the output of the previous step again at now, with the
// anchor source and the issuer Secret holding the named fixtures: what a
// commit of the procedure's step and the next CI render do.
func meshStep(t *testing.T, prev []byte, now time.Time, anchor, issuer string) []byte {
	t.Helper()
	return rerender(t, prev, "Bundle", now, func(items *yaml.RNode) {
		for _, it := range items.Content() {
			node := yaml.NewRNode(it)
			switch node.GetName() {
			case "linkerd-trust-anchor":
				_, _, err := trustbundle.SetValue(node, "ca.crt", testpki.Fixture(anchor).PEM())
				require.NoError(t, err)
			case "linkerd-identity-issuer":
				_, _, err := trustbundle.SetValue(node, "crt.pem", testpki.Fixture(issuer).PEM())
				require.NoError(t, err)
			}
		}
	})
}

// meshRender renders a first input.
func meshRender(t *testing.T, in []byte) []byte {
	t.Helper()
	out, err := execute(t, in)
	require.NoError(t, err, string(out))
	return out
}

// meshBundle returns the certificates of the rendered trust roots.
func meshBundle(t *testing.T, out []byte) []*x509.Certificate {
	t.Helper()
	return valueCerts(t, out, kube.Key{Kind: "ConfigMap", Namespace: "linkerd", Name: "linkerd-identity-trust-roots"}, "ca-bundle.crt")
}

// valueCerts returns the certificates of value dataKey of object key in a
// rendered ResourceList; the value holds nothing but certificates.
func valueCerts(t *testing.T, out []byte, key kube.Key, dataKey string) []*x509.Certificate {
	t.Helper()
	for _, it := range parseResourceList(t, out).items {
		if kube.KeyOf(it) == key {
			v, found, err := kube.Lookup(it, dataKey)
			require.NoError(t, err)
			require.True(t, found)
			d, err := pki.DecodePEM(v.Bytes)
			require.NoError(t, err)
			require.Empty(t, d.SkippedTypes)
			return d.Certificates
		}
	}
	t.Fatalf("no %s in the output", key)
	return nil
}

// verifyChain verifies leaf, presented with issuer as its chain, against
// the bundle at at.
func verifyChain(leaf, issuer *x509.Certificate, bundle []*x509.Certificate, at time.Time) error {
	roots, inter := x509.NewCertPool(), x509.NewCertPool()
	for _, c := range bundle {
		roots.AddCert(c)
	}
	inter.AddCert(issuer)
	_, err := leaf.Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, CurrentTime: at, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}})
	return err
}

// explain is what `check` says of a rendered ResourceList at now.
func explain(t *testing.T, out []byte, now time.Time) rotate.Explanation {
	t.Helper()
	rl, err := yaml.Parse(string(out))
	require.NoError(t, err)
	fnConfig, err := rl.Pipe(yaml.Lookup("functionConfig"))
	require.NoError(t, err)
	e, err := explainPolicy(t, parseResourceList(t, out).items, fnConfig, now)
	require.NoError(t, err)
	return e
}

// explainPolicy is rotate's explanation of the policy fnConfig over
// items at now, as the repository pass asks it.
func explainPolicy(t *testing.T, items []*yaml.RNode, fnConfig *yaml.RNode, now time.Time) (rotate.Explanation, error) {
	t.Helper()
	pol, err := policy.Decode(fnConfig)
	require.NoError(t, err)
	return rotate.Processor{}.ExplainPolicy(items, fnConfig, pol, now)
}

// verdictOf returns the trust row of the carried CA subject's
// certificate, "" when there is none.
func verdictOf(e rotate.Explanation, ca string) string {
	fp := pki.FingerprintOf(testpki.Fixture(ca).Cert).String()
	for _, x := range e.Trust {
		if x.SHA256 == fp && x.Reason != why.TrustSource {
			return x.VerdictText
		}
	}
	return ""
}

func reissued(e rotate.Explanation) []string {
	var out []string
	for _, x := range e.Reissues {
		out = append(out, fmt.Sprintf("%s %s %s", x.Resource, x.Key, x.State))
	}
	return out
}

// The mesh procedure, with retain.dropUnusedAfter: the workloads'
// certificates of the old issuer verify against every rendered bundle
// until the issuer is re-issued and dropUnusedAfter has passed; those of
// the new issuer from the render that bundles the new anchor on. The
// first render starts the overlap although the new anchor was cut two days
// earlier, and each step's verdict and re-issue list say what to do next.
func TestMeshProcedureKeepsChainsVerifying(t *testing.T) {
	anchorCut := testpki.Date(2026, 11, 20)
	proxyOld := testpki.NewLeaf("web.emojivoto", testpki.Fixture("linkerd-issuer-old"), anchorCut, testpki.Days(3))
	proxyNew := testpki.NewLeaf("web.emojivoto.new", testpki.Fixture("linkerd-issuer-new"), testpki.Date(2026, 11, 22), testpki.Days(3))
	issuerOld, issuerNew := testpki.Fixture("linkerd-issuer-old").Cert, testpki.Fixture("linkerd-issuer-new").Cert
	retain := "{dropUnusedAfter: 72h}"

	// Before: the old anchor alone.
	t0 := testpki.Date(2026, 11, 19)
	out := meshRender(t, meshInput(retain, t0, "linkerd-anchor-old", "linkerd-issuer-old", "linkerd-anchor-old"))
	require.NoError(t, verifyChain(proxyOld.Cert, issuerOld, meshBundle(t, out), t0.Add(36*time.Hour)))

	// Step 1, two days after the anchor was cut: bundle the new anchor.
	t1 := testpki.Date(2026, 11, 22)
	out = meshStep(t, out, t1, "linkerd-anchor-new", "linkerd-issuer-old")
	require.Len(t, meshBundle(t, out), 2, "the first render keeps the old anchor")
	require.NoError(t, verifyChain(proxyOld.Cert, issuerOld, meshBundle(t, out), t1))
	require.NoError(t, verifyChain(proxyNew.Cert, issuerNew, meshBundle(t, out), t1), "the new issuer's workloads verify from the first render")
	e := explain(t, out, t1)
	require.Equal(t, "kept (maxPrevious)", verdictOf(e, "linkerd-anchor-old"))
	require.Equal(t, []string{"Secret linkerd/linkerd-identity-issuer data.crt.pem pending"}, reissued(e), "the issuer is to re-issue")

	// Days pass: the issuer still chains to the old anchor, which stays.
	t2 := t1.Add(5 * 24 * time.Hour)
	out = meshStep(t, out, t2, "linkerd-anchor-new", "linkerd-issuer-old")
	require.Len(t, meshBundle(t, out), 2)

	// Step 2: the issuer is re-issued from the new anchor. Nothing in git
	// chains to the old anchor any more, but the proxies hold certificates
	// of the old issuer until they renew: unused from this render, which
	// the target records, and kept for dropUnusedAfter from it - although
	// it retired five days ago.
	t3 := t2.Add(time.Hour)
	out = meshStep(t, out, t3, "linkerd-anchor-new", "linkerd-issuer-new")
	require.Len(t, meshBundle(t, out), 2, "retired five days ago, unused only from now: kept")
	// A proxy certificate the old issuer minted just before the re-issue,
	// valid for a day (Linkerd's default), still verifies.
	proxyLast := testpki.NewLeaf("web.emojivoto.last", testpki.Fixture("linkerd-issuer-old"), t2, testpki.Days(1))
	require.NoError(t, verifyChain(proxyLast.Cert, issuerOld, meshBundle(t, out), t3.Add(20*time.Hour)))
	require.Equal(t, unusedLine("linkerd-anchor-old", t3), meshRoots(t, out).GetAnnotations()[trustbundle.UnusedAnnotation])
	require.Equal(t, "unused: safe to drop now (leaves on 2026-11-30)", verdictOf(explain(t, out, t3), "linkerd-anchor-old"))
	require.Empty(t, explain(t, out, t3).Reissues)

	// Step 3: the first render after dropUnusedAfter since the re-issue.
	t4 := t3.Add(72*time.Hour + time.Minute)
	out = meshStep(t, out, t4, "linkerd-anchor-new", "linkerd-issuer-new")
	require.Len(t, meshBundle(t, out), 1, "unused for 72h: dropped")
	require.Error(t, verifyChain(proxyOld.Cert, issuerOld, meshBundle(t, out), t1), "the old anchor has gone")
	require.NoError(t, verifyChain(proxyNew.Cert, issuerNew, meshBundle(t, out), t1))
	require.NotContains(t, meshRoots(t, out).GetAnnotations(), trustbundle.UnusedAnnotation, "the record leaves with the CA")
}

// meshRoots returns the rendered trust roots ConfigMap.
func meshRoots(t *testing.T, out []byte) *yaml.RNode {
	t.Helper()
	key := kube.Key{Kind: "ConfigMap", Namespace: "linkerd", Name: "linkerd-identity-trust-roots"}
	for _, it := range parseResourceList(t, out).items {
		if kube.KeyOf(it) == key {
			return it
		}
	}
	t.Fatalf("no %s in the output", key)
	return nil
}

// unusedLine is the unused record of one CA, unused since at.
func unusedLine(ca string, at time.Time) string {
	return pki.FingerprintOf(testpki.Fixture(ca).Cert).String() + " " + at.UTC().Format(time.RFC3339) + "\n"
}

// Re-issued a day after the rotation, the old anchor stays, unused, until
// dropUnusedAfter has passed since the render that found it unused - not
// since its retirement: the workloads' certificates of the old issuer,
// which git never sees, keep verifying through that time.
func TestDropUnusedAfterCountsFromReissue(t *testing.T) {
	t1 := testpki.Date(2026, 11, 22)
	reissue := t1.Add(24 * time.Hour)
	proxyOld := testpki.NewLeaf("web.emojivoto", testpki.Fixture("linkerd-issuer-old"), t1, testpki.Days(5))
	out := meshRender(t, meshInput("{dropUnusedAfter: 72h}", t1, "linkerd-anchor-new", "linkerd-issuer-old", "linkerd-anchor-old"))
	out = meshStep(t, out, reissue, "linkerd-anchor-new", "linkerd-issuer-new")
	require.Len(t, meshBundle(t, out), 2)
	require.NoError(t, verifyChain(proxyOld.Cert, testpki.Fixture("linkerd-issuer-old").Cert, meshBundle(t, out), reissue.Add(36*time.Hour)))
	require.Equal(t, "unused: safe to drop now (leaves on 2026-11-26)", verdictOf(explain(t, out, reissue), "linkerd-anchor-old"))
	for _, s := range []struct {
		at   time.Time
		kept int
		why  string
	}{
		{t1.Add(72*time.Hour + time.Second), 2, "72h after the retirement, unused for 48h: kept"},
		{reissue.Add(72 * time.Hour), 2, "72h after the re-issue, the deadline itself: kept"},
		{reissue.Add(72*time.Hour + time.Second), 1, "past 72h after the re-issue: dropped"},
	} {
		out = meshStep(t, out, s.at, "linkerd-anchor-new", "linkerd-issuer-new")
		require.Len(t, meshBundle(t, out), s.kept, s.why)
	}
}

// retain.for with protectIssuers: the old anchor outlives retain.for while
// the issuer chains to it (the issue this fixes: it was dropped with an
// info result, and every proxy certificate stopped verifying).
func TestIssuerProtectsBeyondRetainFor(t *testing.T) {
	t1 := testpki.Date(2026, 11, 22)
	proxyOld := testpki.NewLeaf("web.emojivoto", testpki.Fixture("linkerd-issuer-old"), t1, testpki.Days(30))
	out := meshRender(t, meshInput("{for: 72h}", t1, "linkerd-anchor-new", "linkerd-issuer-old", "linkerd-anchor-old"))
	for _, later := range []time.Duration{24 * time.Hour, 96 * time.Hour, 20 * 24 * time.Hour} {
		out = meshStep(t, out, t1.Add(later), "linkerd-anchor-new", "linkerd-issuer-old")
		require.NoError(t, verifyChain(proxyOld.Cert, testpki.Fixture("linkerd-issuer-old").Cert, meshBundle(t, out), t1.Add(later)), "after %s", later)
	}
	require.Contains(t, string(out), "is kept beyond the retain policy because valid certificate(s) still chain to it")
	e := explain(t, out, t1.Add(20*24*time.Hour))
	require.Equal(t, "kept (protected by Secret linkerd/linkerd-identity-issuer data.crt.pem)", verdictOf(e, "linkerd-anchor-old"))
	require.Equal(t, []string{"Secret linkerd/linkerd-identity-issuer data.crt.pem protected"}, reissued(e))
}

// protectIssuers: false lets retain.for drop the anchor the issuer still
// needs: the drop is a warning naming the issuer, and the issuer is broken
// - at that render and at every later one, until it is re-issued; never
// ok.
func TestBrokenUntilReissued(t *testing.T) {
	t1 := testpki.Date(2026, 11, 22)
	out := meshRender(t, meshInput("{for: 24h, protectIssuers: false}", t1, "linkerd-anchor-new", "linkerd-issuer-old", "linkerd-anchor-old"))
	out = meshStep(t, out, t1.Add(48*time.Hour), "linkerd-anchor-new", "linkerd-issuer-old")
	require.Len(t, meshBundle(t, out), 1)
	require.Contains(t, string(out), "although valid certificate(s) still chain to it")
	for _, later := range []time.Duration{48 * time.Hour, 30 * 24 * time.Hour} {
		out = meshStep(t, out, t1.Add(later), "linkerd-anchor-new", "linkerd-issuer-old")
		e := explain(t, out, t1.Add(later))
		require.Equal(t, []string{"Secret linkerd/linkerd-identity-issuer data.crt.pem broken"}, reissued(e), "after %s", later)
	}
	out = meshStep(t, out, t1.Add(31*24*time.Hour), "linkerd-anchor-new", "linkerd-issuer-new")
	require.Empty(t, explain(t, out, t1.Add(31*24*time.Hour)).Reissues, "re-issued: off the list")
}

// serverHandshake runs a real TLS handshake on loopback at the simulated
// time at: the server presents leaf with issuer as its chain (what a
// Linkerd proxy or an Istio sidecar sends), the client trusts bundle
// alone. It returns the client's verdict.
func serverHandshake(t *testing.T, bundle []*x509.Certificate, leaf testpki.Cert, issuer *x509.Certificate, at time.Time) error {
	t.Helper()
	roots := x509.NewCertPool()
	for _, c := range bundle {
		roots.AddCert(c)
	}
	cert := leaf.TLS()
	cert.Certificate = append(cert.Certificate, issuer.Raw)
	clock := func() time.Time { return at }
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}, Time: clock, MinVersion: tls.VersionTLS13})
	require.NoError(t, err)
	defer ln.Close()
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		_ = conn.(*tls.Conn).Handshake()
	}()
	conn, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{RootCAs: roots, ServerName: leaf.Cert.DNSNames[0], Time: clock, MinVersion: tls.VersionTLS13})
	if err == nil {
		conn.Close()
	}
	return err
}

// TestTLSChainThroughTheMeshProcedure: a server presents a workload
// certificate and the issuer that signed it, a client trusts the bundle
// each step of the mesh procedure renders. The old issuer's chain is
// accepted from before the rotation until dropUnusedAfter has passed
// since the issuer was re-issued (not since the rotation); the new issuer's chain from the first
// render on. A render that drops the old anchor while the issuer still
// needs it (protectIssuers: false) breaks the old chain: the test can see
// the outage the rules prevent.
func TestTLSChainThroughTheMeshProcedure(t *testing.T) {
	t1 := testpki.Date(2026, 11, 22)
	issuerOld, issuerNew := testpki.Fixture("linkerd-issuer-old"), testpki.Fixture("linkerd-issuer-new")
	web := testpki.NewLeaf("web.emojivoto.svc", issuerOld, t1.Add(-24*time.Hour), testpki.Days(10))
	webNew := testpki.NewLeaf("web-new.emojivoto.svc", issuerNew, t1, testpki.Days(10))
	type step struct {
		name           string
		at             time.Time
		anchor, issuer string
		oldOK, newOK   bool
		bundleCerts    int
	}
	out := meshRender(t, meshInput("{dropUnusedAfter: 72h}", t1.Add(-48*time.Hour), "linkerd-anchor-old", "linkerd-issuer-old", "linkerd-anchor-old"))
	for _, s := range []step{
		{"before: the old anchor alone", t1.Add(-2 * time.Hour), "linkerd-anchor-old", "linkerd-issuer-old", true, false, 1},
		{"1. the new anchor bundled with the old", t1, "linkerd-anchor-new", "linkerd-issuer-old", true, true, 2},
		{"   a day later, the issuer not yet re-issued", t1.Add(24 * time.Hour), "linkerd-anchor-new", "linkerd-issuer-old", true, true, 2},
		{"2. the issuer re-issued from the new anchor", t1.Add(48 * time.Hour), "linkerd-anchor-new", "linkerd-issuer-new", true, true, 2},
		{"   a day later, proxies still on the old issuer", t1.Add(72*time.Hour + time.Minute), "linkerd-anchor-new", "linkerd-issuer-new", true, true, 2},
		{"3. dropUnusedAfter (72h) has passed since the re-issue: the old anchor goes", t1.Add(120*time.Hour + time.Minute), "linkerd-anchor-new", "linkerd-issuer-new", false, true, 1},
	} {
		out = meshStep(t, out, s.at, s.anchor, s.issuer)
		bundle := meshBundle(t, out)
		require.Len(t, bundle, s.bundleCerts, s.name)
		check := func(ok bool, leaf testpki.Cert, issuer *x509.Certificate, which string) {
			err := serverHandshake(t, bundle, leaf, issuer, s.at.Add(time.Hour))
			if ok {
				require.NoError(t, err, "%s: the %s chain must be accepted", s.name, which)
			} else {
				require.ErrorContains(t, err, "certificate signed by unknown authority", "%s: the %s chain", s.name, which)
			}
		}
		check(s.oldOK, web, issuerOld.Cert, "old issuer's")
		if !s.at.Before(t1) { // the new issuer's certificates exist from t1
			check(s.newOK, webNew, issuerNew.Cert, "new issuer's")
		}
	}

	// The control: protectIssuers off, retain.for shorter than the time
	// the issuer takes to be re-issued.
	out = meshRender(t, meshInput("{for: 24h, protectIssuers: false}", t1, "linkerd-anchor-new", "linkerd-issuer-old", "linkerd-anchor-old"))
	out = meshStep(t, out, t1.Add(48*time.Hour), "linkerd-anchor-new", "linkerd-issuer-old")
	require.ErrorContains(t, serverHandshake(t, meshBundle(t, out), web, issuerOld.Cert, t1.Add(48*time.Hour)), "certificate signed by unknown authority",
		"dropping the anchor while the issuer still chains to it breaks every workload certificate")
}

// TestTrustReasons: `check` says why each bundle holds each CA - the
// source it was read from, carried from the target's data, or restored
// from Copy-mode memory on a switch back to Bundle mode - and the
// previous CA's verdict; targets that agree are one set of rows.
func TestTrustReasons(t *testing.T) {
	now := testpki.GoldenNow
	bundled, err := execute(t, memoryInput("Bundle"))
	require.NoError(t, err, string(bundled))
	rows := func(e rotate.Explanation) []string {
		var out []string
		for _, x := range e.Trust {
			detail := "from " + x.Source
			if x.Reason != why.TrustSource {
				detail = fmt.Sprintf("%s, retired %s, chained by %d", x.VerdictText, x.RetiredAt.Format(time.DateOnly), len(x.ChainedBy))
			}
			out = append(out, fmt.Sprintf("%s %d %s %s: %s", x.Target, x.Targets, x.Subject, x.Reason, detail))
		}
		return out
	}
	require.Equal(t, []string{
		"Secret gw/trust data.ca.crt 1 CN=ca-2026,O=rotate-certs test source: from Secret gw/ca data.ca.crt",
		"Secret gw/trust data.ca.crt 1 CN=ca-2025,O=rotate-certs test carried: kept (maxPrevious), retired 2026-11-22, chained by 1",
		"Secret edge/trust data.ca.crt 1 CN=ca-2026,O=rotate-certs test source: from Secret gw/ca data.ca.crt",
	}, rows(explain(t, bundled, now)), "in the order of the render: each target's current CAs, then its previous ones")

	// Copy mode sets ca-2025 aside in the annotation; the check of the
	// Copy-mode render, in Bundle mode again, restores it.
	copied := rerender(t, bundled, "Copy", now, nil)
	back, err := yaml.Parse(string(copied))
	require.NoError(t, err)
	b, err := back.Pipe(yaml.Lookup("functionConfig", "spec", "trustBundles", "0"))
	require.NoError(t, err)
	require.NoError(t, b.PipeE(yaml.SetField("mode", yaml.NewStringRNode("Bundle"))))
	require.Contains(t, rows(explain(t, []byte(back.MustString()), now)),
		"Secret gw/trust data.ca.crt 1 CN=ca-2025,O=rotate-certs test restored: kept (maxPrevious), retired 2026-11-22, chained by 1")
}
