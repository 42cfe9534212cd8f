package initpolicy

import (
	"crypto/x509"
	"fmt"
	"slices"
	"strings"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/pki"
)

// Trust domains proposed across packages (spec.trustBundles[].domain):
// bundles of different packages whose sources hold the same CA certificate
// (a multicluster mesh's anchor copied into every cluster, a corporate
// root) trust the same thing, and one package's render must not drop a CA
// another package still needs. Such bundles, and every bundle that shares
// a source CA with one of them, get one domain. Its name is the one a
// policy of the input already gives one of them, else derived from the
// first CA shared by two packages (domainName); two domains of one name
// are told apart by -2, -3, ... Bundles that share no source CA with
// another package's get no domain (but keep one a policy gave them).

// bundleAt is one bundle of a package plan.
type bundleAt struct{ pkg, bundle int }

// proposeDomains sets Bundle.Domain and Bundle.domainPackages on the
// bundles of plans that share a source CA with a bundle of another
// package.
func proposeDomains(plans []PackagePlan) {
	var all []bundleAt
	holders := map[pki.Fingerprint][]int{} // CA -> indexes in all of the bundles whose sources hold it
	for p := range plans {
		for b := range plans[p].Bundles {
			for _, ca := range sourceCAs(plans[p].Bundles[b]) {
				fp := pki.FingerprintOf(ca)
				holders[fp] = append(holders[fp], len(all))
			}
			all = append(all, bundleAt{p, b})
		}
	}
	u := newUnion(len(all))
	for _, hs := range holders {
		for _, h := range hs[1:] {
			u.join(hs[0], h)
		}
	}
	used := map[string]bool{}
	for _, members := range u.groups() {
		pkgs := map[int]bool{}
		for _, m := range members {
			pkgs[all[m].pkg] = true
		}
		if len(pkgs) < 2 {
			continue
		}
		var bundles []*Bundle
		var dirs []string
		for _, m := range members {
			bundles = append(bundles, &plans[all[m].pkg].Bundles[all[m].bundle])
			if d := plans[all[m].pkg].Dir; !slices.Contains(dirs, d) {
				dirs = append(dirs, d)
			}
		}
		name := nameDomain(bundles, holders, all, used)
		for _, b := range bundles {
			b.Domain, b.domainPackages = name, dirs
		}
	}
}

// nameDomain returns the domain name of bundles (in plan order): the one
// a policy of the input gives the first of them that has one, else the
// name of the first of their source CAs that bundles of two packages hold,
// made unique among used.
func nameDomain(bundles []*Bundle, holders map[pki.Fingerprint][]int, all []bundleAt, used map[string]bool) string {
	for _, b := range bundles {
		if b.Domain != "" {
			used[b.Domain] = true
			return b.Domain
		}
	}
	var shared *x509.Certificate
	for _, b := range bundles {
		for _, ca := range sourceCAs(*b) {
			if shared == nil && heldByPackages(holders[pki.FingerprintOf(ca)], all) > 1 {
				shared = ca
			}
		}
	}
	base := domainName(shared)
	n := firstFree(func(s string) bool { return used[s] }, base)
	used[n] = true
	return n
}

// heldByPackages counts the packages of the bundles hs.
func heldByPackages(hs []int, all []bundleAt) int {
	pkgs := map[int]bool{}
	for _, h := range hs {
		pkgs[all[h].pkg] = true
	}
	return len(pkgs)
}

// maxDomain is the longest domain name (policy: at most 63 characters),
// less room for a -N suffix.
const maxDomain = 60

// domainName derives a domain name from ca: its subject's common name,
// else its first organization, lowercased, each run of characters other
// than a-z, 0-9, '-' and '.' made one '-', each dot-separated label
// trimmed of '-' and empty labels dropped, cut at 60 characters; "ca-"
// and the first 12 hex digits of its SHA-256 fingerprint when nothing is
// left ("root.linkerd.cluster.local" stays itself, "Corp Root CA G2"
// becomes "corp-root-ca-g2").
func domainName(ca *x509.Certificate) string {
	if ca == nil {
		return "shared-ca"
	}
	name := ca.Subject.CommonName
	if name == "" && len(ca.Subject.Organization) > 0 {
		name = ca.Subject.Organization[0]
	}
	var labels []string
	for _, l := range strings.Split(strings.ToLower(name), ".") {
		if l = strings.Trim(notDNS.ReplaceAllString(l, "-"), "-"); l != "" {
			labels = append(labels, l)
		}
	}
	n := strings.Join(labels, ".")
	if len(n) > maxDomain {
		n = strings.TrimRight(n[:maxDomain], "-.")
	}
	if !kube.ValidObjectName(n) {
		return "ca-" + pki.FingerprintOf(ca).String()[:12]
	}
	return n
}

// sourceCAs returns the CAs of b's sources, in order.
func sourceCAs(b Bundle) []*x509.Certificate {
	var out []*x509.Certificate
	for _, s := range b.Sources {
		out = append(out, s.cas...)
	}
	return out
}

// domainComment says why b has its domain, for the policy's comments.
func domainComment(b Bundle) string {
	if len(b.domainPackages) == 0 {
		return fmt.Sprintf("Trust domain %s, as the policy of the input names it.", b.Domain)
	}
	return fmt.Sprintf("Trust domain %s: the bundles of packages %s read the same CA from their sources. Rendered from the repository's top, each trusts the CAs of all and keeps a previous CA while a certificate of any package needs it; give them the same retain.",
		b.Domain, strings.Join(quoteDirs(b.domainPackages), ", "))
}

func quoteDirs(dirs []string) []string {
	out := make([]string, len(dirs))
	for i, d := range dirs {
		out[i] = kube.SafePath(d)
	}
	return out
}

// union is a union-find over 0..n-1.
type union []int

func newUnion(n int) union {
	u := make(union, n)
	for i := range u {
		u[i] = i
	}
	return u
}

func (u union) find(i int) int {
	for u[i] != i {
		u[i] = u[u[i]]
		i = u[i]
	}
	return i
}

func (u union) join(a, b int) {
	if ra, rb := u.find(a), u.find(b); ra != rb {
		if ra > rb {
			ra, rb = rb, ra
		}
		u[rb] = ra
	}
}

// groups returns the members of each set, each in order, the sets in the
// order of their first member.
func (u union) groups() [][]int {
	index := map[int]int{}
	var out [][]int
	for i := range u {
		r := u.find(i)
		j, ok := index[r]
		if !ok {
			j = len(out)
			index[r] = j
			out = append(out, nil)
		}
		out[j] = append(out[j], i)
	}
	return out
}
