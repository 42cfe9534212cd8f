package controlplane

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// The Makefile builds the release this package runs.
func TestMakefilePinsTheSameRelease(t *testing.T) {
	data, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^K8S_VERSION := (\S+)$`).FindSubmatch(data)
	if m == nil {
		t.Fatal("Makefile has no K8S_VERSION := line")
	}
	if string(m[1]) != KubernetesVersion {
		t.Errorf("Makefile K8S_VERSION %s, KubernetesVersion %s: make tools would build another release than the tests look for", m[1], KubernetesVersion)
	}
}

func TestFindBinariesNamesMakeTools(t *testing.T) {
	t.Setenv(BinDirEnv, t.TempDir())
	_, err := FindBinaries()
	if !errors.Is(err, ErrMissing) || !strings.Contains(err.Error(), "make tools") {
		t.Fatalf("FindBinaries in an empty directory = %v, want ErrMissing naming `make tools`", err)
	}
}

// A Deployment gets one ReplicaSet per distinct pod template, none for an
// identical apply; every component is gone once the test's cleanup ran.
func TestControlPlaneRollsDeployments(t *testing.T) {
	RequireBinaries(t)
	var pids []int
	if !t.Run("cluster", func(t *testing.T) {
		cp := Start(t, Options{ControllerManager: true})
		pids = cp.PIDs()
		ctx := context.Background()
		apply := func(annotation string) {
			t.Helper()
			manifest := `apiVersion: apps/v1
kind: Deployment
metadata: {name: probe, namespace: default}
spec:
  selector: {matchLabels: {app: probe}}
  template:
    metadata:
      labels: {app: probe}
      annotations: {probe: "` + annotation + `"}
    spec:
      containers: [{name: c, image: example.invalid/probe:1}]
`
			if _, err := cp.Kubectl(ctx, manifest, "apply", "--server-side", "-f", "-"); err != nil {
				t.Fatal(err)
			}
			if _, err := cp.Kubectl(ctx, "", "wait", "deployment/probe", "--for=jsonpath={.status.observedGeneration}="+generation(t, cp), "--timeout=5m"); err != nil {
				t.Fatal(err)
			}
		}
		for _, step := range []struct {
			annotation string
			want       int
		}{{"a", 1}, {"a", 1}, {"b", 2}, {"b", 2}} {
			apply(step.annotation)
			out, err := cp.Kubectl(ctx, "", "get", "replicasets", "-n", "default", "-o", "json")
			if err != nil {
				t.Fatal(err)
			}
			var list struct{ Items []json.RawMessage }
			if err := json.Unmarshal([]byte(out), &list); err != nil {
				t.Fatal(err)
			}
			if len(list.Items) != step.want {
				t.Fatalf("after applying annotation %q: %d ReplicaSets, want %d", step.annotation, len(list.Items), step.want)
			}
		}
	}) {
		return
	}
	if len(pids) != 3 {
		t.Fatalf("%d processes started, want etcd, kube-apiserver and kube-controller-manager", len(pids))
	}
	for _, pid := range pids {
		// Signal 0 probes for the process; the components are children
		// of this test, reaped by the cleanup.
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("process %d still exists after the test's cleanup (kill -0: %v)", pid, err)
		}
	}
}

// generation reads the Deployment's metadata.generation.
func generation(t *testing.T, cp *ControlPlane) string {
	t.Helper()
	out, err := cp.Kubectl(context.Background(), "", "get", "deployment/probe", "-n", "default", "-o", "jsonpath={.metadata.generation}")
	if err != nil {
		t.Fatal(err)
	}
	return out
}
