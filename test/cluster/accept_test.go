package cluster

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/internal/controlplane"
	"github.com/rotate-certs/rotate-certs/internal/e2eharness"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// renderPackage expands testdata/<name>, renders it in place with
// `rotate-certs render` and returns the package directory, what would be
// applied before and after the render, and the function's stderr.
func renderPackage(t *testing.T, name string) (dir, before, rendered, stderr string) {
	t.Helper()
	dir = expandPackage(t, name, "")
	before = clusterResources(t, dir)
	stderr = renderDir(t, dir)
	return dir, before, clusterResources(t, dir), stderr
}

// renderDir runs `rotate-certs render` on dir with its rotation-policy.yaml
// and returns stderr (warnings); a failed render fails the test.
func renderDir(t *testing.T, dir string) string {
	t.Helper()
	r := e2eharness.Cmd{Dir: dir, Ctx: ctx(t)}.Run(t, binary, "render", ".", "--policy", "rotation-policy.yaml")
	if r.Err != nil {
		t.Fatalf("rotate-certs render: %v\n%s", r.Err, r.Stderr)
	}
	return r.Stderr
}

// changedObjects returns the objects of rendered that the render created
// or changed, each as a YAML document.
func changedObjects(t *testing.T, before, rendered string) map[string]string {
	t.Helper()
	old := map[string]string{}
	for _, it := range parseStream(t, before) {
		old[nodeKey(it)] = canonicalJSON(t, it)
	}
	out := map[string]string{}
	for _, it := range parseStream(t, rendered) {
		if old[nodeKey(it)] != canonicalJSON(t, it) {
			out[nodeKey(it)] = it.MustString()
		}
	}
	return out
}

func nodeKey(it *yaml.RNode) string {
	o := object{Kind: it.GetKind()}
	o.Metadata.Name, o.Metadata.Namespace = it.GetName(), it.GetNamespace()
	return o.key()
}

func canonicalJSON(t *testing.T, it *yaml.RNode) string {
	t.Helper()
	b, err := it.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// acceptRendered checks what the render wrote against the API server:
// every created or changed object alone through `kubectl apply
// --server-side --dry-run=server` (each apiVersion validated on its own),
// then the whole render applied for real, and each changed object read
// back in its own apiVersion holding every field the render wrote - a
// field the schema prunes or the server rewrites would differ. Objects in
// skip (stored in another version without a conversion webhook) are not
// read back. It returns the changed objects it checked.
func acceptRendered(t *testing.T, cp *controlplane.ControlPlane, before, rendered string, skip map[string]bool) []string {
	t.Helper()
	changed := changedObjects(t, before, rendered)
	if len(changed) == 0 {
		t.Fatal("the render changed nothing: nothing to check")
	}
	ensureNamespaces(t, cp, rendered)
	for _, k := range keys(changed) {
		if _, err := kubectl(t, cp, changed[k], "apply", "--server-side", "--field-manager="+fieldManager, "--dry-run=server", "-f", "-"); err != nil {
			t.Errorf("the API server refuses %s (dry run): %v", k, err)
		}
	}
	apply(t, cp, rendered, fieldManager)
	for _, k := range keys(changed) {
		if skip[k] {
			continue
		}
		for _, d := range subsetDiff(normalize(t, yamlToJSON(t, changed[k])), normalize(t, getOne(t, cp, changed[k])), k) {
			t.Errorf("read back: %s", d)
		}
	}
	return keys(changed)
}

// getOne returns the live object of a one-object document as JSON.
func getOne(t *testing.T, cp *controlplane.ControlPlane, doc string) []byte {
	t.Helper()
	out := mustKubectl(t, cp, doc, "get", "-f", "-", "-o", "json")
	var list struct {
		Kind  string            `json:"kind"`
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatal(err)
	}
	if list.Kind != "List" {
		return []byte(out)
	}
	if len(list.Items) != 1 {
		t.Fatalf("kubectl get of one object gave %d", len(list.Items))
	}
	return list.Items[0]
}

func yamlToJSON(t *testing.T, doc string) []byte {
	t.Helper()
	node, err := yaml.Parse(doc)
	if err != nil {
		t.Fatal(err)
	}
	b, err := node.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// normalize decodes an object for comparison: a Secret's stringData is
// folded into data as the API server does, and Secret data and ConfigMap
// binaryData are compared decoded.
func normalize(t *testing.T, raw []byte) map[string]any {
	t.Helper()
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		t.Fatal(err)
	}
	decode := func(field string) {
		m, _ := obj[field].(map[string]any)
		for k, v := range m {
			s, _ := v.(string)
			b, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				t.Fatalf("%s.%s is not base64: %v", field, k, err)
			}
			m[k] = string(b)
		}
	}
	switch obj["kind"] {
	case "Secret":
		decode("data")
		if sd, ok := obj["stringData"].(map[string]any); ok {
			data, _ := obj["data"].(map[string]any)
			if data == nil {
				data = map[string]any{}
				obj["data"] = data
			}
			for k, v := range sd {
				data[k] = v
			}
			delete(obj, "stringData")
		}
	case "ConfigMap":
		decode("binaryData")
	}
	return obj
}

// subsetDiff lists where got lacks or differs from a value of want; lists
// must have the same length and match element by element.
func subsetDiff(want, got any, path string) []string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: want an object, got %v", path, got)}
		}
		var out []string
		for _, k := range slices.Sorted(maps.Keys(w)) {
			out = append(out, subsetDiff(w[k], g[k], path+"."+k)...)
		}
		return out
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return []string{fmt.Sprintf("%s: want %d elements, got %v", path, len(w), got)}
		}
		var out []string
		for i := range w {
			out = append(out, subsetDiff(w[i], g[i], fmt.Sprintf("%s[%d]", path, i))...)
		}
		return out
	default:
		if !reflect.DeepEqual(want, got) {
			return []string{fmt.Sprintf("%s: wrote %v, the API server holds %v", path, want, got)}
		}
		return nil
	}
}

// TestAPIServerAcceptsTargets: every shape of trust bundle target the
// function writes - Secret data and stringData, a ConfigMap, a created
// ConfigMap, PKCS#12 and JKS truststores in a ConfigMap's binaryData and a
// Secret's data - passes a server-side dry run and is stored as written.
func TestAPIServerAcceptsTargets(t *testing.T) {
	controlplane.RequireBinaries(t)
	cp := startControlPlane(t)
	_, before, rendered, _ := renderPackage(t, "targets")
	apply(t, cp, before, fieldManager)
	checked := acceptRendered(t, cp, before, rendered, nil)
	want := []string{
		"ConfigMap accept/trust-configmap", "ConfigMap accept/trust-created", "ConfigMap accept/trust-stores",
		"Secret accept/trust-data", "Secret accept/trust-stores-secret", "Secret accept/trust-stringdata",
	}
	if !slices.Equal(checked, want) {
		t.Errorf("checked %v, want every target %v", checked, want)
	}
}

// TestAPIServerAcceptsBinaryDataMove: a ConfigMap target whose bundle key
// was in binaryData is written with the key in data and without the
// binaryData copy; the API server accepts the change under server-side
// apply and under client-side apply (Argo CD's default), keeps the other
// binaryData key, and refuses the object that kept both copies.
func TestAPIServerAcceptsBinaryDataMove(t *testing.T) {
	controlplane.RequireBinaries(t)
	cp := startControlPlane(t)
	_, before, rendered, _ := renderPackage(t, "binarydata")
	const name = "ConfigMap accept/trust-binary"
	for _, applyMode := range []string{"server-side", "client-side"} {
		t.Run(applyMode, func(t *testing.T) {
			args := []string{"apply", "-f", "-"}
			if applyMode == "server-side" {
				args = append(args, "--server-side", "--field-manager="+fieldManager)
			}
			ensureNamespaces(t, cp, before)
			mustKubectl(t, cp, "", "delete", "configmap", "trust-binary", "-n", "accept", "--ignore-not-found")
			mustKubectl(t, cp, before, args...)
			mustKubectl(t, cp, rendered, args...)
			live := getStream(t, cp, rendered)
			var cm object
			for _, o := range live {
				if o.key() == name {
					cm = o
				}
			}
			if _, ok := cm.Data["ca-bundle.crt"]; !ok {
				t.Errorf("%s has no data.ca-bundle.crt after the apply: %v", name, cm.Data)
			}
			if _, ok := cm.BinaryData["ca-bundle.crt"]; ok {
				t.Errorf("%s still has binaryData.ca-bundle.crt", name)
			}
			if cm.BinaryData["other.bin"] != "AAECAw==" || cm.Data["readme.txt"] == nil {
				t.Errorf("%s lost its other keys: data %v, binaryData %v", name, keys(cm.Data), cm.BinaryData)
			}
		})
	}
	// The control: the same object with both copies is refused.
	both := strings.Replace(rendered, "  other.bin: AAECAw==", "  other.bin: AAECAw==\n  ca-bundle.crt: AAECAw==", 1)
	if both == rendered {
		t.Fatal("could not build the control object (no binaryData other.bin in the render)")
	}
	if _, err := kubectl(t, cp, both, "apply", "--server-side", "--field-manager="+fieldManager, "--dry-run=server", "-f", "-"); !errContains(err, "duplicate of key present in binaryData") {
		t.Errorf("a ConfigMap holding ca-bundle.crt in data and binaryData: %v, want the API server's duplicate-key refusal", err)
	}
}

// TestImmutableTargetRefusalAndRecovery tests what the docs say of an
// (docs/reference/bundle-rules.md, Decisions in detail)
// immutable: true target: the render warns on the field immutable; kubectl
// apply is refused with "field is immutable"; deleting and re-creating the
// object (kubectl replace --force) applies the bundle; dropping the field
// from the manifest does not get an update through while the live object is
// immutable - it takes effect once the object is re-created; and a render
// that only adds the bundle annotations applies in place.
func TestImmutableTargetRefusalAndRecovery(t *testing.T) {
	controlplane.RequireBinaries(t)
	cp := startControlPlane(t)
	_, before, rendered, stderr := renderPackage(t, "immutable")
	if !strings.Contains(stderr, "trust-immutable is immutable: true") || strings.Contains(stderr, "trust-immutable-same is immutable") {
		t.Errorf("the render should warn about trust-immutable only:\n%s", stderr)
	}
	apply(t, cp, before, fieldManager)
	docs := changedObjects(t, before, rendered)
	changing, same := docs["Secret accept/trust-immutable"], docs["Secret accept/trust-immutable-same"]
	if changing == "" || same == "" {
		t.Fatalf("the render should change both targets, changed %v", keys(docs))
	}

	// Metadata stays mutable: the annotations-only render applies.
	mustKubectl(t, cp, same, "apply", "--server-side", "--field-manager="+fieldManager, "-f", "-")

	// The refusal, server-side and client-side.
	for _, args := range [][]string{
		{"apply", "--server-side", "--field-manager=" + fieldManager, "-f", "-"},
		{"apply", "-f", "-"},
	} {
		if _, err := kubectl(t, cp, changing, args...); !errContains(err, "field is immutable") {
			t.Errorf("kubectl %s of the changed immutable target: %v, want a refusal with \"field is immutable\"", strings.Join(args, " "), err)
		}
	}

	// Dropping the field does not get through while the live object is
	// immutable.
	node, err := yaml.Parse(changing)
	if err != nil {
		t.Fatal(err)
	}
	if err := node.PipeE(yaml.Clear("immutable")); err != nil {
		t.Fatal(err)
	}
	dropped := node.MustString()
	_, err = kubectl(t, cp, dropped, "apply", "--server-side", "--field-manager="+fieldManager, "-f", "-")
	if !errContains(err, "immutable: Forbidden: field is immutable") {
		t.Errorf("applying the target without immutable: %v, want a refusal of the field immutable itself: the live object is still immutable", err)
	}

	// The recovery: delete and re-create.
	mustKubectl(t, cp, changing, "replace", "--force", "-f", "-")
	for _, d := range subsetDiff(normalize(t, yamlToJSON(t, changing)), normalize(t, getOne(t, cp, changing)), "trust-immutable") {
		t.Errorf("after replace --force: %s", d)
	}

	// Re-created without the field, the object takes the next bundle in
	// place.
	mustKubectl(t, cp, dropped, "replace", "--force", "-f", "-")
	next := strings.Replace(dropped, "rotate-certs.dev/rotated-at:", "example.invalid/next-render: \"yes\"\n    rotate-certs.dev/rotated-at:", 1)
	if next == dropped {
		t.Fatal("could not derive a next render")
	}
	mustKubectl(t, cp, next, "apply", "--server-side", "--field-manager="+fieldManager, "-f", "-")
}

// TestAPIServerAcceptsClusterAPIFields: KubeadmControlPlane and
// KubeadmControlPlaneTemplate of v1beta1 and v1beta2 with the expiry field
// the function writes, against Cluster API's CRDs. Each version is
// validated on its own (a dry run per object) and read back from a CRD that
// stores that version (without the conversion webhook, a read-back across
// versions loses fields). A value below the v1beta2 schema's minimum is
// refused: the schema is live.
func TestAPIServerAcceptsClusterAPIFields(t *testing.T) {
	controlplane.RequireBinaries(t)
	_, before, rendered, _ := renderPackage(t, "clusterapi")
	files := clusterAPICRDs(t, "KubeadmControlPlane", "KubeadmControlPlaneTemplate")
	for _, version := range []string{"v1beta1", "v1beta2"} {
		t.Run("storage-"+version, func(t *testing.T) {
			cp := startControlPlane(t)
			stored := withStorage(t, files, "controlplane.cluster.x-k8s.io", version)
			installCRDs(t, cp, stored...)
			apply(t, cp, before, fieldManager)
			checked := acceptRendered(t, cp, before, rendered, notStored(t, readCRDs(t, stored), rendered))
			if len(checked) != 4 {
				t.Errorf("checked %v, want the four control planes", checked)
			}
			tooSmall := strings.Replace(docOf(t, rendered, "KubeadmControlPlane capi/kcp-v1beta2"), "certificatesExpiryDays: 30", "certificatesExpiryDays: 5", 1)
			if _, err := kubectl(t, cp, tooSmall, "apply", "--server-side", "--field-manager="+fieldManager, "--dry-run=server", "-f", "-"); !errContains(err, "certificatesExpiryDays") {
				t.Errorf("certificatesExpiryDays: 5 on v1beta2: %v, want the schema's refusal", err)
			}
		})
	}
}

// docOf returns the document of the stream with the given key.
func docOf(t *testing.T, stream, key string) string {
	t.Helper()
	for _, it := range parseStream(t, stream) {
		if nodeKey(it) == key {
			return it.MustString()
		}
	}
	t.Fatalf("%s not in the stream", key)
	return ""
}

// TestAPIServerAcceptsPrometheusRule: the PrometheusRule of spec.alerts
// against the Prometheus Operator's CRD.
func TestAPIServerAcceptsPrometheusRule(t *testing.T) {
	controlplane.RequireBinaries(t)
	_, before, rendered, _ := renderPackage(t, "alerts")
	cp := startControlPlane(t)
	installCRDs(t, cp, prometheusRuleCRD(t))
	apply(t, cp, before, fieldManager)
	checked := acceptRendered(t, cp, before, rendered, nil)
	if !slices.Contains(checked, "PrometheusRule monitoring/rotate-certs-expiry") {
		t.Errorf("checked %v, want the PrometheusRule", checked)
	}
}

// TestAPIServerAcceptsEtcdTemplateCopy: the etcd roll of the EKS Anywhere
// example - a copy of the machine template and the EtcdadmCluster pointing
// at it - against stand-in CRDs (the upstream ones are not on the module
// proxy): the copy carries nothing of its original's server fields that
// would make a create fail.
func TestAPIServerAcceptsEtcdTemplateCopy(t *testing.T) {
	controlplane.RequireBinaries(t)
	root := stage(t, "eks-anywhere-etcd")
	dir := filepath.Join(root, "examples", "eks-anywhere-etcd")
	before := clusterResources(t, dir)
	renderDir(t, dir)
	rendered := clusterResources(t, dir)
	cp := startControlPlane(t)
	installCRDs(t, cp, standInCRD("etcdadmclusters"), standInCRD("vspheremachinetemplates"))
	apply(t, cp, before, fieldManager)
	checked := acceptRendered(t, cp, before, rendered, nil)
	var copies int
	for _, k := range checked {
		// the copy's name is the original's trailing number incremented
		if k == "VSphereMachineTemplate eksa-system/prod-etcd-template-1763600000001" {
			copies++
		}
	}
	if copies != 1 || !slices.Contains(checked, "EtcdadmCluster eksa-system/prod-etcd") {
		t.Errorf("checked %v, want one template copy and the EtcdadmCluster", checked)
	}
}

// TestAPIServerAcceptsTrustKinds: what the function writes where
// Kubernetes itself keeps trust - the caBundle of every webhook of a
// ValidatingWebhookConfiguration, of one listed webhook of a
// MutatingWebhookConfiguration, of an APIService and of a CRD's conversion
// webhook (asked for by its inject-ca-from annotation), a created
// ClusterTrustBundle for a signer and an updated one without, and a
// trust-manager Bundle under trust-manager's own CRD - passes a
// server-side dry run and is stored as written. A re-render changes none
// of them.
func TestAPIServerAcceptsTrustKinds(t *testing.T) {
	controlplane.RequireBinaries(t)
	dir, before, rendered, _ := renderPackage(t, "kinds")
	cp := startControlPlane(t)
	installCRDs(t, cp, trustManagerBundleCRD(t))
	apply(t, cp, before, fieldManager)
	checked := acceptRendered(t, cp, before, rendered, nil)
	want := []string{
		"APIService v1alpha1.custom.example.com",
		"Bundle corp-trust",
		"ClusterTrustBundle example.com:platform:v1",
		"ClusterTrustBundle platform-roots",
		"CustomResourceDefinition widgets.example.com",
		"MutatingWebhookConfiguration topology-injector",
		"ValidatingWebhookConfiguration policy-checks",
	}
	if !slices.Equal(checked, want) {
		t.Errorf("checked %v, want every kind %v", checked, want)
	}
	renderDir(t, dir)
	if again := clusterResources(t, dir); again != rendered {
		t.Errorf("a second render changed the package:\n%s", again)
	}
}

// TestAPIServerServesClusterTrustBundles: the control plane serves
// certificates.k8s.io/v1beta1 ClusterTrustBundles (a feature gate on
// 1.33) and validates their PEM, so the test above can fail.
func TestAPIServerServesClusterTrustBundles(t *testing.T) {
	controlplane.RequireBinaries(t)
	_, _, rendered, _ := renderPackage(t, "targets")
	cp := startControlPlane(t)
	var bundle string
	for _, it := range parseStream(t, rendered) {
		if nodeKey(it) == "ConfigMap accept/trust-configmap" {
			bundle = it.GetDataMap()["ca-bundle.crt"]
		}
	}
	if !strings.Contains(bundle, "BEGIN CERTIFICATE") {
		t.Fatalf("no rendered bundle in trust-configmap: %q", bundle)
	}
	ctb := map[string]any{
		"apiVersion": "certificates.k8s.io/v1beta1",
		"kind":       "ClusterTrustBundle",
		"metadata":   map[string]any{"name": "rotate-certs-test"},
		"spec":       map[string]any{"trustBundle": bundle},
	}
	doc, err := json.Marshal(ctb)
	if err != nil {
		t.Fatal(err)
	}
	mustKubectl(t, cp, string(doc), "apply", "--server-side", "--field-manager="+fieldManager, "--dry-run=server", "-f", "-")
	// The control: the API server validates the PEM.
	ctb["spec"] = map[string]any{"trustBundle": "not a certificate"}
	if doc, err = json.Marshal(ctb); err != nil {
		t.Fatal(err)
	}
	if _, err := kubectl(t, cp, string(doc), "apply", "--server-side", "--field-manager="+fieldManager, "--dry-run=server", "-f", "-"); !errContains(err, "trustBundle") {
		t.Errorf("a ClusterTrustBundle without a certificate: %v, want a refusal naming spec.trustBundle", err)
	}
}
