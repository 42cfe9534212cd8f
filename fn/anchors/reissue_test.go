package anchors_test

import (
	"crypto/x509"
	"testing"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/anchors"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/stretchr/testify/require"
)

// reissueFixtures are the CAs and leaves of TestReissues: the old CA
// (expires 2027-06-01) and the new one (issued 2026-11-01), a CA renewed
// with the old one's key and subject (it verifies the old one's leaves:
// such a leaf needs no re-issue), and an index of a leaf of each CA and an
// expired leaf.
type reissueFixtures struct {
	oldCA, newCA, renewed testpki.Cert
	leafOld               anchors.Held
	index                 *anchors.ChainIndex
}

func newReissueFixtures() reissueFixtures {
	f := reissueFixtures{
		oldCA:   testpki.Fixture("ca-2025"),
		newCA:   testpki.Fixture("ca-2026"),
		renewed: testpki.NewCA("ca-2025", testpki.Date(2026, 11, 1), testpki.Days(730)),
		leafOld: anchors.Held{Cert: testpki.Fixture("leaf-old").Cert, Where: "Secret a/client data.tls.crt", ID: 0},
	}
	leafNew := anchors.Held{Cert: testpki.Fixture("leaf-new").Cert, Where: "Secret a/server data.tls.crt", ID: 1}
	expired := anchors.Held{Cert: testpki.Fixture("leaf-expired").Cert, Where: "Secret a/gone data.tls.crt", ID: 2}
	f.index = anchors.NewChainIndex([]anchors.Held{f.leafOld, leafNew, expired}, nil)
	return f
}

func TestReissues(t *testing.T) {
	f := newReissueFixtures()
	now, day := testpki.GoldenNow, 24*time.Hour
	oldCA, newCA, renewed, leafOld := f.oldCA, f.newCA, f.renewed, f.leafOld
	entry := func(at time.Time, state anchors.ReissueState) []anchors.Reissue {
		return []anchors.Reissue{{Cert: leafOld, Issuer: oldCA.Cert, IssuerName: "CN=ca-2025,O=rotate-certs test", LeavesAt: at, State: state}}
	}
	for _, tc := range []struct {
		name    string
		current []*x509.Certificate
		opts    anchors.Options
		want    []anchors.Reissue
		verdict string
	}{
		{"pending until the old CA expires", []*x509.Certificate{newCA.Cert}, anchors.Options{MaxPrevious: 1, ProtectIssuers: true},
			entry(testpki.Date(2027, 6, 1), anchors.IssuerPending), "kept (maxPrevious)"},
		{"pending until retain.for, when that is earlier", []*x509.Certificate{newCA.Cert}, anchors.Options{MaxPrevious: 1, RetainFor: 90 * day, ProtectIssuers: true},
			entry(testpki.Date(2027, 2, 20), anchors.IssuerPending), "kept (retain.for until 2027-02-20)"},
		{"without protectIssuers retain.for drops it on its date", []*x509.Certificate{newCA.Cert}, anchors.Options{MaxPrevious: 1, RetainFor: 90 * day},
			entry(testpki.Date(2027, 2, 20), anchors.IssuerPending), "drops on 2027-02-20"},
		{"protected beyond maxPrevious: due now", []*x509.Certificate{newCA.Cert}, anchors.Options{MaxPrevious: 0, ProtectIssuers: true},
			entry(now, anchors.IssuerProtected), "kept (protected by Secret a/client data.tls.crt)"},
		{"broken when protectIssuers is off", []*x509.Certificate{newCA.Cert}, anchors.Options{MaxPrevious: 0, ProtectIssuers: false},
			entry(now, anchors.IssuerBroken), "dropped (beyond retain.maxPrevious)"},
		{"a leaf a current CA also verifies needs nothing", []*x509.Certificate{renewed.Cert}, anchors.Options{MaxPrevious: 1, ProtectIssuers: true},
			nil, "unused: safe to drop now (leaves on 2027-06-01)"},
		// Copy mode drops the old CA from the bundle whatever the retain
		// settings: its leaf is broken now.
		{"Copy mode: the issuer leaves the bundle now", []*x509.Certificate{newCA.Cert}, anchors.Options{Copy: true, MaxPrevious: 1, ProtectIssuers: true},
			entry(now, anchors.IssuerBroken), "remembered (Copy mode; Bundle mode would keep it)"},
		{"Copy mode: a leaf a current CA also verifies needs nothing", []*x509.Certificate{renewed.Cert}, anchors.Options{Copy: true, MaxPrevious: 1},
			nil, "remembered (Copy mode; Bundle mode would keep it)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := anchors.MergeTarget(tc.current, anchors.Memory{Certificates: []*x509.Certificate{oldCA.Cert}}, f.index, tc.opts, now)
			require.NoError(t, err)
			require.Equal(t, tc.want, out.Reissues())
			require.Len(t, out.Fates, 1)
			require.Equal(t, tc.verdict, out.Fates[0].Verdict.String())
		})
	}
}
