package bundle_test

import (
	"crypto/x509"
	"testing"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/bundle"
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
	leafOld               bundle.Leaf
	leaves                *bundle.LeafIndex
}

func newReissueFixtures() reissueFixtures {
	f := reissueFixtures{
		oldCA:   testpki.Fixture("ca-2025"),
		newCA:   testpki.Fixture("ca-2026"),
		renewed: testpki.NewCA("ca-2025", testpki.Date(2026, 11, 1), testpki.Days(730)),
		leafOld: bundle.Leaf{Cert: testpki.Fixture("leaf-old").Cert, Where: "Secret a/client data.tls.crt"},
	}
	leafNew := bundle.Leaf{Cert: testpki.Fixture("leaf-new").Cert, Where: "Secret a/server data.tls.crt"}
	expired := bundle.Leaf{Cert: testpki.Fixture("leaf-expired").Cert, Where: "Secret a/gone data.tls.crt"}
	f.leaves = bundle.NewLeafIndex([]bundle.Leaf{f.leafOld, leafNew, expired})
	return f
}

func TestReissues(t *testing.T) {
	f := newReissueFixtures()
	now, day := testpki.GoldenNow, 24*time.Hour
	oldCA, newCA, renewed, leafOld, leaves := f.oldCA, f.newCA, f.renewed, f.leafOld, f.leaves

	for _, tc := range []struct {
		name    string
		current []*x509.Certificate
		opts    bundle.Options
		now     time.Time
		want    []bundle.Reissue
	}{
		{
			name:    "pending until the old CA expires",
			current: []*x509.Certificate{newCA.Cert},
			opts:    bundle.Options{MaxPrevious: 1, ProtectIssuers: true},
			now:     now,
			want:    []bundle.Reissue{{Leaf: leafOld, Issuer: oldCA.Cert, LeavesAt: testpki.Date(2027, 6, 1), State: bundle.IssuerPending}},
		},
		{
			name:    "pending until retain.for, when that is earlier",
			current: []*x509.Certificate{newCA.Cert},
			opts:    bundle.Options{MaxPrevious: 1, RetainFor: 90 * day, ProtectIssuers: true},
			now:     now,
			want:    []bundle.Reissue{{Leaf: leafOld, Issuer: oldCA.Cert, LeavesAt: testpki.Date(2027, 1, 30), State: bundle.IssuerPending}},
		},
		{
			name:    "protected beyond maxPrevious: due now",
			current: []*x509.Certificate{newCA.Cert},
			opts:    bundle.Options{MaxPrevious: 0, ProtectIssuers: true},
			now:     now,
			want:    []bundle.Reissue{{Leaf: leafOld, Issuer: oldCA.Cert, LeavesAt: now, State: bundle.IssuerProtected}},
		},
		{
			name:    "protected after retain.for elapsed: due since the deadline",
			current: []*x509.Certificate{newCA.Cert},
			opts:    bundle.Options{MaxPrevious: 1, RetainFor: 10 * day, ProtectIssuers: true},
			now:     now,
			want:    []bundle.Reissue{{Leaf: leafOld, Issuer: oldCA.Cert, LeavesAt: testpki.Date(2026, 11, 11), State: bundle.IssuerProtected}},
		},
		{
			name:    "dropped when protectIssuers is off",
			current: []*x509.Certificate{newCA.Cert},
			opts:    bundle.Options{MaxPrevious: 0, ProtectIssuers: false},
			now:     now,
			want:    []bundle.Reissue{{Leaf: leafOld, Issuer: oldCA.Cert, LeavesAt: now, State: bundle.IssuerDropped}},
		},
		{
			name:    "a leaf a current CA also verifies needs nothing",
			current: []*x509.Certificate{renewed.Cert},
			opts:    bundle.Options{MaxPrevious: 1, ProtectIssuers: true},
			now:     now,
		},
		{
			// Copy mode drops the old CA from the bundle whatever the
			// retain settings: its leaf is to re-issue now.
			name:    "Copy mode: the issuer leaves the bundle now",
			current: []*x509.Certificate{newCA.Cert},
			opts:    bundle.Options{Copy: true, MaxPrevious: 1, ProtectIssuers: true},
			now:     now,
			want:    []bundle.Reissue{{Leaf: leafOld, Issuer: oldCA.Cert, LeavesAt: now, State: bundle.IssuerDropped}},
		},
		{
			name:    "Copy mode: a leaf a current CA also verifies needs nothing",
			current: []*x509.Certificate{renewed.Cert},
			opts:    bundle.Options{Copy: true},
			now:     now,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := bundle.Merge(tc.current, []*x509.Certificate{oldCA.Cert}, leaves, tc.opts, tc.now)
			require.NoError(t, err)
			require.Equal(t, tc.want, out.Reissues(leaves, tc.opts, tc.now))
		})
	}
}
