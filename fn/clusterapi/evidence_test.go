package clusterapi

import (
	"testing"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
)

// An EKS Anywhere expiresInDays too large for a time.Duration wrapped
// around: 9223372036854775807 days was read as expired and could roll etcd.
// A count beyond maxDays is an error naming the field, and nothing
// is changed.
func TestEKSAnywhereDaysOutOfRange(t *testing.T) {
	for _, days := range []string{"9223372036854775807", "-9223372036854775808", "36501"} {
		t.Run(days, func(t *testing.T) {
			in := docs(etcdadmCluster, etcdTemplate, "apiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: Cluster\nmetadata: {name: prod, namespace: default}\nstatus:\n  clusterCertificateInfo:\n  - machine: prod-etcd-eeeee\n    expiresInDays: "+days+"\n")
			items := parse(t, in)
			before := render(t, items)
			added, results := Apply(items, cfg(30), now)
			want := "Cluster default/prod status.clusterCertificateInfo[0].expiresInDays: " + days + " days is out of range"
			if !hasResult(results, framework.Error, want) {
				t.Fatalf("no error containing %q in:\n%v", want, results)
			}
			if added != nil || render(t, items) != before {
				t.Error("an error must leave everything unchanged and add nothing")
			}
		})
	}
}
