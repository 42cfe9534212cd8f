package rotate

import (
	"crypto/x509"
	"fmt"
	"strings"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/anchors"
	"github.com/rotate-certs/rotate-certs/fn/certmanager"
	"github.com/rotate-certs/rotate-certs/fn/inventory"
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/pki"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"github.com/rotate-certs/rotate-certs/fn/restart"
	"github.com/rotate-certs/rotate-certs/fn/trustbundle"
	"github.com/rotate-certs/rotate-certs/fn/why"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// reissueReport lists the certificates that must be re-issued because the
// CA they chain to is only among a bundle's previous CAs, or has left it.
func (r *run) reissueReport() {
	r.results = append(r.results, reissueResults(r.reissues())...)
}

// reissues computes the re-issue list of every rendered bundle: one entry
// per bundle, certificate location and CA it needs (targets fanned out to
// several namespaces agree or, if their previous CAs differ, the earliest
// date wins).
//
// Targets of a bundle whose outcomes are alike (see outcomeKeys) have the
// same re-issue list, so only the first of them is expanded: a bundle
// fanned out to many namespaces costs its targets plus its certificates,
// not their product.
func (r *run) reissues() []why.Reissue {
	certs := r.scan().Certificates
	var out []why.Reissue
	seen := map[string]int{}
	for _, b := range r.policy.Spec.TrustBundles {
		rb, ok := r.bundles[b.Name]
		if !ok {
			continue
		}
		alike := outcomeKeys{}
		for _, t := range rb.Targets {
			if !alike.add(t.Outcome) {
				continue
			}
			for _, x := range t.Outcome.Reissues() {
				entry := r.reissueEntry(b.Name, certs[x.Cert.ID], x)
				k := b.Name + "\x00" + x.Cert.Where + "\x00" + entry.SHA256 + "\x00" + entry.IssuerSHA256 + "\x00" + entry.Issuer
				if i, dup := seen[k]; dup {
					if entry.IssuerLeavesAt.Before(out[i].IssuerLeavesAt) {
						out[i] = entry
					}
					continue
				}
				seen[k] = len(out)
				out = append(out, entry)
			}
		}
	}
	why.SortReissues(out)
	return out
}

// reissueEntry is x, of bundle, as the report lists it: where the
// certificate is, the CA it needs, and the cert-manager Certificate that
// writes its Secret, when the Secret names one.
func (r *run) reissueEntry(bundleName string, f inventory.Found, x anchors.Reissue) why.Reissue {
	e := why.Reissue{
		Resource: f.Ref, Key: f.Key(), Subject: pki.Subject(f.Cert), SHA256: pki.FingerprintOf(f.Cert).String(), IsCA: pki.IsCA(f.Cert),
		NotAfter: f.Cert.NotAfter.UTC(), Bundle: bundleName, Issuer: x.IssuerName,
		IssuerLeavesAt: x.LeavesAt.UTC(), DaysLeft: pki.DaysUntil(x.LeavesAt, r.now), State: why.ReissueState(x.State),
	}
	if x.Issuer != nil {
		e.IssuerSHA256 = pki.FingerprintOf(x.Issuer).String()
		e.IssuerExpired = pki.Expired(x.Issuer, r.now)
	}
	if name := certificateName(r.secret(f.Ref)); name != "" && kube.ValidDNSLabel(f.Ref.Namespace) {
		e.Certificate = f.Ref.Namespace + "/" + name
		e.Command = fmt.Sprintf("cmctl renew -n %s %s", f.Ref.Namespace, name)
	}
	return e
}

// secret returns the core Secret ref names, a local-config snapshot
// included (cert-manager's Secrets live in the cluster: git often holds
// only their snapshots), nil for anything else.
func (r *run) secret(ref kube.Ref) *yaml.RNode {
	if ref.Kind != "Secret" || ref.APIVersion != "v1" {
		return nil
	}
	if r.secrets == nil {
		r.secrets = map[kube.Key]*yaml.RNode{}
		for _, it := range r.items {
			if it.GetKind() == "Secret" && it.GetApiVersion() == "v1" {
				if _, dup := r.secrets[kube.KeyOf(it)]; !dup {
					r.secrets[kube.KeyOf(it)] = it
				}
			}
		}
	}
	return r.secrets[kube.Key{Kind: "Secret", Namespace: ref.Namespace, Name: ref.Name}]
}

// certificateName returns the cert-manager Certificate a Secret names in
// its cert-manager.io/certificate-name annotation, when that is a
// Kubernetes object name. Anything else is not quoted into the command a
// user runs: a name like "-x" or "--kubeconfig=..." would be read as a
// flag. The Secret's namespace is held to the same rule (a DNS label) by
// reissueEntry.
func certificateName(node *yaml.RNode) string {
	if node == nil {
		return ""
	}
	name := node.GetAnnotations(certmanager.CertificateNameAnnotation)[certmanager.CertificateNameAnnotation]
	if !kube.ValidObjectName(name) {
		return ""
	}
	return name
}

// outcomeKeys remembers the outcomes of one bundle's targets by what
// Outcome.Reissues reads of them: the current CAs in order, and each
// fate's CA, state, date and retirement. Two outcomes with one key list
// the same re-issues, and a later one adds nothing to the report (same
// entries, same dates). Certificates are told apart by pointer: an equal
// one parsed twice only makes the key differ, which costs a repeat, not
// a wrong answer.
type outcomeKeys struct {
	ids  map[*x509.Certificate]int
	seen map[string]bool
}

// add reports whether o is the first outcome of its key.
func (k *outcomeKeys) add(o anchors.Outcome) bool {
	if k.ids == nil {
		k.ids, k.seen = map[*x509.Certificate]int{}, map[string]bool{}
	}
	var b strings.Builder
	id := func(c *x509.Certificate) {
		n, ok := k.ids[c]
		if !ok {
			n = len(k.ids)
			k.ids[c] = n
		}
		fmt.Fprintf(&b, "%d,", n)
	}
	for _, c := range o.Current {
		id(c)
	}
	for _, f := range o.Fates {
		b.WriteString("|" + string(f.State) + ":")
		id(f.Cert)
		fmt.Fprintf(&b, "@%d-%d", f.RetiredAt.Unix(), f.LeavesAt.Unix())
	}
	fmt.Fprintf(&b, "|%d broken", len(o.Broken))
	for _, x := range o.Broken {
		fmt.Fprintf(&b, ",%d", x.Cert.ID)
	}
	key := b.String()
	if k.seen[key] {
		return false
	}
	k.seen[key] = true
	return true
}

// Explanation is what `check` shows of a policy beyond expiry: the
// certificates to re-issue, why each bundle holds each CA, and the
// roll-outs of restarts in waves that are not done.
type Explanation struct {
	Reissues []why.Reissue
	Trust    []why.Trusted
	Waves    []restart.PendingWaves
	// Renewals are the cert-manager renewals of the CAs the bundles read.
	Renewals []why.Renewal
	// Domains maps each bundle that names a trust domain to it.
	Domains map[string]string
}

// ExplainPolicy runs the trust-bundle and restart rules of the policy
// fnConfig, decoded as pol (policy.Decode: the caller decodes it once),
// with the trust domains p sees (Domains, Package) over a copy of items at
// now, and explains the result; items are not changed. The policy's
// spec.now is ignored: a CI check asks about now, not about the render's
// pinned clock. It fails when a bundle cannot be rendered. The repository
// pass (fn/pass: Package.Explain) calls it for check and diff.
func (p Processor) ExplainPolicy(items []*yaml.RNode, fnConfig *yaml.RNode, pol *policy.RotationPolicy, now time.Time) (Explanation, error) {
	r, err := p.dryRun(items, fnConfig, pol, now, (*run).trustBundles, (*run).restarts)
	if err != nil {
		return Explanation{}, err
	}
	e := Explanation{Reissues: r.reissues(), Trust: r.trust(), Waves: r.waves, Renewals: r.renewalRows()}
	for _, b := range r.policy.Spec.TrustBundles {
		if b.Domain != "" {
			if e.Domains == nil {
				e.Domains = map[string]string{}
			}
			e.Domains[b.Name] = b.Domain
		}
	}
	return e, nil
}

// dryRun runs steps of the function over a copy of items at now, with
// fnConfig decoded as pol.
func (p Processor) dryRun(items []*yaml.RNode, fnConfig *yaml.RNode, pol *policy.RotationPolicy, now time.Time, steps ...func(*run)) (*run, error) {
	copies := make([]*yaml.RNode, len(items))
	for i, item := range items {
		copies[i] = item.Copy()
	}
	r := newRun(pol, kube.RefOf(fnConfig), now.UTC(), copies, nil, nil)
	r.domains, r.pkg = p.Domains, p.Package
	if p.Verified != nil {
		r.verify = p.Verified.Verifier()
	}
	for _, s := range steps {
		s(r)
	}
	if errs := filter(r.results, framework.Error); len(errs) > 0 {
		return nil, kube.ErrorResults(errs)
	}
	return r, nil
}

// trust lists, for every rendered bundle and target, each CA the target
// holds and why, and each previous CA with its verdict. Targets whose rows
// agree (a bundle fanned out to many namespaces) are one set of rows,
// counted, each row naming the other targets (Others): `check` shows one
// row, `diff` explains every target.
func (r *run) trust() []why.Trusted {
	var out []why.Trusted
	for _, b := range r.policy.Spec.TrustBundles {
		rb, ok := r.bundles[b.Name]
		if !ok {
			continue
		}
		first := map[string]int{}
		for _, t := range rb.Targets {
			rows := trustRows(b.Name, rb, t)
			k := fmt.Sprint(rows)
			if i, dup := first[k]; dup {
				for j := i; j < i+len(rows); j++ {
					out[j].Targets++
					out[j].Others = append(out[j].Others, address(t))
				}
				continue
			}
			first[k] = len(out)
			for _, row := range rows {
				row.Target, row.Targets = address(t), 1
				out = append(out, row)
			}
		}
	}
	return out
}

// address is where target t holds the bundle.
func address(t trustbundle.Target) why.Address {
	return why.Address{Key: t.Key, Field: t.Field()}
}

// trustRows are target t's rows, without the target.
func trustRows(name string, rb trustbundle.Rendered, t trustbundle.Target) []why.Trusted {
	var rows []why.Trusted
	row := func(c *x509.Certificate, reason why.TrustReason) why.Trusted {
		return why.Trusted{Bundle: name, Subject: pki.Subject(c), SHA256: pki.FingerprintOf(c).String(), NotAfter: c.NotAfter.UTC(), Reason: reason}
	}
	for _, c := range t.Outcome.Current {
		x := row(c, why.TrustSource)
		x.Source = rb.Sources[pki.FingerprintOf(c)]
		rows = append(rows, x)
	}
	for _, f := range t.Outcome.Fates {
		reason := why.TrustCarried
		if f.Restored {
			reason = why.TrustRestored
		}
		x := row(f.Cert, reason)
		x.RetiredAt, x.Verdict, x.VerdictText, x.LeavesAt = f.RetiredAt, f.Verdict.Word, f.Verdict.String(), f.Verdict.Date
		for _, d := range f.Needed() { // the domain's other packages' too
			x.ChainedBy = append(x.ChainedBy, d.Where)
		}
		rows = append(rows, x)
	}
	return rows
}
