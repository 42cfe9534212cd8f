package policyschema

import (
	"reflect"
	"slices"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/policy"
)

// What the Go types alone do not say: the values a field may take, drawn
// from fn/policy's own constants wherever it has them. Each rule here is
// one that policy.Decode enforces too (the tests mutate every policy of the
// repository to hold the two to each other); the rules that need more than
// one field (a source that is its own target, failWithin <= warnWithin,
// names by kind) stay the function's, which reports them by field path.

// DurationPattern is what policy.ParseDuration accepts, less the
// negative durations no field allows: a Go duration (720h, 1h30m) or
// whole days (30d).
const DurationPattern = `^\+?([0-9]+d|(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$`

// TimePattern is an RFC 3339 time, as spec.now takes.
const TimePattern = `^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})$`

// WaveSizePattern is a wave size given as a percentage, 1% to 100%.
const WaveSizePattern = `^([1-9][0-9]?|100)%$`

// namedTypes are Go types that decode themselves from a string (or, a
// wave size, from a number or a string).
var namedTypes = map[reflect.Type]*Schema{
	reflect.TypeFor[policy.Duration](): {Type: "string", Pattern: DurationPattern},
	reflect.TypeFor[policy.WaveSize](): {IntOrString: true, AnyOf: []*Schema{
		{Type: "integer", Minimum: intp(1)}, {Type: "string", Pattern: WaveSizePattern}}},
}

// fieldKey names a field by its struct and JSON name.
type fieldKey struct {
	owner reflect.Type
	name  string
}

// rule is what a field's schema adds to its type's.
type rule struct {
	required bool
	enum     []string
	pattern  string
	min, max *int
	itemEnum []string // for a list: the values of each item
}

func (r rule) apply(s *Schema) {
	if r.enum != nil {
		s.Enum = r.enum
	}
	if r.pattern != "" {
		s.Pattern = r.pattern
	}
	s.Minimum, s.Maximum = r.min, r.max
	if r.itemEnum != nil {
		s.Items.Enum = r.itemEnum
	}
}

func intp(n int) *int { return &n }

func typeOf[T any]() reflect.Type { return reflect.TypeFor[T]() }

// fieldRules are the per-field rules.
var fieldRules = map[fieldKey]rule{
	{typeOf[policy.RotationPolicy](), "apiVersion"}: {required: true, enum: []string{policy.APIVersion}},
	{typeOf[policy.RotationPolicy](), "kind"}:       {required: true, enum: []string{policy.Kind}},
	{typeOf[policy.Spec](), "now"}:                  {pattern: TimePattern},
	{typeOf[policy.TrustBundle](), "name"}:          {required: true},
	{typeOf[policy.TrustBundle](), "mode"}:          {enum: []string{policy.ModeBundle, policy.ModeCopy}},
	{typeOf[policy.ObjectKeyRef](), "name"}:         {required: true},
	{typeOf[policy.Target](), "kind"}:               {enum: kube.TargetKinds().Names()},
	{typeOf[policy.Retain](), "maxPrevious"}:        {min: intp(0), max: intp(policy.MaxPreviousLimit)},
	{typeOf[policy.WorkloadRef](), "kind"}:          {required: true, enum: policy.WorkloadKinds().Rolled()},
	{typeOf[policy.WorkloadRef](), "name"}:          {required: true},
	{typeOf[policy.Inject](), "kind"}:               {required: true, enum: slices.Sorted(slices.Values(kube.InjectKinds().Names()))},
	{typeOf[policy.Inject](), "name"}:               {required: true},
	{typeOf[policy.Alerts](), "namespace"}:          {required: true},
	{typeOf[kube.Requirement](), "key"}:             {required: true},
	{typeOf[kube.Requirement](), "operator"}:        {required: true, enum: []string{"In", "NotIn", "Exists", "DoesNotExist"}},
	{typeOf[policy.ClusterAPI](), "certificatesExpiryDays"}: {required: true,
		min: intp(policy.MinCertificatesExpiryDays), max: intp(policy.MaxCertificateValidityPeriodDays - 1)},
	{typeOf[policy.ClusterAPI](), "kinds"}: {itemEnum: policy.ClusterAPIKinds},
	{typeOf[policy.Restart](), "mesh"}:     {enum: policy.Meshes},
	{typeOf[policy.Waves](), "size"}:       {required: true},
}

// typeRules are rules over a whole object.
var typeRules = map[reflect.Type]func(*Schema){
	// A source is exactly one of secret, configMap and inline.
	typeOf[policy.Source](): func(s *Schema) { s.MinProperties, s.MaxProperties = intp(1), intp(1) },
	// A selection sets at least one of its fields.
	typeOf[policy.Selection](): func(s *Schema) { s.MinProperties = intp(1) },
}
