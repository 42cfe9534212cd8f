package restart

import (
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// names returns "Kind ns/name via" of each reader.
func names(rs []Reader) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Ref.String()+" "+r.How().Via.String())
	}
	return out
}

// inFile places a document in file (its path annotation).
func inFile(file, doc string) string {
	return strings.Replace(doc, "metadata:\n", "metadata:\n  annotations: {internal.config.kubernetes.io/path: '"+file+"'}\n", 1)
}

const (
	mountsTrust   = "      containers:\n      - {name: c, volumeMounts: [{name: t, mountPath: /t}]}\n      volumes:\n      - {name: t, secret: {secretName: trust}}\n"
	subPathTrust  = "      containers:\n      - {name: c, volumeMounts: [{name: t, mountPath: /t/ca.crt, subPath: ca.crt}]}\n      volumes:\n      - {name: t, secret: {secretName: trust}}\n"
	trustSecret   = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: trust\n  namespace: %s\ndata: {}\n"
	trustNoNS     = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: trust\ndata: {}\n"
	secretSubject = "Secret"
)

func secretIn(ns string) string { return strings.Replace(trustSecret, "%s", ns, 1) }

// TestReaderOnce: reads once is what the restart rules roll a workload
// for, and what nothing rolls is never.
func TestReaderOnce(t *testing.T) {
	w := func(role policy.WorkloadRole, reload reload) *Workload {
		return &Workload{role: role, rollable: role == policy.RoleRolled, reload: reload}
	}
	volume, env := []Use{{Via: ViaVolume, Field: "v"}}, []Use{{Via: ViaEnv, Field: "e"}}
	for _, tc := range []struct {
		name        string
		r           Reader
		once, never bool
	}{
		{"whole volume, no annotation", Reader{Workload: w(policy.RoleRolled, reloadDefault), Uses: volume}, true, false},
		{"whole volume, hot", Reader{Workload: w(policy.RoleRolled, reloadHot), Uses: volume}, false, false},
		{"env, hot", Reader{Workload: w(policy.RoleRolled, reloadHot), Uses: env}, true, false},
		{"injected, hot", Reader{Workload: w(policy.RoleRolled, reloadHot), Uses: []Use{{Via: ViaInjected}}}, true, false},
		{"named, hot", Reader{Workload: w(policy.RoleRolled, reloadHot), explicit: true}, true, false},
		{"never", Reader{Workload: w(policy.RoleRolled, reloadNever), Uses: volume}, true, true},
		{"a Job, env", Reader{Workload: w(policy.RoleReported, reloadDefault), Uses: env}, false, false},
		{"a Pod, whole volume", Reader{Workload: w(policy.RoleListed, reloadDefault), Uses: volume}, true, true},
		{"a gateway", Reader{Uses: []Use{{Via: ViaCARef}}}, false, false},
		{"the API server", Reader{Uses: []Use{{Via: ViaAPIServer}}}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.once, tc.r.Once(), "once")
			assert.Equal(t, tc.never, tc.r.Never(), "never")
			if tc.r.Workload != nil && tc.r.Workload.rollable && tc.r.Workload.reload != reloadNever {
				assert.Equal(t, decide(tc.r.Uses, tc.r.Workload.reload, tc.r.explicit).Roll, tc.r.Once(), "reads once is what decide rolls")
			}
		})
	}
}

// TestReadersNamespaceRule: a Secret without a namespace is read by a
// workload of any namespace that names it, and a workload without one
// reads the Secret of any namespace; known namespaces match exactly.
func TestReadersNamespaceRule(t *testing.T) {
	items := parseItems(t, secretIn("a"), trustNoNS,
		deployment("a", "in-a", "", mountsTrust), deployment("b", "in-b", "", mountsTrust), deployment("", "nowhere", "", mountsTrust))
	r := NewReaders(items, ReadersOptions{})
	of := func(ns string, node *yaml.RNode) []string {
		return names(r.Of(Subject{Key: kube.Key{Kind: secretSubject, Namespace: ns, Name: "trust"}, Node: node}))
	}
	assert.Equal(t, []string{"Deployment a/in-a volume", "Deployment nowhere volume"}, of("a", items[0]))
	assert.Equal(t, []string{"Deployment a/in-a volume", "Deployment b/in-b volume", "Deployment nowhere volume"}, of("", items[1]))
	known := map[*yaml.RNode]string{items[1]: "b", items[4]: "b"}
	r = NewReaders(items, ReadersOptions{Namespace: func(n *yaml.RNode) string { return known[n] }})
	assert.Equal(t, []string{"Deployment b/in-b volume", "Deployment b/nowhere volume"}, names(r.Of(Subject{Key: kube.Key{Kind: secretSubject, Namespace: "b", Name: "trust"}, Node: items[1]})),
		"a namespace known otherwise (a kustomization's) is matched as any other")
	known = map[*yaml.RNode]string{items[1]: "b", items[2]: "b", items[3]: AnyNamespace, items[4]: "b"}
	r = NewReaders(items, ReadersOptions{Namespace: func(n *yaml.RNode) string { return known[n] }})
	assert.Equal(t, []string{"Deployment b/in-a volume", "Deployment in-b volume", "Deployment b/nowhere volume"}, names(r.Of(Subject{Key: kube.Key{Kind: secretSubject, Namespace: "b", Name: "trust"}, Node: items[1]})),
		"a kustomization's namespace is written over the manifest's; AnyNamespace matches every namespace")
	assert.Equal(t, []string{"Deployment in-b volume"}, names(r.Of(Subject{Key: kube.KeyOf(items[0]), Node: items[0]})),
		"the Secret of namespace a is read by no workload the kustomization placed in b")
}

// TestReadersNearestCopy: of the copies a reference can name, a reader
// reads those nearest it - of its own package first - and an object the
// tree holds once is read by every reference to it.
func TestReadersNearestCopy(t *testing.T) {
	items := parseItems(t,
		inFile("clusters/east/trust/secret.yaml", secretIn("a")),
		inFile("clusters/west/trust/secret.yaml", secretIn("a")),
		inFile("clusters/east/apps/deploy.yaml", deployment("a", "east", "", subPathTrust)),
		inFile("clusters/west/deploy.yaml", deployment("a", "west", "", subPathTrust)),
		inFile("shared/deploy.yaml", deployment("a", "shared", "", subPathTrust)),
		inFile("other/secret.yaml", strings.Replace(secretIn("a"), "name: trust", "name: once", 1)),
		inFile("elsewhere/deploy.yaml", deployment("a", "far", "", strings.ReplaceAll(subPathTrust, "trust", "once"))),
	)
	r := NewReaders(items, ReadersOptions{})
	of := func(i int) []string {
		return names(r.Of(Subject{Key: kube.KeyOf(items[i]), Node: items[i]}))
	}
	assert.Equal(t, []string{"Deployment a/east subPath mount", "Deployment a/shared subPath mount"}, of(0))
	assert.Equal(t, []string{"Deployment a/west subPath mount", "Deployment a/shared subPath mount"}, of(1))
	assert.Equal(t, []string{"Deployment a/far subPath mount"}, of(5), "held once: read by every reference")
	pkg := map[*yaml.RNode]string{items[1]: "clusters/west", items[3]: "clusters/west", items[0]: "clusters/east", items[4]: "clusters/east"}
	r = NewReaders(items, ReadersOptions{Package: func(n *yaml.RNode) string { return pkg[n] }})
	assert.Equal(t, []string{"Deployment a/east subPath mount", "Deployment a/shared subPath mount"}, of(0), "shared/ is east's package: it reads east's copy")
	assert.Equal(t, []string{"Deployment a/west subPath mount"}, of(1))
	extra := r.Of(Subject{Key: kube.Key{Kind: secretSubject, Namespace: "a", Name: "trust"}, File: "clusters/west/new.yaml"})
	assert.Equal(t, []string{"Deployment a/west subPath mount", "Deployment a/shared subPath mount"}, names(extra),
		"an object the tree does not hold is a copy where its file is, of a package not known: shared/ ties it with east's at the top")
}

// TestCARefReaders: Gateway API and Envoy Gateway objects read what their
// caCertificateRefs name - a ClusterTrustBundle (group "", as Envoy
// Gateway's own manifests write it), a ConfigMap of their namespace, a
// Secret of the namespace they name - and follow each update.
func TestCARefReaders(t *testing.T) {
	items := parseItems(t,
		"apiVersion: gateway.envoyproxy.io/v1alpha1\nkind: ClientTrafficPolicy\nmetadata: {name: ctp, namespace: gw}\nspec:\n  tls:\n    clientValidation:\n      caCertificateRefs:\n"+
			"      - {kind: ClusterTrustBundle, group: '', name: client-ca}\n      - {name: client-ca, namespace: other}\n      - {kind: Bundle, group: trust.cert-manager.io, name: client-ca}\n",
		"apiVersion: gateway.networking.k8s.io/v1\nkind: BackendTLSPolicy\nmetadata: {name: btp, namespace: gw}\nspec:\n  validation:\n    caCertificateRefs:\n    - {group: '', kind: ConfigMap, name: client-ca}\n",
		"apiVersion: certificates.k8s.io/v1beta1\nkind: ClusterTrustBundle\nmetadata: {name: client-ca}\nspec: {trustBundle: ''}\n",
		"apiVersion: gateway.envoyproxy.io/v1alpha1\nkind: Backend\nmetadata: {name: be, namespace: gw}\nspec:\n  tls:\n    caCertificateRefs:\n    - {group: '', kind: ConfigMap, name: backend-ca}\n",
	)
	r := NewReaders(items, ReadersOptions{})
	be := r.Of(Subject{Key: kube.Key{Kind: kindConfigMap, Namespace: "gw", Name: "backend-ca"}})
	assert.Equal(t, []string{"Backend gw/be caCertificateRefs"}, names(be))
	assert.False(t, be[0].Once(), "Envoy Gateway serves the CA over xDS and follows each update")
	assert.Empty(t, r.Of(Subject{Key: kube.Key{Kind: kindConfigMap, Namespace: "other", Name: "backend-ca"}}), "a LocalObjectReference names the Backend's namespace")
	ctb := r.Of(Subject{Key: kube.Key{Kind: kindClusterTrustBundle, Name: "client-ca"}, Node: items[2]})
	require.Len(t, ctb, 1)
	assert.Equal(t, "spec.tls.clientValidation.caCertificateRefs[0]", ctb[0].Uses[0].Field)
	assert.False(t, ctb[0].Once())
	assert.Equal(t, []string{"ClientTrafficPolicy gw/ctp caCertificateRefs"}, names(r.Of(Subject{Key: kube.Key{Kind: kindSecret, Namespace: "other", Name: "client-ca"}})))
	assert.Empty(t, r.Of(Subject{Key: kube.Key{Kind: kindSecret, Namespace: "gw", Name: "client-ca"}}))
	assert.Equal(t, []string{"BackendTLSPolicy gw/btp caCertificateRefs"}, names(r.Of(Subject{Key: kube.Key{Kind: kindConfigMap, Namespace: "gw", Name: "client-ca"}})))
	api := r.Of(Subject{Key: kube.Key{Kind: "ValidatingWebhookConfiguration", Name: "hook"}})
	assert.Equal(t, []string{"ValidatingWebhookConfiguration hook API server"}, names(api))
}

// TestOfBundle: a policy bundle's target is read, besides, by the
// workloads its restart rules inject (the target of their namespace, or
// every one when the bundle has none there) and those restart.workloads
// names, which read it once.
func TestOfBundle(t *testing.T) {
	items := parseItems(t, secretIn("a"),
		deployment("a", "meshed-a", "", "      containers: [{name: c}]\n"),
		deployment("b", "meshed-b", "", "      containers: [{name: c}]\n"),
		deployment("c", "meshed-c", "", "      containers: [{name: c}]\n"),
		deployment("d", "named", "rotate-certs.dev/reload: hot", "      containers: [{name: c}]\n"),
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: a, labels: {mesh: 'on'}}\n",
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: b, labels: {mesh: 'on'}}\n",
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: c, labels: {mesh: 'on'}}\n",
	)
	sel, err := kube.SelectorOf(parseItems(t, "matchLabels: {mesh: 'on'}\n")[0])
	require.NoError(t, err)
	rs := policy.Restart{Injected: []policy.Selection{{NamespaceSelector: &sel}}, Workloads: []policy.WorkloadRef{{Kind: "Deployment", Namespace: "d", Name: "named"}}}
	got := NewReaders(items, ReadersOptions{}).OfBundle(Subject{Key: kube.KeyOf(items[0]), Node: items[0]}, BundleScope{Restart: rs, Namespaces: []string{"a", "b"}})
	assert.Equal(t, []string{"Deployment a/meshed-a injection at admission", "Deployment c/meshed-c injection at admission", "Deployment d/named restart.workloads"}, names(got))
	for _, r := range got {
		assert.True(t, r.Once(), r.Ref.String())
	}
}

// TestReadersReadErrors: a reload value that is no reload class is an
// error beside a reader of the default class; a pod template that cannot
// be read is an error and no reader.
func TestReadersReadErrors(t *testing.T) {
	items := parseItems(t, secretIn("a"),
		deployment("a", "typo", "rotate-certs.dev/reload: hott", mountsTrust),
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: broken, namespace: a}\nspec: {template: {spec: {volumes: {a: b}}}}\n")
	r := NewReaders(items, ReadersOptions{})
	errs := r.Errors()
	require.Len(t, errs, 2)
	assert.True(t, errs[0].Counted)
	assert.Contains(t, errs[0].Err.Error(), "metadata.annotations.rotate-certs.dev/reload")
	assert.False(t, errs[1].Counted)
	got := r.Of(Subject{Key: kube.KeyOf(items[0]), Node: items[0]})
	assert.Equal(t, []string{"Deployment a/typo volume"}, names(got))
	assert.True(t, got[0].Once(), "read with the default class: it loads its trust once")
}

// TestEmbeddedReaders: trust an object holds in a value of its own is read
// by the object itself - a workload, through its own env value, once (a
// Job or CronJob not: each new pod starts on the current value), and
// rolled by the change of it whatever its reload annotation - and by
// nothing in the tree when it is a Helm value; a peer that names nothing
// is no reader, nor is a workload for a field outside its pod template.
func TestEmbeddedReaders(t *testing.T) {
	env := "      containers:\n      - {name: c, env: [{name: TRUST_ANCHORS, value: pem}]}\n"
	items := parseItems(t,
		deployment("a", "web", "", env),
		deployment("a", "pinned", "rotate-certs.dev/reload: never", env),
		"apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: nightly, namespace: a}\nspec:\n  schedule: '@daily'\n  jobTemplate:\n    spec:\n      template:\n        spec:\n"+
			"          containers:\n          - {name: c, env: [{name: TRUST_ANCHORS, value: pem}]}\n",
		"apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: linkerd, namespace: a}\nspec:\n  values: {identityTrustAnchorsPEM: pem}\n",
	)
	r := NewReaders(items, ReadersOptions{})
	of := func(i int, field string) []Reader {
		return r.Of(Subject{Key: kube.KeyOf(items[i]), Node: items[i], Field: field})
	}
	const podEnv = "spec.template.spec.containers[0].env[0].value"
	web := of(0, podEnv)
	require.Len(t, web, 1, "pinned holds the same value in its own template: a copy of its own, no reader of web's")
	assert.Equal(t, "Deployment a/web its own env value", names(web)[0])
	assert.True(t, web[0].Once())
	assert.False(t, web[0].Never())
	pinned := of(1, podEnv)
	require.Len(t, pinned, 1)
	assert.False(t, pinned[0].Never(), "a changed env value changes the template, which rolls whatever the annotation says")
	nightly := of(2, "spec.jobTemplate.spec.template.spec.containers[0].env[0].value")
	require.Len(t, nightly, 1)
	assert.False(t, nightly[0].Once(), "each run of a CronJob starts on the current value")
	assert.Empty(t, of(3, "spec.values.identityTrustAnchorsPEM"), "a Helm value is read by what the chart renders, not in the tree")
	assert.Empty(t, of(0, "metadata.annotations.trust"), "a value outside the pod template is no env value")
}
