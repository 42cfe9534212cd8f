package e2eharness

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/internal/golden"
)

// Podman is how the tests reach podman: its path and the environment that
// lets it run here (CONTAINERS_CONF) and lets kustomize find it as
// `docker` (PATH with a shim first).
type Podman struct {
	Path string
	Env  []string // added to the test's own environment
}

// StartPodman skips without podman and runc, and otherwise writes the
// configuration podman needs on this machine: as root, podman's default
// open-files limit cannot be set inside the sandbox, and crun does not run
// here: runc does.
func StartPodman(t *testing.T) Podman {
	t.Helper()
	podman := Tool(t, "podman")
	Tool(t, "runc")
	work := t.TempDir()
	conf := filepath.Join(work, "containers.conf")
	writeFile(t, conf, "[containers]\ndefault_ulimits = []\n\n[engine]\nruntime = \"runc\"\n", 0o644)
	// kustomize runs `docker`; podman answers its command line.
	writeFile(t, filepath.Join(work, "shim", "docker"), "#!/bin/sh\nexec "+podman+" \"$@\"\n", 0o755)
	return Podman{Path: podman, Env: []string{
		"CONTAINERS_CONF=" + conf,
		"PATH=" + filepath.Join(work, "shim") + string(os.PathListSeparator) + os.Getenv("PATH"),
	}}
}

// Run runs podman with args and fails the test on an error.
func (p Podman) Run(t testing.TB, args ...string) string {
	t.Helper()
	r := Cmd{Env: append(os.Environ(), p.Env...), Ctx: t.Context()}.Run(t, p.Path, args...)
	if r.Err != nil {
		t.Fatalf("podman %s: %v\n%s%s", strings.Join(args, " "), r.Err, r.Stdout, r.Stderr)
	}
	return r.Stdout
}

// ReleaseImage is the function image as a release builds it: ko, with the
// repository's .ko.yaml, onto a base from a registry, pushed by digest
// with its SBOM and saved as an OCI layout.
type ReleaseImage struct {
	Registry string // host:port of the loopback registry
	Repo     string // Registry/rotate-certs
	Ref      string // Repo@sha256:...: the image index ko pushed
	Layout   string // the OCI layout ko wrote
	SBOMDir  string // the SPDX documents ko wrote
	Version  string // VERSION and COMMIT, as the Makefile passes them
	Commit   string
}

// BaseUsers is the /etc/passwd of the stand-in for the Dockerfile's base
// (distroless static): root, nobody and nonroot. kustomize runs function
// containers as --user nobody, which must resolve.
const BaseUsers = "root:x:0:0:root:/root:/sbin/nologin\n" +
	"nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n" +
	"nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"

// BuildReleaseImage starts a loopback registry, pushes to it the stand-in
// for the base image (PushBase), and runs `ko build` of the repository
// with KO_DEFAULTBASEIMAGE pointing at it: the image index for linux/amd64
// and linux/arm64 is pushed with its SBOMs and saved as an OCI layout. It
// skips without ko or the registry.
func BuildReleaseImage(t *testing.T) ReleaseImage {
	t.Helper()
	ko := Tool(t, "ko")
	reg := StartRegistry(t)
	PushBase(t, reg, "distroless/static", "nonroot")
	base := reg + "/distroless/static:nonroot"

	// ko names the layout path in an image reference, which admits no
	// capital letters: not under t.TempDir(), which holds the test's name.
	out, err := os.MkdirTemp("", "rotate-certs-image")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(out) })
	img := ReleaseImage{Registry: reg, Repo: reg + "/rotate-certs", Layout: filepath.Join(out, "oci"),
		SBOMDir: filepath.Join(out, "sbom"), Version: "v9.8.7-ko", Commit: "0123456789abcdef0123456789abcdef01234567"}
	env := append(os.Environ(), "VERSION="+img.Version, "COMMIT="+img.Commit,
		"KO_DOCKER_REPO="+img.Repo, "KO_DEFAULTBASEIMAGE="+base)
	r := Cmd{Dir: golden.Path(), Env: env, Ctx: t.Context()}.Run(t, ko, "build", "--bare",
		"--oci-layout-path", img.Layout, "--sbom-dir", img.SBOMDir, "--tags", img.Version, "./cmd/rotate-certs")
	if r.Err != nil {
		t.Fatalf("ko build: %v\n%s", r.Err, r.Stderr)
	}
	// ko prints Repo:tag@sha256:...: the tag is ignored when pulling by digest.
	_, digest, _ := strings.Cut(strings.TrimSpace(r.Stdout), "@")
	img.Ref = img.Repo + "@" + digest
	if !strings.HasPrefix(digest, "sha256:") {
		t.Fatalf("ko build printed %q, not %s@sha256:...\n%s", img.Ref, img.Repo, r.Stderr)
	}
	return img
}

// Pull pulls the image by digest into podman's store under a tag of its
// own, removed when the test ends, and returns that tag.
func (img ReleaseImage) Pull(t *testing.T, p Podman) string {
	t.Helper()
	p.Run(t, "pull", "--tls-verify=false", img.Ref)
	local := "localhost/rotate-certs-test:" + randomSuffix(t)
	p.Run(t, "tag", img.Ref, local)
	t.Cleanup(func() { _ = Cmd{Env: append(os.Environ(), p.Env...)}.Run(t, p.Path, "rmi", "-f", local, img.Ref) })
	return local
}

func randomSuffix(t testing.TB) string {
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

func writeFile(t testing.TB, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

// Untar returns the regular files of a gzipped tar (a release archive, an
// image layer) by name, without a leading "/".
func Untar(t testing.TB, gz []byte) map[string][]byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out[strings.TrimPrefix(h.Name, "/")] = b
	}
}
