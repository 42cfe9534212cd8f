package gate

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/exit"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
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
			for _, format := range []string{"json", "table"} {
				shared, sharedErr, sharedCode := r.diffAlone(base, head, format, false)
				alone, aloneErr, aloneCode := r.diffAlone(base, head, format, true)
				if shared != alone || sharedErr != aloneErr || sharedCode != aloneCode {
					t.Errorf("%s: shared reading (exit %d) differs from each side alone (exit %d):\n%s\n%s\n---\n%s\n%s",
						format, sharedCode, aloneCode, shared, sharedErr, alone, aloneErr)
				}
			}
		})
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
