package diff

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/exit"
	"github.com/rotate-certs/rotate-certs/fn/pass"
	"github.com/rotate-certs/rotate-certs/fn/trustdiff"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestSharedReadingChangesNothing holds diff's sharing between its sides
// (each file the change left alone parsed once, each package made of the
// same nodes explained once) to the reading of each side on its own: the
// same output and exit, byte for byte, on changes that leave packages
// alone beside ones they change - among them a package of a trust domain
// whose files are unchanged while another package of the domain changes
// what the domain holds, which must be explained again.
func TestSharedReadingChangesNothing(t *testing.T) {
	anchor := testpki.NewSubjectCA("diff-shared-anchor", "root.linkerd.cluster.local", testpki.Date(2026, 6, 1), testpki.Days(3650))
	inline := "    - inline: |\n        " + strings.ReplaceAll(strings.TrimSpace(string(anchor.PEM())), "\n", "\n        ") + "\n"
	source := "    - secret: {name: linkerd-trust-anchor, namespace: linkerd, key: ca.crt}\n"
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, r *testRepo)
	}{
		{"nothing", func(*testing.T, *testRepo) {}},
		{"west's policy gains a domain source, not rendered", func(t *testing.T, r *testRepo) {
			policy := readRepoFile(t, r, "clusters/west/rotation-policy.yaml")
			r.commit(map[string]string{"clusters/west/rotation-policy.yaml": strings.Replace(policy, source, source+inline, 1)})
		}},
		{"west's policy gains a domain source, rendered", func(t *testing.T, r *testRepo) {
			policy := readRepoFile(t, r, "clusters/west/rotation-policy.yaml")
			r.commit(map[string]string{"clusters/west/rotation-policy.yaml": strings.Replace(policy, source, source+inline, 1)})
			r.render(".")
		}},
		{"east's issuer re-issued, not rendered", func(t *testing.T, r *testRepo) {
			r.commit(map[string]string{"clusters/east/identity-issuer.yaml": readFile(t, "multicluster", "next/east/identity-issuer.yaml")})
		}},
		{"west's roots emptied by hand", func(t *testing.T, r *testRepo) {
			r.commit(map[string]string{"clusters/west/identity-trust-roots.yaml": configMap("linkerd", "linkerd-identity-trust-roots", map[string]string{"ca-bundle.crt": ""})})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := multicluster(t)
			// Read as plain directories: a kustomization's build makes
			// new nodes on each side, and nothing of it is shared.
			base := r.commit(map[string]string{"clusters/east/kustomization.yaml": "", "clusters/west/kustomization.yaml": ""})
			tc.change(t, r)
			head := r.commit(nil)
			r.sameAlone(t, base, head)
		})
	}
}

// sameAlone fails t when the diff of base and head, as a table or JSON,
// is not the same shared as with each side read alone.
func (r *testRepo) sameAlone(t *testing.T, base, head string) {
	t.Helper()
	for _, format := range []string{"json", "table"} {
		shared, sharedErr, sharedCode := r.diffAlone(base, head, format, false)
		alone, aloneErr, aloneCode := r.diffAlone(base, head, format, true)
		if shared != alone || sharedErr != aloneErr || sharedCode != aloneCode {
			t.Errorf("%s: shared reading (exit %d) differs from each side alone (exit %d):\n%s\n%s\n---\n%s\n%s",
				format, sharedCode, aloneCode, shared, sharedErr, alone, aloneErr)
		}
	}
}

// diffAlone is diff, each side read on its own when alone is true.
func (r *testRepo) diffAlone(base, head, format string, alone bool) (string, string, exit.Code) {
	var out, errb bytes.Buffer
	o := Options{Base: Side{Rev: base}, Head: Side{Rev: head}, Dir: r.dir, Now: testpki.GoldenNow, Format: format, alone: alone}
	log := exit.NewPrinter(&errb, "rotate-certs diff")
	err := Run(o, &out, log)
	log.Error(err)
	return out.String(), errb.String(), exit.CodeOf(err)
}

// TestSharedReadingChangesNothingOnExamples is the same property over the
// examples whose policy sits at their top, read as plain directories: a
// render at the top of each (the change a pull request makes) and a file
// added beside, against each side read alone.
func TestSharedReadingChangesNothingOnExamples(t *testing.T) {
	for _, name := range []string{"cluster-api", "eks-anywhere-etcd", "linkerd", "istio", "webhooks", "envoy-gateway",
		"trust-manager", "cert-manager", "cert-manager-renewal", "waves", "multi-signer", "in-cluster-ca", "kyma-gateway"} {
		t.Run(name, func(t *testing.T) {
			files := example(t, name, name)
			delete(files, name+"/kustomization.yaml")
			r := newRepo(t)
			base := r.commit(files)
			r.render(name)
			head := r.commit(map[string]string{name + "/added.yaml": configMap("default", "added", map[string]string{"k": "v"})})
			r.sameAlone(t, base, head)
		})
	}
}

// A Machine's expiry may be its bootstrap config's (Cluster API reads the
// annotation from the KubeadmConfig when the Machine has none): what the
// model reads of a Machine depends on another object, so a Machine left
// alone is read again when its bootstrap config changes. Here the change
// makes the config's date unreadable: exit 2 naming it, shared or not.
func TestSharedReadingRereadsMachines(t *testing.T) {
	machine := `apiVersion: cluster.x-k8s.io/v1beta1
kind: Machine
metadata: {name: cp-0, namespace: capi}
spec:
  clusterName: prod
  bootstrap:
    configRef: {apiVersion: bootstrap.cluster.x-k8s.io/v1beta1, kind: KubeadmConfig, name: cp-0}
`
	config := func(date string) string {
		return `apiVersion: bootstrap.cluster.x-k8s.io/v1beta1
kind: KubeadmConfig
metadata:
  name: cp-0
  namespace: capi
  annotations: {machine.cluster.x-k8s.io/certificates-expiry: "` + date + `"}
`
	}
	r := newRepo(t)
	base := r.commit(map[string]string{"capi/machine.yaml": machine, "capi/config.yaml": config("2027-06-01T00:00:00Z")})
	head := r.commit(map[string]string{"capi/config.yaml": config("next june")})
	shared, sharedErr, sharedCode := r.diffAlone(base, head, "json", false)
	alone, aloneErr, aloneCode := r.diffAlone(base, head, "json", true)
	if sharedCode != exit.Usage || !strings.Contains(sharedErr, "capi/config.yaml") || shared != alone || sharedErr != aloneErr || aloneCode != sharedCode {
		t.Errorf("shared: exit %d %s %s\nalone: exit %d %s %s\nwant both exit 2 naming capi/config.yaml", sharedCode, shared, sharedErr, aloneCode, alone, aloneErr)
	}
}

// TestLendingOnlyWhatTheNextSideCanTake: before HEAD is explained, BASE's
// packages with an object HEAD does not hold, and what the model read of
// such objects, are let go; what HEAD can take stays, the same.
func TestLendingOnlyWhatTheNextSideCanTake(t *testing.T) {
	parse := func(name string) *yaml.RNode {
		n, err := yaml.Parse("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n")
		require.NoError(t, err)
		return n
	}
	kept, rewritten, added := parse("kept"), parse("rewritten"), parse("added")
	x := &lending{memo: trustdiff.NewMemo()}
	same := explained{dir: "same", pkg: trustdiff.Package{Items: []*yaml.RNode{kept}}}
	changed := explained{dir: "changed", pkg: trustdiff.Package{Items: []*yaml.RNode{kept, rewritten}}}
	x.keep(same)
	x.keep(changed)
	x.done()
	x.only([]*yaml.RNode{kept, added})
	_, ok := x.packages.Before("changed")
	require.False(t, ok)
	e, ok := x.take(&pass.Package{Dir: "same"}, []*yaml.RNode{kept})
	require.True(t, ok)
	require.Equal(t, same, e)
}
