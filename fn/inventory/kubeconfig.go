package inventory

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// kubeconfigFields are the certificate fields of a kubeconfig, per list:
// the cluster's CA and the user's client certificate. client-key-data is
// never read.
var kubeconfigFields = []struct {
	list, object, field string
	place               Place
}{
	{"clusters", "cluster", "certificate-authority-data", PlaceClientCA},
	{"users", "user", "client-certificate-data", PlaceClientCert},
}

// looksLikeKubeconfig is a cheap test before parsing a value as YAML.
func looksLikeKubeconfig(b []byte) bool {
	return bytes.Contains(b, []byte("certificate-authority-data")) || bytes.Contains(b, []byte("client-certificate-data"))
}

// kubeconfig records the certificates of a kubeconfig value (the
// <cluster>-kubeconfig Secrets of Cluster API, kube-public/cluster-info,
// an admin.conf kept in a Secret).
func (s *scanner) kubeconfig(ref func() kube.Ref, v kube.Value) {
	doc, err := yaml.Parse(string(v.Bytes))
	if err != nil {
		first, _, _ := strings.Cut(kube.ScrubMessage(err.Error()), "\n")
		s.problem(ref(), v.Field, "value mentions kubeconfig certificate data but is not YAML: %v", first)
		return
	}
	for _, kf := range kubeconfigFields {
		list := doc.Field(kf.list)
		if list == nil || list.Value == nil || list.Value.YNode().Kind != yaml.SequenceNode {
			continue
		}
		for i, entry := range list.Value.YNode().Content {
			e := yaml.NewRNode(entry)
			name := fmt.Sprint(i)
			// A kubeconfig name is free text (user@cluster, an EKS ARN);
			// one that is not plain is not repeated.
			if n, err := e.GetString("name"); err == nil && n != "" && kube.Plain(n) {
				name = n
			}
			within := fmt.Sprintf("%s[%s].%s.%s", kf.list, name, kf.object, kf.field)
			data, err := e.GetString(kf.object + "." + kf.field)
			if err != nil {
				continue
			}
			s.base64PEM(ref, spot{field: v.Field, within: within, place: kf.place}, data)
		}
	}
}

// base64PEM records the certificates of a field that holds only
// certificates as base64 of PEM (a kubeconfig's, an Argo CD cluster
// config's); blank is empty.
func (s *scanner) base64PEM(ref func() kube.Ref, at spot, data string) {
	if strings.TrimSpace(data) == "" {
		return
	}
	pem, err := kube.DecodeBase64(data)
	if err != nil {
		s.problem(ref(), joinKey(at.field, at.within), "invalid base64: %v", err)
		return
	}
	s.pem(ref, at, pem, true)
}
