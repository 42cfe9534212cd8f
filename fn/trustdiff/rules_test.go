package trustdiff

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/internal/testpki"
)

// The break and planting rules, each held by a test here or in fn/diff:
// removing any one of them fails one.

// presentedTree is a server whose certificate Secret "server-tls" (no
// namespace: kubectl's --dry-run output) holds leaf, mounted whole by the
// server Deployment (annotations on it; template its pod template's
// annotation, a roll), and the trust Secret "trust" holding cas, which a
// client mounts whole and reloads (hot). holder false leaves the
// certificate Secret out.
func presentedTree(leaf testpki.Cert, holder bool, template string, annotations string, cas ...testpki.Cert) string {
	var trust []byte
	for _, c := range cas {
		trust = append(trust, c.PEM()...)
	}
	enc := base64.StdEncoding.EncodeToString
	docs := []string{
		"apiVersion: v1\nkind: Secret\nmetadata: {name: trust, namespace: a}\ndata:\n  ca.crt: " + enc(trust) + "\n",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: client, namespace: a, annotations: {rotate-certs.dev/reload: hot}}\nspec:\n  template:\n    spec:\n" +
			"      containers: [{name: c, volumeMounts: [{name: t, mountPath: /t}]}]\n      volumes: [{name: t, secret: {secretName: trust}}]\n",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: server, namespace: a" + annotations + "}\nspec:\n  template:\n" +
			"    metadata: {annotations: {restarted: '" + template + "'}}\n    spec:\n" +
			"      containers: [{name: c, volumeMounts: [{name: s, mountPath: /s}]}]\n      volumes: [{name: s, secret: {secretName: server-tls}}]\n",
	}
	if holder {
		docs = append(docs, "apiVersion: v1\nkind: Secret\nmetadata: {name: server-tls}\ndata:\n  tls.crt: "+enc(leaf.PEM())+"\n")
	}
	return strings.Join(docs, "---\n")
}

// TestOldCertificateStillPresented: the trust replaced (old CA out, new
// CA in) and the server's certificate re-issued in one change. A server
// that loads its certificate once and is not rolled keeps presenting the
// old one, which the client, reloading the new trust, rejects - also when
// the change removes the certificate's Secret. A server that reloads, or
// is rolled by the change, presents the new one.
func TestOldCertificateStillPresented(t *testing.T) {
	caOld, caNew := testpki.Fixture("ca-2025"), testpki.Fixture("ca-2026")
	leafOld, leafNew := testpki.Fixture("leaf-old"), testpki.Fixture("leaf-new")
	for _, tc := range []struct {
		name        string
		holder      bool
		roll        string
		annotations string
		breaks      bool
	}{
		{"not rolled", true, "", "", true},
		{"its Secret removed", false, "", "", true},
		{"rolled by the change", true, "2026-11-22", "", false},
		{"reloads its files", true, "", ", annotations: {rotate-certs.dev/reload: hot}", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := model(presentedTree(leafOld, true, "", tc.annotations, caOld))
			head := model(presentedTree(leafNew, tc.holder, tc.roll, tc.annotations, caNew))
			var got []Break
			for _, b := range Compare(base, head, fuzzNow).Breaks {
				if b.Reason == reasonOldCert {
					got = append(got, b)
				}
			}
			if !tc.breaks {
				if len(got) > 0 {
					t.Fatalf("breaks %+v, want none of the old certificate", got)
				}
				return
			}
			if len(got) != 1 || got[0].Certificate.SHA256 != shaOf(leafOld) || got[0].Trust.Resource.Name != "trust" ||
				len(got[0].Readers) != 1 || got[0].Readers[0].Resource.Name != "client" {
				t.Fatalf("breaks %+v, want the old leaf against the new trust the client reads", got)
			}
		})
	}
}

// TestMemoryPEMEditsArePlanted: a CA added to a previous or seen
// annotation that neither the object's data nor a source held is memory
// that could restore it: planted. One the data held is what a render
// writes.
func TestMemoryPEMEditsArePlanted(t *testing.T) {
	caOld, caNew, attacker := testpki.Fixture("ca-2025"), testpki.Fixture("ca-2026"), testpki.Fixture("attacker-ca")
	withMemory := func(name string, cas ...testpki.Cert) string {
		s := trustSecret("one", caNew, caOld)
		if name == "" {
			return s
		}
		var block strings.Builder
		for _, c := range cas {
			for _, l := range strings.Split(strings.TrimSpace(string(c.PEM())), "\n") {
				block.WriteString("      " + l + "\n")
			}
		}
		return strings.Replace(s, "metadata: {name: one, namespace: a}\n",
			"metadata:\n  name: one\n  namespace: a\n  annotations:\n    "+name+": |\n"+block.String(), 1)
	}
	base := withMemory("")
	for _, tc := range []struct {
		name, annotation string
		cas              []testpki.Cert
		planted          bool
	}{
		{"previous names a CA nothing held", "rotate-certs.dev/previous", []testpki.Cert{attacker}, true},
		{"previous names a CA of the data", "rotate-certs.dev/previous", []testpki.Cert{caOld}, false},
		{"seen names a CA nothing held", "rotate-certs.dev/seen", []testpki.Cert{attacker}, true},
		{"seen names a CA of the data", "rotate-certs.dev/seen", []testpki.Cert{caNew}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			head := model(withMemory(tc.annotation, tc.cas...))
			if head == nil {
				t.Fatal("does not parse")
			}
			var got []string
			for _, p := range Compare(model(base), head, fuzzNow).Planted {
				got = append(got, p.Annotation+" "+p.SHA256)
			}
			want := []string{}
			if tc.planted {
				want = []string{tc.annotation + " " + shaOf(attacker)}
			}
			if strings.Join(got, ",") != strings.Join(want, ",") {
				t.Fatalf("planted %v, want %v", got, want)
			}
		})
	}
}
