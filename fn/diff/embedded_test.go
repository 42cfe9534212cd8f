package diff

import (
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/exit"
	"github.com/rotate-certs/rotate-certs/fn/trustdiff"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/rotate-certs/rotate-certs/internal/testpki/layouts"
	"github.com/stretchr/testify/require"
)

// Trust that real repositories keep in values no trust bundle writes: the
// layouts below are those of the upstream projects, with our own
// certificates.

// indented is PEM as a YAML block scalar's lines at indent n.
func indented(n int, certs ...testpki.Cert) string {
	lines := strings.Split(strings.TrimRight(pem(certs...), "\n"), "\n")
	return strings.Repeat(" ", n) + strings.Join(lines, "\n"+strings.Repeat(" ", n)) + "\n"
}

// anchorsEnv is the field of a meshed workload's proxy trust anchors.
const anchorsEnv = layouts.AnchorsEnv

// meshed is Linkerd's control plane (linkerd) and two injected workloads,
// with the next anchor's own Secret committed before it is used (withNext).
func meshed(anchor, issuer testpki.Cert, roots []testpki.Cert, web, emoji []testpki.Cert) map[string]string {
	files := withNext(linkerd(anchor, issuer, roots...), anchor2)
	files["apps/web.yaml"] = layouts.LinkerdInjected("web", web...)
	files["apps/emoji.yaml"] = layouts.LinkerdInjected("emoji", emoji...)
	return files
}

// trustOf returns the change of the trust object of resource name at
// field, failing when there is none.
func trustOf(t *testing.T, res trustdiff.Result, name, field string) trustdiff.TrustChange {
	t.Helper()
	for _, tc := range res.Trust {
		if tc.Resource.Name == name && tc.Field == field {
			return tc
		}
	}
	t.Fatalf("no trust change of %s %s in %+v", name, field, res.Trust)
	return trustdiff.TrustChange{}
}

func shas(cas []trustdiff.CA) []string {
	out := make([]string, len(cas))
	for i, c := range cas {
		out[i] = c.SHA256
	}
	return out
}

// Every proxy's anchor replaced in one commit is a trust change of each
// workload's env, read by that workload once: the issuer, still from the
// old anchor, breaks each. An overlap first (both anchors) breaks nothing.
func TestInjectedAnchorsInEnv(t *testing.T) {
	r := newRepo(t)
	base := r.commit(meshed(anchor1, issuer1, []testpki.Cert{anchor1}, []testpki.Cert{anchor1}, []testpki.Cert{anchor1}))
	overlap := r.commit(meshed(anchor2, issuer1, []testpki.Cert{anchor1, anchor2}, []testpki.Cert{anchor1, anchor2}, []testpki.Cert{anchor1, anchor2}))
	res, code := r.result(base, overlap)
	require.Equal(t, exit.OK, code, "%+v", res)
	for _, name := range []string{"web", "emoji"} {
		tc := trustOf(t, res, name, anchorsEnv)
		require.Equal(t, "Deployment", tc.Resource.Kind)
		require.Equal(t, []string{shaOf(anchor2)}, shas(tc.Added))
		require.Equal(t, trustdiff.WhySource, tc.Added[0].Why, "the next anchor's own Secret holds it since BASE")
		require.Empty(t, tc.Removed)
		require.Equal(t, []trustdiff.Reader{{Resource: tc.Resource, Via: "its own env value", Once: true}}, tc.Readers)
	}
	require.Empty(t, res.Breaks)
	require.Len(t, res.Rolls, 2, "a changed env value changes the pod template: the workload rolls")

	step := r.commit(meshed(anchor2, issuer1, []testpki.Cert{anchor2}, []testpki.Cert{anchor2}, []testpki.Cert{anchor2}))
	res, code = r.result(base, step)
	require.Equal(t, exit.Failed, code)
	tc := trustOf(t, res, "web", anchorsEnv)
	require.Equal(t, []string{shaOf(anchor2)}, shas(tc.Added))
	require.Equal(t, []string{shaOf(anchor1)}, shas(tc.Removed))
	found := map[string]bool{}
	for _, b := range res.Breaks {
		if b.Trust.Field == anchorsEnv {
			require.Equal(t, shaOf(issuer1), b.Certificate.SHA256, "the issuer still chains to the old anchor")
			require.Equal(t, b.Trust.Resource.Name, readerNames(b.Readers))
			found[b.Trust.Resource.Name] = true
		}
	}
	require.Equal(t, map[string]bool{"web": true, "emoji": true}, found, "each workload's own anchors break: %+v", res.Breaks)

	out, _, _ := r.diff(base, step, "table", false)
	require.Contains(t, out, "Deployment emojivoto/web")
	require.Contains(t, out, anchorsEnv)
}

// helmAnchors are the files of Linkerd's control plane installed from its
// chart (layouts.LinkerdValues: identityTrustAnchorsPEM,
// identity.issuer.tls.crtPEM) by a Flux HelmRelease (spec.values) and by
// an Argo CD Application (spec.source.helm.values, a YAML string;
// spec.sources[].helm.valuesObject), and the cert-manager Secret of the
// next anchor when held is not nil.
func helmAnchors(anchor, issuer testpki.Cert, held *testpki.Cert) map[string]string {
	anchors := layouts.LinkerdValues{Anchors: []testpki.Cert{anchor}}
	files := map[string]string{
		"flux/linkerd.yaml": layouts.LinkerdValues{Anchors: []testpki.Cert{anchor}, Issuer: &issuer}.HelmRelease(),
		"argocd/linkerd.yaml": `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: linkerd-control-plane, namespace: argocd}
spec:
  project: default
  destination: {server: "https://kubernetes.default.svc", namespace: linkerd}
  source:
    repoURL: https://helm.linkerd.io/stable
    chart: linkerd-control-plane
    targetRevision: 1.16.11
    helm:
      values: |
` + anchors.YAML(8) + `---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: linkerd-multicluster, namespace: argocd}
spec:
  project: default
  destination: {server: "https://kubernetes.default.svc", namespace: linkerd}
  sources:
  - repoURL: https://helm.linkerd.io/stable
    chart: linkerd-multicluster
    helm:
      valuesObject:
` + anchors.YAML(8),
	}
	if held != nil {
		files["linkerd/anchor.yaml"] = secret("linkerd", "linkerd-trust-anchor", map[string]string{"tls.crt": pem(*held), "tls.key": string(held.KeyPEM())})
	}
	return files
}

// Anchors in Helm values are trust objects that nothing diff sees reads:
// each change is listed, a CA nothing explains is planted, nothing
// breaks. The issuer beside the HelmRelease's anchors is a certificate
// presented, not trust, and explains the anchor that signed it, as a
// Secret's tls.crt explains its ca.crt.
func TestHelmValuesAnchorsChanged(t *testing.T) {
	const flux, argo, multi = "spec.values:identityTrustAnchorsPEM", "spec.source.helm.values:identityTrustAnchorsPEM",
		"spec.sources[0].helm.valuesObject:identityTrustAnchorsPEM"
	r := newRepo(t)
	base := r.commit(helmAnchors(anchor1, issuer1, nil))
	planted := r.commit(helmAnchors(anchor2, issuer2, nil))
	res, code := r.result(base, planted)
	require.Equal(t, exit.Failed, code)
	require.Len(t, res.Trust, 3, "the issuer's crtPEM is no trust: %+v", res.Trust)
	for _, tc := range []trustdiff.TrustChange{trustOf(t, res, "linkerd-control-plane", flux),
		trustOf(t, res, "linkerd-control-plane", argo), trustOf(t, res, "linkerd-multicluster", multi)} {
		require.Equal(t, []string{shaOf(anchor2)}, shas(tc.Added))
		require.Equal(t, []string{shaOf(anchor1)}, shas(tc.Removed))
		require.Empty(t, tc.Readers, "the chart's objects are not in the tree")
	}
	require.Equal(t, "issued HelmRelease linkerd/linkerd-control-plane spec.values:identity.issuer.tls.crtPEM",
		trustOf(t, res, "linkerd-control-plane", flux).Added[0].Source)
	var where []string
	for _, p := range res.Planted {
		require.Equal(t, shaOf(anchor2), p.SHA256)
		where = append(where, p.Resource.Kind+" "+p.Field)
	}
	require.ElementsMatch(t, []string{"Application " + argo, "Application " + multi}, where)
	require.Empty(t, res.Breaks)
	_, _, code = r.diff(base, planted, "table", true)
	require.Equal(t, exit.OK, code, "--allow-unexplained")

	staged := r.commit(helmAnchors(anchor1, issuer1, &anchor2))
	explained := r.commit(helmAnchors(anchor2, issuer2, &anchor2))
	res, code = r.result(staged, explained)
	require.Equal(t, exit.OK, code, "%+v", res.Planted)
	require.Len(t, res.Trust, 3)
	for _, tc := range res.Trust {
		require.Equal(t, trustdiff.WhySource, tc.Added[0].Why)
	}
	require.Contains(t, trustOf(t, res, "linkerd-multicluster", multi).Added[0].Source, "linkerd-trust-anchor", "the anchor's own Secret holds it")
}

// A cluster's CA in an Argo CD cluster Secret or a kubeconfig is trust, read
// as the Secret is (a workload mounting it); the client certificate beside
// it is presented, and neither key is ever printed.
func TestClientConfigCAReplaced(t *testing.T) {
	caOld := testpki.NewSubjectCA("diff-cluster-ca-1", "kubernetes", testpki.Date(2026, 1, 1), testpki.Days(3650))
	caNew := testpki.NewSubjectCA("diff-cluster-ca-2", "kubernetes", testpki.Date(2026, 11, 1), testpki.Days(3650))
	client1 := testpki.NewLeaf("diff-cluster-client-1", caOld, testpki.Date(2026, 1, 1), testpki.Days(365))
	client2 := testpki.NewLeaf("diff-cluster-client-2", caNew, testpki.Date(2026, 11, 1), testpki.Days(365))
	tree := func(ca, client testpki.Cert) map[string]string {
		return map[string]string{
			"argocd/cluster.yaml": layouts.ArgoCDCluster(ca, client),
			"capi/kubeconfig.yaml": docs(layouts.CAPIKubeconfig("prod", ca, client),
				deployment("default", "cluster-agent", "Secret", "prod-kubeconfig", "volume", "")),
		}
	}
	r := newRepo(t)
	base := r.commit(tree(caOld, client1))
	head := r.commit(tree(caNew, client2))
	res, _ := r.result(base, head)
	require.Len(t, res.Trust, 2, "the client certificates are not trust: %+v", res.Trust)
	argo := trustOf(t, res, "prod-cluster", "stringData.config:tlsClientConfig.caData")
	require.Equal(t, []string{shaOf(caNew)}, shas(argo.Added))
	require.Equal(t, []string{shaOf(caOld)}, shas(argo.Removed))
	require.Empty(t, argo.Readers, "Argo CD reads it through the API, nothing mounts it")
	kc := trustOf(t, res, "prod-kubeconfig", "data.value:clusters[prod].cluster.certificate-authority-data")
	require.Equal(t, []string{shaOf(caNew)}, shas(kc.Added))
	require.Equal(t, "cluster-agent", readerNames(kc.Readers), "read as any Secret value is")
	for _, format := range []string{"table", "markdown", "json"} {
		out, stderr, _ := r.diff(base, head, format, false)
		for _, key := range []testpki.Cert{client1, client2} {
			body := strings.Split(string(key.KeyPEM()), "\n")[1]
			require.NotContains(t, out+stderr, body, format)
			require.NotContains(t, out+stderr, b64(string(key.KeyPEM())), format)
		}
		require.NotContains(t, out+stderr, "PRIVATE KEY", format)
	}
}

// injectedCronJob is a CronJob `linkerd inject` wrote: the proxy's trust
// anchors literal PEM in the env of its job template's pod template.
func injectedCronJob(anchors ...testpki.Cert) string {
	return `apiVersion: batch/v1
kind: CronJob
metadata: {name: report, namespace: emojivoto}
spec:
  schedule: '@daily'
  jobTemplate:
    spec:
      template:
        metadata:
          labels: {app: report, linkerd.io/control-plane-ns: linkerd}
        spec:
          restartPolicy: OnFailure
          containers:
          - {name: report, image: buoyantio/emojivoto-report:v10}
          initContainers:
          - name: linkerd-proxy
            image: cr.l5d.io/linkerd/proxy:stable
            restartPolicy: Always
            env:
            - name: LINKERD2_PROXY_IDENTITY_TRUST_ANCHORS
              value: |
` + indented(16, anchors...)
}

// TestOwnEnvReadersAreRestarts: who reads a workload's own env value is
// restart.Readers' answer, not diff's own: a Deployment reads it once, a
// CronJob does not (each run starts on the current value, as for any
// trust a Job reads) - diff once counted every workload as reading its own
// value once.
func TestOwnEnvReadersAreRestarts(t *testing.T) {
	r := newRepo(t)
	files := meshed(anchor1, issuer1, []testpki.Cert{anchor1}, []testpki.Cert{anchor1}, []testpki.Cert{anchor1})
	files["apps/report.yaml"] = injectedCronJob(anchor1)
	base := r.commit(files)
	files = meshed(anchor1, issuer1, []testpki.Cert{anchor1}, []testpki.Cert{anchor1, anchor2}, []testpki.Cert{anchor1})
	files["apps/report.yaml"] = injectedCronJob(anchor1, anchor2)
	res, _ := r.result(base, r.commit(files))
	web := trustOf(t, res, "web", anchorsEnv)
	require.Equal(t, []trustdiff.Reader{{Resource: web.Resource, Via: "its own env value", Once: true}}, web.Readers)
	report := trustOf(t, res, "report", "spec.jobTemplate.spec.template.spec.initContainers[name=linkerd-proxy].env[name=LINKERD2_PROXY_IDENTITY_TRUST_ANCHORS].value")
	require.Equal(t, []trustdiff.Reader{{Resource: report.Resource, Via: "its own env value"}}, report.Readers)
}
