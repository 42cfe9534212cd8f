package anchors

import (
	"testing"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/pki"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/stretchr/testify/require"
)

// Two clusters of one mesh, east and west, share the anchor. east's issuer
// is re-issued from the new anchor, west's is still the old anchor's.
var (
	westIssuerOld = testpki.NewIntermediate("west-issuer-old", "identity.mesh.test", anchorOld, day(0), testpki.Days(365))
	westIssuerNew = testpki.NewIntermediate("west-issuer-new", "identity.mesh.test", anchorNew, day(106), testpki.Days(365))
)

// domainHeld is what the pre-pass of a render at the repository's top
// finds in the domain's packages: each package's anchors target and
// issuer.
func domainHeld(east, west testpki.Cert) []Held {
	return []Held{
		{Cert: anchorNew.Cert, Where: "ConfigMap mesh/roots in east", Package: "east"},
		{Cert: anchorOld.Cert, Where: "ConfigMap mesh/roots in east", Package: "east"},
		{Cert: east.Cert, Where: "Secret mesh/identity-issuer data.crt.pem in east", Package: "east"},
		{Cert: anchorNew.Cert, Where: "ConfigMap mesh/roots in west", Package: "west"},
		{Cert: anchorOld.Cert, Where: "ConfigMap mesh/roots in west", Package: "west"},
		{Cert: west.Cert, Where: "Secret mesh/identity-issuer data.crt.pem in west", Package: "west"},
	}
}

// TestDomainKeepsWhatAnotherPackageNeeds: east's render alone finds nothing
// on the old anchor and drops it once dropUnusedAfter has run; seeing the
// domain, it keeps the anchor while west's issuer still chains only to it,
// names west's issuer in the verdict but not in east's re-issue list, and
// drops it once west is re-issued too. A partial view keeps it until it
// expires, whatever the rules say.
func TestDomainKeepsWhatAnotherPackageNeeds(t *testing.T) {
	origins := []Origin{{Cert: anchorNew.Cert, Where: "Secret mesh/anchor in east"}, {Cert: anchorNew.Cert, Where: "Secret mesh/anchor in west"}}
	// east's target records that nothing in east has chained to the old
	// anchor since day 103.
	old := pki.FingerprintOf(anchorOld.Cert)
	mem := Memory{Certificates: certs(anchorOld), Retired: map[pki.Fingerprint]time.Time{old: day(100)}, Unused: map[pki.Fingerprint]time.Time{old: day(103)}, Recorded: true}
	opts := Options{MaxPrevious: 1, DropUnusedAfter: 24 * time.Hour, ProtectIssuers: true}
	eastInput := NewChainIndex(meshInput(issuerNew, testpki.NewLeaf("east-proxy", issuerNew, day(105), testpki.Days(30)))[:1], nil)
	now := day(105)
	tests := []struct {
		name    string
		view    *DomainView
		verdict string
		needed  []string
	}{
		{"east alone", nil, "dropped (unused: retain.dropUnusedAfter elapsed)", nil},
		{"the whole domain, west not re-issued", &DomainView{Name: "mesh", Package: "east", Domain: NewDomain("mesh", origins, domainHeld(issuerNew, westIssuerOld), nil, now)},
			"kept (maxPrevious)", []string{"Secret mesh/identity-issuer data.crt.pem in west"}},
		{"the whole domain, west re-issued", &DomainView{Name: "mesh", Package: "east", Domain: NewDomain("mesh", origins, domainHeld(issuerNew, westIssuerNew), nil, now)},
			"dropped (unused: retain.dropUnusedAfter elapsed)", nil},
		{"a partial view", &DomainView{Name: "mesh", Package: "east"},
			"kept (trust domain mesh is not seen whole: until it expires on 2028-01-01 or a render at the repository's top)", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := opts
			o.Domain = tt.view
			out, err := MergeTarget(certs(anchorNew), mem, eastInput, o, now)
			require.NoError(t, err)
			f := out.Fates[0]
			require.Equal(t, tt.verdict, f.Verdict.String())
			require.Equal(t, tt.needed, wheres(f.Needed()))
			require.Empty(t, f.Dependents, "east holds nothing on the old anchor")
			require.Empty(t, out.Reissues(), "west's issuer is re-issued in west, not listed in east")
			if tt.view != nil && !tt.view.Whole() {
				require.Empty(t, out.UnusedRecord(), "a partial view starts no unused count")
			}
		})
	}
	// Past retain.for, west's issuer protects the anchor in east's bundle.
	o := Options{MaxPrevious: 1, RetainFor: 72 * time.Hour, ProtectIssuers: true,
		Domain: &DomainView{Name: "mesh", Package: "east", Domain: NewDomain("mesh", origins, domainHeld(issuerNew, westIssuerOld), nil, now)}}
	out, err := MergeTarget(certs(anchorNew), mem, eastInput, o, now)
	require.NoError(t, err)
	require.Equal(t, "kept (protected by Secret mesh/identity-issuer data.crt.pem in west)", out.Fates[0].Verdict.String())
}

// TestDomainNeeds: the domain's needs are by CA and package, leave out
// what expired and what also chains to a current CA of the domain, and a
// package's view leaves out its own certificates (its render finds them).
func TestDomainNeeds(t *testing.T) {
	origins := []Origin{{Cert: anchorNew.Cert, Where: "east"}, {Cert: anchorOld.Cert, Where: "west"}}
	d := NewDomain("mesh", origins, domainHeld(issuerOld, westIssuerOld), nil, day(105))
	require.Len(t, d.current, 2, "the union of every package's current CAs")
	require.Empty(t, d.needed(anchorOld.Cert, day(105)), "the old anchor is current in west: nothing needs it as a previous CA")

	d = NewDomain("mesh", origins[:1], domainHeld(issuerOld, westIssuerOld), nil, day(105))
	require.Equal(t, []string{"Secret mesh/identity-issuer data.crt.pem in east", "Secret mesh/identity-issuer data.crt.pem in west"},
		wheres(d.needed(anchorOld.Cert, day(105))))
	require.Empty(t, d.needed(anchorOld.Cert, day(400)), "both issuers expired on day 365")
	v := &DomainView{Name: "mesh", Package: "west", Domain: d}
	require.Equal(t, []string{"Secret mesh/identity-issuer data.crt.pem in east"}, wheres(v.heldElsewhere(anchorOld.Cert, day(105))))
	require.Empty(t, v.Current(certs(anchorNew)), "west's own sources hold the domain's one current CA")
	require.Len(t, v.Current(certs(anchorOld)), 1)
	require.Empty(t, (&DomainView{Name: "mesh"}).Current(nil), "a partial view knows no other package's sources")
}
