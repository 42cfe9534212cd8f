// Package rotate is the rotate-certs KRM function: Processor.Run decodes
// the RotationPolicy and runs each concern of the policy over the input,
// in order (resio reads and writes the ResourceList around it). Every
// concern lives in its own package; this one only sequences them and
// enforces the all-or-nothing output rule.
package rotate

import (
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/anchors"
	"github.com/rotate-certs/rotate-certs/fn/inventory"
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/pki"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"github.com/rotate-certs/rotate-certs/fn/restart"
	"github.com/rotate-certs/rotate-certs/fn/trustbundle"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Processor runs rotate-certs over a ResourceList.
type Processor struct {
	// Now is the wall clock, used when the policy sets no spec.now.
	Now func() time.Time
	// At, when not zero, is the render time: it wins over spec.now and
	// the clock (render --now).
	At time.Time
	// Stderr receives a summary of the warnings (kustomize shows no
	// results when the exit code is 0, but passes stderr through); the
	// errors are Run's error. Nil means no summary.
	Stderr io.Writer
	// Domains are the trust domains of the repository when the run sees
	// them whole (a render or check at the repository's top: Domains), by
	// name; nil - function mode, a run below the top - sees each domain in
	// part only (docs/reference/policy.md, Trust domains).
	Domains map[string]*anchors.Domain
	// Package names the package rendered, as Domains' certificates name
	// their packages.
	Package string
	// Verified, when set, remembers the run's signature checks for the
	// other runs that share it (the packages of a pass, diff's two sides);
	// nil: the run remembers its own.
	Verified *anchors.Verified
	// Decoded is Run's fnConfig decoded (policy.Decode), when the caller
	// decoded it; nil: Run decodes it.
	Decoded *policy.RotationPolicy

	// newVerifier makes the run's signature check; nil means
	// anchors.NewVerifier. Tests count the checks through it.
	newVerifier func() func(ca, cert *x509.Certificate) bool
	// certs, when set, is the run's certificate cache (tests look into
	// it); nil means a new one per run.
	certs *pki.Cache
	// around, when set, runs each step in place of the step itself (tests
	// hide from a step the items its declaration declines).
	around func(r *run, s step)
}

// run is the state of one invocation, shared by the steps.
type run struct {
	policy    *policy.RotationPolicy
	policyRef kube.Ref
	now       time.Time
	items     []*yaml.RNode
	positions []int // input-list index of each of items (nil: the same)
	index     *kube.Index
	inventory *inventory.Inventory
	results   framework.Results
	// bundles maps a bundle's name to what it rendered, for later steps
	// (restarts, alerts, the re-issue list).
	bundles map[string]trustbundle.Rendered
	// chains indexes the input's certificates once for every step
	// (chainIndex).
	chains *anchors.ChainIndex
	// secrets indexes the input's Secrets, snapshots included, for the
	// cert-manager annotations of the re-issue list (secret).
	secrets map[kube.Key]*yaml.RNode
	// verify is the run's memoized signature check (verifier).
	verify func(ca, cert *x509.Certificate) bool
	// certs parses every certificate of the run once - sources, targets,
	// leaves and the report alike - so that one certificate is one
	// *x509.Certificate, which verify remembers per pair.
	certs *pki.Cache
	// workloads counts the input's rollable workloads for previousHeldUntil; -1
	// until counted.
	workloads int
	// waves are the roll-outs in waves the input records (restarts).
	waves []restart.PendingWaves
	// domains are the trust domains the run sees whole, and pkg the
	// package they name this run's certificates by; views is this run's
	// view of each (domainView).
	domains map[string]*anchors.Domain
	pkg     string
	views   map[string]*anchors.DomainView
}

// newRun is the one way a run starts: the policy, who it is in messages,
// the time it renders at, the items (positions as in Run) and the
// certificate cache (nil: a new one).
func newRun(pol *policy.RotationPolicy, policyRef kube.Ref, now time.Time, items []*yaml.RNode, positions []int, certs *pki.Cache) *run {
	if certs == nil {
		certs = pki.NewCache()
	}
	return &run{
		policy:    pol,
		policyRef: policyRef,
		now:       now,
		items:     items,
		positions: positions,
		index:     kube.NewIndex(items),
		bundles:   map[string]trustbundle.Rendered{},
		certs:     certs,
		workloads: -1,
	}
}

// step is one concern of the function. Steps add results and may add items;
// they run in order and all run even after an error, so that one render
// reports every problem.
type step struct {
	name string
	run  func(*run)
	// reads are the declarations the step reads the input through: its
	// package's, and those of the packages whose answers it asks for. The
	// run's certificate inventory (scan) is built over what package
	// inventory declares, and its count of workloads (previousHeldUntil) over what
	// package restart declares, whichever step asks first.
	reads []reader
}

// steps is the order of the concerns.
var steps = []step{
	{"trust bundles", (*run).trustBundles, []reader{readsTrustBundles}},
	{"renewals", (*run).renewals, []reader{readsRenewals, readsTrustBundles}}, // the bundles' sources
	{"restarts", (*run).restarts, []reader{readsRestarts}},
	{"cluster API", (*run).clusterAPI, []reader{readsClusterAPI}},
	{"expiry report", (*run).expiryReport, []reader{readsInventory}},
	{"re-issue report", (*run).reissueReport, []reader{readsInventory}},                // the Secrets of the certificates
	{"alerts", (*run).alerts, []reader{readsAlerts, readsRenewals, readsTrustBundles}}, // the drift alerts' forecasts
}

// Run is the function, its one door: fnConfig is the RotationPolicy,
// items the resources it reads, and positions[i] the index of items[i] in
// the input list when the caller hands it only some of a list's items (the
// fast path of function mode); nil means items is the whole input. Messages
// that name an item by position use it. Run returns the output items (none
// on error), every result, and a kube.ErrorResults when any result is an error;
// when the policy itself does not decode, the error also wraps the
// decoding error (errors.Is: policy.ErrNoFunctionConfig,
// policy.ErrConfigMapFunctionConfig).
func (p Processor) Run(fnConfig *yaml.RNode, items []*yaml.RNode, positions []int) ([]*yaml.RNode, framework.Results, error) {
	r := &run{policyRef: kube.Ref{APIVersion: policy.APIVersion, Kind: policy.Kind}, positions: positions}
	if fnConfig != nil && fnConfig.YNode().Kind == yaml.MappingNode {
		r.policyRef = kube.RefOf(fnConfig)
	}
	if results := checkItems(items, positions); len(results) > 0 {
		return p.finish(nil, results)
	}
	pol, err := p.Decoded, error(nil)
	if pol == nil {
		pol, err = policy.Decode(fnConfig)
	}
	if err != nil {
		var fes policy.FieldErrors
		if !errors.As(err, &fes) {
			fes = policy.FieldErrors{{Err: err}}
		}
		for _, fe := range fes {
			r.results = append(r.results, r.policyRef.Result(framework.Error, fe.Field, fe.Err.Error()))
		}
		out, results, ferr := p.finish(nil, r.results)
		return out, results, &policyError{ErrorResults: ferr.(kube.ErrorResults), cause: err}
	}
	wall := p.Now
	if wall == nil {
		wall = time.Now
	}
	now := pol.Clock(wall)
	if !p.At.IsZero() {
		now = p.At.UTC()
	}
	r = newRun(pol, r.policyRef, now, items, positions, p.certs)
	r.domains, r.pkg = p.Domains, p.Package
	if p.Verified != nil {
		r.verify = p.Verified.Verifier()
	}
	if p.newVerifier != nil {
		r.verify = p.newVerifier()
	}
	for _, s := range steps {
		if p.around != nil {
			p.around(r, s)
			continue
		}
		s.run(r)
	}
	return p.finish(r.items, r.results)
}

// policyError is the error of a run whose policy does not decode: its
// error results, and the decoding error beneath them.
type policyError struct {
	kube.ErrorResults
	cause error
}

// Unwrap returns the decoding error.
func (e *policyError) Unwrap() error { return e.cause }

// checkItems rejects items that kyaml's accessors cannot read: an item that
// is not an object, or whose metadata, labels or annotations are not maps
// (kyaml panics on those; found by FuzzProcess); and an item the function
// reads (Needs) in which a mapping defines a key twice: kyaml keeps the
// first value silently, so the function would render what the input does
// not say (render refuses such files too). Items the function does not
// read pass through as written, duplicates included, on both paths of
// function mode alike.
func checkItems(items []*yaml.RNode, positions []int) framework.Results {
	var out framework.Results
	for j, it := range items {
		err := kube.CheckShape(it, "")
		if err == nil {
			if res := duplicateKeys(it, kube.Position(positions, j)); res != nil {
				out = append(out, res)
			}
			continue
		}
		i := kube.Position(positions, j)
		field, msg := kube.SplitFieldError(err, "")
		res := &framework.Result{Severity: framework.Error, Field: &framework.Field{Path: fmt.Sprintf("items[%d]", i)}}
		if field == "" {
			res.Message = fmt.Sprintf("items[%d] %s; every item of a ResourceList must be a Kubernetes object", i, msg)
		} else {
			// RefOf reads what it can: the name when metadata is a map
			// (only its labels or annotations are not).
			ref := kube.RefOf(it)
			id := &yaml.ResourceIdentifier{TypeMeta: yaml.TypeMeta{APIVersion: ref.APIVersion, Kind: ref.Kind},
				NameMeta: yaml.NameMeta{Name: ref.Name, Namespace: ref.Namespace}}
			what := ref.Kind
			if field != "metadata" {
				what = ref.String()
			}
			res.ResourceRef = id
			res.Field.Path += "." + field
			res.Message = fmt.Sprintf("items[%d] (%s): %s %s", i, what, field, msg)
		}
		out = append(out, res)
	}
	return out
}

// duplicateKeys returns an error result for an item the function reads
// that defines a mapping key twice, nil otherwise.
// The item has passed kube.CheckShape.
func duplicateKeys(it *yaml.RNode, i int) *framework.Result {
	if !needsKind(it.GetApiVersion(), it.GetKind()) {
		return nil
	}
	dups := kube.DuplicateKeysOf(it)
	if len(dups) == 0 {
		return nil
	}
	ref := kube.RefOf(it)
	d := dups[0]
	more := ""
	if n := len(dups) - 1; n > 0 {
		more = fmt.Sprintf("; %d more duplicate key(s) in the item", n)
	}
	res := ref.Result(framework.Error, fmt.Sprintf("items[%d].%s", i, d.Field), fmt.Sprintf(
		"items[%d] (%s): mapping key %s is defined twice (%s): YAML keeps one of the two values silently, so the resource does not say which was meant%s",
		i, ref, kube.Quote(d.Key), kube.Safe(d.Field), more))
	return res
}

func (p Processor) finish(items []*yaml.RNode, results framework.Results) ([]*yaml.RNode, framework.Results, error) {
	// A message that carries a kyaml error carries the node kyaml refused,
	// whatever it holds; messages name fields, never contents.
	for _, r := range results {
		r.Message = kube.ScrubMessage(r.Message)
	}
	p.summarize(results)
	if results.ExitCode() != 0 {
		return nil, results, kube.ErrorResults(filter(results, framework.Error))
	}
	return items, results, nil
}

// summarize prints the warnings to Stderr, one line each, under a count.
func (p Processor) summarize(results framework.Results) {
	if p.Stderr == nil {
		return
	}
	warnings := filter(results, framework.Warning)
	if len(warnings) == 0 {
		return
	}
	fmt.Fprintf(p.Stderr, "rotate-certs: %d warning(s):\n", len(warnings))
	for _, w := range warnings {
		fmt.Fprintf(p.Stderr, "  %s\n", kube.ResultLine(w))
	}
}

func filter(results framework.Results, sev framework.Severity) framework.Results {
	var out framework.Results
	for _, r := range results {
		if r.Severity == sev {
			out = append(out, r)
		}
	}
	return out
}
