// Package controlplane starts a real Kubernetes control plane for tests:
// etcd, kube-apiserver and kube-controller-manager of one pinned release,
// on 127.0.0.1 only, with certificates and a kubeconfig made at test time in
// a temporary directory, and stops every process it started when the test
// ends. There is no scheduler and no kubelet: pods stay Pending, but the
// API server validates, admits and stores objects, and the controllers
// create ReplicaSets and ControllerRevisions exactly as in a cluster.
//
// The binaries are built from the Go module proxy by `make tools`
// (hack/control-plane.sh) into a per-machine cache; a test that needs them
// is skipped with a message naming `make tools` when they are absent. The
// package uses only the standard library, and it is test support: nothing
// here is linked into the rotate-certs binary.
package controlplane

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// KubernetesVersion is the release whose etcd, kube-apiserver,
// kube-controller-manager and kubectl the tests run. The Makefile's
// K8S_VERSION must say the same.
const KubernetesVersion = "v1.33.13"

// BinDirEnv overrides where the binaries are looked for.
const BinDirEnv = "ROTATE_CERTS_CONTROL_PLANE_BIN"

// Binaries are the paths of the control-plane programs.
type Binaries struct {
	Etcd, APIServer, ControllerManager, Kubectl string
}

// BinDir returns the directory that holds the binaries: $ROTATE_CERTS_CONTROL_PLANE_BIN
// when set, else <user cache dir>/rotate-certs/k8s-<KubernetesVersion>/bin,
// where `make tools` builds them.
func BinDir() (string, error) {
	if d := os.Getenv(BinDirEnv); d != "" {
		return d, nil
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory for the control-plane binaries (set %s): %w", BinDirEnv, err)
	}
	return filepath.Join(cache, "rotate-certs", "k8s-"+KubernetesVersion, "bin"), nil
}

// ErrMissing is wrapped by FindBinaries when a binary is not built.
var ErrMissing = errors.New("control-plane binaries not built")

// FindBinaries returns the binaries in BinDir, or an error wrapping
// ErrMissing that says how to build them.
func FindBinaries() (Binaries, error) {
	dir, err := BinDir()
	if err != nil {
		return Binaries{}, err
	}
	b := Binaries{
		Etcd:              filepath.Join(dir, "etcd"),
		APIServer:         filepath.Join(dir, "kube-apiserver"),
		ControllerManager: filepath.Join(dir, "kube-controller-manager"),
		Kubectl:           filepath.Join(dir, "kubectl"),
	}
	for _, p := range []string{b.Etcd, b.APIServer, b.ControllerManager, b.Kubectl} {
		st, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return Binaries{}, fmt.Errorf("%w: %s is missing; run `make tools` (builds Kubernetes %s's etcd, kube-apiserver, kube-controller-manager and kubectl once per machine into %s)", ErrMissing, p, KubernetesVersion, dir)
		}
		if err != nil {
			return Binaries{}, err
		}
		if st.Mode()&0o111 == 0 {
			return Binaries{}, fmt.Errorf("%s is not executable", p)
		}
	}
	return b, nil
}
