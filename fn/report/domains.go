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
	// Whole says check saw the whole domain (it ran at the repository's
	// top); in part, previous CAs stay until they expire.
	Whole    bool
	Packages []DomainPackage
	Blocking []Blocking
}

// DomainPackage is one package of a domain.
type DomainPackage struct {
	Package string
	// Trusts are the SHA-256 of every CA the package's bundles of the
	// domain hold, current and previous, each once, in trust order.
	Trusts []string
	// OnPrevious are its certificates that chain only to a previous CA
	// (its re-issue list for the domain's bundles).
	OnPrevious []OnPrevious
}

// OnPrevious is a certificate still on a previous CA; Needs is that CA's
// SHA-256.
type OnPrevious struct {
	Resource             kube.Ref
	Key, Subject, SHA256 string
	Needs                string
}

// Blocking is a previous CA of a domain and what keeps it: the verdicts of
// the bundles that hold it, and the packages whose certificates need it.
type Blocking struct {
	SHA256, Subject string
	Verdicts        []string
	// NeededBy are the packages with certificates on it; Certificates
	// counts those certificates.
	NeededBy     []string
	Certificates int
}

// BundleKey names a bundle of a package.
type BundleKey struct{ Package, Bundle string }

// Domains builds the progress of each trust domain from the rows of r (the
// trust and re-issue rows of every package), given the domain of each
// bundle that names one; whole says check saw the domains whole. Domains
// are in name order, packages in report order.
func Domains(r Report, domainOf map[BundleKey]string, whole bool) []Domain {
	byName := map[string]*Domain{}
	pkgOf := func(name, pkg string) *DomainPackage {
		d := byName[name]
		if d == nil {
			d = &Domain{Name: name, Whole: whole}
			byName[name] = d
		}
		for i := range d.Packages {
			if d.Packages[i].Package == pkg {
				return &d.Packages[i]
			}
		}
		d.Packages = append(d.Packages, DomainPackage{Package: pkg})
		return &d.Packages[len(d.Packages)-1]
	}
	for _, t := range r.Trust {
		if name, ok := domainOf[BundleKey{t.Package, t.Bundle}]; ok {
			p := pkgOf(name, t.Package)
			if !slices.Contains(p.Trusts, t.SHA256) && t.Verdict != "dropped" && t.Verdict != "remembered" {
				p.Trusts = append(p.Trusts, t.SHA256)
			}
			if t.Reason != why.TrustSource {
				byName[name].block(t)
			}
		}
	}
	for _, x := range r.Reissues {
		if name, ok := domainOf[BundleKey{x.Package, x.Bundle}]; ok {
			p := pkgOf(name, x.Package)
			p.OnPrevious = append(p.OnPrevious, OnPrevious{Resource: x.Resource, Key: x.Key, Subject: x.Subject, SHA256: x.SHA256, Needs: x.IssuerSHA256})
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
	i := slices.IndexFunc(d.Blocking, func(b Blocking) bool { return b.SHA256 == t.SHA256 })
	if i < 0 {
		d.Blocking = append(d.Blocking, Blocking{SHA256: t.SHA256, Subject: t.Subject})
		i = len(d.Blocking) - 1
	}
	if !slices.Contains(d.Blocking[i].Verdicts, t.VerdictText) {
		d.Blocking[i].Verdicts = append(d.Blocking[i].Verdicts, t.VerdictText)
	}
}

// neededBy counts a certificate of package pkg on previous CA sha.
func (d *Domain) neededBy(sha, pkg string) {
	for i := range d.Blocking {
		if b := &d.Blocking[i]; b.SHA256 == sha {
			b.Certificates++
			if !slices.Contains(b.NeededBy, pkg) {
				b.NeededBy = append(b.NeededBy, pkg)
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
		jd := jsonDomain{Name: d.Name, Whole: d.Whole, Packages: []jsonDomainPackage{}, Blocking: []jsonBlocking{}}
		for _, p := range d.Packages {
			jp := jsonDomainPackage{Package: p.Package, Trusts: append([]string{}, p.Trusts...), OnPrevious: []jsonOnPrevious{}}
			for _, o := range p.OnPrevious {
				jp.OnPrevious = append(jp.OnPrevious, jsonOnPrevious{Resource: resource(o.Resource), Key: o.Key, Subject: o.Subject, SHA256: o.SHA256, Needs: o.Needs})
			}
			jd.Packages = append(jd.Packages, jp)
		}
		for _, b := range d.Blocking {
			jd.Blocking = append(jd.Blocking, jsonBlocking{SHA256: b.SHA256, Subject: b.Subject, Verdicts: append([]string{}, b.Verdicts...),
				NeededBy: append([]string{}, b.NeededBy...), Certificates: b.Certificates})
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
		if !d.Whole {
			name += " (seen in part)"
		}
		for _, p := range d.Packages {
			trusts := make([]string, len(p.Trusts))
			for i, s := range p.Trusts {
				trusts[i] = short(s)
			}
			if len(p.OnPrevious) == 0 {
				t.rows, t.status = append(t.rows, []string{cell(name), packageCell(p.Package), strings.Join(trusts, ","), "-"}), append(t.status, "")
			}
			for _, o := range p.OnPrevious {
				on := fmt.Sprintf("%s %s needs %s", cell(o.Resource.String()), cell(o.Key), short(o.Needs))
				t.rows, t.status = append(t.rows, []string{cell(name), packageCell(p.Package), strings.Join(trusts, ","), on}), append(t.status, "")
			}
		}
	}
	t.write(buf, opts)
	buf.WriteString("\nWhat keeps each previous CA of a domain:\n")
	b := &table{cols: []string{"DOMAIN", "PREVIOUS CA", "SUBJECT", "VERDICT", "NEEDED BY"}}
	for _, d := range r.Domains {
		for _, x := range d.Blocking {
			needed := "-"
			if len(x.NeededBy) > 0 {
				needed = fmt.Sprintf("%d certificate(s) in %s", x.Certificates, strings.Join(x.NeededBy, ", "))
			}
			b.rows, b.status = append(b.rows, []string{cell(d.Name), short(x.SHA256), cell(x.Subject), cell(strings.Join(x.Verdicts, "; ")), needed}), append(b.status, "")
		}
	}
	if len(b.rows) == 0 {
		buf.WriteString("none: no domain holds a previous CA\n")
		return
	}
	b.write(buf, opts)
}
