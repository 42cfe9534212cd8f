// Package crdschema checks that what rotate-certs writes into Cluster API
// objects is accepted by the CRD schemas that Cluster API ships, using the
// API server's own CRD validation code (k8s.io/apiextensions-apiserver):
// OpenAPI schema validation, pruning of unknown fields and CEL rules.
//
// It is a module of its own so that Cluster API and the API server code
// stay out of rotate-certs' dependencies. Run it from this directory:
//
//	go test ./...
package crdschema

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"sigs.k8s.io/yaml"
)

const repoRoot = "../.."

// crdFiles are the CRDs, inside the sigs.k8s.io/cluster-api module, of the
// kinds rotate-certs edits.
var crdFiles = []string{
	"controlplane/kubeadm/config/crd/bases/controlplane.cluster.x-k8s.io_kubeadmcontrolplanes.yaml",
	"controlplane/kubeadm/config/crd/bases/controlplane.cluster.x-k8s.io_kubeadmcontrolplanetemplates.yaml",
}

// versionValidator validates objects of one kind and version.
type versionValidator struct {
	schema     apiservervalidation.SchemaCreateValidator
	structural *structuralschema.Structural
	cel        *cel.Validator
}

// validate returns every problem the API server would report when the
// object is created: schema violations, unknown (pruned) fields and CEL
// rule failures.
func (v versionValidator) validate(obj map[string]any) []string {
	var problems []string
	for _, e := range apiservervalidation.ValidateCustomResource(nil, obj, v.schema) {
		problems = append(problems, e.Error())
	}
	pruned := deepCopy(obj)
	for _, p := range pruning.PruneWithOptions(pruned, v.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true}) {
		problems = append(problems, "unknown field "+p)
	}
	if v.cel != nil {
		errs, _ := v.cel.Validate(context.Background(), field.NewPath(""), v.structural, obj, nil, celconfig.RuntimeCELCostBudget)
		for _, e := range errs {
			problems = append(problems, e.Error())
		}
	}
	sort.Strings(problems)
	return problems
}

func deepCopy(obj map[string]any) map[string]any {
	b, _ := json.Marshal(obj)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return out
}

// clusterAPIDir returns where the pinned sigs.k8s.io/cluster-api module is
// unpacked, downloading it if needed.
func clusterAPIDir(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "mod", "download", "-json", "sigs.k8s.io/cluster-api").Output()
	if err != nil {
		t.Fatalf("go mod download sigs.k8s.io/cluster-api: %v", err)
	}
	var mod struct{ Dir, Version string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		t.Fatalf("go mod download gave no Dir: %s", out)
	}
	t.Logf("CRDs from sigs.k8s.io/cluster-api %s", mod.Version)
	return mod.Dir
}

// loadValidators builds a validator for every served version of every CRD,
// keyed "group/version Kind".
func loadValidators(t *testing.T) map[string]versionValidator {
	t.Helper()
	dir := clusterAPIDir(t)
	out := map[string]versionValidator{}
	for _, f := range crdFiles {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.UnmarshalStrict(data, &crd); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, v := range crd.Spec.Versions {
			if !v.Served || v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
				continue
			}
			var internal apiextensions.JSONSchemaProps
			if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, &internal, nil); err != nil {
				t.Fatalf("%s %s: %v", f, v.Name, err)
			}
			schema, _, err := apiservervalidation.NewSchemaValidator(&internal)
			if err != nil {
				t.Fatalf("%s %s: %v", f, v.Name, err)
			}
			structural, err := structuralschema.NewStructural(&internal)
			if err != nil {
				t.Fatalf("%s %s: %v", f, v.Name, err)
			}
			out[crd.Spec.Group+"/"+v.Name+" "+crd.Spec.Names.Kind] = versionValidator{
				schema:     schema,
				structural: structural,
				cel:        cel.NewValidator(structural, true, celconfig.PerCallLimit),
			}
		}
	}
	if len(out) < 4 {
		t.Fatalf("want v1beta1 and v1beta2 of two kinds, got %d validators", len(out))
	}
	return out
}

// objects splits a YAML stream (or a ResourceList's items) into objects.
func objects(t *testing.T, data []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, doc := range bytes.Split(data, []byte("\n---")) {
		var obj map[string]any
		if err := yaml.Unmarshal(doc, &obj); err != nil {
			t.Fatalf("parsing: %v", err)
		}
		if obj == nil {
			continue
		}
		if obj["kind"] == "ResourceList" {
			items, _ := obj["items"].([]any)
			for _, it := range items {
				if m, ok := it.(map[string]any); ok {
					out = append(out, m)
				}
			}
			continue
		}
		out = append(out, obj)
	}
	return out
}

// kubeadmObjects returns the KubeadmControlPlane(Template)s among objs,
// without the annotations the KRM tooling adds (they are not on the wire).
func kubeadmObjects(objs []map[string]any) []map[string]any {
	var out []map[string]any
	for _, o := range objs {
		apiVersion, _ := o["apiVersion"].(string)
		if !strings.HasPrefix(apiVersion, "controlplane.cluster.x-k8s.io/") {
			continue
		}
		if md, ok := o["metadata"].(map[string]any); ok {
			if an, ok := md["annotations"].(map[string]any); ok {
				for k := range an {
					if strings.HasPrefix(k, "internal.config.kubernetes.io/") || strings.HasPrefix(k, "config.kubernetes.io/") {
						delete(an, k)
					}
				}
				if len(an) == 0 {
					delete(md, "annotations")
				}
			}
		}
		out = append(out, o)
	}
	return out
}

func validateAll(t *testing.T, validators map[string]versionValidator, source string, objs []map[string]any) int {
	t.Helper()
	n := 0
	for _, o := range kubeadmObjects(objs) {
		key := fmt.Sprintf("%s %s", o["apiVersion"], o["kind"])
		v, ok := validators[key]
		if !ok {
			t.Errorf("%s: no CRD version for %s", source, key)
			continue
		}
		name, _ := o["metadata"].(map[string]any)["name"].(string)
		if problems := v.validate(o); len(problems) > 0 {
			t.Errorf("%s: %s %s is rejected by the CRD schema:\n  %s", source, key, name, strings.Join(problems, "\n  "))
		}
		n++
	}
	return n
}

// TestValidatorIsStrict proves the validator rejects what the API server
// rejects, so that a pass below means something.
func TestValidatorIsStrict(t *testing.T) {
	validators := loadValidators(t)
	base := `apiVersion: controlplane.cluster.x-k8s.io/v1beta2
kind: KubeadmControlPlane
metadata: {name: cp, namespace: default}
spec:
  version: v1.34.1
  machineTemplate:
    spec:
      infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: DockerMachineTemplate, name: cp}
`
	tests := []struct {
		name, extra, want string
	}{
		{"valid", "  rollout:\n    before:\n      certificatesExpiryDays: 30\n", ""},
		{"v1beta1 field on v1beta2", "  rolloutBefore:\n    certificatesExpiryDays: 30\n", "unknown field"},
		{"below the minimum", "  rollout:\n    before:\n      certificatesExpiryDays: 5\n", "should be greater than or equal to 7"},
		{"string", "  rollout:\n    before:\n      certificatesExpiryDays: \"30\"\n", "Invalid value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := objects(t, []byte(base+tt.extra))
			problems := validators["controlplane.cluster.x-k8s.io/v1beta2 KubeadmControlPlane"].validate(objs[0])
			switch {
			case tt.want == "" && len(problems) > 0:
				t.Errorf("want valid, got %v", problems)
			case tt.want != "" && !strings.Contains(strings.Join(problems, "\n"), tt.want):
				t.Errorf("want a problem containing %q, got %v", tt.want, problems)
			}
		})
	}
}

// TestGoldenOutputs validates every KubeadmControlPlane(Template) in the
// golden outputs of the clusterAPI cases (the exact bytes the function
// writes; the golden test in fn/rotate holds it to them).
func TestGoldenOutputs(t *testing.T) {
	validators := loadValidators(t)
	files, err := filepath.Glob(filepath.Join(repoRoot, "testdata/golden/capi-*/expected.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden outputs found: %v", err)
	}
	n := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		n += validateAll(t, validators, f, objects(t, data))
	}
	if n < 8 {
		t.Errorf("validated only %d objects; the golden cases hold more", n)
	}
}

// TestExampleRender renders the examples with the rotate-certs binary and
// validates the control planes it wrote.
func TestExampleRender(t *testing.T) {
	validators := loadValidators(t)
	bin := filepath.Join(t.TempDir(), "rotate-certs")
	build := exec.Command("go", "build", "-o", bin, "./cmd/rotate-certs")
	build.Dir = repoRoot
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building rotate-certs: %v\n%s", err, out)
	}
	dst := filepath.Join(t.TempDir(), "cluster-api")
	if err := os.CopyFS(dst, os.DirFS(filepath.Join(repoRoot, "examples/cluster-api"))); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "render", dst, "--policy", filepath.Join(dst, "rotation-policy.yaml"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("rotate-certs render: %v\n%s", err, out)
	}
	files, _ := filepath.Glob(filepath.Join(dst, "*.yaml"))
	n := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(data, []byte("certificatesExpiryDays")) && bytes.Contains(data, []byte("controlplane.cluster.x-k8s.io")) {
			t.Errorf("%s: the render did not set certificatesExpiryDays", f)
		}
		n += validateAll(t, validators, f, objects(t, data))
	}
	if n < 3 {
		t.Errorf("validated %d objects, want the v1beta1 and v1beta2 control planes and the template", n)
	}
}
