package policy

import (
	"reflect"
	"strings"
	"testing"
)

func decodeClusterAPI(t *testing.T, clusterAPI string) (*RotationPolicy, error) {
	t.Helper()
	raw := `{"apiVersion":"rotate-certs.dev/v1alpha1","kind":"RotationPolicy","metadata":{"name":"p"},"spec":{"clusterAPI":` + clusterAPI + `}}`
	return decodeJSON([]byte(raw))
}

func TestClusterAPIDefaults(t *testing.T) {
	p, err := decodeClusterAPI(t, `{"certificatesExpiryDays":30}`)
	if err != nil {
		t.Fatalf("a policy with only clusterAPI must be valid: %v", err)
	}
	c := p.Spec.ClusterAPI
	if c == nil {
		t.Fatal("spec.clusterAPI not decoded")
	}
	if want := []string{"KubeadmControlPlane", "KubeadmControlPlaneTemplate", "EtcdadmCluster", "Cluster.anywhere.eks.amazonaws.com"}; !reflect.DeepEqual(c.Kinds, want) {
		t.Errorf("default kinds = %v, want %v", c.Kinds, want)
	}
	if c.EKSAnywhereDesignFields {
		t.Error("eksAnywhereDesignFields must default to false")
	}
	if !c.Selects(map[string]string{"any": "thing"}) || !c.Selects(nil) {
		t.Error("an unset selector must select everything")
	}
}

func TestClusterAPIKindsAndSelector(t *testing.T) {
	p, err := decodeClusterAPI(t, `{"certificatesExpiryDays":21,"kinds":["EtcdadmCluster"],"selector":{"matchLabels":{"cluster.x-k8s.io/cluster-name":"prod"}},"eksAnywhereDesignFields":true}`)
	if err != nil {
		t.Fatal(err)
	}
	c := p.Spec.ClusterAPI
	if !c.HasKind("EtcdadmCluster") || c.HasKind("KubeadmControlPlane") {
		t.Errorf("kinds = %v: an explicit list must not be extended", c.Kinds)
	}
	if !c.Selects(map[string]string{"cluster.x-k8s.io/cluster-name": "prod"}) {
		t.Error("selector must match prod")
	}
	if c.Selects(map[string]string{"cluster.x-k8s.io/cluster-name": "dev"}) {
		t.Error("selector must not match dev")
	}
	if !c.EKSAnywhereDesignFields {
		t.Error("eksAnywhereDesignFields not decoded")
	}
}

func TestClusterAPIInvalid(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string // substrings, each in some error line
	}{
		{"missing days", `{}`, []string{"spec.clusterAPI.certificatesExpiryDays: required"}},
		{"below minimum", `{"certificatesExpiryDays":6}`, []string{"spec.clusterAPI.certificatesExpiryDays: 6 is below 7"}},
		{"negative", `{"certificatesExpiryDays":-1}`, []string{"spec.clusterAPI.certificatesExpiryDays: -1 is below 7"}},
		{"above any validity", `{"certificatesExpiryDays":1095}`, []string{"spec.clusterAPI.certificatesExpiryDays: 1095 must be below 1095"}},
		{"not a number", `{"certificatesExpiryDays":"30"}`, []string{"spec.clusterAPI.certificatesExpiryDays: must be a whole number"}},
		{"fraction", `{"certificatesExpiryDays":7.5}`, []string{"spec.clusterAPI.certificatesExpiryDays: must be a whole number"}},
		{"unknown kind", `{"certificatesExpiryDays":30,"kinds":["KubeadmControlPlane","MachineDeployment"]}`, []string{`spec.clusterAPI.kinds[1]: "MachineDeployment" is not one of KubeadmControlPlane, KubeadmControlPlaneTemplate, EtcdadmCluster, Cluster.anywhere.eks.amazonaws.com`}},
		{"unqualified EKS Anywhere Cluster", `{"certificatesExpiryDays":30,"kinds":["Cluster"]}`, []string{`spec.clusterAPI.kinds[0]: "Cluster" is not one of`}},
		{"duplicate kind", `{"certificatesExpiryDays":30,"kinds":["EtcdadmCluster","EtcdadmCluster"]}`, []string{`spec.clusterAPI.kinds[1]: duplicate kind "EtcdadmCluster" (also spec.clusterAPI.kinds[0])`}},
		{"bad selector", `{"certificatesExpiryDays":30,"selector":{"matchExpressions":[{"key":"a","operator":"Near"}]}}`, []string{"spec.clusterAPI.selector: matchExpressions[0].operator"}},
		{"unknown field", `{"certificatesExpiryDays":30,"rolloutBefore":{}}`, []string{"spec.clusterAPI.rolloutBefore: unknown field"}},
		{"two problems", `{"certificatesExpiryDays":3,"kinds":["Machine"]}`, []string{"spec.clusterAPI.certificatesExpiryDays: 3", `spec.clusterAPI.kinds[0]: "Machine"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeClusterAPI(t, tt.in)
			if err == nil {
				t.Fatal("want an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}
