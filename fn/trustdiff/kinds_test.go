package trustdiff

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"github.com/rotate-certs/rotate-certs/fn/why"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"sigs.k8s.io/kustomize/kyaml/kio"
)

// modelWith parses manifests into a Model by the kind tables of in.
func modelWith(t *testing.T, text string, in Input) *Model {
	t.Helper()
	items, err := (&kio.ByteReader{Reader: strings.NewReader(text), OmitReaderAnnotations: true}).Read()
	if err != nil {
		t.Fatal(err)
	}
	in.Items = items
	return Build(in)
}

// TestAddedTargetKind adds a made-up cluster-scoped TrustAnchor (PEM at
// spec.pem) by a row of the target-kind table, as the other packages'
// TestAddedTargetKind do, and sees diff read it as trust: its CA replaced
// is a trust change of the object's field. With the shipped table diff
// reads nothing there.
func TestAddedTargetKind(t *testing.T) {
	anchor := kube.TargetDescriptor{Kind: "TrustAnchor", Group: "example.com", Versions: []string{"example.com/v1"},
		Store: kube.StoreField, Field: []string{"spec", "pem"}}
	added := kube.NewTargetTable(append(kube.TargetKinds().Rows(), anchor)...)
	doc := func(ca string) string {
		pem := strings.ReplaceAll(strings.TrimSpace(string(testpki.Fixture(ca).PEM())), "\n", "\n    ")
		return "apiVersion: example.com/v1\nkind: TrustAnchor\nmetadata: {name: roots}\nspec:\n  pem: |\n    " + pem + "\n"
	}
	for _, tc := range []struct {
		name    string
		targets kube.TargetTable
		want    string
	}{
		{"shipped table", kube.TargetKinds(), ""},
		{"row added", added, "TrustAnchor roots spec.pem"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := Input{Targets: tc.targets}
			r := Compare(modelWith(t, doc("ca-2025"), in), modelWith(t, doc("ca-2026"), in), fuzzNow)
			got := ""
			for _, c := range r.Trust {
				got = c.Resource.String() + " " + c.Field
			}
			if got != tc.want || (got != "" && (len(r.Trust[0].Added) != 1 || len(r.Trust[0].Removed) != 1)) {
				t.Errorf("trust changes %+v: want %q, one CA added and one removed", r.Trust, tc.want)
			}
		})
	}
}

// TestAddedWorkloadKind adds OpenKruise's CloneSet by a row of the
// workload-kind table, as the other packages' TestAddedWorkloadKind do,
// and sees diff read it as a workload: a change of its template (at its
// row's path) is a roll, and it reads the trust its pods mount (a
// reader, as fn/restart's readers say by the same row). With the
// shipped table it is no workload and reads nothing.
func TestAddedWorkloadKind(t *testing.T) {
	added := policy.NewWorkloadTable(append(policy.WorkloadKinds().Rows(),
		policy.WorkloadKind{Kind: "CloneSet", APIVersions: []string{"apps.kruise.io/v1alpha1"}, Template: []string{"spec", "template"},
			Role: policy.RoleRolled, Replicas: true, ReplacesPods: true})...)
	doc := func(image string) string {
		return "apiVersion: apps.kruise.io/v1alpha1\nkind: CloneSet\nmetadata: {name: clone, namespace: a}\nspec:\n  replicas: 2\n  template:\n    spec:\n" +
			"      containers:\n      - name: c\n        image: " + image + "\n        volumeMounts: [{name: t, mountPath: /t}]\n" +
			"      volumes: [{name: t, secret: {secretName: trust}}]\n---\n" + trustSecret("trust", testpki.Fixture("ca-2026"))
	}
	for _, tc := range []struct {
		name  string
		kinds policy.WorkloadTable
		rolls int
	}{
		{"shipped table", policy.WorkloadKinds(), 0},
		{"row added", added, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := Input{workloads: tc.kinds}
			base, head := modelWith(t, doc("app:1"), in), modelWith(t, doc("app:2"), in)
			r := Compare(base, head, fuzzNow)
			if len(r.Rolls) != tc.rolls || len(rolled(base, head)) != tc.rolls {
				t.Errorf("rolls %+v: want %d", r.Rolls, tc.rolls)
			}
			if len(head.Trust) != 1 || len(head.Trust[0].Readers) != tc.rolls {
				t.Errorf("trust %+v: want %d consumer(s)", head.Trust, tc.rolls)
			}
		})
	}
}

// TestTemplateChangeThatReplacesNoPod: a workload that reads its trust
// once keeps the old trust after the change unless the change replaces
// its pods. The trust it reads is replaced (ca-2025 by ca-2026) and the
// server it calls presents a leaf of the new CA; the same change edits the
// reader's pod template. A Deployment's pods are replaced: no break. A
// ReplicaSet's are not (its row's roll behaviour): the new leaf against
// the old trust its pods keep is a break - none before the roll behaviour
// was read (a template change counted as a roll of any kind).
func TestTemplateChangeThatReplacesNoPod(t *testing.T) {
	b64 := func(c testpki.Cert) string { return base64.StdEncoding.EncodeToString(c.PEM()) }
	side := func(ca, leaf testpki.Cert, kind, image string) string {
		tmpl := "spec:\n      containers:\n      - name: c\n        image: " + image +
			"\n        env:\n        - {name: CA, valueFrom: {secretKeyRef: {name: trust, key: ca.crt}}}\n"
		return "apiVersion: v1\nkind: Secret\nmetadata: {name: trust, namespace: a}\ndata:\n  ca.crt: " + b64(ca) + "\n---\n" +
			"apiVersion: v1\nkind: Secret\nmetadata: {name: server, namespace: a}\ntype: kubernetes.io/tls\ndata:\n  tls.crt: " + b64(leaf) + "\n---\n" +
			"apiVersion: apps/v1\nkind: " + kind + "\nmetadata: {name: client, namespace: a}\nspec:\n  selector: {matchLabels: {app: c}}\n  template:\n    metadata: {labels: {app: c}}\n    " + tmpl
	}
	caOld, caNew := testpki.Fixture("ca-2025"), testpki.Fixture("ca-2026")
	for _, tc := range []struct {
		kind   string
		breaks bool
	}{{"Deployment", false}, {"ReplicaSet", true}} {
		t.Run(tc.kind, func(t *testing.T) {
			r := Compare(model(side(caOld, testpki.Fixture("leaf-old"), tc.kind, "app:1")),
				model(side(caNew, testpki.Fixture("leaf-new"), tc.kind, "app:2")), fuzzNow)
			if got := len(r.Breaks) > 0; got != tc.breaks {
				t.Errorf("breaks %+v: want a break: %t", r.Breaks, tc.breaks)
			}
		})
	}
}

// TestExplanationsJoinByAddress: the rules' explanation of a target is
// joined to the object by package, object key and field path - here a
// ClusterTrustBundle to which a kustomization's namespace: was applied:
// the API server keys it without the namespace, as the rules do. Joined
// by the words a message shows the target in ("ClusterTrustBundle
// ns/name"), before, it was explained by nothing.
func TestExplanationsJoinByAddress(t *testing.T) {
	ca := testpki.Fixture("ca-2026")
	pem := strings.ReplaceAll(strings.TrimSpace(string(ca.PEM())), "\n", "\n    ")
	text := "apiVersion: certificates.k8s.io/v1beta1\nkind: ClusterTrustBundle\nmetadata: {name: roots, namespace: set-by-kustomize}\n" +
		"spec:\n  signerName: example.com/roots\n  trustBundle: |\n    " + pem + "\n"
	items, err := (&kio.ByteReader{Reader: strings.NewReader(text), OmitReaderAnnotations: true}).Read()
	if err != nil {
		t.Fatal(err)
	}
	sha := sha(ca.Cert)
	row := why.Trusted{Package: "clusters/a", Bundle: "roots", Target: why.Address{Key: kube.Key{Kind: "ClusterTrustBundle", Name: "roots"}, Field: "spec.trustBundle"},
		SHA256: sha, Reason: why.TrustSource, Source: "Secret a/ca data.ca.crt"}
	m := Build(Input{Items: items, Packages: []Package{{Dir: "clusters/a", Items: items, Trust: []why.Trusted{row}}}})
	if len(m.Trust) != 1 || m.Trust[0].reasons[sha] != (reason{why: WhySource, source: "Secret a/ca data.ca.crt"}) || m.Trust[0].Bundle != "roots" {
		t.Fatalf("trust %+v: want the rules' reason joined by address", m.Trust)
	}
}
