package diff

import (
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/exit"
	"github.com/rotate-certs/rotate-certs/fn/trustdiff"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
)

// fleetClusters is the size of the fleet the presentation tests diff: a
// platform team's repository of clusters.
const fleetClusters = 400

// gatewayFleet is a repository of n clusters, clusters/c<i>/gw, each
// cluster's files what cluster(i) returns (gatewayTree's names).
func gatewayFleet(n int, cluster func(i int) map[string]string) map[string]string {
	files := map[string]string{}
	for i := range n {
		maps.Copy(files, under(fmt.Sprintf("clusters/c%03d", i), cluster(i)))
	}
	return files
}

// gatewayCluster is a cluster after certgen's rotation: the gateway's CA
// Secret holds the new CA and its leaf, the rate-limit client still a
// leaf of the old CA, and the trust Secret trust; next marks the
// rate-limit server's pod template as a render does when it rolls it.
func gatewayCluster(next bool, trust ...testpki.Cert) map[string]string {
	tree := gatewayTree(caNew, leafNew, trust...)
	tree["gw/client.yaml"] = secret(egNS, "ratelimit-client", map[string]string{"tls.crt": pem(leafOld)})
	if next {
		tree["gw/ratelimit.yaml"] = strings.Replace(tree["gw/ratelimit.yaml"], "labels: {app: envoy-ratelimit}\n    spec:",
			"labels: {app: envoy-ratelimit}\n      annotations: {rotate-certs.dev/trust-hash: next}\n    spec:", 1)
	}
	return tree
}

// The same change in every cluster of a fleet is one block naming how
// many places and the first of them, in the table and in the comment; the
// section counts count objects; the JSON keeps every object. Trusting the
// new CA beside the old one in 400 clusters, the rate-limit server rolled,
// was 1,600 table lines; a hand edit that then drops the old CA
// everywhere breaks the client in every cluster: one block of breaks.
func TestFleetChangeIsOneBlockPerChange(t *testing.T) {
	r := newRepo(t)
	base := r.commit(gatewayFleet(fleetClusters, func(int) map[string]string { return gatewayCluster(false, caOld) }))
	safe := r.commit(gatewayFleet(fleetClusters, func(int) map[string]string { return gatewayCluster(true, caOld, caNew) }))
	res, code := r.result(base, safe) // one read of the fleet; the JSON's result written as the table and the comment
	table := trustdiff.Table(res, false)
	if code != exit.OK {
		t.Fatalf("exit %d:\n%s", code, table)
	}
	for _, want := range []string{"TRUST (400):", "ROLLS (400):",
		"Secret envoy-gateway-system/envoy-gateway-trust data.ca.crt (in 400 places: clusters/c000/trust.yaml, clusters/c001/trust.yaml, clusters/c002/trust.yaml, clusters/c003/trust.yaml, clusters/c004/trust.yaml and 395 more)",
		"Deployment envoy-gateway-system/envoy-ratelimit rolls now (in 400 places: clusters/c000/ratelimit.yaml,"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	if n := strings.Count(table, "\n"); n > 12 {
		t.Errorf("the table of one change in %d clusters is %d lines:\n%s", fleetClusters, n, table)
	}
	md := trustdiff.Markdown(res, trustdiff.MarkdownOptions{})
	for _, want := range []string{"<summary>Trust (400)</summary>", "<summary>Rolls (400)</summary>",
		"(in 400 places: clusters/c000/trust.yaml, clusters/c001/trust.yaml, clusters/c002/trust.yaml and 397 more)"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if n := strings.Count(md, "\n"); n > 30 {
		t.Errorf("the comment of one change in %d clusters is %d lines:\n%s", fleetClusters, n, md)
	}
	if len(res.Trust) != fleetClusters || len(res.Rolls) != fleetClusters {
		t.Errorf("JSON: %d trust changes and %d rolls, want every object", len(res.Trust), len(res.Rolls))
	}
	broken := r.commit(gatewayFleet(fleetClusters, func(int) map[string]string { return gatewayCluster(true, caNew) }))
	res, code = r.result(safe, broken)
	table = trustdiff.Table(res, false)
	if code != exit.Failed || !strings.Contains(table, "BREAKS (400):") || strings.Count(table, "needs CA") != 1 ||
		!strings.Contains(table, "(in 400 places: clusters/c000/client.yaml against clusters/c000/trust.yaml, clusters/c001/client.yaml against clusters/c001/trust.yaml,") {
		t.Errorf("exit %d, want the breaks of every cluster as one block:\n%s", code, table)
	}
}

// Two changes that differ are two blocks, each naming its file, however
// alike their objects' names: a cluster whose trust gains another CA
// than the others is said apart.
func TestDifferentChangesAreSaidApart(t *testing.T) {
	r := newRepo(t)
	base := r.commit(gatewayFleet(3, func(int) map[string]string { return gatewayCluster(false, caOld) }))
	head := r.commit(gatewayFleet(3, func(i int) map[string]string {
		if i == 1 {
			return gatewayCluster(false, caOld, attacker)
		}
		return gatewayCluster(false, caOld, caNew)
	}))
	table, _, _ := r.diff(base, head, "table", true)
	for _, want := range []string{"PLANTED (1):", "Secret envoy-gateway-system/envoy-gateway-trust data.ca.crt: CA CN=attacker-ca",
		"(in clusters/c001/trust.yaml)",
		"Secret envoy-gateway-system/envoy-gateway-trust data.ca.crt (in 2 places: clusters/c000/trust.yaml and clusters/c002/trust.yaml)"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
}
