package trustdiff

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/internal/testpki"
)

// trustSecret is a Secret holding cas under ca.crt.
func trustSecret(name string, cas ...testpki.Cert) string {
	var p []byte
	for _, c := range cas {
		p = append(p, c.PEM()...)
	}
	return "apiVersion: v1\nkind: Secret\nmetadata: {name: " + name + ", namespace: a}\ndata:\n  ca.crt: " + base64.StdEncoding.EncodeToString(p) + "\n"
}

func TestWhyWithoutPolicy(t *testing.T) {
	caOld, caNew, attacker := testpki.Fixture("ca-2025"), testpki.Fixture("ca-2026"), testpki.Fixture("attacker-ca")
	own := "apiVersion: v1\nkind: Secret\nmetadata: {name: new-ca, namespace: a}\ndata:\n  tls.crt: " + base64.StdEncoding.EncodeToString(caNew.PEM()) + "\n"
	cases := []struct {
		name, base, head string
		planted          int
		why              string // of the first CA added to object "one"
	}{
		{"held by its own Secret", trustSecret("one", caOld) + "---\n" + own, trustSecret("one", caOld, caNew) + "---\n" + own, 0, WhySource},
		{"held only by its own Secret, new in this change", trustSecret("one", caOld), trustSecret("one", caOld, caNew) + "---\n" + own, 1, WhyUnexplained},
		{"held by another trust object before the change", trustSecret("one", caOld) + "---\n" + trustSecret("two", caNew),
			trustSecret("one", caOld, caNew) + "---\n" + trustSecret("two", caNew), 0, WhySource},
		{"pasted into two objects at once", trustSecret("one", caOld) + "---\n" + trustSecret("two", caOld),
			trustSecret("one", caOld, attacker) + "---\n" + trustSecret("two", caOld, attacker), 2, WhyUnexplained},
		{"held by nothing", trustSecret("one", caOld), trustSecret("one", caOld, attacker), 1, WhyUnexplained},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := Compare(model(tc.base), model(tc.head), fuzzNow)
			if len(r.Planted) != tc.planted {
				t.Errorf("planted %+v, want %d", r.Planted, tc.planted)
			}
			if len(r.Trust) == 0 || r.Trust[0].Resource.Name != "one" || len(r.Trust[0].Added) != 1 || r.Trust[0].Added[0].Why != tc.why {
				t.Fatalf("trust %+v, want one CA added to one, why %s", r.Trust, tc.why)
			}
			if len(r.Trust[0].Kept) != 1 || r.Trust[0].Kept[0].Why != WhyCarried {
				t.Errorf("kept %+v, want the old CA carried", r.Trust[0].Kept)
			}
		})
	}
}

func TestRetiredLinesARenderWritesAreNotPlanted(t *testing.T) {
	caOld, caNew := testpki.Fixture("ca-2025"), testpki.Fixture("ca-2026")
	own := "---\napiVersion: v1\nkind: Secret\nmetadata: {name: new-ca, namespace: a}\ndata:\n  tls.crt: " + base64.StdEncoding.EncodeToString(caNew.PEM()) + "\n"
	withLine := func(c testpki.Cert, at string) string {
		s := trustSecret("one", caNew, caOld)
		return s[:len("apiVersion: v1\nkind: Secret\n")] + "metadata:\n  name: one\n  namespace: a\n  annotations:\n    rotate-certs.dev/retired: \"" +
			shaOf(c) + " " + at + "\"\n" + s[len("apiVersion: v1\nkind: Secret\nmetadata: {name: one, namespace: a}\n"):] + own
	}
	base := trustSecret("one", caNew, caOld) + own
	cases := []struct {
		name, head string
		planted    int
	}{
		{"the old CA retired at the render", withLine(caOld, "2026-11-21T00:00:00Z"), 0},
		{"the current CA retired", withLine(caNew, "2026-11-21T00:00:00Z"), 1},
		{"the old CA retired after now", withLine(caOld, "2026-12-21T00:00:00Z"), 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if r := Compare(model(base), model(tc.head), fuzzNow); len(r.Planted) != tc.planted {
				t.Errorf("planted %+v, want %d", r.Planted, tc.planted)
			}
		})
	}
}

func shaOf(c testpki.Cert) string { return sha(c.Cert) }

// A roll names the workload's file and when it rolls: a fleet holds the
// same workload once per cluster, and two lines "Deployment a/w rolls"
// would not say which.
func TestRollLineNamesTheFile(t *testing.T) {
	w := Resource{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "a", Name: "w"}
	inFile := w
	inFile.File = "clusters/east/app/deploy.yaml"
	for _, tc := range []struct {
		roll Roll
		want string
	}{
		{Roll{Resource: w, Wave: WaveNow}, "Deployment a/w rolls now"},
		{Roll{Resource: inFile, Wave: WaveNow}, "Deployment a/w rolls now (in clusters/east/app/deploy.yaml)"},
		{Roll{Resource: inFile, Wave: "bundle b: wave 2 of 3, due 2026-11-23T00:00:00Z"},
			"Deployment a/w rolls later, in bundle b: wave 2 of 3, due 2026-11-23T00:00:00Z (in clusters/east/app/deploy.yaml)"},
	} {
		s := section{entries: []entry{rollEntry(tc.roll)}}
		if got := strings.Join(s.blocks()[0].lines(tablePlaces), "\n"); got != tc.want {
			t.Errorf("roll %+v: %q, want %q", tc.roll, got, tc.want)
		}
	}
}
