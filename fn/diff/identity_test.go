package diff

import (
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/exit"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
)

// duplicatesTree is a directory as real repositories hold them: test
// fixtures define the same trust Secret and the same Deployment in several
// files, each copy different (variants of one object), one of them twice
// in one file.
func duplicatesTree() map[string]string {
	return map[string]string{
		"fixtures/a.yaml": docs(secret("ns", "trust", map[string]string{"ca.crt": pem(caOld)}),
			deployment("ns", "app", "Secret", "trust", "subPath", "ca.crt")),
		"fixtures/b.yaml": docs(secret("ns", "trust", map[string]string{"ca.crt": pem(caNew)}),
			deployment("ns", "app", "Secret", "trust", "env", "ca.crt")),
		"fixtures/c.yaml": docs(secret("ns", "trust", map[string]string{"ca.crt": pem(caOld, caNew)}),
			secret("ns", "trust", map[string]string{"ca.crt": pem(caNew)})),
	}
}

// Objects that share directory, kind, namespace and name are told apart
// by file and document: a tree compared with itself is empty, a change of
// one copy is that copy's alone, an added copy is seen, and the
// duplicates are a warning.
func TestDuplicatesAreToldApartByFile(t *testing.T) {
	r := newRepo(t)
	base := r.commit(duplicatesTree())
	res, code := r.result(base, base)
	if code != exit.OK || !res.Empty() {
		t.Fatalf("diff of a commit with itself: exit %d, %s", code, res.Counts())
	}
	_, stderr, _ := r.diff(base, base, "table", false)
	if !strings.Contains(stderr, "warning: at HEAD: Secret ns/trust is defined 4 times in fixtures (fixtures/a.yaml#0, fixtures/b.yaml#0, fixtures/c.yaml#0, fixtures/c.yaml#1)") {
		t.Errorf("no warning of the duplicates:\n%s", stderr)
	}

	one := r.commit(map[string]string{"fixtures/b.yaml": docs(secret("ns", "trust", map[string]string{"ca.crt": pem(caNew, attacker)}),
		deployment("ns", "app", "Secret", "trust", "env", "ca.crt"))})
	res, _ = r.result(base, one)
	if len(res.Trust) != 1 || res.Trust[0].Resource.File != "fixtures/b.yaml" || len(res.Trust[0].Added) != 1 || len(res.Rolls) != 0 {
		t.Fatalf("one copy changed: want one trust change in fixtures/b.yaml and no roll, got %s\n%+v", res.Counts(), res.Trust)
	}
	if len(res.Planted) != 1 || res.Planted[0].Resource.File != "fixtures/b.yaml" {
		t.Errorf("planted %+v, want the attacker CA in fixtures/b.yaml", res.Planted)
	}

	added := r.commit(map[string]string{"fixtures/d.yaml": secret("ns", "trust", map[string]string{"ca.crt": pem(testpki.Fixture("signer-b-2"))})})
	res, _ = r.result(one, added)
	if len(res.Trust) != 1 || res.Trust[0].Resource.File != "fixtures/d.yaml" || len(res.Planted) != 1 {
		t.Fatalf("an added copy: want its trust and the planted CA, got %s\n%+v", res.Counts(), res.Trust)
	}
}

// A name that only HEAD holds twice is told apart on both sides alike:
// the copy BASE had is kept, the new one is added.
func TestDuplicateAddedBesideTheOriginal(t *testing.T) {
	r := newRepo(t)
	base := r.commit(gatewayTree(caOld, leafOld, caOld))
	head := r.commit(map[string]string{"gw/trust-copy.yaml": secret(egNS, "envoy-gateway-trust", map[string]string{"ca.crt": pem(caOld)})})
	res, code := r.result(base, head)
	if code != exit.OK || len(res.Breaks) != 0 || len(res.Trust) != 1 || len(res.Trust[0].Removed) != 0 || res.Trust[0].Resource.File != "gw/trust-copy.yaml" {
		t.Fatalf("exit %d, %s: want only the added copy\n%+v", code, res.Counts(), res.Trust)
	}
}
