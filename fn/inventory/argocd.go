package inventory

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/rotate-certs/rotate-certs/fn/kube"
)

// An Argo CD cluster Secret (label argocd.argoproj.io/secret-type:
// cluster) keeps how Argo CD reaches a cluster in its config value, a JSON
// object whose tlsClientConfig holds, as base64 of PEM, the CAs Argo CD
// trusts for the cluster's API server (caData) and the client certificate
// it presents (certData) beside its key (keyData), as Argo CD's
// declarative setup documents (argoproj/argo-cd,
// docs/operator-manual/declarative-setup.md, "Clusters"). It is the JSON
// twin of a kubeconfig and is read like one, whatever labels the Secret
// carries.

// argoCDConfig is what the scan reads of an Argo CD cluster config: keyData
// is not a field of it, so the key is never decoded or copied.
type argoCDConfig struct {
	TLSClientConfig struct {
		CAData   string `json:"caData"`
		CertData string `json:"certData"`
	} `json:"tlsClientConfig"`
}

// looksLikeArgoCDConfig is a cheap test before parsing a value as Argo CD
// cluster config.
func looksLikeArgoCDConfig(b []byte) bool {
	return bytes.Contains(b, []byte("tlsClientConfig")) &&
		(bytes.Contains(b, []byte("caData")) || bytes.Contains(b, []byte("certData")))
}

// argoCDConfig records the certificates of an Argo CD cluster config value.
func (s *scanner) argoCDConfig(ref func() kube.Ref, v kube.Value) {
	var c argoCDConfig
	if err := json.Unmarshal(v.Bytes, &c); err != nil {
		first, _, _ := strings.Cut(kube.ScrubMessage(err.Error()), "\n")
		s.problem(ref(), v.Field, "value mentions Argo CD cluster certificate data but is not JSON: %v", first)
		return
	}
	s.base64PEM(ref, spot{field: v.Field, within: "tlsClientConfig.caData", place: PlaceClientCA}, c.TLSClientConfig.CAData)
	s.base64PEM(ref, spot{field: v.Field, within: "tlsClientConfig.certData", place: PlaceClientCert}, c.TLSClientConfig.CertData)
}
