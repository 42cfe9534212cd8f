// Package cluster proves what rotate-certs writes on a real API server, a
// real Deployment controller and a real container runtime: the examples
// roll exactly the workloads they should, once; the API server accepts every
// object kind the function writes; the image runs under kustomize and kpt
// through podman; and the API server's own TLS client trusts a webhook
// during a CA rotation.
//
// The control plane is internal/controlplane (binaries built by `make
// tools`); every test that needs a program that is missing skips with a
// message naming how to get it.
package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rotate-certs/rotate-certs/internal/controlplane"
	"github.com/rotate-certs/rotate-certs/internal/e2eharness"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/filters"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

const repoRoot = "../.."

// binary is the rotate-certs binary built for this test run: static, like
// the Dockerfile's, so that the container tests can put it into an image.
var binary string

func TestMain(m *testing.M) { os.Exit(e2eharness.Main(m, &binary)) }

// ctx bounds every command a test runs.
func ctx(t *testing.T) context.Context {
	t.Helper()
	c, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	return c
}

// stage copies examples/<top> beside the binary under test
// (e2eharness.StageExample) and returns the root of the copy, which holds
// bin/ and examples/.
func stage(t *testing.T, top string) string {
	t.Helper()
	return filepath.Dir(filepath.Dir(e2eharness.StageExample(t, binary, top)))
}

// command runs name in dir with extra environment variables; the error
// carries stderr.
func command(t *testing.T, dir string, env []string, stdin string, name string, args ...string) (string, error) {
	t.Helper()
	r := e2eharness.Cmd{Dir: dir, Env: append(os.Environ(), env...), Stdin: stdin, Ctx: ctx(t)}.Run(t, name, args...)
	if r.Err != nil {
		return r.Stdout, fmt.Errorf("%s %s: %w\n%s", filepath.Base(name), strings.Join(args, " "), r.Err, r.Stderr)
	}
	return r.Stdout, nil
}

// mustCommand is command that fails the test on error.
func mustCommand(t *testing.T, dir string, env []string, stdin string, name string, args ...string) string {
	t.Helper()
	out, err := command(t, dir, env, stdin, name, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// clusterResources returns what would be applied from a package directory as
// a YAML stream: every resource in its *.yaml files except local-config
// items (the policy, the Kptfile, evidence dumps) and kustomization files,
// without the reader's annotations.
func clusterResources(t *testing.T, dir string) string {
	t.Helper()
	items, err := (&kio.LocalPackageReader{PackagePath: dir, OmitReaderAnnotations: true}).Read()
	if err != nil {
		t.Fatal(err)
	}
	var kept []*yaml.RNode
	for _, it := range items {
		if it.GetKind() == "Kustomization" || it.GetAnnotations()[filters.LocalConfigAnnotation] == "true" {
			continue
		}
		kept = append(kept, it)
	}
	var buf bytes.Buffer
	if err := (kio.ByteWriter{Writer: &buf}).Write(kept); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// parseStream reads a YAML stream into nodes.
func parseStream(t *testing.T, s string) []*yaml.RNode {
	t.Helper()
	return e2eharness.ParseStream(t, s)
}

// setPolicyNow sets spec.now of the policy file.
func setPolicyNow(t *testing.T, path string, now time.Time) {
	t.Helper()
	node, err := yaml.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := node.PipeE(yaml.LookupCreate(yaml.MappingNode, "spec"), yaml.SetField("now", yaml.NewStringRNode(now.UTC().Format(time.RFC3339)))); err != nil {
		t.Fatal(err)
	}
	if err := yaml.WriteFile(node, path); err != nil {
		t.Fatal(err)
	}
}

// policyNow returns the policy's spec.now, or the wall clock when it has
// none (what the render then uses).
func policyNow(t *testing.T, path string) time.Time {
	t.Helper()
	node, err := yaml.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	v, err := node.Pipe(yaml.Lookup("spec", "now"))
	if err != nil {
		t.Fatal(err)
	}
	if v == nil {
		return time.Now().UTC().Truncate(time.Second)
	}
	now, err := time.Parse(time.RFC3339, yaml.GetValue(v))
	if err != nil {
		t.Fatalf("%s spec.now: %v", path, err)
	}
	return now
}

// startControlPlane starts a control plane for t (skipping without the
// binaries) and returns it.
func startControlPlane(t *testing.T) *controlplane.ControlPlane {
	t.Helper()
	return controlplane.Start(t, controlplane.Options{ControllerManager: true})
}

// kubectl runs the control plane's pinned kubectl.
func kubectl(t *testing.T, cp *controlplane.ControlPlane, stdin string, args ...string) (string, error) {
	t.Helper()
	return cp.Kubectl(ctx(t), stdin, args...)
}

// mustKubectl is kubectl that fails the test on error.
func mustKubectl(t *testing.T, cp *controlplane.ControlPlane, stdin string, args ...string) string {
	t.Helper()
	out, err := kubectl(t, cp, stdin, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// object is what the tests read of a Kubernetes object.
type object struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name            string            `json:"name"`
		Namespace       string            `json:"namespace"`
		UID             string            `json:"uid"`
		ResourceVersion string            `json:"resourceVersion"`
		Generation      int64             `json:"generation"`
		Labels          map[string]string `json:"labels"`
		Annotations     map[string]string `json:"annotations"`
		OwnerReferences []struct {
			UID        string `json:"uid"`
			Controller bool   `json:"controller"`
		} `json:"ownerReferences"`
	} `json:"metadata"`
	Spec struct {
		Template struct {
			Metadata struct {
				Annotations map[string]string `json:"annotations"`
			} `json:"metadata"`
		} `json:"template"`
	} `json:"spec"`
	Status struct {
		ObservedGeneration int64 `json:"observedGeneration"`
	} `json:"status"`
	Data       map[string]any    `json:"data"`
	BinaryData map[string]string `json:"binaryData"`

	// raw is the object as the API server returned it.
	raw json.RawMessage
}

// written is the object as an apply can change it: everything but its
// status, its resourceVersion, its managedFields and the revision number a
// Deployment's controller keeps in an annotation. A controller updating a
// workload's status between two applies changes the resourceVersion, not
// this.
func (o object) written(t *testing.T) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(o.raw, &m); err != nil {
		t.Fatalf("%s: %v", o.key(), err)
	}
	delete(m, "status")
	if md, ok := m["metadata"].(map[string]any); ok {
		delete(md, "resourceVersion")
		delete(md, "managedFields")
		if a, ok := md["annotations"].(map[string]any); ok {
			delete(a, "deployment.kubernetes.io/revision")
		}
	}
	b, err := json.Marshal(m) // map keys sorted: a canonical form
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// key names an object in messages and maps.
func (o object) key() string {
	if o.Metadata.Namespace == "" {
		return o.Kind + " " + o.Metadata.Name
	}
	return o.Kind + " " + o.Metadata.Namespace + "/" + o.Metadata.Name
}

// decodeList reads `kubectl get -o json` output, a List or one object.
func decodeList(t *testing.T, out string) []object {
	t.Helper()
	var list struct {
		Kind  string            `json:"kind"`
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("kubectl output: %v\n%s", err, out)
	}
	raws := []json.RawMessage{json.RawMessage(out)}
	if list.Kind == "List" || strings.HasSuffix(list.Kind, "List") {
		raws = list.Items
	}
	objs := make([]object, 0, len(raws))
	for _, raw := range raws {
		var o object
		if err := json.Unmarshal(raw, &o); err != nil {
			t.Fatalf("kubectl output: %v\n%s", err, raw)
		}
		o.raw = raw
		objs = append(objs, o)
	}
	return objs
}

// errContains reports whether err's text has every part.
func errContains(err error, parts ...string) bool {
	if err == nil {
		return false
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			return false
		}
	}
	return true
}

var errNotYet = errors.New("not yet")

// poll calls f until it returns nil or a non-errNotYet error, or five
// minutes pass (a guard against a hang, not a speed assertion).
func poll(t *testing.T, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for {
		err := f()
		if err == nil {
			return
		}
		if !errors.Is(err, errNotYet) {
			t.Fatalf("%s: %v", what, err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still %v after 5 minutes", what, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
