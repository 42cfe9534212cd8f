// Package inventory finds the certificates a set of resources holds, and
// the objects that carry trust: what the function's steps ask of the input
// (the chains of the trust bundles, the re-issue list, the alerts) and
// what `rotate-certs check` and the expiry results report. It decides
// nothing and presents nothing; package report turns an Inventory into
// results, tables, JSON and SVG.
//
// Scanning reads Secret and ConfigMap values (PEM, a value that is one
// DER certificate, and the certificates inside kubeconfig values and Argo
// CD cluster configs; local-config snapshots included), the trust fields
// outside them (caBundles, ClusterTrustBundles, trust-manager inLine
// sources), Cluster API Machines' certificate expiry and EKS Anywhere
// Clusters' status.clusterCertificateInfo (as package clusterapi reads
// them), in one pass over the input; ScanAll also reads the certificates
// embedded in pod templates' env values and in Helm values. Each
// certificate says what kind of place holds it (Place).
package inventory

import (
	"crypto/x509"
	"fmt"
	"strings"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/clusterapi"
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/pki"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Found is one certificate in one value of one resource.
type Found struct {
	Ref   kube.Ref
	Field string
	// Within locates the certificate inside the value when the value is a
	// document of its own, such as "users[admin].user.client-certificate-data"
	// in a kubeconfig; empty for a plain PEM value.
	Within string
	Cert   *x509.Certificate
	// Supplied marks a CA that a chain supplies: it follows, in its value,
	// a certificate that names it as issuer and is not self-issued
	// (tls.crt, cert-chain.pem: the certificate, then the intermediates
	// that signed it). It is re-issued with the certificate it follows. A
	// trust bundle's CAs (a caBundle, a ca.crt of several roots) are not a
	// chain: each stands alone, whatever its place, so that the order a
	// bundle is written in (the function writes its canonical order) never
	// changes what chains to what.
	Supplied bool
	// Place is what kind of place holds it (places.go).
	Place Place
	// Name is what the object calls the value, where the field's last
	// part is not a key of its own: an env variable's name, the last key
	// of a Helm value's path ("identityTrustAnchorsPEM"); empty elsewhere
	// and when the name is not plain.
	Name string
}

// Key returns the field, followed by ":" and the location inside the value
// when there is one: "data.value:users[admin].user.client-certificate-data".
func (f Found) Key() string { return joinKey(f.Field, f.Within) }

// Where describes the location for messages: "Secret ns/name data.tls.crt".
func (f Found) Where() string { return f.Ref.String() + " " + f.Key() }

func joinKey(field, within string) string {
	if within == "" {
		return field
	}
	return field + ":" + within
}

// Problem is a value that holds certificate data that could not be read.
type Problem struct {
	Ref     kube.Ref
	Field   string
	Message string
	// Expiry marks a reported expiry date that could not be read (a
	// Machine's, its bootstrap config's, an EKS Anywhere Cluster's), as
	// opposed to certificate data.
	Expiry bool
}

// Expiry is an expiry date that a controller reported for certificates
// that are not themselves in the input: a Cluster API Machine's
// certificatesExpiryDate, or an EKS Anywhere Cluster's per-machine
// expiresInDays. It has no subject, issuer or fingerprint, only a date.
type Expiry struct {
	Ref   kube.Ref
	Field string
	// Subject says whose certificates the date is about, for tables and
	// messages: "certificates of machine prod-cp-7x2k".
	Subject string
	// notAfter is the reported date. It is zero for a source that reports
	// only days left (inDays).
	notAfter time.Time
	// inDays is the number of days left as the source reported it, when
	// the source reports no date (EKS Anywhere). The count is taken to be
	// as of the report's now: the status is as fresh as the input.
	inDays *int
}

// At returns the expiry as a time: notAfter, or now plus inDays.
func (e Expiry) At(now time.Time) time.Time {
	if e.inDays != nil {
		return now.Add(time.Duration(*e.inDays) * 24 * time.Hour)
	}
	return e.notAfter
}

// Approximate reports whether At is derived from a days-left count.
func (e Expiry) Approximate() bool { return e.inDays != nil }

// Inventory is everything the scan found, in input order.
type Inventory struct {
	Certificates []Found
	Expiries     []Expiry
	Problems     []Problem
}

// Scan reads every item once. Core (v1) Secret and ConfigMap values that
// hold PEM certificates, one DER certificate, a kubeconfig or an Argo CD
// cluster config, and the trust fields outside them (trustfields.go), give
// Certificates: the places the function's steps read (Reads); Cluster API Machines and EKS Anywhere Clusters give
// Expiries. Values with no certificate in them (no PEM, a private or
// public key, a PGP block, DER that is not one certificate) are skipped
// quietly;
// certificate data that does not parse becomes a Problem (an unrelated
// broken Secret must not fail a render). Each distinct certificate is
// parsed once, however often it occurs.
func Scan(items []*yaml.RNode) *Inventory { return ScanWith(items, pki.NewCache()) }

// ScanWith is Scan with certificates parsed through certs, so that a run
// that parses the same certificates elsewhere (trust bundle sources and
// targets) parses each once and holds one *x509.Certificate for it.
func ScanWith(items []*yaml.RNode, certs *pki.Cache) *Inventory {
	return ScanTargets(items, certs, kube.TargetKinds())
}

// ScanAll is Scan, and also the certificates embedded in objects that no
// trust bundle reads or writes (embedded.go): the env values of pod
// templates' containers and the Helm values of Flux HelmReleases and Argo
// CD Applications. It is what `check` lists and `diff` judges as trust;
// the function's steps decide nothing by these values, so Reads does not
// declare them and function mode does not read them.
func ScanAll(items []*yaml.RNode) *Inventory {
	return ScanAllWith(items, pki.NewCache(), kube.TargetKinds())
}

// ScanAllWith is ScanAll by the target-kind table targets (a caller that
// is given the table - diff's model, tests that add a kind - reads the
// kinds it has), with certificates parsed through certs: diff reads a
// tree object by object, and each certificate is one *x509.Certificate
// however many objects hold it.
func ScanAllWith(items []*yaml.RNode, certs *pki.Cache, targets kube.TargetTable) *Inventory {
	s := &scanner{inv: &Inventory{}, cache: certs, targets: targets, embedded: true}
	return s.scan(items)
}

// ScanTargets is ScanWith by the target-kind table targets: tests add a
// kind with it.
func ScanTargets(items []*yaml.RNode, certs *pki.Cache, targets kube.TargetTable) *Inventory {
	s := &scanner{inv: &Inventory{}, cache: certs, targets: targets}
	return s.scan(items)
}

// scan reads every item of items once.
func (s *scanner) scan(items []*yaml.RNode) *Inventory {
	for _, item := range items {
		kind, group := item.GetKind(), kube.GroupOf(item.GetApiVersion())
		keys := holdsKeys(s.targets, kind, group)
		// A local-config Secret or ConfigMap is a snapshot of an object
		// that lives in the cluster: its certificates are real, and read.
		if kube.IsLocalConfig(item) && !keys || kube.IsSOPSEncrypted(item) {
			continue
		}
		switch {
		case keys:
			s.values(item)
		case s.trustFields(item, kind, group):
		case clusterapi.IsMachine(item):
			s.machine(item, items)
		case clusterapi.IsEKSACluster(item):
			s.eksaCluster(item)
		case s.embedded:
			s.embeddedValues(item, kind, group)
		}
	}
	return s.inv
}

type scanner struct {
	inv   *Inventory
	cache *pki.Cache
	// bootstrap indexes the bootstrap configs of the input, made at the
	// first Machine.
	bootstrap clusterapi.BootstrapConfigs
	// targets is the target-kind table, whose cluster-scoped kinds hold
	// trust (trustFields).
	targets kube.TargetTable
	// embedded reads the values of objects no trust bundle reads or
	// writes too (ScanAll).
	embedded bool
}

func (s *scanner) problem(ref kube.Ref, field, format string, args ...any) {
	s.inv.Problems = append(s.inv.Problems, Problem{Ref: ref, Field: field, Message: fmt.Sprintf(format, args...)})
}

func (s *scanner) values(item *yaml.RNode) {
	values, err := kube.Values(item)
	if err != nil {
		field, msg := kube.SplitFieldError(err, "")
		if field = safeField(field); field != "" {
			msg = field + ": " + msg
		}
		s.problem(kube.RefOf(item), field, "%s", msg)
		return
	}
	refOf := lazyRef(item)
	for _, v := range values {
		v.Field = safeField(v.Field)
		switch {
		case pki.LooksLikePEM(v.Bytes):
			s.pem(refOf, spot{field: v.Field}, v.Bytes, false)
		case looksLikeKubeconfig(v.Bytes):
			s.kubeconfig(refOf, v)
		case looksLikeArgoCDConfig(v.Bytes):
			s.argoCDConfig(refOf, v)
		case looksLikeDER(v.Bytes):
			s.der(refOf, v.Field, v.Bytes)
		}
	}
}

// safeField returns a data field path ("data.ca.crt") to show in a
// result: its key as written when it is plain, else described
// (kube.Safe). A data key is the user's text, and a hostile manifest may
// put anything there - PEM, a terminal escape - that a report must not
// repeat.
func safeField(field string) string {
	prefix, key, ok := strings.Cut(field, ".")
	if !ok {
		return field
	}
	return prefix + "." + kube.Safe(key)
}

// lazyRef returns item's Ref, read on the first call: most values and
// objects the scan looks at hold nothing it records.
func lazyRef(item *yaml.RNode) func() kube.Ref {
	var ref *kube.Ref
	return func() kube.Ref {
		if ref == nil {
			r := kube.RefOf(item)
			ref = &r
		}
		return *ref
	}
}

// scans reports whether the scan reads a Secret or ConfigMap value: PEM,
// a kubeconfig's or an Argo CD cluster config's certificate fields, or
// what may be a DER certificate. A Secret or ConfigMap with no such value,
// and whose values all decode, adds nothing to the inventory.
func scans(value []byte) bool {
	return pki.LooksLikePEM(value) || looksLikeKubeconfig(value) || looksLikeArgoCDConfig(value) || looksLikeDER(value)
}

// suppliedBy reports whether ca is the link of a chain after prev: a CA
// that prev, a certificate that is not self-issued, names as issuer.
func suppliedBy(prev, ca *x509.Certificate) bool {
	return pki.IsCA(ca) && string(prev.RawIssuer) != string(prev.RawSubject) && string(prev.RawIssuer) == string(ca.RawSubject)
}

// pem records the certificates of one PEM value. certOnly marks a field
// that can only hold certificates (a kubeconfig's), where anything
// unreadable is a problem. The certificates that parse are recorded even
// when the rest of the value does not: one bad block must not hide the
// expiry of the good ones.
func (s *scanner) pem(ref func() kube.Ref, at spot, data []byte, certOnly bool) {
	d, errs := s.cache.ScanPEM(data)
	for i, c := range d.Certificates {
		s.inv.Certificates = append(s.inv.Certificates, Found{Ref: ref(), Field: at.field, Within: at.within, Cert: c,
			Supplied: i > 0 && suppliedBy(d.Certificates[i-1], c), Place: at.place, Name: at.name})
	}
	// Only data that claims to be a certificate is a problem; other PEM
	// (keys, PGP armour, CSRs) and prose that mentions a PEM header are
	// none of the report's business.
	if len(errs) == 0 || !certOnly && !pki.HoldsCertificateData(data) {
		return
	}
	msgs := make([]string, len(errs))
	for i, err := range errs {
		msgs[i] = err.Error()
	}
	s.problem(ref(), joinKey(at.field, at.within), "%s", strings.Join(msgs, "; "))
}
