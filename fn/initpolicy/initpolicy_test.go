package initpolicy

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/resio"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/pki"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
)

var (
	day0     = testpki.Date(2026, 1, 1)
	gwCA     = testpki.NewCA("gateway-ca", day0, testpki.Days(365))
	rootCA   = testpki.NewCA("extra-root", day0, testpki.Days(3650))
	interCA  = testpki.NewCA("intermediate", day0, testpki.Days(365))
	envoy    = testpki.NewLeaf("envoy.gw.svc", gwCA, day0, testpki.Days(90))
	chained  = testpki.NewLeaf("chained.gw.svc", interCA, day0, testpki.Days(90))
	dbCA     = testpki.NewCA("db-ca", day0, testpki.Days(365))
	b64      = func(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
	indented = func(b []byte, n int) string {
		pad := strings.Repeat(" ", n)
		return pad + strings.ReplaceAll(strings.TrimSuffix(string(b), "\n"), "\n", "\n"+pad)
	}
)

// repoManifests is a small repository: an issuer Secret, a leaf Secret
// carrying the same CA, a ConfigMap of extra roots, workloads, and things
// init must not propose.
func repoManifests() string {
	return repoObjects() + "---\n" + repoOthers() + "---\n" + repoWorkloads()
}

// repoObjects are the CA Secrets and ConfigMaps of repoManifests, and the
// target one of them already has.
func repoObjects() string {
	return `apiVersion: v1
kind: Secret
metadata:
  name: gateway-ca
  namespace: gw
type: kubernetes.io/tls
data:
  tls.crt: ` + b64(gwCA.PEM()) + `
  tls.key: ` + b64(gwCA.KeyPEM()) + `
  ca.crt: ` + b64(gwCA.PEM()) + `
---
apiVersion: v1
kind: Secret
metadata:
  name: envoy-tls
  namespace: gw
type: kubernetes.io/tls
data:
  ca.crt: ` + b64(gwCA.PEM()) + `
  tls.crt: ` + b64(envoy.PEM()) + `
  tls.key: ` + b64(envoy.KeyPEM()) + `
---
apiVersion: v1
kind: Secret
metadata:
  name: chained-tls
  namespace: gw
type: kubernetes.io/tls
stringData:
  tls.crt: |
` + indented(append(chained.PEM(), interCA.PEM()...), 4) + `
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: extra-roots
  namespace: gw
data:
  ca-bundle.crt: |
` + indented(rootCA.PEM(), 4) + `
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: extra-roots-trust
  namespace: gw
data:
  unrelated: "1"
`
}

// repoOthers are the other Secrets and ConfigMaps of repoManifests: one
// rotate-certs already renders, a snapshot (local config) and a manifest
// of a second CA, and a SOPS-encrypted Secret.
func repoOthers() string {
	return `apiVersion: v1
kind: Secret
metadata:
  name: gateway-trust-old
  namespace: gw
  annotations:
    rotate-certs.dev/bundle-hash: sha256:00
data:
  ca.crt: ` + b64(rootCA.PEM()) + `
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: local-ca
  annotations:
    config.kubernetes.io/local-config: "true"
data:
  ca.crt: |
` + indented(dbCA.PEM(), 4) + `
---
apiVersion: v1
kind: Secret
metadata:
  name: db-ca
stringData:
  ca.pem: |
` + indented(dbCA.PEM(), 4) + `
---
apiVersion: v1
kind: Secret
metadata:
  name: sealed
  namespace: gw
data:
  ca.crt: ENC[AES256_GCM,data:abc]
sops:
  version: 3.8.1
`
}

// repoWorkloads are the workloads and the control plane of repoManifests.
func repoWorkloads() string {
	return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: envoy
  namespace: gw
spec:
  template:
    spec:
      volumes:
      - name: ca
        secret:
          secretName: gateway-ca
      - name: roots
        projected:
          sources:
          - configMap:
              name: extra-roots
      containers:
      - name: envoy
        env:
        - name: CA_CERT
          valueFrom:
            secretKeyRef: {name: envoy-tls, key: ca.crt}
---
apiVersion: batch/v1
kind: CronJob
metadata:
  name: report
  namespace: gw
spec:
  jobTemplate:
    spec:
      template:
        spec:
          containers:
          - name: r
            envFrom:
            - configMapRef: {name: extra-roots}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: elsewhere
  namespace: other
spec:
  template:
    spec:
      volumes:
      - name: ca
        secret: {secretName: gateway-ca}
---
apiVersion: controlplane.cluster.x-k8s.io/v1beta1
kind: KubeadmControlPlane
metadata:
  name: prod
  namespace: capi
spec: {}
`
}

func parseAll(t *testing.T, text string) []*yaml.RNode {
	t.Helper()
	t.Chdir(t.TempDir())
	if err := os.Mkdir("repo", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("repo/all.yaml", []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	set := resio.ReadPaths([]string{"repo/all.yaml"}, nil)
	if len(set.Problems) > 0 {
		t.Fatal(set.Problems)
	}
	return set.Items
}

func TestScan(t *testing.T) {
	plan, err := Propose(parseAll(t, repoManifests()), day0)
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		name, source, key, target string
		also                      []string
		consumers                 []string
	}
	wants := []want{
		{
			name: "gateway-ca", source: "Secret gw/gateway-ca", key: "ca.crt", target: "Secret gw/gateway-ca-trust",
			also:      []string{"Secret gw/envoy-tls"},
			consumers: []string{"Deployment gw/envoy (volume ca)", "Deployment gw/envoy (env CA_CERT) via Secret gw/envoy-tls"},
		},
		{
			name: "extra-roots", source: "ConfigMap gw/extra-roots", key: "ca-bundle.crt", target: "ConfigMap gw/extra-roots-trust",
			consumers: []string{"Deployment gw/envoy (projected volume roots)", "CronJob gw/report (envFrom)"},
		},
		// local-ca is a snapshot (local config) of the same CA: a manifest
		// is the better source, the snapshot is listed beside it.
		{name: "db-ca", source: "Secret db-ca", key: "ca.pem", target: "Secret /db-ca-trust", also: []string{"ConfigMap local-ca"}},
	}
	if len(plan.Bundles) != len(wants) {
		t.Fatalf("got %d bundles, want %d: %+v", len(plan.Bundles), len(wants), plan.Bundles)
	}
	for i, w := range wants {
		b := plan.Bundles[i]
		if len(b.Sources) != 1 {
			t.Fatalf("bundle %s has %d sources, want 1", b.Name, len(b.Sources))
		}
		src := b.Sources[0]
		if b.Name != w.name || src.Ref.String() != w.source || src.Key != w.key {
			t.Errorf("bundle %d = %s from %s key %s, want %s from %s key %s", i, b.Name, src.Ref, src.Key, w.name, w.source, w.key)
		}
		if got := b.TargetKind + " " + b.TargetNamespace + "/" + b.TargetName; got != w.target {
			t.Errorf("bundle %s target %s, want %s", b.Name, got, w.target)
		}
		var also []string
		for _, a := range src.Also {
			also = append(also, a.Ref.String())
		}
		if strings.Join(also, ";") != strings.Join(w.also, ";") {
			t.Errorf("bundle %s also %v, want %v", b.Name, also, w.also)
		}
		var cons []string
		for _, c := range b.SourceReaders {
			cons = append(cons, c.String())
		}
		if strings.Join(cons, ";") != strings.Join(w.consumers, ";") {
			t.Errorf("bundle %s consumers %v, want %v", b.Name, cons, w.consumers)
		}
	}
	notes := strings.Join(plan.Notes, "\n")
	for _, w := range []string{"Secret gw/sealed is SOPS-encrypted", "Secret gw/gateway-trust-old is already a rotate-certs target"} {
		if !strings.Contains(notes, w) {
			t.Errorf("notes lack %q:\n%s", w, notes)
		}
	}
	if len(plan.ControlPlanes) != 1 || plan.ControlPlanes[0].String() != "KubeadmControlPlane capi/prod" {
		t.Errorf("control planes %v", plan.ControlPlanes)
	}
}

func TestScanPrefersTheIssuerSecret(t *testing.T) {
	// The leaf Secret comes first; the CA's own key pair still wins.
	text := strings.Join(strings.Split(repoManifests(), "\n---\n")[1:2], "") + "\n---\n" + strings.Split(repoManifests(), "\n---\n")[0]
	plan, err := Propose(parseAll(t, text), day0)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Bundles) != 1 || plan.Bundles[0].Sources[0].Ref.Name != "gateway-ca" || len(plan.Bundles[0].Sources[0].Also) != 1 {
		t.Fatalf("got %+v, want one bundle from gateway-ca with envoy-tls in Also", plan.Bundles)
	}
}

// secret is a Secret ns/name holding ca in ca.crt.
func secret(name, ns string, ca testpki.Cert) string {
	return "apiVersion: v1\nkind: Secret\nmetadata: {name: " + name + ", namespace: " + ns + "}\ndata:\n  ca.crt: " + b64(ca.PEM()) + "\n"
}

// existingTargetCases are inputs where a trust bundle already exists.
var existingTargetCases = []struct {
	name, text      string
	wantTarget      string // kind ns/name key
	wantNote        string
	wantBundleCount int
	wantSources     int // default 1
	wantExists      bool
}{
	{
		name: "a policy in the input keeps its target and key",
		text: secret("client-ca", "istio-system", gwCA) + "---\n" + secret("gateway-cacert", "istio-system", rootCA) + `---
apiVersion: rotate-certs.dev/v1alpha1
kind: RotationPolicy
metadata:
  name: kyma
  annotations: {config.kubernetes.io/local-config: "true"}
spec:
  trustBundles:
  - name: kyma
    sources:
    - secret: {name: client-ca, namespace: istio-system}
    target: {name: gateway-cacert, key: cacert}
`,
		wantTarget:      "Secret istio-system/gateway-cacert cacert",
		wantNote:        `Secret istio-system/gateway-cacert is the target of bundle "kyma" of RotationPolicy kyma: not a source`,
		wantExists:      true,
		wantBundleCount: 1,
	},
	{
		name: "a policy gathering two sources keeps them in one bundle",
		text: secret("signer-a", "pt", gwCA) + "---\n" + secret("signer-b", "pt", rootCA) + `---
apiVersion: rotate-certs.dev/v1alpha1
kind: RotationPolicy
metadata: {name: all}
spec:
  trustBundles:
  - name: all
    sources:
    - secret: {name: signer-a, namespace: pt}
    - secret: {name: signer-b, namespace: pt}
    target: {name: all-trust}
`,
		wantTarget:      "Secret pt/all-trust ca.crt",
		wantSources:     2,
		wantBundleCount: 1,
	},
	{
		name:            "an object named <source>-trust is the target, not a source",
		text:            secret("envoy-gateway", "eg", gwCA) + "---\n" + secret("envoy-gateway-trust", "eg", rootCA),
		wantTarget:      "Secret eg/envoy-gateway-trust ca.crt",
		wantNote:        "Secret eg/envoy-gateway-trust looks like the existing trust bundle of Secret eg/envoy-gateway",
		wantExists:      true,
		wantBundleCount: 1,
	},
}

// TestScanFindsExistingTargets covers the two ways init recognises a trust
// bundle that already exists: a RotationPolicy in the input that renders
// it, and an object named "<source>-trust".
func TestScanFindsExistingTargets(t *testing.T) {
	for _, tc := range existingTargetCases {
		t.Run(tc.name, func(t *testing.T) {
			plan, err := Propose(parseAll(t, tc.text), day0)
			if err != nil {
				t.Fatal(err)
			}
			if len(plan.Bundles) != tc.wantBundleCount {
				t.Fatalf("%d bundles, want %d: %+v", len(plan.Bundles), tc.wantBundleCount, plan.Bundles)
			}
			b := plan.Bundles[0]
			if got := b.TargetKind + " " + b.TargetNamespace + "/" + b.TargetName + " " + b.TargetKey; got != tc.wantTarget || b.targetExists != tc.wantExists {
				t.Errorf("target %s (exists %v), want %s (exists %v)", got, b.targetExists, tc.wantTarget, tc.wantExists)
			}
			if want := max(tc.wantSources, 1); len(b.Sources) != want {
				t.Errorf("%d sources, want %d", len(b.Sources), want)
			}
			if notes := strings.Join(plan.Notes, "\n"); !strings.Contains(notes, tc.wantNote) {
				t.Errorf("notes lack %q:\n%s", tc.wantNote, notes)
			}
			if _, err := plan.YAML(""); err != nil {
				t.Errorf("YAML: %v", err)
			}
		})
	}
}

// writtenPolicy scans the repository's manifests, writes the policy and
// decodes it.
func writtenPolicy(t *testing.T) (*Proposal, string, *yaml.RNode, *policy.RotationPolicy) {
	t.Helper()
	plan, err := Propose(parseAll(t, repoManifests()), day0)
	if err != nil {
		t.Fatal(err)
	}
	out, err := plan.YAML("")
	if err != nil {
		t.Fatal(err)
	}
	text := string(out)
	node, err := yaml.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	p, err := policy.Decode(node)
	if err != nil {
		t.Fatalf("decode: %v\n%s", err, text)
	}
	return plan, text, node, p
}

func TestYAMLIsAValidPolicy(t *testing.T) {
	plan, text, node, p := writtenPolicy(t)
	if p.Name() != DefaultName || len(p.Spec.TrustBundles) != 3 {
		t.Fatalf("policy %s with %d bundles:\n%s", p.Name(), len(p.Spec.TrustBundles), text)
	}
	gw := p.Spec.TrustBundles[0]
	if s := gw.Sources[0].Secret; s == nil || s.Name != "gateway-ca" || s.Namespace != "gw" || s.Key != "ca.crt" {
		t.Errorf("gateway source %+v", gw.Sources[0])
	}
	if tg := gw.Target; tg.Kind != "Secret" || tg.Name != "gateway-ca-trust" || tg.Key != "ca.crt" || len(tg.Namespaces) != 1 || tg.Namespaces[0] != "gw" {
		t.Errorf("gateway target %+v", tg)
	}
	if tg := p.Spec.TrustBundles[1].Target; tg.Kind != "ConfigMap" || tg.Key != "ca-bundle.crt" {
		t.Errorf("extra-roots target %+v", tg)
	}
	if !kubeLocal(node) {
		t.Errorf("policy is not marked local-config")
	}
	// Editors (yaml-language-server) read the schema from the first line.
	if first, _, _ := strings.Cut(text, "\n"); first != "# yaml-language-server: $schema="+SchemaURL {
		t.Errorf("first line %q does not name the schema", first)
	}
	for _, w := range []string{
		"# CA found in Secret gw/gateway-ca key ca.crt (repo/all.yaml):",
		"#   " + pki.Describe(gwCA.Cert),
		"# The target ConfigMap gw/extra-roots-trust exists: the CAs it holds now are carried over as previous CAs.",
		"# The same CA is also in Secret gw/envoy-tls key ca.crt (repo/all.yaml).",
		"#   Deployment gw/envoy (volume ca)",
		"#   CronJob gw/report (envFrom)",
		"# No workload in the input reads it.",
		"# note: Secret gw/sealed is SOPS-encrypted",
		"# Cluster API control planes found: KubeadmControlPlane capi/prod.",
	} {
		if !strings.Contains(text, w) {
			t.Errorf("output lacks %q:\n%s", w, text)
		}
	}
	for _, secret := range [][]byte{gwCA.KeyPEM(), envoy.KeyPEM()} {
		if strings.Contains(text, "PRIVATE KEY") || strings.Contains(text, b64(secret)[:40]) {
			t.Fatalf("output holds key material:\n%s", text)
		}
	}
	again, _ := plan.YAML("")
	if string(again) != text {
		t.Errorf("two writes of the same plan differ")
	}
}

func TestYAMLWithNothingFound(t *testing.T) {
	plan, err := Propose(parseAll(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {a: b}\n"), day0)
	if err != nil {
		t.Fatal(err)
	}
	out, err := plan.YAML("mine")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "trustBundles: []") || !strings.Contains(string(out), "name: mine") {
		t.Errorf("unexpected output:\n%s", out)
	}
}

func TestYAMLQuotesOddNames(t *testing.T) {
	// A name YAML would read as a number or boolean stays a string.
	plan := &Proposal{Bundles: []Bundle{{
		Name:       "123",
		Sources:    []Source{{Candidate: Candidate{Ref: refOf("Secret", "true", "123"), Key: "ca.crt"}}},
		TargetKind: "Secret", TargetName: "123-trust", TargetNamespace: "true",
	}}}
	out, err := plan.YAML("yes")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, w := range []string{`name: "yes"`, `name: "123"`, `namespaces: ["true"]`} {
		if !strings.Contains(string(out), w) {
			t.Errorf("output lacks %s:\n%s", w, out)
		}
	}
}

func TestRead(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, text string) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cm := func(name string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n"
	}
	write("a.yaml", cm("a")+"---\n"+cm("b"))
	write("sub/deeper/c.yml", cm("c"))
	write("sub/list.yaml", "apiVersion: v1\nkind: List\nitems:\n- "+strings.ReplaceAll(cm("d"), "\n", "\n  ")+"\n")
	write(".expected/config.yaml", cm("hidden"))
	write("kustomization.yaml", "resources: [a.yaml]\n")
	write("notes.txt", cm("not-yaml-extension"))
	write("chart/templates/x.yaml", "{{- if .Values.enabled }}\napiVersion: v1\nkind: ConfigMap\n{{- end }}\n")

	items, warnings, err := Read([]string{dir, "-"}, strings.NewReader(cm("stdin")))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range items {
		path, _ := fileOfNode(it)
		got = append(got, it.GetName()+"@"+filepath.Base(path))
	}
	want := "a@a.yaml b@a.yaml c@c.yml d@list.yaml stdin@." // stdin: no file
	if strings.Join(got, " ") != want {
		t.Errorf("read %v, want %s", got, want)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], filepath.Join("chart", "templates", "x.yaml")) {
		t.Errorf("warnings %q, want one about the Helm template", warnings)
	}
	if _, _, err := Read([]string{filepath.Join(dir, "missing")}, nil); err == nil {
		t.Errorf("reading a missing path succeeded")
	}
}

func kubeLocal(n *yaml.RNode) bool { return kube.IsLocalConfig(n) }

func refOf(kind, namespace, name string) kube.Ref {
	return kube.Ref{Kind: kind, Namespace: namespace, Name: name}
}

func fileOfNode(n *yaml.RNode) (string, int) { return kube.FileOf(n) }

// TestScanSkipsExpiredCAs: a CA that has expired is not proposed as a
// source (a bundle of only expired CAs fails to render), and a note says
// so; a value holding an expired and a valid CA is proposed.
func TestScanSkipsExpiredCAs(t *testing.T) {
	expired := testpki.NewCA("legacy-root", day0.AddDate(-2, 0, 0), testpki.Days(365))
	text := secret("legacy-root", "ns3", expired) + "---\n" + secret("envoy-gateway", "eg", gwCA)
	plan, err := Propose(parseAll(t, text), day0)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Bundles) != 1 || plan.Bundles[0].Sources[0].Ref.Name != "envoy-gateway" {
		t.Fatalf("bundles %+v, want only envoy-gateway", plan.Bundles)
	}
	want := "Secret ns3/legacy-root holds only CA certificates that have expired: not proposed as a source"
	if !slices.Contains(plan.Notes, want) {
		t.Errorf("notes %q lack %q", plan.Notes, want)
	}

	// The same CA is valid a year earlier.
	plan, err = Propose(parseAll(t, text), day0.AddDate(-2, 1, 0))
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Bundles) != 2 {
		t.Errorf("%d bundles before the CA expired, want 2", len(plan.Bundles))
	}
}

// TestScanProposesOnlyCASources: a leaf Secret carries, in ca.crt, the CA
// that issued its leaf. When that CA is an older root - one an existing
// trust bundle already carries, or an older CA of the same name than
// another source holds - the Secret is not proposed as a source (a
// bundle of it would pin the old root), and a note says why. A leaf
// Secret whose CA is found nowhere better is still a source.
func TestScanProposesOnlyCASources(t *testing.T) {
	oldCA := testpki.NewCA("gateway-ca", day0.AddDate(-1, 0, 0), testpki.Days(3650))
	newCA := testpki.NewCA("gateway-ca", day0, testpki.Days(3650))
	legacy := testpki.NewCA("legacy-ca", day0.AddDate(-1, 0, 0), testpki.Days(3650))
	otherCA := testpki.NewCA("billing-ca", day0, testpki.Days(3650))
	leafSecret := func(name, ns string, ca testpki.Cert) string {
		leaf := testpki.NewLeaf(name, ca, day0, testpki.Days(90))
		return "apiVersion: v1\nkind: Secret\nmetadata:\n  name: " + name + "\n  namespace: " + ns + "\ntype: kubernetes.io/tls\ndata:\n  ca.crt: " +
			b64(ca.PEM()) + "\n  tls.crt: " + b64(leaf.PEM()) + "\n  tls.key: " + b64(leaf.KeyPEM()) + "\n"
	}
	text := strings.Join([]string{
		leafSecret("envoy-gateway", "gw", newCA),
		leafSecret("ratelimit-client", "gw", oldCA),
		leafSecret("legacy-client", "gw", legacy),
		secret("envoy-gateway-trust", "gw", legacy),
		leafSecret("billing", "billing", otherCA),
	}, "---\n")
	plan, err := Propose(parseAll(t, text), day0.AddDate(0, 1, 0))
	if err != nil {
		t.Fatal(err)
	}
	var proposed []string
	for _, b := range plan.Bundles {
		proposed = append(proposed, b.Sources[0].Ref.String())
	}
	want := []string{"Secret gw/envoy-gateway", "Secret billing/billing"}
	if !slices.Equal(proposed, want) {
		t.Fatalf("proposed %q, want %q (notes %q)", proposed, want, plan.Notes)
	}
	for _, note := range []string{
		`Secret gw/ratelimit-client holds a leaf and, in ca.crt, the CA that issued it ("CN=gateway-ca,O=rotate-certs test", issued 2025-01-01): an older root than the one in Secret gw/envoy-gateway ca.crt (issued 2026-01-01) - not proposed as a source; re-issue the leaf from the current CA`,
		`Secret gw/legacy-client holds a leaf and, in ca.crt, the CA that issued it ("CN=legacy-ca,O=rotate-certs test", issued 2025-01-01): an older root that an existing trust bundle already carries as a previous CA - not proposed as a source; re-issue the leaf from the current CA`,
	} {
		if !slices.Contains(plan.Notes, note) {
			t.Errorf("notes %q\nlack %q", plan.Notes, note)
		}
	}
}

// TestScanReadsWorkloadsAsTheRestartRulesDo: init lists the readers of a
// CA from the same reading of pod templates as the restart rules, so the
// two agree on who reads a bundle. It lists ReplicaSets and Pods as well;
// a kind at an API version rotate-certs does not know is not read; a
// workload whose pod template is malformed is not listed, and a note names
// the resource and field (the error a render reports for it).
func TestScanReadsWorkloadsAsTheRestartRulesDo(t *testing.T) {
	workload := func(apiVersion, kind, name, body string) string {
		return "apiVersion: " + apiVersion + "\nkind: " + kind + "\nmetadata: {name: " + name + ", namespace: eg}\n" + body + "\n"
	}
	const reads = "{volumes: [{name: ca, projected: {sources: [{secret: {name: envoy-gateway}}]}}], containers: [{name: c, env: [{name: CA, valueFrom: {secretKeyRef: {name: envoy-gateway, key: ca.crt}}}]}]}"
	text := strings.Join([]string{
		secret("envoy-gateway", "eg", gwCA),
		workload("apps/v1", "ReplicaSet", "rs", "spec: {template: {spec: "+reads+"}}"),
		workload("v1", "Pod", "pod", "spec: "+reads),
		workload("extensions/v1beta1", "Deployment", "old-api", "spec: {template: {spec: "+reads+"}}"),
		workload("apps/v1", "Deployment", "bad-volumes", "spec: {template: {spec: {volumes: {name: ca}, containers: [{name: c, envFrom: [{secretRef: {name: envoy-gateway}}]}]}}}"),
		workload("apps/v1", "StatefulSet", "no-template", "spec: {replicas: 1}"),
		workload("batch/v1", "CronJob", "bad-env", "spec: {jobTemplate: {spec: {template: {spec: {containers: [{name: c, env: CA, envFrom: [{secretRef: {name: envoy-gateway}}]}]}}}}}"),
	}, "---\n")
	plan, err := Propose(parseAll(t, text), day0)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Bundles) != 1 {
		t.Fatalf("%d bundles, want 1", len(plan.Bundles))
	}
	var cons []string
	for _, c := range plan.Bundles[0].SourceReaders {
		cons = append(cons, c.String())
	}
	want := []string{"ReplicaSet eg/rs (projected volume ca, env CA)", "Pod eg/pod (projected volume ca, env CA)"}
	if !slices.Equal(cons, want) {
		t.Errorf("consumers %q, want %q", cons, want)
	}
	for _, note := range []string{
		"Deployment eg/bad-volumes is not listed as a reader of any CA: spec.template.spec.volumes: must be a list",
		"StatefulSet eg/no-template is not listed as a reader of any CA: spec.template: has no pod template (spec.template.spec): rotate-certs cannot tell what it reads or roll it",
		"CronJob eg/bad-env is not listed as a reader of any CA: spec.jobTemplate.spec.template.spec.containers[0].env: must be a list",
	} {
		if !slices.Contains(plan.Notes, note) {
			t.Errorf("notes %q\nlack %q", plan.Notes, note)
		}
	}
	if out, err := plan.YAML(""); err != nil || !strings.Contains(string(out), "# note: Deployment eg/bad-volumes is not listed") {
		t.Errorf("the written policy lacks the note (err %v):\n%s", err, out)
	}
}
