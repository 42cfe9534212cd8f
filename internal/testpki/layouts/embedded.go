package layouts

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"

	"github.com/rotate-certs/rotate-certs/internal/testpki"
)

// Trust that real repositories keep in values no trust bundle writes.

// AnchorsEnv is the field of LinkerdInjected's trust anchors.
const AnchorsEnv = "spec.template.spec.initContainers[name=linkerd-proxy].env[name=LINKERD2_PROXY_IDENTITY_TRUST_ANCHORS].value"

// LinkerdInjected is Deployment emojivoto/name as `linkerd inject` writes
// it (linkerd/linkerd2 at b24cd4059841f8cee2fb7a9c2ac23a693c583579,
// cli/cmd/testdata/inject_emojivoto_deployment.golden.yml, trimmed): the
// pod template annotated with the SHA-256 of the trust anchors, the
// proxy's init container, then the proxy as an init container with
// restartPolicy Always (a native sidecar) whose env holds the anchors as
// literal PEM (AnchorsEnv).
func LinkerdInjected(name string, anchors ...testpki.Cert) string {
	sum := sha256.Sum256([]byte(pemOf(anchors...)))
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %[1]s, namespace: emojivoto}
spec:
  selector:
    matchLabels: {app: %[1]s}
  template:
    metadata:
      annotations: {linkerd.io/trust-root-sha256: %[3]s}
      labels: {app: %[1]s, linkerd.io/control-plane-ns: linkerd}
    spec:
      containers:
      - name: %[1]s
        image: buoyantio/emojivoto-%[1]s:v10
        env:
        - {name: WEB_PORT, value: "80"}
      initContainers:
      - name: linkerd-init
        image: cr.l5d.io/linkerd/proxy-init:v2
      - name: linkerd-proxy
        image: cr.l5d.io/linkerd/proxy:stable
        restartPolicy: Always
        env:
        - name: _pod_ns
          valueFrom:
            fieldRef: {fieldPath: metadata.namespace}
        - name: LINKERD2_PROXY_IDENTITY_DIR
          value: /var/run/linkerd/identity/end-entity
        - name: LINKERD2_PROXY_IDENTITY_TRUST_ANCHORS
          value: |
%[2]s        - name: LINKERD2_PROXY_IDENTITY_SVC_ADDR
          value: linkerd-identity-headless.linkerd.svc.cluster.local.:8080
`, name, indent(12, pemOf(anchors...)), hex.EncodeToString(sum[:]))
}

// LinkerdValues are the values of Linkerd's control-plane chart that hold
// trust (linkerd/linkerd2 at b24cd40,
// charts/linkerd-control-plane/values.yaml): the trust anchors,
// identityTrustAnchorsPEM, and the issuer's certificate,
// identity.issuer.tls.crtPEM, with its key, keyPEM.
type LinkerdValues struct {
	// Anchors are identityTrustAnchorsPEM.
	Anchors []testpki.Cert
	// Issuer, when set, is identity.issuer.tls.crtPEM.
	Issuer *testpki.Cert
	// IssuerKey writes the issuer's key too, identity.issuer.tls.keyPEM.
	IssuerKey bool
	// More are other values, YAML at indent 0, written after these.
	More string
}

// YAML is the values with every line indented by n.
func (v LinkerdValues) YAML(n int) string {
	s := "identityTrustAnchorsPEM: |\n" + indent(2, pemOf(v.Anchors...))
	if v.Issuer != nil {
		s += "identity:\n  issuer:\n    tls:\n      crtPEM: |\n" + indent(8, pemOf(*v.Issuer))
		if v.IssuerKey {
			s += "      keyPEM: |\n" + indent(8, string(v.Issuer.KeyPEM()))
		}
	}
	return indent(n, s+v.More)
}

// HelmRelease is a Flux HelmRelease, linkerd/linkerd-control-plane, that
// installs the chart with the values at spec.values
// (helm.toolkit.fluxcd.io/v2).
func (v LinkerdValues) HelmRelease() string {
	return `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: linkerd-control-plane, namespace: linkerd}
spec:
  interval: 10m
  chart:
    spec:
      chart: linkerd-control-plane
      sourceRef: {kind: HelmRepository, name: linkerd}
  values:
` + v.YAML(4)
}

// ArgoCDCluster is Argo CD's cluster Secret argocd/prod-cluster as Argo
// CD's declarative setup documents it (argoproj/argo-cd at
// 015ba5e7751492c3d34b4848a4e355277a158553,
// docs/operator-manual/declarative-setup.md, "Clusters"): labelled as a
// cluster, its config JSON with a bearer token and tlsClientConfig's
// caData (ca), certData and keyData (client's certificate and key), each
// base64 of PEM.
func ArgoCDCluster(ca, client testpki.Cert) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Secret
metadata:
  name: prod-cluster
  namespace: argocd
  labels: {argocd.argoproj.io/secret-type: cluster}
type: Opaque
stringData:
  name: prod
  server: https://prod.example.com:6443
  config: |
    {
      "bearerToken": "t0k3n",
      "tlsClientConfig": {
        "insecure": false,
        "caData": %q,
        "certData": %q,
        "keyData": %q
      }
    }
`, b64(pemOf(ca)), b64(pemOf(client)), b64(string(client.KeyPEM())))
}

// Kubeconfig is a kubeconfig of cluster `cluster`, at
// https://<cluster>.example.com:6443 with ca as its
// certificate-authority-data, and of user `user` with client's certificate
// and key (client-certificate-data, client-key-data), in the context that
// is current.
func Kubeconfig(cluster, user string, ca, client testpki.Cert) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: %[1]s
  cluster:
    server: https://%[1]s.example.com:6443
    certificate-authority-data: %[3]s
users:
- name: %[2]s
  user:
    client-certificate-data: %[4]s
    client-key-data: %[5]s
contexts:
- name: %[2]s@%[1]s
  context: {cluster: %[1]s, user: %[2]s}
current-context: %[2]s@%[1]s
`, cluster, user, b64(pemOf(ca)), b64(pemOf(client)), b64(string(client.KeyPEM())))
}

// CAPIKubeconfig is the kubeconfig Secret Cluster API writes for cluster,
// in namespace default: Secret <cluster>-kubeconfig, key value, of type
// cluster.x-k8s.io/secret (kubernetes-sigs/cluster-api at
// 8a6e06b0fbca0461b18e1f542b3014e7f1d4a8e1, util/secret/consts.go),
// labelled with the cluster's name, its user <cluster>-admin in context
// <cluster>-admin@<cluster> (util/kubeconfig/kubeconfig.go at
// 0922624febec1a90003e1927072e8f5a1286b5e1).
func CAPIKubeconfig(cluster string, ca, client testpki.Cert) string {
	return "apiVersion: v1\nkind: Secret\nmetadata:\n  name: " + cluster + "-kubeconfig\n  namespace: default\n" +
		"  labels: {cluster.x-k8s.io/cluster-name: " + cluster + "}\ntype: cluster.x-k8s.io/secret\ndata:\n  value: " +
		b64(Kubeconfig(cluster, cluster+"-admin", ca, client)) + "\n"
}

// b64 is base64 of s.
func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
