package report

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/why"
)

// Domain is a trust domain's progress as check shows it: which packages
// trust which CA, which certificates in which package still chain only to
// a previous CA, and what keeps each previous CA from leaving.
type Domain struct {
	Name string
	// whole says check saw the whole domain (it ran at the repository's
	// top); in part, previous CAs stay until they expire.
	whole    bool
	packages []domainPackage
	blocking []blocking
}

// domainPackage is one package of a domain.
type domainPackage struct {
	pkg string
	// trusts are the SHA-256 of every CA the package's bundles of the
	// domain hold, current and previous, each once, in trust order.
	trusts []string
	// onPrevious are its certificates that chain only to a previous CA
	// (its re-issue list for the domain's bundles).
	onPrevious []onPrevious
}

// onPrevious is a certificate still on a previous CA; needs is that CA's
// SHA-256.
type onPrevious struct {
	resource             kube.Ref
	key, subject, sha256 string
	needs                string
}

// blocking is a previous CA of a domain and what keeps it: the verdicts of
// the bundles that hold it, and the packages whose certificates need it.
type blocking struct {
	sha256, subject string
	verdicts        []string
	// neededBy are the packages with certificates on it; certificates
	// counts those certificates.
	neededBy     []string
	certificates int
}

// BundleKey names a bundle of a package.
type BundleKey struct{ Package, Bundle string }

// Domains builds the progress of each trust domain from the rows of r (the
// trust and re-issue rows of every package), given the domain of each
// bundle that names one; whole says check saw the domains whole. Domains
// are in name order, packages in report order.
func Domains(r Report, domainOf map[BundleKey]string, whole bool) []Domain {
	byName := map[string]*Domain{}
	pkgOf := func(name, pkg string) *domainPackage {
		d := byName[name]
		if d == nil {
			d = &Domain{Name: name, whole: whole}
			byName[name] = d
		}
		for i := range d.packages {
			if d.packages[i].pkg == pkg {
				return &d.packages[i]
			}
		}
		d.packages = append(d.packages, domainPackage{pkg: pkg})
		return &d.packages[len(d.packages)-1]
	}
	for _, t := range r.trust {
		if name, ok := domainOf[BundleKey{t.Package, t.Bundle}]; ok {
			p := pkgOf(name, t.Package)
			if !slices.Contains(p.trusts, t.SHA256) && t.Verdict != "dropped" && t.Verdict != "remembered" {
				p.trusts = append(p.trusts, t.SHA256)
			}
			if t.Reason != why.TrustSource {
				byName[name].block(t)
			}
		}
	}
	for _, x := range r.reissues {
		if name, ok := domainOf[BundleKey{x.Package, x.Bundle}]; ok {
			p := pkgOf(name, x.Package)
			p.onPrevious = append(p.onPrevious, onPrevious{resource: x.Resource, key: x.Key, subject: x.Subject, sha256: x.SHA256, needs: x.IssuerSHA256})
			byName[name].neededBy(x.IssuerSHA256, x.Package)
		}
	}
	var out []Domain
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for n := range byName {
			if !yield(n) {
				return
			}
		}
	}) {
		out = append(out, *byName[name])
	}
	return out
}

// block adds previous CA row t to what the domain's blocking lists.
func (d *Domain) block(t why.Trusted) {
	i := slices.IndexFunc(d.blocking, func(b blocking) bool { return b.sha256 == t.SHA256 })
	if i < 0 {
		d.blocking = append(d.blocking, blocking{sha256: t.SHA256, subject: t.Subject})
		i = len(d.blocking) - 1
	}
	if !slices.Contains(d.blocking[i].verdicts, t.VerdictText) {
		d.blocking[i].verdicts = append(d.blocking[i].verdicts, t.VerdictText)
	}
}

// neededBy counts a certificate of package pkg on previous CA sha.
func (d *Domain) neededBy(sha, pkg string) {
	for i := range d.blocking {
		if b := &d.blocking[i]; b.sha256 == sha {
			b.certificates++
			if !slices.Contains(b.neededBy, pkg) {
				b.neededBy = append(b.neededBy, pkg)
			}
		}
	}
}

type jsonDomain struct {
	Name     string              `json:"name"`
	Whole    bool                `json:"whole"`
	Packages []jsonDomainPackage `json:"packages"`
	Blocking []jsonBlocking      `json:"blocking"`
}

type jsonDomainPackage struct {
	Package    string           `json:"package"`
	Trusts     []string         `json:"trusts"`
	OnPrevious []jsonOnPrevious `json:"onPrevious"`
}

type jsonOnPrevious struct {
	Resource jsonResource `json:"resource"`
	Key      string       `json:"key"`
	Subject  string       `json:"subject"`
	SHA256   string       `json:"sha256"`
	Needs    string       `json:"needs"`
}

type jsonBlocking struct {
	SHA256       string   `json:"sha256"`
	Subject      string   `json:"subject"`
	Verdicts     []string `json:"verdicts"`
	NeededBy     []string `json:"neededBy"`
	Certificates int      `json:"certificates"`
}

func domainsJSON(ds []Domain) []jsonDomain {
	var out []jsonDomain
	for _, d := range ds {
		jd := jsonDomain{Name: d.Name, Whole: d.whole, Packages: []jsonDomainPackage{}, Blocking: []jsonBlocking{}}
		for _, p := range d.packages {
			jp := jsonDomainPackage{Package: p.pkg, Trusts: append([]string{}, p.trusts...), OnPrevious: []jsonOnPrevious{}}
			for _, o := range p.onPrevious {
				jp.OnPrevious = append(jp.OnPrevious, jsonOnPrevious{Resource: resource(o.resource), Key: o.key, Subject: o.subject, SHA256: o.sha256, Needs: o.needs})
			}
			jd.Packages = append(jd.Packages, jp)
		}
		for _, b := range d.blocking {
			jd.Blocking = append(jd.Blocking, jsonBlocking{SHA256: b.sha256, Subject: b.subject, Verdicts: append([]string{}, b.verdicts...),
				NeededBy: append([]string{}, b.neededBy...), Certificates: b.certificates})
		}
		out = append(out, jd)
	}
	return out
}

// writeDomains writes the domains' section of the table: a row per
// package and certificate on a previous CA, then a row per previous CA.
func writeDomains(buf *bytes.Buffer, r Report, opts TableOptions) {
	buf.WriteString("\nTrust domains (what each package trusts, and what in it still chains only to a previous CA):\n")
	t := &table{cols: []string{"DOMAIN", "PACKAGE", "TRUSTS", "ON A PREVIOUS CA"}}
	for _, d := range r.Domains {
		name := d.Name
		if !d.whole {
			name += " (seen in part)"
		}
		for _, p := range d.packages {
			trusts := make([]string, len(p.trusts))
			for i, s := range p.trusts {
				trusts[i] = short(s)
			}
			if len(p.onPrevious) == 0 {
				t.rows, t.status = append(t.rows, []string{cell(name), packageCell(p.pkg), strings.Join(trusts, ","), "-"}), append(t.status, "")
			}
			for _, o := range p.onPrevious {
				on := fmt.Sprintf("%s %s needs %s", cell(o.resource.String()), cell(o.key), short(o.needs))
				t.rows, t.status = append(t.rows, []string{cell(name), packageCell(p.pkg), strings.Join(trusts, ","), on}), append(t.status, "")
			}
		}
	}
	t.write(buf, opts)
	buf.WriteString("\nWhat keeps each previous CA of a domain:\n")
	b := &table{cols: []string{"DOMAIN", "PREVIOUS CA", "SUBJECT", "VERDICT", "NEEDED BY"}}
	for _, d := range r.Domains {
		for _, x := range d.blocking {
			needed := "-"
			if len(x.neededBy) > 0 {
				needed = fmt.Sprintf("%d certificate(s) in %s", x.certificates, strings.Join(x.neededBy, ", "))
			}
			b.rows, b.status = append(b.rows, []string{cell(d.Name), short(x.sha256), cell(x.subject), cell(strings.Join(x.verdicts, "; ")), needed}), append(b.status, "")
		}
	}
	if len(b.rows) == 0 {
		buf.WriteString("none: no domain holds a previous CA\n")
		return
	}
	b.write(buf, opts)
}
