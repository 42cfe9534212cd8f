package policy

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/rotate-certs/rotate-certs/fn/kube"
)

var jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()

// shapeChecker is a type that accepts more than one JSON shape (a wave
// size is a number or a percentage string) and checks a decoded value
// itself, so that its errors carry the field path.
type shapeChecker interface {
	checkJSON(v any) error
}

var shapeCheckerType = reflect.TypeFor[shapeChecker]()

// checkShape walks a decoded JSON value against the Go type it will be
// unmarshalled into and reports unknown fields and wrong types with their
// full paths (encoding/json reports neither usefully). Types that
// unmarshal themselves (durations) must be strings and are parsed here, so
// that their errors carry the path too.
func checkShape(path string, v any, t reflect.Type, errs *FieldErrors) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if v == nil {
		return
	}
	if t.Implements(shapeCheckerType) {
		if err := reflect.Zero(t).Interface().(shapeChecker).checkJSON(v); err != nil {
			errs.add(path, "%v", err)
		}
		return
	}
	if reflect.PointerTo(t).Implements(jsonUnmarshaler) {
		checkUnmarshaler(path, v, t, errs)
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		checkStruct(path, v, t, errs)
	case reflect.Map:
		checkMap(path, v, t, errs)
	case reflect.Slice:
		arr, ok := v.([]any)
		if !ok {
			errs.add(path, "must be a list, got %s", jsonKind(v))
			return
		}
		for i, e := range arr {
			checkShape(fmt.Sprintf("%s[%d]", path, i), e, t.Elem(), errs)
		}
	default:
		checkScalar(path, v, t, errs)
	}
}

// checkUnmarshaler checks a value of a type that unmarshals itself: a
// string, which the type must accept.
func checkUnmarshaler(path string, v any, t reflect.Type, errs *FieldErrors) {
	if _, ok := v.(string); !ok {
		errs.add(path, "must be a string, got %s", jsonKind(v))
		return
	}
	raw, _ := json.Marshal(v)
	if err := reflect.New(t).Interface().(json.Unmarshaler).UnmarshalJSON(raw); err != nil {
		errs.add(path, "%v", err)
	}
}

// checkStruct checks an object against struct type t: every key a known
// field (in key order), each value of its field's type.
func checkStruct(path string, v any, t reflect.Type, errs *FieldErrors) {
	obj, ok := v.(map[string]any)
	if !ok {
		errs.add(path, "must be an object, got %s", jsonKind(v))
		return
	}
	fields := JSONFields(t)
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		ft, ok := fields[k]
		if !ok {
			errs.add(join(path, kube.Safe(k)), "unknown field (known: %s)", strings.Join(slices.Sorted(maps.Keys(fields)), ", "))
			continue
		}
		checkShape(join(path, k), obj[k], ft, errs)
	}
}

// checkMap checks an object against map type t: each value of its element
// type (any value for a map of interfaces).
func checkMap(path string, v any, t reflect.Type, errs *FieldErrors) {
	obj, ok := v.(map[string]any)
	if !ok {
		errs.add(path, "must be an object, got %s", jsonKind(v))
		return
	}
	if t.Elem().Kind() == reflect.Interface {
		return
	}
	for k, e := range obj {
		checkShape(join(path, kube.Safe(k)), e, t.Elem(), errs)
	}
}

// checkScalar checks a string, a boolean or a whole number.
func checkScalar(path string, v any, t reflect.Type, errs *FieldErrors) {
	switch t.Kind() {
	case reflect.String:
		if _, ok := v.(string); !ok {
			errs.add(path, "must be a string, got %s", jsonKind(v))
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			errs.add(path, "must be true or false, got %s", jsonKind(v))
		}
	case reflect.Int, reflect.Int32, reflect.Int64:
		f, ok := v.(float64)
		if !ok || f != float64(int64(f)) {
			errs.add(path, "must be a whole number, got %s", jsonKind(v))
		}
	}
}

// JSONFields returns the fields of struct type t that a policy may set, by
// JSON name: the one list checkShape holds a policy to, and the one the
// generated JSON Schema (internal/policyschema) is built from.
func JSONFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func jsonKind(v any) string {
	switch x := v.(type) {
	case string:
		if kube.Plain(x) {
			return fmt.Sprintf("string %q", x)
		}
		return kube.Describe(x)
	case float64:
		return fmt.Sprintf("number %v", x)
	case bool:
		return fmt.Sprintf("%v", x)
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	default:
		return fmt.Sprintf("%T", v)
	}
}
